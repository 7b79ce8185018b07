"""The kernels of one transformer layer by shape, timed by the GPU models (docs/workloads.md
"Kernels"): GEMMs and FlashAttention by simulator.models.gemm on the current-architecture
GPU's record, attention on Hopper and later at least as slow as FlashAttention-3's published
H100 rates (FlashAttentionTable), norms and elementwise kernels by their bytes over the DRAM
bandwidth."""

from __future__ import annotations

import bisect
import dataclasses
import json
import math
from collections.abc import Mapping
from dataclasses import dataclass
from functools import cache
from pathlib import Path

from simulator.gpu_catalogue import GpuCatalogue, seed_catalogue
from simulator.models.gemm import (
    attention_work,
    estimate_tiled,
    gemm_work,
    select_gemm_tile,
    sustained_terms,
)
from simulator.models.gpu_current import TENSOR_PRECISIONS, CurrentGpu
from simulator.workloads.config import ModelConfig
from simulator.workloads.plan import ParallelPlan

# FlashAttention-2's backward pass runs five matrix products per tile where the forward runs
# two (Dao, arXiv:2307.08691, section 3.1.2), and reads Q, K, V, O and dO.
ATTENTION_BACKWARD_FLOPS = 2.5
ATTENTION_BACKWARD_BYTES = 2.0
# Bytes per attention score of the unfused path's memory-bound kernels (FP16 scores):
# Megatron's fused scale-mask-softmax reads the scores and writes the probabilities (2 + 2),
# and backward reads the probabilities and their gradient and writes the scores' (3 x 2);
# the attention dropout (Megatron's default --attention-dropout 0.1) reads the
# probabilities and writes the dropped ones and a one-byte mask (2 + 2 + 1), backward reads
# the gradient and the mask and writes the gradient (2 + 1 + 2).
UNFUSED_SOFTMAX_BYTES = 4.0
# Bytes per element of Transformer Engine's FP8 cast around a training GEMM (its Linear and
# LayerNormLinear modules, transformer_engine/pytorch/module/linear.py): forward, the BF16
# input is read and written as FP8 and as its FP8 transpose (the wgrad GEMM's operand; FP8
# GEMMs on Hopper take TN layouts only), 2 + 1 + 1 bytes; backward, the output's BF16
# gradient likewise (cast_transpose with the bias gradient). The weights' casts, once per
# step (first micro-batch), and the amax and scale updates are left out.
TE_CAST_BYTES = 4.0
UNFUSED_SOFTMAX_BWD_BYTES = 6.0
UNFUSED_DROPOUT_BYTES = 5.0
# The MLP activation's elementwise kernels by ModelConfig.activation, each with the BF16
# tensors of the FFN's width it reads and writes (backward moves twice the forward's bytes,
# as every streaming kernel here). "swiglu" one fused kernel reading the gate and up halves
# and writing their product (3); "gelu" one fused bias-GELU (2); "squared-relu" as NeMo's
# Nemotron runs it, torch.pow(torch.relu(x), 2) (nemo/collections/llm/fn/activation.py) in
# eager PyTorch: NemotronConfig does not set Megatron-core's bias_activation_fusion (its
# fusion covers GELU and SwiGLU only), so a ReLU kernel and a square kernel, each reading and
# writing the whole tensor (2 + 2).
ACTIVATION_KERNELS: dict[str, tuple[tuple[str, int], ...]] = {
    "swiglu": (("activation", 3),),
    "gelu": (("activation", 2),),
    "squared-relu": (("activation_relu", 2), ("activation_square", 2)),
}


