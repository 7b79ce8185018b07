import { describe, expect, it } from "vitest";
import {
  MIN_SPAN_FRACTION,
  clampWindow,
  droppedNotice,
  ganttInput,
  ganttRows,
  keptUntil,
  layoutRows,
  panWindow,
  tickStep,
  timeLabel,
  timeScale,
  totalTime,
  visibleBars,
  windowTicks,
  zoomWindow,
} from "./ganttLayout.js";

const entry = (process, kind, start_s, end_s, extra = {}) => ({
  process,
  kind,
  start_s,
  end_s,
  ...extra,
});

describe("ganttRows", () => {
  const processes = [
    { process: "CPU[0]", label: "CPU", rank: 0 },
    { label: "GPU", rank: 0 },
  ];
  const components = [
    { node: "cpu0", name: "Host", type: "CPU", instance: 0 },
    { node: "bus0", name: "PCIe", type: "NETWORK", instance: 0 },
    { node: "gpu0", name: "GTX 970", type: "GPU", instance: 0 },
  ];

  it("gives a row per process in the result's order, entries sorted by start", () => {
    const timeline = [
      entry("GPU[0]", "compute", 3, 4),
      entry("CPU[0]", "receive", 0, 5),
      entry("GPU[0]", "receive", 0, 3),
      entry("X[0]", "compute", 1, 2),
    ];
    const rows = ganttRows({ timeline, processes });
    expect(rows.map((r) => [r.key, r.label, r.group])).toEqual([
      ["p:CPU[0]", "CPU[0]", "process"],
      ["p:GPU[0]", "GPU[0]", "process"],
      ["p:X[0]", "X[0]", "process"],
    ]);
    expect(rows[1].entries.map((e) => e.kind)).toEqual(["receive", "compute"]);
  });

  it("adds a row per component instance with its busy periods when the result has them", () => {
    const rows = ganttRows({
      timeline: [entry("CPU[0]", "transfer", 0, 1, { node: "bus0" })],
      processes,
      components,
      resourceTimeline: [
        { node: "gpu0", instance: 0, start_s: 3, end_s: 8 },
        { node: "bus0", instance: 0, start_s: 8, end_s: 9 },
        { node: "bus0", instance: 0, start_s: 0, end_s: 3 },
      ],
    });
    const resources = rows.filter((r) => r.group === "resource");
    expect(resources.map((r) => [r.label, r.type])).toEqual([
      ["Host[0]", "CPU"],
      ["PCIe[0]", "NETWORK"],
      ["GTX 970[0]", "GPU"],
    ]);
    expect(resources[0].entries).toEqual([]); // the host never was busy: an empty row
    expect(resources[1].entries.map((e) => [e.kind, e.start_s])).toEqual([
      ["NETWORK busy", 0],
      ["NETWORK busy", 8],
    ]);
  });

  it("shows no resource rows for a result recorded without them", () => {
    const rows = ganttRows({ timeline: [entry("CPU[0]", "compute", 0, 1)], components });
    expect(rows.map((r) => r.group)).toEqual(["process"]);
  });
});

describe("layoutRows", () => {
  it("stacks the rows and puts a heading and a gap before the resources", () => {
    const rows = [
      { key: "a", group: "process" },
      { key: "b", group: "process" },
      { key: "c", group: "resource" },
    ];
    const {
      rows: placed,
      headings,
      height,
    } = layoutRows(rows, {
      top: 10,
      rowHeight: 20,
      gap: 30,
    });
    expect(placed.map((r) => r.y)).toEqual([10, 30, 80]);
    expect(headings).toEqual([{ label: "Resources", y: 74 }]);
    expect(height).toBe(100);
  });
});

