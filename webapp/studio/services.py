"""Writes of the studio: application models, launching, running and cancelling simulations,
sweeps, and recovering runs whose worker vanished.

`simulation_launch` validates everything (system, application, variables, labels, queue,
time limit) before anything is stored or queued, and queues with `transaction.on_commit`
so that a worker never sees a run the database does not hold yet. A run's Celery task id is
fixed at launch; a message whose id is not the run's current one is stale and is ignored,
which keeps redelivery and requeueing idempotent.
"""

from __future__ import annotations

import copy
import dataclasses
import itertools
import logging
import math
import time
import uuid
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import TYPE_CHECKING, Any

from django.conf import settings
from django.core.exceptions import ValidationError
from django.db import InterfaceError, OperationalError, connection, transaction
from django.db.models import Count, F, Q
from django.db.models.functions import Greatest
from django.utils import timezone

import simulator
from simulator.errors import LaunchError, SimulationError, SnapshotError, UserCodeError
from simulator.placement import place_processes
from simulator.snapshot import SystemSnapshot, load_snapshot
from webapp.studio.models import (
    FINAL_STATUSES,
    NAME_MAX_LENGTH,
    ApplicationModel,
    Simulation,
    SimulationStatus,
    Sweep,
    SweepStatus,
)
from webapp.studio.validation import (
    axis_size,
    axis_values,
    reject_nul,
    resolve_variables,
    validate_variable_declarations,
)

if TYPE_CHECKING:
    from django.contrib.auth.models import User

    from hwdb.models import Component
    from simulator.sandbox import Limits

# The sandbox's wall clock stops a run first; Celery's soft and then hard limits are backstops.
SOFT_LIMIT_MARGIN_S = 10
HARD_LIMIT_MARGIN_S = 20
PROGRESS_EVERY_S = 0.5
MAX_SOURCE_LENGTH = 1_000_000

logger = logging.getLogger(__name__)

MESSAGES = {
    "required": "This field is required.",
    "one_of": "Give either {a} or {b}, not both.",
    "not_visible": "No {what} with id {pk!r} that you can see.",
    "not_owner": "Only the owner may change this {what}.",
    "unknown_queue": "Unknown queue {queue!r}; known queues: {known}.",
    "time_limit": "Expected a whole number of seconds from 1 to {limit} (the server's maximum).",
    "seed": "Expected a whole number.",
    "name": f"Expected a string of at most {NAME_MAX_LENGTH} characters.",
    "source": f"Expected Python source of at most {MAX_SOURCE_LENGTH} characters.",
    "sweep_too_large": "The sweep has {size} points; at most {limit} are allowed.",
    "too_many_processes": (
        "The labels ask for {total:,} processes; this server runs at most {limit:,} in one run "
        "(PARASIM_MAX_PROCESSES)."
    ),
    "too_many_active": (
        "You have {active:,} runs queued or running and this launch adds {adding:,}; this "
        "server holds at most {limit:,} per user (PARASIM_MAX_ACTIVE_RUNS). Wait for some to "
        "finish or cancel them."
    ),
    "sweep_node": "The system has no hardware node {node!r} (nodes: {known}).",
    "sweep_component": "No component {ref!r} of type {type} that you can see.",
    "sweep_ambiguous": "{count} components are named {ref!r}; give the id instead.",
    "sweep_components": "Expected a non-empty list of component ids or names.",
    "sweep_object": "Expected an object.",
    "not_cancellable": "A {status} simulation cannot be cancelled.",
    "lost": "The worker {worker!r} running this simulation stopped answering; "
    "attempt {attempt} of {limit}.",
    "lost_final": "The worker running this simulation was lost {attempts} times "
    "(last: {worker!r}); giving up after PARASIM_MAX_ATTEMPTS={limit} attempts.",
    "overdue": "The simulation ran past its time limit of {limit} s plus {margin} s and was stopped.",
    "soft_limit": "The simulation hit its time limit of {limit} s.",
    "internal": "Internal error while running the simulation: {error}",
}


class RunCancelled(Exception):
    """Raised inside a running task's progress callback once its run is no longer running."""


# The database could not be reached (rather than refusing a value). Nothing is wrong with the
# run: the heartbeat skips a beat, storing an outcome waits STORE_RETRY_DELAYS_S out, and the
# task retries the attempt after that (tests/webapp/studio/test_faults.py).
DATABASE_UNREACHABLE = (OperationalError, InterfaceError)
STORE_RETRY_DELAYS_S = (0.5, 1.0, 2.0, 4.0, 8.0)


def _drop_broken_connection() -> None:
    """Close this thread's database connection so that the next query opens a new one."""
    if not connection.in_atomic_block:
        connection.close()


def _error(field: str, message: str) -> ValidationError:
    return ValidationError({field: [message]})


