"""Tests on the real thing: PostgreSQL, Redis and a Celery worker process started here.

They need DATABASE_URL pointing at PostgreSQL and CELERY_BROKER_URL at Redis (a database
reserved for tests: it is flushed). Without them the tests are skipped, unless
PARASIM_REQUIRE_SERVICES=1 (CI), where they fail instead. The worker serves every
configured queue with two prefork processes and reads pytest-django's test database.
"""

from __future__ import annotations

import os
import signal
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from django.conf import settings

from simulator.runner import run_simulation as run_in_process
from tests.webapp.studio.factories import TINY_APP, tiny_snapshot
from tests.webapp.studio.live import (
    ROOT,
    Worker,
    broker_prefix,
    children,
    flush_broker,
    require_services,
    wait_for,
)
from webapp.studio.models import FINAL_STATUSES, Simulation, SimulationStatus
from webapp.studio.services.launch import simulation_launch
from webapp.studio.services.runs import simulation_cancel

pytestmark = [pytest.mark.integration, pytest.mark.slow]

BUSY_APP = "t = 0\nwhile t < n:\n    t += 1\n"
ENDLESS_APP = "while True:\n    pass\n"


@pytest.fixture(scope="module", autouse=True)
def real_services() -> None:
    """Skip (or, when services are required, fail) without PostgreSQL and Redis."""
    require_services()


def database_url() -> str:
    """Return the URL of pytest-django's test database (after it was created)."""
    db = settings.DATABASES["default"]
    auth = db["USER"] + (f":{db['PASSWORD']}" if db.get("PASSWORD") else "")
    return f"postgres://{auth}@{db['HOST'] or '127.0.0.1'}:{db['PORT'] or 5432}/{db['NAME']}"


def start(worker: Worker) -> Worker:
    """Return `worker` once it answers a ping; fail with its log if it exits first."""
    from webapp.celery import app

    wait_for(
        lambda: (
            worker.process.poll() is not None
            or app.control.inspect(destination=[worker.hostname], timeout=1).ping()
        ),
        timeout=60,
        what="the worker to answer a ping",
    )
    if worker.process.poll() is not None:
        pytest.fail(f"the worker exited:\n{worker.log.read_text()[-3000:]}")
    return worker


@pytest.fixture(scope="module")
def worker(
    django_db_setup: None, django_db_blocker: Any, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Worker]:
    """Start a real worker on the test database and a flushed Redis database; stop it after."""
    import redis

    from webapp.celery import app

    assert not app.conf.task_always_eager
    broker = redis.Redis.from_url(settings.CELERY_BROKER_URL)
    flush_broker(broker)
    running = Worker(database_url(), tmp_path_factory.mktemp("worker") / "worker.log")
    try:
        yield start(running)
    finally:
        running.stop()
        flush_broker(broker)


def launch(user: Any, app_source: str = TINY_APP, **fields: Any) -> Simulation:
    values: dict[str, Any] = {
        "snapshot": tiny_snapshot(),
        "app_source": app_source,
        "labels": {"CPU": 1},
        "variables": {"steps": 2, "ops": 1e9},
    }
    values.update(fields)
    return simulation_launch(user=user, **values)


def final(simulation: Simulation, timeout: float = 60) -> Simulation:
    def done() -> Simulation | None:
        current = Simulation.objects.get(pk=simulation.pk)
        return current if current.status in FINAL_STATUSES else None

    return wait_for(done, timeout=timeout, what=f"simulation {simulation.pk} to finish")


def status_of(simulation: Simulation) -> str:
    return Simulation.objects.values_list("status", flat=True).get(pk=simulation.pk)


@pytest.fixture
def member(transactional_db: None) -> Any:
    from tests.hwdb.factories import UserFactory

    return UserFactory()


def test_a_run_launched_over_rest_completes_with_the_runners_result(
    worker: Worker, member: Any
) -> None:
    from rest_framework.test import APIClient

    client = APIClient()
    client.force_authenticate(member)
    queues = {q["name"]: q["workers"] for q in client.get("/api/queues/").json()}
    assert all(worker.hostname in serving for serving in queues.values())
    body = {
        "snapshot": tiny_snapshot(),
        "app_source": TINY_APP,
        "variables": {"steps": 3, "ops": 2e9},
        "labels": {"CPU": 2},
        "queue": "gajgerqueue",
        "seed": 11,
    }
    response = client.post("/api/simulations/", body, format="json")
    assert response.status_code == 201, response.json()
    simulation = final(Simulation.objects.get(pk=response.json()["id"]))
    assert simulation.status == SimulationStatus.SUCCEEDED, simulation.error
    assert simulation.worker == worker.hostname
    downloaded = client.get(f"/api/simulations/{simulation.pk}/result.json").json()
    expected = run_in_process(
        tiny_snapshot(), TINY_APP, labels={"CPU": 2}, variables=body["variables"], seed=11
    )
    downloaded.pop("stats")
    expected.pop("stats")
    assert downloaded == expected
    assert downloaded["overall_time_s"] == pytest.approx(6.0)


