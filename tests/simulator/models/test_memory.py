"""Tests of the warp access, bank conflict and cache-level models (docs/models.md 5a, 5b)."""

from __future__ import annotations

import math
import re

import pytest

from simulator.models.memory import (
    ERR_ELEMENT_BYTES,
    ERR_HIT_RATIO,
    ERR_LAST_LEVEL,
    ERR_NO_LEVELS,
    Level,
    WarpAccess,
    hierarchy_terms,
    served_fractions,
    shared_access,
    warp_access,
)


@pytest.mark.parametrize(
    ("stride", "bytes_moved", "reissues"),
    [(1, 128, 0), (2, 256, 1), (4, 512, 3)],
)
def test_it_reproduces_the_strided_access_figures_of_000_section_4_2(
    stride: int, bytes_moved: int, reissues: int
) -> None:
    access = warp_access(element_bytes=4, stride=stride)
    assert access.bytes_moved == bytes_moved
    assert access.reissues == reissues
    assert access.transactions == reissues + 1


def test_it_caps_large_strides_at_one_segment_per_thread() -> None:
    assert warp_access(element_bytes=4, stride=32) == WarpAccess(4096, 32, 31)
    assert warp_access(element_bytes=4, stride=1000) == WarpAccess(4096, 32, 31)


def test_it_counts_a_broadcast_and_a_negative_stride_like_their_positive_twins() -> None:
    assert warp_access(element_bytes=4, stride=0) == WarpAccess(128, 1, 0)
    assert warp_access(element_bytes=4, stride=-2) == warp_access(element_bytes=4, stride=2)


def test_it_scales_traffic_with_element_size() -> None:
    assert warp_access(element_bytes=1, stride=1) == WarpAccess(128, 1, 0)
    assert warp_access(element_bytes=8, stride=1) == WarpAccess(256, 2, 1)
    assert warp_access(element_bytes=16, stride=1) == WarpAccess(512, 4, 3)


def test_it_adds_a_segment_for_a_misaligned_warp() -> None:
    assert warp_access(element_bytes=4, stride=1, offset_bytes=4) == WarpAccess(256, 2, 1)


def test_it_counts_32_byte_sectors_when_asked() -> None:
    assert warp_access(element_bytes=4, stride=1, segment_bytes=32).bytes_moved == 128
    assert warp_access(element_bytes=4, stride=2, segment_bytes=32).bytes_moved == 256
    assert warp_access(element_bytes=4, stride=8, segment_bytes=32).bytes_moved == 1024


def test_it_rejects_a_non_positive_element_size() -> None:
    with pytest.raises(ValueError, match=re.escape(ERR_ELEMENT_BYTES.format(value=0))):
        warp_access(element_bytes=0, stride=1)


@pytest.mark.parametrize(
    ("stride", "ways"),
    [(0, 1), (1, 1), (2, 2), (3, 1), (4, 4), (8, 8), (16, 16), (32, 32), (33, 1)],
)
def test_it_counts_an_n_way_bank_conflict_as_n_minus_one_reissues(stride: int, ways: int) -> None:
    access = shared_access(element_bytes=4, stride=stride)
    assert access.transactions == ways
    assert access.reissues == ways - 1


def test_it_needs_two_shared_memory_passes_for_eight_byte_elements() -> None:
    assert shared_access(element_bytes=8, stride=1) == WarpAccess(256, 2, 1)
    assert shared_access(element_bytes=1, stride=1) == WarpAccess(32, 1, 0)


def _gpu_levels(h1: float, h2: float) -> list[Level]:
    return [
        Level("L1", h1, bytes_per_cycle_per_sm=64.0, latency_cycles=30.0),
        Level("L2", h2, bytes_per_cycle_per_sm=32.0, latency_cycles=200.0),
        Level("DRAM", 1.0, bytes_per_cycle_per_sm=13.78, latency_cycles=350.0),
    ]


def test_it_splits_bytes_over_the_levels_by_hit_ratio() -> None:
    terms = hierarchy_terms(384.0, _gpu_levels(0.5, 0.5))
    # 384 B: L1 serves 192, L2 half of the other 192, DRAM the last 96.
    assert terms.bytes_per_warp == {"L1": 192.0, "L2": 96.0, "DRAM": 96.0}
    assert terms.cycles_per_warp["L1"] == pytest.approx(3.0)
    assert terms.cycles_per_warp["L2"] == pytest.approx(3.0)
    assert terms.cycles_per_warp["DRAM"] == pytest.approx(96.0 / 13.78)
    assert terms.mean_latency_cycles == pytest.approx(0.5 * 30 + 0.25 * 200 + 0.25 * 350)
    assert terms.bottleneck_cycles_per_warp == pytest.approx(96.0 / 13.78)


def test_it_falls_back_to_volkovs_dram_term_without_cache_hits() -> None:
    # saxpy2: 384 / 13.78 = 27.87 cycles (docs/models.md 1) and the 350-cycle latency of Table 4.1.
    terms = hierarchy_terms(384.0, _gpu_levels(0.0, 0.0))
    assert terms.cycles_per_warp["DRAM"] == pytest.approx(27.866, abs=1e-3)
    assert terms.cycles_per_warp["L1"] == 0.0
    assert terms.mean_latency_cycles == 350.0


def test_its_served_fractions_sum_to_one() -> None:
    fractions = served_fractions(_gpu_levels(0.37, 0.81))
    assert math.fsum(fractions.values()) == pytest.approx(1.0)
    assert fractions["L2"] == pytest.approx(0.63 * 0.81)


def test_it_rejects_a_last_level_that_does_not_serve_the_rest() -> None:
    levels = [Level("L1", 0.5, 64.0, 30.0), Level("L2", 0.5, 32.0, 200.0)]
    with pytest.raises(ValueError, match=re.escape(ERR_LAST_LEVEL.format(name="L2", value=0.5))):
        hierarchy_terms(128.0, levels)


def test_it_rejects_a_hit_ratio_outside_zero_one() -> None:
    levels = [Level("L1", 1.5, 64.0, 30.0), Level("DRAM", 1.0, 13.0, 350.0)]
    with pytest.raises(ValueError, match=re.escape(ERR_HIT_RATIO.format(name="L1", value=1.5))):
        hierarchy_terms(128.0, levels)


def test_it_rejects_an_empty_hierarchy() -> None:
    with pytest.raises(ValueError, match=ERR_NO_LEVELS):
        hierarchy_terms(128.0, [])
