import { renderHook, waitFor } from "@testing-library/react";
import { describe, expect, it } from "vitest";
import { json, mockFetch } from "../test/fetch.js";
import { useApiGet } from "./useApiGet.js";
import { usePolling } from "./usePolling.js";
import { get } from "../lib/api.js";

describe("useApiGet", () => {
  it("reads every page with all", async () => {
    mockFetch(
      json(200, { results: [1], next: "/api/x/?page=2" }),
      json(200, { results: [2], next: null }),
    );
    const { result } = renderHook(() => useApiGet("/api/x/", { all: true }));
    await waitFor(() => expect(result.current.data).toEqual([1, 2]));
    expect(result.current.error).toBeNull();
  });

  it("keeps the error of a failed read", async () => {
    mockFetch(json(403, { detail: "You do not have permission." }));
    const { result } = renderHook(() => useApiGet("/api/x/"));
    await waitFor(() => expect(result.current.error?.status).toBe(403));
  });

  it("drops an earlier failure once a new address reads", async () => {
    mockFetch(json(404, { detail: "Invalid page." }), json(200, { results: [1], count: 1 }));
    const { result, rerender } = renderHook(({ url }) => useApiGet(url), {
      initialProps: { url: "/api/x/?page=9" },
    });
    await waitFor(() => expect(result.current.error?.status).toBe(404));
    rerender({ url: "/api/x/?page=1" });
    await waitFor(() => expect(result.current.data).toEqual({ results: [1], count: 1 }));
    expect(result.current.error).toBeNull();
  });

  it("cancels the read on unmount and reports nothing", async () => {
    const fetch = mockFetch("pending");
    const { result, unmount } = renderHook(() => useApiGet("/api/x/"));
    const { signal } = fetch.mock.calls[0][1];
    unmount();
    expect(signal.aborted).toBe(true);
    await Promise.resolve();
    expect(result.current.error).toBeNull();
  });
});

describe("usePolling", () => {
  it("polls until done and cancels the request in flight on unmount", async () => {
    const fetch = mockFetch(json(200, { status: "running" }), json(200, { status: "succeeded" }));
    const { result } = renderHook(() =>
      usePolling(
        (signal) => get("/api/s/1/", { signal }),
        (v) => v.status === "running",
        1,
        "1",
      ),
    );
    await waitFor(() => expect(result.current.value).toEqual({ status: "succeeded" }));
    expect(fetch).toHaveBeenCalledTimes(2);

    const pending = mockFetch("pending");
    const second = renderHook(() =>
      usePolling(
        (signal) => get("/api/s/2/", { signal }),
        () => true,
        1,
        "2",
      ),
    );
    second.unmount();
    expect(pending.mock.calls[0][1].signal.aborted).toBe(true);
  });
});
