// On a sweep's page: search the same axes with an optimiser instead of the grid (a study,
// docs/contracts.md), for the trade-off's objectives and constraints and a budget of runs.
import { useState } from "react";
import { post } from "../../lib/api.js";
import { navigate } from "../../lib/router.jsx";
import { ErrorSummary } from "../../components/ErrorSummary.jsx";
import { InlineField } from "../../components/InlineField.jsx";
import { studyFromSweep } from "./studies.js";

export function SearchAsStudy({ sweep, objectives, constraints }) {
  const [runs, setRuns] = useState(20);
  const [parallel, setParallel] = useState(2);
  const [error, setError] = useState(null);
  const body = studyFromSweep(sweep, { objectives, constraints, runs, parallel });
  if (!body || sweep.access === "shared") return null;
  const submit = (event) => {
    event.preventDefault();
    post("/api/studies/", body).then((study) => navigate(`/app/studies/${study.id}`), setError);
  };
  return (
    <details className="panel">
      <summary>Search these axes with an optimiser</summary>
      <form onSubmit={submit} aria-label="Search as a study">
        <p className="muted">
          A study runs only a budget of points, each chosen from the results so far (TPE for one
          objective, NSGA-II for these two: {body.objectives.map((o) => o.metric).join(", ")}).
        </p>
        <ErrorSummary error={error} />
        <div className="form-row">
          <InlineField label="Runs" errors={error?.fields} path="budget.runs">
            <input type="number" min={1} value={runs} onChange={(e) => setRuns(e.target.value)} />
          </InlineField>
          <InlineField label="At once" errors={error?.fields} path="parallel">
            <input
              type="number"
              min={1}
              value={parallel}
              onChange={(e) => setParallel(e.target.value)}
            />
          </InlineField>
          <button type="submit">Start the study</button>
        </div>
      </form>
    </details>
  );
}
