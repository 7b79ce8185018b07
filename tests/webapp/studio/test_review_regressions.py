"""Regression tests of defects found in review: 500s on odd input, CSV injection, progress,
and runs left "running" when their outcome could not be stored."""

from __future__ import annotations

import csv
import io
import json
from typing import Any

import pytest
from rest_framework.test import APIClient

import simulator.sandbox
from tests.hwdb.factories import AttributeFactory, ComponentFactory
from tests.webapp.studio.factories import (
    TINY_APP,
    ApplicationModelFactory,
    SimulationFactory,
    tiny_snapshot,
)
from webapp.studio import services
from webapp.studio.models import Simulation, SimulationStatus, Sweep
from webapp.studio.validation import MESSAGES

pytestmark = pytest.mark.django_db


def launch_body(**overrides: Any) -> dict[str, Any]:
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


def test_an_int_beyond_the_float_range_for_a_float_variable_is_a_400(
    client: APIClient, user: Any, sent: list[list[int]]
) -> None:
    application = ApplicationModelFactory(owner=user)
    body = json.dumps(launch_body(app_source=None, application=application.pk, variables={}))
    raw = body.replace('"variables": {}', '"variables": {"ops": 1' + "0" * 400 + "}")
    response = post_raw(client, "/api/simulations/", raw)
    assert response.status_code == 400
    assert list(response.json()) == ["variables.ops"]
    assert counts() == (0, 0)


def test_a_float_default_beyond_the_float_range_is_a_400(client: APIClient) -> None:
    raw = json.dumps(
        {"name": "x", "source": TINY_APP, "variables": [{"name": "x", "type": "float"}]}
    ).replace('"type": "float"', '"type": "float", "default": 1' + "0" * 400)
    response = post_raw(client, "/api/applications/", raw)
    assert response.status_code == 400
    assert list(response.json()) == ["variables[0].default"]


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
    spec = launch_body(variables={"steps": 1, "ops": axis})
    response = client.post("/api/sweeps/", {"spec": spec}, format="json")
    assert response.status_code == 400
    message = response.json()["spec"][0]
    assert message.startswith("The sweep has ") and message.endswith("at most 1000 are allowed.")
    assert counts() == (0, 0)


@pytest.mark.parametrize("node", [["cpu0"], {"id": "cpu0"}, 1])
def test_a_hardware_node_that_is_not_a_string_is_a_400(
    client: APIClient, sent: list[list[int]], node: object
) -> None:
    spec = launch_body(hardware={"node": node, "components": [1]})
    response = client.post("/api/sweeps/", {"spec": spec}, format="json")
    assert response.status_code == 400
    assert list(response.json()) == ["spec.hardware.node"]
    assert counts() == (0, 0)


@pytest.mark.parametrize("sweep", ["%C2%B2", "99999999999999999999999", "-1"])
def test_a_sweep_filter_that_is_no_id_is_a_400(client: APIClient, sweep: str) -> None:
    response = client.get(f"/api/simulations/?sweep={sweep}")
    assert response.status_code == 400
    assert list(response.json()) == ["sweep"]


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
    response = client.post("/api/simulations/", launch_body(**{field: value}), format="json")
    assert response.status_code == 400
    body = response.json()
    assert where in body, body
    assert counts() == (0, 0)


def test_nul_characters_in_a_snapshot_are_a_400_naming_the_place(
    client: APIClient, sent: list[list[int]]
) -> None:
    snapshot = tiny_snapshot()
    snapshot["name"] = "tiny\x00"
    response = client.post("/api/simulations/", launch_body(snapshot=snapshot), format="json")
    assert response.status_code == 400
    assert response.json() == {"snapshot.name": [MESSAGES["nul"]]}
    assert counts() == (0, 0)


def test_nul_characters_anywhere_in_a_sweep_spec_store_nothing(
    client: APIClient, sent: list[list[int]]
) -> None:
    spec = launch_body(variables={"steps": 1, "ops": 1.0, "s": ["a", "b\x00"]})
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
    spec = launch_body(
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


def test_progress_never_decreases_and_ignores_non_finite_fractions(user: Any) -> None:
    simulation = SimulationFactory(owner=user, status=SimulationStatus.RUNNING)
    record = services.progress_recorder(simulation, every_s=0)
    seen = []
    for fraction in [0.5, 0.2, float("nan"), float("inf"), 1.7, -3.0]:
        record(fraction)
        simulation.refresh_from_db()
        seen.append(simulation.progress)
    assert seen == [0.5, 0.5, 0.5, 0.5, 1.0, 1.0]


@pytest.mark.django_db(transaction=True)
def test_a_result_that_cannot_be_stored_fails_the_run_with_the_reason(
    user: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    simulation = SimulationFactory(owner=user)
    monkeypatch.setattr(
        simulator.sandbox,
        "run_sandboxed",
        lambda *args, **kwargs: {"overall_time_s": 1.0, "unstorable": object()},
    )
    services.simulation_run(
        simulation_id=simulation.pk, task_id=simulation.celery_task_id, worker="w"
    )
    simulation.refresh_from_db()
    assert simulation.status == SimulationStatus.FAILED
    assert simulation.error["kind"] == "internal"
    assert "not JSON serializable" in simulation.error["message"]


def test_a_user_error_message_with_a_nul_character_is_stored(user: Any) -> None:
    simulation = SimulationFactory(
        owner=user, app_source="raise ValueError('a\\x00b')\n", variables={}
    )
    services.simulation_run(
        simulation_id=simulation.pk, task_id=simulation.celery_task_id, worker="w"
    )
    simulation.refresh_from_db()
    assert simulation.status == SimulationStatus.FAILED
    assert "\x00" not in json.dumps(simulation.error, ensure_ascii=False)
    assert "a\ufffdb" in simulation.error["message"]
