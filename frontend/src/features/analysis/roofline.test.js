import { describe, expect, it } from "vitest";
import {
  boundLabel,
  ceilingLines,
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

describe("the roofline's further ceilings and memory roofs", () => {
  // H100 SXM5's record: FP32, FP64 and the FP16 tensor ceiling; shared, L2 and HBM roofs
  const H100 = {
    peak_ops_per_s: 3.345e13,
    peak_bytes_per_s: 3.35e12,
    ridge_intensity: 3.345e13 / 3.35e12,
    ceilings: [
      { name: "FP32", ops_per_s: 3.345e13 },
      { name: "FP64", ops_per_s: 1.67e13 },
      { name: "tensor FP16/BF16", ops_per_s: 4.95e14 },
    ],
    memory_roofs: [
      { name: "shared memory / L1", bytes_per_s: 3.35e13 },
      { name: "L2", bytes_per_s: 4.9e12 },
      { name: "DRAM", bytes_per_s: 3.35e12 },
    ],
  };

  it("draws every ceiling but the roof's own, and every memory roof but DRAM's", () => {
    const lines = ceilingLines(H100, 0.01, 1000);
    expect(lines.map((l) => l.name)).toEqual([
      "FP64",
      "tensor FP16/BF16",
      "shared memory / L1",
      "L2",
    ]);
    const tensor = lines.find((l) => l.name === "tensor FP16/BF16");
    expect(tensor.points[1]).toEqual([1000, 4.95e14]);
    expect(tensor.points[0][0]).toBeCloseTo(4.95e14 / 3.35e13);
    const l2 = lines.find((l) => l.name === "L2");
    expect(l2.points[1][1]).toBeCloseTo(4.95e14);
  });

  it("puts the highest ceiling inside the chart", () => {
    const { y } = rooflineDomain(H100, []);
    expect(y[1]).toBeGreaterThanOrEqual(4.95e14);
  });

  it("draws nothing more for a roof without ceilings (an older result)", () => {
    expect(ceilingLines(GTX970, 0.1, 100)).toEqual([]);
  });
});
