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
  it("names NCCL's protocol beside the algorithm when the call ran under NCCL's cost layer", () => {
    const base = {
      collective: "allgather",
      algorithm: "ring",
      requested: "ring",
      participants: 4,
      size: 1024,
      wire_bytes: 768,
      time_s: 1e-5,
      algbw: 1e8,
      busbw: 7.5e7,
    };
    const calls = [
      { ...base, call: 0, protocol: "LL" },
      { ...base, call: 1, protocol: "ideal" },
    ];
    render(<Collectives calls={calls} />);
    const rows = screen.getAllByRole("row");
    expect(rows[1].textContent).toContain("ring, NCCL LL");
    expect(rows[2].textContent).not.toContain("NCCL");
  });
  it("shows nothing for a run without collective calls, or from before them", () => {
    const { container } = render(<Collectives calls={undefined} />);
    expect(container.textContent).toBe("");
    expect(gbps(null)).toBe("—");
  });
});
