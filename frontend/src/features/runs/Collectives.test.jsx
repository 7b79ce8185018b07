import { cleanup, render, screen } from "@testing-library/react";
import { afterEach, describe, expect, it } from "vitest";
import { Collectives, gbps } from "./Collectives.jsx";

afterEach(cleanup);

describe("Collectives", () => {
  it("lists each call with its algorithm and its bus bandwidth in GB/s", () => {
    const calls = [
      {
        call: 0,
        collective: "allreduce",
        algorithm: "ring",
        requested: "auto",
        participants: 8,
        size: 1073741824,
        wire_bytes: 15032385536,
        time_s: 0.0045,
        algbw: 238.6e9,
        busbw: 417.6e9,
      },
    ];
    render(<Collectives calls={calls} />);
    const table = screen.getByRole("table", { name: "Collective calls" });
    expect(table.textContent).toContain("ring (auto)");
    expect(screen.getByTestId("busbw-0").textContent).toBe("417.6");
  });
  it("shows nothing for a run without collective calls, or from before them", () => {
    const { container } = render(<Collectives calls={undefined} />);
    expect(container.textContent).toBe("");
    expect(gbps(null)).toBe("—");
  });
});
