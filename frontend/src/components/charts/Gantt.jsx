import { color, niceTicks } from "../../lib/chart.js";
import { fmtTime } from "../../lib/format.js";

// Gantt timeline: one row per process; bars coloured by kind (compute, send, receive, wait...).
// `end`: the axis's end [s] (a comparison gives its runs one axis); by default the last bar's.
export function Gantt({ timeline, width = 900, end: axisEnd }) {
  if (!timeline || !timeline.length) return <p className="muted">No timeline recorded.</p>;
  const processes = [...new Set(timeline.map((t) => t.process))];
  const kinds = [...new Set(timeline.map((t) => t.kind))];
  const end = axisEnd || Math.max(...timeline.map((t) => t.end_s)) || 1;
  const ticks = niceTicks(end).filter((t) => t <= end * (1 + 1e-9));
  const left = 110;
  const row = 26;
  const plotW = width - left - 60;
  const passive = (kind) => /receive|wait|barrier|idle/.test(kind);
  const ordered = [...timeline].sort((a, b) => Number(!passive(a.kind)) - Number(!passive(b.kind)));
  const height = processes.length * row + 50;
  const x = (t) => left + (t / end) * plotW;
  return (
    <figure className="chart" aria-label="Gantt timeline of processes">
      <svg
        width={width}
        height={height}
        role="img"
        aria-label={`Timeline of ${processes.length} processes over ${fmtTime(end)}`}
      >
        {ticks.map((t) => (
          <g key={t}>
            <line x1={x(t)} x2={x(t)} y1={10} y2={height - 30} stroke="#e3e7ee" />
            <text x={x(t)} y={height - 14} fontSize="11" textAnchor="middle">
              {fmtTime(t)}
            </text>
          </g>
        ))}
        {processes.map((p, i) => (
          <text key={p} x={left - 8} y={20 + i * row + row / 2} fontSize="12" textAnchor="end">
            {p}
          </text>
        ))}
        {ordered.map((t, i) => {
          const r = processes.indexOf(t.process);
          const w = Math.max(1.5, x(t.end_s) - x(t.start_s));
          const thin = passive(t.kind);
          return (
            <rect
              key={i}
              x={x(t.start_s)}
              y={14 + r * row + (thin ? 5 : 0)}
              width={w}
              height={thin ? row - 20 : row - 10}
              fill={color(kinds.indexOf(t.kind))}
              opacity={thin ? 0.55 : 0.9}
            >
              <title>{`${t.process}: ${t.kind} ${fmtTime(t.start_s)} – ${fmtTime(t.end_s)} (${fmtTime(t.end_s - t.start_s)})`}</title>
            </rect>
          );
        })}
      </svg>
      <figcaption className="legend">
        {kinds.map((k, i) => (
          <span key={k}>
            <i style={{ background: color(i) }} />
            {k}
          </span>
        ))}
      </figcaption>
    </figure>
  );
}
