import { cleanup, fireEvent, render, screen, waitFor, within } from "@testing-library/react";
import { afterEach, describe, expect, it, vi } from "vitest";
import { json, mockFetch } from "../../test/fetch.js";
import { Workloads } from "./Workloads.jsx";

afterEach(() => {
  cleanup();
  vi.unstubAllGlobals();
});

const GIB = 2 ** 30;
const PRESETS = {
  models: [{ name: "llama3-70b", params: 70.6e9, layers: 80 }],
  systems: [
    {
      name: "dgx-h100",
      gpu: "H100 SXM5 80GB",
      gpu_memory_bytes: 80 * GIB,
      links: {
        nvlink: { records: ["NVSwitch (HGX H100, NVLink 4)"], bytes_per_s: 450e9, latency_s: 6e-7 },
        network: {
          records: ["InfiniBand NDR 400 Gb/s (ConnectX-7)", "Quantum-2 QM9700 port"],
          bytes_per_s: 50e9,
          latency_s: 2.99e-6,
        },
      },
    },
    { name: "dgx-b200", gpu: "B200 SXM 180GB", gpu_memory_bytes: 180 * GIB },
  ],
  choices: {
    data_parallel: ["ddp", "zero1", "fsdp"],
    recompute: ["none", "selective", "full"],
    precision: ["bf16", "fp8"],
  },
};
const BASIS = {
  model: "llama3-70b",
  system: "dgx-h100",
  gpus: 64,
  plan: { tp: 4, pp: 8, dp: 2 },
  memory: {
    weights: 4 * GIB,
    gradients: 8 * GIB,
    optimizer: 2 * GIB,
    activations: 6 * GIB,
    total: 20 * GIB,
  },
  gpu_memory_bytes: 80 * GIB,
  notes: [],
};
const FIGURES = {
  step_time_s: 20.827,
  tokens_per_s_per_gpu: 786.672,
  model_tflops_per_gpu: 378.731,
  mfu: 0.382746,
  time_split_s: { compute: 17.48, pipeline_bubble: 1.91, exposed_communication: 1.44 },
};

describe("Workloads", () => {
  it("launches the plan as a run and shows the step's figures and memory by part", async () => {
    const fetch = mockFetch(
      json(200, PRESETS),
      json(201, { simulation: 9, status: "queued", basis: BASIS, figures: null }),
      json(200, { simulation: 9, status: "succeeded", basis: BASIS, figures: FIGURES }),
    );
    render(<Workloads />);
    fireEvent.change(await screen.findByLabelText("System"), { target: { value: "dgx-b200" } });
    fireEvent.click(screen.getByRole("button", { name: "Simulate the step" }));
    const figures = await screen.findByRole("table", { name: "Step figures" });
    const body = JSON.parse(fetch.mock.calls[1][1].body);
    expect([fetch.mock.calls[1][0], body.system, body.tp, body.pp, body.gpus]).toEqual([
      "/api/workloads/",
      "dgx-b200",
      4,
      8,
      64,
    ]);
    expect(fetch.mock.calls[2][0]).toBe("/api/workloads/9/");
    expect(within(figures).getByText("20.827 s")).toBeTruthy();
    expect(within(figures).getByText("38.3 %")).toBeTruthy();
    const memory = screen.getByRole("table", { name: "Memory per GPU" });
    expect(within(memory).getByText("Activations").closest("tr").textContent).toContain("7.5 %");
    expect(within(memory).getByText("Total").closest("tr").textContent).toContain("20 GiB");
    expect(screen.getByTestId("workload-status").textContent).toBe("succeeded");
  });

  it("names the seed records the chosen template's links are read from", async () => {
    mockFetch(json(200, PRESETS));
    render(<Workloads />);
    const system = await screen.findByLabelText("System");
    const hint = document.getElementById(system.getAttribute("aria-describedby"));
    expect(hint.textContent).toBe(
      "NVLink: NVSwitch (HGX H100, NVLink 4), 450 GB/s, 0.600 µs; network: InfiniBand NDR " +
        "400 Gb/s (ConnectX-7) + Quantum-2 QM9700 port, 50 GB/s, 2.990 µs (seed records)",
    );
    fireEvent.change(system, { target: { value: "dgx-b200" } });
    expect(hint.textContent).toBe(""); // a template the answer gives no links for
  });

  it("shows a refused plan's reason beside its field", async () => {
    const reason = "the plan needs 492.1 GiB per GPU (...), more than the GPU's 80.0 GiB";
    mockFetch(json(200, PRESETS), json(400, { memory: [reason] }));
    render(<Workloads />);
    fireEvent.click(await screen.findByRole("button", { name: "Simulate the step" }));
    await waitFor(() => expect(screen.getByRole("alert").textContent).toContain(reason));
    expect(screen.queryByRole("table", { name: "Step figures" })).toBeNull();
  });

  it("sweeps TP x PP in one request, each plan's memory or its reason", async () => {
    const points = [];
    for (const pp of [1, 2, 4, 8, 16]) {
      for (const tp of [1, 2, 4, 8]) {
        points.push(
          points.length === 0
            ? {
                point: { pp, tp },
                invalid: { field: "memory", reason: "the plan needs 900 GiB per GPU" },
              }
            : { point: { pp, tp }, basis: { memory_per_gpu_bytes: 40 * GIB } },
        );
      }
    }
    const fetch = mockFetch(json(200, PRESETS), json(200, { size: 20, valid: 19, points }));
    render(<Workloads />);
    fireEvent.click(await screen.findByRole("button", { name: "Sweep TP x PP (memory)" }));
    const table = await screen.findByRole("table", { name: "Plan sweep" });
    await waitFor(() => expect(within(table).getAllByRole("row")).toHaveLength(21));
    expect(within(table).getAllByRole("row")[1].textContent).toContain(
      "refused — Memory: the plan needs 900 GiB per GPU",
    );
    expect(within(table).getAllByRole("row")[2].textContent).toContain("40 GiB");
    expect(fetch.mock.calls).toHaveLength(2);
    const body = JSON.parse(fetch.mock.calls[1][1].body);
    expect([fetch.mock.calls[1][0], body.axes]).toEqual([
      "/api/workloads/sweep/",
      { pp: [1, 2, 4, 8, 16], tp: [1, 2, 4, 8] },
    ]);
  });
});

