// Generic link: latency + size / bandwidth in seconds (eq 4.6 with lambda_c = 1).
// Python reference: simulator/models/transfer.py (latency_bandwidth_time).
// Attributes: latency [s], bandwidth [B/s]; an empty message still pays the latency.

function p2pTime(size, params) {
  return hw.latency + size / hw.bandwidth;
}
