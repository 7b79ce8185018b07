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
- src/enqueue.cc at the same commit (last changed by a3ce94021e982212cc9c5af7fe74979ac77eddf5),
  lines 2222-2227, 2286-2294 and 2361-2362 (calcCollChunking: the tree's chunk per protocol and
  channel), with src/init.cc lines 810-813 and src/include/device.h lines 26, 97-98, 111-115
  (the protocols' buffers): `tree_chunk_bytes`.
- src/graph/topo.h at the same commit, lines 22 and 24: SM90_NVLINK_BW 20.6 and
  SM100_NVLINK_BW 40.1 (GB/s NCCL counts per NVLink of a Hopper and a Blackwell GPU; NVLink 4
  signals 25 GB/s per link and direction, 18 links = 450 GB/s, NVIDIA's H100 datasheet;
  NVLink 5 50 GB/s, 18 links = 900 GB/s), so NCCL's Simple bus bandwidth on an NVLink is
  20.6 / 25 of the link's rate on Hopper and 40.1 / 50 on Blackwell (`Architecture`).

- src/transport/net_ib/init.cc at the same commit, line 558: InfiniBand reports no network
  latency of its own (`props->latency = 0`), so NCCL's per-step network latency is the whole
  step (`charged_latency_s`).

One constant is not NCCL's: `LAUNCH_US`, the per-call host cost (enqueue and kernel launch)
that NCCL's model leaves out, measured as what CUDA-graph capture removes from an nccl-tests
call (its docstring gives the runs).

The layer takes NCCL's per-generation values (`Architecture`: Pascal, Volta, Ampere (the
GA10x parts' narrower NVLink apart), Hopper or Blackwell, by the participants' smallest
`computeCapability`, as NCCL's compCapIndex and ncclTopoNVLinkBw) and one node's NVLink as
the intra-node hardware;
it does not model NCCL's channel counts (the LL128 per-channel cap, the tree's per-channel
caps), the tree's balanced-pattern factor, the multi-node ring "plateau" latency factor,
CollNet or PAT. An allreduce by a tree runs NCCL's tree (a chain in each node, a double
binary tree across nodes) with its bandwidth refinements, correction by size and latency.
NCCL's NVLS allreduce (NVLink SHARP, one node) has its efficiency, latency and NCCL's model
of its bandwidth for the choice of algorithm (`Architecture.nvls_efficiency`,
`NVLS_LATENCY_US`, `nvls_bus_bytes_per_s`); NVLSTree (NVLS over several nodes) is not modelled.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

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

PROTOCOL_FACTOR = {"LL": 0.5, "LL128": 0.92, "Simple": 1.0}
"""tuning.cc lines 327-329 (NCCL 2.30's ring): LL moves half its bus bandwidth (a 4-byte flag
per 4 data bytes), LL128 0.92 (120 of 128 bytes), Simple the whole."""


@dataclass(frozen=True)
class Architecture:
    """NCCL's constants that depend on the GPU's generation (its compute capability: NCCL's
    compCapIndex, tuning.cc lines 263-266, and search.cc lines 1156-1157 and topo.h lines
    275-276 by the smallest compute capability of the communicator). Every other constant
    of the module is the same for every generation at the cited commit."""

    name: str
    nvlink_gbps: float
    """topo.h: the bandwidth NCCL counts per NVLink (GB/s)."""
    nvlink_signal_gbps: float
    """The link's own rate per direction (GB/s), per NVIDIA's datasheet of the generation."""
    ll_max_bus_gbps: float
    """tuning.cc lines 177-183, llMaxBws[generation][one node]: LL's bus bandwidth cap (GB/s)."""
    nvls_efficiency: float
    """tuning.cc lines 138-144, nvlsEfficiency[generation]: NCCL's "NVLS efficiency factor",
    the share of its NVLink bandwidth an NVLS channel moves (tuning.cc lines 310-312)."""
    speeds_intra: tuple[float, ...]
    """search.cc: the per-channel bandwidths (GB/s) NCCL's graph search tries on one node,
    fastest first."""

    @property
    def nvlink_simple_efficiency(self) -> float:
        """NCCL's Simple share of an NVLink: its counted bandwidth over the link's rate."""
        return self.nvlink_gbps / self.nvlink_signal_gbps


