"""Tests of the studio services: launch validation, the run life cycle, lost runs, sweeps."""

from __future__ import annotations

import json
from datetime import timedelta
from typing import Any

import pytest
from django.core.exceptions import ValidationError
from django.utils import timezone

import simulator
import simulator.snapshot
from simulator.errors import UserCodeError
from tests.hwdb.factories import (
    ComputationalModelFactory,
    GpuFactory,
    SystemModelFactory,
    one_gpu_graph,
)
from tests.webapp.studio.factories import (
    TINY_APP,
    ApplicationModelFactory,
    SimulationFactory,
    tiny_snapshot,
)
from webapp.studio.models import Simulation, SimulationStatus, SweepStatus
from webapp.studio.services import launch as launch_service
from webapp.studio.services.common import MESSAGES, RunCancelled
from webapp.studio.services.launch import simulation_launch
from webapp.studio.services.runs import (
    progress_recorder,
    sandbox_payload,
    simulation_cancel,
    simulation_finish,
    simulation_reap_lost,
    simulation_run,
    simulation_start,
)
from webapp.studio.services.sweeps import sweep_launch

pytestmark = pytest.mark.django_db


def launch(user: Any, **overrides: Any) -> Simulation:
    fields: dict[str, Any] = {
        "snapshot": tiny_snapshot(),
        "app_source": TINY_APP,
        "variables": {"steps": 2, "ops": 1e9},
        "labels": {"CPU": 2},
    }
    fields.update(overrides)
    return simulation_launch(user=user, **fields)


def test_a_launch_freezes_what_it_runs_on_and_queues_after_commit(
    user: Any, sent: list[list[int]], django_capture_on_commit_callbacks: Any
) -> None:
    with django_capture_on_commit_callbacks(execute=True):
        simulation = launch(user, queue="gajgerqueue", seed=7)
    assert sent == [[simulation.pk]]
    simulation.refresh_from_db()
    assert simulation.status == SimulationStatus.QUEUED
    assert simulation.snapshot == tiny_snapshot()
    assert simulation.app_source == TINY_APP
    assert (simulation.queue, simulation.seed) == ("gajgerqueue", 7)
    assert simulation.engine_version == simulator.ENGINE_VERSION
    assert simulation.time_limit_s == 600
    assert simulation.celery_task_id


def test_nothing_is_queued_before_the_transaction_commits(
    user: Any, sent: list[list[int]], django_capture_on_commit_callbacks: Any
) -> None:
    with django_capture_on_commit_callbacks(execute=False) as callbacks:
        launch(user)
    assert sent == []
    assert len(callbacks) == 1


@pytest.mark.parametrize(
    ("overrides", "field", "message"),
    [
        (
            {"labels": {"CPU": 3}},
            "labels.CPU",
            "asked for 3 processes of label 'CPU' but its capacity is 2 "
            "(multiplicity x count over the nodes carrying it: cpu0 2 x 1)",
        ),
        (
            {"labels": {"GPU": 1}},
            "labels.GPU",
            "no node of the system carries label 'GPU'; labels in the system: CPU",
        ),
        (
            {"queue": "nowhere"},
            "queue",
            MESSAGES["unknown_queue"].format(queue="nowhere", known="default, gajgerqueue"),
        ),
        ({"time_limit_s": 601}, "time_limit_s", MESSAGES["time_limit"].format(limit=600)),
        ({"seed": "x"}, "seed", MESSAGES["seed"]),
        ({"snapshot": None}, "system_model", MESSAGES["required"]),
        ({"app_source": None}, "application", MESSAGES["required"]),
        (
            {"snapshot": {**tiny_snapshot(), "nodes": []}, "labels": {"CPU": 1}},
            "labels.CPU",
            "no node of the system carries label 'CPU'; labels in the system: none",
        ),
    ],
)
def test_it_rejects_a_bad_launch_naming_the_field_and_stores_nothing(
    user: Any, sent: list[list[int]], overrides: dict[str, Any], field: str, message: str
) -> None:
    with pytest.raises(ValidationError) as error:
        launch(user, **overrides)
    assert error.value.message_dict == {field: [message]}
    assert not Simulation.objects.exists()


def test_it_rejects_an_invalid_snapshot_with_the_snapshot_field_paths(user: Any) -> None:
    snapshot = tiny_snapshot()
    snapshot["nodes"][0]["count"] = 0
    with pytest.raises(ValidationError) as error:
        launch(user, snapshot=snapshot)
    assert error.value.message_dict == {
        "snapshot.nodes[0].count": ["Ensure this value is greater than or equal to 1."]
    }


