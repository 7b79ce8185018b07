import { describe, expect, it } from "vitest";
import {
  boundLabel,
  logTicks,
  rooflineCharts,
  rooflineDomain,
  roofPoints,
  stepCorners,
  stepEnergy,
} from "./roofline.js";

// GTX 970 (000 Fig. 5.2): 13 SMs x 128 cores at 1253 MHz, 13.78 B/cycle/SM.
const GTX970 = {
  node: "gpu0",
  peak_ops_per_s: 2.084992e12,
  peak_bytes_per_s: 2.2446242e11,
  ridge_intensity: 2.084992e12 / 2.2446242e11,
};
const SAXPY2 = { node: "gpu0", intensity: 2.25, ops_per_s: 3.5544e11, bound_class: "memory" };

describe("the roofline chart's geometry", () => {
  it("puts ticks on every decade across the range", () => {
    expect(logTicks(0.2, 300)).toEqual([0.1, 1, 10, 100, 1000]);
    expect(logTicks(0, 10)).toEqual([]);
  });

  it("holds the ridge and the kernels with a decade of room", () => {
    const { x, y } = rooflineDomain(GTX970, [SAXPY2]);
    expect(x).toEqual([0.1, 100]);
    expect(y[0]).toBeLessThanOrEqual(0.1 * GTX970.peak_bytes_per_s);
    expect(y[1]).toBeGreaterThanOrEqual(GTX970.peak_ops_per_s);
  });

  it("draws the memory slope up to the ridge, then the flat compute roof", () => {
    const points = roofPoints(GTX970, 0.1, 1000);
    expect(points).toHaveLength(3);
    expect(points[0]).toEqual([0.1, 0.1 * GTX970.peak_bytes_per_s]);
    expect(points[1]).toEqual([GTX970.ridge_intensity, GTX970.peak_ops_per_s]);
    expect(points[2]).toEqual([1000, GTX970.peak_ops_per_s]);
    expect(roofPoints(GTX970, 100, 1000)).toEqual([
      [100, GTX970.peak_ops_per_s],
      [1000, GTX970.peak_ops_per_s],
    ]);
  });

  it("charts each GPU with the kernels that have a point on it", () => {
    const result = {
      rooflines: [GTX970],
      kernels: [
        SAXPY2,
        { node: "gpu1", intensity: 1, ops_per_s: 1 },
        { node: "gpu0", intensity: null },
      ],
    };
    expect(rooflineCharts(result)).toEqual([{ roof: GTX970, kernels: [SAXPY2] }]);
    expect(rooflineCharts({})).toEqual([]);
  });
});

describe("bounds and power", () => {
  it("names the bound by its class and the model's own word", () => {
    expect(boundLabel({ bound_class: "memory", bound: "global_memory" })).toBe(
      "memory (global memory)",
    );
    expect(boundLabel({ bound_class: "issue", bound: "schedulers" })).toBe("issue (schedulers)");
    expect(boundLabel({ bound_class: "latency", bound: "latency" })).toBe("latency");
    expect(boundLabel({ bound_class: null, bound: null })).toBe("not given by the model");
  });

  it("turns power steps into a staircase whose area is the energy", () => {
    const points = [
      [0, 30],
      [2, 20],
      [4, 10],
    ];
    expect(stepCorners(points)).toEqual([
      [0, 30],
      [2, 30],
      [2, 20],
      [4, 20],
      [4, 10],
    ]);
    expect(stepEnergy(points)).toBe(100);
  });
});
