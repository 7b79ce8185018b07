import { describe, expect, it } from "vitest";
import {
  INITIAL,
  compareBody,
  memoryRows,
  percentileRows,
  planBody,
  serveBody,
} from "./workloads.js";

describe("planBody", () => {
  it("sends a preset by name and the plan's numbers as numbers", () => {
    const body = planBody(INITIAL);
    expect(body).toEqual({
      model: "llama3-70b",
      system: "dgx-h100",
      data_parallel: "zero1",
      recompute: "selective",
      precision: "bf16",
      gpus: 64,
      tp: 4,
      pp: 8,
      cp: 1,
      ep: 1,
      vp: 1,
      mbs: 1,
      gbs: 128,
    });
  });
  it("sends a custom config's fields, the sequence when given and bad text as typed", () => {
    const custom = { layers: "2", hidden: "512", ffn: "2048", heads: "8", kv_heads: "8" };
    const form = { ...INITIAL, model: "custom", custom: { ...custom, vocab: "1000", seq: "x" } };
    const body = planBody({ ...form, seq: "2048", tp: "two" });
    expect(body.model).toEqual({
      name: "custom",
      layers: 2,
      hidden: 512,
      ffn: 2048,
      heads: 8,
      kv_heads: 8,
      vocab: 1000,
      seq: "x",
    });
    expect([body.seq, body.tp]).toEqual([2048, "two"]);
  });
});

describe("planBody for inference", () => {
  it("sends the kind, the replica's TP and PP and the batch's lengths only", () => {
    const body = planBody({ ...INITIAL, kind: "infer", tp: "8", pp: "1" });
    expect(body).toEqual({
      kind: "infer",
      model: "llama3-70b",
      system: "dgx-h100",
      precision: "bf16",
      tp: 8,
      pp: 1,
      batch: 16,
      input_len: 1024,
      output_len: 128,
    });
  });
});

describe("memoryRows", () => {
  it("lists the parts present with their share of the GPU's memory", () => {
    const rows = memoryRows({ weights: 20, gradients: 40, total: 60 }, 80);
    expect(rows.map((r) => [r.key, r.share])).toEqual([
      ["weights", 0.25],
      ["gradients", 0.5],
    ]);
  });
});

describe("serveBody", () => {
  it("sends the stream's fields, a rate as a decimal, and leaves blank options out", () => {
    const form = { ...INITIAL, kind: "serve", tp: "2", arrival_rate: "2.5" };
    const body = serveBody({ ...form, input_len: "uniform:256:1024", saturate: true });
    expect(body).toEqual({
      model: "llama3-70b",
      system: "dgx-h100",
      precision: "bf16",
      tp: 2,
      pp: 8,
      requests: 200,
      arrival_rate: 2.5,
      input_len: "uniform:256:1024",
      output_len: 128,
      seed: 0,
      max_batch: 256,
      max_batched_tokens: 8192,
      saturate: true,
    });
    const closed = serveBody({ ...form, arrival_rate: " ", max_concurrency: "16" });
    expect([closed.arrival_rate, closed.max_concurrency, closed.saturate]).toEqual([
      undefined,
      16,
      false,
    ]);
    expect(serveBody({ ...form, arrival_rate: "fast" }).arrival_rate).toBe("fast");
    const measured = serveBody({ ...form, measurement_interval_s: " 100 " });
    expect(measured.measurement_interval_s).toBe(100);
    expect(serveBody({ ...form, measurement_interval_s: "2.5" }).measurement_interval_s).toBe(2.5);
    expect(serveBody({ ...form, measurement_interval_s: "soon" }).measurement_interval_s).toBe(
      "soon",
    );
  });
});

describe("percentileRows", () => {
  it("gives each latency's median, p90 and p99 in order", () => {
    const figure = (m) => ({ mean: m, median: m, p90: 2 * m, p99: 3 * m, max: 4 * m });
    const result = {
      ttft_s: figure(1),
      tpot_s: figure(0.1),
      e2e_latency_s: figure(10),
      queueing_s: figure(0),
    };
    const rows = percentileRows(result);
    expect(rows.map((r) => r.key)).toEqual(["ttft_s", "tpot_s", "e2e_latency_s", "queueing_s"]);
    expect([rows[2].median, rows[2].p90, rows[2].p99]).toEqual([10, 20, 30]);
  });
});

describe("compareBody", () => {
  const compare = {
    name: "70B",
    systems: ["dgx-h100", "dgx-b200"],
    gpus: "64, 128",
    tp: "4,8",
    pp: " 4 , 8 ",
    samples: "4",
  };

  it("launches the plan over templates, GPUs, TP and PP as one sweep with intervals", () => {
    const body = compareBody({ ...INITIAL, model: "llama3-70b" }, compare);
    expect(body.launch).toBe(true);
    expect(body.model).toBe("llama3-70b");
    expect(body.axes).toEqual({
      system: ["dgx-h100", "dgx-b200"],
      gpus: [64, 128],
      tp: [4, 8],
      pp: [4, 8],
    });
    expect(body.uncertainty).toEqual({ samples: 4, seed: 0 });
    expect(body.name).toBe("70B");
  });

  it("asks for no interval with 0 samples", () => {
    expect(compareBody(INITIAL, { ...compare, samples: "0" }).uncertainty).toBeUndefined();
  });
});