def _now() -> datetime:
    return timezone.now()


# --- application models ---------------------------------------------------------------


def _check_name(name: object, field: str = "name") -> str:
    if not isinstance(name, str) or not name.strip() or len(name) > NAME_MAX_LENGTH:
        raise _error(field, MESSAGES["name"])
    reject_nul(name, field=field)
    return name.strip()


def _check_source(source: object, field: str = "source") -> str:
    if not isinstance(source, str) or not source.strip() or len(source) > MAX_SOURCE_LENGTH:
        raise _error(field, MESSAGES["source"])
    reject_nul(source, field=field)
    return source


def _check_compiles(source: str, field: str = "source") -> str:
    """Return `source` when it compiles as an application model; else a 400 with its line."""
    from simulator.evaluate import check_application_in_sandbox

    try:
        check_application_in_sandbox(source=source)
    except UserCodeError as error:
        where = f"Line {error.line}: " if error.line is not None else ""
        raise _error(field, where + error.detail) from None
    return source


@transaction.atomic
def application_model_create(
    *,
    owner: User,
    name: str,
    source: str,
    variables: object = None,
    description: str = "",
    shared: bool = False,
) -> ApplicationModel:
    """Return a new application model of `owner` with its variable declarations checked."""
    return ApplicationModel.objects.create(
        owner=owner,
        name=_check_name(name),
        source=_check_compiles(_check_source(source)),
        variables=validate_variable_declarations(variables if variables is not None else []),
        description=description,
        shared=shared,
    )


@transaction.atomic
def application_model_update(
    *, application: ApplicationModel, fields: Mapping[str, Any]
) -> ApplicationModel:
    """Return `application` with `fields` (name, source, variables, description, shared) set.

    Simulations launched before keep the source they froze.
    """
    if "name" in fields:
        application.name = _check_name(fields["name"])
    if "source" in fields and fields["source"] != application.source:
        application.source = _check_compiles(_check_source(fields["source"]))
    if "variables" in fields:
        application.variables = validate_variable_declarations(fields["variables"])
    if "description" in fields:
        application.description = str(fields["description"])
    if "shared" in fields:
        application.shared = bool(fields["shared"])
    application.save()
    return application


def application_model_delete(*, application: ApplicationModel) -> None:
    """Delete `application`; its simulations keep their frozen source."""
    application.delete()


# --- launching --------------------------------------------------------------------------


@dataclass(frozen=True)
class LaunchPlan:
    """A launch checked against everything it depends on, ready to store and queue."""

    owner: User
    name: str
    system_model_id: int | None
    snapshot: dict[str, Any]
    application_id: int | None
    app_source: str
    declared: list[dict[str, Any]] | None
    variables: dict[str, object]
    labels: dict[str, int]
    queue: str
    seed: int
    time_limit_s: int


def _visible_system_snapshot(user: User, system_model_id: object) -> tuple[int, dict[str, Any]]:
    from django.http import Http404

    from hwdb.selectors import system_model_get
    from hwdb.services import system_model_export_snapshot

    try:
        system_model = system_model_get(user=user, system_model_id=system_model_id)
    except Http404 as error:
        raise _error(
            "system_model", MESSAGES["not_visible"].format(what="system model", pk=system_model_id)
        ) from error
    return system_model.pk, system_model_export_snapshot(system_model=system_model)


def _visible_application(user: User, application_id: object) -> ApplicationModel:
    from webapp.studio.selectors import application_model_get

    try:
        return application_model_get(user=user, application_id=application_id)
    except ApplicationModel.DoesNotExist as error:
        raise _error(
            "application",
            MESSAGES["not_visible"].format(what="application model", pk=application_id),
        ) from error


def _check_snapshot(snapshot: object, field: str) -> tuple[dict[str, Any], SystemSnapshot]:
    """Return the snapshot and its validated form (checked once per launch, placed from)."""
    try:
        system = load_snapshot(snapshot)
    except SnapshotError as error:
        raise ValidationError(
            {f"{field}.{path}": messages for path, messages in error.errors.items()}
        ) from error
    assert isinstance(snapshot, dict)
    return snapshot, system


def _check_labels(snapshot: Mapping[str, Any] | SystemSnapshot, labels: object) -> dict[str, int]:
    if not isinstance(labels, Mapping) or not labels:
        raise _error("labels", MESSAGES["required"] if not labels else "Expected an object.")
    reject_nul(labels, field="labels")
    counts = [count for count in labels.values() if isinstance(count, int)]
    limit = int(settings.PARASIM_MAX_PROCESSES)
    if sum(counts) > limit:  # before placing them: a million processes would take a while
        raise _error(
            "labels", MESSAGES["too_many_processes"].format(total=sum(counts), limit=limit)
        )
    try:
        place_processes(load_snapshot(snapshot), labels)
    except LaunchError as error:
        raise _error(error.field, error.message.removeprefix(f"{error.field}: ")) from error
    return {str(label): int(count) for label, count in labels.items()}


