"""The workload library (simulator.workloads, docs/workloads.md): presets, plans, memory,
the generated training step and its symmetric simulation, and the validation report."""

from __future__ import annotations

import dataclasses
import json
import math
from typing import Any

import pytest

from simulator.workloads import training
from simulator.workloads.config import PRESETS, ModelConfig, load_model
from simulator.workloads.plan import (
    ParallelPlan,
    PlanError,
    Recompute,
    activation_bytes_per_token,
    check_memory,
    training_memory,
)
from simulator.workloads.training import simulate_training

TINY = ModelConfig("tiny", 4, 1024, 4096, 16, 4, 32000, 1024)


@pytest.mark.parametrize(
    ("name", "billions"),
    [
        # the sizes the sources name: Llama 3 paper Table 3 (8B, 70B, 405B), Llama 2 (7B,
        # 13B, 70B), Mixtral paper (47B total, 13B active), GPT-3 (175B)
        ("llama3-8b", 8.0),
        ("llama3-70b", 70.0),
        ("llama3.1-405b", 405.0),
        ("llama2-7b", 7.0),
        ("llama2-13b", 13.0),
        ("llama2-70b", 70.0),
        ("mixtral-8x7b", 47.0),
        ("gpt3-175b", 175.0),
        ("megatron-1008b", 1008.0),
    ],
)
def test_presets_have_the_published_sizes(name: str, billions: float) -> None:
    model = PRESETS[name]
    assert model.source
    assert model.params() / 1e9 == pytest.approx(billions, rel=0.04)


@pytest.mark.parametrize(
    ("name", "billions"),
    [
        # the sizes NVIDIA names them by (Nemotron-3 8B and 22B, Nemotron-4 15B and 340B)
        ("nemotron3-8b", 8.0),
        ("nemotron3-22b", 22.0),
        ("nemotron4-15b", 15.0),
        ("nemotron4-340b", 340.0),
    ],
)
def test_nemotron_presets_are_nemos_squared_relu_configs(name: str, billions: float) -> None:
    model = PRESETS[name]
    assert "nemotron.py" in model.source and model.activation == "squared-relu"
    assert model.mlp_matrices == 2 and not model.gated
    assert model.params() / 1e9 == pytest.approx(billions, rel=0.07)


def test_the_activation_sets_the_mlps_gemms_flops_memory_and_kernels() -> None:
    """A squared-ReLU MLP has two matrices, as GELU, where SwiGLU has three: its first GEMM
    has ffn columns (not 2 ffn), it counts 2 x 2 h f FLOPs per token, keeps one FFN-wide
    tensor for backward, and runs the ReLU and the square as two elementwise kernels."""
    swiglu = TINY
    relu2 = dataclasses.replace(TINY, activation="squared-relu")
    gelu = dataclasses.replace(TINY, activation="gelu")
    h, f = TINY.hidden, TINY.ffn
    assert swiglu.layer_params() - relu2.layer_params() == h * f
    per_layer = (swiglu.forward_flops_per_token() - relu2.forward_flops_per_token()) / TINY.layers
    assert per_layer == 2.0 * h * f
    assert relu2.forward_flops_per_token() == gelu.forward_flops_per_token()
    plan = ParallelPlan(gpus=1, gbs=1)
    seq = TINY.seq
    saved = activation_bytes_per_token(swiglu, plan, seq) - activation_bytes_per_token(
        relu2, plan, seq
    )
    assert saved == 2.0 * f
    record = training.gpu_record("H100 SXM5 80GB")
    timer = training.KernelTimer(record)
    kernels = {
        model.activation: training.layer_kernels(timer, model, plan, backward=False)
        for model in (swiglu, relu2, gelu)
    }
    fc1 = {name: next(k for k in ks if k.name == "fc1") for name, ks in kernels.items()}
    assert fc1["swiglu"].flops == 2 * fc1["squared-relu"].flops == 2 * fc1["gelu"].flops
    names = {
        name: [k.name for k in ks if k.name.startswith("activation")]
        for name, ks in kernels.items()
    }
    assert names == {
        "swiglu": ["activation"],
        "gelu": ["activation"],
        "squared-relu": ["activation_relu", "activation_square"],
    }
    with pytest.raises(ValueError, match="activation"):
        dataclasses.replace(TINY, activation="relu")


def test_a_model_file_may_still_say_gated(tmp_path: Any) -> None:
    fields = {"layers": 2, "hidden": 64, "ffn": 256, "heads": 4, "kv_heads": 4, "vocab": 100}
    path = tmp_path / "m.json"
    path.write_text(json.dumps(fields | {"seq": 32, "gated": False}))
    assert load_model(str(path)).activation == "gelu"
    path.write_text(json.dumps(fields | {"seq": 32, "activation": "squared-relu"}))
    assert load_model(str(path)).activation == "squared-relu"
    path.write_text(json.dumps(fields | {"seq": 32, "gated": True, "activation": "gelu"}))
    with pytest.raises(ValueError, match="not both"):
        load_model(str(path))


