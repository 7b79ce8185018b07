"""Calibration from pasted measurements: t_s and lambda_c per direction (4.6), lambda_k (4.1),
E_b and P_s (003 eq. 3), with the attributes that store them on a hardware record.

`calibrate(kind, measurements, ...)` checks each measurement (errors keyed by field path,
"measurements[2].seconds"), fits with `simulator.models.calibration`, and returns the fitted
values, their residuals and r^2, and the attributes to store:

| kind     | measurement fields             | attributes (unit)                                  |
|----------|--------------------------------|----------------------------------------------------|
| transfer | bytes, seconds, direction      | startupHTD (s), lambdaHTD, startupDth (s), lambdaDth |
| kernel   | estimated_s, measured_s        | kernelExecutionLambda                              |
| energy   | blocks, seconds, joules        | blockEnergy (J), powerIdle (W)                     |

The transfer names are MERPSYS's (000 Fig. 5.2), read by the built-in `pcie_link.js`;
`kernelExecutionLambda` is read by `volkov_gpu.js`; P_s is 003's idle power, which the built-in
`power.js` reads as `powerIdle`, and E_b [J per block] is `blockEnergy` (energy.BlockRoundModel's
`block_energy_j`). `estimated_s` is the model's kernel time with lambda_k = 1.

The command line's `python -m simulator calibrate` is in simulator.cli.calibrate.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from simulator.models.calibration import (
    CALIBRATION_ERRORS,
    CalibrationError,
    fit_block_energy,
    fit_lambda_k,
    fit_transfer,
)
from simulator.models.energy import BLOCK_ENERGY_ATTRIBUTE
from simulator.models.transfer import DEVICE_TO_HOST, HOST_TO_DEVICE

KINDS = ("transfer", "kernel", "energy")
MAX_MEASUREMENTS = 10_000

FIELDS: dict[str, tuple[str, ...]] = {
    "transfer": ("bytes", "seconds", "direction"),
    "kernel": ("estimated_s", "measured_s"),
    "energy": ("blocks", "seconds", "joules"),
}
ZERO_ALLOWED = frozenset({"bytes"})

# Attribute keys per transfer direction (000 Fig. 5.2): (startup time, bandwidth utilisation).
TRANSFER_ATTRIBUTES: dict[str, tuple[str, str]] = {
    HOST_TO_DEVICE: ("startupHTD", "lambdaHTD"),
    DEVICE_TO_HOST: ("startupDth", "lambdaDth"),
}
KERNEL_ATTRIBUTE = "kernelExecutionLambda"
IDLE_POWER_ATTRIBUTE = "powerIdle"
SOURCE = "calibrated from {count} measurements on {date}"
SOURCE_BY = SOURCE + " by {user}"

CALIBRATE_ERRORS: dict[str, str] = {
    "kind": "kind must be one of {kinds}, got {kind!r}",
    "list": "Expected a list of measurements.",
    "too_many": "at most {limit} measurements, got {count}",
    "object": "Expected an object with {fields}.",
    "required": "This field is required.",
    "unknown": "Unknown fields: {names}.",
    "number": "Expected a number.",
    "direction": "Expected 'HostToDevice' or 'DeviceToHost'.",
    "bandwidth": "a transfer calibration needs the link's bandwidth in B/s (positive), got {value!r}",
    "idle_power": "the idle power must be a non-negative number of watts, got {value!r}",
}


class CalibrationInputError(ValueError):
    """Measurements that cannot be fitted; `errors` maps field paths to messages."""

    def __init__(self, errors: Mapping[str, Sequence[str]]) -> None:
        self.errors = {path: list(messages) for path, messages in errors.items()}
        super().__init__(
            "; ".join(f"{path}: {' '.join(messages)}" for path, messages in self.errors.items())
        )


@dataclass(frozen=True)
class CalibrationResult:
    """The fitted values (`fit`, JSON-ready) and the attributes that store them."""

    kind: str
    fit: dict[str, Any]
    attributes: list[dict[str, Any]]

    def to_dict(self) -> dict[str, Any]:
        """Return the result as JSON-ready data."""
        return {"kind": self.kind, "fit": self.fit, "attributes": self.attributes}


def _number(value: object) -> float | None:
    if isinstance(value, bool) or not isinstance(value, int | float | str):
        return None
    try:
        number = float(value)
    except (ValueError, OverflowError):
        return None
    return number


def _checked_rows(kind: str, measurements: object) -> list[dict[str, Any]]:
    """Return the measurements as rows of floats (direction kept); raise with field paths."""
    if isinstance(measurements, str | bytes | Mapping) or not isinstance(measurements, Sequence):
        raise CalibrationInputError({"measurements": [CALIBRATE_ERRORS["list"]]})
    if len(measurements) > MAX_MEASUREMENTS:
        message = CALIBRATE_ERRORS["too_many"].format(
            limit=MAX_MEASUREMENTS, count=len(measurements)
        )
        raise CalibrationInputError({"measurements": [message]})
    fields = FIELDS[kind]
    errors: dict[str, list[str]] = {}
    rows: list[dict[str, Any]] = []
    for index, item in enumerate(measurements):
        path = f"measurements[{index}]"
        if not isinstance(item, Mapping):
            errors[path] = [CALIBRATE_ERRORS["object"].format(fields=", ".join(fields))]
            continue
        unknown = sorted(str(name) for name in set(item) - set(fields))
        if unknown:
            errors[path] = [CALIBRATE_ERRORS["unknown"].format(names=", ".join(unknown))]
        row: dict[str, Any] = {}
        for name in fields:
            where = f"{path}.{name}"
            if name not in item:
                errors[where] = [CALIBRATE_ERRORS["required"]]
            elif name == "direction":
                if item[name] not in TRANSFER_ATTRIBUTES:
                    errors[where] = [CALIBRATE_ERRORS["direction"]]
                row[name] = item[name]
            else:
                number = _number(item[name])
                if number is None:
                    errors[where] = [CALIBRATE_ERRORS["number"]]
                elif not math.isfinite(number):
                    message = CALIBRATION_ERRORS["not_finite"]
                    errors[where] = [message.format(what=name, index=index, value=number)]
                elif number < 0 or (number == 0 and name not in ZERO_ALLOWED):
                    message = CALIBRATION_ERRORS["non_positive"]
                    errors[where] = [message.format(what=name, index=index, value=number)]
                row[name] = number
        rows.append(row)
    if errors:
        raise CalibrationInputError(errors)
    return rows


def _fit_quality(measured: np.ndarray, predicted: np.ndarray) -> tuple[list[float], float | None]:
    """Return the residuals (measured - predicted) and r^2 (None when the data do not vary)."""
    residuals = measured - predicted
    spread = float(np.sum((measured - np.mean(measured)) ** 2))
    r2 = 1.0 - float(np.sum(residuals**2)) / spread if spread > 0 else None
    return [float(r) for r in residuals], r2


def _attribute(key: str, value: float, unit: str, source: str) -> dict[str, Any]:
    return {"key": key, "value": value, "unit": unit, "source": source}


def _fit_transfer(
    rows: list[dict[str, Any]], bandwidth: float | None, source: Callable[[int], str]
) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    if bandwidth is None or not math.isfinite(bandwidth) or bandwidth <= 0:
        raise CalibrationInputError(
            {"bandwidth": [CALIBRATE_ERRORS["bandwidth"].format(value=bandwidth)]}
        )
    directions: dict[str, Any] = {}
    attributes: list[dict[str, Any]] = []
    for direction, (startup_key, lambda_key) in TRANSFER_ATTRIBUTES.items():
        side = [row for row in rows if row["direction"] == direction]
        if not side:
            continue
        sizes = np.array([row["bytes"] for row in side])
        times = np.array([row["seconds"] for row in side])
        fit = fit_transfer(sizes=list(sizes), times_s=list(times), bandwidth=bandwidth)
        residuals, r2 = _fit_quality(times, fit.startup_s + sizes / (bandwidth * fit.lambda_c))
        directions[direction] = {
            "startup_s": fit.startup_s,
            "lambda_c": fit.lambda_c,
            "count": len(side),
            "residuals_s": residuals,
            "r2": r2,
        }
        attributes.append(_attribute(startup_key, fit.startup_s, "s", source(len(side))))
        attributes.append(_attribute(lambda_key, fit.lambda_c, "", source(len(side))))
    if not directions:
        message = CALIBRATION_ERRORS["too_few"].format(what="a transfer fit", minimum=2, count=0)
        raise CalibrationError(message)
    return {"bandwidth": bandwidth, "directions": directions}, attributes


def _fit_kernel(
    rows: list[dict[str, Any]], source: Callable[[int], str]
) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    estimated = np.array([row["estimated_s"] for row in rows])
    measured = np.array([row["measured_s"] for row in rows])
    lambda_k = fit_lambda_k(estimated_s=list(estimated), measured_s=list(measured))
    residuals, r2 = _fit_quality(measured, estimated / lambda_k)
    fit = {"lambda_k": lambda_k, "count": len(rows), "residuals_s": residuals, "r2": r2}
    return fit, [_attribute(KERNEL_ATTRIBUTE, lambda_k, "", source(len(rows)))]


def _fit_energy(
    rows: list[dict[str, Any]], idle_power_w: float | None, source: Callable[[int], str]
) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    if idle_power_w is not None and not (math.isfinite(idle_power_w) and idle_power_w >= 0):
        raise CalibrationInputError(
            {"idle_power_w": [CALIBRATE_ERRORS["idle_power"].format(value=idle_power_w)]}
        )
    blocks = np.array([row["blocks"] for row in rows])
    times = np.array([row["seconds"] for row in rows])
    energies = np.array([row["joules"] for row in rows])
    fit = fit_block_energy(
        blocks=list(blocks),
        times_s=list(times),
        energies_j=list(energies),
        static_power_w=idle_power_w,
    )
    predicted = fit.block_energy_j * blocks + fit.static_power_w * times  # (3), measured T
    residuals, r2 = _fit_quality(energies, predicted)
    result = {
        "block_energy_j": fit.block_energy_j,
        "static_power_w": fit.static_power_w,
        "static_power_given": idle_power_w is not None,
        "time_slope_s": fit.slope_s,
        "time_intercept_s": fit.intercept_s,
        "count": len(rows),
        "residuals_j": residuals,
        "r2": r2,
    }
    attributes = [_attribute(BLOCK_ENERGY_ATTRIBUTE, fit.block_energy_j, "J", source(len(rows)))]
    if idle_power_w is None:
        attributes.append(
            _attribute(IDLE_POWER_ATTRIBUTE, fit.static_power_w, "W", source(len(rows)))
        )
    return result, attributes


def calibrate(
    kind: str,
    measurements: object,
    *,
    bandwidth: float | None = None,
    idle_power_w: float | None = None,
    date: str,
    user: str | None = None,
) -> CalibrationResult:
    """Return the fitted parameters of `kind` and the attributes that store them.

    `bandwidth` [B/s] is needed for "transfer"; `idle_power_w`, when given for "energy", fixes
    P_s (003's method) and only E_b is fitted and stored. Raise CalibrationInputError with
    field paths ("measurements[2].seconds", "measurements", "bandwidth") on bad input.
    """
    if kind not in KINDS:
        message = CALIBRATE_ERRORS["kind"].format(kinds=", ".join(KINDS), kind=kind)
        raise CalibrationInputError({"kind": [message]})
    rows = _checked_rows(kind, measurements)

    def source(count: int) -> str:
        if user:
            return SOURCE_BY.format(count=count, date=date, user=user)
        return SOURCE.format(count=count, date=date)

    try:
        if kind == "transfer":
            fit, attributes = _fit_transfer(rows, bandwidth, source)
        elif kind == "kernel":
            fit, attributes = _fit_kernel(rows, source)
        else:
            fit, attributes = _fit_energy(rows, idle_power_w, source)
    except CalibrationError as error:
        raise CalibrationInputError({"measurements": [str(error)]}) from None
    return CalibrationResult(kind=kind, fit=fit, attributes=attributes)


# -- command line ------------------------------------------------------------------------------