def _check_queue(queue: object) -> str:
    known = list(settings.PARASIM_QUEUES)
    if queue is None or queue == "":
        return known[0]
    if not isinstance(queue, str) or queue not in settings.PARASIM_QUEUES:
        raise _error("queue", MESSAGES["unknown_queue"].format(queue=queue, known=", ".join(known)))
    return queue


def _check_time_limit(value: object) -> int:
    limit = int(settings.PARASIM_MAX_RUN_SECONDS)
    if value is None:
        return limit
    if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= limit:
        raise _error("time_limit_s", MESSAGES["time_limit"].format(limit=limit))
    return value


def _check_seed(value: object) -> int:
    if value is None:
        return 0
    if isinstance(value, bool) or not isinstance(value, int) or abs(value) >= 2**63:
        raise _error("seed", MESSAGES["seed"])
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
    check_labels: bool = True,
) -> LaunchPlan:
    """Return the checked plan of a launch; raise ValidationError naming the first bad field.

    The system is a visible system model (`system_model`, an id) or an explicit `snapshot`;
    the application a visible application model (`application`) or a bare `app_source`.
    """
    if name in (None, ""):
        name = ""
    elif not isinstance(name, str) or len(name) > NAME_MAX_LENGTH:
        raise _error("name", MESSAGES["name"])
    reject_nul(name, field="name")
    queue_name = _check_queue(queue)
    if (system_model is None) == (snapshot is None):
        field = "system_model" if system_model is None else "snapshot"
        message = (
            MESSAGES["required"]
            if system_model is None
            else MESSAGES["one_of"].format(a="system_model", b="snapshot")
        )
        raise _error(field, message)
    system_model_id: int | None = None
    if system_model is not None:
        system_model_id, exported = _visible_system_snapshot(user, system_model)
        frozen, system = _check_snapshot(exported, "system_model")
    else:
        reject_nul(snapshot, field="snapshot")
        given, system = _check_snapshot(snapshot, "snapshot")
        frozen = copy.deepcopy(given)
    if (application is None) == (app_source is None):
        field = "application" if application is None else "app_source"
        message = (
            MESSAGES["required"]
            if application is None
            else MESSAGES["one_of"].format(a="application", b="app_source")
        )
        raise _error(field, message)
    application_id: int | None = None
    declared: list[dict[str, Any]] | None = None
    if application is not None:
        record = _visible_application(user, application)
        application_id, source, declared = record.pk, record.source, list(record.variables)
    else:
        source = _check_source(app_source, "app_source")
    # A sweep checks variables and labels per point instead (check_labels=False).
    resolved = resolve_variables(declared, variables) if check_labels else {}
    checked_labels = _check_labels(system, labels) if check_labels else {}
    return LaunchPlan(
        owner=user,
        name=str(name),
        system_model_id=system_model_id,
        snapshot=frozen,
        application_id=application_id,
        app_source=source,
        declared=declared,
        variables=resolved,
        labels=checked_labels,
        queue=queue_name,
        seed=_check_seed(seed),
        time_limit_s=_check_time_limit(time_limit_s),
    )


def _new_simulation(
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
        system_model_id=plan.system_model_id,
        snapshot=plan.snapshot if snapshot is None else snapshot,
        application_id=plan.application_id,
        app_source=plan.app_source,
        variables=plan.variables if variables is None else variables,
        labels=plan.labels,
        queue=plan.queue,
        seed=plan.seed,
        time_limit_s=plan.time_limit_s,
        engine_version=simulator.ENGINE_VERSION,
        celery_task_id=str(uuid.uuid4()),
        sweep=sweep,
        sweep_point=sweep_point,
    )


# Fairness between users (docs/deployment.md): kombu's Redis transport keeps one list per
# priority level of a queue and a worker always pops the best (lowest) level first, FIFO within
# a level. Level k holds the ranks [2**(k-1), 2**k) of an owner's backlog, so no user ever has
# more than 2**k waiting runs at level k or better: a user's first waiting run overtakes every
# other user's flood but that flood's own first run. Redis clamps priorities to 0..9.
FAIR_PRIORITY_LEVELS = 10


def fair_priority(rank: int) -> int:
    """Return the broker priority (0 is served first) of a run with `rank` of its owner's
    runs queued or running before it: 0 for the first, 1 for the second, then 2 for two runs,
    3 for four, ... and the last level for the tail of a flood."""
    return min(max(rank, 0).bit_length(), FAIR_PRIORITY_LEVELS - 1)