def test_mixtral_active_parameters() -> None:
    assert PRESETS["mixtral-8x7b"].params(active=True) / 1e9 == pytest.approx(13.0, rel=0.04)


def test_flops_per_token_is_megatron_eq3_without_recomputation() -> None:
    layers, h, s, v = 96, 16384, 2048, 51200
    model = ModelConfig(
        "gpt", layers, h, 4 * h, 128, 128, v, s, activation="gelu", tied_embeddings=True
    )
    eq3_no_recompute = 72.0 * s * layers * h * h * (1 + s / (6 * h) + v / (12 * layers * h))
    assert 3 * model.forward_flops_per_token() * s == pytest.approx(eq3_no_recompute, rel=1e-12)


def test_unknown_model_names_the_choices(tmp_path: Any) -> None:
    with pytest.raises(ValueError, match="llama3-70b"):
        load_model("llama9")
    path = tmp_path / "m.json"
    path.write_text(
        json.dumps(
            {
                "layers": 2,
                "hidden": 64,
                "ffn": 256,
                "heads": 4,
                "kv_heads": 4,
                "vocab": 100,
                "seq": 32,
                "bogus": 1,
            }
        )
    )
    with pytest.raises(ValueError, match="bogus"):
        load_model(str(path))
    path.write_text("layers: 2")
    with pytest.raises(ValueError, match=r"model file .*m\.json: not a JSON config"):
        load_model(str(path))
    path.write_text("[1, 2]")
    with pytest.raises(ValueError, match=r"m\.json: expected an object"):
        load_model(str(path))


@pytest.mark.parametrize(
    ("plan", "message"),
    [
        (ParallelPlan(gpus=12, tp=8), "multiple of tp x pp x cp"),
        (ParallelPlan(gpus=8, tp=2, mbs=1, gbs=6), "gbs"),
        (ParallelPlan(gpus=8, tp=32), "tp"),
        (ParallelPlan(gpus=8, ep=2, gbs=8), "mixture-of-experts"),
        (ParallelPlan(gpus=8, gbs=8, precision="fp4"), "precision"),
        (ParallelPlan(gpus=8, gbs=8, seq=-5), "seq must be a positive integer, not -5"),
        (ParallelPlan(gpus=8, gbs=8, seq=0), "seq must be a positive integer, not 0"),
        (ParallelPlan(gpus=8, gbs=8, attention="fused"), "attention must be one of"),
    ],
)
def test_invalid_plans_are_refused_with_the_field(plan: ParallelPlan, message: str) -> None:
    with pytest.raises(PlanError, match=message):
        simulate_training(TINY, plan, "dgx-h100")


def test_a_plan_that_does_not_fit_is_refused_with_the_figure() -> None:
    plan = ParallelPlan(gpus=8, tp=8, pp=1, mbs=1, gbs=8)
    with pytest.raises(PlanError, match=r"needs \d+\.\d GiB per GPU .* 80\.0 GiB"):
        simulate_training(PRESETS["llama3-70b"], plan, "dgx-h100")


@pytest.mark.parametrize(
    ("precision", "attention", "recompute", "per_h", "per_as"),
    [
        # Korthikanti et al. (arXiv:2205.05198) section 4.1: 34 s b h + 5 a s^2 b per layer
        ("bf16", "unfused", "none", 34, 5),
        ("bf16", "unfused", "selective", 34, 0),
        ("bf16", "flash", "selective", 34, 0),
        # FP8: the QKV, projection, FC1 (1 h each) and FC2 (4 h) inputs kept as FP8 copies
        ("fp8", "unfused", "selective", 27, 0),
        # FlashAttention keeps its BF16 output besides the projection's FP8 copy
        ("fp8", "flash", "selective", 29, 0),
    ],
)
def test_activation_bytes_follow_korthikanti_and_transformer_engines_fp8_copies(
    precision: str, attention: str, recompute: str, per_h: int, per_as: int
) -> None:
    model = PRESETS["gpt3-175b"]  # GELU MLP of 4h, as many KV heads as heads: the paper's layer
    plan = ParallelPlan(
        gpus=8,
        precision=precision,
        attention=attention,
        recompute=recompute,  # type: ignore[arg-type]
    )
    seq = 2048
    expected = per_h * model.hidden + per_as * model.heads * seq
    assert activation_bytes_per_token(model, plan, seq) == expected


def test_nemos_gpt3_175b_plan_fits_in_fp8_without_recomputation() -> None:
    """NeMo 24.12 ran GPT3-175B on 512 H100s (TP 4 PP 8 VP 6, mbs 2, the distributed
    optimizer) with no recomputation: its recipe (nemo/collections/llm/recipes/gpt3_175b.py)
    sets none. With FP8 activations counted as Transformer Engine keeps them it fits the
    80 GB; the same plan in BF16 does not."""
    plan = ParallelPlan(
        gpus=512,
        tp=4,
        pp=8,
        vp=6,
        mbs=2,
        gbs=2048,
        seq=2048,
        data_parallel="zero1",
        precision="fp8",
    )
    capacity = 80 * 2**30
    check_memory(training_memory(PRESETS["gpt3-175b"], plan), capacity)
    bf16 = dataclasses.replace(plan, precision="bf16")
    with pytest.raises(PlanError, match="GiB per GPU"):
        check_memory(training_memory(PRESETS["gpt3-175b"], bf16), capacity)


