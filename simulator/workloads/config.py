"""Transformer model configs (dense and mixture-of-experts) and the shipped presets, each with
its source (docs/workloads.md)."""

from __future__ import annotations

import json
from dataclasses import dataclass, fields
from pathlib import Path
from typing import Any

# The MLP's activation (ModelConfig.activation) and the weight matrices it takes:
# "swiglu" a gated MLP, silu(X W_gate) * (X W_up) W_down (Llama, Mixtral): three matrices,
# the first two fused into one GEMM of 2 ffn columns; "gelu" gelu(X W_1) W_2 (GPT-3,
# Megatron-LM): two; "squared-relu" relu(X W_1)^2 W_2 (Nemotron: NeMo's NemotronConfig sets
# activation_func = squared_relu, nemo/collections/llm/fn/activation.py, torch.pow(relu(x), 2),
# no gate): two.
ACTIVATIONS = {"swiglu": 3, "gelu": 2, "squared-relu": 2}


@dataclass(frozen=True)
class ModelConfig:
    """A decoder-only transformer. `ffn` is one expert's (or the dense MLP's) hidden size;
    `activation` the MLP's (ACTIVATIONS: "swiglu" three matrices, "gelu" and "squared-relu"
    two); `experts` > 1 a mixture-of-experts MLP of which each token takes `top_k`."""

    name: str
    layers: int
    hidden: int
    ffn: int
    heads: int
    kv_heads: int
    vocab: int
    seq: int
    activation: str = "swiglu"
    experts: int = 1
    top_k: int = 1
    tied_embeddings: bool = False
    source: str = ""

    def __post_init__(self) -> None:
        for name in ("layers", "hidden", "ffn", "heads", "kv_heads", "vocab", "seq"):
            value = getattr(self, name)
            if not isinstance(value, int) or isinstance(value, bool) or value <= 0:
                raise ValueError(f"model {self.name!r}: {name} must be a positive integer")
        if self.hidden % self.heads:
            raise ValueError(f"model {self.name!r}: hidden must be a multiple of heads")
        if self.heads % self.kv_heads:
            raise ValueError(f"model {self.name!r}: heads must be a multiple of kv_heads")
        if self.activation not in ACTIVATIONS:
            known = ", ".join(ACTIVATIONS)
            raise ValueError(f"model {self.name!r}: activation must be one of {known}")
        if not 1 <= self.top_k <= self.experts:
            raise ValueError(f"model {self.name!r}: top_k must lie between 1 and experts")

    @property
    def head_dim(self) -> int:
        return self.hidden // self.heads

    @property
    def qkv_out(self) -> int:
        """Columns of the fused QKV projection: the queries and the K and V of the KV heads."""
        return self.hidden + 2 * self.kv_heads * self.head_dim

    @property
    def gated(self) -> bool:
        """A gated MLP: its first GEMM gives the gate and the up projection (2 ffn columns)."""
        return self.activation == "swiglu"

    @property
    def mlp_matrices(self) -> int:
        return ACTIVATIONS[self.activation]

    def layer_params(self, *, active: bool = False) -> int:
        """Weights of one layer (norms included); `active`: only the experts a token takes."""
        attention = self.hidden * self.qkv_out + self.hidden * self.hidden
        experts = self.top_k if active else self.experts
        mlp = self.mlp_matrices * self.hidden * self.ffn * experts
        router = self.hidden * self.experts if self.experts > 1 else 0
        return attention + mlp + router + 2 * self.hidden

    def embedding_params(self) -> int:
        return self.vocab * self.hidden * (1 if self.tied_embeddings else 2)

    def params(self, *, active: bool = False) -> int:
        return self.layers * self.layer_params(active=active) + self.embedding_params()

    def forward_flops_per_token(self, seq: int | None = None) -> float:
        """Forward FLOPs of one token: 2 per active weight of the matrix products, the
        attention scores and their product with V (4 s h per layer over the whole sequence,
        as Narayanan et al. count it, SC'21 eq. 3) and the logits (2 h V). Per layer:
        2 (h q + h h + m h f k) + 4 s h, with q the QKV projection's columns, f the FFN size,
        k the experts a token takes and m the MLP's matrices (3 for "swiglu", 2 for "gelu"
        and "squared-relu"); the activation's own elementwise work is not counted, as the
        published formulas do not count it."""
        s = self.seq if seq is None else seq
        matmul = self.layer_params(active=True) - 2 * self.hidden
        per_layer = 2.0 * matmul + 4.0 * s * self.hidden
        return self.layers * per_layer + 2.0 * self.hidden * self.vocab


