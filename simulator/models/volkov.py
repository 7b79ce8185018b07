"""Volkov's GPU kernel-time model as used in MERPSYS (000, sections 4-5; docs/models.md 1).

    T_k      = W_L / (W_Th * SMs * SM_clock * lambda_k)                           (4.1)
    W_L      = grid_size * ceil(block_size / warp_size)                           (4.2)
    W_Th     = min(occupancy / Lat_bound, Th_bound)                               (4.3)
    Th_bound = 1 / max(warp_size * INS_cuda / CUDA_cores, INS_issued / schedulers,
                       GMem_bytes / GMem_bw, ...)                                 (4.4)
    GMem_bw  = GMem_clock * (bus_width / 8) * data_rate / (SMs * SM_clock)        (4.5)

occupancy is in warps per SM, Lat_bound in cycles, Th_bound in warps per cycle and GMem_bw
in bytes per SM per cycle. The paper's future-work terms are here too: double-precision
units, special function units and shared memory each add a term warp_size * INS / units to
the max of (4.4), and `extra_cycles_per_warp` takes any further per-warp cycle counts (the
memory-hierarchy levels of `memory.py`).

Two discrepancies in 000, recorded here: the paper prints the third term of the saxpy2
Th_bound as "13.78", but by (4.4) it is GMem_bytes / GMem_bw = 384 / 13.78 = 27.87 cycles;
Listing 5 sets issued = 26 + 4a while section 5.2 derives INS_issued = 23 + 3 - 3 + 4a =
23 + 4a. The derivation is kept (`saxpy2_profile`).

Every closed formula accepts scalars or NumPy arrays (broadcast) and returns a float for
scalar inputs, an array otherwise.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Literal

import numpy as np
import numpy.typing as npt

from simulator.models.occupancy import (
    ArchitectureLimits,
    architecture_limits,
    limits_from_attributes,
    occupancy_for_limits,
)

FloatArray = npt.NDArray[np.float64]
Numeric = float | FloatArray
ArrayLike = float | int | npt.ArrayLike

WARP_SIZE = 32
MHZ = 1e6

VOLKOV_ERRORS: dict[str, str] = {
    "missing_attribute": "hardware attribute {name!r} is required by the Volkov GPU model",
    "missing_attributes": "hardware attributes {names} are required by the Volkov GPU model",
    "missing_parameter": "parameter {name!r} is required by {model}",
    "non_positive": "{name} must be positive",
    "units_missing": "{name} instructions need the hardware's {units} (number of units per SM)",
    "occupancy_or_registers": (
        "give either occupancy (warps per SM) or registers per thread (with the hardware's "
        "computeCapability)"
    ),
    "grid_or_n": "give either grid size or the number of elements N",
}

Bound = Literal[
    "latency", "cuda_cores", "schedulers", "global_memory", "fp64", "sfu", "shared_memory", "extra"
]


def _result(value: FloatArray) -> Numeric:
    """Return a Python float for a 0-d result, the array otherwise."""
    return float(value) if np.ndim(value) == 0 else value


def warps_launched(
    grid_size: ArrayLike, block_size: ArrayLike, warp_size: int = WARP_SIZE
) -> Numeric:
    """Return W_L (4.2): blocks in the grid times warps per block (partial warps count whole)."""
    grid = np.asarray(grid_size, dtype=np.float64)
    block = np.asarray(block_size, dtype=np.float64)
    return _result(grid * np.ceil(block / warp_size))


def grid_size_for(n: ArrayLike, block_size: ArrayLike) -> Numeric:
    """Return the grid size covering n elements with one thread each: ceil(n / block_size)."""
    return _result(
        np.ceil(np.asarray(n, dtype=np.float64) / np.asarray(block_size, dtype=np.float64))
    )


def gmem_bandwidth_per_sm(
    *,
    memory_clock_hz: ArrayLike,
    bus_width_bits: ArrayLike,
    data_rate: ArrayLike,
    sms: ArrayLike,
    sm_clock_hz: ArrayLike,
) -> Numeric:
    """Return GMem_bw (4.5): the global memory's peak bytes per SM per SM-clock cycle."""
    clock = np.asarray(memory_clock_hz, dtype=np.float64)
    bytes_per_transfer = np.asarray(bus_width_bits, dtype=np.float64) / 8.0
    per_second = clock * bytes_per_transfer * np.asarray(data_rate, dtype=np.float64)
    cycles = np.asarray(sms, dtype=np.float64) * np.asarray(sm_clock_hz, dtype=np.float64)
    return _result(per_second / cycles)


