"""Studies over a training workload's plans through REST (`POST /api/studies/` with a plan
sweep's spec): each trial one plan, run by the plan sweep's code on the real sandbox; a plan
that cannot run is a failed trial whose error is its field and reason; bad specs and axes
are refused naming the field, storing nothing.

Transactional: Optuna writes through its own connection to the same database, which a test
transaction would keep locked (webapp.studio.study_storage)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from rest_framework.test import APIClient

from simulator.workloads.cluster import TEMPLATES
from simulator.workloads.config import PRESETS
from simulator.workloads.plan import ParallelPlan
from simulator.workloads.training import simulate_training
from tests.hwdb.factories import seeded_gpu
from webapp.celery import app
from webapp.studio import dispatch
from webapp.studio.models import Simulation, Study, Sweep
from webapp.studio.study_storage import close_storages

pytestmark = pytest.mark.django_db(transaction=True)

SPEC = {"kind": "train", "model": "gpt3-5b", "system": "dgx-h100", "gpus": 8, "gbs": 16}


@pytest.fixture(autouse=True, scope="module")
def storage_closed_after() -> Iterator[None]:
    yield
    close_storages()


@pytest.fixture(autouse=True)
def built_in_gpus(db: None) -> None:
    """The templates' GPUs as built-in records, as a seeded database holds them."""
    for gpu in {template.gpu for template in TEMPLATES.values()}:
        seeded_gpu(gpu)


@pytest.fixture
def eager() -> Iterator[None]:
    previous = app.conf.task_always_eager
    app.conf.task_always_eager = True
    yield
    app.conf.task_always_eager = previous


def body(**overrides: Any) -> dict[str, Any]:
    study: dict[str, Any] = {
        "name": "plans",
        "spec": {
            **SPEC,
            "axes": {"system": ["dgx-h100", "dgx-b200"], "tp": [1, 2, 3, 4, 8]},
            "uncertainty": {"samples": 3, "seed": 1},
        },
        "objectives": [{"metric": "cost_per_step_usd"}],
        "constraints": ["overall_time_s_high <= 5"],
        "seed": 2,
        "budget": {"runs": 8},
        "parallel": 2,
    }
    study.update(overrides)
    return study


def test_a_workload_study_runs_plans_and_fails_the_impossible_ones_with_their_reason(
    client: APIClient, eager: None
) -> None:
    response = client.post("/api/studies/", body(), format="json")
    assert response.status_code == 201, response.json()
    detail = client.get(f"/api/studies/{response.json()['id']}/").json()
    assert detail["status"] == "finished", detail
    trials = detail["progress"]["trials"]
    assert len(trials) == 8
    complete = [t for t in trials if t["state"] == "complete"]
    assert complete, trials
    for trial in trials:
        tp = trial["point"]["tp"]
        if tp == 3:  # never divides 8 GPUs: no run, the reason kept
            assert trial["state"] == "fail" and trial["simulation"] is None
            assert trial["error"].startswith("invalid plan (gpus): gpus (8) must be a multiple")
    for trial in complete:  # each ran its plan: the step `workload train` simulates
        point = trial["point"]
        plan = ParallelPlan(gpus=8, tp=point["tp"], gbs=16)
        alone = simulate_training(PRESETS["gpt3-5b"], plan, point["system"])
        metrics = trial["metrics"]
        assert metrics["overall_time_s"] == pytest.approx(alone["step_time_s"], rel=1e-9)
        assert metrics["cost_per_step_usd"] > 0
        assert metrics["cost_per_step_usd_low"] <= metrics["cost_per_step_usd_high"]
        run = Simulation.objects.get(pk=trial["simulation"])
        assert run.workload["kind"] == "train" and run.sweep_point["axes"] == point
    best = [t for t in trials if t["best"]]
    feasible = [t for t in complete if t["metrics"]["overall_time_s_high"] <= 5]
    assert best and {t["number"] for t in best} <= {t["number"] for t in feasible}
    cheapest = min(t["metrics"]["cost_per_step_usd"] for t in feasible)
    assert {t["metrics"]["cost_per_step_usd"] for t in best} == {cheapest}


def test_a_round_of_plans_that_cannot_run_asks_again_until_the_budget_is_spent(
    client: APIClient, eager: None
) -> None:
    """Every plan here is refused before it runs (neither 3 nor 5 divides 8 GPUs): each
    round's trials fail at once with no run, so the advance must go on asking within the
    same call, or the study would stay running with nothing in flight to advance it."""
    spec = {**SPEC, "axes": {"tp": [3, 5]}}
    response = client.post(
        "/api/studies/", body(spec=spec, budget={"runs": 5}, parallel=2), format="json"
    )
    assert response.status_code == 201, response.json()
    detail = client.get(f"/api/studies/{response.json()['id']}/").json()
    assert detail["status"] == "finished", detail
    trials = detail["progress"]["trials"]
    assert len(trials) == 5
    assert all(t["state"] == "fail" and t["simulation"] is None for t in trials)
    assert all(t["error"].startswith("invalid plan (gpus):") for t in trials)
    assert Simulation.objects.count() == 0


