"""What the Python twins' tests compare with V8: a call's outcome."""

from __future__ import annotations

from typing import Any

from simulator.errors import ModelEvaluationError
from simulator.shallow import ShallowFunctions


def outcome(functions: ShallowFunctions, function: str, *args: object, params: Any) -> str:
    """Return what a call gives: the float's repr or the error's message."""
    try:
        return repr(functions.call(function, *args, params=params))
    except ModelEvaluationError as error:
        return f"error: {error}"
