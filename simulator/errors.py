"""Errors the simulator reports to its callers (CLI, web side), each with a clear message.

Every error carries enough to point at the culprit: a snapshot field path, a line of the
user's application model, or a computational model with its function and line. `to_dict`
gives the JSON form stored with a failed run and shown by the REST API.

Every text an error carries is bounded here, once, whatever produced it (a Python exception,
a simulation-API call echoing its argument, a JavaScript exception): a model that raises or
passes a 30 MB string must not store a 30 MB error that every page showing the run repeats.
`bounded_text` cuts one text, `bounded_value` a whole JSON value (the web side applies it to
every error it stores).
"""

from __future__ import annotations

import math
import sys

TYPE_CHECKING = False  # not `typing` (the command line's start-up); mypy reads the name
if TYPE_CHECKING:
    from typing import Any


# The most characters of one user-supplied text an error keeps (a detail, an echoed value,
# a name); a whole message, which wraps a few of them in words of its own, keeps at most
# MESSAGE_PARTS of them. The one limit of every stored or shown error message.
MESSAGE_LIMIT_CHARS = 1000
MESSAGE_PARTS = 4
# The most entries an error's mapping or list keeps (a snapshot's field paths, a deadlock's
# waiting processes); the rest are counted.
ERROR_LIMIT_ITEMS = 100
CUT_MARK = " [... {count} more characters]"
MORE_ITEMS = "[... {count} more]"


def bounded_text(text: str, limit: int = MESSAGE_LIMIT_CHARS) -> str:
    """Return `text` cut to at most `limit` characters, the cut marked with the count left out
    (a text cut once is not cut again)."""
    if len(text) <= limit:
        return text
    kept = max(limit - len(CUT_MARK.format(count=len(text))), 0)
    return text[:kept] + CUT_MARK.format(count=len(text) - kept)


def bounded_value(value: Any, limit: int = MESSAGE_LIMIT_CHARS * MESSAGE_PARTS) -> Any:
    """Return a JSON value with every text cut to `limit` characters and every mapping and list
    to ERROR_LIMIT_ITEMS entries, the last of them then counting those left out (a value bounded
    once is not cut again)."""
    if isinstance(value, str):
        return bounded_text(value, limit)
    if isinstance(value, dict):
        items = list(value.items())
        shown = items if len(items) <= ERROR_LIMIT_ITEMS else items[: ERROR_LIMIT_ITEMS - 1]
        kept = {
            bounded_text(str(key), MESSAGE_LIMIT_CHARS): bounded_value(item, limit)
            for key, item in shown
        }
        if len(shown) < len(items):
            kept[MORE_ITEMS.format(count=len(items) - len(shown))] = ""
        return kept
    if isinstance(value, list | tuple):
        shown_items = value if len(value) <= ERROR_LIMIT_ITEMS else value[: ERROR_LIMIT_ITEMS - 1]
        kept_list = [bounded_value(item, limit) for item in shown_items]
        if len(shown_items) < len(value):
            kept_list.append(MORE_ITEMS.format(count=len(value) - len(shown_items)))
        return kept_list
    return value


def _bounded_name(name: str | None) -> str | None:
    return None if name is None else bounded_text(str(name))


class SimulationError(Exception):
    """Base class of every error the simulator raises on purpose; its message is bounded."""

    kind = "simulation"

    def __init__(self, message: str) -> None:
        message = bounded_text(str(message), MESSAGE_LIMIT_CHARS * MESSAGE_PARTS)
        super().__init__(message)
        self.message = message

    def to_dict(self) -> dict[str, Any]:
        """Return the JSON-serialisable form: kind, message and any locating fields."""
        return {"kind": self.kind, "message": self.message}


class SnapshotError(SimulationError):
    """The system snapshot is invalid; `errors` maps field paths to messages."""

    kind = "snapshot"

    def __init__(self, errors: dict[str, list[str]]) -> None:
        self.errors = bounded_value(errors, MESSAGE_LIMIT_CHARS)
        errors = self.errors
        lines = [f"{path}: {msg}" for path, msgs in errors.items() for msg in msgs]
        super().__init__("invalid system snapshot:\n  " + "\n  ".join(lines))

    def to_dict(self) -> dict[str, Any]:
        return {**super().to_dict(), "errors": self.errors}


class LaunchError(SimulationError):
    """The launch parameters (labels, variables) do not fit the system or application."""

    kind = "launch"

    def __init__(self, field: str, message: str) -> None:
        self.field = bounded_text(str(field))
        super().__init__(f"{self.field}: {bounded_text(str(message))}")

    def to_dict(self) -> dict[str, Any]:
        return {**super().to_dict(), "field": self.field}


class UserCodeError(SimulationError):
    """The application model failed: syntax error, runtime error or forbidden operation."""

    kind = "user_code"

    def __init__(
        self, message: str, *, line: int | None = None, process: str | None = None
    ) -> None:
        self.detail = message = bounded_text(str(message))
        self.line = line
        self.process = process = _bounded_name(process)
        where = f"line {line}: " if line is not None else ""
        who = f" (process {process})" if process else ""
        super().__init__(f"application model, {where}{message}{who}")

    def to_dict(self) -> dict[str, Any]:
        return {
            **super().to_dict(),
            "detail": self.detail,
            "line": self.line,
            "process": self.process,
        }


