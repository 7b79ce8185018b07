"""Sweep axes and points (simulator.sweep): one rule for the CLI and the web side."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import pytest

from simulator.cli.sweep import expand_values
from simulator.sweep import (
    MAX_POINTS,
    RANGE_MESSAGES,
    AxisError,
    apply_point,
    axis_values,
    parse_axes,
    range_count,
    range_error,
    range_values,
    size_error,
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


# --- axes over anything (issue 44.1): variables, attributes of a node or a type, label counts


def _two_gpu_snapshot() -> dict[str, Any]:
    """A host and two GPU nodes sharing one record, and a link (a small made-up system)."""
    return {
        "name": "two GPUs",
        "hardware": {
            "cpu": {"type": "CPU", "name": "Host", "attributes": {"cores": 8}},
            "gpu": {
                "type": "GPU",
                "name": "GeForce GTX 970",
                "attributes": {"SMs": 13, "SMCoreClock": 1253, "memoryBandwidth": 224e9},
            },
            "link": {"type": "NETWORK", "name": "PCIe", "attributes": {"bandwidth": 15.8e9}},
        },
        "models": {},
        "nodes": [
            {"id": "cpu0", "name": "CPU", "hardware": "cpu", "count": 1, "labels": {"CPU": 1}},
            {"id": "bus0", "name": "PCIe", "hardware": "link", "count": 1, "labels": {}},
            {"id": "gpu0", "name": "GPU", "hardware": "gpu", "count": 1, "labels": {"GPU": 2}},
            {"id": "gpu1", "name": "GPU", "hardware": "gpu", "count": 1, "labels": {"X": 1}},
        ],
        "edges": [["cpu0", "bus0"], ["bus0", "gpu0"], ["bus0", "gpu1"]],
    }


def test_axis_names_say_what_they_vary() -> None:
    snapshot = _two_gpu_snapshot()
    axes = parse_axes(
        {
            "N": [1, 2],
            "gpu0.memoryBandwidth": [200e9],
            "GPU.SMCoreClock": [1000, 1500],
            "labels.GPU": [1, 8],
        },
        snapshot,
        declared=["N"],
    )
    assert [(a.kind, a.target, a.key, a.nodes) for a in axes] == [
        ("variable", "N", "", ()),
        ("attribute", "gpu0", "memoryBandwidth", ("gpu0",)),
        ("attribute", "GPU", "SMCoreClock", ("gpu0", "gpu1")),
        ("count", "GPU", "", ("gpu0",)),
    ]


def test_a_node_attribute_is_set_on_the_nodes_own_copy_of_a_shared_record() -> None:
    snapshot = _two_gpu_snapshot()
    before = copy.deepcopy(snapshot)
    axes = parse_axes({"gpu0.memoryBandwidth": [300e9]}, snapshot)
    variant, labels, variables = apply_point(
        snapshot, {"GPU": 1}, axes, {"gpu0.memoryBandwidth": 300e9}
    )
    nodes = {n["id"]: n for n in variant["nodes"]}
    assert variant["hardware"][nodes["gpu0"]["hardware"]]["attributes"]["memoryBandwidth"] == 300e9
    # gpu1 shares the record and is not on the axis: it keeps the record's value
    assert variant["hardware"][nodes["gpu1"]["hardware"]]["attributes"]["memoryBandwidth"] == 224e9
    assert nodes["gpu0"]["hardware"] != nodes["gpu1"]["hardware"]
    assert (labels, variables) == ({"GPU": 1}, {})
    assert snapshot == before  # the given snapshot is never changed


def test_a_type_attribute_sets_every_node_of_the_type_and_a_node_axis_wins() -> None:
    snapshot = _two_gpu_snapshot()
    point = {"gpu1.SMCoreClock": 900, "GPU.SMCoreClock": 1500}
    axes = parse_axes({name: [value] for name, value in point.items()}, snapshot)
    variant, _, _ = apply_point(snapshot, {"GPU": 1}, axes, point)
    clock = {
        n["id"]: variant["hardware"][n["hardware"]]["attributes"]["SMCoreClock"]
        for n in variant["nodes"]
        if n["id"].startswith("gpu")
    }
    assert clock == {"gpu0": 1500, "gpu1": 900}


def test_a_label_count_sets_the_processes_and_the_node_instances_together() -> None:
    snapshot = _two_gpu_snapshot()
    axes = parse_axes({"labels.GPU": [1, 7, 1024]}, snapshot)
    counts = []
    for value in (1, 7, 1024):
        variant, labels, _ = apply_point(
            snapshot, {"CPU": 1, "GPU": 1}, axes, {"labels.GPU": value}
        )
        gpu0 = next(n for n in variant["nodes"] if n["id"] == "gpu0")
        counts.append((labels["GPU"], gpu0["count"], labels["CPU"]))
    # gpu0 carries 2 GPU processes per instance: ceil(n / 2) instances
    assert counts == [(1, 1, 1), (7, 4, 1), (1024, 512, 1)]


def test_a_scaling_study_runs_from_1_to_1024_processes() -> None:
    from simulator.placement import place_processes
    from simulator.snapshot import load_snapshot

    snapshot = _two_gpu_snapshot()
    axes = parse_axes({"labels.GPU": [1, 2, 4, 1024]}, snapshot)
    for value in (1, 2, 4, 1024):
        variant, labels, _ = apply_point(snapshot, {"GPU": 1}, axes, {"labels.GPU": value})
        slots = place_processes(load_snapshot(variant), labels)
        assert len(slots) == value


@pytest.mark.parametrize(
    ("axes", "field", "words"),
    [
        ({"gpu9.SMs": [1]}, "axes.gpu9.SMs", "'gpu9' is neither a node nor a hardware type"),
        ({"gpu0.HBMBandwidth": [1]}, "axes.gpu0.HBMBandwidth", "no attribute 'HBMBandwidth'"),
        ({"GPU.SMs": [13, -1]}, "axes.GPU.SMs[1]", "SMs must be greater than 0"),
        ({"GPU.SMs": [13.5]}, "axes.GPU.SMs[0]", "SMs is a count"),
        ({"GPU.SMs": ["many"]}, "axes.GPU.SMs[0]", "Expected a finite number for SMs"),
        ({"labels.TPU": [1]}, "axes.labels.TPU", "No node of the system carries label 'TPU'"),
        ({"labels.GPU": [0]}, "axes.labels.GPU[0]", "at least 1"),
        ({"labels.GPU": [2.5]}, "axes.labels.GPU[0]", "whole number"),
        ({"M": [1]}, "axes.M", "Unknown variable 'M'; the application model declares: N"),
        ({"a-b": [1]}, "axes.a-b", "Unknown axis 'a-b'"),
    ],
)
def test_bad_axes_are_refused_naming_the_field(
    axes: dict[str, list[object]], field: str, words: str
) -> None:
    with pytest.raises(AxisError) as raised:
        parse_axes(axes, _two_gpu_snapshot(), declared=["N"])
    assert raised.value.field == field
    assert words in raised.value.message


def test_a_label_on_several_nodes_cannot_be_a_count_axis() -> None:
    snapshot = _two_gpu_snapshot()
    snapshot["nodes"][3]["labels"] = {"GPU": 1}
    with pytest.raises(AxisError, match="carried by 2 nodes"):
        parse_axes({"labels.GPU": [1]}, snapshot)


def test_the_point_cap_is_named_in_its_message() -> None:
    assert size_error(MAX_POINTS, MAX_POINTS) is None
    assert size_error(MAX_POINTS + 1, MAX_POINTS) == (
        f"The sweep has {MAX_POINTS + 1} points; at most {MAX_POINTS} are allowed."
    )


MERPSYS = "examples/merpsys_gtx970"
SAXPY_VARS = ["--var", "N=1000000", "--var", "blockSz=256", "--var", "computeIntensity=1"]


def _cli(*extra: str) -> tuple[int, str, str]:
    import io

    from simulator.cli import main

    out, err = io.StringIO(), io.StringIO()
    argv = ["sweep", "--system", f"{MERPSYS}/snapshot.json", "--app", f"{MERPSYS}/app.py"]
    argv += ["--labels", "CPU=1,GPU=1", *SAXPY_VARS, "--no-sandbox", "--jobs", "1", *extra]
    status = main(argv, stdout=out, stderr=err)
    return status, out.getvalue(), err.getvalue()


def test_the_cli_sweeps_a_hardware_attribute_without_a_record_per_point() -> None:
    status, out, err = _cli("--var", "occupancy=32", "--axis", "GPU.SMCoreClock=626.5,1253")
    assert status == 0, err
    rows = [line.split() for line in out.splitlines()[1:]]
    assert [row[4] for row in rows] == ["626.5", "1253"]
    times = [float(row[5]) for row in rows]
    assert times[0] > times[1]  # half the clock: a slower kernel


def test_the_cli_refuses_a_bad_axis_naming_it() -> None:
    status, _, err = _cli("--var", "occupancy=32", "--axis", "gpu0.HBMBandwidth=1,2")
    assert status == 2
    assert "--axis gpu0.HBMBandwidth: 'GeForce GTX 970' (node 'gpu0') has no attribute" in err


def test_the_cli_refuses_more_points_than_its_cap_showing_it() -> None:
    status, _, err = _cli(
        "--var", "occupancy=1:64:1", "--axis", "labels.GPU=1,2", "--max-points", "100"
    )
    assert status == 2
    assert "The sweep has 128 points; at most 100 are allowed." in err


def test_the_cli_flags_the_pareto_front_and_feasible_points_by_the_web_sides_rule(
    tmp_path: Any,
) -> None:
    import json

    snapshot = json.loads(Path(f"{MERPSYS}/snapshot.json").read_text())
    # made-up prices for the check: the GPU rented by the hour, the link and host free
    snapshot["hardware"]["gtx970"]["attributes"]["hourlyRental"] = 3600.0
    for key in ("host_cpu", "pcie3_x16"):
        snapshot["hardware"][key]["attributes"]["hourlyRental"] = 0.0
    system = tmp_path / "priced.json"
    system.write_text(json.dumps(snapshot))
    import io

    from simulator.cli import main

    out, err = io.StringIO(), io.StringIO()
    argv = ["sweep", "--system", str(system), "--app", f"{MERPSYS}/app.py"]
    argv += ["--labels", "CPU=1,GPU=1", *SAXPY_VARS, "--var", "occupancy=8,32"]
    argv += ["--axis", "GPU.SMCoreClock=626.5,1253", "--no-sandbox", "--jobs", "1"]
    argv += ["--pareto", "overall_time_s,cost_usd", "--constraint", "GPU.SMCoreClock >= 1000"]
    argv += ["--json", str(tmp_path / "out.json")]
    assert main(argv, stdout=out, stderr=err) == 0, err.getvalue()
    header = out.getvalue().splitlines()[0]
    assert header.split()[-3:] == ["cost_usd", "feasible", "pareto"]
    runs = json.loads((tmp_path / "out.json").read_text())["runs"]
    assert [run["feasible"] for run in runs] == [False, True, False, True]
    for run in runs:  # 1 per second of the GPU: the cost is the run's time
        assert run["result"]["cost"]["total"] == pytest.approx(run["result"]["overall_time_s"])
    rows = [
        {"time": r["result"]["overall_time_s"], "cost": r["result"]["cost"]["total"]} for r in runs
    ]
    feasible = [row for row, run in zip(rows, runs, strict=True) if run["feasible"]]
    for row, run in zip(rows, runs, strict=True):
        beaten = any(
            o["time"] <= row["time"] and o["cost"] <= row["cost"] and o != row for o in feasible
        )
        assert run["pareto"] == (run["feasible"] and not beaten)

    status, _, message = _cli("--var", "occupancy=32", "--pareto", "overall_time_s,speed")
    assert status == 2
    assert "--pareto/--constraint: Unknown metric 'speed'" in message
