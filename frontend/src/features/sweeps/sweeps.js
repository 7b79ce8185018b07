// The sweep page's data: which metrics its points hold, one series per GPU (and per value of
// any other swept variable), the per-phase stacks and the energy warning. Points are the rows
// of GET /api/sweeps/{id}/ (webapp.studio.selectors.sweep_points).
import { fmt, fmtEnergy, fmtTime } from "../../lib/format.js";

// The per-phase view: process time by phase (simulator.result_metrics.PHASES), stacked.
export const PHASES_METRIC = "phases";
export const PHASES = [
  { key: "kernel_s", label: "kernel (GPU compute)" },
  { key: "cpu_compute_s", label: "CPU compute" },
  { key: "transfer_s", label: "transfer" },
  { key: "memory_s", label: "memory access" },
  { key: "wait_s", label: "wait" },
];

// Run-wide figures, in the order the picker lists them.
const SUMMARY = [
  { key: "overall_time_s", label: "overall time", unit: "time" },
  { key: "kernel_s", label: "kernel time (GPU compute)", unit: "time" },
  { key: "transfer_s", label: "transfer time (messages in flight)", unit: "time" },
  { key: "wait_s", label: "wait time", unit: "time" },
  { key: "cpu_compute_s", label: "CPU compute time", unit: "time" },
  { key: "compute_s", label: "compute time (all nodes)", unit: "time" },
  { key: "memory_s", label: "memory access time", unit: "time" },
  { key: "link_busy_s", label: "link busy time", unit: "time" },
  { key: "energy_j", label: "energy", unit: "energy" },
  // a prediction interval's figures (docs/uncertainty.md), when the runs asked for one
  { key: "overall_time_s_median", label: "overall time, interval median", unit: "time" },
  { key: "overall_time_s_low", label: "overall time, 5th percentile", unit: "time" },
  { key: "overall_time_s_high", label: "overall time, 95th percentile", unit: "time" },
  { key: "energy_j_median", label: "energy, interval median", unit: "energy" },
  { key: "energy_j_low", label: "energy, 5th percentile", unit: "energy" },
  { key: "energy_j_high", label: "energy, 95th percentile", unit: "energy" },
  // the cost's interval, from the same samples' times and energies (docs/uncertainty.md)
  { key: "cost_usd_low", label: "cost per run, 5th percentile", unit: "cost" },
  { key: "cost_usd_high", label: "cost per run, 95th percentile", unit: "cost" },
  { key: "cost_per_step_usd_low", label: "cost per step, 5th percentile", unit: "cost" },
  { key: "cost_per_step_usd_high", label: "cost per step, 95th percentile", unit: "cost" },
  { key: "cost_per_token_usd_low", label: "cost per token, 5th percentile", unit: "cost" },
  { key: "cost_per_token_usd_high", label: "cost per token, 95th percentile", unit: "cost" },
  { key: "p_success", label: "reliability (P success)", unit: "number" },
  { key: "events", label: "engine events", unit: "number" },
  { key: "wall_s", label: "wall time of the run", unit: "time" },
  // what the run cost (docs/cost.md) and drew
  { key: "cost_usd", label: "cost per run", unit: "cost" },
  { key: "energy_cost_usd", label: "energy cost", unit: "cost" },
  { key: "hardware_cost_usd", label: "hardware cost (rented or written off)", unit: "cost" },
  { key: "cost_per_step_usd", label: "cost per step", unit: "cost" },
  { key: "cost_per_token_usd", label: "cost per token", unit: "cost" },
  { key: "power_w", label: "mean power of the run", unit: "power" },
  { key: "gpu_power_w", label: "mean power of the hungriest GPU", unit: "power" },
];
const PER_NODE = [
  { prefix: "energy_j.", label: "energy of", unit: "energy" },
  { prefix: "busy_s.", label: "busy time of", unit: "time" },
];
const NOT_METRICS = new Set([
  "simulation",
  "status",
  "hardware",
  "model",
  "model_swapped",
  "gpu",
  "error",
  "power_missing",
  "model_warnings",
  "interval_unmeasured",
  "interval_from_spec",
  "energy_accounting",
  "energy_estimated",
  "feasible",
  "pareto",
]);

const hasNumber = (points, key) => points.some((p) => typeof p[key] === "number");

