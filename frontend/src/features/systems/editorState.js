// The system editor's state and its reducer: the record's fields, the canvas's React Flow nodes
// and edges, the selected node, and the counter behind fresh node ids. Every change of the
// canvas is an action here; the component only turns events into actions.
import { addEdge, applyEdgeChanges, applyNodeChanges } from "@xyflow/react";
import { sortParentsFirst, stripUi, toFlow, toGraph, withoutMemoryRefs } from "./graph.js";
import { GROUP_SIZE, childSlot, grow, isDescendant, layeredLayout } from "./layout.js";
import { templateEntry } from "./topology.js";

export const EMPTY_SYSTEM = {
  name: "",
  description: "",
  shared: false,
  graph: { nodes: [], edges: [] },
  can_edit: true,
};

// Return the editor's state for a system model as the API gives it.
export function editorState(record) {
  const flow = toFlow(record.graph || { nodes: [] });
  return {
    name: record.name,
    description: record.description || "",
    shared: record.shared,
    can_edit: record.can_edit,
    owner: record.owner,
    nodes: flow.nodes,
    edges: flow.edges,
    topologies: record.graph?.topologies || [],
    networkModel: record.graph?.networkModel || "",
    selectedId: null,
    counter: 1,
  };
}

// The API's graph of the editor's state: the canvas's nodes and edges, the topology templates
// (left out when there are none, as a graph drawn box by box has none) and the network model
// (left out when not chosen: the simulator's default, maxmin).
export function stateGraph(state) {
  const graph = toGraph(state.nodes, state.edges);
  if (state.topologies?.length) graph.topologies = state.topologies;
  if (state.networkModel) graph.networkModel = state.networkModel;
  return graph;
}

// What "unsaved changes" compares: the fields and the graph, not positions, sizes or selection.
export function fingerprint(state) {
  return JSON.stringify({
    n: state.name,
    d: state.description,
    s: state.shared,
    g: stripUi(toGraph(state.nodes, state.edges)),
    t: state.topologies || [],
    m: state.networkModel || "",
  });
}

// What a save sends.
export function toBody(state) {
  return {
    name: state.name,
    description: state.description,
    shared: state.shared,
    graph: stateGraph(state),
  };
}

// After a save the canvas stays as it is; the fields take the server's values.
export function afterSave(response, state) {
  return {
    ...state,
    name: response.name,
    description: response.description || "",
    shared: response.shared,
  };
}

// Return an id not used by any node ("gpu3", "link4", "group5") and the counter after it.
export function freshId(base, nodes, counter) {
  const clean =
    (base || "node")
      .toLowerCase()
      .replace(/[^a-z0-9_]+/g, "_")
      .replace(/^_+|_+$/g, "")
      .slice(0, 20) || "node";
  let next = counter;
  let candidate;
  do {
    candidate = `${clean}${next}`;
    next += 1;
  } while (nodes.some((n) => n.id === candidate));
  return { id: candidate, counter: next };
}

// A new canvas node: a group, or an instance of a hardware component.
function newNode(id, component, parent, position) {
  const isGroup = component === "group";
  return {
    id,
    type: isGroup ? "group" : "hardware",
    position,
    parentId: parent || undefined,
    style: isGroup ? { width: GROUP_SIZE.w, height: GROUP_SIZE.h } : undefined,
    data: isGroup
      ? { name: "Group", group: true, hardware: null, model: null, count: 1, labels: {} }
      : {
          name: component.name,
          group: false,
          hardware: component.id,
          model: null,
          count: 1,
          labels: {},
        },
  };
}

const mapSelected = (state, change) =>
  state.nodes.map((n) => (n.id === state.selectedId ? change(n) : n));

