"""Fairness between users: a run's broker priority comes from its rank in its owner's backlog.

The rule (`dispatch.fair_priority`) is tested as a pure function and on a model of kombu's
Redis transport (one FIFO list per priority, the lowest non-empty one popped first); the last
test floods a real worker on PostgreSQL and Redis from one user and times another user's run.
"""

from __future__ import annotations

from collections import deque
from datetime import timedelta
from typing import Any, cast

import pytest
from celery.app.task import Task
from django.utils import timezone

from tests.hwdb.factories import UserFactory
from tests.webapp.studio.conftest import launch as launch_run
from tests.webapp.studio.factories import TINY_APP, SimulationFactory, tiny_snapshot
from tests.webapp.studio.live import Worker, require_services, wait_for
from tests.webapp.studio.test_integration import final, launch, member, worker
from webapp.studio import dispatch, tasks
from webapp.studio.models import FINAL_STATUSES, Simulation, SimulationStatus
from webapp.studio.services.runs import simulation_reap_lost
from webapp.studio.services.sweeps import sweep_launch

__all__ = ["member", "worker"]  # fixtures of the live test, shared with test_integration

FLOOD = 60
SLOTS = 2  # the `worker` fixture: one worker, --concurrency=2


class RedisPriorityQueue:
    """kombu's Redis transport in miniature: a list per priority, BRPOP over them in order."""

    def __init__(self) -> None:
        self.levels: dict[int, deque[str]] = {}

    def put(self, run: str, priority: int) -> None:
        self.levels.setdefault(priority, deque()).append(run)

    def pop(self) -> str:
        return self.levels[min(p for p, runs in self.levels.items() if runs)].popleft()

    def send(self, owner: str, *, backlog: int, count: int) -> list[str]:
        runs = [f"{owner}{backlog + i}" for i in range(count)]
        priorities = dispatch.fair_priorities(backlog=backlog, count=count)
        for run, priority in zip(runs, priorities, strict=True):
            self.put(run, priority)
        return runs


# --- the rule -------------------------------------------------------------------------


def test_a_users_first_waiting_run_gets_the_top_priority() -> None:
    assert dispatch.fair_priority(0) == 0
    assert dispatch.fair_priorities(backlog=0, count=1) == [0]


def test_a_sweeps_points_spread_over_the_levels_by_their_rank_in_the_backlog() -> None:
    assert dispatch.fair_priorities(backlog=0, count=FLOOD) == (
        [0, 1, 2, 2] + [3] * 4 + [4] * 8 + [5] * 16 + [6] * 28
    )
    assert dispatch.fair_priorities(backlog=3, count=3) == [2, 3, 3]


def test_the_tail_of_a_flood_sinks_to_the_last_level_redis_knows() -> None:
    last = dispatch.FAIR_PRIORITY_LEVELS - 1
    assert (dispatch.fair_priority(255), dispatch.fair_priority(256)) == (last - 1, last)
    assert dispatch.fair_priority(10**6) == last == 9  # kombu clamps priorities to 0..9


@pytest.mark.parametrize("level", range(dispatch.FAIR_PRIORITY_LEVELS - 1))
def test_no_backlog_puts_more_than_two_to_the_level_runs_at_that_level_or_better(
    level: int,
) -> None:
    ranks = range(5000)
    assert sum(dispatch.fair_priority(rank) <= level for rank in ranks) == 2**level


def test_on_redis_another_users_run_overtakes_a_flood_but_its_first_run() -> None:
    broker = RedisPriorityQueue()
    flood = broker.send("a", backlog=0, count=FLOOD)
    taken = [broker.pop() for _ in range(SLOTS)]  # the worker's slots start the first runs
    assert taken == flood[:SLOTS]
    (lone,) = broker.send("b", backlog=0, count=1)
    assert broker.pop() == lone


def test_on_redis_a_run_waits_for_at_most_the_first_run_of_each_other_flood() -> None:
    broker = RedisPriorityQueue()
    firsts = [broker.send(owner, backlog=0, count=FLOOD)[0] for owner in "acd"]
    (lone,) = broker.send("b", backlog=0, count=1)
    assert [broker.pop() for _ in range(4)] == [*firsts, lone]


def test_without_priorities_the_same_run_would_wait_for_the_whole_flood() -> None:
    broker = RedisPriorityQueue()
    for i in range(FLOOD):
        broker.put(f"a{i}", 0)
    broker.put("b0", 0)
    order = [broker.pop() for _ in range(FLOOD + 1)]
    assert order.index("b0") == FLOOD


# --- ranks from the database ------------------------------------------------------------


def stored_run(**fields: Any) -> Simulation:
    """Return a stored simulation (queued unless `status` says otherwise)."""
    return cast(Simulation, SimulationFactory(**fields))


def test_runs_rank_after_their_owners_queued_and_running_runs_only(
    user: Any, other_user: Any
) -> None:
    for status in ["queued", "queued", "running", "succeeded", "cancelled"]:
        SimulationFactory(owner=user, status=status)
    SimulationFactory.create_batch(5, owner=other_user)
    new = [stored_run(owner=user), stored_run(owner=user)]
    theirs = stored_run(owner=other_user)
    mine_first = stored_run(owner=UserFactory())
    priorities = dispatch.run_priorities([*new, theirs, mine_first])
    # ranks 3 and 4 of `user`, 5 of `other_user`, 0 of a user with nothing else active
    assert priorities == {new[0].pk: 2, new[1].pk: 3, theirs.pk: 3, mine_first.pk: 0}


