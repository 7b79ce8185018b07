"""Reliability: closed form and Monte Carlo failure injection (docs/models.md 6)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from simulator.models.reliability import (
    RELIABILITY_ERRORS,
    expected_restart_completion,
    failure_rate_from_attributes,
    failure_rate_from_mtbf,
    monte_carlo_completion,
    success_probability,
)

EXPOSURES = [(1e-3, 100.0), (5e-4, 300.0), (0.0, 1e6)]


def test_success_probability_is_the_exponential_of_the_summed_hazard():
    assert success_probability(EXPOSURES) == pytest.approx(math.exp(-(0.1 + 0.15)))
    assert success_probability([]) == 1.0


def test_it_rejects_negative_rates_or_times():
    with pytest.raises(ValueError, match=RELIABILITY_ERRORS["negative_exposure"]):
        success_probability([(-1.0, 1.0)])


def test_failure_rates_come_from_the_rate_or_the_mtbf():
    assert failure_rate_from_mtbf(1000.0) == 1e-3
    assert failure_rate_from_attributes({"mtbf": 500.0}) == 2e-3
    assert failure_rate_from_attributes({"failuresPerSecond": 1e-6, "mtbf": 1.0}) == 1e-6
    assert failure_rate_from_attributes({}) == 0.0


def test_the_monte_carlo_estimate_converges_to_the_closed_form():
    exact = success_probability(EXPOSURES)
    result = monte_carlo_completion(EXPOSURES, samples=200_000, seed=7)
    assert result.ci_low <= exact <= result.ci_high
    assert abs(result.probability - exact) < 0.005
    assert result.ci_high - result.ci_low < 0.01


def test_the_monte_carlo_estimate_is_reproducible_from_its_seed():
    first = monte_carlo_completion(EXPOSURES, samples=1000, seed=3)
    assert monte_carlo_completion(EXPOSURES, samples=1000, seed=3).completed == first.completed


def test_restarting_runs_always_complete_and_take_the_expected_time_on_average():
    result = monte_carlo_completion(
        EXPOSURES, samples=100_000, seed=1, on_failure="restart", run_s=400.0
    )
    assert result.probability == 1.0
    assert result.completion_times_s is not None
    assert np.all(result.completion_times_s >= 400.0)
    expected = expected_restart_completion(EXPOSURES, 400.0)
    assert result.mean_completion_s == pytest.approx(expected, rel=0.01)
    assert result.mean_attempts == pytest.approx(1 / success_probability(EXPOSURES), rel=0.01)


def test_without_failures_a_restarting_run_takes_exactly_its_duration():
    result = monte_carlo_completion([(0.0, 10.0)], samples=10, on_failure="restart", run_s=10.0)
    assert result.mean_completion_s == 10.0
    assert expected_restart_completion([(0.0, 10.0)], 10.0) == 10.0


def test_restart_mode_needs_a_run_duration_and_modes_are_checked():
    with pytest.raises(ValueError, match="run duration"):
        monte_carlo_completion(EXPOSURES, on_failure="restart")
    with pytest.raises(ValueError, match="on_failure must be"):
        monte_carlo_completion(EXPOSURES, on_failure="retry")  # type: ignore[arg-type]


def test_a_restart_cost_adds_the_expected_failures_times_the_cost():
    # H = 0.25: e^H - 1 = 0.2840 failures expected per completed run, each costing 50 s more
    plain = expected_restart_completion(EXPOSURES, 400.0)
    costly = expected_restart_completion(EXPOSURES, 400.0, restart_s=50.0)
    assert costly - plain == pytest.approx(math.expm1(0.25) * 50.0)
    result = monte_carlo_completion(
        EXPOSURES, samples=100_000, seed=1, on_failure="restart", run_s=400.0, restart_s=50.0
    )
    assert result.mean_completion_s == pytest.approx(costly, rel=0.01)
    with pytest.raises(ValueError, match="restart_s"):
        monte_carlo_completion(EXPOSURES, on_failure="restart", run_s=1.0, restart_s=-1.0)
