"""Calibration: fit the models' scaling parameters to measurements (000 sections 4.1, 4.3; 003).

- lambda_k (4.1) from measured kernel times: lambda_k = T_estimated / T_measured, a least-squares
  fit over several launches of T_measured = T_estimated(lambda_k = 1) / lambda_k.
- t_s and lambda_c (4.6) for one transfer direction: a straight line T = t_s + n / (bw lambda_c)
  fitted by least squares to (n, T) pairs.
- t_p and B_p (4.6p, simulator.models.transfer) for pageable copies of one direction: the line
  T = t_p + n / B_p fitted the same way to copies from or to pageable host memory, where the
  host staging rate B_p binds, i.e. B_p < bw lambda_c.
- 003's block energy: T(NB) = a NB + b by simple linear regression, then E_b (and P_s when the
  idle power is not given) from E(NB) = E_b NB + P_s T(NB); at least three measurements.

Every failure raises CalibrationError with a message from CALIBRATION_ERRORS.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import NamedTuple

import numpy as np
import numpy.typing as npt

CALIBRATION_ERRORS: dict[str, str] = {
    "too_few": "{what} needs at least {minimum} measurements, got {count}",
    "lengths": "inconsistent measurements: {lengths}",
    "non_positive": "{what} must be positive (measurement {index}: {value!r})",
    "not_finite": "{what} must be finite numbers (measurement {index}: {value!r})",
    "degenerate": "{what} needs at least two different {variable} values",
    "negative_fit": "the fit gives a negative {parameter} ({value:.6g}); check the measurements",
    "staging_not_binding": (
        "the pageable copies run at {rate:.6g} B/s, not below the link's {link_rate:.6g} B/s: "
        "the host staging rate does not bind, so the link needs no pageable attributes "
        "(or fit t_s and lambda_c to these copies)"
    ),
}


class CalibrationError(ValueError):
    """The measurements cannot be fitted; the message says why."""


def _column(
    values: Sequence[float], what: str, *, allow_zero: bool = False
) -> npt.NDArray[np.float64]:
    array = np.asarray(values, dtype=np.float64)
    for index, value in enumerate(array):
        if not np.isfinite(value):
            raise CalibrationError(
                CALIBRATION_ERRORS["not_finite"].format(what=what, index=index, value=float(value))
            )
        if value < 0 or (value == 0 and not allow_zero):
            raise CalibrationError(
                CALIBRATION_ERRORS["non_positive"].format(
                    what=what, index=index, value=float(value)
                )
            )
    return array


def _columns(
    named: dict[str, Sequence[float]], *, what: str, minimum: int, allow_zero: Sequence[str] = ()
) -> list[npt.NDArray[np.float64]]:
    lengths = {name: len(values) for name, values in named.items()}
    if len(set(lengths.values())) > 1:
        text = ", ".join(f"{count} {name}" for name, count in lengths.items())
        raise CalibrationError(CALIBRATION_ERRORS["lengths"].format(lengths=text))
    count = next(iter(lengths.values()))
    if count < minimum:
        raise CalibrationError(
            CALIBRATION_ERRORS["too_few"].format(what=what, minimum=minimum, count=count)
        )
    return [_column(values, name, allow_zero=name in allow_zero) for name, values in named.items()]


def _line(
    x: npt.NDArray[np.float64], y: npt.NDArray[np.float64], what: str, variable: str
) -> tuple[float, float]:
    """Return (slope, intercept) of the least-squares line y = slope x + intercept."""
    if np.ptp(x) == 0:
        raise CalibrationError(
            CALIBRATION_ERRORS["degenerate"].format(what=what, variable=variable)
        )
    slope, intercept = np.polyfit(x, y, 1)
    return float(slope), float(intercept)


def _non_negative(parameter: str, value: float, tolerance: float = 0.0) -> float:
    if value < -tolerance:
        raise CalibrationError(
            CALIBRATION_ERRORS["negative_fit"].format(parameter=parameter, value=value)
        )
    return max(value, 0.0)


def fit_lambda_k(*, estimated_s: Sequence[float], measured_s: Sequence[float]) -> float:
    """Return lambda_k minimising sum (T_measured - T_estimated / lambda_k)^2.

    `estimated_s` are the model's times with lambda_k = 1; with one launch this is exactly
    T_estimated / T_measured (000, section 4.1).
    """
    estimated, measured = _columns(
        {"estimated times": estimated_s, "measured times": measured_s}, what="lambda_k", minimum=1
    )
    inverse = float(np.dot(estimated, measured) / np.dot(estimated, estimated))
    return 1.0 / inverse


@dataclass(frozen=True)
class TransferFit:
    """One direction's (4.6) parameters: startup time [s] and bandwidth utilisation."""

    startup_s: float
    lambda_c: float


