"""Tests of a run's life cycle: claiming an attempt, finishing, progress, cancelling, and
recovering lost runs."""

from __future__ import annotations

import json
from datetime import timedelta
from typing import Any

import pytest
from django.core.exceptions import ValidationError
from django.utils import timezone

from simulator.errors import SandboxLimitError, UserCodeError
from simulator.sandbox import Limits
from tests.webapp.studio.factories import SimulationFactory
from tests.webapp.studio.services.conftest import run_with
from webapp.studio.models import Simulation, SimulationStatus
from webapp.studio.services.common import MESSAGES, RunCancelled
from webapp.studio.services.runs import (
    progress_recorder,
    simulation_cancel,
    simulation_finish,
    simulation_reap_lost,
    simulation_run,
    simulation_start,
)

pytestmark = pytest.mark.django_db


def test_a_start_claims_the_run_and_counts_the_attempt(user: Any) -> None:
    simulation = SimulationFactory(owner=user)
    started = simulation_start(
        simulation_id=simulation.pk, task_id=simulation.celery_task_id, worker="w1@host"
    )
    assert started is not None
    simulation.refresh_from_db()
    assert (simulation.status, simulation.attempts, simulation.worker) == ("running", 1, "w1@host")
    assert simulation.started is not None and simulation.heartbeat is not None


def test_a_redelivered_message_of_a_finished_run_is_skipped(user: Any) -> None:
    simulation = SimulationFactory(owner=user, status=SimulationStatus.SUCCEEDED, attempts=1)
    assert (
        simulation_start(simulation_id=simulation.pk, task_id=simulation.celery_task_id, worker="w")
        is None
    )
    simulation.refresh_from_db()
    assert (simulation.status, simulation.attempts) == ("succeeded", 1)


def test_a_stale_message_of_a_requeued_run_is_skipped(user: Any) -> None:
    simulation = SimulationFactory(owner=user)
    assert simulation_start(simulation_id=simulation.pk, task_id="old", worker="w") is None
    assert Simulation.objects.get(pk=simulation.pk).status == SimulationStatus.QUEUED


def test_a_run_that_used_every_attempt_fails_with_the_reason_instead_of_starting(
    user: Any, settings: Any
) -> None:
    settings.PARASIM_MAX_ATTEMPTS = 2
    simulation = SimulationFactory(
        owner=user, status=SimulationStatus.RUNNING, attempts=2, worker="w@gone"
    )
    assert (
        simulation_start(
            simulation_id=simulation.pk, task_id=simulation.celery_task_id, worker="w2"
        )
        is None
    )
    simulation.refresh_from_db()
    assert simulation.status == SimulationStatus.FAILED
    assert simulation.error == {
        "kind": "worker_lost",
        "message": MESSAGES["lost_final"].format(attempts=2, worker="w@gone", limit=2),
    }


def test_a_succeeded_run_keeps_its_result_and_headline_figures(user: Any) -> None:
    result = {"status": "finished", "overall_time_s": 2.5, "energy_j": {"total": 40.0}}
    simulation = run_with(SimulationFactory(owner=user), result)
    assert simulation.status == SimulationStatus.SUCCEEDED
    assert simulation.result == result
    assert (simulation.overall_time_s, simulation.energy_j, simulation.progress) == (2.5, 40.0, 1.0)
    assert simulation.finished is not None


def test_a_failed_run_keeps_the_simulators_error_with_its_line(user: Any) -> None:
    error = UserCodeError("invalid syntax", line=3)
    simulation = run_with(SimulationFactory(owner=user), error)
    assert simulation.status == SimulationStatus.FAILED
    assert simulation.error == error.to_dict()
    assert simulation.error["line"] == 3
    assert simulation.result is None


def test_an_unexpected_exception_fails_the_run_instead_of_leaving_it_running(user: Any) -> None:
    simulation = run_with(SimulationFactory(owner=user), KeyError("boom"))
    assert simulation.status == SimulationStatus.FAILED
    assert simulation.error == {
        "kind": "internal",
        "message": MESSAGES["internal"].format(error="KeyError: 'boom'"),
    }


