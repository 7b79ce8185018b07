// Shared building blocks: fields with their errors, the code editor, charts, small helpers.
import { cloneElement, isValidElement, useEffect, useRef, useState } from "react";
import { isTransient } from "./api.js";
import { EditorView, basicSetup } from "codemirror";
import { EditorState, Compartment } from "@codemirror/state";
import { javascript } from "@codemirror/lang-javascript";
import { python } from "@codemirror/lang-python";
import { setDiagnostics } from "@codemirror/lint";

export function fmt(value, digits = 4) {
  if (value === null || value === undefined || value === "") return "—";
  if (typeof value !== "number") return String(value);
  if (value === 0) return "0";
  const abs = Math.abs(value);
  if (abs >= 1e6 || abs < 1e-3) return value.toExponential(digits - 1);
  return Number(value.toPrecision(digits)).toString();
}

// Seconds with a readable unit: 0.011998 -> "11.998 ms".
export function fmtTime(seconds) {
  if (seconds === null || seconds === undefined) return "—";
  const abs = Math.abs(seconds);
  if (abs === 0) return "0 s";
  if (abs < 1e-4) return `${(seconds * 1e6).toFixed(3)} µs`;
  if (abs < 1) return `${(seconds * 1e3).toFixed(3)} ms`;
  return `${seconds.toFixed(3)} s`;
}

// Bytes with a binary unit: 2932736 -> "2.80 MiB".
export function fmtBytes(bytes) {
  if (bytes === null || bytes === undefined) return "—";
  const units = ["B", "KiB", "MiB", "GiB", "TiB", "PiB"];
  let value = Number(bytes);
  let unit = 0;
  while (Math.abs(value) >= 1024 && unit < units.length - 1) {
    value /= 1024;
    unit += 1;
  }
  if (unit === 0) return `${Math.round(value)} B`;
  return `${Number.isInteger(value) ? value : value.toFixed(2)} ${units[unit]}`;
}

export function fmtEnergy(joules) {
  if (joules === null || joules === undefined) return "—";
  if (Math.abs(joules) < 1) return `${(joules * 1e3).toFixed(3)} mJ`;
  return `${joules.toFixed(3)} J`;
}

export function FieldErrors({ errors, path, id }) {
  const messages = errors?.[path];
  if (!messages || !messages.length) return null;
  return (
    <div className="field-error" role="alert" id={id || errorId(path)} data-error-path={path}>
      {messages.join(" ")}
    </div>
  );
}

// Return the id of the message element of the API field `path` (for aria-describedby).
export const errorId = (path) => `error-${String(path).replace(/[^\w-]+/g, "_")}`;

// Move the keyboard focus to the first invalid control of the page, else to the error box.
export function focusFirstError() {
  const main = document.getElementById("main");
  if (!main) return;
  const target = main.querySelector('[aria-invalid="true"], .field.invalid input, .field.invalid select') || main.querySelector(".error-box");
  if (target) target.focus({ preventScroll: false });
}

// Errors not shown beside a field: listed at the top of the form. A new error moves the focus
// to the first invalid field (or to this box), so keyboard and screen-reader users land on it.
export function ErrorSummary({ error, shown = [] }) {
  useEffect(() => {
    if (error) focusFirstError();
  }, [error]);
  if (!error) return null;
  const fields = error.fields || {};
  const rest = Object.entries(fields).filter(([path]) => !shown.some((p) => path === p || path.startsWith(`${p}.`) || path.startsWith(`${p}[`)));
  return (
    <div className="error-box" role="alert" aria-live="assertive" tabIndex={-1}>
      <strong>{error.message}</strong>
      {rest.length > 0 && (
        <ul>
          {rest.map(([path, messages]) => (
            <li key={path}>
              {path && path !== "non_field_errors" && path !== "detail" ? <code>{path}</code> : null} {messages.join(" ")}
            </li>
          ))}
        </ul>
      )}
    </div>
  );
}

