"""Tests of the database-free launch checks: variable declarations, values and sweep axes."""

from __future__ import annotations

import pytest
from django.core.exceptions import ValidationError

from webapp.studio.validation import (
    MESSAGES,
    axis_size,
    axis_values,
    resolve_variables,
    validate_variable_declarations,
)

DECLARED = [
    {"name": "N", "type": "int", "default": 10},
    {"name": "computeIntensity", "type": "float", "default": 32.0},
    {"name": "verbose", "type": "bool", "default": False},
    {"name": "mode", "type": "str", "default": "fast"},
]


def field_messages(error: pytest.ExceptionInfo[ValidationError]) -> dict[str, list[str]]:
    return error.value.message_dict


def test_it_normalises_declarations_and_turns_int_defaults_of_floats_into_floats() -> None:
    declared = validate_variable_declarations(
        [{"name": "x", "type": "float", "default": 2}, {"name": "n", "type": "int", "default": 1}]
    )
    assert declared == [
        {"name": "x", "type": "float", "default": 2.0},
        {"name": "n", "type": "int", "default": 1},
    ]
    assert isinstance(declared[0]["default"], float)


@pytest.mark.parametrize(
    ("declarations", "field", "message"),
    [
        ("N", "variables", MESSAGES["declarations"]),
        (
            [{"name": "1x", "type": "int", "default": 1}],
            "variables[0].name",
            MESSAGES["variable_name"],
        ),
        (
            [{"name": "x", "type": "complex", "default": 1}],
            "variables[0].type",
            MESSAGES["variable_type"].format(value="complex"),
        ),
        (
            [{"name": "x", "type": "int", "default": 1.5}],
            "variables[0].default",
            MESSAGES["not_int"].format(value=1.5),
        ),
        (
            [
                {"name": "x", "type": "int", "default": 1},
                {"name": "x", "type": "int", "default": 2},
            ],
            "variables[1].name",
            MESSAGES["duplicate_variable"].format(name="x"),
        ),
    ],
)
def test_it_rejects_bad_declarations_naming_the_entry(
    declarations: object, field: str, message: str
) -> None:
    with pytest.raises(ValidationError) as error:
        validate_variable_declarations(declarations)
    assert field_messages(error) == {field: [message]}


@pytest.mark.parametrize("name", ["tag", "sim", "rank", "labels", "ConstVar", "HashMap"])
def test_it_refuses_variable_names_the_runtime_binds(name: str) -> None:
    with pytest.raises(ValidationError) as error:
        validate_variable_declarations([{"name": name, "type": "int", "default": 1}])
    assert field_messages(error) == {
        "variables[0].name": [MESSAGES["variable_reserved"].format(name=name)]
    }
    assert f"{name!r} is a name the application model already has" in str(error.value)


def test_it_refuses_variable_names_starting_with_an_underscore() -> None:
    with pytest.raises(ValidationError) as error:
        validate_variable_declarations([{"name": "_n", "type": "int", "default": 1}])
    assert list(field_messages(error)) == ["variables[0].name"]


def test_it_reports_every_bad_declaration_at_once() -> None:
    declarations = [
        {"name": "sim", "type": "int", "default": 1},
        {"name": "ok", "type": "int", "default": 1},
        {"name": "2x", "type": "complex", "default": 1},
        {"name": "n", "type": "int", "default": "a"},
    ]
    with pytest.raises(ValidationError) as error:
        validate_variable_declarations(declarations)
    assert list(field_messages(error)) == [
        "variables[0].name",
        "variables[2].name",
        "variables[2].type",
        "variables[3].default",
    ]


