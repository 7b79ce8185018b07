"""How runs reach the broker: their tasks sent and revoked by name, with fair priorities,
at most PARASIM_MAX_RUNNING_PER_USER runs of one user at a time.

The services queue work through this module and never import `webapp.studio.tasks` (the
tasks import the services): a task is named here by the name it is registered under.
A broker that cannot be reached never undoes what the database recorded: runs stay stored
and marked unsent (the lost-run check sends them later), a cancel stays recorded.

Per-user concurrency (docs/deployment.md): a user's runs in flight (running, or queued and
sent or about to be) are at most PARASIM_MAX_RUNNING_PER_USER. A run beyond that is stored as
queued and `held`, and is not sent: no worker ever receives a run it may not start, so none
sits blocked or polls, and other users' runs reach the workers first. Whenever one of the
user's runs ends, `release_held` sends their oldest held runs into the freed slots; the
lost-run check releases too, in case a worker died between the two.
"""

from __future__ import annotations

import functools
import logging
from typing import Any

from celery import group
from django.conf import settings
from django.db import transaction
from django.db.models import Q
from django.utils import timezone

from webapp.celery import app
from webapp.studio.models import Simulation, SimulationStatus
from webapp.studio.selectors import OwnerRuns, active_run_count, owner_runs

RUN_SIMULATION = "studio.run_simulation"
ADVANCE_STUDY = "studio.advance_study"
# What sending a run reads of it (`send_runs`, `task_options`).
SEND_FIELDS = ("id", "owner", "queue", "celery_task_id", "time_limit_s", "held")

# The sandbox's wall clock stops a run first; Celery's soft and then hard limits are backstops.
SOFT_LIMIT_MARGIN_S = 10
HARD_LIMIT_MARGIN_S = 20

logger = logging.getLogger(__name__)

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


def run_priorities(simulations: list[Simulation], *, backlog: int | None = None) -> dict[int, int]:
    """Return each run's priority by id, ranked after its owner's other active runs
    (`backlog`: how many those are, when the caller counted them for the one owner of
    `simulations` under the owner's lock, as a launch does).

    Counted when the runs are sent, after their transaction committed: a concurrent launch of
    the same owner that committed first is counted too, which only pushes these runs back, so
    the per-level bound of `fair_priority` holds without a lock. A count that fails ranks the
    runs within their launch only: they are stored as queued, and must be sent whatever happens.
    """
    by_owner: dict[int, list[Simulation]] = {}
    for sim in simulations:
        by_owner.setdefault(sim.owner_id, []).append(sim)
    priorities: dict[int, int] = {}
    if backlog is not None and len(by_owner) != 1:
        raise ValueError("a backlog is one owner's")
    for owner_id, runs in by_owner.items():
        ahead = backlog
        if ahead is None:
            try:
                ahead = active_run_count(owner_id=owner_id, excluding=[run.pk for run in runs])
            except Exception:
                logger.warning("could not rank runs", exc_info=True)
                ahead = 0
        levels = fair_priorities(backlog=ahead, count=len(runs))
        priorities.update({run.pk: level for run, level in zip(runs, levels, strict=True)})
    return priorities


def task_options(simulation: Simulation, *, priority: int = 0) -> dict[str, Any]:
    """Return the Celery options of a run's task: its queue, fixed task id, priority and the
    soft and hard time limits behind the sandbox's own wall clock."""
    return {
        "queue": simulation.queue,
        "task_id": simulation.celery_task_id,
        "priority": priority,
        "soft_time_limit": simulation.time_limit_s + SOFT_LIMIT_MARGIN_S,
        "time_limit": simulation.time_limit_s + HARD_LIMIT_MARGIN_S,
    }


@functools.cache
def _load_task_modules() -> None:
    """Import the Celery app's task modules once per process, as a worker and gunicorn's
    `post_worker_init` do: a task sent by name then goes through its registered task
    (`Task.apply_async`, with the task's own options), whichever process sends it."""
    app.loader.import_default_modules()


def send_runs(simulations: list[Simulation], *, backlog: int | None = None) -> None:
    """Send the runs' tasks to their queues now, several as one Celery group, each with its
    fair-share priority (`run_priorities`, `backlog` as there), and mark them sent."""
    _load_task_modules()
    priorities = run_priorities(simulations, backlog=backlog)
    signatures = [
        app.signature(
            RUN_SIMULATION, args=(sim.pk,), **task_options(sim, priority=priorities[sim.pk])
        )
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
        sent=timezone.now()
    )


def enqueue(simulations: list[Simulation]) -> None:
    """Send the runs once the surrounding transaction commits, so workers find them stored;
    those beyond their owner's PARASIM_MAX_RUNNING_PER_USER are held back (`admit`)."""
    transaction.on_commit(lambda: admit(simulations))


def lock_owner(owner_id: int) -> OwnerRuns:
    """Lock the owner's row until the surrounding transaction ends and return their runs'
    counts as they are under the lock: a launch decides on them (`hold_new`), as `_take_slots`
    does after the commit for several runs at once."""
    return owner_runs(owner_id=owner_id, lock=True)


def hold_new(runs: OwnerRuns) -> bool:
    """Return whether a run launched now is held back, given the owner's runs under the lock:
    when their runs in flight fill PARASIM_MAX_RUNNING_PER_USER, or older runs are held (those
    go first)."""
    cap = _running_cap()
    return cap is not None and (runs.held > 0 or runs.in_flight >= cap)


