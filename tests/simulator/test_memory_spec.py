"""Memory nodes in system snapshots: the attribute and path rules and their messages."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest

from simulator.errors import SnapshotError
from simulator.memory_spec import attribute_errors, block_of, fabric_hops
from simulator.snapshot import load_snapshot

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "m2s_cgm_memory" / "snapshot.json"


def example() -> dict[str, Any]:
    return json.loads(EXAMPLE.read_text())


def node(snapshot: dict[str, Any], node_id: str) -> dict[str, Any]:
    return next(item for item in snapshot["nodes"] if item["id"] == node_id)


def index(snapshot: dict[str, Any], node_id: str) -> int:
    return next(i for i, item in enumerate(snapshot["nodes"]) if item["id"] == node_id)


def errors_of(snapshot: dict[str, Any]) -> dict[str, list[str]]:
    with pytest.raises(SnapshotError) as caught:
        load_snapshot(snapshot)
    return caught.value.errors


def test_the_example_loads_with_its_memory_fields_and_round_trips() -> None:
    system = load_snapshot(example())
    assert system.nodes["cpu"].next == "cpu_l1"
    assert system.nodes["cpu_l2"].via == "ring"
    assert system.nodes["llc"].coherence == "mesi"
    assert system.nodes["ring"].topology == "ring"
    assert load_snapshot(system.to_dict()) == system


CACHE = {"size": 32768, "ways": 2, "lineSize": 64, "latencyCycles": 1, "clock": 4000}


@pytest.mark.parametrize(
    ("change", "field", "fragment"),
    [
        ({"lineSize": 65536}, "lineSize", "larger than the cache"),
        ({"ways": 3}, "ways", "whole number of sets"),
        ({"lineSize": 48}, "lineSize", "power of two"),
        ({"ways": 1024}, "ways", "exceeds the lines"),
        ({"size": 0}, "size", "greater than 0"),
        ({"latencyCycles": -1}, "latencyCycles", "0 or more"),
        ({"writeBack": 2}, "writeBack", "write-through"),
        ({"ways": 2.5}, "ways", "whole number"),
    ],
)
def test_bad_cache_geometry_is_named_by_its_attribute(
    change: dict[str, float], field: str, fragment: str
) -> None:
    errors = attribute_errors("CACHE", {**CACHE, **change})
    assert field in errors
    assert fragment in errors[field][0]


def test_a_cache_without_a_required_attribute_says_which() -> None:
    errors = attribute_errors("CACHE", {key: v for key, v in CACHE.items() if key != "clock"})
    assert errors == {"clock": ["A CACHE record needs the attribute 'clock' (clock in MHz)."]}


def test_snapshot_load_names_the_hardware_attribute() -> None:
    snapshot = example()
    snapshot["hardware"]["cpu_l1"]["attributes"]["ways"] = 3
    errors = errors_of(snapshot)
    assert "hardware.cpu_l1.attributes.ways" in errors


@pytest.mark.parametrize(
    ("edit", "path", "fragment"),
    [
        (lambda s: node(s, "cpu").update(next="nowhere"), "cpu.next", "Unknown node 'nowhere'"),
        (lambda s: node(s, "cpu").update(next="chip"), "cpu.next", "is a group"),
        (lambda s: node(s, "cpu").update(next="ring"), "cpu.next", "is a FABRIC"),
        (lambda s: node(s, "cpu_l2").update(via="dram"), "cpu_l2.via", "is a MEMORY"),
        (lambda s: node(s, "llc").pop("next"), "llc.next", "no next level"),
        (lambda s: node(s, "llc").update(next="cpu_l1"), "llc.next", "loops"),
        (lambda s: node(s, "cpu_l1").update(count=3), "cpu.next", "one count must divide"),
        (lambda s: node(s, "llc").update(count=2), "llc.coherence", "is one cache"),
        (lambda s: node(s, "cpu_l1").update(coherence="msi"), "cpu_l1.coherence", "Unknown"),
        (lambda s: node(s, "cpu").update(coherence="mesi"), "cpu.coherence", "Only a CACHE"),
        (lambda s: node(s, "ring").update(topology="torus"), "ring.topology", "Unknown topology"),
        (lambda s: node(s, "dram").update(next="llc"), "dram.next", "Only CPU, GPU and CACHE"),
        (
            lambda s: node(s, "gpu_l2").update(count=1, coherence="mesi"),
            "llc.coherence",
            "two coherence directories",
        ),
        (lambda s: node(s, "gpu_l2").update(count=16), "gpu_l1.next", "with the attribute slices"),
    ],
)
def test_bad_memory_paths_are_refused_naming_the_field(edit: Any, path: str, fragment: str) -> None:
    snapshot = example()
    edit(snapshot)
    node_id, field = path.split(".")
    errors = errors_of(snapshot)
    key = f"nodes[{index(snapshot, node_id)}].{field}"
    assert key in errors, errors
    assert any(fragment in message for message in errors[key]), errors[key]


def test_line_sizes_must_agree_along_a_path() -> None:
    snapshot = example()
    snapshot["hardware"]["cpu_l2"]["attributes"].update(lineSize=128, size=262144)
    errors = errors_of(snapshot)
    assert any(
        "Line sizes differ" in m for m in errors[f"nodes[{index(snapshot, 'cpu_l2')}].hardware"]
    )


def test_memory_on_a_path_needs_latency_and_bandwidth() -> None:
    snapshot = example()
    del snapshot["hardware"]["dram"]["attributes"]["latency"]
    errors = errors_of(snapshot)
    messages = errors[f"nodes[{index(snapshot, 'dram')}].hardware"]
    assert any("latency" in m for m in messages)


def test_memory_fields_on_a_group_are_refused() -> None:
    snapshot = copy.deepcopy(example())
    node(snapshot, "chip")["next"] = "dram"
    assert f"nodes[{index(snapshot, 'chip')}].next" in errors_of(snapshot)


def test_instances_map_block_wise() -> None:
    assert list(block_of(0, 1, 8)) == list(range(8))  # a GPU over its per-CU L1s
    assert list(block_of(5, 8, 2)) == [1]  # four CUs share an L2
    assert list(block_of(3, 8, 8)) == [3]  # private


def test_fabric_hops_follow_the_topology() -> None:
    assert fabric_hops("crossbar", 8, 0, 5) == 1
    assert fabric_hops("ring", 8, 0, 5) == 3  # the other way round is shorter
    assert fabric_hops("ring", 8, 1, 3) == 2
    assert fabric_hops("mesh", 9, 0, 8) == 4  # corner to corner of a 3 x 3 grid


@pytest.mark.parametrize(
    ("edit", "path", "message"),
    [
        (
            lambda s: node(s, "cpu").update(next="chip"),
            "cpu.next",
            "'Heterogeneous processor' is a group; the next memory level is a CACHE or MEMORY node.",
        ),
        (
            lambda s: node(s, "cpu_l2").update(via="dram"),
            "cpu_l2.via",
            "via names a FABRIC node; 'DRAM' is a MEMORY.",
        ),
        (
            lambda s: node(s, "llc").update(next="cpu_l1"),
            "llc.next",
            "CPU L1D -> CPU L2 -> Shared L3 -> CPU L1D",
        ),
        (lambda s: node(s, "llc").pop("next"), "llc.next", "ends at cache 'Shared L3'"),
    ],
)
def test_memory_path_messages_name_nodes_by_their_names(edit: Any, path: str, message: str) -> None:
    snapshot = example()
    edit(snapshot)
    node_id, field = path.split(".")
    messages = errors_of(snapshot)[f"nodes[{index(snapshot, node_id)}].{field}"]
    assert any(message in m for m in messages), messages
    assert not any(f"'{node_id}'" in m for m in messages), messages


def test_a_caches_geometry_is_checked_with_its_other_errors() -> None:
    values = {key: v for key, v in CACHE.items() if key != "clock"}
    errors = attribute_errors("CACHE", {**values, "ways": 3, "slices": 0})
    assert errors["clock"] == ["A CACHE record needs the attribute 'clock' (clock in MHz)."]
    assert "whole number of sets" in errors["ways"][0]
    assert "slices" in errors