def fair_priorities(*, backlog: int, count: int) -> list[int]:
    """Return the priorities of `count` new runs of an owner who already has `backlog` runs
    queued or running, in the order they are sent (a sweep's points in order)."""
    return [fair_priority(backlog + index) for index in range(count)]


def _run_priorities(simulations: list[Simulation]) -> dict[int, int]:
    """Return each run's priority by id, ranked after its owner's other active runs.

    Counted when the runs are sent, after their transaction committed: a concurrent launch of
    the same owner that committed first is counted too, which only pushes these runs back, so
    the per-level bound of `fair_priority` holds without a lock. A count that fails ranks the
    runs within their launch only: they are stored as queued, and must be sent whatever happens.
    """
    by_owner: dict[int, list[Simulation]] = {}
    for sim in simulations:
        by_owner.setdefault(sim.owner_id, []).append(sim)
    priorities: dict[int, int] = {}
    for owner_id, runs in by_owner.items():
        try:
            backlog = (
                Simulation.objects.filter(
                    owner_id=owner_id,
                    status__in=(SimulationStatus.QUEUED, SimulationStatus.RUNNING),
                )
                .exclude(pk__in=[run.pk for run in runs])
                .count()
            )
        except Exception:
            import logging

            logging.getLogger(__name__).warning("could not rank runs", exc_info=True)
            backlog = 0
        levels = fair_priorities(backlog=backlog, count=len(runs))
        priorities.update({run.pk: level for run, level in zip(runs, levels, strict=True)})
    return priorities


def _task_options(simulation: Simulation, *, priority: int = 0) -> dict[str, Any]:
    return {
        "queue": simulation.queue,
        "task_id": simulation.celery_task_id,
        "priority": priority,
        "soft_time_limit": simulation.time_limit_s + SOFT_LIMIT_MARGIN_S,
        "time_limit": simulation.time_limit_s + HARD_LIMIT_MARGIN_S,
    }


def send_runs(simulations: list[Simulation]) -> None:
    """Send the runs' tasks to their queues now, several as one Celery group, each with its
    fair-share priority (`_run_priorities`)."""
    from celery import group

    from webapp.studio.tasks import run_simulation

    priorities = _run_priorities(simulations)
    signatures = [
        run_simulation.signature(args=(sim.pk,), **_task_options(sim, priority=priorities[sim.pk]))
        for sim in simulations
    ]
    try:
        if len(signatures) == 1:
            signatures[0].apply_async()
        elif signatures:
            group(signatures).apply_async()
    except Exception:  # the broker is unreachable: the runs stay stored, marked unsent
        logger.warning(
            "could not send %d run(s) to the broker; the lost-run check will send them",
            len(signatures),
            exc_info=True,
        )
        return
    Simulation.objects.filter(pk__in=[sim.pk for sim in simulations], sent__isnull=True).update(
        sent=_now()
    )


def _check_active_runs(user: User, *, adding: int, field: str) -> None:
    """Refuse a launch that would leave `user` more runs queued or running than allowed."""
    limit = int(settings.PARASIM_MAX_ACTIVE_RUNS)
    active = Simulation.objects.filter(
        owner=user, status__in=(SimulationStatus.QUEUED, SimulationStatus.RUNNING)
    ).count()
    if active + adding > limit:
        raise _error(
            field, MESSAGES["too_many_active"].format(active=active, adding=adding, limit=limit)
        )


def _enqueue(simulations: list[Simulation]) -> None:
    """Queue the runs once the surrounding transaction commits, so workers find them stored."""
    transaction.on_commit(lambda: send_runs(simulations))


@transaction.atomic
def simulation_launch(*, user: User, **launch: Any) -> Simulation:
    """Return a new queued simulation; nothing is stored or queued unless everything is valid.

    Keyword arguments are those of `launch_plan`.
    """
    plan = launch_plan(user=user, **launch)
    _check_active_runs(user, adding=1, field="queue")
    simulation = _new_simulation(plan)
    simulation.save()
    _enqueue([simulation])
    return simulation


# --- running (called by the Celery task) ------------------------------------------------


def simulation_start(*, simulation_id: int, task_id: str, worker: str) -> Simulation | None:
    """Return the run claimed for this attempt, or None when the message must be skipped.

    Skipped: the run is final (a redelivery after it finished) or the message is stale
    (the run was requeued under another task id). A run that already used
    PARASIM_MAX_ATTEMPTS starts is failed instead of started again.
    """
    limit = int(settings.PARASIM_MAX_ATTEMPTS)
    with transaction.atomic():
        simulation = Simulation.objects.select_for_update().filter(pk=simulation_id).first()
        if simulation is None or simulation.is_final or simulation.celery_task_id != task_id:
            return None
        now = _now()
        if simulation.attempts >= limit:
            simulation.status = SimulationStatus.FAILED
            simulation.error = {
                "kind": "worker_lost",
                "message": MESSAGES["lost_final"].format(
                    attempts=simulation.attempts, worker=simulation.worker, limit=limit
                ),
            }
            simulation.finished = now
            simulation.save()
            finished = simulation
        else:
            simulation.status = SimulationStatus.RUNNING
            simulation.attempts += 1
            simulation.worker = worker
            simulation.started = now
            simulation.heartbeat = now
            simulation.progress = 0.0
            simulation.save()
            return simulation
    _after_final(finished)
    return None


