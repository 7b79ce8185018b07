"""Sweeps: one launch expanded over variable axes and hardware substitutions into child
simulations stored and queued as one group; cancelling a sweep cancels its pending children."""

from __future__ import annotations

import itertools
from collections.abc import Mapping
from dataclasses import dataclass
from dataclasses import field as dataclass_field
from typing import TYPE_CHECKING, Any

from django.conf import settings
from django.core.exceptions import ValidationError
from django.db import transaction

from hwdb.models import ComputationalModel
from hwdb.selectors import component_matches
from hwdb.snapshot_codec import model_key, model_record, with_hardware
from simulator.model_validity import with_recommended_model
from simulator.snapshot import SystemSnapshot, node_title
from simulator.sweep import Axis, AxisError, apply_point, parse_axes, size_error
from webapp.studio import dispatch
from webapp.studio.models import Simulation, SimulationStatus, Sweep, SweepStatus
from webapp.studio.selectors import sweep_aggregate
from webapp.studio.services.common import MESSAGES, check_name, current_time, field_error
from webapp.studio.services.launch import (
    LaunchPlan,
    check_active_runs,
    check_label_counts,
    check_snapshot,
    launch_plan,
    new_simulation,
)
from webapp.studio.services.runs import simulation_cancel
from webapp.studio.validation import axis_size, axis_values, reject_nul, resolve_variables

if TYPE_CHECKING:
    from django.contrib.auth.models import User

SweepOption = tuple[dict[str, Any], SystemSnapshot, dict[str, Any] | None]
# What a hardware swap does with the node's computational model (spec.hardware.model).
SWEEP_MODEL_CHOICES = ("recommended", "keep")


def _installed_model(name: str) -> tuple[str, dict[str, Any]] | None:
    """Return the snapshot key and record of the built-in model called `name`, if installed."""
    model = ComputationalModel.objects.filter(builtin=True, name=name).order_by("id").first()
    return (model_key(model.pk), model_record(model)) if model is not None else None


def sweep_hardware(user: User, plan: LaunchPlan, spec: object) -> list[SweepOption]:
    """Return (snapshot, its parsed form, point hardware) per substitution; the plan's own
    snapshot if none. Each substituted snapshot is parsed once, here."""
    if spec is None:
        return [(plan.snapshot, plan.system, None)]
    snapshot = plan.snapshot
    if not isinstance(spec, Mapping):
        raise field_error("spec.hardware", MESSAGES["sweep_object"])
    nodes = {n.get("id"): n for n in snapshot.get("nodes", []) if not n.get("group")}
    node_id = spec.get("node")
    if not isinstance(node_id, str) or node_id not in nodes:
        # The node is given by id (the form's value), so the list pairs each name with its id.
        known = ", ".join(f"{node_title(n)!r} (id {i!r})" for i, n in nodes.items()) or "none"
        raise field_error(
            "spec.hardware.node", MESSAGES["sweep_node"].format(node=node_id, known=known)
        )
    kind = snapshot["hardware"][nodes[node_id]["hardware"]]["type"]
    refs = spec.get("components")
    if not isinstance(refs, list) or not refs:
        raise field_error("spec.hardware.components", MESSAGES["sweep_components"])
    choice = spec.get("model", "recommended")
    if choice not in SWEEP_MODEL_CHOICES:
        raise field_error("spec.hardware.model", MESSAGES["sweep_model"])
    options: list[SweepOption] = []
    for index, ref in enumerate(refs):
        field = f"spec.hardware.components[{index}]"
        if isinstance(ref, int) and not isinstance(ref, bool):
            matches = component_matches(user=user, type=kind, ref=ref)
        elif isinstance(ref, str) and ref.strip():
            matches = component_matches(user=user, type=kind, ref=ref.strip())
        else:
            raise field_error(field, MESSAGES["sweep_components"])
        if not matches:
            raise field_error(field, MESSAGES["sweep_component"].format(ref=ref, type=kind))
        if len(matches) > 1:
            raise field_error(
                field, MESSAGES["sweep_ambiguous"].format(count=len(matches), ref=ref)
            )
        component = matches[0]
        variant = with_hardware(snapshot, node_id=node_id, component=component)
        node_model = nodes[node_id].get("model")
        model_name = (snapshot.get("models") or {}).get(node_model, {}).get("name", node_model)
        swapped = False
        if choice == "recommended":
            variant, model_name, swapped = with_recommended_model(
                variant, node_id, _installed_model
            )
        variant, system = check_snapshot(variant, field)
        point = {"node": node_id, "id": component.pk, "name": component.name}
        options.append((variant, system, {**point, "model": model_name, "model_swapped": swapped}))
    return options