SPEEDS_INTRA = (40.0, 30.0, 20.0, 18.0, 15.0, 12.0, 10.0, 9.0, 7.0, 6.0, 5.0, 4.0, 3.0)
"""search.cc line 1051, speedArrayIntra: the per-channel bandwidths NCCL tries on one node of
GPUs below compute capability 9.0 (search.cc line 1157)."""

# Below Hopper NCCL has no NVLS (nvlsEfficiency 0, tuning.cc lines 140-141; search.cc line
# 1124), and LL's one-node cap is its compCapIndex's row of llMaxBws: Volta's for every GPU
# below 8.0 (tuning.cc lines 263-266), Ampere's from 8.0.
PASCAL = Architecture(
    name="Pascal",
    nvlink_gbps=18.0,  # topo.h line 19, SM60_NVLINK_BW
    # NVLink 1: four links, 160 GB/s bidirectional, 20 GB/s per link and direction (NVIDIA
    # Tesla P100 whitepaper, WP-08019-001, "NVLink: Extraordinary Bandwidth")
    nvlink_signal_gbps=20.0,
    ll_max_bus_gbps=39.0,  # tuning.cc line 179, llMaxBws[Volta][N1]
    nvls_efficiency=0.0,
    speeds_intra=SPEEDS_INTRA,
)
"""NCCL's constants for compute capability from 6.0, below 7.0 (and, as NCCL does, nothing
else below 7.0 has NVLink): the NVLink count of SM60, Volta's row of the tables."""

VOLTA = Architecture(
    name="Volta",
    nvlink_gbps=20.0,  # topo.h line 20, SM70_NVLINK_BW
    # NVLink 2: six links, 300 GB/s bidirectional, 25 GB/s per link and direction (NVIDIA
    # Tesla V100 whitepaper, WP-08608-001, "Second-Generation NVLink")
    nvlink_signal_gbps=25.0,
    ll_max_bus_gbps=39.0,  # tuning.cc line 179, llMaxBws[Volta][N1]
    nvls_efficiency=0.0,
    speeds_intra=SPEEDS_INTRA,
)
"""NCCL's Volta constants: compute capability from 7.0, below 8.0 (and below 6.0, whose
NVLink NCCL counts as SM80's 20 GB/s, topo.h line 281)."""

AMPERE = Architecture(
    name="Ampere",
    nvlink_gbps=20.0,  # topo.h line 21, SM80_NVLINK_BW
    # NVLink 3: twelve links, 600 GB/s bidirectional, 25 GB/s per link and direction (NVIDIA
    # A100 Tensor Core GPU Architecture whitepaper, "Third-Generation NVLink")
    nvlink_signal_gbps=25.0,
    ll_max_bus_gbps=87.7,  # tuning.cc line 180, llMaxBws[Ampere][N1]
    nvls_efficiency=0.0,
    speeds_intra=SPEEDS_INTRA,
)
"""NCCL's Ampere constants: compute capability from 8.0, below 9.0, but 8.6 (A100's 8.0;
Ada's 8.9, which NCCL counts as Ampere, has no NVLink)."""

AMPERE_GA10X = Architecture(
    name="Ampere (GA10x)",
    nvlink_gbps=12.0,  # topo.h line 23, SM86_NVLINK_BW
    # GA102's NVLink 3: four x4 links of 14.0625 GB/s per direction, 112.5 GB/s in all
    # between two GPUs (NVIDIA Ampere GA102 GPU Architecture whitepaper, "Third-Generation
    # NVLink"; the A40 product brief's "NVLink 112.5 GB/s (bidirectional)")
    nvlink_signal_gbps=14.0625,
    ll_max_bus_gbps=87.7,  # tuning.cc line 180, llMaxBws[Ampere][N1]
    nvls_efficiency=0.0,
    speeds_intra=SPEEDS_INTRA,
)
"""NCCL's constants for compute capability 8.6 exactly (RTX 3090, A40: topo.h line 277)."""

HOPPER = Architecture(
    name="Hopper",
    nvlink_gbps=20.6,  # topo.h line 22, SM90_NVLINK_BW
    nvlink_signal_gbps=25.0,  # NVLink 4: 18 links = 450 GB/s per direction (H100 datasheet)
    ll_max_bus_gbps=141.0,  # tuning.cc line 181, llMaxBws[Hopper][N1]
    nvls_efficiency=0.85,  # tuning.cc line 142, nvlsEfficiency[Hopper]
    speeds_intra=(60.0, 50.0, 40.0, 30.0, 24.0, 20.0, 15.0, 12.0, 11.0, 6.0, 3.0),  # search.cc
    # line 1057, sm90SpeedArrayIntra
)
"""NCCL's Hopper (SM90) constants: compute capability from 9.0, below 10.0."""

