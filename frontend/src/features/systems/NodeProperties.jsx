// The properties panel of the selected node: name, hardware, count, model, kernel mode, memory
// path, labels, parent group and edges.
import { useState } from "react";
import { InlineField } from "../../components/InlineField.jsx";
import { COHERENCE, NEXT_LEVEL_KINDS, PATH_SOURCES, TOPOLOGIES } from "./memoryPath.js";
import { HardwarePicker } from "./HardwarePicker.jsx";
import { SHARING } from "./network.js";

export function NodeProperties({
  node,
  readOnly,
  errors,
  components,
  models,
  groups,
  nodes,
  labelEntries,
  update,
  setParent,
  connect,
  remove,
  edges,
  removeEdge,
  select,
}) {
  const d = node.data;
  const err = (field) =>
    errors
      .filter((e) => e.field === field || e.field.startsWith(`${field}.`))
      .map((e) => e.message)
      .join(" ");
  const [newLabel, setNewLabel] = useState("");
  const [target, setTarget] = useState("");
  const mine = edges.filter((e) => e.source === node.id || e.target === node.id);
  const nameOf = (id) => nodes.find((n) => n.id === id)?.data.name || id;
  const setLabels = (labels) => update({ labels });
  const hardwareType = components.find((c) => c.id === d.hardware)?.type;
  const isGpu = hardwareType === "GPU";
  const isNetwork = hardwareType === "NETWORK";
  const otherErrors = errors.filter(
    (e) =>
      ![
        "name",
        "hardware",
        "model",
        "count",
        "labels",
        "parent",
        "kernelMode",
        "kernelWorkers",
        "next",
        "via",
        "coherence",
        "topology",
        "sharing",
      ].some((f) => e.field === f || e.field.startsWith(`${f}.`)),
  );
  return (
    <div className="node-props" data-node-id={node.id}>
      <p className="muted">
        id <code>{node.id}</code>
        {d.group ? " · group" : ""}
      </p>
      {otherErrors.length > 0 && (
        <div className="field-error" role="alert">
          {otherErrors.map((e) => `${e.field}: ${e.message}`).join(" ")}
        </div>
      )}
      <InlineField label="Name">
        <input
          aria-label="Node name"
          value={d.name}
          readOnly={readOnly}
          onChange={(e) => update({ name: e.target.value })}
        />
        {err("name") && (
          <span className="field-error" role="alert">
            {err("name")}
          </span>
        )}
      </InlineField>
      {!d.group && (
        <>
          <InlineField label="Hardware" error={err("hardware")}>
            <HardwarePicker
              components={components}
              value={d.hardware}
              readOnly={readOnly}
              invalid={Boolean(err("hardware"))}
              onChange={(hardware) => update({ hardware })}
            />
          </InlineField>
          <InlineField label="Count" error={err("count")}>
            <input
              aria-label="Node count"
              type="number"
              value={d.count}
              readOnly={readOnly}
              aria-invalid={Boolean(err("count"))}
              onChange={(e) =>
                update({ count: e.target.value === "" ? "" : Number(e.target.value) })
              }
            />
          </InlineField>
          <InlineField label="Computational model" error={err("model")}>
            <select
              aria-label="Node computational model"
              value={d.model ?? ""}
              disabled={readOnly}
              onChange={(e) => update({ model: e.target.value ? Number(e.target.value) : null })}
            >
              <option value="">— none —</option>
              {models.map((m) => (
                <option key={m.id} value={m.id}>
                  {m.name}
                  {m.builtin ? " (built-in)" : ""}
                </option>
              ))}
            </select>
          </InlineField>
          {(isNetwork || (d.sharing && d.sharing !== "fifo")) && (
            <InlineField label="Link sharing" error={err("sharing")}>
              <select
                aria-label="Link sharing"
                value={d.sharing || "fifo"}
                disabled={readOnly}
                aria-invalid={Boolean(err("sharing"))}
                onChange={(e) => update({ sharing: e.target.value })}
              >
                {SHARING.map(([value, text]) => (
                  <option key={value} value={value}>
                    {text}
                  </option>
                ))}
              </select>
            </InlineField>
          )}
          {(isGpu || (d.kernelMode && d.kernelMode !== "analytic")) && (
            <>
              <InlineField label="Kernel simulation" error={err("kernelMode")}>
                <select
                  aria-label="Kernel simulation"
                  value={d.kernelMode || "analytic"}
                  disabled={readOnly}
                  onChange={(e) => update({ kernelMode: e.target.value })}
                >
                  <option value="analytic">analytic: the model&apos;s formula</option>
                  <option value="detailed">detailed: block by block over the SMs</option>
                  <option value="petri">petri: a Petri-net model of one SM, times the waves</option>
                  <option value="waves">
                    waves: the model&apos;s time for one wave, times the waves
                  </option>
                </select>
                {d.kernelMode === "petri" && (
                  <span className="hint">
                    Instructions per warp: arithmeticInstructions, sharedInstructions,
                    globalInstructions (else from CUDACoreInstructions, GMEMBytesTransferred); also
                    globalLatency, sharedLatency, petriSeed, petriRuns, cyclesPerStep. See
                    docs/kernel-modes.md.
                  </span>
                )}
                {d.kernelMode === "waves" && (
                  <span className="hint">
                    Each started wave of SMs × resident blocks costs the model&apos;s time for one
                    full wave, so the time rises in steps. See docs/kernel-modes.md.
                  </span>
                )}
              </InlineField>
              {d.kernelMode === "detailed" && (
                <InlineField
                  label="Worker processes (the SMs split over them; same result)"
                  error={err("kernelWorkers")}
                >
                  <input
                    aria-label="Kernel worker processes"
                    type="number"
                    min="1"
                    value={d.kernelWorkers ?? 1}
                    readOnly={readOnly}
                    aria-invalid={Boolean(err("kernelWorkers"))}
                    onChange={(e) =>
                      update({ kernelWorkers: e.target.value === "" ? "" : Number(e.target.value) })
                    }
                  />
                </InlineField>
              )}
            </>
          )}
          <MemoryPath
            node={node}
            readOnly={readOnly}
            err={err}
            components={components}
            nodes={nodes}
            update={update}
          />
          <fieldset className={`labels${err("labels") ? " invalid" : ""}`}>
            <legend className="field-label">Labels (multiplicity)</legend>
            {labelEntries.map(([label, mult]) => (
              <div className="label-row" key={label}>
                <span className="label-chip">{label}</span>
                <input
                  aria-label={`Multiplicity of label ${label}`}
                  type="number"
                  value={mult}
                  readOnly={readOnly}
                  onChange={(e) =>
                    setLabels({
                      ...d.labels,
                      [label]: e.target.value === "" ? "" : Number(e.target.value),
                    })
                  }
                />
                {!readOnly && (
                  <button
                    aria-label={`Remove label ${label}`}
                    onClick={() => {
                      const l = { ...d.labels };
                      delete l[label];
                      setLabels(l);
                    }}
                  >
                    ×
                  </button>
                )}
              </div>
            ))}
            {!readOnly && (
              <div className="label-row">
                <input
                  aria-label="New label"
                  placeholder="label, e.g. GPU"
                  value={newLabel}
                  onChange={(e) => setNewLabel(e.target.value)}
                  onKeyDown={(e) => {
                    if (e.key === "Enter" && newLabel.trim()) {
                      setLabels({ ...d.labels, [newLabel.trim()]: 1 });
                      setNewLabel("");
                    }
                  }}
                />
                <button
                  onClick={() => {
                    if (newLabel.trim()) {
                      setLabels({ ...d.labels, [newLabel.trim()]: 1 });
                      setNewLabel("");
                    }
                  }}
                >
                  Add label
                </button>
              </div>
            )}
            {err("labels") && (
              <span className="field-error" role="alert">
                {err("labels")}
              </span>
            )}
          </fieldset>
        </>
      )}
      <InlineField label="Parent group" error={err("parent")}>
        <select
          aria-label="Parent group"
          value={node.parentId || ""}
          disabled={readOnly}
          onChange={(e) => setParent(e.target.value || null)}
        >
          <option value="">— top level —</option>
          {groups.map((g) => (
            <option key={g.id} value={g.id}>
              {g.data.name || g.id}
            </option>
          ))}
        </select>
      </InlineField>
      {!d.group && (
        <div className="field">
          <span className="field-label">Edges</span>
          <ul className="edge-list">
            {mine.map((e) => (
              <li key={e.id}>
                {nameOf(e.source)} — {nameOf(e.target)}{" "}
                {!readOnly && (
                  <button
                    aria-label={`Remove edge ${nameOf(e.source)} to ${nameOf(e.target)}`}
                    onClick={() => removeEdge(e.id)}
                  >
                    ×
                  </button>
                )}
              </li>
            ))}
          </ul>
          {!readOnly && (
            <div className="label-row">
              <select
                aria-label="Connect to node"
                value={target}
                onChange={(e) => setTarget(e.target.value)}
              >
                <option value="">—</option>
                {nodes
                  .filter((n) => !n.data.group && n.id !== node.id)
                  .map((n) => (
                    <option key={n.id} value={n.id}>
                      {n.data.name || n.id}
                    </option>
                  ))}
              </select>
              <button
                onClick={() => {
                  connect(target);
                  setTarget("");
                }}
              >
                Connect
              </button>
            </div>
          )}
        </div>
      )}
      <div className="actions">
        <button onClick={() => select(null)}>Done</button>
        {!readOnly && (
          <button className="danger" onClick={remove}>
            Delete {d.group ? "group" : "node"}
          </button>
        )}
      </div>
    </div>
  );
}

