"""Running simulations (called by the Celery task), cancelling them, and recovering runs
whose worker vanished or whose task never reached the broker.

A run's Celery task id is fixed at launch; a message whose id is not the run's current one
is stale and is ignored, which keeps redelivery and requeueing idempotent. A run that ends
refreshes its sweep's aggregate (`sweep_refresh_aggregate`, here so that both this module
and `sweeps` can use it without importing each other) and frees a slot of its owner's
(`dispatch.release_held` sends their next held run). A run stopped by a limit stores the
limit's kind and value (`limits.with_limit_value`).
"""

from __future__ import annotations

import dataclasses
import logging
import math
import time
import uuid
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any, Protocol

from celery.exceptions import SoftTimeLimitExceeded
from django.conf import settings
from django.db import connection, transaction
from django.db.models import F, Value
from django.db.models.functions import Coalesce, Greatest

from simulator import sandbox
from simulator.errors import SimulationError, bounded_value
from simulator.sandbox import Limits, Progress
from webapp.studio import dispatch
from webapp.studio.dispatch import HARD_LIMIT_MARGIN_S
from webapp.studio.limits import sandbox_limits, with_limit_value
from webapp.studio.models import Simulation, SimulationStatus, Study, Sweep, SweepStatus
from webapp.studio.selectors import sweep_aggregate
from webapp.studio.services.common import (
    DATABASE_UNREACHABLE,
    MESSAGES,
    STORE_RETRY_DELAYS_S,
    RunCancelled,
    current_time,
    drop_broken_connection,
    field_error,
)

PROGRESS_EVERY_S = 0.5

logger = logging.getLogger(__name__)


class SandboxRunner(Protocol):
    """Runs one simulation payload in a sandbox and returns its result (the simulator's
    `run_sandboxed` is the real one; tests give a fake)."""

    def __call__(
        self,
        payload: dict[str, Any],
        *,
        limits: Limits,
        progress: Progress,
        keep_spare: bool,
    ) -> dict[str, Any]: ...


# --- running (called by the Celery task) ------------------------------------------------


def simulation_start(
    *, simulation_id: int, task_id: str, worker: str, worker_life: str = ""
) -> Simulation | None:
    """Return the run claimed for this attempt, or None when the message must be skipped.

    The run records the worker's hostname and its life (`webapp.studio.worker_life`), by
    which the lost-run check tells a restarted worker from the one that took the run.

    Skipped: the run is final (a redelivery after it finished) or the message is stale
    (the run was requeued under another task id). A run that already used
    PARASIM_MAX_ATTEMPTS starts is failed instead of started again.
    """
    limit = int(settings.PARASIM_MAX_ATTEMPTS)
    with transaction.atomic():
        simulation = Simulation.objects.select_for_update().filter(pk=simulation_id).first()
        if simulation is None or simulation.is_final or simulation.celery_task_id != task_id:
            return None
        now = current_time()
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
            simulation.worker_life = worker_life
            simulation.started = now
            simulation.heartbeat = now
            simulation.progress = 0.0
            simulation.simulated_time_s = None
            simulation.save()
            return simulation
    _after_final(finished)
    return None


