"""/api/workloads/: presets, a plan's check, a training step launched as a run of the normal
run machinery and its figures (issue 43 item 4; webapp/studio/services/workloads.py)."""

from __future__ import annotations

from typing import Any

import pytest
from django.core.cache import cache
from rest_framework.test import APIClient
from rest_framework.throttling import ScopedRateThrottle

from simulator.workloads.cluster import TEMPLATES
from simulator.workloads.config import PRESETS
from simulator.workloads.inference import InferencePlan, simulate_inference
from simulator.workloads.plan import ParallelPlan
from simulator.workloads.training import simulate_training
from tests.hwdb.factories import seeded_gpu
from tests.webapp.studio.test_tasks import run_eagerly
from webapp.studio.models import Simulation, SimulationStatus

SMALL = {"model": "llama3-8b", "system": "dgx-h100", "gpus": 4, "tp": 2, "pp": 2, "gbs": 4}
SMALL |= {"recompute": "full", "data_parallel": "zero1"}


@pytest.fixture(autouse=True)
def built_in_gpus(db: None) -> None:
    """The templates' GPUs as built-in records, as a seeded database holds them: the web
    side reads a GPU's record as the user sees it (hwdb.selectors.gpu_catalogue)."""
    for gpu in sorted({template.gpu for template in TEMPLATES.values()}):
        seeded_gpu(gpu)


def test_presets_list_the_shipped_models_and_clusters(client: APIClient) -> None:
    answer = client.get("/api/workloads/presets/").json()
    models = {model["name"]: model for model in answer["models"]}
    assert models["llama3-70b"]["layers"] == 80 and models["llama3-70b"]["source"]
    assert "llama3-405b" not in models and "llama3.1-405b" in models  # an alias once
    systems = {system["name"]: system for system in answer["systems"]}
    assert systems["dgx-h100"]["gpu_memory_bytes"] == 80 * 2**30
    assert systems["dgx-b200"]["gpu"] == "B200 SXM 180GB"
    # the links name the seed records they are read from, with their figures
    links = systems["dgx-h100"]["links"]
    assert links["nvlink"]["records"] == ["NVSwitch (HGX H100, NVLink 4)"]
    assert links["nvlink"]["bytes_per_s"] == TEMPLATES["dgx-h100"].nvlink_bytes_per_s
    assert links["network"]["records"][0] == "InfiniBand NDR 400 Gb/s (ConnectX-7)"
    assert "Quantum-2" in links["network"]["records"][1]
    assert links["network"]["latency_s"] == pytest.approx(2.99e-6)
    assert len(systems["dgx-a100"]["links"]["network"]["records"]) == 1  # no switch record
    assert answer["choices"]["recompute"] == ["none", "selective", "full"]


def test_the_check_answers_the_memory_per_gpu_by_part(client: APIClient) -> None:
    plan = {**SMALL, "model": "llama3-70b", "gpus": 64, "tp": 4, "pp": 8, "gbs": 128}
    plan |= {"recompute": "selective", "data_parallel": "zero1"}
    response = client.post("/api/workloads/check/", plan, format="json")
    assert response.status_code == 200, response.content
    memory = response.json()["memory"]
    assert set(memory) == {"weights", "gradients", "optimizer", "activations", "total"}
    assert memory["total"] == pytest.approx(sum(v for k, v in memory.items() if k != "total"))
    assert response.json()["gpu_memory_bytes"] == 80 * 2**30