def throughput_bound(
    *,
    cuda_core_instructions: ArrayLike,
    issued_instructions: ArrayLike,
    gmem_bytes: ArrayLike,
    gmem_bandwidth: ArrayLike,
    cuda_cores: ArrayLike,
    schedulers: ArrayLike,
    warp_size: int = WARP_SIZE,
    fp64_instructions: ArrayLike = 0.0,
    fp64_units: ArrayLike | None = None,
    sfu_instructions: ArrayLike = 0.0,
    sfus: ArrayLike | None = None,
    shared_memory_instructions: ArrayLike = 0.0,
    shared_memory_units: ArrayLike | None = None,
    extra_cycles_per_warp: Sequence[ArrayLike] = (),
) -> Numeric:
    """Return Th_bound (4.4) in warps per cycle: 1 / the busiest resource's cycles per warp.

    CUDA cores, schedulers and global memory are 000's terms; FP64 units, SFUs and shared
    memory (load/store units) are added as warp_size * INS / units when their instruction
    counts are given; `extra_cycles_per_warp` adds any further terms (cache levels).
    """
    terms = _throughput_terms(
        cuda_core_instructions=cuda_core_instructions,
        issued_instructions=issued_instructions,
        gmem_bytes=gmem_bytes,
        gmem_bandwidth=gmem_bandwidth,
        cuda_cores=cuda_cores,
        schedulers=schedulers,
        warp_size=warp_size,
        fp64_instructions=fp64_instructions,
        fp64_units=fp64_units,
        sfu_instructions=sfu_instructions,
        sfus=sfus,
        shared_memory_instructions=shared_memory_instructions,
        shared_memory_units=shared_memory_units,
        extra_cycles_per_warp=extra_cycles_per_warp,
    )
    cycles = terms[0][1]
    for _, term in terms[1:]:
        cycles = np.maximum(cycles, term)
    return _result(1.0 / cycles)


def _throughput_terms(
    *,
    cuda_core_instructions: ArrayLike,
    issued_instructions: ArrayLike,
    gmem_bytes: ArrayLike,
    gmem_bandwidth: ArrayLike,
    cuda_cores: ArrayLike,
    schedulers: ArrayLike,
    warp_size: int,
    fp64_instructions: ArrayLike,
    fp64_units: ArrayLike | None,
    sfu_instructions: ArrayLike,
    sfus: ArrayLike | None,
    shared_memory_instructions: ArrayLike,
    shared_memory_units: ArrayLike | None,
    extra_cycles_per_warp: Sequence[ArrayLike],
) -> list[tuple[Bound, FloatArray]]:
    """Return each resource's cycles per warp, labelled, in the order of (4.4)."""

    def arr(value: ArrayLike) -> FloatArray:
        return np.asarray(value, dtype=np.float64)

    terms: list[tuple[Bound, FloatArray]] = [
        ("cuda_cores", warp_size * arr(cuda_core_instructions) / arr(cuda_cores)),
        ("schedulers", arr(issued_instructions) / arr(schedulers)),
        ("global_memory", arr(gmem_bytes) / arr(gmem_bandwidth)),
    ]
    optional: list[tuple[Bound, ArrayLike, ArrayLike | None, str]] = [
        ("fp64", fp64_instructions, fp64_units, "FP64Units"),
        ("sfu", sfu_instructions, sfus, "SFUs"),
        ("shared_memory", shared_memory_instructions, shared_memory_units, "LDSTUnits"),
    ]
    for name, instructions, units, attribute in optional:
        if units is None:
            if np.any(arr(instructions) > 0):
                raise ValueError(VOLKOV_ERRORS["units_missing"].format(name=name, units=attribute))
            continue
        terms.append((name, warp_size * arr(instructions) / arr(units)))
    terms.extend(("extra", arr(cycles)) for cycles in extra_cycles_per_warp)
    return terms