describe("Workloads for inference", () => {
  it("launches a batch and shows TTFT, TPOT and throughput with the KV cache", async () => {
    const basis = {
      model: "llama3-70b",
      system: "dgx-h100",
      gpus: 8,
      plan: { tp: 8, pp: 1, batch: 16, input_len: 1024, output_len: 128 },
      memory: { weights: 16 * GIB, kv_cache: 4 * GIB, total: 20 * GIB },
      gpu_memory_bytes: 80 * GIB,
      notes: [],
    };
    const figures = {
      ttft_s: 0.25,
      tpot_s: 0.02,
      request_latency_s: 2.79,
      output_tokens_per_s: 734.1,
      output_tokens_per_s_per_gpu: 91.76,
    };
    const fetch = mockFetch(
      json(200, PRESETS),
      json(201, { simulation: 5, kind: "infer", status: "queued", basis, figures: null }),
      json(200, { simulation: 5, kind: "infer", status: "succeeded", basis, figures }),
    );
    render(<Workloads />);
    fireEvent.change(await screen.findByLabelText("Workload"), { target: { value: "infer" } });
    fireEvent.change(screen.getByLabelText("TP"), { target: { value: "8" } });
    fireEvent.change(screen.getByLabelText("PP"), { target: { value: "1" } });
    expect(screen.queryByLabelText("Global batch")).toBeNull();
    fireEvent.click(screen.getByRole("button", { name: "Simulate the batch" }));
    const table = await screen.findByRole("table", { name: "Inference figures" });
    const body = JSON.parse(fetch.mock.calls[1][1].body);
    expect([body.kind, body.tp, body.pp, body.batch]).toEqual(["infer", 8, 1, 16]);
    expect(within(table).getByText("250.000 ms")).toBeTruthy();
    expect(within(table).getByText("20.000 ms")).toBeTruthy();
    expect(within(table).getByText("734.1")).toBeTruthy();
    const memory = screen.getByRole("table", { name: "Memory per GPU" });
    expect(within(memory).getByText("KV cache").closest("tr").textContent).toContain("5.0 %");
  });
});

const FIGURE = (m) => ({ mean: m, median: m, p90: 2 * m, p99: 3 * m, max: 4 * m });
const SERVED = {
  model: "llama3-70b",
  system: "dgx-h100",
  gpus: 2,
  plan: {
    tp: 2,
    pp: 1,
    requests: 200,
    arrival_rate: 4,
    max_concurrency: null,
    input_len: "1024",
    output_len: "128",
  },
  ttft_s: FIGURE(0.25),
  tpot_s: FIGURE(0.03),
  e2e_latency_s: FIGURE(4),
  queueing_s: FIGURE(0),
  requests_per_s: 3.9,
  output_tokens_per_s: 499.2,
  output_tokens_per_s_per_gpu: 249.6,
  batch: { mean: 31.5, max: 40, tokens_per_iteration: 200 },
  kv_cache: { tokens: 513088, mean_occupancy: 0.05, peak_occupancy: 0.1 },
  preemptions: 0,
  unbounded_queue: false,
  saturation: {
    requests: 1024,
    capacity_requests_per_s: 12,
    saturating_rate: 15,
    sustainable_rate: 12,
    saturating_batch: 180,
    points: [
      { arrival_rate: 12, requests_per_s: 11, ttft_s: FIGURE(0.5), tpot_s: FIGURE(0.05) },
      { arrival_rate: 15, requests_per_s: 12, ttft_s: FIGURE(9), tpot_s: FIGURE(0.06) },
    ].map((p, i) => ({ ...p, batch_mean: 180 + i, unbounded_queue: i === 1 })),
  },
};