@pytest.mark.parametrize(
    ("change", "field", "words"),
    [
        ({"recompute": "none", "mbs": 2}, "memory", "GiB per GPU"),
        ({"gpus": 60}, "gpus", "multiple of tp x pp x cp"),
        ({"tp": 3, "gpus": 48}, "tp", "must divide the heads"),
        ({"gbs": 3}, "gbs", "multiple of dp x mbs"),
        ({"tp": 0}, "tp", "positive whole number"),
        ({"system": "dgx-z9"}, "system", "dgx-h100"),
        ({"model": "llama9"}, "model", "llama3-70b"),
        ({"model": {"layers": 2}}, "model.hidden", "required"),
        ({"precision": "fp4"}, "precision", "bf16, fp8"),
    ],
)
def test_an_invalid_plan_is_refused_at_launch_naming_the_field(
    client: APIClient, sent: list[list[int]], change: dict[str, Any], field: str, words: str
) -> None:
    plan = {**SMALL, "model": "llama3-70b", "gpus": 64, "tp": 4, "pp": 8, "gbs": 128}
    plan |= {"recompute": "selective", "data_parallel": "zero1"} | change
    response = client.post("/api/workloads/", plan, format="json")
    assert response.status_code == 400, response.content
    (message,) = response.json()[field]
    assert words in message
    assert not Simulation.objects.exists() and sent == []


def test_memory_refusal_names_needed_and_available(client: APIClient) -> None:
    plan = {"model": "llama3-70b", "system": "dgx-h100", "gpus": 64, "tp": 4, "pp": 8}
    response = client.post("/api/workloads/", plan | {"gbs": 128}, format="json")
    (message,) = response.json()["memory"]
    assert "the plan needs 84.7 GiB per GPU" in message and "GPU's 80.0 GiB" in message


def test_a_launched_step_runs_as_a_run_and_gives_the_librarys_figures(
    client: APIClient, sent: list[list[int]], django_capture_on_commit_callbacks: Any
) -> None:
    with django_capture_on_commit_callbacks(execute=True):
        response = client.post("/api/workloads/", SMALL, format="json")
    assert response.status_code == 201, response.content
    launched = response.json()
    assert launched["status"] == "queued" and launched["figures"] is None
    simulation = Simulation.objects.get(pk=launched["simulation"])
    assert sent == [[simulation.pk]]  # queued for a worker, not run in the web process
    assert simulation.labels == {f"g{rank:05d}": 1 for rank in range(4)}
    assert run_eagerly(simulation).status == SimulationStatus.SUCCEEDED, simulation.error

    answer = client.get(f"/api/workloads/{simulation.pk}/").json()
    figures = answer["figures"]
    plan = ParallelPlan(gpus=4, tp=2, pp=2, gbs=4, recompute="full", data_parallel="zero1")
    expected = simulate_training(PRESETS["llama3-8b"], plan, "dgx-h100", symmetric=False)
    for key in ("step_time_s", "tokens_per_s_per_gpu", "model_tflops_per_gpu", "mfu"):
        assert figures[key] == pytest.approx(expected[key], rel=1e-9), key
    assert figures["memory"] == expected["memory"]
    assert figures["time_split_s"] == pytest.approx(expected["time_split_s"])


def test_an_evaluation_is_its_owners_only(
    client: APIClient, client_for: Any, other_user: Any, sent: list[list[int]]
) -> None:
    launched = client.post("/api/workloads/", SMALL, format="json").json()
    response = client_for(other_user).get(f"/api/workloads/{launched['simulation']}/")
    assert response.status_code == 404
    assert APIClient().get("/api/workloads/presets/").status_code in (401, 403)


def test_an_ordinary_run_is_not_a_workload(client: APIClient, user: Any, sent: Any) -> None:
    from tests.webapp.studio.conftest import launch

    run = launch(user)
    response = client.get(f"/api/workloads/{run.pk}/")
    assert response.status_code == 400
    assert "is not a workload evaluation" in response.json()["simulation"][0]


INFER = {"kind": "infer", "model": "llama3-8b", "system": "dgx-h100", "tp": 2}
INFER |= {"batch": 4, "input_len": 256, "output_len": 8}


