// Hardware database: list with search, filters and sorting; detail with the attribute table (Fig. 5.2).
import { useEffect, useState } from "react";
import { download, get, ignoreAbort, post } from "../../lib/api.js";
import { errorId } from "../../lib/errors.js";
import { fmt } from "../../lib/format.js";
import { Link, navigate, useLocation, useToast } from "../../lib/router.jsx";
import { ErrorSummary } from "../../components/ErrorSummary.jsx";
import { Field, FieldErrors } from "../../components/Field.jsx";
import { GridTable, REMOVE_COLUMN } from "../../components/GridTable.jsx";
import { JsonImport } from "../../components/JsonImport.jsx";
import { Loading } from "../../components/Loading.jsx";
import { OwnerCell, SharedCheckbox, TextField } from "../../components/RecordFields.jsx";
import { EditorHeader } from "../../components/EditorHeader.jsx";
import { VersionConflict } from "../../components/VersionConflict.jsx";
import { useApiGet } from "../../hooks/useApiGet.js";
import { useRecordEditor } from "../../hooks/useRecordEditor.js";
import { recommendedModelChoices } from "./recommendedModel.js";

// hwdb.models.ComponentType (tests/e2e/test_memory_hierarchy.py checks that they agree).
export const TYPES = ["GPU", "CPU", "NETWORK", "MEMORY", "CACHE", "FABRIC", "STORAGE"];
// The attributes a memory-hierarchy record needs (simulator/memory_spec.py); the server names
// a missing or inconsistent one at save.
const TYPE_HINTS = {
  CACHE:
    "A cache needs size (B), ways, lineSize (B, a power of two), latencyCycles and clock (MHz); size / (ways × lineSize) must be a whole number of sets. Optional: bandwidth (B/s), mshrs (16), writeBack (1 write-back, 0 write-through).",
  FABRIC:
    "A switching fabric needs hopLatencyCycles, clock (MHz) and linkBandwidth (B/s per link). Optional: headerBytes (8).",
  MEMORY:
    "On a memory path a memory needs latency (s) and bandwidth (B/s). Optional: channels (1), peakBandwidth (B/s), size (B).",
};
const OPERATORS = [
  ["gte", "≥"],
  ["gt", ">"],
  ["lte", "≤"],
  ["lt", "<"],
  ["exact", "="],
];

// A number input reports "" for what it cannot read (and 1e999 reads as infinity): flag it
// instead of dropping the condition without a word.
function readRangeValue(input) {
  const value = input.value;
  const bad = input.validity.badInput || (value !== "" && !Number.isFinite(Number(value)));
  return { value: bad ? "" : value, bad };
}

