// What the run page says about a run's limits: the one that stopped it and what it was.
import { fmtBytes } from "../../lib/format.js";

// The sandbox's limit kinds (the stored error's `limit`) as the page names them.
export const LIMIT_NAMES = {
  wall: "wall-clock limit",
  cpu: "CPU-time limit",
  memory: "memory limit",
  output: "output limit",
  result: "result-size limit",
  "file size": "file-size limit",
};

// A limit's value as stored beside the error ({value, unit}: "s" or "bytes"), or "".
export function limitValue(value, unit) {
  if (typeof value !== "number" || !Number.isFinite(value)) return "";
  if (unit === "bytes") return fmtBytes(value);
  return `${Number.isInteger(value) ? value : Number(value.toPrecision(6))} s`;
}

// The sentence naming the limit that stopped a failed run, or null when no limit did.
export function stopReason(sim) {
  const error = sim?.error;
  if (sim?.status !== "failed" || error?.kind !== "limit") return null;
  const name = LIMIT_NAMES[error.limit] || `${error.limit || "a"} limit`;
  const value = limitValue(error.value, error.unit);
  return `Stopped by the ${name}${value ? ` of ${value}` : ""}.`;
}

// The run's own limits, "wall clock 30 s · CPU time 60 s" (older runs have no CPU limit).
export function runLimits(sim) {
  const parts = [];
  if (typeof sim?.time_limit_s === "number") parts.push(`wall clock ${sim.time_limit_s} s`);
  if (typeof sim?.cpu_limit_s === "number") parts.push(`CPU time ${sim.cpu_limit_s} s`);
  return parts.join(" · ");
}
