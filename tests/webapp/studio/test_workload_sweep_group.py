"""A workload plan sweep launched as one sweep group (issue 44's question: which GPU and plan
trains Llama 3 70B cheapest under a step-time target, with error bars, shared with a second
user): POST /api/workloads/sweep/ with `launch`, its points the plans x cluster templates x
GPU counts, the impossible plans kept as failed points, the sweep's table giving the cost per
step from the records' prices with the Pareto front and the constraint's feasible points."""

from __future__ import annotations

from typing import Any

import pytest
from rest_framework.test import APIClient

from simulator.uncertainty import COMMITTED_TABLE
from simulator.workloads.cluster import TEMPLATES
from tests.hwdb.factories import seeded_gpu
from tests.webapp.studio.test_tasks import run_eagerly
from webapp.studio.models import Simulation, SimulationStatus, Sweep, SweepStatus

# The question on a small space: 2 templates x 2 GPU counts x tp 4/8 x pp 4/8.
QUESTION = {
    "model": "llama3-70b",
    "gbs": 64,
    # selective recomputation: tp 4 does not fit an H100's 80 GB, and fits a B200's 180 GB
    "recompute": "selective",
    "axes": {"system": ["dgx-h100", "dgx-b200"], "gpus": [64, 128], "tp": [4, 8], "pp": [4, 8]},
    "uncertainty": {"samples": 2, "seed": 1},
    "name": "70B: H100 vs B200",
    "launch": True,
}


@pytest.fixture(autouse=True)
def built_in_gpus(db: None) -> None:
    for gpu in sorted({template.gpu for template in TEMPLATES.values()}):
        seeded_gpu(gpu)


def _launch(client: APIClient, capture: Any, body: dict[str, Any]) -> dict[str, Any]:
    with capture(execute=True):
        response = client.post("/api/workloads/sweep/", body, format="json")
    assert response.status_code == 201, response.content
    return response.json()


