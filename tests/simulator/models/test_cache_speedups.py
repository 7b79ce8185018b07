"""The cache simulator's C core (simulator/_cachesim.c) against its Python reference.

`CacheHierarchy` runs on the C core when it is built; `PythonCacheHierarchy` always runs the
pure-Python reference. Seeded random streams over small sets, where evictions,
back-invalidations and dirty merges happen all the time, must give both the same served
levels, counters and contents. The C-against-Python tests skip when the C core is not in use,
except under PARASIM_REQUIRE_SPEEDUPS=1 (CI), where its absence fails them.
"""

from __future__ import annotations

import os
import random
import re
import subprocess
import sys
from array import array

import pytest

from simulator.models.cache import (
    ERR_ADDRESS,
    ERR_ARRAY,
    ERR_ARRAY_LENGTHS,
    I7_4790K,
    CacheHierarchy,
    CacheHierarchyConfig,
    CacheLevelConfig,
    PythonCacheHierarchy,
    cachesim,
    random_stream,
    strided_stream,
    tiled_stream,
)

LINE = 16

# (sets, ways) per level, innermost first: 1 to 4 levels, 1 to 16 ways, sets that are and are
# not powers of two, outer levels as small as inner ones (inclusion evicts hot inner lines).
GEOMETRIES = {
    "1-direct-mapped": [(1, 1)],
    "1-4x2": [(4, 2)],
    "1-3x5": [(3, 5)],
    "2-equal": [(1, 2), (1, 2)],
    "2-4x1-2x4": [(4, 1), (2, 4)],
    "2-3x2-5x3": [(3, 2), (5, 3)],
    "3-2x2-4x4-8x16": [(2, 2), (4, 4), (8, 16)],
    "3-1x1-2x3-3x7": [(1, 1), (2, 3), (3, 7)],
    "3-outer-smaller": [(4, 4), (2, 4), (1, 8)],
    "4-1x2-2x2-2x4-4x8": [(1, 2), (2, 2), (2, 4), (4, 8)],
    "4-2x1-3x2-5x4-7x16": [(2, 1), (3, 2), (5, 4), (7, 16)],
    "4-16-ways": [(1, 16), (2, 16), (3, 16), (4, 16)],
}
WRITE_FRACTIONS = [0.0, 0.3, 1.0]


def _config(levels: list[tuple[int, int]]) -> CacheHierarchyConfig:
    return CacheHierarchyConfig(
        levels=tuple(
            CacheLevelConfig(f"L{index + 1}", sets, ways, LINE, index + 1)
            for index, (sets, ways) in enumerate(levels)
        ),
        memory_latency_cycles=50,
    )


def _stream(
    config: CacheHierarchyConfig, write_fraction: float, seed: int, count: int = 3000
) -> list[tuple[int, bool]]:
    """Return (address, is_write) pairs in phases of 200: each phase reuses a few hot lines
    (as many as the innermost level holds) 80 % of the time, else touches any line of three
    times the outermost capacity; hot lines sit in L1 while outer levels churn, so outer
    evictions back-invalidate them, often dirty."""
    rng = random.Random(seed)
    inner, outer = config.levels[0], config.levels[-1]
    span_lines = 3 * outer.sets * outer.ways
    pairs = []
    hot: list[int] = []
    for index in range(count):
        if index % 200 == 0:
            hot = [rng.randrange(span_lines) for _ in range(inner.sets * inner.ways)]
        line = rng.choice(hot) if rng.random() < 0.8 else rng.randrange(span_lines)
        pairs.append((line * LINE + rng.randrange(LINE), rng.random() < write_fraction))
    return pairs


class _MergeCounting(PythonCacheHierarchy):
    """The reference, counting back-invalidated inner copies that were dirty (merged)."""

    merges = 0

    def _evict(self, index: int, victim: int, dirty: bool) -> None:
        for inner in range(index):
            sets, count, _ = self._geometry[inner]
            self.merges += sets[victim % count].get(victim, False)
        super()._evict(index, victim, dirty)


