import { describe, expect, it } from "vitest";
import {
  PHASES_METRIC,
  SWEEP_PAGE_POINTS,
  sampledCaption,
  sweepDetailQuery,
  metricOptions,
  modelWarning,
  phaseStacks,
  powerWarning,
  seriesName,
  swappedModels,
  sweepOutcome,
  sweepSeries,
  varyingAxes,
  unmeasuredIntervals,
} from "./sweeps.js";

const point = (gpu, a, extra = {}) => ({
  simulation: Math.random(),
  status: "succeeded",
  hardware: gpu,
  gpu,
  a,
  n: 5,
  overall_time_s: a * 2,
  kernel_s: a,
  cpu_compute_s: 0,
  transfer_s: 1,
  wait_s: 0.5,
  memory_s: 0,
  energy_j: 10,
  "energy_j.gpu0": 8,
  "busy_s.gpu0": a,
  power_missing: "",
  error: "",
  ...extra,
});

describe("metricOptions", () => {
  it("offers kernel, transfer, energy, per-phase, per-node and any other numeric field", () => {
    const points = [point("H100", 1, { custom_ratio: 0.5 })];
    const values = metricOptions(points, ["a", "n"], { gpu0: "GPU" }).map((o) => o.value);
    expect(values).toEqual([
      "overall_time_s",
      "kernel_s",
      "transfer_s",
      "wait_s",
      "cpu_compute_s",
      "memory_s",
      "energy_j",
      PHASES_METRIC,
      "energy_j.gpu0",
      "busy_s.gpu0",
      "custom_ratio",
    ]);
    const labels = metricOptions(points, ["a", "n"], { gpu0: "GPU" }).map((o) => o.label);
    expect(labels).toContain("energy of GPU (gpu0)");
  });
  it("leaves out a metric no point has a number for", () => {
    const points = [point("H100", 1, { kernel_s: null })];
    expect(metricOptions(points, ["a"]).map((o) => o.value)).not.toContain("kernel_s");
  });
});

describe("series", () => {
  const points = [
    point("GeForce GTX 970", 1),
    point("GeForce GTX 970", 2),
    point("H100 SXM5 80GB", 1),
    point("H100 SXM5 80GB", 2, { status: "failed", kernel_s: null }),
  ];
  it("draws one line per GPU actually used, succeeded points only", () => {
    expect(sweepSeries(points, "kernel_s", "a", ["a"])).toEqual([
      {
        name: "GeForce GTX 970",
        points: [
          [1, 1],
          [2, 2],
        ],
      },
      { name: "H100 SXM5 80GB", points: [[1, 1]] },
    ]);
  });
  it("names a line by the GPU, then the other varying variables", () => {
    expect(seriesName({ gpu: "H100", hardware: "x", a: 1, b: 2 }, "a", ["a", "b"])).toBe(
      "H100 · b=2",
    );
    expect(seriesName({ gpu: "", hardware: "" }, "a", ["a"])).toBe("system's hardware");
  });
  it("finds the variables that vary", () => {
    expect(varyingAxes(points, ["a", "n"])).toEqual(["a"]);
  });
  it("stacks each point's phases in order", () => {
    const stacks = phaseStacks(points, "a", ["a"]);
    expect(stacks.map((s) => [s.x, s.series])).toEqual([
      [1, "GeForce GTX 970"],
      [1, "H100 SXM5 80GB"],
      [2, "GeForce GTX 970"],
    ]);
    expect(stacks[0].segments.map((s) => [s.key, s.value])).toEqual([
      ["kernel_s", 1],
      ["cpu_compute_s", 0],
      ["transfer_s", 1],
      ["memory_s", 0],
      ["wait_s", 0.5],
    ]);
  });
});

describe("powerWarning", () => {
  it("is null when every point had its power attributes", () => {
    expect(powerWarning([point("H100", 1)])).toBeNull();
  });
  it("counts the points whose energy lacked power attributes and names each node once", () => {
    const missing = "Link (bus0): powerIdle, powerConsumptionLoad; GTX 970 (gpu0): powerIdle";
    const warning = powerWarning([
      point("GTX 970", 1, { power_missing: missing }),
      point("GTX 970", 2, { power_missing: missing }),
      point("H100", 1, { power_missing: "Link (bus0): powerIdle, powerConsumptionLoad" }),
      point("H100", 2),
    ]);
    expect(warning).toEqual({
      points: 3,
      of: 4,
      lines: ["Link (bus0): powerIdle, powerConsumptionLoad", "GTX 970 (gpu0): powerIdle"],
    });
  });
});