// Return the metrics the points can plot: [{value, label, unit}], the run-wide ones first,
// then per node (named `nodeNames[id]` where known), then any other numeric field, and the
// per-phase stack when the points hold phases. `axes` (the swept variables) are left out.
export function metricOptions(points, axes = [], nodeNames = {}) {
  const options = SUMMARY.filter((m) => hasNumber(points, m.key)).map((m) => ({
    value: m.key,
    label: m.label,
    unit: m.unit,
  }));
  if (PHASES.some((ph) => hasNumber(points, ph.key)))
    options.push({ value: PHASES_METRIC, label: "time per phase (stacked)", unit: "time" });
  const known = new Set([...SUMMARY.map((m) => m.key), ...axes, ...NOT_METRICS]);
  const keys = [...new Set(points.flatMap((p) => Object.keys(p)))].filter((k) => !known.has(k));
  for (const group of PER_NODE) {
    keys
      .filter((k) => k.startsWith(group.prefix) && hasNumber(points, k))
      .forEach((k) => {
        const node = k.slice(group.prefix.length);
        const name =
          nodeNames[node] && nodeNames[node] !== node ? `${nodeNames[node]} (${node})` : node;
        options.push({ value: k, label: `${group.label} ${name}`, unit: group.unit });
      });
  }
  keys
    .filter((k) => !PER_NODE.some((g) => k.startsWith(g.prefix)) && hasNumber(points, k))
    .forEach((k) => options.push({ value: k, label: k, unit: "number" }));
  return options;
}

// Return a cost in the records' currency (USD by convention), to 4 significant digits.
export function fmtCost(value) {
  return typeof value === "number" ? `$${fmt(value)}` : "–";
}

// Return a power in watts.
export function fmtPower(value) {
  return typeof value === "number" ? `${fmt(value)} W` : "–";
}

// Return the formatter of a metric's unit.
export function formatterFor(unit) {
  if (unit === "cost") return fmtCost;
  if (unit === "power") return fmtPower;
  return unit === "time" ? fmtTime : unit === "energy" ? fmtEnergy : fmt;
}

// Return the sweep's axes, in the table's order: its variables, then its other axes
// (hardware attributes such as "GPU.SMCoreClock", label counts such as "labels.GPU").
export function sweepAxes(spec) {
  return [...Object.keys(spec?.variables || {}), ...Object.keys(spec?.axes || {})];
}

// Return what the trade-off chart can put on x or y: the metrics (not the per-phase stack)
// and the numeric axes, as [{value, label, unit}].
export function tradeoffOptions(points, axes, nodeNames = {}) {
  const metrics = metricOptions(points, axes, nodeNames).filter((m) => m.value !== PHASES_METRIC);
  const numeric = axes
    .filter((a) => hasNumber(points, a))
    .map((a) => ({ value: a, label: a, unit: "number" }));
  return [...metrics, ...numeric];
}

// The query of the sweep's table for an objective pair and constraints: the server flags
// each point `feasible` and `pareto` by simulator.pareto's rule (the page shows its flags).
export function tradeoffQuery({ x, y, xDirection, yDirection, constraints = [] }) {
  const query = new URLSearchParams();
  if (x) query.set("x", x);
  if (y) query.set("y", y);
  if (xDirection) query.set("x_direction", xDirection);
  if (yDirection) query.set("y_direction", yDirection);
  constraints.forEach((c) => query.append("constraint", c));
  const text = query.toString();
  return text ? `?${text}` : "";
}

// The shape of a constraint (simulator.pareto's): "<metric> <op> <number>".
const CONSTRAINT = /^\s*([A-Za-z_][\w.]*)\s*(<=|>=|<|>)\s*(\S+)\s*$/;

// Return the constraints typed one per line (or separated by ";"), and the first problem
// found before asking the server ({line, message}, or null): the server checks them again.
export function parseConstraints(text, known) {
  const lines = String(text || "")
    .split(/[\n;]/)
    .map((l) => l.trim())
    .filter(Boolean);
  for (const [index, line] of lines.entries()) {
    const match = CONSTRAINT.exec(line);
    if (!match) {
      return {
        constraints: lines,
        problem: {
          line: index + 1,
          message: `Expected "<metric> <op> <number>" (e.g. "gpu_power_w <= 700"), got "${line}".`,
        },
      };
    }
    if (!known.includes(match[1]))
      return {
        constraints: lines,
        problem: { line: index + 1, message: `Unknown metric "${match[1]}".` },
      };
    if (!Number.isFinite(Number(match[3])))
      return {
        constraints: lines,
        problem: { line: index + 1, message: `Expected a number after ${match[2]}.` },
      };
  }
  return { constraints: lines, problem: null };
}

// Return the trade-off chart's points from the server's flags: {front, feasible, infeasible},
// each [{x, y, point}] of the succeeded points with a number on both axes; `front` sorted by
// x (the line through it).
export function tradeoffPoints(points, x, y) {
  const split = { front: [], feasible: [], infeasible: [] };
  for (const p of points) {
    if (p.status !== "succeeded" || typeof p[x] !== "number" || typeof p[y] !== "number") continue;
    const item = { x: p[x], y: p[y], point: p };
    if (p.feasible === false) split.infeasible.push(item);
    else if (p.pareto) split.front.push(item);
    else split.feasible.push(item);
  }
  split.front.sort((a, b) => a.x - b.x || a.y - b.y);
  return split;
}