def test_a_result_arriving_after_a_cancel_does_not_overwrite_it(user: Any, revoked: Any) -> None:
    simulation = SimulationFactory(owner=user)
    started = simulation_start(
        simulation_id=simulation.pk, task_id=simulation.celery_task_id, worker="w"
    )
    assert started is not None
    simulation_cancel(simulation=simulation)
    assert simulation_finish(simulation=started, result={"overall_time_s": 1.0}) is False
    simulation.refresh_from_db()
    assert simulation.status == SimulationStatus.CANCELLED
    assert simulation.result is None


def test_progress_is_written_at_most_every_interval_and_stops_a_cancelled_run(
    user: Any, revoked: Any
) -> None:
    simulation = SimulationFactory(owner=user)
    started = simulation_start(
        simulation_id=simulation.pk, task_id=simulation.celery_task_id, worker="w"
    )
    assert started is not None
    record = progress_recorder(started, every_s=3600)
    record(0.25)
    record(0.5)  # within the interval: not written
    assert Simulation.objects.get(pk=simulation.pk).progress == 0.25
    record = progress_recorder(started, every_s=0)
    simulation_cancel(simulation=simulation)
    with pytest.raises(RunCancelled):
        record(0.75)


def test_cancelling_revokes_a_queued_run_and_terminates_a_running_one(
    user: Any, revoked: list[tuple[str, bool]], django_capture_on_commit_callbacks: Any
) -> None:
    queued = SimulationFactory(owner=user)
    running = SimulationFactory(owner=user, status=SimulationStatus.RUNNING)
    with django_capture_on_commit_callbacks(execute=True):
        simulation_cancel(simulation=queued)
        simulation_cancel(simulation=running)
    assert revoked == [(queued.celery_task_id, False), (running.celery_task_id, True)]
    assert set(Simulation.objects.values_list("status", flat=True)) == {"cancelled"}
    with pytest.raises(ValidationError) as error:
        simulation_cancel(simulation=queued)
    assert error.value.message_dict == {
        "status": [MESSAGES["not_cancellable"].format(status="cancelled")]
    }


LIFE = "life-1"


def stale_running(
    user: Any, *, attempts: int = 1, worker: str = "w@gone", age_s: int = 120, life: str = LIFE
) -> Simulation:
    long_ago = timezone.now() - timedelta(seconds=age_s)
    simulation = SimulationFactory(
        owner=user,
        status=SimulationStatus.RUNNING,
        attempts=attempts,
        worker=worker,
        worker_life=life,
    )
    Simulation.objects.filter(pk=simulation.pk).update(heartbeat=long_ago, started=long_ago)
    return simulation


def test_a_run_whose_worker_vanished_is_requeued_under_a_new_task_id(
    user: Any, sent: list[list[int]], django_capture_on_commit_callbacks: Any
) -> None:
    simulation = stale_running(user)
    old_task = simulation.celery_task_id
    with django_capture_on_commit_callbacks(execute=True):
        report = simulation_reap_lost(alive_workers={"w@alive": LIFE})
    assert report.requeued == [simulation.pk]
    assert sent == [[simulation.pk]]
    simulation.refresh_from_db()
    assert simulation.status == SimulationStatus.QUEUED
    assert simulation.celery_task_id != old_task
    assert simulation.error["kind"] == "worker_lost"
    assert "w@gone" in simulation.error["message"]


def test_a_lost_run_out_of_attempts_fails_with_the_reason(user: Any, settings: Any) -> None:
    settings.PARASIM_MAX_ATTEMPTS = 3
    simulation = stale_running(user, attempts=3)
    report = simulation_reap_lost(alive_workers={})
    assert report.failed == [simulation.pk]
    simulation.refresh_from_db()
    assert simulation.status == SimulationStatus.FAILED
    assert simulation.error == {
        "kind": "worker_lost",
        "message": MESSAGES["lost_final"].format(attempts=3, worker="w@gone", limit=3),
    }


