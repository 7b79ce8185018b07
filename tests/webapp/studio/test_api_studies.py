"""Tests of studies through REST: a whole study run eagerly on the real sandbox, stop and
resume (a trial lost with its advance failed, the rest going on from the storage), the
budget of runs and of wall time, ownership and sharing, and the refusals naming the field.

Transactional: Optuna writes through its own connection to the same database, which a test
transaction would keep locked (webapp.studio.study_storage)."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import timedelta
from typing import Any

import pytest
from rest_framework.test import APIClient

from simulator.study import load_study
from tests.hwdb.factories import AttributeFactory, ComponentFactory
from tests.webapp.studio.factories import TINY_APP, tiny_snapshot
from webapp.celery import app
from webapp.studio import dispatch, tasks
from webapp.studio.models import Simulation, SimulationStatus, Study, Sweep
from webapp.studio.services import studies
from webapp.studio.study_storage import close_storages, optuna_storage

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture(autouse=True, scope="module")
def storage_closed_after() -> Iterator[None]:
    """Close the storage's connections after these tests, before the test database goes."""
    yield
    close_storages()


def body(**overrides: Any) -> dict[str, Any]:
    """Return a study of the tiny system: time = steps x ops / 1e9 s, least at steps 1 and
    ops 1e9."""
    study: dict[str, Any] = {
        "name": "tiny search",
        "spec": {
            "snapshot": tiny_snapshot(),
            "app_source": TINY_APP,
            "labels": {"CPU": 1},
            "variables": {"steps": {"start": 1, "stop": 8, "step": 1}, "ops": [2e9, 1e9, 3e9]},
        },
        "objectives": [{"metric": "overall_time_s"}],
        "sampler": "tpe",
        "seed": 3,
        "budget": {"runs": 6},
        "parallel": 2,
    }
    study.update(overrides)
    return study


@pytest.fixture
def eager() -> Iterator[None]:
    """Run every task in this process as it is sent (runs in the real sandbox)."""
    previous = app.conf.task_always_eager
    app.conf.task_always_eager = True
    yield
    app.conf.task_always_eager = previous


