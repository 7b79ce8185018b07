// Computational models: JavaScript shallow functions with highlighting, and a test-run panel.
import { useEffect, useState } from "react";
import { ApiError, getAll, ignoreAbort, post } from "../../lib/api.js";
import { sourceErrorLine } from "../../lib/errors.js";
import { fmt } from "../../lib/format.js";
import { Link, navigate } from "../../lib/router.jsx";
import { CodeEditor } from "../../components/CodeEditor.jsx";
import { ErrorSummary } from "../../components/ErrorSummary.jsx";
import { Field, FieldErrors } from "../../components/Field.jsx";
import { GridTable } from "../../components/GridTable.jsx";
import { Loading } from "../../components/Loading.jsx";
import { OwnerCell, SharedCheckbox, TextField } from "../../components/RecordFields.jsx";
import { EditorHeader } from "../../components/EditorHeader.jsx";
import { VersionConflict } from "../../components/VersionConflict.jsx";
import { useApiGet } from "../../hooks/useApiGet.js";
import { useRecordEditor } from "../../hooks/useRecordEditor.js";
import { formatArchitectures, parseArchitectures } from "./architectures.js";

export function ModelList() {
  const { data: models, error } = useApiGet("/api/models/?page_size=200", { all: true });
  return (
    <section aria-labelledby="models-title">
      <header className="page-head">
        <h1 id="models-title">Computational models</h1>
        <div className="actions">
          <button onClick={() => navigate("/app/models/new")}>New model</button>
        </div>
      </header>
      <ErrorSummary error={error} />
      {!models ? (
        <Loading />
      ) : (
        <GridTable label="Computational models" columns={["Name", "Description", "Owner"]}>
          {models.map((m) => (
            <tr key={m.id}>
              <td>
                <Link to={`/app/models/${m.id}`}>{m.name}</Link>
              </td>
              <td className="desc">{m.description}</td>
              <OwnerCell owner={m.builtin ? "built-in" : m.owner} shared={m.shared} />
            </tr>
          ))}
        </GridTable>
      )}
    </section>
  );
}

const NEW_MODEL = {
  name: "",
  description: "",
  validated_architectures: [],
  language: "javascript",
  shared: false,
  can_edit: true,
  source:
    "// Hardware attributes are globals (SMs, SMCoreClock, ...) and hw.<name>;\n// application parameters arrive as params (params.x, params.get('x')).\nfunction computationTime(params) {\n  return params.get('work') / (SMs * SMCoreClock * 1e6);\n}\n",
};

// The editor holds the validated architectures as the line its field shows (architectures.js).
const fromServer = (model) => ({
  ...model,
  validated_architectures: formatArchitectures(model.validated_architectures),
});

const toBody = (model) => ({
  name: model.name,
  description: model.description,
  validated_architectures: parseArchitectures(model.validated_architectures),
  language: model.language,
  source: model.source,
  shared: model.shared,
});

export function ModelEditor({ id }) {
  const {
    isNew,
    record: model,
    dirty,
    saved,
    error,
    edit: set,
    save,
    remove,
    clone,
    conflict,
    reload,
    overwrite,
  } = useRecordEditor({
    id,
    endpoint: "/api/models/",
    appPath: "/app/models",
    blank: NEW_MODEL,
    fromServer,
    toBody,
  });
  const [testError, setTestError] = useState(null);

  if (!model) return error ? <ErrorSummary error={error} /> : <Loading />;
  const errors = error?.fields || {};
  const readOnly = !model.can_edit;
  const fieldProps = { record: model, errors, set, readOnly };
  const saveModel = async () => {
    if (await save()) setTestError(null);
  };

  return (
    <section aria-labelledby="model-title">
      <EditorHeader
        titleId="model-title"
        title={isNew ? "New computational model" : model.name}
        dirty={dirty}
        onSave={readOnly ? null : saveModel}
        onDelete={isNew || readOnly ? null : remove}
      >
        {!isNew && <button onClick={() => clone()}>Clone</button>}
      </EditorHeader>
      <VersionConflict conflict={conflict} onReload={reload} onOverwrite={overwrite} />
      {readOnly && (
        <p className="note">
          {model.builtin ? "Built-in model" : `Model of ${model.owner}`}: read-only. Clone it to
          edit a copy.
        </p>
      )}
      <ErrorSummary error={error} />
      <div className="form-grid">
        <TextField {...fieldProps} label="Name" name="name" aria-invalid={Boolean(errors.name)} />
        <TextField {...fieldProps} label="Description" name="description" />
        <Field
          label="Validated architectures"
          path="validated_architectures"
          errors={errors}
          hint="The GPU families the model was checked against, separated by commas (Maxwell, Pascal, ..., Hopper, Blackwell); a run on another family says so. Empty: the model is never judged."
        >
          <input
            value={model.validated_architectures}
            readOnly={readOnly}
            placeholder="e.g. Hopper, Blackwell"
            onChange={(e) => set({ validated_architectures: e.target.value })}
          />
        </Field>
        <SharedCheckbox
          checked={model.shared}
          readOnly={readOnly}
          onChange={(shared) => set({ shared })}
        />
      </div>
      <h2>Source (JavaScript)</h2>
      <p className="hint">
        Hardware attributes are globals and <code>hw.&lt;name&gt;</code>; parameters arrive as{" "}
        <code>params</code>. Well-known functions: computationTime(params), p2pTime(size, params),
        power(state, params), failureRate(params).
      </p>
      <FieldErrors errors={errors} path="source" />
      <CodeEditor
        language="javascript"
        label="Computational model source"
        value={model.source}
        readOnly={readOnly}
        onChange={(source) => set({ source })}
        errorLine={error?.body?.line || sourceErrorLine(errors.source) || testError?.line}
        errorMessage={
          error?.body?.line
            ? error.message
            : sourceErrorLine(errors.source)
              ? errors.source[0]
              : testError?.message
        }
      />
      {!isNew && <TestRun modelId={id} dirty={dirty} version={saved} onError={setTestError} />}
    </section>
  );
}

