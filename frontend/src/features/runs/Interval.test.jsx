import { cleanup, render, screen } from "@testing-library/react";
import { afterEach, describe, expect, it } from "vitest";
import { Results } from "./Results.jsx";

afterEach(cleanup);

// The smallest finished result, with and without the prediction interval it asked for
const RESULT = {
  status: "finished",
  overall_time_s: 2,
  energy_j: { total: 10, per_component: {} },
  reliability: { p_success: 1 },
  stats: { events: 4, wall_s: 0.1, events_per_s: 40 },
  processes: [],
  components: [],
  timeline: [],
};
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
      log_sd: 0.01,
      attributes: ["memoryEfficiency"],
      source: "repeat-run spread over the committed kit runs",
    },
  ],
};

describe("the run page's prediction interval", () => {
  it("puts the 5-95 % interval under the time and energy, and lists what was perturbed", () => {
    render(<Results result={{ ...RESULT, uncertainty: INTERVAL }} />);
    expect(screen.getByTestId("overall-time-interval").textContent).toMatch(
      /^5-95 %: 1\.5.* to 2\.5/,
    );
    expect(screen.getByTestId("energy-interval").textContent).toMatch(/^5-95 %: 9.* to 12/);
    expect(
      screen.getByRole("heading", { name: "Prediction interval (50 samples, seed 3)" }),
    ).toBeTruthy();
    expect(screen.getByRole("list", { name: "Perturbed quantities" }).textContent).toMatch(
      /H100 SXM5 80GB \(gpu\): memoryEfficiency: 1\.00 %/,
    );
  });

  it("shows nothing of an interval for a run that asked for none", () => {
    render(<Results result={RESULT} />);
    expect(screen.queryByTestId("overall-time-interval")).toBeNull();
    expect(screen.queryByTestId("prediction-interval")).toBeNull();
  });
});
