// Topology templates in the system editor (docs/topologies.md, simulator/topology.py): a
// network of many instances described by a few nodes with counts. A template names an
// endpoints node (GPUs, NICs) and the nodes of its switches or links; the simulator expands and
// routes it. Here: the kinds and their parameters, the sizes a template needs (the same rules as
// simulator/topology.py, so the editor can show the expanded size and give each new switch or
// link node its count before the server checks it), and the template's graph entry.
// Pure functions; no React.

// Each kind: its label, parameters with their defaults, routings (the first is the default).
// The nodes a template adds are the keys of templateSize's counts.
export const TEMPLATE_KINDS = {
  fatTree: {
    label: "Fat-tree (k levels)",
    params: { down: "32, 32", up: "1, 32" },
    routings: ["dmodk", "ecmp"],
  },
  railLeafSpine: {
    label: "Rail-optimised leaf/spine",
    params: { rails: 8, servers: 4, serversPerLeaf: 4, spines: 4 },
    routings: ["dmodk", "ecmp"],
  },
  ring: { label: "Ring", params: { size: 8 }, routings: ["shortest", "forward"] },
  torus: { label: "Torus (2-D or 3-D)", params: { dims: "4, 4" }, routings: ["dor"] },
  nvswitch: {
    label: "NVSwitch domain",
    params: { domains: 1, domainSize: 8 },
    routings: ["direct"],
  },
  switch: {
    label: "Switch domain (PCIe, top-of-rack)",
    params: { domains: 1, domainSize: 4 },
    routings: ["direct"],
  },
};

// "32, 32" -> [32, 32]; null when any entry is not a whole number >= 1.
export function parseList(text) {
  const parts = String(text)
    .split(/[,x\s]+/)
    .filter(Boolean)
    .map(Number);
  return parts.length && parts.every((v) => Number.isInteger(v) && v >= 1) ? parts : null;
}

const whole = (value) => Number.isInteger(Number(value)) && Number(value) >= 1;
const product = (values) => values.reduce((a, b) => a * b, 1);

// Return what a template of `kind` with `params` expands to: {endpoints, counts: {role: n},
// links, fields: {template fields}} or {error: {param: message}} naming the parameter.
export function templateSize(kind, params) {
  if (kind === "fatTree") {
    const down = parseList(params.down);
    const up = parseList(params.up);
    if (!down) return { error: { down: "Expected whole numbers, one per level." } };
    if (!up) return { error: { up: "Expected whole numbers, one per level." } };
    if (down.length !== up.length)
      return { error: { up: `Expected ${down.length} numbers, one per level of down.` } };
    if (down.length > 4) return { error: { down: "At most 4 levels." } };
    const endpoints = product(down);
    const counts = {};
    let links = 0;
    let parents = 1;
    let below = 1;
    down.forEach((m, level) => {
      links += (endpoints / below) * parents * up[level];
      parents *= up[level];
      below *= m;
      counts[`level${level + 1}`] = parents * (endpoints / below);
    });
    return { endpoints, counts, links, fields: { down, up } };
  }
  if (kind === "railLeafSpine") {
    for (const key of ["rails", "servers", "serversPerLeaf", "spines"])
      if (!whole(params[key])) return { error: { [key]: "Expected a whole number >= 1." } };
    const [rails, servers, perLeaf, spines] = ["rails", "servers", "serversPerLeaf", "spines"].map(
      (key) => Number(params[key]),
    );
    const leaves = rails * Math.ceil(servers / perLeaf);
    return {
      endpoints: rails * servers,
      counts: { leaf: leaves, spine: spines },
      links: rails * servers + leaves * spines,
      fields: { rails, spines, serversPerLeaf: perLeaf },
    };
  }
  if (kind === "ring") {
    if (!whole(params.size) || Number(params.size) < 2)
      return { error: { size: "Expected a whole number >= 2." } };
    const n = Number(params.size);
    return { endpoints: n, counts: { link: n }, links: 2 * n, fields: {} };
  }
  if (kind === "torus") {
    const dims = parseList(params.dims);
    if (!dims || dims.length < 2 || dims.length > 3 || dims.some((d) => d < 2))
      return { error: { dims: "Expected 2 or 3 sizes, each >= 2." } };
    const n = product(dims);
    return {
      endpoints: n,
      counts: { link: n * dims.length },
      links: 2 * n * dims.length,
      fields: { dims },
    };
  }
  for (const key of ["domains", "domainSize"])
    if (!whole(params[key])) return { error: { [key]: "Expected a whole number >= 1." } };
  const domains = Number(params.domains);
  const domainSize = Number(params.domainSize);
  return {
    endpoints: domains * domainSize,
    counts: { switch: domains },
    links: domains * domainSize,
    fields: { domainSize },
  };
}

// Return the graph entry of a template: {id, kind, endpoints, <role>: node id(s), params,
// routing}. `roleNodes` maps each role (a fat-tree: level1, level2, ...) to its node id.
export function templateEntry(id, kind, endpoints, roleNodes, size, routing) {
  const entry = { id, kind, endpoints };
  if (kind === "fatTree") {
    entry.switches = Object.keys(size.counts).map((level) => roleNodes[level]);
  } else {
    Object.keys(size.counts).forEach((role) => {
      entry[role] = roleNodes[role];
    });
  }
  return { ...entry, ...size.fields, routing };
}

// One line for the editor: "1024 endpoints; 64 switches or links in 2 nodes; 2048 links".
export function describeSize(size) {
  const instances = Object.values(size.counts).reduce((a, b) => a + b, 0);
  const nodes = Object.keys(size.counts).length;
  return `${size.endpoints} endpoints; ${instances} switch or link instances in ${nodes} node${
    nodes === 1 ? "" : "s"
  }; ${size.links} links`;
}
