// The notice that a run's (or a sweep's) energy rests on missing power attributes.

// `lines`: "<node>: <attributes>" texts; `scope`: what the energy belongs to ("This run's").
export function PowerWarning({ lines, scope }) {
  if (!lines || !lines.length) return null;
  return (
    <div className="notice warning" role="note" aria-label="Energy warning">
      <strong>{scope} energy rests on missing power attributes</strong> (each missing state is
      estimated by a rule named under &quot;What the energy includes&quot;; a run from before those
      rules counted a missing <code>powerIdle</code> as 0 W; figures resting on estimates compare
      only as well as the estimates hold):
      <ul>
        {lines.map((line) => (
          <li key={line}>{line}</li>
        ))}
      </ul>
    </div>
  );
}

// Return a result's power_missing entries as lines: "<name> (<node>): <attributes>".
export function powerMissingLines(result) {
  return (result?.power_missing || []).map((m) => {
    const name = m.name && m.name !== m.node ? `${m.name} (${m.node})` : m.node;
    return `${name}: ${(m.attributes || []).join(", ")}`;
  });
}
