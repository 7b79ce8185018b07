// The runs list's query: filters, search and paging as the REST list's parameters, and the
// selection of runs to compare.

// The most runs one comparison shows side by side (the table stays readable).
export const COMPARE_LIMIT = 6;
export const PAGE_SIZES = [25, 50, 100, 200];
export const STATUSES = ["queued", "running", "succeeded", "failed", "cancelled"];

export const EMPTY_FILTERS = {
  search: "",
  status: "",
  system_model: "",
  application: "",
  launched_from: "",
  launched_to: "",
  group_sweeps: true,
};

// The ISO instant of local midnight starting `day` ("YYYY-MM-DD"), `days` days later.
export function localMidnight(day, days = 0) {
  const [y, m, d] = day.split("-").map(Number);
  return new Date(y, m - 1, d + days).toISOString();
}

// Return the list's URL: `filters` (EMPTY_FILTERS' keys; dates are the user's local days,
// both ends included), page and page size; `sweep` lists one sweep's runs, ungrouped.
export function runsUrl(filters, { page = 1, pageSize = 50, sweep = null } = {}) {
  const params = new URLSearchParams();
  for (const key of ["search", "status", "system_model", "application"]) {
    const value = String(filters[key] ?? "").trim();
    if (value) params.set(key, value);
  }
  if (filters.launched_from) params.set("launched_after", localMidnight(filters.launched_from));
  if (filters.launched_to) params.set("launched_before", localMidnight(filters.launched_to, 1));
  if (sweep !== null) params.set("sweep", String(sweep));
  else if (filters.group_sweeps) params.set("group_sweeps", "true");
  params.set("page", String(page));
  params.set("page_size", String(pageSize));
  return `/api/simulations/?${params}`;
}

// Return the number of pages of `count` runs at `pageSize` a page (at least one).
export function pageCount(count, pageSize) {
  return Math.max(1, Math.ceil((count || 0) / pageSize));
}

// Tick or untick run `id`: {picked, refused}; a run past COMPARE_LIMIT is refused, never
// traded for an earlier one.
export function toggleRun(picked, id, limit = COMPARE_LIMIT) {
  if (picked.includes(id)) return { picked: picked.filter((x) => x !== id), refused: false };
  if (picked.length >= limit) return { picked, refused: true };
  return { picked: [...picked, id], refused: false };
}

// The comparison page's address for these run ids, and the ids it names (`runs=1,2,3`, or
// the older `a` and `b`).
export function compareUrl(ids) {
  return `/app/compare?runs=${ids.join(",")}`;
}

export function compareIds(query) {
  const listed = (query.get("runs") || "")
    .split(",")
    .map((x) => x.trim())
    .filter((x) => /^\d+$/.test(x));
  const ids = listed.length ? listed : [query.get("a"), query.get("b")].filter(Boolean);
  return [...new Set(ids)].slice(0, COMPARE_LIMIT);
}
