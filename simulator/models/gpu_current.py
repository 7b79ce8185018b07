"""GPU kernel time on current architectures: Volkov's bounds with what today's GPUs add
(issue 11; docs/models.md 1 for the paper-exact model it builds on, which stays in `volkov.py`).

    T_k     = t_launch + t_wake + sum over waves w of  o_w / W_Th(o_w) / SM_clock         (C.1)
    W_Th(o) = ((o / Lat_bound)^-p + Th_bound^-p)^(-1/p)                                   (C.2)
    Th_bound as (4.4), with GMem_bw = the L2's bandwidth per SM cycle when the kernel's
              data are resident in L2 and fit in it, else GMEMThroughput when recorded (an
              achieved figure, as MERPSYS records it), else memoryEfficiency * (4.5)       (C.3)
    waves:  B = floor(occupancy / warps per block) blocks per SM, B * SMs blocks a wave;
            full waves run o = B * warps per block warps per SM; the tail wave's busiest SM
            runs ceil(tail blocks / SMs) blocks                                            (C.4)
    t_wake  = clockWakePenalty * (1 - exp(-idle / clockWakeTimeConstant))                  (C.5)
    Th_bound's terms beyond (4.4), cycles per warp:
            tensor = INS_tensor * F_mma / R_tensor(precision)
            int    = warp_size * INS_int / INTUnits                                        (C.6)

(C.6): R_tensor is the dense rate of the kernel's precision in FLOPs (integer operations for
INT8) per SM per cycle (`tensorFLOPsPerCycleFP16` for FP16 and BF16, ...TF32, ...FP8, ...FP4,
...FP64, `tensorOpsPerCycleINT8`); F_mma the FLOPs of one warp's tensor instruction (the
mma.sync shape of `TENSOR_PRECISIONS` unless `tensorFLOPsPerInstruction` says otherwise).
A record's rate is NVIDIA's dense peak / (SMs x SMCoreClock), so that the model reproduces the
published peak at the record's clock (NVIDIA quotes the H100's FP16 peak at 1830 MHz, where
the SM's 4096 FLOPs per cycle give 989 TFLOPS; at the record's 1980 MHz that is 3786). INS_int (INT32
instructions, a subset of INS_cuda) run on INTUnits lanes, half the FP32 lanes on Volta to
Hopper; a record without INTUnits (INT32 on the FP32 cores, as on Maxwell and Pascal) has
no such term. Sources of every rate: `hwdb/seed/hardware.json`; docs/kernel-throughput.md.

    shared_memory = warp_size * INS_shared * n / LDSTUnits                                (C.7)

(C.7): shared memory has 32 banks of 4 bytes; an n-way bank conflict splits a warp's access
into n serialised ones (CUDA C++ Programming Guide, "Shared Memory" of compute capability 5.0
and later), so (4.4)'s shared-memory term is multiplied by the accesses' average n
(`sharedMemoryConflictWays`, 1 without conflicts, 32 when a warp hits one bank at 32 words).

    atomics = warp_size * a * SMs * f_SM / R_atomic,
              R_atomic = min(c * R_sector, D * r_same * f_SM)                              (C.8)
    Lat_bound' = Lat_bound + n_bar * (t_bar + max(0, w / schedulers - 1) * INS_issued / (n_bar + 1))
                                                                                            (C.9)
    global_memory' = global_memory * s * sector / (warp_size * b)                           (C.10)

(C.8): global atomics are resolved in the L2 slices. `a` is the global atomic operations per
thread (`atomicsPerThread`; the analyzer gives its global ATOM/RED instructions per warp, one
per warp for an atomic ptxas aggregated over the warp, and a kernel whose atomics run on one
lane of a block gives the fraction), R_sector the L2's atomic
throughput in operations per second when every operation is its own 32-byte sector access
(`L2AtomicThroughput` where recorded, else one sector access per operation at `L2Bandwidth`,
else at the DRAM bandwidth of (C.3)), c the operations per sector access (`atomicsPerSector`,
1 by default; 8 for a warp's 4-byte atomics on consecutive addresses). Atomics on
one address serialise: the L2 does `atomicSameAddressRate` operations per clock on a common
address, one on Kepler GK110 and later (NVIDIA, "Kepler GK110 Architecture Whitepaper", 2012,
"Atomic operation throughput to a common global memory address is improved [...] to one
operation per clock"); so D distinct addresses (`atomicAddresses`, absent for addresses
spread over the whole L2) give at most D operations per clock.
(C.9): a block's warps leave a __syncthreads barrier together, so each of its n_bar barriers
per warp (`barrierInstructions`, BAR.SYNC) adds to a warp's latency path the barrier's own
cost t_bar (`barrierLatency` [cycles], 0 unless recorded: the analyzer's Lat_bound already
holds the BAR instruction's latency) and the wait for the block's slowest warp: the block's w
warps share the SM's schedulers, so the last of them reaches the barrier after the others
issued their part of the segment, INS_issued / (n_bar + 1) instructions each.
(C.10): global memory moves 32-byte sectors; `sectorsPerRequest` s is the average of a warp's
requests (4 for a coalesced warp of 4-byte accesses, up to 32 for a gather whose every lane
reads its own sector) and `accessBytes` b the bytes per lane (4 by default), so s = 32 b / 32
leaves the analyzer's GMem_bytes as they are, and a random 4-byte gather moves 8 times them
(CUDA C++ Best Practices Guide, "Coalesced Access to Global Memory").

Why each term (measured on an H100 SXM5 and an H200 with the validation kit,
`validation/data/`; the figures are in docs/validation/README.md, "What the H100 and H200
showed"):
- t_launch: a kernel timed with CUDA events costs a fixed launch time even when empty, which
  000's model, built for large kernels, leaves out. `kernelLaunchOverhead` (hardware
  attribute, else the architecture's).
- (C.2) replaces min() by a smooth minimum. With o / Lat and Th close, as for saxpy2 with one
  outstanding load per warp on HBM, the real kernel is slower than both bounds; p -> inf gives
  Volkov's (4.3) back. p is fitted once on the H100's first run (`FITTED_PARAMETERS`).
- (C.3): streaming kernels reach only part of the HBM peak that (4.5) assumes.
- (C.4): a grid that is not a whole number of waves pays a whole tail wave, at the occupancy
  of its busiest SM: one block more than a whole number of waves costs a wave more.
- (C.5): after the GPU idled, its clocks have come down, and a kernel takes longer the longer
  the GPU idled before it (the kit's "wake" benchmark). `idle` is the time the SMs had nothing
  to run before the launch (e.g. a pageable copy before it).

Occupancy is in warps per SM, latencies in cycles, Th_bound in warps per cycle per SM.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from simulator.models.architectures import ArchitectureProfile, profile_for_compute_capability
from simulator.models.volkov import (
    VOLKOV_ERRORS,
    GpuHardware,
    KernelProfile,
    compute_capability_text,
    missing_attributes,
    missing_attributes_error,
    param_number,
    profile_from_params,
    resident_warps,
    throughput_terms,
)

FIT_PATH = Path(__file__).parent / "data" / "gpu_current_fit.json"
MODEL_NAME = "the current-architecture GPU model"

CurrentBound = Literal[
    "launch",
    "latency",
    "issue",
    "cuda_cores",
    "global_memory",
    "l2",
    "fp64",
    "sfu",
    "shared_memory",
    "extra",
    "tensor",
    "int",
    "atomics",
]

# Tensor-core precision -> (rate attribute, FLOPs of one warp's tensor instruction by default:
# the PTX mma.sync shape of sm_80 and later; Volta's HMMA.884 and Hopper's warpgroup wgmma
# differ, and a kernel using them gives tensorFLOPsPerInstruction).
TENSOR_PRECISIONS: dict[str, tuple[str, float]] = {
    "fp16": ("tensorFLOPsPerCycleFP16", 2 * 16 * 8 * 16),  # m16n8k16
    "bf16": ("tensorFLOPsPerCycleFP16", 2 * 16 * 8 * 16),  # m16n8k16, FP16's rate
    "tf32": ("tensorFLOPsPerCycleTF32", 2 * 16 * 8 * 8),  # m16n8k8
    "fp8": ("tensorFLOPsPerCycleFP8", 2 * 16 * 8 * 32),  # m16n8k32
    "fp4": ("tensorFLOPsPerCycleFP4", 2 * 16 * 8 * 64),  # m16n8k64
    "fp64": ("tensorFLOPsPerCycleFP64", 2 * 8 * 8 * 4),  # m8n8k4 (DMMA)
    "int8": ("tensorOpsPerCycleINT8", 2 * 16 * 8 * 32),  # m16n8k32
}

CURRENT_ERRORS: dict[str, str] = {
    "missing_attribute": (
        "hardware attribute {name!r} is required by the current-architecture GPU model "
        "(or a computeCapability whose architecture profile gives it)"
    ),
    "missing_attributes": (
        "hardware attributes {names} are required by the current-architecture GPU model "
        "(a computeCapability whose architecture profile gives them stands for "
        "kernelLaunchOverhead and memoryEfficiency)"
    ),
    "non_positive": "{name} must be positive",
    "no_blocks": (
        "no block of {block_size} threads fits on an SM at occupancy {occupancy} warps per SM"
    ),
    "negative_idle": "idleBeforeS must be zero or positive",
    "conflict_ways": "sharedMemoryConflictWays must be 1 (no bank conflict) or more",
    "negative": "{name} must be zero or positive",
    "unknown_precision": "tensorPrecision {precision!r} is not one of {known}",
    "no_tensor_rate": (
        "tensorInstructions need the hardware's {name} (the {precision} tensor-core rate); "
        "this GPU has no {precision} tensor cores on record"
    ),
}


def _fitted() -> dict[str, float]:
    data = json.loads(FIT_PATH.read_text(encoding="utf-8"))
    return {name: float(entry["value"]) for name, entry in data["parameters"].items()}


FITTED_PARAMETERS: dict[str, float] = _fitted()
TRANSITION_EXPONENT: float = FITTED_PARAMETERS["transition_exponent"]


# (C.8): operations per L2 clock on one address (Kepler GK110 whitepaper, "one operation per
# clock"), for a record without atomicSameAddressRate
SAME_ADDRESS_ATOMICS_PER_CYCLE = 1.0
# (C.10): the bytes of an L2 sector, the unit of global memory traffic since Maxwell
SECTOR_BYTES = 32
# (C.10): the bytes per lane of the accesses whose sectorsPerRequest a kernel gives, by default
DEFAULT_ACCESS_BYTES = 4.0

# Attributes the architecture profile of a computeCapability supplies when missing.
ARCHITECTURE_ATTRIBUTES = ("kernelLaunchOverhead", "memoryEfficiency")


@dataclass(frozen=True)
class TensorWork:
    """A warp's tensor-core instructions (INS_tensor), their precision and, where it is not
    the mma.sync shape of `TENSOR_PRECISIONS`, the FLOPs of one instruction."""

    instructions: float = 0.0
    precision: str = "fp16"
    flops_per_instruction: float | None = None

    def __post_init__(self) -> None:
        if self.precision not in TENSOR_PRECISIONS:
            raise ValueError(
                CURRENT_ERRORS["unknown_precision"].format(
                    precision=self.precision, known=", ".join(TENSOR_PRECISIONS)
                )
            )
        if self.instructions < 0:
            raise ValueError(CURRENT_ERRORS["non_positive"].format(name="tensorInstructions"))
        if self.flops_per_instruction is not None and self.flops_per_instruction <= 0:
            raise ValueError(
                CURRENT_ERRORS["non_positive"].format(name="tensorFLOPsPerInstruction")
            )


@dataclass(frozen=True)
class KernelSync:
    """A kernel's global atomics and barriers (C.8, C.9) and how its global requests are
    coalesced (C.10); the defaults (no atomics or barriers, coalesced) add nothing."""

    atomics_per_thread: float = 0.0
    atomic_addresses: float | None = None  # distinct addresses; None: spread over the L2
    atomics_per_sector: float = 1.0  # operations per 32-byte sector access of the L2
    barriers: float = 0.0  # BAR.SYNC executions per warp
    sectors_per_request: float | None = None  # None: coalesced, GMem_bytes as given
    access_bytes: float = DEFAULT_ACCESS_BYTES

    def __post_init__(self) -> None:
        for name, number in (
            ("atomicsPerThread", self.atomics_per_thread),
            ("barrierInstructions", self.barriers),
        ):
            if number < 0:
                raise ValueError(CURRENT_ERRORS["negative"].format(name=name))
        for name, optional in (
            ("atomicAddresses", self.atomic_addresses),
            ("atomicsPerSector", self.atomics_per_sector),
            ("sectorsPerRequest", self.sectors_per_request),
            ("accessBytes", self.access_bytes),
        ):
            if optional is not None and optional <= 0:
                raise ValueError(CURRENT_ERRORS["non_positive"].format(name=name))

    def traffic_scale(self, warp_size: int) -> float:
        """Return (C.10)'s factor on the global-memory term: the sectors a warp's requests
        move over those of coalesced requests of `access_bytes` per lane."""
        if self.sectors_per_request is None:
            return 1.0
        return self.sectors_per_request * SECTOR_BYTES / (warp_size * self.access_bytes)


@dataclass(frozen=True)
class CurrentGpu:
    """What the current-architecture model reads of a GPU beyond Volkov's attributes."""

    base: GpuHardware
    launch_overhead_s: float
    memory_efficiency: float
    l2_bytes: float | None = None
    l2_bandwidth: float | None = None  # bytes per second, the whole L2
    wake_penalty_s: float = 0.0  # clockWakePenalty: the extra time after a long idle
    wake_time_constant_s: float = 1.0  # clockWakeTimeConstant
    # tensor-core attribute -> dense FLOPs (INT8: operations) per SM per cycle (C.6)
    tensor_rates: Mapping[str, float] = field(default_factory=dict)
    int_units: float | None = None  # INTUnits: INT32 lanes per SM
    l2_atomic_throughput: float | None = None  # L2AtomicThroughput: operations per second
    same_address_atomic_rate: float = SAME_ADDRESS_ATOMICS_PER_CYCLE  # per clock per address
    barrier_latency: float = 0.0  # barrierLatency: cycles of a barrier beyond BAR's latency

    @classmethod
    def from_attributes(cls, attributes: Mapping[str, float | str]) -> CurrentGpu:
        """Return the GPU from a record's attributes; missing `kernelLaunchOverhead` [s] and
        `memoryEfficiency` come from the architecture profile of `computeCapability`."""
        cc = attributes.get("computeCapability")
        profile: ArchitectureProfile | None = None
        if cc is not None:
            try:
                profile = profile_for_compute_capability(compute_capability_text(cc))
            except ValueError:
                profile = None
        # Several missing attributes are named at once; one is left to the reads below, whose
        # messages say what stands for it.
        missing = missing_attributes(attributes, memory=False)
        if profile is None:
            missing += [name for name in ARCHITECTURE_ATTRIBUTES if name not in attributes]
        if len(missing) > 1:
            raise ValueError(missing_attributes_error(missing, CURRENT_ERRORS))
        base = GpuHardware.from_attributes(attributes)

        def value(name: str, fallback: float | None) -> float:
            if name in attributes:
                return float(attributes[name])
            if fallback is None:
                raise ValueError(CURRENT_ERRORS["missing_attribute"].format(name=name))
            return fallback

        def optional(name: str) -> float | None:
            return float(attributes[name]) if name in attributes else None

        return cls(
            base=base,
            launch_overhead_s=value(
                "kernelLaunchOverhead", None if profile is None else profile.launch_overhead_s
            ),
            memory_efficiency=value(
                "memoryEfficiency", None if profile is None else profile.memory_efficiency
            ),
            l2_bytes=optional("L2Cache"),
            l2_bandwidth=optional("L2Bandwidth"),
            wake_penalty_s=float(attributes.get("clockWakePenalty", 0.0)),
            wake_time_constant_s=float(attributes.get("clockWakeTimeConstant", 1.0)),
            tensor_rates={
                name: float(attributes[name])
                for name, _ in TENSOR_PRECISIONS.values()
                if name in attributes
            },
            int_units=optional("INTUnits"),
            l2_atomic_throughput=optional("L2AtomicThroughput"),
            same_address_atomic_rate=float(
                attributes.get("atomicSameAddressRate", SAME_ADDRESS_ATOMICS_PER_CYCLE)
            ),
            barrier_latency=float(attributes.get("barrierLatency", 0.0)),
        )

    def atomic_cycles_per_warp(self, sync: KernelSync) -> float | None:
        """Return the atomics term of (C.8), SM cycles per warp, or None without atomics."""
        if sync.atomics_per_thread <= 0:
            return None
        cycles = self.base.sms * self.base.sm_clock_hz
        for name, number in (
            ("L2AtomicThroughput", self.l2_atomic_throughput),
            ("atomicSameAddressRate", self.same_address_atomic_rate),
        ):
            if number is not None and number <= 0:
                raise ValueError(CURRENT_ERRORS["non_positive"].format(name=name))
        if self.l2_atomic_throughput is not None:
            spread = self.l2_atomic_throughput
        elif self.l2_bandwidth is not None:
            spread = self.l2_bandwidth / SECTOR_BYTES
        else:
            dram, _ = self.memory_bandwidth_per_sm(l2_resident=False, footprint_bytes=None)
            spread = dram * cycles / SECTOR_BYTES
        rate = spread * sync.atomics_per_sector
        if sync.atomic_addresses is not None:
            rate = min(
                rate,
                sync.atomic_addresses * self.same_address_atomic_rate * self.base.sm_clock_hz,
            )
        return self.base.warp_size * sync.atomics_per_thread * cycles / rate

    def barrier_cycles_per_warp(
        self, sync: KernelSync, *, warps_per_block: int, issued_instructions: float
    ) -> float:
        """Return what (C.9) adds to Lat_bound: each barrier's cost and the wait for the
        block's slowest warp, in cycles per warp."""
        if sync.barriers <= 0:
            return 0.0
        queued = max(0.0, warps_per_block / self.base.schedulers - 1.0)
        segment = issued_instructions / (sync.barriers + 1.0)
        return sync.barriers * (self.barrier_latency + queued * segment)

    def tensor_cycles_per_warp(self, work: TensorWork) -> float:
        """Return the tensor term of (C.6): SM cycles a warp's tensor instructions occupy the
        SM's tensor cores at the dense rate of their precision."""
        if work.instructions <= 0:
            return 0.0
        name, default_flops = TENSOR_PRECISIONS[work.precision]
        rate = self.tensor_rates.get(name)
        if rate is None or rate <= 0:
            raise ValueError(
                CURRENT_ERRORS["no_tensor_rate"].format(name=name, precision=work.precision)
            )
        flops = default_flops if work.flops_per_instruction is None else work.flops_per_instruction
        return work.instructions * flops / rate

    def int_cycles_per_warp(self, int_instructions: float) -> float | None:
        """Return the INT32 term of (C.6), or None for a GPU without INTUnits on record: INT32
        runs on its CUDA cores (Maxwell, Pascal) and counts in INS_cuda only."""
        if self.int_units is None:
            return None
        return self.base.warp_size * int_instructions / self.int_units

    def wake_s(self, idle_s: float) -> float:
        """Return t_wake (C.5): what a launch pays after the SMs idled for `idle_s` seconds."""
        if idle_s < 0:
            raise ValueError(CURRENT_ERRORS["negative_idle"])
        if self.wake_time_constant_s <= 0:
            raise ValueError(CURRENT_ERRORS["non_positive"].format(name="clockWakeTimeConstant"))
        return self.wake_penalty_s * (1.0 - math.exp(-idle_s / self.wake_time_constant_s))

    def memory_bandwidth_per_sm(
        self, *, l2_resident: bool, footprint_bytes: float | None
    ) -> tuple[float, bool]:
        """Return the bytes per SM per cycle the kernel's global accesses get (C.3), and
        whether they come from L2. A recorded GMEMThroughput (MERPSYS's achieved figure) is
        used as it is; memoryEfficiency scales the peak of (4.5)."""
        cycles = self.base.sms * self.base.sm_clock_hz
        if (
            l2_resident
            and self.l2_bandwidth is not None
            and self.l2_bytes is not None
            and footprint_bytes is not None
            and footprint_bytes <= self.l2_bytes
        ):
            return self.l2_bandwidth / cycles, True
        if self.base.gmem_throughput is not None:
            return self.base.gmem_throughput, False
        return self.base.gmem_bandwidth * self.memory_efficiency, False


