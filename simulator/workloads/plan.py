"""A parallel plan (DP with DDP / ZeRO-1 / FSDP, TP, PP with 1F1B and interleaved virtual
stages, CP, EP; micro-batches, recomputation, precision) and its per-GPU memory
(docs/workloads.md "Memory")."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Literal

from simulator.workloads.config import ModelConfig

DataParallel = Literal["ddp", "zero1", "fsdp"]
Recompute = Literal["none", "selective", "full"]
PRECISIONS = ("bf16", "fp8")
# How a layer's attention runs: "flash" one fused FlashAttention-2 kernel (scores kept on
# chip), "unfused" Megatron-LM's 2021 path (Narayanan et al., SC'21, section 4.2): the scores
# Q K^T and their product with V as two batched GEMMs, the scale, causal mask and softmax as
# one fused kernel and the attention dropout as another, over scores written to memory;
# "cudnn" cuDNN's fused attention, what Transformer Engine's DotProductAttention runs on
# Hopper (it gives FusedAttention preference over FlashAttention there), kept on chip as
# "flash" is and timed at cuDNN's published rates (simulator/workloads/kernels.py).
ATTENTION_KERNELS = ("flash", "cudnn", "unfused")


class PlanError(ValueError):
    """A plan that cannot run: the reason names the field and the figures."""


@dataclass(frozen=True)
class ParallelPlan:
    gpus: int
    tp: int = 1
    pp: int = 1
    cp: int = 1
    ep: int = 1
    vp: int = 1
    mbs: int = 1
    gbs: int = 1
    seq: int | None = None
    data_parallel: DataParallel = "ddp"
    recompute: Recompute = "none"
    precision: str = "bf16"
    overlap_grad_reduce: bool = False
    grad_reduce_bytes: int = 4
    attention: str = "flash"
    # FP8 only: the distributed optimizer gathers the layers' weights as FP8, 1 byte each
    # (Megatron-core's --fp8-param-gather; NeMo's bf16_with_fp8_mixed sets fp8_params=True,
    # which turns it on: nemo/collections/llm/recipes/precision/mixed_precision.py and
    # nemo/lightning/pytorch/plugins/mixed_precision.py at commit c341fb38, 2024-12-31); the
    # embedding and output layer, not Transformer Engine modules, stay BF16
    fp8_param_gather: bool = False
    # Sequence parallelism (Korthikanti et al., arXiv:2205.05198, section 4.2.2): with TP,
    # the norms, dropouts and residual adds run on each rank's 1/t of the sequence and
    # keep 1/t of their activations. Megatron-LM's --sequence-parallel, NeMo's recipes'
    # default (nemo/collections/llm/recipes/llama3_70b.py at commit 0189a3b3:
    # trainer(sequence_parallelism=True)); off, each TP rank runs those kernels on the
    # whole activation, as Megatron-LM did before 2022 (SC'21) and as inference engines do
    # (their row-parallel GEMMs all-reduce their output to every rank)
    sequence_parallel: bool = True

    @property
    def split_sequence(self) -> int:
        """The share of the sequence each rank's norms, dropouts and residual adds run on:
        t with sequence parallelism over TP, else 1."""
        return self.tp if self.sequence_parallel else 1

    @property
    def dp(self) -> int:
        return self.gpus // (self.tp * self.pp * self.cp)

    def microbatches(self) -> int:
        return self.gbs // (self.dp * self.mbs)

    def check(self, model: ModelConfig) -> None:
        """Raise PlanError naming the first field the plan breaks."""
        for name in ("gpus", "tp", "pp", "cp", "ep", "vp", "mbs", "gbs"):
            value = getattr(self, name)
            if not isinstance(value, int) or value < 1:
                raise PlanError(f"{name} must be a positive integer, not {value!r}")
        if self.seq is not None and (
            not isinstance(self.seq, int) or isinstance(self.seq, bool) or self.seq < 1
        ):
            raise PlanError(f"seq must be a positive integer, not {self.seq!r}")
        if self.precision not in PRECISIONS:
            raise PlanError(f"precision must be one of {PRECISIONS}, not {self.precision!r}")
        if not isinstance(self.sequence_parallel, bool):
            raise PlanError(
                f"sequence_parallel must be true or false, not {self.sequence_parallel!r}"
            )
        if self.fp8_param_gather and self.precision != "fp8":
            raise PlanError("fp8_param_gather needs precision fp8")
        if self.attention not in ATTENTION_KERNELS:
            raise PlanError(f"attention must be one of {ATTENTION_KERNELS}, not {self.attention!r}")
        model_ranks = self.tp * self.pp * self.cp
        if self.gpus % model_ranks:
            raise PlanError(
                f"gpus ({self.gpus}) must be a multiple of tp x pp x cp ({model_ranks})"
            )
        if self.gbs % (self.dp * self.mbs):
            raise PlanError(
                f"gbs ({self.gbs}) must be a multiple of dp x mbs ({self.dp} x {self.mbs})"
            )
        if model.heads % self.tp or (model.kv_heads % self.tp and self.tp % model.kv_heads):
            raise PlanError(f"tp ({self.tp}) must divide the heads ({model.heads}) and KV heads")
        if model.layers < self.pp * self.vp:
            raise PlanError(
                f"layers ({model.layers}) must be at least pp x vp ({self.pp} x {self.vp})"
            )
        if self.vp > 1 and self.microbatches() % self.pp:
            raise PlanError(
                f"interleaving (vp {self.vp}) needs micro-batches ({self.microbatches()}) "
                f"a multiple of pp ({self.pp})"
            )
        seq = self.seq or model.seq
        if seq % (2 * self.cp) and self.cp > 1:
            raise PlanError(f"seq ({seq}) must be a multiple of 2 x cp ({2 * self.cp})")
        if model.experts == 1 and self.ep > 1:
            raise PlanError("ep > 1 needs a mixture-of-experts model")
        if model.experts % self.ep or self.dp * self.cp % self.ep:
            raise PlanError(
                f"ep ({self.ep}) must divide the experts ({model.experts}) and dp x cp "
                f"({self.dp * self.cp})"
            )


def chunk_layers(model: ModelConfig, plan: ParallelPlan) -> list[int]:
    """Layers of each chunk (virtual stage c * pp + s): an even split, the remainder going
    to the chunks after the first (which also holds the embedding)."""
    chunks = plan.pp * plan.vp
    base, extra = divmod(model.layers, chunks)
    return [base + (1 if 1 <= index <= extra else 0) for index in range(chunks)]


@dataclass(frozen=True)
class Memory:
    weights: float
    gradients: float
    optimizer: float
    activations: float

    @property
    def total(self) -> float:
        return self.weights + self.gradients + self.optimizer + self.activations

    def as_dict(self) -> dict[str, float]:
        return {
            "weights": self.weights,
            "gradients": self.gradients,
            "optimizer": self.optimizer,
            "activations": self.activations,
            "total": self.total,
        }


def stage_params(model: ModelConfig, plan: ParallelPlan) -> float:
    """Weights one GPU of the busiest stage (the first, with the embedding) holds before any
    data-parallel sharding: its layers' dense part split by TP, its experts by EP and TP."""
    layers = math.ceil(model.layers / plan.pp)
    dense = model.layer_params() - model.mlp_matrices * model.hidden * model.ffn * model.experts
    experts = model.mlp_matrices * model.hidden * model.ffn * model.experts
    per_layer = dense / plan.tp + experts / (plan.tp * plan.ep)
    embedding = model.vocab * model.hidden / plan.tp
    if model.tied_embeddings or plan.pp == 1:
        embedding *= 1 if model.tied_embeddings else 2
    return layers * per_layer + embedding