export function Field({ label, path, errors, children, hint }) {
  const invalid = Boolean(errors?.[path]);
  // The control says it is invalid and names its message, for screen readers.
  const control = invalid && isValidElement(children) ? cloneElement(children, { "aria-invalid": true, "aria-describedby": errorId(path) }) : children;
  return (
    <div className={`field${invalid ? " invalid" : ""}`}>
      <label className="field">
        <span className="field-label">{label}</span>
        {control}
      </label>
      {hint && <span className="hint">{hint}</span>}
      <FieldErrors errors={errors} path={path} />
    </div>
  );
}

// The line of a source field's error: the server refuses a model or application that does not
// compile with "Line N: ..." on its "source" field.
export function sourceErrorLine(messages) {
  const match = /^Line (\d+):/.exec((messages && messages[0]) || "");
  return match ? Number(match[1]) : null;
}

// CodeMirror 6 editor: JavaScript or Python highlighting; `errorLine` marks a line in red.
export function CodeEditor({ value, onChange, language, label, errorLine, errorMessage, readOnly = false }) {
  const host = useRef(null);
  const view = useRef(null);
  const onChangeRef = useRef(onChange);
  const readOnlyCompartment = useRef(new Compartment());
  onChangeRef.current = onChange;

  useEffect(() => {
    const lang = language === "python" ? python() : javascript();
    const state = EditorState.create({
      doc: value || "",
      extensions: [
        basicSetup,
        lang,
        readOnlyCompartment.current.of([EditorState.readOnly.of(readOnly), EditorView.editable.of(!readOnly)]),
        EditorView.contentAttributes.of({ "aria-label": label || "Code editor" }),
        EditorView.updateListener.of((update) => {
          if (update.docChanged) onChangeRef.current?.(update.state.doc.toString());
        }),
      ],
    });
    view.current = new EditorView({ state, parent: host.current });
    return () => view.current.destroy();
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [language]);

  useEffect(() => {
    const v = view.current;
    if (v && value !== undefined && v.state.doc.toString() !== value) {
      v.dispatch({ changes: { from: 0, to: v.state.doc.length, insert: value } });
    }
  }, [value]);

  useEffect(() => {
    view.current?.dispatch({
      effects: readOnlyCompartment.current.reconfigure([EditorState.readOnly.of(readOnly), EditorView.editable.of(!readOnly)]),
    });
  }, [readOnly]);

  useEffect(() => {
    const v = view.current;
    if (!v) return;
    if (errorLine && errorLine >= 1 && errorLine <= v.state.doc.lines) {
      const line = v.state.doc.line(errorLine);
      v.dispatch(setDiagnostics(v.state, [{ from: line.from, to: Math.max(line.to, line.from), severity: "error", message: errorMessage || "Error" }]));
    } else {
      v.dispatch(setDiagnostics(v.state, []));
    }
  }, [errorLine, errorMessage]);

  return <div className="code-editor" ref={host} data-error-line={errorLine || ""} />;
}

export function Progress({ value, label }) {
  const pct = Math.round((value || 0) * 100);
  return (
    <div className="progress" role="progressbar" aria-label={label || "Progress"} aria-valuemin={0} aria-valuemax={100} aria-valuenow={pct}>
      <div className="progress-bar" style={{ width: `${pct}%` }} />
      <span className="progress-text">{pct}%</span>
    </div>
  );
}

// Return round axis ticks from 0 to the first one at or above `max` (steps of 1, 2, 2.5 or 5 x 10^k).
export function niceTicks(max, count = 4) {
  if (!(max > 0) || !Number.isFinite(max)) return [0, 1];
  const raw = max / count;
  const magnitude = 10 ** Math.floor(Math.log10(raw));
  const step = [1, 2, 2.5, 5, 10].map((m) => m * magnitude).find((s) => s >= raw * (1 - 1e-9));
  const ticks = [0];
  while (ticks[ticks.length - 1] < max * (1 - 1e-9)) ticks.push(Number((ticks.length * step).toPrecision(12)));
  return ticks;
}

const PALETTE = ["#2457c5", "#d9480f", "#2b8a3e", "#862e9c", "#e67700", "#0b7285", "#c2255c", "#5c940d", "#364fc7", "#a61e4d"];
export const color = (i) => PALETTE[i % PALETTE.length];

// Gantt timeline: one row per process; bars coloured by kind (compute, send, receive, wait...).
export function Gantt({ timeline, width = 900 }) {
  if (!timeline || !timeline.length) return <p className="muted">No timeline recorded.</p>;
  const processes = [...new Set(timeline.map((t) => t.process))];
  const kinds = [...new Set(timeline.map((t) => t.kind))];
  const end = Math.max(...timeline.map((t) => t.end_s)) || 1;
  const ticks = niceTicks(end).filter((t) => t <= end * (1 + 1e-9));
  const left = 110;
  const row = 26;
  const plotW = width - left - 60;
  const passive = (kind) => /receive|wait|barrier|idle/.test(kind);
  const ordered = [...timeline].sort((a, b) => Number(!passive(a.kind)) - Number(!passive(b.kind)));
  const height = processes.length * row + 50;
  const x = (t) => left + (t / end) * plotW;
  return (
    <figure className="chart" aria-label="Gantt timeline of processes">
      <svg width={width} height={height} role="img" aria-label={`Timeline of ${processes.length} processes over ${fmtTime(end)}`}>
        {ticks.map((t) => (
          <g key={t}>
            <line x1={x(t)} x2={x(t)} y1={10} y2={height - 30} stroke="#e3e7ee" />
            <text x={x(t)} y={height - 14} fontSize="11" textAnchor="middle">{fmtTime(t)}</text>
          </g>
        ))}
        {processes.map((p, i) => (
          <text key={p} x={left - 8} y={20 + i * row + row / 2} fontSize="12" textAnchor="end">{p}</text>
        ))}
        {ordered.map((t, i) => {
          const r = processes.indexOf(t.process);
          const w = Math.max(1.5, x(t.end_s) - x(t.start_s));
          const thin = passive(t.kind);
          return (
            <rect key={i} x={x(t.start_s)} y={14 + r * row + (thin ? 5 : 0)} width={w} height={thin ? row - 20 : row - 10} fill={color(kinds.indexOf(t.kind))} opacity={thin ? 0.55 : 0.9}>
              <title>{`${t.process}: ${t.kind} ${fmtTime(t.start_s)} – ${fmtTime(t.end_s)} (${fmtTime(t.end_s - t.start_s)})`}</title>
            </rect>
          );
        })}
      </svg>
      <figcaption className="legend">
        {kinds.map((k, i) => (
          <span key={k}><i style={{ background: color(i) }} />{k}</span>
        ))}
      </figcaption>
    </figure>
  );
}

// Horizontal bar chart: [{label, value}] with a unit formatter.
export function Bars({ items, format = fmt, label, width = 560 }) {
  if (!items || !items.length) return <p className="muted">Nothing to chart.</p>;
  const max = Math.max(...items.map((i) => i.value)) || 1;
  const left = 170;
  const row = 26;
  const height = items.length * row + 10;
  return (
    <figure className="chart" aria-label={label}>
      <svg width={width} height={height} role="img" aria-label={label}>
        {items.map((item, i) => {
          const w = ((width - left - 110) * item.value) / max;
          return (
            <g key={item.label}>
              <text x={left - 8} y={i * row + 18} fontSize="12" textAnchor="end">{item.label}</text>
              <rect x={left} y={i * row + 5} width={Math.max(1, w)} height={row - 8} fill={color(i)} />
              <text x={left + w + 6} y={i * row + 18} fontSize="12">{format(item.value)}</text>
            </g>
          );
        })}
      </svg>
    </figure>
  );
}

// Line chart: series [{name, points: [[x, y], ...]}], one line each.
export function LineChart({ series, xLabel, yLabel, yFormat = fmt, width = 1100, height = 360 }) {
  const all = series.flatMap((s) => s.points);
  if (!all.length) return <p className="muted">No finished points yet.</p>;
  const xs = all.map((p) => p[0]);
  const ys = all.map((p) => p[1]);
  const [x0, x1] = [Math.min(...xs), Math.max(...xs)];
  const yTicks = niceTicks(Math.max(...ys));
  const [y0, y1] = [0, yTicks[yTicks.length - 1]];
  const m = { l: 80, r: 20, t: 20, b: 50 };
  const X = (v) => m.l + ((v - x0) / (x1 - x0 || 1)) * (width - m.l - m.r);
  const Y = (v) => height - m.b - ((v - y0) / (y1 - y0 || 1)) * (height - m.t - m.b);
  const xTicks = [...new Set(xs)].sort((a, b) => a - b);
  const xShown = xTicks.length > 10 ? xTicks.filter((_, i) => i % Math.ceil(xTicks.length / 10) === 0) : xTicks;
  return (
    <figure className="chart" aria-label={`${yLabel} against ${xLabel}`}>
      <svg width={width} height={height} role="img" aria-label={`${yLabel} against ${xLabel}, ${series.length} lines`}>
        {yTicks.map((t) => (
          <g key={t}>
            <line x1={m.l} x2={width - m.r} y1={Y(t)} y2={Y(t)} stroke="#e3e7ee" />
            <text x={m.l - 6} y={Y(t) + 4} fontSize="11" textAnchor="end">{yFormat(t)}</text>
          </g>
        ))}
        {xShown.map((t) => (
          <text key={t} x={X(t)} y={height - m.b + 16} fontSize="11" textAnchor="middle">{fmt(t)}</text>
        ))}
        <text x={(width + m.l) / 2} y={height - 10} fontSize="12" textAnchor="middle">{xLabel}</text>
        <text x={14} y={height / 2} fontSize="12" textAnchor="middle" transform={`rotate(-90 14 ${height / 2})`}>{yLabel}</text>
        {series.map((s, i) => {
          const pts = [...s.points].sort((a, b) => a[0] - b[0]);
          return (
            <g key={s.name} className="series" data-series={s.name}>
              <polyline fill="none" stroke={color(i)} strokeWidth="2" points={pts.map((p) => `${X(p[0])},${Y(p[1])}`).join(" ")} />
              {pts.map((p) => (
                <circle key={p[0]} cx={X(p[0])} cy={Y(p[1])} r="3.5" fill={color(i)}>
                  <title>{`${s.name}: ${xLabel}=${fmt(p[0])}, ${yFormat(p[1])}`}</title>
                </circle>
              ))}
            </g>
          );
        })}
      </svg>
      <figcaption className="legend">
        {series.map((s, i) => (
          <span key={s.name}><i style={{ background: color(i) }} />{s.name}</span>
        ))}
      </figcaption>
    </figure>
  );
}

export function Loading() {
  return <p className="muted" aria-live="polite">Loading…</p>;
}

// Poll `load()` every `interval` ms while `keepGoing(value)` holds. A lost connection or a
// server error does not end a live view: it is reported as `retrying` and retried slower
// (up to 8 s) until the server answers; any other error ends the polling as `error`.
export function usePolling(load, keepGoing, interval, key) {
  const [value, setValue] = useState(null);
  const [error, setError] = useState(null);
  const [retrying, setRetrying] = useState(null);
  useEffect(() => {
    let stop = false;
    let timer;
    let failures = 0;
    const poll = async () => {
      let next;
      try {
        next = await load();
      } catch (e) {
        if (stop) return;
        if (!isTransient(e)) {
          setError(e);
          return;
        }
        failures += 1;
        setRetrying(e);
        timer = setTimeout(poll, Math.min(interval * 2 ** failures, 8000));
        return;
      }
      if (stop) return;
      failures = 0;
      setRetrying(null);
      setValue(next);
      if (keepGoing(next)) timer = setTimeout(poll, interval);
    };
    poll();
    return () => {
      stop = true;
      clearTimeout(timer);
    };
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [key]);
  return { value, error, retrying };
}
