import { color } from "../../lib/chart.js";
import { fmt } from "../../lib/format.js";
import { useChartWidth } from "../../hooks/useChartWidth.js";
import { axis } from "../../lib/scales.js";
import { Axes } from "./Axes.jsx";

// Stacked bars grouped by x: stacks [{x, series, segments: [{key, label, value}]}], one bar
// per series within each x, its segments piled in order (the same keys in every stack).
export function StackedBars({
  stacks,
  xLabel,
  yLabel,
  yFormat = fmt,
  width: preferred = 1100,
  height = 360,
}) {
  const [box, width] = useChartWidth(preferred);
  if (!stacks.length) return <p className="muted">No finished points yet.</p>;
  // numbers in order; text values (a categorical axis) as the stacks give them
  const xs = [...new Set(stacks.map((s) => s.x))];
  if (xs.every((v) => typeof v === "number")) xs.sort((a, b) => a - b);
  const names = [...new Set(stacks.map((s) => s.series))];
  const segments = stacks[0].segments.map((s) => ({ key: s.key, label: s.label }));
  const totals = stacks.map((s) => s.segments.reduce((sum, g) => sum + g.value, 0));
  const yAxis = axis(totals, "linear", { fromZero: true });
  const m = { l: 80, r: 20, t: 20, b: 50 };
  const group = (width - m.l - m.r) / xs.length;
  const bar = Math.min(40, (group * 0.8) / names.length);
  const Y = (v) => height - m.b - yAxis.at(v) * (height - m.t - m.b);
  return (
    <figure className="chart" aria-label={`${yLabel} against ${xLabel}, stacked by phase`}>
      <div ref={box} className="chart-box">
        <svg
          width={width}
          height={height}
          role="img"
          aria-label={`${yLabel} per phase against ${xLabel}, ${names.length} bars per value`}
        >
          <Axes
            width={width}
            height={height}
            margin={m}
            x={{
              ticks: xs.map((x, i) => ({ at: m.l + group * (i + 0.5), label: fmt(x) })),
              title: xLabel,
            }}
            y={{ ticks: yAxis.ticks.map((t) => ({ at: Y(t), label: yFormat(t) })), title: yLabel }}
          />
          {stacks.map((s) => {
            const left =
              m.l +
              group * xs.indexOf(s.x) +
              (group - bar * names.length) / 2 +
              bar * names.indexOf(s.series);
            let base = 0;
            return (
              <g key={`${s.x}-${s.series}`} className="stack" data-series={s.series}>
                {s.segments.map((g, k) => {
                  const top = base + g.value;
                  const rect = (
                    <rect
                      key={g.key}
                      x={left}
                      width={Math.max(1, bar - 2)}
                      y={Y(top)}
                      height={Math.max(0, Y(base) - Y(top))}
                      fill={color(k)}
                      data-phase={g.key}
                    >
                      <title>{`${s.series}, ${xLabel}=${fmt(s.x)}: ${g.label} ${yFormat(g.value)}`}</title>
                    </rect>
                  );
                  base = top;
                  return rect;
                })}
              </g>
            );
          })}
        </svg>
      </div>
      <figcaption className="legend" aria-label="Legend">
        {segments.map((g, k) => (
          <span key={g.key} data-legend={g.label}>
            <i style={{ background: color(k) }} />
            {g.label}
          </span>
        ))}
        {names.length > 1 && (
          <span className="muted">Bars in each group, left to right: {names.join(", ")}</span>
        )}
      </figcaption>
    </figure>
  );
}