// Actions: fields {patch}; nodesChanged / edgesChanged {changes} (React Flow's); connected
// {connection, id}; selected {id}; nodeAdded {component ("group" or a component), parent,
// position}; nodeUpdated {patch} (the selected node's data); parentSet {parentId} (of the
// selected node); nodeMoved {id, parentId, position}; selectedRemoved (with what it holds);
// edgeRemoved {id}; arranged (layeredLayout of the whole canvas); templateInserted {kind,
// endpoints (a node id), components {role: component}, size (topology.js templateSize),
// routing, position}: the template's switch or link nodes with their counts, the endpoints
// node's count set to the template's; templateRemoved {index}.
export function systemEditorReducer(state, action) {
  switch (action.type) {
    case "fields":
      return { ...state, ...action.patch };
    case "nodesChanged": {
      const removed = new Set(action.changes.filter((c) => c.type === "remove").map((c) => c.id));
      const nodes = withoutMemoryRefs(
        applyNodeChanges(
          action.changes.filter((c) => c.type !== "select"),
          state.nodes,
        ),
        removed,
      );
      const picked = action.changes.filter((c) => c.type === "select" && c.selected);
      return {
        ...state,
        nodes,
        selectedId: picked.length ? picked[picked.length - 1].id : state.selectedId,
      };
    }
    case "edgesChanged":
      return { ...state, edges: applyEdgeChanges(action.changes, state.edges) };
    case "connected":
      return { ...state, edges: addEdge({ ...action.connection, id: action.id }, state.edges) };
    case "selected":
      return { ...state, selectedId: action.id };
    case "nodeAdded": {
      const { component, parent, position } = action;
      const base =
        component === "group" ? "group" : component.type === "NETWORK" ? "link" : component.type;
      const { id, counter } = freshId(base, state.nodes, state.counter);
      let nodes = [...state.nodes, newNode(id, component, parent, position)];
      if (parent) nodes = grow(nodes, parent);
      return { ...state, nodes: sortParentsFirst(nodes), selectedId: id, counter };
    }
    case "nodeUpdated":
      return {
        ...state,
        nodes: mapSelected(state, (n) => ({ ...n, data: { ...n.data, ...action.patch } })),
      };
    case "parentSet": {
      const { parentId } = action;
      const position = parentId
        ? childSlot(state.nodes, parentId, state.selectedId)
        : { x: 40, y: 40 };
      let nodes = mapSelected(state, (n) => ({ ...n, parentId: parentId || undefined, position }));
      if (parentId) nodes = grow(nodes, parentId);
      return { ...state, nodes: sortParentsFirst(nodes) };
    }
    case "nodeMoved":
      return {
        ...state,
        nodes: sortParentsFirst(
          state.nodes.map((n) =>
            n.id === action.id ? { ...n, parentId: action.parentId, position: action.position } : n,
          ),
        ),
      };
    case "selectedRemoved": {
      const doomed = new Set([
        state.selectedId,
        ...state.nodes
          .filter((n) => isDescendant(state.nodes, state.selectedId, n.id))
          .map((n) => n.id),
      ]);
      return {
        ...state,
        nodes: withoutMemoryRefs(
          state.nodes.filter((n) => !doomed.has(n.id)),
          doomed,
        ),
        edges: state.edges.filter((e) => !doomed.has(e.source) && !doomed.has(e.target)),
        selectedId: null,
      };
    }
    case "arranged":
      return { ...state, nodes: layeredLayout(state.nodes, state.edges) };
    case "templateInserted": {
      const { kind, endpoints, components, size, routing, position } = action;
      let { counter } = state;
      const added = [];
      const roleNodes = {};
      Object.entries(size.counts).forEach(([role, count], index) => {
        const fresh = freshId(role, [...state.nodes, ...added], counter);
        counter = fresh.counter;
        const node = newNode(fresh.id, components[role], null, {
          x: position.x + 220 * (index + 1),
          y: position.y,
        });
        node.data = { ...node.data, count };
        added.push(node);
        roleNodes[role] = fresh.id;
      });
      const ids = new Set((state.topologies || []).map((t) => t.id));
      let number = (state.topologies || []).length + 1;
      while (ids.has(`${kind}${number}`)) number += 1;
      const entry = templateEntry(`${kind}${number}`, kind, endpoints, roleNodes, size, routing);
      const nodes = state.nodes.map((n) =>
        n.id === endpoints ? { ...n, data: { ...n.data, count: size.endpoints } } : n,
      );
      return {
        ...state,
        nodes: sortParentsFirst([...nodes, ...added]),
        edges: state.edges,
        topologies: [...(state.topologies || []), entry],
        counter,
      };
    }
    case "templateRemoved":
      return {
        ...state,
        topologies: (state.topologies || []).filter((_, i) => i !== action.index),
      };
    case "edgeRemoved":
      return { ...state, edges: state.edges.filter((e) => e.id !== action.id) };
    default:
      throw new Error(`systemEditorReducer: unknown action ${action.type}`);
  }
}
