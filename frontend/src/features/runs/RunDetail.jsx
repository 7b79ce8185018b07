// One run: live progress, the failure with the source line, the results.
import { useEffect, useState } from "react";
import { get, ignoreAbort, post } from "../../lib/api.js";
import { navigate, useToast } from "../../lib/router.jsx";
import { CodeEditor } from "../../components/CodeEditor.jsx";
import { ErrorSummary } from "../../components/ErrorSummary.jsx";
import { Loading } from "../../components/Loading.jsx";
import { Retrying } from "../../components/Retrying.jsx";
import { RunAnalysis } from "../analysis/RunAnalysis.jsx";
import { ShareControl } from "../shares/ShareControl.jsx";
import { sharedNote } from "../shares/shares.js";
import { Results } from "./Results.jsx";
import { RunFacts, RunProgress } from "./RunFacts.jsx";
import { RunLimits } from "./RunLimits.jsx";
import { TraceDownload } from "./TraceDownload.jsx";
import { FINAL } from "./runs.js";
import { useSimulation } from "./useSimulation.js";

export function RunDetail({ id }) {
  const toast = useToast();
  const { sim, result, error, retrying } = useSimulation(id);
  if (error) return <ErrorSummary error={error} />;
  if (!sim) return retrying ? <Retrying error={retrying} /> : <Loading />;
  const failed = sim.status === "failed";
  const err = sim.error || {};
  // A run shared with the reader: the same page, without the owner's controls.
  const shared = sim.access === "shared";
  return (
    <section aria-labelledby="run-title">
      <header className="page-head">
        <h1 id="run-title">{sim.name || `Simulation ${sim.id}`}</h1>
        <div className="actions">
          {!shared && !FINAL.includes(sim.status) && (
            <button
              onClick={() =>
                post(`/api/simulations/${id}/cancel/`).catch((e) => toast(e.message, "error"))
              }
            >
              Cancel
            </button>
          )}
          {result && (
            <a className="button" href={sim.result_url} download>
              Download result JSON
            </a>
          )}
          <TraceDownload sim={sim} result={result} />
          {!shared && sim.application && (
            <button onClick={() => navigate(`/app/applications/${sim.application}`)}>
              Edit application model
            </button>
          )}
          <button onClick={() => navigate(`/app/runs?compare=${id}`)}>Compare with…</button>
          {!shared && <ShareControl kind="simulation" id={sim.id} />}
        </div>
      </header>
      {shared && (
        <p className="notice shared" data-testid="shared-note">
          {sharedNote("run", sim.owner)}
        </p>
      )}
      <p className="muted">
        <span className={`status status-${sim.status}`} data-testid="run-status">
          {sim.status}
        </span>{" "}
        · queue {sim.queue} · labels{" "}
        {Object.entries(sim.labels)
          .map(([k, v]) => `${k}=${v}`)
          .join(", ")}{" "}
        · variables{" "}
        {Object.entries(sim.variables)
          .map(([k, v]) => `${k}=${v}`)
          .join(", ")}
      </p>
      <RunFacts sim={sim} />
      <Retrying error={retrying} />
      <RunProgress sim={sim} />
      <RunLimits sim={sim} />
      {failed && (
        <div className="error-box" role="alert">
          <strong>
            The simulation failed{err.line ? ` at line ${err.line}` : ""}
            {err.kind ? ` (${err.kind})` : ""}.
          </strong>
          <pre>{err.message}</pre>
        </div>
      )}
      {failed && err.kind === "user_code" && (
        <FrozenSource id={id} line={err.line} message={err.detail || err.message} />
      )}
      {result && <Results result={result} memoryCsvUrl={sim.memory_csv_url} />}
      {result && <RunAnalysis result={result} />}
    </section>
  );
}

// The application's source as the run froze it, with the failing line marked.
function FrozenSource({ id, line, message }) {
  const [source, setSource] = useState(null);
  useEffect(() => {
    const controller = new AbortController();
    get(`/api/simulations/${id}/`, { signal: controller.signal }).then(
      (s) => setSource(s.app_source),
      ignoreAbort(() => setSource(null)),
    );
    return () => controller.abort();
  }, [id]);
  if (source === null) return null;
  return (
    <>
      <h2>Application model as launched</h2>
      <CodeEditor
        language="python"
        label="Application model as launched"
        value={source}
        readOnly
        errorLine={line}
        errorMessage={message}
      />
    </>
  );
}