def activation_bytes_per_token(model: ModelConfig, plan: ParallelPlan, seq: int) -> float:
    """Bytes one layer keeps for the backward pass per token of a micro-batch and GPU.
    TP splits every term by t with sequence parallelism; without it (eq. 1 of the paper
    below: s b h (10 + 24 / t + 5 a s / (h t))) the norms' inputs, the QKV and first MLP
    GEMMs' inputs and the two dropout masks stay whole on every rank. Korthikanti et al.
    (arXiv:2205.05198, section 4.1) count 34 h + 5 a s per token in BF16 for a GELU MLP of
    4h: the two norms' inputs 4h, the QKV GEMM's input 2h, Q, K and V 6h, the attention
    output (the projection's input) 2h, two dropout masks 2h, the first MLP GEMM's input 2h,
    the GELU's input 8h and the second MLP GEMM's input 8h, and with the scores written to
    memory (`attention` "unfused") the softmax output, its dropout mask and the dropout's
    output, 5 a s. Here K and V take the KV heads' width, the MLP terms its width (a SwiGLU
    keeps both halves of its first GEMM's output), and:
    - FP8 (Transformer Engine): each FP8 GEMM keeps its input as an FP8 copy, 1 byte, not
      the BF16 tensor (NVIDIA/TransformerEngine transformer_engine/pytorch/module/linear.py,
      layernorm_linear.py and layernorm_mlp.py, whose forward saves `inputmat_t`/`ln_out`/
      `gelu_out` cast to FP8 and `inputmat` (the norm's input), `fc1_out` (the activation's
      input), in the activation dtype). So the QKV, projection and both MLP GEMM inputs
      drop to 1 byte; the norms' inputs, Q, K, V, the activation's input and the masks stay
      BF16 (attention runs in BF16: no FP8 attention is modelled).
    - FlashAttention (`attention` "flash", cuDNN's fused attention alike) keeps no scores:
      it saves Q, K, V, its output and the softmax's log-sum-exp (FP32, 4 a bytes per
      token) instead of the 5 a s. Its output is kept by the attention itself, so under FP8
      the projection's FP8 copy (1 h) comes on top of the BF16 output (2 h).
    - The activation keeps one BF16 tensor of the FFN's width (a SwiGLU two: its gate and
      up halves): GELU its input; squared ReLU, relu(x)^2 in eager PyTorch, the ReLU's
      output, which the ReLU's backward and the square's both read.
    Selective recomputation reruns the core attention, dropping the a-terms; full
    recomputation is charged by the caller."""
    h = model.hidden
    kv = 2 * model.kv_heads * model.head_dim
    ffn = model.ffn * model.top_k
    gemm_input = 1.0 if plan.precision == "fp8" else 2.0
    flash = plan.attention in ("flash", "cudnn")
    norms = 2 * 2.0 * h
    qkv_input = gemm_input * h
    qkv = 2.0 * (h + kv)
    # the projection's input: the GEMM's own copy; with FlashAttention also the attention's
    # BF16 output, one tensor with the GEMM's copy in BF16 and a second one in FP8
    attention_out = gemm_input * h
    if flash and plan.precision == "fp8":
        attention_out += 2.0 * h
    elif flash:
        attention_out = 2.0 * h
    masks = 2 * 1.0 * h
    fc1_input = gemm_input * h
    activation_input = 2.0 * ffn * (2 if model.gated else 1)
    fc2_input = gemm_input * ffn
    whole = norms + qkv_input + masks + fc1_input  # on every TP rank without SP
    split = qkv + attention_out + activation_input + fc2_input
    if plan.recompute == "none":
        split += 4.0 * model.heads if flash else 5.0 * model.heads * seq
    return whole / plan.split_sequence + split / plan.tp


