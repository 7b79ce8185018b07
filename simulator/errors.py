"""Errors the simulator reports to its callers (CLI, web side), each with a clear message.

Every error carries enough to point at the culprit: a snapshot field path, a line of the
user's application model, or a computational model with its function and line. `to_dict`
gives the JSON form stored with a failed run and shown by the REST API.
"""

from __future__ import annotations

TYPE_CHECKING = False  # not `typing` (the command line's start-up); mypy reads the name
if TYPE_CHECKING:
    from typing import Any


class SimulationError(Exception):
    """Base class of every error the simulator raises on purpose."""

    kind = "simulation"

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message

    def to_dict(self) -> dict[str, Any]:
        """Return the JSON-serialisable form: kind, message and any locating fields."""
        return {"kind": self.kind, "message": self.message}


class SnapshotError(SimulationError):
    """The system snapshot is invalid; `errors` maps field paths to messages."""

    kind = "snapshot"

    def __init__(self, errors: dict[str, list[str]]) -> None:
        self.errors = errors
        lines = [f"{path}: {msg}" for path, msgs in errors.items() for msg in msgs]
        super().__init__("invalid system snapshot:\n  " + "\n  ".join(lines))

    def to_dict(self) -> dict[str, Any]:
        return {**super().to_dict(), "errors": self.errors}


class LaunchError(SimulationError):
    """The launch parameters (labels, variables) do not fit the system or application."""

    kind = "launch"

    def __init__(self, field: str, message: str) -> None:
        self.field = field
        super().__init__(f"{field}: {message}")

    def to_dict(self) -> dict[str, Any]:
        return {**super().to_dict(), "field": self.field}


class UserCodeError(SimulationError):
    """The application model failed: syntax error, runtime error or forbidden operation."""

    kind = "user_code"

    def __init__(
        self, message: str, *, line: int | None = None, process: str | None = None
    ) -> None:
        self.detail = message
        self.line = line
        self.process = process
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
        self.detail = message
        self.model = model
        self.function = function
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


class DeadlockError(SimulationError):
    """Every remaining process is blocked; `waiting` maps each process to what it waits for."""

    kind = "deadlock"

    def __init__(self, waiting: dict[str, str], now: float) -> None:
        self.waiting = waiting
        self.now = now
        lines = [f"{proc} waits for {what}" for proc, what in waiting.items()]
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
        self.limit = limit
        self.detail = message
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
        self.signal = signal
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