def progress_recorder(
    simulation: Simulation, *, every_s: float = PROGRESS_EVERY_S
) -> Callable[[float], None]:
    """Return a progress callback writing progress and heartbeat at most every `every_s`.

    It raises RunCancelled once the run is no longer this attempt's running run (cancelled,
    or requeued by the lost-run check), which stops the sandboxed child. Stored progress
    stays within 0..1 and never decreases within an attempt; a non-finite fraction only
    refreshes the heartbeat.
    """
    last = -math.inf
    pk, task_id = simulation.pk, simulation.celery_task_id

    def record(fraction: float) -> None:
        nonlocal last
        now = time.monotonic()
        if now - last < every_s:
            return
        last = now
        fields: dict[str, Any] = {"heartbeat": _now()}
        value = float(fraction)
        if math.isfinite(value):
            fields["progress"] = Greatest(F("progress"), min(max(value, 0.0), 1.0))
        try:
            updated = Simulation.objects.filter(
                pk=pk, status=SimulationStatus.RUNNING, celery_task_id=task_id
            ).update(**fields)
        except DATABASE_UNREACHABLE:
            _drop_broken_connection()  # best effort: a database outage must not end the run
            return
        if not updated:
            raise RunCancelled(pk)

    return record


def simulation_finish(
    *,
    simulation: Simulation,
    result: Mapping[str, Any] | None = None,
    error: Mapping[str, Any] | None = None,
) -> bool:
    """Store the outcome of this attempt; return False when the run was cancelled meanwhile.

    A database outage of up to STORE_RETRY_DELAYS_S in all is waited out (the outcome lives
    only in this process); a longer one raises, and the task retries the attempt.
    """
    fields: dict[str, Any] = {"finished": _now(), "heartbeat": _now()}
    if error is None and result is not None:
        fields.update(
            status=SimulationStatus.SUCCEEDED,
            result=_storable(dict(result)),
            error=None,
            progress=1.0,
            overall_time_s=_number(result.get("overall_time_s")),
            energy_j=_number(_energy_total(result.get("energy_j"))),
        )
    else:
        fields.update(
            status=SimulationStatus.FAILED, error=_storable(dict(error or {})), result=None
        )
    for delay in (*STORE_RETRY_DELAYS_S, None):
        try:
            with transaction.atomic():
                updated = Simulation.objects.filter(
                    pk=simulation.pk,
                    status=SimulationStatus.RUNNING,
                    celery_task_id=simulation.celery_task_id,
                ).update(**fields)
                if updated and simulation.sweep_id is not None:
                    sweep_refresh_aggregate(sweep_id=simulation.sweep_id)
            return bool(updated)
        except DATABASE_UNREACHABLE:
            if delay is None or connection.in_atomic_block:
                raise
            _drop_broken_connection()
            time.sleep(delay)
    raise AssertionError("unreachable")


