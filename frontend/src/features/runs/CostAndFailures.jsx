// A run's cost (docs/cost.md: energy at the records' power price, hardware rented or written
// off) and, when the run asked for it, its Monte Carlo failure injection beside the analytic
// probability of success (docs/models.md, section 6). Nothing when the run has neither.
import { fmt, fmtTime } from "../../lib/format.js";

const money = (value) => (typeof value === "number" ? `$${fmt(value)}` : "–");

// Return the lines of a run's cost: [{label, value}] of what could be priced, and the
// "node: attributes" lines of what could not; null when no record carried a price.
export function costLines(cost) {
  if (!cost || typeof cost.total !== "number") return null;
  const lines = [
    { label: "Cost per run", value: money(cost.total) },
    { label: "Energy", value: money(cost.energy) },
    { label: "Hardware (rented or written off)", value: money(cost.hardware) },
  ];
  for (const [unit, value] of Object.entries(cost.per_unit || {}))
    lines.push({ label: `Cost per ${unit}`, value: money(value) });
  const missing = (cost.missing || []).map(
    (m) => `${m.name} (${m.node}): ${(m.attributes || []).join(", ")}`,
  );
  return { lines, missing };
}

// Return the failure injection in words: {title, lines}, or null when the run asked for none.
export function failureLines(injected) {
  if (!injected) return null;
  const [low, high] = injected.ci_95 || [];
  const title = `Failure injection (${injected.mode}, ${injected.samples} samples, seed ${injected.seed})`;
  const lines = [
    `P(complete) = ${fmt(injected.p_complete, 6)} (95 % interval ${fmt(low, 6)} to ${fmt(high, 6)}); analytic P(success) = ${fmt(injected.analytic_p_success, 6)}`,
  ];
  if (injected.mode === "restart") {
    const p = injected.completion_percentiles_s || {};
    lines.push(
      `Completion time: mean ${fmtTime(injected.mean_completion_s)} (closed form ${fmtTime(injected.analytic_mean_completion_s)}); p50 ${fmtTime(p["50"])}, p90 ${fmtTime(p["90"])}, p99 ${fmtTime(p["99"])}`,
      `${fmt(injected.mean_attempts, 4)} attempts on average; each restart costs ${fmtTime(injected.restart_s)}`,
    );
  }
  return { title, lines };
}

export function CostAndFailures({ result }) {
  const cost = costLines(result.cost);
  const failures = failureLines(result.failure_injection);
  if (!cost && !failures) return null;
  return (
    <>
      {cost && (
        <section aria-labelledby="run-cost-title">
          <h2 id="run-cost-title">Cost</h2>
          <dl className="run-facts" data-testid="run-cost">
            {cost.lines.map((l) => (
              <div key={l.label}>
                <dt>{l.label}</dt>
                <dd>{l.value}</dd>
              </div>
            ))}
          </dl>
          {cost.missing.length > 0 && (
            <p className="notice" role="note" aria-label="Cost warning">
              Not priced, for lack of cost attributes: {cost.missing.join("; ")}.
            </p>
          )}
        </section>
      )}
      {failures && (
        <section aria-labelledby="run-failures-title">
          <h2 id="run-failures-title">{failures.title}</h2>
          <ul data-testid="failure-injection">
            {failures.lines.map((l) => (
              <li key={l}>{l}</li>
            ))}
          </ul>
        </section>
      )}
    </>
  );
}
