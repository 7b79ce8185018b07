// Failure rate in failures per second: attribute failuresPerSecond, or 1 / mtbf [s], else 0.
// (Not an attribute named failureRate: attributes are globals and would clash with the function.)
// Python reference: simulator/models/reliability.py (failure_rate_from_attributes).

function failureRate(params) {
  if (hw.failuresPerSecond !== undefined) return hw.failuresPerSecond;
  if (hw.mtbf !== undefined) {
    if (!(hw.mtbf > 0)) throw new Error('mtbf must be positive');
    return 1 / hw.mtbf;
  }
  return 0;
}
