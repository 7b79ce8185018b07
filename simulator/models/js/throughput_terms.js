// Volkov's throughput terms (000, eq 4.4), shared by the Volkov GPU model and the current-
// architecture one. Python reference: simulator/models/volkov.py (throughput_terms).
// `attribute(name)` and `param(params, name)` are the model's own readers (their messages name
// the model); `bandwidthPerSM` is GMem_bw in bytes per SM per cycle.

// Each resource's cycles per warp, named and ordered as volkov.py's terms
function throughputTerms(params, warpSize, bandwidthPerSM, attribute, param) {
  var terms = [
    ['cuda_cores', warpSize * param(params, 'CUDACoreInstructions') / attribute('CUDACores')],
    ['schedulers', param(params, 'issuedInstructions') / attribute('schedulers')],
    ['global_memory', param(params, 'GMEMBytesTransferred') / bandwidthPerSM]];
  var units = [['fp64', 'FP64Instructions', 'FP64Units'], ['sfu', 'SFUInstructions', 'SFUs'], ['shared_memory', 'sharedMemoryInstructions', 'LDSTUnits']];
  for (var i = 0; i < units.length; i++) {
    if (hw[units[i][2]] === undefined) {
      if (params.get(units[i][1], 0) > 0) throw new Error(units[i][1] + " need the hardware's " + units[i][2]);
      continue;
    }
    terms.push([units[i][0], warpSize * params.get(units[i][1], 0) / hw[units[i][2]]]);
  }
  var extra = params.get('extraCyclesPerWarp', []);
  for (var j = 0; j < extra.length; j++) terms.push(['extra', extra[j]]);
  return terms;
}

// The busiest resource (the first of equals) and Th_bound (4.4) in warps per cycle
function busiestTerm(terms) {
  var busiest = terms[0];
  for (var k = 1; k < terms.length; k++) if (terms[k][1] > busiest[1]) busiest = terms[k];
  return {name: busiest[0], bound: busiest[1] > 0 ? 1 / busiest[1] : Infinity};
}
