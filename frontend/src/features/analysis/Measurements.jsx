// Measured against predicted: a sweep's (or a run's) predictions with the validation kit's
// measurements.csv over them, the error of each point and the mean error; a kernel
// calibration (lambda_k) fitted from the same points (POST /api/components/{id}/calibrate/).
import { useEffect, useMemo, useState } from "react";
import { get, getAll, ignoreAbort, post } from "../../lib/api.js";
import { color } from "../../lib/chart.js";
import { fmt, fmtTime } from "../../lib/format.js";
import { navigate, useLocation } from "../../lib/router.jsx";
import { ErrorSummary } from "../../components/ErrorSummary.jsx";
import { GridTable } from "../../components/GridTable.jsx";
import { InlineField } from "../../components/InlineField.jsx";
import { Plot } from "./Plot.jsx";
import {
  METRICS,
  gpuColumn,
  kernelCalibration,
  matchColumns,
  matchMeasurements,
  meanAbsError,
  parseCsv,
  runGpus,
  xVariable,
} from "./measurements.js";

const percent = (v) => `${v >= 0 ? "+" : ""}${(100 * v).toFixed(1)} %`;

// The succeeded runs of a sweep (or the one run), each with its variables, result, the GPUs it
// ran on and the component its sweep point swapped in.
function usePredictions(sweep, run) {
  const [state, setState] = useState({ runs: null, error: null });
  useEffect(() => {
    if (!sweep && !run) return undefined;
    const controller = new AbortController();
    const { signal } = controller;
    const load = async () => {
      const points = sweep
        ? (await get(`/api/sweeps/${sweep}/`, { signal })).points.filter(
            (p) => p.status === "succeeded",
          )
        : [{ simulation: run, gpu: "", hardware: "" }];
      return Promise.all(
        points.map(async ({ simulation: id, gpu, hardware }) => {
          const sim = await get(`/api/simulations/${id}/`, { signal });
          const result = sim.status === "succeeded" ? await get(sim.result_url, { signal }) : null;
          return { id, name: sim.name, variables: sim.variables, result, gpu, hardware };
        }),
      );
    };
    load().then(
      (runs) => setState({ runs: runs.filter((r) => r.result), error: null }),
      ignoreAbort((error) => setState({ runs: null, error })),
    );
    return () => controller.abort();
  }, [sweep, run]);
  return state;
}

