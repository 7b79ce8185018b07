"""Memory access models: warp access patterns, shared-memory bank conflicts, cache levels.

Three closed-form pieces feed Volkov's kernel model (docs/models.md 1 and 5):

* `warp_access` turns one warp-wide global memory instruction (element size, stride) into
  the bytes it moves and the re-issues it costs (000, section 4.2): 4-byte elements with
  stride 1 move 128 B with no re-issue, stride 2 move 256 B with one re-issue, stride 4
  move 512 B with three re-issues.
* `shared_access` does the same for shared memory: 32 banks of 4 bytes, an n-way bank
  conflict costs n - 1 re-issues (000, section 4.2: "a re-issue typically occurs when there
  are bank conflicts when accessing shared memory").
* `hierarchy_terms` splits GMem_bytes over cache levels by hit ratio (000, section 4.2 on
  cache hits: "the number of cache hits should be subtracted from the actual number of
  DRAM accesses") and returns one extra Th_bound term per level (4.4) and the mean access
  latency to use in Lat_bound (4.3). The hit ratios may come from a profiler or from the
  cache simulator in `simulator.models.cache`.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

SHARED_MEMORY_BANKS = 32
SHARED_MEMORY_BANK_BYTES = 4

ERR_ELEMENT_BYTES = "element_bytes must be a positive integer, got {value!r}"
ERR_WARP_SIZE = "warp_size must be a positive integer, got {value!r}"
ERR_SEGMENT_BYTES = "segment_bytes must be a positive integer, got {value!r}"
ERR_OFFSET_BYTES = "offset_bytes must be a non-negative integer, got {value!r}"
ERR_BANKS = "banks and bank_bytes must be positive integers, got {banks!r} and {bank_bytes!r}"
ERR_NO_LEVELS = "the memory hierarchy needs at least one level"
ERR_HIT_RATIO = "level {name!r}: hit_ratio must lie in [0, 1], got {value!r}"
ERR_LAST_LEVEL = (
    "level {name!r}: the last level (main memory) must serve every remaining byte, "
    "so its hit_ratio must be 1, got {value!r}"
)
ERR_BANDWIDTH = "level {name!r}: bytes_per_cycle_per_sm must be positive, got {value!r}"
ERR_LATENCY = "level {name!r}: latency_cycles must be non-negative, got {value!r}"
ERR_GMEM_BYTES = "gmem_bytes must be non-negative, got {value!r}"
ERR_DUPLICATE_LEVEL = "level names must be unique, {name!r} appears twice"


@dataclass(frozen=True)
class WarpAccess:
    """One warp-wide memory instruction as the hardware executes it.

    bytes_moved: bytes transferred for the whole warp (transactions x transaction size).
    transactions: separate transactions (global memory segments, or shared-memory passes).
    reissues: extra issues of the instruction beyond the first (transactions - 1).
    """

    bytes_moved: int
    transactions: int
    reissues: int


def _positive_int(value: int, message: str) -> None:
    if isinstance(value, bool) or not isinstance(value, int) or value <= 0:
        raise ValueError(message.format(value=value))


def _thread_spans(
    *, element_bytes: int, stride: int, warp_size: int, offset_bytes: int
) -> list[tuple[int, int]]:
    """Return each thread's [first, last] byte address; thread t reads element t * stride."""
    step = abs(stride) * element_bytes
    return [
        (offset_bytes + t * step, offset_bytes + t * step + element_bytes - 1)
        for t in range(warp_size)
    ]