// A node's place in the memory hierarchy: its next level and the fabric crossed on the way (CPU,
// GPU and CACHE nodes), a cache's coherence directory, a fabric's topology. A field set on a node
// of another kind stays visible, with the server's error beside it, until it is cleared.
function MemoryPath({ node, readOnly, err, components, nodes, update }) {
  const d = node.data;
  const kindOf = (n) => components.find((c) => c.id === n.data.hardware)?.type;
  const kind = kindOf(node);
  const showNext = PATH_SOURCES.includes(kind) || Boolean(d.next) || Boolean(d.via);
  const showCoherence = kind === "CACHE" || Boolean(d.coherence && d.coherence !== "none");
  const showTopology = kind === "FABRIC" || Boolean(d.topology && d.topology !== "crossbar");
  if (!showNext && !showCoherence && !showTopology) return null;
  const others = nodes.filter((n) => !n.data.group && n.id !== node.id);
  const levels = others.filter((n) => NEXT_LEVEL_KINDS.includes(kindOf(n)));
  const fabrics = others.filter((n) => kindOf(n) === "FABRIC");
  const nameOf = (id) => nodes.find((n) => n.id === id)?.data.name || id;
  // A stored reference the lists do not offer (the node changed kind) stays selectable.
  const stray = (id, list, what) =>
    id &&
    !list.some((n) => n.id === id) && (
      <option value={id}>
        {nameOf(id)} (not {what})
      </option>
    );
  const select = (field, label, value, onChange, children) => (
    <InlineField label={label} error={err(field)}>
      <select
        aria-label={label}
        value={value}
        disabled={readOnly}
        aria-invalid={Boolean(err(field))}
        onChange={(e) => onChange(e.target.value)}
      >
        {children}
      </select>
    </InlineField>
  );
  return (
    <fieldset className="memory-path">
      <legend className="field-label">Memory path</legend>
      {showNext && (
        <>
          <p className="hint">
            Where a miss goes: the next cache or the memory (a dashed arrow on the canvas).
          </p>
          {select(
            "next",
            "Next memory level",
            d.next ?? "",
            (v) => update(v ? { next: v } : { next: null, via: null }),
            <>
              <option value="">— none —</option>
              {levels.map((n) => (
                <option key={n.id} value={n.id}>
                  {n.data.name || n.id}
                </option>
              ))}
              {stray(d.next, levels, "a cache or memory")}
            </>,
          )}
          {select(
            "via",
            "Via fabric",
            d.via ?? "",
            (v) => update({ via: v || null }),
            <>
              <option value="">— none (direct) —</option>
              {fabrics.map((n) => (
                <option key={n.id} value={n.id}>
                  {n.data.name || n.id}
                </option>
              ))}
              {stray(d.via, fabrics, "a fabric")}
            </>,
          )}
        </>
      )}
      {showCoherence &&
        select(
          "coherence",
          "Coherence",
          d.coherence || "none",
          (v) => update({ coherence: v }),
          COHERENCE.map(([v, text]) => (
            <option key={v} value={v}>
              {text}
            </option>
          )),
        )}
      {showTopology &&
        select(
          "topology",
          "Topology",
          d.topology || "crossbar",
          (v) => update({ topology: v }),
          TOPOLOGIES.map(([v, text]) => (
            <option key={v} value={v}>
              {text}
            </option>
          )),
        )}
    </fieldset>
  );
}
