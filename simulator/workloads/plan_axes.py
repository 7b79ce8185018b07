"""Parallel-plan axes: a training sweep over the plan's fields (docs/workloads.md "Plan
sweeps"), one rule for `python -m simulator workload train --axis tp=1,2,4` and REST
(`POST /api/workloads/sweep/`).

An axis names a field of ParallelPlan (`tp`, `pp`, `cp`, `ep`, `vp`, `mbs`, `gbs`, `seq`,
`gpus`; `data_parallel` ddp|zero1|fsdp; `recompute` none|selective|full; `precision`), the
cluster template `system` (dgx-h100, dgx-h200, dgx-b200, ...) or
`dp`: the data-parallel degree, the point's GPUs being dp x tp x pp x cp (so `dp` and `gpus`
cannot both be axes). Names and values are checked before any point is made (simulator.sweep's
AxisError, naming the axis and the value's index); the points are the product of the axes,
the last varying fastest (simulator.sweep.sweep_points), counted against the sweep cap. A
point whose plan cannot run (a divisibility rule of ParallelPlan.check, or memory) stays in
the sweep, marked invalid with its reason and the field it names (`plan_error_field`).
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

from simulator.sweep import AxisError, sweep_points
from simulator.workloads.cluster import TEMPLATES

INTEGER_AXES = ("gpus", "dp", "tp", "pp", "cp", "ep", "vp", "mbs", "gbs", "seq")
CHOICE_AXES: dict[str, tuple[str, ...]] = {
    "data_parallel": ("ddp", "zero1", "fsdp"),
    "recompute": ("none", "selective", "full"),
    "precision": ("bf16", "fp8"),
    # the cluster template, its GPU with it: H100 vs H200 vs B200 in one sweep
    "system": tuple(TEMPLATES),
}
PLAN_AXES = (*INTEGER_AXES, *CHOICE_AXES)

MESSAGES = {
    "name": "Unknown plan axis {name!r}; expected one of {known}.",
    "empty": "An axis needs at least one value.",
    "integer": "{name} is a whole number of at least 1, got {value!r}.",
    "choice": "{name} is one of {choices}, got {value!r}.",
    "dp_gpus": "dp and gpus cannot both be axes: the GPUs are dp x tp x pp x cp.",
}
_FIELD = re.compile(r"^([a-z_]+)[ :]")
# A reason's first word names the field it breaks, as ParallelPlan.check words them; these
# reasons name it otherwise.
_REASON_FIELDS = {"layers": "pp", "interleaving": "vp", "system": "system"}


def parse_plan_axes(
    axes: Mapping[str, Sequence[object]], *, field: str = "axes"
) -> dict[str, list[object]]:
    """Return the checked plan axes (name -> values); raise AxisError naming the first bad
    one (`field`.name, with [index] for a bad value)."""
    checked: dict[str, list[object]] = {}
    for name, raw in axes.items():
        path = f"{field}.{name}"
        if name not in PLAN_AXES:
            raise AxisError(path, MESSAGES["name"].format(name=name, known=", ".join(PLAN_AXES)))
        values = list(raw)
        if not values:
            raise AxisError(path, MESSAGES["empty"])
        for index, value in enumerate(values):
            if name in CHOICE_AXES:
                if value not in CHOICE_AXES[name]:
                    choices = ", ".join(CHOICE_AXES[name])
                    message = MESSAGES["choice"].format(name=name, choices=choices, value=value)
                    raise AxisError(f"{path}[{index}]", message)
            elif isinstance(value, bool) or not isinstance(value, int) or value < 1:
                message = MESSAGES["integer"].format(name=name, value=value)
                raise AxisError(f"{path}[{index}]", message)
        checked[name] = values
    if "dp" in checked and "gpus" in checked:
        raise AxisError(f"{field}.dp", MESSAGES["dp_gpus"])
    return checked


def plan_points(
    base: Mapping[str, Any], axes: Mapping[str, Sequence[object]]
) -> list[tuple[dict[str, object], dict[str, Any]]]:
    """Return (point, the plan's fields) per point of the product of `axes` over the fields
    `base` (ParallelPlan's keywords): a `dp` value sets the GPUs to dp x tp x pp x cp."""
    result = []
    for point in sweep_points(axes):
        fields = {**base, **point}
        dp = fields.pop("dp", None)
        if dp is not None:
            fields["gpus"] = int(dp) * int(fields.get("tp", 1)) * int(fields.get("pp", 1))
            fields["gpus"] *= int(fields.get("cp", 1))
        result.append((point, fields))
    return result


def plan_error_field(reason: str) -> str:
    """Return the field a plan's refusal names: its first word where that is a plan field,
    `memory` for a plan that does not fit, else `plan`."""
    match = _FIELD.match(reason)
    word = match.group(1) if match else ""
    if word in PLAN_AXES:
        return word
    if reason.startswith("the plan needs"):
        return "memory"
    return _REASON_FIELDS.get(word, "plan")