def sweep_size(spec: Mapping[str, Any]) -> int:
    """Return the number of points of a sweep specification (checking its axes' shapes)."""
    size = 1
    for part in ("variables", "axes"):
        axes = spec.get(part) or {}
        if not isinstance(axes, Mapping):
            raise field_error(f"spec.{part}", MESSAGES["sweep_object"])
        for name, axis in axes.items():
            size *= axis_size(axis, field=f"spec.{part}.{name}")
    repeated = set(spec.get("variables") or {}) & set(spec.get("axes") or {})
    if repeated:
        name = sorted(repeated)[0]
        raise field_error(f"spec.axes.{name}", MESSAGES["sweep_repeated"].format(name=name))
    hardware = spec.get("hardware")
    if isinstance(hardware, Mapping) and isinstance(hardware.get("components"), list):
        size *= max(len(hardware["components"]), 1)
    return size


@transaction.atomic
def sweep_launch(*, user: User, name: object, spec: object) -> Sweep:
    """Return a new sweep whose child simulations are stored and queued as one group.

    `spec` holds the launch fields of `launch_plan` (system_model or snapshot, application or
    app_source, labels, queue, seed, time_limit_s, cpu_limit_s, timeline_limit), `variables`
    mapping names to a value, a list or a range {start, stop, step}, and optionally `hardware`
    {node, components, model}: the node's hardware is swapped for each component (id or
    name), and with `model` "recommended" (the default) its model for the component's
    recommended one where the node's model was not validated on that GPU
    (`simulator.model_validity.with_recommended_model`; "keep" keeps it, and such points' results warn). The size is
    checked before anything is expanded.
    """
    if not isinstance(spec, Mapping):
        raise field_error("spec", MESSAGES["sweep_object"])
    reject_nul(spec, field="spec")
    sweep_name = check_name(name) if name not in (None, "") else "sweep"
    size = sweep_size(spec)
    too_many = size_error(size, int(settings.PARASIM_MAX_SWEEP))
    if too_many is not None:
        raise field_error("spec", too_many)
    launch_fields = (
        "system_model",
        "snapshot",
        "application",
        "app_source",
        "labels",
        "queue",
        "seed",
        "time_limit_s",
        "cpu_limit_s",
        "timeline_limit",
        "failures",
        "uncertainty",
    )
    try:
        plan = launch_plan(
            user=user, **{key: spec.get(key) for key in launch_fields}, check_labels=False
        )
    except ValidationError as error:
        raise ValidationError(
            {f"spec.{field}": messages for field, messages in error.message_dict.items()}
        ) from error
    variable_axes = {
        name: axis_values(axis) for name, axis in (spec.get("variables") or {}).items()
    }
    other_axes = {name: axis_values(axis) for name, axis in (spec.get("axes") or {}).items()}
    axes = {**variable_axes, **other_axes}
    hardware_options = sweep_hardware(user, plan, spec.get("hardware"))
    declared = None if plan.declared is None else [item["name"] for item in plan.declared]
    if not isinstance(spec.get("labels"), Mapping):
        raise field_error(
            "spec.labels",
            MESSAGES["required"] if not spec.get("labels") else "Expected an object.",
        )
    sweep = Sweep.objects.create(owner=user, name=sweep_name, spec=dict(spec))
    children: list[Simulation] = []
    for snapshot, system, hardware in hardware_options:
        # Checked on each swapped-in record: the attribute an axis sets must be in all.
        builder = PointBuilder(
            plan=plan,
            labels=plan_labels(spec),
            snapshot=snapshot,
            system=system,
            hardware=hardware,
            axes=checked_axes(variable_axes, other_axes, snapshot, declared),
        )
        for values in itertools.product(*axes.values()):
            point = dict(zip(axes, values, strict=True))
            children.append(builder.child(point, sweep=sweep, sweep_name=sweep_name))
    check_active_runs(user, adding=len(children), field="spec.queue")
    Simulation.objects.bulk_create(children)
    sweep.aggregate = sweep_aggregate(sweep=sweep)
    sweep.save(update_fields=["aggregate"])
    dispatch.enqueue(children)
    return sweep


