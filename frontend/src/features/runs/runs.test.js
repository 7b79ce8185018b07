import { describe, expect, it } from "vitest";
import { detailedKernels, waveSummary } from "./runs.js";

const detailed = {
  mode: "detailed",
  waves: 3,
  blocksPerWave: 104,
  tailBlocks: 1,
  smBusy: [1, 0.98, 0.4],
  smBusyMean: 0.793,
  analyticTime: 2e-6,
};

describe("detailedKernels", () => {
  it("keeps the kernels simulated block by block, with their row in the table", () => {
    const phases = [
      { process: "cpu", kind: "transfer", start_s: 0 },
      { process: "gpu", kind: "compute", start_s: 1, detail: { mode: "analytic" } },
      { process: "gpu", kind: "compute", start_s: 2, detail: detailed },
    ];
    expect(detailedKernels(phases)).toEqual([
      { index: 2, process: "gpu", start_s: 2, detail: detailed },
    ]);
  });
});

describe("waveSummary", () => {
  it("names the waves, the tail and the SMs' busy time", () => {
    expect(waveSummary(detailed)).toBe(
      "3 waves of 104 blocks, the last one a tail of 1 block; 3 SMs busy 40 % to 100 % (mean 79 %); formula 2.000 µs",
    );
  });

  it("leaves out the tail of a whole number of waves", () => {
    expect(waveSummary({ waves: 1, blocksPerWave: 13, tailBlocks: 0, smBusy: [0.5] })).toBe(
      "1 wave of 13 blocks; 1 SM busy 50 % to 50 %",
    );
  });
});
