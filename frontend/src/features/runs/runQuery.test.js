import { describe, expect, it } from "vitest";
import {
  COMPARE_LIMIT,
  EMPTY_FILTERS,
  compareIds,
  compareUrl,
  listAddress,
  listState,
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

describe("the runs list's address", () => {
  it("keeps the page, filters and search, and reads them back", () => {
    const state = {
      filters: {
        ...EMPTY_FILTERS,
        search: "Simulation 1",
        status: "failed",
        system_model: "3",
        launched_from: "2024-05-10",
        group_sweeps: false,
      },
      page: 4,
      pageSize: 100,
    };
    const address = listAddress(state);
    expect(address).toBe(
      "/app/runs?search=Simulation+1&status=failed&system_model=3&from=2024-05-10&grouped=no&page=4&per_page=100",
    );
    const query = new URL(address, "http://x").searchParams;
    expect(listState(query)).toEqual(state);
  });

  it("leaves out the defaults and reads a bare address as them", () => {
    expect(listAddress({ filters: EMPTY_FILTERS })).toBe("/app/runs");
    expect(listState(new URLSearchParams())).toEqual({
      filters: EMPTY_FILTERS,
      page: 1,
      pageSize: 50,
    });
  });

  it("reads a value it cannot take as the default", () => {
    const query = new URLSearchParams(
      "status=lost&system_model=x&from=yesterday&page=-2&per_page=7&application=5",
    );
    expect(listState(query)).toEqual({
      filters: { ...EMPTY_FILTERS, application: "5" },
      page: 1,
      pageSize: 50,
    });
  });
});