def test_inference_runs_the_prefill_and_the_batch_and_gives_ttft_tpot_throughput(
    client: APIClient, sent: list[list[int]], django_capture_on_commit_callbacks: Any
) -> None:
    with django_capture_on_commit_callbacks(execute=True):
        response = client.post("/api/workloads/", INFER, format="json")
    assert response.status_code == 201, response.content
    launched = response.json()
    whole = Simulation.objects.get(pk=launched["simulation"])
    prefill = Simulation.objects.get(pk=launched["prefill"])
    assert sorted(pk for batch in sent for pk in batch) == sorted([whole.pk, prefill.pk])
    assert run_eagerly(whole).status == SimulationStatus.SUCCEEDED
    waiting = client.get(f"/api/workloads/{whole.pk}/").json()
    assert (waiting["status"], waiting["figures"]) == ("queued", None)  # its prefill is not run
    assert run_eagerly(prefill).status == SimulationStatus.SUCCEEDED

    figures = client.get(f"/api/workloads/{whole.pk}/").json()["figures"]
    plan = InferencePlan(tp=2, batch=4, input_len=256, output_len=8)
    expected = simulate_inference(PRESETS["llama3-8b"], plan, "dgx-h100")
    for key in ("ttft_s", "tpot_s", "output_tokens_per_s", "output_tokens_per_s_per_gpu"):
        assert figures[key] == pytest.approx(expected[key], rel=1e-9), key
    assert figures["memory"] == expected["memory"]
    assert client.get(f"/api/workloads/{prefill.pk}/").status_code == 400


def test_an_inference_batch_too_large_is_refused_with_its_kv_cache(
    client: APIClient, sent: list[list[int]]
) -> None:
    body = INFER | {"model": "llama3-70b", "batch": 512, "input_len": 4096}
    response = client.post("/api/workloads/", body, format="json")
    assert response.status_code == 400
    (message,) = response.json()["memory"]
    assert "KV cache" in message and "more than the GPU's 80.0 GiB" in message
    assert not Simulation.objects.exists() and sent == []
    bad = client.post("/api/workloads/", INFER | {"kind": "serve"}, format="json")
    assert "train, infer" in bad.json()["kind"][0]


def test_workload_launches_are_rate_limited_as_launches(
    client: APIClient, sent: list[list[int]], monkeypatch: pytest.MonkeyPatch
) -> None:
    cache.clear()
    monkeypatch.setattr(ScopedRateThrottle, "THROTTLE_RATES", {"launch": "1/min"})
    codes = [client.post("/api/workloads/", SMALL, format="json").status_code for _ in range(2)]
    assert codes == [201, 429]
    refused = client.post("/api/workloads/", SMALL, format="json").json()["detail"]
    assert refused.startswith("Launches are limited to 1 a minute per user")
    assert client.get("/api/workloads/presets/").status_code == 200
    cache.clear()


def test_a_custom_config_is_checked_and_its_name_kept_to_one_plain_line(
    client: APIClient,
) -> None:
    model = {"name": "tiny\nimport os", "layers": 4, "hidden": 512, "ffn": 2048, "heads": 8}
    model |= {"kv_heads": 8, "vocab": 1000, "seq": 256}
    plan = {"model": model, "system": "dgx-a100", "gpus": 2, "tp": 2, "gbs": 2}
    answer = client.post("/api/workloads/check/", plan, format="json").json()
    assert answer["model"] == "tinyimport os"
    assert answer["memory"]["weights"] > 0 and answer["gpu_memory_bytes"] == 80 * 2**30
    bad = client.post(
        "/api/workloads/check/", plan | {"model": model | {"heads": 7}}, format="json"
    )
    assert "hidden must be a multiple of heads" in bad.json()["model"][0]


def test_a_template_s_gpu_is_the_record_the_user_sees(
    client_for: Any, user: Any, other_user: Any
) -> None:
    mine = seeded_gpu("H100 SXM5 80GB", owner=user)  # a private copy with less memory
    mine.attributes.filter(key="memorySize").update(value=40 * 2**30)

    def memory(who: Any) -> float:
        systems = client_for(who).get("/api/workloads/presets/").json()["systems"]
        return next(s["gpu_memory_bytes"] for s in systems if s["name"] == "dgx-h100")

    assert memory(user) == 40 * 2**30
    assert memory(other_user) == 80 * 2**30
    # a plan that needs some 68 GiB per GPU: refused for the owner of the 40 GiB record only
    plan = {**SMALL, "gpus": 2, "tp": 2, "pp": 1, "gbs": 2, "data_parallel": "ddp"}
    theirs = client_for(other_user).post("/api/workloads/check/", plan, format="json")
    mine_answer = client_for(user).post("/api/workloads/check/", plan, format="json")
    assert theirs.status_code == 200, theirs.json()
    assert mine_answer.status_code == 400, mine_answer.json()


