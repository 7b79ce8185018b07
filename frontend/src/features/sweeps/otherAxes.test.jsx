import { describe, expect, it } from "vitest";
import { otherAxes } from "./Sweeps.jsx";
import { sweepFieldName } from "./sweepErrors.js";

describe("otherAxes", () => {
  it("reads attribute axes one per line and label counts typed as lists or ranges", () => {
    const text = "GPU.SMCoreClock = 1000:1500:250\n\n gpu0.memoryBandwidth=2e12,3e12 \n";
    expect(otherAxes(text, { CPU: "1", GPU: "1:1024:1", X: "2,4" })).toEqual({
      "GPU.SMCoreClock": { start: 1000, stop: 1500, step: 250 },
      "gpu0.memoryBandwidth": [2e12, 3e12],
      "labels.GPU": { start: 1, stop: 1024, step: 1 },
      "labels.X": [2, 4],
    });
  });

  it("reads topology axes, a list parameter's values as text for the server to read", () => {
    const text = "topology.nvlink.domainSize = 8,16\ntopology.ndr.up = 1x4,1x8";
    expect(otherAxes(text, {})).toEqual({
      "topology.nvlink.domainSize": [8, 16],
      "topology.ndr.up": ["1x4", "1x8"],
    });
  });

  it("sends a line without values as typed, for the server to name", () => {
    expect(otherAxes("GPU.SMs", {})).toEqual({ "GPU.SMs": [] });
    expect(sweepFieldName("axes.GPU.SMs")).toBe("Axis GPU.SMs");
    expect(sweepFieldName("axes.labels.GPU[0]")).toBe("Axis labels.GPU[0]");
  });
});