def test_it_checks_variables_against_the_application_models_declarations(user: Any) -> None:
    application = ApplicationModelFactory(owner=user)
    with pytest.raises(ValidationError) as error:
        launch(user, app_source=None, application=application.pk, variables={"steps": "many"})
    assert error.value.message_dict == {
        "variables.steps": ["Expected a whole number (int), got 'many'."]
    }
    simulation = launch(user, app_source=None, application=application.pk, variables={"steps": 5})
    assert simulation.variables == {"steps": 5, "ops": 1e9}
    assert simulation.application_id == application.pk


def test_it_does_not_launch_somebody_elses_private_application_or_system(
    user: Any, other_user: Any
) -> None:
    application = ApplicationModelFactory(owner=other_user)
    with pytest.raises(ValidationError) as error:
        launch(user, app_source=None, application=application.pk)
    assert error.value.message_dict == {
        "application": [MESSAGES["not_visible"].format(what="application model", pk=application.pk)]
    }
    system = SystemModelFactory(owner=other_user)
    with pytest.raises(ValidationError) as error:
        launch(user, snapshot=None, system_model=system.pk, labels={"GPU": 1})
    assert error.value.message_dict == {
        "system_model": [MESSAGES["not_visible"].format(what="system model", pk=system.pk)]
    }


def test_a_launch_from_a_system_model_freezes_its_snapshot(user: Any) -> None:
    gpu = GpuFactory(owner=user, sms=13)
    model = ComputationalModelFactory(owner=user)
    system = SystemModelFactory(owner=user, graph=one_gpu_graph(gpu.pk, model.pk))
    simulation = launch(user, snapshot=None, system_model=system.pk, labels={"GPU": 1})
    assert simulation.system_model_id == system.pk
    frozen = simulation.snapshot["hardware"][f"hw-{gpu.pk}"]
    assert frozen["attributes"]["SMs"] == 13
    gpu.attributes.filter(key="SMs").update(value=16)
    simulation.refresh_from_db()
    assert simulation.snapshot["hardware"][f"hw-{gpu.pk}"]["attributes"]["SMs"] == 13


def count_parses(monkeypatch: pytest.MonkeyPatch) -> list[object]:
    """Return a list that grows by one each time a snapshot is parsed (`load_snapshot`
    validates a snapshot's graph once per parse; an already parsed one is returned as is)."""
    parses: list[object] = []
    validate_graph = simulator.snapshot.validate_graph

    def counting(*args: Any, **kwargs: Any) -> Any:
        parses.append(args[0])
        return validate_graph(*args, **kwargs)

    monkeypatch.setattr(simulator.snapshot, "validate_graph", counting)
    return parses