export function Measurements() {
  const { query } = useLocation();
  const sweep = query.get("sweep") || "";
  const run = query.get("run") || "";
  const [sweeps, setSweeps] = useState([]);
  const [csv, setCsv] = useState(null); // {name, columns, rows} or {name, error}
  const [metricKey, setMetricKey] = useState("kernel");
  const [scenario, setScenario] = useState("");
  const [measuredOn, setMeasuredOn] = useState("");
  const { runs, error } = usePredictions(sweep, run);

  useEffect(() => {
    const controller = new AbortController();
    getAll("/api/sweeps/", { signal: controller.signal }).then(
      setSweeps,
      ignoreAbort(() => {}),
    );
    return () => controller.abort();
  }, []);

  const readFile = (event) => {
    const file = event.target.files?.[0];
    if (!file) return;
    file.text().then((text) => {
      const parsed = parseCsv(text);
      setCsv({ name: file.name, ...parsed });
      const scenarios = [...new Set((parsed.rows || []).map((r) => r.scenario).filter(Boolean))];
      setScenario(scenarios[0] || "");
    });
  };

  const metric = METRICS.find((m) => m.key === metricKey);
  const names = useMemo(() => Object.keys(runs?.[0]?.variables || {}), [runs]);
  const mapping = csv?.columns ? matchColumns(names, csv.columns) : {};
  const gpus = runs ? runGpus(runs) : [];
  const csvGpuColumn = csv?.columns ? gpuColumn(csv.columns) : null;
  const gpu = gpus.includes(measuredOn) ? measuredOn : gpus.length === 1 ? gpus[0] : "";
  const matched =
    runs && csv?.rows
      ? matchMeasurements(runs, csv.rows, mapping, metric, {
          scenario,
          gpu: csvGpuColumn ? "" : gpu,
        })
      : null;
  const points = matched && !matched.error ? matched.points : null;
  const scenarios = [...new Set((csv?.rows || []).map((r) => r.scenario).filter(Boolean))];
  const x = points ? xVariable(points, Object.keys(mapping)) : null;

  return (
    <section aria-labelledby="measurements-title">
      <header className="page-head">
        <h1 id="measurements-title">Measured against predicted</h1>
      </header>
      <p className="muted">
        Upload the validation kit&apos;s <code>measurements.csv</code> (validation/run_all.sh) and
        compare it with the runs of a sweep: rows are matched to each run by the variables the CSV
        has a column for, and their repetitions averaged.
      </p>
      <div className="filters">
        <InlineField label="Predictions">
          <select
            aria-label="Sweep with the predictions"
            value={sweep}
            onChange={(e) => navigate(`/app/measurements?sweep=${e.target.value}`)}
          >
            <option value="">{run ? `run ${run}` : "choose a sweep"}</option>
            {sweeps.map((s) => (
              <option key={s.id} value={s.id}>
                {s.name || `Sweep ${s.id}`} ({s.status})
              </option>
            ))}
          </select>
        </InlineField>
        <InlineField label="Measurements CSV">
          <input
            type="file"
            accept=".csv,text/csv"
            aria-label="Measurements CSV"
            onChange={readFile}
          />
        </InlineField>
        <InlineField label="Metric">
          <select
            aria-label="Metric"
            value={metricKey}
            onChange={(e) => setMetricKey(e.target.value)}
          >
            {METRICS.map((m) => (
              <option key={m.key} value={m.key}>
                {m.label}
              </option>
            ))}
          </select>
        </InlineField>
        {gpus.length > 0 && !csvGpuColumn && (
          <InlineField label="Measured on">
            <select
              aria-label="GPU the CSV was measured on"
              value={gpu}
              onChange={(e) => setMeasuredOn(e.target.value)}
            >
              {gpus.length > 1 && <option value="">choose the GPU</option>}
              {gpus.map((g) => (
                <option key={g} value={g}>
                  {g}
                </option>
              ))}
            </select>
          </InlineField>
        )}
        {scenarios.length > 0 && (
          <InlineField label="Scenario">
            <select
              aria-label="Scenario"
              value={scenario}
              onChange={(e) => setScenario(e.target.value)}
            >
              <option value="">any</option>
              {scenarios.map((s) => (
                <option key={s} value={s}>
                  {s}
                </option>
              ))}
            </select>
          </InlineField>
        )}
      </div>
      <ErrorSummary error={error} />
      {csv?.error && (
        <div className="error-box" role="alert">
          <strong>
            {csv.name}: {csv.error}.
          </strong>
        </div>
      )}
      {(sweep || run) && !runs && !error && <p className="muted">Loading the predictions…</p>}
      {runs && csv?.rows && (
        <p className="muted" data-testid="matched-by">
          {Object.keys(mapping).length
            ? `Matched by ${Object.entries(mapping)
                .map(([v, c]) => `${v} = ${c}`)
                .join(", ")}; ${csv.rows.length} rows in ${csv.name}.`
            : `No column of ${csv.name} matches a variable of the runs (${names.join(", ")}).`}
        </p>
      )}
      {matched?.error && Object.keys(mapping).length > 0 && (
        <div className="error-box" role="alert" data-testid="match-error">
          <strong>{matched.error}</strong>
        </div>
      )}
      {points && points.length === 0 && Object.keys(mapping).length > 0 && (
        <p className="muted">No row of the CSV has the variables of a run.</p>
      )}
      {points && points.length > 0 && (
        <Comparison points={points} x={x} metric={metric} mapping={mapping} />
      )}
    </section>
  );
}

