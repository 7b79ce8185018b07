// The run page's prediction interval section (docs/uncertainty.md): nothing for a run that
// asked for none.
import { fmtEnergy, fmtTime } from "../../lib/format.js";
import { fmtCost } from "../sweeps/sweeps.js";
import { intervalSummary } from "./interval.js";

export function Interval({ interval }) {
  const summary = intervalSummary(interval, fmtTime, fmtEnergy, fmtCost);
  if (!summary) return null;
  return (
    <section aria-labelledby="run-interval-title">
      <h2 id="run-interval-title">{summary.title}</h2>
      <ul data-testid="prediction-interval">
        {summary.lines.map((l) => (
          <li key={l}>{l}</li>
        ))}
      </ul>
      {summary.sources.length > 0 && (
        <details>
          <summary>Perturbed: {summary.sources.length} quantities, drawn independently</summary>
          <ul aria-label="Perturbed quantities">
            {summary.sources.map((s) => (
              <li key={s.key}>
                {s.what}: {s.spread} (<span className="muted">{s.source}</span>)
              </li>
            ))}
          </ul>
        </details>
      )}
    </section>
  );
}