def test_runs_on_live_workers_or_with_a_fresh_heartbeat_are_left_alone(user: Any) -> None:
    on_live_worker = stale_running(user, worker="w@alive")
    fresh = stale_running(user, age_s=5)
    report = simulation_reap_lost(alive_workers={"w@alive": LIFE})
    assert report.requeued == report.failed == []
    assert {on_live_worker.pk, fresh.pk} == set(
        Simulation.objects.filter(status="running").values_list("pk", flat=True)
    )


def test_a_run_whose_worker_came_back_under_its_hostname_is_requeued(
    user: Any, sent: list[list[int]], django_capture_on_commit_callbacks: Any
) -> None:
    # docker-compose restarts a killed worker as `worker@%h` again: the name answers, but the
    # process that held the run is gone.
    simulation = stale_running(user, worker="w@alive", life="life-before-the-kill")
    with django_capture_on_commit_callbacks(execute=True):
        report = simulation_reap_lost(alive_workers={"w@alive": "life-after-the-restart"})
    assert report.requeued == [simulation.pk]
    assert sent == [[simulation.pk]]
    assert Simulation.objects.get(pk=simulation.pk).status == SimulationStatus.QUEUED


@pytest.mark.parametrize("recorded, answered", [("", "life-2"), ("life-1", "")])
def test_without_a_life_on_either_side_the_hostname_decides(
    user: Any, recorded: str, answered: str
) -> None:
    # A run taken before lives were recorded, or a worker that does not know the command.
    stale_running(user, worker="w@alive", life=recorded)
    report = simulation_reap_lost(alive_workers={"w@alive": answered})
    assert report.requeued == report.failed == []


def test_a_start_records_the_life_of_the_worker(user: Any) -> None:
    simulation = SimulationFactory(owner=user)
    simulation_start(
        simulation_id=simulation.pk,
        task_id=simulation.celery_task_id,
        worker="w1@host",
        worker_life="life-7",
    )
    assert Simulation.objects.get(pk=simulation.pk).worker_life == "life-7"


def test_a_run_far_past_its_hard_limit_fails_even_if_its_worker_answers(user: Any) -> None:
    simulation = stale_running(user, worker="w@alive", age_s=60 + 20 + 60 + 5)
    Simulation.objects.filter(pk=simulation.pk).update(time_limit_s=60)
    report = simulation_reap_lost(alive_workers={"w@alive": LIFE})
    assert report.failed == [simulation.pk]
    simulation.refresh_from_db()
    assert simulation.error["kind"] == "limit"


def test_progress_never_decreases_and_ignores_non_finite_fractions(user: Any) -> None:
    simulation = SimulationFactory(owner=user, status=SimulationStatus.RUNNING)
    record = progress_recorder(simulation, every_s=0)
    seen = []
    for fraction in [0.5, 0.2, float("nan"), float("inf"), 1.7, -3.0]:
        record(fraction)
        simulation.refresh_from_db()
        seen.append(simulation.progress)
    assert seen == [0.5, 0.5, 0.5, 0.5, 1.0, 1.0]


def test_the_simulated_time_reached_is_stored_never_decreases_and_skips_bad_values(
    user: Any,
) -> None:
    simulation = SimulationFactory(owner=user, status=SimulationStatus.RUNNING)
    record = progress_recorder(simulation, every_s=0)
    seen = []
    for reached in [None, 0.004, 0.002, float("nan"), -1.0, float("inf"), 0.5]:
        record(0.0, reached)
        simulation.refresh_from_db()
        seen.append(simulation.simulated_time_s)
    assert seen == [None, 0.004, 0.004, 0.004, 0.004, 0.004, 0.5]