BLACKWELL = Architecture(
    name="Blackwell",
    nvlink_gbps=40.1,  # topo.h line 24, SM100_NVLINK_BW
    # NVLink 5: 18 links of 100 GB/s bidirectional, 50 GB/s per direction (NVIDIA NVLink page,
    # https://www.nvidia.com/en-us/data-center/nvlink/: "18 NVLink 100 gigabyte-per-second
    # (GB/s) connections for a total bandwidth of 1.8 terabytes per second")
    nvlink_signal_gbps=50.0,
    ll_max_bus_gbps=2 * 141.0,  # tuning.cc line 182, llMaxBws[Blackwell][N1]
    nvls_efficiency=0.74,  # tuning.cc line 143, nvlsEfficiency[Blackwell]
    speeds_intra=(90.0, 80.0, 70.0, 60.0, 50.0, 45.0, 40.0, 30.0, 24.0, 20.0, 19.0, 18.0),
    # search.cc line 1063, sm100SpeedArrayIntra
)
"""NCCL's Blackwell (SM100) constants: compute capability from 10.0."""


def architecture(compute_capability: float | None) -> Architecture:
    """Return NCCL's constants for GPUs whose smallest compute capability is
    `compute_capability`, as NCCL chooses its tables (tuning.cc lines 263-266: Blackwell from
    10.0, Hopper from 9.0, Ampere from 8.0, Volta below) and its NVLink count (topo.h lines
    275-281: 8.6 its own, 6.0 to 6.9 Pascal's). A record that gives none gets Hopper's, the
    generation of the seeded clusters."""
    if compute_capability is None:
        return HOPPER
    tenths = round(compute_capability * 10)
    if tenths >= 100:
        return BLACKWELL
    if tenths >= 90:
        return HOPPER
    if tenths == 86:
        return AMPERE_GA10X
    if tenths >= 80:
        return AMPERE
    if 60 <= tenths < 70:
        return PASCAL
    return VOLTA


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
"""The simulator's algorithms charged NCCL's tree latencies; every other one its ring's. An
allreduce by either runs NCCL's own tree under the layer (`simulator.collectives.nccl_tree`)."""

TREE_FACTOR = {"LL": 0.92 / 3.8, "LL128": 0.92, "Simple": 0.92}
"""tuning.cc lines 330-335, NCCL's tree allreduce refinements of its bus bandwidth: x 0.92 for
every protocol, then LL x 1/3.8 and LL128 x 7/9 in one node (x 120/128 over several: see
`tree_factor`); the per-channel caps are left out, as the ring's are."""

TREE_LL128_ONE_NODE = 7.0 / 9.0
TREE_LL128_NODES = 120.0 / 128.0
"""tuning.cc line 335: LL128's share on a tree in one node and over several."""

# fmt: off
TREE_CORRECTION = {
    "LL": (
        1.0, 1.0, 1.0, 1.0, 0.9, 0.8, 0.7, 0.7, 0.7, 0.7, 0.6, 0.5,
        0.4, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0, 1.0, 1.0, 1.0, 1.0,
    ),
    "LL128": (
        1.0, 1.0, 1.0, 1.0, 1.0, 0.9, 0.8, 0.8, 0.8, 0.7, 0.6, 0.6,
        0.6, 0.6, 0.6, 0.6, 0.8, 0.9, 0.9, 0.9, 0.9, 1.0, 1.0, 1.0,
    ),
    "Simple": (
        0.9, 0.9, 0.9, 0.9, 0.9, 0.9, 0.9, 0.8, 0.7, 0.6, 0.6, 0.5,
        0.5, 0.5, 0.5, 0.6, 0.7, 0.8, 0.7, 0.7, 0.8, 0.9, 0.9, 0.9,
    ),
}
# fmt: on
"""tuning.cc lines 620-628, treeCorrectionFactor[protocol][log2(bytes / 64)]: NCCL's own
correction of its tree allreduce's bandwidth by size ("trees are not perfectly sticking to the
model for medium sizes"); lines 639-642 apply it for log2(bytes / 64) in 0..22 only."""

TREE_ALGBW_RATIO = 0.5
"""tuning.cc line 380: a tree allreduce's algorithm bandwidth is half its bus bandwidth (the
data goes up and comes down each link)."""


