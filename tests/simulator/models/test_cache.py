"""Tests of the multi-level set-associative cache simulator (docs/models.md 5c)."""

from __future__ import annotations

import re

import pytest

from simulator.models.cache import (
    ERR_ADDRESS,
    ERR_LINE_SIZES,
    I7_4790K,
    M2S_CGM_GPU,
    CacheHierarchy,
    CacheHierarchyConfig,
    CacheLevelConfig,
    random_stream,
    simulate,
    strided_stream,
    tiled_stream,
    trace_stream,
)
from simulator.models.memory import hierarchy_terms

LINE = 16


def _one_level(sets: int, ways: int, *, memory_latency: float = 0.0) -> CacheHierarchyConfig:
    return CacheHierarchyConfig(
        levels=(CacheLevelConfig("L1", sets=sets, ways=ways, line_bytes=LINE, latency_cycles=1),),
        memory_latency_cycles=memory_latency,
    )


def _reads(*lines: int) -> list[tuple[int, bool]]:
    return [(line * LINE, False) for line in lines]


def test_it_replaces_the_least_recently_used_line_of_a_two_way_set() -> None:
    cache = CacheHierarchy(_one_level(sets=2, ways=2))
    # Even lines map to set 0, odd lines to set 1.
    served = [cache.access(address, write) for address, write in _reads(0, 2, 0, 4, 2, 0, 1, 1)]
    # 0 M [0]; 2 M [0 2]; 0 H [2 0]; 4 M evicts 2 [0 4]; 2 M evicts 0 [4 2];
    # 0 M evicts 4 [2 0]; 1 M; 1 H.  (0 = served by L1, 1 = memory)
    assert served == [1, 1, 0, 1, 1, 1, 1, 0]
    stats = cache.result().level("L1")
    assert (stats.accesses, stats.hits, stats.misses, stats.evictions) == (8, 2, 6, 3)
    assert [cache.contains(0, line * LINE) for line in (0, 1, 2, 4)] == [True, True, True, False]


def test_it_counts_a_write_back_for_each_dirty_line_it_evicts() -> None:
    a, b = 0, LINE
    stream = [(a, True), (b, False), (a, False), (a, True), (a, True), (b, False)]
    result = simulate(_one_level(sets=1, ways=1), stream)
    # Write A; B evicts dirty A (1); A evicts clean B; two write hits; B evicts dirty A (2).
    assert result.level("L1").writebacks == 2
    assert result.memory_writes == 2
    assert result.memory_reads == 4
    assert result.level("L1").hits == 2


def test_it_allocates_on_a_write_miss_and_marks_the_line_dirty() -> None:
    cache = CacheHierarchy(_one_level(sets=1, ways=2))
    assert cache.access(5 * LINE, is_write=True) == 1
    assert cache.is_dirty(0, 5 * LINE)
    assert cache.access(5 * LINE + 3) == 0


def _two_equal_levels() -> CacheHierarchyConfig:
    return CacheHierarchyConfig(
        levels=(
            CacheLevelConfig("L1", sets=1, ways=2, line_bytes=LINE, latency_cycles=1),
            CacheLevelConfig("L2", sets=1, ways=2, line_bytes=LINE, latency_cycles=2),
        ),
        memory_latency_cycles=10,
    )


def test_it_back_invalidates_the_inner_copy_when_the_outer_level_evicts() -> None:
    a, b, c = 0, LINE, 2 * LINE
    cache = CacheHierarchy(_two_equal_levels())
    for address in (a, b, a, c):
        cache.access(address)
    # The L1 hit on A does not refresh A in L2, so C evicts A from L2 and, by inclusion,
    # from L1 although A is L1's most recently used line.
    assert not cache.contains(0, a)
    assert not cache.contains(1, a)
    assert cache.contains(0, b) and cache.contains(0, c)
    result = cache.result()
    assert result.level("L1").back_invalidations == 1
    assert result.level("L1").evictions == 0
    assert result.level("L2").evictions == 1
    assert cache.access(a) == 2


def test_it_writes_a_dirty_inner_copy_back_to_memory_when_back_invalidated() -> None:
    a, b, c = 0, LINE, 2 * LINE
    cache = CacheHierarchy(_two_equal_levels())
    for address, write in ((a, True), (b, False), (a, True), (c, False)):
        cache.access(address, write)
    result = cache.result()
    assert result.level("L1").writebacks == 1
    assert result.level("L2").writebacks == 1
    assert result.memory_writes == 1


def test_it_writes_an_inner_dirty_victim_into_the_outer_level() -> None:
    config = CacheHierarchyConfig(
        levels=(
            CacheLevelConfig("L1", sets=1, ways=1, line_bytes=LINE, latency_cycles=1),
            CacheLevelConfig("L2", sets=1, ways=4, line_bytes=LINE, latency_cycles=2),
        )
    )
    cache = CacheHierarchy(config)
    cache.access(0, is_write=True)
    cache.access(LINE)
    assert cache.is_dirty(1, 0)
    assert not cache.contains(0, 0)
    result = cache.result()
    assert result.level("L1").writebacks == 1
    assert result.memory_writes == 0


def test_it_charges_the_latencies_of_every_level_it_probes() -> None:
    cache = CacheHierarchy(I7_4790K)
    assert cache.access(0) == 3
    assert cache.access(0) == 0
    result = cache.result()
    assert result.total_latency_cycles == (1 + 2 + 4 + 200) + 1
    assert result.mean_latency_cycles == pytest.approx(104.0)


def test_it_never_hits_on_the_first_pass_of_a_stride_longer_than_a_line() -> None:
    result = simulate(I7_4790K, strided_stream(count=4096, stride_bytes=128))
    assert all(level.hits == 0 for level in result.levels)
    assert result.memory_reads == 4096


