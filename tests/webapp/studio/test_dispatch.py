"""Tests of sending runs to the broker: a broker that is down loses no run; a user has at most
PARASIM_MAX_RUNNING_PER_USER runs in flight, the rest held back while others' runs go."""

from __future__ import annotations

import threading
from datetime import timedelta
from typing import Any

import pytest
from django.db import connection
from django.utils import timezone

from simulator.errors import SandboxLimitError
from tests.webapp.studio.conftest import launch
from tests.webapp.studio.services.conftest import run_with, sweep_spec
from webapp.studio import dispatch
from webapp.studio.models import Simulation, SimulationStatus
from webapp.studio.selectors import in_flight_run_count
from webapp.studio.services.runs import simulation_cancel, simulation_reap_lost, simulation_start
from webapp.studio.services.sweeps import sweep_launch

pytestmark = pytest.mark.django_db


def test_a_launch_while_the_broker_is_down_is_sent_later_by_the_lost_run_check(
    user: Any,
    settings: Any,
    monkeypatch: pytest.MonkeyPatch,
    django_capture_on_commit_callbacks: Any,
) -> None:
    from celery.canvas import Signature

    def broker_down(self: Signature, *args: Any, **kwargs: Any) -> None:
        raise OSError("Connection refused")

    monkeypatch.setattr(Signature, "apply_async", broker_down)
    with django_capture_on_commit_callbacks(execute=True):
        simulation = launch(user)  # stored; the send fails after the commit
    simulation.refresh_from_db()
    assert (simulation.status, simulation.sent) == (SimulationStatus.QUEUED, None)
    first_task = simulation.celery_task_id

    published: list[str] = []
    monkeypatch.setattr(
        Signature, "apply_async", lambda self, *a, **k: published.append(self.options["task_id"])
    )
    assert simulation_reap_lost(alive_workers={}).resent == []  # not overdue yet
    later = timezone.now() + timedelta(seconds=settings.PARASIM_LOST_AFTER_SECONDS + 1)
    assert simulation_reap_lost(alive_workers={}, now=later).resent == [simulation.pk]
    simulation.refresh_from_db()
    assert simulation.sent is not None
    assert simulation.celery_task_id != first_task  # a late copy of the first send is stale
    assert published == [simulation.celery_task_id]
    assert simulation_reap_lost(alive_workers={}, now=later).resent == []


def sent_long_ago(user: Any, settings: Any, count: int) -> list[Simulation]:
    """Launch `count` runs (sent, nothing published) and date their send past the grace."""
    with pytest.MonkeyPatch.context() as patch:
        from celery.canvas import Signature

        patch.setattr(Signature, "apply_async", lambda self, *a, **k: None)
        runs = [launch(user) for _ in range(count)]
    long_ago = timezone.now() - timedelta(seconds=settings.PARASIM_LOST_AFTER_SECONDS + 1)
    Simulation.objects.filter(pk__in=[run.pk for run in runs]).update(sent=long_ago)
    return [Simulation.objects.get(pk=run.pk) for run in runs]


def test_a_run_whose_message_the_broker_lost_is_sent_again_under_a_new_task_id(
    user: Any, settings: Any, sent: list[list[int]]
) -> None:
    settings.PARASIM_MAX_RUNNING_PER_USER = 0
    held, lost = sent_long_ago(user, settings, 2)
    report = simulation_reap_lost(
        alive_workers={}, held_by_broker=lambda queues: {held.celery_task_id, "another-task"}
    )
    assert report.resent == [lost.pk]
    assert sent == [[lost.pk]]
    assert Simulation.objects.get(pk=held.pk).celery_task_id == held.celery_task_id
    again = Simulation.objects.get(pk=lost.pk)
    assert again.celery_task_id != lost.celery_task_id  # its lost message, if found, is stale
    assert again.status == SimulationStatus.QUEUED


