import { describe, expect, it } from "vitest";
import { limitValue, runLimits, stopReason } from "./limits.js";

const failed = (error) => ({ status: "failed", error });

describe("stopReason", () => {
  it("names the limit that stopped the run and its value", () => {
    expect(stopReason(failed({ kind: "limit", limit: "wall", value: 4, unit: "s" }))).toBe(
      "Stopped by the wall-clock limit of 4 s.",
    );
    expect(stopReason(failed({ kind: "limit", limit: "cpu", value: 8, unit: "s" }))).toBe(
      "Stopped by the CPU-time limit of 8 s.",
    );
    expect(
      stopReason(failed({ kind: "limit", limit: "memory", value: 2 * 1024 ** 3, unit: "bytes" })),
    ).toBe("Stopped by the memory limit of 2 GiB.");
    expect(
      stopReason(failed({ kind: "limit", limit: "output", value: 1048576, unit: "bytes" })),
    ).toBe("Stopped by the output limit of 1 MiB.");
  });

  it("still names the limit of a run stored without its value", () => {
    expect(stopReason(failed({ kind: "limit", limit: "file size" }))).toBe(
      "Stopped by the file-size limit.",
    );
    expect(stopReason(failed({ kind: "limit", limit: "threads" }))).toBe(
      "Stopped by the threads limit.",
    );
  });

  it("says nothing for other failures and for runs that did not fail", () => {
    expect(stopReason(failed({ kind: "user_code", line: 2 }))).toBeNull();
    expect(stopReason({ status: "running", error: null })).toBeNull();
    expect(stopReason(undefined)).toBeNull();
  });
});

describe("limitValue", () => {
  it("reads seconds and bytes and nothing else", () => {
    expect(limitValue(2.5, "s")).toBe("2.5 s");
    expect(limitValue(512, "bytes")).toBe("512 B");
    expect(limitValue(undefined, "s")).toBe("");
    expect(limitValue(Infinity, "s")).toBe("");
  });
});

describe("runLimits", () => {
  it("lists the run's wall-clock and CPU-time limits", () => {
    expect(runLimits({ time_limit_s: 30, cpu_limit_s: 60 })).toBe(
      "wall clock 30 s · CPU time 60 s",
    );
    expect(runLimits({ time_limit_s: 600, cpu_limit_s: null })).toBe("wall clock 600 s");
  });
});