describe("Workloads serving", () => {
  it("serves a stream and shows its percentiles, throughput and saturating rate", async () => {
    const fetch = mockFetch(json(200, PRESETS), json(200, SERVED));
    render(<Workloads />);
    fireEvent.change(await screen.findByLabelText("Workload"), { target: { value: "serve" } });
    fireEvent.change(screen.getByLabelText("TP"), { target: { value: "2" } });
    fireEvent.change(screen.getByLabelText("PP"), { target: { value: "1" } });
    fireEvent.click(screen.getByLabelText("Find the saturating rate"));
    fireEvent.click(screen.getByRole("button", { name: "Serve the stream" }));
    const latency = await screen.findByRole("table", { name: "Latency percentiles" });
    const body = JSON.parse(fetch.mock.calls[1][1].body);
    expect(fetch.mock.calls[1][0]).toBe("/api/workloads/serve/");
    expect([body.tp, body.pp, body.arrival_rate, body.saturate, body.batch]).toEqual([
      2,
      1,
      4,
      true,
      undefined,
    ]);
    const ttft = within(latency).getByText("Time to first token").closest("tr");
    expect(ttft.textContent).toContain("250.000 ms");
    const throughput = screen.getByRole("table", { name: "Serving throughput" });
    expect(within(throughput).getByText("Output tokens/s").closest("tr").textContent).toContain(
      "499.2",
    );
    expect(screen.getByTestId("saturation").textContent).toContain("from 15 req/s");
    const sweep = screen.getByRole("table", { name: "Arrival-rate sweep" });
    expect(within(sweep).getByText("grows without bound")).toBeTruthy();
  });

  it("measures as GenAI-Perf does when given an interval, and says what it measured", async () => {
    const measured = {
      ...SERVED,
      plan: { ...SERVED.plan, max_concurrency: 8, measurement_interval_s: 2.5 },
      measurement: { interval_s: 2.5, window_s: 3, windows: 3, stable: true, requests: 51 },
    };
    const fetch = mockFetch(json(200, PRESETS), json(200, measured));
    render(<Workloads />);
    fireEvent.change(await screen.findByLabelText("Workload"), { target: { value: "serve" } });
    const interval = screen.getByLabelText("Measurement interval (s)");
    expect(interval.value).toBe("");
    const hint = document.getElementById(interval.getAttribute("aria-describedby"));
    expect(hint.textContent).toBe("measure as GenAI-Perf does; empty: every request");
    fireEvent.change(interval, { target: { value: "2.5" } });
    fireEvent.change(screen.getByLabelText(/^Clients in flight/), { target: { value: "8" } });
    fireEvent.click(screen.getByRole("button", { name: "Serve the stream" }));
    const throughput = await screen.findByRole("table", { name: "Serving throughput" });
    const body = JSON.parse(fetch.mock.calls[1][1].body);
    expect([body.measurement_interval_s, body.max_concurrency]).toEqual([2.5, 8]);
    const row = within(throughput).getByText("Measured as GenAI-Perf does").closest("tr");
    expect(row.textContent).toContain("51 requests in 3 windows of 3 s");
    expect(row.textContent).not.toContain("not stable");
  });

  it("leaves the interval out when empty and shows its refusal beside it", async () => {
    const reason = "Expected a positive number of seconds, or null (every request measured).";
    const fetch = mockFetch(
      json(200, PRESETS),
      json(200, SERVED),
      json(400, { measurement_interval_s: [reason] }),
    );
    render(<Workloads />);
    fireEvent.change(await screen.findByLabelText("Workload"), { target: { value: "serve" } });
    fireEvent.click(screen.getByRole("button", { name: "Serve the stream" }));
    const throughput = await screen.findByRole("table", { name: "Serving throughput" });
    expect(JSON.parse(fetch.mock.calls[1][1].body)).not.toHaveProperty("measurement_interval_s");
    expect(within(throughput).queryByText("Measured as GenAI-Perf does")).toBeNull();
    const interval = screen.getByLabelText("Measurement interval (s)");
    fireEvent.change(interval, { target: { value: "-1" } });
    fireEvent.click(screen.getByRole("button", { name: "Serve the stream" }));
    await waitFor(() => expect(screen.getAllByRole("alert").length).toBeGreaterThan(0));
    expect(JSON.parse(fetch.mock.calls[2][1].body).measurement_interval_s).toBe(-1);
    expect(interval.closest("label").textContent).toContain(reason);
  });

  it("shows a refused stream's reason beside its field", async () => {
    const reason = "input_len must be a positive whole number or DIST:ARGS ...";
    mockFetch(json(200, PRESETS), json(400, { input_len: [reason] }));
    render(<Workloads />);
    fireEvent.change(await screen.findByLabelText("Workload"), { target: { value: "serve" } });
    fireEvent.click(screen.getByRole("button", { name: "Serve the stream" }));
    await waitFor(() => expect(screen.getAllByRole("alert").length).toBeGreaterThan(0));
    const field = screen.getByLabelText(/^Input tokens/).closest("label, div");
    expect(field.textContent).toContain(reason);
  });
});
