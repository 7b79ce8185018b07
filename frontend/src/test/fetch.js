// A stand-in for window.fetch in unit tests: answers queued per call, requests recorded.
import { vi } from "vitest";

// A JSON response with `status` (no body for 204).
export function json(status, body) {
  return new Response(status === 204 ? null : JSON.stringify(body), {
    status,
    headers: { "Content-Type": "application/json" },
  });
}

// Install a fetch that answers each call with the next of `answers` (a Response, an Error to
// throw, or "pending": never answers until its signal aborts); return the mock.
export function mockFetch(...answers) {
  const queue = [...answers];
  const fetch = vi.fn((url, options = {}) => {
    const next = queue.shift();
    if (next === "pending" || next === undefined) {
      return new Promise((resolve, reject) => {
        options.signal?.addEventListener("abort", () => reject(options.signal.reason));
      });
    }
    if (next instanceof Error) return Promise.reject(next);
    return Promise.resolve(next);
  });
  vi.stubGlobal("fetch", fetch);
  return fetch;
}