describe("modelWarning and swappedModels", () => {
  const outside = "Volkov GPU on B200 (gpu0, Blackwell): validated on Maxwell and Pascal";
  const points = [
    point("GTX 970", 1, { model: "Volkov GPU", model_swapped: false, model_warnings: "" }),
    point("H100", 1, { model: "GPU kernel (current architectures)", model_swapped: true }),
    point("B200", 1, { model: "Volkov GPU", model_swapped: false, model_warnings: outside }),
    point("B200", 2, { model: "Volkov GPU", model_swapped: false, model_warnings: outside }),
  ];
  it("counts the points whose model ran outside its validated architectures", () => {
    expect(modelWarning(points)).toEqual({ points: 2, of: 4, lines: [outside] });
    expect(modelWarning(points.slice(0, 2))).toBeNull();
  });
  it("names each GPU that ran its recommended model instead of the system's, once", () => {
    expect(swappedModels([...points, points[1]])).toEqual([
      "H100: GPU kernel (current architectures)",
    ]);
  });
  it("plots neither the model nor its warnings", () => {
    const values = metricOptions(points, ["a", "n"]).map((o) => o.value);
    expect(values.some((v) => v.startsWith("model"))).toBe(false);
  });
});

describe("sweepOutcome", () => {
  const failedPoint = (simulation, error) => ({ simulation, status: "failed", error });
  const finished = (aggregate) => ({ status: "finished", aggregate });

  it("says plainly that every point failed, with each error once", () => {
    const message =
      "hardware attributes 'CUDACores', 'schedulers' are required by the Volkov GPU model";
    const outcome = sweepOutcome(
      finished({ total: 1, done: 1, succeeded: 0, failed: 1, cancelled: 0 }),
      [failedPoint(7, message)],
    );
    expect(outcome.summary).toBe("The only point failed.");
    expect(outcome.summary).not.toMatch(/done/);
    expect(outcome.noneSucceeded).toBe(true);
    expect(outcome.errors).toEqual([{ message, points: [7] }]);
  });

  it("groups the failed points by their message, most frequent first", () => {
    const outcome = sweepOutcome(
      finished({ total: 3, done: 3, succeeded: 0, failed: 3, cancelled: 0 }),
      [failedPoint(1, "b"), failedPoint(2, "a"), failedPoint(3, "a")],
    );
    expect(outcome.summary).toBe("All 3 points failed.");
    expect(outcome.errors).toEqual([
      { message: "a", points: [2, 3] },
      { message: "b", points: [1] },
    ]);
  });

  it("counts the outcomes of a sweep with succeeded points, and of one still running", () => {
    const mixed = finished({ total: 4, done: 4, succeeded: 3, failed: 1, cancelled: 0 });
    expect(sweepOutcome(mixed, [failedPoint(1, "x")])).toMatchObject({
      summary: "4 of 4 points done: 3 succeeded, 1 failed.",
      noneSucceeded: false,
    });
    const running = {
      status: "running",
      aggregate: { total: 4, done: 1, succeeded: 0, failed: 1 },
    };
    expect(sweepOutcome(running, [])).toMatchObject({
      summary: "1 of 4 points done: 1 failed.",
      noneSucceeded: false,
    });
    const cancelled = finished({ total: 2, done: 2, succeeded: 0, failed: 1, cancelled: 1 });
    expect(sweepOutcome(cancelled, []).summary).toBe("No point succeeded: 1 failed, 1 cancelled.");
  });
});

describe("sweepDetailQuery", () => {
  it("asks for a sample beside the trade-off's query", () => {
    expect(sweepDetailQuery("")).toBe(`?sample=${SWEEP_PAGE_POINTS}`);
    const query = new URLSearchParams(sweepDetailQuery("?x=a&constraint=b+%3C%3D+1").slice(1));
    expect([query.get("x"), query.get("constraint"), query.get("sample")]).toEqual([
      "a",
      "b <= 1",
      String(SWEEP_PAGE_POINTS),
    ]);
  });
});

describe("sampledCaption", () => {
  it("says how many points of a big sweep the page shows", () => {
    const points = Array.from({ length: 3 }, (_, i) => ({ simulation: i }));
    expect(sampledCaption({ points, points_total: 9 })).toMatch(/^Showing 3 of 9 points/);
    expect(sampledCaption({ points, points_total: 3 })).toBe("");
    expect(sampledCaption({ points })).toBe("");
  });
});

describe("unmeasuredIntervals", () => {
  it("names each GPU without a measured spread once, from the finished points", () => {
    const label = "B200 SXM 180GB: no interval: no measurement";
    const points = [
      { status: "succeeded", interval_unmeasured: label },
      { status: "succeeded", interval_unmeasured: label },
      { status: "succeeded", interval_unmeasured: "" },
      { status: "failed", interval_unmeasured: "Other: no interval: no measurement" },
    ];
    expect(unmeasuredIntervals(points)).toEqual([label]);
    expect(unmeasuredIntervals([])).toEqual([]);
  });
});