_MEGATRON = (
    "Narayanan et al., 'Efficient Large-Scale Language Model Training on GPU Clusters Using "
    "Megatron-LM', SC'21, arXiv:2104.04473, Table 1 (vocabulary 51,200, sequence 2,048)"
)


def _gpt(name: str, layers: int, hidden: int, heads: int, source: str) -> ModelConfig:
    return ModelConfig(
        name,
        layers,
        hidden,
        4 * hidden,
        heads,
        heads,
        51200,
        2048,
        activation="gelu",
        tied_embeddings=True,
        source=source,
    )


PRESETS: dict[str, ModelConfig] = {
    "gpt3-175b": _gpt(
        "gpt3-175b",
        96,
        12288,
        96,
        "Brown et al., 'Language Models are Few-Shot Learners', arXiv:2005.14165, Table 2.1 "
        "(96 layers, d_model 12288, 96 heads, context 2048); vocabulary 51,200 as Megatron-LM",
    ),
    "megatron-1.7b": _gpt("megatron-1.7b", 24, 2304, 24, _MEGATRON),
    "megatron-3.6b": _gpt("megatron-3.6b", 30, 3072, 32, _MEGATRON),
    "megatron-7.5b": _gpt("megatron-7.5b", 36, 4096, 32, _MEGATRON),
    "megatron-18.4b": _gpt("megatron-18.4b", 40, 6144, 48, _MEGATRON),
    "megatron-39.1b": _gpt("megatron-39.1b", 48, 8192, 64, _MEGATRON),
    "megatron-76.1b": _gpt("megatron-76.1b", 60, 10240, 80, _MEGATRON),
    "megatron-145.6b": _gpt("megatron-145.6b", 80, 12288, 96, _MEGATRON),
    "megatron-310.1b": _gpt("megatron-310.1b", 96, 16384, 128, _MEGATRON),
    "megatron-529.6b": _gpt("megatron-529.6b", 105, 20480, 128, _MEGATRON),
    "megatron-1008b": _gpt("megatron-1008b", 128, 25600, 160, _MEGATRON),
    "llama2-7b": ModelConfig(
        "llama2-7b",
        32,
        4096,
        11008,
        32,
        32,
        32000,
        4096,
        source="Touvron et al., 'Llama 2', arXiv:2307.09288, Table 1; config.json of "
        "meta-llama/Llama-2-7b-hf (hidden 4096, intermediate 11008, 32 layers, 32 heads)",
    ),
    "llama2-13b": ModelConfig(
        "llama2-13b",
        40,
        5120,
        13824,
        40,
        40,
        32000,
        4096,
        source="Touvron et al., arXiv:2307.09288; config.json of meta-llama/Llama-2-13b-hf",
    ),
    "llama2-70b": ModelConfig(
        "llama2-70b",
        80,
        8192,
        28672,
        64,
        8,
        32000,
        4096,
        source="Touvron et al., arXiv:2307.09288 (GQA, 8 KV heads); config.json of "
        "meta-llama/Llama-2-70b-hf",
    ),
    "llama3-8b": ModelConfig(
        "llama3-8b",
        32,
        4096,
        14336,
        32,
        8,
        128256,
        8192,
        source="Llama Team, 'The Llama 3 Herd of Models', arXiv:2407.21783, Table 3",
    ),
    "llama3-70b": ModelConfig(
        "llama3-70b",
        80,
        8192,
        28672,
        64,
        8,
        128256,
        8192,
        source="Llama Team, 'The Llama 3 Herd of Models', arXiv:2407.21783, Table 3",
    ),
    "llama3.1-405b": ModelConfig(
        "llama3.1-405b",
        126,
        16384,
        53248,
        128,
        8,
        128256,
        8192,
        source="Llama Team, 'The Llama 3 Herd of Models', arXiv:2407.21783, Table 3",
    ),
    "mixtral-8x7b": ModelConfig(
        "mixtral-8x7b",
        32,
        4096,
        14336,
        32,
        8,
        32000,
        4096,
        experts=8,
        top_k=2,
        source="Jiang et al., 'Mixtral of Experts', arXiv:2401.04088, Table 1 (context 32768; "
        "4096 here as the training sequence)",
    ),
}
_NEMO_GPT = (
    "NeMo-Framework-Launcher launcher_scripts/conf/training/gpt3/{size}.yaml "
    "(github.com/NVIDIA/NeMo-Framework-Launcher): GPT-2 BPE vocabulary padded to 50,304"
)
PRESETS["gpt3-5b"] = ModelConfig(
    "gpt3-5b",
    24,
    4096,
    16384,
    32,
    32,
    50304,
    2048,
    activation="gelu",
    source=_NEMO_GPT.format(size="5b"),
)
PRESETS["gpt3-20b"] = ModelConfig(
    "gpt3-20b",
    44,
    6144,
    24576,
    48,
    48,
    50304,
    2048,
    activation="gelu",
    source=_NEMO_GPT.format(size="20b"),
)
PRESETS["llama3-405b"] = PRESETS["llama3.1-405b"]
# Nemotron: NVIDIA NeMo, nemo/collections/llm/gpt/model/nemotron.py at commit
# c341fb3801651311be46332d6af106bd2c2f37e6 (2024-12-31, github.com/NVIDIA/NeMo; the sizes
# unchanged at 8cfedd7203462cb251a914e700e5605444277561, 2025-09-20): NemotronConfig's
# squared-ReLU MLP without a gate, no biases, untied embeddings, LayerNorm, RoPE on half of
# each head; num_query_groups None is one KV head per head. The vocabulary, 256,000, is what
# NeMo's performance scripts train them with (scripts/performance/llm/pretrain_nemotron3_8b.py,
# pretrain_nemotron3_22b.py, pretrain_nemotron4_15b.py, pretrain_nemotron4_340b.py at
# 8cfedd72: NullTokenizer, vocab_size=256000).
_NEMOTRON = (
    "NVIDIA NeMo nemo/collections/llm/gpt/model/nemotron.py, {cls}, commit "
    "c341fb3801651311be46332d6af106bd2c2f37e6; vocabulary 256,000 from "
    "scripts/performance/llm/pretrain_{script}.py at 8cfedd7203462cb251a914e700e5605444277561"
)
for _name, _cls, _layers, _hidden, _ffn, _heads, _kv in (
    ("nemotron3-8b", "Nemotron3Config8B", 32, 4096, 16384, 32, 32),
    ("nemotron3-22b", "Nemotron3Config22B", 40, 6144, 24576, 48, 48),
    ("nemotron4-15b", "Nemotron4Config15B", 32, 6144, 24576, 48, 8),
    ("nemotron4-340b", "Nemotron4Config340B", 96, 18432, 73728, 96, 8),
):
    PRESETS[_name] = ModelConfig(
        _name,
        _layers,
        _hidden,
        _ffn,
        _heads,
        _kv,
        256000,
        4096,
        activation="squared-relu",
        source=_NEMOTRON.format(cls=_cls, script=_name.replace("-", "_")),
    )


