import { describe, expect, it } from "vitest";
import { matchComponents, optionText } from "./picker.js";

const COMPONENTS = [
  { id: 1, type: "CPU", name: "AMD EPYC 9654", vendor: "AMD" },
  { id: 2, type: "GPU", name: "GeForce GTX 970", vendor: "NVIDIA" },
  { id: 3, type: "GPU", name: "H100 SXM5 80GB", vendor: "NVIDIA" },
  { id: 4, type: "NETWORK", name: "PCIe 3.0 16x", vendor: "" },
  { id: 5, type: "GPU", name: "NVIDIA GeForce RTX 4090", vendor: "NVIDIA" },
];
const ids = (list) => list.map((c) => c.id);

describe("matchComponents", () => {
  it("finds hardware by its name, not by the type every option starts with", () => {
    expect(ids(matchComponents(COMPONENTS, "gtx"))).toEqual([2]);
    expect(ids(matchComponents(COMPONENTS, "H100"))).toEqual([3]);
  });

  it("puts names that start with the text before names that only hold it", () => {
    expect(ids(matchComponents(COMPONENTS, "geforce"))).toEqual([2, 5]);
    expect(ids(matchComponents(COMPONENTS, "rtx 4090 nvidia"))).toEqual([5]);
  });

  it("matches every word, in any order, against the name, type and vendor", () => {
    expect(ids(matchComponents(COMPONENTS, "gpu nvidia 80gb"))).toEqual([3]);
    expect(ids(matchComponents(COMPONENTS, "network"))).toEqual([4]);
    expect(matchComponents(COMPONENTS, "tpu")).toEqual([]);
  });

  it("finds them all for an empty text", () => {
    expect(matchComponents(COMPONENTS, "  ")).toBe(COMPONENTS);
  });
});

describe("optionText", () => {
  it("starts with the name", () => {
    expect(optionText(COMPONENTS[1])).toBe("GeForce GTX 970 (GPU)");
  });
});