def test_the_cheapest_plan_under_a_step_time_target_is_flagged_and_shared(
    client: APIClient,
    client_for: Any,
    other_user: Any,
    sent: list[list[int]],
    django_capture_on_commit_callbacks: Any,
) -> None:
    answer = _launch(client, django_capture_on_commit_callbacks, QUESTION)
    sweep = Sweep.objects.get(pk=answer["sweep"])
    children = list(sweep.simulations.order_by("pk"))
    assert len(children) == answer["size"] == 16
    # the impossible plans are failed points with the refusal's reason; the others queued once
    failed = [c for c in children if c.status == SimulationStatus.FAILED]
    assert len(failed) == 16 - answer["valid"] and failed
    for child in failed:
        reason = next(p for p in answer["points"] if p["simulation"] == child.pk)["invalid"]
        assert child.error["message"] == reason["reason"]
    assert sorted(pk for batch in sent for pk in batch) == sorted(
        c.pk for c in children if c.status == SimulationStatus.QUEUED
    )
    for child in children:
        if child.status == SimulationStatus.QUEUED:
            assert run_eagerly(child).status == SimulationStatus.SUCCEEDED, child.error
    sweep.refresh_from_db()
    assert sweep.status == SweepStatus.FINISHED

    table = client.get(f"/api/sweeps/{sweep.pk}/").json()
    rows = [r for r in table["points"] if r["status"] == SimulationStatus.SUCCEEDED]
    assert {r["system"] for r in rows} == {"dgx-h100", "dgx-b200"}
    # the cost per step is the GPUs' rental over the step (docs/cost.md), from the records
    rental = {"dgx-h100": 2.69, "dgx-b200": 5.98}
    for row in rows:
        expected = row["gpus"] * row["overall_time_s"] / 3600 * rental[row["system"]]
        assert row["cost_per_step_usd"] == pytest.approx(expected)
        # H100's interval comes from its measured kernel-model residual; B200's, never
        # measured, from the model's spec-mode error on the measured GPUs, and says so
        width = row["overall_time_s_high"] - row["overall_time_s_low"]
        assert width > 0, row
        assert row["interval_unmeasured"] == ""
        from_spec = row["interval_from_spec"]
        if row["system"] == "dgx-b200":
            assert from_spec.startswith("B200 SXM 180GB: from spec-mode error on other GPUs (")
            assert from_spec.endswith("not a B200 SXM 180GB measurement")
        else:
            assert from_spec == ""
        # the cost's interval is the time's, priced (the rental is linear in the time)
        price = row["cost_per_step_usd"] / row["overall_time_s"]
        assert row["cost_per_step_usd_low"] == pytest.approx(row["overall_time_s_low"] * price)
        assert row["cost_per_step_usd_high"] == pytest.approx(row["overall_time_s_high"] * price)

    # the CSV carries the same intervals and what the B200's rests on
    header = client.get(f"/api/sweeps/{sweep.pk}/results.csv").content.decode().splitlines()[0]
    for column in ("overall_time_s_high", "cost_per_step_usd_low", "interval_from_spec"):
        assert column in header.split(","), header

    # the target: the median of the successful steps' times, so some plans miss it
    times = sorted(r["overall_time_s"] for r in rows)
    target = times[len(times) // 2]
    query = {
        "x": "overall_time_s",
        "y": "cost_per_step_usd",
        "constraint": f"overall_time_s <= {target!r}",
    }
    flagged = client.get(f"/api/sweeps/{sweep.pk}/", query).json()
    under = [r for r in flagged["points"] if r["feasible"]]
    assert under and len(under) < len(rows)
    assert all(r["overall_time_s"] <= target for r in under)
    cheapest = min(under, key=lambda r: r["cost_per_step_usd"])
    front = [r for r in flagged["points"] if r["pareto"]]
    assert cheapest in front
    assert not any(r["pareto"] for r in flagged["points"] if not r["feasible"])

    # shared read-only with a second user, who sees the same table and flags
    shared = client.post(
        "/api/shares/", {"sweep": sweep.pk, "username": other_user.username}, format="json"
    )
    assert shared.status_code == 201, shared.json()
    seen = client_for(other_user).get(f"/api/sweeps/{sweep.pk}/", query).json()
    assert seen["access"] == "shared"
    assert seen["points"] == flagged["points"]
    assert client_for(other_user).post(f"/api/sweeps/{sweep.pk}/cancel/").status_code == 404


def test_a_b200_interval_comes_from_the_spec_mode_error_on_the_measured_gpus(
    client: APIClient, sent: list[list[int]], django_capture_on_commit_callbacks: Any
) -> None:
    body = {
        **QUESTION,
        "axes": {"system": ["dgx-b200", "dgx-h200"], "gpus": [64], "tp": [8], "pp": [4]},
    }
    answer = _launch(client, django_capture_on_commit_callbacks, body)
    b200, h200 = (Simulation.objects.get(pk=p["simulation"]) for p in answer["points"])
    b200, h200 = run_eagerly(b200), run_eagerly(h200)
    interval = b200.result["uncertainty"]
    assert interval["unmeasured"] == []
    spec = COMMITTED_TABLE["spec_mode"]["GPU kernel (current architectures)"]
    label = f"{spec['label']}, not a B200 SXM 180GB measurement"
    assert interval["from_spec_mode"] == [{"record": "B200 SXM 180GB", "label": label}]
    (perturbed,) = interval["perturbed"]  # one term: no attribute of the B200 was measured
    assert (perturbed["kind"], perturbed["record"]) == ("spec_mode", "B200 SXM 180GB")
    assert perturbed["log_sd"] == spec["log_sd"] and perturbed["label"] == label
    # at least the kernel-model residual measured on each GPU the error was taken from
    for record in spec["gpus"]:
        assert (
            spec["log_sd"]
            >= COMMITTED_TABLE["records"][record]["models"][perturbed["name"]]["log_sd"]
        )
    assert interval["overall_time_s"]["high"] > interval["overall_time_s"]["low"]
    # the H200's kernel times carry the kernel model's residual measured on the H200
    models = [p for p in h200.result["uncertainty"]["perturbed"] if p["kind"] == "model"]
    assert [(p["record"], p["name"]) for p in models] == [
        ("H200 SXM 141GB", "GPU kernel (current architectures)")
    ]
    assert h200.result["uncertainty"]["unmeasured"] == []
    assert h200.result["uncertainty"]["from_spec_mode"] == []


def test_a_sweep_whose_every_plan_is_refused_is_finished_at_launch(
    client: APIClient, sent: list[list[int]], django_capture_on_commit_callbacks: Any
) -> None:
    body = {**QUESTION, "axes": {"system": ["dgx-h100"], "gpus": [64], "tp": [16]}}
    answer = _launch(client, django_capture_on_commit_callbacks, body)
    sweep = Sweep.objects.get(pk=answer["sweep"])
    assert (answer["valid"], sweep.status, sent) == (0, SweepStatus.FINISHED, [])
    (row,) = client.get(f"/api/sweeps/{sweep.pk}/").json()["points"]
    assert row["status"] == SimulationStatus.FAILED and "more than the GPU's" in row["error"]
    # the failed point's run reads as any failed run: its error is the plan's refusal
    run = client.get(f"/api/simulations/{row['simulation']}/").json()
    assert run["status"] == "failed" and run["error"]["field"] == "memory"