def progress_recorder(simulation: Simulation, *, every_s: float = PROGRESS_EVERY_S) -> Progress:
    """Return a progress callback writing progress, the simulated time reached and the
    heartbeat at most every `every_s`.

    It raises RunCancelled once the run is no longer this attempt's running run (cancelled,
    or requeued by the lost-run check), which stops the sandboxed child. Stored progress
    stays within 0..1 and, like the simulated time, never decreases within an attempt; a
    non-finite or negative value is not stored (a non-finite fraction only refreshes the
    heartbeat).
    """
    last = -math.inf
    pk, task_id = simulation.pk, simulation.celery_task_id

    def record(fraction: float, simulated_s: float | None = None, /) -> None:
        nonlocal last
        now = time.monotonic()
        if now - last < every_s:
            return
        last = now
        fields: dict[str, Any] = {"heartbeat": current_time()}
        value = float(fraction)
        if math.isfinite(value):
            fields["progress"] = Greatest(F("progress"), min(max(value, 0.0), 1.0))
        if simulated_s is not None and math.isfinite(simulated_s) and simulated_s >= 0:
            # Coalesce: SQLite's and MySQL's GREATEST are NULL when an argument is.
            fields["simulated_time_s"] = Greatest(
                Coalesce(F("simulated_time_s"), Value(0.0)), float(simulated_s)
            )
        try:
            updated = Simulation.objects.filter(
                pk=pk, status=SimulationStatus.RUNNING, celery_task_id=task_id
            ).update(**fields)
        except DATABASE_UNREACHABLE:
            drop_broken_connection()  # best effort: a database outage must not end the run
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
    fields: dict[str, Any] = {"finished": current_time(), "heartbeat": current_time()}
    if error is None and result is not None:
        fields.update(
            status=SimulationStatus.SUCCEEDED,
            result=_storable(dict(result)),
            error=None,
            progress=1.0,
            **headline_figures(result),
        )
        fields["simulated_time_s"] = fields["overall_time_s"]
    else:
        # Bounded whatever made it (the simulator's errors are already; an internal error's
        # text, a fake runner's, are not): every runs page reads it.
        fields.update(
            status=SimulationStatus.FAILED,
            error=_storable(bounded_value(dict(error or {}))),
            result=None,
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
                if updated:
                    _release_on_commit(simulation.owner_id)
            return bool(updated)
        except DATABASE_UNREACHABLE:
            if delay is None or connection.in_atomic_block:
                raise
            drop_broken_connection()
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


def headline_figures(result: Mapping[str, Any]) -> dict[str, float | None]:
    """Return the run's overall time and total energy, the figures stored beside the result
    for lists, sweeps and their CSV, read from the shape `simulator.results.assemble_result`
    gives (`energy_j` is {"total", "per_component"}); a figure the result lacks is None."""
    energy = result.get("energy_j")
    return {
        "overall_time_s": _number(result.get("overall_time_s")),
        "energy_j": _number(energy.get("total")) if isinstance(energy, Mapping) else None,
    }


def sandbox_payload(simulation: Simulation) -> dict[str, Any]:
    """Return the keyword arguments of `run_simulation` for this run (JSON-serialisable)."""
    payload = {
        "snapshot": simulation.snapshot,
        "app_source": simulation.app_source,
        "labels": simulation.labels,
        "variables": simulation.variables,
        "seed": simulation.seed,
        "timeline_limit": simulation.timeline_limit,
    }
    if simulation.failures is not None:  # only a run that asked for failure injection
        payload["failures"] = simulation.failures
    if simulation.uncertainty is not None:  # only a run that asked for an interval
        payload["uncertainty"] = simulation.uncertainty
    return payload


def simulation_run(
    *,
    simulation_id: int,
    task_id: str,
    worker: str,
    worker_life: str = "",
    run: SandboxRunner | None = None,
) -> Simulation | None:
    """Run one attempt of a simulation in a sandbox (`run`, by default the simulator's
    `run_sandboxed`) and store its outcome.

    Return the run, or None when the message was skipped (see `simulation_start`).
    """
    run = run or sandbox.run_sandboxed  # looked up per call, not bound at import
    simulation = simulation_start(
        simulation_id=simulation_id, task_id=task_id, worker=worker, worker_life=worker_life
    )
    if simulation is None:
        return None
    limits = sandbox_limits(
        time_limit_s=simulation.time_limit_s, cpu_limit_s=simulation.cpu_limit_s
    )
    try:
        result = run(
            sandbox_payload(simulation),
            limits=limits,
            progress=progress_recorder(simulation),
            keep_spare=True,  # the next run's child starts while this one is stored
        )
    except RunCancelled:
        return simulation
    except SimulationError as error:
        simulation_finish(simulation=simulation, error=with_limit_value(error.to_dict(), limits))
    except SoftTimeLimitExceeded:
        message = MESSAGES["soft_limit"].format(limit=simulation.time_limit_s)
        stopped = {"kind": "limit", "limit": "wall", "message": message}
        simulation_finish(simulation=simulation, error=with_limit_value(stopped, limits))
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


# --- cancelling -------------------------------------------------------------------------


def simulation_cancel(*, simulation: Simulation) -> Simulation:
    """Cancel a queued or running simulation: revoke its task (terminating a running one).

    Raise ValidationError for a run that is already final.
    """
    with transaction.atomic():
        current = Simulation.objects.select_for_update().get(pk=simulation.pk)
        if current.is_final:
            raise field_error(
                "status",
                MESSAGES["not_cancellable"].format(status=current.get_status_display().lower()),
            )
        was_running = current.status == SimulationStatus.RUNNING
        current.status = SimulationStatus.CANCELLED
        current.finished = current_time()
        current.save(update_fields=["status", "finished"])
        task_id = current.celery_task_id
        transaction.on_commit(lambda: dispatch.revoke(task_id, terminate=was_running))
    _after_final(current)
    return current


def _after_final(simulation: Simulation) -> None:
    if simulation.sweep_id is not None:
        sweep_refresh_aggregate(sweep_id=simulation.sweep_id)
    _release_on_commit(simulation.owner_id)


def _release_on_commit(owner_id: int) -> None:
    """Send the owner's next held runs once the end of one of their runs is committed.

    A release that fails is left to the lost-run check (`dispatch.release_all_held`): it must
    not undo or retry the end that was stored."""

    def release() -> None:
        try:
            dispatch.release_held(owner_id=owner_id)
        except Exception:
            logger.warning("could not release the held runs of user %s", owner_id, exc_info=True)

    transaction.on_commit(release)


# --- lost runs --------------------------------------------------------------------------


@dataclass(frozen=True)
class ReapReport:
    """What one pass of the lost-run check did, by simulation id."""

    requeued: list[int]
    failed: list[int]
    resent: list[int] = dataclasses.field(default_factory=list)
    released: list[int] = dataclasses.field(default_factory=list)  # held runs sent


def simulation_reap_lost(
    *,
    alive_workers: Mapping[str, str],
    held_by_broker: Callable[[Iterable[str]], set[str] | None] | None = None,
    now: datetime | None = None,
) -> ReapReport:
    """Requeue or fail running simulations whose worker is gone or that overran their limit,
    and send again the queued runs whose message never reached the broker or left it.

    `alive_workers` maps each answering worker's hostname to its current life
    (`selectors.alive_workers`; "" from a worker that cannot say). Lost: the heartbeat is
    older than PARASIM_LOST_AFTER_SECONDS and no worker of the run's hostname answers, or
    one does in another life than the run recorded (it was restarted under the same name). Requeued under a new task id while fewer than
    PARASIM_MAX_ATTEMPTS starts were used, failed with the reason otherwise. A run past its
    hard time limit by more than the same grace is failed whatever its worker says.
    `held_by_broker` returns the task ids the broker holds in the queues it is given and the
    configured ones (`selectors.broker_task_ids`);
    without it, or when it cannot say, only runs never sent are sent again.
    """
    now = now or current_time()
    alive = dict(alive_workers)
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
                    "value": sim.time_limit_s,
                    "unit": "s",
                }
            elif _held_by_a_live_worker(sim, alive):
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
                sim.sent = None  # set again when its new message is sent
                sim.progress = 0.0
                sim.save()
                dispatch.enqueue([sim])
                requeued.append(pk)
                continue
            sim.finished = now
            sim.save()
            _after_final(sim)
            failed.append(pk)
    resent = _resend_unsent(now - grace)
    if held_by_broker is not None:
        resent += _resend_vanished(now - grace, held_by_broker)
    return ReapReport(
        requeued=requeued, failed=failed, resent=resent, released=dispatch.release_all_held()
    )


