"""LLM training workloads from the browser and REST (issue 43 item 4; docs/workloads.md).

A workload evaluation is a normal simulation: its application source is the training step
`simulator.workloads.training.training_files` generates (every rank, every phase), its
snapshot the generated cluster, launched through `simulation_launch` so that it runs where
runs run (the queue's worker, in the sandbox), never in the web process. What the step's
figures need besides the step time (`step_basis`: plan, tokens, model FLOPs, the GPU's peak,
the compute and bubble split, memory per GPU) is computed and checked at launch and kept on
the simulation (`Simulation.workload`); a plan that breaks a rule or does not fit the GPU's
memory is refused there, naming the field and the figures. The figures are
`step_figures(basis, overall_time_s)` once the run has finished.

A request stream served with continuous batching (`workload_serve`) answers the request
itself: it is simulated in a sandbox child on the interactive worker as one of the user's
interactive jobs (simulator.workloads.serving_sandbox, webapp.interactive), as a trace's
import is, never in the web process. Every GPU is the record the requesting user sees
(hwdb.selectors.gpu_catalogue).
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from django.conf import settings
from django.core.exceptions import ValidationError
from django.db import transaction

from hwdb.selectors import gpu_catalogue
from simulator import ENGINE_VERSION
from simulator.gpu_catalogue import GpuNotFound
from simulator.sweep import AxisError, size_error
from simulator.workloads.cluster import TEMPLATES
from simulator.workloads.config import ACTIVATIONS, PRESETS, ModelConfig, model_from_fields
from simulator.workloads.inference import (
    InferencePlan,
    inference_basis,
    inference_figures,
    inference_files,
)
from simulator.workloads.kernels import gpu_record
from simulator.workloads.plan import ParallelPlan, PlanError
from simulator.workloads.plan_axes import PLAN_AXES, parse_plan_axes, plan_points
from simulator.workloads.serving import LengthSpec, ServingPlan
from simulator.workloads.serving_sandbox import ServingSandboxError, serve_in_sandbox
from simulator.workloads.training import step_basis, step_figures, training_files
from webapp.interactive import sandbox_runner
from webapp.studio import dispatch
from webapp.studio.limits import queue_limits
from webapp.studio.models import Simulation, SimulationStatus, Sweep, SweepStatus
from webapp.studio.selectors import sweep_aggregate
from webapp.studio.services.common import check_name, current_time, field_error
from webapp.studio.services.launch import (
    check_active_runs,
    launch_plan,
    new_simulation,
    simulation_launch,
)
from webapp.studio.validation import axis_size, axis_values

if TYPE_CHECKING:
    from django.contrib.auth.models import User

PLAN_INTEGERS = ("gpus", "tp", "pp", "cp", "ep", "vp", "mbs", "gbs")
INFER_INTEGERS = {"tp": 1, "pp": 1, "batch": 1, "input_len": 1024, "output_len": 128}
KINDS = ("train", "infer")
MODEL_INTEGERS = (
    "layers",
    "hidden",
    "ffn",
    "heads",
    "kv_heads",
    "vocab",
    "seq",
    "experts",
    "top_k",
)
CHOICES = {
    "data_parallel": ("ddp", "zero1", "fsdp"),
    "recompute": ("none", "selective", "full"),
    "precision": ("bf16", "fp8"),
}
MSG_INTEGER = "Expected a positive whole number."
MSG_CHOICE = "Expected one of {choices}."
MSG_MODEL = "Expected a shipped model ({known}) or an object of the model's fields."
MSG_SYSTEM = "Expected a cluster template ({known})."
MSG_NOT_WORKLOAD = "Simulation {pk} is not a workload evaluation."
MSG_PREFILL = "the prefill run ({pk}) {status}"
# A request stream is served in a sandbox child on the interactive worker, as one of the
# user's interactive jobs (simulator.workloads.serving_sandbox, webapp.interactive), and the
# request waits for its answer: these bound its work within the child's limits.
SERVE_MAX_REQUESTS = 2000
SERVE_MAX_ITERATIONS = 100_000
# the replica's transfers are fitted from two event-engine runs of its tp x pp ranks
SERVE_MAX_GPUS = 64
SERVE_INTEGERS = {
    "tp": 1,
    "pp": 1,
    "requests": 200,
    "seed": 0,
    "max_batch": 256,
    "max_batched_tokens": 8192,
}
MSG_REQUESTS = f"Expected a whole number of requests from 1 to {SERVE_MAX_REQUESTS:,}."
MSG_GPUS = f"Expected tp x pp of at most {SERVE_MAX_GPUS} GPUs (one replica) here."
MSG_RATE = "Expected a positive number of requests per second, or null (all at once)."
MSG_INTERVAL = "Expected a positive number of seconds, or null (every request measured)."
MSG_SHARE = "Expected a number above 0 and at most 1."
MSG_FLAG = "Expected true or false."
# PlanError's message starts with the field it breaks; a memory refusal names none.
MSG_SWEEP_KIND = "A plan sweep is of a training step (kind train)."
MSG_SWEEP_AXES = "Expected an object of plan axes (tp, pp, dp, mbs, ...), each a list or a range."
PLAN_FIELD = re.compile(r"^([a-z_]+) ")
UNSAFE_NAME = re.compile(r"[^\w.+ -]")


def workload_presets(*, user: User | None = None) -> dict[str, Any]:
    """The shipped model configs and cluster templates, with their sources, each GPU's
    memory (its record as `user` sees it) and the seed records the template's links are read
    from, with their rate per direction and latency."""
    catalogue = gpu_catalogue(user=user)
    models = [
        dataclasses.asdict(config) | {"params": config.params()}
        for name, config in sorted(PRESETS.items())
        if name == config.name  # aliases (llama3-405b) once
    ]
    systems = []
    for template in TEMPLATES.values():
        try:
            record = gpu_record(template.gpu, catalogue)
        except GpuNotFound:  # a database without the template's built-in record
            continue
        systems.append(
            {
                "name": template.name,
                "gpu": template.gpu,
                "gpus_per_node": template.gpus_per_node,
                "gpu_memory_bytes": float(record["memorySize"]),
                "source": template.source,
                "links": {
                    "nvlink": {
                        "records": [template.nvswitch],
                        "bytes_per_s": template.nvlink_bytes_per_s,
                        "latency_s": template.nvlink_latency_s,
                    },
                    "network": {
                        "records": [template.nic]
                        + ([template.switch] if template.switch is not None else []),
                        "bytes_per_s": template.network_bytes_per_s,
                        "latency_s": template.network_latency_s,
                    },
                },
            }
        )
    return {"models": models, "systems": systems, "choices": CHOICES}


def _integer(data: Mapping[str, Any], field: str, default: int | None, path: str) -> int | None:
    value = data.get(field, default)
    if value is None and default is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise field_error(path, MSG_INTEGER)
    return value


def _model(value: object) -> ModelConfig:
    if isinstance(value, str) and value in PRESETS:
        return PRESETS[value]
    if not isinstance(value, Mapping):
        raise field_error("model", MSG_MODEL.format(known=", ".join(sorted(PRESETS))))
    # The name goes into the generated model's title comment: one line of plain characters.
    name = UNSAFE_NAME.sub("", str(value.get("name") or ""))[:100] or "custom"
    fields: dict[str, Any] = {"name": name}
    for name in MODEL_INTEGERS:
        default = 1 if name in ("experts", "top_k") else None
        if name not in value and default is None:
            raise field_error(f"model.{name}", "This field is required.")
        fields[name] = _integer(value, name, default, f"model.{name}")
    for name in ("gated", "tied_embeddings"):
        if name not in value:
            continue
        flag = value[name]
        if not isinstance(flag, bool):
            raise field_error(f"model.{name}", "Expected true or false.")
        fields[name] = flag
    if "activation" in value:
        activation = value["activation"]
        if activation not in ACTIVATIONS:
            raise field_error("model.activation", MSG_CHOICE.format(choices=", ".join(ACTIVATIONS)))
        fields["activation"] = activation
    try:
        return model_from_fields(fields)
    except ValueError as error:
        raise field_error("model", str(error)) from error


def workload_plan(data: Mapping[str, Any]) -> tuple[ModelConfig, ParallelPlan, str]:
    """Return the model, plan and system of a request; raise ValidationError naming the first
    bad field."""
    model = _model(data.get("model"))
    system = data.get("system")
    if not isinstance(system, str) or system not in TEMPLATES:
        raise field_error("system", MSG_SYSTEM.format(known=", ".join(TEMPLATES)))
    numbers: dict[str, Any] = {}
    for name in PLAN_INTEGERS:
        required = name in ("gpus", "gbs")
        if required and name not in data:
            raise field_error(name, "This field is required.")
        numbers[name] = _integer(data, name, None if required else 1, name)
    numbers["seq"] = _integer(data, "seq", None, "seq") if data.get("seq") is not None else None
    for name, choices in CHOICES.items():
        choice = data.get(name, choices[0])
        if choice not in choices:
            raise field_error(name, MSG_CHOICE.format(choices=", ".join(choices)))
        numbers[name] = choice
    return model, ParallelPlan(**numbers), system


def inference_plan(data: Mapping[str, Any]) -> tuple[ModelConfig, InferencePlan, str]:
    """Return the model, inference plan and system of a request (`kind` "infer"); raise
    ValidationError naming the first bad field."""
    model = _model(data.get("model"))
    system = data.get("system")
    if not isinstance(system, str) or system not in TEMPLATES:
        raise field_error("system", MSG_SYSTEM.format(known=", ".join(TEMPLATES)))
    numbers: dict[str, Any] = {}
    for name, default in INFER_INTEGERS.items():
        numbers[name] = _integer(data, name, default, name)
    precision = data.get("precision", "bf16")
    if precision not in CHOICES["precision"]:
        raise field_error("precision", MSG_CHOICE.format(choices=", ".join(CHOICES["precision"])))
    return model, InferencePlan(precision=precision, **numbers), system


def serving_plan(data: Mapping[str, Any]) -> tuple[ModelConfig, ServingPlan, str]:
    """Return the model, request stream and system of a serve request; raise ValidationError
    naming the first bad field (`input_len` and `output_len` take a whole number or
    `uniform:LOW:HIGH`, `normal:MEAN:STD`, `exponential:MEAN`)."""
    model = _model(data.get("model"))
    system = data.get("system")
    if not isinstance(system, str) or system not in TEMPLATES:
        raise field_error("system", MSG_SYSTEM.format(known=", ".join(TEMPLATES)))
    fields: dict[str, Any] = {}
    for name, default in SERVE_INTEGERS.items():
        if name == "seed":
            value = data.get("seed", 0)
            if isinstance(value, bool) or not isinstance(value, int) or value < 0:
                raise field_error("seed", "Expected a whole number.")
            fields["seed"] = value
            continue
        fields[name] = _integer(data, name, default, name)
    if fields["requests"] > SERVE_MAX_REQUESTS:
        raise field_error("requests", MSG_REQUESTS)
    if fields["tp"] * fields["pp"] > SERVE_MAX_GPUS:
        raise field_error("tp", MSG_GPUS)
    rate = data.get("arrival_rate")
    if rate is not None and (
        isinstance(rate, bool) or not isinstance(rate, int | float) or not 0 < rate < 1e9
    ):
        raise field_error("arrival_rate", MSG_RATE)
    fields["arrival_rate"] = None if rate is None else float(rate)
    concurrency = data.get("max_concurrency")
    if concurrency is not None:
        concurrency = _integer(data, "max_concurrency", None, "max_concurrency")
    fields["max_concurrency"] = concurrency
    interval = data.get("measurement_interval_s")
    if interval is not None and (
        isinstance(interval, bool)
        or not isinstance(interval, int | float)
        or not 0 < interval < 1e9
    ):
        raise field_error("measurement_interval_s", MSG_INTERVAL)
    fields["measurement_interval_s"] = None if interval is None else float(interval)
    for name, default in (("input_len", 1024), ("output_len", 128)):
        try:
            fields[name] = LengthSpec.parse(data.get(name, default), name)
        except PlanError as error:
            raise field_error(name, str(error)) from error
    share = data.get("gpu_memory_utilization", 0.9)
    if isinstance(share, bool) or not isinstance(share, int | float) or not 0 < share <= 1:
        raise field_error("gpu_memory_utilization", MSG_SHARE)
    fields["gpu_memory_utilization"] = float(share)
    chunked = data.get("chunked_prefill", True)
    if not isinstance(chunked, bool):
        raise field_error("chunked_prefill", MSG_FLAG)
    fields["chunked_prefill"] = chunked
    precision = data.get("precision", "bf16")
    if precision not in CHOICES["precision"]:
        raise field_error("precision", MSG_CHOICE.format(choices=", ".join(CHOICES["precision"])))
    return model, ServingPlan(precision=precision, **fields), system


def workload_serve(*, user: User, data: Mapping[str, Any]) -> dict[str, Any]:
    """Serve a request stream with continuous batching (simulator.workloads.serving) and
    return its latency percentiles, throughput, batch and KV-cache figures; with `saturate`
    true, also the arrival-rate sweep and the saturating rate. The stream is served in a
    sandbox child on the interactive worker, never in the web process, as one of `user`'s
    interactive jobs, the system's GPU the record `user` sees. Raise ValidationError naming
    the field for a bad value, a plan that cannot run or a stream too long for the server."""
    model, plan, system = serving_plan(data)
    saturate = data.get("saturate", False)
    if not isinstance(saturate, bool):
        raise field_error("saturate", MSG_FLAG)
    try:
        return serve_in_sandbox(
            model=model,
            plan=plan,
            system=system,
            catalogue=gpu_catalogue(user=user),
            saturate=saturate,
            iteration_limit=SERVE_MAX_ITERATIONS,
            run=sandbox_runner(user_id=user.pk),
        )
    except PlanError as error:
        raise _plan_error(error) from error
    except ServingSandboxError as error:
        raise field_error(error.field, error.message) from error


def _kind(data: Mapping[str, Any]) -> str:
    kind = data.get("kind", "train")
    if kind not in KINDS:
        raise field_error("kind", MSG_CHOICE.format(choices=", ".join(KINDS)))
    return str(kind)


def _plan_error(error: PlanError) -> Exception:
    message = str(error)
    match = PLAN_FIELD.match(message)
    known = {*PLAN_INTEGERS, *INFER_INTEGERS, *SERVE_INTEGERS, "seq", "system", *CHOICES}
    known |= {"layers", "input_len", "output_len", "max_concurrency", "arrival_rate"}
    known |= {"measurement_interval_s"}
    if match and match.group(1) in known:
        field = "pp" if match.group(1) == "layers" else match.group(1)
    elif message.startswith("the plan needs"):
        field = "memory"
    else:
        field = "plan"
    return field_error(field, message)


def workload_check(data: Mapping[str, Any], *, user: User | None = None) -> dict[str, Any]:
    """Return the plan's `step_basis` (memory per GPU and what the figures need), the GPU's
    record as `user` sees it; raise ValidationError for a bad field or a plan that cannot
    run."""
    catalogue = gpu_catalogue(user=user)
    try:
        if _kind(data) == "infer":
            return inference_basis(*inference_plan(data), catalogue=catalogue)
        return step_basis(*workload_plan(data), catalogue=catalogue)
    except PlanError as error:
        raise _plan_error(error) from error


@transaction.atomic
def workload_launch(*, user: User, data: Mapping[str, Any]) -> Simulation:
    """Check the plan, then launch its training step as a simulation of every rank; nothing
    is stored or queued unless the plan is valid and fits. Inference runs twice: the prefill
    alone (its time is the time to first token) and the whole batch."""
    if _kind(data) == "infer":
        return _inference_launch(user, data)
    model, plan, system = workload_plan(data)
    catalogue = gpu_catalogue(user=user)
    try:
        basis = step_basis(model, plan, system, catalogue=catalogue)
        snapshot, source, labels = training_files(model, plan, system, catalogue=catalogue)
    except PlanError as error:
        raise _plan_error(error) from error
    name = data.get("name") or f"{model.name} on {plan.gpus} x {system}"
    simulation = simulation_launch(
        user=user,
        name=str(name),
        snapshot=snapshot,
        app_source=source,
        labels=labels,
        queue=data.get("queue"),
        timeline_limit=0,
    )
    simulation.workload = {"kind": "train", "basis": basis}
    Simulation.objects.filter(pk=simulation.pk).update(workload=simulation.workload)
    return simulation


def _inference_launch(user: User, data: Mapping[str, Any]) -> Simulation:
    model, plan, system = inference_plan(data)
    catalogue = gpu_catalogue(user=user)
    try:
        basis = inference_basis(model, plan, system, catalogue=catalogue)
        snapshot, prefill_source, whole_source, labels = inference_files(
            model, plan, system, catalogue=catalogue
        )
    except PlanError as error:
        raise _plan_error(error) from error
    name = str(data.get("name") or f"{model.name} inference on {plan.gpus} x {system}")
    common = {"snapshot": snapshot, "labels": labels, "queue": data.get("queue")}
    prefill = simulation_launch(
        user=user, name=f"{name} (prefill)", app_source=prefill_source, timeline_limit=0, **common
    )
    whole = simulation_launch(
        user=user, name=name, app_source=whole_source, timeline_limit=0, **common
    )
    Simulation.objects.filter(pk=prefill.pk).update(workload={"kind": "prefill", "of": whole.pk})
    whole.workload = {"kind": "infer", "basis": basis, "prefill": prefill.pk}
    Simulation.objects.filter(pk=whole.pk).update(workload=whole.workload)
    return whole


def workload_result(simulation: Simulation) -> dict[str, Any]:
    """The evaluation's state and, once its runs have finished, its figures."""
    if not simulation.workload or simulation.workload.get("kind") not in KINDS:
        raise field_error("simulation", MSG_NOT_WORKLOAD.format(pk=simulation.pk))
    kind = simulation.workload["kind"]
    basis = simulation.workload["basis"]
    answer: dict[str, Any] = {
        "simulation": simulation.pk,
        "kind": kind,
        "status": simulation.status,
        "progress": simulation.progress,
        "error": simulation.error,
        "basis": basis,
        "figures": None,
    }
    done = simulation.status == SimulationStatus.SUCCEEDED and simulation.overall_time_s
    if kind == "train":
        if done:
            answer["figures"] = step_figures(basis, float(simulation.overall_time_s or 0.0))
        return answer
    prefill = Simulation.objects.filter(
        pk=simulation.workload["prefill"], owner_id=simulation.owner_id
    ).first()
    answer["prefill"] = prefill.pk if prefill else None
    if prefill is None or prefill.status in (SimulationStatus.FAILED, SimulationStatus.CANCELLED):
        status = prefill.status if prefill else "deleted"
        answer["status"] = SimulationStatus.FAILED
        answer["error"] = {"message": MSG_PREFILL.format(pk=answer["prefill"], status=status)}
        return answer
    if done and prefill.status == SimulationStatus.SUCCEEDED:
        ttft = float(prefill.overall_time_s or 0.0)
        answer["figures"] = inference_figures(basis, ttft, float(simulation.overall_time_s or 0.0))
    elif simulation.status == SimulationStatus.SUCCEEDED:
        answer["status"] = prefill.status  # the batch is done, its prefill run is not yet
    return answer


