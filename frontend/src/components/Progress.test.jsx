import { cleanup, render, screen } from "@testing-library/react";
import { afterEach, describe, expect, it } from "vitest";
import { Progress } from "./Progress.jsx";

afterEach(cleanup);

describe("Progress", () => {
  it("shows a known fraction as a percentage", () => {
    render(<Progress value={0.42} label="Sweep progress" />);
    const bar = screen.getByRole("progressbar", { name: "Sweep progress" });
    expect(bar.getAttribute("aria-valuenow")).toBe("42");
    expect(bar.textContent).toBe("42%");
  });

  it("shows no percentage for an unknown fraction, and says how far the task got", () => {
    render(<Progress value={null} label="Simulation progress" caption="Running: 2 ms reached" />);
    const bar = screen.getByRole("progressbar", { name: "Simulation progress" });
    expect(bar.hasAttribute("aria-valuenow")).toBe(false);
    expect(bar.getAttribute("aria-valuetext")).toBe("Running: 2 ms reached");
    expect(bar.className).toBe("progress indeterminate");
    expect(bar.textContent).toBe("");
    expect(screen.getByTestId("progress-caption").textContent).toBe("Running: 2 ms reached");
  });
});
