// Volkov's kernel time model as implemented in MERPSYS (000, section 5.4.1, Listing 4),
// under ParaSim Studio's well-known name computationTime(params), returning SECONDS
// (Listing 4's getTimeGPUModel returned microseconds). Hardware attributes are globals:
// warpSize, SMs, SMCoreClock (MHz), CUDACores, schedulers and GMEMThroughput (bytes per SM per
// cycle, eq. 4.5, 13.78 for the GTX 970). Fig. 5.2 prints the SM count's key as "SMS" while
// Listing 4 reads "SMs"; ParaSim Studio's hardware database uses Listing 4's "SMs" throughout.

// W_L = grid_size * ceil(block_size / warp_size)                                   (4.2)
function getWarpsLaunched(gridSize, blockSize) {
  return gridSize * Math.ceil(blockSize / warpSize);
}

// Th_bound = 1 / max(warp_size * INS_cuda / CUDA_cores, INS_issued / schedulers,
//                    GMem_bytes / GMem_bw), in warps per cycle per SM                (4.4)
function getThroughputBound(CUDACoreInstructions, issuedInstructions, GMEMBytesTransferred) {
  return 1 / Math.max(warpSize * CUDACoreInstructions / CUDACores,
                      issuedInstructions / schedulers,
                      GMEMBytesTransferred / getGMEMThroughput());
}

// GMem_bw = GMem_clock * (bus_width / 8) * data_rate / (SMs * SM_clock)              (4.5)
// MERPSYS stored the result as the attribute GMEMThroughput (Fig. 5.2); a GPU record without
// it (an H100, say) is computed from its memory attributes, so sweeps can swap GPUs in.
function getGMEMThroughput() {
  if (hw.GMEMThroughput !== undefined) {
    return hw.GMEMThroughput;
  }
  return hw.memoryClock * (hw.busWidth / 8) * hw.dataRate / (SMs * SMCoreClock);
}

// T_k = W_L / (W_Th * SMs * SM_clock * lambda_k), W_Th = min(occupancy / Lat_bound, Th_bound)
//                                                                            (4.1), (4.3)
function computationTime(params) {
  var warpsLaunched = getWarpsLaunched(params.get('gridSize'), params.get('blockSize'));
  var throughputBound = getThroughputBound(params.get('CUDACoreInstructions'),
    params.get('issuedInstructions'), params.get('GMEMBytesTransferred'));
  var latencyBound_WPC = params.get('occupancy') / params.get('latencyBound');
  var warpThroughput = Math.min(latencyBound_WPC, throughputBound);
  var execTime_cycles = warpsLaunched / (warpThroughput * SMs * params.get('kernelExecutionLambda'));
  return execTime_cycles / (SMCoreClock * Math.pow(10, 6));
}