# A GEMM's tile is picked by its shape (simulator.models.gemm.select_gemm_tile, G.8): the
# small-M tiles and split-K for a few rows (decode), 256 x 128 x 64 for the rest.
# FP8 GEMMs against BF16 GEMMs as Transformer Engine measured them, kernels alone (inputs
# pre-quantized: the casts are kernels of their own here, TE_CAST_BYTES), on a Hopper and a
# Blackwell GPU (the file gives the source): the datasheets' FP8 rate is twice BF16's, the
# kernels gain 1.90 (H200 NVL) and 1.92 (B300). An FP8 GEMM's tensor term runs at the
# record's sustained fraction eta (measured in BF16, docs/gemm-model.md) times the measured
# gain over the peak ratio, so that FP8 over BF16 is the measured ratio, not the datasheet's.
FP8_GEMM_SPEEDUP_DATA = (
    Path(__file__).resolve().parents[1] / "models" / "data" / "fp8_gemm_speedup.json"
)


@cache
def fp8_gemm_speedup() -> dict[int, float]:
    """The measured FP8 over BF16 GEMM time ratio by compute capability major version:
    each GPU's per-layer BF16 GEMM time over its FP8 one (FP8_GEMM_SPEEDUP_DATA)."""
    data = json.loads(FP8_GEMM_SPEEDUP_DATA.read_text(encoding="utf-8"))
    return {
        int(g["compute_capability_major"]): g["bf16_ms"]["layer"] / g["fp8_ms"]["layer"]
        for g in data["gpus"]
    }


# FlashAttention-3's published BF16 forward and backward TFLOPs/s on an H100 SXM5 by head dim,
# sequence length and causal mask (Shah et al., arXiv:2407.08608, Figures 5 and 6; the file
# gives the source of each figure).
FLASH_ATTENTION_DATA = (
    Path(__file__).resolve().parents[1] / "models" / "data" / "flash_attention.json"
)
# Hopper and later run the published FlashAttention-3 kernels' efficiency; Blackwell (compute
# capability 10 and later) takes Hopper's fraction of its own dense BF16 peak, as no Blackwell attention figure
# is committed, and the result says so. Ampere keeps the tile model: the FlashAttention-2
# paper's A100 figures were not found in a form that could be committed.
FLASH_ATTENTION_MIN_CC = 9.0
FLASH_ATTENTION_MEASURED_CC = 10.0


@dataclass(frozen=True)
class FlashAttentionTable:
    """Published TFLOPs/s over the GPU's dense BF16 peak: efficiency[(pass, causal, head_dim)]
    gives one value per sequence length of `seq_lens`."""

    peak_tflops: float
    seq_lens: tuple[int, ...]
    efficiency: Mapping[tuple[str, bool, int], tuple[float, ...]]

    def lookup(self, pass_: str, causal: bool, head_dim: int, seq: int) -> float:
        """The published efficiency at `head_dim` and `seq`, linear in log2 of each between
        the published points and clamped outside them. A causal backward is not published:
        it is the backward without the mask scaled by the forward's causal/non-causal ratio
        at the same head dim and length (the mask skips the same tiles in both passes)."""
        if pass_ == "backward" and causal:
            ratio = self.lookup("forward", True, head_dim, seq) / self.lookup(
                "forward", False, head_dim, seq
            )
            return self.lookup("backward", False, head_dim, seq) * ratio
        dims = sorted(d for p, c, d in self.efficiency if p == pass_ and c == causal)
        x = math.log2(min(max(seq, self.seq_lens[0]), self.seq_lens[-1]))
        xs = [math.log2(s) for s in self.seq_lens]

        def at(dim: int) -> float:
            ys = self.efficiency[(pass_, causal, dim)]
            i = min(max(bisect.bisect_right(xs, x) - 1, 0), len(xs) - 2)
            t = (x - xs[i]) / (xs[i + 1] - xs[i])
            return ys[i] + t * (ys[i + 1] - ys[i])

        d = min(max(head_dim, dims[0]), dims[-1])
        j = min(max(bisect.bisect_right(dims, d) - 1, 0), len(dims) - 1)
        if j == len(dims) - 1:
            return at(dims[j])
        lo, hi = dims[j], dims[j + 1]
        t = (math.log2(d) - math.log2(lo)) / (math.log2(hi) - math.log2(lo))
        return at(lo) + t * (at(hi) - at(lo))


