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

// Return `text` as the variable type `type` reads it; what does not read (a number beyond the
// float range included: JSON would make it null) is sent as typed for the API to judge.
export function coerce(type, text) {
  if (type === "int")
    return /^-?\d+$/.test(String(text).trim()) && Number.isFinite(Number(text))
      ? Number(text)
      : text;
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
