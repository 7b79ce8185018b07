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


UNIQUE_MODULUS = 100_000_007
"""A prime: (process * steps + step) * 7919 gives every computation of a run of fewer
computations than it a residue of its own, so `unique_duration` never repeats."""


def unique_duration(process: int, step: int, steps: int) -> float:
    """Return the seconds computation `step` (of `steps`) of process `process` takes in the
    distinct-inputs workload: every computation of the run its own duration, in [0.5, 1.5),
    so a model evaluated on it never finds a value it gave before (no memo hit).

    The application models and the SimPy script spell the same expression out inline.
    """
    return 0.5 + ((process * steps + step) * 7919 % UNIQUE_MODULUS) / UNIQUE_MODULUS
