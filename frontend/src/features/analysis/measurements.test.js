import { describe, expect, it } from "vitest";
import {
  METRICS,
  MATCH_MESSAGES,
  comparePoints,
  gpuColumn,
  kernelCalibration,
  matchColumns,
  matchMeasurements,
  meanAbsError,
  parseCsv,
  xVariable,
} from "./measurements.js";

const HEADER =
  "scenario,rep,n,block_size,grid_size,compute_intensity,active_warps_per_sm,htd_x_s,htd_y_s,kernel_s,dth_s,app_s";
const CSV = [
  HEADER,
  "intensity,0,10000000,256,39063,1,64,5e-3,5e-3,1.0e-3,3e-3,1.5e-2",
  "intensity,1,10000000,256,39063,1,64,5e-3,5e-3,3.0e-3,3e-3,1.5e-2",
  "intensity,0,10000000,256,39063,4,64,5e-3,5e-3,5.0e-3,3e-3,1.5e-2",
  "occupancy,0,10000000,256,39063,1,32,5e-3,5e-3,9.0e-3,3e-3,1.5e-2",
].join("\n");
const kernel = METRICS.find((m) => m.key === "kernel");
const run = (id, a, seconds) => ({
  id,
  variables: { N: 10000000, blockSz: 256, computeIntensity: a, occupancy: 64 },
  result: {
    overall_time_s: 0.012,
    timeline: [
      { kind: "transfer", direction: "HostToDevice", size: 4e7, start_s: 0, end_s: 0.004 },
      { kind: "compute", start_s: 0.004, end_s: 0.004 + seconds },
    ],
  },
});

describe("measurements.csv as the validation kit writes it", () => {
  it("parses the header and numbers", () => {
    const { columns, rows } = parseCsv(CSV);
    expect(columns[0]).toBe("scenario");
    expect(rows).toHaveLength(4);
    expect(rows[0]).toMatchObject({ scenario: "intensity", n: 10000000, kernel_s: 1e-3 });
  });

  it("names what is wrong with a file it cannot read", () => {
    expect(parseCsv("scenario,rep").error).toMatch(/header row and at least one data row/);
    expect(parseCsv(`${HEADER}\nintensity,0`).error).toBe(
      "row 2 has 2 values, the header 12 columns",
    );
  });

  it("matches the application's variables to the kit's columns", () => {
    const { columns } = parseCsv(CSV);
    expect(
      matchColumns(["N", "blockSz", "computeIntensity", "occupancy", "other"], columns),
    ).toEqual({
      N: "n",
      blockSz: "block_size",
      computeIntensity: "compute_intensity",
      occupancy: "active_warps_per_sm",
    });
    expect(matchColumns(["Grid_Size"], columns)).toEqual({ Grid_Size: "grid_size" });
  });
});

describe("measured against predicted", () => {
  const { columns, rows } = parseCsv(CSV);
  const mapping = matchColumns(["N", "blockSz", "computeIntensity", "occupancy"], columns);

  it("averages the repetitions of each run's variables and gives the relative error", () => {
    const points = comparePoints(
      [run(1, 1, 2.5e-3), run(2, 4, 4e-3), run(3, 8, 1)],
      rows,
      mapping,
      kernel,
    );
    expect(points.map((p) => [p.id, p.repetitions])).toEqual([
      [1, 2],
      [2, 1],
    ]);
    expect(points[0].measured).toBeCloseTo(2e-3, 15);
    expect(points[0].error).toBeCloseTo(0.25, 12); // (2.5 - 2) / 2
    expect(points[1].error).toBeCloseTo(-0.2, 12); // (4 - 5) / 5
    expect(meanAbsError(points)).toBeCloseTo(0.225, 12);
    expect(meanAbsError([])).toBeNull();
    expect(xVariable(points, ["N", "computeIntensity"])).toBe("computeIntensity");
    const [first] = kernelCalibration(points);
    expect(first.estimated_s).toBeCloseTo(2.5e-3, 15);
    expect(first.measured_s).toBeCloseTo(2e-3, 15);
  });

  it("keeps only the scenario asked for, and sums the copies the kit times apart", () => {
    const occupancy = { ...run(4, 1, 9e-3) };
    occupancy.variables = { ...occupancy.variables, occupancy: 32 };
    expect(comparePoints([occupancy], rows, mapping, kernel, "intensity")).toEqual([]);
    const htd = METRICS.find((m) => m.key === "htd");
    const [point] = comparePoints([run(1, 1, 1e-3)], rows, mapping, htd, "intensity");
    expect(point.measured).toBeCloseTo(1e-2, 15);
    expect(point.predicted).toBe(0.004);
  });
});

