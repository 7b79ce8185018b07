// The Workloads page (issue 43 item 4): an LLM training step, or a batch of inference
// requests, on a cluster template, launched as runs (POST /api/workloads/), its figures read
// back once the runs have finished, and a TP x PP sweep of which training plans fit the GPU's
// memory (POST /api/workloads/sweep/); or a stream of requests served with continuous
// batching (POST /api/workloads/serve/), its latency percentiles, throughput and saturating
// arrival rate.
import { useState } from "react";
import { ErrorSummary } from "../../components/ErrorSummary.jsx";
import { InlineField } from "../../components/InlineField.jsx";
import { Loading } from "../../components/Loading.jsx";
import { useApiGet } from "../../hooks/useApiGet.js";
import { usePolling } from "../../hooks/usePolling.js";
import { get, post } from "../../lib/api.js";
import { fmt, fmtBytes, fmtTime } from "../../lib/format.js";
import { Link, navigate } from "../../lib/router.jsx";
import {
  FIELD_NAMES,
  FINAL_STATUSES,
  INFER_FIELDS,
  INITIAL,
  MODEL_FIELDS,
  PLAN_FIELDS,
  SERVE_DECIMAL,
  SERVE_FIELDS,
  SERVE_HINTS,
  compareBody,
  memoryRows,
  modelText,
  percentileRows,
  planBody,
  serveBody,
  systemLinksText,
  systemText,
} from "./workloads.js";

const SWEEP_TP = [1, 2, 4, 8];
const SWEEP_PP = [1, 2, 4, 8, 16];

