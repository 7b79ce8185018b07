// A run's flow links (result.links, docs/network-model.md): which to chart, and their figures
// as the page shows them.

// Links charted beside the Gantt: the busiest ones, so a large fabric stays readable.
export const CHARTED_LINKS = 24;

// Return the links to chart: those that carried anything, busiest (mean utilisation) first,
// at most `limit`; ties keep the result's order (the order they were first crossed).
export function busiestLinks(links, limit = CHARTED_LINKS) {
  return (links || [])
    .map((link, order) => ({ link, order }))
    .filter(({ link }) => link.bytes > 0)
    .sort((a, b) => b.link.mean_utilisation - a.link.mean_utilisation || a.order - b.order)
    .slice(0, limit)
    .map(({ link }) => link);
}

// A fraction as a percentage with one decimal ("—" when missing).
export const percent = (value) =>
  value === null || value === undefined ? "—" : `${(100 * Math.min(value, 1)).toFixed(1)}%`;

// The time span [start, end) of bin `index` of a series of `bins` over a run of `overall` s.
export function binSpan(index, bins, overall) {
  const width = overall / bins;
  return [index * width, (index + 1) * width];
}
