"""Block scheduling: waves of thread blocks over SMs (003 section IV-B, 001; docs/models.md 7).

Blocks are dispatched round robin to the SMs and each SM holds as many blocks at once as the
occupancy calculator allows; a kernel's runtime therefore rises in steps, one step per
SMs x resident-blocks-per-SM blocks (003 Fig. 2: every 14 blocks of 1024 threads on the
M2075, every 28 on the K20Xm). `stepwise_runtime` is the closed form for identical blocks;
`simulate_block_waves` dispatches blocks of individual durations to SM slots one by one.
"""

from __future__ import annotations

import heapq
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

FloatArray = npt.NDArray[np.float64]
Numeric = float | FloatArray
ArrayLike = float | int | npt.ArrayLike

BLOCKS_ERRORS: dict[str, str] = {
    "sms": "the number of SMs and of resident blocks per SM must be positive integers",
    "block_time": "block times must be non-negative",
}


def _check(sms: int, blocks_per_sm: int) -> None:
    if sms < 1 or blocks_per_sm < 1:
        raise ValueError(BLOCKS_ERRORS["sms"])


def waves(blocks: ArrayLike, *, sms: int, blocks_per_sm: int) -> Numeric:
    """Return the number of waves ceil(NB / (SMs x blocks per SM)); 0 blocks need 0 waves."""
    _check(sms, blocks_per_sm)
    value = np.ceil(np.asarray(blocks, dtype=np.float64) / (sms * blocks_per_sm))
    return float(value) if np.ndim(value) == 0 else value


def stepwise_runtime(
    blocks: ArrayLike,
    *,
    wave_time_s: ArrayLike,
    sms: int,
    blocks_per_sm: int,
    launch_s: float = 0.0,
) -> Numeric:
    """Return launch + waves x the time of one full wave (identical blocks; 003 eq. 4)."""
    count = np.asarray(waves(blocks, sms=sms, blocks_per_sm=blocks_per_sm))
    value = launch_s + count * np.asarray(wave_time_s, dtype=np.float64)
    return float(value) if np.ndim(value) == 0 else value


def step_positions(max_blocks: int, *, sms: int, blocks_per_sm: int) -> list[int]:
    """Return the block counts (up to max_blocks) at which the runtime steps up: k x wave + 1."""
    _check(sms, blocks_per_sm)
    wave = sms * blocks_per_sm
    return list(range(wave + 1, max_blocks + 1, wave))


@dataclass(frozen=True)
class BlockPlacement:
    """Where and when one block ran."""

    block: int
    sm: int
    start_s: float
    end_s: float


@dataclass(frozen=True)
class WaveSchedule:
    """The blocks' placements and the kernel's makespan."""

    placements: tuple[BlockPlacement, ...]
    makespan_s: float


def simulate_block_waves(
    block_times_s: Sequence[float], *, sms: int, blocks_per_sm: int
) -> WaveSchedule:
    """Return the schedule of blocks dispatched in order to the earliest free SM slot.

    Slots are numbered round robin (slot k sits on SM k mod SMs), and ties go to the lowest
    slot, so identical blocks fill SM 0, 1, ..., SMs-1, then each SM's second slot, and so on.
    A block's time is its duration with its SM fully loaded (the wave time of 003).
    """
    _check(sms, blocks_per_sm)
    if any(t < 0 for t in block_times_s):
        raise ValueError(BLOCKS_ERRORS["block_time"])
    free: list[tuple[float, int]] = [(0.0, slot) for slot in range(sms * blocks_per_sm)]
    heapq.heapify(free)
    placements = []
    makespan = 0.0
    for block, duration in enumerate(block_times_s):
        start, slot = heapq.heappop(free)
        end = start + duration
        placements.append(BlockPlacement(block=block, sm=slot % sms, start_s=start, end_s=end))
        makespan = max(makespan, end)
        heapq.heappush(free, (end, slot))
    return WaveSchedule(placements=tuple(placements), makespan_s=makespan)
