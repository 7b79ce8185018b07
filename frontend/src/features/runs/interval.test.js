import { describe, expect, it } from "vitest";
import { intervalNote, intervalSummary } from "./interval.js";

// A result's `uncertainty` as simulator.uncertainty writes it
const INTERVAL = {
  samples: 50,
  seed: 3,
  scale: 1,
  cap: 200,
  percentiles: [5, 95],
  overall_time_s: { median: 2, low: 1.5, high: 2.5 },
  energy_j: { median: 10, low: 9, high: 12 },
  perturbed: [
    {
      hardware: "gpu",
      record: "H100 SXM5 80GB",
      kind: "attribute",
      name: "memoryEfficiency",
      log_sd: 0.000222888,
      attributes: ["memoryEfficiency"],
      source: "repeat-run spread",
    },
    {
      hardware: "gpu",
      record: "H100 SXM5 80GB",
      kind: "model",
      name: "GPU kernel (current architectures)",
      log_sd: 0.113913,
      attributes: ["SMCoreClock", "memoryClock"],
      source: "ln(measured / predicted)",
      label: "fitted on the same data",
    },
  ],
};
const f = (v) => `${v} u`;

describe("intervalNote", () => {
  it("gives a figure's percentiles, and nothing for a run without an interval", () => {
    expect(intervalNote(INTERVAL, "overall_time_s", f)).toBe("5-95 %: 1.5 u to 2.5 u");
    expect(intervalNote(undefined, "overall_time_s", f)).toBeNull();
    expect(intervalNote({}, "energy_j", f)).toBeNull();
  });
});

describe("intervalSummary", () => {
  it("names the samples, the medians and every perturbed quantity with its source", () => {
    const summary = intervalSummary(INTERVAL, f, f);
    expect(summary.title).toBe("Prediction interval (50 samples, seed 3)");
    expect(summary.lines).toEqual([
      "Time: median 2 u, 5-95 %: 1.5 u to 2.5 u",
      "Energy: median 10 u, 5-95 %: 9 u to 12 u",
    ]);
    expect(summary.sources.map((s) => s.spread)).toEqual(["0.0223 %", "11.4 %"]);
    expect(summary.sources[1].what).toBe(
      "H100 SXM5 80GB (gpu): GPU kernel (current architectures) residual, scaling SMCoreClock, memoryClock",
    );
    expect(summary.sources[1].source).toContain("(fitted on the same data)");
  });

  it("says so when no record had a spread, and names a scale other than 1", () => {
    const summary = intervalSummary({ ...INTERVAL, perturbed: [], scale: 0 }, f, f);
    expect(summary.title).toBe("Prediction interval (50 samples, seed 3, spreads x 0)");
    expect(summary.lines[2]).toMatch(/every sample is the plain run/);
    expect(intervalSummary(null, f, f)).toBeNull();
  });
});