def training_memory(model: ModelConfig, plan: ParallelPlan) -> Memory:
    """Bytes per GPU (first pipeline stage): BF16 weights (FP8 runs keep BF16 weights too),
    FP32 gradients, Adam's FP32 master weights and two moments (12 bytes per weight), sharded
    over DP by ZeRO-1 (optimizer) and FSDP (all three); activations per layer from
    `activation_bytes_per_token`, 2 s b h / t per layer with full recomputation and sequence
    parallelism, 2 s b h without it (Korthikanti et al., arXiv:2205.05198: the layer's input
    alone), the first stage holding pp micro-batches in flight under 1F1B."""
    params = stage_params(model, plan)
    shard = plan.dp * plan.cp
    weights = 2.0 * params
    # the gradient buffer is the reduction's dtype: Megatron-core's DDP keeps main grads in
    # FP32 with grad_reduce_in_fp32, else in the weights' BF16 (grad_reduce_bytes)
    gradients = float(plan.grad_reduce_bytes) * params
    optimizer = 12.0 * params
    if plan.data_parallel in ("zero1", "fsdp"):
        optimizer /= shard
    if plan.data_parallel == "fsdp":
        weights /= shard
        gradients /= shard
    seq = (plan.seq or model.seq) // plan.cp
    tokens = seq * plan.mbs
    if plan.recompute == "full":
        per_layer = 2.0 * tokens * model.hidden / plan.split_sequence
    else:
        per_layer = tokens * activation_bytes_per_token(model, plan, seq)
    layers = math.ceil(model.layers / plan.pp)
    in_flight = plan.pp if plan.pp > 1 else 1
    if plan.vp > 1:
        in_flight = math.ceil(plan.pp * (1 + (plan.pp - 1) / (plan.pp * plan.vp)))
    activations = per_layer * layers * min(in_flight, plan.microbatches())
    return Memory(weights, gradients, optimizer, activations)


def check_memory(memory: Memory, capacity: float) -> None:
    if memory.total > capacity:
        parts = ", ".join(f"{k} {v / 2**30:.1f} GiB" for k, v in memory.as_dict().items())
        raise PlanError(
            f"the plan needs {memory.total / 2**30:.1f} GiB per GPU ({parts}), more than the "
            f"GPU's {capacity / 2**30:.1f} GiB"
        )
