// The flow network's choices (simulator/flows.py, docs/network-model.md): how a network
// node's link carries messages, and how flow links share bandwidth in a system.

export const SHARING = [
  ["fifo", "fifo: store and forward, one message at a time per direction"],
  ["full-duplex", "full-duplex: flows share each direction's bandwidth"],
  ["shared", "shared: flows in both directions share one bandwidth"],
];

// "" leaves the field out: the simulator's default, maxmin.
export const NETWORK_MODELS = [
  ["", "maxmin (default): max-min fair shares, no factors"],
  ["maxmin", "maxmin: max-min fair shares, no factors"],
  ["CM02", "CM02: SimGrid's, shares weighted by route latency, TCP window bound"],
  ["LV08", "LV08: SimGrid's, with its latency and bandwidth factors"],
];
