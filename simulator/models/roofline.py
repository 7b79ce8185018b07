"""The roofline of a GPU and each kernel's point on it (Williams et al., in Volkov's terms).

    peak_ops   = SMs * CUDA_cores * SM_clock          CUDA-core instructions per second
    peak_bytes = GMem_bw * SMs * SM_clock              global-memory bytes per second (4.5)
    roof(I)    = min(peak_ops, I * peak_bytes)         attainable at arithmetic intensity I
    I          = warp_size * INS_cuda / GMem_bytes     instructions per byte of one warp
    achieved   = W_L * warp_size * INS_cuda / T_k      with W_L as (4.2)

Work is counted as Volkov's model counts it (docs/models.md 1): CUDA-core instructions per thread
(`CUDACoreInstructions`) and global-memory bytes per warp (`GMEMBytesTransferred`), so an FMA
is one operation, and the roof's two sides are the first and third terms of (4.4) summed over
the GPU. GMem_bw is GMEMThroughput when the record has it (the figure the model uses, an
achieved one as MERPSYS records it), else (4.5) from memoryClock, busWidth and dataRate.

Every further ceiling that applies (issue 42) is listed beside the roof, in the same unit
(instructions per second, an FMA being one instruction: FLOP/s / 2): FP32 (the roof itself),
FP64 (FP64Units), and the tensor cores' dense rate of each precision the record gives
(`tensorFLOPsPerCycle<precision>`, per SM per cycle, gpu_current.py C.6); and every memory roof
in bytes per second: shared memory / L1 (32 banks of 4 bytes per SM per cycle, the CUDA C
Programming Guide's shared-memory banks since compute capability 5.0, unless the record gives
`sharedMemBandwidth` [B/cycle/SM]), L2 (`L2Bandwidth`) and DRAM/HBM (the roof's).

Pure Python, no NumPy: a simulation run computes these for its kernels (simulator.results).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import NamedTuple

from simulator.hotpath import KERNEL_MARKER

MHZ = 1e6

# The kernel parameters of Volkov's models (000 Listing 5) a kernel's point needs.
KERNEL_INPUTS = (
    KERNEL_MARKER,  # CUDACoreInstructions: what makes params a kernel's (the hot path's test)
    "GMEMBytesTransferred",
    "gridSize",
    "N",
    "blockSize",
    "occupancy",
)

# What limits a kernel, by the bound name its model's computationDetail gives: the four
# classes (latency, issue, memory, launch) and compute for the arithmetic units' terms of (4.4).
BOUND_CLASSES: dict[str, str] = {
    "latency": "latency",
    "launch": "launch",
    "schedulers": "issue",
    "issue": "issue",
    "global_memory": "memory",
    "l2": "memory",
    "shared_memory": "memory",
    "cuda_cores": "compute",
    "fp64": "compute",
    "sfu": "compute",
    "extra": "memory",
    "tensor": "compute",
    "int": "compute",
}

# Shared memory serves 32 banks x 4 bytes per SM per cycle (compute capability 5.0 and later).
SHARED_BYTES_PER_CYCLE = 32 * 4

# Ceiling name -> the attribute giving its dense FLOPs (INT8: operations) per SM per cycle.
TENSOR_CEILINGS = (
    ("tensor FP16/BF16", "tensorFLOPsPerCycleFP16"),
    ("tensor TF32", "tensorFLOPsPerCycleTF32"),
    ("tensor FP8", "tensorFLOPsPerCycleFP8"),
    ("tensor FP4", "tensorFLOPsPerCycleFP4"),
    ("tensor FP64", "tensorFLOPsPerCycleFP64"),
    ("tensor INT8", "tensorOpsPerCycleINT8"),
)


@dataclass(frozen=True, slots=True)
class Roof:
    """A GPU's two roofs and the occupancy limit its kernels are measured against."""

    peak_ops_per_s: float
    peak_bytes_per_s: float
    warp_size: float
    max_warps_per_sm: float | None
    # (name, instructions per second, an FMA one): FP32 first, then FP64 and tensor ceilings
    ceilings: tuple[tuple[str, float], ...] = ()
    # (name, bytes per second): shared/L1, L2, DRAM, fastest first
    memory_roofs: tuple[tuple[str, float], ...] = ()

    @property
    def ridge_intensity(self) -> float:
        """Return the arithmetic intensity where the memory roof meets the compute roof."""
        return self.peak_ops_per_s / self.peak_bytes_per_s

    def attainable(self, intensity: float) -> float:
        """Return the roof at `intensity` instructions per byte."""
        return min(self.peak_ops_per_s, intensity * self.peak_bytes_per_s)


def _number(values: Mapping[str, object], name: str) -> float | None:
    value = values.get(name)
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    number = float(value)
    return number if math.isfinite(number) and number > 0 else None