def _held_by_a_live_worker(simulation: Simulation, alive: Mapping[str, str]) -> bool:
    """Return whether the life of the worker that took the run still answers.

    A run recorded without a life (taken before lives were recorded) or a worker that
    cannot tell its life is judged by the hostname alone."""
    if simulation.worker not in alive:
        return False
    life = alive[simulation.worker]
    return not simulation.worker_life or not life or life == simulation.worker_life


def _resend_unsent(before: datetime) -> list[int]:
    """Send again the queued runs whose task never reached the broker (it was down at
    launch), created before `before`; each under a new task id, so that a message that did
    arrive after all is skipped as stale. Return their ids. Held runs are not unsent: they
    wait for a slot of their owner's (`dispatch.release_held`)."""
    unsent = list(
        Simulation.objects.filter(
            status=SimulationStatus.QUEUED, sent__isnull=True, held=False, created__lt=before
        )
    )
    for simulation in unsent:
        simulation.celery_task_id = str(uuid.uuid4())
    Simulation.objects.bulk_update(unsent, ["celery_task_id"])
    if unsent:
        dispatch.send_runs(unsent)
    return [simulation.pk for simulation in unsent]


def _resend_vanished(
    before: datetime, held_by_broker: Callable[[Iterable[str]], set[str] | None]
) -> list[int]:
    """Send again the queued runs sent before `before` whose message the broker no longer
    holds, each under a new task id; return their ids.

    Kombu's Redis transport loses a message that a worker popped from its queue when the
    broker stops before the worker recorded it as delivered (tests/webapp/studio/test_faults.py
    restarts Redis mid-burst). The broker is read first: a run that started and ended since
    is no longer queued here, and the task id changes only while the run is still queued
    under the id that was looked for.
    """
    queues = (
        Simulation.objects.filter(status=SimulationStatus.QUEUED)
        .values_list("queue", flat=True)
        .distinct()
    )
    known = held_by_broker(set(queues))
    if known is None:
        return []
    candidates = list(
        Simulation.objects.filter(
            status=SimulationStatus.QUEUED, held=False, sent__lt=before
        ).values_list("pk", "celery_task_id")
    )
    renamed = [
        pk
        for pk, task_id in candidates
        if task_id not in known
        and Simulation.objects.filter(
            pk=pk, status=SimulationStatus.QUEUED, held=False, celery_task_id=task_id
        ).update(celery_task_id=str(uuid.uuid4()), sent=None)
    ]
    runs = list(Simulation.objects.filter(pk__in=renamed).only(*dispatch.SEND_FIELDS))
    if runs:
        logger.warning("runs whose message the broker lost: %s", [run.pk for run in runs])
        dispatch.send_runs(runs)
    return [run.pk for run in runs]


# --- a run's sweep ----------------------------------------------------------------------


def sweep_refresh_aggregate(*, sweep_id: int) -> Sweep:
    """Return the sweep with its aggregate recounted; it finishes when no child is pending.

    A study's sweep is finished by its study instead (services.studies: it has more runs
    to come), which is told once this is committed that one of its runs ended."""
    with transaction.atomic():
        sweep = Sweep.objects.select_for_update().get(pk=sweep_id)
        sweep.aggregate = sweep_aggregate(sweep=sweep)
        study_id = Study.objects.filter(sweep_id=sweep_id).values_list("pk", flat=True).first()
        if study_id is not None:
            transaction.on_commit(lambda: dispatch.advance_study(study_id))
        elif (
            sweep.status == SweepStatus.RUNNING
            and sweep.aggregate["done"] == sweep.aggregate["total"]
        ):
            sweep.status = SweepStatus.FINISHED
            sweep.finished = current_time()
        sweep.save(update_fields=["aggregate", "status", "finished"])
    return sweep
