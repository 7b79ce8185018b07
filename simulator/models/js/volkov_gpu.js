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

// Th_bound (4.4), warps per cycle: 1 / the busiest resource's cycles per warp
function throughputBound(params, warpSize) {
  var cycles = Math.max(
    warpSize * volkovParam(params, 'CUDACoreInstructions') / volkovAttribute('CUDACores'),
    volkovParam(params, 'issuedInstructions') / volkovAttribute('schedulers'),
    volkovParam(params, 'GMEMBytesTransferred') / gmemBandwidthPerSM());
  var units = [['FP64Instructions', 'FP64Units'], ['SFUInstructions', 'SFUs'], ['sharedMemoryInstructions', 'LDSTUnits']];
  for (var i = 0; i < units.length; i++) {
    if (hw[units[i][1]] === undefined) {
      if (params.get(units[i][0], 0) > 0) throw new Error(units[i][0] + " need the hardware's " + units[i][1]);
      continue;
    }
    cycles = Math.max(cycles, warpSize * params.get(units[i][0], 0) / hw[units[i][1]]);
  }
  var extra = params.get('extraCyclesPerWarp', []);
  for (var j = 0; j < extra.length; j++) cycles = Math.max(cycles, extra[j]);
  return 1 / cycles;
}

// T_k (4.1) in seconds
function computationTime(params) {
  var warpSize = volkovAttribute('warpSize', 32);
  var sms = hw.SMs !== undefined ? hw.SMs : volkovAttribute('SMS');
  var blockSize = volkovParam(params, 'blockSize');
  var gridSize = params.get('gridSize', null);
  if (gridSize === null) gridSize = Math.ceil(volkovParam(params, 'N') / blockSize);
  var occupancy = params.get('occupancy', null);
  if (occupancy === null) {
    occupancy = activeWarpsPerSM(blockSize, volkovParam(params, 'registersPerThread'), params.get('sharedMemPerBlock', 0));
  }
  var lambdaK = params.get('kernelExecutionLambda', 1);
  if (!(blockSize > 0) || !(occupancy > 0) || !(lambdaK > 0)) throw new Error('block size, occupancy and kernelExecutionLambda must be positive');
  var latencyLimited = occupancy / volkovParam(params, 'latencyBound');
  var warpThroughput = Math.min(latencyLimited, throughputBound(params, warpSize));  // W_Th (4.3)
  return warpsLaunched(gridSize, blockSize, warpSize) / (warpThroughput * sms * (volkovAttribute('SMCoreClock') * 1e6) * lambdaK);
}
