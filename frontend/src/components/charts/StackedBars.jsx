import { color } from "../../lib/chart.js";
import { fmt } from "../../lib/format.js";
import { axis } from "../../lib/scales.js";

// Stacked bars grouped by x: stacks [{x, series, segments: [{key, label, value}]}], one bar
// per series within each x, its segments piled in order (the same keys in every stack).
export function StackedBars({ stacks, xLabel, yLabel, yFormat = fmt, width = 1100, height = 360 }) {
  if (!stacks.length) return <p className="muted">No finished points yet.</p>;
  const xs = [...new Set(stacks.map((s) => s.x))].sort((a, b) => a - b);
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
      <svg
        width={width}
        height={height}
        role="img"
        aria-label={`${yLabel} per phase against ${xLabel}, ${names.length} bars per value`}
      >
        {yAxis.ticks.map((t) => (
          <g key={t}>
            <line x1={m.l} x2={width - m.r} y1={Y(t)} y2={Y(t)} stroke="#e3e7ee" />
            <text x={m.l - 6} y={Y(t) + 4} fontSize="11" textAnchor="end">
              {yFormat(t)}
            </text>
          </g>
        ))}
        {xs.map((x, i) => (
          <text
            key={x}
            x={m.l + group * (i + 0.5)}
            y={height - m.b + 16}
            fontSize="11"
            textAnchor="middle"
          >
            {fmt(x)}
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
