// A progress bar with its percentage, for a run or a sweep. A `value` of null is a task whose
// fraction is not known (a run whose processes all end at its end, a run with no end): the bar
// moves without a percentage, and `caption` says how far it got instead.
export function Progress({ value, label, caption }) {
  const known = typeof value === "number" && Number.isFinite(value);
  const pct = known ? Math.round(value * 100) : null;
  return (
    <>
      <div
        className={`progress${known ? "" : " indeterminate"}`}
        role="progressbar"
        aria-label={label || "Progress"}
        aria-valuemin={0}
        aria-valuemax={100}
        aria-valuenow={known ? pct : undefined}
        aria-valuetext={known ? undefined : caption}
      >
        <div className="progress-bar" style={known ? { width: `${pct}%` } : undefined} />
        {known && <span className="progress-text">{pct}%</span>}
      </div>
      {caption && (
        <p className="progress-caption muted" data-testid="progress-caption">
          {caption}
        </p>
      )}
    </>
  );
}
