import { cleanup, render } from "@testing-library/react";
import { afterEach, describe, expect, it } from "vitest";
import { TradeoffChart } from "./TradeoffChart.jsx";
import { fmtCost, parseConstraints, sweepAxes, tradeoffOptions, tradeoffQuery } from "./sweeps.js";

afterEach(cleanup);

// Points as GET /api/sweeps/{id}/ returns them, flagged by the server.
const row = (simulation, time, cost, flags, extra = {}) => ({
  simulation,
  status: "succeeded",
  overall_time_s: time,
  cost_usd: cost,
  energy_j: 1,
  "labels.GPU": simulation,
  ...flags,
  ...extra,
});
const POINTS = [
  row(1, 10, 1, { feasible: true, pareto: true }),
  row(2, 5, 2, { feasible: true, pareto: true }),
  row(3, 8, 3, { feasible: true, pareto: false }),
  row(4, 1, 9, { feasible: false, pareto: false }),
  { simulation: 5, status: "failed", overall_time_s: null, feasible: false, pareto: false },
];

const kinds = () =>
  [...document.querySelectorAll("[data-kind]")].map((el) => el.getAttribute("data-kind"));

describe("TradeoffChart", () => {
  it("draws a point's time interval as an error bar, none for a zero-width one", () => {
    const points = [
      row(
        1,
        10,
        1,
        { feasible: true, pareto: true },
        { overall_time_s_low: 8, overall_time_s_high: 13 },
      ),
      // a B200's interval: no measurement, no width
      row(
        2,
        5,
        2,
        { feasible: true, pareto: true },
        { overall_time_s_low: 5, overall_time_s_high: 5 },
      ),
      row(3, 8, 3, { feasible: true, pareto: false }),
    ];
    render(<TradeoffChart points={points} x="overall_time_s" y="cost_usd" width={600} />);
    const bars = [...document.querySelectorAll(".error-bar")];
    expect(bars.map((b) => b.getAttribute("data-simulation"))).toEqual(["1"]);
    // the bar spans low to high: its horizontal stroke runs from x(8) to x(13), the point's
    // x(10) between them
    const d = bars[0].querySelector("path").getAttribute("d");
    const [, from, to] = d.match(/M([\d.]+),[\d.]+v6M[\d.]+,[\d.]+H([\d.]+)/);
    const front = [...document.querySelectorAll('[data-kind="front"]')].map((c) =>
      Number(c.getAttribute("cx")),
    );
    expect(Number(from)).toBeLessThan(Math.max(...front));
    expect(Number(to)).toBeGreaterThan(Math.max(...front));
  });

  it("marks the server's front, the other feasible points and the infeasible ones", () => {
    render(<TradeoffChart points={POINTS} x="overall_time_s" y="cost_usd" yFormat={fmtCost} />);
    expect(kinds().sort()).toEqual(["feasible", "front", "front", "infeasible"]);
    const svg = document.querySelector("svg");
    expect(svg.getAttribute("aria-label")).toBe(
      "cost_usd against overall_time_s: 2 on the Pareto front, 1 other feasible, 1 infeasible",
    );
    // the front's line runs through its points in x order: (5, 2) then (10, 1)
    const line = document.querySelector(".pareto-line").getAttribute("points").split(" ");
    const xs = line.map((p) => Number(p.split(",")[0]));
    expect(xs[0]).toBeLessThan(xs[1]);
    expect(document.querySelector("[data-kind=infeasible] title").textContent).toBe(
      "#4 (infeasible): overall_time_s 1, cost_usd $9",
    );
  });

  it("plots an axis against a metric and says when nothing has both", () => {
    render(<TradeoffChart points={POINTS} x="labels.GPU" y="overall_time_s" />);
    expect(kinds()).toHaveLength(4);
    cleanup();
    render(<TradeoffChart points={POINTS} x="labels.GPU" y="power_w" />);
    expect(document.body.textContent).toContain("No finished point has both figures yet.");
  });

  it("leaves points at or below zero off a log axis", () => {
    const points = [...POINTS, row(6, 0, 1, { feasible: true, pareto: true })];
    render(<TradeoffChart points={points} x="overall_time_s" y="cost_usd" xScale="log" />);
    expect(kinds()).toHaveLength(4);
  });
});

describe("trade-off helpers", () => {
  it("lists the sweep's variables, then its other axes", () => {
    expect(
      sweepAxes({ variables: { N: [1] }, axes: { "GPU.SMCoreClock": [1], "labels.GPU": [1] } }),
    ).toEqual(["N", "GPU.SMCoreClock", "labels.GPU"]);
  });

  it("offers metrics and numeric axes, never the stack or the flags", () => {
    const values = tradeoffOptions(POINTS, ["labels.GPU"]).map((o) => o.value);
    expect(values).toEqual(["overall_time_s", "energy_j", "cost_usd", "labels.GPU"]);
  });

  it("builds the query the server flags the points by", () => {
    expect(
      tradeoffQuery({ x: "overall_time_s", y: "cost_usd", constraints: ["gpu_power_w <= 700"] }),
    ).toBe("?x=overall_time_s&y=cost_usd&constraint=gpu_power_w+%3C%3D+700");
    expect(tradeoffQuery({})).toBe("");
  });

  it("checks constraints before asking, naming the line", () => {
    const known = ["gpu_power_w", "overall_time_s"];
    expect(parseConstraints("gpu_power_w <= 700\noverall_time_s < 7200", known)).toEqual({
      constraints: ["gpu_power_w <= 700", "overall_time_s < 7200"],
      problem: null,
    });
    expect(parseConstraints("gpu_power_w <= 700; speed > 3", known).problem).toEqual({
      line: 2,
      message: 'Unknown metric "speed".',
    });
    expect(parseConstraints("power about 700", known).problem.line).toBe(1);
    expect(parseConstraints("gpu_power_w <= lots", known).problem.message).toBe(
      "Expected a number after <=.",
    );
  });
});
