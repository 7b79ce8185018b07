"""Continuous batching over a request stream (simulator.workloads.serving): the properties
the issue names (an idle replica's TTFT is one prefill, throughput under the max-batch decode
ceiling, a seed gives one answer), the KV cache's limits and the arrival-rate sweep."""

from __future__ import annotations

import dataclasses
import json

import pytest

from simulator.workloads.config import PRESETS
from simulator.workloads.inference import InferencePlan, simulate_inference
from simulator.workloads.plan import PlanError
from simulator.workloads.serving import (
    IterationTimer,
    LengthSpec,
    ServingPlan,
    request_stream,
    saturating_rate,
    simulate_serving,
)

MODEL = PRESETS["llama3-8b"]
SPARSE = tuple(100.0 * i for i in range(4))


@pytest.mark.parametrize("chunked", [True, False])
def test_at_a_very_low_rate_the_ttft_is_one_prefill(chunked: bool) -> None:
    plan = ServingPlan(
        requests=len(SPARSE),
        arrivals=SPARSE,
        output_len=LengthSpec("fixed", 8),
        chunked_prefill=chunked,
    )
    result = simulate_serving(MODEL, plan, "dgx-h100")
    prefill = IterationTimer(MODEL, plan, "dgx-h100").prefill(1024)
    assert result["ttft_s"]["max"] == pytest.approx(prefill, rel=1e-12)
    assert result["ttft_s"]["median"] == pytest.approx(prefill, rel=1e-12)
    assert result["batch"]["max"] == 1


@pytest.mark.parametrize("tp", [1, 2])
def test_a_single_prefill_is_the_static_batchs_less_the_logits_of_the_prompt(tp: int) -> None:
    # the static batch's prefill computes the logits of every prompt token; a serving engine
    # those of the last only: the rest, with the TP transfers from the event engine, agree
    model = PRESETS["llama2-7b"]
    plan = ServingPlan(tp=tp)
    timer = IterationTimer(model, plan, "dgx-h100")
    static = simulate_inference(
        model, InferencePlan(tp=tp, batch=1, input_len=1024, output_len=1), "dgx-h100"
    )
    logits = timer.head(1024) - timer.head(1)
    assert timer.prefill(1024) + logits == pytest.approx(static["ttft_s"], rel=1e-6)


def test_the_transfers_are_affine_in_the_tokens() -> None:
    model = PRESETS["llama2-7b"]
    timer = IterationTimer(model, ServingPlan(tp=4), "dgx-h100")
    static = simulate_inference(
        model, InferencePlan(tp=4, batch=1, input_len=300, output_len=1), "dgx-h100"
    )
    logits = timer.head(300) - timer.head(1)
    assert timer.prefill(300) + logits == pytest.approx(static["ttft_s"], rel=1e-6)
    assert timer.comm_per_token > 0


@pytest.mark.parametrize("rate", [5.0, 40.0, None])
@pytest.mark.parametrize("max_batch", [8, 64])
def test_throughput_never_exceeds_the_static_max_batch_decode_rate(
    rate: float | None, max_batch: int
) -> None:
    plan = ServingPlan(
        requests=120,
        arrival_rate=rate,
        max_batch=max_batch,
        input_len=LengthSpec.parse("uniform:256:1024"),
        output_len=LengthSpec.parse("normal:64:16"),
    )
    result = simulate_serving(MODEL, plan, "dgx-h100")
    timer = IterationTimer(MODEL, plan, "dgx-h100")
    # no iteration yields more than max_batch tokens, and none is faster than the decode
    # step of max_batch requests at the shortest context
    ceiling = max_batch / timer.decode(max_batch, 1)
    assert result["output_tokens_per_s"] <= ceiling
    static = simulate_inference(
        MODEL, InferencePlan(batch=max_batch, input_len=256, output_len=2), "dgx-h100"
    )
    assert result["output_tokens_per_s"] <= max_batch / static["tpot_s"]
    assert result["batch"]["max"] <= max_batch
    assert result["batch"]["tokens_per_iteration"] <= plan.max_batched_tokens


