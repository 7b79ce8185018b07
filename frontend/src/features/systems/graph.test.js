import { describe, expect, it } from "vitest";
import {
  fmtBandwidth,
  linkLabel,
  decorate,
  errorsByNode,
  memoryPathEdges,
  sortParentsFirst,
  stripUi,
  toFlow,
  toGraph,
  withoutMemoryRefs,
} from "./graph.js";

// A snapshot's graph as the API stores it: a machine with a CPU, a GPU, a bus, an L2 on a memory
// path through a fabric; every node with its stored position.
const GRAPH = {
  nodes: [
    { id: "host", name: "Host", group: true, ui: { x: 40, y: 40, w: 900, h: 300 } },
    {
      id: "cpu0",
      name: "CPU",
      parent: "host",
      hardware: 1,
      count: 1,
      labels: { CPU: 1 },
      ui: { x: 24, y: 44 },
    },
    {
      id: "gpu0",
      name: "GPU",
      parent: "host",
      hardware: 2,
      model: 7,
      count: 2,
      labels: { GPU: 1 },
      kernelMode: "detailed",
      kernelWorkers: 2,
      next: "l2",
      via: "noc",
      ui: { x: 250, y: 44 },
    },
    {
      id: "bus0",
      name: "PCIe",
      parent: "host",
      hardware: 3,
      count: 1,
      labels: {},
      ui: { x: 480, y: 44 },
    },
    {
      id: "l2",
      name: "L2",
      parent: "host",
      hardware: 4,
      count: 1,
      labels: {},
      coherence: "mesi",
      ui: { x: 250, y: 160 },
    },
    {
      id: "noc",
      name: "NoC",
      parent: "host",
      hardware: 5,
      count: 1,
      labels: {},
      topology: "mesh",
      ui: { x: 480, y: 160 },
    },
  ],
  edges: [
    ["cpu0", "bus0"],
    ["bus0", "gpu0"],
  ],
};

describe("toFlow and toGraph", () => {
  it("give back the graph they were given (snapshot -> flow -> snapshot)", () => {
    const flow = toFlow(GRAPH);
    expect(toGraph(flow.nodes, flow.edges)).toEqual(GRAPH);
  });

  it("make groups React Flow parents sized by their stored ui", () => {
    const { nodes } = toFlow(GRAPH);
    const host = nodes.find((n) => n.id === "host");
    expect(host.type).toBe("group");
    expect(host.style).toEqual({ width: 900, height: 300 });
    expect(nodes.find((n) => n.id === "gpu0").parentId).toBe("host");
    expect(nodes[0].id).toBe("host");
  });

  it("leave default fields out of the graph", () => {
    const flow = toFlow({
      nodes: [{ id: "g", name: "G", hardware: 1, count: 1, labels: {}, ui: { x: 0, y: 0 } }],
      edges: [],
    });
    const [node] = toGraph(flow.nodes, flow.edges).nodes;
    expect(node).toEqual({
      id: "g",
      name: "G",
      hardware: 1,
      count: 1,
      labels: {},
      ui: { x: 0, y: 0 },
    });
    expect(flow.nodes[0].data).toMatchObject({
      kernelMode: "analytic",
      kernelWorkers: 1,
      coherence: "none",
      topology: "crossbar",
      next: null,
      via: null,
    });
  });

  it("rounds positions and sizes", () => {
    const flow = toFlow(GRAPH);
    const moved = flow.nodes.map((n) =>
      n.id === "cpu0" ? { ...n, position: { x: 10.4, y: 20.6 } } : n,
    );
    expect(toGraph(moved, flow.edges).nodes.find((n) => n.id === "cpu0").ui).toEqual({
      x: 10,
      y: 21,
    });
  });
});

describe("sortParentsFirst", () => {
  it("puts every group before what it holds", () => {
    const nodes = [{ id: "a", parentId: "m" }, { id: "m", parentId: "c" }, { id: "c" }];
    expect(sortParentsFirst(nodes).map((n) => n.id)).toEqual(["c", "m", "a"]);
  });
});

describe("stripUi", () => {
  it("drops positions and sizes only", () => {
    expect(
      stripUi({ nodes: [{ id: "a", ui: { x: 1, y: 2 }, count: 2 }], edges: [["a", "b"]] }),
    ).toEqual({ nodes: [{ id: "a", count: 2 }], edges: [["a", "b"]] });
  });
});

