"""Tests of the Celery tasks run in-process (eagerly) with the real sandbox: no broker needed."""

from __future__ import annotations

from typing import Any

import pytest

from simulator.runner import run_simulation as run_in_process
from tests.webapp.studio.factories import TINY_APP, tiny_snapshot
from webapp.studio import tasks
from webapp.studio.models import Simulation, SimulationStatus
from webapp.studio.services.launch import simulation_launch

pytestmark = pytest.mark.django_db


def deterministic(result: dict[str, Any]) -> dict[str, Any]:
    """Return the parts of a result that do not depend on wall time."""
    return {key: value for key, value in result.items() if key != "stats"}


def run_eagerly(simulation: Simulation) -> Simulation:
    tasks.run_simulation.apply(args=(simulation.pk,), task_id=simulation.celery_task_id)
    simulation.refresh_from_db()
    return simulation


def test_the_task_runs_a_launched_simulation_to_the_same_result_as_the_runner(
    user: Any, sent: list[list[int]]
) -> None:
    variables = {"steps": 4, "ops": 5e8}
    simulation = simulation_launch(
        user=user,
        snapshot=tiny_snapshot(),
        app_source=TINY_APP,
        variables=variables,
        labels={"CPU": 2},
        seed=3,
    )
    simulation = run_eagerly(simulation)
    assert simulation.status == SimulationStatus.SUCCEEDED, simulation.error
    expected = run_in_process(
        tiny_snapshot(), TINY_APP, labels={"CPU": 2}, variables=variables, seed=3
    )
    assert deterministic(simulation.result) == deterministic(expected)
    assert simulation.overall_time_s == pytest.approx(2.0)
    assert (simulation.attempts, simulation.progress) == (1, 1.0)


def test_a_syntax_error_fails_the_run_with_its_line_number(
    user: Any, sent: list[list[int]]
) -> None:
    simulation = simulation_launch(
        user=user,
        snapshot=tiny_snapshot(),
        app_source="x = 1\nif x\n    pass\n",
        labels={"CPU": 1},
    )
    simulation = run_eagerly(simulation)
    assert simulation.status == SimulationStatus.FAILED
    assert (simulation.error["kind"], simulation.error["line"]) == ("user_code", 2)


def test_an_endless_application_hits_its_time_limit(user: Any, sent: list[list[int]]) -> None:
    simulation = simulation_launch(
        user=user,
        snapshot=tiny_snapshot(),
        app_source="while True:\n    pass\n",
        labels={"CPU": 1},
        time_limit_s=1,
    )
    simulation = run_eagerly(simulation)
    assert simulation.status == SimulationStatus.FAILED
    assert (simulation.error["kind"], simulation.error["limit"]) == ("limit", "wall")


def test_a_redelivered_task_of_a_finished_run_does_not_run_it_again(
    user: Any, sent: list[list[int]]
) -> None:
    simulation = simulation_launch(
        user=user,
        snapshot=tiny_snapshot(),
        app_source=TINY_APP,
        variables={"steps": 1, "ops": 1.0},
        labels={"CPU": 1},
    )
    first = run_eagerly(simulation)
    assert first.status == SimulationStatus.SUCCEEDED, first.error
    finished_at = first.finished
    again = run_eagerly(simulation)
    assert (again.status, again.attempts, again.finished) == ("succeeded", 1, finished_at)


def test_the_lost_run_check_does_nothing_without_an_answer_from_the_broker(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(tasks.selectors, "alive_workers", lambda: None)
    assert tasks.reap_lost_simulations.apply().get() == {"requeued": [], "failed": [], "resent": []}


def test_a_run_retries_for_as_long_as_the_database_is_unreachable() -> None:
    # Celery reads retry(max_retries=None) as "the task's limit" (3 by default), which ended
    # runs during a database outage longer than 1 + 2 + 4 s (test_faults.py found it).
    assert tasks.run_simulation.max_retries is None