def warp_throughput(
    *, occupancy: ArrayLike, latency_bound: ArrayLike, throughput_bound: ArrayLike
) -> Numeric:
    """Return W_Th (4.3) in warps per cycle: min(occupancy / Lat_bound, Th_bound)."""
    latency_limited = np.asarray(occupancy, dtype=np.float64) / np.asarray(
        latency_bound, dtype=np.float64
    )
    return _result(np.minimum(latency_limited, np.asarray(throughput_bound, dtype=np.float64)))


def kernel_time(
    *,
    warps_launched: ArrayLike,
    warp_throughput: ArrayLike,
    sms: ArrayLike,
    sm_clock_hz: ArrayLike,
    lambda_k: ArrayLike = 1.0,
) -> Numeric:
    """Return T_k (4.1) in seconds: W_L / (W_Th * SMs * SM_clock * lambda_k)."""
    rate = (
        np.asarray(warp_throughput, dtype=np.float64)
        * np.asarray(sms, dtype=np.float64)
        * np.asarray(sm_clock_hz, dtype=np.float64)
        * np.asarray(lambda_k, dtype=np.float64)
    )
    return _result(np.asarray(warps_launched, dtype=np.float64) / rate)


def lambda_k(*, estimated_s: ArrayLike, measured_s: ArrayLike) -> Numeric:
    """Return lambda_k = T_estimated / T_measured (000, section 4.1)."""
    return _result(
        np.asarray(estimated_s, dtype=np.float64) / np.asarray(measured_s, dtype=np.float64)
    )


# The attributes the model reads for every kernel (each a name or its alternatives), and those
# (4.5) reads for GMem_bw when no GMEMThroughput is recorded.
REQUIRED_ATTRIBUTES: tuple[tuple[str, ...], ...] = (
    ("SMs", "SMS"),
    ("SMCoreClock",),
    ("CUDACores",),
    ("schedulers",),
)
MEMORY_ATTRIBUTES = ("memoryClock", "busWidth", "dataRate")


def missing_attributes(attributes: Mapping[str, object], *, memory: bool) -> list[str]:
    """Return the names of the required attributes `attributes` lacks, in the order above;
    with `memory`, also those of (4.5) when there is no GMEMThroughput."""
    missing = [
        names[0]
        for names in REQUIRED_ATTRIBUTES
        if not any(attributes.get(name) is not None for name in names)
    ]
    if memory and attributes.get("GMEMThroughput") is None:
        missing += [name for name in MEMORY_ATTRIBUTES if attributes.get(name) is None]
    return missing


def missing_attributes_error(missing: list[str], errors: Mapping[str, str] = VOLKOV_ERRORS) -> str:
    """Return the message naming every missing attribute: `errors`' "missing_attribute" for one,
    its "missing_attributes" for several (so that one failed run says all that is lacking)."""
    if len(missing) == 1:
        return errors["missing_attribute"].format(name=missing[0])
    return errors["missing_attributes"].format(names=", ".join(repr(name) for name in missing))


