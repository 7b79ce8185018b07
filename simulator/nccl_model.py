"""NCCL's own cost model as data: per-call latency, per-protocol bandwidth, protocol choice.

A collective run with `protocol="nccl"` (or a named protocol, "LL", "LL128", "Simple") adds
to the simulator's transfers what NCCL's tuning model charges and the flow model does not
(docs/collectives.md, "NCCL's cost layer"). Every constant below but `LAUNCH_US` is restated
from NVIDIA's NCCL source, not fitted to any measurement in this repository:

- NVIDIA/nccl, commit 5067397c2676d5aed50042fc39e5c8ee96eb0027 (NCCL 2.30.7,
  makefiles/version.mk), src/graph/tuning.cc (last changed by 50bf0bca1a6b88b2a3e3cebf41f3b827fc9fb19e):
  lines 149-155 (baseLatencies), 156-176 (hwLatencies: NVLINK, PCI, NET), 177-183 (llMaxBws),
  326-329 (the ring's LL and LL128 bandwidth refinements), 376-382 (bus to algorithm
  bandwidth), 384-412 (latency: base + nsteps x per-step hardware latency), 630-655
  (ncclTopoGetAlgoTime: a call's time is its latency plus its bytes over its algbw).
- src/graph/topo.h at the same commit, line 22: SM90_NVLINK_BW 20.6 (GB/s NCCL counts per
  NVLink of an SM90 GPU; NVLink 4 signals 25 GB/s per link and direction: 18 links = 450 GB/s,
  NVIDIA's H100 datasheet), so NCCL's Simple bus bandwidth on an NVLink 4 link is 20.6 / 25 of
  the link's rate.

One constant is not NCCL's: `LAUNCH_US`, the per-call host cost (enqueue and kernel launch)
that NCCL's model leaves out, measured as what CUDA-graph capture removes from an nccl-tests
call (its docstring gives the runs).

The layer uses NCCL's Hopper (SM90) values and one node's NVLink as the intra-node hardware;
it does not model NCCL's channel counts (the LL128 per-channel cap), the tree's own
bandwidth refinements (a tree moves at the ring's protocol efficiencies here) and correction
factors, the multi-node ring "plateau" latency factor, NVLS, CollNet or PAT.
"""

from __future__ import annotations

from collections.abc import Sequence

PROTOCOLS = ("LL", "LL128", "Simple")
"""NCCL's protocols, in its order."""

CHOICES = ("ideal", "nccl", *PROTOCOLS)
"""A collective's `protocol` option: "ideal" (no protocol cost, the default), "nccl" (NCCL's
protocol chosen by its model per size), or one protocol by name."""

BASE_LATENCY_US = {
    "tree": {"LL": 6.8, "LL128": 14.0, "Simple": 8.4},
    "ring": {"LL": 6.6, "LL128": 14.0, "Simple": 8.4},
}
"""tuning.cc lines 149-155, baseLatencies[Tree | Ring][LL, LL128, Simple] (us)."""

HW_LATENCY_US = {
    "nvlink": {
        "tree": {"LL": 0.6, "LL128": 1.25, "Simple": 4.0},
        "ring": {"LL": 0.6, "LL128": 1.9, "Simple": 3.4},
    },
    "net": {
        "tree": {"LL": 5.0, "LL128": 8.5, "Simple": 14.0},
        "ring": {"LL": 2.7, "LL128": 4.0, "Simple": 14.0},
    },
}
"""tuning.cc lines 156-176, hwLatencies[NVLINK | NET][Tree | Ring][protocol] (us per step);
NCCL's PCI row is left out: a host's links are taken as NVLink (`hardware`)."""

LL_MAX_BUS_GBPS = 141.0
"""tuning.cc line 181, llMaxBws[Hopper][one node]: the LL protocol's bus bandwidth cap (GB/s)."""

PROTOCOL_FACTOR = {"LL": 0.5, "LL128": 0.92, "Simple": 1.0}
"""tuning.cc lines 327-329 (NCCL 2.30's ring): LL moves half its bus bandwidth (a 4-byte flag
per 4 data bytes), LL128 0.92 (120 of 128 bytes), Simple the whole."""

