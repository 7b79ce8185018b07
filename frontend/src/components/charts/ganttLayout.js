// The Gantt chart's layout, as pure functions: its rows (one per process, one per component
// instance), the visible time window with zoom and pan, the time scale and ticks, the bars
// a window shows (intervals closer than a pixel merged), and the notice of dropped entries.
import { niceTicks } from "../../lib/chart.js";
import { fmtTime } from "../../lib/format.js";

// The narrowest window, as a fraction of the run: a million-fold zoom and then some.
export const MIN_SPAN_FRACTION = 1e-7;

// Kinds drawn as thin bars behind the active ones: the process is waiting, not working.
// Drawn thin and behind: a process waiting, or inside a collective (its transfers show on top).
export const passiveKind = (kind) => /receive|wait|barrier|idle|collective/.test(kind);

// What a bar's tooltip calls one entry: a collective names its call and the algorithm it ran.
export const entryWhat = (entry, withNode) => {
  if (entry.kind === "collective" && entry.collective) {
    return `${entry.collective} (${entry.algorithm}) of ${entry.size} bytes`;
  }
  return `${entry.kind}${entry.node && withNode ? ` on ${entry.node}` : ""}`;
};

const byStart = (a, b) => a.start_s - b.start_s || a.end_s - b.end_s;
const processName = (p) => p.process || `${p.label}[${p.rank}]`;

// The Gantt's input from a run's result (DESIGN.md "Result"): its timeline, the resource
// rows' busy periods and what was dropped of each, and the run's overall time.
export function ganttInput(result) {
  return {
    timeline: result?.timeline || [],
    processes: result?.processes,
    resourceTimeline: result?.resource_timeline,
    components: result?.components,
    overallTime: result?.overall_time_s,
    dropped: result?.timeline_dropped || 0,
    resourceDropped: result?.resource_timeline_dropped || 0,
  };
}

// The rows of the chart: a process row for each of `processes` (then any other process the
// timeline names), and, when the result has resource rows (`resourceTimeline`), a row for each
// component instance, busy in its periods. Each row's entries are sorted by start.
export function ganttRows({ timeline = [], processes = [], resourceTimeline, components = [] }) {
  const rows = [];
  const byKey = new Map();
  const addRow = (key, row) => {
    const made = { key, entries: [], ...row };
    byKey.set(key, made);
    rows.push(made);
    return made;
  };
  (processes || []).forEach((p) => {
    const name = processName(p);
    if (!byKey.has(`p:${name}`)) addRow(`p:${name}`, { label: name, group: "process" });
  });
  timeline.forEach((entry) => {
    const key = `p:${entry.process}`;
    (byKey.get(key) || addRow(key, { label: entry.process, group: "process" })).entries.push(entry);
  });
  if (Array.isArray(resourceTimeline)) {
    (components || []).forEach((c) => {
      const key = `r:${c.node}[${c.instance}]`;
      if (!byKey.has(key))
        addRow(key, {
          label: `${c.name || c.node}[${c.instance}]`,
          group: "resource",
          type: c.type || "",
        });
    });
    resourceTimeline.forEach((busy) => {
      const key = `r:${busy.node}[${busy.instance}]`;
      const row =
        byKey.get(key) ||
        addRow(key, { label: `${busy.node}[${busy.instance}]`, group: "resource", type: "" });
      row.entries.push({ ...busy, kind: row.type ? `${row.type} busy` : "busy" });
    });
  }
  rows.forEach((row) => row.entries.sort(byStart));
  return rows;
}

// The vertical position of each row: process rows first, a gap and a heading before the
// resource rows. Returns {rows: [{...row, y}], headings: [{label, y}], height}.
export function layoutRows(rows, { top = 28, rowHeight = 22, gap = 22 } = {}) {
  let y = top;
  const headings = [];
  let group = null;
  const placed = rows.map((row) => {
    if (row.group !== group) {
      if (group !== null || row.group === "resource") {
        y += gap;
        headings.push({ label: row.group === "resource" ? "Resources" : "Processes", y: y - 6 });
      }
      group = row.group;
    }
    const at = { ...row, y };
    y += rowHeight;
    return at;
  });
  return { rows: placed, headings, height: y };
}

// The run's overall time: given, or else the end of the last entry (an old result).
export function totalTime(overallTime, rows) {
  if (overallTime > 0 && Number.isFinite(overallTime)) return overallTime;
  let end = 0;
  rows.forEach((row) => row.entries.forEach((e) => (end = Math.max(end, e.end_s))));
  return end > 0 ? end : 1;
}

// The window showing the whole run.
export const fullWindow = (total) => ({ start: 0, end: total });

// `win` kept within [0, total] and at least the narrowest span, its width kept when it can be.
export function clampWindow(win, total) {
  const minSpan = total * MIN_SPAN_FRACTION;
  const span = Math.min(total, Math.max(minSpan, win.end - win.start));
  const start = Math.min(Math.max(0, win.start), total - span);
  return { start, end: start + span };
}