def test_a_seed_gives_one_answer_and_another_seed_another() -> None:
    plan = ServingPlan(
        requests=60, arrival_rate=20.0, input_len=LengthSpec.parse("exponential:400")
    )
    first = simulate_serving(MODEL, plan, "dgx-h100")
    assert simulate_serving(MODEL, plan, "dgx-h100") == first
    other = simulate_serving(MODEL, dataclasses.replace(plan, seed=7), "dgx-h100")
    assert other["ttft_s"] != first["ttft_s"]
    # the lengths come from the seed alone: a rate does not change them
    slow = request_stream(dataclasses.replace(plan, arrival_rate=1.0))
    assert [r.prompt for r in slow] == [r.prompt for r in request_stream(plan)]


def test_a_small_kv_cache_preempts_and_still_serves_every_request() -> None:
    roomy = ServingPlan(
        requests=32, input_len=LengthSpec("fixed", 2048), output_len=LengthSpec("fixed", 256)
    )
    # llama2-7b keeps every head's K and V, 0.5 MiB a token: 0.9 of the H100's memory holds
    # the 32 requests at full length, 0.3 of it about ten
    tight = dataclasses.replace(roomy, gpu_memory_utilization=0.3)
    model = PRESETS["llama2-7b"]
    loose = simulate_serving(model, roomy, "dgx-h100")
    cramped = simulate_serving(model, tight, "dgx-h100")
    assert loose["preemptions"] == 0
    assert cramped["preemptions"] > 0
    assert cramped["kv_cache"]["tokens"] < 32 * (2048 + 256)
    assert cramped["kv_cache"]["peak_occupancy"] <= 1.0
    assert cramped["batch"]["max"] < loose["batch"]["max"] == 32
    assert cramped["output_tokens_per_s"] < loose["output_tokens_per_s"]
    assert cramped["e2e_latency_s"]["p99"] > loose["e2e_latency_s"]["p99"]


def test_a_request_longer_than_the_cache_or_weights_too_large_are_refused() -> None:
    with pytest.raises(PlanError, match="more KV cache than the GPU keeps"):
        simulate_serving(
            PRESETS["llama2-7b"],
            ServingPlan(requests=1, input_len=LengthSpec("fixed", 200_000)),
            "dgx-h100",
        )
    with pytest.raises(PlanError, match="leaving no KV cache"):
        simulate_serving(PRESETS["llama3-70b"], ServingPlan(requests=1), "dgx-h100")
    with pytest.raises(PlanError, match="longest prompt"):
        simulate_serving(
            MODEL,
            ServingPlan(requests=1, max_batched_tokens=512, chunked_prefill=False),
            "dgx-h100",
        )


@pytest.mark.parametrize(
    "text",
    [
        "0",
        "x",
        "uniform:5",
        "uniform:9:3",
        "uniform:1.5:1.9",
        "normal:0:3",
        "fixed:1.5",
        "poisson:3",
        "-4",
    ],
)
def test_bad_lengths_are_refused_with_the_field(text: str) -> None:
    with pytest.raises(PlanError, match=r"^input_len must be"):
        LengthSpec.parse(text, "input_len")


def test_drawn_lengths_stay_in_their_bounds() -> None:
    plan = ServingPlan(
        requests=500,
        input_len=LengthSpec.parse("uniform:100:200"),
        output_len=LengthSpec.parse("normal:5:50"),
    )
    stream = request_stream(plan)
    assert {r.prompt for r in stream} <= set(range(100, 201))
    assert min(r.output for r in stream) >= 1
    assert len({r.prompt for r in stream}) > 50


def test_the_queue_grows_without_bound_only_above_the_saturating_rate() -> None:
    plan = ServingPlan(
        requests=32,
        max_batch=16,
        output_len=LengthSpec("fixed", 32),
        input_len=LengthSpec("fixed", 512),
    )
    sweep = saturating_rate(MODEL, plan, "dgx-h100", steps=2)
    assert sweep["requests"] == 64
    assert sweep["sustainable_rate"] < sweep["saturating_rate"]
    for point in sweep["points"]:
        assert point["unbounded_queue"] == (point["arrival_rate"] >= sweep["saturating_rate"])
    lowest, highest = sweep["points"][0], sweep["points"][-1]
    assert highest["ttft_s"]["p90"] > 5 * lowest["ttft_s"]["p90"]
    assert sweep["saturating_batch"] <= 16