def test_the_m2s_cgm_memory_example_runs_over_rest_through_the_worker(
    worker: Worker, member: Any
) -> None:
    """Issue 12's example: 002's CPU-GPU processor, collaborative and coherent, over REST."""
    import json

    from rest_framework.test import APIClient

    example = ROOT / "examples" / "m2s_cgm_memory"
    snapshot = json.loads((example / "snapshot.json").read_text())
    app = (example / "app.py").read_text()
    variables = {"workload": "collaborative", "size_kb": 64, "rounds": 2, "flush": 0}
    client = APIClient()
    client.force_authenticate(member)
    body = {
        "snapshot": snapshot,
        "app_source": app,
        "labels": {"CPU": 8, "GPU": 1},
        "variables": variables,
    }
    response = client.post("/api/simulations/", body, format="json")
    assert response.status_code == 201, response.json()
    simulation = final(Simulation.objects.get(pk=response.json()["id"]), timeout=120)
    assert simulation.status == SimulationStatus.SUCCEEDED, simulation.error
    downloaded = client.get(f"/api/simulations/{simulation.pk}/result.json").json()
    expected = run_in_process(snapshot, app, labels={"CPU": 8, "GPU": 1}, variables=variables)
    assert downloaded["memory"] == expected["memory"]
    assert downloaded["overall_time_s"] == pytest.approx(expected["overall_time_s"])
    assert downloaded["memory"]["coherence"]["messages"]["Get_Fwd"] > 0


def test_a_burst_of_a_hundred_runs_all_complete(worker: Worker, member: Any) -> None:
    runs = [launch(member, variables={"steps": 1, "ops": float(i + 1)}) for i in range(100)]
    ids = [run.pk for run in runs]
    wait_for(
        lambda: Simulation.objects.filter(pk__in=ids, status__in=FINAL_STATUSES).count() == 100,
        timeout=170,
        what="100 runs to finish",
    )
    statuses = set(Simulation.objects.filter(pk__in=ids).values_list("status", flat=True))
    assert statuses == {SimulationStatus.SUCCEEDED}
    times = dict(Simulation.objects.filter(pk__in=ids).values_list("pk", "overall_time_s"))
    assert [times[pk] for pk in ids] == pytest.approx([(i + 1) / 1e9 for i in range(100)])


def test_killing_the_pool_process_mid_run_retries_the_run(worker: Worker, member: Any) -> None:
    simulation = launch(member, BUSY_APP, variables={"n": 30_000_000}, time_limit_s=60)
    victim = wait_for(
        lambda: status_of(simulation) == "running" and worker.busy_pool_process(),
        timeout=30,
        what="the run to start in a pool process",
    )
    os.kill(victim, signal.SIGKILL)
    done = final(simulation, timeout=120)
    # task_reject_on_worker_lost requeues the message at once; the second attempt finishes.
    assert (done.status, done.attempts) == (SimulationStatus.SUCCEEDED, 2), done.error
    assert worker.process.poll() is None


def test_an_endless_application_hits_its_limit_while_others_are_served(
    worker: Worker, member: Any
) -> None:
    endless = launch(member, ENDLESS_APP, variables={}, time_limit_s=3)
    others = [launch(member) for _ in range(3)]
    for other in others:
        assert final(other).status == SimulationStatus.SUCCEEDED
    failed = final(endless, timeout=40)
    assert failed.status == SimulationStatus.FAILED
    assert (failed.error["kind"], failed.error["limit"]) == ("limit", "wall")
    assert "3 s" in failed.error["message"]


def test_a_syntax_error_fails_the_run_with_the_line_number(worker: Worker, member: Any) -> None:
    broken = launch(member, "steps = 1\nfor i in range(steps)\n    pass\n", variables={})
    failed = final(broken)
    assert failed.status == SimulationStatus.FAILED
    assert (failed.error["kind"], failed.error["line"]) == ("user_code", 2)