def test_the_generated_model_is_readable_python_with_the_collectives() -> None:
    plan = ParallelPlan(gpus=16, tp=2, pp=2, cp=2, mbs=1, gbs=8, data_parallel="zero1")
    timer = training.KernelTimer(training.gpu_record("H100 SXM5 80GB"))
    app = training.training_app(TINY, plan, training.step_tables(TINY, plan, timer))
    compile(app, "app", "exec")
    for call in (
        "sim.allreduce(",
        "sim.allgather(",
        "sim.reduceScatter(",
        "sim.p2pCommunicationSend(",
        "sim.computation(",
    ):
        assert call in app


@pytest.mark.parametrize(
    "plan",
    [
        ParallelPlan(gpus=16, tp=2, pp=2, mbs=1, gbs=16, data_parallel="ddp"),
        ParallelPlan(gpus=16, tp=2, pp=2, vp=2, mbs=1, gbs=16, data_parallel="zero1"),
        ParallelPlan(gpus=16, tp=2, pp=2, cp=2, mbs=1, gbs=8, recompute="full"),
    ],
)
def test_symmetric_simulation_gives_the_full_simulations_step(plan: ParallelPlan) -> None:
    symmetric = simulate_training(TINY, plan, "dgx-h100", symmetric=True)
    full = simulate_training(TINY, plan, "dgx-h100", symmetric=False)
    assert symmetric["symmetry"]["symmetric"] and not full["symmetry"]["symmetric"]
    assert symmetric["symmetry"]["simulated_ranks"] < full["symmetry"]["simulated_ranks"]
    assert symmetric["step_time_s"] == pytest.approx(full["step_time_s"], rel=1e-9)


def test_symmetric_simulation_with_expert_groups_over_replicas() -> None:
    moe = ModelConfig("tiny-moe", 4, 1024, 2048, 16, 4, 32000, 1024, experts=4, top_k=2)
    plan = ParallelPlan(gpus=32, tp=2, pp=2, ep=2, mbs=1, gbs=32)
    symmetric = simulate_training(moe, plan, "dgx-h100")
    full = simulate_training(moe, plan, "dgx-h100", symmetric=False)
    assert symmetric["symmetry"]["simulated_ranks"] < 32
    assert symmetric["step_time_s"] == pytest.approx(full["step_time_s"], rel=1e-9)


def test_mixture_of_experts_step_runs_with_expert_parallelism() -> None:
    moe = ModelConfig("tiny-moe", 4, 1024, 2048, 16, 4, 32000, 1024, experts=4, top_k=2)
    plan = ParallelPlan(gpus=8, tp=1, pp=2, ep=2, mbs=1, gbs=8)
    result = simulate_training(moe, plan, "dgx-h100")
    assert result["step_time_s"] > 0
    assert 0 < result["mfu"] < 1


def test_unfused_attention_is_two_batched_gemms_and_the_score_kernels() -> None:
    """Megatron-LM's 2021 attention (plan.attention "unfused"): Q K^T and P V over every score
    (the causal half included), the softmax and dropout reading and writing the FP16 scores
    at the DRAM bandwidth; slower than FlashAttention's one kernel for the same shape."""
    timer = training.KernelTimer(training.gpu_record("A100 SXM4 80GB"))
    flash = ParallelPlan(gpus=8, mbs=1, gbs=8)
    unfused = dataclasses.replace(flash, attention="unfused")
    heads, seq, d = TINY.heads, TINY.seq, TINY.head_dim
    for backward, gemms in ((False, 2), (True, 4)):
        kernels = training.layer_kernels(timer, TINY, unfused, backward=backward)
        attention = [k for k in kernels if k.name.startswith("attention")]
        assert sum(k.flops > 0 for k in attention) == gemms
        # every score's products: 2 s s d FLOPs per head per GEMM, no causal skipping
        assert sum(k.flops for k in attention) == gemms * 2.0 * heads * seq * seq * d
        softmax = next(k for k in attention if k.name.startswith("attention_softmax"))
        per_score = 6.0 if backward else 4.0
        expected = per_score * heads * seq * seq / timer.dram_bytes_per_s
        assert softmax.seconds == pytest.approx(timer.gpu.launch_overhead_s + expected)
        fused = training.layer_kernels(timer, TINY, flash, backward=backward)
        assert sum(k.seconds for k in attention) > sum(
            k.seconds for k in fused if k.name == "attention"
        )


