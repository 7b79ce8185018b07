// Two or more runs side by side: what they ran with (the hardware in each node included), a
// table of differences (kernel, transfer and wait time, energy per node with the hardware in
// it) against the first run, and their timelines on one time axis.
import { useMemo } from "react";
import { get } from "../../lib/api.js";
import { fmtTime } from "../../lib/format.js";
import { Link, useLocation } from "../../lib/router.jsx";
import { Gantt } from "../../components/charts/Gantt.jsx";
import { ganttInput } from "../../components/charts/ganttLayout.js";
import { ErrorSummary } from "../../components/ErrorSummary.jsx";
import { Loading } from "../../components/Loading.jsx";
import { usePolling } from "../../hooks/usePolling.js";
import {
  commonEnd,
  differenceRows,
  energyMismatch,
  hardwareRows,
  includesRows,
  runNodes,
} from "./compare.js";
import { COMPARE_LIMIT, compareIds } from "./runQuery.js";
import { FINAL } from "./runs.js";

// Poll the runs until each is final, with the result of each that succeeded.
function useRuns(ids) {
  const load = (signal) =>
    Promise.all(
      ids.map(async (id) => {
        const sim = await get(`/api/simulations/${id}/`, { signal });
        const result = sim.status === "succeeded" ? await get(sim.result_url, { signal }) : null;
        return { sim, result };
      }),
    );
  const keepGoing = (runs) => runs.some((r) => !FINAL.includes(r.sim.status));
  const { value, error } = usePolling(load, keepGoing, 1000, ids.join(","));
  return { runs: value, error };
}

const title = (sim) => sim.name || `Simulation ${sim.id}`;

export function Compare() {
  const { query } = useLocation();
  const ids = compareIds(query);
  const { runs, error } = useRuns(ids);
  const table = useMemo(() => {
    if (!runs) return null;
    const setting = (label, read) => ({
      label,
      values: runs.map((r) => {
        const v = read(r.sim);
        return v === undefined || v === null || v === "" ? "—" : String(v);
      }),
    });
    const variables = [...new Set(runs.flatMap((r) => Object.keys(r.sim.variables || {})))];
    return {
      settings: [
        setting("Status", (s) => s.status),
        setting("System", (s) => s.system_name || s.snapshot?.name),
        setting("Application", (s) => s.application_name),
        setting("Labels", (s) =>
          Object.entries(s.labels || {})
            .map(([k, v]) => `${k}=${v}`)
            .join(", "),
        ),
        ...variables.map((v) => setting(`Variable ${v}`, (s) => s.variables?.[v])),
        setting("Seed", (s) => s.seed),
        ...hardwareRows(runs.map((r) => runNodes(r.result, r.sim.snapshot))),
      ],
      differences: differenceRows(runs.map((r) => r.result)),
      mismatch: energyMismatch(runs.map((r) => r.result)),
      includes: includesRows(runs.map((r) => r.result)),
      end: commonEnd(runs.map((r) => r.result)),
    };
  }, [runs]);
  if (ids.length < 2) {
    return (
      <ErrorSummary
        error={{
          message: `Pick two to ${COMPARE_LIMIT} runs to compare in the run history (runs=… names them).`,
        }}
      />
    );
  }
  if (error) return <ErrorSummary error={error} />;
  if (!runs || !table) return <Loading />;
  const heads = runs.map((r, i) => (
    <th key={r.sim.id} scope="col">
      <Link to={`/app/runs/${r.sim.id}`}>{title(r.sim)}</Link>
      {i === 0 && <span className="muted"> (base)</span>}
    </th>
  ));
  return (
    <section aria-labelledby="cmp-title">
      <header className="page-head">
        <h1 id="cmp-title">Compare {runs.length} runs</h1>
      </header>
      <table className="grid compare" aria-label="Settings of the compared runs">
        <thead>
          <tr>
            <th />
            {heads}
          </tr>
        </thead>
        <tbody>
          {table.settings.map((row, index) => (
            <tr
              key={`${index}-${row.label}`}
              className={new Set(row.values).size > 1 ? "differs" : ""}
            >
              <th scope="row">{row.label}</th>
              {row.values.map((v, i) => (
                <td key={i}>{v}</td>
              ))}
            </tr>
          ))}
        </tbody>
      </table>
      <h2>Differences against {title(runs[0].sim)}</h2>
      {table.mismatch && (
        <div className="notice warning" role="note" aria-label="Energy accountings differ">
          <strong>Energies not comparable.</strong> {table.mismatch.text}
        </div>
      )}
      <table className="grid compare" aria-label="Differences between the runs">
        <thead>
          <tr>
            <th />
            {heads}
          </tr>
        </thead>
        <tbody>
          {table.differences.map((row) => (
            <tr key={row.label} className={row.incomparable ? "incomparable" : ""}>
              <th scope="row">{row.label}</th>
              {row.values.map((v, i) => (
                <td key={i} className="nowrap">
                  {v}
                  {row.incomparable && v !== "—" && (
                    <span className="muted"> (other accounting: not comparable)</span>
                  )}
                  {row.changes[i] && <span className="change"> ({row.changes[i]})</span>}
                  {row.hardware?.[i] && (
                    <span className="muted hardware-name"> on {row.hardware[i]}</span>
                  )}
                </td>
              ))}
            </tr>
          ))}
        </tbody>
      </table>
      {table.includes.length > 0 && (
        <>
          <h2>What each energy includes</h2>
          <table className="grid compare" aria-label="What each energy includes">
            <thead>
              <tr>
                <th />
                {heads}
              </tr>
            </thead>
            <tbody>
              {table.includes.map((row) => (
                <tr key={row.label}>
                  <th scope="row">{row.label}</th>
                  {row.values.map((v, i) => (
                    <td key={i}>{v}</td>
                  ))}
                </tr>
              ))}
            </tbody>
          </table>
        </>
      )}
      <h2>Timelines on one axis, 0 to {fmtTime(table.end)}</h2>
      <div className="compare-timelines">
        {runs.map((r) => (
          <div key={r.sim.id}>
            <h3>{title(r.sim)}</h3>
            {r.result ? (
              <Gantt {...ganttInput(r.result)} overallTime={table.end} width={600} />
            ) : (
              <p className="muted">No result ({r.sim.status}).</p>
            )}
          </div>
        ))}
      </div>
    </section>
  );
}
