"""What the compiled JavaScript models share with `simulator.shallow`: `Decline`, the `JsTwin`
interface and how the JavaScript reads its arguments.

A shipped model's fast twin is no longer written by hand nor recognised by a digest of its
source: `simulator.models.js_compiler` compiles every source in its subset (the shipped ones
and the users' edits of them alike), and `shallow.ShallowFunctions` binds it as a `JsTwin`.
A twin answers the plain case and declines (`Decline`) the rest, which V8 then evaluates, so
the errors and their messages stay V8's. An integer is read as the double nearest to it, as
both CPython's `float(int)` and V8's reading of the JSON's digits round.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from decimal import Decimal
from typing import ClassVar

__all__ = ["Decline", "JsTwin", "js_number", "js_params", "json_number"]

# Up to it every integer is a double; above, JSON.stringify writes an integral double's
# shortest digits padded with zeros.
_EXACT_INTEGER = 2**53
_PLAIN = frozenset({float, int, str, bool, type(None)})
_STRING = frozenset({str})


class Decline(Exception):
    """The twin does not answer this call: V8 evaluates it (and reports any error)."""


# --- JavaScript's semantics for what the twins read ----------------------------------------


def js_params(params: Mapping[str, object]) -> Mapping[str, object]:
    """Return `params` as the JavaScript reads them: the JSON it is handed, parsed back.

    Plain dicts of numbers, strings, booleans, None and lists of those are already that (a
    tuple reads as the list it becomes); anything else goes through JSON, and arguments JSON
    refuses are declined (V8's path reports them).
    """
    values = params if isinstance(params, dict) else dict(params)
    if _PLAIN.issuperset(map(type, values.values())) and _STRING.issuperset(map(type, values)):
        return values
    for key, value in values.items():
        plain = type(value) in _PLAIN or (
            isinstance(value, list | tuple) and _PLAIN.issuperset(map(type, value))
        )
        if type(key) is not str or not plain:
            try:
                parsed: dict[str, object] = json.loads(json.dumps(values))
            except (TypeError, ValueError, RecursionError):
                raise Decline from None
            return parsed
    return values


def js_number(value: object) -> float:
    """Return the double JavaScript reads for `value`; decline anything but a number (an int
    beyond the doubles raises OverflowError, an ArithmeticError: V8 answers too)."""
    kind = type(value)
    if kind is float:
        return value  # type: ignore[return-value]
    if kind is int:
        return float(value)  # type: ignore[arg-type]
    raise Decline


def json_number(x: float) -> int | float:
    """Return the number `json.loads(JSON.stringify(x))` gives: an int for an integral double
    below 1e21 (JavaScript writes its shortest digits padded with zeros, no point: the int of
    Python's shortest repr), else the float."""
    if x.is_integer() and -1e21 < x < 1e21:
        return int(x) if -_EXACT_INTEGER <= x <= _EXACT_INTEGER else int(Decimal(repr(x)))
    return x


class JsTwin:
    """A shipped JavaScript model in Python, bound to one hardware record's attributes.

    `shipped` says where the source is: "builtin:<name>" for a model of
    `simulator.models.builtin_models()`, else the path of an example's file from the
    repository root. `defines` names every function the source defines (what V8's `has`
    answers true for); `call` and `detail` answer the functions the twin covers and decline
    the others.
    """

    shipped: ClassVar[str]
    defines: ClassVar[frozenset[str]]

    def __init__(self, attributes: Mapping[str, object]) -> None:
        self.attributes = attributes

    def call(self, function: str, args: tuple[object, ...], params: Mapping[str, object]) -> float:
        """Return `function(*args, params)` as the JavaScript computes it; raise Decline (or an
        ArithmeticError: a division by zero) where V8 must answer."""
        raise Decline

    def detail(self, function: str, params: Mapping[str, object]) -> dict[str, object]:
        """Return `function(params)`'s object as `ShallowFunctions.call_detail` gives it (after
        the JSON hand-over); raise Decline where V8 must answer."""
        raise Decline