export function Workloads() {
  const presets = useApiGet("/api/workloads/presets/");
  const [form, setForm] = useState(INITIAL);
  const [error, setError] = useState(null);
  const [launched, setLaunched] = useState(null);
  const [busy, setBusy] = useState(false);
  const [sweep, setSweep] = useState(null);
  const [served, setServed] = useState(null);
  if (presets.error) return <ErrorSummary error={presets.error} />;
  if (!presets.data) return <Loading />;
  const { models, systems, choices } = presets.data;
  const fields = error?.fields || {};
  const training = form.kind === "train";
  const serving = form.kind === "serve";
  const set = (key) => (e) => setForm({ ...form, [key]: e.target.value });
  const setCustom = (key) => (e) =>
    setForm({ ...form, custom: { ...form.custom, [key]: e.target.value } });

  const launch = async (e) => {
    e.preventDefault();
    setBusy(true);
    setError(null);
    setLaunched(null);
    setServed(null);
    try {
      if (serving) setServed(await post("/api/workloads/serve/", serveBody(form)));
      else setLaunched(await post("/api/workloads/", planBody(form)));
    } catch (caught) {
      setError(caught);
    } finally {
      setBusy(false);
    }
  };

  // One request for the whole grid: the server checks every plan by the rule the command
  // line's `--axis` uses and answers each one's basis or the field and reason it is refused.
  const runSweep = async () => {
    setSweep({ rows: [], running: true });
    setError(null);
    try {
      const body = { ...planBody(form), axes: { pp: SWEEP_PP, tp: SWEEP_TP } };
      const answer = await post("/api/workloads/sweep/", body);
      const rows = answer.points.map(({ point, basis, invalid }) =>
        invalid
          ? {
              tp: point.tp,
              pp: point.pp,
              refused: `${FIELD_NAMES[invalid.field] || invalid.field}: ${invalid.reason}`,
            }
          : { tp: point.tp, pp: point.pp, memory: basis.memory_per_gpu_bytes },
      );
      setSweep({ rows, running: false });
    } catch (caught) {
      setSweep(null);
      setError(caught);
    }
  };

  return (
    <section aria-labelledby="workloads-title">
      <header className="page-head">
        <h1 id="workloads-title">Workloads</h1>
        <p className="muted">
          An LLM training step on a cluster, simulated rank by rank as a run (docs/workloads.md).
        </p>
      </header>
      <ErrorSummary error={error} names={(path) => FIELD_NAMES[path] || path} />
      <form onSubmit={launch} aria-label="Training plan">
        <div className="form-grid">
          <InlineField label="Model" errors={fields} path="model">
            <select aria-label="Model" value={form.model} onChange={set("model")}>
              {models.map((m) => (
                <option key={m.name} value={m.name}>
                  {modelText(m)}
                </option>
              ))}
              <option value="custom">custom config…</option>
            </select>
          </InlineField>
          <InlineField label="System" errors={fields} path="system">
            <select
              aria-label="System"
              aria-describedby="hint-system"
              value={form.system}
              onChange={set("system")}
            >
              {systems.map((s) => (
                <option key={s.name} value={s.name}>
                  {systemText(s)}
                </option>
              ))}
            </select>
            <span className="hint" id="hint-system">
              {systemLinksText(systems.find((s) => s.name === form.system) || {})}
            </span>
          </InlineField>
          <InlineField label="Workload" errors={fields} path="kind">
            <select aria-label="Workload" value={form.kind} onChange={set("kind")}>
              <option value="train">training step</option>
              <option value="infer">inference (prefill and decode)</option>
              <option value="serve">serving a request stream (continuous batching)</option>
            </select>
          </InlineField>
          {(training ? PLAN_FIELDS : serving ? SERVE_FIELDS : INFER_FIELDS).map(([key, label]) => {
            const hint = serving ? SERVE_HINTS[key] : undefined;
            return (
              <InlineField key={key} label={label} errors={fields} path={key}>
                <input
                  aria-label={label}
                  aria-describedby={hint ? `hint-${key}` : undefined}
                  inputMode={serving && SERVE_DECIMAL.includes(key) ? "decimal" : "numeric"}
                  value={form[key]}
                  onChange={set(key)}
                />
                {hint && (
                  <span className="hint" id={`hint-${key}`}>
                    {hint}
                  </span>
                )}
              </InlineField>
            );
          })}
          {training && (
            <InlineField label="Sequence (blank: the model's)" errors={fields} path="seq">
              <input aria-label="Sequence" value={form.seq} onChange={set("seq")} />
            </InlineField>
          )}
          {(training
            ? [
                ["data_parallel", "Data parallelism"],
                ["recompute", "Recomputation"],
                ["precision", "Precision"],
              ]
            : [["precision", "Precision"]]
          ).map(([key, label]) => (
            <InlineField key={key} label={label} errors={fields} path={key}>
              <select aria-label={label} value={form[key]} onChange={set(key)}>
                {choices[key].map((c) => (
                  <option key={c}>{c}</option>
                ))}
              </select>
            </InlineField>
          ))}
          {serving && (
            <InlineField label="Find the saturating rate" errors={fields} path="saturate">
              <input
                type="checkbox"
                aria-label="Find the saturating rate"
                checked={form.saturate}
                onChange={(e) => setForm({ ...form, saturate: e.target.checked })}
              />
            </InlineField>
          )}
        </div>
        {form.model === "custom" && (
          <fieldset className="form-grid">
            <legend>Custom model (SwiGLU, dense)</legend>
            {MODEL_FIELDS.map((key) => (
              <InlineField key={key} label={key} errors={fields} path={`model.${key}`}>
                <input
                  aria-label={`Model ${key}`}
                  value={form.custom[key]}
                  onChange={setCustom(key)}
                />
              </InlineField>
            ))}
          </fieldset>
        )}
        <div className="form-row">
          <button type="submit" disabled={busy}>
            {busy
              ? "Launching…"
              : training
                ? "Simulate the step"
                : serving
                  ? "Serve the stream"
                  : "Simulate the batch"}
          </button>
          {training && (
            <button type="button" onClick={runSweep} disabled={sweep?.running}>
              Sweep TP x PP (memory)
            </button>
          )}
        </div>
      </form>
      {training && <CompareSweep form={form} systems={systems} onError={setError} />}
      {launched && <Evaluation key={launched.simulation} first={launched} />}
      {served && <ServingFigures result={served} />}
      {sweep && <SweepTable sweep={sweep} />}
    </section>
  );
}