def enqueue_admitted(simulation: Simulation, runs: OwnerRuns) -> None:
    """Once the launch's transaction commits, send its run unless it is held (`hold_new`,
    decided in that transaction under the owner's lock, so one launch stores and admits its
    run in one transaction instead of two); a run held behind older held runs while slots
    were free releases them, oldest first (`release_held`)."""
    cap = _running_cap()
    if not simulation.held:
        # Its rank: the owner's runs counted under the lock, before it (no count after).
        transaction.on_commit(lambda: send_runs([simulation], backlog=runs.active))
    elif cap is not None and runs.in_flight < cap:
        transaction.on_commit(lambda: release_held(owner_id=simulation.owner_id))


def _running_cap() -> int | None:
    """Return PARASIM_MAX_RUNNING_PER_USER, None when there is no cap (0)."""
    cap = int(settings.PARASIM_MAX_RUNNING_PER_USER)
    return cap if cap > 0 else None


def admit(simulations: list[Simulation]) -> None:
    """Send the new runs (stored, committed, not held) that fit within their owner's cap, the
    owner's held runs first (oldest first), and hold back the rest."""
    cap = _running_cap()
    if cap is None:
        send_runs(simulations)
        return
    by_owner: dict[int, list[Simulation]] = {}
    for sim in simulations:
        by_owner.setdefault(sim.owner_id, []).append(sim)
    chosen: list[Simulation] = []
    for owner_id, runs in by_owner.items():
        try:
            chosen += _take_slots(owner_id, runs, cap)
        except Exception:  # stored, unsent and not held: the lost-run check sends them
            logger.warning("could not admit %d run(s)", len(runs), exc_info=True)
    if chosen:
        send_runs(chosen)


def release_held(*, owner_id: int) -> list[int]:
    """Send the owner's oldest held runs into the slots free under their cap (all of them
    when there is no cap any more); return their ids. Called when one of their runs ends."""
    if not Simulation.objects.filter(
        owner_id=owner_id, status=SimulationStatus.QUEUED, held=True
    ).exists():
        return []
    chosen = _take_slots(owner_id, [], _running_cap())
    if chosen:
        send_runs(chosen)
    return [run.pk for run in chosen]


def release_all_held() -> list[int]:
    """Release the held runs of every owner that has some (the lost-run check's pass)."""
    owners = (
        Simulation.objects.filter(status=SimulationStatus.QUEUED, held=True)
        .values_list("owner_id", flat=True)
        .distinct()
    )
    return [pk for owner_id in sorted(set(owners)) for pk in release_held(owner_id=owner_id)]


def _take_slots(owner_id: int, new: list[Simulation], cap: int | None) -> list[Simulation]:
    """Return the owner's runs to send now and record the choice before anything is sent.

    Candidates are the owner's held runs and the `new` ones (queued, oldest first); the first
    ones that keep the owner's runs in flight within `cap` are taken (held cleared), the new
    ones left are held. The owner's row is locked, so that two launches or ends of the same
    owner's runs never fill one slot twice; the choice commits before the send, so a worker
    never finds a run it was sent still marked held.

    Only the runs taken are read, and only what sending them needs (`SEND_FIELDS`): an owner
    with a long backlog of held runs made every launch read each of them whole (snapshot
    included) to hold one more.
    """
    new_ids = [run.pk for run in new]
    with transaction.atomic():
        runs = owner_runs(owner_id=owner_id, lock=True, excluding=new_ids)
        candidates = (
            Simulation.objects.filter(owner_id=owner_id, status=SimulationStatus.QUEUED)
            .filter(Q(held=True) | Q(pk__in=new_ids))
            .order_by("pk")
            .only(*SEND_FIELDS)
        )
        if cap is None:
            taken = list(candidates)
        else:
            free = max(cap - runs.in_flight, 0)
            taken = list(candidates[:free]) if free else []
        taken_ids = {run.pk for run in taken}
        Simulation.objects.filter(pk__in=taken_ids, held=True).update(held=False)
        left_new = [pk for pk in new_ids if pk not in taken_ids]
        if left_new:
            Simulation.objects.filter(
                pk__in=left_new, status=SimulationStatus.QUEUED, held=False
            ).update(held=True)
    for run in taken:
        run.held = False
    for run in new:  # the caller's records say what was chosen (a launch answers with them)
        run.held = run.pk not in taken_ids
    return taken


def advance_study(study_id: int, *, countdown: float | None = None) -> None:
    """Send the task that tells a study its finished trials and asks for the next ones
    (services.studies.study_advance). A broker that cannot be reached leaves it to the
    periodic `studio.advance_studies`."""
    _load_task_modules()
    try:
        app.signature(ADVANCE_STUDY, args=(study_id,)).apply_async(countdown=countdown)
    except Exception:
        logger.warning("could not send the advance of study %s", study_id, exc_info=True)


def revoke(task_id: str, *, terminate: bool) -> None:
    """Revoke a run's task, terminating it (SIGTERM) when it is running."""
    # A broker that cannot be reached must not keep the database from recording the cancel.
    try:
        app.control.revoke(task_id, terminate=terminate, signal="SIGTERM")
    except Exception:
        logger.warning("could not revoke task %s", task_id, exc_info=True)
