"""`python -m simulator sweep` and `study` over a training workload's plans (`--workload`,
simulator.cli.workload_points): each point is the full simulation the web side's plan sweep
runs, its figures the step's; a plan that cannot run is kept with its field and reason; bad
specs and axes are refused naming the field."""

from __future__ import annotations

import io
import json

import pytest

from simulator.cli import main
from simulator.workloads.cli import step_cost
from simulator.workloads.config import PRESETS
from simulator.workloads.plan import ParallelPlan
from simulator.workloads.training import simulate_training

SPEC = json.dumps({"model": "gpt3-5b", "gbs": 16, "gpus": 8})


def cli(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    status = main(list(argv), stdout=out, stderr=err)
    return status, out.getvalue(), err.getvalue()


def test_a_workload_sweep_runs_each_plan_and_keeps_the_impossible_ones_with_their_reason() -> None:
    status, out, err = cli(
        "sweep",
        "--workload",
        SPEC,
        "--axis",
        "system=dgx-h100,dgx-b200",
        "--axis",
        "tp=3,8",
        "--no-sandbox",
        "--jobs",
        "1",
        "--json",
        "-",
    )
    assert status == 0, err
    runs = json.loads(out)["runs"]
    assert [run["point"] for run in runs] == [
        {"system": s, "tp": tp} for s in ("dgx-h100", "dgx-b200") for tp in (3, 8)
    ]
    for run in runs[0::2]:  # tp 3 does not divide 8 GPUs
        assert run["invalid"]["field"] == "gpus"
        assert "multiple of tp x pp x cp" in run["invalid"]["reason"]
        assert "result" not in run
    for run in runs[1::2]:
        system = run["point"]["system"]
        plan = ParallelPlan(gpus=8, tp=8, gbs=16)
        alone = simulate_training(PRESETS["gpt3-5b"], plan, system)  # `workload train`
        metrics = run["metrics"]
        assert metrics["step_time_s"] == pytest.approx(alone["step_time_s"], rel=1e-9)
        assert metrics["overall_time_s"] == metrics["step_time_s"]
        assert metrics["mfu"] == pytest.approx(alone["mfu"], rel=1e-9)
        cost = step_cost(system, 8, metrics["step_time_s"])["cost_per_step_usd"]
        assert cost is not None and metrics["cost_per_step_usd"] == pytest.approx(cost, rel=1e-9)
        tokens = 16 * PRESETS["gpt3-5b"].seq
        assert metrics["cost_per_token_usd"] == pytest.approx(cost / tokens, rel=1e-9)


def test_a_workload_sweep_s_interval_covers_its_cost_from_the_same_samples() -> None:
    status, out, err = cli(
        "sweep",
        "--workload",
        json.dumps({"model": "gpt3-5b", "gbs": 16, "gpus": 8, "tp": 8}),
        "--axis",
        "system=dgx-h100,dgx-h200",
        "--uncertainty",
        "4",
        "--no-sandbox",
        "--jobs",
        "1",
        "--json",
        "-",
    )
    assert status == 0, err
    for run in json.loads(out)["runs"]:
        metrics = run["metrics"]
        low, high = metrics["overall_time_s_low"], metrics["overall_time_s_high"]
        assert (metrics["step_time_s_low"], metrics["step_time_s_high"]) == (low, high)
        assert low < high  # the H100 and H200 records carry measured spreads
        # The rental cost is the GPUs' hourly price over the step: each sample's cost is its
        # time's, so the cost's interval ends are the time's ends at the step's price.
        price = metrics["cost_per_step_usd"] / metrics["step_time_s"]
        assert metrics["cost_per_step_usd_low"] == pytest.approx(low * price, rel=1e-9)
        assert metrics["cost_per_step_usd_high"] == pytest.approx(high * price, rel=1e-9)
        assert metrics["cost_usd_low"] == pytest.approx(low * price, rel=1e-9)
        assert metrics["cost_per_token_usd_high"] == pytest.approx(
            high * price / (16 * PRESETS["gpt3-5b"].seq), rel=1e-9
        )


def test_a_workload_sweep_prints_a_table_with_the_pareto_flags() -> None:
    status, out, err = cli(
        "sweep",
        "--workload",
        SPEC,
        "--axis",
        "system=dgx-h100,dgx-b200",
        "--axis",
        "tp=4,8",
        "--constraint",
        "step_time_s <= 100",
        "--no-sandbox",
        "--jobs",
        "1",
    )
    assert status == 0, err
    header, *lines = out.strip().splitlines()
    assert header.split()[:6] == [
        "system",
        "tp",
        "step_time_s",
        "mfu",
        "cost_per_step_usd",
        "cost_per_token_usd",
    ]
    assert header.split()[-2:] == ["feasible", "pareto"]
    assert len(lines) == 4 and any(line.split()[-1] == "True" for line in lines)


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (
            ["--workload", '{"model": "gpt3-5b", "gbs": 16, "gpus": 8, "tq": 2}'],
            "--workload tq: unknown field",
        ),
        (
            ["--workload", '{"model": "gpt3-5b", "gbs": 16}'],
            "--workload gpus: required unless an --axis",
        ),
        (["--workload", '{"model": "gpt3-9t", "gbs": 16, "gpus": 8}'], "--workload model:"),
        (
            ["--workload", '{"model": "gpt3-5b", "gbs": 16, "gpus": 8, "precision": "fp4"}'],
            "--workload precision: precision is one of bf16, fp8",
        ),
        (["--workload", '{"model": "gpt3-5b", "kind": "infer", "gpus": 8}'], "--workload kind:"),
        (["--workload", "[1, 2]"], "--workload: expected a JSON object"),
        (["--workload", SPEC, "--axis", "tp=1,0"], "--axis tp[1]: tp is a whole number"),
        (
            ["--workload", SPEC, "--axis", "system=dgx-h100,dgx-z9"],
            "--axis system[1]: system is one of",
        ),
        (["--workload", SPEC, "--axis", "colour=1,2"], "--axis colour: Unknown plan axis"),
        (["--workload", SPEC, "--axis", "dp=1,2"], "--workload gpus: a dp axis sets the GPUs"),
        (
            ["--workload", SPEC, "--axis", "tp=1,2", "--var", "N=1"],
            "--var cannot be given with --workload",
        ),
        (["--workload", SPEC, "--axis", "tp=1:64:1", "--max-points", "10"], "10"),
        (["--app", "app.py"], "--system, --labels required (or --workload SPEC)"),
    ],
)
@pytest.mark.parametrize("command", ["sweep", "study"])
def test_a_bad_workload_sweep_or_study_is_refused_naming_the_field(
    command: str, argv: list[str], message: str
) -> None:
    if command == "study":
        if "--max-points" in argv:
            pytest.skip("a study's budget is its trials, not a point count")
        extra = ["--axis", "pp=1,2"] if "--axis" not in argv and "--app" not in argv else []
        argv = [*argv, *extra, "--trials", "2"]
    status, out, err = cli(command, *argv, "--no-sandbox")
    assert status == 2 and out == ""
    assert message in err


