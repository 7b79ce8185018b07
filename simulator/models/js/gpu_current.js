// GPU kernel time on current architectures (issue 11), in seconds: Volkov's bounds as in the
// Volkov GPU model, plus the launch overhead, whole waves with a tail wave, a smooth minimum of
// the latency and throughput bounds and the bandwidth a kernel reaches (eqs C.1-C.4).
// Python reference: simulator/models/gpu_current.py (computation_time). Needs occupancy.js's
// activeWarpsPerSM when params give registersPerThread instead of occupancy, and
// GPU_CURRENT_DEFAULTS (generated from the project's data files, above): the fitted transition
// exponent p and each compute capability's launch overhead and memory efficiency.
// Hardware attributes: as the Volkov GPU model (SMs, SMCoreClock [MHz], CUDACores, schedulers,
// warpSize, memoryClock [MHz], busWidth [bits], dataRate, or GMEMThroughput [B/cycle/SM];
// FP64Units, SFUs, LDSTUnits), plus kernelLaunchOverhead [s] and memoryEfficiency (else the
// architecture's, by computeCapability), L2Cache [bytes] and L2Bandwidth [B/s], and
// clockWakePenalty [s] with clockWakeTimeConstant [s] (C.5; no penalty without them).
// Params: as the Volkov GPU model without kernelExecutionLambda, plus footprintBytes [bytes],
// l2Resident (the kernel's data are in L2 already), idleBeforeS [s] (how long the SMs idled
// before the launch) and transitionExponent (p); tensorInstructions (INS_tensor per warp) with
// tensorPrecision (fp16, bf16, tf32, fp8, fp4, fp64, int8) and tensorFLOPsPerInstruction, and
// INTInstructions (C.6), sharedMemoryConflictWays (C.7: the average n of n-way bank conflicts), with the hardware's tensorFLOPsPerCycle<precision> and
// tensorOpsPerCycleINT8 [per cycle per SM] and INTUnits; atomicsPerThread (global atomic
// operations per thread) with atomicAddresses (distinct addresses, absent when spread) and
// atomicsPerSector (operations per 32-byte L2 sector access, 1; C.8)
// and the hardware's L2AtomicThroughput [operations/s] and atomicSameAddressRate [per clock];
// barrierInstructions (BAR.SYNC per warp; C.9) with the hardware's barrierLatency [cycles];
// sectorsPerRequest (32-byte sectors per warp request) with accessBytes (per lane, 4; C.10).

function currentAttribute(name, fallback) {
  var value = hw[name];
  if (value === undefined || value === null) {
    if (fallback === undefined) throw new Error("hardware attribute '" + name + "' is required by the current-architecture GPU model");
    return fallback;
  }
  return value;
}

// A hardware attribute the architecture profile of computeCapability supplies when missing
function currentArchitectureAttribute(name) {
  var value = hw[name];
  if (value !== undefined && value !== null) return value;
  var cc = hw.computeCapability;
  var key = typeof cc === 'number' ? cc.toFixed(1) : String(cc).trim();
  var architectures = GPU_CURRENT_DEFAULTS.architectures;
  if (cc === undefined || cc === null || !Object.prototype.hasOwnProperty.call(architectures, key)) {
    throw new Error("hardware attribute '" + name + "' is required by the current-architecture GPU model (or a computeCapability whose architecture profile gives it)");
  }
  return architectures[key][name];
}

// Refuse hardware that lacks several of the attributes every kernel reads, naming all of them
// at once; one missing is left to its read, whose message says what stands for it (Python
// reference: CurrentGpu.from_attributes in simulator/models/gpu_current.py)
function currentRequireAttributes() {
  var absent = function (name) { return hw[name] === undefined || hw[name] === null; };
  var missing = [];
  if (absent('SMs') && absent('SMS')) missing.push('SMs');
  ['SMCoreClock', 'CUDACores', 'schedulers'].forEach(function (name) { if (absent(name)) missing.push(name); });
  var cc = hw.computeCapability;
  var key = typeof cc === 'number' ? cc.toFixed(1) : String(cc).trim();
  if (cc === undefined || cc === null || !Object.prototype.hasOwnProperty.call(GPU_CURRENT_DEFAULTS.architectures, key)) {
    ['kernelLaunchOverhead', 'memoryEfficiency'].forEach(function (name) { if (absent(name)) missing.push(name); });
  }
  if (missing.length > 1) {
    throw new Error("hardware attributes '" + missing.join("', '") + "' are required by the current-architecture GPU model " +
      "(a computeCapability whose architecture profile gives them stands for kernelLaunchOverhead and memoryEfficiency)");
  }
}

