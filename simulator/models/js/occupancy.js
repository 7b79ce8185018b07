// Occupancy calculator (NVIDIA's rules, MODELS.md 2): resident warps per SM of a launch.
// Python reference: simulator/models/occupancy.py (limits_from_attributes, occupancy_for_limits).
// Hardware attributes: computeCapability, maxWarpsPerSM, maxBlocksPerSM, registersPerSM,
// sharedMemPerSM [bytes]; optional warpSize, maxThreadsPerBlock, registersPerBlock,
// maxRegistersPerThread, maxSharedMemPerBlock [bytes].

function occupancyAttribute(name, fallback) {
  var value = hw[name];
  if (value === undefined || value === null) {
    if (fallback === undefined) throw new Error("hardware attribute '" + name + "' is required by the occupancy calculator");
    return fallback;
  }
  return value;
}

function roundUp(value, unit) {
  return Math.ceil(value / unit) * unit;
}

// Return {blocks, warps, limitingFactor} resident per SM for one launch configuration.
function occupancyForLaunch(blockSize, registersPerThread, sharedMemPerBlock) {
  // Several missing attributes are named at once (Python: limits_from_attributes)
  var missing = ['computeCapability', 'maxWarpsPerSM', 'registersPerSM', 'sharedMemPerSM', 'maxBlocksPerSM'].filter(
    function (name) { return hw[name] === undefined || hw[name] === null; });
  if (missing.length > 1) throw new Error("hardware attributes '" + missing.join("', '") + "' are required by the occupancy calculator");
  var cc = occupancyAttribute('computeCapability');
  var ccText = cc.toFixed(1);
  var warpSize = occupancyAttribute('warpSize', 32);
  var maxWarps = occupancyAttribute('maxWarpsPerSM');
  var registersPerSM = occupancyAttribute('registersPerSM');
  var sharedPerSM = occupancyAttribute('sharedMemPerSM');
  var embedded = ['2.0', '3.2', '5.3', '6.2'].indexOf(ccText) >= 0;
  var reserved = cc >= 8 ? 1024 : 0;
  var defaultSharedPerBlock = cc < 7 ? 48 * 1024 : (cc >= 8 ? sharedPerSM - reserved : sharedPerSM);
  var maxThreadsPerBlock = occupancyAttribute('maxThreadsPerBlock', 1024);
  var registersPerBlock = occupancyAttribute('registersPerBlock', embedded ? 32768 : Math.min(registersPerSM, 65536));
  var maxRegisters = occupancyAttribute('maxRegistersPerThread', cc < 3.2 ? 63 : 255);
  var maxSharedPerBlock = occupancyAttribute('maxSharedMemPerBlock', defaultSharedPerBlock);
  var registerUnit = cc < 3 ? 64 : 256;
  var partitions = (cc < 3 || ccText === '6.0') ? 2 : 4;
  var sharedUnit = (cc < 3 || cc >= 8) ? 128 : 256;
  sharedMemPerBlock = sharedMemPerBlock || 0;

  if (!(blockSize >= 1 && blockSize <= maxThreadsPerBlock)) throw new Error('block size must be between 1 and ' + maxThreadsPerBlock + ' threads');
  if (!(registersPerThread >= 0 && registersPerThread <= maxRegisters)) throw new Error('registers per thread must be between 0 and ' + maxRegisters);
  if (!(sharedMemPerBlock >= 0 && sharedMemPerBlock <= maxSharedPerBlock)) throw new Error('shared memory per block must be between 0 and ' + maxSharedPerBlock + ' bytes');

  var warpsPerBlock = Math.ceil(blockSize / warpSize);
  var limits = [
    [Math.floor(maxWarps / warpsPerBlock), 'warps'],
    [occupancyAttribute('maxBlocksPerSM'), 'blocks'],
  ];
  if (registersPerThread > 0) {
    var registersPerWarp = roundUp(registersPerThread * warpSize, registerUnit);
    if (registersPerWarp * roundUp(warpsPerBlock, partitions) > registersPerBlock) throw new Error('the block needs more registers than allowed per block');
    var warpsPerPartition = Math.floor(Math.floor(registersPerSM / partitions) / registersPerWarp);
    limits.push([Math.floor(warpsPerPartition * partitions / warpsPerBlock), 'registers']);
  }
  var sharedAllocated = sharedMemPerBlock + reserved;
  if (sharedAllocated > 0) {
    limits.push([Math.floor(sharedPerSM / roundUp(sharedAllocated, sharedUnit)), 'shared_memory']);
  }
  var best = limits[0];
  for (var i = 1; i < limits.length; i++) if (limits[i][0] < best[0]) best = limits[i];
  return {blocks: best[0], warps: best[0] * warpsPerBlock, limitingFactor: best[1]};
}

// Return the resident warps per SM (the occupancy Volkov's model takes).
function activeWarpsPerSM(blockSize, registersPerThread, sharedMemPerBlock) {
  return occupancyForLaunch(blockSize, registersPerThread, sharedMemPerBlock).warps;
}
