"""Per-architecture timing profiles for the GPU kernel (current architectures) model.

Volkov's model needs, beyond the occupancy limits of `data/architectures.json`, a few timing
values per architecture family: the dependent-issue latency of FP32 arithmetic, the latency of
a global load that misses both caches, the L2 hit latency, the warp schedulers per SM and
whether they dual-issue, the launch overhead of an empty kernel and the fraction of the
theoretical DRAM bandwidth a streaming kernel reaches. They live, each with its source, in
`data/architecture_profiles.json`; this module only reads them. A family may override a value
for one compute capability (GP100, CC 6.0, has 2 schedulers where the other Pascal parts have
4). Values not measured for an architecture are carried over from the closest one, and their
source says so.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, replace
from functools import cache
from pathlib import Path
from types import MappingProxyType
from typing import Any

from simulator.models.occupancy import (
    architecture_limits,
    normalise_compute_capability,
)
from simulator.models.occupancy import known_compute_capabilities as occupancy_ccs

PROFILES_PATH = Path(__file__).parent / "data" / "architecture_profiles.json"

ARCHITECTURE_ERRORS: dict[str, str] = {
    "unknown_cc": "no timing profile for compute capability {cc!r}; known: {known}",
    "unknown_family": "no timing profile for architecture family {family!r}; known: {known}",
    "missing_value": "architecture profile {family!r} lacks {name!r} (every value needs a source)",
}


@dataclass(frozen=True)
class ArchitectureProfile:
    """Timing values of one architecture family (or one compute capability of it).

    family: the family name, e.g. "Hopper".
    compute_capabilities: the "X.Y" compute capabilities of the family.
    dependent_issue_latency: cycles between two dependent FP32 adds.
    global_load_latency: cycles of a global load that misses L1 and L2 (DRAM/HBM), as
        measured by pointer chasing.
    l2_hit_latency: cycles of a global load that hits L2.
    schedulers: warp schedulers per SM.
    dual_issue: whether a scheduler can issue two instructions of one warp per cycle.
    launch_overhead_s: seconds taken by an empty kernel (CUDA events, back-to-back launches).
    memory_efficiency: fraction (0-1] of the theoretical DRAM bandwidth a streaming kernel
        reaches.
    sources: field name -> citation of its value.
    """

    family: str
    compute_capabilities: tuple[str, ...]
    dependent_issue_latency: int
    global_load_latency: int
    l2_hit_latency: int
    schedulers: int
    dual_issue: bool
    launch_overhead_s: float
    memory_efficiency: float
    sources: Mapping[str, str]


# The fields read from {"value": ..., "source": ...} entries, with the type each value takes.
_VALUE_FIELDS: dict[str, type] = {
    "dependent_issue_latency": int,
    "global_load_latency": int,
    "l2_hit_latency": int,
    "schedulers": int,
    "dual_issue": bool,
    "launch_overhead_s": float,
    "memory_efficiency": float,
}


def _values(family: str, entries: Mapping[str, Any], names: list[str]) -> dict[str, Any]:
    values: dict[str, Any] = {}
    sources: dict[str, str] = {}
    for name in names:
        entry = entries.get(name)
        if not isinstance(entry, Mapping) or "value" not in entry or "source" not in entry:
            raise ValueError(ARCHITECTURE_ERRORS["missing_value"].format(family=family, name=name))
        values[name] = _VALUE_FIELDS[name](entry["value"])
        sources[name] = str(entry["source"])
    values["sources"] = sources
    return values


# (profiles by family, profiles by compute capability, family by lower-case name or alias)
_Tables = tuple[dict[str, ArchitectureProfile], dict[str, ArchitectureProfile], dict[str, str]]


@cache
def _load() -> _Tables:
    """Return the profiles read from `data/architecture_profiles.json`, indexed three ways."""
    with PROFILES_PATH.open(encoding="utf-8") as handle:
        families: dict[str, Any] = json.load(handle)["families"]
    by_family: dict[str, ArchitectureProfile] = {}
    by_cc: dict[str, ArchitectureProfile] = {}
    names: dict[str, str] = {}
    for family, data in families.items():
        values = _values(family, data, list(_VALUE_FIELDS))
        sources = values.pop("sources")
        profile = ArchitectureProfile(
            family=family,
            compute_capabilities=tuple(data["compute_capabilities"]),
            sources=MappingProxyType(sources),
            **values,
        )
        by_family[family] = profile
        for alias in (family, *data.get("aliases", ())):
            names[alias.lower()] = family
        overrides: Mapping[str, Mapping[str, Any]] = data.get("overrides", {})
        for cc in profile.compute_capabilities:
            changed = overrides.get(cc, {})
            if not changed:
                by_cc[cc] = profile
                continue
            override = _values(family, changed, list(changed))
            override_sources = override.pop("sources")
            by_cc[cc] = replace(
                profile, sources=MappingProxyType({**sources, **override_sources}), **override
            )
    return by_family, by_cc, names


def _normalise_cc(compute_capability: str | float) -> str:
    if isinstance(compute_capability, float):
        return f"{compute_capability:.1f}"
    return str(compute_capability).strip()


def profile_for_compute_capability(cc: str | float) -> ArchitectureProfile:
    """Return the timing profile of compute capability `cc` ("9.0"); ValueError if unknown."""
    _, by_cc, _ = _load()
    key = _normalise_cc(cc)
    if key not in by_cc:
        known = ", ".join(sorted(by_cc, key=lambda c: tuple(int(p) for p in c.split("."))))
        raise ValueError(ARCHITECTURE_ERRORS["unknown_cc"].format(cc=cc, known=known))
    return by_cc[key]


def profile_named(family: str) -> ArchitectureProfile:
    """Return the profile of `family` ("Hopper", any case, or "Ada Lovelace"); ValueError if none."""
    by_family, _, names = _load()
    name = names.get(str(family).strip().lower())
    if name is None:
        raise ValueError(
            ARCHITECTURE_ERRORS["unknown_family"].format(family=family, known=", ".join(by_family))
        )
    return by_family[name]


def known_compute_capabilities() -> list[str]:
    """Return every compute capability with a timing profile, oldest first."""
    _, by_cc, _ = _load()
    return sorted(by_cc, key=lambda c: tuple(int(p) for p in c.split(".")))


PROFILES: Mapping[str, ArchitectureProfile] = MappingProxyType(_load()[0])


def _occupancy_families() -> dict[str, str]:
    """Return the family of each compute capability of the occupancy limits
    (`data/architectures.json`, which reaches back to Fermi, before the timing profiles)."""
    return {
        normalise_compute_capability(cc): architecture_limits(cc).architecture
        for cc in occupancy_ccs()
    }


@cache
def _families() -> tuple[dict[str, str], dict[str, str]]:
    """Return (family by compute capability, family by lower-case name or alias): the timing
    profiles' families, and the occupancy table's for the compute capabilities they lack."""
    _, by_cc, names = _load()
    families = {cc: profile.family for cc, profile in by_cc.items()}
    all_names = dict(names)
    for cc, family in _occupancy_families().items():
        canonical = names.get(family.lower(), family)
        families.setdefault(cc, canonical)
        all_names.setdefault(family.lower(), canonical)
    return families, all_names


def architecture_family(compute_capability: object) -> str | None:
    """Return the family ("Hopper") of a compute capability (9.0 or "9.0"), None when it is
    not a number or no family is known for it."""
    if isinstance(compute_capability, bool) or not isinstance(compute_capability, int | float):
        return None
    return _families()[0].get(f"{float(compute_capability):.1f}")


def family_named(name: object) -> str | None:
    """Return the family a name or alias stands for ("ada lovelace" -> "Ada"), None if none."""
    if not isinstance(name, str):
        return None
    return _families()[1].get(name.strip().lower())


def known_families() -> list[str]:
    """Return every architecture family, oldest first."""
    families = _families()[0]
    ordered = sorted(families, key=lambda c: tuple(int(p) for p in c.split(".")))
    return list(dict.fromkeys(families[cc] for cc in ordered))
