import { cleanup, fireEvent, render, screen } from "@testing-library/react";
import { afterEach, describe, expect, it } from "vitest";
import { Gantt } from "./Gantt.jsx";

afterEach(cleanup);

const timeline = Array.from({ length: 40 }, (_, i) => ({
  process: i % 2 ? "GPU[0]" : "CPU[0]",
  kind: i % 2 ? "compute" : "transfer",
  start_s: i * 0.001,
  end_s: i * 0.001 + 0.0008,
}));

const props = {
  timeline,
  processes: [
    { process: "CPU[0]", label: "CPU", rank: 0 },
    { process: "GPU[0]", label: "GPU", rank: 0 },
  ],
  components: [{ node: "gpu0", name: "GPU", type: "GPU", instance: 0 }],
  resourceTimeline: [{ node: "gpu0", instance: 0, start_s: 0, end_s: 2 }],
  overallTime: 2,
  dropped: 1960,
};

const windowText = () => screen.getByTestId("gantt-window").textContent;

describe("Gantt", () => {
  it("spans the whole run and says what was dropped", () => {
    render(<Gantt {...props} />);
    expect(screen.getByTestId("timeline-dropped").textContent).toContain(
      "kept its first 40 process entries, up to 39.800 ms of the run's 2.000 s; 1,960 later",
    );
    expect(windowText()).toBe("Whole run: 0 – 2.000 s");
    const ticks = [...document.querySelectorAll(".gantt-tick text")].map((t) => t.textContent);
    expect(ticks.at(-1)).toBe("2.0 s");
    expect(screen.getByText("Resources")).toBeTruthy();
    expect(screen.getByRole("button", { name: "Zoom out" }).disabled).toBe(true);
  });

  it("zooms and pans with the buttons and the keyboard", () => {
    render(<Gantt {...props} />);
    fireEvent.click(screen.getByRole("button", { name: "Zoom in" }));
    expect(windowText()).toBe("Showing 0.50 s – 1.50 s of 2.000 s");
    fireEvent.click(screen.getByRole("button", { name: "Pan left" }));
    expect(windowText()).toBe("Showing 0.25 s – 1.25 s of 2.000 s");
    const chart = screen.getByRole("img");
    fireEvent.keyDown(chart, { key: "+" });
    expect(windowText()).toBe("Showing 0.50 s – 1.00 s of 2.000 s");
    fireEvent.keyDown(chart, { key: "0" });
    expect(windowText()).toBe("Whole run: 0 – 2.000 s");
  });

  it("zooms with the wheel around the pointer and pans by dragging", () => {
    render(<Gantt {...props} width={900} />);
    const chart = screen.getByRole("img");
    // jsdom places the chart at x = 0: the plot starts at 170 px and is 710 px wide
    fireEvent.wheel(chart, { deltaY: -100, clientX: 170 });
    expect(windowText()).toBe("Showing 0.00 s – 1.60 s of 2.000 s");
    fireEvent.wheel(chart, { deltaY: -100, clientX: 100 }); // over the labels: no zoom
    expect(windowText()).toBe("Showing 0.00 s – 1.60 s of 2.000 s");
    fireEvent.pointerDown(chart, { button: 0, clientX: 600, pointerId: 1 });
    fireEvent.pointerMove(chart, { clientX: 600 - 710 / 8, pointerId: 1 });
    fireEvent.pointerUp(chart, { pointerId: 1 });
    expect(windowText()).toBe("Showing 0.20 s – 1.80 s of 2.000 s");
  });

  it("gives each chart its own hatch and clip, so two can share a page", () => {
    render(
      <>
        <Gantt {...props} />
        <Gantt {...props} />
      </>,
    );
    const clips = [...document.querySelectorAll("clipPath")].map((c) => c.id);
    expect(new Set(clips).size).toBe(2);
  });

  it("names a collective's algorithm on its bar, drawn behind the call's transfers", () => {
    render(
      <Gantt
        {...props}
        dropped={0}
        timeline={[
          {
            process: "GPU[0]",
            kind: "collective",
            collective: "allreduce",
            algorithm: "ring",
            size: 1024,
            call: 0,
            start_s: 0,
            end_s: 2,
          },
          { process: "GPU[0]", kind: "transfer", node: "nvl0", start_s: 0.5, end_s: 1 },
        ]}
      />,
    );
    const titles = [...document.querySelectorAll("[data-row] rect title")].map(
      (t) => t.textContent,
    );
    expect(titles[0]).toMatch(/^GPU\[0\]: allreduce \(ring\) of 1024 bytes, /);
    expect(titles[1]).toMatch(/^GPU\[0\]: transfer on nvl0, /);
    expect(screen.getByText("collective")).toBeTruthy();
  });

  it("says so when there is no timeline", () => {
    render(<Gantt timeline={[]} />);
    expect(screen.getByText("No timeline recorded.")).toBeTruthy();
  });
});