def test_fp8_training_adds_transformer_engines_casts_and_keeps_the_logits_in_bf16() -> None:
    """FP8 training: each FP8 GEMM's input (forward) and output gradient (backward) cast and
    transposed at 4 bytes per element; inference keeps no such kernel; the logits GEMM runs in
    BF16 when training (Megatron-core's output layer is not a TE module)."""
    timer = training.KernelTimer(training.gpu_record("H100 SXM5 80GB"))
    plan = ParallelPlan(gpus=8, mbs=1, gbs=8, precision="fp8")
    tokens, h = TINY.seq, TINY.hidden
    forward = training.layer_kernels(timer, TINY, plan, backward=False, training=True)
    cast = next(k for k in forward if k.name == "qkv_fp8_cast")
    assert cast.seconds == pytest.approx(
        timer.gpu.launch_overhead_s + 4.0 * tokens * h / timer.dram_bytes_per_s
    )
    backward = training.layer_kernels(timer, TINY, plan, backward=True, training=True)
    assert sum(k.name.endswith("_fp8_cast_grad") for k in backward) == 4
    inference = training.layer_kernels(timer, TINY, plan, backward=False)
    assert not any("fp8_cast" in k.name for k in inference)
    bf16 = dataclasses.replace(plan, precision="bf16")
    logits = training.head_kernels(timer, TINY, plan, backward=False, training=True)[0]
    assert logits == training.head_kernels(timer, TINY, bf16, backward=False)[0]
    assert logits.seconds > training.head_kernels(timer, TINY, plan, backward=False)[0].seconds


def test_fp8_gemms_gain_transformer_engines_measured_ratio_not_the_datasheets() -> None:
    """A tensor-bound FP8 GEMM is BF16's time over the FP8 gain Transformer Engine measured
    on the same architecture (H200 NVL for Hopper: 31.968 / 16.785 ms per layer; B300 for
    Blackwell: 13.102 / 6.812), not over the datasheet's 2; an architecture without a
    measurement keeps the datasheet ratio and the result says so."""
    from simulator.workloads.kernels import fp8_gemm_speedup

    measured = fp8_gemm_speedup()
    assert measured[9] == pytest.approx(31.968 / 16.785)
    assert measured[10] == pytest.approx(13.102 / 6.812)
    timer = training.KernelTimer(training.gpu_record("H100 SXM5 80GB"))
    bf16 = timer.gemm("x", 16384, 16384, 16384, "bf16")
    fp8 = timer.gemm("x", 16384, 16384, 16384, "fp8")
    assert bf16.bound == fp8.bound == "tensor"
    assert bf16.seconds / fp8.seconds == pytest.approx(measured[9], rel=0.02)
    assert not timer.notes
    # the B200 record: its tensor term at the B300's measured gain (its GEMMs at this shape
    # are bound by the record's L2 bandwidth, which no ratio changes)
    timer = training.KernelTimer(training.gpu_record("B200 SXM 180GB"))
    eta = float(timer.sustained["tensor_efficiency"])
    rates = timer.gpu.tensor_rates
    peak_ratio = rates["tensorFLOPsPerCycleFP8"] / rates["tensorFLOPsPerCycleFP16"]
    assert timer.fp8_efficiency() == pytest.approx(eta * measured[10] / peak_ratio)
    ada = training.gpu_record("H100 SXM5 80GB") | {"computeCapability": 8.9}
    timer = training.KernelTimer(ada)
    bf16 = timer.gemm("x", 16384, 16384, 16384, "bf16")
    fp8 = timer.gemm("x", 16384, 16384, 16384, "fp8")
    assert bf16.seconds / fp8.seconds == pytest.approx(2.0, rel=0.02)
    assert any("datasheet" in note for note in timer.notes)


def test_fp8_param_gather_sends_the_layers_weights_in_fp8_and_grads_follow_their_dtype() -> None:
    """With fp8_param_gather the ZeRO-1 gather sends the layers' weights as 1 byte each and
    the embedding and output layer as 2; it needs FP8. The gradient buffer holds the
    reduction's bytes per weight (FP32 by default, BF16 with grad_reduce_bytes 2)."""
    timer = training.KernelTimer(training.gpu_record("H100 SXM5 80GB"))
    plan = ParallelPlan(gpus=16, mbs=1, gbs=16, precision="fp8", data_parallel="zero1")
    gathered = dataclasses.replace(plan, fp8_param_gather=True)
    bf16_weights = training.step_tables(TINY, plan, timer).weights[0]
    fp8_weights = training.step_tables(TINY, gathered, timer).weights[0]
    layers = TINY.layers * TINY.layer_params()
    assert bf16_weights - fp8_weights == pytest.approx(layers)
    assert fp8_weights == pytest.approx(layers + 2.0 * TINY.embedding_params())
    with pytest.raises(PlanError, match="fp8_param_gather"):
        dataclasses.replace(gathered, precision="bf16").check(TINY)
    fp32 = training_memory(TINY, plan).gradients
    bf16 = training_memory(TINY, dataclasses.replace(plan, grad_reduce_bytes=2)).gradients
    assert fp32 == 2 * bf16