def current_throughput_terms(
    gpu: CurrentGpu,
    profile: KernelProfile,
    *,
    gmem_bandwidth: float,
    tensor: TensorWork | None = None,
    int_instructions: float = 0.0,
    shared_conflict_ways: float = 1.0,
    sync: KernelSync | None = None,
) -> list[tuple[str, float]]:
    """Return each resource's cycles per warp: (4.4)'s terms, the shared-memory term times
    the accesses' average bank-conflict degree (C.7) and the global-memory term times the
    requests' sectors over coalesced ones (C.10), then the tensor and INT32 terms of (C.6)
    where the kernel has such instructions or the GPU INTUnits, and the atomics term (C.8)."""
    if shared_conflict_ways < 1:
        raise ValueError(CURRENT_ERRORS["conflict_ways"])
    sync = sync or KernelSync()
    scale = {
        "shared_memory": shared_conflict_ways,
        "global_memory": sync.traffic_scale(gpu.base.warp_size),
    }
    terms: list[tuple[str, float]] = [
        (name, cycles * scale[name] if name in scale else cycles)
        for name, cycles in throughput_terms(gpu.base, profile, gmem_bandwidth=gmem_bandwidth)
    ]
    if tensor is not None and tensor.instructions > 0:
        terms.append(("tensor", gpu.tensor_cycles_per_warp(tensor)))
    int_cycles = gpu.int_cycles_per_warp(int_instructions)
    if int_cycles is not None:
        terms.append(("int", int_cycles))
    atomic_cycles = gpu.atomic_cycles_per_warp(sync)
    if atomic_cycles is not None:
        terms.append(("atomics", atomic_cycles))
    return terms


