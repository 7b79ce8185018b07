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
// The shipped model configs and cluster templates as GET /api/workloads/presets/ returns them.
const PRESETS = {
  models: [
    { name: "gpt3-5b", params: 5.2e9 },
    { name: "llama3-70b", params: 70.6e9 },
  ],
  systems: [
    { name: "dgx-h100", gpu: "H100 SXM5 80GB", gpu_memory_bytes: 80 * 2 ** 30 },
    { name: "dgx-h200", gpu: "H200 SXM 141GB", gpu_memory_bytes: 141 * 2 ** 30 },
    { name: "dgx-b200", gpu: "B200 SXM 180GB", gpu_memory_bytes: 180 * 2 ** 30 },
  ],
  choices: {
    data_parallel: ["ddp", "zero1", "fsdp"],
    recompute: ["none", "selective", "full"],
    precision: ["bf16", "fp8"],
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
    if (url.startsWith("/api/workloads/presets/")) return Promise.resolve(json(200, PRESETS));
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

describe("StudyNew, a training workload's plans", () => {
  const chooseWorkload = async () => {
    await screen.findByRole("heading", { name: "New study" });
    fireEvent.click(await screen.findByLabelText(/A training workload's plans/));
    await screen.findByRole("form", { name: "Define a workload study" });
  };

  it("posts a plan sweep's spec: the model, systems as an axis, plan fields and axes", async () => {
    const fetch = server(json(201, { id: 21 }));
    window.history.pushState({}, "", "/app/studies/new");
    render(<StudyNew />);
    await chooseWorkload();
    fireEvent.change(screen.getByLabelText("Study name"), { target: { value: "which GPU" } });
    fireEvent.change(screen.getByLabelText("Model"), { target: { value: "gpt3-5b" } });
    fireEvent.change(screen.getByLabelText("Precision"), { target: { value: "fp8" } });
    fireEvent.click(screen.getByLabelText("dgx-h200"));
    fireEvent.click(screen.getByLabelText("dgx-b200"));
    fireEvent.change(screen.getByLabelText("GPUs"), { target: { value: "64:512:64" } });
    fireEvent.change(screen.getByLabelText("Global batch"), { target: { value: "256" } });
    fireEvent.change(screen.getByLabelText("TP"), { target: { value: "2, 4,8" } });
    fireEvent.change(screen.getByLabelText("Micro-batch"), { target: { value: "" } });
    fireEvent.change(screen.getByLabelText("Interval samples"), { target: { value: "4" } });
    fireEvent.change(screen.getByLabelText("Objective 1 metric"), {
      target: { value: "cost_per_step_usd" },
    });
    fireEvent.change(screen.getByLabelText("Constraints"), {
      target: { value: "overall_time_s_high <= 5" },
    });
    fireEvent.change(screen.getByLabelText("Runs"), { target: { value: "30" } });
    fireEvent.click(screen.getByRole("button", { name: "Start the study" }));
    await waitFor(() => expect(window.location.pathname).toBe("/app/studies/21"));
    const [[url, body]] = posted(fetch);
    expect(url).toBe("/api/studies/");
    expect(body).toEqual({
      name: "which GPU",
      spec: {
        kind: "train",
        model: "gpt3-5b",
        precision: "fp8",
        data_parallel: "zero1",
        recompute: "selective",
        gbs: 256,
        axes: {
          system: ["dgx-h100", "dgx-h200", "dgx-b200"],
          gpus: { start: 64, stop: 512, step: 64 },
          tp: [2, 4, 8],
          pp: [1, 2, 4, 8],
        },
        uncertainty: { samples: 4 },
      },
      objectives: [{ metric: "cost_per_step_usd", direction: "min" }],
      constraints: ["overall_time_s_high <= 5"],
      sampler: "auto",
      seed: 0,
      budget: { runs: 30, wall_s: null },
      parallel: 2,
    });
  });

  it("sends one ticked system as the plan's field and the rest as typed", async () => {
    const fetch = server(json(201, { id: 22 }));
    render(<StudyNew />);
    await chooseWorkload();
    fireEvent.change(screen.getByLabelText("PP"), { target: { value: "4" } });
    fireEvent.change(screen.getByLabelText("CP"), { target: { value: "two" } });
    fireEvent.click(screen.getByRole("button", { name: "Start the study" }));
    await waitFor(() => expect(posted(fetch)).toHaveLength(1));
    const [[, { spec }]] = posted(fetch);
    expect(spec.system).toBe("dgx-h100");
    expect(spec.pp).toBe(4);
    expect(spec.cp).toBe("two");
    expect(spec.gpus).toBe(64);
    expect(spec.axes).toEqual({ tp: [1, 2, 4, 8], mbs: [1, 2] });
  });

  it("shows the 400 answer's errors beside the workload's and the study's fields", async () => {
    server(
      json(400, {
        "spec.axes.tp[1]": ["tp is a whole number of at least 1, got 0."],
        "spec.model": ["Expected a shipped model config."],
        "spec.axes.system[1]": ["system is one of dgx-h100, dgx-b200, got 'dgx-z9'."],
        "spec.uncertainty.samples": ["Expected at most 200 samples."],
        "budget.runs": ["Expected a whole number of runs from 1 to 1000."],
        "spec.kind": ["A study of a workload's plans is of a training step."],
      }),
    );
    window.history.pushState({}, "", "/app/studies/new");
    render(<StudyNew />);
    await chooseWorkload();
    fireEvent.change(screen.getByLabelText("TP"), { target: { value: "1,0" } });
    fireEvent.click(screen.getByRole("button", { name: "Start the study" }));
    await screen.findByText("tp is a whole number of at least 1, got 0.");
    const beside = (label) => screen.getByLabelText(label).closest(".field");
    expect(beside("TP").className).toContain("invalid");
    expect(beside("TP").textContent).toContain("tp is a whole number of at least 1, got 0.");
    expect(beside("PP").className).not.toContain("invalid");
    expect(beside("Model").textContent).toContain("Expected a shipped model config.");
    expect(beside("Interval samples").textContent).toContain("Expected at most 200 samples.");
    expect(beside("Runs").textContent).toContain("Expected a whole number of runs from 1 to 1000.");
    expect(
      screen.getByRole("group", { name: "System templates" }).parentElement.textContent,
    ).toContain("got 'dgx-z9'.");
    // A path with no field of its own is named in words in the summary.
    const summary = document.querySelector(".error-box");
    expect(summary.textContent).toContain("Workload:");
    expect(summary.textContent).toContain("of a training step");
    expect(summary.textContent).not.toContain("got 0.");
    expect(window.location.pathname).toBe("/app/studies/new");
  });
});
