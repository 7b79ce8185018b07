// Launch screen, live progress, results, run history and the side-by-side comparison.
import { useEffect, useMemo, useState } from "react";
import { get, getAll, post } from "../api.js";
import { Link, navigate, useLocation, useToast } from "../router.jsx";
import { Bars, CodeEditor, ErrorSummary, FieldErrors, Gantt, Loading, Progress, errorId, fmt, fmtEnergy, fmtTime, usePolling } from "../ui.jsx";
import { MemoryHierarchy, memoryNames, memoryText } from "../components/MemoryHierarchy.jsx";

const FINAL = ["succeeded", "failed", "cancelled"];

// Return the label names of a system graph with their capacity (multiplicity x count).
export function graphLabels(graph) {
  const caps = {};
  (graph?.nodes || []).forEach((n) => {
    Object.entries(n.labels || {}).forEach(([label, mult]) => {
      caps[label] = (caps[label] || 0) + Number(mult || 0) * Number(n.count || 1);
    });
  });
  return caps;
}

export function coerce(type, text) {
  if (type === "int") return /^-?\d+$/.test(String(text).trim()) ? Number(text) : text;
  if (type === "float") return String(text).trim() !== "" && !Number.isNaN(Number(text)) ? Number(text) : text;
  if (type === "bool") return text === true || text === "true";
  return text;
}

export function useLaunchChoices(query) {
  const [systems, setSystems] = useState(null);
  const [apps, setApps] = useState(null);
  const [queues, setQueues] = useState([]);
  const [systemId, setSystemId] = useState(query.get("system") || "");
  const [appId, setAppId] = useState(query.get("application") || "");
  const [error, setError] = useState(null);
  useEffect(() => {
    getAll("/api/systems/?page_size=200").then((s) => {
      setSystems(s);
      if (!query.get("system") && s.length) setSystemId(String(s[0].id));
    }, setError);
    getAll("/api/applications/?page_size=200").then((a) => {
      setApps(a);
      if (!query.get("application") && a.length) setAppId(String(a[0].id));
    }, setError);
    get("/api/queues/").then(setQueues, () => setQueues([]));
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, []);
  const system = systems?.find((s) => String(s.id) === String(systemId));
  const app = apps?.find((a) => String(a.id) === String(appId));
  return { systems, apps, queues, systemId, setSystemId, appId, setAppId, system, app, error };
}

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
    if (c.app) setVariables(Object.fromEntries((c.app.variables || []).map((v) => [v.name, String(v.default ?? "")])));
  }, [c.app]);
  useEffect(() => {
    if (c.system) setLabels(Object.fromEntries(Object.keys(graphLabels(c.system.graph)).map((l) => [l, "1"])));
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
      variables: Object.fromEntries(Object.entries(variables).map(([k, v]) => [k, coerce(types[k] || "str", v)])),
      labels: Object.fromEntries(Object.entries(labels).map(([k, v]) => [k, /^\d+$/.test(v) ? Number(v) : v])),
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
      <header className="page-head"><h1 id="launch-title">Launch a simulation</h1></header>
      <ErrorSummary error={error} shown={["system_model", "application", "variables", "labels", "queue", "seed", "name"]} />
      <form className="launch-form" onSubmit={launch} aria-label="Launch a simulation">
        <div className="form-grid">
          <label className={`field${errors.system_model ? " invalid" : ""}`}><span className="field-label">System model</span>
            <select aria-label="System model" value={c.systemId} onChange={(e) => c.setSystemId(e.target.value)}>
              {c.systems.map((s) => <option key={s.id} value={s.id}>{s.name}</option>)}
            </select>
            <FieldErrors errors={errors} path="system_model" />
          </label>
          <label className={`field${errors.application ? " invalid" : ""}`}><span className="field-label">Application model</span>
            <select aria-label="Application model" value={c.appId} onChange={(e) => c.setAppId(e.target.value)}>
              {c.apps.map((a) => <option key={a.id} value={a.id}>{a.name}</option>)}
            </select>
            <FieldErrors errors={errors} path="application" />
          </label>
          <label className="field"><span className="field-label">Run name (optional)</span>
            <input aria-label="Run name" value={name} onChange={(e) => setName(e.target.value)} />
          </label>
          <label className={`field${errors.queue ? " invalid" : ""}`}><span className="field-label">Queue</span>
            <select aria-label="Queue" value={queue} onChange={(e) => setQueue(e.target.value)}>
              {c.queues.length === 0 && <option value="">server default (loading queues…)</option>}
              {c.queues.map((q) => <option key={q.name} value={q.name}>{q.name}{q.workers?.length ? ` (${q.workers.length} worker${q.workers.length > 1 ? "s" : ""})` : " (no worker seen)"}</option>)}
            </select>
            <FieldErrors errors={errors} path="queue" />
          </label>
          <label className={`field${errors.seed ? " invalid" : ""}`}><span className="field-label">Seed</span>
            <input aria-label="Seed" value={seed} onChange={(e) => setSeed(e.target.value)} />
            <FieldErrors errors={errors} path="seed" />
          </label>
        </div>
        <div className="two-col">
          <fieldset>
            <legend>Variables</legend>
            {Object.keys(variables).length === 0 && <p className="muted">The application declares no variables.</p>}
            {(c.app?.variables || []).map((v) => (
              <label key={v.name} className={`field inline${errors[`variables.${v.name}`] ? " invalid" : ""}`}>
                <span className="field-label">{v.name} <span className="muted">({v.type})</span></span>
                <input aria-label={`Variable ${v.name}`} value={variables[v.name] ?? ""} aria-invalid={Boolean(errors[`variables.${v.name}`])} aria-describedby={errors[`variables.${v.name}`] ? errorId(`variables.${v.name}`) : undefined} onChange={(e) => setVariables({ ...variables, [v.name]: e.target.value })} />
                <FieldErrors errors={errors} path={`variables.${v.name}`} />
              </label>
            ))}
            <FieldErrors errors={errors} path="variables" />
          </fieldset>
          <fieldset>
            <legend>Label counts (processes per label)</legend>
            {Object.keys(labels).length === 0 && <p className="muted">The system model has no labels.</p>}
            {Object.keys(labels).map((l) => (
              <label key={l} className={`field inline${errors[`labels.${l}`] ? " invalid" : ""}`}>
                <span className="field-label">{l} <span className="muted">(capacity {caps[l]})</span></span>
                <input aria-label={`Processes with label ${l}`} value={labels[l]} aria-invalid={Boolean(errors[`labels.${l}`])} aria-describedby={errors[`labels.${l}`] ? errorId(`labels.${l}`) : undefined} onChange={(e) => setLabels({ ...labels, [l]: e.target.value })} />
                <FieldErrors errors={errors} path={`labels.${l}`} />
              </label>
            ))}
            <FieldErrors errors={errors} path="labels" />
          </fieldset>
        </div>
        <button type="submit" className="primary big" disabled={busy}>Launch</button>
      </form>
    </section>
  );
}

