// The canvas's node kinds: a hardware instance and a group (cluster, machine).
import { Handle, NodeResizer, Position } from "@xyflow/react";
import { MEMORY_KINDS, memoryKindText } from "./memoryPath.js";

function HardwareNode({ data, selected }) {
  return (
    <div
      className={`hw-node${selected ? " selected" : ""}${data.errors?.length ? " has-error" : ""}`}
      data-testid="hw-node"
      aria-label={`Node ${data.name}`}
    >
      <Handle type="target" position={Position.Left} />
      <div className="hw-node-title">
        {data.name || "(unnamed)"}
        {data.count > 1 ? ` ×${data.count}` : ""}
      </div>
      <div className="hw-node-sub">{data.hardwareName || "no hardware"}</div>
      <div className="hw-node-sub">
        {data.modelName
          ? `model: ${data.modelName}`
          : MEMORY_KINDS.includes(data.hardwareType)
            ? memoryKindText(data)
            : "no model"}
      </div>
      {data.kernelMode === "detailed" && <div className="hw-node-sub">kernels: block by block</div>}
      {Object.keys(data.labels || {}).length > 0 && (
        <div className="hw-node-labels">
          {Object.entries(data.labels).map(([l, m]) => (
            <span key={l} className="label-chip">
              {l}×{m}
            </span>
          ))}
        </div>
      )}
      {data.errors?.length > 0 && (
        <div className="node-error" role="alert">
          {data.errors.map((e) => `${e.field ? e.field + ": " : ""}${e.message}`).join(" ")}
        </div>
      )}
      <Handle type="source" position={Position.Right} />
    </div>
  );
}

function GroupNode({ data, selected }) {
  return (
    <div
      className={`group-node${selected ? " selected" : ""}${data.errors?.length ? " has-error" : ""}`}
      aria-label={`Group ${data.name}`}
    >
      <NodeResizer isVisible={selected} minWidth={160} minHeight={100} />
      <div className="group-title">{data.name || "(group)"}</div>
      {data.errors?.length > 0 && (
        <div className="node-error" role="alert">
          {data.errors.map((e) => `${e.field ? e.field + ": " : ""}${e.message}`).join(" ")}
        </div>
      )}
    </div>
  );
}

export const NODE_TYPES = { hardware: HardwareNode, group: GroupNode };
