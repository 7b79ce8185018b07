// The launch screen: pick a system model and an application model, set variables and label
// counts, pick a queue, launch.
import { useEffect, useState } from "react";
import { post } from "../../lib/api.js";
import { errorId } from "../../lib/errors.js";
import { navigate, useLocation } from "../../lib/router.jsx";
import { ErrorSummary } from "../../components/ErrorSummary.jsx";
import { FieldErrors } from "../../components/Field.jsx";
import { Loading } from "../../components/Loading.jsx";
import { coerce, graphLabels } from "./launch.js";
import { useLaunchChoices } from "./useLaunchChoices.js";

export function Launch() {
  const { query } = useLocation();
  const c = useLaunchChoices(query);
  const [variables, setVariables] = useState({});
  const [labels, setLabels] = useState({});
  const [queue, setQueue] = useState("");
  const [name, setName] = useState("");
  const [seed, setSeed] = useState("0");
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
      <ErrorSummary
        error={error}
        shown={["system_model", "application", "variables", "labels", "queue", "seed", "name"]}
      />
      <form className="launch-form" onSubmit={launch} aria-label="Launch a simulation">
        <div className="form-grid">
          <label className={`field${errors.system_model ? " invalid" : ""}`}>
            <span className="field-label">System model</span>
            <select
              aria-label="System model"
              value={c.systemId}
              onChange={(e) => c.setSystemId(e.target.value)}
            >
              {c.systems.map((s) => (
                <option key={s.id} value={s.id}>
                  {s.name}
                </option>
              ))}
            </select>
            <FieldErrors errors={errors} path="system_model" />
          </label>
          <label className={`field${errors.application ? " invalid" : ""}`}>
            <span className="field-label">Application model</span>
            <select
              aria-label="Application model"
              value={c.appId}
              onChange={(e) => c.setAppId(e.target.value)}
            >
              {c.apps.map((a) => (
                <option key={a.id} value={a.id}>
                  {a.name}
                </option>
              ))}
            </select>
            <FieldErrors errors={errors} path="application" />
          </label>
          <label className="field">
            <span className="field-label">Run name (optional)</span>
            <input aria-label="Run name" value={name} onChange={(e) => setName(e.target.value)} />
          </label>
          <label className={`field${errors.queue ? " invalid" : ""}`}>
            <span className="field-label">Queue</span>
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
            <FieldErrors errors={errors} path="queue" />
          </label>
          <label className={`field${errors.seed ? " invalid" : ""}`}>
            <span className="field-label">Seed</span>
            <input aria-label="Seed" value={seed} onChange={(e) => setSeed(e.target.value)} />
            <FieldErrors errors={errors} path="seed" />
          </label>
        </div>
        <div className="two-col">
          <fieldset>
            <legend>Variables</legend>
            {Object.keys(variables).length === 0 && (
              <p className="muted">The application declares no variables.</p>
            )}
            {(c.app?.variables || []).map((v) => (
              <label
                key={v.name}
                className={`field inline${errors[`variables.${v.name}`] ? " invalid" : ""}`}
              >
                <span className="field-label">
                  {v.name} <span className="muted">({v.type})</span>
                </span>
                <input
                  aria-label={`Variable ${v.name}`}
                  value={variables[v.name] ?? ""}
                  aria-invalid={Boolean(errors[`variables.${v.name}`])}
                  aria-describedby={
                    errors[`variables.${v.name}`] ? errorId(`variables.${v.name}`) : undefined
                  }
                  onChange={(e) => setVariables({ ...variables, [v.name]: e.target.value })}
                />
                <FieldErrors errors={errors} path={`variables.${v.name}`} />
              </label>
            ))}
            <FieldErrors errors={errors} path="variables" />
          </fieldset>
          <fieldset>
            <legend>Label counts (processes per label)</legend>
            {Object.keys(labels).length === 0 && (
              <p className="muted">The system model has no labels.</p>
            )}
            {Object.keys(labels).map((l) => (
              <label key={l} className={`field inline${errors[`labels.${l}`] ? " invalid" : ""}`}>
                <span className="field-label">
                  {l} <span className="muted">(capacity {caps[l]})</span>
                </span>
                <input
                  aria-label={`Processes with label ${l}`}
                  value={labels[l]}
                  aria-invalid={Boolean(errors[`labels.${l}`])}
                  aria-describedby={errors[`labels.${l}`] ? errorId(`labels.${l}`) : undefined}
                  onChange={(e) => setLabels({ ...labels, [l]: e.target.value })}
                />
                <FieldErrors errors={errors} path={`labels.${l}`} />
              </label>
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