function currentParam(params, name, fallback) {
  var value = params.get(name, fallback);
  if (value === undefined || value === null) throw new Error("parameter '" + name + "' is required by the current-architecture GPU model");
  return value;
}

// GMem_bw in bytes per SM per cycle (C.3) and whether it is the L2's: the L2's when the
// kernel's data are resident in L2 and fit in it, else GMEMThroughput as recorded (an achieved
// figure), else memoryEfficiency x (4.5)
function currentBandwidthPerSM(params, smCycles, memoryEfficiency) {
  var footprint = params.get('footprintBytes', null);
  if (params.get('l2Resident', false) && hw.L2Bandwidth !== undefined && hw.L2Cache !== undefined &&
      footprint !== null && footprint <= hw.L2Cache) {
    return {perSM: hw.L2Bandwidth / smCycles, fromL2: true};
  }
  if (hw.GMEMThroughput !== undefined) return {perSM: hw.GMEMThroughput, fromL2: false};
  var perSecond = currentAttribute('memoryClock') * 1e6 * (currentAttribute('busWidth') / 8) * currentAttribute('dataRate');
  return {perSM: perSecond / smCycles * memoryEfficiency, fromL2: false};
}

// The tensor term of (C.6), SM cycles per warp: INS_tensor x FLOPs per instruction / the dense
// rate of the precision
function tensorCyclesPerWarp(params) {
  var instructions = params.get('tensorInstructions', 0);
  if (instructions === 0) return null;
  var precision = String(params.get('tensorPrecision', 'fp16')).toLowerCase();
  var precisions = GPU_CURRENT_DEFAULTS.tensorPrecisions;
  if (!Object.prototype.hasOwnProperty.call(precisions, precision)) {
    throw new Error("tensorPrecision '" + precision + "' is not one of " + Object.keys(precisions).join(', '));
  }
  if (instructions < 0) throw new Error('tensorInstructions must be positive');
  var flops = params.get('tensorFLOPsPerInstruction', null);
  if (flops !== null && !(flops > 0)) throw new Error('tensorFLOPsPerInstruction must be positive');
  var name = precisions[precision][0];
  var rate = hw[name];
  if (rate === undefined || rate === null || !(rate > 0)) {
    throw new Error('tensorInstructions need the hardware\'s ' + name + ' (the ' + precision + ' tensor-core rate); this GPU has no ' + precision + ' tensor cores on record');
  }
  return instructions * (flops === null ? precisions[precision][1] : flops) / rate;
}

// A parameter that must be zero or more (`positive`: more than zero), or its default
function currentCheckedParam(params, name, fallback, positive) {
  var value = params.get(name, fallback);
  if (value === null) return null;
  if (positive ? !(value > 0) : !(value >= 0)) throw new Error(name + (positive ? ' must be positive' : ' must be zero or positive'));
  return value;
}

// The kernel's atomics, barriers and sectors per request (C.8-C.10), checked as Python's
// KernelSync checks them
function currentSync(params) {
  return {
    atomicsPerThread: currentCheckedParam(params, 'atomicsPerThread', 0, false),
    barriers: currentCheckedParam(params, 'barrierInstructions', 0, false),
    atomicAddresses: currentCheckedParam(params, 'atomicAddresses', null, true),
    atomicsPerSector: currentCheckedParam(params, 'atomicsPerSector', 1, true),
    sectorsPerRequest: currentCheckedParam(params, 'sectorsPerRequest', null, true),
    accessBytes: currentCheckedParam(params, 'accessBytes', 4, true)};
}

