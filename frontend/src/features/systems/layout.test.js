import { describe, expect, it } from "vitest";
import { toFlow } from "./graph.js";
import {
  HEADER,
  LEAF,
  PAD,
  autoLayout,
  childSlot,
  groupAt,
  grow,
  memoryGrid,
  placeNew,
} from "./layout.js";

// Boxes {x, y, w, h} of the nodes with the parent `parent`, from autoLayout's answer.
function boxes(graphNodes, parent) {
  const { place, sizes } = autoLayout(graphNodes);
  return graphNodes
    .filter((n) => (n.parent || "") === parent)
    .map((n) => ({ id: n.id, ...place.get(n.id), ...sizes.get(n.id) }));
}

const overlap = (a, b) => a.x < b.x + b.w && b.x < a.x + a.w && a.y < b.y + b.h && b.y < a.y + a.h;

function expectNoOverlap(list) {
  list.forEach((a, i) =>
    list.slice(i + 1).forEach((b) => {
      expect(overlap(a, b), `${a.id} overlaps ${b.id}`).toBe(false);
    }),
  );
}

const leaf = (id, parent, extra = {}) => ({
  id,
  name: id,
  parent,
  hardware: 1,
  count: 1,
  labels: {},
  ...extra,
});

// A cluster of two machines, each with a CPU, two GPUs and a bus; nothing has a stored position.
const CLUSTER = [
  { id: "cluster", name: "Cluster", group: true },
  ...["m0", "m1"].flatMap((m) => [
    { id: m, name: m, group: true, parent: "cluster" },
    leaf(`${m}cpu`, m),
    leaf(`${m}gpu0`, m),
    leaf(`${m}gpu1`, m),
    leaf(`${m}bus`, m),
  ]),
  leaf("switch", null),
];

describe("autoLayout", () => {
  it("places siblings without stored positions so that none covers another", () => {
    for (const parent of ["", "cluster", "m0", "m1"]) expectNoOverlap(boxes(CLUSTER, parent));
  });

  it("makes every group hold its children", () => {
    const { place, sizes } = autoLayout(CLUSTER);
    CLUSTER.filter((n) => n.parent).forEach((n) => {
      const at = place.get(n.id);
      const size = sizes.get(n.id);
      const group = sizes.get(n.parent);
      expect(at.x + size.w).toBeLessThanOrEqual(group.w);
      expect(at.y + size.h).toBeLessThanOrEqual(group.h);
      expect(at.y).toBeGreaterThanOrEqual(HEADER);
    });
  });

  it("keeps stored positions", () => {
    const nodes = [leaf("a", null, { ui: { x: 500, y: 300 } }), leaf("b", null)];
    expect(autoLayout(nodes).place.get("a")).toEqual({ x: 500, y: 300 });
  });

  it("lays out memory paths in columns outwards, without overlaps", () => {
    const nodes = [
      { id: "chip", name: "chip", group: true },
      leaf("core0", "chip", { next: "l1a" }),
      leaf("core1", "chip", { next: "l1b" }),
      leaf("l1a", "chip", { next: "l2" }),
      leaf("l1b", "chip", { next: "l2" }),
      leaf("l2", "chip", { next: "dram" }),
      leaf("dram", "chip"),
      leaf("noc", "chip"),
    ];
    const grid = memoryGrid(nodes.filter((n) => n.parent === "chip"));
    expect(grid.get("core0").col).toBe(0);
    expect(grid.get("l1a").col).toBe(1);
    expect(grid.get("l2").col).toBe(2);
    expect(grid.get("dram").col).toBe(3);
    expectNoOverlap(boxes(nodes, "chip"));
  });

  it("is deterministic", () => {
    const first = autoLayout(CLUSTER);
    const second = autoLayout(structuredClone(CLUSTER));
    expect([...second.place]).toEqual([...first.place]);
    expect([...second.sizes]).toEqual([...first.sizes]);
  });
});

describe("placing a new node", () => {
  const flowNodes = () => toFlow({ nodes: CLUSTER, edges: [] }).nodes;

  it("puts it into the selected group right of the children already there", () => {
    const nodes = flowNodes();
    const { parent, position } = placeNew(nodes, "m0", null, () => ({ x: 0, y: 0 }));
    expect(parent).toBe("m0");
    const added = { id: "new", ...position, w: LEAF.w, h: LEAF.h };
    const kids = nodes
      .filter((n) => n.parentId === "m0")
      .map((n) => ({
        id: n.id,
        ...n.position,
        w: n.style?.width ?? LEAF.w,
        h: n.style?.height ?? LEAF.h,
      }));
    expectNoOverlap([...kids, added]);
  });

  it("covers no child of a group laid out in a row, however many there are", () => {
    const rack = [
      { id: "rack", name: "rack", group: true },
      ...Array.from({ length: 8 }, (_, i) => leaf(`n${i}`, "rack")),
    ];
    const nodes = toFlow({ nodes: rack, edges: [] }).nodes;
    const { position } = placeNew(nodes, "rack", null, () => ({ x: 0, y: 0 }));
    const kids = nodes
      .filter((n) => n.parentId === "rack")
      .map((n) => ({ id: n.id, ...n.position, w: LEAF.w, h: LEAF.h }));
    expectNoOverlap([...kids, { id: "new", ...position, w: LEAF.w, h: LEAF.h }]);
  });

  it("puts it beside the selected node, in that node's group", () => {
    expect(placeNew(flowNodes(), "m1gpu0", null, () => ({ x: 0, y: 0 })).parent).toBe("m1");
  });

  it("starts an empty group at its padding", () => {
    expect(childSlot([{ id: "g", data: { group: true }, position: { x: 0, y: 0 } }], "g")).toEqual({
      x: PAD,
      y: HEADER + 10,
    });
  });

  it("nests a node dropped on a group in the innermost group there", () => {
    const nodes = flowNodes();
    const absolute = (id) =>
      ({ cluster: { x: 0, y: 0 }, m0: { x: 24, y: 44 }, m1: { x: 2000, y: 44 } })[id] || {
        x: 0,
        y: 0,
      };
    const sized = nodes.map((n) =>
      n.data.group ? { ...n, measured: { width: n.style.width, height: n.style.height } } : n,
    );
    expect(groupAt(sized, { x: 60, y: 100 }, absolute).id).toBe("m0");
    const { parent, position } = placeNew(sized, null, { x: 60, y: 100 }, absolute);
    expect(parent).toBe("m0");
    expect(position).toEqual({ x: 36, y: 56 });
    expect(groupAt(sized, { x: 99999, y: 99999 }, absolute)).toBeNull();
  });
});

describe("grow", () => {
  it("widens a group and its ancestors to hold a child, without changing the nodes given", () => {
    const nodes = [
      {
        id: "outer",
        data: { group: true },
        position: { x: 0, y: 0 },
        style: { width: 300, height: 200 },
      },
      {
        id: "inner",
        parentId: "outer",
        data: { group: true },
        position: { x: 20, y: 40 },
        style: { width: 260, height: 160 },
      },
      { id: "leaf", parentId: "inner", data: {}, position: { x: 400, y: 50 } },
    ];
    const grown = grow(nodes, "inner");
    expect(grown.find((n) => n.id === "inner").style.width).toBe(400 + LEAF.w + PAD);
    expect(grown.find((n) => n.id === "outer").style.width).toBe(20 + 400 + LEAF.w + PAD + PAD);
    expect(nodes[1].style.width).toBe(260);
  });
});
