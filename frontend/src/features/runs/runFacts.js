// What the run page says about a run's life: when it was launched, started and finished, its
// wall time (elapsed while it runs), queue position, seed, worker and simulated time reached.
import { fmtTime } from "../../lib/format.js";

// Wall-clock seconds as a person reads them: "850 ms", "4.2 s", "3 min 05 s", "2 h 01 min".
export function fmtDuration(seconds) {
  if (seconds === null || seconds === undefined || !Number.isFinite(seconds)) return "—";
  const s = Math.max(0, seconds);
  if (s < 1) return `${Math.round(s * 1000)} ms`;
  if (s < 60) return `${s.toFixed(1)} s`;
  const whole = Math.floor(s);
  const pad = (n) => String(n).padStart(2, "0");
  if (whole < 3600) return `${Math.floor(whole / 60)} min ${pad(whole % 60)} s`;
  return `${Math.floor(whole / 3600)} h ${pad(Math.floor((whole % 3600) / 60))} min`;
}

const when = (iso) => (iso ? new Date(iso).toLocaleString() : "—");
const seconds = (from, to) => (new Date(to).getTime() - new Date(from).getTime()) / 1000;

// Return [{label, value, testId}] for `sim` at the time `nowMs` (milliseconds since the epoch).
export function runFacts(sim, nowMs) {
  const facts = [{ label: "Launched", value: when(sim.created) }];
  if (sim.status === "queued") {
    facts.push({
      label: "Queue position",
      value:
        typeof sim.queue_position === "number"
          ? `${sim.queue_position} of the queued runs on ${sim.queue}${sim.queue_position === 1 ? " (next to start)" : ""}`
          : "—",
      testId: "queue-position",
    });
    facts.push({ label: "Waiting for", value: fmtDuration(seconds(sim.created, nowMs)) });
  }
  if (sim.started) facts.push({ label: "Started", value: when(sim.started) });
  if (sim.status === "running" && sim.started) {
    facts.push({
      label: "Elapsed",
      value: fmtDuration(seconds(sim.started, nowMs)),
      testId: "elapsed",
    });
  }
  if (sim.finished) facts.push({ label: "Finished", value: when(sim.finished) });
  if (sim.finished && sim.started && sim.status !== "queued") {
    facts.push({
      label: "Wall time",
      value: fmtDuration(seconds(sim.started, sim.finished)),
      testId: "wall-time",
    });
  }
  if (sim.status === "running" || typeof sim.simulated_time_s === "number") {
    facts.push({
      label: sim.status === "running" ? "Simulated time reached" : "Simulated time",
      value: typeof sim.simulated_time_s === "number" ? fmtTime(sim.simulated_time_s) : "—",
      testId: "simulated-time",
    });
  }
  facts.push({ label: "Seed", value: String(sim.seed ?? "—") });
  if (sim.uncertainty)
    facts.push({
      label: "Prediction interval",
      value: `${sim.uncertainty.samples} samples, seed ${sim.uncertainty.seed ?? 0}`,
    });
  facts.push({ label: "Worker", value: sim.worker || "—" });
  if (sim.attempts > 1) facts.push({ label: "Attempts", value: String(sim.attempts) });
  return facts;
}

// The figures of a running run's progress: the fraction of its processes finished, or null
// while none has (one process, or all ending together at the end, or a run with no end: the
// run cannot know a fraction then, and a 0 % that never moves would mislead), the simulated
// time reached and the time elapsed, both as read.
function progressFigures(sim, nowMs) {
  return {
    fraction: sim.progress > 0 ? sim.progress : null,
    reached: typeof sim.simulated_time_s === "number" ? fmtTime(sim.simulated_time_s) : "—",
    elapsed: sim.started ? fmtDuration(seconds(sim.started, nowMs)) : "—",
  };
}

// Return what a running run's progress bar shows on the run page: {fraction, caption}.
export function runProgress(sim, nowMs) {
  const { fraction, reached, elapsed } = progressFigures(sim, nowMs);
  const clock = `simulated time reached ${reached} · elapsed ${elapsed}`;
  if (fraction !== null) {
    const done = `${Math.round(fraction * 100)} % of the processes finished`;
    return { fraction, caption: `${done} · ${clock}` };
  }
  return { fraction: null, caption: `Running: ${clock}` };
}

// Return the same figures in the few words a row of the runs list has room for:
// "50 % · 2.500 ms simulated · 1 min 05 s elapsed", without the percentage where the run
// cannot know one.
export function runProgressBrief(sim, nowMs) {
  const { fraction, reached, elapsed } = progressFigures(sim, nowMs);
  const clock = `${reached} simulated · ${elapsed} elapsed`;
  return fraction !== null ? `${Math.round(fraction * 100)} % · ${clock}` : clock;
}
