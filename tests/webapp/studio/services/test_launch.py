"""Tests of launching a run: what it freezes and queues, what it refuses naming the field,
how often it parses its snapshot, and the admission limits."""

from __future__ import annotations

from typing import Any

import pytest
from django.core.exceptions import ValidationError

import simulator
from hwdb.services.components import component_update
from hwdb.services.system_models import system_model_update
from tests.hwdb.factories import (
    ComputationalModelFactory,
    GpuFactory,
    SystemModelFactory,
    one_gpu_graph,
)
from tests.webapp.studio.conftest import launch
from tests.webapp.studio.factories import TINY_APP, ApplicationModelFactory, tiny_snapshot
from tests.webapp.studio.services.conftest import count_parses, sweep_spec
from webapp.studio.models import Simulation, SimulationStatus
from webapp.studio.services import launch as launch_service
from webapp.studio.services.common import MESSAGES
from webapp.studio.services.runs import sandbox_payload
from webapp.studio.services.sweeps import sweep_launch

pytestmark = pytest.mark.django_db


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
    assert (simulation.time_limit_s, simulation.cpu_limit_s) == (30, 60)  # the queue's defaults
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
            "(multiplicity x count over the nodes carrying it: CPU 2 x 1)",
        ),
        (
            {"labels": {"GPU": 1}},
            "labels.GPU",
            "no node of the system carries label 'GPU'; labels in the system: CPU",
        ),
        (
            {"queue": "nowhere"},
            "queue",
            MESSAGES["unknown_queue"].format(queue="nowhere", known="default, batch, gajgerqueue"),
        ),
        (
            {"time_limit_s": 121},
            "time_limit_s",
            "time_limit_s (wall clock): expected a whole number of seconds from 1 to 120, "
            "the maximum of queue 'default'.",
        ),
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