// The atomics term of (C.8), SM cycles per warp, or null without atomics: the L2's atomic
// throughput (recorded, else one 32-byte sector per operation at L2Bandwidth, else at the DRAM
// bandwidth) times the operations per sector, at most atomicSameAddressRate operations per
// clock on each of the addresses
function atomicCyclesPerWarp(sync, warpSize, smCycles, smClock, memoryEfficiency) {
  if (!(sync.atomicsPerThread > 0)) return null;
  var sameRate = hw.atomicSameAddressRate !== undefined ? hw.atomicSameAddressRate : 1;
  if (hw.L2AtomicThroughput !== undefined && !(hw.L2AtomicThroughput > 0)) throw new Error('L2AtomicThroughput must be positive');
  if (!(sameRate > 0)) throw new Error('atomicSameAddressRate must be positive');
  var spread;
  if (hw.L2AtomicThroughput !== undefined) spread = hw.L2AtomicThroughput;
  else if (hw.L2Bandwidth !== undefined) spread = hw.L2Bandwidth / 32;
  else if (hw.GMEMThroughput !== undefined) spread = hw.GMEMThroughput * smCycles / 32;
  else {
    var perSecond = currentAttribute('memoryClock') * 1e6 * (currentAttribute('busWidth') / 8) * currentAttribute('dataRate');
    spread = perSecond / smCycles * memoryEfficiency * smCycles / 32;
  }
  var rate = spread * sync.atomicsPerSector;
  if (sync.atomicAddresses !== null) rate = Math.min(rate, sync.atomicAddresses * sameRate * smClock);
  return warpSize * sync.atomicsPerThread * smCycles / rate;
}

// What (C.9) adds to Lat_bound: each barrier's cost and the wait for the block's slowest warp
function barrierCyclesPerWarp(sync, warpsPerBlock, issued) {
  if (!(sync.barriers > 0)) return 0;
  var latency = hw.barrierLatency !== undefined ? hw.barrierLatency : 0;
  var queued = Math.max(0, warpsPerBlock / currentAttribute('schedulers') - 1);
  return sync.barriers * (latency + queued * (issued / (sync.barriers + 1)));
}

// Th_bound (4.4 with C.6-C.8, C.10), warps per cycle, and the busiest resource's name
// (throughput_terms.js)
function currentThroughputBound(params, warpSize, bandwidthPerSM, sync, atomics) {
  var terms = throughputTerms(params, warpSize, bandwidthPerSM, currentAttribute, currentParam);
  // (C.7): an n-way bank conflict serialises a warp's shared-memory access n times
  var ways = params.get('sharedMemoryConflictWays', 1);
  if (!(ways >= 1)) throw new Error('sharedMemoryConflictWays must be 1 (no bank conflict) or more');
  // (C.10): the sectors of the warp's requests over those of coalesced ones
  var traffic = sync.sectorsPerRequest === null ? 1 : sync.sectorsPerRequest * 32 / (warpSize * sync.accessBytes);
  for (var i = 0; i < terms.length; i++) {
    if (terms[i][0] === 'shared_memory') terms[i][1] *= ways;
    else if (terms[i][0] === 'global_memory') terms[i][1] *= traffic;
  }
  var tensor = tensorCyclesPerWarp(params);
  if (tensor !== null) terms.push(['tensor', tensor]);
  // without INTUnits, INT32 runs on the CUDA cores (Maxwell, Pascal) and counts there only
  if (hw.INTUnits !== undefined) terms.push(['int', warpSize * params.get('INTInstructions', 0) / hw.INTUnits]);
  if (atomics !== null) terms.push(['atomics', atomics]);
  return busiestTerm(terms);
}

// W_Th (C.2): the p-norm smooth minimum of occupancy / Lat_bound and Th_bound
function smoothWarpThroughput(occupancy, latencyBound, throughputBound, p) {
  var latencyLimited = occupancy / latencyBound;
  if (p === Infinity) return Math.min(latencyLimited, throughputBound);  // Volkov's (4.3)
  // scaled by the smaller bound so that a large p does not overflow
  var low = Math.min(latencyLimited, throughputBound);
  var ratioSum = Math.pow(low / latencyLimited, p) + Math.pow(low / throughputBound, p);
  return low * Math.pow(ratioSum, -1 / p);
}

// Cycles of one wave in which the busiest SM runs `blocks` blocks (C.1)
function waveCycles(blocks, warpsPerBlock, latencyBound, throughputBound, p) {
  var warps = blocks * warpsPerBlock;
  return warps / smoothWarpThroughput(warps, latencyBound, throughputBound, p);
}