@pytest.fixture
def published(monkeypatch: pytest.MonkeyPatch) -> list[dict[str, Any]]:
    """Return the options of every task sent (`Task.apply_async`); nothing reaches a broker.

    `dispatch` sends by name; with the task module imported (as in every worker and web
    process) the name resolves to the registered task, whose `apply_async` is captured here.
    """
    assert tasks.run_simulation.name == dispatch.RUN_SIMULATION
    options: list[dict[str, Any]] = []
    monkeypatch.setattr(Task, "apply_async", lambda self, *args, **kw: options.append(kw))
    return options


def test_sending_runs_gives_each_task_its_queue_id_and_priority(
    user: Any, published: list[dict[str, Any]]
) -> None:
    SimulationFactory(owner=user)
    runs = [stored_run(owner=user, queue="gajgerqueue") for _ in range(3)]
    dispatch.send_runs(runs)
    assert [(o["queue"], o["task_id"], o["priority"]) for o in published] == [
        ("gajgerqueue", run.celery_task_id, priority)
        for run, priority in zip(runs, [1, 2, 2], strict=True)
    ]


def test_a_launched_run_is_ranked_by_the_count_its_launch_took_under_the_lock(
    user: Any,
    published: list[dict[str, Any]],
    django_capture_on_commit_callbacks: Any,
    django_assert_num_queries: Any,
    settings: Any,
) -> None:
    settings.PARASIM_MAX_RUNNING_PER_USER = 0  # no cap: every launch is sent
    with django_capture_on_commit_callbacks(execute=True):
        runs = [launch_run(user) for _ in range(4)]
    assert [o["priority"] for o in published] == [dispatch.fair_priority(rank) for rank in range(4)]
    # the send counts nothing more: savepoint, lock, counts, insert, release; the `sent` mark
    with django_assert_num_queries(6), django_capture_on_commit_callbacks(execute=True):
        launch_run(user)
    assert published[-1]["priority"] == dispatch.fair_priority(len(runs))


def test_runs_are_still_sent_when_their_backlog_cannot_be_counted(
    user: Any, published: list[dict[str, Any]], monkeypatch: pytest.MonkeyPatch
) -> None:
    from django.db import OperationalError

    runs = [stored_run(owner=user) for _ in range(2)]

    def unreachable(**counted: Any) -> int:
        raise OperationalError("the database went away")

    monkeypatch.setattr(dispatch, "active_run_count", unreachable)
    dispatch.send_runs(runs)
    assert [(o["task_id"], o["priority"]) for o in published] == [
        (runs[0].celery_task_id, 0),
        (runs[1].celery_task_id, 1),
    ]


def test_a_requeued_lost_run_is_ranked_after_its_owners_other_waiting_runs(
    user: Any, published: list[dict[str, Any]], django_capture_on_commit_callbacks: Any
) -> None:
    SimulationFactory.create_batch(3, owner=user)
    now = timezone.now()
    then = now - timedelta(seconds=90)  # past PARASIM_LOST_AFTER_SECONDS, not overdue
    lost = stored_run(
        owner=user, status="running", worker="gone@host", attempts=1, started=then, heartbeat=then
    )
    with django_capture_on_commit_callbacks(execute=True):
        report = simulation_reap_lost(alive_workers={}, now=now)
    assert report.requeued == [lost.pk]
    lost.refresh_from_db()
    assert [(o["task_id"], o["priority"]) for o in published] == [
        (lost.celery_task_id, dispatch.fair_priority(3))
    ]


# --- a real worker ----------------------------------------------------------------------


@pytest.fixture(scope="module")
def live_services() -> None:
    """Skip (or, when services are required, fail) without PostgreSQL and Redis."""
    require_services()


@pytest.mark.integration
@pytest.mark.slow
def test_a_flood_delays_another_users_run_by_at_most_one_run_per_worker_slot(
    live_services: None, worker: Worker, member: Any
) -> None:
    spec = {
        "snapshot": tiny_snapshot(),
        "app_source": TINY_APP,
        "labels": {"CPU": 1},
        "variables": {"steps": 2, "ops": [float(i + 1) for i in range(FLOOD)]},
    }
    flood = sweep_launch(user=member, name="flood", spec=spec)
    waiting = set(flood.simulations.filter(started__isnull=True).values_list("pk", flat=True))
    lone = final(launch(UserFactory()), timeout=30)
    assert lone.status == SimulationStatus.SUCCEEDED, lone.error
    overtaking = flood.simulations.filter(pk__in=waiting, started__lt=lone.started).count()
    assert len(waiting) >= FLOOD - 2 * SLOTS  # the flood was still waiting: B had to pass it
    assert overtaking <= SLOTS
    ids = list(flood.simulations.values_list("pk", flat=True))
    wait_for(
        lambda: Simulation.objects.filter(pk__in=ids, status__in=FINAL_STATUSES).count() == FLOOD,
        timeout=60,
        what="the flood to finish",
    )
    statuses = set(flood.simulations.values_list("status", flat=True))
    assert statuses == {SimulationStatus.SUCCEEDED}
