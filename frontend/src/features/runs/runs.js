// What the run pages read from a simulation and its result.
import { fmtTime } from "../../lib/format.js";

// The states a simulation does not leave.
export const FINAL = ["succeeded", "failed", "cancelled"];

// Kernel (compute), transfer and memory-hierarchy intervals of the timeline, the figures the
// MERPSYS tour reads.
export function phases(result) {
  return (result?.timeline || [])
    .filter(
      (t) =>
        t.kind === "compute" || t.kind === "memory" || (t.kind === "transfer" && (t.size || 0) > 0),
    )
    .map((t) => ({ ...t, duration: t.end_s - t.start_s }));
}

// What bounds a kernel and the occupancy it ran at, from its model's computationDetail;
// for the petri and waves kernel modes what they simulated (docs/kernel-modes.md).
export function boundText(detail) {
  if (!detail) return "";
  const steps = (n) => (Number.isInteger(n) ? String(n) : n.toFixed(1));
  let head = detail.bound ? String(detail.bound).replace("_", " ") : "";
  if (detail.mode === "petri" && typeof detail.steps === "number") {
    head = `Petri net, ${steps(detail.steps)} steps (${steps(detail.idleSteps)} idle)`;
  } else if (!head && detail.mode === "waves") {
    head = "block waves";
  }
  if (!head) return "";
  const occupancy = typeof detail.occupancy === "number" ? `, ${detail.occupancy} warps/SM` : "";
  const waves =
    typeof detail.waves === "number"
      ? `, ${detail.waves} wave${detail.waves === 1 ? "" : "s"}`
      : "";
  const perWave =
    typeof detail.waveTime === "number"
      ? `; ${detail.blocksPerWave} blocks per wave × ${fmtTime(detail.waveTime)}`
      : "";
  let tail = "";
  if (detail.mode === "detailed" && typeof detail.analyticTime === "number") {
    tail = `; block by block, formula ${fmtTime(detail.analyticTime)}${typeof detail.smBusyMin === "number" ? `, SMs busy ${Math.round(detail.smBusyMin * 100)}-${Math.round(detail.smBusyMax * 100)} %` : ""}`;
  } else if (detail.mode === "petri") {
    tail = `${perWave}${typeof detail.smClockMHz === "number" ? ` at ${detail.smClockMHz} MHz` : ""}`;
  } else if (detail.mode === "waves") {
    tail = `${perWave}${typeof detail.analyticTime === "number" ? `, formula ${fmtTime(detail.analyticTime)}` : ""}`;
  }
  return `${head}${occupancy}${waves}${tail}`;
}

// The most detailed-mode kernels the run page charts (the table lists them all).
export const KERNEL_CHARTS = 6;

// The kernels of `phases` that the detailed kernel mode simulated block by block, each as
// {index (its row in the table), process, start_s, detail} with per-SM busy fractions.
export function detailedKernels(phaseList) {
  return phaseList
    .map((t, index) => ({ index, process: t.process, start_s: t.start_s, detail: t.detail }))
    .filter(
      (k) =>
        k.detail?.mode === "detailed" && Array.isArray(k.detail.smBusy) && k.detail.smBusy.length,
    );
}

// Return the words under a detailed kernel's chart: its waves, the tail wave and the SMs'
// busy time.
export function waveSummary(detail) {
  const plural = (n, word) => `${n} ${word}${n === 1 ? "" : "s"}`;
  const parts = [];
  if (typeof detail.waves === "number") {
    parts.push(
      `${plural(detail.waves, "wave")} of ${plural(detail.blocksPerWave, "block")}` +
        (detail.tailBlocks ? `, the last one a tail of ${plural(detail.tailBlocks, "block")}` : ""),
    );
  }
  const busy = detail.smBusy || [];
  if (busy.length) {
    const pct = (v) => `${Math.round(v * 100)} %`;
    parts.push(
      `${plural(busy.length, "SM")} busy ${pct(Math.min(...busy))} to ${pct(Math.max(...busy))}` +
        (typeof detail.smBusyMean === "number" ? ` (mean ${pct(detail.smBusyMean)})` : ""),
    );
  }
  if (typeof detail.analyticTime === "number")
    parts.push(`formula ${fmtTime(detail.analyticTime)}`);
  return parts.join("; ");
}