def model_from_fields(data: dict[str, Any]) -> ModelConfig:
    """A ModelConfig from its fields (a JSON file's or a request's). `gated`, the field
    `activation` replaced, is still read: true is "swiglu", false "gelu"."""
    data = dict(data)
    if "gated" in data:
        gated = data.pop("gated")
        if not isinstance(gated, bool):
            raise ValueError("gated must be true or false")
        if "activation" in data:
            raise ValueError("give activation or gated, not both")
        data["activation"] = "swiglu" if gated else "gelu"
    allowed = {field.name for field in fields(ModelConfig)}
    unknown = sorted(set(data) - allowed)
    if unknown:
        raise ValueError(f"unknown fields {unknown}")
    return ModelConfig(**data)


def load_model(name_or_path: str) -> ModelConfig:
    """Return a shipped config by name, or one read from a JSON file of the same fields."""
    if name_or_path in PRESETS:
        return PRESETS[name_or_path]
    path = Path(name_or_path)
    if not path.is_file():
        known = ", ".join(sorted(PRESETS))
        raise ValueError(
            f"model: {name_or_path!r} is neither a shipped config ({known}) nor a file"
        )
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as error:
        raise ValueError(f"model file {path}: not a JSON config ({error})") from error
    if not isinstance(data, dict):
        raise ValueError(f"model file {path}: expected an object of the config's fields")
    data.setdefault("name", path.stem)
    try:
        return model_from_fields(data)
    except (TypeError, ValueError) as error:
        raise ValueError(f"model file {path}: {error}") from error