def tree_factor(protocol: str, nodes: int) -> float:
    """Return NCCL's tree allreduce share of the link for `protocol` over `nodes` nodes
    (`TREE_FACTOR`, LL128's by the node count)."""
    if protocol == "LL128":
        return TREE_FACTOR[protocol] * (TREE_LL128_ONE_NODE if nodes == 1 else TREE_LL128_NODES)
    return TREE_FACTOR[protocol]


def tree_correction(protocol: str, size: float) -> float:
    """Return `TREE_CORRECTION`'s factor for an allreduce of `size` bytes (1 outside its range)."""
    log_size = (int(size) >> 6).bit_length() - 1
    return TREE_CORRECTION[protocol][log_size] if 0 <= log_size < 23 else 1.0


TREE_CHUNK_BYTES = {"LL": 32768, "LL128": 576000, "Simple": 524288}
"""The data bytes of one chunk of NCCL's tree per protocol before the LL128 tree's tuning
(`tree_chunk_bytes`): enqueue.cc (last changed by a3ce94021e982212cc9c5af7fe74979ac77eddf5)
lines 2222-2227 in calcCollChunking, a step of the protocol's buffer (buffSizes / NCCL_STEPS,
device.h line 26: 8 steps; the tree takes one step a chunk), LL half of it (a flag per data
word), LL128 15 of its 16 words a line; the buffers from init.cc lines 810-813: LL 8 lines
x 512 threads x 8 steps x 16 B, LL128 120 words x 640 threads x 8 steps x 8 B, Simple 4 MiB
(device.h lines 97-98, 111-115)."""

TREE_MOST_PIECES = 64
"""At most this many pieces a simulated tree carries (a larger chunk beyond it): simulating a
call costs events in proportion to its pieces and its members, and NCCL's Simple chunk over a
many-GiB message would give thousands a channel. At this cap a pipeline of S stages pays
(S - 1) / 64 of a message's time for its fill beyond NCCL's own chunking."""


def tree_chunk_bytes(protocol: str, size: float, channels: int, ranks: int, nodes: int) -> int:
    """Return the bytes of one chunk of NCCL's tree allreduce of `size` bytes over `channels`
    channels, `ranks` GPUs on `nodes` nodes: `TREE_CHUNK_BYTES`, and for LL128 halved while a
    channel would carry fewer chunks than its pipeline wants (enqueue.cc lines 2286-2294:
    nsteps = 1 + log2(nodes) + ranks per node / 10, then at least nsteps x 64 / ppn chunks
    a channel above 128 KiB and nsteps x 16 / ppn above 32 KiB, the count rounded down as
    NCCL's integer division). A channel's data moves in its chunks one after another
    (enqueue.cc lines 2361-2362: ceil(bytes / (channels x chunk)) loops)."""
    chunk = TREE_CHUNK_BYTES[protocol]
    if protocol == "LL128":
        ppn = ranks / max(nodes, 1)
        nsteps = 1 + (max(nodes, 1).bit_length() - 1) + 0.1 * ppn
        per_loop = max(channels, 1)
        while int(size) // (per_loop * chunk) < nsteps * 64 / ppn and chunk > 131072:
            chunk //= 2
        while int(size) // (per_loop * chunk) < nsteps * 16 / ppn and chunk > 32768:
            chunk //= 2
    return chunk


def tree_steps(per_node: int, nodes: int) -> list[str]:
    """Return the hardware of NCCL's tree allreduce's latency steps (tuning.cc line 416:
    2 ((ranks per node - 1) intra-node + log2(nodes) inter-node), log2 rounded down)."""
    across = nodes.bit_length() - 1 if nodes > 0 else 0
    return ["nvlink"] * (2 * (per_node - 1)) + ["net"] * (2 * across)


def hardware(crosses_hosts: bool) -> str:
    """Return NCCL's hardware class of a step: "net" when it crosses hosts, else "nvlink"."""
    return "net" if crosses_hosts else "nvlink"


def link_efficiency(hw: str, arch: Architecture = HOPPER) -> float:
    """Return the share of a link's rate NCCL's Simple protocol moves on hardware `hw` with
    GPUs of `arch` (`Architecture.nvlink_simple_efficiency`); NCCL's network bandwidth is the
    NIC's as reported (efficiency 1)."""
    return arch.nvlink_simple_efficiency if hw == "nvlink" else 1.0


