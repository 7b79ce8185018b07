"""The one exception handler of the REST API (REST_FRAMEWORK["EXCEPTION_HANDLER"]).

Views call selectors and services and let their errors through; this turns them into HTTP
answers the same way for both apps: a service's ValidationError is a 400 naming the fields,
a record in use a 409, a save from a stale version of a record a 409 carrying the stored
record and the fields changed since (`version_conflict_body`), a record the user cannot see
(a selector's DoesNotExist) a 404, and a model that fails to evaluate a 400 with its line.
DRF's own exceptions pass through DRF's handler. Every text of an error body is bounded
(`simulator.errors.bounded_value`): messages echo what the request sent ("'...' is not a
valid choice."), and a request may send megabytes.
"""

from __future__ import annotations

from typing import Any

from django.core.exceptions import ObjectDoesNotExist
from django.core.exceptions import ValidationError as DjangoValidationError
from rest_framework import status
from rest_framework.exceptions import NotFound, PermissionDenied, ValidationError
from rest_framework.response import Response
from rest_framework.settings import api_settings
from rest_framework.views import exception_handler as drf_exception_handler

from hwdb.services.calibration import CalibrationPermissionError
from hwdb.services.common import RecordInUseError, RecordVersionError
from simulator.errors import ModelEvaluationError, bounded_value


def validation_detail(error: DjangoValidationError) -> dict[str, Any]:
    """Return the field errors of a Django ValidationError; field-less ones under the key
    DRF uses for them ("non_field_errors")."""
    if hasattr(error, "error_dict"):
        return error.message_dict
    return {api_settings.NON_FIELD_ERRORS_KEY: error.messages}


VERSION_CONFLICT = "version_conflict"


def version_conflict_body(exc: RecordVersionError, context: dict[str, Any]) -> dict[str, Any]:
    """Return the 409 body of a stale save: the message, the version the save was made from,
    the stored version, the fields saved since, and the stored record as the view renders it
    (so that the editor can reload it without another request)."""
    view = context.get("view")
    current = view.get_serializer(exc.record).data if view is not None else None
    return {
        "detail": str(exc),
        "code": VERSION_CONFLICT,
        "expected_version": exc.expected,
        "version": exc.record.version,
        "changed": exc.changed,
        "current": current,
    }


def exception_handler(exc: Exception, context: dict[str, Any]) -> Response | None:
    """Return the response for an error a view let through, its texts bounded; None leaves it
    a 500."""
    response = _error_response(exc, context)
    if response is not None and response.data is not None:
        response.data = bounded_value(response.data)
    return response


def _error_response(exc: Exception, context: dict[str, Any]) -> Response | None:
    if isinstance(exc, DjangoValidationError):
        exc = ValidationError(validation_detail(exc))
    elif isinstance(exc, ObjectDoesNotExist):
        # Selectors name the record in the message ("No component with id '5'.").
        exc = NotFound(str(exc) or None)
    elif isinstance(exc, CalibrationPermissionError):
        exc = PermissionDenied(str(exc))
    elif isinstance(exc, RecordInUseError):
        return Response({"detail": str(exc)}, status=status.HTTP_409_CONFLICT)
    elif isinstance(exc, RecordVersionError):
        return Response(version_conflict_body(exc, context), status=status.HTTP_409_CONFLICT)
    elif isinstance(exc, ModelEvaluationError):
        body = {
            "detail": exc.detail,
            "line": exc.line,
            "function": exc.function,
            "model": exc.model,
        }
        return Response(body, status=status.HTTP_400_BAD_REQUEST)
    return drf_exception_handler(exc, context)
