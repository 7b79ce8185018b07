// CPU: time of a computation of params.flops floating-point operations, in seconds.
// Python reference: simulator/models/cpu.py (computation_time).
// Attributes: cores, coreClock [MHz], flopsPerCycle [per core]. Params: flops, optional
// threads (cores used, at most cores) and efficiency (fraction of peak, default 1).

function computationTime(params) {
  var threads = Math.min(params.get('threads', hw.cores), hw.cores);
  var efficiency = params.get('efficiency', 1);
  if (!(threads > 0) || !(efficiency > 0)) throw new Error('threads and efficiency must be positive');
  return params.get('flops') / (threads * hw.coreClock * 1e6 * hw.flopsPerCycle * efficiency);
}
