"""The REST endpoints that bench/bench_rest.py loads answer in a fixed number of queries,
however many records a page holds (no query per row), with token authentication as a
client uses it. A change that adds a query per component, attribute, run or owner fails here.
"""

from __future__ import annotations

from typing import Any

import pytest
from django.db import connection
from rest_framework import serializers
from rest_framework.authtoken.models import Token
from rest_framework.test import APIClient

from hwdb.api.serializers import AttributeSerializer
from hwdb.models import Component
from tests.hwdb.factories import (
    AttributeFactory,
    ComputationalModelFactory,
    GpuFactory,
    SystemModelFactory,
    UserFactory,
    one_gpu_graph,
)
from tests.webapp.studio.factories import ApplicationModelFactory, SimulationFactory
from webapp.studio.models import Simulation, SimulationStatus, Sweep

pytestmark = pytest.mark.django_db

# Each request: the token (with its user), then the list's count and its page; the
# component list reads the catalogue's version first.
TOKEN, COUNT, PAGE, VERSION = 1, 1, 1, 1
PLACES = 1  # the queue places of the queued runs on a page, when it has some
# The runs list's version, read where it is cheap (PostgreSQL) to keep its pages in the cache.
RUNS_VERSION = 1 if connection.vendor == "postgresql" else 0


@pytest.fixture
def user() -> Any:
    return UserFactory()


@pytest.fixture
def client(user: Any) -> APIClient:
    """Return a client signed in with an API token, as bench/bench_rest.py's clients are."""
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {Token.objects.create(user=user).key}")
    return client


def gpus(count: int, *, owner: Any, attributes: int) -> list[Component]:
    """Return `count` shared GPUs of `owner` (None: built in), each with `attributes` more."""
    made = []
    for _ in range(count):
        gpu = GpuFactory(owner=owner, shared=True)
        for index in range(attributes):
            AttributeFactory(component=gpu, key=f"extra{index}", value=index, source="x" * 40)
        made.append(gpu)
    return made


@pytest.mark.parametrize("count", [1, 12])
def test_the_gpu_list_takes_the_same_queries_for_one_gpu_as_for_many(
    client: APIClient, user: Any, django_assert_num_queries: Any, count: int
) -> None:
    gpus(count, owner=None, attributes=20)
    gpus(count, owner=user, attributes=3)
    gpus(count, owner=UserFactory(), attributes=3)
    # the catalogue's version; rendered afresh: the attributes of the whole page in one
    # query, as rows; then served from the response cache (restapi.cache)
    with django_assert_num_queries(TOKEN + VERSION + COUNT + PAGE + 1):
        response = client.get("/api/components/?type=GPU")
    assert response.status_code == 200
    assert response.json()["count"] == 3 * count
    with django_assert_num_queries(TOKEN + VERSION):
        again = client.get("/api/components/?type=GPU")
    assert again.json() == response.json()


def test_the_gpu_list_renders_attributes_as_the_field_by_field_serializer_does(
    client: APIClient, user: Any
) -> None:
    class FieldByField(AttributeSerializer):
        class Meta(AttributeSerializer.Meta):
            list_serializer_class = serializers.ListSerializer

    made = gpus(2, owner=user, attributes=2)
    AttributeFactory(component=made[0], key="clock", value=1.5e9, unit="Hz", source="")
    listed = {row["id"]: row for row in client.get("/api/components/?type=GPU").json()["results"]}
    for gpu in made:
        expected = FieldByField(gpu.attributes.all(), many=True).data
        assert listed[gpu.pk]["attributes"] == expected
        detail = client.get(f"/api/components/{gpu.pk}/").json()
        assert detail == listed[gpu.pk]


def test_the_components_export_reads_attributes_in_one_query(
    client: APIClient, django_assert_num_queries: Any
) -> None:
    gpus(5, owner=None, attributes=4)
    with django_assert_num_queries(TOKEN + 2):
        response = client.get("/api/components/export/?type=GPU")
    exported = response.json()["components"]
    assert len(exported) == 5 and all(len(c["attributes"]) == 6 for c in exported)


# Committed for real (transaction=True) in the runs-list tests: on PostgreSQL the list reads
# its version outside a transaction only.
@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize("count", [1, 30])
def test_the_runs_list_takes_the_same_queries_for_one_run_as_for_many(
    client: APIClient, user: Any, django_assert_num_queries: Any, count: int
) -> None:
    SimulationFactory.create_batch(count, owner=user, status=SimulationStatus.SUCCEEDED)
    SimulationFactory.create_batch(count, owner=user)
    with django_assert_num_queries(TOKEN + RUNS_VERSION + COUNT + PAGE + PLACES):
        response = client.get("/api/simulations/")
    assert response.json()["count"] == 2 * count
    assert {run["owner"] for run in response.json()["results"]} == {user.username}
    # the same page again: kept in the cache where a version is read, its places read anew
    again = TOKEN + RUNS_VERSION + PLACES + (0 if RUNS_VERSION else COUNT + PAGE)
    with django_assert_num_queries(again):
        assert client.get("/api/simulations/").json() == response.json()