@pytest.mark.parametrize("why", ["sent just now", "broker unreadable", "started meanwhile"])
def test_a_run_is_not_sent_again_unless_the_broker_surely_lost_its_message(
    user: Any, settings: Any, sent: list[list[int]], why: str
) -> None:
    settings.PARASIM_MAX_RUNNING_PER_USER = 0
    [run] = sent_long_ago(user, settings, 1)
    held_by_broker: Any = lambda queues: set()  # noqa: E731
    if why == "sent just now":
        Simulation.objects.filter(pk=run.pk).update(sent=timezone.now())
    elif why == "broker unreadable":
        held_by_broker = lambda queues: None  # noqa: E731
    else:  # a worker took the message and started the run after the broker was read

        def held_by_broker(queues: Any) -> set[str]:
            Simulation.objects.filter(pk=run.pk).update(status=SimulationStatus.RUNNING)
            return set()

    report = simulation_reap_lost(
        alive_workers={"w@alive": "its-life"}, held_by_broker=held_by_broker
    )
    assert (report.resent, sent) == ([], [])
    assert Simulation.objects.get(pk=run.pk).celery_task_id == run.celery_task_id


def test_the_broker_is_asked_about_every_queue_a_queued_run_is_in(
    user: Any, settings: Any, sent: list[list[int]]
) -> None:
    [run] = sent_long_ago(user, settings, 1)
    Simulation.objects.filter(pk=run.pk).update(queue="a-queue-no-longer-configured")
    asked: list[set[str]] = []

    simulation_reap_lost(alive_workers={}, held_by_broker=lambda queues: asked.append(queues))

    assert asked == [{"a-queue-no-longer-configured"}]


def test_a_requeued_lost_run_is_marked_sent_by_its_new_message(
    user: Any, sent: list[list[int]], django_capture_on_commit_callbacks: Any
) -> None:
    simulation = launch(user)
    long_ago = timezone.now() - timedelta(hours=1)
    Simulation.objects.filter(pk=simulation.pk).update(
        status=SimulationStatus.RUNNING, worker="w@gone", heartbeat=long_ago, sent=long_ago
    )
    with django_capture_on_commit_callbacks(execute=True):
        assert simulation_reap_lost(alive_workers={}).requeued == [simulation.pk]
    # `sent` was cleared with the new task id: the requeued run is not taken for one whose
    # message went missing an hour ago, nor, if its send fails, forgotten by the check.
    assert Simulation.objects.get(pk=simulation.pk).sent is None  # `sent` fixture: no send


# --- per-user concurrency (PARASIM_MAX_RUNNING_PER_USER) ----------------------------------


def held_ids(user: Any) -> list[int]:
    """Return the ids of `user`'s runs held back, oldest first."""
    return list(
        Simulation.objects.filter(owner=user, held=True).order_by("pk").values_list("pk", flat=True)
    )


@pytest.fixture
def capped(settings: Any) -> int:
    """Allow each user two runs in flight."""
    settings.PARASIM_MAX_RUNNING_PER_USER = 2
    return 2


def test_a_users_runs_beyond_the_cap_are_held_while_another_users_run_is_sent(
    user: Any,
    other_user: Any,
    capped: int,
    sent: list[list[int]],
    django_capture_on_commit_callbacks: Any,
) -> None:
    with django_capture_on_commit_callbacks(execute=True):
        mine = [launch(user) for _ in range(4)]
        theirs = launch(other_user)
    assert sent == [[mine[0].pk], [mine[1].pk], [theirs.pk]]
    assert held_ids(user) == [mine[2].pk, mine[3].pk]
    assert held_ids(other_user) == []
    statuses = set(Simulation.objects.values_list("status", flat=True))
    assert statuses == {SimulationStatus.QUEUED}  # held runs are queued runs


def test_when_a_users_run_ends_their_oldest_held_run_is_sent(
    user: Any, capped: int, sent: list[list[int]], django_capture_on_commit_callbacks: Any
) -> None:
    with django_capture_on_commit_callbacks(execute=True):
        first, second, third, fourth = [launch(user) for _ in range(4)]
    sent.clear()
    with django_capture_on_commit_callbacks(execute=True):
        run_with(first, {"overall_time_s": 1.0, "energy_j": {"total": 1.0}})
    assert sent == [[third.pk]]
    assert held_ids(user) == [fourth.pk]
    with django_capture_on_commit_callbacks(execute=True):
        run_with(second, SandboxLimitError("wall", "the run exceeded the wall-clock limit"))
    assert sent == [[third.pk], [fourth.pk]]
    assert held_ids(user) == []