// Poll one simulation until it is final (with its result once it succeeded).
export function useSimulation(id) {
  const load = async () => {
    const sim = await get(`/api/simulations/${id}/`);
    return { sim, result: sim.status === "succeeded" ? await get(sim.result_url) : null };
  };
  const { value, error, retrying } = usePolling(load, (v) => !FINAL.includes(v.sim.status), 600, id);
  return { sim: value?.sim ?? null, result: value?.result ?? null, error, retrying };
}

// Say that the live view lost the server and keeps trying.
export function Retrying({ error }) {
  if (!error) return null;
  return <p className="note" role="status" data-testid="retrying">{error.message} Retrying…</p>;
}

// Kernel (compute), transfer and memory-hierarchy intervals of the timeline, the figures the
// MERPSYS tour reads.
export function phases(result) {
  return (result?.timeline || [])
    .filter((t) => t.kind === "compute" || t.kind === "memory" || (t.kind === "transfer" && (t.size || 0) > 0))
    .map((t) => ({ ...t, duration: t.end_s - t.start_s }));
}

// What bounds a kernel and the occupancy it ran at, from its model's computationDetail;
// for the petri and waves kernel modes what they simulated (docs/kernel-modes.md).
export function boundText(detail) {
  if (!detail) return "";
  const steps = (n) => (Number.isInteger(n) ? String(n) : n.toFixed(1));
  let head = detail.bound ? String(detail.bound).replace("_", " ") : "";
  if (detail.mode === "petri" && typeof detail.steps === "number") {
    head = `Petri net, ${steps(detail.steps)} steps (${steps(detail.idleSteps)} idle)`;
  } else if (!head && detail.mode === "waves") {
    head = "block waves";
  }
  if (!head) return "";
  const occupancy = typeof detail.occupancy === "number" ? `, ${detail.occupancy} warps/SM` : "";
  const waves = typeof detail.waves === "number" ? `, ${detail.waves} wave${detail.waves === 1 ? "" : "s"}` : "";
  const perWave = typeof detail.waveTime === "number" ? `; ${detail.blocksPerWave} blocks per wave × ${fmtTime(detail.waveTime)}` : "";
  let tail = "";
  if (detail.mode === "detailed" && typeof detail.analyticTime === "number") {
    tail = `; block by block, formula ${fmtTime(detail.analyticTime)}${typeof detail.smBusyMin === "number" ? `, SMs busy ${Math.round(detail.smBusyMin * 100)}-${Math.round(detail.smBusyMax * 100)} %` : ""}`;
  } else if (detail.mode === "petri") {
    tail = `${perWave}${typeof detail.smClockMHz === "number" ? ` at ${detail.smClockMHz} MHz` : ""}`;
  } else if (detail.mode === "waves") {
    tail = `${perWave}${typeof detail.analyticTime === "number" ? `, formula ${fmtTime(detail.analyticTime)}` : ""}`;
  }
  return `${head}${occupancy}${waves}${tail}`;
}

