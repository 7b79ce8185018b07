import { describe, expect, it } from "vitest";
import { axis, keepPlottable, labelWidth, logTicks, spacedTicks } from "./scales.js";

describe("logTicks", () => {
  it("spans whole decades around the values", () => {
    expect(logTicks(0.003, 40)).toEqual([0.001, 0.01, 0.1, 1, 10, 100]);
  });
  it("adds 2x and 5x within fewer than three decades", () => {
    expect(logTicks(1.5e-6, 8e-6)).toEqual([1e-6, 2e-6, 5e-6, 1e-5]);
  });
  it("keeps an exact power of ten as the end", () => {
    expect(logTicks(1, 1000)).toEqual([1, 10, 100, 1000]);
  });
});

describe("axis", () => {
  it("maps a log axis by decades", () => {
    const a = axis([1e-3, 1e-1], "log");
    expect([a.lo, a.hi]).toEqual([1e-3, 1e-1]);
    expect(a.at(1e-2)).toBeCloseTo(0.5);
  });
  it("leaves values at or below zero off a log axis", () => {
    const a = axis([0, -1, 10, 100], "log");
    expect([a.lo, a.hi]).toEqual([10, 100]);
  });
  it("starts a linear y axis at zero on round ticks", () => {
    const a = axis([3, 7], "linear", { fromZero: true });
    expect(a.ticks).toEqual([0, 2, 4, 6, 8]);
    expect(a.at(4)).toBe(0.5);
  });
  it("spans the values of a linear x axis and ticks each", () => {
    const a = axis([16, 1, 64, 16], "linear");
    expect(a.ticks).toEqual([1, 16, 64]);
    expect(a.at(64)).toBe(1);
  });
});

describe("keepPlottable", () => {
  it("drops and counts the points a log axis cannot show", () => {
    const series = [
      {
        name: "a",
        points: [
          [1, 0],
          [2, 5],
        ],
      },
      { name: "b", points: [[0, 1]] },
    ];
    expect(keepPlottable(series, "log", "log")).toEqual({
      series: [{ name: "a", points: [[2, 5]] }],
      dropped: 2,
    });
    expect(keepPlottable(series, "linear", "linear").dropped).toBe(0);
  });
});

describe("spacedTicks", () => {
  it("keeps the x labels of a crowded axis apart, the first among them", () => {
    // a sweep of N over 24 values on a phone-wide plot: 12 px apart, labels ~50 px wide
    const ticks = Array.from({ length: 24 }, (_, i) => ({
      at: 80 + 12 * i,
      label: String(2 ** (i + 10)),
    }));
    const kept = spacedTicks(ticks);
    expect(kept[0]).toBe(ticks[0]);
    expect(kept.length).toBeGreaterThan(1);
    expect(kept.length).toBeLessThan(ticks.length);
    for (let i = 1; i < kept.length; i++) {
      const room = (labelWidth(kept[i - 1].label) + labelWidth(kept[i].label)) / 2;
      expect(kept[i].at - kept[i - 1].at).toBeGreaterThanOrEqual(room);
    }
  });

  it("keeps every tick where the labels fit", () => {
    const ticks = [1, 2, 4, 8].map((v, i) => ({ at: 100 * i, label: String(v) }));
    expect(spacedTicks(ticks)).toEqual(ticks);
  });
});
