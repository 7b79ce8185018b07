// Vitest: unit tests of the pure helpers, the api client, the system graph and the shared hooks,
// in a browser-like DOM (jsdom). Kept apart from vite.config.js so the build stays as it is.
import { defineConfig } from "vitest/config";
import react from "@vitejs/plugin-react";

export default defineConfig({
  plugins: [react()],
  test: {
    environment: "jsdom",
    include: ["src/**/*.test.{js,jsx}"],
    restoreMocks: true,
    unstubGlobals: true,
  },
});
