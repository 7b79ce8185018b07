"""A multi-level set-associative cache simulator whose hit ratios feed the memory model.

The structure follows M2S-CGM's cache timing model (002, section 3.2.5.1): every level has
a size (sets x ways x line), a line size, a set associativity and a latency, uses least
recently used replacement and a write-back schema, and the levels are inclusive. Timing
queues, MSHRs, coalescers and coherence are left out: this is a functional simulator that
counts hits, misses and write-backs and charges each access the latencies of the levels
it probes. Its per-level hit ratios are exactly the h_i of
`simulator.models.memory.hierarchy_terms` (`CacheSimulationResult.as_levels`).

Policies, all fixed:

* LRU within a set; a hit (read or write) makes the line most recently used.
* Write-back with write-allocate: a write miss fetches the line like a read, then the
  innermost copy is marked dirty. A dirty line costs one write-back when it leaves a level.
* Inclusive: a line fetched from level k (or memory) is installed in every level above k.
  A line evicted from an inner level is written back (if dirty) into the next level, which
  holds it by inclusion, without changing that level's LRU order. A line evicted from an
  outer level is back-invalidated in every inner level; a dirty inner copy is merged into
  the outgoing line (counted as a write-back of the inner level), so the outer eviction is
  dirty too.
* Latency: an access served by level k costs the sum of the latencies of levels 1..k (the
  probes are serial); one that misses everywhere adds the memory latency. Write-backs are
  off the critical path and cost no latency.
* An access touches the one line holding its address; callers split accesses that cross a
  line boundary. All levels share one line size (M2S-CGM uses 64 B system-wide).

Access streams are plain iterables of ``(address, is_write)``: `strided_stream`,
`random_stream` (seeded), `tiled_stream` (2D tiles over a row-major matrix) or any recorded
trace; `CacheHierarchy.run_arrays` takes a trace held in two arrays (addresses, write flags).

Two cores give the same results, access by access: `simulator/_cachesim.c`, which
`CacheHierarchy` runs on when it is built (`python -m simulator.build_speedups`) and
PARASIM_PURE_PYTHON is not set, and `_PythonCore` here, the reference and the fallback, which
`PythonCacheHierarchy` always runs on. The C core takes addresses whose line number fits in 64
bits (OverflowError beyond); `bench/bench_cache.py` measures both.
"""

from __future__ import annotations

import random
from collections import OrderedDict
from collections.abc import Collection, Iterable, Iterator, Mapping, Sequence
from contextlib import ExitStack
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from simulator import hotpath
from simulator.models.memory import Level

ERR_GEOMETRY = "cache level {name!r}: sets, ways and line_bytes must be positive integers"
ERR_LATENCY = "cache level {name!r}: latency_cycles must be non-negative, got {value!r}"
ERR_NO_LEVELS = "a cache hierarchy needs at least one level"
ERR_LINE_SIZES = "all cache levels must share one line size, got {sizes}"
ERR_DUPLICATE = "cache level names must be unique, {name!r} appears twice"
ERR_MEMORY_LATENCY = "memory_latency_cycles must be non-negative, got {value!r}"
ERR_ADDRESS = "addresses must be non-negative integers, got {value!r}"
ERR_SIZE = "cache level {name!r}: size_bytes must be a multiple of ways x line_bytes"
ERR_STREAM = "{name} must be positive, got {value!r}"
ERR_TILE = "tile {tile_rows} x {tile_cols} must be positive"
ERR_WRITE_FRACTION = "write_fraction must lie in [0, 1], got {value!r}"
ERR_BANDWIDTH_MISSING = "no bandwidth given for level {name!r}"
ERR_ARRAY = "{name} must be a one-dimensional buffer of native integers or a sequence, got {got}"
ERR_ARRAY_LENGTHS = "addresses and writes must have the same length, got {addresses} and {writes}"
MEMORY_LEVEL = "memory"


