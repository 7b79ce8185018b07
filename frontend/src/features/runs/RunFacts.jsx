// The run page's facts (runFacts.js), with the elapsed and waiting times ticking each second
// while the run is not final.
import { Progress } from "../../components/Progress.jsx";
import { useNow } from "../../hooks/useNow.js";
import { runFacts, runProgress } from "./runFacts.js";
import { FINAL } from "./runs.js";

export function RunFacts({ sim }) {
  const now = useNow(!FINAL.includes(sim.status));
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

// A running run's progress: the fraction of its processes finished where it knows one, the
// simulated time reached and the time elapsed, ticking each second.
export function RunProgress({ sim }) {
  const now = useNow(sim.status === "running");
  if (sim.status !== "running") return null;
  const { fraction, caption } = runProgress(sim, now);
  return <Progress value={fraction} label="Simulation progress" caption={caption} />;
}