const FUNCTIONS = [
  ["computationTime", "computationTime(params) → s"],
  ["p2pTime", "p2pTime(size, params) → s"],
  ["power", "power(state, params) → W"],
  ["failureRate", "failureRate(params) → 1/s"],
];

// Evaluate one function of the saved model; a failure's line is marked in the editor (onError).
function TestRun({ modelId, dirty, version, onError }) {
  const [components, setComponents] = useState([]);
  const [component, setComponent] = useState("");
  const [fn, setFn] = useState("computationTime");
  const [arg, setArg] = useState("");
  const [params, setParams] = useState(
    '{\n  "gridSize": 39063, "blockSize": 256, "CUDACoreInstructions": 27,\n  "issuedInstructions": 27, "GMEMBytesTransferred": 384, "latencyBound": 966,\n  "occupancy": 64, "kernelExecutionLambda": 0.703787\n}',
  );
  const [result, setResult] = useState(null);
  const [busy, setBusy] = useState(false);
  const [unavailable, setUnavailable] = useState(false);

  useEffect(() => {
    const controller = new AbortController();
    getAll("/api/components/?page_size=200&ordering=name", { signal: controller.signal }).then(
      (list) => {
        setComponents(list);
        if (list.length) setComponent(String(list[0].id));
      },
      ignoreAbort((e) => setResult({ error: `The components could not be loaded. ${e.message}` })),
    );
    return () => controller.abort();
  }, []);

  // A save makes the last answer stale: it described the source as it was.
  useEffect(() => setResult(null), [version]);

  const report = (next) => {
    setResult(next);
    onError?.(next && next.line ? { line: next.line, message: next.error } : null);
  };

  const run = async () => {
    if (busy) return;
    let parsed;
    try {
      parsed = JSON.parse(params || "{}");
    } catch (e) {
      report({ error: `Sample parameters: not valid JSON (${e.message}).`, field: "params" });
      return;
    }
    const args = fn === "p2pTime" ? [Number(arg || 0)] : fn === "power" ? [arg || "active"] : [];
    // The previous answer goes away at once: a slow run never shows a stale value as this one's.
    report(null);
    setBusy(true);
    try {
      const r = await post(`/api/models/${modelId}/evaluate/`, {
        component: Number(component),
        function: fn,
        args,
        params: parsed,
      });
      report({ value: r.value, fn, raw: r });
    } catch (e) {
      if (
        e instanceof ApiError &&
        (e.status === 405 || (e.status === 404 && !(e.body && e.body.detail)))
      ) {
        setUnavailable(true);
        return;
      }
      const body = e.body || {};
      const fieldMessages = Object.entries(e.fields || {})
        .filter(
          ([path]) => !["detail", "line", "function", "model", "non_field_errors"].includes(path),
        )
        .map(([path, messages]) => `${path}: ${messages.join(" ")}`);
      report({
        error:
          body.message ||
          (typeof body.detail === "string" ? body.detail : "") ||
          [e.message, ...fieldMessages].join(" "),
        line: body.line,
        fields: e.fields,
      });
    } finally {
      setBusy(false);
    }
  };

  return (
    <section className="panel" aria-labelledby="testrun-title">
      <h2 id="testrun-title">Test-run a function</h2>
      {unavailable ? (
        <p className="note" role="status">
          Test-running is not available: this server has no evaluate endpoint (POST /api/models/
          {"{id}"}/evaluate/).
        </p>
      ) : (
        <>
          {dirty && (
            <p className="hint">The test runs the saved source; save first to test your edits.</p>
          )}
          <div className="form-row">
            <label>
              <span className="field-label">Component</span>
              <select
                aria-label="Component to test against"
                value={component}
                onChange={(e) => setComponent(e.target.value)}
              >
                {components.map((c) => (
                  <option key={c.id} value={c.id}>
                    {c.type} · {c.name}
                  </option>
                ))}
              </select>
            </label>
            <label>
              <span className="field-label">Function</span>
              <select aria-label="Function" value={fn} onChange={(e) => setFn(e.target.value)}>
                {FUNCTIONS.map(([f, l]) => (
                  <option key={f} value={f}>
                    {l}
                  </option>
                ))}
              </select>
            </label>
            {(fn === "p2pTime" || fn === "power") && (
              <label>
                <span className="field-label">{fn === "p2pTime" ? "size (bytes)" : "state"}</span>
                <input
                  aria-label={fn === "p2pTime" ? "Message size in bytes" : "Power state"}
                  value={arg}
                  onChange={(e) => setArg(e.target.value)}
                  placeholder={fn === "p2pTime" ? "40000000" : "active"}
                />
              </label>
            )}
          </div>
          <label className="field">
            <span className="field-label">Sample parameters (JSON)</span>
            <textarea
              className="mono"
              rows={5}
              aria-label="Sample parameters JSON"
              value={params}
              onChange={(e) => setParams(e.target.value)}
            />
          </label>
          <button onClick={run} aria-busy={busy}>
            Run
          </button>
          {busy && (
            <p className="muted" role="status">
              Running {fn}…
            </p>
          )}
          {result &&
            (result.error ? (
              <div className="error-box" role="alert">
                <strong>
                  {result.line ? `Line ${result.line}: ` : ""}
                  {result.error}
                </strong>
              </div>
            ) : (
              <p className="result-value" role="status">
                {result.fn}(…) = <strong>{fmt(result.value, 6)}</strong>
              </p>
            ))}
        </>
      )}
    </section>
  );
}
