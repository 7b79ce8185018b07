import { describe, expect, it } from "vitest";
import {
  bestFirst,
  studyActions,
  studyCaption,
  studyFraction,
  studyFromSweep,
  studyObjectives,
  tradeoffPoints,
} from "./studies.js";

// A progress as GET /api/studies/{id}/ returns it.
const trial = (number, state, metrics, flags = {}) => ({
  number,
  state,
  point: { steps: number + 1 },
  metrics,
  simulation: state === "fail" && !metrics.overall_time_s ? null : 10 + number,
  simulation_status: state === "complete" ? "succeeded" : "failed",
  feasible: state === "complete",
  best: false,
  error: null,
  ...flags,
});
const PROGRESS = {
  trials: [
    trial(0, "complete", { overall_time_s: 3, energy_j: 1 }),
    trial(1, "complete", { overall_time_s: 1, energy_j: 2 }, { best: true }),
    trial(2, "fail", {}),
    trial(3, "running", {}, { feasible: false }),
  ],
  asked: 4,
  done: 3,
  running: 1,
  failed: 1,
  budget: 6,
  best: [1],
};

describe("studies", () => {
  it("says how far a study got against its budget", () => {
    expect(studyCaption(PROGRESS)).toBe("3 of 6 runs done, 1 running, 1 failed");
    expect(studyFraction(PROGRESS)).toBe(0.5);
    expect(studyFraction({ ...PROGRESS, done: 9 })).toBe(1);
  });

  it("reads objectives with their default directions", () => {
    const study = {
      objectives: [{ metric: "cost_usd" }, "p_success", { metric: "energy_j", direction: "max" }],
    };
    expect(studyObjectives(study)).toEqual([
      { metric: "cost_usd", direction: "min" },
      { metric: "p_success", direction: "max" },
      { metric: "energy_j", direction: "max" },
    ]);
  });

  it("gives the trade-off chart each trial with the server's flags", () => {
    const points = tradeoffPoints(PROGRESS);
    expect(points.map((p) => [p.status, p.feasible, p.pareto])).toEqual([
      ["succeeded", true, false],
      ["succeeded", true, true],
      ["failed", false, false],
      ["running", false, false],
    ]);
    expect(points[1].overall_time_s).toBe(1);
  });

  it("lists the best trials first", () => {
    expect(bestFirst(PROGRESS).map((t) => t.number)).toEqual([1, 0, 2, 3]);
  });

  it("offers stop while running and resume once stopped, to the owner only", () => {
    expect(studyActions({ status: "running", access: "owner" })).toEqual(["stop"]);
    expect(studyActions({ status: "stopped", access: "owner" })).toEqual(["resume"]);
    expect(studyActions({ status: "finished", access: "owner" })).toEqual([]);
    expect(studyActions({ status: "running", access: "shared" })).toEqual([]);
  });

  it("searches a sweep's axes for the trade-off's objectives and constraints", () => {
    const sweep = { name: "intensity", spec: { variables: { computeIntensity: [1, 2, 4] } } };
    const body = studyFromSweep(sweep, {
      objectives: [
        { metric: "overall_time_s", direction: "" },
        { metric: "cost_usd", direction: "max" },
      ],
      constraints: ["gpu_power_w <= 700"],
      runs: "12",
      parallel: "3",
    });
    expect(body).toEqual({
      name: "intensity (search)",
      spec: sweep.spec,
      objectives: [{ metric: "overall_time_s" }, { metric: "cost_usd", direction: "max" }],
      constraints: ["gpu_power_w <= 700"],
      budget: { runs: 12 },
      parallel: 3,
    });
    const swapping = { ...sweep, spec: { ...sweep.spec, hardware: { node: "gpu0" } } };
    const searched = studyFromSweep(swapping, {
      objectives: [],
      constraints: [],
      runs: 1,
      parallel: 1,
    });
    expect(searched.spec.hardware).toEqual({ node: "gpu0" });
    expect(studyFromSweep({ name: "x" }, { objectives: [], constraints: [] })).toBe(null);
  });
});
