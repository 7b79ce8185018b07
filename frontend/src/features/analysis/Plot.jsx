// An x-y chart frame: log or linear axes with ticks and labels; `children(X, Y)` draws in it.
import { Axes } from "../../components/charts/Axes.jsx";
import { useChartWidth } from "../../hooks/useChartWidth.js";
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
  width: preferred = 720,
  height = 380,
  children,
}) {
  const [box, width] = useChartWidth(preferred);
  const m = { l: 90, r: 20, t: 16, b: 50 };
  const X = scale(x.domain, [m.l, width - m.r], x.log);
  const Y = scale(y.domain, [height - m.b, m.t], y.log);
  const placed = (values, at, format) => values.map((t) => ({ at: at(t), label: format(t) }));
  return (
    <div ref={box} className="chart-box">
      <svg width={width} height={height} role="img" aria-label={label}>
        <Axes
          width={width}
          height={height}
          margin={m}
          x={{ ticks: placed(ticks(x.domain, x.log), X, xFormat), title: xLabel, grid: true }}
          y={{ ticks: placed(ticks(y.domain, y.log), Y, yFormat), title: yLabel }}
        />
        {children(X, Y)}
      </svg>
    </div>
  );
}
