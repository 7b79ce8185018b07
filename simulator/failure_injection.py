"""Monte Carlo failure injection for one run, beside its analytic probability of success.

A run asked for it (`run_simulation(failures={...})`, `python -m simulator run
--inject-failures MODE`) gets `failure_injection` in its result: simulator.models.reliability's
`monte_carlo_completion` over the run's own exposures, each component instance's failure rate
(from its record: `failuresPerSecond`, else 1 / `mtbf`) and its busy time, seeded by the run's
seed. The modes are the model's (docs/models.md 6):

- "abort": a failure ends the run; the estimate of P(complete), with its 95 % Wilson interval,
  converges to the analytic `reliability.p_success`;
- "restart": a failure restarts the run from its beginning (no checkpoint), after
  `restart_s` seconds of its own; every sample completes, and the result gives the mean and
  the 50th, 90th and 99th percentiles of the completion time beside the closed-form mean.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

from simulator.errors import LaunchError
from simulator.models.reliability import expected_restart_completion, monte_carlo_completion

__all__ = ["FAILURE_MESSAGES", "MAX_SAMPLES", "check_failures", "inject_failures"]

MODES = ("abort", "restart")
DEFAULT_SAMPLES = 10_000
MAX_SAMPLES = 1_000_000  # a run's memory holds one float per sample
QUANTILES = (50, 90, 99)

FAILURE_MESSAGES = {
    "object": 'Expected an object {"mode": "abort" or "restart", "samples", "restart_s"}.',
    "mode": "Expected abort or restart, got {value!r}.",
    "samples": f"Expected a whole number of samples from 1 to {MAX_SAMPLES:,}, got {{value!r}}.",
    "restart_s": "Expected a restart cost in seconds, 0 or more, got {value!r}.",
}


def check_failures(spec: object) -> dict[str, Any]:
    """Return the failure injection asked for in normal form {mode, samples, restart_s};
    raise LaunchError naming the field (`failures.mode`, ...)."""
    if not isinstance(spec, Mapping):
        raise LaunchError("failures", FAILURE_MESSAGES["object"])
    mode = spec.get("mode", "abort")
    if mode not in MODES:
        raise LaunchError("failures.mode", FAILURE_MESSAGES["mode"].format(value=mode))
    samples = spec.get("samples", DEFAULT_SAMPLES)
    if isinstance(samples, bool) or not isinstance(samples, int) or not 1 <= samples <= MAX_SAMPLES:
        raise LaunchError("failures.samples", FAILURE_MESSAGES["samples"].format(value=samples))
    restart_s = spec.get("restart_s", 0.0)
    if (
        isinstance(restart_s, bool)
        or not isinstance(restart_s, int | float)
        or not math.isfinite(restart_s)
        or restart_s < 0
    ):
        raise LaunchError(
            "failures.restart_s", FAILURE_MESSAGES["restart_s"].format(value=restart_s)
        )
    return {"mode": mode, "samples": samples, "restart_s": float(restart_s)}


def inject_failures(
    result: Mapping[str, Any], failures: Mapping[str, Any], *, seed: int
) -> dict[str, Any]:
    """Return the failure injection (module docstring) of a finished run's `result`, as
    `check_failures` normalised it."""
    exposures = [
        (float(row.get("failure_rate_per_s") or 0.0), float(row.get("busy_s") or 0.0))
        for row in result.get("components") or []
    ]
    run_s = float(result.get("overall_time_s") or 0.0)
    mode = failures["mode"]
    restart_s = failures["restart_s"]
    analytic = (result.get("reliability") or {}).get("p_success")
    # a seed of any size for the generator: numpy takes non-negative integers
    generator_seed = seed % 2**63
    figures: dict[str, Any] = {
        "mode": mode,
        "samples": failures["samples"],
        "seed": generator_seed,
        "restart_s": restart_s,
        "analytic_p_success": analytic,
    }
    if mode == "restart" and run_s <= 0:  # nothing ran long enough to fail
        figures.update(completed=failures["samples"], p_complete=1.0, ci_95=[1.0, 1.0])
        figures.update(mean_completion_s=run_s, analytic_mean_completion_s=run_s)
        figures.update(
            mean_attempts=1.0, completion_percentiles_s=dict.fromkeys(map(str, QUANTILES), run_s)
        )
        return figures
    outcome = monte_carlo_completion(
        exposures,
        samples=failures["samples"],
        seed=generator_seed,
        on_failure=mode,
        run_s=run_s if mode == "restart" else None,
        restart_s=restart_s,
    )
    figures.update(
        completed=outcome.completed,
        p_complete=outcome.probability,
        ci_95=[outcome.ci_low, outcome.ci_high],
    )
    if mode == "restart":
        import numpy as np  # here: monte_carlo_completion loaded it already

        times = outcome.completion_times_s
        assert times is not None
        figures.update(
            mean_completion_s=outcome.mean_completion_s,
            analytic_mean_completion_s=expected_restart_completion(exposures, run_s, restart_s),
            mean_attempts=outcome.mean_attempts,
            completion_percentiles_s={
                str(q): float(np.percentile(times, q)) if len(times) else None for q in QUANTILES
            },
        )
    return figures