// One launched evaluation: polled until its run is final, then its figures.
function Evaluation({ first }) {
  const { value, error, retrying } = usePolling(
    (signal) => get(`/api/workloads/${first.simulation}/`, { signal }),
    (v) => !FINAL_STATUSES.includes(v.status),
    700,
    first.simulation,
  );
  const current = value || first;
  const { basis, figures } = current;
  return (
    <section className="panel" aria-labelledby="evaluation-title">
      <h2 id="evaluation-title">
        {current.kind === "infer"
          ? `${basis.model} inference on ${basis.gpus} GPUs of ${basis.system}: ` +
            `TP ${basis.plan.tp} PP ${basis.plan.pp}, batch ${basis.plan.batch}, ` +
            `${basis.plan.input_len} in, ${basis.plan.output_len} out`
          : `${basis.model} on ${basis.gpus} GPUs of ${basis.system}: ` +
            `TP ${basis.plan.tp} PP ${basis.plan.pp} DP ${basis.plan.dp}`}
      </h2>
      <p>
        Run <Link to={`/app/runs/${current.simulation}`}>#{current.simulation}</Link>:{" "}
        <span data-testid="workload-status">{current.status}</span>
        {retrying && " (reconnecting…)"}
      </p>
      {error && <ErrorSummary error={error} />}
      {current.error && (
        <p className="field-error" role="alert">
          {current.error.message || JSON.stringify(current.error)}
        </p>
      )}
      {figures &&
        (current.kind === "infer" ? (
          <InferenceFigures figures={figures} />
        ) : (
          <Figures figures={figures} />
        ))}
      <MemoryTable memory={basis.memory} capacity={basis.gpu_memory_bytes} />
      {basis.notes?.length > 0 && (
        <ul className="muted">
          {basis.notes.map((n) => (
            <li key={n}>{n}</li>
          ))}
        </ul>
      )}
    </section>
  );
}

