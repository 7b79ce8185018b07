// The choices of a hardware record's recommended model: the built-in computational models
// (the API's /api/models/?builtin=true; the server accepts no other name), by name.

// Return the names to offer: the built-in models' names in order, and the record's `current`
// name where the list lacks it (not loaded yet, or a model since withdrawn) so that the select
// shows what the record holds instead of silently changing it.
export function recommendedModelChoices(models, current) {
  const names = [...new Set((models || []).map((model) => model.name))].sort((a, b) =>
    a.localeCompare(b),
  );
  return current && !names.includes(current) ? [current, ...names] : names;
}
