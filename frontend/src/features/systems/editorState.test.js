import { describe, expect, it } from "vitest";
import {
  EMPTY_SYSTEM,
  afterSave,
  editorState,
  fingerprint,
  freshId,
  systemEditorReducer as reduce,
  toBody,
} from "./editorState.js";

const GPU = { id: 2, name: "H100", type: "GPU" };
const LINK = { id: 3, name: "PCIe 5", type: "NETWORK" };

// Apply the actions in turn to a new, empty system model.
const run = (...actions) => actions.reduce(reduce, editorState(EMPTY_SYSTEM));

describe("systemEditorReducer", () => {
  it("adds nodes with fresh ids from one counter and selects the new one", () => {
    const state = run(
      { type: "nodeAdded", component: GPU, parent: null, position: { x: 40, y: 40 } },
      { type: "nodeAdded", component: LINK, parent: null, position: { x: 60, y: 60 } },
      { type: "nodeAdded", component: "group", parent: null, position: { x: 80, y: 80 } },
    );
    expect(state.nodes.map((n) => n.id)).toEqual(["gpu1", "link2", "group3"]);
    expect(state.selectedId).toBe("group3");
    expect(state.nodes[0].data).toMatchObject({
      name: "H100",
      hardware: 2,
      count: 1,
      labels: {},
      group: false,
    });
    expect(state.nodes[2]).toMatchObject({ type: "group", style: { width: 520, height: 190 } });
  });

  it("grows the group a node is added to and keeps parents first", () => {
    const state = run(
      { type: "nodeAdded", component: GPU, parent: null, position: { x: 0, y: 0 } },
      { type: "nodeAdded", component: "group", parent: null, position: { x: 0, y: 0 } },
      { type: "nodeAdded", component: GPU, parent: "group2", position: { x: 600, y: 44 } },
    );
    const group = state.nodes.find((n) => n.id === "group2");
    expect(group.style.width).toBeGreaterThanOrEqual(600 + 190);
    expect(state.nodes.findIndex((n) => n.id === "group2")).toBeLessThan(
      state.nodes.findIndex((n) => n.id === "gpu3"),
    );
  });

  it("edits the selected node's data", () => {
    const state = run(
      { type: "nodeAdded", component: GPU, parent: null, position: { x: 0, y: 0 } },
      { type: "nodeUpdated", patch: { count: 4, labels: { GPU: 1 } } },
    );
    expect(state.nodes[0].data).toMatchObject({ count: 4, labels: { GPU: 1 } });
  });

  it("moves the selected node into a group and out again", () => {
    let state = run(
      { type: "nodeAdded", component: "group", parent: null, position: { x: 0, y: 0 } },
      { type: "nodeAdded", component: GPU, parent: null, position: { x: 900, y: 900 } },
      { type: "parentSet", parentId: "group1" },
    );
    expect(state.nodes.find((n) => n.id === "gpu2")).toMatchObject({
      parentId: "group1",
      position: { x: 24, y: 44 },
    });
    state = reduce(state, { type: "parentSet", parentId: null });
    expect(state.nodes.find((n) => n.id === "gpu2")).toMatchObject({
      parentId: undefined,
      position: { x: 40, y: 40 },
    });
  });

  it("removes the selected group with what it holds, their edges and memory paths to them", () => {
    let state = run(
      { type: "nodeAdded", component: "group", parent: null, position: { x: 0, y: 0 } },
      { type: "nodeAdded", component: GPU, parent: "group1", position: { x: 24, y: 44 } },
      { type: "nodeAdded", component: LINK, parent: null, position: { x: 900, y: 0 } },
      { type: "connected", connection: { source: "link3", target: "gpu2" }, id: "e1" },
      { type: "selected", id: "link3" },
      { type: "nodeUpdated", patch: { next: "gpu2", via: "gpu2" } },
      { type: "selected", id: "group1" },
    );
    state = reduce(state, { type: "selectedRemoved" });
    expect(state.nodes.map((n) => n.id)).toEqual(["link3"]);
    expect(state.edges).toEqual([]);
    expect(state.nodes[0].data).toMatchObject({ next: null, via: null });
    expect(state.selectedId).toBeNull();
  });

  it("applies React Flow's changes and takes the last selected node", () => {
    let state = run(
      { type: "nodeAdded", component: GPU, parent: null, position: { x: 0, y: 0 } },
      { type: "nodeAdded", component: GPU, parent: null, position: { x: 300, y: 0 } },
    );
    state = reduce(state, {
      type: "nodesChanged",
      changes: [
        { type: "position", id: "gpu1", position: { x: 10, y: 20 } },
        { type: "select", id: "gpu1", selected: true },
      ],
    });
    expect(state.nodes.find((n) => n.id === "gpu1").position).toEqual({ x: 10, y: 20 });
    expect(state.selectedId).toBe("gpu1");
    state = reduce(state, { type: "nodesChanged", changes: [{ type: "remove", id: "gpu2" }] });
    expect(state.nodes.map((n) => n.id)).toEqual(["gpu1"]);
  });

  it("removes one edge", () => {
    let state = run(
      { type: "nodeAdded", component: GPU, parent: null, position: { x: 0, y: 0 } },
      { type: "nodeAdded", component: LINK, parent: null, position: { x: 300, y: 0 } },
      { type: "connected", connection: { source: "gpu1", target: "link2" }, id: "e1" },
    );
    expect(state.edges).toHaveLength(1);
    state = reduce(state, { type: "edgeRemoved", id: "e1" });
    expect(state.edges).toEqual([]);
  });
});

