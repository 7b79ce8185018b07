"""Reliability: probability that a run completes without a component failure (docs/models.md 6).

Each component fails as a Poisson process of rate lambda (1 / MTBF) while it is in use; a run
survives with probability exp(-sum_i lambda_i * t_i) (`success_probability`).

`monte_carlo_completion` injects failures instead. Semantics, chosen here because the papers
leave it open:

- "abort": a failure ends the run. Each sample draws an exponential failure time per
  component on that component's own in-use clock; the run completes if none falls inside
  the component's exposure. The estimate converges to `success_probability`.
- "restart": a failure restarts the whole run from the beginning (no checkpoints). Every
  component is taken to be in use uniformly over the run of `run_s` seconds, so component i
  fails at wall-clock rate lambda_i * t_i / run_s; an attempt ends at the first failure and
  the run completes after the first attempt without one. Completion times are returned;
  their mean converges to (exp(H) - 1) * run_s / H with H = sum lambda_i t_i. A restart
  may cost `restart_s` of its own (reloading, re-queueing) after each failure: the mean
  grows by (exp(H) - 1) * restart_s, the expected number of failures times the cost.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

RELIABILITY_ERRORS: dict[str, str] = {
    "negative_exposure": "failure rates and exposure times must be non-negative",
    "samples": "the number of samples must be a positive integer",
    "mode": "on_failure must be 'abort' or 'restart', got {mode!r}",
    "run_s": "restart mode needs a positive run duration run_s",
    "mtbf": "MTBF must be positive",
    "restart_s": "a restart's cost restart_s must be a finite number of seconds, 0 or more",
}

Z_95 = 1.959963984540054


def success_probability(exposures: Iterable[tuple[float, float]]) -> float:
    """Return exp(-sum rate_i * t_i) over (failure rate per second, seconds in use) pairs."""
    return math.exp(-_hazard(list(exposures)))


def failure_rate_from_mtbf(mtbf_s: float) -> float:
    """Return the failure rate 1 / MTBF in failures per second."""
    if mtbf_s <= 0:
        raise ValueError(RELIABILITY_ERRORS["mtbf"])
    return 1.0 / mtbf_s


def failure_rate_from_attributes(attributes: Mapping[str, float]) -> float:
    """Return a component's failures per second: failuresPerSecond, else 1 / mtbf [s], else 0.

    The attribute is not called failureRate because attributes are JavaScript globals in the
    built-in model and would clash with its function failureRate().
    """
    if "failuresPerSecond" in attributes:
        return float(attributes["failuresPerSecond"])
    if "mtbf" in attributes:
        return failure_rate_from_mtbf(float(attributes["mtbf"]))
    return 0.0


def expected_restart_completion(
    exposures: Iterable[tuple[float, float]], run_s: float, restart_s: float = 0.0
) -> float:
    """Return the mean completion time of a run that restarts after every failure, each
    restart costing `restart_s` of its own."""
    hazard = _hazard(list(exposures))
    if hazard == 0:
        return run_s
    return math.expm1(hazard) * (run_s / hazard + restart_s)


def _hazard(exposures: list[tuple[float, float]]) -> float:
    total = 0.0
    for rate, seconds in exposures:
        if rate < 0 or seconds < 0:
            raise ValueError(RELIABILITY_ERRORS["negative_exposure"])
        total += rate * seconds
    return total


@dataclass(frozen=True)
class MonteCarloReliability:
    """Failure-injection outcome: completion probability with a 95 % Wilson interval."""

    samples: int
    completed: int
    probability: float
    ci_low: float
    ci_high: float
    completion_times_s: npt.NDArray[np.float64] | None = None
    mean_completion_s: float | None = None
    mean_attempts: float | None = None


def wilson_interval(successes: int, trials: int, z: float = Z_95) -> tuple[float, float]:
    """Return the Wilson score interval of a binomial proportion."""
    p = successes / trials
    denominator = 1 + z * z / trials
    centre = (p + z * z / (2 * trials)) / denominator
    half = z * math.sqrt(p * (1 - p) / trials + z * z / (4 * trials * trials)) / denominator
    return max(0.0, centre - half), min(1.0, centre + half)


def monte_carlo_completion(
    exposures: Iterable[tuple[float, float]],
    *,
    samples: int = 10_000,
    seed: int = 0,
    on_failure: Literal["abort", "restart"] = "abort",
    run_s: float | None = None,
    max_attempts: int = 1_000,
    restart_s: float = 0.0,
) -> MonteCarloReliability:
    """Return the completion distribution of a run under injected exponential failures.

    See the module docstring for the "abort" and "restart" semantics; in "restart" mode a
    sample that fails `max_attempts` times in a row counts as not completed.
    """
    import numpy as np  # here, not at the top: a simulation run needs only the closed form

    pairs = list(exposures)
    _hazard(pairs)
    if samples < 1:
        raise ValueError(RELIABILITY_ERRORS["samples"])
    rng = np.random.default_rng(seed)
    rates = np.array([rate for rate, _ in pairs], dtype=np.float64)
    times = np.array([seconds for _, seconds in pairs], dtype=np.float64)

    if on_failure == "abort":
        with np.errstate(divide="ignore"):
            scale = np.where(rates > 0, 1.0 / np.where(rates > 0, rates, 1.0), np.inf)
        failures = rng.exponential(1.0, size=(samples, len(pairs))) * scale
        survived = np.all(failures >= times, axis=1) if pairs else np.ones(samples, dtype=bool)
        completed = int(survived.sum())
        low, high = wilson_interval(completed, samples)
        return MonteCarloReliability(samples, completed, completed / samples, low, high)

    if on_failure != "restart":
        raise ValueError(RELIABILITY_ERRORS["mode"].format(mode=on_failure))
    if run_s is None or run_s <= 0:
        raise ValueError(RELIABILITY_ERRORS["run_s"])
    if not (math.isfinite(restart_s) and restart_s >= 0):
        raise ValueError(RELIABILITY_ERRORS["restart_s"])
    # The first of several exponential clocks is exponential with the summed wall-clock rate.
    wall_rate = float(np.sum(rates * times)) / run_s
    elapsed = np.zeros(samples)
    attempts = np.zeros(samples)
    done = np.zeros(samples, dtype=bool)
    for _ in range(max_attempts):
        pending = ~done
        if not pending.any():
            break
        count = int(pending.sum())
        first_failure = (
            rng.exponential(1.0 / wall_rate, size=count)
            if wall_rate > 0
            else np.full(count, np.inf)
        )
        succeeded = first_failure >= run_s
        elapsed[pending] += np.where(succeeded, run_s, first_failure + restart_s)
        attempts[pending] += 1
        done[np.flatnonzero(pending)[succeeded]] = True
    completed = int(done.sum())
    low, high = wilson_interval(completed, samples)
    finished = elapsed[done]
    return MonteCarloReliability(
        samples=samples,
        completed=completed,
        probability=completed / samples,
        ci_low=low,
        ci_high=high,
        completion_times_s=finished,
        mean_completion_s=float(finished.mean()) if completed else None,
        mean_attempts=float(attempts[done].mean()) if completed else None,
    )