def test_cancelling_a_running_run_frees_its_slot_and_a_held_run_just_goes(
    user: Any,
    capped: int,
    sent: list[list[int]],
    revoked: Any,
    django_capture_on_commit_callbacks: Any,
) -> None:
    with django_capture_on_commit_callbacks(execute=True):
        runs = [launch(user) for _ in range(4)]
        simulation_start(simulation_id=runs[0].pk, task_id=runs[0].celery_task_id, worker="w@h")
    sent.clear()
    with django_capture_on_commit_callbacks(execute=True):
        simulation_cancel(simulation=runs[3])  # held: frees nothing
    assert sent == []
    with django_capture_on_commit_callbacks(execute=True):
        simulation_cancel(simulation=runs[0])
    assert sent == [[runs[2].pk]]


def test_a_sweep_beyond_the_cap_sends_its_first_points_and_holds_the_rest(
    user: Any, capped: int, sent: list[list[int]], django_capture_on_commit_callbacks: Any
) -> None:
    with django_capture_on_commit_callbacks(execute=True):
        sweep = sweep_launch(user=user, name="grid", spec=sweep_spec())
    children = list(sweep.simulations.order_by("pk").values_list("pk", flat=True))
    assert sent == [children[:2]]
    assert held_ids(user) == children[2:]


def test_no_launch_or_release_puts_more_than_the_cap_in_flight(
    user: Any, capped: int, sent: list[list[int]], django_capture_on_commit_callbacks: Any
) -> None:
    with django_capture_on_commit_callbacks(execute=True):
        runs = [launch(user) for _ in range(5)]
    for _ in range(3):  # releases with no slot free send nothing
        assert dispatch.release_held(owner_id=user.pk) == []
    assert in_flight_run_count(owner_id=user.pk) == capped
    assert sum(len(batch) for batch in sent) == capped
    assert held_ids(user) == [run.pk for run in runs[capped:]]


def test_without_a_cap_every_run_is_sent_at_once(
    user: Any, sent: list[list[int]], django_capture_on_commit_callbacks: Any, settings: Any
) -> None:
    settings.PARASIM_MAX_RUNNING_PER_USER = 0
    with django_capture_on_commit_callbacks(execute=True):
        runs = [launch(user) for _ in range(5)]
    assert sent == [[run.pk] for run in runs]
    assert held_ids(user) == []


def test_held_runs_are_not_resent_as_lost_but_released_when_a_slot_is_free(
    user: Any, capped: int, sent: list[list[int]], django_capture_on_commit_callbacks: Any
) -> None:
    with django_capture_on_commit_callbacks(execute=True):
        runs = [launch(user) for _ in range(3)]
    Simulation.objects.filter(held=False).update(sent=timezone.now())  # as the broker would
    sent.clear()
    later = timezone.now() + timedelta(hours=1)
    report = simulation_reap_lost(alive_workers={}, now=later)
    assert (report.resent, report.released) == ([], [])  # in flight: sent; held: waiting
    # A worker that died between storing a run's end and releasing: the check releases.
    Simulation.objects.filter(pk=runs[0].pk).update(status=SimulationStatus.SUCCEEDED)
    report = simulation_reap_lost(alive_workers={}, now=later)
    assert (report.resent, report.released) == ([], [runs[2].pk])
    assert sent == [[runs[2].pk]]


def test_a_requeued_lost_run_waits_behind_the_cap_like_a_new_one(
    user: Any, capped: int, sent: list[list[int]], django_capture_on_commit_callbacks: Any
) -> None:
    with django_capture_on_commit_callbacks(execute=True):
        lost = launch(user)
        simulation_start(simulation_id=lost.pk, task_id=lost.celery_task_id, worker="w@gone")
        others = [launch(user) for _ in range(2)]  # one sent beside it, one held
    sent.clear()
    then = timezone.now() - timedelta(seconds=90)  # lost, not past its hard limit
    Simulation.objects.filter(pk=lost.pk).update(heartbeat=then, started=then)
    with django_capture_on_commit_callbacks(execute=True):
        report = simulation_reap_lost(alive_workers={})
    # The lost run counts as in flight no more: it takes the free slot before the younger
    # held run.
    assert report.requeued == [lost.pk]
    assert sent == [[lost.pk]]
    assert held_ids(user) == [others[1].pk]


