"""Timing profiles per architecture (simulator/models/architectures.py) and their sources."""

from __future__ import annotations

import json
from dataclasses import fields

import pytest

from simulator.models.architectures import (
    PROFILES,
    ArchitectureProfile,
    known_compute_capabilities,
    profile_for_compute_capability,
    profile_named,
)
from simulator.models.occupancy import ARCHITECTURES_PATH

FAMILIES = ("Maxwell", "Pascal", "Volta", "Turing", "Ampere", "Ada", "Hopper", "Blackwell")
VALUE_FIELDS = [
    f.name
    for f in fields(ArchitectureProfile)
    if f.name not in {"family", "compute_capabilities", "sources"}
]


def _occupancy_ccs_from_maxwell() -> list[str]:
    table = json.loads(ARCHITECTURES_PATH.read_text(encoding="utf-8"))["architectures"]
    return [cc for cc in table if float(cc) >= 5.0]


@pytest.mark.parametrize("family", FAMILIES)
def test_every_family_loads(family: str) -> None:
    profile = profile_named(family)
    assert profile.family == family
    assert PROFILES[family] is profile
    assert profile.compute_capabilities


def test_profiles_lists_exactly_the_families() -> None:
    assert tuple(PROFILES) == FAMILIES


@pytest.mark.parametrize("cc", _occupancy_ccs_from_maxwell())
def test_every_occupancy_compute_capability_from_5_0_has_a_profile(cc: str) -> None:
    profile = profile_for_compute_capability(cc)
    assert cc in profile.compute_capabilities


def test_blackwell_compute_capabilities_resolve() -> None:
    assert profile_for_compute_capability("10.0").family == "Blackwell"
    assert profile_for_compute_capability("12.0").family == "Blackwell"
    assert profile_for_compute_capability(9.0).family == "Hopper"


def test_every_value_names_a_non_empty_source() -> None:
    for cc in known_compute_capabilities():
        profile = profile_for_compute_capability(cc)
        assert set(profile.sources) == set(VALUE_FIELDS), cc
        assert all(source.strip() for source in profile.sources.values()), cc


def test_values_not_measured_for_an_architecture_say_where_they_come_from() -> None:
    blackwell = profile_named("Blackwell")
    assert "carried over" in blackwell.sources["global_load_latency"]
    assert blackwell.global_load_latency == profile_named("Hopper").global_load_latency
    ada = profile_named("Ada Lovelace")
    assert ada.family == "Ada"
    assert "Ampere" in ada.sources["dependent_issue_latency"]


def test_gp100_overrides_the_pascal_scheduler_count() -> None:
    assert profile_for_compute_capability("6.1").schedulers == 4
    gp100 = profile_for_compute_capability("6.0")
    assert gp100.schedulers == 2 and gp100.family == "Pascal"
    assert "SM6_P100" in gp100.sources["schedulers"]
    assert profile_named("Pascal").schedulers == 4


def test_scheduler_counts_match_the_occupancy_sub_partitions() -> None:
    table = json.loads(ARCHITECTURES_PATH.read_text(encoding="utf-8"))["architectures"]
    for cc in _occupancy_ccs_from_maxwell():
        expected = table[cc]["warp_allocation_granularity"]
        assert profile_for_compute_capability(cc).schedulers == expected, cc


def test_only_maxwell_and_pascal_dual_issue_and_take_6_cycles() -> None:
    for profile in PROFILES.values():
        old = profile.family in {"Maxwell", "Pascal"}
        assert profile.dual_issue is old, profile.family
        assert profile.dependent_issue_latency == (6 if old else 4), profile.family


@pytest.mark.parametrize("family", FAMILIES)
def test_values_lie_in_plausible_ranges(family: str) -> None:
    profile = profile_named(family)
    assert 200 <= profile.global_load_latency <= 1200
    assert 2 <= profile.dependent_issue_latency <= 8
    assert 100 <= profile.l2_hit_latency < profile.global_load_latency
    assert profile.schedulers in {1, 2, 4}
    assert 1e-6 <= profile.launch_overhead_s <= 50e-6
    assert 0.3 <= profile.memory_efficiency <= 1.0


@pytest.mark.parametrize("cc", ["3.5", "11.0", "sm_90", ""])
def test_unknown_compute_capability_raises_naming_it(cc: str) -> None:
    with pytest.raises(ValueError, match=f"no timing profile for compute capability {cc!r}"):
        profile_for_compute_capability(cc)


def test_unknown_family_raises_naming_it() -> None:
    with pytest.raises(ValueError, match="no timing profile for architecture family 'Kepler'"):
        profile_named("Kepler")


def test_profiles_are_frozen() -> None:
    profile = profile_named("Hopper")
    with pytest.raises(AttributeError):
        profile.schedulers = 8  # type: ignore[misc]
    with pytest.raises(TypeError):
        profile.sources["schedulers"] = "x"  # type: ignore[index]
