"""Serving a request stream in the sandbox's child process (docs/workloads.md "Serving").

A serving simulation is simulation work (thousands of scheduler iterations, each timed by the
kernel models, and two event-engine runs that fit the replica's transfers, or a dozen such
streams for the saturation sweep) and must not run in a web process. `serve_in_sandbox`
hands the model config, the request stream's plan, the system and the GPU records to a
sandbox child with `serve_stream` as the entry and the limits of `SERVE_LIMITS`, as the trace
import does (simulator.trace_sandbox), and returns what `simulate_serving` returns (with
`saturate`, and `saturation`: `saturating_rate`'s answer). A plan the simulation refuses
raises PlanError with its message as in this process; a GPU the catalogue lacks or a limit
the child ran into raises ServingSandboxError naming the field at fault.

This module loads neither the kernel models nor NumPy: the child does. The GPU records come
with the payload (simulator.gpu_catalogue): the web side sends the ones its user may see, so
the child needs no database.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

from simulator.errors import SandboxLimitError, SimulationError
from simulator.gpu_catalogue import GpuCatalogue, GpuNotFound
from simulator.sandbox import child_entry
from simulator.sandbox.parent import Limits, run_sandboxed
from simulator.workloads.config import ModelConfig
from simulator.workloads.plan import PlanError

if TYPE_CHECKING:
    from simulator.sandbox.parent import EntryRunner
    from simulator.workloads.serving import ServingPlan

__all__ = [
    "SERVE_ENTRY",
    "SERVE_LIMITS",
    "ServingSandboxError",
    "plan_data",
    "serve_in_sandbox",
    "serve_stream",
]

SERVE_ENTRY = "simulator.workloads.serving_sandbox:serve_stream"
SERVE_LIMITS = Limits(
    wall_s=60.0,
    cpu_s=60,
    data_bytes=2 * 1024**3,
    fsize_bytes=1024**2,  # the child writes no file
    nproc=64,
    output_bytes=64 * 1024,
    # a result is a few kilobytes: percentiles, and a sweep of some twenty points
    result_bytes=4 * 1024**2,
)
MSG_LIMIT = (
    "The stream could not be served within the sandbox's limits ({detail}): ask for fewer "
    "or shorter requests, or serve it without the saturation sweep."
)
MSG_FAILED = "The stream could not be served: {detail}"


class ServingSandboxError(Exception):
    """A serving run refused other than by PlanError: `field` is the request's field at
    fault ("system" for its GPU, "requests" for a limit, "plan" otherwise)."""

    def __init__(self, field: str, message: str) -> None:
        super().__init__(message)
        self.field = field
        self.message = message


def plan_data(plan: ServingPlan) -> dict[str, Any]:
    """Return the serving plan as JSON-ready data (`_plan` reads it back in the child)."""
    return dataclasses.asdict(plan)


def _plan(data: Mapping[str, Any]) -> ServingPlan:
    from simulator.workloads.serving import LengthSpec, ServingPlan

    fields = dict(data)
    for name in ("input_len", "output_len"):
        fields[name] = LengthSpec(**fields[name])
    if fields.get("arrivals") is not None:
        fields["arrivals"] = tuple(float(t) for t in fields["arrivals"])
    return ServingPlan(**fields)


def _no_v8(payload: Mapping[str, Any]) -> bool:
    # the cluster's node models (simulator.workloads.cluster) have Python twins
    return False


def _modules(payload: Mapping[str, Any]) -> tuple[str, ...]:
    return ("simulator.workloads.serving",)


@child_entry(needs_v8=_no_v8, modules_needed=_modules)
def serve_stream(
    *,
    model: Mapping[str, Any],
    plan: Mapping[str, Any],
    system: str,
    catalogue: Mapping[str, Any],
    saturate: bool = False,
    iteration_limit: int | None = None,
    progress: Callable[[float], None] | None = None,
) -> dict[str, Any]:
    """Return `simulate_serving`'s answer for the stream (with `saturate`, its `saturation`
    too), or {"error": {"kind": "plan" or "gpu", "message"}} (the child's entry: keyword
    arguments are the JSON payload)."""
    # Lazy: the kernel models load NumPy, which only the child needs.
    from simulator.workloads.serving import saturating_rate, simulate_serving

    config = ModelConfig(**model)
    serving = _plan(plan)
    records = GpuCatalogue.from_data(catalogue)
    try:
        result = simulate_serving(
            config, serving, system, iteration_limit=iteration_limit, catalogue=records
        )
        if saturate:
            if progress is not None:
                progress(1 / 3)
            result["saturation"] = saturating_rate(
                config, serving, system, iteration_limit=iteration_limit, catalogue=records
            )
    except PlanError as error:
        return {"error": {"kind": "plan", "message": str(error)}}
    except GpuNotFound as error:
        return {"error": {"kind": "gpu", "message": str(error)}}
    return result


def serve_in_sandbox(
    *,
    model: ModelConfig,
    plan: ServingPlan,
    system: str,
    catalogue: GpuCatalogue,
    saturate: bool = False,
    iteration_limit: int | None = None,
    limits: Limits = SERVE_LIMITS,
    run: EntryRunner | None = None,
) -> dict[str, Any]:
    """Return the served stream's figures, computed in a limited child started by `run` (by
    default `run_sandboxed` here), the system's GPU looked up in `catalogue`; raise PlanError
    for a plan the simulation refuses, ServingSandboxError otherwise."""
    payload = {
        "model": dataclasses.asdict(model),
        "plan": plan_data(plan),
        "system": system,
        "catalogue": catalogue.to_data(),
        "saturate": saturate,
        "iteration_limit": iteration_limit,
    }
    try:
        result = (run or run_sandboxed)(payload, limits=limits, _entry=SERVE_ENTRY)
    except SandboxLimitError as error:
        raise ServingSandboxError("requests", MSG_LIMIT.format(detail=error.detail)) from error
    except SimulationError as error:
        raise ServingSandboxError("plan", MSG_FAILED.format(detail=error.message)) from error
    if "error" in result:
        error_data = result["error"]
        message = str(error_data.get("message", ""))
        if error_data.get("kind") == "plan":
            raise PlanError(message)
        if error_data.get("kind") == "gpu":
            raise ServingSandboxError("system", message)
        raise ServingSandboxError("plan", MSG_FAILED.format(detail=message))
    return dict(result)
