import { cleanup, fireEvent, render, screen } from "@testing-library/react";
import { afterEach, describe, expect, it, vi } from "vitest";
import { TopologyPanel } from "./TopologyPanel.jsx";
import { EMPTY_SYSTEM, editorState, systemEditorReducer as reduce, toBody } from "./editorState.js";
import { describeSize, parseList, templateEntry, templateSize } from "./topology.js";

afterEach(cleanup);

const NIC = { id: 5, name: "InfiniBand NDR 400 Gb/s (ConnectX-7)", type: "NETWORK" };
const SWITCH = { id: 7, name: "Quantum-2 port", type: "NETWORK" };

describe("templateSize", () => {
  it("sizes a 1,024-endpoint two-level fat-tree as simulator/topology.py does", () => {
    const size = templateSize("fatTree", { down: "32, 32", up: "1, 32" });
    expect(size.endpoints).toBe(1024);
    expect(size.counts).toEqual({ level1: 32, level2: 32 });
    expect(size.links).toBe(1024 + 32 * 32);
    expect(describeSize(size)).toBe(
      "1024 endpoints; 64 switch or link instances in 2 nodes; 2048 links",
    );
  });

  it("sizes the other kinds", () => {
    expect(templateSize("torus", { dims: "4, 4, 2" }).counts).toEqual({ link: 96 });
    expect(templateSize("ring", { size: 8 }).counts).toEqual({ link: 8 });
    const rail = templateSize("railLeafSpine", {
      rails: 8,
      servers: 32,
      serversPerLeaf: 16,
      spines: 8,
    });
    expect(rail).toMatchObject({ endpoints: 256, counts: { leaf: 16, spine: 8 } });
    expect(templateSize("nvswitch", { domains: 4, domainSize: 8 })).toMatchObject({
      endpoints: 32,
      counts: { switch: 4 },
    });
  });

  it("names the parameter that is wrong", () => {
    expect(templateSize("fatTree", { down: "32, a", up: "1, 32" }).error).toHaveProperty("down");
    expect(templateSize("fatTree", { down: "32, 32", up: "1" }).error).toHaveProperty("up");
    expect(templateSize("torus", { dims: "8" }).error).toHaveProperty("dims");
    expect(templateSize("ring", { size: 1 }).error).toHaveProperty("size");
    expect(parseList("4 x 4")).toEqual([4, 4]);
  });
});

describe("inserting a template", () => {
  it("adds the switch nodes with their counts, sets the endpoints' count, and saves the template", () => {
    let state = reduce(editorState(EMPTY_SYSTEM), {
      type: "nodeAdded",
      component: NIC,
      parent: null,
      position: { x: 40, y: 40 },
    });
    const size = templateSize("fatTree", { down: "8, 4", up: "1, 8" });
    state = reduce(state, {
      type: "templateInserted",
      kind: "fatTree",
      endpoints: "link1",
      components: { level1: SWITCH, level2: SWITCH },
      size,
      routing: "dmodk",
      position: { x: 40, y: 40 },
    });
    expect(state.nodes.map((n) => [n.id, n.data.count, n.data.hardware])).toEqual([
      ["link1", 32, 5],
      ["level12", 4, 7],
      ["level23", 8, 7],
    ]);
    const graph = toBody(state).graph;
    expect(graph.topologies).toEqual([
      {
        id: "fatTree1",
        kind: "fatTree",
        endpoints: "link1",
        switches: ["level12", "level23"],
        down: [8, 4],
        up: [1, 8],
        routing: "dmodk",
      },
    ]);
    const removed = reduce(state, { type: "templateRemoved", index: 0 });
    expect(toBody(removed).graph).not.toHaveProperty("topologies");
  });

  it("keeps a stored system's templates through a save", () => {
    const record = {
      name: "Cluster",
      shared: false,
      can_edit: true,
      graph: {
        nodes: [{ id: "gpu", name: "GPU", hardware: 2, count: 8, labels: { GPU: 1 } }],
        edges: [],
        topologies: [
          templateEntry(
            "nvl",
            "nvswitch",
            "gpu",
            { switch: "nvs" },
            templateSize("nvswitch", { domains: 1, domainSize: 8 }),
            "direct",
          ),
        ],
      },
    };
    const state = editorState(record);
    expect(toBody(state).graph.topologies).toEqual([
      {
        id: "nvl",
        kind: "nvswitch",
        endpoints: "gpu",
        switch: "nvs",
        domainSize: 8,
        routing: "direct",
      },
    ]);
  });
});

describe("TopologyPanel", () => {
  const nodes = [{ id: "nic", data: { name: "NICs", group: false, count: 1 } }];

  it("shows the expanded size and inserts the template with the chosen hardware", () => {
    const onInsert = vi.fn();
    render(
      <TopologyPanel
        nodes={nodes}
        components={[NIC, SWITCH]}
        topologies={[]}
        readOnly={false}
        onInsert={onInsert}
        onRemove={() => {}}
      />,
    );
    expect(screen.getByLabelText("Expanded size").textContent).toContain("1024 endpoints");
    fireEvent.change(screen.getByLabelText("Template down"), { target: { value: "8, 4" } });
    fireEvent.change(screen.getByLabelText("Template up"), { target: { value: "1, 8" } });
    expect(screen.getByLabelText("Expanded size").textContent).toBe(
      "Expands to 32 endpoints; 12 switch or link instances in 2 nodes; 64 links.",
    );
    const insert = screen.getByRole("button", { name: "Insert template" });
    expect(insert.disabled).toBe(true);
    fireEvent.change(screen.getByLabelText("Template endpoints"), { target: { value: "nic" } });
    fireEvent.change(screen.getByLabelText("Level 1 switch hardware"), { target: { value: "7" } });
    fireEvent.change(screen.getByLabelText("Level 2 switch hardware"), { target: { value: "7" } });
    fireEvent.change(screen.getByLabelText("Template routing"), { target: { value: "ecmp" } });
    fireEvent.click(insert);
    expect(onInsert).toHaveBeenCalledWith(
      expect.objectContaining({
        kind: "fatTree",
        endpoints: "nic",
        routing: "ecmp",
        components: { level1: SWITCH, level2: SWITCH },
      }),
    );
  });

  it("names a bad parameter and offers no insert", () => {
    render(
      <TopologyPanel
        nodes={nodes}
        components={[SWITCH]}
        topologies={[]}
        readOnly={false}
        onInsert={() => {}}
        onRemove={() => {}}
      />,
    );
    fireEvent.change(screen.getByLabelText("Template kind"), { target: { value: "torus" } });
    fireEvent.change(screen.getByLabelText("Template dims"), { target: { value: "8" } });
    expect(screen.getByText("Expected 2 or 3 sizes, each >= 2.")).toBeTruthy();
    expect(screen.queryByLabelText("Expanded size")).toBeNull();
    expect(screen.getByRole("button", { name: "Insert template" }).disabled).toBe(true);
  });

  it("lists a read-only system's templates without controls", () => {
    render(
      <TopologyPanel
        nodes={nodes}
        components={[]}
        topologies={[{ id: "ndr", kind: "fatTree", endpoints: "nic", routing: "dmodk" }]}
        readOnly
      />,
    );
    expect(screen.getByText(/Fat-tree \(k levels\) over/).textContent).toContain("(dmodk)");
    expect(screen.queryByRole("button")).toBeNull();
  });
});
