import { describe, expect, it } from "vitest";
import { coerce, graphLabels, optionalWhole } from "./launch.js";

describe("graphLabels", () => {
  it("sums each label's multiplicity times its node's count", () => {
    const graph = {
      nodes: [
        { id: "cpu", labels: { CPU: 1 }, count: 1 },
        { id: "gpu", labels: { GPU: 2 }, count: 4 },
        { id: "gpu2", labels: { GPU: 1 } },
        { id: "host", group: true },
      ],
    };
    expect(graphLabels(graph)).toEqual({ CPU: 1, GPU: 9 });
    expect(graphLabels(undefined)).toEqual({});
  });
});

describe("coerce", () => {
  it("reads ints, floats and bools, and leaves what does not read as typed", () => {
    expect(coerce("int", "42")).toBe(42);
    expect(coerce("int", "4.2")).toBe("4.2");
    // a whole number in exponent notation is an int; a fraction or hex is left to the API
    expect(coerce("int", "1e5")).toBe(100000);
    expect(coerce("int", " 2.0E3 ")).toBe(2000);
    expect(coerce("int", "1.5e0")).toBe("1.5e0");
    expect(coerce("int", "0x10")).toBe("0x10");
    expect(coerce("int", "1e400")).toBe("1e400");
    expect(coerce("float", "1e6")).toBe(1e6);
    expect(coerce("float", "1e400")).toBe("1e400");
    expect(coerce("int", "1" + "0".repeat(400))).toBe("1" + "0".repeat(400));
    expect(coerce("float", "")).toBe("");
    expect(coerce("bool", "true")).toBe(true);
    expect(coerce("bool", "yes")).toBe(false);
    expect(coerce("str", "42")).toBe("42");
  });
});

describe("optionalWhole", () => {
  it("leaves a blank field out and sends whole numbers as numbers, the rest as typed", () => {
    expect(optionalWhole("")).toBeUndefined();
    expect(optionalWhole("  ")).toBeUndefined();
    expect(optionalWhole(" 20000 ")).toBe(20000);
    expect(optionalWhole("-1")).toBe(-1);
    expect(optionalWhole("2.5")).toBe("2.5");
    expect(optionalWhole("lots")).toBe("lots");
    expect(optionalWhole("9".repeat(30))).toBe("9".repeat(30));
  });
});