NVLINK_SIMPLE_EFFICIENCY = 20.6 / 25.0
"""topo.h line 22: the bandwidth NCCL counts per NVLink 4 link (SM90_NVLINK_BW, 20.6 GB/s)
over the link's 25 GB/s per direction; NCCL's network bandwidth is the NIC's as reported
(efficiency 1)."""

LAUNCH_US = 8.67
"""The per-call cost NCCL's tuning model leaves out and every eager call pays: the host-side
enqueue and kernel launch (NCCL's latencies rank algorithms and protocols, and this cost is
the same for all of them). Measured, not restated from NCCL's source: the median over 8 B -
2 KiB of nccl-tests' eager minus CUDA-graph out-of-place all_reduce time (a graph's replay
has no host launch) on 4 H100 SXM on NVSwitch, NCCL 2.29.2, nccl-tests 2.18.3 `-G 0` and
`-G 1`: waynehacking8/nccl-collectives-bench @207ff7554708070b28cf999aa103162ea1fe537f,
results/symmetric/all_reduce_reg0_graph0.txt and all_reduce_reg0_graph1.txt (transcribed in
validation/network/nccl/h100_nvswitch.json, "launch"). Those two runs are not among the
tables the validation scores; nccl-tests drives the 4 GPUs from one thread there, so the cost
is that of one process launching a call on 4 GPUs."""

TREE_ALGORITHMS = frozenset({"tree", "double_binary_tree"})
"""The simulator's algorithms charged NCCL's tree latencies; every other one its ring's."""


def hardware(crosses_hosts: bool) -> str:
    """Return NCCL's hardware class of a step: "net" when it crosses hosts, else "nvlink"."""
    return "net" if crosses_hosts else "nvlink"


def link_efficiency(hw: str) -> float:
    """Return the share of a link's rate NCCL's Simple protocol moves on hardware `hw`."""
    return NVLINK_SIMPLE_EFFICIENCY if hw == "nvlink" else 1.0


def efficiency(protocol: str, hw: str, link_bytes_per_s: float) -> float:
    """Return the share of a link of `link_bytes_per_s` that `protocol` moves data at on
    hardware `hw` (the bytes on the wire are the data's / this): NCCL's bus bandwidth for the
    protocol (tuning.cc lines 327-329) over the link's rate; LL capped at `LL_MAX_BUS_GBPS`."""
    share = link_efficiency(hw) * PROTOCOL_FACTOR[protocol]
    if protocol == "LL" and link_bytes_per_s > 0:
        share = min(share, LL_MAX_BUS_GBPS * 1e9 / link_bytes_per_s)
    return share


def latency_s(algorithm: str, protocol: str, step_hardware: Sequence[str]) -> float:
    """Return NCCL's per-call latency (s) of a schedule whose steps run on `step_hardware`
    (one class per step): base + the sum of each step's hardware latency, as tuning.cc lines
    384-412 charge a ring (base + (nsteps - nInterSteps) x intra + nInterSteps x inter)."""
    family = "tree" if algorithm in TREE_ALGORITHMS else "ring"
    total = BASE_LATENCY_US[family][protocol]
    for hw in step_hardware:
        total += HW_LATENCY_US[hw][family][protocol]
    return total * 1e-6


def choose(
    algorithm: str,
    size: float,
    bus_factor: float,
    step_hardware: Sequence[str],
    link_bytes_per_s: float,
) -> str:
    """Return the protocol NCCL's model picks for a call of `size` bytes: the least
    latency + size / algbw (ncclTopoGetAlgoTime, tuning.cc lines 630-655), algbw being the
    protocol's bus bandwidth over the collective's bus factor (lines 376-382 for a ring)."""
    hw = "net" if "net" in step_hardware else "nvlink"
    best, best_time = "Simple", float("inf")
    for protocol in PROTOCOLS:
        bus = efficiency(protocol, hw, link_bytes_per_s) * link_bytes_per_s
        algbw = bus / bus_factor if bus_factor > 0 else bus
        time = latency_s(algorithm, protocol, step_hardware) + (size / algbw if algbw else 0.0)
        if time < best_time:
            best, best_time = protocol, time
    return best