function Figures({ figures }) {
  const split = figures.time_split_s;
  const rows = [
    ["Step time", fmtTime(figures.step_time_s)],
    ["Tokens/s per GPU", fmt(figures.tokens_per_s_per_gpu)],
    ["Model TFLOP/s per GPU", fmt(figures.model_tflops_per_gpu)],
    ["MFU", `${(figures.mfu * 100).toFixed(1)} %`],
    ["Compute (busiest stage)", fmtTime(split.compute)],
    ["Pipeline bubble", fmtTime(split.pipeline_bubble)],
    ["Exposed communication", fmtTime(split.exposed_communication)],
  ];
  return (
    <table className="grid" aria-label="Step figures">
      <tbody>
        {rows.map(([name, value]) => (
          <tr key={name}>
            <th scope="row">{name}</th>
            <td>{value}</td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}

function InferenceFigures({ figures }) {
  const rows = [
    ["Time to first token", fmtTime(figures.ttft_s)],
    ["Time per output token", fmtTime(figures.tpot_s)],
    ["Request latency", fmtTime(figures.request_latency_s)],
    ["Output tokens/s", fmt(figures.output_tokens_per_s)],
    ["Output tokens/s per GPU", fmt(figures.output_tokens_per_s_per_gpu)],
  ];
  return (
    <table className="grid" aria-label="Inference figures">
      <tbody>
        {rows.map(([name, value]) => (
          <tr key={name}>
            <th scope="row">{name}</th>
            <td>{value}</td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}

// A served stream: latency percentiles, throughput, the batch and KV cache it reached, and
// with a sweep the arrival rate at which its queue grows without bound.
function ServingFigures({ result }) {
  const plan = result.plan;
  const rows = [
    ["Requests/s", fmt(result.requests_per_s)],
    ["Output tokens/s", fmt(result.output_tokens_per_s)],
    ["Output tokens/s per GPU", fmt(result.output_tokens_per_s_per_gpu)],
    ["Mean running batch", fmt(result.batch.mean)],
    ["Largest batch", String(result.batch.max)],
    ["KV cache (tokens)", fmt(result.kv_cache.tokens)],
    ["KV cache, mean use", `${(result.kv_cache.mean_occupancy * 100).toFixed(1)} %`],
    ["KV cache, peak use", `${(result.kv_cache.peak_occupancy * 100).toFixed(1)} %`],
    ["Preemptions", String(result.preemptions)],
    ["Queue grows without bound", result.unbounded_queue ? "yes" : "no"],
  ];
  // GenAI-Perf's measurement: the figures are over the requests its windows counted
  const measurement = result.measurement;
  if (measurement) {
    rows.push([
      "Measured as GenAI-Perf does",
      `${measurement.requests} requests in ${measurement.windows} windows of ` +
        `${fmt(measurement.window_s)} s` +
        (measurement.stable ? "" : " (not stable)"),
    ]);
  }
  const saturation = result.saturation;
  return (
    <section className="panel" aria-labelledby="serving-title">
      <h2 id="serving-title">
        {`${result.model} serving ${plan.requests} requests on ${result.gpus} GPUs of ` +
          `${result.system}: TP ${plan.tp} PP ${plan.pp}, ` +
          (plan.arrival_rate ? `${plan.arrival_rate} req/s` : "all at once") +
          (plan.max_concurrency ? `, ${plan.max_concurrency} in flight` : "") +
          `, input ${plan.input_len}, output ${plan.output_len}`}
      </h2>
      <table className="grid" aria-label="Latency percentiles">
        <thead>
          <tr>
            <th scope="col">Latency</th>
            <th scope="col">median</th>
            <th scope="col">p90</th>
            <th scope="col">p99</th>
          </tr>
        </thead>
        <tbody>
          {percentileRows(result).map((row) => (
            <tr key={row.key}>
              <th scope="row">{row.label}</th>
              <td>{fmtTime(row.median)}</td>
              <td>{fmtTime(row.p90)}</td>
              <td>{fmtTime(row.p99)}</td>
            </tr>
          ))}
        </tbody>
      </table>
      <table className="grid" aria-label="Serving throughput">
        <tbody>
          {rows.map(([name, value]) => (
            <tr key={name}>
              <th scope="row">{name}</th>
              <td>{value}</td>
            </tr>
          ))}
        </tbody>
      </table>
      {saturation && <SaturationTable saturation={saturation} />}
    </section>
  );
}

function SaturationTable({ saturation }) {
  const rate = (value) => (value === null ? "not reached" : `${fmt(value)} req/s`);
  return (
    <>
      <p data-testid="saturation">
        Capacity {fmt(saturation.capacity_requests_per_s)} req/s (all {saturation.requests} requests
        at once); the queue holds up to {rate(saturation.sustainable_rate)} and grows without bound
        from {rate(saturation.saturating_rate)}
        {saturation.saturating_batch !== null &&
          `, with a mean running batch of ${fmt(saturation.saturating_batch)}`}
        .
      </p>
      <table className="grid" aria-label="Arrival-rate sweep">
        <thead>
          <tr>
            <th scope="col">Arrival rate</th>
            <th scope="col">Requests/s</th>
            <th scope="col">p90 TTFT</th>
            <th scope="col">median TPOT</th>
            <th scope="col">Mean batch</th>
            <th scope="col">Queue</th>
          </tr>
        </thead>
        <tbody>
          {saturation.points.map((p) => (
            <tr key={p.arrival_rate} className={p.unbounded_queue ? "invalid" : undefined}>
              <td>{fmt(p.arrival_rate)}</td>
              <td>{fmt(p.requests_per_s)}</td>
              <td>{fmtTime(p.ttft_s.p90)}</td>
              <td>{fmtTime(p.tpot_s.median)}</td>
              <td>{fmt(p.batch_mean)}</td>
              <td>{p.unbounded_queue ? "grows without bound" : "bounded"}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </>
  );
}

export function MemoryTable({ memory, capacity }) {
  const rows = memoryRows(memory, capacity);
  return (
    <table className="grid" aria-label="Memory per GPU">
      <thead>
        <tr>
          <th scope="col">Memory per GPU</th>
          <th scope="col">Bytes</th>
          <th scope="col">Share of the GPU&apos;s {fmtBytes(capacity)}</th>
        </tr>
      </thead>
      <tbody>
        {rows.map((row) => (
          <tr key={row.key}>
            <th scope="row">{row.label}</th>
            <td>{fmtBytes(row.bytes)}</td>
            <td>
              <span
                className="bar"
                style={{
                  display: "inline-block",
                  width: `${Math.min(100, row.share * 100) * 1.5}px`,
                  height: "0.7em",
                  background: "currentColor",
                }}
                aria-hidden="true"
              />{" "}
              {(row.share * 100).toFixed(1)} %
            </td>
          </tr>
        ))}
        <tr>
          <th scope="row">Total</th>
          <td>{fmtBytes(memory.total)}</td>
          <td>{((memory.total / capacity) * 100).toFixed(1)} %</td>
        </tr>
      </tbody>
    </table>
  );
}

// Which GPU and plan: the form's plan over templates x GPU counts x TP x PP launched as one
// sweep group (each valid plan's step a run, each refused plan a failed point with its
// reason); the sweep's page then plots step time against cost per step, with the Pareto
// front, the constraints ("overall_time_s <= 10") and the intervals asked for here.
function CompareSweep({ form, systems, onError }) {
  const [compare, setCompare] = useState({
    name: "",
    systems: systems.map((s) => s.name).filter((n) => n !== "dgx-a100"),
    gpus: "64, 128",
    tp: "4, 8",
    pp: "4, 8",
    samples: "4",
  });
  const [busy, setBusy] = useState(false);
  const set = (key) => (e) => setCompare({ ...compare, [key]: e.target.value });
  const toggle = (name) => (e) =>
    setCompare({
      ...compare,
      systems: e.target.checked
        ? [...compare.systems, name]
        : compare.systems.filter((n) => n !== name),
    });
  const launch = async (e) => {
    e.preventDefault();
    setBusy(true);
    onError(null);
    try {
      const answer = await post("/api/workloads/sweep/", compareBody(form, compare));
      navigate(`/app/sweeps/${answer.sweep}`);
    } catch (caught) {
      onError(caught);
    } finally {
      setBusy(false);
    }
  };
  return (
    <form className="panel" onSubmit={launch} aria-label="Compare GPUs and plans">
      <h3>Compare GPUs and plans (a sweep)</h3>
      <p className="muted">
        The plan above on each template, GPU count, TP and PP; the sweep page shows step time
        against cost per step (from the GPU records&apos; prices) with the Pareto front and
        constraints. A GPU the kit never measured (B200) gets the interval of the model&apos;s
        spec-mode error on the measured GPUs, labelled so, never as a measurement of its own.
      </p>
      <fieldset className="form-row">
        <legend>Templates</legend>
        {systems.map((s) => (
          <label key={s.name}>
            <input
              type="checkbox"
              checked={compare.systems.includes(s.name)}
              onChange={toggle(s.name)}
            />{" "}
            {s.name} ({s.gpu})
          </label>
        ))}
      </fieldset>
      <div className="form-row">
        <label>
          Sweep name <input aria-label="Sweep name" value={compare.name} onChange={set("name")} />
        </label>
        <label>
          GPU counts <input aria-label="GPU counts" value={compare.gpus} onChange={set("gpus")} />
        </label>
        <label>
          TP values <input aria-label="TP values" value={compare.tp} onChange={set("tp")} />
        </label>
        <label>
          PP values <input aria-label="PP values" value={compare.pp} onChange={set("pp")} />
        </label>
        <label>
          Interval samples (0: none){" "}
          <input aria-label="Interval samples" value={compare.samples} onChange={set("samples")} />
        </label>
        <button type="submit" disabled={busy || compare.systems.length === 0}>
          {busy ? "Launching…" : "Launch the comparison sweep"}
        </button>
      </div>
    </form>
  );
}

function SweepTable({ sweep }) {
  return (
    <section className="panel" aria-labelledby="sweep-title">
      <h2 id="sweep-title">TP x PP: memory per GPU{sweep.running ? " (checking…)" : ""}</h2>
      <table className="grid" aria-label="Plan sweep">
        <thead>
          <tr>
            <th scope="col">TP</th>
            <th scope="col">PP</th>
            <th scope="col">Memory per GPU or reason refused</th>
          </tr>
        </thead>
        <tbody>
          {sweep.rows.map((row) => (
            <tr key={`${row.tp}x${row.pp}`} className={row.refused ? "invalid" : undefined}>
              <td>{row.tp}</td>
              <td>{row.pp}</td>
              <td>{row.refused ? `refused — ${row.refused}` : fmtBytes(row.memory)}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </section>
  );
}