@pytest.mark.parametrize("backlog", [1, 12])
def test_holding_one_more_run_reads_none_of_the_held_backlog(
    user: Any,
    capped: int,
    sent: list[list[int]],
    django_capture_on_commit_callbacks: Any,
    django_assert_num_queries: Any,
    backlog: int,
) -> None:
    with django_capture_on_commit_callbacks(execute=True):
        runs = [launch(user) for _ in range(capped + backlog)]
    # the launch, in a savepoint: the owner's lock, their runs' counts, the insert (held).
    # Nothing after the commit; no held run is read.
    with (
        django_assert_num_queries(5) as captured,
        django_capture_on_commit_callbacks(execute=True),
    ):
        last = launch(user)
    reads = [query["sql"] for query in captured if query["sql"].startswith("SELECT")]
    assert not any('"snapshot"' in sql for sql in reads)
    assert held_ids(user) == [run.pk for run in runs[capped:]] + [last.pk]
    assert sum(len(batch) for batch in sent) == capped


def test_a_launch_while_older_runs_are_held_and_a_slot_is_free_sends_the_oldest_first(
    user: Any,
    capped: int,
    sent: list[list[int]],
    django_capture_on_commit_callbacks: Any,
) -> None:
    with django_capture_on_commit_callbacks(execute=True):
        first, _, held_one, held_two = [launch(user) for _ in range(capped + 2)]
    # A run ends without its release (a worker that died before it): a slot is free while
    # two runs are held.
    Simulation.objects.filter(pk=first.pk).update(status=SimulationStatus.FAILED)
    sent.clear()
    with django_capture_on_commit_callbacks(execute=True):
        last = launch(user)
    assert last.held
    assert sent == [[held_one.pk]]
    assert held_ids(user) == [held_two.pk, last.pk]


def test_launches_one_after_another_fill_the_cap_and_the_rest_are_held(
    user: Any, capped: int, sent: list[list[int]], django_capture_on_commit_callbacks: Any
) -> None:
    # Each launch decides under the owner's lock on what the ones before it stored.
    with django_capture_on_commit_callbacks(execute=True):
        runs = [launch(user) for _ in range(capped + 3)]
    assert [run.held for run in runs] == [False] * capped + [True] * 3
    assert in_flight_run_count(owner_id=user.pk) == capped
    assert sorted(pk for batch in sent for pk in batch) == [run.pk for run in runs[:capped]]


def test_a_released_run_is_sent_with_its_own_queue_task_id_and_limits(
    user: Any,
    capped: int,
    monkeypatch: pytest.MonkeyPatch,
    django_capture_on_commit_callbacks: Any,
) -> None:
    from celery.canvas import Signature

    published: list[dict[str, Any]] = []
    monkeypatch.setattr(Signature, "apply_async", lambda self, *a, **k: published.append(self))
    with django_capture_on_commit_callbacks(execute=True):
        first, _, third = [launch(user, time_limit_s=7 + index) for index in range(3)]
    published.clear()
    with django_capture_on_commit_callbacks(execute=True):
        run_with(first, {"overall_time_s": 1.0, "energy_j": {"total": 1.0}})
    third.refresh_from_db()
    [signature] = published
    assert signature.args == (third.pk,)
    assert signature.options["task_id"] == third.celery_task_id
    assert signature.options["queue"] == third.queue
    assert signature.options["time_limit"] == 9 + dispatch.HARD_LIMIT_MARGIN_S
    assert (third.held, third.sent is not None) == (False, True)


@pytest.mark.django_db(transaction=True)
def test_launches_at_the_same_moment_never_fill_a_slot_twice(
    user: Any, capped: int, sent: list[list[int]]
) -> None:
    if connection.vendor != "postgresql":
        pytest.skip("needs PostgreSQL's row locks")
    start = threading.Barrier(6)
    errors: list[BaseException] = []

    def one_launch() -> None:
        try:
            start.wait()
            launch(user)
        except BaseException as error:  # reported below
            errors.append(error)
        finally:
            connection.close()

    threads = [threading.Thread(target=one_launch) for _ in range(6)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert errors == []
    assert in_flight_run_count(owner_id=user.pk) == capped
    assert len(held_ids(user)) == 6 - capped
    assert sum(len(batch) for batch in sent) == capped
