import { cleanup, render, screen, waitFor } from "@testing-library/react";
import { afterEach, describe, expect, it, vi } from "vitest";
import { json, mockFetch } from "../../test/fetch.js";
import { SharedLink } from "./SharedLink.jsx";

afterEach(() => {
  cleanup();
  vi.unstubAllGlobals();
  window.history.replaceState({}, "", "/");
});

describe("SharedLink", () => {
  it("redeems the link and goes on to the shared run's page", async () => {
    window.history.replaceState({}, "", "/app/shared/tok");
    const fetch = mockFetch(json(200, { id: 5, simulation: 7, sweep: null }));
    render(<SharedLink token="tok" />);
    await waitFor(() => expect(window.location.pathname).toBe("/app/runs/7"));
    expect(JSON.parse(fetch.mock.calls[0][1].body)).toEqual({ link: "tok" });
  });

  it("says so when the link names nothing (revoked)", async () => {
    mockFetch(json(404, { detail: "Nothing is shared at this link (it may have been revoked)." }));
    render(<SharedLink token="gone" />);
    expect((await screen.findByRole("alert")).textContent).toMatch(
      /Nothing is shared at this link/,
    );
  });
});