def warp_access(
    *,
    element_bytes: int,
    stride: int,
    warp_size: int = 32,
    segment_bytes: int = 128,
    offset_bytes: int = 0,
) -> WarpAccess:
    """Return the bytes moved and re-issues of one warp reading one element per thread.

    Thread t of the warp accesses the `element_bytes` bytes at
    ``offset_bytes + t * stride * element_bytes`` (stride in elements; 1 is the coalesced
    case). The memory system serves the warp with one transaction per distinct aligned
    segment of `segment_bytes` that any thread touches, and the instruction is re-issued
    once per transaction after the first (000, section 4.2). Consequences, all exact:

    * 4-byte elements: stride 1 -> 128 B, 0 re-issues; stride 2 -> 256 B, 1; stride 4 ->
      512 B, 3 (the paper's reference values); stride >= 32 -> one segment per thread,
      4096 B and 31 re-issues, the cap for a 32-thread warp.
    * Wider elements touch proportionally more segments: 8-byte stride 1 -> 256 B, 1
      re-issue; 16-byte -> 512 B, 3 (as the hardware splits them into half/quarter warps).
    * Stride 0 (every thread reads the same element, a broadcast) -> one transaction.
    * A negative stride mirrors a positive one; a misaligned `offset_bytes` can add one
      segment.
    * Loads and stores are treated alike, as the paper does.

    `segment_bytes` is the transaction granularity: 128 B for L1-cached accesses (the
    paper's figures), 32 B to count L2 sectors instead.
    """
    _positive_int(element_bytes, ERR_ELEMENT_BYTES)
    _positive_int(warp_size, ERR_WARP_SIZE)
    _positive_int(segment_bytes, ERR_SEGMENT_BYTES)
    if isinstance(offset_bytes, bool) or not isinstance(offset_bytes, int) or offset_bytes < 0:
        raise ValueError(ERR_OFFSET_BYTES.format(value=offset_bytes))
    segments: set[int] = set()
    for first, last in _thread_spans(
        element_bytes=element_bytes, stride=stride, warp_size=warp_size, offset_bytes=offset_bytes
    ):
        segments.update(range(first // segment_bytes, last // segment_bytes + 1))
    transactions = len(segments)
    return WarpAccess(
        bytes_moved=transactions * segment_bytes,
        transactions=transactions,
        reissues=transactions - 1,
    )


def shared_access(
    *,
    element_bytes: int,
    stride: int,
    warp_size: int = 32,
    banks: int = SHARED_MEMORY_BANKS,
    bank_bytes: int = SHARED_MEMORY_BANK_BYTES,
    offset_bytes: int = 0,
) -> WarpAccess:
    """Return the passes and re-issues of one warp's shared-memory access (bank conflicts).

    Shared memory is `banks` banks of `bank_bytes`-byte words, word w in bank w mod banks.
    Thread t accesses the element at ``offset_bytes + t * stride * element_bytes``. Threads
    reading the same word share it (broadcast); distinct words in the same bank are served
    one per pass, so the access needs as many passes as the most loaded bank holds distinct
    words: an n-way conflict costs n - 1 re-issues. With 4-byte elements stride 1 (or any odd
    stride) is conflict-free, stride 2 is 2-way (1 re-issue), stride 32 is 32-way (31).
    Elements wider than a bank word need element_bytes / bank_bytes passes even without a
    conflict and these count as re-issues, as for global memory (8-byte stride 1 -> 1).
    `bytes_moved` is the bytes the threads requested (distinct words x bank_bytes).
    """
    _positive_int(element_bytes, ERR_ELEMENT_BYTES)
    _positive_int(warp_size, ERR_WARP_SIZE)
    if (
        isinstance(banks, bool)
        or isinstance(bank_bytes, bool)
        or not isinstance(banks, int)
        or not isinstance(bank_bytes, int)
        or banks <= 0
        or bank_bytes <= 0
    ):
        raise ValueError(ERR_BANKS.format(banks=banks, bank_bytes=bank_bytes))
    if isinstance(offset_bytes, bool) or not isinstance(offset_bytes, int) or offset_bytes < 0:
        raise ValueError(ERR_OFFSET_BYTES.format(value=offset_bytes))
    words: set[int] = set()
    for first, last in _thread_spans(
        element_bytes=element_bytes, stride=stride, warp_size=warp_size, offset_bytes=offset_bytes
    ):
        words.update(range(first // bank_bytes, last // bank_bytes + 1))
    per_bank: dict[int, int] = {}
    for word in words:
        per_bank[word % banks] = per_bank.get(word % banks, 0) + 1
    passes = max(per_bank.values())
    return WarpAccess(bytes_moved=len(words) * bank_bytes, transactions=passes, reissues=passes - 1)


@dataclass(frozen=True)
class Level:
    """One level of the memory hierarchy as seen from an SM.

    hit_ratio: fraction of the bytes reaching this level that it serves (the last level,
    main memory, serves all of them: 1.0).
    bytes_per_cycle_per_sm: the level's bandwidth available to one SM per SM cycle, the
    unit of GMem_bw in (4.5).
    latency_cycles: load-to-use latency of an access served by this level, in SM cycles
    (full latency from the SM, not the increment over the level above).
    """

    name: str
    hit_ratio: float
    bytes_per_cycle_per_sm: float
    latency_cycles: float


@dataclass(frozen=True)
class HierarchyTerms:
    """Per-level traffic of one warp and what it adds to Volkov's model.

    bytes_per_warp: bytes each level serves for one warp.
    cycles_per_warp: each level's extra Th_bound term (4.4), bytes served / bandwidth.
    mean_latency_cycles: the byte-weighted mean access latency, to use in Lat_bound (4.3)
    in place of the single global memory latency (350 cycles in Table 4.1).
    """

    bytes_per_warp: dict[str, float]
    cycles_per_warp: dict[str, float]
    mean_latency_cycles: float

    @property
    def bottleneck_cycles_per_warp(self) -> float:
        """Return the largest per-level term, the one that enters the max of (4.4)."""
        return max(self.cycles_per_warp.values())


def served_fractions(levels: Sequence[Level]) -> dict[str, float]:
    """Return the fraction of all requested bytes each level serves.

    Level i serves h_i of what missed every level before it: f_1 = h_1,
    f_2 = (1 - h_1) h_2, ..., and the last level (h = 1) serves the rest, so the fractions
    sum to 1.
    """
    if not levels:
        raise ValueError(ERR_NO_LEVELS)
    fractions: dict[str, float] = {}
    remaining = 1.0
    for index, level in enumerate(levels):
        if level.name in fractions:
            raise ValueError(ERR_DUPLICATE_LEVEL.format(name=level.name))
        if not (0.0 <= level.hit_ratio <= 1.0) or math.isnan(level.hit_ratio):
            raise ValueError(ERR_HIT_RATIO.format(name=level.name, value=level.hit_ratio))
        if index == len(levels) - 1 and level.hit_ratio != 1.0:
            raise ValueError(ERR_LAST_LEVEL.format(name=level.name, value=level.hit_ratio))
        if not level.bytes_per_cycle_per_sm > 0:
            raise ValueError(
                ERR_BANDWIDTH.format(name=level.name, value=level.bytes_per_cycle_per_sm)
            )
        if not level.latency_cycles >= 0:
            raise ValueError(ERR_LATENCY.format(name=level.name, value=level.latency_cycles))
        fractions[level.name] = remaining * level.hit_ratio
        remaining -= fractions[level.name]
    return fractions


def hierarchy_terms(gmem_bytes: float, levels: Sequence[Level]) -> HierarchyTerms:
    """Return the per-level Th_bound terms and the mean latency for GMem_bytes per warp.

    Assumptions (000, section 4.2 leaves the cached case open; these are ours):

    * Levels are listed from the SM outwards (e.g. L1, L2, DRAM); a fraction h_1 of the
      warp's GMem_bytes is served by L1, h_2 of the rest by L2, and the last level serves
      what is left (its hit_ratio must be 1).
    * A byte costs bandwidth only at the level that serves it: lookups that miss are free,
      and the fill traffic through inner levels is not charged twice. Each level is an
      independent pipe, so its term ``bytes_served / bytes_per_cycle_per_sm`` enters the
      max of (4.4) beside the CUDA-core, issue and DRAM terms (with no caches, h = 0
      everywhere, the DRAM term is exactly GMem_bytes / GMem_bw).
    * The latency of an access is that of the level that serves it; the mean over bytes is
      the latency Lat_bound should use per global access. Hits and misses of one warp
      instruction are not distinguished (a partially hitting warp waits for its slowest
      transaction in reality, so the mean is optimistic when hit ratios are mid-range).
    * Loads and stores behave alike; no write-back traffic is modelled here (the cache
      simulator counts write-backs if they matter).
    """
    if not gmem_bytes >= 0:
        raise ValueError(ERR_GMEM_BYTES.format(value=gmem_bytes))
    fractions = served_fractions(levels)
    bytes_per_warp = {level.name: gmem_bytes * fractions[level.name] for level in levels}
    cycles = {
        level.name: bytes_per_warp[level.name] / level.bytes_per_cycle_per_sm for level in levels
    }
    mean_latency = sum(fractions[level.name] * level.latency_cycles for level in levels)
    return HierarchyTerms(
        bytes_per_warp=bytes_per_warp, cycles_per_warp=cycles, mean_latency_cycles=mean_latency
    )
