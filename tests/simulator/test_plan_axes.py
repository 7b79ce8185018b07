"""Parallel-plan axes (simulator.workloads.plan_axes): `workload train --axis tp=4,8`, the
points' plans checked by the library's own rules, an impossible plan kept with its reason."""

from __future__ import annotations

import json
from typing import Any

import pytest

from simulator.cli import main
from simulator.sweep import AxisError
from simulator.workloads.config import PRESETS
from simulator.workloads.plan import ParallelPlan
from simulator.workloads.plan_axes import parse_plan_axes, plan_error_field, plan_points
from simulator.workloads.training import simulate_training

BASE = ["workload", "train", "--model", "llama3-8b", "--gpus", "8", "--gbs", "8"]


def sweep(capsys: pytest.CaptureFixture[str], *extra: str) -> list[dict[str, Any]]:
    assert main([*BASE, *extra, "--json", "-"]) == 0, capsys.readouterr().err
    return list(json.loads(capsys.readouterr().out)["points"])


def test_tp_8_against_tp_4_halves_the_memory_and_lengthens_the_step(
    capsys: pytest.CaptureFixture[str],
) -> None:
    four, eight = sweep(capsys, "--recompute", "full", "--axis", "tp=4,8")
    assert (four["point"], eight["point"]) == ({"tp": 4}, {"tp": 8})
    # one pipeline stage, no experts: every weight and activation term is split by TP
    assert eight["result"]["memory"]["total"] == pytest.approx(
        four["result"]["memory"]["total"] / 2, rel=1e-12
    )
    # the TP all-reduces of every layer over 8 GPUs instead of 4 and the thinner GEMMs
    slower, faster = eight["result"], four["result"]
    assert slower["step_time_s"] > faster["step_time_s"]
    exposed = "exposed_communication"
    assert slower["time_split_s"][exposed] > faster["time_split_s"][exposed]
    # each point is the library's own figure for that plan
    plan = ParallelPlan(gpus=8, tp=8, gbs=8, recompute="full")
    expected = simulate_training(PRESETS["llama3-8b"], plan, "dgx-h100")
    for key in ("step_time_s", "mfu", "memory", "time_split_s"):  # not the wall times
        assert slower[key] == expected[key], key


def test_an_impossible_plan_stays_in_the_sweep_with_its_field_and_reason(
    capsys: pytest.CaptureFixture[str],
) -> None:
    points = sweep(capsys, "--axis", "tp=8", "--axis", "pp=1,2", "--axis", "recompute=none,full")
    assert [p["point"] for p in points] == [
        {"tp": 8, "pp": 1, "recompute": "none"},
        {"tp": 8, "pp": 1, "recompute": "full"},
        {"tp": 8, "pp": 2, "recompute": "none"},
        {"tp": 8, "pp": 2, "recompute": "full"},
    ]
    assert "result" in points[0] and "result" in points[1]
    for point in points[2:]:
        assert point["invalid"] == {
            "field": "gpus",
            "reason": "gpus (8) must be a multiple of tp x pp x cp (16)",
        }


def test_a_plan_that_does_not_fit_is_marked_as_memory(capsys: pytest.CaptureFixture[str]) -> None:
    [point] = sweep(capsys, "--axis", "tp=1")
    assert point["invalid"]["field"] == "memory"
    assert (
        "GiB per GPU" in point["invalid"]["reason"]
        and "GPU's 80.0 GiB" in point["invalid"]["reason"]
    )


