// What the launch and sweep forms read from their choices: label capacities, typed values.

// Return the label names of a system graph with their capacity (multiplicity x count).
export function graphLabels(graph) {
  const caps = {};
  (graph?.nodes || []).forEach((n) => {
    Object.entries(n.labels || {}).forEach(([label, mult]) => {
      caps[label] = (caps[label] || 0) + Number(mult || 0) * Number(n.count || 1);
    });
  });
  return caps;
}

// A number in decimal or exponent notation (not hex, not "Infinity").
const DECIMAL = /^[-+]?(\d+\.?\d*|\.\d+)(e[-+]?\d+)?$/i;

// Return `text` as the variable type `type` reads it; what does not read (a number beyond the
// float range included: JSON would make it null) is sent as typed for the API to judge. An int
// may be written as any number that is whole ("1e5", "2.0"); digits alone are read as they are.
export function coerce(type, text) {
  if (type === "int") {
    const trimmed = String(text).trim();
    const number = Number(trimmed);
    if (trimmed === "" || !Number.isFinite(number)) return text;
    if (/^-?\d+$/.test(trimmed)) return number;
    return DECIMAL.test(trimmed) && Number.isInteger(number) ? number : text;
  }
  if (type === "float")
    return String(text).trim() !== "" && Number.isFinite(Number(text)) ? Number(text) : text;
  if (type === "bool") return text === true || text === "true";
  return text;
}

// Return an optional whole-number field as the API takes it: nothing when blank (the server's
// default), a number when it reads as one, else the text as typed for the API to judge.
export function optionalWhole(text) {
  const trimmed = String(text ?? "").trim();
  if (trimmed === "") return undefined;
  return /^-?\d+$/.test(trimmed) && Number.isSafeInteger(Number(trimmed))
    ? Number(trimmed)
    : trimmed;
}
