"""simulator.evaluate: a model function evaluated in the sandbox's child process."""

from __future__ import annotations

import pytest

from simulator.errors import ModelEvaluationError
from simulator.evaluate import (
    EVALUATE_LIMITS,
    application_errors_in_sandbox,
    check_in_sandbox,
    evaluate_in_sandbox,
    evaluate_model,
)
from simulator.sandbox import MSG_WALL

SOURCE = "function p2pTime(size, params) { return size / bandwidth + params.latency; }"


def test_evaluate_model_returns_the_value_of_the_call() -> None:
    result = evaluate_model(
        model_key="link",
        source=SOURCE,
        attributes={"bandwidth": 4.0},
        function="p2pTime",
        args=[8],
        params={"latency": 0.5},
    )
    assert result == {"value": 2.5}


def test_the_child_computes_the_same_value() -> None:
    value = evaluate_in_sandbox(
        model_key="link",
        source=SOURCE,
        attributes={"bandwidth": 4.0},
        function="p2pTime",
        args=[8],
        params={"latency": 0.5},
    )
    assert value == 2.5


def test_a_process_limit_becomes_a_model_error_naming_the_function() -> None:
    limits = EVALUATE_LIMITS.replace(wall_s=0.01)
    with pytest.raises(ModelEvaluationError) as caught:
        evaluate_in_sandbox(
            model_key="link",
            source=SOURCE,
            attributes={"bandwidth": 4.0},
            function="p2pTime",
            args=[8],
            params={"latency": 0.5},
            limits=limits,
        )
    assert caught.value.detail == MSG_WALL.format(limit=0.01)
    assert (caught.value.model, caught.value.function, caught.value.line) == (
        "link",
        "p2pTime",
        None,
    )


def test_check_model_reports_a_syntax_error_with_its_line_but_not_runtime_errors():
    from simulator.evaluate import check_model

    with pytest.raises(ModelEvaluationError) as info:
        check_model(model_key="m", source="function f() {\n  return (;\n}")
    assert (info.value.line, info.value.detail) == (2, "SyntaxError: Unexpected token ';'")
    assert check_model(model_key="m", source="var x = SMs * 2;") == {"ok": True}


def test_the_application_check_returns_every_error_of_the_source_with_its_line() -> None:
    errors = application_errors_in_sandbox(source="_a = 1\nb = 2\nc = _b\n")
    assert [(error.line, error.kind) for error in errors] == [(1, "user_code"), (3, "user_code")]
    assert application_errors_in_sandbox(source="b = 2\n") == []


@pytest.mark.parametrize("line", [1, 2, 10])
def test_a_javascript_syntax_error_is_reported_at_its_own_line(line: int) -> None:
    lines = ["function computationTime(params) {", "  return 1;", "}"] + ["// padding"] * 9
    lines[line - 1] = "var broken = (;"
    with pytest.raises(ModelEvaluationError) as caught:
        check_in_sandbox(model_key="m", source="\n".join(lines) + "\n")
    assert caught.value.line == line
    assert caught.value.detail == "SyntaxError: Unexpected token ';'"
