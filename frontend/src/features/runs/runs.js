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
