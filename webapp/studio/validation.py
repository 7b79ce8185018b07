"""Checks of launch input that need no database: variable declarations and values, sweep axes.

Every message lives in MESSAGES so that tests and the front end can rely on the wording.
Problems are raised as django.core.exceptions.ValidationError keyed by the field path
("variables.N", "spec.variables.computeIntensity.step"), which the REST layer returns as 400s.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

from django.core.exceptions import ValidationError

from simulator.api import RUNTIME_GLOBALS
from simulator.snapshot import IDENTIFIER
from simulator.sweep import RANGE_MESSAGES, range_count, range_error
from simulator.sweep import axis_values as sweep_axis_values
from webapp.studio.models import VariableType

MAX_VARIABLES = 100
MAX_STRING_VARIABLE = 10_000

MESSAGES = {
    "declarations": "Expected a list of {name, type, default} objects.",
    "declaration": "Expected an object with name, type and default.",
    "variable_name": "Variable names are identifiers (letters, digits and '_', not starting with a digit).",
    "duplicate_variable": "Variable {name!r} is declared twice.",
    "variable_reserved": (
        "{name!r} is a name the application model already has ("
        + ", ".join(sorted(RUNTIME_GLOBALS))
        + "); choose another name."
    ),
    "variable_private": "{name!r} starts with '_', which application models cannot use.",
    "variable_type": "Unknown type {value!r}; expected one of int, float, bool, str.",
    "too_many_variables": f"An application model declares at most {MAX_VARIABLES} variables.",
    "not_int": "Expected a whole number (int), got {value!r}.",
    "not_float": "Expected a finite number (float), got {value!r}.",
    "out_of_range": "{name}: {value} is out of range (not a finite number).",
    "not_bool": "Expected true or false (bool), got {value!r}.",
    "not_str": "Expected a string (str), got {value!r}.",
    "str_too_long": f"Ensure this string has no more than {MAX_STRING_VARIABLE} characters.",
    "not_scalar": "Expected a number, true/false or a string, got {value!r}.",
    "variables_object": "Expected an object mapping variable names to values.",
    "unknown_variable": "Unknown variable {name!r}; the application model declares: {declared}.",
    "labels_object": 'Expected an object mapping labels to process counts, e.g. {"GPU": 1}.',
    "axis": "Expected a value, a list of values or a range {start, stop, step}.",
    "axis_empty": "Expected at least one value.",
    "range_number": RANGE_MESSAGES["number"],
    "range_step": RANGE_MESSAGES["step"],
    "range_order": RANGE_MESSAGES["order"],
    "nul": "Text may not contain NUL (\\x00) characters.",
}


def _error(field: str, message: str) -> ValidationError:
    return ValidationError({field: [message]})


def reject_nul(value: object, *, field: str) -> None:
    """Raise ValidationError naming `field` when a string or key anywhere in `value` holds NUL.

    PostgreSQL's text and jsonb cannot store U+0000, so such input would fail on saving.
    """
    if isinstance(value, str):
        if "\x00" in value:
            raise _error(field, MESSAGES["nul"])
    elif isinstance(value, Mapping):
        for key, item in value.items():
            if isinstance(key, str) and "\x00" in key:
                raise _error(field, MESSAGES["nul"])
            reject_nul(item, field=f"{field}.{key}")
    elif isinstance(value, list | tuple):
        for index, item in enumerate(value):
            reject_nul(item, field=f"{field}[{index}]")


def validate_variable_declarations(value: object) -> list[dict[str, Any]]:
    """Return the declarations in normal form; raise ValidationError naming every bad entry
    (all of them at once, each under its field path)."""
    if not isinstance(value, list):
        raise _error("variables", MESSAGES["declarations"])
    if len(value) > MAX_VARIABLES:
        raise _error("variables", MESSAGES["too_many_variables"])
    declared: list[dict[str, Any]] = []
    errors: dict[str, list[str]] = {}
    names: set[str] = set()
    for index, item in enumerate(value):
        path = f"variables[{index}]"
        try:
            entry = _declaration(item, path, names)
        except ValidationError as error:
            for field, messages in error.message_dict.items():
                errors.setdefault(field, []).extend(messages)
            continue
        declared.append(entry)
    if errors:
        raise ValidationError(errors)
    return declared


def _declaration(item: object, path: str, names: set[str]) -> dict[str, Any]:
    """Return one declaration in normal form, adding its name to `names`; raise
    ValidationError with the errors of its fields (name, type and default together)."""
    if not isinstance(item, dict):
        raise _error(path, MESSAGES["declaration"])
    errors: dict[str, list[str]] = {}
    name = item.get("name")
    name_error = None
    if not isinstance(name, str) or not IDENTIFIER.match(name):
        name_error = MESSAGES["variable_name"]
    elif name in RUNTIME_GLOBALS:
        name_error = MESSAGES["variable_reserved"].format(name=name)
    elif name.startswith("_"):  # the sandbox's guards' names; the model cannot read it
        name_error = MESSAGES["variable_private"].format(name=name)
    elif name in names:
        name_error = MESSAGES["duplicate_variable"].format(name=name)
    if name_error:
        errors[f"{path}.name"] = [name_error]
    else:
        names.add(str(name))
    kind = item.get("type")
    default: object = None
    if kind not in VariableType.values:
        errors[f"{path}.type"] = [MESSAGES["variable_type"].format(value=kind)]
    else:
        try:
            default = coerce_variable(
                str(kind),
                item.get("default"),
                field=f"{path}.default",
                name=name if isinstance(name, str) else "",
            )
        except ValidationError as error:
            errors.update(error.message_dict)
    entry = {"name": name, "type": kind, "default": default}
    if isinstance(item.get("description"), str):
        try:
            reject_nul(item["description"], field=f"{path}.description")
        except ValidationError as error:
            errors.update(error.message_dict)
        entry["description"] = item["description"]
    if errors:
        raise ValidationError(errors)
    return entry


def _out_of_range(kind: str, value: object) -> bool:
    """Return whether `value` is a number, or text reading as one, beyond the float range
    (1e400 typed in a form: JSON would turn it into null on the way)."""
    if isinstance(value, str):
        try:
            number = float(value)
        except ValueError:
            return False
        return not math.isfinite(number) and not math.isnan(number)
    if isinstance(value, float):
        return not math.isfinite(value)
    # A whole number of any size is an int; as a float it must fit the float range.
    if kind != VariableType.FLOAT or isinstance(value, bool) or not isinstance(value, int):
        return False
    return not -(2**1024) < value < 2**1024


def coerce_variable(kind: str, value: object, *, field: str, name: str = "") -> object:
    """Return `value` as a variable of type `kind` (an int is a float too); raise otherwise.

    `name` (the variable's) names it in the message of a number out of range.
    """
    if kind in (VariableType.INT, VariableType.FLOAT) and _out_of_range(kind, value):
        shown = value if isinstance(value, str) else repr(value)
        raise _error(field, MESSAGES["out_of_range"].format(name=name or field, value=shown))
    if kind == VariableType.INT:
        if isinstance(value, bool) or not isinstance(value, int):
            raise _error(field, MESSAGES["not_int"].format(value=value))
        return value
    if kind == VariableType.FLOAT:
        if isinstance(value, bool) or not isinstance(value, int | float):
            raise _error(field, MESSAGES["not_float"].format(value=value))
        try:
            number = float(value)
        except OverflowError as error:  # an int beyond the float range
            raise _error(field, MESSAGES["not_float"].format(value=value)) from error
        if not math.isfinite(number):
            raise _error(field, MESSAGES["not_float"].format(value=value))
        return number
    if kind == VariableType.BOOL:
        if not isinstance(value, bool):
            raise _error(field, MESSAGES["not_bool"].format(value=value))
        return value
    if not isinstance(value, str):
        raise _error(field, MESSAGES["not_str"].format(value=value))
    if len(value) > MAX_STRING_VARIABLE:
        raise _error(field, MESSAGES["str_too_long"])
    reject_nul(value, field=field)
    return value


def resolve_variables(
    declared: list[dict[str, Any]] | None, given: object, *, field: str = "variables"
) -> dict[str, object]:
    """Return the launch's variables: declared defaults overridden by `given`, each type-checked.

    With no declarations (a bare application source) any scalar JSON value is accepted.
    """
    if given is None:
        given = {}
    if not isinstance(given, Mapping):
        raise _error(field, MESSAGES["variables_object"])
    if declared is None:
        values: dict[str, object] = {}
        for name, value in given.items():
            if not isinstance(name, str) or not IDENTIFIER.match(name):
                raise _error(f"{field}.{name}", MESSAGES["variable_name"])
            if isinstance(value, float) and not math.isfinite(value):
                message = MESSAGES["out_of_range"].format(name=name, value=repr(value))
                raise _error(f"{field}.{name}", message)
            if not isinstance(value, int | float | bool | str):
                raise _error(f"{field}.{name}", MESSAGES["not_scalar"].format(value=value))
            reject_nul(value, field=f"{field}.{name}")
            values[name] = value
        return values
    by_name = {item["name"]: item for item in declared}
    for name in given:
        if name not in by_name:
            names = ", ".join(by_name) or "none"
            raise _error(
                f"{field}.{name}", MESSAGES["unknown_variable"].format(name=name, declared=names)
            )
    return {
        name: coerce_variable(
            item["type"], given.get(name, item["default"]), field=f"{field}.{name}", name=name
        )
        for name, item in by_name.items()
    }


def axis_size(axis: object, *, field: str) -> int:
    """Return how many values a sweep axis holds (without listing them); raise if malformed.

    An axis is a single value, a non-empty list, or a range {start, stop, step} running from
    start to stop inclusive (a stop that the steps miss is not reached).
    """
    if isinstance(axis, list):
        if not axis:
            raise _error(field, MESSAGES["axis_empty"])
        return len(axis)
    if isinstance(axis, dict):
        fault = range_error(axis.get("start"), axis.get("stop"), axis.get("step"))
        if fault is not None and fault[1] == RANGE_MESSAGES["number"]:
            raise _error(f"{field}.{fault[0]}", fault[1])
        if set(axis) - {"start", "stop", "step"}:
            raise _error(field, MESSAGES["axis"])
        if fault is not None:
            raise _error(f"{field}.{fault[0]}", fault[1])
        # The count the points will have (simulator.sweep: the CLI's rule too).
        return range_count(axis["start"], axis["stop"], axis["step"])
    if isinstance(axis, int | float | str | bool):
        return 1
    raise _error(field, MESSAGES["axis"])


def axis_values(axis: object) -> list[object]:
    """Return the values of an axis already checked by `axis_size` (simulator.sweep's rule,
    the CLI's too)."""
    return sweep_axis_values(axis)