def test_a_relaunch_reuses_the_parsed_snapshot_until_the_system_or_its_hardware_change(
    user: Any, other_user: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    gpu = GpuFactory(owner=user, sms=13)
    model = ComputationalModelFactory(owner=user)
    system = SystemModelFactory(owner=user, graph=one_gpu_graph(gpu.pk, model.pk))
    parses = count_parses(monkeypatch)

    def sms() -> float:
        run = launch(user, snapshot=None, system_model=system.pk, labels={"GPU": 1})
        return float(run.snapshot["hardware"][f"hw-{gpu.pk}"]["attributes"]["SMs"])

    assert (sms(), sms(), len(parses)) == (13, 13, 1)
    attributes = [
        {"key": a.key, "value": 16.0 if a.key == "SMs" else a.value, "unit": a.unit}
        for a in gpu.attributes.all()
    ]
    component_update(component=gpu, fields={}, attributes=attributes)
    assert (sms(), len(parses)) == (16, 2)
    system_model_update(system_model=system, fields={"name": "renamed"})
    assert (sms(), len(parses)) == (16, 3)
    with pytest.raises(ValidationError):  # kept or not, it stays invisible to others
        launch(other_user, snapshot=None, system_model=system.pk, labels={"GPU": 1})


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


# --- the run's limits -------------------------------------------------------------------


def test_a_launch_gets_its_queues_default_limits(user: Any) -> None:
    interactive = launch(user)
    batch = launch(user, queue="batch")
    assert (interactive.time_limit_s, interactive.cpu_limit_s) == (30, 60)
    assert (batch.time_limit_s, batch.cpu_limit_s) == (300, 600)


def test_a_launch_may_ask_for_limits_up_to_its_queues_maximum(user: Any) -> None:
    simulation = launch(user, time_limit_s=120, cpu_limit_s=5)
    assert (simulation.time_limit_s, simulation.cpu_limit_s) == (120, 5)
    longer = launch(user, queue="batch", time_limit_s=600, cpu_limit_s=1200)
    assert (longer.time_limit_s, longer.cpu_limit_s) == (600, 1200)


@pytest.mark.parametrize(
    ("queue", "field", "value", "maximum"),
    [
        ("default", "time_limit_s", 121, 120),
        ("default", "cpu_limit_s", 241, 240),
        ("batch", "time_limit_s", 601, 600),
        ("batch", "cpu_limit_s", 1201, 1200),
        ("default", "time_limit_s", 0, 120),
        ("default", "cpu_limit_s", -5, 240),
        ("default", "time_limit_s", 2.5, 120),
        ("default", "cpu_limit_s", True, 240),
        ("default", "time_limit_s", "10", 120),
    ],
)
def test_a_limit_outside_the_queues_range_is_refused_naming_the_field_and_the_maximum(
    user: Any, queue: str, field: str, value: object, maximum: int
) -> None:
    with pytest.raises(ValidationError) as error:
        launch(user, queue=queue, **{field: value})
    what = {"time_limit_s": "wall clock", "cpu_limit_s": "CPU time"}[field]
    assert error.value.message_dict == {
        field: [
            f"{field} ({what}): expected a whole number of seconds from 1 to {maximum}, "
            f"the maximum of queue {queue!r}."
        ]
    }
    assert not Simulation.objects.exists()


def test_a_launch_keeps_the_default_timeline_or_the_one_asked_for_up_to_the_maximum(
    user: Any, settings: Any
) -> None:
    settings.PARASIM_MAX_TIMELINE_LIMIT = 50_000
    assert launch(user).timeline_limit == 10_000
    asked = launch(user, timeline_limit=50_000)
    assert asked.timeline_limit == 50_000
    assert sandbox_payload(asked)["timeline_limit"] == 50_000  # what run_simulation gets
    assert launch(user, timeline_limit=0).timeline_limit == 0
    settings.PARASIM_MAX_TIMELINE_LIMIT = 500
    assert launch(user).timeline_limit == 500  # the default within a smaller maximum


@pytest.mark.parametrize("value", [50_001, -1, 2.5, "many", True])
def test_a_timeline_limit_outside_the_servers_maximum_is_refused_naming_the_field(
    user: Any, settings: Any, value: object
) -> None:
    settings.PARASIM_MAX_TIMELINE_LIMIT = 50_000
    with pytest.raises(ValidationError) as error:
        launch(user, timeline_limit=value)
    assert error.value.message_dict == {
        "timeline_limit": [
            "Expected a whole number of timeline entries from 0 to 50,000 (the server's "
            "maximum, PARASIM_MAX_TIMELINE_LIMIT)."
        ]
    }
    assert not Simulation.objects.exists()


def test_the_queue_limits_come_from_the_settings(user: Any, settings: Any) -> None:
    settings.PARASIM_QUEUE_LIMITS = {
        **settings.PARASIM_QUEUE_LIMITS,
        "default": {"time_limit_s": [3, 10], "cpu_limit_s": [6, 20]},
    }
    assert (launch(user).time_limit_s, launch(user).cpu_limit_s) == (3, 6)
    with pytest.raises(ValidationError) as error:
        launch(user, time_limit_s=11)
    assert "from 1 to 10, the maximum of queue 'default'" in error.value.messages[0]


def test_a_queue_the_limit_settings_do_not_name_gets_the_interactive_limits(
    user: Any, settings: Any
) -> None:
    settings.PARASIM_QUEUES = {**settings.PARASIM_QUEUES, "elsewhere": ""}
    simulation = launch(user, queue="elsewhere")
    assert (simulation.time_limit_s, simulation.cpu_limit_s) == tuple(
        default for default, _ in settings.INTERACTIVE_LIMITS.values()
    )


def test_a_sweep_checks_its_limits_against_its_queue(user: Any) -> None:
    with pytest.raises(ValidationError) as error:
        sweep_launch(user=user, name="s", spec=sweep_spec(cpu_limit_s=10_000))
    assert list(error.value.message_dict) == ["spec.cpu_limit_s"]
    sweep = sweep_launch(user=user, name="s", spec=sweep_spec(cpu_limit_s=7))
    assert {child.cpu_limit_s for child in sweep.simulations.all()} == {7}


def test_a_sweeps_timeline_limit_is_checked_and_kept_by_every_point(
    user: Any, settings: Any
) -> None:
    settings.PARASIM_MAX_TIMELINE_LIMIT = 50_000
    with pytest.raises(ValidationError) as error:
        sweep_launch(user=user, name="s", spec=sweep_spec(timeline_limit=50_001))
    assert list(error.value.message_dict) == ["spec.timeline_limit"]
    sweep = sweep_launch(user=user, name="s", spec=sweep_spec(timeline_limit=20_000))
    assert {run.timeline_limit for run in sweep.simulations.all()} == {20_000}


def test_a_run_may_ask_for_failure_injection_and_its_result_carries_it(user: Any) -> None:
    from simulator.runner import run_simulation

    asked = launch(user, failures={"mode": "restart", "samples": 500, "restart_s": 2})
    assert asked.failures == {"mode": "restart", "samples": 500, "restart_s": 2.0}
    payload = sandbox_payload(asked)
    assert payload["failures"] == asked.failures
    result = run_simulation(**payload)
    injected = result["failure_injection"]
    # the tiny CPU has no failure rate: every sample completes at once, in the run's time
    assert (injected["mode"], injected["samples"], injected["p_complete"]) == ("restart", 500, 1.0)
    assert injected["mean_completion_s"] == result["overall_time_s"]
    assert "failures" not in sandbox_payload(launch(user))  # none asked: none run


@pytest.mark.parametrize(
    ("failures", "field"),
    [
        ("often", "failures"),
        ({"mode": "retry"}, "failures.mode"),
        ({"samples": 0}, "failures.samples"),
        ({"mode": "restart", "restart_s": -1}, "failures.restart_s"),
    ],
)
def test_a_bad_failure_injection_is_refused_naming_its_field(
    user: Any, failures: object, field: str
) -> None:
    with pytest.raises(ValidationError) as error:
        launch(user, failures=failures)
    assert list(error.value.message_dict) == [field]
    assert not Simulation.objects.exists()


def test_a_sweep_passes_its_failure_injection_to_every_point(user: Any) -> None:
    spec = sweep_spec(failures={"mode": "abort", "samples": 100})
    sweep = sweep_launch(user=user, name="failing", spec=spec)
    assert {str(c.failures) for c in sweep.simulations.all()} == {
        str({"mode": "abort", "samples": 100, "restart_s": 0.0})
    }
    with pytest.raises(ValidationError) as error:
        sweep_launch(user=user, name="bad", spec=sweep_spec(failures={"mode": "x"}))
    assert list(error.value.message_dict) == ["spec.failures.mode"]
