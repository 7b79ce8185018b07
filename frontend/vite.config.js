// Vite build of ParaSim Studio's browser application. Django serves the result from
// frontend/dist (STATICFILES_DIRS) under /static/; the manifest names the hashed files.
import { defineConfig } from "vite";
import react from "@vitejs/plugin-react";

export default defineConfig({
  plugins: [react()],
  base: "/static/",
  build: {
    outDir: "dist",
    emptyOutDir: true,
    manifest: true,
    sourcemap: false,
    chunkSizeWarningLimit: 2000,
    rollupOptions: { input: "src/main.jsx" },
  },
});