// t_wake (C.5) in seconds: what a launch pays after the SMs idled for idleS seconds
function wakeTime(idleS) {
  if (idleS < 0) throw new Error('idleBeforeS must be zero or positive');
  var penalty = hw.clockWakePenalty !== undefined ? hw.clockWakePenalty : 0;
  var constant = hw.clockWakeTimeConstant !== undefined ? hw.clockWakeTimeConstant : 1;
  if (!(constant > 0)) throw new Error('clockWakeTimeConstant must be positive');
  return penalty * (1 - Math.exp(-idleS / constant));
}

// The estimate (C.1)-(C.5): the time and what bounds it
function currentEstimate(params) {
  currentRequireAttributes();
  var launchOverhead = currentArchitectureAttribute('kernelLaunchOverhead');
  var memoryEfficiency = currentArchitectureAttribute('memoryEfficiency');
  var warpSize = currentAttribute('warpSize', 32);
  var sms = currentAttribute('SMs', hw.SMS);
  var smClock = currentAttribute('SMCoreClock') * 1e6;
  var blockSize = Math.trunc(currentParam(params, 'blockSize'));
  var gridSize = params.get('gridSize', null);
  gridSize = gridSize !== null ? Math.trunc(gridSize) : Math.ceil(Math.trunc(currentParam(params, 'N')) / blockSize);
  var occupancy = params.get('occupancy', null);
  if (occupancy === null) {
    occupancy = activeWarpsPerSM(blockSize, currentParam(params, 'registersPerThread'), params.get('sharedMemPerBlock', 0));
  }
  var p = params.get('transitionExponent', null);
  if (p === null) p = GPU_CURRENT_DEFAULTS.transitionExponent;
  var positive = [['grid size', gridSize], ['block size', blockSize], ['occupancy', occupancy], ['exponent', p]];
  for (var i = 0; i < positive.length; i++) {
    if (!(positive[i][1] > 0)) throw new Error(positive[i][0] + ' must be positive');
  }
  var warpsPerBlock = Math.ceil(blockSize / warpSize);
  var blocksPerSM = Math.floor(occupancy / warpsPerBlock);
  if (blocksPerSM < 1) throw new Error('no block of ' + blockSize + ' threads fits on an SM at occupancy ' + occupancy + ' warps per SM');

  var sync = currentSync(params);
  var bandwidth = currentBandwidthPerSM(params, sms * smClock, memoryEfficiency);
  var throughput = currentThroughputBound(params, warpSize, bandwidth.perSM, sync,
      atomicCyclesPerWarp(sync, warpSize, sms * smClock, smClock, memoryEfficiency));
  var latencyBound = currentParam(params, 'latencyBound') +
      barrierCyclesPerWarp(sync, warpsPerBlock, currentParam(params, 'issuedInstructions'));
  var blocksPerWave = blocksPerSM * sms;
  var waves = Math.max(1, Math.ceil(gridSize / blocksPerWave));
  var tailBlocks = gridSize - (waves - 1) * blocksPerWave;
  var cycles = (waves - 1) * waveCycles(blocksPerSM, warpsPerBlock, latencyBound, throughput.bound, p) +
      waveCycles(Math.ceil(tailBlocks / sms), warpsPerBlock, latencyBound, throughput.bound, p);
  var workS = cycles / smClock;
  var overheadS = launchOverhead + wakeTime(params.get('idleBeforeS', 0));
  var fullOccupancy = blocksPerSM * warpsPerBlock;
  var bound;
  if (overheadS > workS) bound = 'launch';
  else if (fullOccupancy / latencyBound < throughput.bound) bound = 'latency';
  else if (throughput.name === 'schedulers') bound = 'issue';
  else if (throughput.name === 'global_memory' && bandwidth.fromL2) bound = 'l2';
  else bound = throughput.name;
  return {timeS: overheadS + workS, launchS: overheadS, bound: bound, occupancy: fullOccupancy,
          blocksPerSM: blocksPerSM, waves: waves, tailBlocks: tailBlocks};
}

// T_k (C.1) in seconds: launch overhead + wake + the full waves + the tail wave (C.4)
function computationTime(params) {
  return currentEstimate(params).timeS;
}

// What bounds the kernel (launch, latency, issue, global_memory, l2, cuda_cores, fp64, sfu,
// shared_memory, extra, tensor, int, atomics), the occupancy used and the waves: shown with the kernel in the run's
// timeline and result
function computationDetail(params) {
  return currentEstimate(params);
}
