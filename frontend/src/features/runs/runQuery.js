// The runs list's query: filters, search and paging as the REST list's parameters, and the
// selection of runs to compare.

// The most runs one comparison shows side by side (the table stays readable).
export const COMPARE_LIMIT = 6;
export const PAGE_SIZES = [25, 50, 100, 200];
export const DEFAULT_PAGE_SIZE = 50;
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

// The list's state in the page address (so that Back and a shared link restore it): each
// filter under its own name, "from" and "to" for the launch days, "grouped=no" for ungrouped
// sweeps, "page" and "per_page"; defaults are left out.
const DAY = /^\d{4}-\d{2}-\d{2}$/;
const ID = /^\d+$/;

// Return {filters, page, pageSize} from the page address's query (URLSearchParams); a value
// that does not read is the default.
export function listState(query) {
  const text = (key) => (query.get(key) || "").trim();
  const status = text("status");
  const day = (key) => (DAY.test(text(key)) ? text(key) : "");
  const filters = {
    search: text("search"),
    status: STATUSES.includes(status) ? status : "",
    system_model: ID.test(text("system_model")) ? text("system_model") : "",
    application: ID.test(text("application")) ? text("application") : "",
    launched_from: day("from"),
    launched_to: day("to"),
    group_sweeps: text("grouped") !== "no",
  };
  const page = ID.test(text("page")) && Number(text("page")) >= 1 ? Number(text("page")) : 1;
  const size = Number(text("per_page"));
  return { filters, page, pageSize: PAGE_SIZES.includes(size) ? size : DEFAULT_PAGE_SIZE };
}

// Return the runs page's address for this state (listState reads it back).
export function listAddress({ filters, page = 1, pageSize = DEFAULT_PAGE_SIZE }) {
  const params = new URLSearchParams();
  for (const key of ["search", "status", "system_model", "application"]) {
    const value = String(filters[key] ?? "").trim();
    if (value) params.set(key, value);
  }
  if (filters.launched_from) params.set("from", filters.launched_from);
  if (filters.launched_to) params.set("to", filters.launched_to);
  if (!filters.group_sweeps) params.set("grouped", "no");
  if (page > 1) params.set("page", String(page));
  if (pageSize !== DEFAULT_PAGE_SIZE) params.set("per_page", String(pageSize));
  const query = params.toString();
  return query ? `/app/runs?${query}` : "/app/runs";
}

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
