// A model's validated architectures (docs/model-validity.md) as its editor shows them: one
// line of GPU family names ("Maxwell, Pascal"). The server checks the names and says which
// families it knows; an empty line declares nothing, and such a model is never judged.

// Return the line for the list `architectures` (anything else: an empty line).
export function formatArchitectures(architectures) {
  return Array.isArray(architectures) ? architectures.join(", ") : "";
}

// Return the list a line names: family names are single words, so commas and spaces both
// separate them; empty entries are dropped.
export function parseArchitectures(text) {
  return String(text ?? "")
    .split(/[\s,;]+/)
    .filter(Boolean);
}
