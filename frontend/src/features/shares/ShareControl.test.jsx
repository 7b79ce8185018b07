import { cleanup, fireEvent, render, screen, waitFor } from "@testing-library/react";
import { afterEach, describe, expect, it, vi } from "vitest";
import { json, mockFetch } from "../../test/fetch.js";
import { ShareControl } from "./ShareControl.jsx";

const BOB = {
  id: 1,
  simulation: 7,
  sweep: null,
  user: "bob",
  link: null,
  link_path: null,
  via_link: false,
};
const LINK = {
  id: 2,
  simulation: 7,
  sweep: null,
  user: null,
  link: "tok",
  link_path: "/app/shared/tok",
  via_link: false,
};

afterEach(() => {
  cleanup();
  vi.unstubAllGlobals();
});

function calls(fetch) {
  return fetch.mock.calls.map(([url, options = {}]) => `${options.method || "GET"} ${url}`);
}

describe("ShareControl", () => {
  it("opens on the run's shares, shares with a user by name and lists the new share", async () => {
    const fetch = mockFetch(
      json(200, { results: [] }),
      json(201, BOB),
      json(200, { results: [BOB] }),
    );
    render(<ShareControl kind="simulation" id={7} />);
    fireEvent.click(screen.getByRole("button", { name: "Share…" }));
    expect(await screen.findByText("Shared with no one.")).toBeTruthy();
    fireEvent.change(screen.getByLabelText("Share read-only with user"), {
      target: { value: " bob " },
    });
    fireEvent.click(screen.getByRole("button", { name: "Share" }));
    expect(await screen.findByText("bob")).toBeTruthy();
    expect(calls(fetch)).toEqual([
      "GET /api/shares/?simulation=7",
      "POST /api/shares/",
      "GET /api/shares/?simulation=7",
    ]);
    expect(JSON.parse(fetch.mock.calls[1][1].body)).toEqual({ simulation: 7, username: "bob" });
  });

  it("publishes a link whose full address can be copied, and revokes it", async () => {
    const fetch = mockFetch(
      json(200, { results: [] }),
      json(201, LINK),
      json(200, { results: [LINK] }),
      json(204),
      json(200, { results: [] }),
    );
    render(<ShareControl kind="sweep" id={3} />);
    fireEvent.click(screen.getByRole("button", { name: "Share…" }));
    await screen.findByText("Shared with no one.");
    fireEvent.click(screen.getByRole("button", { name: "Publish link" }));
    const address = await screen.findByLabelText("Link address");
    expect(address.value).toBe(`${window.location.origin}/app/shared/tok`);
    expect(JSON.parse(fetch.mock.calls[1][1].body)).toEqual({ sweep: 3, link: true });
    fireEvent.click(screen.getByRole("button", { name: "Revoke" }));
    await screen.findByText("Shared with no one.");
    expect(calls(fetch)[3]).toBe("DELETE /api/shares/2/");
  });

  it("shows the server's message naming what was wrong", async () => {
    mockFetch(json(200, { results: [] }), json(400, { username: ["No user named 'nobody'."] }));
    render(<ShareControl kind="simulation" id={7} />);
    fireEvent.click(screen.getByRole("button", { name: "Share…" }));
    await screen.findByText("Shared with no one.");
    fireEvent.change(screen.getByLabelText("Share read-only with user"), {
      target: { value: "nobody" },
    });
    fireEvent.click(screen.getByRole("button", { name: "Share" }));
    await waitFor(() =>
      expect(screen.getByRole("alert").textContent).toBe("No user named 'nobody'."),
    );
  });
});
