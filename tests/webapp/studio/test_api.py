"""Tests of the studio REST API: application models, launches, runs, sweeps, queues."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path
from typing import Any

import pytest
from django.core.cache import cache
from django.db import connection, transaction
from rest_framework.test import APIClient
from rest_framework.throttling import ScopedRateThrottle

from hwdb.api.pagination import MAX_PAGE_SIZE
from hwdb.selectors import can_change
from simulator.results import MEMORY_COLUMNS
from tests.hwdb.factories import AttributeFactory, ComponentFactory, UserFactory
from tests.webapp.studio.factories import (
    TINY_APP,
    TINY_VARIABLES,
    ApplicationModelFactory,
    SimulationFactory,
    tiny_snapshot,
)
from webapp.studio import selectors, tasks
from webapp.studio.models import Simulation, SimulationStatus, Sweep
from webapp.studio.services.common import MESSAGES as SERVICE_MESSAGES
from webapp.studio.validation import MESSAGES

pytestmark = pytest.mark.django_db

M2S_CGM = Path(__file__).resolve().parents[3] / "examples" / "m2s_cgm_memory"


def launch_body(**overrides: Any) -> dict[str, Any]:
    body: dict[str, Any] = {
        "name": "tiny run",
        "snapshot": tiny_snapshot(),
        "app_source": TINY_APP,
        "variables": {"steps": 2, "ops": 1e9},
        "labels": {"CPU": 2},
        "queue": "gajgerqueue",
    }
    body.update(overrides)
    return {key: value for key, value in body.items() if value is not None}


def small_launch_body(**overrides: Any) -> dict[str, Any]:
    """Return the smallest launch: one CPU process, one step, no name or queue."""
    body: dict[str, Any] = {
        "snapshot": tiny_snapshot(),
        "app_source": TINY_APP,
        "variables": {"steps": 1, "ops": 1.0},
        "labels": {"CPU": 1},
    }
    body.update(overrides)
    return {key: value for key, value in body.items() if value is not None}


def post_raw(client: APIClient, url: str, raw: str) -> Any:
    return client.post(url, raw, content_type="application/json")


def counts() -> tuple[int, int]:
    return Simulation.objects.count(), Sweep.objects.count()


def test_a_user_creates_and_lists_an_application_model(client: APIClient) -> None:
    response = client.post(
        "/api/applications/",
        {"name": "Listing 5", "source": TINY_APP, "variables": TINY_VARIABLES},
        format="json",
    )
    assert response.status_code == 201, response.json()
    assert response.json()["variables"] == TINY_VARIABLES
    listed = client.get("/api/applications/").json()
    assert [a["name"] for a in listed["results"]] == ["Listing 5"]


def test_an_application_that_does_not_compile_is_refused_at_save_with_its_line(
    client: APIClient,
) -> None:
    body = {"name": "broken", "source": "n = 1\nif n\n    n = 2\n", "variables": []}
    response = client.post("/api/applications/", body, format="json")
    assert response.status_code == 400
    assert response.json() == {"source": ["Line 2: SyntaxError: expected ':'"]}
    created = client.post("/api/applications/", {**body, "source": TINY_APP}, format="json")
    application = created.json()["id"]
    edit = client.patch(f"/api/applications/{application}/", {"source": "_x = 1"}, format="json")
    assert edit.status_code == 400
    assert edit.json()["source"][0].startswith("Line 1: ")
    assert client.get(f"/api/applications/{application}/").json()["source"] == TINY_APP


def test_a_bad_variable_declaration_is_a_400_naming_the_entry(client: APIClient) -> None:
    response = client.post(
        "/api/applications/",
        {
            "name": "x",
            "source": TINY_APP,
            "variables": [{"name": "n", "type": "int", "default": "a"}],
        },
        format="json",
    )
    assert response.status_code == 400
    assert response.json() == {"variables[0].default": ["Expected a whole number (int), got 'a'."]}


def test_a_float_default_beyond_the_float_range_is_a_400(client: APIClient) -> None:
    raw = json.dumps(
        {"name": "x", "source": TINY_APP, "variables": [{"name": "x", "type": "float"}]}
    ).replace('"type": "float"', '"type": "float", "default": 1' + "0" * 400)
    response = post_raw(client, "/api/applications/", raw)
    assert response.status_code == 400
    assert list(response.json()) == ["variables[0].default"]


def test_an_application_model_gets_every_error_of_every_field_at_once(
    client: APIClient,
) -> None:
    body = {
        "name": "",
        "source": "_a = 1\nb = 2\nc = _b\n",
        "variables": [
            {"name": "tag", "type": "int", "default": 1},
            {"name": "x", "type": "float", "default": "1e400"},
        ],
    }
    response = client.post("/api/applications/", body, format="json")
    assert response.status_code == 400
    errors = response.json()
    assert set(errors) == {"name", "source", "variables[0].name", "variables[1].default"}
    assert [message.split(":")[0] for message in errors["source"]] == ["Line 1", "Line 3"]
    assert errors["variables[1].default"] == ["x: 1e400 is out of range (not a finite number)."]


def test_only_the_owner_changes_a_shared_application_model(
    client: APIClient, other_user: Any
) -> None:
    application = ApplicationModelFactory(owner=other_user, shared=True)
    assert client.get(f"/api/applications/{application.pk}/").status_code == 200
    response = client.patch(f"/api/applications/{application.pk}/", {"name": "mine"}, format="json")
    assert response.status_code == 403
    private = ApplicationModelFactory(owner=other_user)
    assert client.get(f"/api/applications/{private.pk}/").status_code == 404


def test_application_models_follow_the_owned_record_rule_of_the_hardware_database(
    client_for: Any, user: Any, other_user: Any
) -> None:
    staff = UserFactory(is_staff=True)
    private = ApplicationModelFactory(owner=other_user)
    response = client_for(user).delete(f"/api/applications/{private.pk}/")
    assert response.status_code == 404
    assert response.json() == {"detail": f"No application model with id '{private.pk}'."}
    shared = ApplicationModelFactory(owner=other_user, shared=True)
    response = client_for(user).delete(f"/api/applications/{shared.pk}/")
    assert (response.status_code, response.json()) == (
        403,
        {"detail": "Only the owner or staff may change this application model."},
    )
    assert can_change(user=staff, record=shared)
    edit = client_for(staff).patch(f"/api/applications/{private.pk}/", {"name": "x"}, "json")
    assert edit.status_code == 200 and edit.json()["name"] == "x"
    assert client_for(staff).delete(f"/api/applications/{shared.pk}/").status_code == 204


def test_a_launch_answers_201_and_queues_the_run(
    client: APIClient, sent: list[list[int]], django_capture_on_commit_callbacks: Any
) -> None:
    with django_capture_on_commit_callbacks(execute=True):
        response = client.post("/api/simulations/", launch_body(), format="json")
    assert response.status_code == 201, response.json()
    body = response.json()
    assert (body["status"], body["queue"], body["progress"]) == ("queued", "gajgerqueue", 0.0)
    assert body["snapshot"] == tiny_snapshot()
    assert sent == [[body["id"]]]


@pytest.mark.parametrize(
    ("overrides", "field"),
    [
        ({"labels": {"CPU": 5}}, "labels.CPU"),
        ({"queue": "elsewhere"}, "queue"),
        ({"variables": {"steps": [1]}}, "variables.steps"),
        ({"snapshot": {"name": "x"}}, "snapshot.hardware"),
        ({"labels": None}, "labels"),
        ({"application": 999999, "app_source": None}, "application"),
        ({"failures": {"mode": "retry"}}, "failures.mode"),
        ({"uncertainty": {"samples": 100_000}}, "uncertainty.samples"),
    ],
)
def test_a_bad_launch_is_a_400_naming_the_field(
    client: APIClient, sent: list[list[int]], overrides: dict[str, Any], field: str
) -> None:
    response = client.post("/api/simulations/", launch_body(**overrides), format="json")
    assert response.status_code == 400
    assert field in response.json()
    assert not Simulation.objects.exists()


def test_a_launch_asks_for_failure_injection_and_shows_it(
    client: APIClient, sent: list[list[int]]
) -> None:
    body = launch_body(failures={"mode": "abort", "samples": 1000})
    response = client.post("/api/simulations/", body, format="json")
    assert response.status_code == 201, response.json()
    expected = {"mode": "abort", "samples": 1000, "restart_s": 0.0}
    assert response.json()["failures"] == expected
    detail = client.get(f"/api/simulations/{response.json()['id']}/").json()
    assert detail["failures"] == expected


def test_a_launch_asks_for_a_prediction_interval_and_shows_it(
    client: APIClient, sent: list[list[int]]
) -> None:
    response = client.post(
        "/api/simulations/", launch_body(uncertainty={"samples": 50, "seed": 3}), format="json"
    )
    assert response.status_code == 201, response.json()
    expected = {"samples": 50, "seed": 3, "scale": 1.0}
    assert response.json()["uncertainty"] == expected
    detail = client.get(f"/api/simulations/{response.json()['id']}/").json()
    assert detail["uncertainty"] == expected


def test_a_launch_asks_for_a_longer_timeline_within_the_servers_maximum(
    client: APIClient, sent: list[list[int]], settings: Any
) -> None:
    settings.PARASIM_MAX_TIMELINE_LIMIT = 40_000
    response = client.post("/api/simulations/", launch_body(timeline_limit=40_000), format="json")
    assert response.status_code == 201, response.json()
    assert response.json()["timeline_limit"] == 40_000
    above = client.post("/api/simulations/", launch_body(timeline_limit=40_001), format="json")
    assert above.status_code == 400
    assert above.json() == {
        "timeline_limit": [SERVICE_MESSAGES["timeline_limit"].format(limit=40_000)]
    }
    not_a_number = client.post("/api/simulations/", launch_body(timeline_limit="x"), format="json")
    assert not_a_number.status_code == 400
    assert list(not_a_number.json()) == ["timeline_limit"]
    assert Simulation.objects.count() == 1


def test_an_int_beyond_the_float_range_for_a_float_variable_is_a_400(
    client: APIClient, user: Any, sent: list[list[int]]
) -> None:
    application = ApplicationModelFactory(owner=user)
    body = json.dumps(small_launch_body(app_source=None, application=application.pk, variables={}))
    raw = body.replace('"variables": {}', '"variables": {"ops": 1' + "0" * 400 + "}")
    response = post_raw(client, "/api/simulations/", raw)
    assert response.status_code == 400
    assert list(response.json()) == ["variables.ops"]
    assert counts() == (0, 0)


@pytest.mark.parametrize(
    ("field", "value", "where"),
    [
        ("variables", {"steps": 1, "ops": 1.0, "s": "a\x00b"}, "variables.s"),
        ("labels", {"CPU\x00": 1}, "labels"),
        ("name", "a\x00b", "name"),
    ],
)
def test_nul_characters_in_a_launch_are_a_400_naming_the_field(
    client: APIClient, sent: list[list[int]], field: str, value: object, where: str
) -> None:
    response = client.post("/api/simulations/", small_launch_body(**{field: value}), format="json")
    assert response.status_code == 400
    body = response.json()
    assert where in body, body
    assert counts() == (0, 0)


def test_nul_characters_in_a_snapshot_are_a_400_naming_the_place(
    client: APIClient, sent: list[list[int]]
) -> None:
    snapshot = tiny_snapshot()
    snapshot["name"] = "tiny\x00"
    response = client.post("/api/simulations/", small_launch_body(snapshot=snapshot), format="json")
    assert response.status_code == 400
    assert response.json() == {"snapshot.name": [MESSAGES["nul"]]}
    assert counts() == (0, 0)


def test_runs_are_listed_and_filtered_by_status_queue_and_sweep(
    client: APIClient, user: Any, other_user: Any
) -> None:
    done = SimulationFactory(owner=user, status=SimulationStatus.SUCCEEDED)
    queued = SimulationFactory(owner=user, queue="gajgerqueue")
    SimulationFactory(owner=other_user)
    ids = lambda r: [s["id"] for s in r.json()["results"]]  # noqa: E731
    assert sorted(ids(client.get("/api/simulations/"))) == sorted([done.pk, queued.pk])
    assert ids(client.get("/api/simulations/?status=succeeded")) == [done.pk]
    assert ids(client.get("/api/simulations/?queue=gajgerqueue")) == [queued.pk]
    assert ids(client.get("/api/simulations/?sweep=123")) == []
    response = client.get("/api/simulations/?status=lost")
    assert response.status_code == 400 and "status" in response.json()


@pytest.mark.parametrize("sweep", ["%C2%B2", "99999999999999999999999", "-1"])
def test_a_sweep_filter_that_is_no_id_is_a_400(client: APIClient, sweep: str) -> None:
    response = client.get(f"/api/simulations/?sweep={sweep}")
    assert response.status_code == 400
    assert list(response.json()) == ["sweep"]


# Committed for real, each write in its own transaction, as in a deployment: on PostgreSQL the
# pages are then kept in the cache (`selectors.simulation_list_version`).
@pytest.mark.django_db(transaction=True)
def test_the_runs_list_shows_every_write_at_once_though_its_pages_are_kept(
    client: APIClient, user: Any, other_user: Any
) -> None:
    ahead = SimulationFactory(owner=other_user)  # launched first, in the same queue
    sweep = Sweep.objects.create(owner=user, name="before", spec={})
    mine = SimulationFactory(owner=user, sweep=sweep)
    done = SimulationFactory(owner=user, status=SimulationStatus.SUCCEEDED)

    def listed() -> dict[int, tuple[Any, ...]]:
        rows = client.get("/api/simulations/").json()["results"]
        fields = ("progress", "queue_position", "sweep_name", "status")
        return {row["id"]: tuple(row[field] for field in fields) for row in rows}

    assert listed() == {
        mine.pk: (0.0, 2, "before", "queued"),
        done.pk: (0.0, None, None, "succeeded"),
    }
    # writes that go around `save`, as a worker's progress and the services' updates do
    Simulation.objects.filter(pk=done.pk).update(progress=0.5)
    assert listed()[done.pk][0] == 0.5
    Sweep.objects.filter(pk=sweep.pk).update(name="after")
    assert listed()[mine.pk][2] == "after"
    # another user's run ahead starts: only the place of mine moves
    Simulation.objects.filter(pk=ahead.pk).update(status=SimulationStatus.RUNNING)
    assert listed()[mine.pk][1] == 1
    Simulation.objects.filter(pk=mine.pk).update(status=SimulationStatus.RUNNING)
    assert listed()[mine.pk][1:] == (None, "after", "running")
    Simulation.objects.filter(pk=done.pk).delete()
    assert list(listed()) == [mine.pk]


@pytest.mark.django_db(transaction=True)
def test_the_runs_list_version_moves_with_each_write_of_the_users_runs_only(
    user: Any, other_user: Any
) -> None:
    version = selectors.simulation_list_version
    if connection.vendor != "postgresql":
        assert version(user=user) is None  # read where it is cheap only
        return
    with transaction.atomic():
        assert version(user=user) is None  # a transaction's own writes share one id
    run = SimulationFactory(owner=user)
    seen = [version(user=user)]
    Simulation.objects.filter(pk=run.pk).update(heartbeat=run.created)
    seen.append(version(user=user))
    SimulationFactory(owner=other_user)
    assert version(user=user) == seen[-1]  # not theirs: their list is the same
    Sweep.objects.create(owner=user, name="s", spec={})
    seen.append(version(user=user))
    Simulation.objects.filter(pk=run.pk).delete()
    seen.append(version(user=user))
    assert len(set(seen)) == len(seen)
    staff = UserFactory(is_staff=True)
    everyone = version(user=staff)
    SimulationFactory(owner=other_user)
    assert version(user=staff) != everyone


def test_the_runs_list_pages_at_the_size_asked_up_to_the_server_maximum(
    client: APIClient, user: Any
) -> None:
    runs = SimulationFactory.create_batch(7, owner=user)
    newest_first = [run.pk for run in reversed(runs)]
    body = client.get("/api/simulations/?page_size=3&page=3").json()
    assert body["count"] == 7 and body["next"] is None and body["previous"]
    assert [run["id"] for run in body["results"]] == newest_first[6:]
    body = client.get("/api/simulations/?page_size=3").json()
    assert [run["id"] for run in body["results"]] == newest_first[:3]
    assert "page=2" in body["next"]
    assert (
        len(client.get(f"/api/simulations/?page_size={MAX_PAGE_SIZE + 50}").json()["results"]) == 7
    )
    assert client.get("/api/simulations/?page=9").status_code == 404


def test_the_runs_list_filters_searches_and_groups_through_its_query_parameters(
    client: APIClient, user: Any
) -> None:
    application = ApplicationModelFactory(owner=user, name="saxpy2")
    sweep = Sweep.objects.create(owner=user, name="intensity", spec={}, aggregate={"total": 2})
    points = SimulationFactory.create_batch(2, owner=user, sweep=sweep, application=application)
    alone = SimulationFactory(owner=user, name="alone", status=SimulationStatus.SUCCEEDED)

    def listed(query: str) -> list[int]:
        response = client.get(f"/api/simulations/?{query}")
        return [run["id"] for run in response.json()["results"]]

    assert listed(f"application={application.pk}") == [points[1].pk, points[0].pk]
    assert listed("search=SAXPY&status=queued") == [points[1].pk, points[0].pk]
    assert listed("group_sweeps=true") == [alone.pk, points[0].pk]
    assert listed("sweep=none&launched_after=2000-01-01") == [alone.pk]
    row = client.get("/api/simulations/?group_sweeps=true").json()["results"][1]
    assert (row["sweep_name"], row["sweep_size"], row["application_name"]) == (
        "intensity",
        2,
        "saxpy2",
    )
    assert (row["queue_position"], row["system_name"]) == (1, None)
    response = client.get("/api/simulations/?launched_before=soon")
    assert response.status_code == 400
    assert response.json() == {
        "launched_before": [selectors.FILTER_MESSAGES["date"].format(value="soon")]
    }


def test_the_openapi_schema_documents_the_runs_list_parameters(client: APIClient) -> None:
    response = client.get("/api/schema/?format=json")
    operation = response.json()["paths"]["/api/simulations/"]["get"]
    documented = {parameter["name"] for parameter in operation["parameters"]}
    assert documented >= {"page", "page_size", *selectors.SIMULATION_FILTERS}


def test_a_queued_run_shows_its_queue_position_and_a_running_one_the_time_reached(
    client: APIClient, user: Any
) -> None:
    SimulationFactory(owner=user)
    queued = SimulationFactory(owner=user)
    running = SimulationFactory(
        owner=user, status=SimulationStatus.RUNNING, progress=0.0, simulated_time_s=0.25
    )
    assert client.get(f"/api/simulations/{queued.pk}/").json()["queue_position"] == 2
    body = client.get(f"/api/simulations/{running.pk}/").json()
    assert (body["queue_position"], body["simulated_time_s"]) == (None, 0.25)


def test_the_detail_shows_live_progress_and_others_runs_are_404(
    client: APIClient, user: Any, other_user: Any
) -> None:
    running = SimulationFactory(owner=user, status=SimulationStatus.RUNNING, progress=0.4)
    body = client.get(f"/api/simulations/{running.pk}/").json()
    assert (body["status"], body["progress"]) == ("running", 0.4)
    assert (
        client.get(f"/api/simulations/{SimulationFactory(owner=other_user).pk}/").status_code == 404
    )


def test_cancel_marks_the_run_cancelled_and_a_second_cancel_is_a_400(
    client: APIClient,
    user: Any,
    revoked: list[tuple[str, bool]],
    django_capture_on_commit_callbacks: Any,
) -> None:
    simulation = SimulationFactory(owner=user)
    with django_capture_on_commit_callbacks(execute=True):
        response = client.post(f"/api/simulations/{simulation.pk}/cancel/")
    assert response.status_code == 200
    assert response.json()["status"] == "cancelled"
    assert revoked == [(simulation.celery_task_id, False)]
    again = client.post(f"/api/simulations/{simulation.pk}/cancel/")
    assert again.status_code == 400 and "status" in again.json()


def test_the_result_downloads_as_json_once_the_run_succeeded(client: APIClient, user: Any) -> None:
    queued = SimulationFactory(owner=user)
    assert client.get(f"/api/simulations/{queued.pk}/result.json").status_code == 409
    result = {"status": "finished", "overall_time_s": 2.0}
    done = SimulationFactory(owner=user, status=SimulationStatus.SUCCEEDED, result=result)
    response = client.get(f"/api/simulations/{done.pk}/result.json")
    assert response.status_code == 200
    assert json.loads(response.content) == result
    assert "attachment" in response["Content-Disposition"]


def memory_csv(client: APIClient, simulation: int) -> list[dict[str, str]]:
    response = client.get(f"/api/simulations/{simulation}/memory.csv")
    assert response.status_code == 200, response.content
    assert response["Content-Type"] == "text/csv"
    assert f'filename="simulation-{simulation}-memory.csv"' in response["Content-Disposition"]
    text = response.content.decode()
    assert text.splitlines()[0] == ",".join(MEMORY_COLUMNS)
    return list(csv.DictReader(io.StringIO(text)))


def test_the_memory_figures_of_a_run_download_as_csv(
    client: APIClient, sent: list[list[int]], django_capture_on_commit_callbacks: Any
) -> None:
    body = launch_body(
        name="M2S-CGM collaborative",
        snapshot=json.loads((M2S_CGM / "snapshot.json").read_text(encoding="utf-8")),
        app_source=(M2S_CGM / "app.py").read_text(encoding="utf-8"),
        variables={"workload": "collaborative", "size_kb": 256, "rounds": 1, "flush": 0},
        labels={"CPU": 8, "GPU": 1},
    )
    with django_capture_on_commit_callbacks(execute=True):
        launched = client.post("/api/simulations/", body, format="json")
    assert launched.status_code == 201, launched.json()
    simulation = Simulation.objects.get(pk=launched.json()["id"])
    assert launched.json()["memory_csv_url"] == f"/api/simulations/{simulation.pk}/memory.csv"
    queued = client.get(f"/api/simulations/{simulation.pk}/memory.csv")
    assert queued.status_code == 409  # as result.json while there is no result
    assert queued.json() == {
        "detail": f"Simulation {simulation.pk} has no result: it is queued.",
        "error": None,
    }

    tasks.run_simulation.apply(args=(simulation.pk,), task_id=simulation.celery_task_id)
    simulation.refresh_from_db()
    assert simulation.status == SimulationStatus.SUCCEEDED, simulation.error
    rows = memory_csv(client, simulation.pk)
    memory = simulation.result["memory"]
    levels = [row for row in rows if row["type"] in ("CACHE", "MEMORY")]
    assert len(levels) == len(memory["levels"]) == 28
    llc = next(row for row in levels if row["node"] == "llc")
    assert (llc["name"], llc["instance"], llc["hit_ratio"]) == ("Shared L3", "0", "0.5")
    assert next(row for row in levels if row["node"] == "dram")["hit_ratio"] == ""
    (ring,) = (row for row in rows if row["type"] == "FABRIC")
    assert (ring["name"], ring["messages"]) == ("Ring", str(memory["fabrics"][0]["messages"]))
    messages = {row["name"]: int(row["messages"]) for row in rows if row["type"] == "COHERENCE"}
    assert messages == memory["coherence"]["messages"]
    assert messages["GetX"] > 0
    assert {row["hardware"] for row in rows if row["type"] == "COHERENCE"} == {"mesi"}


def test_a_run_without_a_memory_hierarchy_has_a_header_only_memory_csv(
    client: APIClient, user: Any
) -> None:
    result = {"status": "finished", "overall_time_s": 2.0}
    done = SimulationFactory(owner=user, status=SimulationStatus.SUCCEEDED, result=result)
    assert memory_csv(client, done.pk) == []


def test_the_memory_csv_is_409_for_a_failed_run_and_404_for_others_runs(
    client: APIClient, user: Any, other_user: Any
) -> None:
    failed = SimulationFactory(owner=user, status=SimulationStatus.FAILED)
    response = client.get(f"/api/simulations/{failed.pk}/memory.csv")
    assert response.status_code == 409
    assert response.json()["detail"] == f"Simulation {failed.pk} has no result: it is failed."
    result = {"status": "finished", "memory": {"levels": [], "fabrics": []}}
    theirs = SimulationFactory(owner=other_user, status=SimulationStatus.SUCCEEDED, result=result)
    assert client.get(f"/api/simulations/{theirs.pk}/memory.csv").status_code == 404


def test_memory_csv_cells_a_spreadsheet_would_run_are_quoted(client: APIClient, user: Any) -> None:
    level = {"node": "l1", "name": "=HYPERLINK(1)", "type": "CACHE", "instance": 0, "accesses": 4}
    result = {"status": "finished", "memory": {"levels": [level], "fabrics": []}}
    done = SimulationFactory(owner=user, status=SimulationStatus.SUCCEEDED, result=result)
    (row,) = memory_csv(client, done.pk)
    assert (row["name"], row["accesses"]) == ("'=HYPERLINK(1)", "4")


def test_a_sweep_is_created_and_its_table_downloads_as_csv(
    client: APIClient, sent: list[list[int]]
) -> None:
    spec = {
        "snapshot": tiny_snapshot(),
        "app_source": TINY_APP,
        "labels": {"CPU": 1},
        "variables": {"steps": {"start": 1, "stop": 3, "step": 1}},
    }
    response = client.post("/api/sweeps/", {"name": "steps", "spec": spec}, format="json")
    assert response.status_code == 201, response.json()
    sweep = response.json()
    assert len(sweep["points"]) == 3 and sweep["aggregate"]["total"] == 3
    table = client.get(f"/api/sweeps/{sweep['id']}/results.csv")
    assert table["Content-Type"] == "text/csv"
    rows = list(csv.DictReader(io.StringIO(table.content.decode())))
    assert [row["steps"] for row in rows] == ["1", "2", "3"]
    assert {row["status"] for row in rows} == {"queued"}
    children = client.get(f"/api/simulations/?sweep={sweep['id']}").json()
    assert children["count"] == 3


def test_an_over_large_sweep_is_a_400_with_its_size_and_the_limit(
    client: APIClient, settings: Any
) -> None:
    settings.PARASIM_MAX_SWEEP = 5
    spec = {
        "snapshot": tiny_snapshot(),
        "app_source": TINY_APP,
        "labels": {"CPU": 1},
        "variables": {"steps": [1, 2, 3], "ops": [1.0, 2.0]},
    }
    response = client.post("/api/sweeps/", {"spec": spec}, format="json")
    assert response.status_code == 400
    assert response.json() == {"spec": ["The sweep has 6 points; at most 5 are allowed."]}


@pytest.mark.parametrize(
    "axis",
    [
        {"start": 0, "stop": 1e308, "step": 1e-308},
        {"start": -1e308, "stop": 1e308, "step": 1.0},
        {"start": 0, "stop": 10**400, "step": 1},
    ],
)
def test_a_range_beyond_the_float_range_is_refused_with_its_size(
    client: APIClient, sent: list[list[int]], axis: dict[str, Any]
) -> None:
    spec = small_launch_body(variables={"steps": 1, "ops": axis})
    response = client.post("/api/sweeps/", {"spec": spec}, format="json")
    assert response.status_code == 400
    message = response.json()["spec"][0]
    assert message.startswith("The sweep has ") and message.endswith("at most 1000 are allowed.")
    assert counts() == (0, 0)


@pytest.mark.parametrize("node", [["cpu0"], {"id": "cpu0"}, 1])
def test_a_hardware_node_that_is_not_a_string_is_a_400(
    client: APIClient, sent: list[list[int]], node: object
) -> None:
    spec = small_launch_body(hardware={"node": node, "components": [1]})
    response = client.post("/api/sweeps/", {"spec": spec}, format="json")
    assert response.status_code == 400
    assert list(response.json()) == ["spec.hardware.node"]
    assert counts() == (0, 0)


def test_nul_characters_anywhere_in_a_sweep_spec_store_nothing(
    client: APIClient, sent: list[list[int]]
) -> None:
    spec = small_launch_body(variables={"steps": 1, "ops": 1.0, "s": ["a", "b\x00"]})
    response = client.post("/api/sweeps/", {"spec": spec}, format="json")
    assert response.status_code == 400
    assert response.json() == {"spec.variables.s[1]": [MESSAGES["nul"]]}
    assert counts() == (0, 0)
    assert sent == []


def test_the_sweep_csv_defuses_cells_a_spreadsheet_would_run_as_formulas(
    client: APIClient, user: Any, sent: list[list[int]]
) -> None:
    evil = ComponentFactory(owner=user, type="CPU", name='=HYPERLINK("http://x")')
    AttributeFactory(component=evil, key="speed", value=1e9)
    spec = small_launch_body(
        variables={"steps": 1, "ops": -1.0, "tag": ["=1+2", "@SUM(A1)", "-2+3", "+cmd", "ok"]},
        hardware={"node": "cpu0", "components": [evil.pk]},
    )
    created = client.post("/api/sweeps/", {"spec": spec}, format="json")
    assert created.status_code == 201, created.json()
    text = client.get(f"/api/sweeps/{created.json()['id']}/results.csv").content.decode()
    rows = list(csv.DictReader(io.StringIO(text)))
    assert [row["tag"] for row in rows] == ["'=1+2", "'@SUM(A1)", "'-2+3", "'+cmd", "ok"]
    assert {row["hardware"] for row in rows} == {'\'=HYPERLINK("http://x")'}
    assert {row["ops"] for row in rows} == {"-1.0"}  # numbers stay numbers


def test_the_queue_list_shows_configured_queues_with_their_workers(
    client: APIClient, monkeypatch: pytest.MonkeyPatch
) -> None:
    class Inspect:
        def active_queues(self) -> dict[str, list[dict[str, str]]]:
            return {
                "w1@a": [{"name": "default"}],
                "w2@b": [{"name": "default"}, {"name": "gajgerqueue"}],
            }

    monkeypatch.setattr("webapp.celery.app.control.inspect", lambda timeout: Inspect())
    body = client.get("/api/queues/").json()
    assert [(q["name"], q["workers"]) for q in body] == [
        ("default", ["w1@a", "w2@b"]),
        ("batch", []),
        ("gajgerqueue", ["w2@b"]),
    ]


def test_the_queue_list_shows_each_queues_default_and_maximum_limits(
    client: APIClient, settings: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("webapp.celery.app.control.inspect", lambda timeout: None)
    settings.PARASIM_QUEUE_LIMITS = {
        **settings.PARASIM_QUEUE_LIMITS,
        "default": {"time_limit_s": [3, 10], "cpu_limit_s": [6, 20]},
    }
    body = {q["name"]: q["limits"] for q in client.get("/api/queues/").json()}
    assert body["default"] == {
        "time_limit_s": {"default": 3, "max": 10},
        "cpu_limit_s": {"default": 6, "max": 20},
    }
    assert body["batch"] == {
        "time_limit_s": {"default": 300, "max": 600},
        "cpu_limit_s": {"default": 600, "max": 1200},
    }


def test_a_launch_over_rest_takes_its_limits_and_refuses_one_above_the_maximum(
    client: APIClient, sent: list[list[int]]
) -> None:
    response = client.post(
        "/api/simulations/", launch_body(time_limit_s=9, cpu_limit_s=12), format="json"
    )
    assert response.status_code == 201, response.json()
    assert (response.json()["time_limit_s"], response.json()["cpu_limit_s"]) == (9, 12)
    refused = client.post("/api/simulations/", launch_body(cpu_limit_s=241), format="json")
    assert refused.status_code == 400
    assert list(refused.json()) == ["cpu_limit_s"]
    assert "cpu_limit_s (CPU time)" in refused.json()["cpu_limit_s"][0]
    assert "from 1 to 240" in refused.json()["cpu_limit_s"][0]


def test_the_queue_list_tolerates_an_unreachable_broker(monkeypatch: pytest.MonkeyPatch) -> None:
    def broken(timeout: float) -> Any:
        raise ConnectionError("no broker")

    def broadcast(*arguments: Any, **options: Any) -> Any:
        raise ConnectionError("no broker")

    monkeypatch.setattr("webapp.celery.app.control.inspect", broken)
    monkeypatch.setattr("webapp.celery.app.control.broadcast", broadcast)
    assert [q["workers"] for q in selectors.queue_list()] == [[], [], []]
    assert selectors.alive_workers() is None


def test_the_live_workers_are_named_with_their_lives(monkeypatch: pytest.MonkeyPatch) -> None:
    from webapp.studio.worker_life import LIFE, LIFE_COMMAND, parasim_life

    asked: list[str] = []

    def broadcast(command: str, **options: Any) -> Any:
        asked.append(command)
        # a worker of this version, and one that does not know the command
        return [{"w1@a": parasim_life(None)}, {"w2@b": {"error": "KeyError('parasim_life')"}}]

    monkeypatch.setattr("webapp.celery.app.control.broadcast", broadcast)
    assert selectors.alive_workers() == {"w1@a": LIFE, "w2@b": ""}
    assert asked == [LIFE_COMMAND]


def test_launches_are_rate_limited_per_user(
    client: APIClient, sent: list[list[int]], monkeypatch: pytest.MonkeyPatch
) -> None:
    cache.clear()
    monkeypatch.setattr(ScopedRateThrottle, "THROTTLE_RATES", {"launch": "2/min"})
    codes = [
        client.post("/api/simulations/", launch_body(), format="json").status_code for _ in range(3)
    ]
    assert codes == [201, 201, 429]
    refused = client.post("/api/simulations/", launch_body(), format="json")
    detail = refused.json()["detail"]
    assert detail.startswith("Launches are limited to 2 a minute per user (PARASIM_LAUNCH_RATE).")
    assert "Expected available in" in detail and refused["Retry-After"]
    assert client.get("/api/simulations/").status_code == 200
    cache.clear()
