import { describe, expect, it } from "vitest";
import {
  COMPARE_LIMIT,
  EMPTY_FILTERS,
  compareIds,
  compareUrl,
  localMidnight,
  pageCount,
  runsUrl,
  toggleRun,
} from "./runQuery.js";

const params = (url) => Object.fromEntries(new URL(url, "http://x").searchParams);

describe("runsUrl", () => {
  it("sends only the filters that hold a value, grouping sweeps by default", () => {
    expect(params(runsUrl(EMPTY_FILTERS))).toEqual({
      group_sweeps: "true",
      page: "1",
      page_size: "50",
    });
    const url = runsUrl(
      { ...EMPTY_FILTERS, search: " saxpy ", status: "failed", system_model: "4", application: "" },
      { page: 3, pageSize: 25 },
    );
    expect(params(url)).toEqual({
      search: "saxpy",
      status: "failed",
      system_model: "4",
      group_sweeps: "true",
      page: "3",
      page_size: "25",
    });
  });
  it("lists one sweep ungrouped", () => {
    const p = params(runsUrl(EMPTY_FILTERS, { sweep: 9 }));
    expect(p.sweep).toBe("9");
    expect(p.group_sweeps).toBeUndefined();
  });
  it("takes the local days of the date range, both ends included", () => {
    const p = params(
      runsUrl({ ...EMPTY_FILTERS, launched_from: "2024-05-10", launched_to: "2024-05-10" }),
    );
    expect(p.launched_after).toBe(new Date(2024, 4, 10).toISOString());
    expect(p.launched_before).toBe(new Date(2024, 4, 11).toISOString());
    expect(localMidnight("2024-12-31", 1)).toBe(new Date(2025, 0, 1).toISOString());
  });
});

describe("pageCount", () => {
  it("rounds up and has at least one page", () => {
    expect(pageCount(0, 50)).toBe(1);
    expect(pageCount(150, 50)).toBe(3);
    expect(pageCount(151, 50)).toBe(4);
  });
});

describe("toggleRun", () => {
  it("adds and removes runs, keeping the order they were ticked in", () => {
    let state = toggleRun([], "3");
    state = toggleRun(state.picked, "1");
    expect(state.picked).toEqual(["3", "1"]);
    expect(toggleRun(state.picked, "3").picked).toEqual(["1"]);
  });
  it("refuses a run past the limit instead of unticking an earlier one", () => {
    const full = Array.from({ length: COMPARE_LIMIT }, (_, i) => String(i));
    expect(toggleRun(full, "99")).toEqual({ picked: full, refused: true });
    expect(toggleRun(["1", "2"], "3")).toEqual({ picked: ["1", "2", "3"], refused: false });
  });
});

describe("compareIds", () => {
  it("reads runs=…, or the older a and b, without repeats and within the limit", () => {
    expect(compareIds(new URLSearchParams("runs=4,2,4,x,7"))).toEqual(["4", "2", "7"]);
    expect(compareIds(new URLSearchParams("a=1&b=5"))).toEqual(["1", "5"]);
    const many = Array.from({ length: 10 }, (_, i) => i + 1).join(",");
    expect(compareIds(new URLSearchParams(`runs=${many}`))).toHaveLength(COMPARE_LIMIT);
    expect(compareUrl(["1", "2", "3"])).toBe("/app/compare?runs=1,2,3");
  });
});
