"""Tests that a study of 10,000 trials is served aggregated: its detail holds the counts, the
whole Pareto front and a bounded sample of the rest, in a number of queries and a payload
that do not grow with the trials; every trial is paged.

The runs are stored directly (bulk_create, no simulation), each with the figures of a result
its trial's metrics are read from. Transactional, as the other studies' tests (Optuna reads
through its own connection)."""

from __future__ import annotations

import copy
import time
from typing import Any

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from rest_framework.test import APIClient

from tests.webapp.studio.factories import TINY_APP, SimulationFactory, tiny_snapshot
from webapp.studio import dispatch
from webapp.studio.models import Simulation, SimulationStatus, Study
from webapp.studio.selectors import STUDY_TRIALS_SHOWN
from webapp.studio.study_storage import close_storages

pytestmark = pytest.mark.django_db(transaction=True)

TRIALS = 10_000
# The detail's queries: the session, the user, the study, the version's aggregate, the runs.
MOST_QUERIES = 8
# The detail's bytes: STUDY_TRIALS_SHOWN trials of a few hundred bytes each, whatever the count.
MOST_BYTES = 600_000
# Generous on a loaded machine: the bound the issue asks for is 1 s.
MOST_SECONDS = 3.0
# The trials that failed (numbers ending in 3 but among the last 20, running).
FAILED = TRIALS // 10 - 2


@pytest.fixture(autouse=True)
def storage_closed_after() -> Any:
    yield
    close_storages()


