// A run's memory hierarchy (the result's `memory`, simulator/memsys.py): hits, misses and traffic
// of every cache and memory instance, the fabrics' traffic, the coherence protocol's messages.
import { useState } from "react";
import { fmtBytes, fmtTime } from "../../lib/format.js";
import { GridTable } from "../../components/GridTable.jsx";

// Above this many level instances, those that saw no access start hidden (a GPU's per-SM L1s).
export const IDLE_HIDDEN_ABOVE = 16;

// Counts in whole numbers with thousands separators (pattern-mode counts may be fractional).
export const count = (n) =>
  typeof n === "number" ? n.toLocaleString("en-US", { maximumFractionDigits: 0 }) : "—";

export const percent = (ratio) =>
  typeof ratio === "number" ? `${(100 * ratio).toFixed(1)}%` : "—";

// Node id -> node name for the memory path of a timeline entry.
export function memoryNames(memory) {
  return Object.fromEntries(
    [...(memory?.levels || []), ...(memory?.fabrics || [])].map((l) => [l.node, l.name || l.node]),
  );
}

// What one sim.memoryAccess or sim.memoryFlush did, from its timeline entry's detail.
export function memoryText(detail, names = {}) {
  if (!detail) return "";
  const name = (id) => names[id] || id;
  if (detail.mode === "flush")
    return `flush: ${detail.lines ?? 0} line${detail.lines === 1 ? "" : "s"} written to memory`;
  const count =
    typeof detail.accesses === "number"
      ? `${detail.accesses} access${detail.accesses === 1 ? "" : "es"}`
      : "accesses";
  const path = detail.path ? ` via ${detail.path.split(" -> ").map(name).join(" → ")}` : "";
  let tail = "";
  if (detail.hitRatios && Object.keys(detail.hitRatios).length) {
    tail = `; hit ratio ${Object.entries(detail.hitRatios)
      .map(([id, r]) => `${name(id)} ${percent(r)}`)
      .join(", ")}`;
  } else if (detail.messages && Object.keys(detail.messages).length) {
    tail = `; ${Object.entries(detail.messages)
      .map(([message, n]) => `${message} ${n}`)
      .join(", ")}`;
  }
  return `${detail.mode || "memory"}: ${count}${path}${tail}`;
}

export function MemoryHierarchy({ memory, csvUrl }) {
  const levels = memory.levels || [];
  const fabrics = memory.fabrics || [];
  const coherence = memory.coherence || { protocol: "none", messages: {} };
  const messages = Object.entries(coherence.messages || {});
  const idle = levels.filter((l) => !l.accesses).length;
  const [showIdle, setShowIdle] = useState(levels.length <= IDLE_HIDDEN_ABOVE);
  const shown = showIdle ? levels : levels.filter((l) => l.accesses);
  const isMemory = (l) => l.type === "MEMORY";
  return (
    <section aria-labelledby="memory-title">
      <div className="page-head">
        <h2 id="memory-title">Memory hierarchy</h2>
        {csvUrl && (
          <div className="actions">
            <a className="button" href={csvUrl} download>
              Download memory CSV
            </a>
          </div>
        )}
      </div>
      {idle > 0 && (
        <label className="check">
          <input
            type="checkbox"
            checked={showIdle}
            onChange={(e) => setShowIdle(e.target.checked)}
          />{" "}
          Show idle instances ({idle} of {levels.length} saw no access)
        </label>
      )}
      <GridTable
        label="Memory levels"
        columns={[
          "Level",
          "Instance",
          "Accesses",
          "Hits",
          "Misses",
          "Hit ratio",
          "Write-backs",
          "Invalidations",
          "Bytes",
          "Busy",
          "Utilisation",
        ]}
      >
        {shown.map((l) => (
          <tr key={`${l.node}-${l.instance}`} data-node={l.node} data-instance={l.instance}>
            <td title={l.hardware}>{l.name || l.node}</td>
            <td>{l.instance}</td>
            <td>{count(l.accesses)}</td>
            <td>{isMemory(l) ? "—" : count(l.hits)}</td>
            <td>{isMemory(l) ? "—" : count(l.misses)}</td>
            <td className="num" data-testid={`hit-ratio-${l.node}-${l.instance}`}>
              {percent(l.hit_ratio)}
            </td>
            <td>{count(l.writebacks)}</td>
            <td>{count(l.invalidations)}</td>
            <td>{fmtBytes(l.bytes)}</td>
            <td>{fmtTime(l.busy_s)}</td>
            <td>{percent(l.utilisation)}</td>
          </tr>
        ))}
      </GridTable>
      {!showIdle && idle > 0 && (
        <p className="muted">
          {idle} idle instance{idle === 1 ? "" : "s"} hidden.
        </p>
      )}
      {fabrics.length > 0 && (
        <>
          <h3>Fabrics</h3>
          <GridTable
            label="Memory fabrics"
            columns={[
              "Fabric",
              "Instance",
              "Topology",
              "Ports",
              "Messages",
              "Bytes",
              "Hops",
              "Busy",
              "Utilisation",
            ]}
          >
            {fabrics.map((f) => (
              <tr key={`${f.node}-${f.instance}`} data-node={f.node}>
                <td title={f.hardware}>{f.name || f.node}</td>
                <td>{f.instance}</td>
                <td>{f.topology}</td>
                <td>{f.ports}</td>
                <td>{count(f.messages)}</td>
                <td>{fmtBytes(f.bytes)}</td>
                <td>{count(f.hops)}</td>
                <td>{fmtTime(f.busy_s)}</td>
                <td>{percent(f.utilisation)}</td>
              </tr>
            ))}
          </GridTable>
        </>
      )}
      <h3>Coherence</h3>
      <p data-testid="coherence-protocol">
        {coherence.protocol === "mesi"
          ? "MESI directory protocol"
          : "None: no cache holds a coherence directory, so the caches below a shared level are not kept coherent"}
        {messages.length > 0
          ? `: ${count(messages.reduce((sum, [, n]) => sum + n, 0))} messages.`
          : "."}
      </p>
      {messages.length > 0 && (
        <GridTable
          label="Coherence messages"
          className="grid compact"
          columns={["Message", "Count"]}
        >
          {messages.map(([message, n]) => (
            <tr key={message}>
              <td>{message}</td>
              <td className="num" data-testid={`coherence-${message}`}>
                {count(n)}
              </td>
            </tr>
          ))}
        </GridTable>
      )}
    </section>
  );
}