def test_cancelling_a_queued_and_a_running_run(worker: Worker, member: Any) -> None:
    blockers = [launch(member, ENDLESS_APP, variables={}, time_limit_s=60) for _ in range(2)]
    wait_for(
        lambda: all(status_of(b) == "running" for b in blockers),
        timeout=30,
        what="both pool processes to be busy",
    )
    queued = launch(member)
    time.sleep(0.5)
    assert status_of(queued) == "queued"
    running = [kid for kids in worker.busy_sandboxes().values() for kid in kids]
    assert len(running) == 2
    simulation_cancel(simulation=queued)
    for blocker in blockers:
        simulation_cancel(simulation=blocker)
    wait_for(  # the spare children waiting for the next runs stay
        lambda: not any(Path(f"/proc/{kid}").exists() for kid in running),
        timeout=20,
        what="the cancelled runs' sandbox processes to end",
    )
    after = launch(member)
    assert final(after, timeout=30).status == SimulationStatus.SUCCEEDED
    assert {status_of(s) for s in [queued, *blockers]} == {"cancelled"}


def test_a_run_whose_whole_worker_was_killed_is_requeued_and_finished_elsewhere(
    worker: Worker, member: Any, settings: Any, tmp_path: Path
) -> None:
    from webapp.studio import tasks

    settings.PARASIM_QUEUES = {**settings.PARASIM_QUEUES, "itest-lost": ""}
    settings.PARASIM_LOST_AFTER_SECONDS = 1
    doomed = start(Worker(database_url(), tmp_path / "doomed.log", queues=["itest-lost"]))
    try:
        simulation = launch(
            member, BUSY_APP, variables={"n": 20_000_000}, queue="itest-lost", time_limit_s=60
        )
        wait_for(
            lambda: status_of(simulation) == "running" and doomed.busy_pool_process(),
            timeout=30,
            what="the run to start on the doomed worker",
        )
        sandboxes = [kid for pid in doomed.pool() for kid in children(pid)]
        for pid in [doomed.process.pid, *doomed.pool(), *sandboxes]:
            os.kill(pid, signal.SIGKILL)
        doomed.process.wait()
    finally:
        doomed.stop()
    time.sleep(1.5)  # the heartbeat ages past PARASIM_LOST_AFTER_SECONDS
    assert status_of(simulation) == "running"
    report = tasks.reap_lost_simulations.apply().get()
    assert report == {"requeued": [simulation.pk], "failed": [], "resent": []}
    lost = Simulation.objects.get(pk=simulation.pk)
    assert lost.status == SimulationStatus.QUEUED
    assert doomed.hostname in lost.error["message"]
    rescuer = start(Worker(database_url(), tmp_path / "rescuer.log", queues=["itest-lost"]))
    try:
        done = final(simulation, timeout=60)
    finally:
        rescuer.stop()
    assert (done.status, done.attempts, done.worker) == ("succeeded", 2, rescuer.hostname)


def test_the_broker_check_finds_a_message_lost_between_queue_and_worker(
    member: Any, settings: Any
) -> None:
    """Redis holds a run's message in its queue, or, once a worker took it, in the
    unacknowledged hash; a message popped and never recorded (the broker stopped in between)
    is in neither, and the lost-run check sends that run again."""
    from datetime import timedelta

    import redis
    from django.utils import timezone

    from webapp.celery import app
    from webapp.studio.selectors import broker_task_ids
    from webapp.studio.services.runs import simulation_reap_lost

    configured = dict(settings.PARASIM_QUEUES)
    settings.PARASIM_QUEUES = {**configured, "itest-broker": ""}
    settings.PARASIM_MAX_RUNNING_PER_USER = 0
    broker = redis.Redis.from_url(settings.CELERY_BROKER_URL)
    runs = [launch(member, queue="itest-broker") for _ in range(3)]
    task_of = {run.celery_task_id: run.pk for run in runs}
    assert {task_of[task] for task in broker_task_ids() or () if task in task_of} == set(
        task_of.values()
    )
    try:
        with app.connection_for_read() as connection:
            channel = connection.default_channel
            taken = channel.basic_get("itest-broker", no_ack=False)  # delivered, unacknowledged
            lost = channel.basic_get("itest-broker", no_ack=True)  # popped, never recorded
            taken_pk = task_of[taken.headers["id"]]
            lost_pk = task_of[lost.headers["id"]]
            held = broker_task_ids() or set()
            assert {pk for task, pk in task_of.items() if task in held} == set(task_of.values()) - {
                lost_pk
            }
            later = timezone.now() + timedelta(seconds=settings.PARASIM_LOST_AFTER_SECONDS + 1)
            # the queue is dropped from the configuration: its runs' messages are still seen
            settings.PARASIM_QUEUES = configured
            report = simulation_reap_lost(
                alive_workers={}, held_by_broker=broker_task_ids, now=later
            )
            assert report.resent == [lost_pk]
            again = Simulation.objects.get(pk=lost_pk)
            assert again.celery_task_id in (broker_task_ids(["itest-broker"]) or set())
            assert Simulation.objects.get(pk=taken_pk).celery_task_id == taken.headers["id"]
    finally:
        for key in broker.keys(f"{broker_prefix()}itest-broker*"):
            broker.delete(key)
