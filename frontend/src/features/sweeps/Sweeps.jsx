// Sweeps: variable ranges x GPUs; a chart of any metric against a variable (linear or log
// axes), one line per GPU, or the time per phase stacked; the energy warning.
import { useEffect, useMemo, useRef, useState } from "react";
import { get, post } from "../../lib/api.js";
import { fmtEnergy, fmtTime } from "../../lib/format.js";
import { Link, navigate, useLocation, useToast } from "../../lib/router.jsx";
import { LineChart } from "../../components/charts/LineChart.jsx";
import { StackedBars } from "../../components/charts/StackedBars.jsx";
import { ErrorSummary } from "../../components/ErrorSummary.jsx";
import { FieldErrors } from "../../components/Field.jsx";
import { GridTable } from "../../components/GridTable.jsx";
import { InlineField } from "../../components/InlineField.jsx";
import { Loading } from "../../components/Loading.jsx";
import { Progress } from "../../components/Progress.jsx";
import { Retrying } from "../../components/Retrying.jsx";
import { useApiGet } from "../../hooks/useApiGet.js";
import { usePolling } from "../../hooks/usePolling.js";
import { coerce, graphLabels } from "../launch/launch.js";
import { ModelChoices } from "../launch/ModelChoices.jsx";
import { useLaunchChoices } from "../launch/useLaunchChoices.js";
import { StudyFields } from "../studies/StudyFields.jsx";
import { STUDY_FORM_DEFAULTS, studyFieldName, studyLaunchBody } from "../studies/studies.js";
import { UncertaintyFields, uncertaintyBody } from "../launch/UncertaintyFields.jsx";
import { ShareControl } from "../shares/ShareControl.jsx";
import { SearchAsStudy } from "../studies/SearchAsStudy.jsx";
import { sharedNote } from "../shares/shares.js";
import { ModelWarning } from "../runs/ModelWarning.jsx";
import { PowerWarning } from "../runs/PowerWarning.jsx";
import { pointEnergyTitle, pointsMismatch } from "../runs/energy.js";
import { keepPlottable, SCALES } from "../../lib/scales.js";
import {
  fmtCost,
  formatterFor,
  metricOptions,
  phaseStacks,
  PHASES_METRIC,
  modelWarning,
  unmeasuredIntervals,
  specIntervals,
  powerWarning,
  swappedModels,
  sweepOutcome,
  sweepAxes,
  sweepSeries,
  xCategories,
  tradeoffOptions,
  sampledCaption,
  sweepDetailQuery,
  tradeoffQuery,
  parseConstraints,
  varyingAxes,
} from "./sweeps.js";
import { sweepFieldName, sweepFields } from "./sweepErrors.js";
import { TradeoffChart } from "./TradeoffChart.jsx";

export function SweepList() {
  const { data, error } = useApiGet("/api/sweeps/?page_size=100");
  const sweeps = data && (Array.isArray(data) ? data : data.results);
  return (
    <section aria-labelledby="sweeps-title">
      <header className="page-head">
        <h1 id="sweeps-title">Sweeps</h1>
        <div className="actions">
          <button onClick={() => navigate("/app/sweeps/new")}>New sweep</button>
        </div>
      </header>
      <ErrorSummary error={error} />
      {!sweeps ? (
        <Loading />
      ) : (
        <GridTable label="Sweeps" columns={["Sweep", "Status", "Points", "Created"]}>
          {sweeps.map((s) => (
            <tr key={s.id}>
              <td>
                <Link to={`/app/sweeps/${s.id}`}>{s.name}</Link>
              </td>
              <td>
                <span className={`status status-${s.status}`}>{s.status}</span>
              </td>
              <td>
                {s.aggregate?.done ?? 0} / {s.aggregate?.total ?? "?"}
              </td>
              <td>{new Date(s.created).toLocaleString()}</td>
            </tr>
          ))}
        </GridTable>
      )}
    </section>
  );
}

// "1,2,4" -> list; "8:64:8" -> {start, stop, step}; anything else is sent as typed for the API to judge.
export function parseAxis(text, type) {
  const t = String(text).trim();
  const range = /^(-?[\d.e+-]+)\s*:\s*(-?[\d.e+-]+)\s*:\s*(-?[\d.e+-]+)$/i.exec(t);
  if (range) return { start: Number(range[1]), stop: Number(range[2]), step: Number(range[3]) };
  if (t.includes(",")) return t.split(",").map((x) => coerce(type, x.trim()));
  return coerce(type, t);
}