def test_full_recomputation_reruns_the_forwards_tp_allreduces() -> None:
    timer = training.KernelTimer(training.gpu_record("H100 SXM5 80GB"))
    plan = ParallelPlan(gpus=8, tp=2, mbs=1, gbs=8)
    reruns: tuple[tuple[Recompute, int], ...] = (("none", 1), ("selective", 1), ("full", 2))
    for recompute, rerun in reruns:
        tables = training.step_tables(TINY, dataclasses.replace(plan, recompute=recompute), timer)
        assert tables.tp_bytes[0] > 0
        assert tables.tp_backward_bytes == [rerun * b for b in tables.tp_bytes]


def test_a_faster_gpu_or_fp8_shortens_the_step() -> None:
    plan = ParallelPlan(gpus=8, tp=2, pp=1, mbs=1, gbs=8)
    h100 = simulate_training(TINY, plan, "dgx-h100")["step_time_s"]
    a100 = simulate_training(TINY, plan, "dgx-a100")["step_time_s"]
    fp8 = simulate_training(
        TINY, ParallelPlan(gpus=8, tp=2, pp=1, mbs=1, gbs=8, precision="fp8"), "dgx-h100"
    )["step_time_s"]
    assert h100 < a100
    assert fp8 < h100


def test_inference_reports_ttft_tpot_and_refuses_a_kv_cache_too_large() -> None:
    from simulator.workloads.inference import InferencePlan, simulate_inference

    with pytest.raises(PlanError, match=r"^tp must be a positive integer"):
        simulate_inference(TINY, InferencePlan(tp=0), "dgx-h100")  # not its gpus (tp x pp)
    short = simulate_inference(
        TINY, InferencePlan(tp=2, batch=4, input_len=256, output_len=16), "dgx-h100"
    )
    longer = simulate_inference(
        TINY, InferencePlan(tp=2, batch=4, input_len=1024, output_len=16), "dgx-h100"
    )
    assert 0 < short["ttft_s"] < longer["ttft_s"]
    assert 0 < short["tpot_s"] <= longer["tpot_s"]  # a longer context: more KV cache to read
    assert short["request_latency_s"] == pytest.approx(
        short["ttft_s"] + 15 * short["tpot_s"], rel=1e-9
    )
    assert short["output_tokens_per_s"] == pytest.approx(4 * 16 / short["request_latency_s"])
    staged = simulate_inference(
        TINY, InferencePlan(tp=1, pp=2, batch=4, input_len=256, output_len=16), "dgx-h100"
    )
    assert staged["tpot_s"] > 0
    with pytest.raises(PlanError, match="KV cache"):
        simulate_inference(
            PRESETS["llama3-70b"],
            InferencePlan(tp=8, batch=1024, input_len=8192, output_len=128),
            "dgx-h100",
        )


def test_the_saturating_batch_is_one_of_the_sweep() -> None:
    from simulator.workloads.inference import InferencePlan, saturating_batch

    sweep = saturating_batch(TINY, InferencePlan(tp=1, input_len=256, output_len=8), "dgx-h100")
    batches = [p["batch"] for p in sweep["points"] if "output_tokens_per_s" in p]
    assert sweep["saturating_batch"] in batches
    rates = [p["output_tokens_per_s"] for p in sweep["points"] if "output_tokens_per_s" in p]
    assert rates[batches.index(sweep["saturating_batch"])] >= 0.95 * max(rates)


def test_simulator_command_line_workload(capsys: pytest.CaptureFixture[str]) -> None:
    """`python -m simulator workload ...`: figures in the field's terms, exit 2 with the
    reason for an impossible plan."""
    from simulator.cli import main

    code = main(
        [
            "workload",
            "infer",
            "--model",
            "llama3-8b",
            "--batch",
            "4",
            "--input",
            "256",
            "--output",
            "8",
            "--json",
            "-",
        ]
    )
    assert code == 0
    figures = json.loads(capsys.readouterr().out)
    assert figures["ttft_s"] > 0 and figures["tpot_s"] > 0
    code = main(
        ["workload", "train", "--model", "llama3-70b", "--gpus", "8", "--tp", "8", "--gbs", "8"]
    )
    assert code == 2
    assert "GiB per GPU" in capsys.readouterr().err
    assert main(["workload", "train", "--model", "nope", "--gpus", "8", "--gbs", "8"]) == 2
    capsys.readouterr()
    gather = ["workload", "train", "--model", "nemotron3-8b", "--gpus", "8", "--tp", "8"]
    gather += ["--gbs", "8", "--seq", "1024", "--zero1", "--fp8-param-gather", "--json", "-"]
    assert main(gather) == 2
    assert "fp8_param_gather needs precision fp8" in capsys.readouterr().err
    assert main([*gather, "--precision", "fp8"]) == 0
    assert json.loads(capsys.readouterr().out)["plan"]["fp8_param_gather"] is True
    steps = {}
    for attention in ("flash", "unfused"):
        argv = ["workload", "train", "--model", "llama3-8b", "--gpus", "8", "--tp", "8"]
        argv += ["--gbs", "8", "--seq", "2048", "--attention", attention, "--json", "-"]
        assert main(argv) == 0
        figures = json.loads(capsys.readouterr().out)
        assert figures["plan"]["attention"] == attention
        steps[attention] = figures["step_time_s"]
    assert steps["unfused"] > steps["flash"]


