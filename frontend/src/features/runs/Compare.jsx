// Two runs side by side: figures, variables, per-component busy time and energy, timelines.
import { useMemo } from "react";
import { fmt, fmtEnergy, fmtTime } from "../../lib/format.js";
import { Link, useLocation } from "../../lib/router.jsx";
import { Gantt } from "../../components/charts/Gantt.jsx";
import { ErrorSummary } from "../../components/ErrorSummary.jsx";
import { Loading } from "../../components/Loading.jsx";
import { useSimulation } from "./useSimulation.js";

export function Compare() {
  const { query } = useLocation();
  const a = useSimulation(query.get("a"));
  const b = useSimulation(query.get("b"));
  const rows = useMemo(() => {
    if (!a.sim || !b.sim) return [];
    const line = (label, f, format = String) => {
      const va = f(a);
      const vb = f(b);
      const diff =
        typeof va === "number" && typeof vb === "number" && va !== 0
          ? `${(((vb - va) / va) * 100).toFixed(1)}%`
          : "";
      return {
        label,
        a: va === undefined || va === null ? "—" : format(va),
        b: vb === undefined || vb === null ? "—" : format(vb),
        diff,
      };
    };
    const energy = (x) => x.result?.energy_j?.total;
    const out = [
      line("Status", (x) => x.sim.status),
      line("System", (x) => x.sim.snapshot?.name),
      line("Overall time", (x) => x.result?.overall_time_s, fmtTime),
      line("Energy", energy, fmtEnergy),
      line(
        "Reliability",
        (x) => x.result?.reliability?.p_success,
        (v) => fmt(v, 6),
      ),
      line("Labels", (x) =>
        Object.entries(x.sim.labels)
          .map(([k, v]) => `${k}=${v}`)
          .join(", "),
      ),
    ];
    const vars = new Set([...Object.keys(a.sim.variables), ...Object.keys(b.sim.variables)]);
    vars.forEach((v) => out.push(line(`Variable ${v}`, (x) => x.sim.variables[v])));
    const comps = new Set(
      [...(a.result?.components || []), ...(b.result?.components || [])].map(
        (c) => `${c.node}[${c.instance}]`,
      ),
    );
    comps.forEach((key) => {
      const find = (x) =>
        (x.result?.components || []).find((c) => `${c.node}[${c.instance}]` === key);
      const shown = find(a) || find(b);
      const name = shown?.name ? `${shown.name}[${shown.instance}]` : key;
      out.push(line(`${name} hardware`, (x) => find(x)?.hardware));
      out.push(line(`${name} busy`, (x) => find(x)?.busy_s, fmtTime));
      out.push(line(`${name} energy`, (x) => find(x)?.energy_j, fmtEnergy));
    });
    return out;
  }, [a, b]);
  const pending = (x) => !x.sim || (x.sim.status === "succeeded" && !x.result);
  if (a.error || b.error) return <ErrorSummary error={a.error || b.error} />;
  if (pending(a) || pending(b)) return <Loading />;
  return (
    <section aria-labelledby="cmp-title">
      <header className="page-head">
        <h1 id="cmp-title">Compare runs</h1>
      </header>
      <table className="grid compare" aria-label="Comparison of two runs">
        <thead>
          <tr>
            <th />
            <th>
              <Link to={`/app/runs/${a.sim.id}`}>{a.sim.name || `Simulation ${a.sim.id}`}</Link>
            </th>
            <th>
              <Link to={`/app/runs/${b.sim.id}`}>{b.sim.name || `Simulation ${b.sim.id}`}</Link>
            </th>
            <th>B vs A</th>
          </tr>
        </thead>
        <tbody>
          {rows.map((r) => (
            <tr key={r.label} className={r.a !== r.b ? "differs" : ""}>
              <th scope="row">{r.label}</th>
              <td>{r.a}</td>
              <td>{r.b}</td>
              <td>{r.diff}</td>
            </tr>
          ))}
        </tbody>
      </table>
      <div className="two-col">
        <div>
          <h2>A: timeline</h2>
          {a.result ? (
            <Gantt timeline={a.result.timeline} width={600} />
          ) : (
            <p className="muted">No result.</p>
          )}
        </div>
        <div>
          <h2>B: timeline</h2>
          {b.result ? (
            <Gantt timeline={b.result.timeline} width={600} />
          ) : (
            <p className="muted">No result.</p>
          )}
        </div>
      </div>
    </section>
  );
}
