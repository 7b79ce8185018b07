// The comparison of runs: the table of differences against the first run and the common
// time axis of their timelines.
import { fmtEnergy, fmtTime } from "../../lib/format.js";
import { accountingLabel, accountingMismatch, accountingOf, energyIncludes } from "./energy.js";

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

// Each node of a run ({node id: {name, hardware}}): from its result's components, else from
// the snapshot it was launched with (a run without a result still ran on its hardware). A node
// is a role in the system; a sweep's runs may put different hardware in one role.
export function runNodes(result, snapshot = null) {
  const nodes = {};
  for (const c of result?.components || []) {
    nodes[c.node] ??= { name: c.name || c.node, hardware: c.hardware || "" };
  }
  if (Object.keys(nodes).length || !snapshot) return nodes;
  for (const n of snapshot.nodes || []) {
    if (n.group || !n.hardware) continue;
    const record = snapshot.hardware?.[n.hardware];
    nodes[n.id] = { name: n.name || n.id, hardware: record?.name || String(n.hardware) };
  }
  return nodes;
}

// The words naming a node across runs: its name where every run gives it the same one, else
// its id (a node named after its hardware takes the name of the hardware each point swapped in:
// simulator.sweep.swap_hardware).
function nodeLabel(node, runsNodes) {
  const names = new Set(runsNodes.map((nodes) => nodes[node]?.name).filter(Boolean));
  return names.size === 1 ? [...names][0] : `node ${node}`;
}

// Return the rows naming the hardware of each node in each run ({label, values}, "—" where a
// run has no such node), nodes in first-seen order.
export function hardwareRows(runsNodes) {
  const order = [...new Set(runsNodes.flatMap((nodes) => Object.keys(nodes)))];
  return order.map((node) => ({
    label: `Hardware, ${nodeLabel(node, runsNodes)}`,
    values: runsNodes.map((nodes) => nodes[node]?.hardware || "—"),
  }));
}

// Return the table of differences of `results` (one per run, null for a run without a
// result): rows {label, values: [text], changes: [text]}, each change against the first run.
// Energy per component is one row per node (its role in the system), each value with the
// hardware that run had in it (`hardware: [name]`): a sweep's runs differ in it.
// Energies counted under different accountings (issue 45) get no change and are marked
// `incomparable`; the row "Energy accounting" names each run's.
export function differenceRows(results) {
  const mismatch = energyMismatch(results);
  const row = (label, read, format, energy = false) => {
    const raw = results.map((r) => (r ? read(r) : null));
    const apart = energy && mismatch !== null;
    return {
      label,
      values: raw.map((v) => (v === null || v === undefined ? "—" : format(v))),
      changes: raw.map((v, i) => (i === 0 || apart ? "" : percentChange(raw[0], v))),
      ...(apart ? { incomparable: true } : {}),
    };
  };
  const rows = FIGURES.map(([label, read, format]) =>
    row(label, read, format, label.startsWith("Energy")),
  );
  rows.push({
    label: "Energy accounting",
    values: results.map((r) => (r ? accountingLabel(accountingOf(r)) : "—")),
    changes: results.map(() => ""),
  });
  const runsNodes = results.map((r) => runNodes(r));
  const nodes = [];
  for (const r of results) {
    for (const node of Object.keys(r?.energy_j?.per_component || {})) {
      if (!nodes.includes(node)) nodes.push(node);
    }
  }
  for (const node of nodes) {
    rows.push({
      ...row(
        `Energy, ${nodeLabel(node, runsNodes)}`,
        (r) => r.energy_j?.per_component?.[node] ?? null,
        fmtEnergy,
        true,
      ),
      hardware: runsNodes.map((n) => n[node]?.hardware || ""),
    });
  }
  return rows;
}

// Return the notice that the runs' energies were counted under different accountings, or null
// (simulator.models.energy.ACCOUNTINGS; runs without a result are left out).
export function energyMismatch(results) {
  return accountingMismatch(results.map((r) => (r ? accountingOf(r) : null)));
}

// Return one row per node saying what each run's energy of it includes: {label, values},
// the values "<what it charged> (estimated: <states>)", "—" where a run has no such node or
// predates issue 45.
export function includesRows(results) {
  const perRun = results.map((r) => Object.fromEntries(energyIncludes(r).map((x) => [x.node, x])));
  const nodes = [...new Set(perRun.flatMap((rows) => Object.keys(rows)))];
  const runsNodes = results.map((r) => runNodes(r));
  return nodes.map((node) => ({
    label: `Energy includes, ${nodeLabel(node, runsNodes)}`,
    values: perRun.map((rows) => {
      const x = rows[node];
      if (!x) return "—";
      return x.estimated.length
        ? `${x.includes} (estimated: ${x.estimated.join(", ")})`
        : x.includes;
    }),
  }));
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
