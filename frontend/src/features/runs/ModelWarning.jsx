// The notice that a run's (or a sweep's) kernel times come from a GPU model evaluated outside
// the architectures it was validated on (the result's `warnings`, code "architecture").

// `lines`: one text per node; `scope`: whose times these are ("This run's").
export function ModelWarning({ lines, scope }) {
  if (!lines || !lines.length) return null;
  return (
    <div className="notice warning" role="note" aria-label="Model warning">
      <strong>
        {scope} GPU times come from a model outside the architectures it was validated on
      </strong>{" "}
      (read them as an extrapolation, or pick the model the GPU record recommends):
      <ul>
        {lines.map((line) => (
          <li key={line}>{line}</li>
        ))}
      </ul>
    </div>
  );
}

// Return a result's architecture warnings as lines: the simulator's message for each node.
export function modelWarningLines(result) {
  return (result?.warnings || [])
    .filter((w) => w.code === "architecture")
    .map((w) => `${w.name && w.name !== w.node ? `${w.name} (${w.node})` : w.node}: ${w.message}`);
}
