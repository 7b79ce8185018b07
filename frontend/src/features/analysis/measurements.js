// Measured against predicted: the validation kit's measurements.csv (validation/, one row per
// repetition) matched to simulated runs by their variables and the GPU they ran on, with the
// error of each point.

// The kit's columns for the Listing 5 application's variables; any other variable matches a
// column of its own name, compared without case and underscores.
export const COLUMN_ALIASES = {
  N: "n",
  blockSz: "block_size",
  blockSize: "block_size",
  gridSize: "grid_size",
  computeIntensity: "compute_intensity",
  occupancy: "active_warps_per_sm",
};

// What can be compared: a measured column (or the sum of several) and the same figure of a run.
export const METRICS = [
  {
    key: "kernel",
    label: "Kernel time",
    columns: ["kernel_s"],
    predicted: (result) => sumOf(result, (t) => t.kind === "compute"),
  },
  {
    key: "htd",
    label: "Host-to-device copies",
    columns: ["htd_x_s", "htd_y_s"],
    predicted: (result) => sumOf(result, (t) => isCopy(t, "HostToDevice")),
  },
  {
    key: "dth",
    label: "Device-to-host copy",
    columns: ["dth_s"],
    predicted: (result) => sumOf(result, (t) => isCopy(t, "DeviceToHost")),
  },
  {
    key: "app",
    label: "Whole application",
    columns: ["app_s"],
    predicted: (result) => result.overall_time_s,
  },
];

const isCopy = (t, direction) =>
  t.kind === "transfer" && t.direction === direction && (t.size || 0) > 0;

function sumOf(result, keep) {
  const entries = (result.timeline || []).filter(keep);
  return entries.length ? entries.reduce((s, t) => s + (t.end_s - t.start_s), 0) : null;
}

const normal = (name) => String(name).toLowerCase().replaceAll("_", "");

// Parse CSV text (a header row, comma-separated, no quoted commas: as the kit writes it) into
// {columns, rows}; numbers become numbers. {error} when there is no header or no data row.
export function parseCsv(text) {
  const lines = String(text || "")
    .split(/\r?\n/)
    .filter((l) => l.trim());
  if (lines.length < 2) return { error: "the file needs a header row and at least one data row" };
  const columns = lines[0].split(",").map((c) => c.trim());
  const rows = [];
  for (let i = 1; i < lines.length; i += 1) {
    const cells = lines[i].split(",");
    if (cells.length !== columns.length)
      return {
        error: `row ${i + 1} has ${cells.length} values, the header ${columns.length} columns`,
      };
    const row = {};
    columns.forEach((c, j) => {
      const cell = cells[j].trim();
      const number = Number(cell);
      row[c] = cell !== "" && Number.isFinite(number) ? number : cell;
    });
    rows.push(row);
  }
  return { columns, rows };
}

// The column each variable is matched by ({variable: column}), for the variables the CSV has.
export function matchColumns(variables, columns) {
  const byNormal = Object.fromEntries(columns.map((c) => [normal(c), c]));
  const mapping = {};
  for (const name of variables) {
    const alias = COLUMN_ALIASES[name];
    const column = alias && columns.includes(alias) ? alias : byNormal[normal(name)];
    if (column) mapping[name] = column;
  }
  return mapping;
}

// The measured value of one row for `metric`, or null when a column is missing or not a number.
export function measuredValue(row, metric) {
  let total = 0;
  for (const column of metric.columns) {
    if (typeof row[column] !== "number") return null;
    total += row[column];
  }
  return total;
}

// One point per run: its variables, the predicted and the mean measured value of the rows whose
// matched columns equal the run's variables (and of `scenario`, when given), the repetitions
// and the relative error (predicted - measured) / measured. Runs without rows are left out.
export function comparePoints(runs, rows, mapping, metric, scenario = "") {
  const points = [];
  for (const run of runs) {
    const matching = rows.filter(
      (row) =>
        (!scenario || row.scenario === scenario) &&
        Object.entries(mapping).every(([name, column]) => row[column] === run.variables[name]),
    );
    const values = matching.map((r) => measuredValue(r, metric)).filter((v) => v !== null);
    const predicted = metric.predicted(run.result);
    if (!values.length || typeof predicted !== "number") continue;
    const measured = values.reduce((s, v) => s + v, 0) / values.length;
    points.push({
      id: run.id,
      variables: run.variables,
      predicted,
      measured,
      repetitions: values.length,
      error: (predicted - measured) / measured,
    });
  }
  return points;
}

// Columns naming the GPU a row was measured on (compared without case and underscores).
const GPU_COLUMNS = ["gpu", "device", "devicename", "gpuname"];