def test_it_hits_every_time_on_the_second_pass_over_a_working_set_that_fits() -> None:
    # 16 KB touched line by line fits in the 32 KB L1.
    result = simulate(I7_4790K, strided_stream(count=256, stride_bytes=64, passes=2))
    assert result.level("L1").hits == 256
    assert result.level("L1").misses == 256
    assert result.memory_reads == 256


def test_it_hits_fifteen_of_sixteen_unit_stride_floats() -> None:
    result = simulate(I7_4790K, strided_stream(count=1 << 16, stride_bytes=4))
    assert result.level("L1").hit_ratio == pytest.approx(15 / 16)


def test_it_thrashes_a_set_when_the_stride_maps_every_line_to_it() -> None:
    # 256 sets x 64 B = 16 KB apart: all in L1 set 0, three lines over two ways.
    stream = strided_stream(count=3, stride_bytes=16384, passes=4)
    result = simulate(I7_4790K, stream)
    assert result.level("L1").hits == 0
    assert result.level("L2").hits == 9


def test_its_random_stream_is_reproducible_with_a_seed() -> None:
    first = list(random_stream(count=500, span_bytes=1 << 20, seed=7, write_fraction=0.5))
    again = list(random_stream(count=500, span_bytes=1 << 20, seed=7, write_fraction=0.5))
    other = list(random_stream(count=500, span_bytes=1 << 20, seed=8, write_fraction=0.5))
    assert first == again
    assert first != other
    assert all(address % 4 == 0 and 0 <= address < 1 << 20 for address, _ in first)
    assert 150 < sum(write for _, write in first) < 350


def test_it_hits_almost_never_on_random_accesses_over_a_huge_span() -> None:
    result = simulate(M2S_CGM_GPU, random_stream(count=20_000, span_bytes=1 << 30, seed=1))
    assert result.level("L1").hit_ratio < 0.01
    assert result.memory_reads > 19_800


def test_its_tiled_stream_visits_tiles_in_row_major_order() -> None:
    addresses = [
        address
        for address, _ in tiled_stream(rows=3, cols=4, element_bytes=1, tile_rows=2, tile_cols=2)
    ]
    assert addresses == [0, 1, 4, 5, 2, 3, 6, 7, 8, 9, 10, 11]


def test_tiling_a_column_sweep_restores_the_hit_ratio() -> None:
    # 512 x 512 floats (1 MB) exceeds the 16 KB GPU L1 and its 64 KB L2.
    def hit_ratio(tile_rows: int, tile_cols: int) -> float:
        stream = tiled_stream(
            rows=512, cols=512, element_bytes=4, tile_rows=tile_rows, tile_cols=tile_cols
        )
        return simulate(M2S_CGM_GPU, stream).level("L1").hit_ratio

    column_major = hit_ratio(512, 1)
    tiled = hit_ratio(16, 16)
    assert column_major < 0.01
    assert tiled == pytest.approx(15 / 16)


def test_it_runs_a_recorded_trace_and_rejects_a_bad_address() -> None:
    result = simulate(_one_level(sets=1, ways=1), trace_stream([(0, 0), (4, 1), [8, False]]))
    assert result.level("L1").hits == 2
    assert result.level("L1").writebacks == 0
    with pytest.raises(ValueError, match=re.escape(ERR_ADDRESS.format(value=-4))):
        list(trace_stream([(-4, False)]))
    with pytest.raises(ValueError, match=re.escape(ERR_ADDRESS.format(value=-4))):
        simulate(_one_level(sets=1, ways=1), [(-4, False)])


def test_its_i7_4790k_preset_matches_m2s_cgm() -> None:
    l1, l2, l3 = I7_4790K.levels
    assert (l1.sets, l1.ways, l1.line_bytes, l1.latency_cycles, l1.size_bytes) == (
        256,
        2,
        64,
        1,
        32 * 1024,
    )
    assert (l2.sets, l2.ways, l2.latency_cycles, l2.size_bytes) == (1024, 4, 2, 256 * 1024)
    assert (l3.sets, l3.ways, l3.latency_cycles, l3.size_bytes) == (2048, 16, 4, 2 << 20)
    assert CacheLevelConfig.from_size(
        "L1", size_bytes=32 * 1024, ways=2, line_bytes=64, latency_cycles=1
    ) == CacheLevelConfig("L1", 256, 2, 64, 1)


def test_it_rejects_levels_with_different_line_sizes() -> None:
    with pytest.raises(ValueError, match=re.escape(ERR_LINE_SIZES.format(sizes=[32, 64]))):
        CacheHierarchyConfig(
            levels=(CacheLevelConfig("L1", 1, 1, 32, 1), CacheLevelConfig("L2", 1, 1, 64, 1))
        )


def test_its_hit_ratios_feed_the_hierarchy_terms() -> None:
    result = simulate(I7_4790K, strided_stream(count=256, stride_bytes=64, passes=4))
    levels = result.as_levels({"L1": 64.0, "L2": 32.0, "L3": 16.0, "memory": 8.0})
    assert [level.name for level in levels] == ["L1", "L2", "L3", "memory"]
    assert levels[0].hit_ratio == pytest.approx(0.75)
    assert [level.latency_cycles for level in levels] == [1, 3, 7, 207]
    terms = hierarchy_terms(128.0, levels)
    assert terms.bytes_per_warp["L1"] == pytest.approx(96.0)
    assert terms.bytes_per_warp["memory"] == pytest.approx(32.0)
    # The byte-weighted latency equals the simulator's own mean latency.
    assert terms.mean_latency_cycles == pytest.approx(result.mean_latency_cycles)