def checked_axes(
    variable_axes: Mapping[str, list[object]],
    other_axes: Mapping[str, list[object]],
    snapshot: Mapping[str, Any],
    declared: list[str] | None,
) -> list[Axis]:
    """Return the checked axes of a sweep or study on `snapshot` (simulator.sweep's rule),
    raising ValidationError naming the bad one (`spec.axes.<name>`)."""
    try:
        return [
            Axis(name, "variable", name, tuple(values)) for name, values in variable_axes.items()
        ] + parse_axes(other_axes, snapshot, declared=declared, field="spec.axes")
    except AxisError as error:
        raise field_error(error.field, error.message) from error


@dataclass
class PointBuilder:
    """Makes the child run of one point of a sweep or a study on one system (`snapshot`,
    parsed as `system`, with its swapped-in `hardware` if any): the point's snapshot and
    label counts checked once per distinct system, its variables resolved."""

    plan: LaunchPlan
    labels: dict[str, object]
    snapshot: dict[str, Any]
    system: SystemSnapshot
    hardware: dict[str, Any] | None
    axes: list[Axis]
    systems: dict[tuple[object, ...], tuple[dict[str, Any], dict[str, int]]] = dataclass_field(
        default_factory=dict
    )

    def child(
        self,
        point: Mapping[str, object],
        *,
        sweep: Sweep,
        sweep_name: str,
        extra: Mapping[str, Any] | None = None,
    ) -> Simulation:
        """Return the unsaved child run of `point` (each axis's name -> value), its
        `sweep_point` holding `extra` too (a study's trial number)."""
        try:
            variant, point_labels, given = apply_point(self.snapshot, self.labels, self.axes, point)
        except AxisError as error:  # a template's rules refusing a point of combined axes
            raise field_error(error.field, error.message) from error
        others = {a.name: point[a.name] for a in self.axes if a.kind != "variable"}
        shape = tuple(others.values())
        # One parse per distinct system a point runs on (the variables change none).
        if shape not in self.systems:
            parsed = self.system if not others else check_snapshot(variant, "spec.axes")[1]
            try:
                self.systems[shape] = (variant, check_label_counts(parsed, point_labels))
            except ValidationError as error:
                raise ValidationError(
                    {f"spec.{f}": messages for f, messages in error.message_dict.items()}
                ) from error
        point_snapshot, labels = self.systems[shape]
        variables = resolve_variables(self.plan.declared, given, field="spec.variables")
        label = ", ".join(f"{k}={v}" for k, v in point.items())
        if self.hardware:
            label = f"{self.hardware['name']}" + (f", {label}" if label else "")
        child = new_simulation(
            self.plan,
            snapshot=point_snapshot,
            variables=variables,
            name=f"{sweep_name}: {label}" if label else sweep_name,
            sweep=sweep,
            sweep_point={
                "variables": given,
                "hardware": self.hardware,
                "axes": others,
                **(extra or {}),
            },
        )
        child.labels = labels
        return child


def plan_labels(spec: Mapping[str, Any]) -> dict[str, object]:
    """Return the sweep's label counts as given (checked per point, with its count axes)."""
    labels = spec.get("labels")
    return dict(labels) if isinstance(labels, Mapping) else {}


def sweep_cancel(*, sweep: Sweep) -> Sweep:
    """Cancel every queued or running child of `sweep`; finished children keep their results."""
    pending = sweep.simulations.filter(
        status__in=[SimulationStatus.QUEUED, SimulationStatus.RUNNING]
    )
    for simulation in pending:
        try:
            simulation_cancel(simulation=simulation)
        except ValidationError:
            continue  # finished while we were cancelling the others
    with transaction.atomic():
        current = Sweep.objects.select_for_update().get(pk=sweep.pk)
        current.aggregate = sweep_aggregate(sweep=current)
        if current.status == SweepStatus.RUNNING:
            current.status = SweepStatus.CANCELLED
            current.finished = current_time()
        current.save(update_fields=["aggregate", "status", "finished"])
    return current
