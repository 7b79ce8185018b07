import { useEffect, useId, useMemo, useRef, useState } from "react";
import { useChartWidth } from "../../hooks/useChartWidth.js";
import { color } from "../../lib/chart.js";
import { fmtTime } from "../../lib/format.js";
import {
  clampWindow,
  droppedNotice,
  entryWhat,
  fullWindow,
  ganttRows,
  isFullWindow,
  keptUntil,
  layoutRows,
  panWindow,
  passiveKind,
  tickStep,
  timeLabel,
  timeScale,
  totalTime,
  visibleBars,
  windowTicks,
  zoomWindow,
} from "./ganttLayout.js";

const LEFT = 170;
const RIGHT = 20;
const ROW = 22;
const ZOOM_STEP = 0.5;
const PAN_STEP = 0.25;

// Gantt timeline over the run's whole time: a row per process (bars coloured by kind:
// compute, transfer, receive...) and, when the result has them, a row per component instance
// (its busy periods). Zoom and pan with the buttons, the keyboard (+, -, arrows, 0), the
// mouse wheel and dragging; a notice says how many entries the run dropped.
export function Gantt({
  timeline,
  processes,
  resourceTimeline,
  components,
  overallTime,
  dropped = 0,
  resourceDropped = 0,
  width: preferred = 900,
}) {
  // Drawn as wide as its column allows (a phone's), its time axis spread over that width.
  const [box, width] = useChartWidth(preferred, 320);
  // What does not change while zooming and panning (a pass over every kept entry) is
  // computed once per result.
  const layout = useMemo(() => {
    const made = ganttRows({ timeline: timeline || [], processes, resourceTimeline, components });
    const { rows: placed, headings, height } = layoutRows(made, { rowHeight: ROW });
    return {
      rows: placed, // each with its y
      headings,
      height,
      kinds: [...new Set(made.flatMap((row) => row.entries.map((e) => e.kind)))],
      processUntil: keptUntil(made, "process"),
      resourceUntil: keptUntil(made, "resource"),
    };
  }, [timeline, processes, resourceTimeline, components]);
  const { rows, kinds, headings } = layout;
  const total = totalTime(overallTime, rows);
  const [view, setView] = useState(null); // {total, win}: the window chosen for this run
  const win = view && view.total === total ? view.win : fullWindow(total);
  const svgRef = useRef(null);
  const ids = useId().replace(/[^A-Za-z0-9_-]/g, ""); // own pattern and clip: a page may show two
  const hatchId = `gantt-dropped-${ids}`;
  const clipId = `gantt-plot-${ids}`;
  const drag = useRef(null);
  const plotW = Math.max(100, width - LEFT - RIGHT);
  const show = (next) => setView({ total, win: clampWindow(next, total) });

  const drawn = rows.some((row) => row.entries.length);

  // The wheel zooms around the pointer (with Shift, or sideways, it pans); React's wheel
  // listener is passive, so this one is added here to keep the page from scrolling.
  const { start: winStart, end: winEnd } = win;
  useEffect(() => {
    const svg = svgRef.current;
    if (!svg) return undefined;
    const listener = (event) => {
      const px = event.clientX - svg.getBoundingClientRect().left - LEFT;
      if (px < 0 || px > plotW) return;
      event.preventDefault();
      const current = { start: winStart, end: winEnd };
      const sideways = event.shiftKey || Math.abs(event.deltaX) > Math.abs(event.deltaY);
      const next = sideways
        ? panWindow(current, (event.deltaX || event.deltaY) / plotW, total)
        : zoomWindow(
            current,
            event.deltaY < 0 ? 0.8 : 1.25,
            total,
            winStart + (px / plotW) * (winEnd - winStart),
          );
      setView({ total, win: next });
    };
    svg.addEventListener("wheel", listener, { passive: false });
    return () => svg.removeEventListener("wheel", listener);
  }, [drawn, winStart, winEnd, total, plotW]);

  if (!drawn) return <p className="muted">No timeline recorded.</p>;

  const height = layout.height + 8;
  const x = timeScale(win, LEFT, plotW);
  const tickCount = Math.max(2, Math.floor(plotW / 110));
  const ticks = windowTicks(win, tickCount);
  const resolution = tickStep(win, tickCount);
  const processUntil = dropped > 0 ? layout.processUntil : null;
  const resourceUntil = resourceDropped > 0 ? layout.resourceUntil : null;
  const notice = droppedNotice({
    kept: (timeline || []).length,
    dropped,
    until: processUntil,
    total,
    resourceKept: (resourceTimeline || []).length,
    resourceDropped,
  });
  const full = isFullWindow(win, total);
  const zoom = (factor) => show(zoomWindow(win, factor, total));
  const pan = (fraction) => show(panWindow(win, fraction, total));
  const reset = () => setView(null);

  const onKeyDown = (event) => {
    const actions = {
      "+": () => zoom(ZOOM_STEP),
      "=": () => zoom(ZOOM_STEP),
      "-": () => zoom(1 / ZOOM_STEP),
      ArrowLeft: () => pan(-PAN_STEP),
      ArrowRight: () => pan(PAN_STEP),
      0: reset,
      Home: reset,
    };
    const action = actions[event.key];
    if (action) {
      event.preventDefault();
      action();
    }
  };
  const onPointerDown = (event) => {
    if (event.button !== 0) return;
    drag.current = { x: event.clientX, win };
    event.currentTarget.setPointerCapture?.(event.pointerId);
  };
  const onPointerMove = (event) => {
    const start = drag.current;
    if (!start) return;
    const dt = ((start.x - event.clientX) / plotW) * (start.win.end - start.win.start);
    show({ start: start.win.start + dt, end: start.win.end + dt });
  };
  const endDrag = () => {
    drag.current = null;
  };

  // The part of the run whose entries were dropped, shaded on the rows it concerns.
  const unrecorded = (group, until) => {
    if (until === null || until >= win.end) return null;
    const from = Math.max(x(until), LEFT);
    return rows
      .filter((row) => row.group === group)
      .map((row) => (
        <rect
          key={`gap-${row.key}`}
          x={from}
          y={row.y + 2}
          width={LEFT + plotW - from}
          height={ROW - 4}
          fill={`url(#${hatchId})`}
        />
      ));
  };

  return (
    <figure className="chart gantt" aria-label="Gantt timeline of processes">
      {notice && (
        <p className="note" role="status" data-testid="timeline-dropped">
          {notice} To keep more, launch the run again with a larger <em>Timeline entries</em> (REST
          field <code>timeline_limit</code>), up to the server&apos;s maximum. The axis still spans
          the whole run; the shaded part was not recorded.
        </p>
      )}
      <div className="actions gantt-controls" role="toolbar" aria-label="Timeline zoom">
        <button type="button" onClick={() => zoom(ZOOM_STEP)} aria-label="Zoom in">
          Zoom in +
        </button>
        <button
          type="button"
          onClick={() => zoom(1 / ZOOM_STEP)}
          disabled={full}
          aria-label="Zoom out"
        >
          Zoom out −
        </button>
        <button
          type="button"
          onClick={() => pan(-PAN_STEP)}
          disabled={win.start <= 0}
          aria-label="Pan left"
        >
          ◀
        </button>
        <button
          type="button"
          onClick={() => pan(PAN_STEP)}
          disabled={win.end >= total}
          aria-label="Pan right"
        >
          ▶
        </button>
        <button type="button" onClick={reset} disabled={full}>
          Whole run
        </button>
        <span className="hint" data-testid="gantt-window" aria-live="polite">
          {full
            ? `Whole run: 0 – ${fmtTime(total)}`
            : `Showing ${timeLabel(win.start, resolution, 1)} – ${timeLabel(win.end, resolution, 1)} of ${fmtTime(total)}`}
        </span>
      </div>
      <div className="gantt-scroll" ref={box}>
        <svg
          ref={svgRef}
          width={width}
          height={height}
          role="img"
          tabIndex={0}
          aria-label={`Timeline of ${rows.length} rows over ${fmtTime(total)}; + and - zoom, arrows pan, 0 shows the whole run`}
          data-end={total}
          onKeyDown={onKeyDown}
          onPointerDown={onPointerDown}
          onPointerMove={onPointerMove}
          onPointerUp={endDrag}
          onPointerCancel={endDrag}
        >
          <defs>
            <pattern
              id={hatchId}
              width="6"
              height="6"
              patternUnits="userSpaceOnUse"
              patternTransform="rotate(45)"
            >
              <rect width="6" height="6" fill="#f3f5f8" />
              <line x1="0" y1="0" x2="0" y2="6" stroke="#c5ccd8" strokeWidth="2" />
            </pattern>
            <clipPath id={clipId}>
              <rect x={LEFT} y={0} width={plotW} height={height} />
            </clipPath>
          </defs>
          {ticks.map((t) => (
            <g key={t} className="gantt-tick">
              <line x1={x(t)} x2={x(t)} y1={18} y2={height - 4} stroke="#e3e7ee" />
              <text x={x(t)} y={12} fontSize="11" textAnchor="middle">
                {timeLabel(t, resolution)}
              </text>
            </g>
          ))}
          {headings.map((h) => (
            <text key={h.label} x={4} y={h.y} fontSize="11" fontWeight="600">
              {h.label}
            </text>
          ))}
          {rows.map((row) => (
            <g key={row.key}>
              <title>{row.type ? `${row.label} (${row.type})` : row.label}</title>
              {row.type && (
                <text x={12} y={row.y + ROW / 2 + 4} fontSize="10" className="gantt-type">
                  {row.type}
                </text>
              )}
              <text
                x={LEFT - 8}
                y={row.y + ROW / 2 + 4}
                fontSize="12"
                textAnchor="end"
                data-row-label={row.group}
              >
                {row.label.length > 18 ? `${row.label.slice(0, 17)}…` : row.label}
              </text>
            </g>
          ))}
          <g clipPath={`url(#${clipId})`}>
            {unrecorded("process", processUntil)}
            {unrecorded("resource", resourceUntil)}
            {rows.map((row) => {
              const bars = visibleBars(row.entries, win, LEFT, plotW);
              bars.sort((a, b) => Number(!passiveKind(a.kind)) - Number(!passiveKind(b.kind)));
              return (
                <g key={row.key} data-row={row.key}>
                  {bars.map((bar, i) => {
                    const thin = passiveKind(bar.kind);
                    const what =
                      bar.count > 1
                        ? `${bar.count} ${bar.kind} entries`
                        : entryWhat(bar.entry, row.group === "process");
                    return (
                      <rect
                        key={i}
                        x={bar.x1}
                        y={row.y + (thin ? 7 : 2)}
                        width={Math.max(1, bar.x2 - bar.x1)}
                        height={thin ? ROW - 14 : ROW - 4}
                        fill={color(kinds.indexOf(bar.kind))}
                        opacity={thin ? 0.55 : 0.9}
                      >
                        <title>{`${row.label}: ${what}, ${fmtTime(bar.start_s)} – ${fmtTime(bar.end_s)} (${fmtTime(bar.end_s - bar.start_s)})`}</title>
                      </rect>
                    );
                  })}
                </g>
              );
            })}
          </g>
          <line x1={LEFT} x2={LEFT} y1={18} y2={height - 4} stroke="#aab3c2" />
        </svg>
      </div>
      <figcaption className="legend">
        {kinds.map((k, i) => (
          <span key={k}>
            <i style={{ background: color(i) }} />
            {k}
          </span>
        ))}
        {(processUntil !== null || resourceUntil !== null) && (
          <span>
            <i className="gantt-dropped-key" />
            not recorded (dropped)
          </span>
        )}
      </figcaption>
    </figure>
  );
}
