import { describe, expect, it } from "vitest";
import { INITIAL, memoryRows, planBody } from "./workloads.js";

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