// Return the sweep's other axes from the form: the attribute and topology axes typed one per
// line ("GPU.SMCoreClock = 1000:1500:250", "gpu0.memoryBandwidth = 2e12,3e12",
// "topology.ndr.up = 1x4,1x8": a template's list parameter as text) and each label
// count typed as a list or a range ("1,2,4,8" or "1:1024:1"), which becomes the axis
// "labels.<label>" (its processes and its node's instances together). A line without "="
// is sent as typed, for the API to name.
export function otherAxes(text, labels) {
  const axes = {};
  String(text || "")
    .split("\n")
    .map((line) => line.trim())
    .filter(Boolean)
    .forEach((line) => {
      const at = line.indexOf("=");
      if (at < 0) axes[line] = [];
      else axes[line.slice(0, at).trim()] = parseAxis(line.slice(at + 1), "float");
    });
  for (const [label, value] of Object.entries(labels)) {
    if (!/^\s*\d+\s*$/.test(value) && /[,:]/.test(value))
      axes[`labels.${label}`] = parseAxis(value, "int");
  }
  return axes;
}

// The launch form of a sweep, or with `study` of a study: the same spec (its axes searched
// instead of run as a grid) and the study's fields (StudyFields), posted to /api/studies/;
// `choice` (a study's) is shown under the heading.
export function SweepNew({ study = false, choice = null }) {
  const { query } = useLocation();
  const c = useLaunchChoices(query);
  const [name, setName] = useState("");
  const [values, setValues] = useState({});
  const [labels, setLabels] = useState({});
  const [queue, setQueue] = useState("");
  const [hwNode, setHwNode] = useState("");
  const [gpus, setGpus] = useState([]);
  const [keepModel, setKeepModel] = useState(false);
  const [axesText, setAxesText] = useState("");
  const [uncertainty, setUncertainty] = useState({});
  const [search, setSearch] = useState(STUDY_FORM_DEFAULTS);
  const [error, setError] = useState(null);
  const { data: componentList, error: componentsError } = useApiGet(
    "/api/components/?page_size=200&ordering=name",
    { all: true },
  );
  const components = useMemo(() => componentList || [], [componentList]);
  useEffect(() => {
    if (c.app)
      setValues(
        Object.fromEntries((c.app.variables || []).map((v) => [v.name, String(v.default ?? "")])),
      );
  }, [c.app]);
  // The counts start afresh only when the system changes: the component list arriving later
  // must not wipe counts the user has typed meanwhile.
  useEffect(() => {
    if (c.system)
      setLabels(Object.fromEntries(Object.keys(graphLabels(c.system.graph)).map((l) => [l, "1"])));
  }, [c.system]);
  // The node to swap defaults to the system's GPU node, which needs the component list; a node
  // the user picked before that list arrived stays, and a new system starts afresh.
  const hwNodePicked = useRef(false);
  useEffect(() => {
    hwNodePicked.current = false;
  }, [c.system]);
  useEffect(() => {
    if (c.system && !hwNodePicked.current) {
      const gpuNode = (c.system.graph?.nodes || []).find(
        (n) => !n.group && components.find((x) => x.id === n.hardware)?.type === "GPU",
      );
      setHwNode(gpuNode ? gpuNode.id : "");
    }
  }, [c.system, components]);
  useEffect(() => {
    if (c.queues.length && !c.queues.some((q) => q.name === queue)) setQueue(c.queues[0].name);
  }, [c.queues, queue]);

  if (c.error) return <ErrorSummary error={c.error} />;
  if (!c.systems || !c.apps) return <Loading />;
  const errors = error?.fields || {};
  // The same errors under the form's paths ("labels.GPU"), shown beside the fields; the summary
  // names the rest in words (sweepErrors.js).
  const local = sweepFields(errors);
  // An Error's message is not enumerable: a spread of the error would drop it and leave the
  // banner empty.
  const shownError = error ? { message: error.message, fields: local } : componentsError;
  const variableErrors = (name) =>
    Object.keys(local).filter(
      (p) =>
        p === `variables.${name}` ||
        p.startsWith(`variables.${name}[`) ||
        p.startsWith(`variables.${name}.`),
    );
  const choiceNames = gpus.map((g) => components.find((x) => x.id === g)?.name);
  const hardwareErrors = Object.keys(local).filter((p) =>
    /^hardware\.components(\[\d+\])?$/.test(p),
  );
  const hwNodes = (c.system?.graph?.nodes || []).filter((n) => !n.group);
  const nodeType = components.find(
    (x) => x.id === hwNodes.find((n) => n.id === hwNode)?.hardware,
  )?.type;
  const candidates = components.filter((x) => !nodeType || x.type === nodeType);

  const launch = async (event) => {
    event.preventDefault();
    const types = Object.fromEntries((c.app?.variables || []).map((v) => [v.name, v.type]));
    const axes = otherAxes(axesText, labels);
    const spec = {
      system_model: c.system?.id,
      application: c.app?.id,
      // a swept label's count is set per point by its axis: 1 stands in for it here
      labels: Object.fromEntries(
        Object.entries(labels).map(([k, v]) => [
          k,
          `labels.${k}` in axes ? 1 : /^\d+$/.test(v) ? Number(v) : v,
        ]),
      ),
      ...(Object.keys(axes).length ? { axes } : {}),
      queue: queue || undefined,
      variables: Object.fromEntries(
        Object.entries(values).map(([k, v]) => [k, parseAxis(v, types[k] || "str")]),
      ),
    };
    const interval = uncertaintyBody(uncertainty);
    if (interval) spec.uncertainty = interval;
    if (hwNode && gpus.length)
      spec.hardware = {
        node: hwNode,
        components: gpus.map(Number),
        model: keepModel ? "keep" : "recommended",
      };
    try {
      if (study) {
        const s = await post("/api/studies/", studyLaunchBody(name, spec, search));
        navigate(`/app/studies/${s.id}`);
        return;
      }
      const s = await post("/api/sweeps/", { name, spec });
      navigate(`/app/sweeps/${s.id}`);
    } catch (e) {
      setError(e);
    }
  };

  return (
    <section aria-labelledby="sweepnew-title">
      <header className="page-head">
        <h1 id="sweepnew-title">{study ? "New study" : "New sweep"}</h1>
      </header>
      {choice}
      <ErrorSummary
        error={shownError}
        names={(path) => (study && studyFieldName(path)) || sweepFieldName(path, choiceNames)}
      />
      <form onSubmit={launch} aria-label={study ? "Define a study" : "Define a sweep"}>
        <div className="form-grid">
          <InlineField label="Name" errors={local} path="name">
            <input aria-label="Sweep name" value={name} onChange={(e) => setName(e.target.value)} />
          </InlineField>
          <ModelChoices choices={c} errors={local} />
          <InlineField label="Queue" errors={local} path="queue">
            <select aria-label="Queue" value={queue} onChange={(e) => setQueue(e.target.value)}>
              {c.queues.length === 0 && <option value="">server default (loading queues…)</option>}
              {c.queues.map((q) => (
                <option key={q.name}>{q.name}</option>
              ))}
            </select>
          </InlineField>
          <UncertaintyFields values={uncertainty} onChange={setUncertainty} errors={local} />
        </div>
        <div className="two-col">
          <fieldset>
            <legend>
              Variables: a value, a list <code>1,2,4</code> or a range <code>start:stop:step</code>{" "}
              (stop included)
            </legend>
            {(c.app?.variables || []).map((v) => (
              <label
                key={v.name}
                className={`field inline${variableErrors(v.name).length ? " invalid" : ""}`}
              >
                <span className="field-label">{v.name}</span>
                <input
                  aria-label={`Sweep values of ${v.name}`}
                  value={values[v.name] ?? ""}
                  onChange={(e) => setValues({ ...values, [v.name]: e.target.value })}
                />
                {variableErrors(v.name).map((p) => (
                  <FieldErrors key={p} errors={local} path={p} />
                ))}
              </label>
            ))}
          </fieldset>
          <fieldset>
            <legend>Hardware to swap in (one line per choice)</legend>
            <label className={`field${local["hardware.node"] ? " invalid" : ""}`}>
              <span className="field-label">Node</span>
              <select
                aria-label="Node to swap"
                value={hwNode}
                onChange={(e) => {
                  hwNodePicked.current = true;
                  setHwNode(e.target.value);
                  setGpus([]);
                }}
              >
                <option value="">— keep the system&apos;s hardware —</option>
                {hwNodes.map((n) => (
                  <option key={n.id} value={n.id}>
                    {n.name || n.id}
                  </option>
                ))}
              </select>
              <FieldErrors errors={local} path="hardware.node" />
            </label>
            {hwNode && (
              <label className="check">
                <input
                  type="checkbox"
                  checked={keepModel}
                  onChange={(e) => setKeepModel(e.target.checked)}
                />{" "}
                Keep the node&apos;s model on every GPU{" "}
                <span className="muted">
                  (else a GPU outside the model&apos;s validated architectures runs the model its
                  record recommends)
                </span>
              </label>
            )}
            {hwNode && (
              <div className="checklist" role="group" aria-label="Hardware choices">
                {candidates.map((x) => (
                  <label key={x.id} className="check">
                    <input
                      type="checkbox"
                      aria-label={x.name}
                      checked={gpus.includes(x.id)}
                      onChange={() =>
                        setGpus(
                          gpus.includes(x.id) ? gpus.filter((g) => g !== x.id) : [...gpus, x.id],
                        )
                      }
                    />{" "}
                    {x.name}{" "}
                    <span className="muted">
                      #{x.id}
                      {x.vendor ? ` · ${x.vendor}` : ""}
                    </span>
                  </label>
                ))}
              </div>
            )}
            {hardwareErrors.map((p) => (
              <FieldErrors
                key={p}
                errors={{ [p]: local[p].map((m) => `${sweepFieldName(p, choiceNames)}: ${m}`) }}
                path={p}
              />
            ))}
            <h3>Label counts</h3>
            {Object.keys(labels).map((l) => (
              <InlineField key={l} className="inline" label={l} errors={local} path={`labels.${l}`}>
                <input
                  aria-label={`Processes with label ${l}`}
                  value={labels[l]}
                  aria-invalid={Boolean(local[`labels.${l}`])}
                  onChange={(e) => setLabels({ ...labels, [l]: e.target.value })}
                />
              </InlineField>
            ))}
            <p className="muted">
              A list <code>1,2,4,8</code> or a range <code>1:1024:1</code> sweeps the label&apos;s
              processes and its node&apos;s instances together (a scaling study).
            </p>
            <FieldErrors errors={local} path="labels" />
            <h3>Hardware attribute axes</h3>
            <label className="field">
              <span className="field-label">
                One per line: <code>node.attribute</code>, <code>TYPE.attribute</code> or{" "}
                <code>topology.id.parameter</code> = values
              </span>
              <textarea
                aria-label="Hardware attribute axes"
                rows={3}
                placeholder={
                  "GPU.SMCoreClock = 1000:1500:250\ngpu0.memoryBandwidth = 2e12,3e12\n" +
                  "topology.nvlink.domainSize = 8,16"
                }
                value={axesText}
                onChange={(e) => setAxesText(e.target.value)}
              />
            </label>
          </fieldset>
        </div>
        {study && <StudyFields values={search} onChange={setSearch} errors={local} />}
        <button type="submit" className="primary big">
          {study ? "Start the study" : "Launch sweep"}
        </button>
      </form>
    </section>
  );
}

