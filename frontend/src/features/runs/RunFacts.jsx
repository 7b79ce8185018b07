// The run page's facts (runFacts.js), with the elapsed and waiting times ticking each second
// while the run is not final.
import { useEffect, useState } from "react";
import { runFacts } from "./runFacts.js";
import { FINAL } from "./runs.js";

export function RunFacts({ sim }) {
  const live = !FINAL.includes(sim.status);
  const [now, setNow] = useState(() => Date.now());
  useEffect(() => {
    if (!live) return undefined;
    const timer = setInterval(() => setNow(Date.now()), 1000);
    return () => clearInterval(timer);
  }, [live]);
  return (
    <dl className="run-facts" aria-label="Run facts">
      {runFacts(sim, now).map((f) => (
        <div key={f.label}>
          <dt>{f.label}</dt>
          <dd data-testid={f.testId}>{f.value}</dd>
        </div>
      ))}
    </dl>
  );
}
