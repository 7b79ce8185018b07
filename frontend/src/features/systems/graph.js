// The system graph both ways: the API's graph (and snapshot) nodes {id, name, hardware, model,
// count, labels, parent, group, ui, memory-path fields} and edges [[a, b]], and React Flow's
// nodes and edges on the canvas; the canvas's decorations (names, errors, memory paths).
// Pure functions; no React.
import { fmtTime } from "../../lib/format.js";
import { autoLayout } from "./layout.js";
import { MEMORY_EDGE_COLOR } from "./memoryPath.js";

// The attributes a link's latency is read from, first found wins: a latency, else the startup
// time of a transfer (PCIe records: host to device, then device to host).
const LATENCY_KEYS = ["latency", "startupHTD", "startupDth", "startup"];

// Bytes per second in decimal units, as link data sheets give them: 1.58e10 -> "15.8 GB/s".
export function fmtBandwidth(bytesPerSecond) {
  const units = ["B/s", "kB/s", "MB/s", "GB/s", "TB/s"];
  let value = bytesPerSecond;
  let unit = 0;
  while (Math.abs(value) >= 1000 && unit < units.length - 1) {
    value /= 1000;
    unit += 1;
  }
  return `${Number(value.toPrecision(3))} ${units[unit]}`;
}

// The label of an edge through a link component: its bandwidth and latency from the record's
// attributes ({key: value}), e.g. "15.8 GB/s · 3.969 µs"; null when it has neither.
export function linkLabel(attributes) {
  if (!attributes) return null;
  const parts = [];
  if (Number.isFinite(attributes.bandwidth)) parts.push(fmtBandwidth(attributes.bandwidth));
  const latencyKey = LATENCY_KEYS.find((key) => Number.isFinite(attributes[key]));
  if (latencyKey) parts.push(fmtTime(attributes[latencyKey]));
  return parts.length ? parts.join(" · ") : null;
}

// Return React Flow nodes (parents before children) and edges for a graph; nodes without a
// stored position are laid out (autoLayout).
export function toFlow(graph) {
  const nodes = graph.nodes || [];
  const { place, sizes } = autoLayout(nodes);
  const depth = (n, seen = new Set()) =>
    n.parent && !seen.has(n.id)
      ? 1 + depth(nodes.find((m) => m.id === n.parent) || {}, seen.add(n.id))
      : 0;
  const ordered = [...nodes].sort((a, b) => depth(a) - depth(b));
  return {
    nodes: ordered.map((n) => ({
      id: n.id,
      type: n.group ? "group" : "hardware",
      position: place.get(n.id) || { x: 40, y: 40 },
      parentId: n.parent || undefined,
      style: n.group ? { width: sizes.get(n.id).w, height: sizes.get(n.id).h } : undefined,
      data: {
        name: n.name || "",
        group: Boolean(n.group),
        hardware: n.hardware ?? null,
        model: n.model ?? null,
        count: n.count ?? 1,
        labels: n.labels || {},
        kernelMode: n.kernelMode || "analytic",
        kernelWorkers: n.kernelWorkers ?? 1,
        sharing: n.sharing || "fifo",
        ...memoryFields(n),
      },
    })),
    edges: (graph.edges || []).map(([a, b], i) => ({
      id: `e${i}-${a}-${b}`,
      source: a,
      target: b,
    })),
  };
}

// A node's memory path (simulator/memory_spec.py): the next level outwards, the fabric crossed
// on the way, a cache's coherence directory, a fabric's topology; absent fields are defaults.
export function memoryFields(n) {
  return {
    next: n.next ?? null,
    via: n.via ?? null,
    coherence: n.coherence || "none",
    topology: n.topology || "crossbar",
  };
}

// Return the API's graph of the canvas: parents before children, positions and group sizes
// under `ui`, default fields left out.
export function toGraph(nodes, edges) {
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
      if (d.kernelMode === "detailed" && d.kernelWorkers !== 1)
        node.kernelWorkers = d.kernelWorkers;
      if (d.next) node.next = d.next;
      if (d.via) node.via = d.via;
      if (d.coherence && d.coherence !== "none") node.coherence = d.coherence;
      if (d.topology && d.topology !== "crossbar") node.topology = d.topology;
      if (d.sharing && d.sharing !== "fifo") node.sharing = d.sharing;
      return node;
    }),
    edges: edges.map((e) => [e.source, e.target]),
  };
}

// Return the nodes reordered so that every group comes before what it holds (React Flow needs it).
export function sortParentsFirst(nodes) {
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
export function errorsByNode(fields, graph) {
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

// The graph without positions and sizes: what "unsaved changes" compares.
export function stripUi(graph) {
  return { nodes: graph.nodes.map(({ ui, ...rest }) => rest), edges: graph.edges };
}

// The memory paths drawn on the canvas: a dashed arrow from a node to its next level, labelled
// with the fabric crossed on the way. Drawn from the nodes' fields, never part of graph.edges.
export function memoryPathEdges(nodes) {
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
        markerEnd: { type: "arrowclosed", color: MEMORY_EDGE_COLOR },
        style: { stroke: MEMORY_EDGE_COLOR, strokeWidth: 1.5, strokeDasharray: "6 4" },
        selectable: false,
        deletable: false,
        focusable: false,
      };
    });
}

// Drop the memory-path references to removed nodes (a path without its next level loses its
// fabric too).
export function withoutMemoryRefs(nodes, removed) {
  if (!removed.size) return nodes;
  return nodes.map((n) => {
    const lostNext = removed.has(n.data.next);
    if (!lostNext && !removed.has(n.data.via)) return n;
    return { ...n, data: { ...n.data, next: lostNext ? null : n.data.next, via: null } };
  });
}

// The canvas's view of the nodes and edges: selection, hardware and model names, the API's
// errors of the last save (errorsByNode) on nodes and edges, the links' bandwidth and latency
// on the edges that meet them (componentAttributes: component id -> {key: value}), and the
// memory-path arrows.
export function decorate(
  nodes,
  edges,
  { selectedId, componentName, componentType, componentAttributes, modelName, nodeErrors },
) {
  const byId = new Map(nodes.map((n) => [n.id, n]));
  // An edge that meets a link (a NETWORK node) shows the link's bandwidth and latency.
  const linkOf = (e) =>
    [e.source, e.target]
      .map((id) => byId.get(id)?.data.hardware)
      .find((hardware) => componentType.get(hardware) === "NETWORK");
  const labelled = (e) => {
    const label = linkLabel(componentAttributes?.get(linkOf(e)));
    return label
      ? { ...e, label, className: "link-edge", ariaLabel: `Edge ${label}`, labelBgPadding: [4, 2] }
      : e;
  };
  const viewNodes = nodes.map((n) => ({
    ...n,
    selected: n.id === selectedId,
    data: {
      ...n.data,
      hardwareName: componentName.get(n.data.hardware),
      hardwareType: componentType.get(n.data.hardware),
      modelName: modelName.get(n.data.model),
      errors: nodeErrors.nodes[n.id],
    },
  }));
  const viewEdges = [
    ...edges.map((e, i) =>
      nodeErrors.edges[i]
        ? { ...e, style: { stroke: "#c92a2a", strokeWidth: 3 }, label: "invalid" }
        : labelled(e),
    ),
    ...memoryPathEdges(nodes),
  ];
  return { nodes: viewNodes, edges: viewEdges };
}
