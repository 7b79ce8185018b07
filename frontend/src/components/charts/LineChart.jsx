import { color } from "../../lib/chart.js";
import { fmt } from "../../lib/format.js";
import { useChartWidth } from "../../hooks/useChartWidth.js";
import { axis } from "../../lib/scales.js";
import { Axes } from "./Axes.jsx";

// Line chart: series [{name, points: [[x, y], ...]}], one line each; `xScale` and `yScale`
// "linear" (y from 0) or "log" (points at or below 0 must be left out first: keepPlottable).
export function LineChart({
  series,
  xLabel,
  yLabel,
  yFormat = fmt,
  xScale = "linear",
  yScale = "linear",
  width: preferred = 1100,
  height = 360,
}) {
  const [box, width] = useChartWidth(preferred);
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
      <div ref={box} className="chart-box">
        <svg
          width={width}
          height={height}
          role="img"
          aria-label={`${yLabel}${scaleNote(yScale)} against ${xLabel}${scaleNote(xScale)}, ${series.length} lines`}
        >
          <Axes
            width={width}
            height={height}
            margin={m}
            x={{
              ticks: xAxis.ticks.map((t) => ({ at: X(t), label: fmt(t) })),
              title: `${xLabel}${scaleNote(xScale)}`,
            }}
            y={{
              ticks: yAxis.ticks.map((t) => ({ at: Y(t), label: yFormat(t) })),
              title: `${yLabel}${scaleNote(yScale)}`,
            }}
          />
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
      </div>
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
