// The kernel analyzer's form: what the page sends to POST /api/analyze/.

export const ARCHITECTURES = [
  "sm_52",
  "sm_61",
  "sm_70",
  "sm_75",
  "sm_80",
  "sm_86",
  "sm_89",
  "sm_90",
];

// The four parameters of Volkov's model the analyzer derives (000 section 4), in its names.
export const PARAMETERS = [
  ["INS_cuda", "INS (CUDA-core instructions per warp)"],
  ["INS_issued", "Issued instructions per warp"],
  ["GMem_bytes", "GMem bytes per warp"],
  ["Lat_bound", "Lat_bound (cycles)"],
];

// Parse "a=4, b=16" into {a: 4, b: 16}; return {trips} or {error} naming the bad entry.
export function parseTrips(text) {
  const trips = {};
  for (const part of String(text || "")
    .split(/[,\s]+/)
    .filter(Boolean)) {
    const found = /^([a-z])=(\d+)$/.exec(part);
    if (!found) return { error: `"${part}" is not a trip count like a=4 (loops are a, b, c, …)` };
    trips[found[1]] = Number(found[2]);
  }
  return { trips };
}

// The request body from the form's fields; empty optional fields are left out.
export function analyzeRequest({ language, source, arch, trips, blockSize, kernel }) {
  const body = { language, source, trips };
  if (arch) body.arch = arch;
  if (kernel) body.kernel = kernel;
  if (blockSize !== "" && blockSize !== undefined && blockSize !== null)
    body.block_size = Number(blockSize);
  return body;
}

// The SVG text as an image address: drawn by the browser as a picture, never run as a page.
export function svgDataUrl(svg) {
  return `data:image/svg+xml;charset=utf-8,${encodeURIComponent(svg)}`;
}