@pytest.fixture
def advances(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """Return the ids of the studies whose advance was sent; nothing is sent."""
    sent: list[int] = []
    monkeypatch.setattr(
        dispatch, "advance_study", lambda study_id, countdown=None: sent.append(study_id)
    )
    return sent


def run_sent(batches: list[list[int]]) -> None:
    """Run, in this process, every run sent so far, and forget them."""
    while batches:
        for simulation_id in batches.pop(0):
            run = Simulation.objects.get(pk=simulation_id)
            tasks.run_simulation.apply(args=(run.pk,), task_id=run.celery_task_id)


def test_a_study_runs_its_budget_of_trials_and_shows_the_best(
    client: APIClient, eager: None
) -> None:
    response = client.post("/api/studies/", body(), format="json")
    assert response.status_code == 201, response.json()
    study_id = response.json()["id"]
    detail = client.get(f"/api/studies/{study_id}/").json()
    assert detail["status"] == "finished" and detail["sweep_status"] == "finished"
    progress = detail["progress"]
    assert (progress["asked"], progress["done"], progress["running"]) == (6, 6, 0)
    assert progress["budget"] == 6 and progress["failed"] == 0
    trials = progress["trials"]
    assert {t["simulation_status"] for t in trials} == {"succeeded"}
    times = {t["number"]: t["metrics"]["overall_time_s"] for t in trials}
    for trial in trials:  # each trial's run simulated its own point
        point = trial["point"]
        assert times[trial["number"]] == pytest.approx(point["steps"] * point["ops"] / 1e9)
    assert progress["best"] == [n for n, t in times.items() if t == min(times.values())]
    # the trials are the runs of the study's sweep: its table and its run list
    runs = client.get(f"/api/simulations/?sweep={detail['sweep']}").json()
    assert runs["count"] == 6
    assert [s["id"] for s in client.get("/api/studies/").json()["results"]] == [study_id]


def test_a_study_searches_the_hardware_swapped_in_as_one_more_dimension(
    client: APIClient, user: Any, eager: None
) -> None:
    speeds = {"Fast CPU": 4e9, "Slow CPU": 1e9}
    components = []
    for name, speed in speeds.items():
        component = ComponentFactory(owner=user, type="CPU", name=name)
        AttributeFactory(component=component, key="speed", value=speed, unit="op/s")
        components.append(component.pk)
    spec = {**body()["spec"], "hardware": {"node": "cpu0", "components": components}}
    response = client.post("/api/studies/", body(spec=spec), format="json")
    assert response.status_code == 201, response.json()
    detail = client.get(f"/api/studies/{response.json()['id']}/").json()
    trials = detail["progress"]["trials"]
    assert len(trials) == 6 and {t["state"] for t in trials} == {"complete"}
    for trial in trials:  # each ran on the hardware its point names
        point = trial["point"]
        expected = point["steps"] * point["ops"] / speeds[point["hardware"]]
        assert trial["metrics"]["overall_time_s"] == pytest.approx(expected)
        run = Simulation.objects.get(pk=trial["simulation"])
        assert run.sweep_point["hardware"]["name"] == point["hardware"]
    best = [t for t in trials if t["best"]]
    assert best and all(
        t["metrics"]["overall_time_s"] == min(x["metrics"]["overall_time_s"] for x in trials)
        for t in best
    )


def test_a_stopped_study_finishes_its_runs_and_resumes_from_its_storage(
    client: APIClient, sent: list[list[int]], advances: list[int]
) -> None:
    response = client.post("/api/studies/", body(budget={"runs": 5}), format="json")
    assert response.status_code == 201, response.json()
    study = Study.objects.get(pk=response.json()["id"])
    assert advances == [study.pk]
    studies.study_advance(study_id=study.pk)
    assert [len(batch) for batch in sent] == [2]  # `parallel` trials in flight
    first = sent[0][0]
    stopped = client.post(f"/api/studies/{study.pk}/stop/")
    assert stopped.json()["status"] == "stopped"
    sent[0] = [first]
    run_sent(sent)
    studies.study_advance(study_id=study.pk)
    assert sent == []  # stopped: the ended run was told, no trial asked for
    progress = client.get(f"/api/studies/{study.pk}/").json()["progress"]
    assert (progress["done"], progress["running"]) == (1, 1)
    # An advance that died after asking for a trial, before storing its run.
    setup = studies._setup(study)
    load_study(setup, storage=optuna_storage(), name=study.optuna_name).ask()
    resumed = client.post(f"/api/studies/{study.pk}/resume/")
    assert resumed.json()["status"] == "running"
    studies.study_advance(study_id=study.pk)
    progress = client.get(f"/api/studies/{study.pk}/").json()["progress"]
    lost = progress["trials"][2]
    assert (lost["state"], lost["simulation"]) == ("fail", None)
    assert lost["error"] == studies.STUDY_MESSAGES["lost"]
    assert [len(batch) for batch in sent] == [1]  # one still in flight: one more asked
    while Simulation.objects.exclude(
        status__in=[SimulationStatus.SUCCEEDED, SimulationStatus.FAILED]
    ).exists():
        queued = Simulation.objects.filter(status=SimulationStatus.QUEUED)
        sent.append([run.pk for run in queued])
        run_sent(sent)
        studies.study_advance(study_id=study.pk)
    detail = client.get(f"/api/studies/{study.pk}/").json()
    assert detail["status"] == "finished"
    assert (detail["progress"]["asked"], detail["progress"]["failed"]) == (5, 1)
    assert Simulation.objects.count() == 4  # the budget: 5 trials, one of them lost
    assert client.post(f"/api/studies/{study.pk}/resume/").status_code == 400


def test_cancelling_a_study_s_sweep_stops_the_study(
    client: APIClient,
    sent: list[list[int]],
    advances: list[int],
    revoked: list[tuple[str, bool]],
) -> None:
    response = client.post("/api/studies/", body(), format="json")
    study = Study.objects.get(pk=response.json()["id"])
    studies.study_advance(study_id=study.pk)
    cancelled = client.post(f"/api/sweeps/{study.sweep_id}/cancel/")
    assert cancelled.json()["status"] == "cancelled" and len(revoked) == 2
    studies.study_advance(study_id=study.pk)
    detail = client.get(f"/api/studies/{study.pk}/").json()
    assert (detail["status"], detail["sweep_status"]) == ("stopped", "cancelled")
    assert (detail["progress"]["failed"], detail["progress"]["running"]) == (2, 0)
    assert [len(batch) for batch in sent] == [2]  # no trial asked for after the cancel


def test_no_trial_is_asked_for_after_the_wall_time_budget(
    client: APIClient, sent: list[list[int]], advances: list[int]
) -> None:
    response = client.post("/api/studies/", body(budget={"runs": 50, "wall_s": 60}), format="json")
    study = Study.objects.get(pk=response.json()["id"])
    Study.objects.filter(pk=study.pk).update(created=study.created - timedelta(seconds=61))
    studies.study_advance(study_id=study.pk)
    assert sent == []
    study.refresh_from_db()
    assert study.status == "finished"


def test_a_stop_stored_while_an_advance_runs_is_kept(
    client: APIClient,
    sent: list[list[int]],
    advances: list[int],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    study_id = client.post("/api/studies/", body(), format="json").json()["id"]
    settle = studies._settle

    def settle_then_stop(*args: Any) -> int:
        in_flight = settle(*args)
        stopped = client.post(f"/api/studies/{study_id}/stop/")  # from another process
        assert stopped.status_code == 200
        return in_flight

    monkeypatch.setattr(studies, "_settle", settle_then_stop)
    studies.study_advance(study_id=study_id)
    assert Study.objects.get(pk=study_id).status == "stopped"
    assert [len(batch) for batch in sent] == [2]  # asked for before the stop: they run


def test_the_periodic_advance_visits_studies_running_or_with_runs_in_flight(
    client: APIClient, advances: list[int]
) -> None:
    ids = [client.post("/api/studies/", body(), format="json").json()["id"] for _ in range(3)]
    running, stopped, finished = ids
    Study.objects.filter(pk=stopped).update(status="stopped")
    Study.objects.filter(pk=finished).update(status="finished")
    Sweep.objects.filter(study__pk=finished).update(status="finished")
    advances.clear()
    tasks.advance_studies()
    assert sorted(advances) == sorted([running, stopped])


def test_one_advance_at_a_time_per_study(
    client: APIClient, sent: list[list[int]], advances: list[int]
) -> None:
    response = client.post("/api/studies/", body(), format="json")
    study_id = response.json()["id"]
    lease = studies._take_lease(study_id)
    assert lease is not None
    assert studies.study_advance(study_id=study_id) is None and sent == []
    advances.clear()
    tasks.advance_study_task(study_id)  # the task sends itself again, for later
    assert advances == [study_id] and sent == []
    studies._release_lease(study_id, lease)
    assert studies.study_advance(study_id=study_id) is not None
    assert [len(batch) for batch in sent] == [2]


def test_a_study_is_the_owners_and_readable_where_its_sweep_is_shared(
    client: APIClient, client_for: Any, other_user: Any, advances: list[int]
) -> None:
    study_id = client.post("/api/studies/", body(), format="json").json()["id"]
    study = Study.objects.get(pk=study_id)
    reader = client_for(other_user)
    for method, path in [
        ("get", f"/api/studies/{study_id}/"),
        ("post", f"/api/studies/{study_id}/stop/"),
        ("post", f"/api/studies/{study_id}/resume/"),
    ]:
        assert getattr(reader, method)(path).status_code == 404
    assert reader.get("/api/studies/").json()["results"] == []
    shared = client.post(
        "/api/shares/", {"sweep": study.sweep_id, "username": other_user.username}, format="json"
    )
    assert shared.status_code == 201, shared.json()
    seen = reader.get(f"/api/studies/{study_id}/").json()
    assert (seen["access"], seen["name"]) == ("shared", "tiny search")
    assert reader.post(f"/api/studies/{study_id}/stop/").status_code == 404


@pytest.mark.parametrize(
    ("change", "field", "message"),
    [
        (
            {"spec": {**body()["spec"], "axes": {"cpu0.nothing": [1.0, 2.0]}}},
            "spec.axes.cpu0.nothing",
            "'Test CPU' (node 'cpu0') has no attribute 'nothing'; it has: speed.",
        ),
        (
            {"spec": {**body()["spec"], "variables": {"steps": []}}},
            "spec.variables.steps",
            None,
        ),
        ({"objectives": [{"metric": "speed"}]}, "objectives[0].metric", "Unknown metric 'speed'"),
        ({"objectives": []}, "objectives", None),
        ({"constraints": ["power < lots"]}, "constraints[0]", None),
        ({"sampler": "cmaes"}, "sampler", None),
        ({"budget": {"runs": 0}}, "budget.runs", "Expected a whole number of runs from 1 to"),
        ({"budget": {"runs": 3, "wall_s": -1}}, "budget.wall_s", None),
        ({"parallel": 7}, "parallel", "from 1 to 6."),
        (
            {"spec": {**body()["spec"], "hardware": {"node": "cpu0", "components": [999999]}}},
            "spec.hardware.components[0]",
            "No component 999999 of type CPU that you can see.",
        ),
        (
            {
                "spec": {
                    **body()["spec"],
                    "axes": {"hardware": [1, 2]},
                    "hardware": {"node": "cpu0", "components": [999999]},
                }
            },
            "spec.hardware",
            studies.STUDY_MESSAGES["hardware"],
        ),
        (
            {"spec": {**body()["spec"], "variables": {"steps": 2, "ops": 1e9}}},
            "spec",
            "A study needs at least one axis with more than one value.",
        ),
    ],
)
def test_a_bad_study_is_refused_naming_the_field_and_stores_nothing(
    client: APIClient,
    advances: list[int],
    change: dict[str, Any],
    field: str,
    message: str | None,
) -> None:
    response = client.post("/api/studies/", body(**change), format="json")
    assert response.status_code == 400
    errors = response.json()
    assert list(errors) == [field], errors
    if message is not None:
        assert message in errors[field][0]
    assert (Study.objects.count(), Sweep.objects.count(), advances) == (0, 0, [])


def test_a_count_axis_beyond_the_labels_node_is_refused_at_launch(
    client: APIClient, advances: list[int]
) -> None:
    spec = {**body()["spec"], "axes": {"labels.GPU": [1, 2]}}
    response = client.post("/api/studies/", body(spec=spec), format="json")
    assert response.status_code == 400
    assert list(response.json()) == ["spec.axes.labels.GPU"]
