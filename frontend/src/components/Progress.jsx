// A progress bar with its percentage, for a run or a sweep.
export function Progress({ value, label }) {
  const pct = Math.round((value || 0) * 100);
  return (
    <div
      className="progress"
      role="progressbar"
      aria-label={label || "Progress"}
      aria-valuemin={0}
      aria-valuemax={100}
      aria-valuenow={pct}
    >
      <div className="progress-bar" style={{ width: `${pct}%` }} />
      <span className="progress-text">{pct}%</span>
    </div>
  );
}
