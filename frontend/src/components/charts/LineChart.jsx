import { color } from "../../lib/chart.js";
import { fmt } from "../../lib/format.js";
import { useChartWidth } from "../../hooks/useChartWidth.js";
import { axis } from "../../lib/scales.js";
import { Axes } from "./Axes.jsx";

// Line chart: series [{name, points: [[x, y], ...]}], one line each; `xScale` and `yScale`
// "linear" (y from 0) or "log" (points at or below 0 must be left out first: keepPlottable).
// A point [x, y, low, high] carries an interval: the series' points that have one are joined
// by a shaded band from low to high (a prediction interval, docs/uncertainty.md).
// Return the points of a sorted series that carry an interval drawable on the y scale.
export function bandPoints(points, yScale = "linear") {
  return points.filter((p) => p.length >= 4 && (yScale !== "log" || p[2] > 0));
}

// `xCategories`: the x axis is categorical (text values): a point's x is its value's index in
// the list, the values evenly spaced and labelled, each series' points side by side at a
// value and not joined (no line or band between unrelated values), an interval drawn as an
// error bar.
function categoryAxis(categories) {
  const n = categories.length;
  return { ticks: categories.map((_, i) => i), at: (v) => (v + 0.5) / n };
}

export function LineChart({
  series,
  xLabel,
  yLabel,
  yFormat = fmt,
  xScale = "linear",
  yScale = "linear",
  xCategories = null,
  width: preferred = 1100,
  height = 360,
}) {
  const [box, width] = useChartWidth(preferred);
  const all = series.flatMap((s) => s.points);
  if (!all.length) return <p className="muted">No finished points yet.</p>;
  const categorical = Array.isArray(xCategories);
  const xAxis = categorical
    ? categoryAxis(xCategories)
    : axis(
        all.map((p) => p[0]),
        xScale,
      );
  const xText = (v) => (categorical ? xCategories[v] : fmt(v));
  const yAxis = axis(
    all
      .flatMap((p) => (p.length >= 4 ? [p[1], p[2], p[3]] : [p[1]]))
      .filter((v) => yScale !== "log" || v > 0),
    yScale,
    { fromZero: true },
  );
  const m = { l: 80, r: 40, t: 20, b: 50 };
  const X = (v) => m.l + xAxis.at(v) * (width - m.l - m.r);
  // side by side at a category: each series shifted by its place among the series
  const spread = categorical
    ? Math.min(12, (width - m.l - m.r) / xCategories.length / (series.length + 1))
    : 0;
  const shift = (i) => (i - (series.length - 1) / 2) * spread;
  const Y = (v) => height - m.b - yAxis.at(v) * (height - m.t - m.b);
  const scaleNote = (kind) => (kind === "log" ? " (log)" : "");
  return (
    <figure
      className="chart"
      aria-label={`${yLabel} against ${xLabel}`}
      data-x-scale={categorical ? "categorical" : xScale}
      data-y-scale={yScale}
    >
      <div ref={box} className="chart-box">
        <svg
          width={width}
          height={height}
          role="img"
          aria-label={`${yLabel}${scaleNote(yScale)} against ${xLabel}${categorical ? "" : scaleNote(xScale)}, ${series.length} ${categorical ? "series" : "lines"}`}
        >
          <Axes
            width={width}
            height={height}
            margin={m}
            x={{
              ticks: xAxis.ticks.map((t) => ({ at: X(t), label: xText(t) })),
              title: `${xLabel}${categorical ? "" : scaleNote(xScale)}`,
            }}
            y={{
              ticks: yAxis.ticks.map((t) => ({ at: Y(t), label: yFormat(t) })),
              title: `${yLabel}${scaleNote(yScale)}`,
            }}
          />
          {series.map((s, i) => {
            const pts = [...s.points].sort((a, b) => a[0] - b[0]);
            const band = bandPoints(pts, yScale);
            if (categorical)
              return (
                <g key={s.name} className="series" data-series={s.name}>
                  {band.map((p) => (
                    <line
                      key={`bar-${p[0]}`}
                      data-error-bar={`${s.name}: ${xText(p[0])}`}
                      x1={X(p[0]) + shift(i)}
                      x2={X(p[0]) + shift(i)}
                      y1={Y(p[2])}
                      y2={Y(p[3])}
                      stroke={color(i)}
                      strokeWidth="2"
                    />
                  ))}
                  {pts.map((p) => (
                    <circle
                      key={p[0]}
                      cx={X(p[0]) + shift(i)}
                      cy={Y(p[1])}
                      r="4.5"
                      fill={color(i)}
                      data-category={xText(p[0])}
                    >
                      <title>
                        {`${s.name}: ${xLabel}=${xText(p[0])}, ${yFormat(p[1])}` +
                          (p.length >= 4 ? ` (5-95 %: ${yFormat(p[2])} to ${yFormat(p[3])})` : "")}
                      </title>
                    </circle>
                  ))}
                </g>
              );
            return (
              <g key={s.name} className="series" data-series={s.name}>
                {band.length > 1 && (
                  <polygon
                    data-band={s.name}
                    fill={color(i)}
                    fillOpacity="0.18"
                    stroke="none"
                    points={[
                      ...band.map((p) => `${X(p[0])},${Y(p[2])}`),
                      ...[...band].reverse().map((p) => `${X(p[0])},${Y(p[3])}`),
                    ].join(" ")}
                  />
                )}
                <polyline
                  fill="none"
                  stroke={color(i)}
                  strokeWidth="2"
                  points={pts.map((p) => `${X(p[0])},${Y(p[1])}`).join(" ")}
                />
                {pts.map((p) => (
                  <circle key={p[0]} cx={X(p[0])} cy={Y(p[1])} r="3.5" fill={color(i)}>
                    <title>
                      {`${s.name}: ${xLabel}=${fmt(p[0])}, ${yFormat(p[1])}` +
                        (p.length >= 4 ? ` (5-95 %: ${yFormat(p[2])} to ${yFormat(p[3])})` : "")}
                    </title>
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