@pytest.mark.parametrize(
    ("spec", "field", "words"),
    [
        ({"axes": {"tp": [1, 0]}}, "spec.axes.tp[1]", "tp is a whole number of at least 1"),
        ({"axes": {"colour": [1, 2]}}, "spec.axes.colour", "Unknown plan axis"),
        ({"axes": {"system": ["dgx-h100", "dgx-z9"]}}, "spec.axes.system[1]", "one of"),
        ({"axes": {"tp": {"start": 1, "stop": 8, "step": 0}}}, "spec.axes.tp.step", ""),
        ({"axes": {"tp": [1, 2]}, "model": "gpt3-9t"}, "spec.model", "shipped model"),
        ({"axes": {"tp": [1, 2]}, "kind": "infer"}, "spec.kind", "training step"),
        ({"axes": {"tp": [1, 2]}, "gpus": None}, "spec.gpus", ""),
        ({"axes": {"dp": [1, 2]}}, "spec.gpus", "dp axis sets the GPUs"),
        ({"axes": {}}, "spec.axes", "plan axes"),
        ({"axes": {"tp": [1, 2]}, "uncertainty": {"samples": 1}}, "spec.uncertainty", ""),
    ],
)
def test_a_bad_workload_study_is_refused_naming_the_field_and_stores_nothing(
    client: APIClient, monkeypatch: pytest.MonkeyPatch, spec: dict[str, Any], field: str, words: str
) -> None:
    sent: list[int] = []
    monkeypatch.setattr(dispatch, "advance_study", lambda pk, countdown=None: sent.append(pk))
    merged = {**SPEC, **spec}
    merged = {k: v for k, v in merged.items() if v is not None}
    response = client.post("/api/studies/", body(spec=merged), format="json")
    assert response.status_code == 400
    errors = response.json()
    assert list(errors) == [field], errors
    assert words in errors[field][0]
    assert (Study.objects.count(), Sweep.objects.count(), sent) == (0, 0, [])


def test_a_workload_study_s_objective_is_one_of_its_runs_figures(
    client: APIClient, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(dispatch, "advance_study", lambda pk, countdown=None: None)
    response = client.post(
        "/api/studies/", body(objectives=[{"metric": "mfu_percent"}]), format="json"
    )
    assert response.status_code == 400
    assert list(response.json()) == ["objectives[0].metric"]


def test_a_plan_sweep_s_spec_is_searched_as_a_study_as_its_page_asks(
    client: APIClient, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The sweep page's "Search these axes with an optimiser" posts the sweep's own spec
    (frontend studies.js studyFromSweep): for a launched plan sweep, a workload study."""
    monkeypatch.setattr(dispatch, "send_runs", lambda simulations, **options: None)
    monkeypatch.setattr(dispatch, "advance_study", lambda pk, countdown=None: None)
    axes = {"system": ["dgx-h100", "dgx-b200"], "tp": [2, 4, 8]}
    launched = client.post(
        "/api/workloads/sweep/", {**SPEC, "axes": axes, "launch": True}, format="json"
    )
    assert launched.status_code == 201, launched.json()
    sweep = client.get(f"/api/sweeps/{launched.json()['sweep']}/").json()
    body = {
        "name": f"{sweep['name']} (search)",
        "spec": sweep["spec"],
        "objectives": [{"metric": "overall_time_s"}, {"metric": "cost_per_step_usd"}],
        "constraints": [],
        "budget": {"runs": 4},
        "parallel": 2,
    }
    response = client.post("/api/studies/", body, format="json")
    assert response.status_code == 201, response.json()
    study = Study.objects.get(pk=response.json()["id"])
    assert study.frozen["workload"] is True and study.axes == axes


def test_the_new_study_form_s_workload_body_is_a_workload_study(
    client: APIClient, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The body the Studies page's New study form posts for a training workload's plans
    (frontend WorkloadStudyNew, as StudyNew.test.jsx expects it): several templates the
    axis `system`, a range of GPUs, a list of TP values, the precision and data-parallel
    choices as plan fields, an interval of 4 samples."""
    monkeypatch.setattr(dispatch, "advance_study", lambda pk, countdown=None: None)
    spec = {
        "kind": "train",
        "model": "gpt3-5b",
        "precision": "fp8",
        "data_parallel": "zero1",
        "recompute": "selective",
        "gbs": 256,
        "axes": {
            "system": ["dgx-h100", "dgx-h200", "dgx-b200"],
            "gpus": {"start": 64, "stop": 512, "step": 64},
            "tp": [2, 4, 8],
            "pp": [1, 2, 4, 8],
        },
        "uncertainty": {"samples": 4},
    }
    form = {
        "name": "which GPU",
        "spec": spec,
        "objectives": [{"metric": "cost_per_step_usd", "direction": "min"}],
        "constraints": ["overall_time_s_high <= 5"],
        "sampler": "auto",
        "seed": 0,
        "budget": {"runs": 30, "wall_s": None},
        "parallel": 2,
    }
    response = client.post("/api/studies/", form, format="json")
    assert response.status_code == 201, response.json()
    study = Study.objects.get(pk=response.json()["id"])
    assert study.frozen["workload"] is True and study.axes == spec["axes"]
    refused = client.post(
        "/api/studies/",
        {**form, "spec": {**spec, "axes": {**spec["axes"], "tp": [1, 0]}}},
        format="json",
    )
    assert refused.status_code == 400
    assert list(refused.json()) == ["spec.axes.tp[1]"]
