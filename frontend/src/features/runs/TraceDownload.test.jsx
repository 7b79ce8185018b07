import { render, screen } from "@testing-library/react";
import { describe, expect, it } from "vitest";
import { TraceDownload } from "./TraceDownload.jsx";

describe("TraceDownload", () => {
  it("links a finished run to its Chrome trace download", () => {
    const sim = { id: 7, trace_url: "/api/simulations/7/trace.json" };
    render(<TraceDownload sim={sim} result={{ overall_time_s: 1 }} />);
    const link = screen.getByRole("link", { name: "Download trace (Perfetto)" });
    expect(link.getAttribute("href")).toBe("/api/simulations/7/trace.json");
    expect(link.getAttribute("download")).toBe("simulation-7.trace.json");
  });
  it("shows nothing before the run has a result or for a run listed without the link", () => {
    const sim = { id: 7, trace_url: "/api/simulations/7/trace.json" };
    const { container, rerender } = render(<TraceDownload sim={sim} result={null} />);
    expect(container.textContent).toBe("");
    rerender(<TraceDownload sim={{ id: 7 }} result={{ overall_time_s: 1 }} />);
    expect(container.textContent).toBe("");
  });
});
