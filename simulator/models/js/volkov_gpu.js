// Volkov's GPU kernel model as used in MERPSYS (000, eqs 4.1-4.5, Listing 4), in seconds.
// Python reference: simulator/models/volkov.py (computation_time). Needs occupancy.js's
// activeWarpsPerSM when params give registersPerThread instead of occupancy.
// Hardware attributes: SMs, SMCoreClock [MHz], CUDACores [per SM], schedulers, warpSize,
// memoryClock [MHz], busWidth [bits], dataRate, or GMEMThroughput [B/cycle/SM] used as-is;
// FP64Units, SFUs, LDSTUnits when kernels use them.

function volkovAttribute(name, fallback) {
  var value = hw[name];
  if (value === undefined || value === null) {
    if (fallback === undefined) throw new Error("hardware attribute '" + name + "' is required by the Volkov GPU model");
    return fallback;
  }
  return value;
}

// Refuse hardware that lacks any attribute every kernel reads, naming all of them at once
// (Python reference: missing_attributes in simulator/models/volkov.py)
function volkovRequireAttributes() {
  var absent = function (name) { return hw[name] === undefined || hw[name] === null; };
  var missing = [];
  if (absent('SMs') && absent('SMS')) missing.push('SMs');
  ['SMCoreClock', 'CUDACores', 'schedulers'].forEach(function (name) { if (absent(name)) missing.push(name); });
  if (absent('GMEMThroughput')) {
    ['memoryClock', 'busWidth', 'dataRate'].forEach(function (name) { if (absent(name)) missing.push(name); });
  }
  if (missing.length === 1) throw new Error("hardware attribute '" + missing[0] + "' is required by the Volkov GPU model");
  if (missing.length > 1) throw new Error("hardware attributes '" + missing.join("', '") + "' are required by the Volkov GPU model");
}

function volkovParam(params, name, fallback) {
  var value = params.get(name, fallback);
  if (value === undefined || value === null) throw new Error("parameter '" + name + "' is required by the Volkov GPU model");
  return value;
}

// W_L (4.2)
function warpsLaunched(gridSize, blockSize, warpSize) {
  return gridSize * Math.ceil(blockSize / warpSize);
}

// GMem_bw (4.5), bytes per SM per cycle
function gmemBandwidthPerSM() {
  if (hw.GMEMThroughput !== undefined) return hw.GMEMThroughput;
  var sms = hw.SMs !== undefined ? hw.SMs : volkovAttribute('SMS');
  var perSecond = volkovAttribute('memoryClock') * 1e6 * (volkovAttribute('busWidth') / 8) * volkovAttribute('dataRate');
  return perSecond / (sms * (volkovAttribute('SMCoreClock') * 1e6));
}

// The busiest resource of (4.4) and Th_bound in warps per cycle (throughput_terms.js)
function throughputBusiest(params, warpSize) {
  return busiestTerm(throughputTerms(params, warpSize, gmemBandwidthPerSM(), volkovAttribute, volkovParam));
}

// Th_bound (4.4), warps per cycle: 1 / the busiest resource's cycles per warp
function throughputBound(params, warpSize) {
  return throughputBusiest(params, warpSize).bound;
}

// The launch as the params give it: warp size, grid and block size, occupancy (warps/SM)
function volkovLaunch(params) {
  var warpSize = volkovAttribute('warpSize', 32);
  var blockSize = volkovParam(params, 'blockSize');
  var gridSize = params.get('gridSize', null);
  if (gridSize === null) gridSize = Math.ceil(volkovParam(params, 'N') / blockSize);
  var occupancy = params.get('occupancy', null);
  if (occupancy === null) {
    occupancy = activeWarpsPerSM(blockSize, volkovParam(params, 'registersPerThread'), params.get('sharedMemPerBlock', 0));
  }
  var lambdaK = params.get('kernelExecutionLambda', 1);
  if (!(blockSize > 0) || !(occupancy > 0) || !(lambdaK > 0)) throw new Error('block size, occupancy and kernelExecutionLambda must be positive');
  return {warpSize: warpSize, blockSize: blockSize, gridSize: gridSize, occupancy: occupancy, lambdaK: lambdaK};
}

// T_k (4.1) in seconds
function computationTime(params) {
  var launch = volkovLaunch(params);
  volkovRequireAttributes();
  var sms = hw.SMs !== undefined ? hw.SMs : volkovAttribute('SMS');
  var latencyLimited = launch.occupancy / volkovParam(params, 'latencyBound');
  var warpThroughput = Math.min(latencyLimited, throughputBound(params, launch.warpSize));  // W_Th (4.3)
  return warpsLaunched(launch.gridSize, launch.blockSize, launch.warpSize) / (warpThroughput * sms * (volkovAttribute('SMCoreClock') * 1e6) * launch.lambdaK);
}

// What bounds the kernel by (4.3): 'latency' or the busiest resource of (4.4), and the
// occupancy used; shown with the kernel in the run's timeline and result
function computationDetail(params) {
  var launch = volkovLaunch(params);
  volkovRequireAttributes();
  var busiest = throughputBusiest(params, launch.warpSize);
  var latencyLimited = launch.occupancy / volkovParam(params, 'latencyBound');
  return {bound: latencyLimited < busiest.bound ? 'latency' : busiest.name, occupancy: launch.occupancy};
}
