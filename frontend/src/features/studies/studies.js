// Pure helpers of the studies pages: a study's progress as GET /api/studies/{id}/ returns it
// (webapp.studio.selectors.study_progress) turned into a caption, a fraction, table columns
// and the trade-off chart's points.

// The axes a study searches, in the order it was given them.
export function studyAxes(study) {
  return Object.keys(study?.axes || {});
}

// The metrics of its objectives, with their directions ("min" unless given; p_success: "max").
export function studyObjectives(study) {
  return (study?.objectives || []).map((o) => {
    const metric = typeof o === "string" ? o : o.metric;
    const direction =
      (typeof o === "object" && o.direction) || (metric === "p_success" ? "max" : "min");
    return { metric, direction };
  });
}

// The fraction of the budget of runs the study has finished (told, complete or failed).
export function studyFraction(progress) {
  if (!progress || !progress.budget) return 0;
  return Math.min(1, progress.done / progress.budget);
}

// One line saying where the study stands: "4 of 20 runs done, 2 running, 1 failed".
export function studyCaption(progress) {
  if (!progress) return "";
  const parts = [`${progress.done} of ${progress.budget} runs done`];
  if (progress.running) parts.push(`${progress.running} running`);
  if (progress.failed) parts.push(`${progress.failed} failed`);
  return parts.join(", ");
}

// The trials as the trade-off chart's points: each metric a key, `pareto` its best flag.
export function tradeoffPoints(progress) {
  return (progress?.trials || []).map((trial) => ({
    ...trial.metrics,
    simulation: trial.simulation,
    status:
      trial.state === "complete" ? "succeeded" : trial.state === "fail" ? "failed" : "running",
    feasible: trial.feasible,
    pareto: trial.best,
  }));
}

// The best trials first (in their order), then the others by number.
export function bestFirst(progress) {
  const trials = progress?.trials || [];
  return [...trials.filter((t) => t.best), ...trials.filter((t) => !t.best)];
}

// A study can be stopped while it runs and resumed once stopped, by its owner.
export function studyActions(study) {
  if (!study || study.access === "shared") return [];
  if (study.status === "running") return ["stop"];
  if (study.status === "stopped") return ["resume"];
  return [];
}

// The body of POST /api/studies/ searching a sweep's axes instead of running its grid: its
// spec, the trade-off's objectives and constraints (as the sweep page applies them), a
// budget of runs and the runs in flight at once (the hardware a sweep swaps in is one more
// dimension of the search). Null without a spec.
export function studyFromSweep(sweep, { objectives, constraints, runs, parallel }) {
  if (!sweep?.spec) return null;
  return {
    name: `${sweep.name} (search)`,
    spec: sweep.spec,
    objectives: objectives
      .filter((o) => o.metric)
      .map((o) =>
        o.direction ? { metric: o.metric, direction: o.direction } : { metric: o.metric },
      ),
    constraints,
    budget: { runs: Number(runs) },
    parallel: Number(parallel),
  };
}

// The study part of the new-study form before anything is typed: one objective, minimised.
export const STUDY_FORM_DEFAULTS = {
  objectives: [{ metric: "overall_time_s", direction: "min" }],
  constraints: "",
  sampler: "auto",
  seed: "0",
  runs: "20",
  wallS: "",
  parallel: "2",
};

// The samplers a study may use (simulator.study.SAMPLERS), with what each does.
export const SAMPLERS = [
  ["auto", "Auto: TPE for one objective, NSGA-II for several"],
  ["tpe", "TPE (Bayesian)"],
  ["nsga2", "NSGA-II (genetic)"],
  ["random", "Random"],
];

// A whole number typed as text becomes a number; anything else is sent as typed, so that the
// server refuses it naming the field (its message says what it expects). Empty: `empty`.
function whole(text, empty) {
  const value = String(text ?? "").trim();
  if (value === "") return empty;
  return /^-?\d+$/.test(value) ? Number(value) : value;
}

// The body of POST /api/studies/ from a sweep's `name` and `spec` (the launch form's) and the
// study fields: objectives [{metric, direction}] (an empty metric left out), constraints one
// per line, the sampler, its seed, the budget (runs, and wall time in seconds: empty for
// none) and the runs in flight at once.
export function studyLaunchBody(name, spec, study) {
  return {
    name,
    spec,
    objectives: study.objectives
      .filter((o) => o.metric.trim())
      .map((o) => ({ metric: o.metric.trim(), direction: o.direction || "min" })),
    constraints: String(study.constraints || "")
      .split("\n")
      .map((line) => line.trim())
      .filter(Boolean),
    sampler: study.sampler,
    seed: whole(study.seed, 0),
    budget: { runs: whole(study.runs, null), wall_s: whole(study.wallS, null) },
    parallel: whole(study.parallel, 1),
  };
}

// The words the error summary gives a study field's path ("objectives[1]" -> "Objective 2");
// null for a path that is not a study field (the sweep form names those).
export function studyFieldName(path) {
  const rules = [
    [/^objectives\[(\d+)\]/, (m) => `Objective ${Number(m[1]) + 1}`],
    [/^objectives/, () => "Objectives"],
    [/^constraints\[(\d+)\]/, (m) => `Constraint ${Number(m[1]) + 1}`],
    [/^constraints/, () => "Constraints"],
    [/^sampler$/, () => "Sampler"],
    [/^seed$/, () => "Seed"],
    [/^budget\.runs$/, () => "Runs"],
    [/^budget\.wall_s$/, () => "Wall time"],
    [/^budget$/, () => "Budget"],
    [/^parallel$/, () => "At once"],
  ];
  for (const [pattern, name] of rules) {
    const m = pattern.exec(path);
    if (m) return name(m);
  }
  return null;
}

// One line saying how many of the study's trials the page shows, when not all of them
// ("Showing 500 of 10000 trials: every best one and a sample of the others"); else "".
export function shownCaption(progress) {
  if (!progress || progress.shown == null || progress.shown >= progress.asked) return "";
  return `Showing ${progress.shown} of ${progress.asked} trials: every best one and an evenly spaced sample of the others.`;
}
