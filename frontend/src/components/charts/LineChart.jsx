import { color } from "../../lib/chart.js";
import { fmt } from "../../lib/format.js";
import { axis, thinTicks } from "../../lib/scales.js";

// Line chart: series [{name, points: [[x, y], ...]}], one line each; `xScale` and `yScale`
// "linear" (y from 0) or "log" (points at or below 0 must be left out first: keepPlottable).
export function LineChart({
  series,
  xLabel,
  yLabel,
  yFormat = fmt,
  xScale = "linear",
  yScale = "linear",
  width = 1100,
  height = 360,
}) {
  const all = series.flatMap((s) => s.points);
  if (!all.length) return <p className="muted">No finished points yet.</p>;
  const xAxis = axis(
    all.map((p) => p[0]),
    xScale,
  );
  const yAxis = axis(
    all.map((p) => p[1]),
    yScale,
    { fromZero: true },
  );
  const m = { l: 80, r: 40, t: 20, b: 50 };
  const X = (v) => m.l + xAxis.at(v) * (width - m.l - m.r);
  const Y = (v) => height - m.b - yAxis.at(v) * (height - m.t - m.b);
  const scaleNote = (kind) => (kind === "log" ? " (log)" : "");
  return (
    <figure
      className="chart"
      aria-label={`${yLabel} against ${xLabel}`}
      data-x-scale={xScale}
      data-y-scale={yScale}
    >
      <svg
        width={width}
        height={height}
        role="img"
        aria-label={`${yLabel}${scaleNote(yScale)} against ${xLabel}${scaleNote(xScale)}, ${series.length} lines`}
      >
        {yAxis.ticks.map((t) => (
          <g key={t} className="y-tick">
            <line x1={m.l} x2={width - m.r} y1={Y(t)} y2={Y(t)} stroke="#e3e7ee" />
            <text x={m.l - 6} y={Y(t) + 4} fontSize="11" textAnchor="end">
              {yFormat(t)}
            </text>
          </g>
        ))}
        {thinTicks(xAxis.ticks).map((t) => (
          <text key={t} x={X(t)} y={height - m.b + 16} fontSize="11" textAnchor="middle">
            {fmt(t)}
          </text>
        ))}
        <text x={(width + m.l) / 2} y={height - 10} fontSize="12" textAnchor="middle">
          {xLabel}
          {scaleNote(xScale)}
        </text>
        <text
          x={14}
          y={height / 2}
          fontSize="12"
          textAnchor="middle"
          transform={`rotate(-90 14 ${height / 2})`}
        >
          {yLabel}
          {scaleNote(yScale)}
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
      <figcaption className="legend" aria-label="Legend">
        {series.map((s, i) => (
          <span key={s.name} data-legend={s.name}>
            <i style={{ background: color(i) }} />
            {s.name}
          </span>
        ))}
      </figcaption>
    </figure>
  );
}
