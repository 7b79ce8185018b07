"""Sweep axes and points (simulator.sweep): one rule for the CLI and the web side."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from simulator.cli.sweep import expand_values
from simulator.sweep import (
    RANGE_MESSAGES,
    axis_values,
    range_count,
    range_error,
    range_values,
    swap_hardware,
    swap_model,
    sweep_points,
)
from webapp.studio.validation import axis_size
from webapp.studio.validation import axis_values as web_axis_values

# (CLI text, REST axis): the same axis written both ways.
SAME_AXES = [
    ("0:1:0.1", {"start": 0, "stop": 1, "step": 0.1}),
    ("0.1:0.3:0.1", {"start": 0.1, "stop": 0.3, "step": 0.1}),
    ("0:0.7:0.07", {"start": 0, "stop": 0.7, "step": 0.07}),
    ("1.5:3:0.5", {"start": 1.5, "stop": 3, "step": 0.5}),
    ("32:128:32", {"start": 32, "stop": 128, "step": 32}),
    ("1:10:4", {"start": 1, "stop": 10, "step": 4}),
    ("1e-3:5e-3:1e-3", {"start": 1e-3, "stop": 5e-3, "step": 1e-3}),
    ("2:2:1", {"start": 2, "stop": 2, "step": 1}),
]


@pytest.mark.parametrize(("text", "axis"), SAME_AXES)
def test_the_cli_and_the_web_validation_give_the_same_points(
    text: str, axis: dict[str, Any]
) -> None:
    cli = expand_values(text)
    web = web_axis_values(axis)

    assert cli == web
    assert [type(value) for value in cli] == [type(value) for value in web]
    assert len(web) == axis_size(axis, field="spec.variables.x")


def test_float_steps_are_rounded_and_reach_the_inclusive_end() -> None:
    assert range_values(0.1, 0.3, 0.1) == [0.1, 0.2, 0.3]
    assert range_values(0, 1, 0.1)[-1] == 1.0
    assert range_values(0, 1, 0.1)[3] == 0.3  # not 0.30000000000000004
    assert range_values(0, 0.95, 0.1)[-1] == 0.9  # a stop the steps miss is not reached


def test_integer_ranges_stay_exact_integers() -> None:
    big = 10**20
    assert range_values(big, big + 4, 2) == [big, big + 2, big + 4]
    assert range_count(0, 10**400, 10**399) == 11  # beyond the float range: counted exactly


def test_a_last_step_within_the_tolerance_lands_on_the_stop_not_beyond() -> None:
    assert range_values(0, 2.9999999, 1) == [0.0, 1.0, 2.0, 2.9999999]
    assert web_axis_values({"start": 0, "stop": 2.9999999, "step": 1})[-1] == 2.9999999


@pytest.mark.parametrize(
    ("start", "stop", "step", "fault"),
    [
        (1, 5, 0, ("step", RANGE_MESSAGES["step"])),
        (5, 1, 1, ("stop", RANGE_MESSAGES["order"])),
        (1, float("inf"), 1, ("stop", RANGE_MESSAGES["number"])),
        (True, 5, 1, ("start", RANGE_MESSAGES["number"])),
        ("1", 5, 1, ("start", RANGE_MESSAGES["number"])),
        (1, 5, 1, None),
    ],
)
def test_one_range_check_for_the_cli_and_the_web(
    start: object, stop: object, step: object, fault: tuple[str, str] | None
) -> None:
    assert range_error(start, stop, step) == fault


def test_a_stop_below_the_start_gives_no_values() -> None:
    assert range_values(5, 1, 1) == []


def test_axis_values_takes_lists_ranges_and_single_values() -> None:
    assert axis_values([1, "a", True]) == [1, "a", True]
    assert axis_values({"start": 1, "stop": 3, "step": 1}) == [1, 2, 3]
    assert axis_values(7) == [7]


def test_points_are_the_product_with_the_last_axis_varying_fastest() -> None:
    assert sweep_points({"a": [1, 2], "b": ["x", "y"]}) == [
        {"a": 1, "b": "x"},
        {"a": 1, "b": "y"},
        {"a": 2, "b": "x"},
        {"a": 2, "b": "y"},
    ]
    assert sweep_points({}) == [{}]


def test_a_hardware_swap_copies_the_snapshot_and_points_the_node_at_the_record() -> None:
    snapshot = {
        "hardware": {"old": {"type": "GPU", "name": "A", "attributes": {"SMs": 13}}},
        "nodes": [{"id": "gpu0", "hardware": "old"}, {"id": "cpu0", "hardware": "old"}],
    }
    before = copy.deepcopy(snapshot)
    record = {"type": "GPU", "name": "B", "attributes": {"SMs": 16}}

    variant = swap_hardware(snapshot, "gpu0", record, key="hw-7")

    assert snapshot == before
    assert variant["hardware"]["hw-7"] == record
    assert [node["hardware"] for node in variant["nodes"]] == ["hw-7", "old"]
    assert variant["hardware"]["hw-7"] is not record


def test_a_node_named_after_its_hardware_takes_the_swapped_in_hardwares_name() -> None:
    snapshot = {
        "hardware": {"old": {"type": "GPU", "name": "GeForce GTX 970", "attributes": {}}},
        "nodes": [
            {"id": "gpu0", "name": "GeForce GTX 970", "hardware": "old"},
            {"id": "gpu1", "name": "Accelerator", "hardware": "old"},
            {"id": "gpu2", "hardware": "old"},
        ],
    }
    record = {"type": "GPU", "name": "H100 SXM5 80GB", "attributes": {}}

    names = [
        next(
            n.get("name")
            for n in swap_hardware(snapshot, node, record, key="k")["nodes"]
            if n["id"] == node
        )
        for node in ("gpu0", "gpu1", "gpu2")
    ]

    assert names == ["H100 SXM5 80GB", "Accelerator", "H100 SXM5 80GB"]
    assert snapshot["nodes"][0]["name"] == "GeForce GTX 970"


def test_a_model_swap_points_only_that_node_at_the_new_model() -> None:
    snapshot = {
        "hardware": {"g": {"type": "GPU", "name": "A", "attributes": {}}},
        "models": {"m": {"name": "Volkov GPU", "source": "x"}},
        "nodes": [{"id": "gpu0", "hardware": "g", "model": "m"}, {"id": "gpu1", "model": "m"}],
    }
    before = copy.deepcopy(snapshot)
    record = {"name": "GPU kernel (current architectures)", "source": "y"}

    variant = swap_model(snapshot, "gpu0", record, key="model-3")

    assert snapshot == before
    assert variant["models"] == {"m": before["models"]["m"], "model-3": record}
    assert [node["model"] for node in variant["nodes"]] == ["model-3", "m"]