# The published attention kernels by plan.attention: "flash" FlashAttention-3's bars, "cudnn"
# the cuDNN bars of the same figures (the fused attention Transformer Engine runs on Hopper).
ATTENTION_TABLES = {"flash": "tables", "cudnn": "cudnn_tables"}


@cache
def flash_attention_table(kernel: str = "flash") -> FlashAttentionTable:
    """The published efficiency of `kernel` ("flash" or "cudnn", ATTENTION_TABLES)."""
    data = json.loads(FLASH_ATTENTION_DATA.read_text(encoding="utf-8"))
    peak = float(data["peak_tflops"])
    efficiency = {
        (t["pass"], bool(t["causal"]), int(t["head_dim"])): tuple(v / peak for v in t["tflops"])
        for t in data[ATTENTION_TABLES[kernel]]
    }
    return FlashAttentionTable(peak, tuple(int(s) for s in data["seq_lens"]), efficiency)


def gpu_record(name: str, catalogue: GpuCatalogue | None = None) -> dict[str, float]:
    """Return a GPU's attributes from `catalogue` (simulator.gpu_catalogue: the records a
    web user may see), by default the project's hardware seed; raise GpuNotFound (a
    ValueError)."""
    record = (catalogue or seed_catalogue()).get(name)
    return {key: float(value) for key, value in record.attributes.items()}


@dataclass(frozen=True)
class Kernel:
    name: str
    seconds: float
    flops: float
    bound: str