export function SweepDetail({ id }) {
  const toast = useToast();
  const [metric, setMetric] = useState("overall_time_s");
  const [axis, setAxis] = useState("");
  const [xScale, setXScale] = useState("linear");
  const [yScale, setYScale] = useState("linear");
  // The trade-off: two objectives, their directions and the constraints the server flags
  // each point by (feasible, on the Pareto front).
  const [objectives, setObjectives] = useState({
    x: "overall_time_s",
    y: "energy_j",
    xDirection: "",
    yDirection: "",
  });
  const [constraintText, setConstraintText] = useState("");
  const [constraints, setConstraints] = useState([]);
  const [constraintProblem, setConstraintProblem] = useState(null);
  const query = tradeoffQuery({ ...objectives, constraints });
  // A lost connection or a server error keeps the chart and tries again, slower.
  const {
    value: sweep,
    error,
    retrying,
  } = usePolling(
    (signal) => get(`/api/sweeps/${id}/${sweepDetailQuery(query)}`, { signal }),
    (s) => s.status === "running",
    800,
    `${id}${query}`,
  );

  const points = useMemo(() => sweep?.points || [], [sweep]);
  const axes = useMemo(() => sweepAxes(sweep?.spec), [sweep]);
  const varying = useMemo(() => varyingAxes(points, axes), [axes, points]);
  const nodeNames = useMemo(
    () =>
      Object.fromEntries((sweep?.spec?.snapshot?.nodes || []).map((n) => [n.id, n.name || n.id])),
    [sweep],
  );
  const metrics = useMemo(() => metricOptions(points, axes, nodeNames), [points, axes, nodeNames]);
  const x = axis || varying[0] || axes[0];
  const chosen = metrics.find((m) => m.value === metric) || {
    value: metric,
    label: metric,
    unit: "time",
  };
  const stacked = metric === PHASES_METRIC;
  const categories = useMemo(() => xCategories(points, x), [points, x]);
  // a text axis (e.g. the cluster template) is categorical: no log scale along it
  const xKind = categories ? "linear" : xScale;
  const plotted = useMemo(
    () => keepPlottable(sweepSeries(points, metric, x, varying), xKind, yScale),
    [points, metric, x, varying, xKind, yScale],
  );
  const stacks = useMemo(() => phaseStacks(points, x, varying), [points, x, varying]);
  const warning = useMemo(() => powerWarning(points), [points]);
  const accountings = useMemo(() => pointsMismatch(points), [points]);
  const outside = useMemo(() => modelWarning(points), [points]);
  const swapped = useMemo(() => swappedModels(points), [points]);
  const unmeasured = useMemo(() => unmeasuredIntervals(points), [points]);
  const fromSpec = useMemo(() => specIntervals(points), [points]);
  const choices = useMemo(
    () => tradeoffOptions(points, axes, nodeNames),
    [points, axes, nodeNames],
  );
  const choice = (key) => choices.find((c) => c.value === key) || { value: key, label: key };
  const applyConstraints = (event) => {
    event.preventDefault();
    const parsed = parseConstraints(
      constraintText,
      choices.map((c) => c.value),
    );
    setConstraintProblem(parsed.problem);
    if (!parsed.problem) setConstraints(parsed.constraints);
  };

  if (error) return <ErrorSummary error={error} />;
  if (!sweep) return retrying ? <Retrying error={retrying} /> : <Loading />;
  const agg = sweep.aggregate || {};
  const outcome = sweepOutcome(sweep, points);
  const format = formatterFor(chosen.unit);
  return (
    <section aria-labelledby="sweep-title">
      <header className="page-head">
        <h1 id="sweep-title">{sweep.name}</h1>
        <div className="actions">
          <a className="button" href={sweep.results_url} download>
            Download CSV
          </a>
          {sweep.access !== "shared" && sweep.status === "running" && (
            <button
              onClick={() =>
                post(`/api/sweeps/${id}/cancel/`).catch((e) => toast(e.message, "error"))
              }
            >
              Cancel
            </button>
          )}
          {sweep.access !== "shared" && <ShareControl kind="sweep" id={sweep.id} />}
        </div>
      </header>
      {sweep.access === "shared" && (
        <p className="notice shared" data-testid="shared-note">
          {sharedNote("sweep", sweep.owner)}
        </p>
      )}
      <p className="muted">
        <span className={`status status-${sweep.status}`} data-testid="sweep-status">
          {sweep.status}
        </span>{" "}
        · <span data-testid="sweep-summary">{outcome.summary}</span>
      </p>
      <SearchAsStudy
        sweep={sweep}
        objectives={[
          { metric: objectives.x, direction: objectives.xDirection },
          { metric: objectives.y, direction: objectives.yDirection },
        ]}
        constraints={constraints}
      />
      {outcome.noneSucceeded && outcome.errors.length > 0 && (
        <div className="error-box" role="alert" data-testid="sweep-errors">
          <strong>
            {outcome.errors.length === 1
              ? "Every failed point gave this error:"
              : `The failed points gave ${outcome.errors.length} errors:`}
          </strong>
          <ul>
            {outcome.errors.map((e) => (
              <li key={e.message}>
                <span className="error-cell">{e.message}</span>{" "}
                <span className="muted">
                  (
                  {e.points.map((simulation, i) => (
                    <span key={simulation}>
                      {i > 0 && ", "}
                      <Link to={`/app/runs/${simulation}`}>#{simulation}</Link>
                    </span>
                  ))}
                  )
                </span>
              </li>
            ))}
          </ul>
        </div>
      )}
      <Retrying error={retrying} />
      {sweep.status === "running" && (
        <Progress value={(agg.done || 0) / (agg.total || 1)} label="Sweep progress" />
      )}
      {swapped.length > 0 && (
        <p className="notice" role="note" aria-label="Models swapped">
          Where the system&apos;s model was not validated on a swapped-in GPU, the point ran the
          model that GPU&apos;s record recommends: {swapped.join("; ")}.
        </p>
      )}
      {outside && (
        <ModelWarning
          scope={`In ${outside.points} of ${outside.of} finished points, the`}
          lines={outside.lines}
        />
      )}
      {fromSpec.length > 0 && (
        <div className="notice" role="note" aria-label="Intervals from spec-mode error">
          <strong>Intervals from spec-mode error.</strong> No kit run measured these GPUs; their
          error bars are the model&apos;s error predicting the measured GPUs from their spec
          records: {fromSpec.join("; ")}.
        </div>
      )}
      {unmeasured.length > 0 && (
        <div className="notice" role="note" aria-label="Intervals without a measurement">
          <strong>Zero-width intervals.</strong> No kit measurement gives these GPUs a spread, so
          their points carry no error bar: {unmeasured.join("; ")}.
        </div>
      )}
      {warning && (
        <PowerWarning
          scope={`In ${warning.points} of ${warning.of} finished points, the`}
          lines={warning.lines}
        />
      )}
      {accountings && (
        <div className="notice warning" role="note" aria-label="Energy accountings differ">
          <strong>Energies of these points not comparable.</strong> {accountings.text}
        </div>
      )}
      {!outcome.noneSucceeded && (
        <>
          <div className="form-row">
            <label>
              <span className="field-label">Plot</span>
              <select
                aria-label="Metric"
                value={metric}
                onChange={(e) => setMetric(e.target.value)}
              >
                {!metrics.some((m) => m.value === metric) && (
                  <option value={metric}>{metric}</option>
                )}
                {metrics.map((m) => (
                  <option key={m.value} value={m.value}>
                    {m.label}
                  </option>
                ))}
              </select>
            </label>
            <label>
              <span className="field-label">against</span>
              <select
                aria-label="Variable on the x axis"
                value={x}
                onChange={(e) => setAxis(e.target.value)}
              >
                {axes.map((a) => (
                  <option key={a}>{a}</option>
                ))}
              </select>
            </label>
            <label>
              <span className="field-label">x axis</span>
              <select
                aria-label="X axis scale"
                value={xScale}
                disabled={stacked || Boolean(categories)}
                onChange={(e) => setXScale(e.target.value)}
              >
                {SCALES.map((s) => (
                  <option key={s}>{s}</option>
                ))}
              </select>
            </label>
            <label>
              <span className="field-label">y axis</span>
              <select
                aria-label="Y axis scale"
                value={yScale}
                disabled={stacked}
                onChange={(e) => setYScale(e.target.value)}
              >
                {SCALES.map((s) => (
                  <option key={s}>{s}</option>
                ))}
              </select>
            </label>
          </div>
          {stacked ? (
            <>
              <p className="muted">
                Process time by phase, summed over the run&apos;s processes (phases running at once
                add up); bars on a linear axis.
              </p>
              <StackedBars stacks={stacks} xLabel={x} yLabel="process time" yFormat={fmtTime} />
            </>
          ) : (
            <>
              {plotted.dropped > 0 && (
                <p className="muted" data-testid="log-dropped">
                  {plotted.dropped} point{plotted.dropped === 1 ? "" : "s"} at or below 0 left out
                  of the log axis.
                </p>
              )}
              <LineChart
                series={plotted.series}
                xLabel={x}
                yLabel={chosen.label}
                yFormat={format}
                xScale={xKind}
                yScale={yScale}
                xCategories={categories}
              />
            </>
          )}
        </>
      )}
      {!outcome.noneSucceeded && (
        <section aria-labelledby="tradeoff-title">
          <h2 id="tradeoff-title">Trade-off</h2>
          <p className="muted">
            Any figure against any other; the Pareto front holds the feasible points no other
            feasible point beats on both (computed by the server, the CSV carries the same flags).
          </p>
          <div className="form-row">
            {[
              ["x", "xDirection", "X objective"],
              ["y", "yDirection", "Y objective"],
            ].map(([key, direction, label]) => (
              <span key={key}>
                <label>
                  <span className="field-label">{label}</span>
                  <select
                    aria-label={label}
                    value={objectives[key]}
                    onChange={(e) => setObjectives({ ...objectives, [key]: e.target.value })}
                  >
                    {!choices.some((c) => c.value === objectives[key]) && (
                      <option value={objectives[key]}>{objectives[key]}</option>
                    )}
                    {choices.map((c) => (
                      <option key={c.value} value={c.value}>
                        {c.label}
                      </option>
                    ))}
                  </select>
                </label>
                <label>
                  <span className="field-label">best</span>
                  <select
                    aria-label={`${label} direction`}
                    value={objectives[direction]}
                    onChange={(e) => setObjectives({ ...objectives, [direction]: e.target.value })}
                  >
                    <option value="">default</option>
                    <option value="min">lowest</option>
                    <option value="max">highest</option>
                  </select>
                </label>
              </span>
            ))}
          </div>
          <form className="form-row" onSubmit={applyConstraints}>
            <label>
              <span className="field-label">Constraints (one per line)</span>
              <textarea
                aria-label="Constraints"
                rows={2}
                placeholder={"gpu_power_w <= 700\noverall_time_s < 7200"}
                value={constraintText}
                onChange={(e) => setConstraintText(e.target.value)}
              />
            </label>
            <button type="submit">Apply</button>
          </form>
          {constraintProblem && (
            <p className="field-error" role="alert" data-testid="constraint-problem">
              Line {constraintProblem.line}: {constraintProblem.message}
            </p>
          )}
          {(sweep.constraints || []).length > 0 && (
            <p className="muted" data-testid="constraints-applied">
              Feasible: {sweep.constraints.join(" and ")}.
            </p>
          )}
          <TradeoffChart
            points={points}
            x={objectives.x}
            y={objectives.y}
            xLabel={choice(objectives.x).label}
            yLabel={choice(objectives.y).label}
            xFormat={formatterFor(choice(objectives.x).unit)}
            yFormat={formatterFor(choice(objectives.y).unit)}
            xScale={xScale}
            yScale={yScale}
          />
          <p>
            <a
              className="button"
              href={`${sweep.results_url}${query}`}
              download
              data-testid="tradeoff-csv"
            >
              Download CSV with these flags
            </a>
          </p>
        </section>
      )}
      <h2>Points</h2>
      {sampledCaption(sweep) && (
        <p className="muted" data-testid="sampled-caption">
          {sampledCaption(sweep)}
        </p>
      )}
      <table className="grid" aria-label="Sweep points">
        <thead>
          <tr>
            <th>Run</th>
            <th>Status</th>
            <th>GPU</th>
            {axes.map((a) => (
              <th key={a}>{a}</th>
            ))}
            <th title="On the Pareto front of the trade-off above; infeasible: a constraint fails">
              Front
            </th>
            <th>Cost</th>
            <th>Overall time</th>
            <th>Kernel</th>
            <th>Transfer</th>
            <th>Energy</th>
            <th>Error</th>
          </tr>
        </thead>
        <tbody>
          {points.map((p) => (
            <tr key={p.simulation}>
              <td>
                <Link to={`/app/runs/${p.simulation}`}>#{p.simulation}</Link>
              </td>
              <td>
                <span className={`status status-${p.status}`}>{p.status}</span>
              </td>
              <td>{p.gpu || p.hardware}</td>
              {axes.map((a) => (
                <td key={a}>{String(p[a])}</td>
              ))}
              <td data-testid="point-front">
                {p.feasible === false ? "infeasible" : p.pareto ? "★ front" : ""}
              </td>
              <td>{typeof p.cost_usd === "number" ? fmtCost(p.cost_usd) : ""}</td>
              <td>{fmtTime(p.overall_time_s)}</td>
              <td>{fmtTime(p.kernel_s)}</td>
              <td>{fmtTime(p.transfer_s)}</td>
              <td title={pointEnergyTitle(p)}>
                {fmtEnergy(p.energy_j)}
                {p.power_missing ? " ⚠" : ""}
              </td>
              <td className="error-cell">{p.error}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </section>
  );
}