@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize("count", [1, 20])
def test_the_filtered_grouped_runs_list_joins_names_and_reads_queue_places_in_one_query(
    client: APIClient, user: Any, django_assert_num_queries: Any, count: int
) -> None:
    system = SystemModelFactory(owner=user)
    for index in range(count):
        application = ApplicationModelFactory(owner=user)
        sweep = Sweep.objects.create(owner=user, name=f"sweep {index}", spec={})
        SimulationFactory.create_batch(
            2, owner=user, system_model=system, application=application, sweep=sweep
        )
        SimulationFactory(owner=user, system_model=system, application=application)
    query = f"system_model={system.pk}&search=a&group_sweeps=true&launched_after=2000-01-01"
    with django_assert_num_queries(TOKEN + RUNS_VERSION + COUNT + PAGE + PLACES):
        response = client.get(f"/api/simulations/?{query}")
    body = response.json()
    assert body["count"] == 2 * count
    assert {run["system_name"] for run in body["results"]} == {system.name}
    # every run is queued on one queue: distinct places, the newest last
    places = [run["queue_position"] for run in body["results"]]
    assert places == sorted(places, reverse=True) and places[-1] >= 1
    assert len(set(places)) == len(places) and max(places) <= 3 * count


@pytest.mark.parametrize("path", ["/api/systems/", "/api/models/", "/api/sweeps/"])
def test_other_lists_join_the_owners_instead_of_a_query_each(
    client: APIClient, user: Any, django_assert_num_queries: Any, path: str
) -> None:
    for owner in UserFactory.create_batch(3):
        SystemModelFactory(owner=owner, shared=True)
        ComputationalModelFactory(owner=owner, shared=True)
    for index in range(3):
        Sweep.objects.create(owner=user, name=f"sweep {index}", spec={})
    with django_assert_num_queries(TOKEN + COUNT + PAGE):
        response = client.get(path)
    assert response.json()["count"] >= 3


def test_a_launch_of_a_system_model_takes_a_fixed_number_of_queries(
    client: APIClient,
    user: Any,
    django_assert_num_queries: Any,
    django_capture_on_commit_callbacks: Any,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from celery.app.task import Task

    sent: list[dict[str, Any]] = []
    monkeypatch.setattr(Task, "apply_async", lambda self, *args, **options: sent.append(options))
    gpu = GpuFactory(owner=user)
    model = ComputationalModelFactory(owner=user)
    system = SystemModelFactory(owner=user, graph=one_gpu_graph(gpu.pk, model.pk))
    application = ApplicationModelFactory(owner=user)
    body = {"system_model": system.pk, "application": application.pk, "labels": {"GPU": 1}}
    # token; savepoint; the snapshot's version; system model, its components, their
    # attributes, its models; application; the owner's lock; their runs' counts; insert;
    # release; the run's queue position; after commit: the `sent` mark (its priority comes
    # from the counts).
    with django_assert_num_queries(14), django_capture_on_commit_callbacks(execute=True):
        response = client.post("/api/simulations/", body, format="json")
    assert response.status_code == 201, response.json()
    # Launched again: the snapshot exported and parsed at this version is kept (4 fewer).
    with django_assert_num_queries(10), django_capture_on_commit_callbacks(execute=True):
        again = client.post("/api/simulations/", body, format="json")
    assert again.status_code == 201, again.json()
    first, second = Simulation.objects.order_by("pk")
    assert second.snapshot == first.snapshot
    run = first
    assert run.status == SimulationStatus.QUEUED and run.sent is not None
    assert [options["task_id"] for options in sent] == [run.celery_task_id, second.celery_task_id]
    assert run.snapshot["hardware"][f"hw-{gpu.pk}"]["attributes"] == {
        "SMs": 13.0,
        "SMCoreClock": 1253.0,
    }


# Committed for real: the launch's after-commit step (send or hold) runs before it answers.
@pytest.mark.django_db(transaction=True)
def test_a_launch_answers_what_the_run_s_detail_then_shows_sent_or_held(
    client: APIClient, user: Any, settings: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    from celery.app.task import Task

    monkeypatch.setattr(Task, "apply_async", lambda self, *args, **options: None)
    settings.PARASIM_MAX_RUNNING_PER_USER = 1
    gpu = GpuFactory(owner=user)
    system = SystemModelFactory(owner=user, graph=one_gpu_graph(gpu.pk))
    application = ApplicationModelFactory(owner=user)
    SimulationFactory(owner=UserFactory(), queue="gajgerqueue")  # another user's, ahead
    body = {
        "system_model": system.pk,
        "application": application.pk,
        "labels": {"GPU": 1},
        "queue": "gajgerqueue",
    }
    answers = []
    for _ in range(2):
        answers.append(client.post("/api/simulations/", body, format="json").json())
    # the first fits the cap and is sent, the second is held back
    assert [answer["held"] for answer in answers] == [False, True]
    assert [answer["queue_position"] for answer in answers] == [2, 3]
    for answer in answers:
        assert (answer["system_name"], answer["application_name"], answer["owner"]) == (
            system.name,
            application.name,
            user.username,
        )
        assert client.get(f"/api/simulations/{answer['id']}/").json() == answer
