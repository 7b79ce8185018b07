"""A training workload as the subject of `python -m simulator sweep` and `study`
(`--workload SPEC`): the points are plans of simulator.workloads, each run as the web side
runs a plan sweep's point (webapp.studio.services.workloads.workload_sweep_launch).

SPEC is a JSON object, inline or in a file, of the fields `POST /api/workloads/sweep/`
takes besides its axes (docs/workloads.md "Plan sweeps"): `model` (a shipped config's name,
a JSON file of the config's fields, or an object of them), `system` (a cluster template),
`gpus`, `gbs` and the other fields of ParallelPlan (`tp`, `pp`, `cp`, `ep`, `vp`, `mbs`,
`seq`, `data_parallel`, `recompute`, `precision`), `kind` ("train", the only kind swept).
The `--axis` options name plan axes (simulator.workloads.plan_axes: the plan's fields,
`system`, `dp`), checked by its rule and messages; a fixed field of SPEC is checked as a
one-value axis of the same name, so a bad one is refused naming `--workload.FIELD`.

A point is made by `plan_points` and checked by the plan's own rules (`step_basis`: the
divisibility rules and the GPU's memory); a plan that cannot run is kept, marked invalid
with its field and reason (`plan_error_field`), and nothing is simulated for it. A valid
point runs the full simulation of its step (`training_files`: every rank) with the launch
variables `steps` 1 and `tokens` its tokens per step, so that its cost (simulator.cost,
from the GPU record's prices) is the cost per step and per token, and with the run's
prediction interval when asked (`--uncertainty`). Its figures are the run's
(simulator.result_metrics: `overall_time_s` is the step's time, the cost, the interval)
and the step's (`step_figures`: `step_time_s`, `mfu`, ...).
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, fields
from pathlib import Path
from typing import Any

from simulator.cli.common import CliError
from simulator.result_metrics import COST_INTERVAL_METRICS, INTERVAL_METRICS, SUMMARY_METRICS
from simulator.result_metrics import result_metrics as run_metrics
from simulator.sweep import AxisError
from simulator.workloads.config import ModelConfig, load_model
from simulator.workloads.plan import ParallelPlan, PlanError
from simulator.workloads.plan_axes import PLAN_AXES, parse_plan_axes, plan_error_field, plan_points
from simulator.workloads.training import step_basis, step_figures, training_files

OPTION = "--workload"
# The spec's fields besides the plan's axes.
SPEC_FIELDS = ("kind", "model", "system")
# The step's figures a workload point adds to its run's (simulator.workloads.training).
STEP_METRICS = (
    "step_time_s",
    "tokens_per_s_per_gpu",
    "model_tflops_per_gpu",
    "mfu",
    "memory_per_gpu_bytes",
)
# The step time's interval: the run's time's (`overall_time_s_low`, ...), the run being one
# step; present where the run has an interval.
STEP_INTERVAL_METRICS = tuple(f"step_time_s_{end}" for end in ("median", "low", "high"))
# What a workload point's table shows, in order, after its axes.
TABLE_METRICS = ("step_time_s", "mfu", "cost_per_step_usd", "cost_per_token_usd")
SPEC_MESSAGES = {
    "json": "expected a JSON object or a file holding one ({error})",
    "object": "expected a JSON object of the workload's fields",
    "unknown": "unknown field; expected one of {known}",
    "kind": "only a training step (kind train) is swept, got {value!r}",
    "model": "expected a shipped config's name, a JSON file of its fields or an object of them",
    "required": "required unless an --axis gives it{also}",
    "others": "{options} cannot be given with --workload (its points are plans of the spec)",
}


@dataclass(frozen=True)
class WorkloadSpec:
    """The model and the fixed fields (ParallelPlan's keywords and `system`) of the points."""

    model: ModelConfig
    base: dict[str, Any]


def _fail(field: str, message: str) -> CliError:
    return CliError(f"{OPTION} {field}: {message}" if field else f"{OPTION}: {message}")


def _model(value: object) -> ModelConfig:
    if isinstance(value, str):
        try:
            return load_model(value)
        except ValueError as error:
            raise _fail("model", str(error)) from error
    if not isinstance(value, Mapping):
        raise _fail("model", SPEC_MESSAGES["model"])
    allowed = [field.name for field in fields(ModelConfig)]
    unknown = sorted(set(value) - set(allowed))
    if unknown:
        raise _fail(
            f"model.{unknown[0]}", SPEC_MESSAGES["unknown"].format(known=", ".join(allowed))
        )
    try:
        return ModelConfig(**{"name": "custom", **value})
    except (TypeError, ValueError) as error:
        raise _fail("model", str(error)) from error


def parse_workload_spec(text: str) -> WorkloadSpec:
    """Return the spec of `--workload TEXT` (inline JSON or a file of it); raise CliError
    naming the first bad field."""
    try:
        source = text if text.lstrip().startswith("{") else Path(text).read_text("utf-8")
        data = json.loads(source)
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as error:
        raise _fail("", SPEC_MESSAGES["json"].format(error=error)) from error
    if not isinstance(data, dict):
        raise _fail("", SPEC_MESSAGES["object"])
    known = [*SPEC_FIELDS, *(name for name in PLAN_AXES if name not in ("system", "dp"))]
    for name in data:
        if name not in known:
            raise _fail(name, SPEC_MESSAGES["unknown"].format(known=", ".join(known)))
    if data.get("kind", "train") != "train":
        raise _fail("kind", SPEC_MESSAGES["kind"].format(value=data["kind"]))
    if "model" not in data:
        raise _fail("model", "required")
    model = _model(data["model"])
    base = {k: v for k, v in data.items() if k not in ("kind", "model")}
    base.setdefault("system", "dgx-h100")
    fixed = {name: value for name, value in base.items() if name != "seq" or value is not None}
    try:
        parse_plan_axes({name: [value] for name, value in fixed.items()}, field=OPTION)
    except AxisError as error:
        field = error.field.removesuffix("[0]").replace(f"{OPTION}.", f"{OPTION} ", 1)
        raise CliError(f"{field}: {error.message}") from error
    return WorkloadSpec(model, base)


def check_axes(
    spec: WorkloadSpec, axes: Mapping[str, Sequence[object]], option: str = "--axis"
) -> dict[str, list[object]]:
    """Return the checked plan axes (their values, or the values a study's dimension can
    take); raise CliError naming the axis (`--axis tp[1]`) or the spec's missing field."""
    try:
        checked = parse_plan_axes(axes, field=option)
    except AxisError as error:
        field = error.field.replace(f"{option}.", f"{option} ", 1)
        raise CliError(f"{field}: {error.message}") from error
    for name, also in (("gpus", " (or dp)"), ("gbs", "")):
        given = name in spec.base or name in checked or (name == "gpus" and "dp" in checked)
        if not given:
            raise _fail(name, SPEC_MESSAGES["required"].format(also=also))
    if "dp" in checked and "gpus" in spec.base:
        raise _fail("gpus", "a dp axis sets the GPUs (dp x tp x pp x cp): leave gpus out")
    return checked


@dataclass
class WorkloadPoint:
    """One point: its axes' values, and either its run's payload and step basis, or why its
    plan cannot run (`invalid`: {field, reason})."""

    point: dict[str, object]
    payload: dict[str, Any] | None = None
    basis: dict[str, Any] | None = None
    invalid: dict[str, str] | None = None


def workload_points(
    spec: WorkloadSpec,
    axes: Mapping[str, Sequence[object]],
    *,
    seed: int,
    uncertainty: Mapping[str, Any] | None,
) -> list[WorkloadPoint]:
    """Return each point of the product of `axes` (checked) over the spec: its run's
    payload (the run `python -m simulator run` makes of it), or why it cannot run."""
    points: list[WorkloadPoint] = []
    for point, plan_fields in plan_points(spec.base, axes):
        system = str(plan_fields.pop("system"))
        try:
            plan = ParallelPlan(**plan_fields)
            basis = step_basis(spec.model, plan, system)
            snapshot, source, labels = training_files(spec.model, plan, system)
        except PlanError as error:
            reason = str(error)
            invalid = {"field": plan_error_field(reason), "reason": reason}
            points.append(WorkloadPoint(dict(point), invalid=invalid))
            continue
        payload: dict[str, Any] = {
            "snapshot": snapshot,
            "app_source": source,
            "labels": labels,
            "variables": {"steps": 1, "tokens": int(basis["tokens"])},
            "seed": seed,
            "timeline_limit": 0,
        }
        if uncertainty is not None:
            payload["uncertainty"] = dict(uncertainty)
        points.append(WorkloadPoint(dict(point), payload=payload, basis=basis))
    return points


def workload_metrics(basis: Mapping[str, Any], result: Mapping[str, Any]) -> dict[str, Any]:
    """Return a finished point's figures: its run's (simulator.result_metrics) and its
    step's (`step_figures` of the run's time)."""
    metrics = dict(run_metrics(result))
    figures = step_figures(dict(basis), float(result["overall_time_s"]))
    metrics.update({name: figures[name] for name in STEP_METRICS})
    for name in STEP_INTERVAL_METRICS:  # the run is one step: its time's interval
        run_name = name.replace("step_time_s_", "overall_time_s_")
        if run_name in metrics:
            metrics[name] = metrics[run_name]
    return metrics


def known_metrics() -> list[str]:
    """Return the figures a workload sweep or study may flag, optimise or constrain."""
    return [
        *STEP_METRICS,
        *STEP_INTERVAL_METRICS,
        *SUMMARY_METRICS,
        *INTERVAL_METRICS,
        *COST_INTERVAL_METRICS,
    ]


def refuse_others(args: Any) -> None:
    """Raise CliError when options of a system-and-application sweep come with --workload."""
    given = [
        option
        for option, value in (
            ("--system", args.system),
            ("--app", args.app),
            ("--labels", args.labels),
            ("--var", args.var),
            ("--hardware", args.hardware),
        )
        if value
    ]
    if given:
        raise CliError(SPEC_MESSAGES["others"].format(options=", ".join(given)))


def require_system(args: Any) -> None:
    """Raise CliError when a sweep or study without --workload lacks its system's options."""
    lacking = [o for o, v in (("--system", args.system), ("--app", args.app)) if not v]
    lacking += ["--labels"] if not args.labels else []
    if lacking:
        raise CliError(f"{', '.join(lacking)} required (or --workload SPEC)")
