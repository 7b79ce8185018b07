import { cleanup, render, screen } from "@testing-library/react";
import { afterEach, describe, expect, it } from "vitest";
import { LineChart } from "../../components/charts/LineChart.jsx";
import { intervalSummary } from "../runs/interval.js";
import {
  phaseStacks,
  specIntervals,
  sweepSeries,
  unmeasuredIntervals,
  xCategories,
} from "./sweeps.js";

afterEach(cleanup);

// Rows of a plan sweep (POST /api/workloads/sweep/ launched) swept over the cluster template:
// a text axis. Each ran one step with a prediction interval of its time and cost.
const row = (simulation, system, gpu, time, low, high, price) => ({
  simulation,
  status: "succeeded",
  gpu,
  system,
  tp: 8,
  overall_time_s: time,
  overall_time_s_low: low,
  overall_time_s_high: high,
  cost_per_step_usd: time * price,
  cost_per_step_usd_low: low * price,
  cost_per_step_usd_high: high * price,
});

const POINTS = [
  row(1, "dgx-h200", "H200 SXM 141GB", 9, 8, 10, 0.03),
  row(2, "dgx-h100", "H100 SXM5 80GB", 11, 10, 12, 0.02),
  { ...row(3, "dgx-b200", "B200 SXM 180GB", 5, 5, 5, 0.05), status: "failed" },
  row(4, "dgx-b200", "B200 SXM 180GB", 5, 4, 7, 0.05),
];

describe("a sweep against a text axis", () => {
  it("places each value of the axis in the order the finished points give them", () => {
    expect(xCategories(POINTS, "system")).toEqual(["dgx-h200", "dgx-h100", "dgx-b200"]);
    expect(xCategories(POINTS, "tp")).toBeNull(); // a number axis stays numeric
    const series = sweepSeries(POINTS, "overall_time_s", "system", ["system"]);
    expect(series).toEqual([
      { name: "H200 SXM 141GB", points: [[0, 9, 8, 10]] },
      { name: "H100 SXM5 80GB", points: [[1, 11, 10, 12]] },
      { name: "B200 SXM 180GB", points: [[2, 5, 4, 7]] },
    ]);
  });

  it("stacks the phases per value of the text axis, in the same order", () => {
    const stacks = phaseStacks(POINTS, "system", ["system"]);
    expect(stacks.map((s) => s.x)).toEqual(["dgx-h200", "dgx-h100", "dgx-b200"]);
  });

  it("carries the cost's interval as it carries the time's", () => {
    const series = sweepSeries(POINTS, "cost_per_step_usd", "system", ["system"]);
    const [h200] = series;
    expect(h200.points[0].slice(2)).toEqual([8 * 0.03, 10 * 0.03]);
  });

  it("charts the points at their labelled values with error bars, not 'No finished points'", () => {
    const categories = xCategories(POINTS, "system");
    render(
      <LineChart
        series={sweepSeries(POINTS, "overall_time_s", "system", ["system"])}
        xLabel="system"
        yLabel="overall time"
        xCategories={categories}
      />,
    );
    expect(screen.queryByText("No finished points yet.")).toBeNull();
    const figure = screen.getByRole("figure");
    expect(figure.getAttribute("data-x-scale")).toBe("categorical");
    const dots = [...figure.querySelectorAll("circle[data-category]")];
    expect(dots.map((d) => d.getAttribute("data-category"))).toEqual(categories);
    // evenly spaced, in the list's order
    const xs = dots.map((d) => Number(d.getAttribute("cx")));
    expect(xs[0]).toBeLessThan(xs[1]);
    expect(xs[1]).toBeLessThan(xs[2]);
    const bars = [...figure.querySelectorAll("line[data-error-bar]")];
    expect(bars.map((b) => b.getAttribute("data-error-bar"))).toEqual([
      "H200 SXM 141GB: dgx-h200",
      "H100 SXM5 80GB: dgx-h100",
      "B200 SXM 180GB: dgx-b200",
    ]);
    // the bar spans the interval: a longer interval, a longer bar
    const length = (b) => Math.abs(Number(b.getAttribute("y2")) - Number(b.getAttribute("y1")));
    expect(length(bars[2])).toBeGreaterThan(length(bars[0]));
    expect(figure.querySelector("polyline")).toBeNull(); // unrelated values are not joined
    for (const name of categories) expect(screen.getByText(name)).toBeTruthy();
  });
});

const SPEC_LABEL =
  "from spec-mode error on other GPUs (H100 SXM5 80GB, H200 SXM 141GB), not a B200 SXM 180GB measurement";

describe("where a sweep's intervals come from", () => {
  it("names the GPUs whose interval is a spec-mode error, apart from those with none", () => {
    const points = [
      { ...POINTS[3], interval_from_spec: `B200 SXM 180GB: ${SPEC_LABEL}` },
      { ...POINTS[3], simulation: 5, interval_from_spec: `B200 SXM 180GB: ${SPEC_LABEL}` },
      { ...POINTS[0], interval_unmeasured: "GTX 970: no interval: no measurement" },
      { ...POINTS[2], interval_from_spec: "A100 SXM4 80GB: from spec-mode error" }, // failed
    ];
    expect(specIntervals(points)).toEqual([`B200 SXM 180GB: ${SPEC_LABEL}`]);
    expect(unmeasuredIntervals(points)).toEqual(["GTX 970: no interval: no measurement"]);
  });
});

describe("the run page's interval of the cost", () => {
  it("lists the cost's interval from the same samples and the GPUs without a measurement", () => {
    const usd = (v) => `$${v}`;
    const summary = intervalSummary(
      {
        samples: 20,
        seed: 0,
        percentiles: [5, 95],
        overall_time_s: { median: 10, low: 9, high: 12 },
        energy_j: { median: 1, low: 1, high: 1 },
        cost_usd: { median: 2, low: 1.8, high: 2.4 },
        cost_per_unit: { step: { median: 2, low: 1.8, high: 2.4 } },
        perturbed: [],
        from_spec_mode: [{ record: "B200 SXM 180GB", label: SPEC_LABEL }],
        unmeasured: [{ record: "GTX 970", label: "no interval: no measurement" }],
      },
      String,
      String,
      usd,
    );
    expect(summary.lines).toContain("Cost: median $2, 5-95 %: $1.8 to $2.4");
    expect(summary.lines).toContain("Cost per step: median $2, 5-95 %: $1.8 to $2.4");
    expect(summary.lines).toContain(`B200 SXM 180GB: ${SPEC_LABEL}`);
    expect(summary.lines).toContain("GTX 970: no interval: no measurement");
  });
});
