// Host-device bus (000, eq 4.6): T_c = t_s + n / (bw * lambda_c) per direction, in seconds.
// Python reference: simulator/models/transfer.py (PcieLink). Attributes as MERPSYS stores
// them (Fig. 5.2): startupHTD, startupDth [s], lambdaHTD, lambdaDth, bandwidth [B/s].
// A message without a direction is a pure synchronisation: it must be empty and costs 0.

function p2pTime(size, params) {
  var direction = params.get('direction', null);
  if (direction === null) {
    if (size === 0) return 0;
    throw new Error("a non-empty message over a PCIe link needs params.direction ('HostToDevice' or 'DeviceToHost')");
  }
  if (direction === 'HostToDevice') return hw.startupHTD + size / (hw.bandwidth * hw.lambdaHTD);
  if (direction === 'DeviceToHost') return hw.startupDth + size / (hw.bandwidth * hw.lambdaDth);
  throw new Error("direction must be 'HostToDevice' or 'DeviceToHost', got " + direction);
}