@dataclass(frozen=True)
class GpuHardware:
    """A GPU's attributes the model reads, in the project's units (Hz, bytes, watts)."""

    sms: int
    sm_clock_hz: float
    cuda_cores: int
    schedulers: int
    warp_size: int = WARP_SIZE
    memory_clock_hz: float | None = None
    bus_width_bits: float | None = None
    data_rate: float | None = None
    gmem_throughput: float | None = None  # GMEMThroughput, bytes/cycle/SM, used as-is if set
    fp64_units: int | None = None
    sfus: int | None = None
    ldst_units: int | None = None
    compute_capability: str | None = None
    occupancy_limits: ArchitectureLimits | None = None

    @property
    def gmem_bandwidth(self) -> float:
        """Return GMem_bw in bytes/SM/cycle: GMEMThroughput if recorded (as MERPSYS), else (4.5)."""
        if self.gmem_throughput is not None:
            return self.gmem_throughput
        lacking = [
            name
            for name, value in zip(
                MEMORY_ATTRIBUTES,
                (self.memory_clock_hz, self.bus_width_bits, self.data_rate),
                strict=True,
            )
            if value is None
        ]
        if lacking:
            raise ValueError(missing_attributes_error(lacking))
        assert self.memory_clock_hz is not None  # for mypy: `lacking` holds the None ones
        assert self.bus_width_bits is not None and self.data_rate is not None
        return float(
            gmem_bandwidth_per_sm(
                memory_clock_hz=self.memory_clock_hz,
                bus_width_bits=self.bus_width_bits,
                data_rate=self.data_rate,
                sms=self.sms,
                sm_clock_hz=self.sm_clock_hz,
            )
        )

    @classmethod
    def from_attributes(cls, attributes: Mapping[str, float | str]) -> GpuHardware:
        """Return the hardware from a record's attributes (MERPSYS names, clocks in MHz).

        Vocabulary: SMs (or MERPSYS's "SMS"), SMCoreClock [MHz], CUDACores [per SM],
        schedulers, warpSize, memoryClock [MHz], busWidth [bits], dataRate, GMEMThroughput
        [B/cycle/SM, optional], FP64Units, SFUs, LDSTUnits, computeCapability.
        """

        def number(*names: str, required: bool = True) -> float | None:
            for name in names:
                if name in attributes:
                    return float(attributes[name])
            if required:
                raise ValueError(VOLKOV_ERRORS["missing_attribute"].format(name=names[0]))
            return None

        def optional_int(name: str) -> int | None:
            value = number(name, required=False)
            return None if value is None else int(value)

        missing = missing_attributes(attributes, memory=False)
        if missing:
            raise ValueError(missing_attributes_error(missing))

        memory_clock = number("memoryClock", required=False)
        cc = attributes.get("computeCapability")
        return cls(
            sms=int(number("SMs", "SMS") or 0),
            sm_clock_hz=float(number("SMCoreClock") or 0.0) * MHZ,
            cuda_cores=int(number("CUDACores") or 0),
            schedulers=int(number("schedulers") or 0),
            warp_size=int(number("warpSize", required=False) or WARP_SIZE),
            memory_clock_hz=None if memory_clock is None else memory_clock * MHZ,
            bus_width_bits=number("busWidth", required=False),
            data_rate=number("dataRate", required=False),
            gmem_throughput=number("GMEMThroughput", required=False),
            fp64_units=optional_int("FP64Units"),
            sfus=optional_int("SFUs"),
            ldst_units=optional_int("LDSTUnits"),
            compute_capability=None if cc is None else compute_capability_text(cc),
            occupancy_limits=(
                limits_from_attributes(attributes)
                if "maxWarpsPerSM" in attributes
                else (None if cc is None else architecture_limits(compute_capability_text(cc)))
            ),
        )


def compute_capability_text(value: float | str) -> str:
    """Return a computeCapability attribute as the architecture tables key it ("8.9")."""
    return f"{value:.1f}" if isinstance(value, float | int) else str(value)


@dataclass(frozen=True)
class KernelProfile:
    """What a kernel's SASS says about one warp (000, sections 4.1.2-4.2)."""

    cuda_core_instructions: float
    issued_instructions: float
    gmem_bytes: float
    latency_bound: float
    fp64_instructions: float = 0.0
    sfu_instructions: float = 0.0
    shared_memory_instructions: float = 0.0
    extra_cycles_per_warp: tuple[float, ...] = field(default_factory=tuple)


def saxpy2_profile(compute_intensity: float) -> KernelProfile:
    """Return saxpy2's profile on sm_52 (000, section 5): INS = 23 + 4a, Lat = 942 + 24a.

    INS_issued follows the derivation of section 5.2 (23 + 3 - 3 + 4a), not Listing 5's 26 + 4a.
    """
    a = compute_intensity
    return KernelProfile(
        cuda_core_instructions=23 + 4 * a,
        issued_instructions=23 + 4 * a,
        gmem_bytes=3 * 4 * WARP_SIZE,
        latency_bound=942 + 24 * a,
    )


