// Chart axes on a linear or a logarithmic scale: the domain, its ticks and where a value falls.
import { niceTicks } from "./chart.js";

export const SCALES = ["linear", "log"];

// Return the decades (and, over fewer than three, their 2x and 5x) from 10^floor(log10 lo)
// to 10^ceil(log10 hi); lo and hi are above 0.
export function logTicks(lo, hi) {
  const first = Math.floor(Math.log10(lo) + 1e-9);
  const last = Math.max(first + 1, Math.ceil(Math.log10(hi) - 1e-9));
  const ticks = [];
  for (let k = first; k <= last; k++) {
    const decade = Number((10 ** k).toPrecision(12));
    ticks.push(decade);
    if (last - first < 3 && k < last)
      ticks.push(Number((2 * decade).toPrecision(12)), Number((5 * decade).toPrecision(12)));
  }
  return ticks;
}

// Return an axis over `values`: {kind, lo, hi, ticks, at(v) -> 0..1}. A linear y axis
// (`fromZero`) starts at 0 and ends on a round tick; a linear x axis spans the values and
// ticks each distinct one; a log axis spans whole decades. Values at or below 0 have no
// place on a log axis: the caller leaves them out (see keepPlottable).
export function axis(values, kind = "linear", { fromZero = false } = {}) {
  const finite = values.filter((v) => Number.isFinite(v) && (kind !== "log" || v > 0));
  if (!finite.length) return { kind, lo: 0, hi: 1, ticks: [0, 1], at: () => 0 };
  const min = Math.min(...finite);
  const max = Math.max(...finite);
  if (kind === "log") {
    const ticks = logTicks(min, max);
    const [lo, hi] = [ticks[0], ticks[ticks.length - 1]];
    const span = Math.log10(hi) - Math.log10(lo) || 1;
    return { kind, lo, hi, ticks, at: (v) => (Math.log10(v) - Math.log10(lo)) / span };
  }
  if (fromZero) {
    const ticks = niceTicks(max);
    const hi = ticks[ticks.length - 1];
    return { kind, lo: 0, hi, ticks, at: (v) => v / (hi || 1) };
  }
  const ticks = [...new Set(finite)].sort((a, b) => a - b);
  return { kind, lo: min, hi: max, ticks, at: (v) => (v - min) / (max - min || 1) };
}

// Return the series without the points a log axis cannot show, and how many were left out.
export function keepPlottable(series, xKind, yKind) {
  let dropped = 0;
  const kept = series
    .map((s) => {
      const points = s.points.filter(
        ([x, y]) => (xKind !== "log" || x > 0) && (yKind !== "log" || y > 0),
      );
      dropped += s.points.length - points.length;
      return { ...s, points };
    })
    .filter((s) => s.points.length);
  return { series: kept, dropped };
}

// The width in pixels of a tick label at the charts' 11 px font: an estimate wide enough for
// digits and units, so that labels kept apart by it never touch.
export const labelWidth = (text) => String(text).length * 6.6 + 4;

// Return the ticks ([{at, label}], `at` in pixels, in order) whose labels fit side by side
// without overlapping: the first is kept, then each one whose label starts `gap` pixels or
// more past the end of the last kept label.
export function spacedTicks(ticks, gap = 8) {
  const kept = [];
  let end = -Infinity;
  for (const tick of ticks) {
    const half = labelWidth(tick.label) / 2;
    if (tick.at - half >= end + gap) {
      kept.push(tick);
      end = tick.at + half;
    }
  }
  return kept;
}
