// The launch screen: pick a system model and an application model, set variables and label
// counts, pick a queue and the run's limits within its maximum, launch.
import { useEffect, useState } from "react";
import { post } from "../../lib/api.js";
import { errorId } from "../../lib/errors.js";
import { navigate, useLocation } from "../../lib/router.jsx";
import { ErrorSummary } from "../../components/ErrorSummary.jsx";
import { FieldErrors } from "../../components/Field.jsx";
import { InlineField } from "../../components/InlineField.jsx";
import { Loading } from "../../components/Loading.jsx";
import { LimitFields } from "./LimitFields.jsx";
import { FailureFields, failuresBody } from "./FailureFields.jsx";
import { UncertaintyFields, uncertaintyBody } from "./UncertaintyFields.jsx";
import { limitBody, queueLimits } from "./limits.js";
import { coerce, graphLabels, optionalWhole } from "./launch.js";
import { ModelChoices } from "./ModelChoices.jsx";
import { useLaunchChoices } from "./useLaunchChoices.js";

export function Launch() {
  const { query } = useLocation();
  const c = useLaunchChoices(query);
  const [variables, setVariables] = useState({});
  const [labels, setLabels] = useState({});
  const [queue, setQueue] = useState("");
  const [name, setName] = useState("");
  const [seed, setSeed] = useState("0");
  const [limits, setLimits] = useState({});
  const [timelineLimit, setTimelineLimit] = useState("");
  const [failures, setFailures] = useState({});
  const [uncertainty, setUncertainty] = useState({});
  const [error, setError] = useState(null);
  const [busy, setBusy] = useState(false);

  useEffect(() => {
    if (c.app)
      setVariables(
        Object.fromEntries((c.app.variables || []).map((v) => [v.name, String(v.default ?? "")])),
      );
  }, [c.app]);
  useEffect(() => {
    if (c.system)
      setLabels(Object.fromEntries(Object.keys(graphLabels(c.system.graph)).map((l) => [l, "1"])));
  }, [c.system]);
  useEffect(() => {
    if (c.queues.length && !c.queues.some((q) => q.name === queue)) setQueue(c.queues[0].name);
  }, [c.queues, queue]);

  if (c.error) return <ErrorSummary error={c.error} />;
  if (!c.systems || !c.apps) return <Loading />;
  const errors = error?.fields || {};
  const caps = graphLabels(c.system?.graph);

  const launch = async (event) => {
    event.preventDefault();
    setBusy(true);
    const types = Object.fromEntries((c.app?.variables || []).map((v) => [v.name, v.type]));
    const body = {
      name,
      system_model: c.system ? c.system.id : undefined,
      application: c.app ? c.app.id : undefined,
      variables: Object.fromEntries(
        Object.entries(variables).map(([k, v]) => [k, coerce(types[k] || "str", v)]),
      ),
      labels: Object.fromEntries(
        Object.entries(labels).map(([k, v]) => [k, /^\d+$/.test(v) ? Number(v) : v]),
      ),
      queue: queue || undefined,
      seed: /^-?\d+$/.test(seed) ? Number(seed) : seed,
      ...limitBody(limits),
      timeline_limit: optionalWhole(timelineLimit),
      failures: failuresBody(failures),
      uncertainty: uncertaintyBody(uncertainty),
    };
    try {
      const sim = await post("/api/simulations/", body);
      navigate(`/app/runs/${sim.id}`);
    } catch (e) {
      setError(e);
    } finally {
      setBusy(false);
    }
  };

  return (
    <section aria-labelledby="launch-title">
      <header className="page-head">
        <h1 id="launch-title">Launch a simulation</h1>
      </header>
      <ErrorSummary error={error} />
      <form className="launch-form" onSubmit={launch} aria-label="Launch a simulation">
        <div className="form-grid">
          <ModelChoices choices={c} errors={errors} />
          <InlineField label="Run name (optional)" errors={errors} path="name">
            <input
              aria-label="Run name"
              value={name}
              aria-invalid={Boolean(errors.name)}
              aria-describedby={errors.name ? errorId("name") : undefined}
              onChange={(e) => setName(e.target.value)}
            />
          </InlineField>
          <InlineField label="Queue" errors={errors} path="queue">
            <select aria-label="Queue" value={queue} onChange={(e) => setQueue(e.target.value)}>
              {c.queues.length === 0 && <option value="">server default (loading queues…)</option>}
              {c.queues.map((q) => (
                <option key={q.name} value={q.name}>
                  {q.name}
                  {q.workers?.length
                    ? ` (${q.workers.length} worker${q.workers.length > 1 ? "s" : ""})`
                    : " (no worker seen)"}
                </option>
              ))}
            </select>
          </InlineField>
          <InlineField label="Seed" errors={errors} path="seed">
            <input aria-label="Seed" value={seed} onChange={(e) => setSeed(e.target.value)} />
          </InlineField>
          <LimitFields
            limits={queueLimits(c.queues, queue)}
            values={limits}
            onChange={setLimits}
            errors={errors}
          />
          <InlineField
            label="Timeline entries (optional; default 10,000)"
            errors={errors}
            path="timeline_limit"
          >
            <input
              aria-label="Timeline entries"
              inputMode="numeric"
              placeholder="10000"
              value={timelineLimit}
              aria-invalid={Boolean(errors.timeline_limit)}
              aria-describedby={errors.timeline_limit ? errorId("timeline_limit") : undefined}
              onChange={(e) => setTimelineLimit(e.target.value)}
            />
          </InlineField>
          <FailureFields values={failures} onChange={setFailures} errors={errors} />
          <UncertaintyFields values={uncertainty} onChange={setUncertainty} errors={errors} />
        </div>
        <div className="two-col">
          <fieldset>
            <legend>Variables</legend>
            {Object.keys(variables).length === 0 && (
              <p className="muted">The application declares no variables.</p>
            )}
            {(c.app?.variables || []).map((v) => (
              <InlineField
                key={v.name}
                className="inline"
                label={
                  <>
                    {v.name} <span className="muted">({v.type})</span>
                  </>
                }
                errors={errors}
                path={`variables.${v.name}`}
              >
                <input
                  aria-label={`Variable ${v.name}`}
                  value={variables[v.name] ?? ""}
                  aria-invalid={Boolean(errors[`variables.${v.name}`])}
                  aria-describedby={
                    errors[`variables.${v.name}`] ? errorId(`variables.${v.name}`) : undefined
                  }
                  onChange={(e) => setVariables({ ...variables, [v.name]: e.target.value })}
                />
              </InlineField>
            ))}
            <FieldErrors errors={errors} path="variables" />
          </fieldset>
          <fieldset>
            <legend>Label counts (processes per label)</legend>
            {Object.keys(labels).length === 0 && (
              <p className="muted">The system model has no labels.</p>
            )}
            {Object.keys(labels).map((l) => (
              <InlineField
                key={l}
                className="inline"
                label={
                  <>
                    {l} <span className="muted">(capacity {caps[l]})</span>
                  </>
                }
                errors={errors}
                path={`labels.${l}`}
              >
                <input
                  aria-label={`Processes with label ${l}`}
                  value={labels[l]}
                  aria-invalid={Boolean(errors[`labels.${l}`])}
                  aria-describedby={errors[`labels.${l}`] ? errorId(`labels.${l}`) : undefined}
                  onChange={(e) => setLabels({ ...labels, [l]: e.target.value })}
                />
              </InlineField>
            ))}
            <FieldErrors errors={errors} path="labels" />
          </fieldset>
        </div>
        <button type="submit" className="primary big" disabled={busy}>
          Launch
        </button>
      </form>
    </section>
  );
}
