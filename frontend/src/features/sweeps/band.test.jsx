import { cleanup, render } from "@testing-library/react";
import { afterEach, describe, expect, it } from "vitest";
import { bandPoints, LineChart } from "../../components/charts/LineChart.jsx";
import { metricOptions, sweepSeries } from "./sweeps.js";

afterEach(cleanup);

// Rows of GET /api/sweeps/{id}/ whose runs asked for a prediction interval (docs/uncertainty.md)
const row = (gpu, n, time, low, high) => ({
  simulation: n,
  status: "succeeded",
  gpu,
  n,
  overall_time_s: time,
  overall_time_s_low: low,
  overall_time_s_high: high,
  energy_j: 2 * time,
});

const POINTS = [
  row("H100 SXM5 80GB", 1, 10, 9, 12),
  row("H100 SXM5 80GB", 2, 20, 18, 45),
  { ...row("H200 SXM 141GB", 1, 8, 0, 0), overall_time_s_low: null, overall_time_s_high: null },
  row("H200 SXM 141GB", 2, 16, 15, 30),
];

describe("sweepSeries with intervals", () => {
  it("carries a point's 5-95 % bounds of the metric, where its run has them", () => {
    const series = sweepSeries(POINTS, "overall_time_s", "n", ["n"]);
    expect(series).toEqual([
      {
        name: "H100 SXM5 80GB",
        points: [
          [1, 10, 9, 12],
          [2, 20, 18, 45],
        ],
      },
      {
        name: "H200 SXM 141GB",
        points: [
          [1, 8],
          [2, 16, 15, 30],
        ],
      },
    ]);
    // a figure without an interval (energy here) plots plain points
    expect(sweepSeries(POINTS, "energy_j", "n", ["n"])[0].points).toEqual([
      [1, 20],
      [2, 40],
    ]);
  });
});

describe("metricOptions with intervals", () => {
  it("names the interval's figures in words, and lists none for points without them", () => {
    const labels = metricOptions(POINTS).map((m) => m.label);
    expect(labels).toContain("overall time, 95th percentile");
    expect(labels).not.toContain("overall_time_s_high");
    expect(metricOptions([{ status: "succeeded", overall_time_s: 1 }]).map((m) => m.value)).toEqual(
      ["overall_time_s"],
    );
  });
});

describe("LineChart's band", () => {
  it("shades each series' interval and leaves a series without one unshaded", () => {
    const series = sweepSeries(POINTS, "overall_time_s", "n", ["n"]);
    render(<LineChart series={series} xLabel="n" yLabel="overall time" />);
    const band = document.querySelector('[data-band="H100 SXM5 80GB"]');
    expect(band).toBeTruthy();
    // low at both x, then high back: four corners
    expect(band.getAttribute("points").split(" ")).toHaveLength(4);
    // the H200's one point with an interval draws no band of a single point
    expect(document.querySelector('[data-band="H200 SXM 141GB"]')).toBeNull();
    // the y axis reaches the bounds (45 here), not only the points (at most
    // 20): the band's top stays inside the plot, below its top margin of 20 px
    const ys = band
      .getAttribute("points")
      .split(" ")
      .map((p) => Number(p.split(",")[1]));
    expect(Math.min(...ys)).toBeGreaterThanOrEqual(20);
    const titles = [...document.querySelectorAll("circle title")].map((t) => t.textContent);
    expect(titles.some((t) => t.includes("5-95 %"))).toBe(true);
  });

  it("draws no band when no point has an interval", () => {
    render(
      <LineChart
        series={[
          {
            name: "a",
            points: [
              [1, 1],
              [2, 2],
            ],
          },
        ]}
        xLabel="x"
        yLabel="y"
      />,
    );
    expect(document.querySelector("[data-band]")).toBeNull();
  });

  it("leaves out of a log axis' band the points whose low bound is not above 0", () => {
    expect(
      bandPoints(
        [
          [1, 2, 0, 3],
          [2, 2, 1, 3],
          [3, 3],
        ],
        "log",
      ),
    ).toEqual([[2, 2, 1, 3]]);
    expect(
      bandPoints([
        [1, 2, 0, 3],
        [3, 3],
      ]),
    ).toEqual([[1, 2, 0, 3]]);
  });
});
