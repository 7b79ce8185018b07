// Host-device bus (000, eq 4.6): T_c = t_s + n / (bw * lambda_c) per direction, in seconds.
// Python reference: simulator/models/transfer.py (PcieLink). Attributes as MERPSYS stores
// them (Fig. 5.2): startupHTD, startupDth [s], lambdaHTD, lambdaDth, bandwidth [B/s].
// A message without a direction is a pure synchronisation: it must be empty and costs 0.
//
// Host memory kind: params.hostMemory is 'pageable' (the default, as 000's Listing 6) or
// 'pinned'. The CUDA driver stages a pageable copy through a pinned buffer with a CPU memcpy,
// so it runs at the host staging rate B_p when that is below the link's. A direction whose
// link carries the pageable pair pageableStartupHTD [s] + pageableBandwidthHTD [B/s] (or
// ...Dth) charges a pageable copy
//     T_c = t_p + n / min(bw * lambda_c, B_p)                                      (4.6p)
// and a pinned one (4.6). Without the pair both kinds cost (4.6): 000's testbeds were
// measured with pageable memory, so their t_s and lambda_c already carry the staging.

// Refuse a link that lacks attributes, naming all of them when several are missing, in the
// order and with the words of the Python reference (PcieLink.from_attributes): the figures
// would be NaN otherwise, and a NaN time says nothing of what is lacking.
var LINK_ATTRIBUTES = ['bandwidth', 'startupHTD', 'lambdaHTD', 'startupDth', 'lambdaDth'];

function linkAttribute(name) {
  if (!(name in hw)) throw new Error("link attribute '" + name + "' is required");
  return hw[name];
}

// Return {bandwidth, HTD, Dth}: each direction's startup, lambda and pageable staging (null:
// none), read in the reference's order so that the first refusal is the same.
function pcieLink() {
  var missing = LINK_ATTRIBUTES.filter(function (name) { return !(name in hw); });
  if (missing.length > 1) {
    throw new Error("link attributes '" + missing.join("', '") + "' are required");
  }
  var link = {bandwidth: linkAttribute('bandwidth')};
  ['HTD', 'Dth'].forEach(function (suffix) {
    link[suffix] = {
      startup: linkAttribute('startup' + suffix),
      lambda: linkAttribute('lambda' + suffix),
      staging: pageableStaging(suffix),
    };
  });
  return link;
}

function pageableStaging(suffix) {
  var startup = 'pageableStartup' + suffix, bandwidth = 'pageableBandwidth' + suffix;
  var hasStartup = startup in hw, hasBandwidth = bandwidth in hw;
  if (!hasStartup && !hasBandwidth) return null;
  if (!hasStartup || !hasBandwidth) {
    var present = hasStartup ? startup : bandwidth, missing = hasStartup ? bandwidth : startup;
    throw new Error("link attributes '" + present + "' and '" + missing +
                    "' go together: give both or neither");
  }
  return {startup: hw[startup], bandwidth: hw[bandwidth]};
}

function directionTime(size, startup, rate, staging, hostMemory) {
  if (hostMemory === 'pinned' || staging === null) return startup + size / rate;
  return staging.startup + size / Math.min(rate, staging.bandwidth);
}

function p2pTime(size, params) {
  var link = pcieLink();
  var hostMemory = params.get('hostMemory', 'pageable');
  if (hostMemory !== 'pageable' && hostMemory !== 'pinned') {
    var shown = typeof hostMemory === 'string' ? "'" + hostMemory + "'" : String(hostMemory);
    throw new Error("hostMemory must be 'pageable' or 'pinned', got " + shown);
  }
  var direction = params.get('direction', null);
  if (direction === null) {
    if (size === 0) return 0;
    throw new Error("a non-empty message over a PCIe link needs params.direction ('HostToDevice' or 'DeviceToHost')");
  }
  if (direction === 'HostToDevice' || direction === 'DeviceToHost') {
    var way = link[direction === 'HostToDevice' ? 'HTD' : 'Dth'];
    return directionTime(size, way.startup, link.bandwidth * way.lambda, way.staging, hostMemory);
  }
  throw new Error("direction must be 'HostToDevice' or 'DeviceToHost', got " + direction);
}
