import { render, screen } from "@testing-library/react";
import { describe, expect, it } from "vitest";
import { PowerWarning, powerMissingLines } from "./PowerWarning.jsx";

describe("PowerWarning", () => {
  it("names each node and the power attributes its energy lacked", () => {
    const result = {
      power_missing: [
        { node: "gpu0", name: "GeForce GTX 970", attributes: ["powerIdle"] },
        { node: "bus0", name: "bus0", attributes: ["powerIdle", "powerConsumptionLoad"] },
      ],
    };
    const lines = powerMissingLines(result);
    expect(lines).toEqual([
      "GeForce GTX 970 (gpu0): powerIdle",
      "bus0: powerIdle, powerConsumptionLoad",
    ]);
    render(<PowerWarning scope="This run's" lines={lines} />);
    const note = screen.getByRole("note", { name: "Energy warning" });
    expect(note.textContent).toContain("This run's energy rests on missing power attributes");
    expect(note.textContent).toContain("GeForce GTX 970 (gpu0): powerIdle");
  });
  it("shows nothing for a result without missing attributes or from before the check", () => {
    expect(powerMissingLines({})).toEqual([]);
    const { container } = render(<PowerWarning scope="This run's" lines={[]} />);
    expect(container.textContent).toBe("");
  });
});
