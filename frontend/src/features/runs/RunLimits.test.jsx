import { cleanup, render, screen } from "@testing-library/react";
import { afterEach, describe, expect, it } from "vitest";
import { RunLimits } from "./RunLimits.jsx";

afterEach(cleanup);

describe("RunLimits", () => {
  it("names the limit that stopped a failed run beside the run's limits", () => {
    render(
      <RunLimits
        sim={{
          status: "failed",
          time_limit_s: 4,
          cpu_limit_s: 8,
          error: { kind: "limit", limit: "wall", value: 4, unit: "s", message: "..." },
        }}
      />,
    );
    expect(screen.getByTestId("limit-stop").textContent).toMatch(
      /^Stopped by the wall-clock limit of 4 s\. /,
    );
    expect(screen.getByText("Limits: wall clock 4 s · CPU time 8 s")).toBeTruthy();
    expect(screen.queryByTestId("run-held")).toBeNull();
  });

  it("says why a held run waits, and nothing about a stop", () => {
    render(<RunLimits sim={{ status: "queued", held: true, time_limit_s: 30, cpu_limit_s: 60 }} />);
    expect(screen.getByTestId("run-held").textContent).toMatch(/^Waiting for a run slot/);
    expect(screen.queryByTestId("limit-stop")).toBeNull();
  });

  it("shows no stop for a run that failed otherwise", () => {
    render(<RunLimits sim={{ status: "failed", error: { kind: "user_code", line: 3 } }} />);
    expect(screen.queryByTestId("limit-stop")).toBeNull();
  });
});