@dataclass(frozen=True)
class KernelEstimate:
    """The model's intermediate quantities and the kernel time for one launch."""

    grid_size: int
    warps_launched: float
    occupancy: float
    throughput_bound: float
    warp_throughput: float
    bound: Bound
    time_s: float


def throughput_terms(
    hardware: GpuHardware, profile: KernelProfile, *, gmem_bandwidth: float | None = None
) -> list[tuple[Bound, float]]:
    """Return each resource's cycles per warp (4.4) for one kernel on one GPU, labelled;
    `gmem_bandwidth` [B/SM/cycle] replaces (4.5) (the current-architecture model's)."""
    terms = _throughput_terms(
        cuda_core_instructions=profile.cuda_core_instructions,
        issued_instructions=profile.issued_instructions,
        gmem_bytes=profile.gmem_bytes,
        gmem_bandwidth=hardware.gmem_bandwidth if gmem_bandwidth is None else gmem_bandwidth,
        cuda_cores=hardware.cuda_cores,
        schedulers=hardware.schedulers,
        warp_size=hardware.warp_size,
        fp64_instructions=profile.fp64_instructions,
        fp64_units=hardware.fp64_units,
        sfu_instructions=profile.sfu_instructions,
        sfus=hardware.sfus,
        shared_memory_instructions=profile.shared_memory_instructions,
        shared_memory_units=hardware.ldst_units,
        extra_cycles_per_warp=profile.extra_cycles_per_warp,
    )
    return [(name, float(cycles)) for name, cycles in terms]


def resident_warps(
    hardware: GpuHardware,
    *,
    block_size: int,
    registers_per_thread: int | None,
    shared_mem_per_block: int = 0,
) -> float:
    """Return the occupancy in warps per SM by the occupancy calculator for the hardware's
    limits (its record's, else its compute capability's)."""
    limits = hardware.occupancy_limits
    if limits is None and hardware.compute_capability is not None:
        limits = architecture_limits(hardware.compute_capability)
    if registers_per_thread is None or limits is None:
        raise ValueError(VOLKOV_ERRORS["occupancy_or_registers"])
    return float(
        occupancy_for_limits(
            limits,
            block_size=block_size,
            registers_per_thread=registers_per_thread,
            shared_mem_per_block=shared_mem_per_block,
        ).active_warps_per_sm
    )


def param_number(
    params: Mapping[str, object], name: str, default: float | None = None, *, model: str
) -> float:
    """Return a computational model's numeric parameter; ValueError naming it when missing."""
    value = params.get(name, default)
    if value is None:
        raise ValueError(VOLKOV_ERRORS["missing_parameter"].format(name=name, model=model))
    return float(value)  # type: ignore[arg-type]


def profile_from_params(params: Mapping[str, object], *, model: str) -> KernelProfile:
    """Return the kernel profile from the JavaScript models' parameter names (000 Listing 5):
    CUDACoreInstructions, issuedInstructions, GMEMBytesTransferred, latencyBound, and
    optionally FP64Instructions, SFUInstructions, sharedMemoryInstructions, extraCyclesPerWarp."""
    extra = params.get("extraCyclesPerWarp", ())
    return KernelProfile(
        cuda_core_instructions=param_number(params, "CUDACoreInstructions", model=model),
        issued_instructions=param_number(params, "issuedInstructions", model=model),
        gmem_bytes=param_number(params, "GMEMBytesTransferred", model=model),
        latency_bound=param_number(params, "latencyBound", model=model),
        fp64_instructions=param_number(params, "FP64Instructions", 0.0, model=model),
        sfu_instructions=param_number(params, "SFUInstructions", 0.0, model=model),
        shared_memory_instructions=param_number(
            params, "sharedMemoryInstructions", 0.0, model=model
        ),
        extra_cycles_per_warp=tuple(float(c) for c in extra),  # type: ignore[attr-defined]
    )


