// Axis ticks and series colours shared by the charts.

// Return round axis ticks from 0 to the first one at or above `max` (steps of 1, 2, 2.5 or 5 x 10^k).
export function niceTicks(max, count = 4) {
  if (!(max > 0) || !Number.isFinite(max)) return [0, 1];
  const raw = max / count;
  const magnitude = 10 ** Math.floor(Math.log10(raw));
  const step = [1, 2, 2.5, 5, 10].map((m) => m * magnitude).find((s) => s >= raw * (1 - 1e-9));
  const ticks = [0];
  while (ticks[ticks.length - 1] < max * (1 - 1e-9))
    ticks.push(Number((ticks.length * step).toPrecision(12)));
  return ticks;
}

const PALETTE = [
  "#2457c5",
  "#d9480f",
  "#2b8a3e",
  "#862e9c",
  "#e67700",
  "#0b7285",
  "#c2255c",
  "#5c940d",
  "#364fc7",
  "#a61e4d",
];

// The colour of series `i`, repeating after ten.
export const color = (i) => PALETTE[i % PALETTE.length];
