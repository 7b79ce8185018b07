"""Workload definitions shared by `bench_engine.py` (venv Python) and `simgrid_scenarios.py`
(system Python), so every engine simulates exactly the same thing."""

from __future__ import annotations


def step_duration(process: int, step: int, distinct: bool) -> float:
    """Return the seconds computation `step` of process `process` takes in scenario (a).

    `distinct`: durations spread over about 10,000 values, so processes rarely wake at the
    same time; otherwise ten values, so many processes wake together (lockstep).
    """
    if distinct:
        return 0.5 + ((process * 7919 + step * 104729) % 10007) / 10007
    return 1.0 + ((process * 7 + step) % 10) * 0.1