export function RunDetail({ id }) {
  const toast = useToast();
  const { sim, result, error, retrying } = useSimulation(id);
  if (error) return <ErrorSummary error={error} />;
  if (!sim) return retrying ? <Retrying error={retrying} /> : <Loading />;
  const failed = sim.status === "failed";
  const err = sim.error || {};
  return (
    <section aria-labelledby="run-title">
      <header className="page-head">
        <h1 id="run-title">{sim.name || `Simulation ${sim.id}`}</h1>
        <div className="actions">
          {!FINAL.includes(sim.status) && <button onClick={() => post(`/api/simulations/${id}/cancel/`).catch((e) => toast(e.message, "error"))}>Cancel</button>}
          {result && <a className="button" href={sim.result_url} download>Download result JSON</a>}
          {sim.application && <button onClick={() => navigate(`/app/applications/${sim.application}`)}>Edit application model</button>}
          <button onClick={() => navigate(`/app/runs?compare=${id}`)}>Compare with…</button>
        </div>
      </header>
      <p className="muted">
        <span className={`status status-${sim.status}`} data-testid="run-status">{sim.status}</span> · queue {sim.queue} · labels {Object.entries(sim.labels).map(([k, v]) => `${k}=${v}`).join(", ")} · variables {Object.entries(sim.variables).map(([k, v]) => `${k}=${v}`).join(", ")}
      </p>
      <Retrying error={retrying} />
      {!FINAL.includes(sim.status) && <Progress value={sim.progress} label="Simulation progress" />}
      {failed && (
        <div className="error-box" role="alert">
          <strong>The simulation failed{err.line ? ` at line ${err.line}` : ""}{err.kind ? ` (${err.kind})` : ""}.</strong>
          <pre>{err.message}</pre>
        </div>
      )}
      {failed && err.kind === "user_code" && <FrozenSource id={id} line={err.line} message={err.detail || err.message} />}
      {result && <Results result={result} memoryCsvUrl={sim.memory_csv_url} />}
    </section>
  );
}

function FrozenSource({ id, line, message }) {
  const [source, setSource] = useState(null);
  useEffect(() => {
    get(`/api/simulations/${id}/`).then((s) => setSource(s.app_source), () => setSource(null));
  }, [id]);
  if (source === null) return null;
  return (
    <>
      <h2>Application model as launched</h2>
      <CodeEditor language="python" label="Application model as launched" value={source} readOnly errorLine={line} errorMessage={message} />
    </>
  );
}

const PHASE_KINDS = { compute: "kernel (compute)", transfer: "transfer", memory: "memory access" };