def test_overlapping_the_gradient_reduction_never_lengthens_the_step() -> None:
    plain = ParallelPlan(gpus=16, tp=2, pp=2, mbs=1, gbs=16, data_parallel="zero1")
    overlap = dataclasses.replace(plain, overlap_grad_reduce=True)
    assert (
        simulate_training(TINY, overlap, "dgx-h100")["step_time_s"]
        < simulate_training(TINY, plain, "dgx-h100")["step_time_s"]
    )
    with pytest.raises(PlanError, match="symmetric"):
        simulate_training(TINY, overlap, "dgx-h100", symmetric=False)


def test_fsdp_shards_the_states_and_runs_every_rank() -> None:
    ddp = ParallelPlan(gpus=8, tp=2, pp=1, mbs=1, gbs=8)
    fsdp = dataclasses.replace(ddp, data_parallel="fsdp")
    plain = simulate_training(TINY, ddp, "dgx-h100")
    sharded = simulate_training(TINY, fsdp, "dgx-h100")
    assert sharded["memory"]["weights"] == pytest.approx(plain["memory"]["weights"] / 4)
    assert sharded["memory"]["optimizer"] == pytest.approx(plain["memory"]["optimizer"] / 4)
    assert not sharded["symmetry"]["symmetric"]
    assert sharded["step_time_s"] > 0


def test_a_record_without_sfus_runs_and_says_what_was_left_out() -> None:
    plan = ParallelPlan(gpus=8, tp=2, pp=1, mbs=1, gbs=8)
    b200 = simulate_training(TINY, plan, "dgx-b200")
    h100 = simulate_training(TINY, plan, "dgx-h100")
    assert any("SFUs" in note for note in b200["notes"])
    assert h100["notes"] == []
    assert b200["step_time_s"] < h100["step_time_s"]


def test_the_emitted_model_runs_through_the_normal_command_line(
    tmp_path: Any, capsys: pytest.CaptureFixture[str]
) -> None:
    """`workload train --emit DIR` writes what `python -m simulator run` takes; its step is
    the full simulation's."""
    from simulator.cli import main

    args = ["--gpus", "16", "--tp", "2", "--pp", "2", "--mbs", "1", "--gbs", "16", "--zero1"]
    model = tmp_path / "tiny.json"
    model.write_text(
        json.dumps(
            {
                field: getattr(TINY, field)
                for field in ("layers", "hidden", "ffn", "heads", "kv_heads", "vocab", "seq")
            }
        )
    )
    assert (
        main(["workload", "train", "--model", str(model), *args, "--emit", str(tmp_path / "out")])
        == 0
    )
    capsys.readouterr()
    labels = (tmp_path / "out" / "labels.txt").read_text().strip()
    assert (
        main(
            [
                "run",
                "--system",
                str(tmp_path / "out" / "system.json"),
                "--app",
                str(tmp_path / "out" / "app.py"),
                "--labels",
                labels,
                "--no-sandbox",
                "--json",
                "-",
            ]
        )
        == 0
    )
    ran = json.loads(capsys.readouterr().out)
    plan = ParallelPlan(gpus=16, tp=2, pp=2, mbs=1, gbs=16, data_parallel="zero1")
    full = simulate_training(
        dataclasses.replace(TINY, name="tiny"), plan, "dgx-h100", symmetric=False
    )
    assert ran["overall_time_s"] == pytest.approx(full["step_time_s"], rel=1e-9)


def _published(pass_: str, causal: bool, head_dim: int) -> list[float]:
    from simulator.workloads.kernels import FLASH_ATTENTION_DATA

    data = json.loads(FLASH_ATTENTION_DATA.read_text(encoding="utf-8"))
    (table,) = [
        t
        for t in data["tables"]
        if (t["pass"], t["causal"], t["head_dim"]) == (pass_, causal, head_dim)
    ]
    return [float(v) for v in table["tflops"]]


def test_flash_attention_table_gives_the_published_points_and_interpolates_between() -> None:
    """FlashAttention-3's published H100 BF16 TFLOPs/s (arXiv:2407.08608, Figures 5 and 6)
    are returned at their points, linear in log2 of length and head dim between them, clamped
    outside; the causal backward, not published, scales the backward by the forward's
    causal/non-causal ratio."""
    from simulator.workloads.kernels import flash_attention_table

    table = flash_attention_table()
    peak = table.peak_tflops
    fwd = _published("forward", False, 128)
    assert table.lookup("forward", False, 128, 4096) * peak == pytest.approx(fwd[3])
    mid = table.lookup("forward", False, 128, 2896) * peak  # 2^11.5
    assert mid == pytest.approx((fwd[2] + fwd[3]) / 2, rel=1e-3)
    assert table.lookup("forward", False, 128, 128) * peak == pytest.approx(fwd[0])
    assert table.lookup("forward", False, 128, 1 << 20) * peak == pytest.approx(fwd[-1])
    d64, d128 = _published("backward", False, 64), _published("backward", False, 128)
    assert table.lookup("backward", False, 90, 512) * peak == pytest.approx(
        d64[0] + (d128[0] - d64[0]) * (math.log2(90) - 6), rel=1e-6
    )
    assert table.lookup("backward", False, 256, 512) * peak == pytest.approx(d128[0])
    causal = table.lookup("backward", True, 128, 8192) * peak
    ratio = _published("forward", True, 128)[4] / _published("forward", False, 128)[4]
    assert causal == pytest.approx(d128[4] * ratio)


