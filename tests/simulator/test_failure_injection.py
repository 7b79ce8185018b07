"""Monte Carlo failure injection per run (simulator.failure_injection), beside the analytic
probability of success and the closed-form mean completion time of restarts."""

from __future__ import annotations

import copy
import io
import json
import math
from pathlib import Path
from typing import Any

import pytest

from simulator.cli import main
from simulator.errors import LaunchError
from simulator.failure_injection import check_failures
from simulator.runner import run_simulation

# Made-up rates for the check: two nodes busy for 2 s of a 2 s run, hazard H = 2 x 0.1.
SYSTEM: dict[str, Any] = {
    "name": "failing",
    "hardware": {
        "a": {"type": "CPU", "name": "A", "attributes": {"speed": 1.0, "failuresPerSecond": 0.05}},
        "b": {"type": "CPU", "name": "B", "attributes": {"speed": 1.0, "mtbf": 20.0}},
    },
    "models": {
        "m": {
            "language": "javascript",
            "source": "function computationTime(params) { return params.ops / hw.speed; }",
        }
    },
    "nodes": [
        {"id": "a0", "name": "A", "hardware": "a", "model": "m", "count": 1, "labels": {"A": 1}},
        {"id": "b0", "name": "B", "hardware": "b", "model": "m", "count": 1, "labels": {"B": 1}},
    ],
    "edges": [],
}
APP = "sim.computation({'ops': 2.0})\n"
HAZARD = 0.2


def _run(failures: dict[str, Any], seed: int = 5) -> Any:
    return run_simulation(
        copy.deepcopy(SYSTEM),
        APP,
        labels={"A": 1, "B": 1},
        variables={},
        seed=seed,
        failures=failures,
    )


def test_aborting_failures_estimate_the_analytic_probability_within_their_interval() -> None:
    result = _run({"mode": "abort", "samples": 100_000})
    injected = result["failure_injection"]
    assert result["reliability"]["p_success"] == pytest.approx(math.exp(-HAZARD))
    assert injected["analytic_p_success"] == result["reliability"]["p_success"]
    low, high = injected["ci_95"]
    assert low <= math.exp(-HAZARD) <= high
    assert high - low < 0.01
    assert (injected["mode"], injected["samples"], injected["seed"]) == ("abort", 100_000, 5)


def test_restarts_give_the_completion_time_distribution_and_its_closed_form_mean() -> None:
    result = _run({"mode": "restart", "samples": 100_000, "restart_s": 1.0})
    injected = result["failure_injection"]
    # (e^H - 1) x (run / H + restart): the mean of a run restarted from its beginning
    expected = math.expm1(HAZARD) * (2.0 / HAZARD + 1.0)
    assert injected["analytic_mean_completion_s"] == pytest.approx(expected)
    assert injected["mean_completion_s"] == pytest.approx(expected, rel=0.01)
    assert injected["p_complete"] == 1.0
    percentiles = injected["completion_percentiles_s"]
    assert percentiles["50"] == pytest.approx(2.0)  # most runs never fail: e^-0.2 = 82 %
    assert 2.0 < percentiles["90"] <= percentiles["99"]
    assert injected["mean_attempts"] == pytest.approx(math.exp(HAZARD), rel=0.01)


def test_the_injection_is_reproducible_from_the_runs_seed() -> None:
    first = _run({"mode": "abort", "samples": 1000}, seed=9)["failure_injection"]
    assert _run({"mode": "abort", "samples": 1000}, seed=9)["failure_injection"] == first
    assert _run({"mode": "abort", "samples": 1000}, seed=10)["failure_injection"] != first


@pytest.mark.parametrize(
    ("spec", "field"),
    [
        ([], "failures"),
        ({"mode": "retry"}, "failures.mode"),
        ({"samples": 0}, "failures.samples"),
        ({"samples": 2.5}, "failures.samples"),
        ({"samples": 10**7}, "failures.samples"),
        ({"mode": "restart", "restart_s": -1}, "failures.restart_s"),
        ({"mode": "restart", "restart_s": math.inf}, "failures.restart_s"),
    ],
)
def test_a_bad_injection_is_refused_before_the_run_naming_its_field(spec: Any, field: str) -> None:
    with pytest.raises(LaunchError) as raised:
        check_failures(spec)
    assert raised.value.field == field
    with pytest.raises(LaunchError):
        _run(spec)


def test_the_command_line_prints_the_injection_beside_the_analytic_figure(tmp_path: Path) -> None:
    system = tmp_path / "system.json"
    system.write_text(json.dumps(SYSTEM))
    app = tmp_path / "app.py"
    app.write_text(APP)
    out, err = io.StringIO(), io.StringIO()
    argv = ["run", "--system", str(system), "--app", str(app), "--labels", "A=1,B=1"]
    argv += ["--inject-failures", "restart", "--failure-samples", "2000", "--restart-cost", "1"]
    # sandboxed: the child must have loaded what the draws import before its limits
    assert main(argv, stdout=out, stderr=err) == 0, err.getvalue()
    text = out.getvalue()
    assert "Failure injection (restart, 2000 samples, seed 0): P(complete) = 1" in text
    assert "analytic 0.818731" in text  # e^-0.2
    assert "each restart costing 1 s" in text
