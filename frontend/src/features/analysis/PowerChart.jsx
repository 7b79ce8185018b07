// Each powered component instance's power over the run, as steps.
import { color, niceTicks } from "../../lib/chart.js";
import { fmt, fmtTime } from "../../lib/format.js";
import { Plot } from "./Plot.jsx";
import { stepCorners } from "./roofline.js";

export function PowerChart({ power, overall }) {
  const peak = Math.max(0, ...power.flatMap((s) => s.points.map((p) => p[1])));
  return (
    <figure className="chart" aria-label="Power over time">
      <Plot
        label={`Power over time of ${power.length} component${power.length === 1 ? "" : "s"}`}
        x={{ domain: [0, overall || 1] }}
        y={{ domain: [0, niceTicks(peak).at(-1)] }}
        xLabel="Simulated time"
        yLabel="Power (W)"
        xFormat={fmtTime}
        width={900}
        height={260}
      >
        {(X, Y) =>
          power.map((s, i) => (
            <polyline
              key={`${s.node}-${s.instance}`}
              data-series={`${s.name}[${s.instance}]`}
              fill="none"
              stroke={color(i)}
              strokeWidth="2"
              points={stepCorners(s.points)
                .map(([t, w]) => `${X(t)},${Y(w)}`)
                .join(" ")}
            />
          ))
        }
      </Plot>
      <figcaption className="legend">
        {power.map((s, i) => (
          <span key={`${s.node}-${s.instance}`}>
            <i style={{ background: color(i) }} />
            {s.name}[{s.instance}] (up to {fmt(Math.max(...s.points.map((p) => p[1])))} W)
          </span>
        ))}
      </figcaption>
    </figure>
  );
}