def efficiency(
    protocol: str,
    hw: str,
    link_bytes_per_s: float,
    tree: tuple[int, float] | None = None,
    arch: Architecture = HOPPER,
) -> float:
    """Return the share of a link of `link_bytes_per_s` that `protocol` moves data at on
    hardware `hw` (the bytes on the wire are the data's / this): NCCL's bus bandwidth for the
    protocol (tuning.cc lines 327-329) over the link's rate; LL capped at `arch`'s
    `ll_max_bus_gbps`. `tree`: (nodes, bytes) of a call of NCCL's tree allreduce, whose share
    is the tree's (`tree_factor`), corrected by size (`tree_correction`)."""
    factor = PROTOCOL_FACTOR[protocol] if tree is None else tree_factor(protocol, tree[0])
    share = link_efficiency(hw, arch) * factor
    if protocol == "LL" and link_bytes_per_s > 0:
        share = min(share, arch.ll_max_bus_gbps * 1e9 / link_bytes_per_s)
    if tree is not None:
        share *= tree_correction(protocol, tree[1])
    return share


def step_latency_us(hw: str, family: str, protocol: str, nodes: int = 1) -> float:
    """Return NCCL's latency of one step (us) on hardware `hw` of an algorithm of `family`
    ("ring" or "tree") over `nodes` nodes: `HW_LATENCY_US`, and for a ring's NVLink step over
    several nodes at least NCCL's network post overhead, x 3 for Simple (tuning.cc lines
    404-410: "inter-node rings still have to launch nsteps * net overhead")."""
    latency = HW_LATENCY_US[hw][family][protocol]
    if family == "ring" and nodes > 1 and hw == "nvlink":
        latency = max(latency, NET_OVERHEAD_US * (3 if protocol == "Simple" else 1))
    return latency


def latency_s(algorithm: str, protocol: str, step_hardware: Sequence[str], nodes: int = 1) -> float:
    """Return NCCL's per-call latency (s) of a schedule whose steps run on `step_hardware`
    (one class per step) over `nodes` nodes: base + the sum of each step's latency
    (`step_latency_us`), as tuning.cc lines 384-412 charge a ring (base + (nsteps -
    nInterSteps) x intra + nInterSteps x inter); NVLS's is one figure on one node
    (`NVLS_LATENCY_US`)."""
    if algorithm == "nvls":
        return NVLS_LATENCY_US * 1e-6
    family = "tree" if algorithm in TREE_ALGORITHMS else "ring"
    total = BASE_LATENCY_US[family][protocol]
    for hw in step_hardware:
        total += step_latency_us(hw, family, protocol, nodes)
    return total * 1e-6


def charged_latency_s(
    algorithm: str,
    protocol: str,
    step_hardware: Sequence[str],
    step_route_s: Sequence[float],
    nodes: int = 1,
) -> float:
    """Return the part of NCCL's per-call latency (`latency_s` over `nodes` nodes) the layer
    charges before any data moves where the simulated transfers pay each step's route latency
    themselves (`step_route_s`, one per step, s): the base latency, and per step only what
    NCCL's step latency (`step_latency_us`) exceeds the route's, so that a step's latency is
    charged once, the larger of the two.

    NCCL's per-step latencies are whole steps: tuning.cc (lines 384-416 at the commit the
    module cites) adds to a network step only `graphs[a]->latencyInter`, the network's own
    latency as its transport reports it, which InfiniBand's leaves 0
    (src/transport/net_ib/init.cc line 558: `props->latency = 0; // Not set`), and to an
    NVLink step nothing; a step's latency is NCCL's figure, not that figure on top of the
    wire's. The layer charges this where the simulator runs NCCL's channels over several
    nodes (`simulator.collectives.nccl_ring` and `nccl_tree` across nodes); on one node it
    charges `latency_s` whole, on top of the routes' latencies, as the single-node tables
    were compared (docs/validation/nccl-tests.md says what charging it once there too
    would move)."""
    family = "tree" if algorithm in TREE_ALGORITHMS else "ring"
    total = BASE_LATENCY_US[family][protocol] * 1e-6
    for hw, route in zip(step_hardware, step_route_s, strict=True):
        total += max(step_latency_us(hw, family, protocol, nodes) * 1e-6 - route, 0.0)
    return total


