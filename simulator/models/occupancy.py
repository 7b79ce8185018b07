"""Occupancy calculator: resident blocks and warps per SM from a kernel's launch resources.

Follows NVIDIA's occupancy calculator (CUDA_Occupancy_Calculator.xls and cuda_occupancy.h,
docs/models.md 2): the resident blocks per SM are the least of the architecture's block limit,
the warp limit, the register limit (registers allocated per warp, rounded up to the
allocation unit, in each of the SM's sub-partitions) and the shared-memory limit (per-block
usage plus the reserved 1 KB from CC 8.0, rounded up to the allocation unit). The
per-architecture limits live in `data/architectures.json` with their sources.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any, Literal

LimitingFactor = Literal["warps", "blocks", "registers", "shared_memory"]

ARCHITECTURES_PATH = Path(__file__).parent / "data" / "architectures.json"
WARP_SIZE = 32
RESERVED_SHARED_FROM_CC8 = 1024
# Tegra (and Fermi) parts allow only 32 K registers per block.
EMBEDDED_REGISTER_LIMITED = frozenset({"2.0", "3.2", "5.3", "6.2"})

# The attributes the limits need, in the order messages name them (as occupancy.js).
LIMIT_ATTRIBUTES = (
    "computeCapability",
    "maxWarpsPerSM",
    "registersPerSM",
    "sharedMemPerSM",
    "maxBlocksPerSM",
)

OCCUPANCY_ERRORS: dict[str, str] = {
    "missing_attribute": "hardware attribute {name!r} is required by the occupancy calculator",
    "missing_attributes": "hardware attributes {names} are required by the occupancy calculator",
    "unknown_cc": "unknown compute capability {cc!r}; known: {known}",
    "block_size": "block size must be between 1 and {limit} threads, got {value}",
    "registers": "registers per thread must be between 0 and {limit}, got {value}",
    "shared_memory": "shared memory per block must be between 0 and {limit} bytes, got {value}",
    "registers_per_block": (
        "the block needs {needed} registers but compute capability {cc} allows {limit} per block"
    ),
}


@dataclass(frozen=True)
class ArchitectureLimits:
    """Per-SM limits of one compute capability (threads, registers, bytes)."""

    compute_capability: str
    architecture: str
    warp_size: int
    max_threads_per_sm: int
    max_warps_per_sm: int
    max_blocks_per_sm: int
    max_threads_per_block: int
    registers_per_sm: int
    registers_per_block: int
    register_allocation_unit: int
    register_allocation_granularity: str
    warp_allocation_granularity: int
    max_registers_per_thread: int
    shared_memory_per_sm: int
    max_shared_memory_per_block: int
    shared_memory_allocation_unit: int
    reserved_shared_memory_per_block: int


@dataclass(frozen=True)
class OccupancyResult:
    """Resident blocks and warps per SM, the occupancy fraction and what limits it."""

    active_blocks_per_sm: int
    active_warps_per_sm: int
    max_warps_per_sm: int
    occupancy: float
    limiting_factor: LimitingFactor


@cache
def _architecture_table() -> dict[str, Any]:
    with ARCHITECTURES_PATH.open(encoding="utf-8") as handle:
        table: dict[str, Any] = json.load(handle)["architectures"]
    return table


def known_compute_capabilities() -> list[str]:
    """Return the compute capabilities with known limits, in ascending order."""
    return sorted(_architecture_table(), key=float)


def normalise_compute_capability(compute_capability: str | float) -> str:
    """Return the "major.minor" form of 5.2, "5.2", "sm_52" or "52"."""
    text = str(compute_capability).strip().lower().removeprefix("sm_")
    if isinstance(compute_capability, float):
        text = f"{compute_capability:.1f}"
    elif "." not in text and text.isdigit() and len(text) >= 2:
        text = f"{text[:-1]}.{text[-1]}"
    if text not in _architecture_table():
        raise ValueError(
            OCCUPANCY_ERRORS["unknown_cc"].format(
                cc=compute_capability, known=", ".join(known_compute_capabilities())
            )
        )
    return text


def architecture_limits(compute_capability: str | float) -> ArchitectureLimits:
    """Return the per-SM limits of a compute capability."""
    cc = normalise_compute_capability(compute_capability)
    return ArchitectureLimits(compute_capability=cc, **_architecture_table()[cc])


def _round_up(value: int, unit: int) -> int:
    return -(-value // unit) * unit


def limits_from_attributes(attributes: Mapping[str, float | str]) -> ArchitectureLimits:
    """Return occupancy limits from a GPU record's attributes (as the built-in JavaScript does).

    Needs computeCapability, maxWarpsPerSM, maxBlocksPerSM, registersPerSM and sharedMemPerSM
    [bytes]; warpSize, maxThreadsPerBlock, registersPerBlock, maxRegistersPerThread and
    maxSharedMemPerBlock [bytes] are optional. The allocation granularities follow from the
    compute capability by NVIDIA's rules, which reproduce `data/architectures.json`.
    """

    def number(name: str, default: float | None = None) -> float:
        if name in attributes:
            return float(attributes[name])
        if default is None:
            raise ValueError(OCCUPANCY_ERRORS["missing_attribute"].format(name=name))
        return default

    # Several missing attributes are named at once, not the first alone.
    missing = [name for name in LIMIT_ATTRIBUTES if name not in attributes]
    if len(missing) > 1:
        names = ", ".join(repr(name) for name in missing)
        raise ValueError(OCCUPANCY_ERRORS["missing_attributes"].format(names=names))
    cc = float(number("computeCapability"))
    cc_text = f"{cc:.1f}"
    warp_size = int(number("warpSize", WARP_SIZE))
    max_warps = int(number("maxWarpsPerSM"))
    registers_per_sm = int(number("registersPerSM"))
    shared_per_sm = int(number("sharedMemPerSM"))
    embedded = cc_text in EMBEDDED_REGISTER_LIMITED
    if cc < 7:
        default_shared_per_block = 48 * 1024
    elif cc >= 8:
        default_shared_per_block = shared_per_sm - RESERVED_SHARED_FROM_CC8
    else:
        default_shared_per_block = shared_per_sm
    return ArchitectureLimits(
        compute_capability=cc_text,
        architecture="from attributes",
        warp_size=warp_size,
        max_threads_per_sm=max_warps * warp_size,
        max_warps_per_sm=max_warps,
        max_blocks_per_sm=int(number("maxBlocksPerSM")),
        max_threads_per_block=int(number("maxThreadsPerBlock", 1024)),
        registers_per_sm=registers_per_sm,
        registers_per_block=int(
            number("registersPerBlock", 32768 if embedded else min(registers_per_sm, 65536))
        ),
        register_allocation_unit=64 if cc < 3 else 256,
        register_allocation_granularity="warp",
        warp_allocation_granularity=2 if cc < 3 or cc_text == "6.0" else 4,
        max_registers_per_thread=int(number("maxRegistersPerThread", 63 if cc < 3.2 else 255)),
        shared_memory_per_sm=shared_per_sm,
        max_shared_memory_per_block=int(number("maxSharedMemPerBlock", default_shared_per_block)),
        shared_memory_allocation_unit=128 if cc < 3 or cc >= 8 else 256,
        reserved_shared_memory_per_block=RESERVED_SHARED_FROM_CC8 if cc >= 8 else 0,
    )


def occupancy(
    *,
    compute_capability: str | float,
    block_size: int,
    registers_per_thread: int,
    shared_mem_per_block: int = 0,
) -> OccupancyResult:
    """Return the resident blocks and warps per SM of a launch on a compute capability."""
    return occupancy_for_limits(
        architecture_limits(compute_capability),
        block_size=block_size,
        registers_per_thread=registers_per_thread,
        shared_mem_per_block=shared_mem_per_block,
    )


def occupancy_for_limits(
    limits: ArchitectureLimits,
    *,
    block_size: int,
    registers_per_thread: int,
    shared_mem_per_block: int = 0,
) -> OccupancyResult:
    """Return the resident blocks and warps per SM of a launch and its limiting factor.

    On ties the limiting factor is reported in the order warps, blocks, registers, shared
    memory (a kernel at full occupancy is "warps"-limited).
    """
    if not 1 <= block_size <= limits.max_threads_per_block:
        raise ValueError(
            OCCUPANCY_ERRORS["block_size"].format(
                limit=limits.max_threads_per_block, value=block_size
            )
        )
    if not 0 <= registers_per_thread <= limits.max_registers_per_thread:
        raise ValueError(
            OCCUPANCY_ERRORS["registers"].format(
                limit=limits.max_registers_per_thread, value=registers_per_thread
            )
        )
    if not 0 <= shared_mem_per_block <= limits.max_shared_memory_per_block:
        raise ValueError(
            OCCUPANCY_ERRORS["shared_memory"].format(
                limit=limits.max_shared_memory_per_block, value=shared_mem_per_block
            )
        )

    warps_per_block = math.ceil(block_size / limits.warp_size)
    by_warps = limits.max_warps_per_sm // warps_per_block
    by_blocks = limits.max_blocks_per_sm

    by_registers = math.inf
    if registers_per_thread > 0:
        registers_per_warp = _round_up(
            registers_per_thread * limits.warp_size, limits.register_allocation_unit
        )
        partitions = limits.warp_allocation_granularity
        # The hardware check assumes the block's warps are spread over every sub-partition.
        needed = registers_per_warp * _round_up(warps_per_block, partitions)
        if needed > limits.registers_per_block:
            raise ValueError(
                OCCUPANCY_ERRORS["registers_per_block"].format(
                    needed=needed, cc=limits.compute_capability, limit=limits.registers_per_block
                )
            )
        warps_per_partition = (limits.registers_per_sm // partitions) // registers_per_warp
        by_registers = (warps_per_partition * partitions) // warps_per_block

    by_shared_memory = math.inf
    shared_allocated = shared_mem_per_block + limits.reserved_shared_memory_per_block
    if shared_allocated > 0:
        shared_allocated = _round_up(shared_allocated, limits.shared_memory_allocation_unit)
        by_shared_memory = limits.shared_memory_per_sm // shared_allocated

    candidates: list[tuple[float, LimitingFactor]] = [
        (by_warps, "warps"),
        (by_blocks, "blocks"),
        (by_registers, "registers"),
        (by_shared_memory, "shared_memory"),
    ]
    blocks, factor = min(candidates, key=lambda item: item[0])
    active_blocks = int(blocks)
    active_warps = active_blocks * warps_per_block
    return OccupancyResult(
        active_blocks_per_sm=active_blocks,
        active_warps_per_sm=active_warps,
        max_warps_per_sm=limits.max_warps_per_sm,
        occupancy=active_warps / limits.max_warps_per_sm,
        limiting_factor=factor,
    )
