// System models: a canvas (React Flow) of hardware nodes, nesting groups and edges,
// a palette of hardware from the database, and a properties panel (paper 000, Fig. 5.3).
import { useCallback, useEffect, useMemo, useRef, useState } from "react";
import {
  ReactFlow,
  ReactFlowProvider,
  Background,
  Controls,
  Handle,
  MarkerType,
  Position,
  NodeResizer,
  addEdge,
  applyEdgeChanges,
  applyNodeChanges,
  useReactFlow,
} from "@xyflow/react";
import "@xyflow/react/dist/style.css";
import { ApiError, download, get, getAll, post, put, del } from "../api.js";
import { Link, navigate, useToast, useUnsavedGuard } from "../router.jsx";
import { ErrorSummary, Loading } from "../ui.jsx";

export function SystemList() {
  const [systems, setSystems] = useState(null);
  const [error, setError] = useState(null);
  const fileInput = useRef(null);
  useEffect(() => {
    getAll("/api/systems/?page_size=200").then(setSystems, setError);
  }, []);
  const importFile = async (event) => {
    const file = event.target.files[0];
    event.target.value = "";
    if (!file) return;
    try {
      const s = await post("/api/systems/import/", JSON.parse(await file.text()));
      navigate(`/app/systems/${s.id}`);
    } catch (e) {
      setError(e instanceof ApiError ? e : new ApiError(400, { detail: `The file is not valid JSON: ${e.message}` }));
    }
  };
  return (
    <section aria-labelledby="systems-title">
      <header className="page-head">
        <h1 id="systems-title">System models</h1>
        <div className="actions">
          <button onClick={() => navigate("/app/systems/new")}>New system model</button>
          <button onClick={() => fileInput.current.click()}>Import snapshot…</button>
          <input ref={fileInput} type="file" accept=".json,application/json" hidden aria-label="Import snapshot file" onChange={importFile} />
        </div>
      </header>
      <ErrorSummary error={error} />
      {!systems ? <Loading /> : (
        <table className="grid" aria-label="System models">
          <thead><tr><th>Name</th><th>Nodes</th><th>Owner</th></tr></thead>
          <tbody>
            {systems.map((s) => (
              <tr key={s.id}>
                <td><Link to={`/app/systems/${s.id}`}>{s.name}</Link></td>
                <td>{(s.graph?.nodes || []).length}</td>
                <td>{s.owner || "built-in"}{s.shared ? " · shared" : ""}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </section>
  );
}

const LEAF = { w: 190, h: 78 };
const PAD = 24;
const HEADER = 34;

// Grid cells {col, row} of the children of a group joined by memory paths (`next` between
// siblings): one column per level outwards (cores, their L1s, L2s, ...), a level shared by
// several paths between their rows, the rest (fabrics) in a row below. Null when no sibling
// is linked.
function memoryGrid(kids) {
  const ids = new Set(kids.map((k) => k.id));
  const inner = (k) => kids.filter((p) => p.next === k.id);
  const onPath = kids.filter((k) => (k.next && ids.has(k.next)) || inner(k).length);
  if (!onPath.length) return null;
  const col = new Map();
  const stack = new Set();
  const depth = (k) => {
    if (col.has(k.id)) return col.get(k.id);
    if (stack.has(k.id)) return 0; // a loop: the server reports it at save
    stack.add(k.id);
    const from = inner(k);
    const d = from.length ? Math.max(...from.map((p) => depth(p) + 1)) : 0;
    stack.delete(k.id);
    col.set(k.id, d);
    return d;
  };
  onPath.forEach(depth);
  const cells = new Map();
  for (let c = 0; c <= Math.max(...col.values()); c += 1) {
    const used = [];
    onPath.filter((k) => col.get(k.id) === c).forEach((k) => {
      const rows = inner(k).map((p) => cells.get(p.id)?.row).filter((r) => r !== undefined);
      let row = rows.length ? rows.reduce((a, b) => a + b, 0) / rows.length : 0;
      while (used.some((r) => Math.abs(r - row) < 1)) row = Math.max(...used.filter((r) => Math.abs(r - row) < 1)) + 1;
      used.push(row);
      cells.set(k.id, { col: c, row });
    });
  }
  const below = Math.floor(Math.max(...[...cells.values()].map((cell) => cell.row))) + 1;
  kids.filter((k) => !cells.has(k.id)).forEach((k, i) => cells.set(k.id, { col: i, row: below }));
  return cells;
}

// Place nodes that carry no stored position: children in a row inside their group, or in a
// grid along their memory paths (memoryGrid).
function autoLayout(graphNodes) {
  const byParent = new Map();
  graphNodes.forEach((n) => {
    const key = n.parent || "";
    if (!byParent.has(key)) byParent.set(key, []);
    byParent.get(key).push(n);
  });
  const place = new Map();
  const size = (n) => {
    if (!n.group) return n.ui?.w ? { w: n.ui.w, h: n.ui.h } : LEAF;
    const kids = byParent.get(n.id) || [];
    const stored = (k) => k.ui && k.ui.x !== undefined;
    const grid = memoryGrid(kids);
    let auto;
    if (grid) {
      const sizesOf = new Map(kids.map((k) => [k.id, size(k)]));
      const cols = Math.max(...[...grid.values()].map((c) => c.col)) + 1;
      const colW = Array.from({ length: cols }, (_, c) => Math.max(0, ...kids.filter((k) => grid.get(k.id).col === c).map((k) => sizesOf.get(k.id).w)));
      const rowH = Math.max(...[...sizesOf.values()].map((s) => s.h)) + 50;
      const colX = colW.map((_, c) => PAD + colW.slice(0, c).reduce((a, w) => a + w + 70, 0));
      let w = 0;
      let h = 0;
      kids.forEach((k) => {
        const { col, row } = grid.get(k.id);
        const at = { x: colX[col], y: HEADER + 10 + row * rowH };
        place.set(k.id, stored(k) ? { x: k.ui.x, y: k.ui.y } : at);
        w = Math.max(w, at.x + sizesOf.get(k.id).w);
        h = Math.max(h, at.y + sizesOf.get(k.id).h);
      });
      auto = { w: Math.max(260, w + PAD), h: h + PAD + 20 };
    } else {
      let x = PAD;
      let h = 0;
      kids.forEach((k) => {
        const s = size(k);
        place.set(k.id, stored(k) ? { x: k.ui.x, y: k.ui.y } : { x, y: HEADER + 10 });
        x += s.w + 40;
        h = Math.max(h, s.h);
      });
      auto = { w: Math.max(260, x - 40 + PAD), h: HEADER + 10 + h + PAD };
    }
    return n.ui?.w ? { w: Math.max(n.ui.w, 120), h: Math.max(n.ui.h, 80) } : auto;
  };
  const sizes = new Map();
  let x = 40;
  (byParent.get("") || []).forEach((n) => {
    const s = size(n);
    place.set(n.id, n.ui && n.ui.x !== undefined ? { x: n.ui.x, y: n.ui.y } : { x, y: 40 });
    x += s.w + 60;
  });
  graphNodes.forEach((n) => sizes.set(n.id, size(n)));
  return { place, sizes };
}

function toFlow(graph) {
  const nodes = graph.nodes || [];
  const { place, sizes } = autoLayout(nodes);
  const depth = (n, seen = new Set()) => (n.parent && !seen.has(n.id) ? 1 + depth(nodes.find((m) => m.id === n.parent) || {}, seen.add(n.id)) : 0);
  const ordered = [...nodes].sort((a, b) => depth(a) - depth(b));
  return {
    nodes: ordered.map((n) => ({
      id: n.id,
      type: n.group ? "group" : "hardware",
      position: place.get(n.id) || { x: 40, y: 40 },
      parentId: n.parent || undefined,
      style: n.group ? { width: sizes.get(n.id).w, height: sizes.get(n.id).h } : undefined,
      data: { name: n.name || "", group: Boolean(n.group), hardware: n.hardware ?? null, model: n.model ?? null, count: n.count ?? 1, labels: n.labels || {}, kernelMode: n.kernelMode || "analytic", kernelWorkers: n.kernelWorkers ?? 1, ...memoryFields(n) },
    })),
    edges: (graph.edges || []).map(([a, b], i) => ({ id: `e${i}-${a}-${b}`, source: a, target: b })),
  };
}

// A node's memory path (simulator/memory_spec.py): the next level outwards, the fabric crossed
// on the way, a cache's coherence directory, a fabric's topology; absent fields are defaults.
function memoryFields(n) {
  return { next: n.next ?? null, via: n.via ?? null, coherence: n.coherence || "none", topology: n.topology || "crossbar" };
}

function toGraph(nodes, edges) {
  const order = sortParentsFirst(nodes);
  return {
    nodes: order.map((n) => {
      const d = n.data;
      const base = { id: n.id, name: d.name };
      if (n.parentId) base.parent = n.parentId;
      const w = n.measured?.width ?? n.width ?? n.style?.width;
      const h = n.measured?.height ?? n.height ?? n.style?.height;
      const ui = { x: Math.round(n.position.x), y: Math.round(n.position.y) };
      if (d.group) {
        ui.w = Math.round(w || 260);
        ui.h = Math.round(h || 160);
        return { ...base, group: true, ui };
      }
      const node = { ...base, hardware: d.hardware, count: d.count, labels: d.labels, ui };
      if (d.model) node.model = d.model;
      if (d.kernelMode && d.kernelMode !== "analytic") node.kernelMode = d.kernelMode;
      if (d.kernelMode === "detailed" && d.kernelWorkers !== 1) node.kernelWorkers = d.kernelWorkers;
      if (d.next) node.next = d.next;
      if (d.via) node.via = d.via;
      if (d.coherence && d.coherence !== "none") node.coherence = d.coherence;
      if (d.topology && d.topology !== "crossbar") node.topology = d.topology;
      return node;
    }),
    edges: edges.map((e) => [e.source, e.target]),
  };
}

function sortParentsFirst(nodes) {
  const byId = new Map(nodes.map((n) => [n.id, n]));
  const out = [];
  const seen = new Set();
  const visit = (n) => {
    if (!n || seen.has(n.id)) return;
    seen.add(n.id);
    if (n.parentId) visit(byId.get(n.parentId));
    out.push(n);
  };
  nodes.forEach(visit);
  return out;
}

// Map "nodes[2].count" paths onto node ids (by the order of the graph sent), "edges[1]" onto edges.
function errorsByNode(fields, graph) {
  const nodes = {};
  const edges = {};
  const rest = {};
  Object.entries(fields || {}).forEach(([path, messages]) => {
    const m = /^nodes\[(\d+)\](?:\.(.*))?$/.exec(path);
    const e = /^edges\[(\d+)\]/.exec(path);
    if (m && graph.nodes[Number(m[1])]) {
      const id = graph.nodes[Number(m[1])].id;
      (nodes[id] ||= []).push(...messages.map((msg) => ({ field: m[2] || "", message: msg })));
    } else if (e && graph.edges[Number(e[1])]) {
      (edges[Number(e[1])] ||= []).push(...messages);
      (rest[path] ||= []).push(...messages);
    } else {
      rest[path] = messages;
    }
  });
  return { nodes, edges, rest };
}

function HardwareNode({ data, selected }) {
  return (
    <div className={`hw-node${selected ? " selected" : ""}${data.errors?.length ? " has-error" : ""}`} data-testid="hw-node" aria-label={`Node ${data.name}`}>
      <Handle type="target" position={Position.Left} />
      <div className="hw-node-title">{data.name || "(unnamed)"}{data.count > 1 ? ` ×${data.count}` : ""}</div>
      <div className="hw-node-sub">{data.hardwareName || "no hardware"}</div>
      <div className="hw-node-sub">{data.modelName ? `model: ${data.modelName}` : MEMORY_KINDS.includes(data.hardwareType) ? memoryKindText(data) : "no model"}</div>
      {data.kernelMode === "detailed" && <div className="hw-node-sub">kernels: block by block</div>}
      {Object.keys(data.labels || {}).length > 0 && (
        <div className="hw-node-labels">{Object.entries(data.labels).map(([l, m]) => <span key={l} className="label-chip">{l}×{m}</span>)}</div>
      )}
      {data.errors?.length > 0 && (
        <div className="node-error" role="alert">{data.errors.map((e) => `${e.field ? e.field + ": " : ""}${e.message}`).join(" ")}</div>
      )}
      <Handle type="source" position={Position.Right} />
    </div>
  );
}

function GroupNode({ data, selected }) {
  return (
    <div className={`group-node${selected ? " selected" : ""}${data.errors?.length ? " has-error" : ""}`} aria-label={`Group ${data.name}`}>
      <NodeResizer isVisible={selected} minWidth={160} minHeight={100} />
      <div className="group-title">{data.name || "(group)"}</div>
      {data.errors?.length > 0 && <div className="node-error" role="alert">{data.errors.map((e) => `${e.field ? e.field + ": " : ""}${e.message}`).join(" ")}</div>}
    </div>
  );
}

const NODE_TYPES = { hardware: HardwareNode, group: GroupNode };

// Memory hierarchy (simulator/memory_spec.py): which hardware types start a memory path, which
// may be its next level, and the choices of a cache's coherence and a fabric's topology.
const MEMORY_KINDS = ["CACHE", "FABRIC", "MEMORY"];
const PATH_SOURCES = ["CPU", "GPU", "CACHE"];
const NEXT_LEVEL_KINDS = ["CACHE", "MEMORY"];
const COHERENCE = [
  ["none", "none: the caches below are not kept coherent"],
  ["mesi", "MESI directory: keeps the caches below it coherent"],
];
const TOPOLOGIES = [
  ["crossbar", "crossbar: one hop between any two ports"],
  ["ring", "ring: the shorter way round"],
  ["mesh", "mesh: a grid, hops by Manhattan distance"],
];
const MEMORY_EDGE_COLOR = "#7048e8";

function memoryKindText(data) {
  if (data.hardwareType === "CACHE") return data.coherence === "mesi" ? "cache · MESI directory" : "cache";
  if (data.hardwareType === "FABRIC") return `fabric · ${data.topology || "crossbar"}`;
  return "memory";
}

// The memory paths drawn on the canvas: a dashed arrow from a node to its next level, labelled
// with the fabric crossed on the way. Drawn from the nodes' fields, never part of graph.edges.
function memoryPathEdges(nodes) {
  const byId = new Map(nodes.map((n) => [n.id, n]));
  return nodes
    .filter((n) => !n.data.group && n.data.next && byId.has(n.data.next))
    .map((n) => {
      const via = n.data.via ? byId.get(n.data.via) : null;
      return {
        id: `memory-path-${n.id}`,
        source: n.id,
        target: n.data.next,
        className: "memory-edge",
        label: via ? via.data.name || via.id : undefined,
        markerEnd: { type: MarkerType.ArrowClosed, color: MEMORY_EDGE_COLOR },
        style: { stroke: MEMORY_EDGE_COLOR, strokeWidth: 1.5, strokeDasharray: "6 4" },
        selectable: false,
        deletable: false,
        focusable: false,
      };
    });
}

// Drop the memory-path references to removed nodes (a path without its next level loses its
// fabric too).
function withoutMemoryRefs(nodes, removed) {
  if (!removed.size) return nodes;
  return nodes.map((n) => {
    const lostNext = removed.has(n.data.next);
    if (!lostNext && !removed.has(n.data.via)) return n;
    return { ...n, data: { ...n.data, next: lostNext ? null : n.data.next, via: null } };
  });
}
const EMPTY_SYSTEM = { name: "", description: "", shared: false, graph: { nodes: [], edges: [] }, can_edit: true };

export function SystemEditor({ id }) {
  return (
    <ReactFlowProvider>
      <SystemEditorInner id={id} />
    </ReactFlowProvider>
  );
}

function SystemEditorInner({ id }) {
  const toast = useToast();
  const isNew = id === "new";
  const flow = useReactFlow();
  const [meta, setMeta] = useState(null);
  const [nodes, setNodes] = useState([]);
  const [edges, setEdges] = useState([]);
  const [saved, setSaved] = useState(null);
  const [components, setComponents] = useState([]);
  const [models, setModels] = useState([]);
  const [paletteSearch, setPaletteSearch] = useState("");
  const [selectedId, setSelectedId] = useState(null);
  const [error, setError] = useState(null);
  const [sentGraph, setSentGraph] = useState({ nodes: [], edges: [] });
  const counter = useRef(1);

  const load = (record) => {
    const f = toFlow(record.graph || { nodes: [] });
    setMeta({ name: record.name, description: record.description || "", shared: record.shared, can_edit: record.can_edit, owner: record.owner });
    setNodes(f.nodes);
    setEdges(f.edges);
    setSaved(JSON.stringify({ n: record.name, d: record.description || "", s: record.shared, g: stripUi(toGraph(f.nodes, f.edges)) }));
  };

  useEffect(() => {
    getAll("/api/components/?page_size=200&ordering=type,name,id").then(setComponents, setError);
    getAll("/api/models/?page_size=200").then(setModels, setError);
    if (isNew) load(EMPTY_SYSTEM);
    else get(`/api/systems/${id}/`).then(load, setError);
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [id]);

  const graph = useMemo(() => toGraph(nodes, edges), [nodes, edges]);
  const current = meta ? JSON.stringify({ n: meta.name, d: meta.description, s: meta.shared, g: stripUi(graph) }) : null;
  const dirty = saved !== null && current !== saved;
  useUnsavedGuard(dirty);

  const nodeErrors = useMemo(() => errorsByNode(error?.fields, sentGraph), [error, sentGraph]);
  const componentName = useMemo(() => new Map(components.map((c) => [c.id, c.name])), [components]);
  const modelName = useMemo(() => new Map(models.map((m) => [m.id, m.name])), [models]);
  const componentType = useMemo(() => new Map(components.map((c) => [c.id, c.type])), [components]);
  const memoryEdges = useMemo(() => memoryPathEdges(nodes), [nodes]);

  const viewNodes = nodes.map((n) => ({
    ...n,
    selected: n.id === selectedId,
    data: { ...n.data, hardwareName: componentName.get(n.data.hardware), hardwareType: componentType.get(n.data.hardware), modelName: modelName.get(n.data.model), errors: nodeErrors.nodes[n.id] },
  }));
  const viewEdges = [...edges.map((e, i) => (nodeErrors.edges[i] ? { ...e, style: { stroke: "#c92a2a", strokeWidth: 3 }, label: "invalid" } : e)), ...memoryEdges];

  const onNodesChange = useCallback((changes) => {
    const removed = new Set(changes.filter((c) => c.type === "remove").map((c) => c.id));
    setNodes((ns) => withoutMemoryRefs(applyNodeChanges(changes.filter((c) => c.type !== "select"), ns), removed));
    const sel = changes.filter((c) => c.type === "select" && c.selected);
    if (sel.length) setSelectedId(sel[sel.length - 1].id);
  }, []);
  const onEdgesChange = useCallback((changes) => setEdges((es) => applyEdgeChanges(changes, es)), []);
  const onConnect = useCallback((c) => setEdges((es) => addEdge({ ...c, id: `e-${c.source}-${c.target}-${Date.now()}` }, es)), []);

  const freshId = (base) => {
    const clean = (base || "node").toLowerCase().replace(/[^a-z0-9_]+/g, "_").replace(/^_+|_+$/g, "").slice(0, 20) || "node";
    let candidate;
    do {
      candidate = `${clean}${counter.current}`;
      counter.current += 1;
    } while (nodes.some((n) => n.id === candidate));
    return candidate;
  };

  const absolute = (nodeId) => {
    const internal = flow.getInternalNode(nodeId);
    return internal?.internals?.positionAbsolute || { x: 0, y: 0 };
  };

  const groupAt = (point, excludeId) => {
    const candidates = nodes.filter((n) => n.data.group && n.id !== excludeId && !isDescendant(nodes, n.id, excludeId)).filter((g) => {
      const a = absolute(g.id);
      const w = g.measured?.width ?? g.style?.width ?? 0;
      const h = g.measured?.height ?? g.style?.height ?? 0;
      return point.x >= a.x && point.x <= a.x + w && point.y >= a.y && point.y <= a.y + h;
    });
    candidates.sort((a, b) => depthOf(nodes, b.id) - depthOf(nodes, a.id));
    return candidates[0] || null;
  };

  const addNode = (component, dropPoint) => {
    const selected = nodes.find((n) => n.id === selectedId);
    let parent = null;
    let position = { x: 40 + nodes.length * 20, y: 40 + nodes.length * 20 };
    if (dropPoint) {
      const g = groupAt(dropPoint);
      if (g) {
        parent = g.id;
        const a = absolute(g.id);
        position = { x: dropPoint.x - a.x, y: dropPoint.y - a.y };
      } else position = dropPoint;
    } else if (selected) {
      parent = selected.data.group ? selected.id : selected.parentId || null;
      if (parent) {
        const kids = nodes.filter((n) => n.parentId === parent);
        position = { x: PAD + kids.length * (LEAF.w + 30), y: HEADER + 10 };
      }
    }
    const isGroup = component === "group";
    const newId = freshId(isGroup ? "group" : component.type === "NETWORK" ? "link" : component.type);
    const node = {
      id: newId,
      type: isGroup ? "group" : "hardware",
      position,
      parentId: parent || undefined,
      style: isGroup ? { width: 520, height: 190 } : undefined,
      data: isGroup
        ? { name: "Group", group: true, hardware: null, model: null, count: 1, labels: {} }
        : { name: component.name, group: false, hardware: component.id, model: null, count: 1, labels: {} },
    };
    setNodes((ns) => {
      const next = [...ns, node];
      if (parent) grow(next, parent);
      return sortParentsFirst(next);
    });
    setSelectedId(newId);
  };

  const onDragOver = (event) => {
    event.preventDefault();
    event.dataTransfer.dropEffect = "copy";
  };
  const onDrop = (event) => {
    event.preventDefault();
    const raw = event.dataTransfer.getData("application/x-parasim");
    if (!raw) return;
    const point = flow.screenToFlowPosition({ x: event.clientX, y: event.clientY });
    addNode(raw === "group" ? "group" : components.find((c) => String(c.id) === raw), point);
  };

  // Dropping a node onto a group nests it there; dropping it outside every group un-nests it.
  const onNodeDragStop = (_, node) => {
    const a = absolute(node.id);
    const w = node.measured?.width ?? LEAF.w;
    const h = node.measured?.height ?? LEAF.h;
    const centre = { x: a.x + w / 2, y: a.y + h / 2 };
    const g = groupAt(centre, node.id);
    const newParent = g ? g.id : undefined;
    if (newParent === node.parentId) return;
    const ga = g ? absolute(g.id) : { x: 0, y: 0 };
    setNodes((ns) => sortParentsFirst(ns.map((n) => (n.id === node.id ? { ...n, parentId: newParent, position: { x: a.x - ga.x, y: a.y - ga.y } } : n))));
  };

  const selected = nodes.find((n) => n.id === selectedId);
  const updateSelected = (patch) => setNodes((ns) => ns.map((n) => (n.id === selectedId ? { ...n, data: { ...n.data, ...patch } } : n)));
  const setParent = (parentId) => {
    setNodes((ns) => {
      const kids = ns.filter((n) => n.parentId === parentId && n.id !== selectedId);
      const next = ns.map((n) => (n.id === selectedId ? { ...n, parentId: parentId || undefined, position: parentId ? { x: PAD + kids.length * (LEAF.w + 30), y: HEADER + 10 } : { x: 40, y: 40 } } : n));
      if (parentId) grow(next, parentId);
      return sortParentsFirst(next);
    });
  };
  const removeSelected = () => {
    const doomed = new Set([selectedId, ...nodes.filter((n) => isDescendant(nodes, selectedId, n.id)).map((n) => n.id)]);
    setNodes((ns) => withoutMemoryRefs(ns.filter((n) => !doomed.has(n.id)), doomed));
    setEdges((es) => es.filter((e) => !doomed.has(e.source) && !doomed.has(e.target)));
    setSelectedId(null);
  };
  const connect = (target) => {
    if (!target || target === selectedId) return;
    setEdges((es) => addEdge({ id: `e-${selectedId}-${target}-${Date.now()}`, source: selectedId, target }, es));
  };

  const save = async () => {
    const g = toGraph(nodes, edges);
    setSentGraph(g);
    const body = { name: meta.name, description: meta.description, shared: meta.shared, graph: g };
    try {
      const r = isNew ? await post("/api/systems/", body) : await put(`/api/systems/${id}/`, body);
      setError(null);
      setSaved(JSON.stringify({ n: r.name, d: r.description || "", s: r.shared, g: stripUi(toGraph(nodes, edges)) }));
      toast("Saved.");
      if (isNew) navigate(`/app/systems/${r.id}`, { replace: true, force: true });
    } catch (e) {
      setError(e);
    }
  };
  const exportSnapshot = async () => {
    try {
      const snap = await get(`/api/systems/${id}/snapshot/`);
      download(`${meta.name.replace(/[^\w.-]+/g, "_") || "system"}.snapshot.json`, JSON.stringify(snap, null, 2));
    } catch (e) {
      setError(e);
    }
  };
  const clone = async () => {
    try {
      const r = await post(`/api/systems/${id}/clone/`, { name: `${meta.name} (copy)` });
      navigate(`/app/systems/${r.id}`);
    } catch (e) {
      setError(e);
    }
  };
  const remove = async () => {
    if (!window.confirm(`Delete ${meta.name}?`)) return;
    try {
      await del(`/api/systems/${id}/`);
      setSaved(current);
      navigate("/app/systems", { force: true });
    } catch (e) {
      setError(e);
    }
  };

  if (!meta) return error ? <ErrorSummary error={error} /> : <Loading />;
  const readOnly = !meta.can_edit;
  const fieldErrors = error?.fields || {};
  const q = paletteSearch.toLowerCase();
  const palette = components.filter((c) => !q || c.name.toLowerCase().includes(q) || c.type.toLowerCase().includes(q));
  const groups = nodes.filter((n) => n.data.group && n.id !== selectedId && !isDescendant(nodes, selectedId, n.id));
  const summaryError = error && { message: error.message, fields: { ...Object.fromEntries(Object.entries(fieldErrors).filter(([p]) => !/^nodes\[/.test(p))) } };
  const labelEntries = selected ? Object.entries(selected.data.labels || {}) : [];

  return (
    <section className="system-editor" aria-labelledby="sys-title">
      <header className="page-head">
        <h1 id="sys-title">{isNew ? "New system model" : meta.name}{dirty && <span className="unsaved"> · unsaved</span>}</h1>
        <div className="actions">
          {!readOnly && <button className="primary" onClick={save}>Save</button>}
          {!isNew && <button onClick={exportSnapshot}>Export snapshot JSON</button>}
          {!isNew && <button onClick={clone}>Clone</button>}
          {!isNew && !readOnly && <button className="danger" onClick={remove}>Delete</button>}
        </div>
      </header>
      {readOnly && <p className="note">{meta.owner ? `System model of ${meta.owner}` : "Built-in example"}: read-only. Clone it to edit a copy.</p>}
      <div className="form-row">
        <label className={`field${fieldErrors.name ? " invalid" : ""}`}><span className="field-label">Name</span>
          <input aria-label="System model name" value={meta.name} readOnly={readOnly} aria-invalid={Boolean(fieldErrors.name)} onChange={(e) => setMeta({ ...meta, name: e.target.value })} />
          {fieldErrors.name && <span className="field-error" role="alert">{fieldErrors.name.join(" ")}</span>}
        </label>
        <label className="field grow"><span className="field-label">Description</span>
          <input aria-label="System model description" value={meta.description} readOnly={readOnly} onChange={(e) => setMeta({ ...meta, description: e.target.value })} />
        </label>
        <label className="check"><input type="checkbox" checked={meta.shared} disabled={readOnly} onChange={(e) => setMeta({ ...meta, shared: e.target.checked })} /> Shared</label>
      </div>
      {summaryError && Object.keys(fieldErrors).length > 0 && (
        <ErrorSummary error={summaryError} shown={["name"]} />
      )}
      {error && Object.keys(fieldErrors).length === 0 && <ErrorSummary error={error} />}
      {Object.keys(nodeErrors.nodes).length > 0 && (
        <p className="error-box" role="alert">The graph has errors on {Object.keys(nodeErrors.nodes).length} node(s): {Object.keys(nodeErrors.nodes).join(", ")} (marked in red).</p>
      )}
      <div className={`editor-body${readOnly ? " no-palette" : ""}`}>
        {!readOnly && (
          <aside className="palette" aria-label="Hardware palette">
            <h2>Palette</h2>
            <p className="hint">Drag onto the canvas (into a group to nest it), or press Add: it goes into the selected group.</p>
            <div className="palette-item group-item" draggable onDragStart={(e) => e.dataTransfer.setData("application/x-parasim", "group")}>
              <span>Group (cluster, machine)</span>
              <button aria-label="Add group" onClick={() => addNode("group")}>Add</button>
            </div>
            <input type="search" aria-label="Search the palette" placeholder="search hardware" value={paletteSearch} onChange={(e) => setPaletteSearch(e.target.value)} />
            <ul>
              {palette.map((c) => (
                <li key={c.id} className="palette-item" draggable onDragStart={(e) => e.dataTransfer.setData("application/x-parasim", String(c.id))}>
                  <span title={`#${c.id} ${c.vendor || ""}`}><span className={`tag tag-${c.type}`}>{c.type}</span> {c.name}</span>
                  <button aria-label={`Add ${c.name}`} onClick={() => addNode(c)}>Add</button>
                </li>
              ))}
            </ul>
          </aside>
        )}
        <div className="canvas" onDragOver={onDragOver} onDrop={onDrop} aria-label="System model canvas">
          <ReactFlow
            nodes={viewNodes}
            edges={viewEdges}
            nodeTypes={NODE_TYPES}
            onNodesChange={readOnly ? undefined : onNodesChange}
            onEdgesChange={readOnly ? undefined : onEdgesChange}
            onConnect={readOnly ? undefined : onConnect}
            onNodeClick={(_, n) => setSelectedId(n.id)}
            onPaneClick={() => setSelectedId(null)}
            onNodeDragStop={readOnly ? undefined : onNodeDragStop}
            nodesDraggable={!readOnly}
            nodesConnectable={!readOnly}
            fitView
            fitViewOptions={{ padding: 0.2, maxZoom: 1 }}
            deleteKeyCode={readOnly ? null : ["Delete"]}
            proOptions={{ hideAttribution: true }}
          >
            <Background gap={16} />
            <Controls />
          </ReactFlow>
        </div>
        <aside className="properties" aria-label="Properties">
          <h2>Properties</h2>
          {!selected ? (
            <>
              <p className="hint">Select a node or group on the canvas.</p>
              <label><span className="field-label">Select node</span>
                <select aria-label="Select node" value="" onChange={(e) => setSelectedId(e.target.value)}>
                  <option value="">—</option>
                  {nodes.map((n) => <option key={n.id} value={n.id}>{n.data.name || n.id}</option>)}
                </select>
              </label>
            </>
          ) : (
            <NodeProperties
              node={selected}
              readOnly={readOnly}
              errors={nodeErrors.nodes[selected.id] || []}
              components={components}
              models={models}
              groups={groups}
              nodes={nodes}
              labelEntries={labelEntries}
              update={updateSelected}
              setParent={setParent}
              connect={connect}
              remove={removeSelected}
              edges={edges}
              removeEdge={(edgeId) => setEdges((es) => es.filter((e) => e.id !== edgeId))}
              select={setSelectedId}
            />
          )}
        </aside>
      </div>
    </section>
  );
}

function NodeProperties({ node, readOnly, errors, components, models, groups, nodes, labelEntries, update, setParent, connect, remove, edges, removeEdge, select }) {
  const d = node.data;
  const err = (field) => errors.filter((e) => e.field === field || e.field.startsWith(`${field}.`)).map((e) => e.message).join(" ");
  const [newLabel, setNewLabel] = useState("");
  const [target, setTarget] = useState("");
  const mine = edges.filter((e) => e.source === node.id || e.target === node.id);
  const nameOf = (id) => nodes.find((n) => n.id === id)?.data.name || id;
  const setLabels = (labels) => update({ labels });
  const isGpu = components.find((c) => c.id === d.hardware)?.type === "GPU";
  const otherErrors = errors.filter((e) => !["name", "hardware", "model", "count", "labels", "parent", "kernelMode", "kernelWorkers", "next", "via", "coherence", "topology"].some((f) => e.field === f || e.field.startsWith(`${f}.`)));
  return (
    <div className="node-props" data-node-id={node.id}>
      <p className="muted">id <code>{node.id}</code>{d.group ? " · group" : ""}</p>
      {otherErrors.length > 0 && <div className="field-error" role="alert">{otherErrors.map((e) => `${e.field}: ${e.message}`).join(" ")}</div>}
      <label className="field"><span className="field-label">Name</span>
        <input aria-label="Node name" value={d.name} readOnly={readOnly} onChange={(e) => update({ name: e.target.value })} />
        {err("name") && <span className="field-error" role="alert">{err("name")}</span>}
      </label>
      {!d.group && (
        <>
          <label className={`field${err("hardware") ? " invalid" : ""}`}><span className="field-label">Hardware</span>
            <select aria-label="Node hardware" value={d.hardware ?? ""} disabled={readOnly} onChange={(e) => update({ hardware: e.target.value ? Number(e.target.value) : null })}>
              <option value="">—</option>
              {components.map((c) => <option key={c.id} value={c.id}>{c.type} · {c.name}</option>)}
            </select>
            {err("hardware") && <span className="field-error" role="alert">{err("hardware")}</span>}
          </label>
          <label className={`field${err("count") ? " invalid" : ""}`}><span className="field-label">Count</span>
            <input aria-label="Node count" type="number" value={d.count} readOnly={readOnly} aria-invalid={Boolean(err("count"))}
              onChange={(e) => update({ count: e.target.value === "" ? "" : Number(e.target.value) })} />
            {err("count") && <span className="field-error" role="alert">{err("count")}</span>}
          </label>
          <label className={`field${err("model") ? " invalid" : ""}`}><span className="field-label">Computational model</span>
            <select aria-label="Node computational model" value={d.model ?? ""} disabled={readOnly} onChange={(e) => update({ model: e.target.value ? Number(e.target.value) : null })}>
              <option value="">— none —</option>
              {models.map((m) => <option key={m.id} value={m.id}>{m.name}{m.builtin ? " (built-in)" : ""}</option>)}
            </select>
            {err("model") && <span className="field-error" role="alert">{err("model")}</span>}
          </label>
          {(isGpu || (d.kernelMode && d.kernelMode !== "analytic")) && (
            <>
              <label className={`field${err("kernelMode") ? " invalid" : ""}`}><span className="field-label">Kernel simulation</span>
                <select aria-label="Kernel simulation" value={d.kernelMode || "analytic"} disabled={readOnly} onChange={(e) => update({ kernelMode: e.target.value })}>
                  <option value="analytic">analytic: the model&apos;s formula</option>
                  <option value="detailed">detailed: block by block over the SMs</option>
                  <option value="petri">petri: a Petri-net model of one SM, times the waves</option>
                  <option value="waves">waves: the model&apos;s time for one wave, times the waves</option>
                </select>
                {d.kernelMode === "petri" && <span className="hint">Instructions per warp: arithmeticInstructions, sharedInstructions, globalInstructions (else from CUDACoreInstructions, GMEMBytesTransferred); also globalLatency, sharedLatency, petriSeed, petriRuns, cyclesPerStep. See docs/kernel-modes.md.</span>}
                {d.kernelMode === "waves" && <span className="hint">Each started wave of SMs × resident blocks costs the model&apos;s time for one full wave, so the time rises in steps. See docs/kernel-modes.md.</span>}
                {err("kernelMode") && <span className="field-error" role="alert">{err("kernelMode")}</span>}
              </label>
              {d.kernelMode === "detailed" && (
                <label className={`field${err("kernelWorkers") ? " invalid" : ""}`}><span className="field-label">Worker processes (the SMs split over them; same result)</span>
                  <input aria-label="Kernel worker processes" type="number" min="1" value={d.kernelWorkers ?? 1} readOnly={readOnly} aria-invalid={Boolean(err("kernelWorkers"))}
                    onChange={(e) => update({ kernelWorkers: e.target.value === "" ? "" : Number(e.target.value) })} />
                  {err("kernelWorkers") && <span className="field-error" role="alert">{err("kernelWorkers")}</span>}
                </label>
              )}
            </>
          )}
          <MemoryPath node={node} readOnly={readOnly} err={err} components={components} nodes={nodes} update={update} />
          <fieldset className={`labels${err("labels") ? " invalid" : ""}`}>
            <legend className="field-label">Labels (multiplicity)</legend>
            {labelEntries.map(([label, mult]) => (
              <div className="label-row" key={label}>
                <span className="label-chip">{label}</span>
                <input aria-label={`Multiplicity of label ${label}`} type="number" value={mult} readOnly={readOnly}
                  onChange={(e) => setLabels({ ...d.labels, [label]: e.target.value === "" ? "" : Number(e.target.value) })} />
                {!readOnly && <button aria-label={`Remove label ${label}`} onClick={() => { const l = { ...d.labels }; delete l[label]; setLabels(l); }}>×</button>}
              </div>
            ))}
            {!readOnly && (
              <div className="label-row">
                <input aria-label="New label" placeholder="label, e.g. GPU" value={newLabel} onChange={(e) => setNewLabel(e.target.value)}
                  onKeyDown={(e) => { if (e.key === "Enter" && newLabel.trim()) { setLabels({ ...d.labels, [newLabel.trim()]: 1 }); setNewLabel(""); } }} />
                <button onClick={() => { if (newLabel.trim()) { setLabels({ ...d.labels, [newLabel.trim()]: 1 }); setNewLabel(""); } }}>Add label</button>
              </div>
            )}
            {err("labels") && <span className="field-error" role="alert">{err("labels")}</span>}
          </fieldset>
        </>
      )}
      <label className={`field${err("parent") ? " invalid" : ""}`}><span className="field-label">Parent group</span>
        <select aria-label="Parent group" value={node.parentId || ""} disabled={readOnly} onChange={(e) => setParent(e.target.value || null)}>
          <option value="">— top level —</option>
          {groups.map((g) => <option key={g.id} value={g.id}>{g.data.name || g.id}</option>)}
        </select>
        {err("parent") && <span className="field-error" role="alert">{err("parent")}</span>}
      </label>
      {!d.group && (
        <div className="field"><span className="field-label">Edges</span>
          <ul className="edge-list">
            {mine.map((e) => (
              <li key={e.id}>{nameOf(e.source)} — {nameOf(e.target)} {!readOnly && <button aria-label={`Remove edge ${nameOf(e.source)} to ${nameOf(e.target)}`} onClick={() => removeEdge(e.id)}>×</button>}</li>
            ))}
          </ul>
          {!readOnly && (
            <div className="label-row">
              <select aria-label="Connect to node" value={target} onChange={(e) => setTarget(e.target.value)}>
                <option value="">—</option>
                {nodes.filter((n) => !n.data.group && n.id !== node.id).map((n) => <option key={n.id} value={n.id}>{n.data.name || n.id}</option>)}
              </select>
              <button onClick={() => { connect(target); setTarget(""); }}>Connect</button>
            </div>
          )}
        </div>
      )}
      <div className="actions">
        <button onClick={() => select(null)}>Done</button>
        {!readOnly && <button className="danger" onClick={remove}>Delete {d.group ? "group" : "node"}</button>}
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
  const stray = (id, list, what) => id && !list.some((n) => n.id === id) && <option value={id}>{nameOf(id)} (not {what})</option>;
  const select = (field, label, value, onChange, children) => (
    <label className={`field${err(field) ? " invalid" : ""}`}><span className="field-label">{label}</span>
      <select aria-label={label} value={value} disabled={readOnly} aria-invalid={Boolean(err(field))} onChange={(e) => onChange(e.target.value)}>{children}</select>
      {err(field) && <span className="field-error" role="alert">{err(field)}</span>}
    </label>
  );
  return (
    <fieldset className="memory-path">
      <legend className="field-label">Memory path</legend>
      {showNext && (
        <>
          <p className="hint">Where a miss goes: the next cache or the memory (a dashed arrow on the canvas).</p>
          {select("next", "Next memory level", d.next ?? "", (v) => update(v ? { next: v } : { next: null, via: null }), (
            <>
              <option value="">— none —</option>
              {levels.map((n) => <option key={n.id} value={n.id}>{n.data.name || n.id}</option>)}
              {stray(d.next, levels, "a cache or memory")}
            </>
          ))}
          {select("via", "Via fabric", d.via ?? "", (v) => update({ via: v || null }), (
            <>
              <option value="">— none (direct) —</option>
              {fabrics.map((n) => <option key={n.id} value={n.id}>{n.data.name || n.id}</option>)}
              {stray(d.via, fabrics, "a fabric")}
            </>
          ))}
        </>
      )}
      {showCoherence && select("coherence", "Coherence", d.coherence || "none", (v) => update({ coherence: v }), COHERENCE.map(([v, text]) => <option key={v} value={v}>{text}</option>))}
      {showTopology && select("topology", "Topology", d.topology || "crossbar", (v) => update({ topology: v }), TOPOLOGIES.map(([v, text]) => <option key={v} value={v}>{text}</option>))}
    </fieldset>
  );
}

function stripUi(graph) {
  return { nodes: graph.nodes.map(({ ui, ...rest }) => rest), edges: graph.edges };
}

function isDescendant(nodes, ancestorId, nodeId) {
  let current = nodes.find((n) => n.id === nodeId);
  const seen = new Set();
  while (current && current.parentId && !seen.has(current.id)) {
    seen.add(current.id);
    if (current.parentId === ancestorId) return true;
    current = nodes.find((n) => n.id === current.parentId);
  }
  return false;
}

function depthOf(nodes, id) {
  let d = 0;
  let current = nodes.find((n) => n.id === id);
  while (current && current.parentId && d < 50) {
    d += 1;
    current = nodes.find((n) => n.id === current.parentId);
  }
  return d;
}

// Make a group (and its ancestors) big enough for its children.
function grow(nodes, groupId) {
  let gid = groupId;
  let guard = 0;
  while (gid && guard < 20) {
    guard += 1;
    const g = nodes.find((n) => n.id === gid);
    if (!g) return;
    const kids = nodes.filter((n) => n.parentId === gid);
    let w = 0;
    let h = 0;
    kids.forEach((k) => {
      w = Math.max(w, k.position.x + (k.style?.width ?? k.measured?.width ?? LEAF.w));
      h = Math.max(h, k.position.y + (k.style?.height ?? k.measured?.height ?? LEAF.h + 20));
    });
    const width = Math.max(g.style?.width ?? 260, w + PAD);
    const height = Math.max(g.style?.height ?? 160, h + PAD);
    const idx = nodes.indexOf(g);
    nodes[idx] = { ...g, style: { ...g.style, width, height } };
    gid = g.parentId;
  }
}
