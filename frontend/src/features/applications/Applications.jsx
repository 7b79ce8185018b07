// Application models: Python (MERPSYS Listing 5 style) with highlighting and the variables table.
import { errorId, sourceErrorLine, sourceErrors } from "../../lib/errors.js";
import { Link, navigate } from "../../lib/router.jsx";
import { CodeEditor } from "../../components/CodeEditor.jsx";
import { ErrorSummary } from "../../components/ErrorSummary.jsx";
import { FieldErrors } from "../../components/Field.jsx";
import { GridTable, REMOVE_COLUMN } from "../../components/GridTable.jsx";
import { Loading } from "../../components/Loading.jsx";
import { OwnerCell, SharedCheckbox, TextField } from "../../components/RecordFields.jsx";
import { EditorHeader } from "../../components/EditorHeader.jsx";
import { VersionConflict } from "../../components/VersionConflict.jsx";
import { useApiGet } from "../../hooks/useApiGet.js";
import { useRecordEditor } from "../../hooks/useRecordEditor.js";

export function ApplicationList() {
  const { data: apps, error } = useApiGet("/api/applications/?page_size=200", { all: true });
  return (
    <section aria-labelledby="apps-title">
      <header className="page-head">
        <h1 id="apps-title">Application models</h1>
        <div className="actions">
          <button onClick={() => navigate("/app/applications/new")}>New application model</button>
        </div>
      </header>
      <ErrorSummary error={error} />
      {!apps ? (
        <Loading />
      ) : (
        <GridTable label="Application models" columns={["Name", "Variables", "Owner"]}>
          {apps.map((a) => (
            <tr key={a.id}>
              <td>
                <Link to={`/app/applications/${a.id}`}>{a.name}</Link>
              </td>
              <td>{(a.variables || []).map((v) => v.name).join(", ")}</td>
              <OwnerCell owner={a.owner} shared={a.shared} />
            </tr>
          ))}
        </GridTable>
      )}
    </section>
  );
}

const NEW_APP = {
  name: "",
  description: "",
  shared: false,
  variables: [{ name: "N", type: "int", default: 1000000, description: "" }],
  source:
    '# Run once per simulated process: tag, rank, labels, the variables and sim are globals.\nif tag.equals("CPU"):\n    sim.p2pCommunicationSend(4 * float(N), "GPU", ConstVar.HostToDevice)\nelse:\n    sim.p2pCommunicationReceive("CPU")\n',
};
const TYPES = ["int", "float", "bool", "str"];

// A number beyond the float range (1e400) is sent as typed: JSON would turn it into null.
function parseDefault(type, text) {
  if (type === "int" || type === "float")
    return text === "" || !Number.isFinite(Number(text)) ? text : Number(text);
  if (type === "bool") return text === true || text === "true";
  return text;
}

// What a save sends: each variable's default read as its type.
function toBody(app) {
  return {
    name: app.name,
    description: app.description,
    shared: app.shared,
    source: app.source,
    variables: app.variables.map((v) => ({ ...v, default: parseDefault(v.type, v.default) })),
  };
}

