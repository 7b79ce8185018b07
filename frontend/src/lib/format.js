// Numbers, times, sizes and energies as the pages show them ("—" for a missing value).

// A number to `digits` significant digits; very large or small ones in exponent form.
export function fmt(value, digits = 4) {
  if (value === null || value === undefined || value === "") return "—";
  if (typeof value !== "number") return String(value);
  if (value === 0) return "0";
  const abs = Math.abs(value);
  if (abs >= 1e6 || abs < 1e-3) return value.toExponential(digits - 1);
  return Number(value.toPrecision(digits)).toString();
}

// Seconds with a readable unit: 0.011998 -> "11.998 ms".
export function fmtTime(seconds) {
  if (seconds === null || seconds === undefined) return "—";
  const abs = Math.abs(seconds);
  if (abs === 0) return "0 s";
  if (abs < 1e-4) return `${(seconds * 1e6).toFixed(3)} µs`;
  if (abs < 1) return `${(seconds * 1e3).toFixed(3)} ms`;
  return `${seconds.toFixed(3)} s`;
}

// Bytes with a binary unit: 2932736 -> "2.80 MiB".
export function fmtBytes(bytes) {
  if (bytes === null || bytes === undefined) return "—";
  const units = ["B", "KiB", "MiB", "GiB", "TiB", "PiB"];
  let value = Number(bytes);
  let unit = 0;
  while (Math.abs(value) >= 1024 && unit < units.length - 1) {
    value /= 1024;
    unit += 1;
  }
  if (unit === 0) return `${Math.round(value)} B`;
  return `${Number.isInteger(value) ? value : value.toFixed(2)} ${units[unit]}`;
}

// Joules, in mJ below one joule.
export function fmtEnergy(joules) {
  if (joules === null || joules === undefined) return "—";
  if (Math.abs(joules) < 1) return `${(joules * 1e3).toFixed(3)} mJ`;
  return `${joules.toFixed(3)} J`;
}
