// The comparison of runs: the table of differences against the first run and the common
// time axis of their timelines.
import { fmtEnergy, fmtTime } from "../../lib/format.js";

const sum = (rows, key) =>
  rows && rows.length ? rows.reduce((total, row) => total + (Number(row[key]) || 0), 0) : null;

// The figures compared, each read from a result (null: the result lacks it).
const FIGURES = [
  ["Overall time", (r) => r.overall_time_s ?? null, fmtTime],
  ["Kernel time (compute, all processes)", (r) => sum(r.processes, "compute_s"), fmtTime],
  ["Transfer time (all processes)", (r) => sum(r.processes, "comm_s"), fmtTime],
  ["Wait time (all processes)", (r) => sum(r.processes, "wait_s"), fmtTime],
  ["Memory time (all processes)", (r) => sum(r.processes, "memory_s"), fmtTime],
  ["Energy, total", (r) => r.energy_j?.total ?? null, fmtEnergy],
];

// Return the change of `value` against `base` as text ("+12.5%", "-3.0%", "0.0%"), or ""
// where there is no percentage (a missing value, or a base of zero under a non-zero value).
export function percentChange(base, value) {
  if (typeof base !== "number" || typeof value !== "number") return "";
  if (base === 0) return value === 0 ? "0.0%" : "";
  const change = ((value - base) / Math.abs(base)) * 100;
  const text = `${change.toFixed(1)}%`;
  return change > 0 && text !== "0.0%" ? `+${text}` : text === "-0.0%" ? "0.0%" : text;
}

// Each node's name in a result's components (the energy per component is keyed by node).
function nodeNames(result) {
  const names = {};
  for (const c of result?.components || []) names[c.node] = c.name || c.node;
  return names;
}

// Return the table of differences of `results` (one per run, null for a run without a
// result): rows {label, values: [text], changes: [text]}, each change against the first run.
export function differenceRows(results) {
  const row = (label, read, format) => {
    const raw = results.map((r) => (r ? read(r) : null));
    return {
      label,
      values: raw.map((v) => (v === null || v === undefined ? "—" : format(v))),
      changes: raw.map((v, i) => (i === 0 ? "" : percentChange(raw[0], v))),
    };
  };
  const rows = FIGURES.map(([label, read, format]) => row(label, read, format));
  const names = {};
  const nodes = [];
  for (const r of results) {
    Object.assign(names, nodeNames(r));
    for (const node of Object.keys(r?.energy_j?.per_component || {})) {
      if (!nodes.includes(node)) nodes.push(node);
    }
  }
  for (const node of nodes) {
    rows.push(
      row(
        `Energy, ${names[node] || node}`,
        (r) => r.energy_j?.per_component?.[node] ?? null,
        fmtEnergy,
      ),
    );
  }
  return rows;
}

// The end of the common time axis: the latest end among the runs' timelines and overall times.
export function commonEnd(results) {
  let end = 0;
  for (const r of results) {
    if (!r) continue;
    end = Math.max(end, Number(r.overall_time_s) || 0);
    for (const t of r.timeline || []) end = Math.max(end, Number(t.end_s) || 0);
  }
  return end || 1;
}