STREAM = {"model": "llama3-8b", "system": "dgx-h100", "requests": 40, "arrival_rate": 8.0}
STREAM |= {"input_len": "uniform:256:768", "output_len": 32, "seed": 5}


def test_a_request_stream_is_served_with_the_librarys_figures_not_in_the_web_process(
    client: APIClient, user: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    import simulator.workloads.serving
    from simulator.workloads.serving import LengthSpec, ServingPlan, simulate_serving

    cache.clear()
    plan = ServingPlan(
        requests=40,
        arrival_rate=8.0,
        input_len=LengthSpec.parse("uniform:256:768"),
        output_len=LengthSpec("fixed", 32),
        seed=5,
    )
    expected = simulate_serving(PRESETS["llama3-8b"], plan, "dgx-h100")

    def refuse(*args: object, **kwargs: object) -> None:
        raise AssertionError("the web process served the stream")

    for name in ("simulate_serving", "saturating_rate", "IterationTimer"):
        monkeypatch.setattr(simulator.workloads.serving, name, refuse)
    response = client.post("/api/workloads/serve/", STREAM, format="json")
    assert response.status_code == 200, response.content
    assert response.json() == expected
    assert set(response.json()["ttft_s"]) == {"mean", "median", "p90", "p99", "max"}
    assert not Simulation.objects.exists()
    assert cache.get(f"interactive-jobs:{user.pk}") == 0  # one of the user's jobs, given back


def test_a_private_gpu_record_serves_its_owner_and_no_one_else(
    client_for: Any, user: Any, other_user: Any
) -> None:
    from hwdb.models import Component

    cache.clear()
    mine = seeded_gpu("H100 SXM5 80GB", owner=user)  # a private copy with less memory
    mine.attributes.filter(key="memorySize").update(value=40 * 2**30)

    def serve(who: Any) -> Any:
        return client_for(who).post("/api/workloads/serve/", STREAM, format="json")

    assert serve(user).json()["kv_cache"]["gpu_memory_bytes"] == 40 * 2**30
    assert serve(other_user).json()["kv_cache"]["gpu_memory_bytes"] == 80 * 2**30
    # 16 GiB leaves no KV cache after Llama 3 8B's weights: refused for the owner only
    mine.attributes.filter(key="memorySize").update(value=16 * 2**30)
    refused = serve(user)
    assert refused.status_code == 400, refused.content
    assert "GPU's 16.0 GiB" in refused.json()["memory"][0]
    assert serve(other_user).status_code == 200
    # without the built-in record, the other user has no H100 to serve on
    Component.objects.filter(name="H100 SXM5 80GB", owner=None).delete()
    unseen = serve(other_user)
    assert unseen.status_code == 400, unseen.content
    assert "no GPU record 'H100 SXM5 80GB'" in unseen.json()["system"][0]
    assert serve(user).status_code == 400  # still the owner's 16 GiB record


def test_the_saturating_rate_comes_with_its_sweep(client: APIClient) -> None:
    cache.clear()
    body = STREAM | {"max_batch": 8, "requests": 16, "saturate": True}
    saturation = client.post("/api/workloads/serve/", body, format="json").json()["saturation"]
    assert saturation["requests"] == 32
    assert saturation["sustainable_rate"] < saturation["saturating_rate"]
    assert [p["unbounded_queue"] for p in saturation["points"]][-1] is True


# GenAI-Perf's measurement: 8 clients, the figures over the requests its windows count
MEASURED = {"requests": 2000, "max_concurrency": 8, "input_len": 4096, "output_len": 32}
MEASURED |= {"measurement_interval_s": 2}


def test_genai_perfs_measurement_is_served_as_the_library_measures_it(client: APIClient) -> None:
    from simulator.workloads.serving import LengthSpec, ServingPlan, simulate_serving

    cache.clear()
    plan = ServingPlan(
        requests=2000,
        arrival_rate=8.0,
        max_concurrency=8,
        measurement_interval_s=2.0,
        input_len=LengthSpec("fixed", 4096),
        output_len=LengthSpec("fixed", 32),
        seed=5,
    )
    response = client.post("/api/workloads/serve/", STREAM | MEASURED, format="json")
    assert response.status_code == 200, response.content
    result = response.json()
    assert result == simulate_serving(PRESETS["llama3-8b"], plan, "dgx-h100")
    assert result["plan"]["measurement_interval_s"] == 2.0
    assert result["measurement"]["windows"] == 3
    assert 0 < result["measurement"]["requests"] < 2000
    # left out or null: every request of the stream is measured
    unmeasured = STREAM | {"measurement_interval_s": None}
    assert (
        client.post("/api/workloads/serve/", unmeasured, format="json").json()["measurement"]
        is None
    )


@pytest.mark.parametrize(
    ("change", "field", "words"),
    [
        ({"requests": 5000}, "requests", "from 1 to 2,000"),
        ({"tp": 8, "pp": 16}, "tp", "at most 64 GPUs"),
        ({"arrival_rate": -1}, "arrival_rate", "positive number"),
        ({"input_len": "uniform:9"}, "input_len", "uniform:LOW:HIGH"),
        ({"max_concurrency": 0}, "max_concurrency", "positive whole number"),
        ({"measurement_interval_s": 0}, "measurement_interval_s", "positive number of seconds"),
        ({"measurement_interval_s": -2.5}, "measurement_interval_s", "positive number"),
        ({"measurement_interval_s": "2"}, "measurement_interval_s", "positive number"),
        ({"measurement_interval_s": True}, "measurement_interval_s", "positive number"),
        # the simulation's refusals: windows no request completes in, a stream too short
        (MEASURED | {"measurement_interval_s": 0.01}, "measurement_interval_s", "longer"),
        ({"measurement_interval_s": 30}, "requests", "requests must be more"),
        ({"gpu_memory_utilization": 1.5}, "gpu_memory_utilization", "at most 1"),
        ({"chunked_prefill": "yes"}, "chunked_prefill", "true or false"),
        ({"model": "llama3-70b"}, "memory", "leaving no KV cache"),
        ({"input_len": 600_000}, "plan", "more KV cache than the GPU keeps"),
        ({"output_len": 60_000}, "requests", "fewer or shorter"),
    ],
)
def test_a_bad_stream_is_refused_naming_the_field(
    client: APIClient, change: dict[str, Any], field: str, words: str
) -> None:
    cache.clear()
    response = client.post("/api/workloads/serve/", STREAM | change, format="json")
    assert response.status_code == 400, response.content
    (message,) = response.json()[field]
    assert words in message


SWEEP = {"model": "llama3-8b", "system": "dgx-h100", "gpus": 8, "gbs": 8, "recompute": "full"}


def test_a_plan_sweep_answers_every_point_the_impossible_ones_with_their_reason(
    client: APIClient, sent: list[list[int]]
) -> None:
    body = {**SWEEP, "axes": {"tp": [4, 8], "pp": {"start": 1, "stop": 2, "step": 1}}}
    response = client.post("/api/workloads/sweep/", body, format="json")
    assert response.status_code == 200, response.content
    answer = response.json()
    assert (answer["size"], answer["valid"]) == (4, 3)
    points = {(p["point"]["tp"], p["point"]["pp"]): p for p in answer["points"]}
    assert points[(8, 2)]["invalid"] == {
        "field": "gpus",
        "reason": "gpus (8) must be a multiple of tp x pp x cp (16)",
    }
    # each valid point's basis is the check's answer for that plan
    check = client.post("/api/workloads/check/", {**SWEEP, "tp": 4, "pp": 2}, format="json")
    assert points[(4, 2)]["basis"] == check.json()
    four, eight = points[(4, 1)]["basis"]["memory"], points[(8, 1)]["basis"]["memory"]
    assert eight["total"] == pytest.approx(four["total"] / 2)
    assert sent == [] and not Simulation.objects.exists()  # checked, nothing launched


def test_a_launched_plan_sweep_is_one_sweep_group_queueing_the_valid_plans_only(
    client: APIClient, sent: list[list[int]], django_capture_on_commit_callbacks: Any
) -> None:
    body = {**SWEEP, "axes": {"tp": [1, 8]}, "launch": True}
    with django_capture_on_commit_callbacks(execute=True):
        response = client.post("/api/workloads/sweep/", body, format="json")
    assert response.status_code == 201, response.content
    answer = response.json()
    first, second = answer["points"]
    assert first["invalid"]["field"] == "memory"
    refused = Simulation.objects.get(pk=first["simulation"])
    assert refused.status == SimulationStatus.FAILED
    assert refused.error["message"] == first["invalid"]["reason"]
    simulation = Simulation.objects.get(pk=second["simulation"])
    assert simulation.workload["kind"] == "train"
    assert simulation.sweep_id == refused.sweep_id == answer["sweep"]
    assert simulation.sweep_point["axes"] == {"tp": 8}
    assert sent == [[simulation.pk]]


@pytest.mark.parametrize(
    ("axes", "field", "words"),
    [
        ({"tp": [1, "x"]}, "axes.tp[1]", "tp is a whole number of at least 1"),
        ({"tensor": [2]}, "axes.tensor", "Unknown plan axis 'tensor'"),
        ({"tp": []}, "axes.tp", ""),
        ({"tp": list(range(1, 9)), "pp": [1, 2]}, "axes", "The sweep has 16 points; at most 10"),
        ({"tp": [1], "model": "nope"}, "model", "llama3-8b"),
    ],
)
def test_a_bad_plan_sweep_is_refused_naming_the_field(
    client: APIClient, settings: Any, axes: dict[str, Any], field: str, words: str
) -> None:
    settings.PARASIM_MAX_SWEEP = 10
    model = axes.pop("model", SWEEP["model"])  # a bad field outside the axes
    body = {**SWEEP, "model": model, "axes": axes}
    response = client.post("/api/workloads/sweep/", body, format="json")
    assert response.status_code == 400
    errors = response.json()
    assert field in errors, errors
    assert words in str(errors[field])


def test_a_checking_plan_sweep_is_not_a_launch_and_a_launching_one_is(
    client: APIClient, sent: list[list[int]], monkeypatch: pytest.MonkeyPatch
) -> None:
    cache.clear()
    monkeypatch.setattr(ScopedRateThrottle, "THROTTLE_RATES", {"launch": "1/min"})
    body = {**SWEEP, "axes": {"tp": [8]}}
    checks = [client.post("/api/workloads/sweep/", body, format="json") for _ in range(3)]
    assert [r.status_code for r in checks] == [200, 200, 200]
    launches = [
        client.post("/api/workloads/sweep/", {**body, "launch": True}, format="json")
        for _ in range(2)
    ]
    assert [r.status_code for r in launches] == [201, 429]
    cache.clear()


def test_a_custom_config_names_its_activation_and_gated_is_still_read(client: APIClient) -> None:
    """A squared-ReLU MLP (two matrices) holds fewer weights than the SwiGLU default (three);
    an unknown activation is refused naming the field."""
    model = {"name": "m", "layers": 4, "hidden": 512, "ffn": 2048, "heads": 8}
    model |= {"kv_heads": 8, "vocab": 1000, "seq": 256}
    plan = {"system": "dgx-a100", "gpus": 2, "tp": 2, "gbs": 2}
    weights = {}
    for name, extra in (
        ("swiglu", {}),
        ("squared-relu", {"activation": "squared-relu"}),
        ("gelu", {"gated": False}),
    ):
        answer = client.post(
            "/api/workloads/check/", plan | {"model": model | extra}, format="json"
        )
        assert answer.status_code == 200, answer.content
        weights[name] = answer.json()["memory"]["weights"]
    assert weights["squared-relu"] == weights["gelu"] < weights["swiglu"]
    bad = client.post(
        "/api/workloads/check/", plan | {"model": model | {"activation": "relu"}}, format="json"
    )
    assert bad.status_code == 400 and "squared-relu" in bad.json()["model.activation"][0]
