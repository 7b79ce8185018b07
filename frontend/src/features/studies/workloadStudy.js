// The training-workload part of the new-study form: the spec of a plan sweep
// (POST /api/studies/ with kind "train", webapp.studio.services.studies._workload_study_launch)
// from the form's text, and the words the error summary gives its paths. Pure functions.
import { parseAxis } from "../sweeps/Sweeps.jsx";
import { FIELD_NAMES, INITIAL } from "../workloads/workloads.js";

// The plan's whole-number fields the form offers, each one value (a field of the plan) or a
// list "1,2,4" or a range "1:8:1" (an axis the optimiser searches); blank: the server's
// default. Plan axes the server knows: simulator.workloads.plan_axes.INTEGER_AXES.
export const WORKLOAD_STUDY_FIELDS = [
  ["gpus", "GPUs"],
  ["gbs", "Global batch"],
  ["tp", "TP"],
  ["pp", "PP"],
  ["mbs", "Micro-batch"],
  ["cp", "CP"],
  ["ep", "EP"],
  ["vp", "Virtual stages (VP)"],
];

// The workload fields before anything is typed: the Workloads page's plan, with TP and PP
// searched.
export const WORKLOAD_STUDY_DEFAULTS = {
  model: INITIAL.model,
  systems: [INITIAL.system],
  precision: INITIAL.precision,
  data_parallel: INITIAL.data_parallel,
  recompute: INITIAL.recompute,
  gpus: INITIAL.gpus,
  gbs: INITIAL.gbs,
  tp: "1,2,4,8",
  pp: "1,2,4,8",
  mbs: "1,2",
  cp: "",
  ep: "",
  vp: "",
  uncertainty: {},
};

// Return the study's spec from the form: the model, the precision and the data-parallel and
// recomputation choices as fields; one ticked system template a field, several the
// categorical axis "system"; each whole-number field a field when one value is typed, an axis
// when a list or a range is. `interval` is the spec's `uncertainty` (undefined: none).
// Anything that does not read as a number is sent as typed, for the server to name.
export function workloadStudySpec(form, interval) {
  const spec = {
    kind: "train",
    model: form.model,
    precision: form.precision,
    data_parallel: form.data_parallel,
    recompute: form.recompute,
  };
  const axes = {};
  if (form.systems.length === 1) spec.system = form.systems[0];
  else if (form.systems.length > 1) axes.system = [...form.systems];
  for (const [key] of WORKLOAD_STUDY_FIELDS) {
    const text = String(form[key] ?? "").trim();
    if (!text) continue;
    const value = parseAxis(text, "int");
    if (Array.isArray(value) || (value && typeof value === "object")) axes[key] = value;
    else spec[key] = value;
  }
  spec.axes = axes;
  if (interval) spec.uncertainty = interval;
  return spec;
}

// The paths (without "spec.") shown beside the field `key`: the plan field itself and its
// axis with any bad value or range part ("axes.tp[1]", "axes.tp.step").
export function workloadFieldPaths(errors, key) {
  return Object.keys(errors || {}).filter(
    (p) =>
      p === key ||
      p === `axes.${key}` ||
      p.startsWith(`axes.${key}[`) ||
      p.startsWith(`axes.${key}.`),
  );
}

// The words the error summary gives a workload path (without "spec."): "axes.tp[1]" -> "TP",
// "gbs" -> "Global batch"; null for "spec" itself (its message stands alone).
export function workloadFieldName(path) {
  if (path === "sweep" || path === "non_field_errors" || path === "detail" || !path) return null;
  if (path === "axes") return "Plan axes";
  const axis = /^axes\.([a-z_]+)/.exec(path);
  const key = axis ? axis[1] : path.split(".")[0];
  if (key === "name") return "Study name";
  if (key === "uncertainty") return "Prediction interval";
  return FIELD_NAMES[key] || key;
}