describe("fingerprint", () => {
  it("ignores positions and selection but sees fields and the graph", () => {
    const state = run({
      type: "nodeAdded",
      component: GPU,
      parent: null,
      position: { x: 0, y: 0 },
    });
    const moved = {
      ...state,
      selectedId: null,
      nodes: state.nodes.map((n) => ({ ...n, position: { x: 500, y: 500 } })),
    };
    expect(fingerprint(moved)).toBe(fingerprint(state));
    expect(fingerprint(reduce(state, { type: "fields", patch: { name: "x" } }))).not.toBe(
      fingerprint(state),
    );
    expect(fingerprint(reduce(state, { type: "nodeUpdated", patch: { count: 2 } }))).not.toBe(
      fingerprint(state),
    );
  });
});

describe("saving", () => {
  it("sends the fields and the graph, and keeps the canvas after the save", () => {
    const state = run(
      { type: "fields", patch: { name: "Box" } },
      { type: "nodeAdded", component: GPU, parent: null, position: { x: 0, y: 0 } },
    );
    expect(toBody(state)).toEqual({
      name: "Box",
      description: "",
      shared: false,
      graph: {
        nodes: [
          { id: "gpu1", name: "H100", hardware: 2, count: 1, labels: {}, ui: { x: 0, y: 0 } },
        ],
        edges: [],
      },
    });
    const after = afterSave({ id: 5, name: "Box", description: null, shared: true }, state);
    expect(after.nodes).toBe(state.nodes);
    expect(after).toMatchObject({ name: "Box", description: "", shared: true, selectedId: "gpu1" });
  });
});

describe("freshId", () => {
  it("skips ids in use and cleans the base", () => {
    expect(freshId("GPU", [{ id: "gpu1" }], 1)).toEqual({ id: "gpu2", counter: 3 });
    expect(freshId("A100 SXM/80", [], 7)).toEqual({ id: "a100_sxm_807", counter: 8 });
    expect(freshId("", [], 1).id).toBe("node1");
  });
});

describe("arranging the canvas", () => {
  it("lays the nodes out in layers and keeps the graph", () => {
    const record = {
      name: "s",
      shared: false,
      can_edit: true,
      graph: {
        nodes: ["a", "b", "c"].map((id) => ({
          id,
          name: id,
          hardware: 1,
          ui: { x: 40, y: 40 },
        })),
        edges: [
          ["a", "b"],
          ["b", "c"],
        ],
      },
    };
    const state = editorState(record);
    const after = reduce(state, { type: "arranged" });
    const xs = after.nodes.map((n) => n.position.x);
    expect(new Set(xs).size).toBe(3);
    expect(fingerprint(after)).toBe(fingerprint(state));
  });
});

describe("the flow network's settings", () => {
  const record = {
    name: "cluster",
    description: "",
    shared: false,
    can_edit: true,
    graph: {
      nodes: [
        { id: "gpu", name: "GPU", hardware: 2, count: 8, labels: { GPU: 1 } },
        { id: "nic", name: "NIC", hardware: 3, count: 8, labels: {}, sharing: "full-duplex" },
      ],
      edges: [["gpu", "nic"]],
      networkModel: "LV08",
    },
  };

  it("keeps a network node's sharing and the system's network model through a save", () => {
    const state = editorState(record);
    expect(state.networkModel).toBe("LV08");
    expect(state.nodes.find((n) => n.id === "nic").data.sharing).toBe("full-duplex");
    const graph = toBody(state).graph;
    expect(graph.networkModel).toBe("LV08");
    expect(graph.nodes.map((n) => n.sharing)).toEqual([undefined, "full-duplex"]);
  });

  it("counts a changed sharing or network model as unsaved, and leaves the defaults out", () => {
    const state = reduce(editorState(record), { type: "selected", id: "nic" });
    const shared = reduce(state, { type: "nodeUpdated", patch: { sharing: "shared" } });
    expect(fingerprint(shared)).not.toBe(fingerprint(state));
    expect(toBody(shared).graph.nodes[1].sharing).toBe("shared");
    const fifo = reduce(state, { type: "nodeUpdated", patch: { sharing: "fifo" } });
    expect("sharing" in toBody(fifo).graph.nodes[1]).toBe(false);
    const plain = reduce(state, { type: "fields", patch: { networkModel: "" } });
    expect(fingerprint(plain)).not.toBe(fingerprint(state));
    expect("networkModel" in toBody(plain).graph).toBe(false);
  });
});