def _sweep_points(data: Mapping[str, Any]) -> list[tuple[dict[str, object], dict[str, Any]]]:
    """Return (point, the request's fields at that point) of a plan sweep, its axes checked
    by the CLI's rule (simulator.workloads.plan_axes) and counted against the sweep cap."""
    if _kind(data) != "train":
        raise field_error("kind", MSG_SWEEP_KIND)
    raw = data.get("axes")
    if not isinstance(raw, Mapping) or not raw:
        raise field_error("axes", MSG_SWEEP_AXES)
    size = 1
    for name, axis in raw.items():
        size *= axis_size(axis, field=f"axes.{name}")
    too_many = size_error(size, int(settings.PARASIM_MAX_SWEEP))
    if too_many is not None:
        raise field_error("axes", too_many)
    try:
        axes = parse_plan_axes({name: axis_values(axis) for name, axis in raw.items()})
    except AxisError as error:
        raise field_error(error.field, error.message) from error
    base = {key: value for key, value in data.items() if key not in ("axes", "launch")}
    return plan_points(base, axes)


def workload_sweep(*, user: User, data: Mapping[str, Any]) -> dict[str, Any]:
    """Check every plan of a sweep over the plan's fields and the cluster template (`axes`:
    name -> values or a range, `system` a list of templates; docs/workloads.md "Plan
    sweeps"). Each point answers its `basis`, or `invalid` with the field and the reason a
    plan that cannot run is refused with. With `launch` true the sweep is launched as one
    sweep group (`workload_sweep_launch`) and the answer also names it (`sweep`) and each
    point's run (`simulation`); nothing is launched unless the sweep's axes are good."""
    points = _sweep_points(data)
    launch = data.get("launch", False)
    if not isinstance(launch, bool):
        raise field_error("launch", "Expected true or false.")
    answers = _checked_points(user, points)
    valid = sum("invalid" not in answer for answer in answers)
    answer: dict[str, Any] = {"size": len(answers), "valid": valid, "points": answers}
    if launch:
        sweep = workload_sweep_launch(user=user, data=data, checked=answers, points=points)
        answer["sweep"] = sweep.pk
        # bulk-created in the points' order; an invalid plan's run is its failed point
        children = sweep.simulations.order_by("pk").values_list("pk", flat=True)
        for item, pk in zip(answers, children, strict=True):
            item["simulation"] = pk
    return answer


