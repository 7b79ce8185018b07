// Memory hierarchy (simulator/memory_spec.py): which hardware types start a memory path, which
// may be its next level, and the choices of a cache's coherence and a fabric's topology.
export const MEMORY_KINDS = ["CACHE", "FABRIC", "MEMORY"];
export const PATH_SOURCES = ["CPU", "GPU", "CACHE"];
export const NEXT_LEVEL_KINDS = ["CACHE", "MEMORY"];
export const COHERENCE = [
  ["none", "none: the caches below are not kept coherent"],
  ["mesi", "MESI directory: keeps the caches below it coherent"],
];
export const TOPOLOGIES = [
  ["crossbar", "crossbar: one hop between any two ports"],
  ["ring", "ring: the shorter way round"],
  ["mesh", "mesh: a grid, hops by Manhattan distance"],
];
export const MEMORY_EDGE_COLOR = "#7048e8";

export function memoryKindText(data) {
  if (data.hardwareType === "CACHE")
    return data.coherence === "mesi" ? "cache · MESI directory" : "cache";
  if (data.hardwareType === "FABRIC") return `fabric · ${data.topology || "crossbar"}`;
  return "memory";
}
