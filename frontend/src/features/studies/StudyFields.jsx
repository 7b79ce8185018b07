// The study part of the new-study form (the sweep's launch form around it): what to optimise
// (objectives, each minimised or maximised), the constraints a feasible trial holds, the
// sampler and its seed, the budget of runs and of wall time, and the runs in flight at once.
// `values` is STUDY_FORM_DEFAULTS' shape; errors are the API's, under its paths.
import { FieldErrors } from "../../components/Field.jsx";
import { InlineField } from "../../components/InlineField.jsx";
import { SAMPLERS } from "./studies.js";

export function StudyFields({ values, onChange, errors }) {
  const set = (key) => (event) => onChange({ ...values, [key]: event.target.value });
  const setObjective = (index, key, value) =>
    onChange({
      ...values,
      objectives: values.objectives.map((o, i) => (i === index ? { ...o, [key]: value } : o)),
    });
  const objectiveErrors = (index) =>
    Object.keys(errors || {}).filter((p) => p.startsWith(`objectives[${index}]`));
  return (
    <fieldset>
      <legend>Search</legend>
      {values.objectives.map((o, index) => (
        <div key={index} className="form-row">
          <InlineField label={`Objective ${index + 1}`} errors={errors} path={null}>
            <input
              aria-label={`Objective ${index + 1} metric`}
              value={o.metric}
              aria-invalid={objectiveErrors(index).length > 0}
              placeholder="overall_time_s"
              onChange={(e) => setObjective(index, "metric", e.target.value)}
            />
          </InlineField>
          <select
            aria-label={`Objective ${index + 1} direction`}
            value={o.direction}
            onChange={(e) => setObjective(index, "direction", e.target.value)}
          >
            <option value="min">minimise</option>
            <option value="max">maximise</option>
          </select>
          {values.objectives.length > 1 && (
            <button
              type="button"
              onClick={() =>
                onChange({ ...values, objectives: values.objectives.filter((_, i) => i !== index) })
              }
            >
              Remove
            </button>
          )}
          {objectiveErrors(index).map((p) => (
            <FieldErrors key={p} errors={errors} path={p} />
          ))}
        </div>
      ))}
      <button
        type="button"
        onClick={() =>
          onChange({
            ...values,
            objectives: [...values.objectives, { metric: "", direction: "min" }],
          })
        }
      >
        Add an objective
      </button>
      <FieldErrors errors={errors} path="objectives" />
      <label className={`field${errors?.constraints ? " invalid" : ""}`}>
        <span className="field-label">
          Constraints, one per line: <code>metric op number</code>
        </span>
        <textarea
          aria-label="Constraints"
          rows={2}
          placeholder="gpu_power_w <= 700"
          value={values.constraints}
          onChange={set("constraints")}
        />
        <FieldErrors errors={errors} path="constraints" />
        {Object.keys(errors || {})
          .filter((p) => p.startsWith("constraints["))
          .map((p) => (
            <FieldErrors key={p} errors={errors} path={p} />
          ))}
      </label>
      <div className="form-row">
        <InlineField label="Sampler" errors={errors} path="sampler">
          <select aria-label="Sampler" value={values.sampler} onChange={set("sampler")}>
            {SAMPLERS.map(([name, text]) => (
              <option key={name} value={name}>
                {text}
              </option>
            ))}
          </select>
        </InlineField>
        <InlineField label="Seed" errors={errors} path="seed">
          <input aria-label="Seed" value={values.seed} onChange={set("seed")} />
        </InlineField>
      </div>
      <div className="form-row">
        <InlineField label="Runs" errors={errors} path="budget.runs">
          <input aria-label="Runs" value={values.runs} onChange={set("runs")} />
        </InlineField>
        <InlineField label="Wall time (s, empty: none)" errors={errors} path="budget.wall_s">
          <input aria-label="Wall time" value={values.wallS} onChange={set("wallS")} />
        </InlineField>
        <InlineField label="At once" errors={errors} path="parallel">
          <input aria-label="Runs at once" value={values.parallel} onChange={set("parallel")} />
        </InlineField>
      </div>
      <FieldErrors errors={errors} path="budget" />
    </fieldset>
  );
}