def _storable(value: Any) -> Any:
    """Return `value` with NUL characters (which PostgreSQL cannot store) shown as U+FFFD."""
    if isinstance(value, str):
        return value.replace("\x00", "\ufffd")
    if isinstance(value, Mapping):
        return {_storable(key): _storable(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [_storable(item) for item in value]
    return value


def _number(value: object) -> float | None:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return float(value)


def _energy_total(value: object) -> object:
    if isinstance(value, Mapping):
        return value.get("total", value.get("total_j"))
    return value


def sandbox_payload(simulation: Simulation) -> dict[str, Any]:
    """Return the keyword arguments of `run_simulation` for this run (JSON-serialisable)."""
    return {
        "snapshot": simulation.snapshot,
        "app_source": simulation.app_source,
        "labels": simulation.labels,
        "variables": simulation.variables,
        "seed": simulation.seed,
    }


def simulation_run(*, simulation_id: int, task_id: str, worker: str) -> Simulation | None:
    """Run one attempt of a simulation in the simulator's sandbox and store its outcome.

    Return the run, or None when the message was skipped (see `simulation_start`).
    """
    from celery.exceptions import SoftTimeLimitExceeded

    from simulator.sandbox import run_sandboxed

    simulation = simulation_start(simulation_id=simulation_id, task_id=task_id, worker=worker)
    if simulation is None:
        return None
    try:
        result = run_sandboxed(
            sandbox_payload(simulation),
            limits=sandbox_limits(simulation.time_limit_s),
            progress=progress_recorder(simulation),
            keep_spare=True,  # the next run's child starts while this one is stored
        )
    except RunCancelled:
        return simulation
    except SimulationError as error:
        simulation_finish(simulation=simulation, error=error.to_dict())
    except SoftTimeLimitExceeded:
        message = MESSAGES["soft_limit"].format(limit=simulation.time_limit_s)
        simulation_finish(
            simulation=simulation, error={"kind": "limit", "limit": "wall", "message": message}
        )
    except Exception as error:  # an engine bug must not leave the run "running"
        _finish_internal(simulation, error)
    else:
        try:
            simulation_finish(simulation=simulation, result=result)
        except DATABASE_UNREACHABLE:
            raise  # not the result's fault: the task retries the attempt
        except Exception as error:  # a result the database refuses must not either
            _finish_internal(simulation, error)
    return simulation


def _finish_internal(simulation: Simulation, error: BaseException) -> None:
    """Fail the run with an internal error naming `error`."""
    message = MESSAGES["internal"].format(error=f"{type(error).__name__}: {error}")
    simulation_finish(simulation=simulation, error={"kind": "internal", "message": message})


def sandbox_limits(seconds: int) -> Limits:
    """Return the sandbox limits of one attempt: the run's wall clock and a CPU bound.

    The CPU bound (twice the wall clock plus slack, for the JavaScript engine's own
    threads) also ends a child whose supervising worker process was killed.
    """
    from simulator.sandbox import Limits

    return Limits(wall_s=float(seconds), cpu_s=2 * int(seconds) + 10)


# --- cancelling -------------------------------------------------------------------------


def _revoke(task_id: str, *, terminate: bool) -> None:
    from webapp.celery import app

    # A broker that cannot be reached must not keep the database from recording the cancel.
    try:
        app.control.revoke(task_id, terminate=terminate, signal="SIGTERM")
    except Exception:
        import logging

        logging.getLogger(__name__).warning("could not revoke task %s", task_id, exc_info=True)


def simulation_cancel(*, simulation: Simulation) -> Simulation:
    """Cancel a queued or running simulation: revoke its task (terminating a running one).

    Raise ValidationError for a run that is already final.
    """
    with transaction.atomic():
        current = Simulation.objects.select_for_update().get(pk=simulation.pk)
        if current.is_final:
            raise _error(
                "status",
                MESSAGES["not_cancellable"].format(status=current.get_status_display().lower()),
            )
        was_running = current.status == SimulationStatus.RUNNING
        current.status = SimulationStatus.CANCELLED
        current.finished = _now()
        current.save(update_fields=["status", "finished"])
        task_id = current.celery_task_id
        transaction.on_commit(lambda: _revoke(task_id, terminate=was_running))
    _after_final(current)
    return current


def _after_final(simulation: Simulation) -> None:
    if simulation.sweep_id is not None:
        sweep_refresh_aggregate(sweep_id=simulation.sweep_id)


# --- lost runs --------------------------------------------------------------------------


@dataclass(frozen=True)
class ReapReport:
    """What one pass of the lost-run check did, by simulation id."""

    requeued: list[int]
    failed: list[int]
    resent: list[int] = dataclasses.field(default_factory=list)


def simulation_reap_lost(
    *, alive_workers: Iterable[str], now: datetime | None = None
) -> ReapReport:
    """Requeue or fail running simulations whose worker is gone or that overran their limit.

    Lost: the worker answers no ping and the heartbeat is older than
    PARASIM_LOST_AFTER_SECONDS. Requeued under a new task id while fewer than
    PARASIM_MAX_ATTEMPTS starts were used, failed with the reason otherwise. A run past its
    hard time limit by more than the same grace is failed whatever its worker says.
    """
    now = now or _now()
    alive = set(alive_workers)
    grace = timedelta(seconds=int(settings.PARASIM_LOST_AFTER_SECONDS))
    limit = int(settings.PARASIM_MAX_ATTEMPTS)
    requeued: list[int] = []
    failed: list[int] = []
    candidates = Simulation.objects.filter(
        status=SimulationStatus.RUNNING, heartbeat__lt=now - grace
    ).values_list("pk", flat=True)
    for pk in list(candidates):
        with transaction.atomic():
            sim = Simulation.objects.select_for_update().filter(pk=pk).first()
            if sim is None or sim.status != SimulationStatus.RUNNING:
                continue
            if sim.heartbeat is not None and sim.heartbeat >= now - grace:
                continue
            started = sim.started or sim.created
            overdue = started + timedelta(seconds=sim.time_limit_s + HARD_LIMIT_MARGIN_S) + grace
            if now > overdue:
                sim.status = SimulationStatus.FAILED
                sim.error = {
                    "kind": "limit",
                    "limit": "wall",
                    "message": MESSAGES["overdue"].format(
                        limit=sim.time_limit_s, margin=HARD_LIMIT_MARGIN_S
                    ),
                }
            elif sim.worker in alive:
                continue
            elif sim.attempts >= limit:
                sim.status = SimulationStatus.FAILED
                sim.error = {
                    "kind": "worker_lost",
                    "message": MESSAGES["lost_final"].format(
                        attempts=sim.attempts, worker=sim.worker, limit=limit
                    ),
                }
            else:
                sim.status = SimulationStatus.QUEUED
                sim.error = {
                    "kind": "worker_lost",
                    "message": MESSAGES["lost"].format(
                        worker=sim.worker, attempt=sim.attempts, limit=limit
                    ),
                }
                sim.celery_task_id = str(uuid.uuid4())
                sim.progress = 0.0
                sim.save()
                _enqueue([sim])
                requeued.append(pk)
                continue
            sim.finished = now
            sim.save()
            if sim.sweep_id is not None:
                sweep_refresh_aggregate(sweep_id=sim.sweep_id)
            failed.append(pk)
    return ReapReport(requeued=requeued, failed=failed, resent=_resend_unsent(now - grace))


def _resend_unsent(before: datetime) -> list[int]:
    """Send again the queued runs whose task never reached the broker (it was down at
    launch), created before `before`; each under a new task id, so that a message that did
    arrive after all is skipped as stale. Return their ids."""
    unsent = list(
        Simulation.objects.filter(
            status=SimulationStatus.QUEUED, sent__isnull=True, created__lt=before
        )
    )
    for simulation in unsent:
        simulation.celery_task_id = str(uuid.uuid4())
    Simulation.objects.bulk_update(unsent, ["celery_task_id"])
    if unsent:
        send_runs(unsent)
    return [simulation.pk for simulation in unsent]


# --- sweeps -----------------------------------------------------------------------------


def _component_hardware(component: Component) -> dict[str, Any]:
    attributes = list(component.attributes.all())
    return {
        "type": component.type,
        "name": component.name,
        "vendor": component.vendor,
        "attributes": {a.key: a.value for a in attributes},
        "units": {a.key: a.unit for a in attributes if a.unit},
    }


def _sweep_hardware(
    user: User, snapshot: Mapping[str, Any], spec: object
) -> list[tuple[dict[str, Any], dict[str, Any] | None]]:
    """Return (snapshot, point hardware) per substitution; the unchanged snapshot if none."""
    if spec is None:
        return [(dict(snapshot), None)]
    from hwdb.selectors import visible_components

    if not isinstance(spec, Mapping):
        raise _error("spec.hardware", MESSAGES["sweep_object"])
    nodes = {n.get("id"): n for n in snapshot.get("nodes", []) if not n.get("group")}
    node_id = spec.get("node")
    if not isinstance(node_id, str) or node_id not in nodes:
        known = ", ".join(str(n) for n in nodes) or "none"
        raise _error("spec.hardware.node", MESSAGES["sweep_node"].format(node=node_id, known=known))
    kind = snapshot["hardware"][nodes[node_id]["hardware"]]["type"]
    refs = spec.get("components")
    if not isinstance(refs, list) or not refs:
        raise _error("spec.hardware.components", MESSAGES["sweep_components"])
    visible = visible_components(user=user).filter(type=kind).prefetch_related("attributes")
    options: list[tuple[dict[str, Any], dict[str, Any] | None]] = []
    for index, ref in enumerate(refs):
        field = f"spec.hardware.components[{index}]"
        if isinstance(ref, int) and not isinstance(ref, bool):
            matches = list(visible.filter(pk=ref))
        elif isinstance(ref, str) and ref.strip():
            matches = list(visible.filter(name__iexact=ref.strip()))
        else:
            raise _error(field, MESSAGES["sweep_components"])
        if not matches:
            raise _error(field, MESSAGES["sweep_component"].format(ref=ref, type=kind))
        if len(matches) > 1:
            raise _error(field, MESSAGES["sweep_ambiguous"].format(count=len(matches), ref=ref))
        component = matches[0]
        variant = copy.deepcopy(dict(snapshot))
        key = f"hw-{component.pk}"
        variant["hardware"][key] = _component_hardware(component)
        for node in variant["nodes"]:
            if node.get("id") == node_id:
                node["hardware"] = key
        options.append((variant, {"node": node_id, "id": component.pk, "name": component.name}))
    return options


def sweep_size(spec: Mapping[str, Any]) -> int:
    """Return the number of points of a sweep specification (checking its axes' shapes)."""
    axes = spec.get("variables") or {}
    if not isinstance(axes, Mapping):
        raise _error("spec.variables", MESSAGES["sweep_object"])
    size = 1
    for name, axis in axes.items():
        size *= axis_size(axis, field=f"spec.variables.{name}")
    hardware = spec.get("hardware")
    if isinstance(hardware, Mapping) and isinstance(hardware.get("components"), list):
        size *= max(len(hardware["components"]), 1)
    return size


@transaction.atomic
def sweep_launch(*, user: User, name: object, spec: object) -> Sweep:
    """Return a new sweep whose child simulations are stored and queued as one group.

    `spec` holds the launch fields of `launch_plan` (system_model or snapshot, application or
    app_source, labels, queue, seed, time_limit_s), `variables` mapping names to a value, a
    list or a range {start, stop, step}, and optionally `hardware` {node, components}: the
    node's hardware is swapped for each component (id or name). The size is checked before
    anything is expanded.
    """
    if not isinstance(spec, Mapping):
        raise _error("spec", MESSAGES["sweep_object"])
    reject_nul(spec, field="spec")
    sweep_name = _check_name(name) if name not in (None, "") else "sweep"
    size = sweep_size(spec)
    limit = int(settings.PARASIM_MAX_SWEEP)
    if size > limit:
        raise _error("spec", MESSAGES["sweep_too_large"].format(size=size, limit=limit))
    launch_fields = (
        "system_model",
        "snapshot",
        "application",
        "app_source",
        "labels",
        "queue",
        "seed",
        "time_limit_s",
    )
    try:
        plan = launch_plan(
            user=user, **{key: spec.get(key) for key in launch_fields}, check_labels=False
        )
    except ValidationError as error:
        raise ValidationError(
            {f"spec.{field}": messages for field, messages in error.message_dict.items()}
        ) from error
    axes = {name: axis_values(axis) for name, axis in (spec.get("variables") or {}).items()}
    hardware_options = _sweep_hardware(user, plan.snapshot, spec.get("hardware"))
    sweep = Sweep.objects.create(owner=user, name=sweep_name, spec=dict(spec))
    children: list[Simulation] = []
    for snapshot, hardware in hardware_options:
        try:
            labels = _check_labels(snapshot, spec.get("labels"))
        except ValidationError as error:
            raise ValidationError(
                {f"spec.{field}": messages for field, messages in error.message_dict.items()}
            ) from error
        for values in itertools.product(*axes.values()):
            point = dict(zip(axes, values, strict=True))
            variables = resolve_variables(plan.declared, point, field="spec.variables")
            label = ", ".join(f"{k}={v}" for k, v in point.items())
            if hardware:
                label = f"{hardware['name']}" + (f", {label}" if label else "")
            child = _new_simulation(
                plan,
                snapshot=snapshot,
                variables=variables,
                name=f"{sweep_name}: {label}" if label else sweep_name,
                sweep=sweep,
                sweep_point={"variables": point, "hardware": hardware},
            )
            child.labels = labels
            children.append(child)
    _check_active_runs(user, adding=len(children), field="spec.queue")
    Simulation.objects.bulk_create(children)
    sweep.aggregate = _aggregate(sweep)
    sweep.save(update_fields=["aggregate"])
    _enqueue(children)
    return sweep


def _aggregate(sweep: Sweep) -> dict[str, Any]:
    counts = sweep.simulations.aggregate(
        total=Count("pk"),
        **{status: Count("pk", filter=Q(status=status)) for status in SimulationStatus.values},
    )
    best = (
        sweep.simulations.filter(status=SimulationStatus.SUCCEEDED, overall_time_s__isnull=False)
        .order_by("overall_time_s", "pk")
        .values("pk", "overall_time_s", "sweep_point")
        .first()
    )
    counts["done"] = sum(counts[s] for s in FINAL_STATUSES)
    counts["best"] = (
        {
            "simulation": best["pk"],
            "overall_time_s": best["overall_time_s"],
            "point": best["sweep_point"],
        }
        if best
        else None
    )
    return counts


def sweep_refresh_aggregate(*, sweep_id: int) -> Sweep:
    """Return the sweep with its aggregate recounted; it finishes when no child is pending."""
    with transaction.atomic():
        sweep = Sweep.objects.select_for_update().get(pk=sweep_id)
        sweep.aggregate = _aggregate(sweep)
        if (
            sweep.status == SweepStatus.RUNNING
            and sweep.aggregate["done"] == sweep.aggregate["total"]
        ):
            sweep.status = SweepStatus.FINISHED
            sweep.finished = _now()
        sweep.save(update_fields=["aggregate", "status", "finished"])
    return sweep


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
        current.aggregate = _aggregate(current)
        if current.status == SweepStatus.RUNNING:
            current.status = SweepStatus.CANCELLED
            current.finished = _now()
        current.save(update_fields=["aggregate", "status", "finished"])
    return current