def smooth_warp_throughput(
    *, occupancy: float, latency_bound: float, throughput_bound: float, exponent: float
) -> float:
    """Return W_Th (C.2): the p-norm smooth minimum of o / Lat_bound and Th_bound."""
    latency_limited = occupancy / latency_bound
    if math.isinf(exponent):
        return min(latency_limited, throughput_bound)
    # scale first so large exponents do not overflow
    low = min(latency_limited, throughput_bound)
    ratio_sum = (low / latency_limited) ** exponent + (low / throughput_bound) ** exponent
    return low * ratio_sum ** (-1.0 / exponent)


@dataclass(frozen=True)
class CurrentKernelEstimate:
    """The kernel time and what bounds it, for the run page and the JSON result."""

    time_s: float
    launch_s: float
    bound: str  # a CurrentBound
    occupancy: float  # warps per SM in a full wave
    blocks_per_sm: int
    waves: int  # including the tail wave
    tail_blocks: int  # blocks in the last wave (= a full wave's when the grid divides evenly)
    grid_size: int
    throughput_bound: float
    latency_bound: float
    memory_bandwidth: float  # bytes/s used for global accesses (whole GPU)

    def as_dict(self) -> dict[str, float | int | str]:
        """Return the estimate as a JSON-ready mapping."""
        return {
            "time_s": self.time_s,
            "launch_s": self.launch_s,
            "bound": self.bound,
            "occupancy": self.occupancy,
            "blocks_per_sm": self.blocks_per_sm,
            "waves": self.waves,
            "tail_blocks": self.tail_blocks,
            "grid_size": self.grid_size,
            "memory_bandwidth": self.memory_bandwidth,
        }