function Comparison({ points, x, metric, mapping }) {
  const mean = meanAbsError(points);
  const sorted = [...points].sort((a, b) => a.variables[x] - b.variables[x]);
  // One predicted line per GPU: points of different GPUs at one x are different predictions.
  const gpus = [...new Set(sorted.map((p) => p.gpu))];
  const manyGpus = gpus.length > 1;
  const xs = sorted.map((p) => p.variables[x]);
  const ys = sorted.flatMap((p) => [p.predicted, p.measured]);
  const logX = xs[0] > 0 && xs[xs.length - 1] / xs[0] >= 100;
  const logY = Math.min(...ys) > 0 && Math.max(...ys) / Math.min(...ys) >= 100;
  const xDomain = logX
    ? [10 ** Math.floor(Math.log10(xs[0])), 10 ** Math.ceil(Math.log10(xs[xs.length - 1]))]
    : [Math.min(0, xs[0]), xs[xs.length - 1] || 1];
  const yDomain = logY
    ? [10 ** Math.floor(Math.log10(Math.min(...ys))), 10 ** Math.ceil(Math.log10(Math.max(...ys)))]
    : [0, Math.max(...ys) * 1.1];
  return (
    <>
      <div className="cards">
        <div className="card">
          <span className="card-label">
            Mean |error| over {points.length} points
            {gpus[0] ? ` on ${gpus.join(", ")}` : ""}
          </span>
          <strong data-testid="mean-error">{(100 * mean).toFixed(1)} %</strong>
        </div>
      </div>
      <figure className="chart" aria-label={`${metric.label}: measured against predicted`}>
        <Plot
          label={`${metric.label} against ${x}: ${points.length} measured points over the predictions`}
          x={{ domain: xDomain, log: logX }}
          y={{ domain: yDomain, log: logY }}
          xLabel={x}
          yLabel={`${metric.label}`}
          yFormat={fmtTime}
          width={900}
        >
          {(X, Y) => (
            <>
              {gpus.map((g) => (
                <polyline
                  key={g}
                  className="predicted"
                  fill="none"
                  stroke={color(0)}
                  strokeWidth="2"
                  points={sorted
                    .filter((p) => p.gpu === g)
                    .map((p) => `${X(p.variables[x])},${Y(p.predicted)}`)
                    .join(" ")}
                >
                  {manyGpus && <title>{`predicted on ${g}`}</title>}
                </polyline>
              ))}
              {sorted.map((p) => (
                <g key={p.id}>
                  <line
                    x1={X(p.variables[x])}
                    x2={X(p.variables[x])}
                    y1={Y(p.predicted)}
                    y2={Y(p.measured)}
                    stroke="#bbb"
                    strokeDasharray="3 3"
                  />
                  <circle
                    className="measured"
                    cx={X(p.variables[x])}
                    cy={Y(p.measured)}
                    r="5"
                    fill={color(1)}
                  >
                    <title>{`${manyGpus ? `${p.gpu}, ` : ""}${x} = ${p.variables[x]}: measured ${fmtTime(p.measured)}, predicted ${fmtTime(p.predicted)} (${percent(p.error)})`}</title>
                  </circle>
                </g>
              ))}
            </>
          )}
        </Plot>
        <figcaption className="legend">
          <span>
            <i style={{ background: color(0) }} />
            predicted
          </span>
          <span>
            <i style={{ background: color(1) }} />
            measured (mean of the repetitions)
          </span>
        </figcaption>
      </figure>
      <GridTable
        label="Measured against predicted"
        columns={[
          ...(gpus[0] ? ["GPU"] : []),
          ...Object.keys(mapping),
          "Predicted",
          "Measured",
          "Repetitions",
          "Error",
        ]}
      >
        {sorted.map((p) => (
          <tr key={p.id}>
            {gpus[0] && <td>{p.gpu}</td>}
            {Object.keys(mapping).map((v) => (
              <td key={v}>{fmt(p.variables[v])}</td>
            ))}
            <td className="num">{fmtTime(p.predicted)}</td>
            <td className="num">{fmtTime(p.measured)}</td>
            <td className="num">{p.repetitions}</td>
            <td className="num" data-testid="point-error">
              {percent(p.error)}
            </td>
          </tr>
        ))}
      </GridTable>
      {/* lambda_k belongs to one GPU: fitted only from the points of one. */}
      {metric.key === "kernel" && !manyGpus && <KernelCalibration points={sorted} />}
    </>
  );
}

// Fit lambda_k to the points on a GPU record (stored only when asked).
function KernelCalibration({ points }) {
  const [gpus, setGpus] = useState([]);
  const [gpu, setGpu] = useState("");
  const [store, setStore] = useState(false);
  const [fit, setFit] = useState(null);
  const [error, setError] = useState(null);
  useEffect(() => {
    const controller = new AbortController();
    getAll("/api/components/?type=GPU", { signal: controller.signal }).then(
      setGpus,
      ignoreAbort(setError),
    );
    return () => controller.abort();
  }, []);
  const calibrate = async () => {
    setError(null);
    setFit(null);
    try {
      setFit(
        await post(`/api/components/${gpu}/calibrate/`, {
          kind: "kernel",
          measurements: kernelCalibration(points),
          store,
        }),
      );
    } catch (failure) {
      setError(failure);
    }
  };
  return (
    <>
      <h2>Calibrate λ_k from these points</h2>
      <p className="muted">
        Fits kernelExecutionLambda so that predicted / λ_k matches the measurements; the predictions
        stand for the model&apos;s estimate with λ_k = 1, so run them with kernelExecutionLambda =
        1.
      </p>
      <div className="filters">
        <InlineField label="GPU record">
          <select aria-label="GPU record" value={gpu} onChange={(e) => setGpu(e.target.value)}>
            <option value="">choose a GPU</option>
            {gpus.map((g) => (
              <option key={g.id} value={g.id}>
                {g.name}
              </option>
            ))}
          </select>
        </InlineField>
        <label>
          <input type="checkbox" checked={store} onChange={(e) => setStore(e.target.checked)} />{" "}
          Store on the record
        </label>
        <button type="button" className="primary" disabled={!gpu} onClick={calibrate}>
          Calibrate
        </button>
      </div>
      <ErrorSummary error={error} />
      {fit && (
        <p data-testid="calibration-result">
          λ_k = {fmt(fit.fit.lambda_k, 6)} from {fit.fit.count} points
          {fit.fit.r2 !== null ? `, r² = ${fmt(fit.fit.r2, 4)}` : ""}
          {fit.stored ? "; stored as kernelExecutionLambda." : "; not stored."}
        </p>
      )}
    </>
  );
}
