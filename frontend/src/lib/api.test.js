import { describe, expect, it, vi } from "vitest";
import { json, mockFetch } from "../test/fetch.js";
import {
  ApiError,
  NETWORK_ERROR,
  SERVER_ERROR,
  del,
  flattenErrors,
  get,
  getAll,
  ignoreAbort,
  isAbort,
  isTransient,
  post,
} from "./api.js";

describe("the api client", () => {
  it("returns the JSON body of a success", async () => {
    mockFetch(json(200, { id: 3 }));
    await expect(get("/api/components/3/")).resolves.toEqual({ id: 3 });
  });

  it("returns null for 204 No Content", async () => {
    mockFetch(json(204));
    await expect(del("/api/components/3/")).resolves.toBeNull();
  });

  it("sends JSON with the CSRF token on writes", async () => {
    document.head.innerHTML = '<meta name="csrf-token" content="tok">';
    const fetch = mockFetch(json(201, { id: 1 }));
    await post("/api/models/", { name: "m" });
    const [url, options] = fetch.mock.calls[0];
    expect(url).toBe("/api/models/");
    expect(options.method).toBe("POST");
    expect(options.headers["X-CSRFToken"]).toBe("tok");
    expect(JSON.parse(options.body)).toEqual({ name: "m" });
  });

  it("turns a lost connection into a transient ApiError with status 0", async () => {
    mockFetch(new TypeError("Failed to fetch"));
    const error = await get("/api/x/").catch((e) => e);
    expect(error).toBeInstanceOf(ApiError);
    expect(error.status).toBe(0);
    expect(error.message).toBe(NETWORK_ERROR);
    expect(isTransient(error)).toBe(true);
  });

  it("keeps only the status of a server error's HTML page", async () => {
    mockFetch(
      new Response("<h1>Server Error</h1>", {
        status: 502,
        headers: { "Content-Type": "text/html" },
      }),
    );
    const error = await get("/api/x/").catch((e) => e);
    expect(error.status).toBe(502);
    expect(error.body).toBeNull();
    expect(error.message).toBe(SERVER_ERROR(502));
    expect(isTransient(error)).toBe(true);
  });

  it("reports a validation error's fields, flattened", async () => {
    mockFetch(
      json(400, {
        name: ["This field is required."],
        attributes: { 0: { key: ["Duplicate key."] } },
      }),
    );
    const error = await post("/api/components/", {}).catch((e) => e);
    expect(error.message).toBe("Please correct the highlighted fields.");
    expect(error.fields).toEqual({
      name: ["This field is required."],
      "attributes[0].key": ["Duplicate key."],
    });
    expect(isTransient(error)).toBe(false);
  });

  it("uses the server's detail as the message", async () => {
    mockFetch(json(404, { detail: "No such component." }));
    const error = await get("/api/components/9/").catch((e) => e);
    expect(error.message).toBe("No such component.");
  });

  it("rejects with an AbortError, not an ApiError, when cancelled", async () => {
    mockFetch("pending");
    const controller = new AbortController();
    const request = get("/api/x/", { signal: controller.signal });
    controller.abort();
    const error = await request.catch((e) => e);
    expect(isAbort(error)).toBe(true);
    expect(error).not.toBeInstanceOf(ApiError);
  });

  it("rejects with an AbortError when cancelled while the body is read", async () => {
    const controller = new AbortController();
    const response = json(200, { ok: true });
    response.json = () => {
      controller.abort();
      return Promise.reject(new DOMException("The operation was aborted.", "AbortError"));
    };
    mockFetch(response);
    const error = await get("/api/x/", { signal: controller.signal }).catch((e) => e);
    expect(isAbort(error)).toBe(true);
  });

  it("reads every page of a paginated list with the same signal", async () => {
    const fetch = mockFetch(
      json(200, { results: [1, 2], next: "/api/x/?page=2" }),
      json(200, { results: [3], next: null }),
    );
    const controller = new AbortController();
    await expect(getAll("/api/x/", { signal: controller.signal })).resolves.toEqual([1, 2, 3]);
    expect(fetch.mock.calls.map(([url]) => url)).toEqual(["/api/x/", "/api/x/?page=2"]);
    expect(fetch.mock.calls.every(([, options]) => options.signal === controller.signal)).toBe(
      true,
    );
  });
});

describe("flattenErrors", () => {
  it("keeps graph paths as the API gives them", () => {
    expect(flattenErrors({ graph: { "nodes[2].count": ["Must be at least 1."] } })).toEqual({
      "nodes[2].count": ["Must be at least 1."],
    });
  });
  it("files a bare message under non_field_errors", () => {
    expect(flattenErrors(["Bad."])).toEqual({ non_field_errors: ["Bad."] });
  });
});

describe("ignoreAbort", () => {
  it("drops a cancellation and passes any other error on", () => {
    const handler = vi.fn();
    ignoreAbort(handler)(new DOMException("aborted", "AbortError"));
    expect(handler).not.toHaveBeenCalled();
    const error = new ApiError(500, null);
    ignoreAbort(handler)(error);
    expect(handler).toHaveBeenCalledWith(error);
  });
});
