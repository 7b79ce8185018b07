// The Workloads page's request and figures (webapp/studio/services/workloads.py).
import { fmt, fmtBytes, fmtTime } from "../../lib/format.js";

// How a shipped model config and a cluster template of GET /api/workloads/presets/ read in
// a picker (the Workloads page's and the new-study form's).
export function modelText(model) {
  return `${model.name} (${fmt(model.params / 1e9, 3)} B)`;
}

export function systemText(system) {
  return `${system.name} (${system.gpu}, ${fmtBytes(system.gpu_memory_bytes)})`;
}

// The seed records a template's links are read from, with their rate per direction and
// latency: "NVLink: NVSwitch (HGX H100, NVLink 4), 450 GB/s, 0.600 µs; network: ...".
export function systemLinksText(system) {
  const links = system.links;
  if (!links) return "";
  const part = (name, link) =>
    `${name}: ${link.records.join(" + ")}, ${fmt(link.bytes_per_s / 1e9)} GB/s, ` +
    fmtTime(link.latency_s);
  return `${part("NVLink", links.nvlink)}; ${part("network", links.network)} (seed records)`;
}

export const PLAN_FIELDS = [
  ["gpus", "GPUs"],
  ["tp", "TP"],
  ["pp", "PP"],
  ["cp", "CP"],
  ["ep", "EP"],
  ["vp", "Virtual stages (VP)"],
  ["mbs", "Micro-batch"],
  ["gbs", "Global batch"],
];

export const INFER_FIELDS = [
  ["tp", "TP"],
  ["pp", "PP"],
  ["batch", "Batch"],
  ["input_len", "Input tokens"],
  ["output_len", "Output tokens"],
];

// A request stream served with continuous batching (POST /api/workloads/serve/); a blank
// optional field is left out (the server's default).
export const SERVE_FIELDS = [
  ["tp", "TP"],
  ["pp", "PP"],
  ["requests", "Requests"],
  ["arrival_rate", "Arrival rate (req/s, blank: all at once)"],
  ["max_concurrency", "Clients in flight (blank: no limit)"],
  ["measurement_interval_s", "Measurement interval (s)"],
  ["input_len", "Input tokens (N or uniform:LOW:HIGH, normal:MEAN:STD, exponential:MEAN)"],
  ["output_len", "Output tokens (as input)"],
  ["seed", "Seed"],
  ["max_batch", "Max batch (running requests)"],
  ["max_batched_tokens", "Max tokens per iteration"],
];
const SERVE_OPTIONAL = ["arrival_rate", "max_concurrency", "measurement_interval_s"];
// The stream's fields that take a number with a fraction; the others take whole numbers.
export const SERVE_DECIMAL = ["arrival_rate", "measurement_interval_s"];
// A line under a field that its label cannot say.
export const SERVE_HINTS = {
  measurement_interval_s: "measure as GenAI-Perf does; empty: every request",
};

export const MODEL_FIELDS = ["layers", "hidden", "ffn", "heads", "kv_heads", "vocab", "seq"];

export const MEMORY_PARTS = [
  ["weights", "Weights"],
  ["gradients", "Gradients"],
  ["optimizer", "Optimizer state"],
  ["activations", "Activations"],
  ["kv_cache", "KV cache"],
];

export const FIELD_NAMES = {
  model: "Model",
  system: "System",
  memory: "Memory",
  plan: "Plan",
  data_parallel: "Data parallelism",
  recompute: "Recomputation",
  precision: "Precision",
  seq: "Sequence",
  kind: "Workload",
  ...Object.fromEntries(PLAN_FIELDS),
  ...Object.fromEntries(INFER_FIELDS),
  ...Object.fromEntries(SERVE_FIELDS),
  gpu_memory_utilization: "GPU memory share",
  chunked_prefill: "Chunked prefill",
  saturate: "Saturating rate",
};

