// The new-study form for a training workload's plans: a model of the shipped configs, the
// cluster templates (several: a categorical axis), the plan's fields and axes (TP, PP,
// micro-batch, GPUs, ...), the prediction interval and the study's fields (StudyFields),
// posted to /api/studies/ as a plan sweep's spec (workloadStudy.js). The lists are the
// Workloads page's (GET /api/workloads/presets/).
import { useState } from "react";
import { post } from "../../lib/api.js";
import { navigate } from "../../lib/router.jsx";
import { ErrorSummary } from "../../components/ErrorSummary.jsx";
import { FieldErrors } from "../../components/Field.jsx";
import { InlineField } from "../../components/InlineField.jsx";
import { Loading } from "../../components/Loading.jsx";
import { useApiGet } from "../../hooks/useApiGet.js";
import { UncertaintyFields, uncertaintyBody } from "../launch/UncertaintyFields.jsx";
import { sweepFields } from "../sweeps/sweepErrors.js";
import { modelText, systemText } from "../workloads/workloads.js";
import { StudyFields } from "./StudyFields.jsx";
import { STUDY_FORM_DEFAULTS, studyFieldName, studyLaunchBody } from "./studies.js";
import {
  WORKLOAD_STUDY_DEFAULTS,
  WORKLOAD_STUDY_FIELDS,
  workloadFieldName,
  workloadFieldPaths,
  workloadStudySpec,
} from "./workloadStudy.js";

const CHOICE_FIELDS = [
  ["precision", "Precision"],
  ["data_parallel", "Data parallelism"],
  ["recompute", "Recomputation"],
];

export function WorkloadStudyNew({ choice = null }) {
  const presets = useApiGet("/api/workloads/presets/");
  const [name, setName] = useState("");
  const [form, setForm] = useState(WORKLOAD_STUDY_DEFAULTS);
  const [search, setSearch] = useState(STUDY_FORM_DEFAULTS);
  const [error, setError] = useState(null);
  // The API's errors with "spec." taken off, shown beside the fields; the summary names the
  // rest. An Error's message is not enumerable, hence the copy.
  const local = sweepFields(error?.fields);
  const shownError = error ? { message: error.message, fields: local } : presets.error;
  const set = (key) => (e) => setForm({ ...form, [key]: e.target.value });
  const toggle = (system) => (e) =>
    setForm({
      ...form,
      systems: e.target.checked
        ? [...form.systems, system]
        : form.systems.filter((s) => s !== system),
    });

  const launch = async (event) => {
    event.preventDefault();
    const spec = workloadStudySpec(form, uncertaintyBody(form.uncertainty));
    try {
      const study = await post("/api/studies/", studyLaunchBody(name, spec, search));
      navigate(`/app/studies/${study.id}`);
    } catch (caught) {
      setError(caught);
    }
  };

  return (
    <section aria-labelledby="studynew-title">
      <header className="page-head">
        <h1 id="studynew-title">New study</h1>
      </header>
      {choice}
      <ErrorSummary
        error={shownError}
        names={(path) => studyFieldName(path) || workloadFieldName(path)}
      />
      {!presets.data ? (
        !presets.error && <Loading />
      ) : (
        <form onSubmit={launch} aria-label="Define a workload study">
          <div className="form-grid">
            <InlineField label="Name" errors={local} path="name">
              <input
                aria-label="Study name"
                value={name}
                onChange={(e) => setName(e.target.value)}
              />
            </InlineField>
            <InlineField label="Model" errors={local} path="model">
              <select aria-label="Model" value={form.model} onChange={set("model")}>
                {presets.data.models.map((m) => (
                  <option key={m.name} value={m.name}>
                    {modelText(m)}
                  </option>
                ))}
              </select>
            </InlineField>
            {CHOICE_FIELDS.map(([key, label]) => (
              <InlineField key={key} label={label} errors={local} path={key}>
                <select aria-label={label} value={form[key]} onChange={set(key)}>
                  {presets.data.choices[key].map((c) => (
                    <option key={c}>{c}</option>
                  ))}
                </select>
              </InlineField>
            ))}
            <UncertaintyFields
              values={form.uncertainty}
              onChange={(uncertainty) => setForm({ ...form, uncertainty })}
              errors={local}
            />
          </div>
          <div className="two-col">
            <fieldset>
              <legend>System templates (several: the optimiser picks among them)</legend>
              <div className="checklist" role="group" aria-label="System templates">
                {presets.data.systems.map((s) => (
                  <label key={s.name} className="check">
                    <input
                      type="checkbox"
                      aria-label={s.name}
                      checked={form.systems.includes(s.name)}
                      onChange={toggle(s.name)}
                    />{" "}
                    {systemText(s)}
                  </label>
                ))}
              </div>
              {workloadFieldPaths(local, "system").map((p) => (
                <FieldErrors key={p} errors={local} path={p} />
              ))}
            </fieldset>
            <fieldset>
              <legend>
                The plan: a value, or a list <code>1,2,4</code> or a range{" "}
                <code>start:stop:step</code> to search (blank: the default)
              </legend>
              {WORKLOAD_STUDY_FIELDS.map(([key, label]) => {
                const paths = workloadFieldPaths(local, key);
                return (
                  <label key={key} className={`field inline${paths.length ? " invalid" : ""}`}>
                    <span className="field-label">{label}</span>
                    <input
                      aria-label={label}
                      value={form[key]}
                      aria-invalid={paths.length > 0}
                      onChange={set(key)}
                    />
                    {paths.map((p) => (
                      <FieldErrors key={p} errors={local} path={p} />
                    ))}
                  </label>
                );
              })}
              <FieldErrors errors={local} path="axes" />
            </fieldset>
          </div>
          <StudyFields values={search} onChange={setSearch} errors={local} />
          <button type="submit" className="primary big">
            Start the study
          </button>
        </form>
      )}
    </section>
  );
}
