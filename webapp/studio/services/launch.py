"""Launching a simulation: check everything it depends on, then store it and queue it.

`launch_plan` validates the system, application, variables, labels, queue, the run's limits
(within the queue's maximum, `check_run_limits`) and seed before anything is stored or queued; the snapshot is parsed once (`SystemSnapshot`) and
that parsed form is what the labels are placed on. `simulation_launch` queues with
`transaction.on_commit` (`webapp.studio.dispatch`), so that a worker never sees a run the
database does not hold yet. A run's Celery task id is fixed here; a message whose id is not
the run's current one is stale and is ignored, which keeps redelivery and requeueing
idempotent.
"""

from __future__ import annotations

import copy
import uuid
from collections.abc import Mapping
from dataclasses import dataclass
from hashlib import sha256
from typing import TYPE_CHECKING, Any

from django.conf import settings
from django.core.cache import caches
from django.core.exceptions import ObjectDoesNotExist, ValidationError
from django.db import transaction

import simulator
from hwdb.selectors import (
    system_model_export_snapshot,
    system_model_get,
    system_model_snapshot_version,
)
from simulator.errors import LaunchError, SnapshotError
from simulator.failure_injection import check_failures
from simulator.placement import place_processes
from simulator.results import DEFAULT_TIMELINE_LIMIT
from simulator.snapshot import SystemSnapshot, load_snapshot
from simulator.uncertainty import check_uncertainty
from webapp.studio import dispatch
from webapp.studio.limits import LIMIT_NAMES, queue_limits
from webapp.studio.models import NAME_MAX_LENGTH, ApplicationModel, Simulation, Sweep
from webapp.studio.selectors import active_run_count, application_model_for_launch
from webapp.studio.services.common import MESSAGES, check_source, field_error
from webapp.studio.validation import reject_nul, resolve_variables

if TYPE_CHECKING:
    from django.contrib.auth.models import User

    from hwdb.models import SystemModel

SNAPSHOT_KEY_PREFIX = "parasim:launch-snapshot:"
SNAPSHOT_CACHE_SECONDS = 60


@dataclass(frozen=True)
class LaunchPlan:
    """A launch checked against everything it depends on, ready to store and queue."""

    owner: User
    name: str
    system_model: SystemModel | None  # the record launched from, None for a bare snapshot
    snapshot: dict[str, Any]
    system: SystemSnapshot  # `snapshot` parsed, once per launch
    application: ApplicationModel | None  # None for a bare source
    app_source: str
    declared: list[dict[str, Any]] | None
    variables: dict[str, object]
    labels: dict[str, int]
    queue: str
    seed: int
    time_limit_s: int
    cpu_limit_s: int
    timeline_limit: int
    failures: dict[str, Any] | None = None  # simulator.failure_injection.check_failures
    uncertainty: dict[str, Any] | None = None  # simulator.uncertainty.check_uncertainty


def _visible_system_snapshot(
    user: User, system_model_id: object
) -> tuple[SystemModel, dict[str, Any], SystemSnapshot]:
    """Return the visible system model, its exported snapshot and that snapshot parsed.

    What a launch of a system model exports and parses is kept per version of the record and
    the catalogue (`system_model_snapshot_version`) in each process's memory: a hit costs the
    version's one query instead of four and the parse. The version is
    read before the export, so an entry is never older than its key says.
    """
    version = system_model_snapshot_version(user=user, system_model_id=system_model_id)
    key = (
        None
        if version is None
        else SNAPSHOT_KEY_PREFIX + sha256(repr(version).encode()).hexdigest()
    )
    if key is not None and (kept := caches["local"].get(key)) is not None:
        return kept
    try:
        system_model = system_model_get(user=user, system_model_id=system_model_id)
    except ObjectDoesNotExist as error:
        raise field_error(
            "system_model", MESSAGES["not_visible"].format(what="system model", pk=system_model_id)
        ) from error
    exported = system_model_export_snapshot(system_model=system_model)
    frozen, system = check_snapshot(exported, "system_model")
    if key is not None:
        caches["local"].set(key, (system_model, frozen, system), SNAPSHOT_CACHE_SECONDS)
    return system_model, frozen, system


def _visible_application(user: User, application_id: object) -> ApplicationModel:
    try:
        return application_model_for_launch(user=user, application_id=application_id)
    except ApplicationModel.DoesNotExist as error:
        raise field_error(
            "application",
            MESSAGES["not_visible"].format(what="application model", pk=application_id),
        ) from error