export const INITIAL = {
  kind: "train",
  batch: "16",
  input_len: "1024",
  output_len: "128",
  requests: "200",
  arrival_rate: "4",
  max_concurrency: "",
  measurement_interval_s: "",
  seed: "0",
  max_batch: "256",
  max_batched_tokens: "8192",
  saturate: false,
  model: "llama3-70b",
  system: "dgx-h100",
  gpus: "64",
  tp: "4",
  pp: "8",
  cp: "1",
  ep: "1",
  vp: "1",
  mbs: "1",
  gbs: "128",
  seq: "",
  data_parallel: "zero1",
  recompute: "selective",
  precision: "bf16",
  custom: { layers: "", hidden: "", ffn: "", heads: "", kv_heads: "", vocab: "", seq: "" },
};

// A whole number from a text field; anything else is sent as typed, for the server to name.
function number(text) {
  const trimmed = String(text).trim();
  return /^-?\d+$/.test(trimmed) ? Number(trimmed) : trimmed;
}

// A number (whole or not) from a text field, or the text as typed.
function decimal(text) {
  const trimmed = String(text).trim();
  return /^-?\d+(\.\d+)?([eE]-?\d+)?$/.test(trimmed) ? Number(trimmed) : trimmed;
}

// The body of POST /api/workloads/serve/ from the form's state.
export function serveBody(form) {
  const { kind: _kind, ...body } = planBody({ ...form, kind: "infer" });
  for (const name of ["batch", "input_len", "output_len"]) delete body[name];
  for (const [field] of SERVE_FIELDS) {
    if (SERVE_OPTIONAL.includes(field) && !String(form[field]).trim()) continue;
    body[field] = SERVE_DECIMAL.includes(field) ? decimal(form[field]) : number(form[field]);
  }
  body.saturate = Boolean(form.saturate);
  return body;
}

// The latency table of a served stream: one row per figure, its median, p90 and p99.
export function percentileRows(result) {
  return [
    ["ttft_s", "Time to first token"],
    ["tpot_s", "Time per output token"],
    ["e2e_latency_s", "End-to-end latency"],
    ["queueing_s", "Queueing"],
  ].map(([key, label]) => ({
    key,
    label,
    median: result[key].median,
    p90: result[key].p90,
    p99: result[key].p99,
  }));
}

// The body of POST /api/workloads/ (and /check/) from the form's state.
export function planBody(form) {
  const body = {
    model:
      form.model === "custom"
        ? {
            name: "custom",
            ...Object.fromEntries(MODEL_FIELDS.map((f) => [f, number(form.custom[f])])),
          }
        : form.model,
    system: form.system,
    precision: form.precision,
  };
  if (form.kind === "infer") {
    body.kind = "infer";
    for (const [field] of INFER_FIELDS) body[field] = number(form[field]);
    return body;
  }
  body.data_parallel = form.data_parallel;
  body.recompute = form.recompute;
  for (const [field] of PLAN_FIELDS) body[field] = number(form[field]);
  if (String(form.seq).trim()) body.seq = number(form.seq);
  return body;
}

// The memory parts present in `memory`, each with its share of the GPU's memory.
export function memoryRows(memory, capacity) {
  return MEMORY_PARTS.filter(([key]) => memory && memory[key] !== undefined).map(
    ([key, label]) => ({ key, label, bytes: memory[key], share: memory[key] / capacity }),
  );
}

export const FINAL_STATUSES = ["succeeded", "failed", "cancelled"];

// The body of a launched comparison sweep (POST /api/workloads/sweep/ with `launch`): the
// plan of the form with the templates, GPU counts, TP and PP as axes ("64, 128" lists), and
// a prediction interval of `samples` draws when above 0. One sweep group on the server: its
// page plots step time against cost per step with the Pareto front and the constraints.
export function compareBody(form, compare) {
  const list = (text) =>
    String(text)
      .split(",")
      .map((part) => part.trim())
      .filter(Boolean)
      .map(number);
  const body = {
    ...planBody(form),
    name: compare.name || undefined,
    axes: {
      system: compare.systems,
      gpus: list(compare.gpus),
      tp: list(compare.tp),
      pp: list(compare.pp),
    },
    launch: true,
  };
  const samples = number(compare.samples);
  if (samples > 0) body.uncertainty = { samples, seed: 0 };
  return body;
}
