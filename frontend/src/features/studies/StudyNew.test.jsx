import { cleanup, fireEvent, render, screen, waitFor } from "@testing-library/react";
import { afterEach, describe, expect, it, vi } from "vitest";
import { json } from "../../test/fetch.js";
import { StudyNew } from "./Studies.jsx";

afterEach(() => {
  cleanup();
  vi.unstubAllGlobals();
});

// One system (a CPU and a GPU label) and one application declaring N, as the lists return them.
const SYSTEM = {
  id: 1,
  name: "gtx970",
  graph: {
    nodes: [
      { id: "cpu0", labels: { CPU: 1 }, hardware: 10 },
      { id: "gpu0", labels: { GPU: 1 }, hardware: 11 },
    ],
  },
};
const APP = { id: 2, name: "saxpy2", variables: [{ name: "N", type: "int", default: 1000 }] };

// A server answering the form's lists, then each POST /api/studies/ with the next of `answers`.
function server(...answers) {
  const fetch = vi.fn((url, options = {}) => {
    if (options.method === "POST") return Promise.resolve(answers.shift());
    if (url.startsWith("/api/systems/")) return Promise.resolve(json(200, [SYSTEM]));
    if (url.startsWith("/api/applications/")) return Promise.resolve(json(200, [APP]));
    if (url.startsWith("/api/queues/")) return Promise.resolve(json(200, [{ name: "default" }]));
    return Promise.resolve(json(200, []));
  });
  vi.stubGlobal("fetch", fetch);
  vi.stubGlobal("scrollTo", () => {});
  return fetch;
}

const posted = (fetch) =>
  fetch.mock.calls
    .filter(([, options]) => options?.method === "POST")
    .map(([url, options]) => [url, JSON.parse(options.body)]);

describe("StudyNew", () => {
  it("posts the axes, objectives, constraints, sampler, seed, budget and parallel count", async () => {
    const fetch = server(json(201, { id: 12 }));
    render(<StudyNew />);
    await screen.findByRole("heading", { name: "New study" });
    await waitFor(() => expect(screen.getByLabelText("Sweep values of N").value).toBe("1000"));
    fireEvent.change(screen.getByLabelText("Sweep name"), { target: { value: "saxpy search" } });
    fireEvent.change(screen.getByLabelText("Sweep values of N"), {
      target: { value: "1000:1000000:1000" },
    });
    fireEvent.click(screen.getByRole("button", { name: "Add an objective" }));
    fireEvent.change(screen.getByLabelText("Objective 2 metric"), {
      target: { value: "p_success" },
    });
    fireEvent.change(screen.getByLabelText("Objective 2 direction"), {
      target: { value: "max" },
    });
    fireEvent.change(screen.getByLabelText("Constraints"), {
      target: { value: "gpu_power_w <= 700\n\n energy_j < 5 " },
    });
    fireEvent.change(screen.getByLabelText("Sampler"), { target: { value: "nsga2" } });
    fireEvent.change(screen.getByLabelText("Seed"), { target: { value: "7" } });
    fireEvent.change(screen.getByLabelText("Runs"), { target: { value: "40" } });
    fireEvent.change(screen.getByLabelText("Wall time"), { target: { value: "3600" } });
    fireEvent.change(screen.getByLabelText("Runs at once"), { target: { value: "4" } });
    fireEvent.click(screen.getByRole("button", { name: "Start the study" }));
    await waitFor(() => expect(window.location.pathname).toBe("/app/studies/12"));
    const [[url, body]] = posted(fetch);
    expect(url).toBe("/api/studies/");
    expect(body).toMatchObject({
      name: "saxpy search",
      objectives: [
        { metric: "overall_time_s", direction: "min" },
        { metric: "p_success", direction: "max" },
      ],
      constraints: ["gpu_power_w <= 700", "energy_j < 5"],
      sampler: "nsga2",
      seed: 7,
      budget: { runs: 40, wall_s: 3600 },
      parallel: 4,
    });
    expect(body.spec).toMatchObject({
      system_model: 1,
      application: 2,
      labels: { CPU: 1, GPU: 1 },
      variables: { N: { start: 1000, stop: 1000000, step: 1000 } },
    });
  });

  it("shows the 400 answer's errors beside the study's and the sweep's fields", async () => {
    const fetch = server(
      json(400, {
        "budget.runs": ["Expected a whole number of runs from 1 to 1000."],
        parallel: ["Expected a whole number of runs in flight at once, from 1 to 4."],
        "objectives[0].metric": ["Unknown metric 'speed'."],
        "spec.variables.N": ["Expected a number."],
        seed: ["Expected a whole number."],
      }),
    );
    window.history.pushState({}, "", "/app/studies/new");
    render(<StudyNew />);
    await waitFor(() => expect(screen.getByLabelText("Sweep values of N").value).toBe("1000"));
    fireEvent.change(screen.getByLabelText("Objective 1 metric"), { target: { value: "speed" } });
    fireEvent.change(screen.getByLabelText("Runs"), { target: { value: "5000" } });
    fireEvent.change(screen.getByLabelText("Seed"), { target: { value: "x" } });
    fireEvent.click(screen.getByRole("button", { name: "Start the study" }));
    await screen.findByText("Expected a whole number of runs from 1 to 1000.");
    const [[, body]] = posted(fetch);
    // What is not a whole number is sent as typed: the server names it.
    expect(body.seed).toBe("x");
    expect(body.budget.runs).toBe(5000);
    const runs = screen.getByLabelText("Runs").closest(".field");
    expect(runs.className).toContain("invalid");
    expect(runs.textContent).toContain("Expected a whole number of runs from 1 to 1000.");
    expect(screen.getByLabelText("Runs at once").closest(".field").textContent).toContain(
      "from 1 to 4",
    );
    expect(screen.getByLabelText("Seed").closest(".field").textContent).toContain(
      "Expected a whole number.",
    );
    expect(screen.getByText("Unknown metric 'speed'.")).toBeTruthy();
    expect(screen.getByLabelText("Sweep values of N").closest(".field").textContent).toContain(
      "Expected a number.",
    );
    expect(window.location.pathname).toBe("/app/studies/new");
  });
});