def test_a_new_attempt_forgets_the_simulated_time_and_success_stores_the_overall_time(
    user: Any,
) -> None:
    simulation = SimulationFactory(owner=user, simulated_time_s=7.0)
    started = simulation_start(
        simulation_id=simulation.pk, task_id=simulation.celery_task_id, worker="w"
    )
    assert started is not None and started.simulated_time_s is None
    assert Simulation.objects.get(pk=simulation.pk).simulated_time_s is None
    result = {"status": "finished", "overall_time_s": 2.5, "energy_j": {"total": 40.0}}
    simulation = run_with(SimulationFactory(owner=user), result)
    assert simulation.simulated_time_s == 2.5


@pytest.mark.django_db(transaction=True)
def test_a_result_that_cannot_be_stored_fails_the_run_with_the_reason(user: Any) -> None:
    simulation = SimulationFactory(owner=user)
    simulation_run(
        simulation_id=simulation.pk,
        task_id=simulation.celery_task_id,
        worker="w",
        run=lambda *args, **kwargs: {"overall_time_s": 1.0, "unstorable": object()},
    )
    simulation.refresh_from_db()
    assert simulation.status == SimulationStatus.FAILED
    assert simulation.error["kind"] == "internal"
    assert "not JSON serializable" in simulation.error["message"]


def test_a_user_error_message_with_a_nul_character_is_stored(user: Any) -> None:
    simulation = SimulationFactory(
        owner=user, app_source="raise ValueError('a\\x00b')\n", variables={}
    )
    simulation_run(simulation_id=simulation.pk, task_id=simulation.celery_task_id, worker="w")
    simulation.refresh_from_db()
    assert simulation.status == SimulationStatus.FAILED
    assert "\x00" not in json.dumps(simulation.error, ensure_ascii=False)
    assert "a\ufffdb" in simulation.error["message"]


# --- the limit that stopped a run -------------------------------------------------------


def run_hitting(simulation: Simulation, error: SandboxLimitError) -> tuple[Simulation, Limits]:
    """Return the run after an attempt whose sandbox stops at `error`, and the limits the
    sandbox was given."""
    given: list[Limits] = []

    def sandbox(payload: Any, *, limits: Limits, progress: Any, keep_spare: bool) -> Any:
        given.append(limits)
        raise error

    simulation_run(
        simulation_id=simulation.pk, task_id=simulation.celery_task_id, worker="w@h", run=sandbox
    )
    simulation.refresh_from_db()
    return simulation, given[0]


@pytest.mark.parametrize(
    ("limit", "value", "unit"),
    [
        ("wall", 7.0, "s"),
        ("cpu", 11, "s"),
        ("memory", 2 * 1024**3, "bytes"),
        ("output", 1024**2, "bytes"),
    ],
)
def test_a_run_stopped_by_a_limit_stores_which_limit_and_its_value(
    user: Any, limit: str, value: float, unit: str
) -> None:
    simulation = SimulationFactory(owner=user, time_limit_s=7, cpu_limit_s=11)
    failed, limits = run_hitting(simulation, SandboxLimitError(limit, f"the {limit} limit"))
    assert (limits.wall_s, limits.cpu_s) == (7.0, 11)
    assert failed.status == SimulationStatus.FAILED
    assert failed.error == {
        "kind": "limit",
        "limit": limit,
        "message": f"the {limit} limit",
        "value": value,
        "unit": unit,
    }


def test_a_run_stored_before_cpu_limits_keeps_the_cpu_limit_it_had(user: Any) -> None:
    simulation = SimulationFactory(owner=user, time_limit_s=7, cpu_limit_s=None)
    failed, limits = run_hitting(simulation, SandboxLimitError("cpu", "cpu"))
    assert limits.cpu_s == 2 * 7 + 10
    assert (failed.error["limit"], failed.error["value"]) == ("cpu", 24)


def test_errors_other_than_limits_get_no_limit_value(user: Any) -> None:
    failed = run_with(SimulationFactory(owner=user), UserCodeError("boom", line=2))
    assert "value" not in failed.error
