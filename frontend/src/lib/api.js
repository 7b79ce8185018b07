// REST client: the same /api/ that external clients use, with the session cookie and CSRF token.

function csrfToken() {
  const meta = document.querySelector('meta[name="csrf-token"]');
  return meta ? meta.content : "";
}

// Messages for failures that carry no usable body: the network is down, or the server failed.
export const NETWORK_ERROR =
  "Could not reach the server. Check the connection and try again; unsaved changes stay on this page.";
export const SERVER_ERROR = (status) =>
  `The server failed (${status}). Try again; unsaved changes stay on this page.`;

export class ApiError extends Error {
  constructor(status, body) {
    super(describe(status, body));
    this.status = status;
    this.body = body;
    this.fields = flattenErrors(body);
  }
}

// Return true for failures worth retrying later: no connection (status 0) or a server error.
export function isTransient(error) {
  return error instanceof ApiError && (error.status === 0 || error.status >= 500);
}

function describe(status, body) {
  if (status === 0) return NETWORK_ERROR;
  if (body && typeof body === "object" && typeof body.detail === "string") return body.detail;
  if (status >= 500) return SERVER_ERROR(status);
  if (status === 400) return "Please correct the highlighted fields.";
  if (status === 404) return "Not found.";
  return `The server answered ${status}.`;
}

// DRF error bodies nest: {"attributes": {"0": {"key": ["..."]}}} or {"graph": {"nodes[2].count": [..]}}.
// Return a flat map "attributes[0].key" -> ["message"] (graph paths are kept as the API gives them).
export function flattenErrors(body, prefix = "", out = {}) {
  if (body == null) return out;
  if (typeof body === "string") {
    (out[prefix || "non_field_errors"] ||= []).push(body);
    return out;
  }
  if (Array.isArray(body)) {
    if (body.every((item) => typeof item === "string")) {
      if (body.length) (out[prefix || "non_field_errors"] ||= []).push(...body);
      return out;
    }
    body.forEach((item, index) => flattenErrors(item, `${prefix}[${index}]`, out));
    return out;
  }
  if (typeof body === "object") {
    for (const [key, value] of Object.entries(body)) {
      let path;
      if (/^\d+$/.test(key)) path = `${prefix}[${key}]`;
      else if (key === "graph" || key === "non_field_errors" || key === "detail")
        path = prefix ? prefix : key === "graph" ? "" : key;
      else if (key.startsWith("[") || key.startsWith(".")) path = prefix + key;
      else path = prefix ? `${prefix}.${key}` : key;
      if (key === "detail" && typeof value === "string") {
        (out.detail ||= []).push(value);
        continue;
      }
      flattenErrors(value, path, out);
    }
  }
  return out;
}

// Return true for the rejection of a request cancelled through its AbortSignal: not a failure
// to report, the component that asked has gone.
export function isAbort(error) {
  return error?.name === "AbortError";
}

// Wrap an error handler so that a cancelled request is dropped silently.
export function ignoreAbort(handler) {
  return (error) => {
    if (!isAbort(error)) handler(error);
  };
}

// Send one request; `signal` (an AbortSignal) cancels it, rejecting with an AbortError rather
// than an ApiError.
export async function api(method, url, body, { signal } = {}) {
  const options = {
    method,
    headers: { Accept: "application/json" },
    credentials: "same-origin",
    signal,
  };
  if (body !== undefined) {
    options.headers["Content-Type"] = "application/json";
    options.body = JSON.stringify(body);
  }
  if (method !== "GET") options.headers["X-CSRFToken"] = csrfToken();
  let response;
  try {
    response = await fetch(url, options);
  } catch (error) {
    if (isAbort(error)) throw error;
    throw new ApiError(0, null);
  }
  if (response.status === 204) return null;
  const type = response.headers.get("Content-Type") || "";
  const data = type.includes("json")
    ? await response.json().catch(() => null)
    : await response.text();
  // A body cut off by the cancellation reads as null above: report the cancellation instead.
  signal?.throwIfAborted();
  if (response.status === 401 || response.status === 403) {
    if (
      response.status === 401 ||
      (data && /credentials were not provided/i.test(data.detail || ""))
    ) {
      window.location.href = `/accounts/login/?next=${encodeURIComponent(window.location.pathname)}`;
    }
  }
  // A non-JSON error body (an HTML error page) is no message for the user: keep only the status.
  if (!response.ok) throw new ApiError(response.status, typeof data === "string" ? null : data);
  return data;
}

export const get = (url, options) => api("GET", url, undefined, options);
export const post = (url, body, options) => api("POST", url, body ?? {}, options);
export const put = (url, body, options) => api("PUT", url, body, options);
export const patch = (url, body, options) => api("PATCH", url, body, options);
export const del = (url, options) => api("DELETE", url, undefined, options);

// Return every item of a paginated list (DRF {results, next}) or a plain list, reading at most
// `limit` pages.
export async function getAll(url, { limit = 20, signal } = {}) {
  let data = await get(url, { signal });
  if (Array.isArray(data)) return data;
  const items = [...data.results];
  let pages = 1;
  while (data.next && pages < limit) {
    data = await get(data.next, { signal });
    items.push(...data.results);
    pages += 1;
  }
  return items;
}

export function download(filename, text, type = "application/json") {
  const blob = new Blob([text], { type });
  const link = document.createElement("a");
  link.href = URL.createObjectURL(blob);
  link.download = filename;
  document.body.appendChild(link);
  link.click();
  link.remove();
  setTimeout(() => URL.revokeObjectURL(link.href), 1000);
}