export function Results({ result, memoryCsvUrl }) {
  const energy = typeof result.energy_j === "object" ? result.energy_j : { total: result.energy_j, per_component: {} };
  const ph = phases(result);
  const components = result.components || [];
  const nodeName = Object.fromEntries(components.map((c) => [c.node, c.name || c.node]));
  const energyItems = components.filter((c) => c.energy_j > 0).map((c) => ({ label: `${c.name || c.node}[${c.instance}]`, value: c.energy_j }));
  const memoryName = memoryNames(result.memory);
  const hasMemoryPhases = ph.some((t) => t.kind === "memory");
  const showMemoryTime = Boolean(result.memory) || (result.processes || []).some((p) => p.memory_s > 0);
  return (
    <div className="results">
      <div className="cards">
        <div className="card"><span className="card-label">Overall time</span><strong data-testid="overall-time">{fmtTime(result.overall_time_s)}</strong></div>
        <div className="card"><span className="card-label">Energy</span><strong data-testid="energy">{fmtEnergy(energy.total)}</strong></div>
        <div className="card"><span className="card-label">Reliability (P success)</span><strong data-testid="reliability">{fmt(result.reliability?.p_success, 6)}</strong></div>
        <div className="card"><span className="card-label">Events</span><strong>{result.stats?.events ?? "—"}</strong></div>
      </div>
      <h2>{hasMemoryPhases ? "Kernel, transfer and memory times" : "Kernel and transfer times"}</h2>
      <table className="grid" aria-label="Kernel and transfer times">
        <thead><tr><th>Process</th><th>Kind</th><th>Node</th><th>Direction</th><th>Bytes</th><th>{hasMemoryPhases ? "Bound by / detail" : "Bound by"}</th><th>Start</th><th>Duration</th></tr></thead>
        <tbody>
          {ph.map((t, i) => (
            <tr key={i} data-kind={t.kind}>
              <td>{t.process}</td><td>{PHASE_KINDS[t.kind]}</td><td>{t.node ? `${nodeName[t.node] || t.node}[${t.instance ?? 0}]` : ""}</td><td>{t.direction || ""}</td>
              <td>{t.size ? fmt(t.size) : ""}</td><td data-testid={`bound-${i}`}>{t.kind === "memory" ? memoryText(t.detail, memoryName) : boundText(t.detail)}</td><td>{fmtTime(t.start_s)}</td><td className="num" data-testid={`phase-${i}`}>{fmtTime(t.duration)}</td>
            </tr>
          ))}
        </tbody>
      </table>
      <h2>Timeline</h2>
      <Gantt timeline={result.timeline} />
      <div className="two-col">
        <div>
          <h2>Processes</h2>
          <table className="grid" aria-label="Processes">
            <thead><tr><th>Process</th><th>Node</th><th>Compute</th>{showMemoryTime && <th>Memory</th>}<th>Comm.</th><th>Wait</th><th>Finish</th></tr></thead>
            <tbody>
              {(result.processes || []).map((p) => (
                <tr key={p.process || `${p.label}${p.rank}`}><td>{p.process || `${p.label}[${p.rank}]`}</td><td>{nodeName[p.node] || p.node}[{p.instance}]</td><td>{fmtTime(p.compute_s)}</td>{showMemoryTime && <td>{fmtTime(p.memory_s)}</td>}<td>{fmtTime(p.comm_s)}</td><td>{fmtTime(p.wait_s)}</td><td>{fmtTime(p.finish_s)}</td></tr>
              ))}
            </tbody>
          </table>
        </div>
        <div>
          <h2>Energy breakdown</h2>
          <Bars items={energyItems} format={fmtEnergy} label="Energy per component" width={520} />
        </div>
      </div>
      {result.memory && <MemoryHierarchy memory={result.memory} csvUrl={memoryCsvUrl} />}
      <h2>Components</h2>
      <table className="grid" aria-label="Components">
        <thead><tr><th>Node</th><th>Hardware</th><th>Type</th><th>Busy</th><th>Utilisation</th><th>Energy</th></tr></thead>
        <tbody>
          {components.map((c) => (
            <tr key={`${c.node}-${c.instance}`}><td>{c.name || c.node}[{c.instance}]</td><td>{c.hardware}</td><td>{c.type}</td><td>{fmtTime(c.busy_s)}</td><td>{(100 * (c.utilisation || 0)).toFixed(1)}%</td><td>{fmtEnergy(c.energy_j)}</td></tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}

export function RunHistory() {
  const { query } = useLocation();
  const [runs, setRuns] = useState(null);
  const [error, setError] = useState(null);
  const [picked, setPicked] = useState(query.get("compare") ? [query.get("compare")] : []);
  useEffect(() => {
    get("/api/simulations/?page_size=100").then((d) => setRuns(Array.isArray(d) ? d : d.results), setError);
  }, []);
  const toggle = (id) => setPicked((p) => (p.includes(id) ? p.filter((x) => x !== id) : [...p, id].slice(-2)));
  return (
    <section aria-labelledby="runs-title">
      <header className="page-head">
        <h1 id="runs-title">Run history</h1>
        <div className="actions">
          <button className="primary" disabled={picked.length !== 2} onClick={() => navigate(`/app/compare?a=${picked[0]}&b=${picked[1]}`)}>Compare the two selected</button>
          <button onClick={() => navigate("/app/launch")}>New launch</button>
        </div>
      </header>
      <p className="hint">Tick two runs to compare them side by side.</p>
      <ErrorSummary error={error} />
      {!runs ? <Loading /> : (
        <table className="grid" aria-label="Simulations">
          <thead><tr><th>Compare</th><th>Run</th><th>Status</th><th>Overall time</th><th>Energy</th><th>Queue</th><th>Launched</th></tr></thead>
          <tbody>
            {runs.map((r) => (
              <tr key={r.id}>
                <td><input type="checkbox" aria-label={`Select run ${r.id} for comparison`} checked={picked.includes(String(r.id))} onChange={() => toggle(String(r.id))} /></td>
                <td><Link to={`/app/runs/${r.id}`}>{r.name || `Simulation ${r.id}`}</Link></td>
                <td><span className={`status status-${r.status}`}>{r.status}</span>{r.status === "running" ? ` ${Math.round(100 * r.progress)}%` : ""}</td>
                <td className="nowrap">{fmtTime(r.overall_time_s)}</td>
                <td className="nowrap">{fmtEnergy(r.energy_j)}</td>
                <td>{r.queue}</td>
                <td>{new Date(r.created).toLocaleString()}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </section>
  );
}

export function Compare() {
  const { query } = useLocation();
  const a = useSimulation(query.get("a"));
  const b = useSimulation(query.get("b"));
  const rows = useMemo(() => {
    if (!a.sim || !b.sim) return [];
    const line = (label, f, format = String) => {
      const va = f(a);
      const vb = f(b);
      const diff = typeof va === "number" && typeof vb === "number" && va !== 0 ? `${(((vb - va) / va) * 100).toFixed(1)}%` : "";
      return { label, a: va === undefined || va === null ? "—" : format(va), b: vb === undefined || vb === null ? "—" : format(vb), diff };
    };
    const energy = (x) => (typeof x.result?.energy_j === "object" ? x.result.energy_j.total : x.result?.energy_j);
    const out = [
      line("Status", (x) => x.sim.status),
      line("System", (x) => x.sim.snapshot?.name),
      line("Overall time", (x) => x.result?.overall_time_s, fmtTime),
      line("Energy", energy, fmtEnergy),
      line("Reliability", (x) => x.result?.reliability?.p_success, (v) => fmt(v, 6)),
      line("Labels", (x) => Object.entries(x.sim.labels).map(([k, v]) => `${k}=${v}`).join(", ")),
    ];
    const vars = new Set([...Object.keys(a.sim.variables), ...Object.keys(b.sim.variables)]);
    vars.forEach((v) => out.push(line(`Variable ${v}`, (x) => x.sim.variables[v])));
    const comps = new Set([...(a.result?.components || []), ...(b.result?.components || [])].map((c) => `${c.node}[${c.instance}]`));
    comps.forEach((key) => {
      const find = (x) => (x.result?.components || []).find((c) => `${c.node}[${c.instance}]` === key);
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
      <header className="page-head"><h1 id="cmp-title">Compare runs</h1></header>
      <table className="grid compare" aria-label="Comparison of two runs">
        <thead><tr><th /><th><Link to={`/app/runs/${a.sim.id}`}>{a.sim.name || `Simulation ${a.sim.id}`}</Link></th><th><Link to={`/app/runs/${b.sim.id}`}>{b.sim.name || `Simulation ${b.sim.id}`}</Link></th><th>B vs A</th></tr></thead>
        <tbody>
          {rows.map((r) => (
            <tr key={r.label} className={r.a !== r.b ? "differs" : ""}><th scope="row">{r.label}</th><td>{r.a}</td><td>{r.b}</td><td>{r.diff}</td></tr>
          ))}
        </tbody>
      </table>
      <div className="two-col">
        <div><h2>A: timeline</h2>{a.result ? <Gantt timeline={a.result.timeline} width={600} /> : <p className="muted">No result.</p>}</div>
        <div><h2>B: timeline</h2>{b.result ? <Gantt timeline={b.result.timeline} width={600} /> : <p className="muted">No result.</p>}</div>
      </div>
    </section>
  );
}
