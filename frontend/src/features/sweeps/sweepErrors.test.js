import { describe, expect, it } from "vitest";
import { sweepFieldName, sweepFields } from "./sweepErrors.js";

describe("sweepFields", () => {
  it("takes spec. off the paths, so the launch form's paths place them", () => {
    expect(
      sweepFields({
        "spec.labels.GPU": ["too many"],
        "spec.queue": ["unknown"],
        spec: ["too large"],
        name: ["blank"],
      }),
    ).toEqual({
      "labels.GPU": ["too many"],
      queue: ["unknown"],
      sweep: ["too large"],
      name: ["blank"],
    });
  });
});

describe("sweepFieldName", () => {
  it("names the fields in words, never spec", () => {
    expect(sweepFieldName("labels.GPU")).toBe("Processes with label GPU");
    expect(sweepFieldName("queue")).toBe("Queue");
    expect(sweepFieldName("hardware.node")).toBe("Node to swap");
    expect(sweepFieldName("system_model.nodes[2].hardware")).toBe("System model");
    expect(sweepFieldName("variables.N.stop")).toBe("Values of N");
    expect(sweepFieldName("sweep")).toBeNull();
  });

  it("names a hardware choice by the component ticked", () => {
    expect(sweepFieldName("hardware.components[1].nodes[0].next", ["GTX 970", "RTX 4090"])).toBe(
      "Hardware choice RTX 4090",
    );
    expect(sweepFieldName("hardware.components[3]")).toBe("Hardware choice 4");
  });
});