class KernelTimer:
    """Times kernels on one GPU record. GEMMs run the tile select_gemm_tile picks for their
    shape, in thread-block clusters (TMA multicast) on Hopper and later, without on Ampere."""

    def __init__(self, attributes: Mapping[str, float]) -> None:
        self.attributes = dict(attributes)
        self.gpu = CurrentGpu.from_attributes(self.attributes)
        # thread-block clusters from Hopper (compute capability 9) on
        self.clusters = self.attributes.get("computeCapability", 0) >= 9
        per_sm, _ = self.gpu.memory_bandwidth_per_sm(l2_resident=False, footprint_bytes=None)
        self.dram_bytes_per_s = per_sm * self.gpu.base.sms * self.gpu.base.sm_clock_hz
        self.memory_bytes = float(self.attributes["memorySize"])
        # the record's sustained tensor fraction and tile-load L2 bandwidth (G.2, G.4)
        self.sustained = sustained_terms(self.attributes)
        # what the timing had to leave out for this record, reported with the result
        self.notes: set[str] = set()

    @cache  # noqa: B019 - a timer lives as long as its run and shapes repeat per layer
    def gemm(self, name: str, m: int, n: int, k: int, precision: str) -> Kernel:
        tile = select_gemm_tile(m, n, k, sms=self.gpu.base.sms, clusters=self.clusters)
        work = gemm_work(
            m=m,
            n=n,
            k=k,
            precision=precision,
            tile_m=tile.tile_m,
            tile_n=tile.tile_n,
            tile_k=tile.tile_k,
            cluster_m=tile.cluster_m,
            cluster_n=tile.cluster_n,
            split_k=tile.split_k,
            output_bytes=2,
        )
        sustained = self.sustained
        if precision == "fp8":
            sustained = {**sustained, "tensor_efficiency": self.fp8_efficiency()}
        estimate = estimate_tiled(self.gpu, work, **sustained)
        return Kernel(name, estimate.time_s, 2.0 * m * n * k, estimate.bound)

    def fp8_efficiency(self) -> float:
        """The FP8 GEMMs' eta: BF16's times the measured FP8 gain over the record's FP8 to
        BF16 peak ratio (fp8_gemm_speedup), for the measured architectures; BF16's eta (the
        datasheet ratio) elsewhere, and the result says so."""
        eta = float(self.sustained["tensor_efficiency"] or 1.0)
        fp8 = self.gpu.tensor_rates.get(TENSOR_PRECISIONS["fp8"][0], 0.0)
        bf16 = self.gpu.tensor_rates.get(TENSOR_PRECISIONS["bf16"][0], 0.0)
        measured = fp8_gemm_speedup().get(int(self.attributes.get("computeCapability", 0.0)))
        if measured is None or fp8 <= 0 or bf16 <= 0:
            self.notes.add(
                "FP8 GEMMs run at the datasheet's FP8 peak over BF16's: no measured FP8 GEMM "
                "gain is committed for this architecture"
            )
            return eta
        return min(1.0, eta * measured / (fp8 / bf16))

    @cache  # noqa: B019
    def attention(
        self,
        name: str,
        batch_heads: int,
        seq_q: int,
        seq_k: int,
        head_dim: int,
        backward: bool,
        causal: bool = True,
        kernel: str = "flash",
    ) -> Kernel:
        work = attention_work(
            batch_heads=batch_heads,
            seq_q=seq_q,
            seq_k=seq_k,
            head_dim=head_dim,
            precision="bf16",
            causal=causal,
        )
        if "SFUs" not in self.attributes:
            # the record gives no special-function units: the exponentials' term (G.3)
            # cannot be timed, so it is left out and the result says so
            self.notes.add(
                "the GPU record has no SFUs: attention's exponential term (G.3) is left out"
            )
            work = dataclasses.replace(work, tile_sfu_ops=0.0)
        if backward:
            work = dataclasses.replace(
                work,
                tile_flops=work.tile_flops * ATTENTION_BACKWARD_FLOPS,
                tile_bytes=work.tile_bytes * ATTENTION_BACKWARD_BYTES,
                minimum_bytes=work.minimum_bytes * ATTENTION_BACKWARD_BYTES,
            )
        estimate = estimate_tiled(self.gpu, work, **self.sustained)
        seconds: float = estimate.time_s
        bound: str = estimate.bound
        published = self.published_attention_s(
            batch_heads, seq_q, seq_k, head_dim, backward, causal, kernel
        )
        if published is not None and published > seconds:
            seconds, bound = published, "tensor_published"
        return Kernel(name, seconds, work.tiles * work.tile_flops, bound)

    def published_attention_s(
        self,
        batch_heads: int,
        seq_q: int,
        seq_k: int,
        head_dim: int,
        backward: bool,
        causal: bool,
        kernel: str = "flash",
    ) -> float | None:
        """Attention's time at FlashAttention-3's published efficiency (FlashAttentionTable),
        or cuDNN's from the same figures with `kernel` "cudnn", for Hopper and later; None
        for earlier GPUs. The FLOPs are counted as the published
        figures count them: 4 Sq Sk d per head forward, halved with the causal mask (with
        context parallelism Sq = Sk / cp and the mask covers half of all ranks' scores),
        five halves of that for backward; the efficiency is looked up at Sk, the keys each query tile runs
        over, and applied to the record's own dense BF16 peak. The kernel takes the slower of
        this and the tile model, whose memory terms still bound short-query (decode) shapes
        the figures do not cover."""
        cc = self.attributes.get("computeCapability", 0.0)
        if cc < FLASH_ATTENTION_MIN_CC:
            self.notes.add(
                "attention on a GPU before Hopper is timed by the FlashAttention tile model at "
                "the GEMMs' sustained rate: no published A100 FlashAttention-2 figures are "
                "committed"
            )
            return None
        if cc >= FLASH_ATTENTION_MEASURED_CC:
            self.notes.add(
                "attention is timed at FlashAttention-3's published H100 efficiency applied "
                "to this GPU's dense BF16 peak: no published figures for its own attention "
                "kernels are committed"
            )
        rate_name, _ = TENSOR_PRECISIONS["bf16"]
        peak = self.gpu.tensor_rates.get(rate_name, 0.0) * self.gpu.base.sms
        peak *= self.gpu.base.sm_clock_hz
        if peak <= 0:
            return None
        table = flash_attention_table(kernel)
        efficiency = table.lookup("backward" if backward else "forward", causal, head_dim, seq_k)
        flops = 4.0 * batch_heads * seq_q * seq_k * head_dim * (0.5 if causal else 1.0)
        if backward:
            flops *= ATTENTION_BACKWARD_FLOPS
        return self.gpu.launch_overhead_s + flops / (efficiency * peak)

    def streaming(self, name: str, nbytes: float) -> Kernel:
        """A memory-bound kernel (norm, activation, residual add, optimizer): its bytes over
        the DRAM bandwidth plus a launch."""
        seconds = self.gpu.launch_overhead_s + nbytes / self.dram_bytes_per_s
        return Kernel(name, seconds, 0.0, "global_memory")


