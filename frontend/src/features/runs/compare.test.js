import { describe, expect, it } from "vitest";
import {
  commonEnd,
  differenceRows,
  energyMismatch,
  hardwareRows,
  includesRows,
  percentChange,
  runNodes,
} from "./compare.js";

const result = (scale, { gpuEnergy = 2 } = {}) => ({
  overall_time_s: 2 * scale,
  energy_j: { total: 10 * scale, per_component: { gpu0: gpuEnergy * scale, cpu0: 8 * scale } },
  components: [
    { node: "gpu0", name: "GPU", instance: 0 },
    { node: "cpu0", name: "CPU", instance: 0 },
  ],
  processes: [
    { compute_s: 1 * scale, comm_s: 0.5 * scale, wait_s: 0.25, memory_s: 0 },
    { compute_s: 1 * scale, comm_s: 0.5 * scale, wait_s: 0.25, memory_s: 0 },
  ],
  timeline: [{ process: "P[0]", kind: "compute", start_s: 0, end_s: 2 * scale }],
});

describe("percentChange", () => {
  it("writes the change against the base with its sign", () => {
    expect(percentChange(2, 3)).toBe("+50.0%");
    expect(percentChange(2, 1)).toBe("-50.0%");
    expect(percentChange(2, 2)).toBe("0.0%");
    expect(percentChange(3, 3.0000001)).toBe("0.0%");
  });
  it("gives no percentage without a value or against zero", () => {
    expect(percentChange(null, 3)).toBe("");
    expect(percentChange(2, null)).toBe("");
    expect(percentChange(0, 1)).toBe("");
    expect(percentChange(0, 0)).toBe("0.0%");
  });
});

describe("differenceRows", () => {
  it("compares kernel, transfer, wait and energy per component against the first run", () => {
    const rows = differenceRows([result(1), result(2), result(0.5)]);
    const by = Object.fromEntries(rows.map((r) => [r.label, r]));
    expect(by["Kernel time (compute, all processes)"].changes).toEqual(["", "+100.0%", "-50.0%"]);
    expect(by["Transfer time (all processes)"].values).toEqual([
      "1.000 s",
      "2.000 s",
      "500.000 ms",
    ]);
    expect(by["Wait time (all processes)"].changes).toEqual(["", "0.0%", "0.0%"]);
    expect(by["Energy, GPU"].changes).toEqual(["", "+100.0%", "-50.0%"]);
    expect(by["Energy, CPU"]).toBeDefined();
    expect(by["Energy, total"].changes[1]).toBe("+100.0%");
  });
  it("shows a dash for a run without a result and no percentage against it", () => {
    const rows = differenceRows([result(1), null]);
    expect(rows[0].values[1]).toBe("—");
    expect(rows[0].changes[1]).toBe("");
  });
});

describe("energy and hardware by node across a sweep's runs", () => {
  // Two points of a sweep that swapped the GPU of node gpu0, named after its hardware.
  const point = (gpu, gpuEnergy) => ({
    overall_time_s: 1,
    energy_j: { total: gpuEnergy + 8, per_component: { gpu0: gpuEnergy, cpu0: 8 } },
    components: [
      { node: "gpu0", name: gpu, hardware: gpu, instance: 0 },
      { node: "cpu0", name: "Host", hardware: "Intel Core i7-4790K", instance: 0 },
    ],
    processes: [],
  });
  const results = [point("GeForce GTX 970", 0.127618), point("B200 SXM 180GB", 0.02)];

  it("labels each energy row by its node and names each cell's hardware", () => {
    const rows = differenceRows(results);
    const gpu = rows.find((r) => r.label === "Energy, node gpu0");
    expect(gpu.values).toEqual(["127.618 mJ", "20.000 mJ"]);
    expect(gpu.hardware).toEqual(["GeForce GTX 970", "B200 SXM 180GB"]);
    const host = rows.find((r) => r.label === "Energy, Host");
    expect(host.hardware).toEqual(["Intel Core i7-4790K", "Intel Core i7-4790K"]);
    expect(rows.some((r) => /B200|GTX/.test(r.label))).toBe(false);
  });

  it("has a hardware row per node, from the snapshot of a run without a result", () => {
    const snapshot = {
      nodes: [
        { id: "host", name: "Host group", group: true },
        { id: "gpu0", name: "H100 SXM5 80GB", hardware: "hw-1" },
      ],
      hardware: { "hw-1": { name: "H100 SXM5 80GB", type: "GPU" } },
    };
    const rows = hardwareRows([...results.map((r) => runNodes(r)), runNodes(null, snapshot)]);
    expect(rows).toEqual([
      {
        label: "Hardware, node gpu0",
        values: ["GeForce GTX 970", "B200 SXM 180GB", "H100 SXM5 80GB"],
      },
      { label: "Hardware, Host", values: ["Intel Core i7-4790K", "Intel Core i7-4790K", "—"] },
    ]);
  });
});

describe("commonEnd", () => {
  it("is the longest run's end, so every timeline shares one axis", () => {
    expect(commonEnd([result(1), result(3), null])).toBe(6);
    expect(commonEnd([null])).toBe(1);
  });
});

describe("energies of different accountings side by side (issue 45)", () => {
  const counted = (accounting, total) => ({
    overall_time_s: 1,
    energy_j: { total, per_component: { gpu0: total }, ...(accounting ? { accounting } : {}) },
    components: [{ node: "gpu0", name: "GPU", instance: 0 }],
    energy_accounting: accounting
      ? [
          {
            node: "gpu0",
            name: "GPU",
            includes: "active idle 119.6 W x the run's 1 s",
            estimated: [{ attribute: "powerIdle", rule: "estimated: ..." }],
            energy_j: total,
          },
        ]
      : undefined,
    processes: [],
  });
  it("withholds the change and marks the rows, naming each run's accounting", () => {
    const results = [counted("whole_run", 1.38), counted("", 0.83)];
    expect(energyMismatch(results)).not.toBeNull();
    const by = Object.fromEntries(differenceRows(results).map((r) => [r.label, r]));
    expect(by["Energy, total"].changes).toEqual(["", ""]);
    expect(by["Energy, total"].incomparable).toBe(true);
    expect(by["Energy, GPU"].incomparable).toBe(true);
    expect(by["Overall time"].incomparable).toBeUndefined();
    expect(by["Energy accounting"].values[1]).toContain("not recorded");
  });
  it("compares energies of one accounting and says what each includes", () => {
    const results = [counted("whole_run", 1), counted("whole_run", 2)];
    expect(energyMismatch(results)).toBeNull();
    const by = Object.fromEntries(differenceRows(results).map((r) => [r.label, r]));
    expect(by["Energy, total"].changes).toEqual(["", "+100.0%"]);
    const [row] = includesRows(results);
    expect(row.label).toBe("Energy includes, GPU");
    expect(row.values[0]).toBe("active idle 119.6 W x the run's 1 s (estimated: powerIdle)");
  });
});