def _state(cache: CacheHierarchy | PythonCacheHierarchy, addresses: list[int]):
    """Return every counter and, for each touched line and level, (present, dirty)."""
    lines = sorted({address // LINE * LINE for address in addresses})
    depth = len(cache.config.levels)
    contents = [
        (cache.contains(level, line), cache.is_dirty(level, line))
        for level in range(depth)
        for line in lines
    ]
    return cache.counters(), contents


# Tests of what either core does alone run on each core there is.
CORES = [pytest.param(PythonCacheHierarchy, id="python-core")]
if cachesim is not None:
    CORES.append(pytest.param(CacheHierarchy, id="c-core"))


@pytest.fixture
def c_hierarchy() -> type[CacheHierarchy]:
    """Return CacheHierarchy when it runs on the C core; skip (or fail where required)."""
    if os.environ.get("PARASIM_PURE_PYTHON"):
        pytest.skip("PARASIM_PURE_PYTHON is set: CacheHierarchy runs the Python core")
    if cachesim is None:
        if os.environ.get("PARASIM_REQUIRE_SPEEDUPS") == "1":
            pytest.fail("simulator/_cachesim.c is not built: python -m simulator.build_speedups")
        pytest.skip("the C cache core is not built (python -m simulator.build_speedups)")
    return CacheHierarchy


def test_the_c_core_is_built_where_required() -> None:
    if os.environ.get("PARASIM_REQUIRE_SPEEDUPS") != "1":
        pytest.skip("PARASIM_REQUIRE_SPEEDUPS is not set (CI sets it)")
    if os.environ.get("PARASIM_PURE_PYTHON"):
        pytest.skip("PARASIM_PURE_PYTHON is set: CacheHierarchy runs the Python core")
    assert cachesim is not None, (
        "simulator/_cachesim.c is not built: python -m simulator.build_speedups"
    )
    assert CacheHierarchy.__mro__[2] is cachesim.Hierarchy


def test_parasim_pure_python_turns_the_c_core_off() -> None:
    code = (
        "from simulator.models import cache; "
        "print(cache.cachesim is None, cache.CacheHierarchy.__mro__[2].__name__)"
    )
    env = {**os.environ, "PARASIM_PURE_PYTHON": "1"}
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=env, check=True
    )
    assert done.stdout.split() == ["True", "_PythonCore"]


@pytest.mark.parametrize("hierarchy", CORES)
def test_run_arrays_runs_a_trace_held_in_two_arrays(
    hierarchy: type[CacheHierarchy] | type[PythonCacheHierarchy],
) -> None:
    config = _config([(2, 2), (4, 4)])
    pairs = _stream(config, 0.3, seed=5, count=500)
    addresses = array("Q", [address for address, _ in pairs])
    expected = hierarchy(config).run(pairs)
    assert hierarchy(config).run_arrays(addresses, bytes(write for _, write in pairs)) == expected
    reads = hierarchy(config).run((address, False) for address in addresses)
    assert hierarchy(config).run_arrays(addresses) == reads
    with pytest.raises(
        ValueError, match=re.escape(ERR_ARRAY_LENGTHS.format(addresses=500, writes=2))
    ):
        hierarchy(config).run_arrays(addresses, b"\x00\x01")
    as_lists = hierarchy(config).run_arrays(list(addresses), [write for _, write in pairs])
    assert as_lists == expected
    assert hierarchy(config).run_arrays(addresses, [write for _, write in pairs]) == expected
    with pytest.raises(TypeError, match=re.escape(ERR_ARRAY.format(name="addresses", got="int"))):
        hierarchy(config).run_arrays(5)


@pytest.mark.parametrize("write_fraction", WRITE_FRACTIONS)
@pytest.mark.parametrize("geometry", GEOMETRIES.values(), ids=GEOMETRIES.keys())
def test_both_cores_serve_count_and_hold_the_same_lines(
    c_hierarchy: type[CacheHierarchy], geometry: list[tuple[int, int]], write_fraction: float
) -> None:
    config = _config(geometry)
    pairs = _stream(config, write_fraction, seed=len(geometry) * 100 + int(write_fraction * 10))
    c_cache, reference = c_hierarchy(config), _MergeCounting(config)
    c_served = [c_cache.access(address, is_write) for address, is_write in pairs]
    served = [reference.access(address, is_write) for address, is_write in pairs]
    assert c_served == served
    addresses = [address for address, _ in pairs]
    assert _state(c_cache, addresses) == _state(reference, addresses)
    assert c_cache.result() == reference.result()
    counters = reference.counters()
    assert sum(counters[0]) == len(pairs)
    # the streams exercise what the test is about
    assert sum(counters[1]) > 0, "no eviction happened"
    if len(geometry) > 1:
        assert sum(counters[3]) > 0, "no back-invalidation happened"
    if write_fraction:
        assert sum(counters[2]) > 0, "no write-back happened"
    if write_fraction and len(geometry) > 1:
        assert reference.merges > 0, "no dirty inner copy was back-invalidated"


@pytest.mark.parametrize("write_fraction", WRITE_FRACTIONS)
@pytest.mark.parametrize("geometry", GEOMETRIES.values(), ids=GEOMETRIES.keys())
def test_run_and_run_arrays_give_what_single_accesses_give(
    c_hierarchy: type[CacheHierarchy], geometry: list[tuple[int, int]], write_fraction: float
) -> None:
    config = _config(geometry)
    pairs = _stream(config, write_fraction, seed=7 + len(geometry))
    reference = PythonCacheHierarchy(config)
    for address, is_write in pairs:
        reference.access(address, is_write)
    expected = _state(reference, [address for address, _ in pairs])
    addresses = array("Q", [address for address, _ in pairs])
    writes = bytes(is_write for _, is_write in pairs)
    for hierarchy in (c_hierarchy, PythonCacheHierarchy):
        by_run = hierarchy(config)
        assert by_run.run(iter(pairs)) == reference.result()
        by_arrays = hierarchy(config)
        assert by_arrays.run_arrays(addresses, writes) == reference.result()
        assert _state(by_run, list(addresses)) == expected
        assert _state(by_arrays, list(addresses)) == expected


def test_the_i7_preset_gives_the_same_results_on_every_path(
    c_hierarchy: type[CacheHierarchy],
) -> None:
    np = pytest.importorskip("numpy")
    streams = {
        "strided": list(strided_stream(count=20_000, stride_bytes=20, passes=2, is_write=True)),
        "random": list(random_stream(count=20_000, span_bytes=8 << 20, seed=3, write_fraction=0.3)),
        "tiled": list(
            tiled_stream(rows=256, cols=256, element_bytes=8, tile_rows=16, tile_cols=16)
        ),
    }
    for pairs in streams.values():
        expected = PythonCacheHierarchy(I7_4790K).run(pairs)
        addresses = np.array([address for address, _ in pairs], dtype=np.uint64)
        writes = np.array([is_write for _, is_write in pairs], dtype=bool)
        assert c_hierarchy(I7_4790K).run(iter(pairs)) == expected
        assert c_hierarchy(I7_4790K).run_arrays(addresses, writes) == expected
        assert c_hierarchy(I7_4790K).run_arrays(addresses, writes.view(np.uint8)) == expected
        if not writes.any():
            assert c_hierarchy(I7_4790K).run_arrays(addresses) == expected


@pytest.fixture
def both(c_hierarchy: type[CacheHierarchy]) -> list[CacheHierarchy | PythonCacheHierarchy]:
    """Return a C-core and a Python-core hierarchy of two tiny levels (warm, one dirty line)."""
    config = _config([(2, 2), (2, 4)])
    caches: list[CacheHierarchy | PythonCacheHierarchy] = [
        c_hierarchy(config),
        PythonCacheHierarchy(config),
    ]
    for cache in caches:
        cache.run([(0, True), (LINE, False), (5 * LINE, False)])
    return caches


def _probe(cache: CacheHierarchy | PythonCacheHierarchy) -> list[int]:
    """Return the levels serving a sweep over lines 0..11 twice (it shows the LRU order)."""
    return [cache.access(line * LINE) for line in [*range(12), *range(12)]]


def _outcome(action, cache) -> tuple[object, object]:
    """Return (what `action(cache)` returned or raised, the cache's counters after)."""
    try:
        value: object = action(cache)
    except Exception as error:
        value = (type(error), str(error))
    return value, cache.counters()


@pytest.mark.parametrize("address", [-1, -(2**70), True, 1.5, "64", None])
def test_a_bad_address_raises_the_same_error_on_both_cores(
    both: list[CacheHierarchy | PythonCacheHierarchy], address: object
) -> None:
    message = re.escape(ERR_ADDRESS.format(value=address))
    for cache in both:
        with pytest.raises(ValueError, match=f"^{message}$"):
            cache.access(address)  # type: ignore[arg-type]
        # the accesses before the bad one count, in `run` as in `run_arrays`
        with pytest.raises(ValueError, match=f"^{message}$"):
            cache.run([(2 * LINE, True), (address, False), (3 * LINE, False)])  # type: ignore[list-item]
    c_cache, reference = both
    lines = [0, LINE, 2 * LINE, 3 * LINE]
    assert _state(c_cache, lines) == _state(reference, lines)
    assert _probe(c_cache) == _probe(reference)


def test_a_negative_signed_array_item_raises_after_the_accesses_before_it(
    both: list[CacheHierarchy | PythonCacheHierarchy],
) -> None:
    addresses = array("q", [7 * LINE, 9 * LINE, -5, 11 * LINE])
    for cache in both:
        with pytest.raises(ValueError, match=re.escape(ERR_ADDRESS.format(value=-5))):
            cache.run_arrays(addresses, bytes([1, 0, 1, 1]))
    c_cache, reference = both
    lines = [line * LINE for line in (0, 1, 5, 7, 9, 11)]
    assert _state(c_cache, lines) == _state(reference, lines)
    assert reference.counters()[0][-1] == 5
    assert _probe(c_cache) == _probe(reference)  # 0, 1, 5 then 7 and 9 from memory


@pytest.mark.parametrize(
    ("addresses", "writes", "error", "message"),
    [
        (
            iter([0, 16]),
            None,
            TypeError,
            ERR_ARRAY.format(name="addresses", got="list_iterator"),
        ),
        (
            [0, 16],
            [True],
            ValueError,
            ERR_ARRAY_LENGTHS.format(addresses=2, writes=1),
        ),
        (
            array("d", [0.0]),
            None,
            TypeError,
            ERR_ARRAY.format(name="addresses", got="format 'd' in 1 dimensions"),
        ),
        (
            array("Q", [0, 16]),
            7.5,
            TypeError,
            ERR_ARRAY.format(name="writes", got="float"),
        ),
        (
            array("Q", [0, 16]),
            bytes(3),
            ValueError,
            ERR_ARRAY_LENGTHS.format(addresses=2, writes=3),
        ),
        (
            memoryview(bytes(8)).cast("B", (2, 4)),
            None,
            TypeError,
            ERR_ARRAY.format(name="addresses", got="format 'B' in 2 dimensions"),
        ),
    ],
)
def test_run_arrays_rejects_what_is_not_two_integer_arrays_of_one_length(
    both: list[CacheHierarchy | PythonCacheHierarchy],
    addresses: object,
    writes: object,
    error: type,
    message: str,
) -> None:
    before = both[1].counters()
    for cache in both:
        with pytest.raises(error, match=f"^{re.escape(message)}$"):
            cache.run_arrays(addresses, writes)
        assert cache.counters() == before


def test_run_arrays_reads_strided_and_narrow_buffers_alike(
    c_hierarchy: type[CacheHierarchy],
) -> None:
    np = pytest.importorskip("numpy")
    config = _config([(2, 2), (4, 4)])
    pairs = _stream(config, 0.3, seed=11, count=400)
    wide = np.array([[address, 0] for address, _ in pairs], dtype=np.int64)[:, 0]  # strided
    narrow = np.array([address for address, _ in pairs], dtype=np.uint16)
    writes = np.array([int(is_write) * 3 for _, is_write in pairs], dtype=np.int32)
    expected = PythonCacheHierarchy(config).run(pairs)
    for hierarchy in (c_hierarchy, PythonCacheHierarchy):
        assert hierarchy(config).run_arrays(wide, writes) == expected
        assert hierarchy(config).run_arrays(narrow, writes) == expected


@pytest.mark.parametrize("item", [(1, 2, 3), [5], 7, (), "abc"])
def test_a_stream_item_that_is_not_a_pair_fails_as_unpacking_does(
    both: list[CacheHierarchy | PythonCacheHierarchy], item: object
) -> None:
    outcomes = [
        _outcome(lambda cache: cache.run([(6 * LINE, True), item]), cache) for cache in both
    ]
    assert outcomes[0] == outcomes[1]
    assert _probe(both[0]) == _probe(both[1])
    assert outcomes[0][0][0] in (TypeError, ValueError)  # type: ignore[index]


class _Unreadable:
    """An is_write flag whose truth cannot be read."""

    def __bool__(self) -> bool:
        raise RuntimeError("no truth here")


@pytest.mark.parametrize("address", [0, 6 * LINE])  # an L1 hit, a miss
def test_a_write_flag_without_truth_leaves_the_same_counts(
    both: list[CacheHierarchy | PythonCacheHierarchy], address: int
) -> None:
    for action in (
        lambda cache: cache.run([(address, _Unreadable())]),
        lambda cache: cache.access(address, _Unreadable()),
    ):
        outcomes = [_outcome(action, cache) for cache in both]
        assert outcomes[0] == outcomes[1]
    c_cache, reference = both
    assert _state(c_cache, [0, address]) == _state(reference, [0, address])
    assert _probe(c_cache) == _probe(reference)


def test_contains_and_is_dirty_index_levels_as_a_list_does(
    both: list[CacheHierarchy | PythonCacheHierarchy],
) -> None:
    for cache in both:
        assert cache.contains(-1, 0) and cache.is_dirty(-2, 0)
        assert not cache.contains(0, -LINE) and not cache.is_dirty(1, -LINE)
        assert not cache.contains(1, 2**80) and not cache.is_dirty(1, 2**80)
        with pytest.raises(IndexError, match="list index out of range"):
            cache.contains(2, 0)
        with pytest.raises(IndexError, match="list index out of range"):
            cache.is_dirty(-3, 0)
        assert cache.access(address=5 * LINE, is_write=True) == 0
        assert cache.is_dirty(0, 5 * LINE)


def test_addresses_beyond_64_bits_work_while_their_line_fits(
    both: list[CacheHierarchy | PythonCacheHierarchy],
) -> None:
    pairs = [(2**64 - 1, True), (2**64 + 3 * LINE, False), (2**64 - 1, False)]
    c_cache, reference = both
    assert [c_cache.access(*pair) for pair in pairs] == [reference.access(*pair) for pair in pairs]
    addresses = [address for address, _ in pairs]
    assert _state(c_cache, addresses) == _state(reference, addresses)
    # the one difference: the C core's line numbers are 64-bit (`_cachesim.c`, ERR_LINE_RANGE)
    with pytest.raises(OverflowError, match="64-bit line numbers"):
        c_cache.access(LINE << 64)
    assert reference.access(LINE << 64) == 2


def test_a_hierarchy_cannot_be_reinitialised_while_it_runs(
    c_hierarchy: type[CacheHierarchy],
) -> None:
    config = _config([(1, 2)])
    cache = c_hierarchy(config)

    class Reinitialising:
        def __bool__(self) -> bool:
            cache.__init__(config)  # type: ignore[misc]
            return True

    with pytest.raises(RuntimeError, match="re-initialised while it runs"):
        cache.run([(0, Reinitialising())])  # type: ignore[list-item]
    assert cache.counters()[0] == [0, 1]
    cache.__init__(config)  # type: ignore[misc]
    assert cache.counters()[0] == [0, 0]
