// The automatic layout of the canvas (layeredLayout, layers) and the free spot of a new node.
import { describe, expect, it } from "vitest";
import { toFlow } from "./graph.js";
import {
  GAP,
  LEAF,
  PAD,
  HEADER,
  boxOf,
  freeSpot,
  layeredLayout,
  layers,
  overlaps,
} from "./layout.js";

// React Flow nodes piled on one point: what "Add" used to give.
const piled = (graph) =>
  toFlow(graph).nodes.map((n) => (n.parentId ? n : { ...n, position: { x: 40, y: 40 } }));

const leaf = (id, parent, extra = {}) => ({ id, name: id, hardware: 1, parent, ...extra });

function expectNoOverlap(nodes, parent) {
  const boxes = nodes.filter((n) => (n.parentId || null) === parent).map((n) => [n.id, boxOf(n)]);
  boxes.forEach(([a, boxA], i) =>
    boxes.slice(i + 1).forEach(([b, boxB]) => {
      expect(overlaps(boxA, boxB), `${a} overlaps ${b}`).toBe(false);
    }),
  );
}

describe("layers", () => {
  it("puts a chain in one layer per step from its first node, edges either way round", () => {
    const chain = { cpu: 0, pcie: 1, gpu: 2 };
    const ids = ["cpu", "pcie", "gpu"];
    const forward = [
      ["cpu", "pcie"],
      ["pcie", "gpu"],
    ];
    const backward = [
      ["gpu", "pcie"],
      ["pcie", "cpu"],
    ];
    expect(Object.fromEntries(layers(ids, forward))).toEqual(chain);
    expect(Object.fromEntries(layers(ids, backward))).toEqual(chain);
  });

  it("marks unlinked nodes with -1 and survives cycles", () => {
    const layer = layers(
      ["a", "b", "c", "lone"],
      [
        ["a", "b"],
        ["b", "c"],
        ["c", "a"],
      ],
    );
    expect(layer.get("lone")).toBe(-1);
    expect(layer.get("a")).toBe(0);
    expect(new Set([layer.get("b"), layer.get("c")])).toEqual(new Set([1]));
  });
});

describe("layeredLayout", () => {
  const CHAIN = {
    nodes: [leaf("cpu", null), leaf("pcie", null), leaf("gpu0", null), leaf("gpu1", null)],
    edges: [
      ["cpu", "pcie"],
      ["pcie", "gpu0"],
      ["pcie", "gpu1"],
    ],
  };

  it("separates a piled graph into columns along its edges", () => {
    const { edges } = toFlow(CHAIN);
    const nodes = layeredLayout(piled(CHAIN), edges);
    expectNoOverlap(nodes, null);
    const at = Object.fromEntries(nodes.map((n) => [n.id, n.position]));
    expect(at.cpu.x).toBeLessThan(at.pcie.x);
    expect(at.pcie.x).toBeLessThan(at.gpu0.x);
    expect(at.gpu0.x).toBe(at.gpu1.x);
    expect(at.gpu1.y - at.gpu0.y).toBe(LEAF.h + GAP.y);
  });

  it("arranges inside groups and makes each group hold what it holds", () => {
    const graph = {
      nodes: [
        { id: "cluster", name: "Cluster", group: true },
        { id: "m0", name: "Machine", group: true, parent: "cluster" },
        leaf("cpu", "m0"),
        leaf("bus", "m0"),
        leaf("gpu", "m0"),
        leaf("lone", "m0"),
        leaf("switch", "cluster"),
        leaf("outside", null),
      ],
      edges: [
        ["cpu", "bus"],
        ["bus", "gpu"],
        ["gpu", "switch"],
      ],
    };
    const { nodes: flowNodes, edges } = toFlow(graph);
    const pile = flowNodes.map((n) => ({ ...n, position: { x: 30, y: 50 } }));
    const nodes = layeredLayout(pile, edges);
    ["m0", "cluster", null].forEach((parent) => expectNoOverlap(nodes, parent));
    const byId = Object.fromEntries(nodes.map((n) => [n.id, n]));
    expect(byId.cpu.position).toEqual({ x: PAD, y: HEADER + 10 });
    // The unlinked node goes below the layered ones.
    expect(byId.lone.position.y).toBeGreaterThan(byId.cpu.position.y + LEAF.h);
    // Every child lies inside its group.
    nodes
      .filter((n) => n.parentId)
      .forEach((n) => {
        const group = byId[n.parentId];
        const box = boxOf(n);
        expect(box.x + box.w).toBeLessThanOrEqual(group.style.width);
        expect(box.y + box.h).toBeLessThanOrEqual(group.style.height);
      });
    // The machine comes before the switch it reaches through the GPU.
    expect(byId.m0.position.x).toBeLessThan(byId.switch.position.x);
  });

  it("leaves the nodes given unchanged", () => {
    const pile = piled(CHAIN);
    const copy = JSON.parse(JSON.stringify(pile));
    layeredLayout(pile, toFlow(CHAIN).edges);
    expect(pile).toEqual(copy);
  });
});

describe("freeSpot", () => {
  it("gives every new top-level node a place that covers none before it", () => {
    let nodes = [];
    for (let i = 0; i < 9; i += 1) {
      const size = i === 4 ? { w: 520, h: 190 } : LEAF;
      const position = freeSpot(nodes, size);
      nodes = [
        ...nodes,
        { id: `n${i}`, position, style: i === 4 ? { width: 520, height: 190 } : undefined },
      ];
    }
    expectNoOverlap(nodes, null);
  });

  it("fills a hole left by a removed node first", () => {
    const nodes = [
      { id: "a", position: freeSpot([]) },
      { id: "c", position: { x: 40 + 2 * (LEAF.w + GAP.x), y: 40 } },
    ];
    expect(freeSpot(nodes)).toEqual({ x: 40 + LEAF.w + GAP.x, y: 40 });
  });
});