def check_snapshot(snapshot: object, field: str) -> tuple[dict[str, Any], SystemSnapshot]:
    """Return the snapshot and its parsed form, or raise ValidationError with the snapshot's
    paths under `field`. The one parse of a launch: everything after takes the parsed form."""
    try:
        system = load_snapshot(snapshot)
    except SnapshotError as error:
        raise ValidationError(
            {f"{field}.{path}": messages for path, messages in error.errors.items()}
        ) from error
    assert isinstance(snapshot, dict)
    return snapshot, system


def check_label_counts(system: SystemSnapshot, labels: object) -> dict[str, int]:
    """Return the label counts when they are within the server's limit and fit `system`."""
    if not isinstance(labels, Mapping) or not labels:
        raise field_error("labels", MESSAGES["required"] if not labels else "Expected an object.")
    reject_nul(labels, field="labels")
    counts = [count for count in labels.values() if isinstance(count, int)]
    limit = int(settings.PARASIM_MAX_PROCESSES)
    if sum(counts) > limit:  # before placing them: a million processes would take a while
        raise field_error(
            "labels", MESSAGES["too_many_processes"].format(total=sum(counts), limit=limit)
        )
    try:
        place_processes(system, labels)
    except LaunchError as error:
        raise field_error(error.field, error.message.removeprefix(f"{error.field}: ")) from error
    return {str(label): int(count) for label, count in labels.items()}


def _check_queue(queue: object) -> str:
    known = list(settings.PARASIM_QUEUES)
    if queue is None or queue == "":
        return known[0]
    if not isinstance(queue, str) or queue not in settings.PARASIM_QUEUES:
        raise field_error(
            "queue", MESSAGES["unknown_queue"].format(queue=queue, known=", ".join(known))
        )
    return queue


def check_run_limits(queue: str, **asked: object) -> dict[str, int]:
    """Return the run's limits {field: seconds} (`time_limit_s`, `cpu_limit_s`): each one
    asked for, or the queue's default; raise ValidationError naming the field of a value that
    is not a whole number of seconds from 1 to the queue's maximum."""
    checked = {}
    for field, bounds in queue_limits(queue).items():
        value = asked.get(field)
        if value is None:
            checked[field] = bounds["default"]
            continue
        if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= bounds["max"]:
            message = MESSAGES["run_limit"].format(
                field=field, what=LIMIT_NAMES[field], max=bounds["max"], queue=queue
            )
            raise field_error(field, message)
        checked[field] = value
    return checked


def _check_timeline_limit(value: object) -> int:
    limit = int(settings.PARASIM_MAX_TIMELINE_LIMIT)
    if value is None:
        return min(DEFAULT_TIMELINE_LIMIT, limit)
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= limit:
        raise field_error("timeline_limit", MESSAGES["timeline_limit"].format(limit=limit))
    return value


def _check_failures(value: object) -> dict[str, Any] | None:
    """Return the failure injection asked for in normal form, None for none."""
    if value is None:
        return None
    try:
        return check_failures(value)
    except LaunchError as error:
        raise field_error(error.field, error.message.removeprefix(f"{error.field}: ")) from error


def _check_uncertainty(value: object) -> dict[str, Any] | None:
    """Return the prediction interval asked for in normal form, None for none."""
    if value is None:
        return None
    try:
        return check_uncertainty(value).to_dict()
    except LaunchError as error:
        raise field_error(error.field, error.message.removeprefix(f"{error.field}: ")) from error


def _check_seed(value: object) -> int:
    if value is None:
        return 0
    if isinstance(value, bool) or not isinstance(value, int) or abs(value) >= 2**63:
        raise field_error("seed", MESSAGES["seed"])
    return value