def choose(
    algorithm: str,
    size: float,
    bus_factor: float,
    step_hardware: Sequence[str],
    link_bytes_per_s: float,
    tree: tuple[int, float] | None = None,
    nodes: int = 1,
    arch: Architecture = HOPPER,
) -> str:
    """Return the protocol NCCL's model picks for a call of `size` bytes: the least
    latency + size / algbw (ncclTopoGetAlgoTime, tuning.cc lines 630-655), algbw being the
    protocol's bus bandwidth over the collective's bus factor (lines 376-382 for a ring), or
    half of it for NCCL's tree allreduce (`tree`: `efficiency`'s), over `nodes` nodes of
    GPUs of `arch`."""
    hw = "net" if "net" in step_hardware else "nvlink"
    best, best_time = "Simple", float("inf")
    for protocol in PROTOCOLS:
        bus = efficiency(protocol, hw, link_bytes_per_s, tree, arch) * link_bytes_per_s
        if tree is not None:
            algbw = bus * TREE_ALGBW_RATIO
        else:
            algbw = bus / bus_factor if bus_factor > 0 else bus
        time = latency_s(algorithm, protocol, step_hardware, nodes)
        time += size / algbw if algbw else 0.0
        if time < best_time:
            best, best_time = protocol, time
    return best


RING_PLATEAU = 1.4
"""tuning.cc lines 647-650: a multi-node ring allreduce's Simple latency x 1.4 on SM80 and
newer ("plateau effect of ring")."""

NET_OVERHEAD_US = 1.0
"""tuning.cc lines 225-233: NCCL's network post overhead on an Intel (or unknown) host (us);
lines 404-410 make a multi-node ring's intra-node step cost at least it (x 3 for Simple)."""