def estimate_kernel(
    hardware: GpuHardware,
    profile: KernelProfile,
    *,
    block_size: int,
    grid_size: int | None = None,
    n: int | None = None,
    occupancy: float | None = None,
    registers_per_thread: int | None = None,
    shared_mem_per_block: int = 0,
    lambda_k: float = 1.0,
) -> KernelEstimate:
    """Return the kernel's time on `hardware` by (4.1)-(4.5).

    Give the grid size or N (one thread per element); give the occupancy in warps per SM,
    or the registers per thread (and shared memory per block) to compute it with the
    occupancy calculator for the hardware's compute capability.
    """
    if (grid_size is None) == (n is None):
        raise ValueError(VOLKOV_ERRORS["grid_or_n"])
    grid = grid_size if grid_size is not None else math.ceil((n or 0) / block_size)
    if occupancy is None:
        occupancy = resident_warps(
            hardware,
            block_size=block_size,
            registers_per_thread=registers_per_thread,
            shared_mem_per_block=shared_mem_per_block,
        )
    for name, value in (
        ("block size", block_size),
        ("occupancy", occupancy),
        ("lambda_k", lambda_k),
    ):
        if value <= 0:
            raise ValueError(VOLKOV_ERRORS["non_positive"].format(name=name))

    busiest, cycles = max(throughput_terms(hardware, profile), key=lambda term: term[1])
    th_bound = 1.0 / cycles
    latency_limited = occupancy / profile.latency_bound
    w_th = min(latency_limited, th_bound)
    w_l = float(warps_launched(grid, block_size, hardware.warp_size))
    return KernelEstimate(
        grid_size=grid,
        warps_launched=w_l,
        occupancy=occupancy,
        throughput_bound=th_bound,
        warp_throughput=w_th,
        bound="latency" if latency_limited < th_bound else busiest,
        time_s=float(
            kernel_time(
                warps_launched=w_l,
                warp_throughput=w_th,
                sms=hardware.sms,
                sm_clock_hz=hardware.sm_clock_hz,
                lambda_k=lambda_k,
            )
        ),
    )


def computation_estimate(
    attributes: Mapping[str, float], params: Mapping[str, object]
) -> KernelEstimate:
    """Return the estimate (time, bound, occupancy) as the built-in `volkov_gpu.js` computes it.

    `params` uses the JavaScript model's names (000 Listing 4/5): gridSize or N, blockSize,
    CUDACoreInstructions, issuedInstructions, GMEMBytesTransferred, latencyBound, occupancy
    or registersPerThread (+ sharedMemPerBlock), kernelExecutionLambda, and optionally
    FP64Instructions, SFUInstructions, sharedMemoryInstructions, extraCyclesPerWarp.
    """

    def number(name: str, default: float | None = None) -> float:
        return param_number(params, name, default, model="the Volkov GPU model")

    profile = profile_from_params(params, model="the Volkov GPU model")
    # Every kernel reads GMem_bw: name the attributes (4.5) lacks with the others, at once.
    missing = missing_attributes(attributes, memory=True)
    if missing:
        raise ValueError(missing_attributes_error(missing))
    has_grid = params.get("gridSize") is not None
    registers = params.get("registersPerThread")
    return estimate_kernel(
        GpuHardware.from_attributes(attributes),
        profile,
        block_size=int(number("blockSize")),
        grid_size=int(number("gridSize")) if has_grid else None,
        n=None if has_grid else int(number("N")),
        occupancy=number("occupancy") if params.get("occupancy") is not None else None,
        registers_per_thread=None if registers is None else int(registers),  # type: ignore[call-overload]
        shared_mem_per_block=int(number("sharedMemPerBlock", 0.0)),
        lambda_k=number("kernelExecutionLambda", 1.0),
    )


def computation_time(attributes: Mapping[str, float], params: Mapping[str, object]) -> float:
    """Return the kernel time in seconds as the built-in `volkov_gpu.js` computes it."""
    return computation_estimate(attributes, params).time_s
