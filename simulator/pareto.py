"""Many objectives over a sweep's points: constraints, and the Pareto front of the feasible.

The one rule the REST table, its CSV and the sweep page's chart read (the page shows the
server's flags):

- a constraint is "<metric> <op> <number>" (op one of <=, <, >=, >), e.g. "gpu_power_w <= 700"
  or "overall_time_s < 7200"; a point is feasible when every constraint holds for it; a point
  that lacks a number for a constrained metric (not run, failed) is not;
- each objective is a metric and a direction, "min" (the default) or "max" (the default for
  `p_success`, where more is better);
- a point is on the front when it is feasible, has a number for every objective and no other
  such point dominates it: is at least as good on every objective and better on one. Equal
  points do not dominate each other, so both stay on the front.
"""

from __future__ import annotations

import math
import operator
import re
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass

__all__ = [
    "DIRECTIONS",
    "PARETO_MESSAGES",
    "Constraint",
    "ObjectiveError",
    "check_direction",
    "check_metric",
    "default_direction",
    "pareto_flags",
    "parse_constraint",
]

DIRECTIONS = ("min", "max")
# Metrics where more is better: their direction unless one is given.
MAXIMISED = frozenset(("p_success",))

OPERATORS: dict[str, Callable[[float, float], bool]] = {
    "<=": operator.le,
    "<": operator.lt,
    ">=": operator.ge,
    ">": operator.gt,
}
_CONSTRAINT = re.compile(r"^\s*([A-Za-z_][\w.]*)\s*(<=|>=|<|>)\s*(\S+)\s*$")

PARETO_MESSAGES = {
    "constraint": (
        'Expected "<metric> <op> <number>" with op one of <=, <, >=, > '
        '(e.g. "gpu_power_w <= 700"), got {text!r}.'
    ),
    "number": "Expected a finite number after {op}, got {text!r}.",
    "metric": "Unknown metric {metric!r}; the sweep has: {known}.",
    "direction": "Expected a direction, min or max, got {value!r}.",
}


class ObjectiveError(ValueError):
    """A bad objective or constraint; `message` says what (the caller names the field)."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


@dataclass(frozen=True)
class Constraint:
    metric: str
    op: str
    value: float

    def holds(self, row: Mapping[str, object]) -> bool:
        number = _number(row.get(self.metric))
        return number is not None and OPERATORS[self.op](number, self.value)

    def __str__(self) -> str:
        return f"{self.metric} {self.op} {self.value:g}"


def _number(value: object) -> float | None:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    number = float(value)
    return number if math.isfinite(number) else None


def default_direction(metric: str) -> str:
    """Return the direction a metric is optimised in unless told: "max" for those where
    more is better, else "min"."""
    return "max" if metric in MAXIMISED else "min"


def check_metric(metric: object, known: Collection[str]) -> str:
    """Return `metric` when it is one of `known`; raise ObjectiveError listing them."""
    if not isinstance(metric, str) or metric not in known:
        raise ObjectiveError(
            PARETO_MESSAGES["metric"].format(metric=metric, known=", ".join(known) or "none")
        )
    return metric


def check_direction(value: object, metric: str) -> str:
    """Return the direction `value` ("min" or "max"; empty or None: the metric's default)."""
    if value in (None, ""):
        return default_direction(metric)
    if value not in DIRECTIONS:
        raise ObjectiveError(PARETO_MESSAGES["direction"].format(value=value))
    return str(value)


def parse_constraint(text: object, known: Collection[str]) -> Constraint:
    """Return the constraint `text` states ("gpu_power_w <= 700") over one of the `known`
    metrics; raise ObjectiveError saying what is wrong."""
    match = _CONSTRAINT.match(text) if isinstance(text, str) else None
    if match is None:
        raise ObjectiveError(PARETO_MESSAGES["constraint"].format(text=text))
    metric, op, number = match.groups()
    check_metric(metric, known)
    try:
        value = float(number)
    except ValueError:
        value = math.nan
    if not math.isfinite(value):
        raise ObjectiveError(PARETO_MESSAGES["number"].format(op=op, text=number))
    return Constraint(metric, op, value)


def pareto_flags(
    rows: Sequence[Mapping[str, object]],
    objectives: Sequence[tuple[str, str]],
    constraints: Sequence[Constraint] = (),
) -> list[tuple[bool, bool]]:
    """Return (feasible, on the front) for each row (module docstring): `objectives` are
    (metric, "min" or "max") pairs, `constraints` what a feasible row satisfies."""
    feasible = [all(c.holds(row) for c in constraints) for row in rows]
    # Each candidate as a vector to minimise: a maximised metric is negated.
    vectors: list[tuple[int, tuple[float, ...]]] = []
    for index, row in enumerate(rows):
        if not feasible[index]:
            continue
        values = [_number(row.get(metric)) for metric, _ in objectives]
        if any(v is None for v in values):
            continue
        vectors.append(
            (
                index,
                tuple(
                    -v if direction == "max" else v
                    for v, (_, direction) in zip(values, objectives, strict=True)
                    if v is not None
                ),
            )
        )
    # Sorted lexicographically, a point can be dominated only by one before it.
    vectors.sort(key=lambda item: item[1])
    if len(objectives) == 2:
        return _flags_of_two(vectors, feasible)
    front: list[tuple[float, ...]] = []
    on_front: set[int] = set()
    for index, vector in vectors:
        dominated = any(
            all(a <= b for a, b in zip(other, vector, strict=True)) and other != vector
            for other in front
        )
        if not dominated:
            front.append(vector)
            on_front.add(index)
    return [(feasible[i], i in on_front) for i in range(len(rows))]


def _flags_of_two(
    vectors: list[tuple[int, tuple[float, ...]]], feasible: list[bool]
) -> list[tuple[bool, bool]]:
    """Return pareto_flags' answer for two objectives from its sorted candidates, in one pass
    (a front as long as the candidates, a 10,000-point study's, would make the general
    comparison with every point of the front quadratic).

    Sorted by the first objective, then the second, a point is dominated exactly when a
    point of the front before it is no worse on the second and differs from it: the front's
    least second value is kept with its vector (two front points sharing it are equal: the
    later would be dominated otherwise), and compared.
    """
    on_front: set[int] = set()
    least: tuple[float, ...] | None = None
    for index, vector in vectors:
        if least is not None and (
            least[1] < vector[1] or (least[1] == vector[1] and least != vector)
        ):
            continue
        on_front.add(index)
        least = vector
    return [(feasible[i], i in on_front) for i in range(len(feasible))]