def test_h100_attention_runs_at_the_published_flash_attention_3_rate() -> None:
    """The figures' own shape (16k tokens, 16 heads of 128, sequence 4096) on the H100 record
    is timed at the published forward and backward TFLOPs/s (up to the launch); the GEMMs'
    sustained rate, which the tile model gave it before, is faster than either."""
    from simulator.workloads.kernels import KernelTimer, gpu_record

    timer = KernelTimer(gpu_record("H100 SXM5 80GB"))
    heads, seq, d = 4 * 16, 4096, 128
    for backward, causal, published in (
        (False, False, _published("forward", False, 128)[3]),
        (False, True, _published("forward", True, 128)[3]),
        (True, False, _published("backward", False, 128)[3]),
    ):
        kernel = timer.attention("attention", heads, seq, seq, d, backward, causal)
        flops = 4.0 * heads * seq * seq * d * (0.5 if causal else 1.0) * (2.5 if backward else 1)
        assert flops / kernel.seconds / 1e12 == pytest.approx(published, rel=0.02)
        assert kernel.bound == "tensor_published"
    assert not timer.notes


def _published_cudnn(pass_: str, causal: bool, head_dim: int) -> list[float]:
    from simulator.workloads.kernels import FLASH_ATTENTION_DATA

    data = json.loads(FLASH_ATTENTION_DATA.read_text(encoding="utf-8"))
    (table,) = [
        t
        for t in data["cudnn_tables"]
        if (t["pass"], t["causal"], t["head_dim"]) == (pass_, causal, head_dim)
    ]
    return [float(v) for v in table["tflops"]]


def test_cudnn_attention_runs_at_the_published_cudnn_rate_and_plans_accept_it() -> None:
    """plan.attention "cudnn" (Transformer Engine's fused attention on Hopper) times the
    figures' own shape at the cuDNN bars of FlashAttention-3's Figures 5 and 6, each below
    FlashAttention-3's bar there; a training plan's layer uses it, keeping no scores in
    memory as FlashAttention does."""
    from simulator.workloads.kernels import KernelTimer, gpu_record, layer_kernels
    from simulator.workloads.plan import training_memory

    timer = KernelTimer(gpu_record("H100 SXM5 80GB"))
    heads, seq, d = 4 * 16, 4096, 128
    for backward, causal, published in (
        (False, False, _published_cudnn("forward", False, 128)[3]),
        (False, True, _published_cudnn("forward", True, 128)[3]),
        (True, False, _published_cudnn("backward", False, 128)[3]),
    ):
        cudnn = timer.attention("attention", heads, seq, seq, d, backward, causal, "cudnn")
        flash = timer.attention("attention", heads, seq, seq, d, backward, causal)
        flops = 4.0 * heads * seq * seq * d * (0.5 if causal else 1.0) * (2.5 if backward else 1)
        assert flops / cudnn.seconds / 1e12 == pytest.approx(published, rel=0.02)
        assert cudnn.seconds > flash.seconds
    model = PRESETS["llama3-8b"]
    plans = {
        kind: ParallelPlan(gpus=8, mbs=1, gbs=8, seq=4096, precision="fp8", attention=kind)
        for kind in ("flash", "cudnn")
    }
    times = {}
    for kind, plan in plans.items():
        plan.check(model)
        (kernel,) = [
            k for k in layer_kernels(timer, model, plan, backward=True) if k.name == "attention"
        ]
        times[kind] = kernel.seconds
    assert times["cudnn"] > times["flash"]
    assert (
        training_memory(model, plans["cudnn"]).total == training_memory(model, plans["flash"]).total
    )
    with pytest.raises(PlanError, match="attention"):
        ParallelPlan(gpus=8, gbs=8, attention="sdpa").check(model)


def test_attention_before_hopper_keeps_the_tile_model_and_blackwell_says_its_rule() -> None:
    from simulator.workloads.kernels import KernelTimer, gpu_record

    a100 = KernelTimer(gpu_record("A100 SXM4 80GB"))
    kernel = a100.attention("attention", 64, 4096, 4096, 128, True)
    assert kernel.bound != "tensor_published"
    assert any("before Hopper" in note for note in a100.notes)
    b200 = KernelTimer(gpu_record("B200 SXM 180GB"))
    b200.attention("attention", 64, 4096, 4096, 128, False)
    assert any("FlashAttention-3's published H100 efficiency" in n for n in b200.notes)