def layer_kernels(
    timer: KernelTimer,
    model: ModelConfig,
    plan: ParallelPlan,
    *,
    backward: bool,
    training: bool = False,
) -> list[Kernel]:
    """One layer's kernels for one micro-batch on one GPU (its TP, CP and EP share).
    Backward: each GEMM's data- and weight-gradient products (dX = dY W^T, dW = X^T dY).
    `training` with FP8: Transformer Engine's casts around each FP8 GEMM (TE_CAST_BYTES)."""
    prec = plan.precision
    seq = (plan.seq or model.seq) // plan.cp
    tokens = plan.mbs * seq
    h, tp = model.hidden, plan.tp
    act = 2.0 * tokens * h  # bytes of one BF16 activation of the layer's width
    gemms: list[tuple[str, int, int, int, int]] = [
        ("qkv", tokens, model.qkv_out // tp, h, 1),
        ("proj", tokens, h, h // tp, 1),
    ]
    if model.experts == 1:
        up = model.ffn * (2 if model.gated else 1) // tp
        gemms += [("fc1", tokens, up, h, 1), ("fc2", tokens, h, model.ffn // tp, 1)]
    else:
        # each EP rank's local experts get the tokens routed to them from the EP group
        local = model.experts // plan.ep
        per_expert = max(1, math.ceil(tokens * model.top_k * plan.ep / model.experts))
        up = model.ffn * (2 if model.gated else 1) // tp
        gemms += [
            ("router", tokens, model.experts, h, 1),
            ("expert_fc1", per_expert, up, h, local),
            ("expert_fc2", per_expert, h, model.ffn // tp, local),
        ]
    kernels: list[Kernel] = []
    casts = training and prec == "fp8"
    for name, m, n, k, count in gemms:
        if not backward:
            kernels += [timer.gemm(name, m, n, k, prec)] * count
            if casts:
                kernels += [timer.streaming(name + "_fp8_cast", TE_CAST_BYTES * m * k)] * count
        else:
            kernels += [timer.gemm(name + "_dgrad", m, k, n, prec)] * count
            kernels += [timer.gemm(name + "_wgrad", k, n, m, prec)] * count
            if casts:
                kernels += [timer.streaming(name + "_fp8_cast_grad", TE_CAST_BYTES * m * n)] * count
    heads = plan.mbs * model.heads // tp
    if plan.attention == "unfused":
        kernels += unfused_attention(timer, heads, seq, seq * plan.cp, model.head_dim, backward)
    else:
        kernels.append(
            timer.attention(
                "attention",
                heads,
                seq,
                seq * plan.cp,
                model.head_dim,
                backward,
                kernel=plan.attention,
            )
        )
    ffn_local = model.ffn * model.top_k / tp
    # the norms and residual adds run on the rank's share of the sequence: 1/t of it with
    # sequence parallelism, all of it without (ParallelPlan.sequence_parallel)
    stream = [
        ("norms", 2 * 2 * act / plan.split_sequence),
        ("residual", 2 * 3 * act / plan.split_sequence),
        *(
            (name, tensors * 2.0 * tokens * ffn_local)
            for name, tensors in ACTIVATION_KERNELS[model.activation]
        ),
        ("rope", 2 * 2.0 * tokens * model.qkv_out / tp),
    ]
    factor = 2.0 if backward else 1.0
    kernels += [timer.streaming(name, factor * nbytes) for name, nbytes in stream]
    return kernels


def unfused_attention(
    timer: KernelTimer, heads: int, seq_q: int, seq_k: int, head_dim: int, backward: bool
) -> list[Kernel]:
    """Megatron-LM's attention before FlashAttention (Narayanan et al., SC'21, section 4.2;
    plan.attention "unfused"): for `heads` heads, the scores S = Q K^T (seq_q x seq_k x d)
    and O = P V (seq_q x d x seq_k) as batched GEMMs over every score, the causal mask
    applied by the softmax rather than skipped; the fused scale-mask-softmax reads the FP16
    scores and writes the probabilities, the attention dropout reads them and writes the
    dropped ones and a one-byte mask. Backward: dP = dO V^T, dV = P^T dO, dQ = dS K,
    dK = dS^T Q, the dropout's backward (gradient and mask in, gradient out) and the
    softmax's (probabilities and gradient in, gradient out). A batched GEMM is one launch
    over all heads' tiles: timed as one GEMM with the heads' rows stacked."""
    scores = float(heads) * seq_q * seq_k
    if not backward:
        return [
            timer.gemm("attention_scores", heads * seq_q, seq_k, head_dim, "bf16"),
            timer.streaming("attention_softmax", UNFUSED_SOFTMAX_BYTES * scores),
            timer.streaming("attention_dropout", UNFUSED_DROPOUT_BYTES * scores),
            timer.gemm("attention_context", heads * seq_q, head_dim, seq_k, "bf16"),
        ]
    return [
        timer.gemm("attention_context_dgrad", heads * seq_q, seq_k, head_dim, "bf16"),
        timer.gemm("attention_context_wgrad", heads * seq_k, head_dim, seq_q, "bf16"),
        timer.streaming("attention_dropout_bwd", UNFUSED_DROPOUT_BYTES * scores),
        timer.streaming("attention_softmax_bwd", UNFUSED_SOFTMAX_BWD_BYTES * scores),
        timer.gemm("attention_scores_dgrad", heads * seq_q, head_dim, seq_k, "bf16"),
        timer.gemm("attention_scores_wgrad", heads * seq_k, head_dim, seq_q, "bf16"),
    ]


def head_kernels(
    timer: KernelTimer,
    model: ModelConfig,
    plan: ParallelPlan,
    *,
    backward: bool,
    training: bool = False,
) -> list[Kernel]:
    """The last stage's logits GEMM and cross-entropy (the vocabulary split over TP). In
    training the logits GEMM runs in BF16 whatever the plan's precision: Megatron-core's
    output layer is its own ColumnParallelLinear, not a Transformer Engine module, so FP8
    autocast leaves it in BF16."""
    seq = (plan.seq or model.seq) // plan.cp
    tokens = plan.mbs * seq
    vocab = model.vocab // plan.tp
    prec = "bf16" if training else plan.precision
    if backward:
        kernels = [
            timer.gemm("logits_dgrad", tokens, model.hidden, vocab, prec),
            timer.gemm("logits_wgrad", model.hidden, vocab, tokens, prec),
        ]
    else:
        kernels = [timer.gemm("logits", tokens, vocab, model.hidden, prec)]
    kernels.append(timer.streaming("cross_entropy", 2 * 4.0 * tokens * vocab))
    return kernels


def optimizer_kernel(timer: KernelTimer, params: float) -> Kernel:
    """Adam on `params` local weights: reads FP32 gradient, master weight and two moments,
    writes the three FP32 states and the BF16 weight (30 bytes per weight)."""
    return timer.streaming("adam", 30.0 * params)
