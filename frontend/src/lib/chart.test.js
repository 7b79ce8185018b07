import { describe, expect, it } from "vitest";
import { color, niceTicks } from "./chart.js";

describe("niceTicks", () => {
  it("ends at the first round tick at or above the maximum", () => {
    expect(niceTicks(10)).toEqual([0, 2.5, 5, 7.5, 10]);
    expect(niceTicks(0.9)).toEqual([0, 0.25, 0.5, 0.75, 1]);
  });
  it("gives a unit axis for nothing to show", () => {
    expect(niceTicks(0)).toEqual([0, 1]);
    expect(niceTicks(Number.NaN)).toEqual([0, 1]);
  });
});

describe("color", () => {
  it("repeats the palette after ten series", () => {
    expect(color(10)).toBe(color(0));
    expect(color(1)).not.toBe(color(0));
  });
});
