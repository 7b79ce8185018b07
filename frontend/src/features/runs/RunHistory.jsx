// The run history; two ticked runs open the comparison.
import { useState } from "react";
import { fmtEnergy, fmtTime } from "../../lib/format.js";
import { Link, navigate, useLocation } from "../../lib/router.jsx";
import { ErrorSummary } from "../../components/ErrorSummary.jsx";
import { GridTable } from "../../components/GridTable.jsx";
import { Loading } from "../../components/Loading.jsx";
import { useApiGet } from "../../hooks/useApiGet.js";

export function RunHistory() {
  const { query } = useLocation();
  const { data, error } = useApiGet("/api/simulations/?page_size=100");
  const runs = data && (Array.isArray(data) ? data : data.results);
  const [picked, setPicked] = useState(query.get("compare") ? [query.get("compare")] : []);
  const toggle = (id) =>
    setPicked((p) => (p.includes(id) ? p.filter((x) => x !== id) : [...p, id].slice(-2)));
  return (
    <section aria-labelledby="runs-title">
      <header className="page-head">
        <h1 id="runs-title">Run history</h1>
        <div className="actions">
          <button
            className="primary"
            disabled={picked.length !== 2}
            onClick={() => navigate(`/app/compare?a=${picked[0]}&b=${picked[1]}`)}
          >
            Compare the two selected
          </button>
          <button onClick={() => navigate("/app/launch")}>New launch</button>
        </div>
      </header>
      <p className="hint">Tick two runs to compare them side by side.</p>
      <ErrorSummary error={error} />
      {!runs ? (
        <Loading />
      ) : (
        <GridTable
          label="Simulations"
          columns={["Compare", "Run", "Status", "Overall time", "Energy", "Queue", "Launched"]}
        >
          {runs.map((r) => (
            <tr key={r.id}>
              <td>
                <input
                  type="checkbox"
                  aria-label={`Select run ${r.id} for comparison`}
                  checked={picked.includes(String(r.id))}
                  onChange={() => toggle(String(r.id))}
                />
              </td>
              <td>
                <Link to={`/app/runs/${r.id}`}>{r.name || `Simulation ${r.id}`}</Link>
              </td>
              <td>
                <span className={`status status-${r.status}`}>{r.status}</span>
                {r.status === "running" ? ` ${Math.round(100 * r.progress)}%` : ""}
              </td>
              <td className="nowrap">{fmtTime(r.overall_time_s)}</td>
              <td className="nowrap">{fmtEnergy(r.energy_j)}</td>
              <td>{r.queue}</td>
              <td>{new Date(r.created).toLocaleString()}</td>
            </tr>
          ))}
        </GridTable>
      )}
    </section>
  );
}
