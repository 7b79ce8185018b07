"""Issue 38 item 14: a run's stored error is bounded whatever produced it, lists carry no
error body (only its kind), and error answers bound the values they echo."""

from __future__ import annotations

import json
from typing import Any

import pytest
from rest_framework.test import APIClient

from simulator.errors import ERROR_LIMIT_ITEMS, MESSAGE_LIMIT_CHARS, MESSAGE_PARTS
from tests.webapp.studio.factories import SimulationFactory, tiny_snapshot
from webapp.studio import tasks
from webapp.studio.models import Simulation, SimulationStatus
from webapp.studio.services import runs

pytestmark = pytest.mark.django_db

HUGE = 3_000_000
# What a bounded error may take as JSON: a few bounded texts and names.
ERROR_BOUND_CHARS = 3 * MESSAGE_LIMIT_CHARS * MESSAGE_PARTS


def test_a_huge_argument_to_a_simulation_call_stores_a_bounded_error_the_list_leaves_out(
    client: APIClient, sent: list[list[int]], django_capture_on_commit_callbacks: Any
) -> None:
    body = {
        "snapshot": tiny_snapshot(),
        "app_source": f"sim.p2pCommunicationSend(1, 'L' * {HUGE})\n",
        "labels": {"CPU": 1},
        "variables": {},
    }
    with django_capture_on_commit_callbacks(execute=True):
        launched = client.post("/api/simulations/", body, format="json")
    assert launched.status_code == 201, launched.json()
    simulation = Simulation.objects.get(pk=launched.json()["id"])
    tasks.run_simulation.apply(args=(simulation.pk,), task_id=simulation.celery_task_id)
    simulation.refresh_from_db()

    assert simulation.status == SimulationStatus.FAILED
    assert simulation.error["kind"] == "user_code"
    assert "sim.p2pCommunicationSend" in simulation.error["message"]
    assert len(json.dumps(simulation.error)) < ERROR_BOUND_CHARS

    listed = client.get("/api/simulations/")
    assert listed.status_code == 200
    (row,) = listed.json()["results"]
    assert "error" not in row
    assert row["error_kind"] == "user_code"
    assert len(listed.content) < MESSAGE_LIMIT_CHARS * MESSAGE_PARTS

    detail = client.get(f"/api/simulations/{simulation.pk}/").json()
    assert detail["error"] == simulation.error
    assert detail["error_kind"] == "user_code"


def test_a_huge_error_of_any_origin_is_stored_bounded(user: Any) -> None:
    simulation = SimulationFactory(owner=user, status=SimulationStatus.RUNNING)

    def runner(payload: dict[str, Any], **options: Any) -> dict[str, Any]:
        raise RuntimeError("engine " + "E" * HUGE)  # an internal error naming a huge text

    runs.simulation_run(
        simulation_id=simulation.pk,
        task_id=simulation.celery_task_id,
        worker="w@host",
        run=runner,
    )
    simulation.refresh_from_db()
    assert simulation.status == SimulationStatus.FAILED
    assert simulation.error["kind"] == "internal"
    assert "RuntimeError: engine EEE" in simulation.error["message"]
    assert len(json.dumps(simulation.error)) < ERROR_BOUND_CHARS

    other = SimulationFactory(owner=user, status=SimulationStatus.RUNNING)
    other.status = SimulationStatus.RUNNING
    runs.simulation_finish(
        simulation=other,
        error={"kind": "user_code", "message": "m" * HUGE, "waiting": list(range(HUGE))},
    )
    other.refresh_from_db()
    assert len(other.error["waiting"]) == ERROR_LIMIT_ITEMS
    assert len(json.dumps(other.error)) < ERROR_BOUND_CHARS


def test_an_error_answer_bounds_the_value_it_echoes(client: APIClient) -> None:
    echoed = "S" * HUGE
    response = client.get("/api/simulations/", {"status": echoed})
    assert response.status_code == 400
    (message,) = response.json()["status"]
    assert message.startswith("Unknown status")
    assert len(message) <= MESSAGE_LIMIT_CHARS * MESSAGE_PARTS
    assert len(response.content) < ERROR_BOUND_CHARS
