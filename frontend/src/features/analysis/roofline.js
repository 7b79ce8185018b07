// What the run's analysis reads from a result: each GPU's roofline with its kernels' points,
// the kernels' bounds, and power over time (the simulator's `rooflines`, `kernels`, `power`).

// The issue's classes of what limits a kernel (simulator/models/roofline.py BOUND_CLASSES).
export const BOUND_NAMES = {
  latency: "latency",
  issue: "issue",
  memory: "memory",
  compute: "compute",
  launch: "launch",
};

// Powers of ten covering [lo, hi] (both > 0): the ticks of a log axis.
export function logTicks(lo, hi) {
  if (!(lo > 0) || !(hi > 0) || !Number.isFinite(lo) || !Number.isFinite(hi)) return [];
  const ticks = [];
  for (let e = Math.floor(Math.log10(lo)); e <= Math.ceil(Math.log10(hi)); e += 1)
    ticks.push(10 ** e);
  return ticks;
}

// The axes' domain of one roofline chart: intensities and performances, in whole decades, so
// the ridge and every kernel's point are inside with a decade of room on each side.
export function rooflineDomain(roof, kernels) {
  const xs = [roof.ridge_intensity, ...kernels.map((k) => k.intensity)];
  const ys = [
    roof.peak_ops_per_s,
    ...(roof.ceilings || []).map((c) => c.ops_per_s),
    ...kernels.map((k) => k.ops_per_s),
  ];
  const decade = (v, dir) => 10 ** (dir < 0 ? Math.floor(Math.log10(v)) : Math.ceil(Math.log10(v)));
  const x0 = decade(Math.min(...xs) / 10, -1);
  const x1 = decade(Math.max(...xs) * 10, 1);
  const y0 = decade(Math.min(...ys, x0 * roof.peak_bytes_per_s), -1);
  const y1 = decade(Math.max(...ys) * 2, 1);
  return { x: [x0, x1], y: [y0, y1] };
}

// The roof as a polyline from x0 to x1: the memory slope up to the ridge, then flat.
export function roofPoints(roof, x0, x1) {
  const ridge = roof.ridge_intensity;
  const at = (x) => Math.min(roof.peak_ops_per_s, x * roof.peak_bytes_per_s);
  if (ridge <= x0 || ridge >= x1)
    return [
      [x0, at(x0)],
      [x1, at(x1)],
    ];
  return [
    [x0, at(x0)],
    [ridge, roof.peak_ops_per_s],
    [x1, roof.peak_ops_per_s],
  ];
}

// Every further ceiling and memory roof as a line segment within [x0, x1]: each compute ceiling
// (FP64, tensor by precision; FP32 is the roof itself) flat from where the fastest memory roof
// reaches it, each memory roof but DRAM's (shared/L1, L2) a slope up to the highest ceiling.
export function ceilingLines(roof, x0, x1) {
  const ceilings = (roof.ceilings || []).filter((c) => c.name !== "FP32");
  const roofs = (roof.memory_roofs || []).filter((m) => m.name !== "DRAM");
  const top = Math.max(roof.peak_ops_per_s, ...ceilings.map((c) => c.ops_per_s));
  const fastest = Math.max(roof.peak_bytes_per_s, ...roofs.map((m) => m.bytes_per_s));
  const lines = [];
  for (const c of ceilings) {
    const start = Math.min(Math.max(c.ops_per_s / fastest, x0), x1);
    lines.push({
      kind: "compute",
      name: c.name,
      points: [
        [start, c.ops_per_s],
        [x1, c.ops_per_s],
      ],
    });
  }
  for (const m of roofs) {
    const end = Math.min(Math.max(top / m.bytes_per_s, x0), x1);
    lines.push({
      kind: "memory",
      name: m.name,
      points: [
        [x0, x0 * m.bytes_per_s],
        [end, end * m.bytes_per_s],
      ],
    });
  }
  return lines;
}

// Each GPU node's roofline with the kernels that ran on it and have a point.
export function rooflineCharts(result) {
  const kernels = result?.kernels || [];
  return (result?.rooflines || []).map((roof) => ({
    roof,
    kernels: kernels.filter((k) => k.node === roof.node && k.intensity > 0 && k.ops_per_s > 0),
  }));
}

// The bound of a kernel in words: its class, and the model's own name when it differs.
export function boundLabel(kernel) {
  const kind = BOUND_NAMES[kernel.bound_class];
  const raw = kernel.bound ? String(kernel.bound).replaceAll("_", " ") : "";
  if (!kind) return raw || "not given by the model";
  return raw && raw !== kind ? `${kind} (${raw})` : kind;
}

// A series of power steps [[t, w], ...] as the corners of its staircase, for a polyline.
export function stepCorners(points) {
  const corners = [];
  points.forEach(([t, w], i) => {
    if (i > 0) corners.push([t, points[i - 1][1]]);
    corners.push([t, w]);
  });
  return corners;
}

// The energy under a power staircase [J] (equal to the component's energy when no timeline
// entry was dropped).
export function stepEnergy(points) {
  let energy = 0;
  for (let i = 1; i < points.length; i += 1)
    energy += (points[i][0] - points[i - 1][0]) * points[i - 1][1];
  return energy;
}