// Return a point's prediction interval of `metric` ([low, high], its `<metric>_low` and
// `<metric>_high` columns: simulator.uncertainty's 5-95 %), or null where it has none.
export function intervalOf(point, metric) {
  const low = point[`${metric}_low`];
  const high = point[`${metric}_high`];
  return typeof low === "number" && typeof high === "number" ? [low, high] : null;
}

// Return the swept variables whose values differ between points.
export function varyingAxes(points, axes) {
  return axes.filter((a) => new Set(points.map((p) => JSON.stringify(p[a]))).size > 1);
}

// Return the name of a point's line: the GPU it ran on (else the hardware swapped in, else
// the system's hardware), then the values of the other varying variables.
export function seriesName(point, x, varying) {
  const others = varying
    .filter((a) => a !== x)
    .map((a) => `${a}=${point[a]}`)
    .join(", ");
  return [point.gpu || point.hardware || "system's hardware", others].filter(Boolean).join(" · ");
}

// The figures a prediction interval covers (simulator.uncertainty): the sweep's columns of
// its 5th and 95th percentiles.
export const INTERVAL_BOUNDS = Object.fromEntries(
  [
    "overall_time_s",
    "energy_j",
    // a cost's interval is its time's (and energy's): the same samples, priced
    "cost_usd",
    "cost_per_step_usd",
    "cost_per_token_usd",
  ].map((figure) => [figure, [`${figure}_low`, `${figure}_high`]]),
);

// Return the values of a text x axis (a cluster template `system`, a hardware name) in the
// order the succeeded points first give them, or null where every value is a number: a text
// axis is categorical, its values evenly spaced along x in that order.
export function xCategories(points, x) {
  const values = points
    .filter((p) => p.status === "succeeded" && p[x] !== undefined && p[x] !== null)
    .map((p) => p[x]);
  if (!values.length || values.every((v) => typeof v === "number")) return null;
  return [...new Set(values.map(String))];
}

// Return one series per line name: [{name, points: [[x, metric], ...]}], succeeded points
// with a number on both axes only; on a text axis (xCategories) x is the value's place in
// that list. A point whose run has a prediction interval of the metric is
// [x, metric, low, high]: the chart draws the band (error bars on a text axis).
export function sweepSeries(points, metric, x, varying) {
  const groups = new Map();
  const bounds = INTERVAL_BOUNDS[metric];
  const categories = xCategories(points, x);
  points.forEach((p) => {
    const at = categories ? categories.indexOf(String(p[x])) : p[x];
    if (p.status !== "succeeded" || typeof p[metric] !== "number") return;
    if (categories ? at < 0 : typeof at !== "number") return;
    const name = seriesName(p, x, varying);
    if (!groups.has(name)) groups.set(name, []);
    const [low, high] = bounds ? bounds.map((k) => p[k]) : [];
    const banded = typeof low === "number" && typeof high === "number";
    groups.get(name).push(banded ? [at, p[metric], low, high] : [at, p[metric]]);
  });
  return [...groups].map(([name, pts]) => ({ name, points: pts }));
}

// Return the per-phase stacks: [{x, series, segments: [{key, label, value}]}] ordered by x
// (a text axis's values in xCategories' order), then by line name, for each succeeded point
// with a value of x.
export function phaseStacks(points, x, varying) {
  const categories = xCategories(points, x);
  const place = (value) => (categories ? categories.indexOf(String(value)) : value);
  return points
    .filter(
      (p) => p.status === "succeeded" && (categories ? place(p[x]) >= 0 : typeof p[x] === "number"),
    )
    .map((p) => ({
      x: p[x],
      series: seriesName(p, x, varying),
      segments: PHASES.map((ph) => ({
        key: ph.key,
        label: ph.label,
        value: typeof p[ph.key] === "number" ? p[ph.key] : 0,
      })),
    }))
    .sort((a, b) => place(a.x) - place(b.x) || a.series.localeCompare(b.series));
}

// Return the energy warning of the points: {points, of, lines} (lines: the distinct
// "node: attributes" texts) or null when every point's energy had its power attributes.
export function powerWarning(points) {
  const done = points.filter((p) => p.status === "succeeded");
  const lacking = done.filter((p) => p.power_missing);
  if (!lacking.length) return null;
  const lines = [...new Set(lacking.flatMap((p) => p.power_missing.split("; ")))];
  return { points: lacking.length, of: done.length, lines };
}