@pytest.fixture
def advances(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """Return the ids of the studies whose advance was sent; nothing is sent."""
    sent: list[int] = []
    monkeypatch.setattr(
        dispatch, "advance_study", lambda study_id, countdown=None: sent.append(study_id)
    )
    return sent


def front_point(index: int) -> tuple[float, float]:
    """Return the (energy, time) of the front's index-th trade-off: time x energy = 100."""
    energy = 1.0 + 20.0 * index
    return energy, 100.0 / energy


def launch(client: APIClient, settings: Any) -> Study:
    settings.PARASIM_MAX_SWEEP = TRIALS  # a deployment's cap for studies this big
    response = client.post(
        "/api/studies/",
        {
            "name": "big",
            "spec": {
                "snapshot": tiny_snapshot(),
                "app_source": TINY_APP,
                "labels": {"CPU": 1},
                "variables": {"steps": {"start": 1, "stop": 100_000, "step": 1}, "ops": 1e9},
            },
            "objectives": [{"metric": "overall_time_s"}, {"metric": "energy_j"}],
            "budget": {"runs": TRIALS},
        },
        format="json",
    )
    assert response.status_code == 201, response.json()
    return Study.objects.get(pk=response.json()["id"])


def store_trials(study: Study) -> set[int]:
    """Store TRIALS runs of the study (the last 20 running, every tenth other one failed);
    return the numbers of the trials on the Pareto front: the 50 numbered 7 + 200 k lie on
    time x energy = 100, every other complete one is worse in both than one of them."""
    runs = []
    front = set()
    # One run made by the factory, the others copied from it with their own fields: the same
    # rows, without the factory's work ten thousand times.
    prototype = SimulationFactory.build(owner=study.owner, sweep=study.sweep)
    for number in range(TRIALS):
        on_front = number % 200 == 7
        status = SimulationStatus.SUCCEEDED
        if number >= TRIALS - 20:
            status = SimulationStatus.RUNNING
        elif number % 10 == 3:
            status = SimulationStatus.FAILED
        if on_front:
            energy, time_s = front_point(number // 200)
        else:
            energy, time_s = front_point(number % 50)
            energy, time_s = energy * (1.1 + number % 7 / 10), time_s * (1.1 + number % 5 / 10)
        if on_front and status == SimulationStatus.SUCCEEDED:
            front.add(number)
        run = copy.copy(prototype)
        run.name = f"Run {number}"
        run.sweep_point = {"variables": {"steps": number + 1, "ops": 1e9}, "trial": number}
        run.status = status
        run.result = (
            {"overall_time_s": time_s, "energy_j": {"total": energy}}
            if status == SimulationStatus.SUCCEEDED
            else None
        )
        run.error = {"message": "boom"} if status == SimulationStatus.FAILED else None
        run.celery_task_id = f"task-{number}"
        runs.append(run)
    Simulation.objects.bulk_create(runs, batch_size=1000)
    return front


def test_a_10000_trial_study_s_detail_is_aggregated_bounded_and_fast(
    client: APIClient, advances: list[int], settings: Any
) -> None:
    study = launch(client, settings)
    front = store_trials(study)
    with CaptureQueriesContext(connection) as queries:
        started = time.perf_counter()
        response = client.get(f"/api/studies/{study.pk}/")
        elapsed = time.perf_counter() - started
    assert response.status_code == 200
    assert len(queries) <= MOST_QUERIES, [q["sql"][:120] for q in queries]
    assert len(response.content) <= MOST_BYTES
    assert elapsed < MOST_SECONDS
    progress = response.json()["progress"]
    assert progress["asked"] == TRIALS and progress["budget"] == TRIALS
    assert progress["running"] == 20
    assert progress["failed"] == FAILED
    assert progress["done"] == TRIALS - 20
    assert set(progress["best"]) == front and len(front) == 50
    trials = progress["trials"]
    assert progress["shown"] == len(trials) == STUDY_TRIALS_SHOWN
    numbers = [t["number"] for t in trials]
    assert numbers == sorted(numbers) and numbers[0] == 0 and numbers[-1] == TRIALS - 1
    assert {t["number"] for t in trials if t["best"]} == front
    # The sample spreads over the study: each tenth of it has about a tenth of the points.
    tenths = [sum(n * 10 // TRIALS == k for n in numbers) for k in range(10)]
    assert min(tenths) >= STUDY_TRIALS_SHOWN // 10 - 10
    shown = {t["number"]: t for t in trials}
    failed = [t for t in trials if t["state"] == "fail"]
    assert failed and {(t["number"] % 10, t["error"]) for t in failed} == {(3, "boom")}
    assert shown[7]["metrics"]["overall_time_s"] == pytest.approx(front_point(0)[1])
    assert shown[7]["point"] == {"steps": 8, "ops": 1e9}
    assert response.json()["trials_url"] == f"/api/studies/{study.pk}/trials/"
    # Read again unchanged: from the cache, in the version's queries and no read of the runs.
    with CaptureQueriesContext(connection) as queries:
        again = client.get(f"/api/studies/{study.pk}/")
    assert again.json() == response.json()
    assert not any('"result"' in q["sql"] for q in queries)
    # A run that ends is seen by the next read.
    Simulation.objects.filter(sweep=study.sweep, sweep_point__trial=TRIALS - 1).update(
        status=SimulationStatus.FAILED, finished="2026-01-01T00:00:00Z"
    )
    progress = client.get(f"/api/studies/{study.pk}/").json()["progress"]
    assert (progress["running"], progress["failed"]) == (19, FAILED + 1)


def test_every_trial_of_a_big_study_is_paged_by_number(
    client: APIClient, advances: list[int], settings: Any
) -> None:
    study = launch(client, settings)
    front = store_trials(study)
    first = client.get(f"/api/studies/{study.pk}/trials/").json()
    assert first["count"] == TRIALS
    assert [t["number"] for t in first["results"]] == list(range(len(first["results"])))
    last = client.get(f"/api/studies/{study.pk}/trials/?page=last").json()
    assert last["results"][-1]["number"] == TRIALS - 1
    assert last["results"][-1]["state"] == "running"
    page = client.get(f"/api/studies/{study.pk}/trials/?page=2").json()["results"]
    assert {t["number"] for t in page if t["best"]} == front & {t["number"] for t in page}


def test_a_10000_point_sweep_s_detail_samples_around_its_front_when_asked(
    client: APIClient, advances: list[int], settings: Any
) -> None:
    study = launch(client, settings)
    front = store_trials(study)
    url = f"/api/sweeps/{study.sweep_id}/"
    with CaptureQueriesContext(connection) as queries:
        started = time.perf_counter()
        response = client.get(f"{url}?sample=500")
        elapsed = time.perf_counter() - started
    assert response.status_code == 200
    assert len(queries) <= MOST_QUERIES, [q["sql"][:120] for q in queries]
    assert len(response.content) <= MOST_BYTES
    assert elapsed < MOST_SECONDS
    sweep = response.json()
    points = sweep["points"]
    assert sweep["points_total"] == TRIALS and len(points) == 500
    ids = [p["simulation"] for p in points]
    assert ids == sorted(ids)
    trial_of = dict(
        Simulation.objects.filter(sweep=study.sweep).values_list("pk", "sweep_point__trial")
    )
    assert {trial_of[p["simulation"]] for p in points if p["pareto"]} == front
    # Every point without `sample`, as before; a bad sample is refused naming it.
    everything = client.get(url).json()
    assert len(everything["points"]) == everything["points_total"] == TRIALS
    refused = client.get(f"{url}?sample=0")
    assert refused.status_code == 400 and "sample" in refused.json()
