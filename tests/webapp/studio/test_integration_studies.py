"""A study on the real thing: PostgreSQL (Optuna's tables in the test database), Redis and
two Celery worker processes started here, each serving every queue.

Skipped without DATABASE_URL=postgres://... and CELERY_BROKER_URL=redis://... (as
test_integration.py, whose helpers it uses)."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from django.conf import settings

from tests.webapp.studio.factories import TINY_APP, tiny_snapshot
from tests.webapp.studio.live import Worker, flush_broker, require_services, wait_for
from tests.webapp.studio.test_integration import database_url, start
from webapp.studio.models import Simulation, SimulationStatus, Study, StudyStatus
from webapp.studio.selectors import study_progress
from webapp.studio.services.studies import study_launch
from webapp.studio.study_storage import close_storages

pytestmark = [pytest.mark.integration, pytest.mark.slow]


@pytest.fixture(scope="module", autouse=True)
def real_services() -> None:
    require_services()


@pytest.fixture
def member(transactional_db: None) -> Any:
    from tests.hwdb.factories import UserFactory

    return UserFactory()


# Each run counts to n in the sandbox: long enough to be caught running.
BUSY_APP = "t = 0\nwhile t < n:\n    t += 1\n"


def test_a_study_goes_on_after_its_only_worker_is_killed_mid_run(
    member: Any, settings: Any, tmp_path: Path
) -> None:
    """First in the file: no other worker of this module is started yet."""
    from webapp.studio import tasks

    settings.PARASIM_LOST_AFTER_SECONDS = 1
    doomed = start(Worker(database_url(), tmp_path / "doomed.log"))
    try:
        study = study_launch(
            user=member,
            name="outlives",
            spec={
                "snapshot": tiny_snapshot(),
                "app_source": BUSY_APP,
                "labels": {"CPU": 1},
                "variables": {"n": {"start": 3_000_000, "stop": 6_000_000, "step": 1_000_000}},
            },
            objectives=[{"metric": "wall_s"}],
            budget={"runs": 4},
            parallel=2,
        )
        wait_for(
            lambda: doomed.busy_pool_process(),
            timeout=60,
            what="a trial's run to start on the doomed worker",
        )
        doomed.kill()
    finally:
        doomed.stop()
    time.sleep(1.5)  # the heartbeats age past PARASIM_LOST_AFTER_SECONDS
    assert Study.objects.get(pk=study.pk).status == StudyStatus.RUNNING
    report = tasks.reap_lost_simulations.apply().get()
    assert report["requeued"] and not report["failed"]
    rescuer = start(Worker(database_url(), tmp_path / "rescuer.log"))
    try:
        wait_for(
            lambda: Study.objects.get(pk=study.pk).status == StudyStatus.FINISHED,
            timeout=240,
            what="the study to finish on the rescuer",
        )
    finally:
        rescuer.stop()
        close_storages()
    runs = list(Simulation.objects.filter(sweep_id=study.sweep_id))
    assert sorted((run.sweep_point or {})["trial"] for run in runs) == [0, 1, 2, 3]
    assert {run.status for run in runs} == {SimulationStatus.SUCCEEDED}
    assert {run.attempts for run in runs} <= {1, 2} and max(r.attempts for r in runs) == 2
    progress = study_progress(study=Study.objects.get(pk=study.pk))
    assert (progress["done"], progress["failed"]) == (4, 0)


@pytest.fixture(scope="module")
def workers(
    django_db_setup: None, django_db_blocker: Any, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[list[Worker]]:
    """Start two workers on the test database and a flushed Redis database."""
    import redis

    broker = redis.Redis.from_url(settings.CELERY_BROKER_URL)
    flush_broker(broker)
    logs: Path = tmp_path_factory.mktemp("study-workers")
    running = [Worker(database_url(), logs / f"worker{n}.log") for n in range(2)]
    try:
        yield [start(worker) for worker in running]
    finally:
        for worker in running:
            worker.stop()
        close_storages()
        flush_broker(broker)


def test_a_study_s_trials_run_on_both_workers_each_once(workers: list[Worker], member: Any) -> None:
    study = study_launch(
        user=member,
        name="spread",
        spec={
            "snapshot": tiny_snapshot(),
            "app_source": TINY_APP,
            "labels": {"CPU": 1},
            "variables": {"steps": {"start": 1, "stop": 20, "step": 1}, "ops": [1e9, 2e9]},
        },
        objectives=[{"metric": "overall_time_s"}],
        seed=1,
        budget={"runs": 8},
        parallel=4,
    )

    def finished() -> bool:
        return Study.objects.get(pk=study.pk).status == StudyStatus.FINISHED

    wait_for(finished, timeout=180, what="the study to finish")
    runs = list(Simulation.objects.filter(sweep_id=study.sweep_id))
    assert len(runs) == 8
    assert {run.status for run in runs} == {SimulationStatus.SUCCEEDED}
    assert all(run.attempts == 1 for run in runs)  # none run twice
    assert sorted((run.sweep_point or {})["trial"] for run in runs) == list(range(8))
    assert {run.worker for run in runs} == {worker.hostname for worker in workers}
    progress = study_progress(study=Study.objects.get(pk=study.pk))
    assert (progress["done"], progress["failed"], progress["running"]) == (8, 0, 0)