def test_a_workload_study_searches_the_plans_and_fails_the_impossible_ones_with_their_reason() -> (
    None
):
    argv = [
        "study",
        "--workload",
        json.dumps({"model": "gpt3-5b", "gbs": 16, "gpus": 8}),
        "--axis",
        "system=dgx-h100,dgx-h200,dgx-b200",
        "--axis",
        "tp=1,2,3,4,8",
        "--objective",
        "cost_per_step_usd",
        "--constraint",
        "step_time_s <= 5",
        "--trials",
        "10",
        "--parallel",
        "2",
        "--study-seed",
        "3",
        "--no-sandbox",
    ]
    status, out, err = cli(*argv, "--json", "-")
    assert status == 0, err
    study = json.loads(out)
    trials = study["trials"]
    assert len(trials) == 10
    failed = [t for t in trials if t["state"] == "fail"]
    complete = [t for t in trials if t["state"] == "complete"]
    assert complete, trials
    for trial in failed:  # tp 3 never divides 8 GPUs; tp 1 does not fit an H100
        assert trial["error"].startswith("invalid plan ("), trial
    for trial in trials:
        if trial["point"]["tp"] == 3:
            assert trial["state"] == "fail" and trial["error"].startswith("invalid plan (gpus)")
    best = [t for t in trials if t["best"]]
    assert best and all(t["state"] == "complete" for t in best)
    cheapest = min(t["metrics"]["cost_per_step_usd"] for t in complete)
    assert {t["metrics"]["cost_per_step_usd"] for t in best} == {cheapest}
    # a trial's figures are the sweep's of the same point
    first = complete[0]
    status, out, err = cli(
        "sweep",
        "--workload",
        json.dumps({"model": "gpt3-5b", "gbs": 16, "gpus": 8}),
        "--axis",
        f"system={first['point']['system']}",
        "--axis",
        f"tp={first['point']['tp']}",
        "--no-sandbox",
        "--json",
        "-",
    )
    assert status == 0, err
    (run,) = json.loads(out)["runs"]
    assert run["metrics"]["cost_per_step_usd"] == first["metrics"]["cost_per_step_usd"]
    # and the table names why a trial made no run
    status, out, err = cli(*argv)
    assert status == 0, err
    assert out.splitlines()[0].split()[-1] == "error"
