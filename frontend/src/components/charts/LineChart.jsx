import { color, niceTicks } from "../../lib/chart.js";
import { fmt } from "../../lib/format.js";

// Line chart: series [{name, points: [[x, y], ...]}], one line each.
export function LineChart({ series, xLabel, yLabel, yFormat = fmt, width = 1100, height = 360 }) {
  const all = series.flatMap((s) => s.points);
  if (!all.length) return <p className="muted">No finished points yet.</p>;
  const xs = all.map((p) => p[0]);
  const ys = all.map((p) => p[1]);
  const [x0, x1] = [Math.min(...xs), Math.max(...xs)];
  const yTicks = niceTicks(Math.max(...ys));
  const [y0, y1] = [0, yTicks[yTicks.length - 1]];
  const m = { l: 80, r: 20, t: 20, b: 50 };
  const X = (v) => m.l + ((v - x0) / (x1 - x0 || 1)) * (width - m.l - m.r);
  const Y = (v) => height - m.b - ((v - y0) / (y1 - y0 || 1)) * (height - m.t - m.b);
  const xTicks = [...new Set(xs)].sort((a, b) => a - b);
  const xShown =
    xTicks.length > 10 ? xTicks.filter((_, i) => i % Math.ceil(xTicks.length / 10) === 0) : xTicks;
  return (
    <figure className="chart" aria-label={`${yLabel} against ${xLabel}`}>
      <svg
        width={width}
        height={height}
        role="img"
        aria-label={`${yLabel} against ${xLabel}, ${series.length} lines`}
      >
        {yTicks.map((t) => (
          <g key={t}>
            <line x1={m.l} x2={width - m.r} y1={Y(t)} y2={Y(t)} stroke="#e3e7ee" />
            <text x={m.l - 6} y={Y(t) + 4} fontSize="11" textAnchor="end">
              {yFormat(t)}
            </text>
          </g>
        ))}
        {xShown.map((t) => (
          <text key={t} x={X(t)} y={height - m.b + 16} fontSize="11" textAnchor="middle">
            {fmt(t)}
          </text>
        ))}
        <text x={(width + m.l) / 2} y={height - 10} fontSize="12" textAnchor="middle">
          {xLabel}
        </text>
        <text
          x={14}
          y={height / 2}
          fontSize="12"
          textAnchor="middle"
          transform={`rotate(-90 14 ${height / 2})`}
        >
          {yLabel}
        </text>
        {series.map((s, i) => {
          const pts = [...s.points].sort((a, b) => a[0] - b[0]);
          return (
            <g key={s.name} className="series" data-series={s.name}>
              <polyline
                fill="none"
                stroke={color(i)}
                strokeWidth="2"
                points={pts.map((p) => `${X(p[0])},${Y(p[1])}`).join(" ")}
              />
              {pts.map((p) => (
                <circle key={p[0]} cx={X(p[0])} cy={Y(p[1])} r="3.5" fill={color(i)}>
                  <title>{`${s.name}: ${xLabel}=${fmt(p[0])}, ${yFormat(p[1])}`}</title>
                </circle>
              ))}
            </g>
          );
        })}
      </svg>
      <figcaption className="legend">
        {series.map((s, i) => (
          <span key={s.name}>
            <i style={{ background: color(i) }} />
            {s.name}
          </span>
        ))}
      </figcaption>
    </figure>
  );
}
