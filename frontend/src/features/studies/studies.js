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
