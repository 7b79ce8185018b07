// The sweep's trade-off chart: any metric against any other, one mark per succeeded point,
// the Pareto front (the server's `pareto` flags, simulator.pareto's rule) filled and joined
// by a line, the other feasible points hollow, and the points a constraint rules out drawn
// as grey crosses. A point with a prediction interval of a plotted figure (the run asked for
// one: simulator.uncertainty) carries an error bar over its 5-95 % range; a zero-width one
// (no measurement for its GPU) draws none. Clicking a mark opens its run.
import { useChartWidth } from "../../hooks/useChartWidth.js";
import { fmt } from "../../lib/format.js";
import { navigate } from "../../lib/router.jsx";
import { axis } from "../../lib/scales.js";
import { Axes } from "../../components/charts/Axes.jsx";
import { intervalOf, tradeoffPoints } from "./sweeps.js";

const FRONT = "#c2410c";
const FEASIBLE = "#2563eb";
const INFEASIBLE = "#9ca3af";

export function TradeoffChart({
  points,
  x,
  y,
  xLabel = x,
  yLabel = y,
  xFormat = fmt,
  yFormat = fmt,
  xScale = "linear",
  yScale = "linear",
  width: preferred = 1100,
  height = 380,
}) {
  const [box, width] = useChartWidth(preferred);
  const split = tradeoffPoints(points, x, y);
  const keep = (item) => (xScale !== "log" || item.x > 0) && (yScale !== "log" || item.y > 0);
  const front = split.front.filter(keep);
  const feasible = split.feasible.filter(keep);
  const infeasible = split.infeasible.filter(keep);
  const all = [...front, ...feasible, ...infeasible];
  if (!all.length) return <p className="muted">No finished point has both figures yet.</p>;
  const bars = all
    .map((p) => ({ p, xs: intervalOf(p.point, x), ys: intervalOf(p.point, y) }))
    .filter(({ xs, ys }) => (xs && xs[1] > xs[0]) || (ys && ys[1] > ys[0]));
  const xAxis = axis(
    [...all.map((p) => p.x), ...bars.flatMap((b) => b.xs || [])].filter(
      (v) => xScale !== "log" || v > 0,
    ),
    xScale,
    { fromZero: true },
  );
  const yAxis = axis(
    [...all.map((p) => p.y), ...bars.flatMap((b) => b.ys || [])].filter(
      (v) => yScale !== "log" || v > 0,
    ),
    yScale,
    { fromZero: true },
  );
  const m = { l: 80, r: 40, t: 20, b: 50 };
  const X = (v) => m.l + xAxis.at(v) * (width - m.l - m.r);
  const Y = (v) => height - m.b - yAxis.at(v) * (height - m.t - m.b);
  const title = (item, kind) =>
    `#${item.point.simulation} (${kind}): ${xLabel} ${xFormat(item.x)}, ${yLabel} ${yFormat(item.y)}`;
  const open = (item) => navigate(`/app/runs/${item.point.simulation}`);
  return (
    <figure className="chart" aria-label={`${yLabel} against ${xLabel}, Pareto front`}>
      <div ref={box} className="chart-box">
        <svg
          width={width}
          height={height}
          role="img"
          aria-label={`${yLabel} against ${xLabel}: ${front.length} on the Pareto front, ${feasible.length} other feasible, ${infeasible.length} infeasible`}
        >
          <Axes
            width={width}
            height={height}
            margin={m}
            x={{
              ticks: xAxis.ticks.map((t) => ({ at: X(t), label: xFormat(t) })),
              title: `${xLabel}${xScale === "log" ? " (log)" : ""}`,
              grid: true,
            }}
            y={{
              ticks: yAxis.ticks.map((t) => ({ at: Y(t), label: yFormat(t) })),
              title: `${yLabel}${yScale === "log" ? " (log)" : ""}`,
            }}
          />
          {front.length > 1 && (
            <polyline
              className="pareto-line"
              fill="none"
              stroke={FRONT}
              strokeWidth="1.5"
              strokeDasharray="4 3"
              points={front.map((p) => `${X(p.x)},${Y(p.y)}`).join(" ")}
            />
          )}
          {bars.map(({ p, xs, ys }) => (
            <g
              key={`bar-${p.point.simulation}`}
              className="error-bar"
              data-simulation={p.point.simulation}
              stroke={INFEASIBLE}
              strokeWidth="1"
            >
              {xs && xs[1] > xs[0] && (
                <path
                  d={`M${X(xs[0])},${Y(p.y) - 3}v6M${X(xs[0])},${Y(p.y)}H${X(xs[1])}M${X(xs[1])},${Y(p.y) - 3}v6`}
                />
              )}
              {ys && ys[1] > ys[0] && (
                <path
                  d={`M${X(p.x) - 3},${Y(ys[0])}h6M${X(p.x)},${Y(ys[0])}V${Y(ys[1])}M${X(p.x) - 3},${Y(ys[1])}h6`}
                />
              )}
            </g>
          ))}
          {infeasible.map((p) => (
            <g
              key={p.point.simulation}
              data-kind="infeasible"
              className="tradeoff-point"
              onClick={() => open(p)}
            >
              <path
                d={`M${X(p.x) - 4},${Y(p.y) - 4}l8,8m0,-8l-8,8`}
                stroke={INFEASIBLE}
                strokeWidth="2"
              />
              <title>{title(p, "infeasible")}</title>
            </g>
          ))}
          {feasible.map((p) => (
            <circle
              key={p.point.simulation}
              data-kind="feasible"
              className="tradeoff-point"
              cx={X(p.x)}
              cy={Y(p.y)}
              r="4"
              fill="white"
              stroke={FEASIBLE}
              strokeWidth="1.5"
              onClick={() => open(p)}
            >
              <title>{title(p, "feasible")}</title>
            </circle>
          ))}
          {front.map((p) => (
            <circle
              key={p.point.simulation}
              data-kind="front"
              className="tradeoff-point"
              cx={X(p.x)}
              cy={Y(p.y)}
              r="5"
              fill={FRONT}
              onClick={() => open(p)}
            >
              <title>{title(p, "Pareto front")}</title>
            </circle>
          ))}
        </svg>
      </div>
      <figcaption className="legend" aria-label="Legend">
        <span>
          <i style={{ background: FRONT }} />
          Pareto front ({front.length})
        </span>
        <span>
          <i style={{ background: FEASIBLE }} />
          other feasible ({feasible.length})
        </span>
        <span>
          <i style={{ background: INFEASIBLE }} />
          infeasible ({infeasible.length})
        </span>
      </figcaption>
    </figure>
  );
}
