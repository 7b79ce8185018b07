// An x-y chart frame: log or linear axes with ticks and labels; `children(X, Y)` draws in it.
import { niceTicks } from "../../lib/chart.js";
import { fmt } from "../../lib/format.js";
import { logTicks } from "./roofline.js";

// A scale from the domain [d0, d1] onto [r0, r1], logarithmic when `log`.
function scale([d0, d1], [r0, r1], log) {
  const f = log ? Math.log10 : (v) => v;
  const [a, b] = [f(d0), f(d1)];
  return (v) => r0 + ((f(v) - a) / (b - a || 1)) * (r1 - r0);
}

// The ticks of an axis over `domain`: decades on a log axis, round steps on a linear one.
function ticks([d0, d1], log) {
  if (log) return logTicks(d0, d1).filter((t) => t >= d0 * (1 - 1e-9) && t <= d1 * (1 + 1e-9));
  return niceTicks(d1).filter((t) => t >= d0 && t <= d1 * (1 + 1e-9));
}

export function Plot({
  label,
  x,
  y,
  xLabel,
  yLabel,
  xFormat = fmt,
  yFormat = fmt,
  width = 720,
  height = 380,
  children,
}) {
  const m = { l: 90, r: 20, t: 16, b: 50 };
  const X = scale(x.domain, [m.l, width - m.r], x.log);
  const Y = scale(y.domain, [height - m.b, m.t], y.log);
  return (
    <svg width={width} height={height} role="img" aria-label={label}>
      {ticks(y.domain, y.log).map((t) => (
        <g key={`y${t}`}>
          <line x1={m.l} x2={width - m.r} y1={Y(t)} y2={Y(t)} stroke="#e3e7ee" />
          <text x={m.l - 6} y={Y(t) + 4} fontSize="11" textAnchor="end">
            {yFormat(t)}
          </text>
        </g>
      ))}
      {ticks(x.domain, x.log).map((t) => (
        <g key={`x${t}`}>
          <line x1={X(t)} x2={X(t)} y1={m.t} y2={height - m.b} stroke="#eef1f5" />
          <text x={X(t)} y={height - m.b + 16} fontSize="11" textAnchor="middle">
            {xFormat(t)}
          </text>
        </g>
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
      {children(X, Y)}
    </svg>
  );
}
