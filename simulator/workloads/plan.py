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
# one fused kernel and the attention dropout as another, over scores written to memory.
ATTENTION_KERNELS = ("flash", "unfused")


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


def training_memory(model: ModelConfig, plan: ParallelPlan) -> Memory:
    """Bytes per GPU (first pipeline stage): BF16 weights (FP8 runs keep BF16 weights too),
    FP32 gradients, Adam's FP32 master weights and two moments (12 bytes per weight), sharded
    over DP by ZeRO-1 (optimizer) and FSDP (all three); activations per Korthikanti et al.
    (arXiv:2205.05198, eq. 2 with sequence parallelism: s b h (34 + 5 a s / h) / t per layer,
    the attention term dropped with selective recomputation, 2 s b h / t per layer with full
    recomputation), the first stage holding pp micro-batches in flight under 1F1B."""
    params = stage_params(model, plan)
    shard = plan.dp * plan.cp
    weights = 2.0 * params
    gradients = 4.0 * params
    optimizer = 12.0 * params
    if plan.data_parallel in ("zero1", "fsdp"):
        optimizer /= shard
    if plan.data_parallel == "fsdp":
        weights /= shard
        gradients /= shard
    seq = (plan.seq or model.seq) // plan.cp
    s, b, h, a = seq, plan.mbs, model.hidden, model.heads
    ffn_scale = model.ffn * model.top_k * (1.5 if model.gated else 1.0) / (4 * h)
    if plan.recompute == "full":
        per_layer = 2.0 * s * b * h / plan.tp
    else:
        per_layer = s * b * h * (10 + 24 * ffn_scale) / plan.tp
        if plan.recompute == "none":
            per_layer += 5.0 * a * s * s * b / plan.tp
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
