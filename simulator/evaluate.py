"""Test-running one function of a computational model, in the sandbox's child process.

The web side's "test-run" (POST /api/models/{id}/evaluate/) must not run user JavaScript in
the web process: `evaluate_in_sandbox` starts a sandbox child with `evaluate_model` as the
entry and tight limits (`EVALUATE_LIMITS`), and returns the value or raises the
ModelEvaluationError / SandboxLimitError the child reported.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING

from simulator.errors import (
    ModelEvaluationError,
    SandboxLimitError,
    SimulationError,
    UserCodeError,
    error_from_dict,
)
from simulator.sandbox import child_entry
from simulator.sandbox.parent import Limits, run_sandboxed
from simulator.sandbox.restricted import compile_errors
from simulator.shallow import ShallowFunctions

if TYPE_CHECKING:
    from simulator.sandbox.parent import EntryRunner

__all__ = [
    "CHECK_APPLICATION_ENTRY",
    "CHECK_ENTRY",
    "EVALUATE_ENTRY",
    "EVALUATE_LIMITS",
    "EVALUATE_TIMEOUT_S",
    "application_errors_in_sandbox",
    "check_application",
    "check_in_sandbox",
    "check_model",
    "evaluate_in_sandbox",
    "evaluate_model",
]

EVALUATE_ENTRY = "simulator.evaluate:evaluate_model"
CHECK_ENTRY = "simulator.evaluate:check_model"
CHECK_APPLICATION_ENTRY = "simulator.evaluate:check_application"
# V8's own limit on one evaluation; the process limits below are the backstop.
EVALUATE_TIMEOUT_S = 2.0
EVALUATE_LIMITS = Limits(
    wall_s=10.0,
    cpu_s=5,
    data_bytes=1024**3,
    fsize_bytes=1024**2,
    nproc=64,
    output_bytes=64 * 1024,
    result_bytes=64 * 1024,
)


@child_entry
def evaluate_model(
    *,
    model_key: str,
    source: str,
    attributes: Mapping[str, object],
    function: str,
    args: Sequence[object],
    params: Mapping[str, object],
    timeout_s: float = EVALUATE_TIMEOUT_S,
    progress: Callable[[float], None] | None = None,
) -> dict[str, float]:
    """Return {"value": function(*args, params)} of the model bound to `attributes`.

    The child's entry (keyword arguments are the JSON payload); raise ModelEvaluationError.
    """
    functions = ShallowFunctions(
        model_key=model_key, source=source, attributes=attributes, timeout_s=timeout_s
    )
    value = functions.call(function, *args, params=params)
    if progress is not None:
        progress(1.0)
    return {"value": value}


def evaluate_in_sandbox(
    *,
    model_key: str,
    source: str,
    attributes: Mapping[str, object],
    function: str,
    args: Sequence[object],
    params: Mapping[str, object],
    limits: Limits = EVALUATE_LIMITS,
    run: EntryRunner | None = None,
) -> float:
    """Return `function(*args, params)` computed by `evaluate_model` in a limited child
    (started by `run`, by default `run_sandboxed` in this process).

    Every failure is a ModelEvaluationError naming the model and function: the model's own
    (with its line), a process limit (wall clock, CPU, memory) or the child's crash.
    """
    payload = {
        "model_key": model_key,
        "source": source,
        "attributes": dict(attributes),
        "function": function,
        "args": list(args),
        "params": dict(params),
    }
    try:
        result = (run or run_sandboxed)(payload, limits=limits, _entry=EVALUATE_ENTRY)
    except ModelEvaluationError:
        raise
    except SandboxLimitError as error:
        raise ModelEvaluationError(error.detail, model=model_key, function=function) from error
    except SimulationError as error:
        raise ModelEvaluationError(error.message, model=model_key, function=function) from error
    return float(result["value"])


@child_entry
def check_model(
    *,
    model_key: str,
    source: str,
    timeout_s: float = EVALUATE_TIMEOUT_S,
    progress: Callable[[float], None] | None = None,
) -> dict[str, bool]:
    """Return {"ok": True} when `source` parses; raise ModelEvaluationError for a SyntaxError.

    The child's entry. V8 parses a whole script before running any of it, so a syntax error
    is reported before the model's top level runs; any other failure of the top level (an
    attribute that only a hardware record defines, say) belongs to a run, not to a save.
    """
    functions = ShallowFunctions(
        model_key=model_key, source=source, attributes={}, timeout_s=timeout_s
    )
    try:
        functions.has("computationTime")
    except ModelEvaluationError as error:
        if error.detail.startswith("SyntaxError"):
            raise
    if progress is not None:
        progress(1.0)
    return {"ok": True}


def check_in_sandbox(
    *,
    model_key: str,
    source: str,
    limits: Limits = EVALUATE_LIMITS,
    run: EntryRunner | None = None,
) -> None:
    """Raise ModelEvaluationError (with its line) when `source` is not valid JavaScript.

    Runs `check_model` in a limited child, like `evaluate_in_sandbox` (`run` the same); a
    process limit or a crash of the child is not the source's fault and is not reported.
    """
    payload = {"model_key": model_key, "source": source}
    try:
        (run or run_sandboxed)(payload, limits=limits, _entry=CHECK_ENTRY)
    except ModelEvaluationError:
        raise
    except SimulationError:
        return


@child_entry
def check_application(
    *, source: str, progress: Callable[[float], None] | None = None
) -> dict[str, list[dict[str, object]]]:
    """Return {"errors": [...]}: every error of an application model under the sandbox's
    rules (UserCodeError.to_dict, each with its line), none when it compiles.

    The child's entry: a syntax error comes alone, the restricted compiler's refusals (names
    starting with "_", for instance) all together.
    """
    errors = [error.to_dict() for error in compile_errors(source)]
    if progress is not None:
        progress(1.0)
    return {"errors": errors}


def application_errors_in_sandbox(
    *, source: str, limits: Limits = EVALUATE_LIMITS, run: EntryRunner | None = None
) -> list[UserCodeError]:
    """Return every error of an application model (with its line), none when it compiles.

    Compiled in a limited child like everything else the user writes: a pathological source
    (deep nesting, say) can crash a compiler, and that must not be the web process; a crash
    or a limit is not the source's fault and is not reported. `run` as in `evaluate_in_sandbox`.
    """
    try:
        result = (run or run_sandboxed)(
            {"source": source}, limits=limits, _entry=CHECK_APPLICATION_ENTRY
        )
    except UserCodeError as error:
        return [error]
    except SimulationError:
        return []
    errors = [error_from_dict(data) for data in result.get("errors", [])]
    return [error for error in errors if isinstance(error, UserCodeError)]
