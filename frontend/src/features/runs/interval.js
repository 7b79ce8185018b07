// A run's prediction interval (simulator.uncertainty, docs/uncertainty.md) in words: the note
// under the time and energy cards, and the section listing what was perturbed.

// Return "5-95 %: low to high" of one figure of the interval, null when the run has none.
export function intervalNote(interval, figure, format) {
  const ends = interval?.[figure];
  if (!ends || typeof ends.low !== "number" || typeof ends.high !== "number") return null;
  const [low, high] = interval.percentiles || [5, 95];
  return `${low}-${high} %: ${format(ends.low)} to ${format(ends.high)}`;
}

// Return {title, lines, sources}: the interval's samples and medians, and each perturbed
// quantity with its spread and source; null when the run asked for no interval.
export function intervalSummary(interval, formatTime, formatEnergy, formatCost = String) {
  if (!interval) return null;
  const perturbed = interval.perturbed || [];
  const title = `Prediction interval (${interval.samples} samples, seed ${interval.seed}${
    interval.scale !== undefined && interval.scale !== 1 ? `, spreads x ${interval.scale}` : ""
  })`;
  const lines = [
    `Time: median ${formatTime(interval.overall_time_s?.median)}, ${intervalNote(interval, "overall_time_s", formatTime)}`,
    `Energy: median ${formatEnergy(interval.energy_j?.median)}, ${intervalNote(interval, "energy_j", formatEnergy)}`,
  ];
  // the cost's interval: the same samples' costs (their times and energies, priced)
  const costs = [
    ["Cost", interval.cost_usd],
    ...Object.entries(interval.cost_per_unit || {}).map(([unit, ends]) => [
      `Cost per ${unit}`,
      ends,
    ]),
  ];
  costs.forEach(([what, ends]) => {
    if (!ends || typeof ends.low !== "number") return;
    const note = intervalNote({ ...interval, figure: ends }, "figure", formatCost);
    lines.push(`${what}: median ${formatCost(ends.median)}, ${note}`);
  });
  (interval.from_spec_mode || []).forEach((u) => lines.push(`${u.record}: ${u.label}`));
  (interval.unmeasured || []).forEach((u) => lines.push(`${u.record}: ${u.label}`));
  if (!perturbed.length)
    lines.push("No record of this system has a measured spread: every sample is the plain run.");
  const sources = perturbed.map((p) => ({
    key: `${p.hardware}.${p.name}`,
    what:
      p.kind === "model"
        ? `${p.record} (${p.hardware}): ${p.name} residual, scaling ${p.attributes.join(", ")}`
        : `${p.record} (${p.hardware}): ${p.name}`,
    spread: `${(100 * p.log_sd).toPrecision(3)} %`,
    source: p.label ? `${p.source} (${p.label})` : p.source,
  }));
  return { title, lines, sources };
}
