// What a run's energy figure includes (issue 45): the accounting that counted it, per node
// what it charged (base power over the run, load or E.1 over the kernels) and which power
// states were estimated; and the check that refuses to compare figures of different
// accountings without saying so. Results are simulator.results.Result; sweep points the rows
// of GET /api/sweeps/{id}/ (simulator.result_metrics: energy_accounting, energy_estimated).

// The accountings (simulator.models.energy.ACCOUNTINGS), in words. "" is a result stored
// before issue 45, which counted idle power (0 W where missing) over the run.
export const ACCOUNTING_LABELS = {
  whole_run: "whole run: base power over the run, plus load or E.1 over the kernels",
  kernel_load_000: "seed 000: load power over the loaded time only, nothing while idle",
  block_round_003: "seed 003: block rounds of each kernel only",
  "": "not recorded (a run from before issue 45: idle power, 0 W where missing, over the run)",
};

// Return the accounting name of a result's energy ("" when the result predates issue 45).
export function accountingOf(result) {
  const accounting = result?.energy_j?.accounting;
  return typeof accounting === "string" ? accounting : "";
}

// Return the words naming an accounting.
export function accountingLabel(accounting) {
  return ACCOUNTING_LABELS[accounting ?? ""] ?? accounting;
}

// Return one row per node of what its energy includes: {node, label, hardware, includes,
// estimated: [attribute], statesFrom (what gave the power states), energy}; [] for a result
// from before issue 45.
export function energyIncludes(result) {
  return (result?.energy_accounting || []).map((row) => ({
    node: row.node,
    label: row.name && row.name !== row.node ? `${row.name} (${row.node})` : row.node,
    hardware: row.hardware || "",
    includes: row.includes || "",
    estimated: (row.estimated || []).map((e) => e.attribute),
    statesFrom: row.states_from === "model" ? "the model's power function" : "the record",
    energy: row.energy_j,
  }));
}

// Return the result's figures under other (the papers') accountings: [{accounting, label,
// total}], never to be added to or compared with the whole-run total.
export function alternativeEnergies(result) {
  return Object.values(result?.energy_alternatives || {}).map((alt) => ({
    accounting: alt.accounting,
    label: accountingLabel(alt.accounting),
    total: alt.total,
  }));
}

// Return the notice for figures counted under different accountings ({accountings: [names],
// text}), or null when they all share one. `accountings` has one entry per figure (null for
// a figure that does not exist, which is left out).
export function accountingMismatch(accountings) {
  const present = accountings.filter((a) => a !== null && a !== undefined);
  const distinct = [...new Set(present)];
  if (distinct.length < 2) return null;
  const named = distinct.map((a) => `“${accountingLabel(a)}”`).join(" and ");
  return {
    accountings: distinct,
    text:
      `These energies were counted under different accountings (${named}); they count ` +
      "different things and do not compare, so no change between them is given.",
  };
}

// Return the lines naming each node's estimated power states: "<label>: <attributes>".
export function estimatedLines(result) {
  return energyIncludes(result)
    .filter((row) => row.estimated.length)
    .map((row) => `${row.label}: ${row.estimated.join(", ")}`);
}

// Return the accounting notice of a sweep's finished points (accountingMismatch over their
// `energy_accounting` column), or null when they share one.
export function pointsMismatch(points) {
  return accountingMismatch(
    points.filter((p) => p.status === "succeeded").map((p) => p.energy_accounting ?? ""),
  );
}

// Return the title of a sweep point's energy cell: its accounting, the states estimated and
// the attributes its records lacked (undefined when there is nothing to say).
export function pointEnergyTitle(point) {
  const parts = [];
  if (point.energy_accounting !== undefined && point.status === "succeeded")
    parts.push(`accounting: ${accountingLabel(point.energy_accounting)}`);
  if (point.energy_estimated) parts.push(`estimated: ${point.energy_estimated}`);
  if (point.power_missing) parts.push(`lacking: ${point.power_missing}`);
  return parts.length ? parts.join("; ") : undefined;
}
