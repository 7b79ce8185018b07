"""bench_userpath.py's workloads (issue 41.4): the distinct-inputs durations never repeat, and
each ParaSim scenario ends where its SimPy script does (the same durations, the same model)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from simulator import shallow
from simulator.runner import run_simulation

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "bench"))

import bench_userpath  # noqa: E402
from workload import UNIQUE_MODULUS, unique_duration  # noqa: E402


def test_every_computation_of_a_distinct_run_has_a_duration_of_its_own() -> None:
    processes, steps = 10_000, 100
    durations = {unique_duration(p, s, steps) for p in range(processes) for s in range(steps)}
    assert len(durations) == processes * steps < UNIQUE_MODULUS
    assert min(durations) >= 0.5 and max(durations) < 1.5


def simpy_end(case: bench_userpath.Case) -> dict[str, Any]:
    assert case.simpy is not None
    name, args = case.simpy
    done = subprocess.run(
        [sys.executable, str(bench_userpath.SIMPY_SCRIPT), name, json.dumps(args)],
        capture_output=True,
        text=True,
        check=True,
    )
    figures: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    return figures


def parasim_end(case: bench_userpath.Case) -> float:
    shallow.clear_caches()
    inputs = case.parasim
    result = run_simulation(
        inputs.snapshot, inputs.app, labels=inputs.labels, variables=dict(inputs.variables)
    )
    return float(result["overall_time_s"])


@pytest.mark.parametrize("scenario", ["compute", "compute-distinct", "compute-edited"])
def test_a_compute_workload_ends_where_its_simpy_script_does(scenario: str) -> None:
    case = bench_userpath.compute_case(7, 4, 0, scenario=scenario)
    assert bench_userpath.COMPUTE_WORKLOADS[scenario][0] in case.title

    figures = simpy_end(case)

    assert figures["events"] == case.events == 28
    assert parasim_end(case) == figures["simulated_s"]


@pytest.mark.parametrize("edited", [False, True])
def test_the_merpsys_workload_ends_where_its_simpy_script_does(edited: bool) -> None:
    sizes = bench_userpath.Sizes(merpsys_pairs=3)
    case = bench_userpath.merpsys_case(sizes, edited=edited)
    sources = [model["source"] for model in case.parasim.snapshot["models"].values()]
    assert all(source.startswith(bench_userpath.MERPSYS_EDIT) == edited for source in sources)

    figures = simpy_end(case)

    assert figures["events"] == case.events == 15
    assert parasim_end(case) == pytest.approx(figures["simulated_s"], rel=1e-12)