def estimate_kernel_current(
    gpu: CurrentGpu,
    profile: KernelProfile,
    *,
    block_size: int,
    grid_size: int | None = None,
    n: int | None = None,
    occupancy: float | None = None,
    registers_per_thread: int | None = None,
    shared_mem_per_block: int = 0,
    footprint_bytes: float | None = None,
    l2_resident: bool = False,
    idle_before_s: float = 0.0,
    exponent: float | None = None,
    tensor: TensorWork | None = None,
    int_instructions: float = 0.0,
    shared_conflict_ways: float = 1.0,
    sync: KernelSync | None = None,
) -> CurrentKernelEstimate:
    """Return the kernel's time on a current GPU by (C.1)-(C.5).

    Arguments as `volkov.estimate_kernel`; `footprint_bytes` (the data the kernel touches) and
    `l2_resident` (its inputs are in L2 already, e.g. written by the previous kernel) select
    the L2's bandwidth; `idle_before_s` is how long the SMs idled before the launch;
    `exponent` overrides the fitted transition exponent p; `tensor` and `int_instructions`
    (INT32 instructions per thread) add the terms of (C.6); `shared_conflict_ways` is (C.7)'s n;
    `sync` the kernel's atomics, barriers and sectors per request (C.8-C.10).
    """
    hw = gpu.base
    if (grid_size is None) == (n is None):
        raise ValueError(VOLKOV_ERRORS["grid_or_n"])
    grid = grid_size if grid_size is not None else math.ceil((n or 0) / block_size)
    if occupancy is None:
        occupancy = resident_warps(
            hw,
            block_size=block_size,
            registers_per_thread=registers_per_thread,
            shared_mem_per_block=shared_mem_per_block,
        )
    p = TRANSITION_EXPONENT if exponent is None else exponent
    checks = (
        ("grid size", grid),
        ("block size", block_size),
        ("occupancy", occupancy),
        ("exponent", p),
    )
    for name, number in checks:
        if number <= 0:
            raise ValueError(CURRENT_ERRORS["non_positive"].format(name=name))
    warps_per_block = math.ceil(block_size / hw.warp_size)
    blocks_per_sm = int(occupancy // warps_per_block)
    if blocks_per_sm < 1:
        raise ValueError(
            CURRENT_ERRORS["no_blocks"].format(block_size=block_size, occupancy=occupancy)
        )

    bandwidth, from_l2 = gpu.memory_bandwidth_per_sm(
        l2_resident=l2_resident, footprint_bytes=footprint_bytes
    )
    terms = current_throughput_terms(
        gpu,
        profile,
        gmem_bandwidth=bandwidth,
        tensor=tensor,
        int_instructions=int_instructions,
        shared_conflict_ways=shared_conflict_ways,
        sync=sync,
    )
    busiest, cycles = max(terms, key=lambda term: term[1])
    th_bound = 1.0 / cycles if cycles > 0 else math.inf
    latency_bound = profile.latency_bound + gpu.barrier_cycles_per_warp(
        sync or KernelSync(),
        warps_per_block=warps_per_block,
        issued_instructions=profile.issued_instructions,
    )

    def wave_cycles(blocks: int) -> float:
        warps = blocks * warps_per_block
        return warps / smooth_warp_throughput(
            occupancy=warps,
            latency_bound=latency_bound,
            throughput_bound=th_bound,
            exponent=p,
        )

    per_wave = blocks_per_sm * hw.sms
    waves = max(1, math.ceil(grid / per_wave))
    tail = grid - (waves - 1) * per_wave
    cycles_total = (waves - 1) * wave_cycles(blocks_per_sm) + wave_cycles(math.ceil(tail / hw.sms))
    work_s = cycles_total / hw.sm_clock_hz
    overhead_s = gpu.launch_overhead_s + gpu.wake_s(idle_before_s)
    full_occupancy = float(blocks_per_sm * warps_per_block)
    latency_limited = full_occupancy / latency_bound
    bound: str
    if overhead_s > work_s:
        bound = "launch"
    elif latency_limited < th_bound:
        bound = "latency"
    elif busiest == "schedulers":
        bound = "issue"
    elif busiest == "global_memory" and from_l2:
        bound = "l2"
    else:
        bound = busiest
    return CurrentKernelEstimate(
        time_s=overhead_s + work_s,
        launch_s=overhead_s,
        bound=bound,
        occupancy=full_occupancy,
        blocks_per_sm=blocks_per_sm,
        waves=waves,
        tail_blocks=tail,
        grid_size=grid,
        throughput_bound=th_bound,
        latency_bound=latency_bound,
        memory_bandwidth=bandwidth * hw.sms * hw.sm_clock_hz,
    )


def computation_estimate(
    attributes: Mapping[str, float | str], params: Mapping[str, object]
) -> CurrentKernelEstimate:
    """Return the estimate as the built-in `gpu_current.js` computes it.

    `params` uses the Volkov model's names (gridSize or N, blockSize, CUDACoreInstructions,
    issuedInstructions, GMEMBytesTransferred, latencyBound, occupancy or registersPerThread
    (+ sharedMemPerBlock), FP64Instructions, SFUInstructions, sharedMemoryInstructions,
    extraCyclesPerWarp) plus footprintBytes, l2Resident, idleBeforeS, transitionExponent,
    tensorInstructions with tensorPrecision (default fp16) and tensorFLOPsPerInstruction, and
    INTInstructions (C.6), sharedMemoryConflictWays (C.7), atomicsPerThread with
    atomicAddresses and atomicsPerSector (C.8), barrierInstructions (C.9), and sectorsPerRequest with accessBytes
    (C.10).
    """

    def number(name: str, default: float | None = None) -> float:
        return param_number(params, name, default, model=MODEL_NAME)

    profile = profile_from_params(params, model=MODEL_NAME)
    has_grid = params.get("gridSize") is not None
    registers = params.get("registersPerThread")
    footprint = params.get("footprintBytes")
    exponent = params.get("transitionExponent")
    return estimate_kernel_current(
        CurrentGpu.from_attributes(attributes),
        profile,
        block_size=int(number("blockSize")),
        grid_size=int(number("gridSize")) if has_grid else None,
        n=None if has_grid else int(number("N")),
        occupancy=number("occupancy") if params.get("occupancy") is not None else None,
        registers_per_thread=None if registers is None else int(registers),  # type: ignore[call-overload]
        shared_mem_per_block=int(number("sharedMemPerBlock", 0.0)),
        footprint_bytes=None if footprint is None else float(footprint),  # type: ignore[arg-type]
        l2_resident=bool(params.get("l2Resident", False)),
        idle_before_s=number("idleBeforeS", 0.0),
        exponent=None if exponent is None else float(exponent),  # type: ignore[arg-type]
        tensor=tensor_work_from_params(params),
        int_instructions=number("INTInstructions", 0.0),
        shared_conflict_ways=number("sharedMemoryConflictWays", 1.0),
        sync=kernel_sync_from_params(params),
    )


def kernel_sync_from_params(params: Mapping[str, object]) -> KernelSync:
    """Return the kernel's atomics, barriers and sectors per request (C.8-C.10) from
    atomicsPerThread, atomicAddresses, atomicsPerSector, barrierInstructions, sectorsPerRequest
    and accessBytes."""

    def optional(name: str) -> float | None:
        value = params.get(name)
        return None if value is None else float(value)  # type: ignore[arg-type]

    return KernelSync(
        atomics_per_thread=param_number(params, "atomicsPerThread", 0.0, model=MODEL_NAME),
        atomic_addresses=optional("atomicAddresses"),
        atomics_per_sector=param_number(params, "atomicsPerSector", 1.0, model=MODEL_NAME),
        barriers=param_number(params, "barrierInstructions", 0.0, model=MODEL_NAME),
        sectors_per_request=optional("sectorsPerRequest"),
        access_bytes=param_number(params, "accessBytes", DEFAULT_ACCESS_BYTES, model=MODEL_NAME),
    )


def tensor_work_from_params(params: Mapping[str, object]) -> TensorWork | None:
    """Return the kernel's tensor work from tensorInstructions, tensorPrecision and
    tensorFLOPsPerInstruction, or None when it has no tensor instructions."""
    instructions = param_number(params, "tensorInstructions", 0.0, model=MODEL_NAME)
    if instructions == 0:
        return None
    flops = params.get("tensorFLOPsPerInstruction")
    return TensorWork(
        instructions=instructions,
        precision=str(params.get("tensorPrecision", "fp16")).lower(),
        flops_per_instruction=None if flops is None else float(flops),  # type: ignore[arg-type]
    )


def computation_time(attributes: Mapping[str, float | str], params: Mapping[str, object]) -> float:
    """Return the kernel time in seconds as the built-in `gpu_current.js` computes it."""
    return computation_estimate(attributes, params).time_s