def test_data_parallel_collectives_over_nodes_use_every_nic_of_the_group() -> None:
    """A data-parallel group with several GPUs on each of several nodes reduces as NCCL's
    rings do, leaving each node through all of their NICs (the hierarchical schedule), not
    as one flat ring through the one NIC where it leaves each node."""
    plan = ParallelPlan(gpus=16, tp=2, mbs=1, gbs=16, data_parallel="zero1")
    timer = training.KernelTimer(training.gpu_record("H100 SXM5 80GB"))
    tables = training.step_tables(TINY, plan, timer)
    snapshot = training.cluster_snapshot(training.TEMPLATES["dgx-h100"], plan.gpus)
    app = training.training_app(TINY, plan, tables, phases=("reduce",), pipeline=False)
    assert 'DP_ALGORITHM = "auto"' in app
    flat = app.replace('DP_ALGORITHM = "auto"', 'DP_ALGORITHM = "ring"')
    ranks = training._ranks(plan, replicas=None, stages=None, tp_cp=False)
    assert len({rank // 8 for rank in ranks}) == 2 and len(ranks) == 8  # 4 per node
    grouped = training._run(snapshot, app, ranks)["overall_time_s"]
    ring = training._run(snapshot, flat, ranks)["overall_time_s"]
    # the ring's inter-node hops carry all the data through one 50 GB/s NIC per node
    one_nic = (plan.dp - 1) / plan.dp * tables.gradient[0] / 50e9
    assert ring == pytest.approx(one_nic, rel=0.1)
    assert grouped < 0.5 * ring


@pytest.mark.parametrize("sequence_parallel", [True, False])
def test_activation_bytes_over_tp_follow_korthikanti_with_and_without_sequence_parallelism(
    sequence_parallel: bool,
) -> None:
    # arXiv:2205.05198: per layer, eq. 2 s b h (34 / t + 5 a s / (h t)) with sequence
    # parallelism, eq. 1 s b h (10 + 24 / t + 5 a s / (h t)) without
    model = PRESETS["gpt3-175b"]
    plan = ParallelPlan(gpus=8, tp=8, attention="unfused", sequence_parallel=sequence_parallel)
    seq, h, t = 2048, model.hidden, 8
    scores = 5 * model.heads * seq / t
    expected = (34 * h / t if sequence_parallel else 10 * h + 24 * h / t) + scores
    assert activation_bytes_per_token(model, plan, seq) == pytest.approx(expected, rel=1e-12)
    # with full recomputation a layer keeps its input: 2 s b h / t, or 2 s b h on every rank
    full = dataclasses.replace(plan, recompute="full", gbs=1)
    per_layer = training_memory(model, full).activations / math.ceil(model.layers)
    assert per_layer == 2.0 * seq * h / (t if sequence_parallel else 1)


def test_without_sequence_parallelism_each_tp_rank_runs_the_norms_and_residuals_whole() -> None:
    timer = training.KernelTimer(training.gpu_record("H100 SXM5 80GB"))

    def streams(plan: ParallelPlan) -> dict[str, float]:
        kernels = training.layer_kernels(timer, TINY, plan, backward=False)
        return {k.name: k.seconds for k in kernels if k.name in ("norms", "residual")}

    one = streams(ParallelPlan(gpus=1))
    split = streams(ParallelPlan(gpus=4, tp=4))
    whole = streams(ParallelPlan(gpus=4, tp=4, sequence_parallel=False))
    assert whole == one and set(one) == {"norms", "residual"}
    launch = timer.streaming("empty", 0.0).seconds  # each kernel's launch, not split
    assert split == pytest.approx({n: (s - launch) / 4 + launch for n, s in one.items()})


def test_inference_runs_no_sequence_parallelism() -> None:
    # an engine's row-parallel GEMMs all-reduce their output: every TP rank has the whole
    # activation (simulator.workloads.inference.SEQUENCE_PARALLEL)
    from simulator.workloads import inference

    plan = inference.InferencePlan(tp=2, batch=8, input_len=128, output_len=8)
    assert inference._as_training(TINY, plan).sequence_parallel is False


def test_a_sequence_parallel_that_is_not_a_boolean_is_refused_by_name() -> None:
    plan = ParallelPlan(gpus=4, tp=4, sequence_parallel="yes")  # type: ignore[arg-type]
    with pytest.raises(PlanError, match="sequence_parallel must be true or false"):
        plan.check(TINY)


def test_fsdp_reduce_scatters_the_gradients_in_their_reduction_bytes() -> None:
    # FSDP_GRADIENT_BYTES: grad_reduce_bytes a weight (4: FP32; 2: a BF16 reduction, as
    # PyTorch's FSDP infers from a mixed precision without reduce_dtype)
    timer = training.KernelTimer(training.gpu_record("H100 SXM5 80GB"))
    plan = ParallelPlan(gpus=8, mbs=1, gbs=8, data_parallel="fsdp")
    fp32 = training.step_tables(TINY, plan, timer)
    bf16 = training.step_tables(TINY, dataclasses.replace(plan, grad_reduce_bytes=2), timer)
    assert fp32.fsdp_gradient_bytes == [2 * b for b in fp32.fsdp_bytes]  # BF16 weights
    assert bf16.fsdp_gradient_bytes == fp32.fsdp_bytes
