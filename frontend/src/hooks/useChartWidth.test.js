import { describe, expect, it } from "vitest";
import { chartWidth } from "./useChartWidth.js";

describe("chartWidth", () => {
  it("draws at the preferred width where there is room, narrower on a phone", () => {
    expect(chartWidth(900, null)).toBe(900);
    expect(chartWidth(900, 1200)).toBe(900);
    expect(chartWidth(900, 358)).toBe(358);
  });

  it("never draws below its least width: the box scrolls instead", () => {
    expect(chartWidth(900, 200, 320)).toBe(320);
  });
});