def _checked_points(
    user: User, points: list[tuple[dict[str, object], dict[str, Any]]]
) -> list[dict[str, Any]]:
    answers: list[dict[str, Any]] = []
    for point, fields in points:
        answer: dict[str, Any] = {"point": point}
        try:
            answer["basis"] = workload_check(fields, user=user)
        except ValidationError as error:
            field, messages = next(iter(error.message_dict.items()))
            if field not in PLAN_AXES and field not in ("memory", "plan"):
                raise  # a model or system no plan could fix: the request is refused
            answer["invalid"] = {"field": field, "reason": messages[0]}
        answers.append(answer)
    return answers


@transaction.atomic
def workload_sweep_launch(
    *,
    user: User,
    data: Mapping[str, Any],
    checked: list[dict[str, Any]],
    points: list[tuple[dict[str, object], dict[str, Any]]],
) -> Sweep:
    """Launch a checked plan sweep as one sweep group (services.sweeps' rule: its children
    stored and queued together, its table, Pareto front, constraints, CSV and sharing those
    of any sweep): one child per point, its `sweep_point` axes the point's plan fields and
    template; a plan that cannot run is kept as a failed point whose error is the reason
    and the field. Each valid child runs one training step with the launch variables
    `steps` 1 and `tokens` its tokens per step, so its cost (simulator.cost, from the GPU
    record's prices) gives the cost per step and per token. `uncertainty` asks each child
    for a prediction interval (simulator.uncertainty)."""
    name = check_name(data.get("name")) if data.get("name") not in (None, "") else ""
    model = _model(data.get("model"))
    sweep_name = name or f"{model.name} plan sweep"
    spec = {key: value for key, value in data.items() if key not in ("launch", "name")}
    spec["kind"] = "train"
    sweep = Sweep.objects.create(owner=user, name=sweep_name, spec=spec)
    catalogue = gpu_catalogue(user=user)
    queue = workload_queue(data.get("queue"))
    children: list[Simulation] = []
    for answer, (point, fields) in zip(checked, points, strict=True):
        if "invalid" in answer:
            label = ", ".join(f"{k}={v}" for k, v in point.items())
            sweep_point = {"variables": {}, "hardware": None, "axes": dict(point)}
            children.append(
                _failed_point(user, sweep, f"{sweep_name}: {label}", sweep_point, answer, queue)
            )
            continue
        children.append(
            workload_child(
                user=user,
                sweep=sweep,
                sweep_name=sweep_name,
                point=point,
                fields=fields,
                basis=answer["basis"],
                catalogue=catalogue,
                queue=queue,
                uncertainty=data.get("uncertainty"),
            )
        )
    queued = [child for child in children if child.status != SimulationStatus.FAILED]
    check_active_runs(user, adding=len(queued), field="queue")
    Simulation.objects.bulk_create(children)
    sweep.aggregate = sweep_aggregate(sweep=sweep)
    if queued:
        sweep.save(update_fields=["aggregate"])
        dispatch.enqueue(queued)
    else:  # every plan refused: nothing to wait for
        sweep.status = SweepStatus.FINISHED
        sweep.finished = current_time()
        sweep.save(update_fields=["aggregate", "status", "finished"])
    return sweep


