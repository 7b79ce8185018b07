// Studies: an optimiser's search over a sweep's axes (docs/contracts.md, "Studies"): the list,
// and one study's live progress, best trials, trade-off chart of two objectives and trials,
// with Stop and Resume; the new-study form (an application's sweep form or a training
// workload's plans, with the study's fields).
// A big study's page shows its best trials and a sample of the rest (progress.shown).
import { useState } from "react";
import { get, post } from "../../lib/api.js";
import { fmt } from "../../lib/format.js";
import { Link, useToast } from "../../lib/router.jsx";
import { ErrorSummary } from "../../components/ErrorSummary.jsx";
import { GridTable } from "../../components/GridTable.jsx";
import { Loading } from "../../components/Loading.jsx";
import { Progress } from "../../components/Progress.jsx";
import { Retrying } from "../../components/Retrying.jsx";
import { useApiGet } from "../../hooks/useApiGet.js";
import { usePolling } from "../../hooks/usePolling.js";
import { SweepNew } from "../sweeps/Sweeps.jsx";
import { TradeoffChart } from "../sweeps/TradeoffChart.jsx";
import { WorkloadStudyNew } from "./WorkloadStudyNew.jsx";
import {
  bestFirst,
  shownCaption,
  studyActions,
  studyAxes,
  studyCaption,
  studyFraction,
  studyObjectives,
  tradeoffPoints,
} from "./studies.js";

// The new-study form: what to search first, an application on a system (the sweep's launch
// form with the study's fields) or a training workload's plans (WorkloadStudyNew).
export function StudyNew() {
  const [kind, setKind] = useState("application");
  const choice = <StudyKind kind={kind} onChange={setKind} />;
  return kind === "train" ? (
    <WorkloadStudyNew choice={choice} />
  ) : (
    <SweepNew study choice={choice} />
  );
}

function StudyKind({ kind, onChange }) {
  const option = (value, text) => (
    <label className="check">
      <input
        type="radio"
        name="study-kind"
        value={value}
        checked={kind === value}
        onChange={() => onChange(value)}
      />{" "}
      {text}
    </label>
  );
  return (
    <fieldset className="form-row">
      <legend>What to search</legend>
      {option("application", "An application on a system (its variables, labels, hardware)")}
      {option(
        "train",
        "A training workload's plans (model, system templates, TP, PP, micro-batch)",
      )}
    </fieldset>
  );
}

export function StudyList() {
  const { data, error } = useApiGet("/api/studies/?page_size=100");
  const studies = data && (Array.isArray(data) ? data : data.results);
  return (
    <section aria-labelledby="studies-title">
      <header className="page-head">
        <h1 id="studies-title">Studies</h1>
        <div className="actions">
          <Link className="button primary" to="/app/studies/new">
            New study
          </Link>
        </div>
      </header>
      <p className="muted">
        A study searches a sweep&apos;s axes with an optimiser (TPE, NSGA-II) for a budget of runs;
        launch one here, with <code>POST /api/studies/</code> or{" "}
        <code>python -m simulator study</code>.
      </p>
      <ErrorSummary error={error} />
      {!studies ? (
        <Loading />
      ) : (
        <GridTable label="Studies" columns={["Study", "Status", "Objectives", "Budget", "Created"]}>
          {studies.map((s) => (
            <tr key={s.id}>
              <td>
                <Link to={`/app/studies/${s.id}`}>{s.name}</Link>
              </td>
              <td>
                <span className={`status status-${s.status}`}>{s.status}</span>
              </td>
              <td>
                {studyObjectives(s)
                  .map((o) => `${o.direction} ${o.metric}`)
                  .join(", ")}
              </td>
              <td>{s.budget.runs} runs</td>
              <td>{new Date(s.created).toLocaleString()}</td>
            </tr>
          ))}
        </GridTable>
      )}
    </section>
  );
}

export function StudyDetail({ id }) {
  const toast = useToast();
  const [version, setVersion] = useState(0);
  const {
    value: study,
    error,
    retrying,
  } = usePolling(
    (signal) => get(`/api/studies/${id}/`, { signal }),
    (s) => s.status === "running" || s.progress?.running > 0,
    1000,
    `${id}-${version}`,
  );
  if (error) return <ErrorSummary error={error} />;
  if (!study) return retrying ? <Retrying error={retrying} /> : <Loading />;
  const progress = study.progress;
  const axes = studyAxes(study);
  const objectives = studyObjectives(study);
  const act = (action) =>
    post(`/api/studies/${id}/${action}/`)
      .then(() => setVersion((v) => v + 1))
      .catch((e) => toast(e.message, "error"));
  return (
    <section aria-labelledby="study-title">
      <header className="page-head">
        <h1 id="study-title">{study.name}</h1>
        <div className="actions">
          {studyActions(study).map((action) => (
            <button key={action} onClick={() => act(action)}>
              {action === "stop" ? "Stop" : "Resume"}
            </button>
          ))}
          <Link className="button" to={`/app/sweeps/${study.sweep}`}>
            Its runs as a sweep
          </Link>
        </div>
      </header>
      <p>
        <span className={`status status-${study.status}`}>{study.status}</span>{" "}
        {objectives.map((o) => `${o.direction} ${o.metric}`).join(", ")}
        {study.constraints.length > 0 && ` subject to ${study.constraints.join(", ")}`}; sampler{" "}
        {study.sampler}, seed {study.seed}, {study.parallel} at once.
      </p>
      <Progress
        value={studyFraction(progress)}
        label="Study progress"
        caption={studyCaption(progress)}
      />
      {shownCaption(progress) && (
        <p className="muted" data-testid="shown-caption">
          {shownCaption(progress)} <a href={study.trials_url}>Every trial, a page at a time</a>{" "}
          (JSON).
        </p>
      )}
      {objectives.length === 2 && (
        <TradeoffChart
          points={tradeoffPoints(progress)}
          x={objectives[0].metric}
          y={objectives[1].metric}
        />
      )}
      <h2>Trials, the best first</h2>
      <GridTable
        label="Trials"
        pageSize={50}
        columns={["Trial", ...axes, ...objectives.map((o) => o.metric), "State", "Best", "Run"]}
      >
        {bestFirst(progress).map((t) => (
          <tr key={t.number} className={t.best ? "best" : undefined}>
            <td>{t.number}</td>
            {axes.map((a) => (
              <td key={a}>{String(t.point[a] ?? "")}</td>
            ))}
            {objectives.map((o) => (
              <td key={o.metric}>{t.metrics[o.metric] == null ? "" : fmt(t.metrics[o.metric])}</td>
            ))}
            <td title={t.error || undefined}>{t.state}</td>
            <td>{t.best ? "best" : ""}</td>
            <td>
              {t.simulation ? <Link to={`/app/runs/${t.simulation}`}>#{t.simulation}</Link> : ""}
            </td>
          </tr>
        ))}
      </GridTable>
    </section>
  );
}