def algorithm_time_s(
    algorithm: str,
    protocol: str,
    size: float,
    ranks: int,
    nodes: int,
    bus_bytes_per_s: float,
    arch: Architecture = HOPPER,
) -> float:
    """Return NCCL's model time (ncclTopoGetAlgoTime, tuning.cc lines 630-655) of an
    allreduce of `size` bytes by `algorithm` ("ring" or "tree") and `protocol` over `ranks`
    GPUs on `nodes` nodes whose bus moves `bus_bytes_per_s` (NCCL's channels x per-channel
    bandwidth), with the latencies of lines 384-416 and the bandwidth refinements above."""
    per_node = max(ranks // max(nodes, 1), 1)
    if algorithm == "ring":
        steps = 2 * (ranks - 1)
        across = 2 * (nodes - 1) if nodes > 1 else 0
        intra = step_latency_us("nvlink", "ring", protocol, nodes)
        latency = BASE_LATENCY_US["ring"][protocol] + (steps - across) * intra
        latency += across * HW_LATENCY_US["net"]["ring"][protocol]
        if protocol == "Simple" and nodes > 1:
            latency *= RING_PLATEAU
        share = efficiency(protocol, "net", bus_bytes_per_s, None, arch)
        algbw = share * bus_bytes_per_s * ranks / steps
    else:
        levels = nodes.bit_length() - 1
        latency = BASE_LATENCY_US["tree"][protocol] + 2 * (
            (per_node - 1) * HW_LATENCY_US["nvlink"]["tree"][protocol]
            + levels * HW_LATENCY_US["net"]["tree"][protocol]
        )
        share = efficiency(protocol, "net", bus_bytes_per_s, (nodes, size), arch)
        algbw = share * bus_bytes_per_s * TREE_ALGBW_RATIO
    return latency * 1e-6 + (size / algbw if algbw > 0 else 0.0)


def choose_algorithm(
    size: float,
    ranks: int,
    nodes: int,
    bus_bytes_per_s: float,
    nvls: bool = False,
    arch: Architecture = HOPPER,
) -> str:
    """Return the allreduce algorithm NCCL's model picks, "ring", "tree" or "nvls": the one
    whose best protocol takes the least model time (`algorithm_time_s`, `nvls_time_s`) on
    GPUs of `arch`. NVLS is a candidate only where `nvls` says the members' switch supports
    it and they are on one node (`nvls_enabled`)."""
    best, best_time = "ring", float("inf")
    for algorithm in ("ring", "tree"):
        for protocol in PROTOCOLS:
            time = algorithm_time_s(algorithm, protocol, size, ranks, nodes, bus_bytes_per_s, arch)
            if time < best_time:
                best, best_time = algorithm, time
    nvls_time = nvls_time_s(size, ranks, bus_bytes_per_s, arch) if nvls else float("inf")
    if nvls_enabled(ranks, nodes) and nvls_time < best_time:
        best = "nvls"
    return best


NVLS_LATENCY_US = 25.0
"""tuning.cc line 161, hwLatencies[NVLINK][NVLS][Simple] (us), one figure for every GPU
generation (the tuner constants are not per compute capability); its base latency is 0 (line
153), and on one node a call's NVLS latency is this one figure, not per step (lines
424-426: `latencies = intraLat`, the network's added only over several nodes)."""

NVLS_PROTOCOL = "Simple"
"""tuning.cc line 301: NVLS runs the Simple protocol only (LL and LL128 are skipped)."""


def nvls_enabled(ranks: int, nodes: int) -> bool:
    """Return whether NCCL's tuner may pick NVLS for an allreduce over `ranks` GPUs on
    `nodes` nodes of an NVLS-capable switch: one node (tuning.cc lines 503-506 disable NVLS
    over several nodes without CollNet) and at least two channels, one per GPU on one node
    (line 308; search.cc lines 1126-1137: the NVLS graph's channels are its GPUs)."""
    return nodes == 1 and ranks >= 2


def nvls_channel_gbps(ranks: int, bus_bytes_per_s: float, arch: Architecture = HOPPER) -> float:
    """Return the per-channel bandwidth (GB/s) NCCL's search gives an NVLS graph of `ranks`
    GPUs of `arch` on one node whose NVLink moves `bus_bytes_per_s` (NCCL's figure,
    `link_efficiency` x the link): the speed its search starts from (search.cc lines
    1163-1172), the fastest of `arch`'s `speeds_intra` (search.cc lines 1156-1157) within the
    GPU's NVLink whose channels (one per GPU) fit in that
    NVLink x ranks / (ranks - 1) (line 1167: patterns other than the ring get that much more);
    0 where none fits. NCCL 2.29.2's own tuning table on 2, 4 and 6 H100 SXM (the
    nccl-tests logs of validation/network/nccl/README.md, `g{2,4,6}_auto.log`: NVLS AllReduce
    102.0, 160.0 and 216.0 GB/s) is this speed's (`nvls_bus_bytes_per_s`)."""
    link = bus_bytes_per_s / 1e9
    total = link * ranks / (ranks - 1) if ranks > 1 else link
    return next(
        (speed for speed in arch.speeds_intra if speed <= link and speed * ranks <= total), 0.0
    )


def nvls_bus_bytes_per_s(ranks: int, bus_bytes_per_s: float, arch: Architecture = HOPPER) -> float:
    """Return NCCL's model bus bandwidth (bytes/s) of an NVLS allreduce over `ranks` GPUs of
    `arch` on one node (tuning.cc lines 307-324): per channel the smaller of the channel's
    intra-node figure (speed x `arch.nvls_efficiency` x (channels - 1) / channels, x 2 for an
    allreduce,
    which pipelines two operations) and its inter-node one (the same speed on one node,
    search.cc line 1174), times the channels (one per GPU)."""
    speed = nvls_channel_gbps(ranks, bus_bytes_per_s, arch)
    channels = ranks
    intra = speed * arch.nvls_efficiency * (channels - 1) / channels * 2.0
    return channels * min(intra, speed) * 1e9


def nvls_time_s(
    size: float, ranks: int, bus_bytes_per_s: float, arch: Architecture = HOPPER
) -> float:
    """Return NCCL's model time (ncclTopoGetAlgoTime) of an NVLS allreduce of `size` bytes
    over `ranks` GPUs of `arch` on one node: `NVLS_LATENCY_US` + size / algbw, algbw being
    the bus bandwidth x ranks / (2 (ranks - 1)) (tuning.cc line 379)."""
    algbw = nvls_bus_bytes_per_s(ranks, bus_bytes_per_s, arch) * ranks / (2 * (ranks - 1))
    return NVLS_LATENCY_US * 1e-6 + (size / algbw if algbw > 0 else float("inf"))


def nvls_share(arch: Architecture = HOPPER) -> float:
    """Return the share of an NVLink an NVLS allreduce's transfers move data at under the
    layer on GPUs of `arch`: NCCL's Simple share of the link (`link_efficiency`) x
    `arch.nvls_efficiency`. NCCL's (channels - 1) / channels per-channel term is left out, as
    the layer leaves out every channel count and per-channel cap (module docstring)."""
    return link_efficiency("nvlink", arch) * arch.nvls_efficiency