// Return the CSV's column naming the GPU of each row, or null (the kit writes none: its GPU is
// the one the user names).
export function gpuColumn(columns) {
  return (columns || []).find((c) => GPU_COLUMNS.includes(normal(c))) ?? null;
}

// The GPUs the runs ran on, each once, in first-seen order (empty names left out).
export function runGpus(runs) {
  return [...new Set(runs.map((r) => r.gpu).filter(Boolean))];
}

const sameGpu = (a, b) =>
  String(a)
    .toLowerCase()
    .replace(/^nvidia\s+/, "") ===
  String(b)
    .toLowerCase()
    .replace(/^nvidia\s+/, "");

export const MATCH_MESSAGES = {
  chooseGpu: (gpus) =>
    `The runs ran on ${gpus.length} GPUs (${gpus.join(", ")}) and the CSV has no GPU column: ` +
    "choose the GPU it was measured on.",
  ambiguous: (ids, shared, differ) =>
    `Runs ${ids.map((id) => `#${id}`).join(", ")} have the same ${shared || "variables"} but ` +
    `differ in ${differ}; the CSV has no column that tells them apart, so its rows would match ` +
    "each of them. Choose the GPU the CSV was measured on, or compare a sweep whose runs " +
    "differ only in the CSV's columns.",
};

// Return {points, error}: the points of comparePoints, each with the GPU of its run, for the
// runs the CSV can be matched to, or an error (and no points) when a row would match several
// runs. Rows are matched by the variables of `mapping`, by `scenario` when given, and by the
// GPU: a GPU column of the CSV when it has one, else `gpu` (the GPU it was measured on), which
// must be named when the runs ran on several.
export function matchMeasurements(runs, rows, mapping, metric, { scenario = "", gpu = "" } = {}) {
  const column = gpuColumn(Object.keys(rows[0] || {}));
  const gpus = runGpus(runs);
  let groups; // [[runs, rows, gpu name]]
  if (column) {
    groups = gpus.map((name) => [
      runs.filter((r) => r.gpu === name),
      rows.filter((row) => sameGpu(row[column], name)),
      name,
    ]);
  } else if (gpu) {
    groups = [[runs.filter((r) => r.gpu === gpu), rows, gpu]];
  } else if (gpus.length > 1) {
    return { points: [], error: MATCH_MESSAGES.chooseGpu(gpus) };
  } else {
    groups = [[runs, rows, gpus[0] || ""]];
  }
  for (const [groupRuns] of groups) {
    const error = ambiguity(groupRuns, mapping);
    if (error) return { points: [], error };
  }
  const points = groups.flatMap(([groupRuns, groupRows, name]) =>
    comparePoints(groupRuns, groupRows, mapping, metric, scenario).map((p) => ({
      ...p,
      gpu: name,
    })),
  );
  return { points, error: null };
}

// Return the message for runs the CSV cannot tell apart (the same values of every matched
// variable), naming what differs between them; null when each run has values of its own.
function ambiguity(runs, mapping) {
  const names = Object.keys(mapping);
  const byKey = new Map();
  for (const run of runs) {
    const key = JSON.stringify(names.map((n) => run.variables[n]));
    byKey.set(key, [...(byKey.get(key) || []), run]);
  }
  for (const same of byKey.values()) {
    if (same.length < 2) continue;
    const shared = names.map((n) => `${n} = ${same[0].variables[n]}`).join(", ");
    const hardware = [...new Set(same.map((r) => r.hardware || r.gpu).filter(Boolean))];
    const others = Object.keys(same[0].variables).filter(
      (n) =>
        !names.includes(n) && new Set(same.map((r) => JSON.stringify(r.variables[n]))).size > 1,
    );
    const differ = [
      hardware.length > 1 ? `hardware (${hardware.join(", ")})` : null,
      others.length ? `variables the CSV has no column for (${others.join(", ")})` : null,
    ]
      .filter(Boolean)
      .join(" and ");
    return MATCH_MESSAGES.ambiguous(
      same.map((r) => r.id),
      shared,
      differ || "nothing the CSV shows",
    );
  }
  return null;
}

// The mean of the points' absolute relative errors, or null without points.
export function meanAbsError(points) {
  if (!points.length) return null;
  return points.reduce((s, p) => s + Math.abs(p.error), 0) / points.length;
}

// The variable to draw along the x axis: the first whose value differs between the points.
export function xVariable(points, names) {
  return (
    names.find((name) => new Set(points.map((p) => p.variables[name])).size > 1) ?? names[0] ?? null
  );
}

// The kernel calibration's measurements (POST /api/components/{id}/calibrate/, kind kernel):
// the predicted times stand for the model's estimate.
export function kernelCalibration(points) {
  return points.map((p) => ({ estimated_s: p.predicted, measured_s: p.measured }));
}