def test_a_launch_parses_its_snapshot_once(user: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    parses = count_parses(monkeypatch)
    launch(user)
    assert len(parses) == 1


def test_a_launch_of_a_system_model_parses_its_exported_snapshot_once(
    user: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    gpu = GpuFactory(owner=user)
    model = ComputationalModelFactory(owner=user)
    system = SystemModelFactory(owner=user, graph=one_gpu_graph(gpu.pk, model.pk))
    parses = count_parses(monkeypatch)
    launch(user, snapshot=None, system_model=system.pk, labels={"GPU": 1})
    assert len(parses) == 1


def test_a_sweep_parses_its_snapshot_once_and_each_substituted_one_once(
    user: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    parses = count_parses(monkeypatch)
    sweep_launch(user=user, name="grid", spec=sweep_spec())
    assert len(parses) == 1  # six points, one system
    fast = GpuFactory(owner=user, name="Fast GPU", type="CPU")
    slow = GpuFactory(owner=user, name="Slow GPU", type="CPU")
    parses.clear()
    spec = sweep_spec(hardware={"node": "cpu0", "components": [fast.pk, slow.pk]})
    sweep_launch(user=user, name="hw", spec=spec)
    assert len(parses) == 3  # the launch's system, then each GPU's


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


def run_with(simulation: Simulation, outcome: Any) -> Simulation:
    """Return `simulation` after one attempt whose sandbox (a fake runner) gives `outcome`."""

    def fake_run_sandboxed(
        payload: Any, *, limits: Any = None, progress: Any = None, keep_spare: bool = False
    ) -> Any:
        assert payload == sandbox_payload(simulation)
        if isinstance(outcome, Exception):
            raise outcome
        return outcome

    simulation_run(
        simulation_id=simulation.pk,
        task_id=simulation.celery_task_id,
        worker="w@h",
        run=fake_run_sandboxed,
    )
    simulation.refresh_from_db()
    return simulation


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


def stale_running(
    user: Any, *, attempts: int = 1, worker: str = "w@gone", age_s: int = 120
) -> Simulation:
    long_ago = timezone.now() - timedelta(seconds=age_s)
    simulation = SimulationFactory(
        owner=user, status=SimulationStatus.RUNNING, attempts=attempts, worker=worker
    )
    Simulation.objects.filter(pk=simulation.pk).update(heartbeat=long_ago, started=long_ago)
    return simulation


def test_a_run_whose_worker_vanished_is_requeued_under_a_new_task_id(
    user: Any, sent: list[list[int]], django_capture_on_commit_callbacks: Any
) -> None:
    simulation = stale_running(user)
    old_task = simulation.celery_task_id
    with django_capture_on_commit_callbacks(execute=True):
        report = simulation_reap_lost(alive_workers={"w@alive"})
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
    report = simulation_reap_lost(alive_workers=set())
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
    report = simulation_reap_lost(alive_workers={"w@alive"})
    assert report.requeued == report.failed == []
    assert {on_live_worker.pk, fresh.pk} == set(
        Simulation.objects.filter(status="running").values_list("pk", flat=True)
    )


def test_a_run_far_past_its_hard_limit_fails_even_if_its_worker_answers(user: Any) -> None:
    simulation = stale_running(user, worker="w@alive", age_s=60 + 20 + 60 + 5)
    Simulation.objects.filter(pk=simulation.pk).update(time_limit_s=60)
    report = simulation_reap_lost(alive_workers={"w@alive"})
    assert report.failed == [simulation.pk]
    simulation.refresh_from_db()
    assert simulation.error["kind"] == "limit"


def sweep_spec(**overrides: Any) -> dict[str, Any]:
    spec: dict[str, Any] = {
        "snapshot": tiny_snapshot(),
        "app_source": TINY_APP,
        "labels": {"CPU": 1},
        "variables": {"steps": [1, 2], "ops": {"start": 1e9, "stop": 3e9, "step": 1e9}},
    }
    spec.update(overrides)
    return spec


def test_a_sweep_expands_the_product_of_its_axes_into_one_queued_group(
    user: Any, sent: list[list[int]], django_capture_on_commit_callbacks: Any
) -> None:
    with django_capture_on_commit_callbacks(execute=True):
        sweep = sweep_launch(user=user, name="grid", spec=sweep_spec())
    children = list(sweep.simulations.order_by("pk"))
    assert [c.variables for c in children] == [
        {"steps": s, "ops": o} for s in (1, 2) for o in (1e9, 2e9, 3e9)
    ]
    assert sent == [[c.pk for c in children]]
    assert sweep.aggregate["total"] == 6 and sweep.aggregate["queued"] == 6


def test_a_sweep_swaps_one_nodes_hardware_for_each_component_named(user: Any) -> None:
    fast = GpuFactory(owner=user, name="Fast GPU", type="CPU")
    slow = GpuFactory(owner=user, name="Slow GPU", type="CPU")
    spec = sweep_spec(
        variables={"steps": 1, "ops": 1e9},
        hardware={"node": "cpu0", "components": [fast.pk, "slow gpu"]},
    )
    sweep = sweep_launch(user=user, name="hw", spec=spec)
    children = list(sweep.simulations.order_by("pk"))
    assert [c.snapshot["nodes"][0]["hardware"] for c in children] == [
        f"hw-{fast.pk}",
        f"hw-{slow.pk}",
    ]
    assert children[1].snapshot["hardware"][f"hw-{slow.pk}"]["name"] == "Slow GPU"
    assert children[1].sweep_point["hardware"] == {
        "node": "cpu0",
        "id": slow.pk,
        "name": "Slow GPU",
    }


def test_it_refuses_an_over_large_sweep_with_its_size_and_the_limit(
    user: Any, settings: Any
) -> None:
    settings.PARASIM_MAX_SWEEP = 10
    spec = sweep_spec(variables={"steps": {"start": 1, "stop": 11, "step": 1}})
    with pytest.raises(ValidationError) as error:
        sweep_launch(user=user, name="big", spec=spec)
    assert error.value.message_dict == {
        "spec": [MESSAGES["sweep_too_large"].format(size=11, limit=10)]
    }
    assert not Simulation.objects.exists()


def test_it_names_the_bad_field_of_a_sweep(user: Any) -> None:
    with pytest.raises(ValidationError) as error:
        sweep_launch(user=user, name="s", spec=sweep_spec(labels={"CPU": 9}))
    assert list(error.value.message_dict) == ["spec.labels.CPU"]
    with pytest.raises(ValidationError) as error:
        sweep_launch(
            user=user, name="s", spec=sweep_spec(hardware={"node": "gpu9", "components": [1]})
        )
    assert error.value.message_dict == {
        "spec.hardware.node": [MESSAGES["sweep_node"].format(node="gpu9", known="cpu0")]
    }


def test_a_failed_point_is_reported_without_sinking_the_rest(user: Any) -> None:
    sweep = sweep_launch(
        user=user, name="s", spec=sweep_spec(variables={"steps": [1, 2, 3], "ops": 1e9})
    )
    children = list(sweep.simulations.order_by("pk"))
    outcomes = [
        {"overall_time_s": 1.0, "energy_j": {"total": 1.0}},
        UserCodeError("division by zero", line=1),
        {"overall_time_s": 3.0, "energy_j": {"total": 3.0}},
    ]
    for child, outcome in zip(children, outcomes, strict=True):
        run_with(child, outcome)
        if child is children[0]:
            sweep.refresh_from_db()
            assert sweep.status == SweepStatus.RUNNING
            assert sweep.aggregate["succeeded"] == 1 and sweep.aggregate["done"] == 1
    sweep.refresh_from_db()
    assert sweep.status == SweepStatus.FINISHED
    assert (sweep.aggregate["succeeded"], sweep.aggregate["failed"]) == (2, 1)
    assert sweep.aggregate["best"]["simulation"] == children[0].pk


def test_a_launch_over_the_process_limit_is_refused_before_placing(
    user: Any, settings: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    settings.PARASIM_MAX_PROCESSES = 1000
    placed: list[object] = []
    monkeypatch.setattr(launch_service, "place_processes", lambda *args: placed.append(args))
    with pytest.raises(ValidationError) as error:
        launch(user, labels={"CPU": 5_000_000})
    assert error.value.message_dict == {
        "labels": [MESSAGES["too_many_processes"].format(total=5_000_000, limit=1000)]
    }
    assert not placed and not Simulation.objects.exists()


def test_a_user_over_the_active_run_limit_is_refused_and_others_are_not(
    user: Any, other_user: Any, settings: Any
) -> None:
    settings.PARASIM_MAX_ACTIVE_RUNS = 2
    launch(user)
    launch(user)
    with pytest.raises(ValidationError) as error:
        launch(user)
    assert error.value.message_dict == {
        "queue": [MESSAGES["too_many_active"].format(active=2, adding=1, limit=2)]
    }
    spec = sweep_spec(variables={"steps": [1, 2, 3]})
    with pytest.raises(ValidationError) as error:
        sweep_launch(user=user, name="more", spec=spec)
    assert list(error.value.message_dict) == ["spec.queue"]
    assert Simulation.objects.filter(owner=user).count() == 2  # the sweep stored nothing
    launch(other_user)  # another user's launches are not held back
    Simulation.objects.filter(owner=user).update(status=SimulationStatus.SUCCEEDED)
    launch(user)  # finished runs no longer count


def test_a_launch_while_the_broker_is_down_is_sent_later_by_the_lost_run_check(
    user: Any,
    settings: Any,
    monkeypatch: pytest.MonkeyPatch,
    django_capture_on_commit_callbacks: Any,
) -> None:
    from celery.canvas import Signature

    def broker_down(self: Signature, *args: Any, **kwargs: Any) -> None:
        raise OSError("Connection refused")

    monkeypatch.setattr(Signature, "apply_async", broker_down)
    with django_capture_on_commit_callbacks(execute=True):
        simulation = launch(user)  # stored; the send fails after the commit
    simulation.refresh_from_db()
    assert (simulation.status, simulation.sent) == (SimulationStatus.QUEUED, None)
    first_task = simulation.celery_task_id

    published: list[str] = []
    monkeypatch.setattr(
        Signature, "apply_async", lambda self, *a, **k: published.append(self.options["task_id"])
    )
    assert simulation_reap_lost(alive_workers=[]).resent == []  # not overdue yet
    later = timezone.now() + timedelta(seconds=settings.PARASIM_LOST_AFTER_SECONDS + 1)
    assert simulation_reap_lost(alive_workers=[], now=later).resent == [simulation.pk]
    simulation.refresh_from_db()
    assert simulation.sent is not None
    assert simulation.celery_task_id != first_task  # a late copy of the first send is stale
    assert published == [simulation.celery_task_id]
    assert simulation_reap_lost(alive_workers=[], now=later).resent == []


def test_progress_never_decreases_and_ignores_non_finite_fractions(user: Any) -> None:
    simulation = SimulationFactory(owner=user, status=SimulationStatus.RUNNING)
    record = progress_recorder(simulation, every_s=0)
    seen = []
    for fraction in [0.5, 0.2, float("nan"), float("inf"), 1.7, -3.0]:
        record(fraction)
        simulation.refresh_from_db()
        seen.append(simulation.progress)
    assert seen == [0.5, 0.5, 0.5, 0.5, 1.0, 1.0]


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