def fit_transfer(
    *, sizes: Sequence[float], times_s: Sequence[float], bandwidth: float
) -> TransferFit:
    """Return t_s and lambda_c of one direction from measured (n bytes, seconds) pairs."""
    if not bandwidth > 0:
        raise CalibrationError(
            CALIBRATION_ERRORS["non_positive"].format(what="bandwidth", index=0, value=bandwidth)
        )
    n, t = _columns(
        {"sizes": sizes, "times": times_s}, what="a transfer fit", minimum=2, allow_zero=("sizes",)
    )
    slope, intercept = _line(n, t, "a transfer fit", "size")
    if slope <= 0:
        raise CalibrationError(
            CALIBRATION_ERRORS["negative_fit"].format(parameter="inverse bandwidth", value=slope)
        )
    startup = _non_negative("startup time", intercept, tolerance=1e-12 * float(np.max(t)))
    return TransferFit(startup_s=startup, lambda_c=1.0 / (slope * bandwidth))


class PageableFit(NamedTuple):
    """One direction's pageable-copy parameters (4.6p): startup time [s] and the host staging
    rate [B/s], stored as pageableStartupHTD / pageableBandwidthHTD (or ...Dth)."""

    startup_s: float
    staging_bandwidth: float


def fit_pageable(
    *,
    sizes: Sequence[float],
    times_s: Sequence[float],
    link_rate: float,
    min_bytes: float = 0.0,
) -> PageableFit:
    """Return t_p and B_p of one direction from measured pageable (n bytes, seconds) pairs.

    Least squares on T = t_p + n / B_p over the copies of at least `min_bytes` (the driver may
    treat small pageable copies differently); `link_rate` = bw * lambda_c of the direction.
    The staging rate must bind (B_p < link_rate), otherwise (4.6p) would charge the link's rate
    and not the measured one.
    """
    if not link_rate > 0:
        raise CalibrationError(
            CALIBRATION_ERRORS["non_positive"].format(what="link rate", index=0, value=link_rate)
        )
    n, t = _columns(
        {"sizes": sizes, "times": times_s}, what="a pageable fit", minimum=2, allow_zero=("sizes",)
    )
    keep = n >= min_bytes
    if int(np.count_nonzero(keep)) < 2:
        raise CalibrationError(
            CALIBRATION_ERRORS["too_few"].format(
                what=f"a pageable fit (copies of at least {min_bytes:g} bytes)",
                minimum=2,
                count=int(np.count_nonzero(keep)),
            )
        )
    n, t = n[keep], t[keep]
    slope, intercept = _line(n, t, "a pageable fit", "size")
    if slope <= 0:
        raise CalibrationError(
            CALIBRATION_ERRORS["negative_fit"].format(parameter="inverse bandwidth", value=slope)
        )
    rate = 1.0 / slope
    # A fit of copies at the link's rate lands within rounding of it, on either side.
    if rate >= link_rate * (1.0 - 1e-9):
        raise CalibrationError(
            CALIBRATION_ERRORS["staging_not_binding"].format(rate=rate, link_rate=link_rate)
        )
    startup = _non_negative("startup time", intercept, tolerance=1e-12 * float(np.max(t)))
    return PageableFit(startup_s=startup, staging_bandwidth=rate)


@dataclass(frozen=True)
class BlockEnergyFit:
    """003's fitted parameters: T(NB) = a NB + b; E(NB) = E_b NB + P_s T(NB)."""

    slope_s: float
    intercept_s: float
    block_energy_j: float
    static_power_w: float


def fit_block_energy(
    *,
    blocks: Sequence[float],
    times_s: Sequence[float],
    energies_j: Sequence[float],
    static_power_w: float | None = None,
) -> BlockEnergyFit:
    """Return a, b, E_b and P_s from at least three (NB, time, energy) measurements.

    With the idle power given (003 takes P_s = idle power), E_b is the slope of a simple linear
    regression of the dynamic energy E - P_s T against NB; otherwise E_b and P_s are fitted
    together by least squares on E = E_b NB + P_s T.
    """
    nb, t, e = _columns(
        {"blocks": blocks, "times": times_s, "energies": energies_j},
        what="the block energy fit",
        minimum=3,
    )
    slope, intercept = _line(nb, t, "the block energy fit", "block count")
    _non_negative("time per block", slope)
    if static_power_w is not None:
        if static_power_w < 0:
            raise CalibrationError(
                CALIBRATION_ERRORS["non_positive"].format(
                    what="static power", index=0, value=static_power_w
                )
            )
        block_energy, _ = _line(nb, e - static_power_w * t, "the block energy fit", "block count")
        power = static_power_w
    else:
        design = np.column_stack([nb, t])
        if np.linalg.matrix_rank(design) < 2:
            raise CalibrationError(
                CALIBRATION_ERRORS["degenerate"].format(
                    what="fitting P_s", variable="time-per-block"
                )
            )
        (block_energy, power), *_ = np.linalg.lstsq(design, e, rcond=None)
        power = _non_negative("static power", float(power))
    return BlockEnergyFit(
        slope_s=slope,
        intercept_s=intercept,
        block_energy_j=_non_negative("energy per block", float(block_energy)),
        static_power_w=float(power),
    )