export function HardwareList() {
  const { query } = useLocation();
  const toast = useToast();
  const [search, setSearch] = useState(query.get("search") || "");
  const [type, setType] = useState(query.get("type") || "");
  const [vendor, setVendor] = useState(query.get("vendor") || "");
  const [ordering, setOrdering] = useState(query.get("ordering") || "name");
  const [conditions, setConditions] = useState(query.getAll("attr").map(parseCondition));
  const [data, setData] = useState(null);
  const [error, setError] = useState(null);

  const [reloads, setReloads] = useState(0);
  const filters = filterParams({ search, type, vendor, ordering, conditions }).toString();

  useEffect(() => {
    const controller = new AbortController();
    const timer = setTimeout(async () => {
      // Only when the filters changed: rewriting the URL while the page is being left (sign out
      // submits a form) would abort that navigation in Chromium.
      const url = `/app/hardware?${filters}`;
      if (window.location.pathname + window.location.search !== url)
        window.history.replaceState({}, "", url);
      const p = new URLSearchParams(filters);
      p.set("page_size", "200");
      try {
        const page = await get(`/api/components/?${p}`, { signal: controller.signal });
        setData(page);
        setError(null);
      } catch (e) {
        ignoreAbort(setError)(e);
      }
    }, 200);
    return () => {
      clearTimeout(timer);
      controller.abort();
    };
  }, [filters, reloads]);

  const sortBy = (field) => setOrdering(ordering === field ? `-${field}` : field);
  const sortMark = (field) => (ordering === field ? " ▲" : ordering === `-${field}` ? " ▼" : "");
  const ariaSort = (field) =>
    ordering === field ? "ascending" : ordering === `-${field}` ? "descending" : "none";

  const exportAll = async () => {
    const body = await get(`/api/components/export/?${filters}`);
    download("hardware.json", JSON.stringify(body, null, 2));
  };

  const importComponents = async (parsed) => {
    const body = Array.isArray(parsed) ? { components: parsed } : parsed;
    const created = await post("/api/components/import/", body);
    toast(`Imported ${created.length} component(s).`);
    setError(null);
    setReloads((n) => n + 1);
  };

  return (
    <section aria-labelledby="hw-title">
      <header className="page-head">
        <h1 id="hw-title">Hardware database</h1>
        <div className="actions">
          <button onClick={() => navigate("/app/hardware/new")}>New component</button>
          <JsonImport
            label="Import JSON…"
            fileLabel="Import hardware JSON file"
            accept="application/json,.json"
            onImport={importComponents}
            onError={setError}
          />
          <button onClick={exportAll}>Export JSON</button>
        </div>
      </header>
      <form
        className="filters"
        role="search"
        aria-label="Filter hardware"
        onSubmit={(e) => e.preventDefault()}
      >
        <label>
          <span className="field-label">Search</span>
          <input
            type="search"
            aria-label="Search name or vendor"
            value={search}
            onChange={(e) => setSearch(e.target.value)}
            placeholder="name or vendor"
          />
        </label>
        <label>
          <span className="field-label">Type</span>
          <select aria-label="Type" value={type} onChange={(e) => setType(e.target.value)}>
            <option value="">any</option>
            {TYPES.map((t) => (
              <option key={t}>{t}</option>
            ))}
          </select>
        </label>
        <label>
          <span className="field-label">Vendor</span>
          <input
            aria-label="Vendor"
            value={vendor}
            onChange={(e) => setVendor(e.target.value)}
            placeholder="e.g. NVIDIA"
          />
        </label>
        <fieldset className="conditions">
          <legend className="field-label">Attribute ranges</legend>
          {conditions.map((c, i) => (
            <div className="condition" key={i}>
              <input
                aria-label={`Attribute ${i + 1} key`}
                placeholder="key, e.g. SMs"
                value={c.key}
                onChange={(e) => setConditions(update(conditions, i, { key: e.target.value }))}
              />
              <select
                aria-label={`Attribute ${i + 1} operator`}
                value={c.op}
                onChange={(e) => setConditions(update(conditions, i, { op: e.target.value }))}
              >
                {OPERATORS.map(([op, sign]) => (
                  <option key={op} value={op}>
                    {sign}
                  </option>
                ))}
              </select>
              <input
                aria-label={`Attribute ${i + 1} value`}
                type="number"
                step="any"
                value={c.value}
                aria-invalid={Boolean(c.bad)}
                aria-describedby={c.bad ? `condition-${i}-error` : undefined}
                onChange={(e) => setConditions(update(conditions, i, readRangeValue(e.target)))}
                // React reports no change when an unreadable entry leaves the value "" as before.
                onInput={(e) => setConditions(update(conditions, i, readRangeValue(e.target)))}
              />
              <button
                type="button"
                aria-label={`Remove attribute condition ${i + 1}`}
                onClick={() => setConditions(conditions.filter((_, j) => j !== i))}
              >
                ×
              </button>
              {c.bad && (
                <span className="field-error" id={`condition-${i}-error`} role="alert">
                  Enter a finite number; this condition is not applied.
                </span>
              )}
            </div>
          ))}
          <button
            type="button"
            onClick={() => setConditions([...conditions, { key: "", op: "gte", value: "" }])}
          >
            Add range
          </button>
        </fieldset>
      </form>
      <ErrorSummary error={error} />
      {!data ? (
        <Loading />
      ) : (
        <>
          <p className="muted" aria-live="polite">
            {data.count} component(s)
          </p>
          <table className="grid" aria-label="Hardware components">
            <thead>
              <tr>
                {["name", "type", "vendor"].map((f) => (
                  <th key={f} aria-sort={ariaSort(f)}>
                    <button className="sort" onClick={() => sortBy(f)}>
                      {f[0].toUpperCase() + f.slice(1)}
                      {sortMark(f)}
                    </button>
                  </th>
                ))}
                <th>Key attributes</th>
                <th>Owner</th>
                <th aria-sort={ariaSort("updated")}>
                  <button className="sort" onClick={() => sortBy("updated")}>
                    Updated{sortMark("updated")}
                  </button>
                </th>
              </tr>
            </thead>
            <tbody>
              {data.results.map((c) => (
                <tr key={c.id}>
                  <td>
                    <Link to={`/app/hardware/${c.id}`}>{c.name}</Link>
                  </td>
                  <td>
                    <span className={`tag tag-${c.type}`}>{c.type}</span>
                  </td>
                  <td>{c.vendor}</td>
                  <td className="attrs">
                    {keyAttributes(c.attributes)
                      .map((a) => `${a.key}=${fmt(a.value)}${a.unit ? " " + a.unit : ""}`)
                      .join(", ")}
                  </td>
                  <OwnerCell owner={c.owner || "built-in"} shared={c.shared} />
                  <td>{new Date(c.updated).toLocaleDateString()}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </>
      )}
    </section>
  );
}

const KEY_ATTRIBUTES = [
  "SMs",
  "SMCoreClock",
  "CUDACores",
  "powerConsumptionLoad",
  "cores",
  "size",
  "ways",
  "lineSize",
  "hopLatencyCycles",
  "clock",
  "bandwidth",
  "linkBandwidth",
  "latency",
  "startupHTD",
  "lambdaHTD",
];

// Return up to four attributes worth a glance, the well-known ones first.
function keyAttributes(attributes) {
  const rank = (a) => (KEY_ATTRIBUTES.includes(a.key) ? KEY_ATTRIBUTES.indexOf(a.key) : 100);
  return [...attributes].sort((a, b) => rank(a) - rank(b)).slice(0, 4);
}

// The API's query of the list's filters; conditions without a key or a value are left out.
export function filterParams({ search, type, vendor, ordering, conditions }) {
  const p = new URLSearchParams();
  if (search) p.set("search", search);
  if (type) p.set("type", type);
  if (vendor) p.set("vendor", vendor);
  if (ordering) p.set("ordering", ordering);
  conditions
    .filter((c) => c.key && c.value !== "")
    .forEach((c) => p.append("attr", `${c.key}__${c.op}:${c.value}`));
  return p;
}

function parseCondition(text) {
  const m = /^(.*?)(?:__(gte|gt|lte|lt|exact))?:(.*)$/.exec(text) || [];
  return { key: m[1] || "", op: m[2] || "exact", value: m[3] || "" };
}

function update(list, index, patch) {
  return list.map((item, i) => (i === index ? { ...item, ...patch } : item));
}

const EMPTY = {
  type: "GPU",
  name: "",
  vendor: "",
  comment: "",
  source_url: "",
  recommended_model: "",
  shared: false,
  attributes: [],
  can_edit: true,
};

// What a save sends: attribute values that read as numbers go as numbers.
function toBody(record) {
  return {
    type: record.type,
    name: record.name,
    vendor: record.vendor,
    comment: record.comment,
    source_url: record.source_url,
    recommended_model: record.recommended_model ?? "",
    shared: record.shared,
    attributes: record.attributes.map((a) => ({
      ...a,
      value: a.value === "" ? "" : Number.isFinite(Number(a.value)) ? Number(a.value) : a.value,
    })),
  };
}

export function HardwareDetail({ id }) {
  const {
    isNew,
    record,
    dirty,
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
    endpoint: "/api/components/",
    appPath: "/app/hardware",
    blank: EMPTY,
    toBody,
  });

  // The models a record may recommend: the built-in ones (hwdb.validation accepts no other).
  const builtinModels = useApiGet("/api/models/?builtin=true&page_size=200").data;

  if (!record) return error ? <ErrorSummary error={error} /> : <Loading />;
  const errors = error?.fields || {};
  const readOnly = !record.can_edit;
  const setAttr = (i, patch) => set({ attributes: update(record.attributes, i, patch) });
  const fieldProps = { record, errors, set, readOnly };

  const exportOne = () => {
    const { type, name, vendor, comment, source_url, recommended_model, attributes } = record;
    download(
      `${name.replace(/[^\w.-]+/g, "_")}.json`,
      JSON.stringify(
        {
          components: [{ type, name, vendor, comment, source_url, recommended_model, attributes }],
        },
        null,
        2,
      ),
    );
  };

  return (
    <section aria-labelledby="hwd-title">
      <EditorHeader
        titleId="hwd-title"
        title={isNew ? "New component" : record.name || "(unnamed)"}
        dirty={dirty}
        onSave={readOnly ? null : save}
        onDelete={isNew || readOnly ? null : remove}
      >
        {!isNew && (
          <button onClick={() => clone({ message: "Cloned: this is your copy." })}>Clone</button>
        )}
        {!isNew && <button onClick={exportOne}>Export JSON</button>}
      </EditorHeader>
      <VersionConflict conflict={conflict} onReload={reload} onOverwrite={overwrite} />
      {readOnly && (
        <p className="note">
          This is a {record.owner ? `record of ${record.owner}` : "built-in record"}: read-only.
          Clone it to make an editable copy.
        </p>
      )}
      <ErrorSummary error={error} />
      <div className="form-grid">
        <Field label="Type" path="type" errors={errors} hint={TYPE_HINTS[record.type]}>
          <select
            value={record.type}
            disabled={readOnly}
            onChange={(e) => set({ type: e.target.value })}
          >
            {TYPES.map((t) => (
              <option key={t}>{t}</option>
            ))}
          </select>
        </Field>
        <TextField {...fieldProps} label="Name" name="name" aria-invalid={Boolean(errors.name)} />
        <TextField {...fieldProps} label="Vendor" name="vendor" />
        <TextField {...fieldProps} label="Source link" name="source_url" />
        <TextField {...fieldProps} label="Comment" name="comment" rows={2} />
        <Field
          label="Recommended model"
          path="recommended_model"
          errors={errors}
          hint="The built-in model a sweep runs on this hardware where the node's model was not validated on it (see the models' validated architectures)."
        >
          <select
            value={record.recommended_model ?? ""}
            disabled={readOnly}
            onChange={(e) => set({ recommended_model: e.target.value })}
          >
            <option value="">none</option>
            {recommendedModelChoices(builtinModels?.results, record.recommended_model).map(
              (name) => (
                <option key={name} value={name}>
                  {name}
                </option>
              ),
            )}
          </select>
        </Field>
        <SharedCheckbox
          checked={record.shared}
          readOnly={readOnly}
          onChange={(shared) => set({ shared })}
        />
      </div>
      <h2>Attributes</h2>
      <FieldErrors errors={errors} path="attributes" />
      <GridTable
        label="Attributes"
        className="grid attributes"
        columns={["Key", "Value", "Unit", "Source", !readOnly && REMOVE_COLUMN]}
      >
        {record.attributes.map((a, i) => (
          <tr
            key={i}
            className={
              Object.keys(errors).some((p) => p.startsWith(`attributes[${i}]`)) ? "invalid" : ""
            }
          >
            {["key", "value", "unit", "source"].map((f) => (
              <td key={f}>
                <input
                  aria-label={`Attribute ${i + 1} ${f}`}
                  value={a[f] ?? ""}
                  readOnly={readOnly}
                  aria-invalid={Boolean(errors[`attributes[${i}].${f}`])}
                  aria-describedby={
                    errors[`attributes[${i}].${f}`] ? errorId(`attributes[${i}].${f}`) : undefined
                  }
                  onChange={(e) => setAttr(i, { [f]: e.target.value })}
                  className={f === "source" ? "wide" : ""}
                />
                <FieldErrors errors={errors} path={`attributes[${i}].${f}`} />
              </td>
            ))}
            {!readOnly && (
              <td>
                <button
                  aria-label={`Remove attribute ${i + 1}`}
                  onClick={() => set({ attributes: record.attributes.filter((_, j) => j !== i) })}
                >
                  ×
                </button>
              </td>
            )}
          </tr>
        ))}
      </GridTable>
      {!readOnly && (
        <button
          onClick={() =>
            set({
              attributes: [...record.attributes, { key: "", value: "", unit: "", source: "" }],
            })
          }
        >
          Add attribute
        </button>
      )}
    </section>
  );
}