describe("a sweep over several GPUs against one CSV", () => {
  const GPUS = ["GeForce GTX 970", "H100 SXM5 80GB", "B200 SXM 180GB", "A100 SXM4 40GB"];
  const SIZES = [1e5, 1e6, 1e7, 1e8];
  // The kernel time each GPU takes at size N, in seconds: the GTX 970 10x the H100.
  const SPEED = { "GeForce GTX 970": 1e-9, "H100 SXM5 80GB": 1e-10, "B200 SXM 180GB": 5e-11 };
  const gpuRun = (id, gpu, n) => ({
    id,
    gpu,
    hardware: gpu,
    variables: { N: n },
    result: { timeline: [{ kind: "compute", start_s: 0, end_s: n * (SPEED[gpu] ?? 2e-10) }] },
  });
  // A 4-GPU sweep: 16 points, each size on each GPU.
  const runs = GPUS.flatMap((gpu, g) => SIZES.map((n, i) => gpuRun(10 * g + i, gpu, n)));
  // Measured on the H100: 10 % slower than its predictions.
  const h100Rows = SIZES.map((n) => ({ n, kernel_s: 1.1 * n * 1e-10 }));
  const mapping = { N: "n" };

  it("refuses to match before it is told which GPU the CSV was measured on", () => {
    const { points, error } = matchMeasurements(runs, h100Rows, mapping, kernel);
    expect(points).toEqual([]);
    expect(error).toBe(MATCH_MESSAGES.chooseGpu(GPUS));
  });

  it("matches the rows to that GPU's points only", () => {
    const { points, error } = matchMeasurements(runs, h100Rows, mapping, kernel, {
      gpu: "H100 SXM5 80GB",
    });
    expect(error).toBeNull();
    expect(points.map((p) => p.id)).toEqual([10, 11, 12, 13]);
    expect(points.every((p) => p.gpu === "H100 SXM5 80GB")).toBe(true);
    for (const p of points) expect(p.error).toBeCloseTo(1 / 1.1 - 1, 12);
    // Matched by the variables alone, the GTX 970's points took the H100's rows: +809 %.
    const mixed = comparePoints(runs, h100Rows, mapping, kernel);
    expect(mixed).toHaveLength(16);
    expect(Math.max(...mixed.map((p) => p.error))).toBeGreaterThan(8);
  });

  it("matches each row by the GPU column of a CSV that has one", () => {
    const rows = [
      ...h100Rows.map((row) => ({ ...row, gpu: "NVIDIA H100 SXM5 80GB" })),
      ...SIZES.map((n) => ({ n, kernel_s: n * 1e-9, gpu: "GeForce GTX 970" })),
    ];
    expect(gpuColumn(Object.keys(rows[0]))).toBe("gpu");
    const { points, error } = matchMeasurements(runs, rows, mapping, kernel);
    expect(error).toBeNull();
    expect(points.map((p) => [p.id, p.gpu])).toEqual([
      [0, "GeForce GTX 970"],
      [1, "GeForce GTX 970"],
      [2, "GeForce GTX 970"],
      [3, "GeForce GTX 970"],
      [10, "H100 SXM5 80GB"],
      [11, "H100 SXM5 80GB"],
      [12, "H100 SXM5 80GB"],
      [13, "H100 SXM5 80GB"],
    ]);
    expect(points.filter((p) => p.gpu === "GeForce GTX 970").every((p) => p.error === 0)).toBe(
      true,
    );
  });

  it("refuses runs on one GPU that the CSV cannot tell apart, naming what differs", () => {
    const links = ["PCIe 3.0 16x", "NVLink 4"].map((hardware, i) => ({
      ...gpuRun(100 + i, "H100 SXM5 80GB", 1e6),
      hardware,
    }));
    const { points, error } = matchMeasurements(links, h100Rows, mapping, kernel);
    expect(points).toEqual([]);
    expect(error).toBe(
      MATCH_MESSAGES.ambiguous([100, 101], "N = 1000000", "hardware (PCIe 3.0 16x, NVLink 4)"),
    );
  });

  it("matches a single GPU's runs without asking", () => {
    const one = runs.filter((r) => r.gpu === "H100 SXM5 80GB");
    const { points, error } = matchMeasurements(one, h100Rows, mapping, kernel);
    expect(error).toBeNull();
    expect(points).toHaveLength(4);
  });
});
