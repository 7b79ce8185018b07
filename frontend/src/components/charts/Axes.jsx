// The axes every x-y chart draws (the roofline, power, sweep and stacked-bar charts): the y
// ticks with their grid lines, the x tick labels kept apart so they never overlap, and the
// axes' names. Charts place their ticks; this draws them the same way everywhere.
import { spacedTicks } from "../../lib/scales.js";

// `margin` {l, r, t, b} is the plot's inset in the `width` x `height` svg; `x` and `y` are
// {ticks: [{at, label}] (`at` in pixels), title, grid (draw lines across; y: always)}.
export function Axes({ width, height, margin: m, x, y }) {
  const xTicks = spacedTicks(x.ticks);
  return (
    <g className="axes">
      {y.ticks.map((t) => (
        <g key={`y${t.at}`} className="y-tick">
          <line x1={m.l} x2={width - m.r} y1={t.at} y2={t.at} stroke="#e3e7ee" />
          <text x={m.l - 6} y={t.at + 4} fontSize="11" textAnchor="end">
            {t.label}
          </text>
        </g>
      ))}
      {x.grid &&
        x.ticks.map((t) => (
          <line key={`xg${t.at}`} x1={t.at} x2={t.at} y1={m.t} y2={height - m.b} stroke="#eef1f5" />
        ))}
      {xTicks.map((t) => (
        <text
          key={`x${t.at}`}
          className="x-tick"
          x={t.at}
          y={height - m.b + 16}
          fontSize="11"
          textAnchor="middle"
        >
          {t.label}
        </text>
      ))}
      <text x={(width + m.l) / 2} y={height - 10} fontSize="12" textAnchor="middle">
        {x.title}
      </text>
      <text
        x={14}
        y={height / 2}
        fontSize="12"
        textAnchor="middle"
        transform={`rotate(-90 14 ${height / 2})`}
      >
        {y.title}
      </text>
    </g>
  );
}
