import { cleanup, render, screen } from "@testing-library/react";
import { afterEach, describe, expect, it, vi } from "vitest";
import { json, mockFetch } from "../../test/fetch.js";
import { RECEIVED_URL, SharedWithYou } from "./SharedWithYou.jsx";

afterEach(() => {
  cleanup();
  vi.unstubAllGlobals();
});

describe("SharedWithYou", () => {
  it("links each run and sweep shared with the reader, naming its owner", async () => {
    const fetch = mockFetch(
      json(200, {
        results: [
          { id: 1, simulation: 7, sweep: null, target_name: "Saxpy", owner: "alice" },
          { id: 2, simulation: null, sweep: 3, target_name: "Steps", owner: "bob" },
        ],
      }),
    );
    render(<SharedWithYou />);
    const run = await screen.findByRole("link", { name: "Saxpy" });
    expect(run.getAttribute("href")).toBe("/app/runs/7");
    expect(screen.getByRole("link", { name: "Steps" }).getAttribute("href")).toBe("/app/sweeps/3");
    expect(screen.getByRole("heading", { name: "Shared with you" })).toBeTruthy();
    expect(screen.getByText("by alice")).toBeTruthy();
    expect(fetch.mock.calls[0][0]).toBe(RECEIVED_URL);
  });

  it("shows nothing when nothing is shared with the reader", async () => {
    const fetch = mockFetch(json(200, { results: [] }));
    const { container } = render(<SharedWithYou />);
    await vi.waitFor(() => expect(fetch).toHaveBeenCalled());
    expect(container.textContent).toBe("");
  });
});