@dataclass(frozen=True)
class CacheLevelConfig:
    """Geometry and latency of one cache level: sets x ways lines of line_bytes bytes."""

    name: str
    sets: int
    ways: int
    line_bytes: int
    latency_cycles: float

    def __post_init__(self) -> None:
        for value in (self.sets, self.ways, self.line_bytes):
            if isinstance(value, bool) or not isinstance(value, int) or value <= 0:
                raise ValueError(ERR_GEOMETRY.format(name=self.name))
        if not self.latency_cycles >= 0:
            raise ValueError(ERR_LATENCY.format(name=self.name, value=self.latency_cycles))

    @property
    def size_bytes(self) -> int:
        """Return the capacity, sets x ways x line_bytes."""
        return self.sets * self.ways * self.line_bytes

    @classmethod
    def from_size(
        cls, name: str, *, size_bytes: int, ways: int, line_bytes: int, latency_cycles: float
    ) -> CacheLevelConfig:
        """Return the level of the given capacity and associativity (sets derived)."""
        if ways <= 0 or line_bytes <= 0 or size_bytes % (ways * line_bytes) != 0:
            raise ValueError(ERR_SIZE.format(name=name))
        return cls(name, size_bytes // (ways * line_bytes), ways, line_bytes, latency_cycles)


@dataclass(frozen=True)
class CacheHierarchyConfig:
    """Inclusive cache levels from the core outwards, then main memory."""

    levels: tuple[CacheLevelConfig, ...]
    memory_latency_cycles: float = 0.0

    def __post_init__(self) -> None:
        if not self.levels:
            raise ValueError(ERR_NO_LEVELS)
        sizes = sorted({level.line_bytes for level in self.levels})
        if len(sizes) > 1:
            raise ValueError(ERR_LINE_SIZES.format(sizes=sizes))
        names: set[str] = set()
        for level in self.levels:
            if level.name in names or level.name == MEMORY_LEVEL:
                raise ValueError(ERR_DUPLICATE.format(name=level.name))
            names.add(level.name)
        if not self.memory_latency_cycles >= 0:
            raise ValueError(ERR_MEMORY_LATENCY.format(value=self.memory_latency_cycles))


# M2S-CGM's Intel Core i7-4790K CPU caches (002, section 4.3.1, Table 4.1): L1 data 32 KB
# 2-way 1 cycle, L2 256 KB 4-way 2 cycles, L3 2 MB 16-way 4 cycles, 64 B lines. The main
# memory latency is ours (the thesis simulates SDRAM with DRAMSim2 and prints no single
# figure): 200 CPU cycles (fifty nanoseconds at 4 GHz).
I7_4790K = CacheHierarchyConfig(
    levels=(
        CacheLevelConfig("L1", sets=256, ways=2, line_bytes=64, latency_cycles=1),
        CacheLevelConfig("L2", sets=1024, ways=4, line_bytes=64, latency_cycles=2),
        CacheLevelConfig("L3", sets=2048, ways=16, line_bytes=64, latency_cycles=4),
    ),
    memory_latency_cycles=200,
)

# M2S-CGM's GPU compute unit caches of the same study (Table 4.1): L1 vector 16 KB 4-way
# 1 cycle, L2 64 KB 16-way 3 cycles, 64 B lines; memory latency ours as above (1 GHz GPU).
M2S_CGM_GPU = CacheHierarchyConfig(
    levels=(
        CacheLevelConfig("L1", sets=64, ways=4, line_bytes=64, latency_cycles=1),
        CacheLevelConfig("L2", sets=64, ways=16, line_bytes=64, latency_cycles=3),
    ),
    memory_latency_cycles=50,
)


@dataclass(frozen=True)
class CacheLevelStats:
    """What one level saw: accesses reaching it, hits, misses and lines it sent down.

    writebacks: dirty lines this level wrote to the next level (or memory), on eviction
    or when an outer level back-invalidated them. back_invalidations: lines removed from
    this level because an outer level evicted them.
    """

    name: str
    accesses: int
    hits: int
    misses: int
    evictions: int
    writebacks: int
    back_invalidations: int

    @property
    def hit_ratio(self) -> float:
        """Return hits / accesses at this level (local hit ratio), 0 when none reached it."""
        return self.hits / self.accesses if self.accesses else 0.0


@dataclass(frozen=True)
class CacheSimulationResult:
    """Per-level statistics, memory traffic in lines and the mean access latency."""

    levels: tuple[CacheLevelStats, ...]
    accesses: int
    memory_reads: int
    memory_writes: int
    total_latency_cycles: float
    latencies: tuple[float, ...]
    memory_latency_cycles: float

    @property
    def mean_latency_cycles(self) -> float:
        """Return the average access latency in cycles, 0 for an empty stream."""
        return self.total_latency_cycles / self.accesses if self.accesses else 0.0

    @property
    def hit_ratios(self) -> dict[str, float]:
        """Return each level's local hit ratio, the h_i of the memory model."""
        return {level.name: level.hit_ratio for level in self.levels}

    def level(self, name: str) -> CacheLevelStats:
        """Return the statistics of the level called `name`."""
        for stats in self.levels:
            if stats.name == name:
                return stats
        raise KeyError(name)

    def as_levels(self, bytes_per_cycle_per_sm: Mapping[str, float]) -> list[Level]:
        """Return `memory.Level`s for `hierarchy_terms`, memory last with hit ratio 1.

        Each level's latency is the cumulative probe latency of an access it serves, the
        convention of `memory.Level`. `bytes_per_cycle_per_sm` names every cache level and
        "memory".
        """
        result: list[Level] = []
        cumulative = 0.0
        for stats, latency in zip(self.levels, self.latencies, strict=True):
            cumulative += latency
            if stats.name not in bytes_per_cycle_per_sm:
                raise ValueError(ERR_BANDWIDTH_MISSING.format(name=stats.name))
            result.append(
                Level(stats.name, stats.hit_ratio, bytes_per_cycle_per_sm[stats.name], cumulative)
            )
        if MEMORY_LEVEL not in bytes_per_cycle_per_sm:
            raise ValueError(ERR_BANDWIDTH_MISSING.format(name=MEMORY_LEVEL))
        result.append(
            Level(
                MEMORY_LEVEL,
                1.0,
                bytes_per_cycle_per_sm[MEMORY_LEVEL],
                cumulative + self.memory_latency_cycles,
            )
        )
        return result


cachesim = hotpath.cachesim
"""`simulator._cachesim` (the C core of `CacheHierarchy`) when in use, else None (the choice
is simulator.hotpath's)."""


class _PythonCore:
    """The sets, the LRU order and the counters, in Python (the C core's reference).

    Each set is an OrderedDict from line number to its dirty flag, least recently used
    first, so a lookup, a hit and an eviction are O(1). The core counts how many accesses
    each level served (memory last); accesses, hits and latency per level follow from those
    counts. `simulator/_cachesim.c` implements the same core with LRU stamps, as the tree of
    `simulator.models.coherence` whose every cache has one child (a chain is a tree).
    """

    __slots__ = (
        "_back_invalidations",
        "_evictions",
        "_geometry",
        "_line_bytes",
        "_served",
        "_writebacks",
    )

    def __init__(self, levels: Sequence[tuple[int, int, int]]) -> None:
        """Take each level's (sets, ways, line_bytes), from the core outwards."""
        self._line_bytes = levels[0][2]
        self._geometry: list[tuple[list[OrderedDict[int, bool]], int, int]] = [
            ([OrderedDict() for _ in range(sets)], sets, ways) for sets, ways, _ in levels
        ]
        depth = len(levels)
        self._served = [0] * (depth + 1)
        self._evictions = [0] * depth
        self._writebacks = [0] * depth
        self._back_invalidations = [0] * depth

    def contains(self, level: int, address: int) -> bool:
        """Return whether the line holding `address` is present at level index `level`."""
        sets, count, _ = self._geometry[level]
        line = address // self._line_bytes
        return line in sets[line % count]

    def is_dirty(self, level: int, address: int) -> bool:
        """Return whether level `level` holds the line of `address` in the modified state."""
        sets, count, _ = self._geometry[level]
        line = address // self._line_bytes
        return sets[line % count].get(line, False)

    def access(self, address: int, is_write: bool = False) -> int:
        """Perform one access; return the index of the level that served it (depth = memory)."""
        if isinstance(address, bool) or not isinstance(address, int) or address < 0:
            raise ValueError(ERR_ADDRESS.format(value=address))
        line = address // self._line_bytes
        geometry = self._geometry
        served = len(geometry)
        for index, (sets, count, _) in enumerate(geometry):
            cache_set = sets[line % count]
            if line in cache_set:
                cache_set.move_to_end(line)
                served = index
                break
        self._served[served] += 1
        # Fill the levels that missed, outermost first, so an outer eviction's
        # back-invalidation never removes the line being installed.
        for index in range(served - 1, -1, -1):
            sets, count, ways = geometry[index]
            cache_set = sets[line % count]
            if len(cache_set) >= ways:
                victim, dirty = cache_set.popitem(last=False)
                self._evictions[index] += 1
                if dirty or index:
                    self._evict(index, victim, dirty)
            cache_set[line] = False
        if is_write:
            sets, count, _ = geometry[0]
            sets[line % count][line] = True
        return served

    def _evict(self, index: int, victim: int, dirty: bool) -> None:
        """Send an evicted line down: back-invalidate inner copies, write back if dirty."""
        geometry = self._geometry
        for inner in range(index):
            sets, count, _ = geometry[inner]
            inner_set = sets[victim % count]
            if victim in inner_set:
                self._back_invalidations[inner] += 1
                if inner_set.pop(victim):
                    self._writebacks[inner] += 1
                    dirty = True
        if dirty:
            self._writebacks[index] += 1
            if index + 1 < len(geometry):
                # Inclusion guarantees the outer level holds the line; the write-back
                # marks it modified without touching its LRU position.
                sets, count, _ = geometry[index + 1]
                sets[victim % count][victim] = True

    def run_pairs(self, stream: Iterable[tuple[int, bool]]) -> None:
        """Perform every access of `stream`; the accesses before an error count."""
        line_bytes = self._line_bytes
        l1_sets, l1_count, _ = self._geometry[0]
        access = self.access
        l1_hits = 0
        try:
            for address, is_write in stream:
                # Fast path: an L1 hit touches one OrderedDict and no other level.
                if type(address) is int and address >= 0:
                    line = address // line_bytes
                    cache_set = l1_sets[line % l1_count]
                    if line in cache_set:
                        cache_set.move_to_end(line)
                        if is_write:
                            cache_set[line] = True
                        l1_hits += 1
                        continue
                access(address, is_write)
        finally:
            self._served[0] += l1_hits

    def run_buffers(self, addresses: memoryview, writes: memoryview | None = None) -> None:
        """Perform the accesses of two buffers checked by `_items` (writes None: all reads)."""
        address_list = addresses.tolist()
        flags: list[Any] = [False] * len(address_list) if writes is None else writes.tolist()
        self.run_pairs(zip(address_list, flags, strict=True))

    def counters(self) -> tuple[list[int], list[int], list[int], list[int]]:
        """Return (served, evictions, writebacks, back_invalidations), served memory last."""
        return (
            list(self._served),
            list(self._evictions),
            list(self._writebacks),
            list(self._back_invalidations),
        )


if TYPE_CHECKING:
    _Core = _PythonCore
    _API = _PythonCore
else:
    _Core = hotpath.choose_in(cachesim, _PythonCore, "Hierarchy")
    _API = object

# Item formats `run_arrays` takes (native byte order and size, as `memoryview` and the C core
# read them): signed and unsigned integers, and bool for the write flags.
_ADDRESS_FORMATS = frozenset("bBhHiIlLqQnN")
_WRITE_FORMATS = _ADDRESS_FORMATS | {"?"}


def _geometry(config: CacheHierarchyConfig) -> list[tuple[int, int, int]]:
    """Return each level's (sets, ways, line_bytes), the cores' description of a hierarchy."""
    return [(level.sets, level.ways, level.line_bytes) for level in config.levels]


def _items(
    stack: ExitStack, name: str, array: object, formats: frozenset[str]
) -> memoryview | Collection[Any]:
    """Return a one-dimensional integer view of a buffer (released with `stack`), or `array`
    itself when it is a collection that is no buffer (a list); else raise ERR_ARRAY."""
    try:
        view = memoryview(array)  # type: ignore[arg-type]
    except TypeError:
        if isinstance(array, Collection):
            return array
        raise TypeError(ERR_ARRAY.format(name=name, got=type(array).__name__)) from None
    stack.enter_context(view)
    if view.ndim != 1 or view.format.removeprefix("@") not in formats:
        got = f"format {view.format!r} in {view.ndim} dimensions"
        raise TypeError(ERR_ARRAY.format(name=name, got=got))
    return view


class _CacheAPI(_API):
    """What a hierarchy adds to its core: the configuration, `run`, `run_arrays`, `result`."""

    __slots__ = ()
    if TYPE_CHECKING:  # set by the concrete hierarchies' __init__
        config: CacheHierarchyConfig

    def run(self, stream: Iterable[tuple[int, bool]]) -> CacheSimulationResult:
        """Feed every access of `stream` and return the statistics so far."""
        self.run_pairs(stream)
        return self.result()

    def run_arrays(self, addresses: object, writes: object = None) -> CacheSimulationResult:
        """Feed the accesses of two equally long arrays and return the statistics so far.

        Access i reads address i or, where writes[i] is true (non-zero), writes it; writes
        None makes every access a read. The fast path takes one-dimensional buffers of
        native integers (`array('Q')`, `bytes`, NumPy integer or bool arrays), where the C
        core makes no Python object per access; other collections (lists, tuples) run as
        pairs, as through `run`.
        """
        with ExitStack() as stack:
            address_items = _items(stack, "addresses", addresses, _ADDRESS_FORMATS)
            write_items = None
            if writes is not None:
                write_items = _items(stack, "writes", writes, _WRITE_FORMATS)
                if len(write_items) != len(address_items):
                    raise ValueError(
                        ERR_ARRAY_LENGTHS.format(
                            addresses=len(address_items), writes=len(write_items)
                        )
                    )
            if isinstance(address_items, memoryview) and (
                write_items is None or isinstance(write_items, memoryview)
            ):
                self.run_buffers(address_items, write_items)
            else:
                flags: Collection[Any] = (
                    [False] * len(address_items) if write_items is None else write_items
                )
                self.run_pairs(zip(address_items, flags, strict=True))
        return self.result()

    def result(self) -> CacheSimulationResult:
        """Return the statistics of every access performed so far."""
        levels = self.config.levels
        served, evictions, writebacks, back_invalidations = self.counters()
        stats = tuple(
            CacheLevelStats(
                name=level.name,
                accesses=sum(served[index:]),
                hits=served[index],
                misses=sum(served[index + 1 :]),
                evictions=evictions[index],
                writebacks=writebacks[index],
                back_invalidations=back_invalidations[index],
            )
            for index, level in enumerate(levels)
        )
        cumulative = 0.0
        total_latency = 0.0
        for index, level in enumerate(levels):
            cumulative += level.latency_cycles
            total_latency += served[index] * cumulative
        total_latency += served[-1] * (cumulative + self.config.memory_latency_cycles)
        return CacheSimulationResult(
            levels=stats,
            accesses=sum(served),
            memory_reads=served[-1],
            memory_writes=writebacks[-1],
            total_latency_cycles=total_latency,
            latencies=tuple(float(level.latency_cycles) for level in levels),
            memory_latency_cycles=float(self.config.memory_latency_cycles),
        )


class CacheHierarchy(_CacheAPI, _Core):
    """Inclusive, write-back, write-allocate LRU caches; feed it accesses, read `result()`.

    Runs on the C core when it is built (see `cachesim`), else on the pure-Python one; both
    give the same results. `access` performs one access, `run` a stream of (address,
    is_write) pairs, `run_arrays` a trace held in arrays; `contains` and `is_dirty` inspect a
    level by index.
    """

    def __init__(self, config: CacheHierarchyConfig) -> None:
        super().__init__(_geometry(config))
        self.config = config


class PythonCacheHierarchy(_CacheAPI, _PythonCore):
    """The same hierarchy on the pure-Python core, whether or not the C core is built."""

    def __init__(self, config: CacheHierarchyConfig) -> None:
        super().__init__(_geometry(config))
        self.config = config


def simulate(
    config: CacheHierarchyConfig, stream: Iterable[tuple[int, bool]]
) -> CacheSimulationResult:
    """Return the statistics of running `stream` through a fresh hierarchy (cold caches)."""
    return CacheHierarchy(config).run(stream)


def _check_positive(name: str, value: int) -> None:
    if value <= 0:
        raise ValueError(ERR_STREAM.format(name=name, value=value))


def _check_write_fraction(write_fraction: float) -> None:
    if not 0.0 <= write_fraction <= 1.0:
        raise ValueError(ERR_WRITE_FRACTION.format(value=write_fraction))


def strided_stream(
    *, count: int, stride_bytes: int, start: int = 0, passes: int = 1, is_write: bool = False
) -> Iterator[tuple[int, bool]]:
    """Yield `count` accesses start, start + stride, ..., repeated `passes` times."""
    _check_positive("count", count)
    _check_positive("passes", passes)
    for _ in range(passes):
        for index in range(count):
            yield start + index * stride_bytes, is_write


def random_stream(
    *,
    count: int,
    span_bytes: int,
    seed: int,
    start: int = 0,
    align_bytes: int = 4,
    write_fraction: float = 0.0,
) -> Iterator[tuple[int, bool]]:
    """Yield `count` uniformly random aligned accesses in [start, start + span_bytes).

    The same seed gives the same stream; a fraction `write_fraction` of them are writes.
    """
    _check_positive("count", count)
    _check_positive("span_bytes", span_bytes)
    _check_positive("align_bytes", align_bytes)
    _check_write_fraction(write_fraction)
    rng = random.Random(seed)
    slots = max(1, span_bytes // align_bytes)
    for _ in range(count):
        address = start + rng.randrange(slots) * align_bytes
        yield address, (write_fraction > 0.0 and rng.random() < write_fraction)


def tiled_stream(
    *,
    rows: int,
    cols: int,
    element_bytes: int,
    tile_rows: int,
    tile_cols: int,
    start: int = 0,
    passes: int = 1,
    is_write: bool = False,
) -> Iterator[tuple[int, bool]]:
    """Yield every element of a row-major rows x cols matrix, tile by tile.

    Tiles of tile_rows x tile_cols are visited in row-major order of tiles, and the
    elements inside a tile row by row (edge tiles are clipped). Element (r, c) lives at
    ``start + (r * cols + c) * element_bytes``. A one-row tile is a plain row-major sweep,
    a rows x 1 tile a column-major one.
    """
    for name, value in (("rows", rows), ("cols", cols), ("element_bytes", element_bytes)):
        _check_positive(name, value)
    _check_positive("passes", passes)
    if tile_rows <= 0 or tile_cols <= 0:
        raise ValueError(ERR_TILE.format(tile_rows=tile_rows, tile_cols=tile_cols))
    row_bytes = cols * element_bytes
    for _ in range(passes):
        for tile_row in range(0, rows, tile_rows):
            for tile_col in range(0, cols, tile_cols):
                for row in range(tile_row, min(tile_row + tile_rows, rows)):
                    base = start + row * row_bytes
                    for col in range(tile_col, min(tile_col + tile_cols, cols)):
                        yield base + col * element_bytes, is_write


def trace_stream(records: Iterable[Sequence[object]]) -> Iterator[tuple[int, bool]]:
    """Yield a recorded trace of (address, is_write) pairs, checking each address."""
    for record in records:
        address, is_write = record[0], record[1]
        if isinstance(address, bool) or not isinstance(address, int) or address < 0:
            raise ValueError(ERR_ADDRESS.format(value=address))
        yield address, bool(is_write)
