import { describe, expect, it } from "vitest";
import {
  STUDY_FORM_DEFAULTS,
  bestFirst,
  shownCaption,
  studyActions,
  studyCaption,
  studyFraction,
  studyFieldName,
  studyFromSweep,
  studyLaunchBody,
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

describe("studyLaunchBody", () => {
  const spec = { labels: { CPU: 1 }, variables: { N: [1, 2] } };

  it("turns the form's text into the body of POST /api/studies/", () => {
    const body = studyLaunchBody("s", spec, {
      ...STUDY_FORM_DEFAULTS,
      objectives: [
        { metric: " energy_j ", direction: "min" },
        { metric: "", direction: "max" },
        { metric: "p_success", direction: "max" },
      ],
      constraints: " gpu_power_w <= 700 \n\n",
      seed: "-3",
      runs: "50",
      wallS: "",
      parallel: " 8 ",
    });
    expect(body).toEqual({
      name: "s",
      spec,
      objectives: [
        { metric: "energy_j", direction: "min" },
        { metric: "p_success", direction: "max" },
      ],
      constraints: ["gpu_power_w <= 700"],
      sampler: "auto",
      seed: -3,
      budget: { runs: 50, wall_s: null },
      parallel: 8,
    });
  });

  it("sends what is no whole number as typed, for the server to name", () => {
    const body = studyLaunchBody("s", spec, { ...STUDY_FORM_DEFAULTS, runs: "1e3", seed: "" });
    expect(body.budget.runs).toBe("1e3");
    expect(body.seed).toBe(0);
  });
});

describe("studyFieldName", () => {
  it("names the study's fields and leaves the sweep's to the sweep form", () => {
    expect(studyFieldName("objectives[1].metric")).toBe("Objective 2");
    expect(studyFieldName("constraints[0]")).toBe("Constraint 1");
    expect(studyFieldName("budget.wall_s")).toBe("Wall time");
    expect(studyFieldName("parallel")).toBe("At once");
    expect(studyFieldName("labels.GPU")).toBe(null);
  });
});

describe("shownCaption", () => {
  it("says how many trials of a big study the page shows", () => {
    expect(shownCaption({ shown: 500, asked: 10000 })).toMatch(/^Showing 500 of 10000 trials/);
    expect(shownCaption({ shown: 6, asked: 6 })).toBe("");
    expect(shownCaption({ asked: 6 })).toBe("");
  });
});