// `win` zoomed by `factor` (below 1: in) around the time `anchor` (default: its middle), which
// stays where it was on the screen.
export function zoomWindow(win, factor, total, anchor = (win.start + win.end) / 2) {
  const minSpan = total * MIN_SPAN_FRACTION;
  const span = win.end - win.start;
  const next = Math.min(total, Math.max(minSpan, span * factor));
  const ratio = next / span;
  const start = anchor - (anchor - win.start) * ratio;
  return clampWindow({ start, end: start + next }, total);
}

// `win` moved by `fraction` of its width (negative: towards the start).
export function panWindow(win, fraction, total) {
  const shift = (win.end - win.start) * fraction;
  return clampWindow({ start: win.start + shift, end: win.end + shift }, total);
}

// Whether `win` shows the whole run.
export const isFullWindow = (win, total) => win.start <= 0 && win.end >= total;

// The x position of a time in `win` drawn from x0 over `width` pixels.
export function timeScale(win, x0, width) {
  const span = win.end - win.start || 1;
  return (t) => x0 + ((t - win.start) / span) * width;
}

// Round tick times within `win`, about `count` of them.
export function windowTicks(win, count = 6) {
  const span = win.end - win.start;
  if (!(span > 0)) return [win.start];
  const step = tickStep(win, count);
  const ticks = [];
  const first = Math.ceil(win.start / step - 1e-9);
  for (let i = first; i * step <= win.end * (1 + 1e-12); i += 1)
    ticks.push(Number((i * step).toPrecision(12)));
  return ticks;
}

const UNITS = [
  [1, "s", 0.1],
  [1e-3, "ms", 1e-4],
  [1e-6, "µs", 1e-7],
  [1e-9, "ns", 0],
];

// The distance between round ticks within `win`, about `count` of them.
export function tickStep(win, count = 6) {
  const span = win.end - win.start;
  return span > 0 ? niceTicks(span, count)[1] : 1;
}

// A time written precisely enough to tell apart times `resolution` seconds apart (tick
// labels), in a unit that suits the resolution, with as many decimals as it needs and `extra`
// more (the window's bounds, finer than its ticks).
export function timeLabel(t, resolution, extra = 0) {
  const [scale, unit] = UNITS.find(([, , from]) => resolution >= from);
  const step = Number((resolution / scale).toPrecision(3));
  const decimals = Math.min(9, (String(step).split(".")[1] || "").length + extra);
  return `${(t / scale).toFixed(decimals)} ${unit}`;
}

// The bars of one row in `win` drawn from x0 over `width` pixels: entries of one kind less
// than `mergePx` apart on screen become one bar (its `count` says how many), so a window
// shows at most about a bar per pixel and kind however many entries the run kept.
export function visibleBars(entries, win, x0, width, mergePx = 1) {
  const x = timeScale(win, x0, width);
  const bars = [];
  const last = new Map();
  for (const entry of entries) {
    if (entry.start_s > win.end) break; // sorted by start
    if (entry.end_s < win.start) continue;
    const x1 = x(Math.max(entry.start_s, win.start));
    const x2 = x(Math.min(entry.end_s, win.end));
    const previous = last.get(entry.kind);
    if (previous && x1 <= previous.x2 + mergePx) {
      previous.x2 = Math.max(previous.x2, x2);
      previous.end_s = Math.max(previous.end_s, entry.end_s);
      previous.count += 1;
      continue;
    }
    const bar = { kind: entry.kind, x1, x2, start_s: entry.start_s, end_s: entry.end_s, count: 1 };
    bar.entry = entry;
    last.set(entry.kind, bar);
    bars.push(bar);
  }
  return bars;
}

// The end of the last kept entry of `entries` lists: up to then the kept timeline is whole.
export function keptUntil(rows, group) {
  let end = 0;
  rows.forEach((row) => {
    if (row.group === group) row.entries.forEach((e) => (end = Math.max(end, e.end_s)));
  });
  return end;
}

const count = (n) => Number(n).toLocaleString("en-US");

// The notice of a truncated timeline, or "" when nothing was dropped.
export function droppedNotice({ kept, dropped, until, total, resourceKept, resourceDropped }) {
  const parts = [];
  if (dropped > 0)
    parts.push(
      `This run's timeline kept its first ${count(kept)} process entries, up to ` +
        `${fmtTime(until)} of the run's ${fmtTime(total)}; ${count(dropped)} later entries ` +
        `were dropped.`,
    );
  if (resourceDropped > 0)
    parts.push(
      `The resource rows kept ${count(resourceKept)} busy periods; ${count(resourceDropped)} ` +
        `were dropped.`,
    );
  return parts.join(" ");
}