def launch_plan(
    *,
    user: User,
    name: object = "",
    system_model: object = None,
    snapshot: object = None,
    application: object = None,
    app_source: object = None,
    variables: object = None,
    labels: object = None,
    queue: object = None,
    seed: object = None,
    time_limit_s: object = None,
    cpu_limit_s: object = None,
    timeline_limit: object = None,
    failures: object = None,
    uncertainty: object = None,
    check_labels: bool = True,
) -> LaunchPlan:
    """Return the checked plan of a launch; raise ValidationError naming the first bad field.

    The system is a visible system model (`system_model`, an id) or an explicit `snapshot`;
    the application a visible application model (`application`) or a bare `app_source`;
    `time_limit_s` and `cpu_limit_s` default to the queue's and may not exceed its maximum;
    `failures` asks for Monte Carlo failure injection (simulator.failure_injection),
    `uncertainty` for a prediction interval (simulator.uncertainty).
    """
    if name in (None, ""):
        name = ""
    elif not isinstance(name, str) or len(name) > NAME_MAX_LENGTH:
        raise field_error("name", MESSAGES["name"])
    reject_nul(name, field="name")
    queue_name = _check_queue(queue)
    limits = check_run_limits(queue_name, time_limit_s=time_limit_s, cpu_limit_s=cpu_limit_s)
    if (system_model is None) == (snapshot is None):
        field = "system_model" if system_model is None else "snapshot"
        message = (
            MESSAGES["required"]
            if system_model is None
            else MESSAGES["one_of"].format(a="system_model", b="snapshot")
        )
        raise field_error(field, message)
    system_record: SystemModel | None = None
    if system_model is not None:
        system_record, frozen, system = _visible_system_snapshot(user, system_model)
    else:
        reject_nul(snapshot, field="snapshot")
        given, system = check_snapshot(snapshot, "snapshot")
        frozen = copy.deepcopy(given)
    if (application is None) == (app_source is None):
        field = "application" if application is None else "app_source"
        message = (
            MESSAGES["required"]
            if application is None
            else MESSAGES["one_of"].format(a="application", b="app_source")
        )
        raise field_error(field, message)
    application_record: ApplicationModel | None = None
    declared: list[dict[str, Any]] | None = None
    if application is not None:
        application_record = _visible_application(user, application)
        source = application_record.source
        declared = list(application_record.variables)
    else:
        source = check_source(app_source, "app_source")
    # A sweep checks variables and labels per point instead (check_labels=False).
    resolved = resolve_variables(declared, variables) if check_labels else {}
    checked_labels = check_label_counts(system, labels) if check_labels else {}
    return LaunchPlan(
        owner=user,
        name=str(name),
        system_model=system_record,
        snapshot=frozen,
        system=system,
        application=application_record,
        app_source=source,
        declared=declared,
        variables=resolved,
        labels=checked_labels,
        queue=queue_name,
        seed=_check_seed(seed),
        time_limit_s=limits["time_limit_s"],
        cpu_limit_s=limits["cpu_limit_s"],
        timeline_limit=_check_timeline_limit(timeline_limit),
        failures=_check_failures(failures),
        uncertainty=_check_uncertainty(uncertainty),
    )


def new_simulation(
    plan: LaunchPlan,
    *,
    snapshot: dict[str, Any] | None = None,
    variables: dict[str, object] | None = None,
    name: str | None = None,
    sweep: Sweep | None = None,
    sweep_point: dict[str, Any] | None = None,
) -> Simulation:
    return Simulation(
        owner=plan.owner,
        name=plan.name if name is None else name,
        system_model=plan.system_model,
        system_name=plan.system_model.name if plan.system_model is not None else "",
        snapshot=plan.snapshot if snapshot is None else snapshot,
        application=plan.application,
        application_name=plan.application.name if plan.application is not None else "",
        app_source=plan.app_source,
        variables=plan.variables if variables is None else variables,
        labels=plan.labels,
        queue=plan.queue,
        seed=plan.seed,
        time_limit_s=plan.time_limit_s,
        cpu_limit_s=plan.cpu_limit_s,
        timeline_limit=plan.timeline_limit,
        engine_version=simulator.ENGINE_VERSION,
        celery_task_id=str(uuid.uuid4()),
        sweep=sweep,
        sweep_point=sweep_point,
        failures=plan.failures,
        uncertainty=plan.uncertainty,
    )


def check_active_runs(user: User, *, adding: int, field: str, active: int | None = None) -> None:
    """Refuse a launch that would leave `user` more runs queued or running than allowed
    (`active`: how many are, when the caller has counted them)."""
    limit = int(settings.PARASIM_MAX_ACTIVE_RUNS)
    if active is None:
        active = active_run_count(owner_id=user.pk)
    if active + adding > limit:
        raise field_error(
            field, MESSAGES["too_many_active"].format(active=active, adding=adding, limit=limit)
        )


@transaction.atomic
def simulation_launch(*, user: User, **launch: Any) -> Simulation:
    """Return a new queued simulation; nothing is stored or queued unless everything is valid.

    Keyword arguments are those of `launch_plan`.
    """
    plan = launch_plan(user=user, **launch)
    runs = dispatch.lock_owner(user.pk)
    check_active_runs(user, adding=1, field="queue", active=runs.active)
    simulation = new_simulation(plan)
    simulation.held = dispatch.hold_new(runs)
    simulation.save()
    dispatch.enqueue_admitted(simulation, runs)
    return simulation