describe("errorsByNode", () => {
  it("maps node paths onto the ids of the graph sent and keeps the rest", () => {
    const fields = {
      "nodes[2].count": ["Must be at least 1."],
      "edges[1]": ["Unknown node."],
      name: ["Required."],
    };
    const { nodes, edges, rest } = errorsByNode(fields, GRAPH);
    expect(nodes).toEqual({ gpu0: [{ field: "count", message: "Must be at least 1." }] });
    expect(edges).toEqual({ 1: ["Unknown node."] });
    expect(rest).toEqual({ "edges[1]": ["Unknown node."], name: ["Required."] });
  });
});

describe("memory paths", () => {
  it("draw an arrow from a node to its next level, labelled with the fabric", () => {
    const { nodes } = toFlow(GRAPH);
    expect(memoryPathEdges(nodes)).toEqual([
      expect.objectContaining({
        id: "memory-path-gpu0",
        source: "gpu0",
        target: "l2",
        label: "NoC",
        selectable: false,
      }),
    ]);
  });

  it("lose their references to removed nodes", () => {
    const { nodes } = toFlow(GRAPH);
    const gpu = withoutMemoryRefs(nodes, new Set(["l2"])).find((n) => n.id === "gpu0");
    expect(gpu.data).toMatchObject({ next: null, via: null });
    const kept = withoutMemoryRefs(nodes, new Set(["noc"])).find((n) => n.id === "gpu0");
    expect(kept.data).toMatchObject({ next: "l2", via: null });
  });
});

describe("decorate", () => {
  it("adds names, selection, errors and the memory-path arrows", () => {
    const { nodes, edges } = toFlow(GRAPH);
    const view = decorate(nodes, edges, {
      selectedId: "cpu0",
      componentName: new Map([[1, "EPYC"]]),
      componentType: new Map([[1, "CPU"]]),
      modelName: new Map(),
      nodeErrors: { nodes: { cpu0: [{ field: "count", message: "bad" }] }, edges: { 0: ["bad"] } },
    });
    const cpu = view.nodes.find((n) => n.id === "cpu0");
    expect(cpu.selected).toBe(true);
    expect(cpu.data).toMatchObject({
      hardwareName: "EPYC",
      hardwareType: "CPU",
      errors: [{ field: "count", message: "bad" }],
    });
    expect(view.edges[0].label).toBe("invalid");
    expect(view.edges).toHaveLength(3);
  });
});

describe("edge labels of links", () => {
  it("give a link's bandwidth and latency, from its latency or its startup time", () => {
    expect(linkLabel({ bandwidth: 15.8e9, startupHTD: 3.9687e-6, lambdaHTD: 0.689 })).toBe(
      "15.8 GB/s · 3.969 µs",
    );
    expect(linkLabel({ bandwidth: 1.25e9, latency: 2e-5 })).toBe("1.25 GB/s · 20.000 µs");
    expect(linkLabel({ bandwidth: 4.5e11 })).toBe("450 GB/s");
    expect(linkLabel({ lambdaHTD: 1 })).toBeNull();
    expect(fmtBandwidth(950)).toBe("950 B/s");
  });

  it("label the edges that meet a NETWORK node and leave the others bare", () => {
    const graph = {
      nodes: [
        { id: "cpu", name: "CPU", hardware: 1 },
        { id: "pcie", name: "PCIe", hardware: 2 },
        { id: "gpu", name: "GPU", hardware: 3 },
      ],
      edges: [
        ["cpu", "pcie"],
        ["pcie", "gpu"],
        ["cpu", "gpu"],
      ],
    };
    const { nodes, edges } = toFlow(graph);
    const view = decorate(nodes, edges, {
      selectedId: null,
      componentName: new Map(),
      componentType: new Map([
        [1, "CPU"],
        [2, "NETWORK"],
        [3, "GPU"],
      ]),
      componentAttributes: new Map([[2, { bandwidth: 15.8e9, startupHTD: 3.9687e-6 }]]),
      modelName: new Map(),
      nodeErrors: { nodes: {}, edges: {} },
    });
    expect(view.edges.map((e) => e.label)).toEqual([
      "15.8 GB/s · 3.969 µs",
      "15.8 GB/s · 3.969 µs",
      undefined,
    ]);
  });
});