describe("the time window", () => {
  it("spans the run's overall time, not only the kept entries", () => {
    const rows = [{ entries: [entry("P", "compute", 0, 0.025)] }];
    expect(totalTime(1.98, rows)).toBe(1.98);
    expect(totalTime(undefined, rows)).toBe(0.025); // an old result without overall time
    expect(totalTime(undefined, [])).toBe(1);
  });

  it("zooms around an anchor that stays in place and keeps within the run", () => {
    const win = { start: 0, end: 2 };
    expect(zoomWindow(win, 0.5, 2)).toEqual({ start: 0.5, end: 1.5 });
    expect(zoomWindow(win, 0.5, 2, 0)).toEqual({ start: 0, end: 1 });
    const anchored = zoomWindow({ start: 1, end: 2 }, 0.5, 2, 1.2);
    expect(anchored.start).toBeCloseTo(1.1);
    expect(anchored.end).toBeCloseTo(1.6);
    expect(zoomWindow({ start: 1.5, end: 2 }, 8, 2)).toEqual({ start: 0, end: 2 });
  });

  it("stops zooming in at the narrowest span", () => {
    let win = { start: 0, end: 1 };
    for (let i = 0; i < 100; i += 1) win = zoomWindow(win, 0.1, 1);
    expect(win.end - win.start).toBeCloseTo(MIN_SPAN_FRACTION, 12);
  });

  it("pans by a fraction of the window and stops at the ends", () => {
    expect(panWindow({ start: 1, end: 2 }, 0.25, 4)).toEqual({ start: 1.25, end: 2.25 });
    expect(panWindow({ start: 1, end: 2 }, -5, 4)).toEqual({ start: 0, end: 1 });
    expect(panWindow({ start: 1, end: 2 }, 5, 4)).toEqual({ start: 3, end: 4 });
    expect(clampWindow({ start: -1, end: 9 }, 4)).toEqual({ start: 0, end: 4 });
  });

  it("maps times to pixels and puts round ticks inside the window", () => {
    const x = timeScale({ start: 1, end: 3 }, 100, 400);
    expect([x(1), x(2), x(3)]).toEqual([100, 300, 500]);
    expect(windowTicks({ start: 0, end: 1.98 }, 4)).toEqual([0, 0.5, 1, 1.5]);
    expect(windowTicks({ start: 0.0123, end: 0.0161 }, 4)).toEqual([0.013, 0.014, 0.015, 0.016]);
  });

  it("labels times precisely enough for the zoom", () => {
    expect(timeLabel(1.5, 0.5)).toBe("1.5 s");
    expect(timeLabel(2, 0.5)).toBe("2.0 s");
    expect(timeLabel(0.25, 0.2, 1)).toBe("0.25 s");
    expect(timeLabel(0.025, 0.005)).toBe("25 ms");
    expect(timeLabel(0.0123, 2.5e-4)).toBe("12.30 ms");
    expect(timeLabel(1.00000002, 2e-8)).toBe("1000000020 ns");
    expect(timeLabel(0.0000123, 5e-7)).toBe("12.3 µs");
    expect(tickStep({ start: 0, end: 1.98 }, 4)).toBe(0.5);
  });
});

describe("visibleBars", () => {
  const entries = [
    entry("P", "compute", 0, 1),
    entry("P", "receive", 1, 2),
    entry("P", "compute", 2, 3),
    entry("P", "compute", 5, 6),
    entry("P", "compute", 9, 10),
  ];

  it("clips bars to the window and leaves out what is outside it", () => {
    const bars = visibleBars(entries, { start: 2.5, end: 6 }, 0, 350);
    expect(bars.map((b) => [b.kind, b.x1, b.x2])).toEqual([
      ["compute", 0, 50],
      ["compute", 250, 350],
    ]);
  });

  it("merges entries of one kind less than a pixel apart and counts them", () => {
    const many = Array.from({ length: 1000 }, (_, i) => entry("P", "compute", i, i + 0.5));
    const bars = visibleBars(many, { start: 0, end: 1000 }, 0, 100);
    expect(bars).toHaveLength(1);
    expect(bars[0].count).toBe(1000);
    expect([bars[0].start_s, bars[0].end_s]).toEqual([0, 999.5]);
    const zoomed = visibleBars(many, { start: 0, end: 9.9 }, 0, 990);
    expect(zoomed).toHaveLength(10);
  });

  it("keeps kinds apart when merging", () => {
    const bars = visibleBars(entries, { start: 0, end: 10 }, 0, 10, 2);
    expect(bars.map((b) => [b.kind, b.count])).toEqual([
      ["compute", 3],
      ["receive", 1],
      ["compute", 1],
    ]);
  });
});

describe("the dropped entries' notice", () => {
  it("counts what was dropped and says up to when the timeline is whole", () => {
    const rows = [
      { group: "process", entries: [entry("P", "compute", 0, 0.0247)] },
      { group: "resource", entries: [{ start_s: 0, end_s: 1.98 }] },
    ];
    expect(keptUntil(rows, "process")).toBe(0.0247);
    expect(
      droppedNotice({
        kept: 10000,
        dropped: 790000,
        until: 0.0247,
        total: 1.98,
        resourceKept: 1,
        resourceDropped: 0,
      }),
    ).toBe(
      "This run's timeline kept its first 10,000 process entries, up to 24.700 ms of the " +
        "run's 1.980 s; 790,000 later entries were dropped.",
    );
    expect(droppedNotice({ kept: 3, dropped: 0, resourceKept: 2, resourceDropped: 5 })).toBe(
      "The resource rows kept 2 busy periods; 5 were dropped.",
    );
    expect(droppedNotice({ kept: 3, dropped: 0, resourceDropped: 0 })).toBe("");
  });

  it("reads the counts from a result", () => {
    const input = ganttInput({
      timeline: [],
      overall_time_s: 2,
      timeline_dropped: 7,
      resource_timeline: [],
    });
    expect([input.overallTime, input.dropped, input.resourceDropped]).toEqual([2, 7, 0]);
  });
});
