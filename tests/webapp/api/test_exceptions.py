"""The API's one exception handler: service and selector errors as HTTP answers."""

from __future__ import annotations

import pytest
from django.core.exceptions import ValidationError
from rest_framework.exceptions import NotAuthenticated

from hwdb.models import Component
from hwdb.services.calibration import CalibrationPermissionError
from hwdb.services.common import RecordInUseError
from simulator.errors import ModelEvaluationError
from webapp.api.exceptions import exception_handler


def answer(error: Exception) -> tuple[int, object]:
    response = exception_handler(error, {})
    assert response is not None
    return response.status_code, response.data


def test_a_validation_error_with_fields_is_a_400_keyed_by_field() -> None:
    error = ValidationError({"graph": ["Expected an object."], "name": ["Too long."]})
    assert answer(error) == (400, {"graph": ["Expected an object."], "name": ["Too long."]})


def test_a_validation_error_without_a_field_is_a_400_under_non_field_errors() -> None:
    assert answer(ValidationError("Cannot cancel.")) == (
        400,
        {"non_field_errors": ["Cannot cancel."]},
    )


def test_a_record_the_selector_did_not_find_is_a_404_with_its_message() -> None:
    assert answer(Component.DoesNotExist("No component with id '5'.")) == (
        404,
        {"detail": "No component with id '5'."},
    )
    assert answer(Component.DoesNotExist()) == (404, {"detail": "Not found."})


def test_a_record_in_use_is_a_409() -> None:
    assert answer(RecordInUseError("Used by: S.")) == (409, {"detail": "Used by: S."})


def test_storing_calibration_on_a_record_i_cannot_change_is_a_403() -> None:
    assert answer(CalibrationPermissionError("Clone it first.")) == (
        403,
        {"detail": "Clone it first."},
    )


def test_a_model_that_fails_to_evaluate_is_a_400_with_its_line() -> None:
    error = ModelEvaluationError("boom", model="m", function="power", line=3)
    assert answer(error) == (
        400,
        {"detail": "boom", "line": 3, "function": "power", "model": "m"},
    )


def test_drf_exceptions_pass_unchanged() -> None:
    assert answer(NotAuthenticated()) == (
        401,
        {"detail": "Authentication credentials were not provided."},
    )


@pytest.mark.parametrize("error", [RuntimeError("bug"), KeyError("x"), ValueError("x")])
def test_an_unexpected_error_is_left_a_500(error: Exception) -> None:
    assert exception_handler(error, {}) is None