@pytest.mark.parametrize(
    ("kind", "value"), [("float", "1e400"), ("int", "1e400"), ("float", 1e400)]
)
def test_a_number_beyond_the_float_range_is_out_of_range_naming_the_variable(
    kind: str, value: object
) -> None:
    with pytest.raises(ValidationError) as error:
        validate_variable_declarations([{"name": "N", "type": kind, "default": value}])
    shown = "1e400" if isinstance(value, str) else "inf"
    assert field_messages(error) == {
        "variables[0].default": [f"N: {shown} is out of range (not a finite number)."]
    }
    with pytest.raises(ValidationError) as error:
        resolve_variables(DECLARED, {"computeIntensity": "1e400"})
    assert field_messages(error) == {
        "variables.computeIntensity": [
            "computeIntensity: 1e400 is out of range (not a finite number)."
        ]
    }


def test_it_fills_defaults_and_checks_given_values_by_type() -> None:
    values = resolve_variables(DECLARED, {"N": 5, "computeIntensity": 8})
    assert values == {"N": 5, "computeIntensity": 8.0, "verbose": False, "mode": "fast"}


@pytest.mark.parametrize(
    ("given", "field", "message"),
    [
        ({"N": 2.5}, "variables.N", MESSAGES["not_int"].format(value=2.5)),
        ({"N": True}, "variables.N", MESSAGES["not_int"].format(value=True)),
        (
            {"computeIntensity": "x"},
            "variables.computeIntensity",
            MESSAGES["not_float"].format(value="x"),
        ),
        ({"verbose": 1}, "variables.verbose", MESSAGES["not_bool"].format(value=1)),
        ({"mode": 3}, "variables.mode", MESSAGES["not_str"].format(value=3)),
        (
            {"size": 1},
            "variables.size",
            MESSAGES["unknown_variable"].format(
                name="size", declared="N, computeIntensity, verbose, mode"
            ),
        ),
        ([1, 2], "variables", MESSAGES["variables_object"]),
    ],
)
def test_it_rejects_values_that_do_not_fit_the_declarations(
    given: object, field: str, message: str
) -> None:
    with pytest.raises(ValidationError) as error:
        resolve_variables(DECLARED, given)
    assert field_messages(error) == {field: [message]}


def test_it_accepts_any_scalar_without_declarations_but_not_lists() -> None:
    assert resolve_variables(None, {"a": 1, "b": "x"}) == {"a": 1, "b": "x"}
    with pytest.raises(ValidationError) as error:
        resolve_variables(None, {"a": [1]})
    assert field_messages(error) == {"variables.a": [MESSAGES["not_scalar"].format(value=[1])]}


def test_a_range_runs_from_start_to_stop_inclusive() -> None:
    axis = {"start": 1, "stop": 64, "step": 9}
    assert axis_size(axis, field="x") == 8
    assert axis_values(axis) == [1, 10, 19, 28, 37, 46, 55, 64]


def test_a_float_range_keeps_its_last_point_despite_rounding() -> None:
    axis = {"start": 0.1, "stop": 0.5, "step": 0.1}
    assert axis_values(axis) == [0.1, 0.2, 0.3, 0.4, 0.5]


def test_lists_and_single_values_are_axes_too() -> None:
    assert axis_size([1, 2, 3], field="x") == 3
    assert axis_values("fast") == ["fast"]


@pytest.mark.parametrize(
    ("axis", "field", "message"),
    [
        ([], "v", MESSAGES["axis_empty"]),
        ({"start": 1, "stop": 5, "step": 0}, "v.step", MESSAGES["range_step"]),
        ({"start": 5, "stop": 1, "step": 1}, "v.stop", MESSAGES["range_order"]),
        ({"start": 1, "stop": "x", "step": 1}, "v.stop", MESSAGES["range_number"]),
        ({"a": 1}, "v.start", MESSAGES["range_number"]),
    ],
)
def test_it_rejects_malformed_axes(axis: object, field: str, message: str) -> None:
    with pytest.raises(ValidationError) as error:
        axis_size(axis, field="v")
    assert field_messages(error) == {field: [message]}


def test_a_huge_range_is_counted_without_being_listed() -> None:
    assert axis_size({"start": 0, "stop": 10**12, "step": 1}, field="v") == 10**12 + 1