def workload_child(
    *,
    user: User,
    sweep: Sweep,
    sweep_name: str,
    point: Mapping[str, object],
    fields: Mapping[str, Any],
    basis: Mapping[str, Any],
    catalogue: Any,
    queue: str,
    uncertainty: object,
    extra: Mapping[str, Any] | None = None,
) -> Simulation:
    """Return the unsaved run of a valid plan's point (its `fields`, checked: `basis`) in a
    plan sweep or a workload study: one training step of every rank with the launch
    variables `steps` 1 and `tokens` its tokens per step, its `sweep_point` axes the point
    (and `extra`: a study's trial number)."""
    label = ", ".join(f"{k}={v}" for k, v in point.items())
    config, plan, system = workload_plan(fields)
    try:
        snapshot, source, labels = training_files(config, plan, system, catalogue=catalogue)
    except PlanError as error:
        raise _plan_error(error) from error
    try:
        launch = launch_plan(
            user=user,
            name=f"{sweep_name}: {label}",
            snapshot=snapshot,
            app_source=source,
            labels=labels,
            variables={"steps": 1, "tokens": int(basis["tokens"])},
            queue=queue,
            timeline_limit=0,
            uncertainty=uncertainty,
        )
    except ValidationError as error:
        field, messages = next(iter(error.message_dict.items()))
        if field.startswith("uncertainty") or field == "queue":
            raise
        raise field_error(f"axes ({label})", messages[0]) from error
    sweep_point = {"variables": {}, "hardware": None, "axes": dict(point), **(extra or {})}
    child = new_simulation(launch, sweep=sweep, sweep_point=sweep_point)
    child.workload = {"kind": "train", "basis": dict(basis)}
    return child


