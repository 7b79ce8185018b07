import { cleanup, render, screen } from "@testing-library/react";
import { afterEach, describe, expect, it, vi } from "vitest";
import { json, mockFetch } from "../../test/fetch.js";
import { RunDetail } from "./RunDetail.jsx";

const RUNNING = {
  id: 7,
  name: "Saxpy",
  owner: "alice",
  status: "running",
  queue: "default",
  labels: { CPU: 2 },
  variables: { n: 1 },
  progress: 0.5,
  application: 4,
  result_url: "/api/simulations/7/result.json",
  trace_url: "/api/simulations/7/trace.json",
};

afterEach(() => {
  cleanup();
  vi.unstubAllGlobals();
});

describe("RunDetail's owner controls", () => {
  it("gives the owner Cancel, the application model and Share", async () => {
    mockFetch(json(200, { ...RUNNING, access: "owner" }), "pending");
    render(<RunDetail id={7} />);
    await screen.findByRole("heading", { name: "Saxpy" });
    expect(screen.getByRole("button", { name: "Cancel" })).toBeTruthy();
    expect(screen.getByRole("button", { name: "Edit application model" })).toBeTruthy();
    expect(screen.getByRole("button", { name: "Share…" })).toBeTruthy();
    expect(screen.queryByTestId("shared-note")).toBeNull();
  });

  it("shows a shared run read-only, naming its owner", async () => {
    mockFetch(json(200, { ...RUNNING, application: null, access: "shared" }), "pending");
    render(<RunDetail id={7} />);
    await screen.findByRole("heading", { name: "Saxpy" });
    expect(screen.queryByRole("button", { name: "Cancel" })).toBeNull();
    expect(screen.queryByRole("button", { name: "Share…" })).toBeNull();
    expect(screen.queryByRole("button", { name: "Edit application model" })).toBeNull();
    expect(screen.getByTestId("shared-note").textContent).toMatch(/read-only by alice/);
  });
});
