"""A request stream is served in the sandbox's child (simulator.workloads.serving_sandbox),
never in the process that asks: the child's answer is the one `simulate_serving` gives here,
its GPU is the catalogue's that travels with the payload, a plan it refuses raises PlanError
with the same message, and a stream that outlasts the limits is refused naming `requests`."""

from __future__ import annotations

import dataclasses

import pytest

import simulator.workloads.serving
from simulator.gpu_catalogue import GpuCatalogue, GpuRecord, seed_catalogue
from simulator.workloads.config import PRESETS
from simulator.workloads.plan import PlanError
from simulator.workloads.serving import LengthSpec, ServingPlan, saturating_rate, simulate_serving
from simulator.workloads.serving_sandbox import (
    SERVE_LIMITS,
    ServingSandboxError,
    serve_in_sandbox,
)

MODEL = PRESETS["llama3-8b"]
# given arrival times and a drawn length: every part of the plan must reach the child
PLAN = ServingPlan(
    tp=2,
    requests=6,
    arrivals=(0.0, 0.0, 0.01, 0.02, 0.5, 0.5),
    input_len=LengthSpec.parse("normal:512:128"),
    output_len=LengthSpec("fixed", 16),
    seed=3,
    max_batch=4,
)


def refuse_here(monkeypatch: pytest.MonkeyPatch) -> None:
    """Make serving a stream in this process fail the test."""

    def refuse(*args: object, **kwargs: object) -> None:
        raise AssertionError("the stream was served in the calling process")

    for name in ("simulate_serving", "saturating_rate", "IterationTimer"):
        monkeypatch.setattr(simulator.workloads.serving, name, refuse)


def test_a_stream_is_served_in_another_process_as_here(monkeypatch: pytest.MonkeyPatch) -> None:
    expected = simulate_serving(MODEL, PLAN, "dgx-h100")
    sweep = saturating_rate(MODEL, PLAN, "dgx-h100", steps=4)
    refuse_here(monkeypatch)
    answer = serve_in_sandbox(
        model=MODEL, plan=PLAN, system="dgx-h100", catalogue=seed_catalogue(), saturate=True
    )
    assert answer.pop("saturation") == sweep
    assert answer == expected
    assert answer["plan"]["arrivals"] == "given" and answer["plan"]["input_len"] == "normal:512:128"


def test_the_gpu_is_the_catalogue_s_sent_and_no_other(monkeypatch: pytest.MonkeyPatch) -> None:
    seed = seed_catalogue()
    h100 = seed.get("H100 SXM5 80GB")
    smaller = GpuRecord(h100.name, {**h100.attributes, "memorySize": float(40 * 2**30)})
    plan = dataclasses.replace(PLAN, tp=1)
    refuse_here(monkeypatch)
    answer = serve_in_sandbox(
        model=MODEL,
        plan=plan,
        system="dgx-h100",
        catalogue=GpuCatalogue([smaller], where="your records"),
    )
    assert answer["kv_cache"]["gpu_memory_bytes"] == 40 * 2**30
    only_a100 = GpuCatalogue([seed.get("A100 SXM4 40GB")], where="your records")
    with pytest.raises(ServingSandboxError) as caught:
        serve_in_sandbox(model=MODEL, plan=plan, system="dgx-h100", catalogue=only_a100)
    assert caught.value.field == "system"
    assert "no GPU record 'H100 SXM5 80GB' in your records" in caught.value.message


def test_a_plan_the_simulation_refuses_raises_its_plan_error() -> None:
    plan = ServingPlan(requests=1)
    with pytest.raises(PlanError) as here:
        simulate_serving(PRESETS["llama3-70b"], plan, "dgx-h100")
    with pytest.raises(PlanError) as there:
        serve_in_sandbox(
            model=PRESETS["llama3-70b"], plan=plan, system="dgx-h100", catalogue=seed_catalogue()
        )
    assert str(there.value) == str(here.value)
    assert "leaving no KV cache" in str(there.value)


def test_a_stream_past_the_limits_is_refused_naming_requests() -> None:
    with pytest.raises(ServingSandboxError) as caught:
        serve_in_sandbox(
            model=MODEL,
            plan=ServingPlan(requests=2000, max_batch=8),
            system="dgx-h100",
            catalogue=seed_catalogue(),
            saturate=True,
            limits=SERVE_LIMITS.replace(wall_s=1.0, cpu_s=1),
        )
    assert caught.value.field == "requests"
    assert "within the sandbox's limits" in caught.value.message


def test_genai_perfs_measurement_reaches_the_child_and_is_checked_there(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    measured = ServingPlan(
        requests=4000,
        max_concurrency=8,
        measurement_interval_s=2.0,
        input_len=LengthSpec("fixed", 4096),
        output_len=LengthSpec("fixed", 32),
    )
    expected = simulate_serving(MODEL, measured, "dgx-h100")
    bad = dataclasses.replace(measured, measurement_interval_s=-1.0)
    with pytest.raises(PlanError) as here:
        simulate_serving(MODEL, bad, "dgx-h100")
    refuse_here(monkeypatch)
    answer = serve_in_sandbox(
        model=MODEL, plan=measured, system="dgx-h100", catalogue=seed_catalogue()
    )
    assert answer == expected
    assert answer["measurement"]["windows"] == 3
    assert answer["plan"]["measurement_interval_s"] == 2.0
    with pytest.raises(PlanError) as there:
        serve_in_sandbox(model=MODEL, plan=bad, system="dgx-h100", catalogue=seed_catalogue())
    assert str(there.value) == str(here.value)
    assert "measurement_interval_s must be a positive number" in str(there.value)
