import { describe, expect, it } from "vitest";
import { analyzeRequest, parseTrips, svgDataUrl } from "./analyzer.js";

describe("the analyzer's form", () => {
  it("reads trip counts written as name=value", () => {
    expect(parseTrips("a=4, b=16")).toEqual({ trips: { a: 4, b: 16 } });
    expect(parseTrips("")).toEqual({ trips: {} });
    expect(parseTrips("loop=3").error).toMatch(/"loop=3" is not a trip count/);
    expect(parseTrips("a=-1").error).toMatch(/a=-1/);
  });

  it("leaves out the optional fields left empty", () => {
    const base = { language: "sass", source: "EXIT;", trips: {} };
    expect(analyzeRequest({ ...base, arch: "", blockSize: "", kernel: "" })).toEqual(base);
    expect(analyzeRequest({ ...base, arch: "sm_52", blockSize: "256", kernel: "k" })).toEqual({
      ...base,
      arch: "sm_52",
      block_size: 256,
      kernel: "k",
    });
  });

  it("hands the graph to an image, escaped", () => {
    expect(svgDataUrl('<svg a="#">')).toBe(
      "data:image/svg+xml;charset=utf-8,%3Csvg%20a%3D%22%23%22%3E",
    );
  });
});
