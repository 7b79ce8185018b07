"""Sweeps: axes of values, their points, and hardware swapped into a node of the snapshot.

One rule set for the CLI (`python -m simulator sweep`) and the web side (a sweep launched
through REST), so both run the same points for the same axes. An axis is a single value, a
list of values, or an inclusive range {start, stop, step}: from start to stop, `stop`
included when the steps reach it within a millionth of a step (`RANGE_TOLERANCE`, so that
0.1-steps do not lose their last point to float drift); a stop the steps miss is not
reached. A range of integers gives integers, computed exactly; any float in it gives floats
rounded to 12 significant digits (`SIGNIFICANT_DIGITS`: 0.1-steps give 0.3, not
0.30000000000000004).
"""

from __future__ import annotations

import copy
import itertools
import math
from collections.abc import Mapping, Sequence
from fractions import Fraction
from typing import Any

__all__ = [
    "RANGE_MESSAGES",
    "RANGE_TOLERANCE",
    "SIGNIFICANT_DIGITS",
    "axis_values",
    "range_count",
    "range_error",
    "range_values",
    "swap_hardware",
    "swap_model",
    "sweep_points",
]

RANGE_TOLERANCE = 1e-6  # of a step
SIGNIFICANT_DIGITS = 12

Number = int | float

RANGE_MESSAGES = {
    "number": "Expected a finite number.",
    "step": "The step must be above 0.",
    "order": "The stop must not be below the start.",
}


def range_error(start: object, stop: object, step: object) -> tuple[str, str] | None:
    """Return (the part at fault: "start", "stop" or "step", its message) when these do not
    make a range, else None: each a finite number (not a bool), step above 0, stop not
    below start."""
    parts = {"start": start, "stop": stop, "step": step}
    for name, value in parts.items():
        if isinstance(value, bool) or not isinstance(value, int | float):
            return name, RANGE_MESSAGES["number"]
        if isinstance(value, float) and not math.isfinite(value):
            return name, RANGE_MESSAGES["number"]
    assert isinstance(start, int | float) and isinstance(stop, int | float)
    assert isinstance(step, int | float)
    if step <= 0:
        return "step", RANGE_MESSAGES["step"]
    if stop < start:
        return "stop", RANGE_MESSAGES["order"]
    return None


def range_count(start: Number, stop: Number, step: Number) -> int:
    """Return how many values the inclusive range holds (0 when stop is below start).

    `step` must be above 0. Beyond the float range (1e308 / 1e-308) the count is exact.
    """
    if stop < start:
        return 0
    try:
        steps = (stop - start) / step
    except OverflowError:  # integers beyond the float range
        steps = math.inf
    if math.isfinite(steps):
        return math.floor(steps + RANGE_TOLERANCE) + 1
    return math.floor((Fraction(stop) - Fraction(start)) / Fraction(step)) + 1


def range_values(start: Number, stop: Number, step: Number) -> list[Number]:
    """Return the values of the inclusive range start..stop by `step` (above 0)."""
    count = range_count(start, stop, step)
    if all(isinstance(value, int) for value in (start, stop, step)):
        return [start + index * step for index in range(count)]
    # The tolerance lets the last step land a hair beyond stop: it is stop.
    return [
        float(f"{min(start + index * step, stop):.{SIGNIFICANT_DIGITS}g}") for index in range(count)
    ]


def axis_values(axis: object) -> list[object]:
    """Return the values of an axis: a list (as is), a range {start, stop, step} (already
    checked: numbers, step above 0), or a single value."""
    if isinstance(axis, list):
        return list(axis)
    if isinstance(axis, Mapping):
        return list(range_values(axis["start"], axis["stop"], axis["step"]))
    return [axis]


def sweep_points(axes: Mapping[str, Sequence[object]]) -> list[dict[str, object]]:
    """Return the points of the product of `axes` (name -> values), the last axis varying
    fastest, each point mapping every axis's name to its value."""
    names = list(axes)
    return [
        dict(zip(names, values, strict=True))
        for values in itertools.product(*(axes[name] for name in names))
    ]


def swap_hardware(
    snapshot: Mapping[str, Any], node_id: str, record: Mapping[str, Any], *, key: str
) -> dict[str, Any]:
    """Return a copy of `snapshot` whose node `node_id` uses the hardware `record`, stored
    in the snapshot's hardware under `key` (the snapshot itself is left unchanged).

    A node named after its hardware (the system editor names a new node so) or not named
    takes the new record's name, so that results and charts name the hardware the point ran
    on, not the one it replaced; a name of the user's own choosing is kept.
    """
    variant: dict[str, Any] = copy.deepcopy(dict(snapshot))
    hardware = variant["hardware"]
    for node in variant["nodes"]:
        if node.get("id") == node_id:
            replaced = hardware.get(node.get("hardware"))
            replaced_name = replaced.get("name") if isinstance(replaced, Mapping) else None
            if not node.get("name") or node.get("name") == replaced_name:
                node["name"] = record.get("name") or node.get("name", "")
            node["hardware"] = key
    hardware[key] = copy.deepcopy(dict(record))
    return variant


def swap_model(
    snapshot: Mapping[str, Any], node_id: str, record: Mapping[str, Any], *, key: str
) -> dict[str, Any]:
    """Return a copy of `snapshot` whose node `node_id` runs the computational model
    `record`, stored in the snapshot's models under `key` (the snapshot is left unchanged;
    the model it replaces stays, for the other nodes that may use it)."""
    variant: dict[str, Any] = copy.deepcopy(dict(snapshot))
    for node in variant["nodes"]:
        if node.get("id") == node_id:
            node["model"] = key
    variant.setdefault("models", {})[key] = copy.deepcopy(dict(record))
    return variant