def test_the_table_lists_valid_and_invalid_points(capsys: pytest.CaptureFixture[str]) -> None:
    assert main([*BASE, "--recompute", "full", "--axis", "tp=4:8:4", "--axis", "pp=2"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].split()[:3] == ["tp", "pp", "step_time_s"]
    assert lines[1].split()[:2] == ["4", "2"] and "invalid" not in lines[1]
    assert "invalid (gpus): gpus (8) must be a multiple" in lines[2]


def test_a_dp_axis_sets_the_gpus_to_dp_x_tp_x_pp_x_cp() -> None:
    axes = parse_plan_axes({"dp": [1, 4], "tp": [2]})
    fields = [f for _, f in plan_points({"gpus": 8, "pp": 2, "cp": 1, "gbs": 8}, axes)]
    assert [(f["gpus"], f["tp"], "dp" in f) for f in fields] == [(4, 2, False), (16, 2, False)]


@pytest.mark.parametrize(
    ("axes", "field", "words"),
    [
        ({"tensor": [2]}, "axes.tensor", "Unknown plan axis 'tensor'; expected one of gpus, dp"),
        ({"tp": [2, 0]}, "axes.tp[1]", "tp is a whole number of at least 1, got 0"),
        ({"mbs": [1.5]}, "axes.mbs[0]", "got 1.5"),
        ({"recompute": ["some"]}, "axes.recompute[0]", "recompute is one of none, selective"),
        ({"dp": [1], "gpus": [8]}, "axes.dp", "dp and gpus cannot both be axes"),
        ({"pp": []}, "axes.pp", "at least one value"),
    ],
)
def test_bad_plan_axes_are_refused_naming_the_field(
    axes: dict[str, list[object]], field: str, words: str
) -> None:
    with pytest.raises(AxisError) as raised:
        parse_plan_axes(axes)
    assert raised.value.field == field
    assert words in raised.value.message


def test_the_cli_refuses_a_bad_axis_and_counts_the_cap(capsys: pytest.CaptureFixture[str]) -> None:
    assert main([*BASE, "--axis", "tp=1,x"]) == 2
    assert "--axis tp[1]: tp is a whole number of at least 1, got 'x'" in capsys.readouterr().err
    assert main([*BASE, "--axis", "tp=1:8:1", "--axis", "pp=1,2", "--max-points", "10"]) == 2
    assert "The sweep has 16 points; at most 10 are allowed." in capsys.readouterr().err


def test_a_reason_names_the_field_it_breaks() -> None:
    assert plan_error_field("layers (32) must be at least pp x vp (64 x 1)") == "pp"
    assert plan_error_field("interleaving (vp 2) needs micro-batches (3) a multiple") == "vp"
    assert plan_error_field("ep > 1 needs a mixture-of-experts model") == "ep"
    assert plan_error_field("the plan needs 9.0 GiB per GPU") == "memory"


def test_the_cli_answers_the_cheapest_gpu_and_plan_under_a_step_time_target(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """Issue 44's question on the command line: templates x plans, each plan's cost per step
    from its GPU record's rental, the feasible plans under the target and their front."""
    args = ["--recompute", "selective", "--axis", "system=dgx-h100,dgx-b200"]
    args += ["--axis", "tp=2,8", "--pareto", "step_time_s,cost_per_step_usd"]
    points = sweep(capsys, *args, "--constraint", "step_time_s <= 1e9")
    assert [p["point"] for p in points] == [
        {"system": s, "tp": t} for s in ("dgx-h100", "dgx-b200") for t in (2, 8)
    ]
    runs = [p for p in points if "result" in p]
    assert runs and all(p["feasible"] for p in runs)
    rental = {"dgx-h100": 2.69, "dgx-b200": 5.98}  # hwdb/seed/hardware.json, per GPU-hour
    for point in runs:
        result = point["result"]
        expected = 8 * result["step_time_s"] / 3600 * rental[point["point"]["system"]]
        assert result["cost_per_step_usd"] == pytest.approx(expected, rel=1e-12)
        # each template's point is the library's own figure for that plan on that system
        assert result["system"] == point["point"]["system"]
    # a target between the fastest and the slowest: only the plans under it are feasible,
    # and the cheapest of those is on the front
    times = sorted(p["result"]["step_time_s"] for p in runs)
    target = (times[0] + times[-1]) / 2
    flagged = sweep(capsys, *args, "--constraint", f"step_time_s <= {target!r}")
    under = [p for p in flagged if "result" in p and p["feasible"]]
    assert 0 < len(under) < len(runs)
    assert all(p["result"]["step_time_s"] <= target for p in under)
    cheapest = min(under, key=lambda p: p["result"]["cost_per_step_usd"])
    assert cheapest["pareto"]
    assert not any(p.get("pareto") for p in flagged if not p.get("feasible"))


def test_a_system_axis_names_the_templates() -> None:
    with pytest.raises(AxisError) as caught:
        parse_plan_axes({"system": ["dgx-h100", "dgx-z9"]})
    assert caught.value.field == "axes.system[1]"
    assert "dgx-h200" in caught.value.message


def test_no_sequence_parallel_keeps_the_activations_whole_on_every_tp_rank(
    capsys: pytest.CaptureFixture[str],
) -> None:
    args = [*BASE, "--tp", "4", "--recompute", "full", "--json", "-"]
    assert main(args) == 0
    split = json.loads(capsys.readouterr().out)
    assert main([*args, "--no-sequence-parallel"]) == 0
    whole = json.loads(capsys.readouterr().out)
    assert (split["plan"]["sequence_parallel"], whole["plan"]["sequence_parallel"]) == (True, False)
    # full recomputation keeps each layer's input: 1/4 of it a rank, or all of it
    assert whole["memory"]["activations"] == pytest.approx(4 * split["memory"]["activations"])
    assert whole["step_time_s"] > split["step_time_s"]  # the norms and residuals run whole