def check_point(user: User, point: dict[str, object], fields: dict[str, Any]) -> dict[str, Any]:
    """Return the point's answer: {point, basis}, or {point, invalid: {field, reason}} for a
    plan that cannot run; raise ValidationError for a model or system no plan could fix."""
    return _checked_points(user, [(point, fields)])[0]


def workload_queue(value: object) -> str:
    """Return the queue of a plan sweep's or workload study's runs (default: the first)."""
    known = list(settings.PARASIM_QUEUES)
    if value in (None, ""):
        return known[0]
    if not isinstance(value, str) or value not in known:
        raise field_error("queue", f"Expected one of {', '.join(known)}.")
    return value


def _failed_point(
    user: User,
    sweep: Sweep,
    name: str,
    sweep_point: dict[str, Any],
    answer: Mapping[str, Any],
    queue: str,
) -> Simulation:
    """Return the unsaved failed child of a plan that cannot run: no system, no source, its
    error the plan's refusal (`field`, `message`)."""
    invalid = answer["invalid"]
    now = current_time()
    return Simulation(
        owner=user,
        name=name,
        snapshot={},
        app_source="",
        labels={},
        queue=queue,
        time_limit_s=queue_limits(queue)["time_limit_s"]["default"],
        status=SimulationStatus.FAILED,
        error={"message": invalid["reason"], "field": invalid["field"], "invalid_plan": True},
        engine_version=ENGINE_VERSION,
        sweep=sweep,
        sweep_point=sweep_point,
        started=now,
        finished=now,
    )
