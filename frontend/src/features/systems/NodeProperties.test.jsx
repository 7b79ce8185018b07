import { cleanup, fireEvent, render, screen } from "@testing-library/react";
import { afterEach, describe, expect, it, vi } from "vitest";
import { NodeProperties } from "./NodeProperties.jsx";

afterEach(cleanup);

const components = [
  { id: 2, name: "H100", type: "GPU" },
  { id: 3, name: "NDR port", type: "NETWORK" },
];

const props = (data, errors = [], update = vi.fn()) => ({
  node: {
    id: "n",
    data: { name: "n", count: 1, labels: {}, kernelMode: "analytic", ...data },
  },
  readOnly: false,
  errors,
  components,
  models: [],
  groups: [],
  nodes: [],
  labelEntries: [],
  update,
  setParent: vi.fn(),
  connect: vi.fn(),
  remove: vi.fn(),
  edges: [],
  removeEdge: vi.fn(),
  select: vi.fn(),
});

describe("NodeProperties' link sharing", () => {
  it("is offered on a network node and sets the node's sharing", () => {
    const update = vi.fn();
    render(<NodeProperties {...props({ hardware: 3, sharing: "fifo" }, [], update)} />);
    fireEvent.change(screen.getByLabelText("Link sharing"), {
      target: { value: "full-duplex" },
    });
    expect(update).toHaveBeenCalledWith({ sharing: "full-duplex" });
  });
  it("is not offered on a GPU, unless set there, when it shows the simulator's message", () => {
    render(<NodeProperties {...props({ hardware: 2, sharing: "fifo" })} />);
    expect(screen.queryByLabelText("Link sharing")).toBeNull();
    cleanup();
    const message = "Only a NETWORK node carries flows; sharing 'shared' is set on a GPU node.";
    render(
      <NodeProperties
        {...props({ hardware: 2, sharing: "shared" }, [{ field: "sharing", message }])}
      />,
    );
    expect(screen.getByLabelText("Link sharing").getAttribute("aria-invalid")).toBe("true");
    expect(screen.getByText(message)).toBeTruthy();
  });
});