def gpu_roof(attributes: Mapping[str, object]) -> Roof | None:
    """Return the GPU's roofline from its hardware attributes (Volkov's vocabulary), or None
    when the record lacks SMs, SMCoreClock, CUDACores or a memory bandwidth."""
    sms = _number(attributes, "SMs") or _number(attributes, "SMS")
    clock = _number(attributes, "SMCoreClock")
    cores = _number(attributes, "CUDACores")
    if sms is None or clock is None or cores is None:
        return None
    cycles_per_s = sms * clock * MHZ
    per_sm_cycle = _number(attributes, "GMEMThroughput")
    if per_sm_cycle is not None:
        bandwidth = per_sm_cycle * cycles_per_s
    else:
        memory_clock = _number(attributes, "memoryClock")
        bus_width = _number(attributes, "busWidth")
        data_rate = _number(attributes, "dataRate")
        if memory_clock is None or bus_width is None or data_rate is None:
            return None
        bandwidth = memory_clock * MHZ * (bus_width / 8) * data_rate
    ceilings = [("FP32", cores * cycles_per_s)]
    fp64_units = _number(attributes, "FP64Units")
    if fp64_units is not None:
        ceilings.append(("FP64", fp64_units * cycles_per_s))
    for name, key in TENSOR_CEILINGS:
        rate = _number(attributes, key)
        if rate is not None:  # FLOPs per cycle; an instruction here is an FMA, two FLOPs
            ceilings.append((name, rate / 2 * cycles_per_s))
    shared = _number(attributes, "sharedMemBandwidth") or SHARED_BYTES_PER_CYCLE
    roofs = [("shared memory / L1", shared * cycles_per_s)]
    l2 = _number(attributes, "L2Bandwidth")
    if l2 is not None:
        roofs.append(("L2", l2))
    roofs.append(("DRAM", bandwidth))
    return Roof(
        peak_ops_per_s=cores * cycles_per_s,
        peak_bytes_per_s=bandwidth,
        warp_size=_number(attributes, "warpSize") or 32.0,
        max_warps_per_sm=_number(attributes, "maxWarpsPerSM"),
        ceilings=tuple(ceilings),
        memory_roofs=tuple(roofs),
    )


def kernel_inputs(params: Mapping[str, object]) -> dict[str, float] | None:
    """Return the numbers of a computation's params a roofline point needs, or None when the
    params are not a GPU kernel's (no CUDACoreInstructions, GMEMBytesTransferred, blockSize
    and gridSize or N)."""
    if KERNEL_MARKER not in params:  # the common case of a CPU computation: fast
        return None
    inputs: dict[str, float] = {}
    for name in KERNEL_INPUTS:
        value = params.get(name)
        kind = value.__class__
        if kind is float or kind is int:  # `_number` at once for a plain number (not a bool)
            if 0 < value < math.inf:  # type: ignore[operator]
                inputs[name] = float(value)  # type: ignore[arg-type]
        elif value is not None and (number := _number(params, name)):
            inputs[name] = number
    if (
        "GMEMBytesTransferred" not in inputs
        or KERNEL_MARKER not in inputs
        or "blockSize" not in inputs
        or ("gridSize" not in inputs and "N" not in inputs)
    ):
        return None
    return inputs


class KernelPoint(NamedTuple):
    """One kernel's work and where it sits under the roof (a named tuple, made and read faster
    than a frozen dataclass). A result's kernel rows compute the same figures in the same
    operations inline (simulator.results.kernel_rows)."""

    warps: float
    ops: float
    bytes: float
    intensity: float  # instructions per byte
    ops_per_s: float
    bytes_per_s: float
    roof_ops_per_s: float  # the roof at the kernel's intensity
    roof_fraction: float  # achieved / roof


def kernel_point(inputs: Mapping[str, float], duration_s: float, roof: Roof) -> KernelPoint | None:
    """Return the kernel's point from `kernel_inputs` and its time, or None for a kernel that
    took no time."""
    if duration_s <= 0:
        return None
    block = inputs["blockSize"]
    grid = inputs.get("gridSize") or math.ceil(inputs["N"] / block)
    warps = grid * math.ceil(block / roof.warp_size)  # W_L (4.2)
    ops = warps * roof.warp_size * inputs[KERNEL_MARKER]
    moved = warps * inputs["GMEMBytesTransferred"]
    intensity = ops / moved
    ops_per_s = ops / duration_s
    attainable = roof.attainable(intensity)
    return KernelPoint(
        warps,
        ops,
        moved,
        intensity,
        ops_per_s,
        moved / duration_s,
        attainable,
        ops_per_s / attainable,
    )


def bound_class(bound: object) -> str | None:
    """Return latency, issue, memory, compute or launch for a model's bound name, else None."""
    return BOUND_CLASSES.get(bound) if isinstance(bound, str) else None
