// The sweep form's view of the API's errors: a sweep's fields come back under "spec."
// ("spec.labels.GPU", "spec.hardware.components[1]"); the form shows them beside its fields
// under the launch form's paths, and names the rest in words. Pure functions; no React.

// Return the API's field errors with "spec." taken off the paths ("spec" alone: "sweep").
export function sweepFields(fields) {
  return Object.fromEntries(
    Object.entries(fields || {}).map(([path, messages]) => [
      path === "spec" ? "sweep" : path.replace(/^spec\./, ""),
      messages,
    ]),
  );
}

// The paths the form shows beside its fields (the summary leaves them out).
export const SHOWN_BESIDE = [
  "name",
  "system_model",
  "application",
  "queue",
  "labels",
  "variables",
  "hardware",
];

// Return the words the summary gives a path of sweepFields: "labels.GPU" -> "Processes with
// label GPU", "hardware.components[1].nodes[2].next" -> "Hardware choice RTX 4090".
// `choices` are the names of the ticked hardware choices, in the order sent.
export function sweepFieldName(path, choices = []) {
  const choice = /^hardware\.components\[(\d+)\]/.exec(path);
  if (choice) return `Hardware choice ${choices[Number(choice[1])] || Number(choice[1]) + 1}`;
  const rules = [
    [/^sweep$|^non_field_errors$|^detail$|^$/, () => null],
    [/^name$/, () => "Sweep name"],
    [/^system_model(\.|$)/, () => "System model"],
    [/^application(\.|$)/, () => "Application model"],
    [/^queue$/, () => "Queue"],
    [/^labels\.(.+)$/, (m) => `Processes with label ${m[1]}`],
    [/^labels$/, () => "Label counts"],
    [/^variables\.([^.]+)/, (m) => `Values of ${m[1]}`],
    [/^variables$/, () => "Variables"],
    [/^axes\.(.+)$/, (m) => `Axis ${m[1]}`],
    [/^axes$/, () => "Other axes"],
    [/^hardware\.node$/, () => "Node to swap"],
    [/^hardware(\.|$)/, () => "Hardware to swap in"],
  ];
  for (const [pattern, name] of rules) {
    const m = pattern.exec(path);
    if (m) return name(m);
  }
  return path;
}