def test_the_command_line_serves_a_stream(capsys: pytest.CaptureFixture[str]) -> None:
    from simulator.cli import main

    code = main(
        [
            "workload",
            "infer",
            "--model",
            "llama3-8b",
            "--arrival-rate",
            "5",
            "--requests",
            "20",
            "--input-len",
            "uniform:128:512",
            "--output-len",
            "16",
            "--seed",
            "3",
            "--json",
            "-",
        ]
    )
    assert code == 0
    result = json.loads(capsys.readouterr().out)
    assert result["plan"]["input_len"] == "uniform:128:512"
    assert set(result["ttft_s"]) == {"mean", "median", "p90", "p99", "max"}
    assert result["requests_per_s"] > 0
    closed = ["workload", "infer", "--model", "llama3-8b", "--max-concurrency", "2"]
    assert main([*closed, "--requests", "6", "--output", "8", "--json", "-"]) == 0
    result = json.loads(capsys.readouterr().out)
    assert result["batch"]["max"] == 2 and result["plan"]["max_concurrency"] == 2
    assert main(["workload", "infer", "--model", "llama3-8b", "--input-len", "uniform:9"]) == 2
    assert "input_len must be" in capsys.readouterr().err


def test_a_client_concurrency_keeps_that_many_requests_in_flight() -> None:
    plan = ServingPlan(
        requests=40,
        max_concurrency=4,
        input_len=LengthSpec("fixed", 256),
        output_len=LengthSpec.parse("uniform:8:64"),
    )
    result = simulate_serving(MODEL, plan, "dgx-h100")
    assert result["batch"]["max"] == 4
    # each request is sent when a slot frees, so none waits in the engine's queue
    assert result["queueing_s"]["max"] < IterationTimer(MODEL, plan, "dgx-h100").decode(4, 320)
    timer = IterationTimer(MODEL, plan, "dgx-h100")
    assert result["ttft_s"]["median"] < 3 * timer.prefill(256)
    with pytest.raises(PlanError, match="max_concurrency must be"):
        simulate_serving(MODEL, dataclasses.replace(plan, max_concurrency=0), "dgx-h100")


@pytest.mark.parametrize("prompt", [4096, 16384])
def test_a_prompt_in_two_chunks_costs_the_whole_prompts_attention(prompt: int) -> None:
    # the second chunk's queries see the first chunk's keys and half their own on average
    timer = IterationTimer(MODEL, ServingPlan(), "dgx-h100")
    whole = timer.prefill_attention(prompt, prompt, 1)
    halves = timer.prefill_attention(prompt // 2, prompt // 2, 1) + timer.prefill_attention(
        prompt // 2, prompt, 1
    )
    assert halves == pytest.approx(whole, rel=0.05)
    assert timer.prefill_attention(prompt // 2, prompt, 1) > 1.4 * timer.prefill_attention(
        prompt // 2, prompt // 2, 1
    )


def test_without_chunked_prefill_a_preempted_request_longer_than_the_budget_still_runs() -> None:
    plan = ServingPlan(
        requests=24,
        chunked_prefill=False,
        max_batched_tokens=2048,
        input_len=LengthSpec("fixed", 2000),
        output_len=LengthSpec("fixed", 200),
        gpu_memory_utilization=0.25,
    )
    result = simulate_serving(PRESETS["llama2-7b"], plan, "dgx-h100")
    assert result["preemptions"] > 0
    assert result["requests_per_s"] > 0


def test_the_rate_sweep_serves_an_open_stream_even_from_a_closed_loop_plan() -> None:
    plan = ServingPlan(
        requests=16,
        max_batch=8,
        max_concurrency=2,
        input_len=LengthSpec("fixed", 256),
        output_len=LengthSpec("fixed", 16),
    )
    sweep = saturating_rate(MODEL, plan, "dgx-h100", steps=1)
    assert sweep["saturating_rate"] is not None
    assert max(p["batch_mean"] for p in sweep["points"]) > 2


def _measured(interval: float, requests: int = 4000) -> ServingPlan:
    return ServingPlan(
        requests=requests,
        max_concurrency=8,
        measurement_interval_s=interval,
        input_len=LengthSpec("fixed", 4096),
        output_len=LengthSpec("fixed", 32),
    )