class ModelEvaluationError(SimulationError):
    """A computational model (JavaScript shallow function) failed or returned a bad value."""

    kind = "model"

    def __init__(self, message: str, *, model: str, function: str, line: int | None = None) -> None:
        self.detail = message = bounded_text(str(message))
        self.model = model = bounded_text(str(model))
        self.function = function = bounded_text(str(function))
        self.line = line
        where = f", line {line}" if line is not None else ""
        super().__init__(f"computational model {model!r}, function {function}(){where}: {message}")

    def to_dict(self) -> dict[str, Any]:
        return {
            **super().to_dict(),
            "detail": self.detail,
            "model": self.model,
            "function": self.function,
            "line": self.line,
        }


MSG_NOT_NUMBER = "returned {value}, expected a number"
MSG_NOT_FINITE = "returned {value}, expected a finite number"
MSG_NEGATIVE = "returned {value}, expected a non-negative number"


def model_seconds(value: object) -> float:
    """Return a model function's `value` as seconds when it is a finite number >= 0 (a bool
    is not a number); else raise ValueError saying, in the model's terms (undefined, NaN,
    Infinity), what it returned. The one rule of a model's times: simulator.shallow checks
    each value it evaluates with it, once, and a ModelEvaluationError carries its message;
    whatever answers `ModelFunctions.call` (simulator.platform) answers times it passed."""
    if type(value) is float and 0.0 <= value <= sys.float_info.max:  # NaN fails both
        return value
    if isinstance(value, bool) or not isinstance(value, int | float):
        shown = "undefined" if type(value).__name__ == "JSUndefinedType" else repr(value)
        raise ValueError(MSG_NOT_NUMBER.format(value=shown))
    number = float(value)
    if not math.isfinite(number):
        shown = "NaN" if math.isnan(number) else ("Infinity" if number > 0 else "-Infinity")
        raise ValueError(MSG_NOT_FINITE.format(value=shown))
    if number < 0:
        raise ValueError(MSG_NEGATIVE.format(value=value))
    return number


class DeadlockError(SimulationError):
    """Every remaining process is blocked; `waiting` maps each process to what it waits for."""

    kind = "deadlock"

    def __init__(self, waiting: dict[str, str], now: float) -> None:
        self.waiting = waiting = bounded_value(waiting, MESSAGE_LIMIT_CHARS)
        self.now = now
        lines = [f"{proc} waits for {what}" if what else proc for proc, what in waiting.items()]
        super().__init__(
            f"deadlock at t={now:.9g} s: every remaining process is blocked:\n  "
            + "\n  ".join(lines)
        )

    def to_dict(self) -> dict[str, Any]:
        return {**super().to_dict(), "waiting": self.waiting, "time_s": self.now}


class SandboxLimitError(SimulationError):
    """The sandboxed run hit a limit: CPU time, wall clock, memory, output size, processes."""

    kind = "limit"

    def __init__(self, limit: str, message: str) -> None:
        self.limit = bounded_text(str(limit))
        self.detail = message = bounded_text(str(message))
        super().__init__(message)

    def to_dict(self) -> dict[str, Any]:
        return {**super().to_dict(), "limit": self.limit}


class SandboxCrashError(SimulationError):
    """The sandboxed simulation process ended without a result and without hitting a limit.

    `signal` names the signal that killed it ("SIGSEGV"), or is None when it exited on its
    own; `exit_status` is the exit status then. The message says what the user can do.
    """

    kind = "crash"

    def __init__(
        self, message: str, *, signal: str | None = None, exit_status: int | None = None
    ) -> None:
        self.signal = _bounded_name(signal)
        self.exit_status = exit_status
        super().__init__(message)

    def to_dict(self) -> dict[str, Any]:
        return {**super().to_dict(), "signal": self.signal, "exit_status": self.exit_status}


def error_from_dict(data: dict[str, Any]) -> SimulationError:
    """Rebuild an error sent across a process boundary by `SimulationError.to_dict`."""
    kind = data.get("kind")
    message = str(data.get("message", "unknown error"))
    if kind == "snapshot":
        return SnapshotError(dict(data.get("errors") or {"snapshot": [message]}))
    if kind == "launch":
        field = str(data.get("field", "launch"))
        prefix = f"{field}: "
        return LaunchError(field, message[len(prefix) :] if message.startswith(prefix) else message)
    if kind == "deadlock":
        return DeadlockError(dict(data.get("waiting") or {}), float(data.get("time_s", 0.0)))
    if kind == "limit":
        return SandboxLimitError(str(data.get("limit", "unknown")), message)
    if kind == "crash":
        signal, status = data.get("signal"), data.get("exit_status")
        return SandboxCrashError(
            message,
            signal=str(signal) if signal is not None else None,
            exit_status=int(status) if status is not None else None,
        )
    detail = str(data.get("detail", message))
    line = data.get("line")
    if kind == "user_code":
        return UserCodeError(detail, line=line, process=data.get("process"))
    if kind == "model":
        return ModelEvaluationError(
            detail, model=str(data.get("model")), function=str(data.get("function")), line=line
        )
    return SimulationError(message)
