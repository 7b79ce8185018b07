// The kernel analyzer in the browser: paste SASS or CUDA, get INS, GMem bytes, Lat_bound and
// the execution graph (POST /api/analyze/, run in the sandbox's child).
import { useState } from "react";
import { post } from "../../lib/api.js";
import { ErrorSummary } from "../../components/ErrorSummary.jsx";
import { Field } from "../../components/Field.jsx";
import { ARCHITECTURES, PARAMETERS, analyzeRequest, parseTrips, svgDataUrl } from "./analyzer.js";

export function Analyzer() {
  const [form, setForm] = useState({
    language: "sass",
    source: "",
    arch: "sm_52",
    trips: "",
    blockSize: "",
    kernel: "",
  });
  const [result, setResult] = useState(null);
  const [error, setError] = useState(null);
  const [busy, setBusy] = useState(false);
  const set = (key) => (e) => setForm({ ...form, [key]: e.target.value });
  const errors = error?.fields || {};

  const analyze = async (e) => {
    e.preventDefault();
    const { trips, error: tripError } = parseTrips(form.trips);
    if (tripError) {
      setError({
        message: "Please correct the highlighted fields.",
        fields: { trips: [tripError] },
      });
      return;
    }
    setBusy(true);
    setError(null);
    try {
      setResult(await post("/api/analyze/", analyzeRequest({ ...form, trips })));
    } catch (failure) {
      setResult(null);
      setError(failure);
    } finally {
      setBusy(false);
    }
  };

  const analysis = result?.analysis;
  return (
    <section aria-labelledby="analyzer-title">
      <header className="page-head">
        <h1 id="analyzer-title">Kernel analyzer</h1>
      </header>
      <p className="muted">
        Paste a kernel&apos;s SASS (cuobjdump or nvdisasm output) or its CUDA source (compiled with
        nvcc on the server) to derive the inputs of Volkov&apos;s GPU model.
      </p>
      <form onSubmit={analyze} className="analyzer-form">
        <ErrorSummary error={error} />
        <div className="filters">
          <Field label="Input" path="language" errors={errors}>
            <select value={form.language} onChange={set("language")}>
              <option value="sass">SASS</option>
              <option value="cuda">CUDA source</option>
            </select>
          </Field>
          <Field label="Architecture" path="arch" errors={errors}>
            <select value={form.arch} onChange={set("arch")}>
              <option value="">(named in the SASS)</option>
              {ARCHITECTURES.map((a) => (
                <option key={a} value={a}>
                  {a}
                </option>
              ))}
            </select>
          </Field>
          <Field
            label="Trip counts"
            path="trips"
            errors={errors}
            hint="e.g. a=1 (loops are a, b, … in order); empty: symbolic"
          >
            <input value={form.trips} onChange={set("trips")} />
          </Field>
          <Field label="Block size" path="block_size" errors={errors} hint="for the occupancy">
            <input
              type="number"
              min="1"
              max="1024"
              value={form.blockSize}
              onChange={set("blockSize")}
            />
          </Field>
          <Field label="Kernel name" path="kernel" errors={errors} hint="when there are several">
            <input value={form.kernel} onChange={set("kernel")} />
          </Field>
        </div>
        <Field label="Kernel source" path="source" errors={errors}>
          <textarea
            className="code"
            rows={14}
            spellCheck={false}
            value={form.source}
            onChange={set("source")}
          />
        </Field>
        <button type="submit" className="primary" disabled={busy || !form.source.trim()}>
          {busy ? "Analysing…" : "Analyze"}
        </button>
      </form>
      {analysis && (
        <>
          <h2>
            {analysis.kernel} ({analysis.arch}, {analysis.family})
          </h2>
          <div className="cards">
            {PARAMETERS.map(([key, label]) => (
              <div className="card" key={key}>
                <span className="card-label">{label}</span>
                <strong data-testid={`analyzer-${key}`}>{analysis.parameters[key]}</strong>
                {analysis.values && (
                  <span className="muted" data-testid={`analyzer-${key}-value`}>
                    {" "}
                    = {analysis.values[key]}
                  </span>
                )}
              </div>
            ))}
          </div>
          <p className="muted">
            Lat_bound ={" "}
            {Object.entries(analysis.lat_bound_breakdown)
              .filter(([, v]) => v !== "0")
              .map(([k, v]) => `${k.replaceAll("_", " ")} ${v}`)
              .join(" + ")}
            ; {analysis.dual_issue_pairs} dual-issue pair
            {analysis.dual_issue_pairs === 1 ? "" : "s"}, {analysis.instructions} instructions.
          </p>
          {analysis.model_params && (
            <>
              <h2>Parameters for the Volkov GPU model</h2>
              <pre data-testid="analyzer-model-params">
                {JSON.stringify(analysis.model_params, null, 2)}
              </pre>
            </>
          )}
          <h2>Execution graph</h2>
          <figure className="chart analysis-graph">
            <img
              src={svgDataUrl(result.svg)}
              alt={`Execution graph of ${analysis.kernel}, the critical path highlighted`}
            />
          </figure>
          {analysis.notes.length > 0 && (
            <ul className="muted">
              {analysis.notes.map((n, i) => (
                <li key={i}>{n}</li>
              ))}
            </ul>
          )}
        </>
      )}
    </section>
  );
}