export function ApplicationEditor({ id }) {
  const {
    isNew,
    record: app,
    dirty,
    error,
    edit: set,
    save,
    remove,
    conflict,
    reload,
    overwrite,
  } = useRecordEditor({
    id,
    endpoint: "/api/applications/",
    appPath: "/app/applications",
    blank: NEW_APP,
    toBody,
  });

  if (!app) return error ? <ErrorSummary error={error} /> : <Loading />;
  const errors = error?.fields || {};
  const setVar = (i, patch) =>
    set({ variables: app.variables.map((v, j) => (j === i ? { ...v, ...patch } : v)) });
  const fieldProps = { record: app, errors, set };
  const lineError = error?.body?.line || sourceErrorLine(errors.source);

  return (
    <section aria-labelledby="app-title">
      <EditorHeader
        titleId="app-title"
        title={isNew ? "New application model" : app.name || "(unnamed)"}
        dirty={dirty}
        onSave={save}
        onDelete={isNew ? null : remove}
      >
        {!isNew && (
          <button onClick={() => navigate(`/app/launch?application=${id}`)}>Launch…</button>
        )}
      </EditorHeader>
      <VersionConflict conflict={conflict} onReload={reload} onOverwrite={overwrite} />
      <ErrorSummary error={error} />
      <div className="form-grid">
        <TextField {...fieldProps} label="Name" name="name" aria-invalid={Boolean(errors.name)} />
        <TextField {...fieldProps} label="Description" name="description" />
        <SharedCheckbox checked={app.shared} onChange={(shared) => set({ shared })} />
      </div>
      <h2>Variables</h2>
      <FieldErrors errors={errors} path="variables" />
      <GridTable
        label="Variables"
        columns={["Name", "Type", "Default", "Description", REMOVE_COLUMN]}
      >
        {app.variables.map((v, i) => (
          <tr
            key={i}
            className={
              Object.keys(errors).some((p) => p.startsWith(`variables[${i}]`)) ? "invalid" : ""
            }
          >
            <td>
              <input
                aria-label={`Variable ${i + 1} name`}
                value={v.name}
                aria-invalid={Boolean(errors[`variables[${i}].name`])}
                aria-describedby={
                  errors[`variables[${i}].name`] ? errorId(`variables[${i}].name`) : undefined
                }
                onChange={(e) => setVar(i, { name: e.target.value })}
              />
              <FieldErrors errors={errors} path={`variables[${i}].name`} />
              <FieldErrors errors={errors} path={`variables[${i}]`} />
            </td>
            <td>
              <select
                aria-label={`Variable ${i + 1} type`}
                value={v.type}
                onChange={(e) => setVar(i, { type: e.target.value })}
              >
                {TYPES.map((t) => (
                  <option key={t}>{t}</option>
                ))}
              </select>
              <FieldErrors errors={errors} path={`variables[${i}].type`} />
            </td>
            <td>
              <input
                aria-label={`Variable ${i + 1} default`}
                value={String(v.default ?? "")}
                aria-invalid={Boolean(errors[`variables[${i}].default`])}
                aria-describedby={
                  errors[`variables[${i}].default`] ? errorId(`variables[${i}].default`) : undefined
                }
                onChange={(e) => setVar(i, { default: e.target.value })}
              />
              <FieldErrors errors={errors} path={`variables[${i}].default`} />
            </td>
            <td>
              <input
                aria-label={`Variable ${i + 1} description`}
                value={v.description || ""}
                onChange={(e) => setVar(i, { description: e.target.value })}
              />
            </td>
            <td>
              <button
                aria-label={`Remove variable ${i + 1}`}
                onClick={() => set({ variables: app.variables.filter((_, j) => j !== i) })}
              >
                ×
              </button>
            </td>
          </tr>
        ))}
      </GridTable>
      <button
        onClick={() =>
          set({
            variables: [...app.variables, { name: "", type: "int", default: 0, description: "" }],
          })
        }
      >
        Add variable
      </button>
      <h2>Source (Python)</h2>
      <p className="hint">
        Globals: <code>tag</code>, <code>rank</code>, <code>labels</code>, the variables,{" "}
        <code>ConstVar</code> and <code>sim</code> (computation, p2pCommunicationSend/Receive,
        broadcast, scatter, gather, barrier, allreduce, allgather, reduceScatter, reduce, alltoall,
        now, random).
      </p>
      <FieldErrors errors={errors} path="source" />
      <CodeEditor
        language="python"
        label="Application model source"
        value={app.source}
        onChange={(source) => set({ source })}
        errorLine={lineError}
        errorMessage={sourceErrorLine(errors.source) ? errors.source[0] : error?.message}
        errors={sourceErrors(errors.source)}
      />
    </section>
  );
}
