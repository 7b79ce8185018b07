import { render, screen } from "@testing-library/react";
import { describe, expect, it } from "vitest";
import { EnergyAccounting } from "./EnergyAccounting.jsx";
import {
  accountingMismatch,
  accountingOf,
  energyIncludes,
  estimatedLines,
  pointEnergyTitle,
  pointsMismatch,
} from "./energy.js";

// A result as simulator.results.assemble_result writes it since issue 45 (B200, saxpy2).
const b200 = {
  energy_j: { total: 1.968, per_component: { gpu0: 1.968, bus0: 0 }, accounting: "whole_run" },
  energy_accounting: [
    {
      node: "gpu0",
      name: "B200 SXM 180GB",
      hardware: "B200 SXM 180GB",
      includes: "active idle 173.089 W x the run's 0.0112618 s + (load 1000 W - 173.089 W) x ...",
      estimated: [
        { attribute: "powerIdle", rule: "estimated: powerIdle = 0.1067 x ..." },
        { attribute: "powerActiveIdle", rule: "estimated: ..." },
      ],
      energy_j: 1.968,
    },
    {
      node: "bus0",
      name: "bus0",
      hardware: "PCIe 3.0 16x",
      includes: "nothing: ...",
      estimated: [],
      energy_j: 0,
    },
  ],
  energy_alternatives: {
    kernel_load_000: { accounting: "kernel_load_000", total: 0.023, per_component: {} },
  },
};

describe("what a run's energy includes", () => {
  it("reads the accounting, and a run from before issue 45 as not recorded", () => {
    expect(accountingOf(b200)).toBe("whole_run");
    expect(accountingOf({ energy_j: { total: 1, per_component: {} } })).toBe("");
  });
  it("names each node, what it charged and its estimated states", () => {
    const rows = energyIncludes(b200);
    expect(rows.map((r) => r.label)).toEqual(["B200 SXM 180GB (gpu0)", "bus0"]);
    expect(rows[0].estimated).toEqual(["powerIdle", "powerActiveIdle"]);
    expect(rows[1].statesFrom).toBe("the record");
    const modelled = { energy_accounting: [{ node: "cpu0", states_from: "model", estimated: [] }] };
    expect(energyIncludes(modelled)[0].statesFrom).toBe("the model's power function");
    expect(estimatedLines(b200)).toEqual(["B200 SXM 180GB (gpu0): powerIdle, powerActiveIdle"]);
  });
  it("shows the table and keeps the papers' figure apart, said not comparable", () => {
    render(<EnergyAccounting result={b200} />);
    expect(screen.getByTestId("energy-accounting").textContent).toContain("whole run");
    const table = screen.getByRole("table", { name: "Energy per node and what it includes" });
    expect(table.textContent).toContain("powerIdle, powerActiveIdle");
    expect(table.textContent).toContain("no: from the record");
    const others = screen.getByRole("list", { name: "Energy under other accountings" });
    expect(others.textContent).toContain("seed 000");
    expect(screen.getByText(/not comparable with the\s+total above/)).toBeTruthy();
  });
});

describe("figures of different accountings", () => {
  it("are refused side by side with a notice naming both", () => {
    const notice = accountingMismatch(["whole_run", "", null]);
    expect(notice.accountings).toEqual(["whole_run", ""]);
    expect(notice.text).toContain("whole run");
    expect(notice.text).toContain("before issue 45");
    expect(notice.text).toContain("do not compare");
  });
  it("pass when all share one accounting", () => {
    expect(accountingMismatch(["whole_run", "whole_run", null])).toBeNull();
    expect(accountingMismatch([])).toBeNull();
  });
  it("in a sweep: only finished points count, and a cell says what its energy is", () => {
    const points = [
      { status: "succeeded", energy_accounting: "whole_run", energy_estimated: "" },
      { status: "succeeded", energy_accounting: "" },
      { status: "queued", energy_accounting: "" },
    ];
    expect(pointsMismatch(points).accountings).toEqual(["whole_run", ""]);
    expect(pointsMismatch([points[0], points[2]])).toBeNull();
    expect(
      pointEnergyTitle({
        status: "succeeded",
        energy_accounting: "whole_run",
        energy_estimated: "B200 SXM 180GB (gpu0): powerIdle",
        power_missing: "",
      }),
    ).toBe(
      "accounting: whole run: base power over the run, plus load or E.1 over the kernels; " +
        "estimated: B200 SXM 180GB (gpu0): powerIdle",
    );
    expect(pointEnergyTitle({ status: "queued" })).toBeUndefined();
  });
});