// Return the architecture warning of the points: {points, of, lines} (lines: the distinct
// "<model> on <GPU> (<node>, <architecture>): validated on ..." texts) or null when every
// finished point's model was validated on its GPU.
export function modelWarning(points) {
  const done = points.filter((p) => p.status === "succeeded");
  const outside = done.filter((p) => p.model_warnings);
  if (!outside.length) return null;
  const lines = [...new Set(outside.flatMap((p) => p.model_warnings.split("; ")))];
  return { points: outside.length, of: done.length, lines };
}

// Return the distinct "<GPU record>: no interval: no measurement" texts of the finished
// points whose interval has no spread for their GPU (simulator.uncertainty), each once.
// Return the distinct "<GPU record>: from spec-mode error on other GPUs (...), not a <GPU
// record> measurement" texts of the finished points whose interval rests on the model's error
// predicting the measured GPUs from their spec records (simulator.uncertainty), each once.
export function specIntervals(points) {
  const done = points.filter((p) => p.status === "succeeded" && p.interval_from_spec);
  return [...new Set(done.flatMap((p) => p.interval_from_spec.split("; ")))];
}

export function unmeasuredIntervals(points) {
  const done = points.filter((p) => p.status === "succeeded" && p.interval_unmeasured);
  return [...new Set(done.flatMap((p) => p.interval_unmeasured.split("; ")))];
}

// Return the lines saying which points ran their GPU's recommended model instead of the
// system's ("<GPU>: <model>"), each once; [] when the sweep swapped no model.
export function swappedModels(points) {
  const lines = points.filter((p) => p.model_swapped).map((p) => `${p.hardware}: ${p.model}`);
  return [...new Set(lines)];
}

// Return how the sweep stands, in words: {summary, noneSucceeded, errors}. `summary` counts the
// points by outcome ("3 of 10 points done: 2 succeeded, 1 failed"; "All 4 points failed.");
// `noneSucceeded` is true once the sweep is over without a succeeded point (nothing to plot);
// `errors` are the failed points' messages, each once, with the points that gave it
// ([{message, points: [simulation id]}], most frequent first).
export function sweepOutcome(sweep, points = []) {
  const agg = sweep?.aggregate || {};
  const total = agg.total ?? points.length;
  const count = (status) => agg[status] ?? points.filter((p) => p.status === status).length;
  const succeeded = count("succeeded");
  const failed = count("failed");
  const cancelled = count("cancelled");
  const done = agg.done ?? succeeded + failed + cancelled;
  const over = sweep?.status !== "running";
  const plural = (n) => `${n} point${n === 1 ? "" : "s"}`;
  const parts = [
    succeeded ? `${succeeded} succeeded` : null,
    failed ? `${failed} failed` : null,
    cancelled ? `${cancelled} cancelled` : null,
  ].filter(Boolean);
  let summary;
  if (over && total > 0 && failed === total) {
    summary = total === 1 ? "The only point failed." : `All ${plural(total)} failed.`;
  } else if (over && total > 0 && succeeded === 0) {
    summary = `No point succeeded: ${parts.join(", ")}.`;
  } else {
    summary = `${done} of ${plural(total)} done${parts.length ? `: ${parts.join(", ")}` : ""}.`;
  }
  const byMessage = new Map();
  for (const p of points) {
    if (p.status !== "failed") continue;
    const message = p.error || "No message was recorded.";
    byMessage.set(message, [...(byMessage.get(message) || []), p.simulation]);
  }
  const errors = [...byMessage]
    .map(([message, ids]) => ({ message, points: ids }))
    .sort((a, b) => b.points.length - a.points.length);
  return { summary, noneSucceeded: over && total > 0 && succeeded === 0, errors };
}

// The most points the sweep page asks for: a bigger sweep comes as its Pareto front and an
// evenly spaced sample of the others (GET /api/sweeps/{id}/?sample=N), its CSV whole.
export const SWEEP_PAGE_POINTS = 1000;

// The query of the sweep page's GET: the trade-off's (tradeoffQuery) and the sample.
export function sweepDetailQuery(tradeoff) {
  const query = new URLSearchParams(tradeoff.replace(/^\?/, ""));
  query.set("sample", String(SWEEP_PAGE_POINTS));
  return `?${query.toString()}`;
}

// One line saying how many of the sweep's points the page shows, when not all ("" else).
export function sampledCaption(sweep) {
  const shown = sweep?.points?.length ?? 0;
  if (!sweep || sweep.points_total == null || shown >= sweep.points_total) return "";
  return `Showing ${shown} of ${sweep.points_total} points: the Pareto front and an evenly spaced sample of the others; the CSV has every point.`;
}
