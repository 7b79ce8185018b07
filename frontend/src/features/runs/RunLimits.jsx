// A run's limits on its page: the one that stopped it and its value, the run's own limits,
// and, while it is held back, why it waits.
import { runLimits, stopReason } from "./limits.js";

export function RunLimits({ sim }) {
  const stopped = stopReason(sim);
  const limits = runLimits(sim);
  const held = sim.status === "queued" && sim.held;
  return (
    <div className="run-limits">
      {stopped && (
        <p className="limit-stop" data-testid="limit-stop">
          <strong>{stopped}</strong> A launch may set a higher limit, up to its queue&apos;s maximum
          (the launch screen shows it), or use a queue with longer limits.
        </p>
      )}
      {held && (
        <p className="muted" data-testid="run-held">
          Waiting for a run slot: you already have as many runs in progress as one user may have at
          once. This run starts when one of them ends; other users&apos; runs go first.
        </p>
      )}
      {limits && <p className="muted">Limits: {limits}</p>}
    </div>
  );
}