def test_genai_perfs_windows_measure_the_first_requests_and_stop_after_three() -> None:
    # perf_analyzer sends every client's first request at once and counts it: they queue
    # behind each other's prefills, and weigh less the longer the windows
    short = simulate_serving(MODEL, _measured(2.0), "dgx-h100")
    long = simulate_serving(MODEL, _measured(8.0), "dgx-h100")
    prefill = IterationTimer(MODEL, _measured(2.0), "dgx-h100").prefill(4096)
    assert short["ttft_s"]["mean"] > long["ttft_s"]["mean"] > prefill
    for result, interval in ((short, 2.0), (long, 8.0)):
        measurement = result["measurement"]
        # every window counted a request: stable after the first three, 1.2 x the interval
        assert measurement["windows"] == 3 and measurement["stable"]
        assert measurement["span_s"] == pytest.approx(3 * 1.2 * interval)
        # the figures are over the measured requests alone, from the first send
        assert result["output_tokens_per_s"] * result["duration_s"] == pytest.approx(
            32 * measurement["requests"]
        )
        assert result["duration_s"] <= measurement["span_s"]
    every = dataclasses.replace(_measured(2.0), requests=64, measurement_interval_s=None)
    assert simulate_serving(MODEL, every, "dgx-h100")["measurement"] is None


def test_a_measurement_the_stream_cannot_fill_is_refused_naming_the_field() -> None:
    with pytest.raises(PlanError, match="requests must be more"):
        simulate_serving(MODEL, _measured(8.0, requests=20), "dgx-h100")
    # windows shorter than a request: never three in a row with a completed request
    with pytest.raises(PlanError, match="measurement_interval_s must be longer"):
        simulate_serving(MODEL, _measured(0.01), "dgx-h100")
    for bad in (0.0, -1.0, float("nan"), True):
        with pytest.raises(PlanError, match="measurement_interval_s must be a positive"):
            simulate_serving(
                MODEL, dataclasses.replace(_measured(1.0), measurement_interval_s=bad), "dgx-h100"
            )


MEASURED_FLAGS = [
    "workload",
    "infer",
    "--model",
    "llama3-8b",
    "--max-concurrency",
    "8",
    "--requests",
    "4000",
    "--input",
    "4096",
    "--output",
    "32",
]


def test_the_command_line_measures_as_genai_perf_does(capsys: pytest.CaptureFixture[str]) -> None:
    from simulator.cli import main

    assert main([*MEASURED_FLAGS, "--measurement-interval", "2", "--json", "-"]) == 0
    result = json.loads(capsys.readouterr().out)
    assert result == simulate_serving(MODEL, _measured(2.0), "dgx-h100")
    assert result["plan"]["measurement_interval_s"] == 2.0
    measurement = result["measurement"]
    assert measurement["windows"] == 3 and 0 < measurement["requests"] < 4000
    assert main([*MEASURED_FLAGS, "--measurement-interval", "2"]) == 0
    assert (
        f"measurement: {measurement['requests']} requests in 3 windows of 2.4 s (stable)"
        in capsys.readouterr().out
    )
    # without the flag every request is measured, and the text says nothing of windows
    assert main([*MEASURED_FLAGS, "--requests", "16"]) == 0
    assert "measurement:" not in capsys.readouterr().out
    # the flag alone serves a stream: 200 requests sent at once cannot fill the windows
    assert main(["workload", "infer", "--model", "llama3-8b", "--measurement-interval", "5"]) == 2
    assert "requests must be more" in capsys.readouterr().err


@pytest.mark.parametrize(
    ("text", "words"),
    [
        ("0", "measurement_interval_s must be a positive number, not 0.0"),
        ("-1", "measurement_interval_s must be a positive number, not -1.0"),
        ("nan", "measurement_interval_s must be a positive number, not nan"),
        ("inf", "measurement_interval_s must be a positive number, not inf"),
        ("two", "expected a number of seconds, not 'two'"),
    ],
)
def test_a_bad_measurement_interval_is_refused_naming_the_flag(
    text: str, words: str, capsys: pytest.CaptureFixture[str]
) -> None:
    from simulator.cli import main

    assert main([*MEASURED_FLAGS, f"--measurement-interval={text}"]) == 2
    assert f"argument --measurement-interval: {words}" in capsys.readouterr().err
