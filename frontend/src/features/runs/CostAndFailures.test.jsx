import { cleanup, render, screen } from "@testing-library/react";
import { afterEach, describe, expect, it } from "vitest";
import { CostAndFailures, costLines, failureLines } from "./CostAndFailures.jsx";

afterEach(cleanup);

const COST = {
  total: 8.2,
  energy: 0.2,
  hardware: 8,
  per_unit: { token: 0.002 },
  per_node: {},
  missing: [{ node: "cpu0", name: "Host", attributes: ["powerPrice"] }],
};
const RESTART = {
  mode: "restart",
  samples: 1000,
  seed: 3,
  restart_s: 1,
  analytic_p_success: 0.8187,
  p_complete: 1,
  ci_95: [0.996, 1],
  mean_completion_s: 3.2,
  analytic_mean_completion_s: 3.1,
  mean_attempts: 1.22,
  completion_percentiles_s: { 50: 2, 90: 3.5, 99: 6 },
};

describe("CostAndFailures", () => {
  it("shows the cost, per unit of work, and what could not be priced", () => {
    render(<CostAndFailures result={{ cost: COST }} />);
    expect(screen.getByTestId("run-cost").textContent).toContain("Cost per run$8.2");
    expect(screen.getByTestId("run-cost").textContent).toContain("Cost per token$0.002");
    expect(screen.getByRole("note", { name: "Cost warning" }).textContent).toContain(
      "Host (cpu0): powerPrice",
    );
    expect(screen.queryByTestId("failure-injection")).toBeNull();
  });

  it("shows the injected failures beside the analytic probability", () => {
    render(<CostAndFailures result={{ failure_injection: RESTART }} />);
    const text = screen.getByTestId("failure-injection").textContent;
    expect(text).toContain("analytic P(success) = 0.8187");
    expect(text).toContain("p99 6.000 s");
    expect(screen.getByRole("heading").textContent).toBe(
      "Failure injection (restart, 1000 samples, seed 3)",
    );
  });

  it("shows nothing for a run without prices or injection", () => {
    const { container } = render(
      <CostAndFailures result={{ cost: { total: null, per_unit: {}, missing: [] } }} />,
    );
    expect(container.textContent).toBe("");
    expect(costLines(undefined)).toBeNull();
    expect(failureLines(undefined)).toBeNull();
    expect(failureLines({ ...RESTART, mode: "abort" }).lines).toHaveLength(1);
  });
});
