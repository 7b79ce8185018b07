import { cleanup, fireEvent, render, screen, waitFor } from "@testing-library/react";
import { afterEach, describe, expect, it, vi } from "vitest";
import { json } from "../../test/fetch.js";
import { SweepNew } from "./Sweeps.jsx";

afterEach(() => {
  cleanup();
  vi.unstubAllGlobals();
});

const SYSTEM = {
  id: 1,
  name: "gtx970",
  graph: {
    nodes: [
      { id: "cpu0", labels: { CPU: 1 }, hardware: 10 },
      { id: "gpu0", labels: { GPU: 1 }, hardware: 11 },
    ],
  },
};
const APP = { id: 2, name: "saxpy2", variables: [{ name: "N", type: "int", default: 1000 }] };

// The lists answer at once, the component list only when `release` is called: a slow list.
function server() {
  let release;
  const components = new Promise((resolve) => {
    release = () => resolve(json(200, [{ id: 11, name: "GTX 970", type: "GPU" }]));
  });
  vi.stubGlobal(
    "fetch",
    vi.fn((url) => {
      if (url.startsWith("/api/components/")) return components;
      if (url.startsWith("/api/systems/")) return Promise.resolve(json(200, [SYSTEM]));
      if (url.startsWith("/api/applications/")) return Promise.resolve(json(200, [APP]));
      if (url.startsWith("/api/queues/")) return Promise.resolve(json(200, [{ name: "default" }]));
      return Promise.resolve(json(200, []));
    }),
  );
  vi.stubGlobal("scrollTo", () => {});
  return () => release();
}

describe("SweepNew's process counts", () => {
  it("keeps a count typed before the component list arrives", async () => {
    const release = server();
    render(<SweepNew />);
    const gpu = await screen.findByLabelText("Processes with label GPU");
    await waitFor(() => expect(gpu.value).toBe("1"));
    fireEvent.change(gpu, { target: { value: "99" } });
    release();
    // The list's arrival picks the GPU node for the hardware axis; the typed count stays.
    await waitFor(() => expect(screen.getByLabelText("Processes with label GPU").value).toBe("99"));
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(screen.getByLabelText("Processes with label GPU").value).toBe("99");
  });

  it("keeps a node to swap picked before the component list arrives", async () => {
    const release = server();
    render(<SweepNew />);
    const node = await screen.findByLabelText("Node to swap");
    fireEvent.change(node, { target: { value: "cpu0" } });
    release();
    // The list's arrival would pick the GPU node by default; the user's pick stays.
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(screen.getByLabelText("Node to swap").value).toBe("cpu0");
  });

  it("picks the system's GPU node once the component list arrives", async () => {
    const release = server();
    render(<SweepNew />);
    const node = await screen.findByLabelText("Node to swap");
    expect(node.value).toBe("");
    release();
    await waitFor(() => expect(screen.getByLabelText("Node to swap").value).toBe("gpu0"));
  });
});
