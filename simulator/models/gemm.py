"""GEMM and attention kernels timed from their shape, tile and precision, without SASS
(issue 42 item 2; docs/gemm-model.md).

A tiled tensor-core kernel (CUTLASS, cuBLAS, FlashAttention) gives each thread block one output
tile; a block's tile stays on one SM from its first k-step to its last. With T tiles, B tiles
resident per SM and S SMs:

    waves    = ceil(T / (S * B)); the tail wave's busiest SM runs ceil(tail / S) tiles      (G.1)
    t_tensor = (full waves * B + ceil(tail / S)) * F_tile / (eta * R_tensor * f)            (G.2)
    t_sfu    = (full waves * B + ceil(tail / S)) * E_tile / (SFUs * f)                      (G.3)
    t_l2     = T * Q_tile / BW_L2,tile                                                      (G.4)
    t_dram   = max(Q_min, Q_waves) / BW_DRAM, Q_waves = 0 when Q_min fits in L2             (G.5)
    T_k      = t_launch + max(t_tensor, t_sfu, t_l2, t_dram)                                (G.6)

F_tile is a tile's FLOPs (padded to whole tiles: a partial tile computes as a whole one), E_tile
its special-function operations (attention's exponentials), Q_tile the bytes a tile reads from
L2 (its A and B panels, or Q, K and V) and writes, Q_min each operand read once and the result
written once. When they do not fit in L2, a GEMM's tiles are taken to run rasterised (CUTLASS's
threadblock swizzle): a wave of W tiles covers a block of r x c tiles, r = min(rows,
ceil(W / c)), c = min(cols, ceil(sqrt(W))), and reads each A and B panel it touches from DRAM
once: Q_waves = (T / W) (r BM + c BN) K' s_in + M N s_out. eta is the fraction of the dense
tensor rate a GEMM's main loop sustains (the record's `tensorEfficiency`, else 1): the clock
a GPU holds at its power limit under tensor load and the issue overhead of the main loop,
fitted per GPU on the maximum achievable matmul FLOPS measured at one shape (docs/gemm-model.md;
no validation table enters it). BW_L2,tile is the L2 bandwidth tile loads reach (the record's
`L2TileBandwidth`, else its L2Bandwidth). Attention reads each head's K and V
once per wave (2 Sk d s_in per head, the heads of one wave sharing L2): Q_waves = Q_min while
they fit in L2, else every tile's K and V come from DRAM (T Q_tile). R_tensor is the record's dense tensor rate of the precision (gpu_current.py C.6),
f the SM clock, BW_L2 the record's L2Bandwidth (else the DRAM's) and BW_DRAM memoryEfficiency
x (4.5) (else GMEMThroughput), as the current-architecture model reads them.

GEMM:       T = ceil(M / BM) * ceil(N / BN), F_tile = 2 BM BN K', K' = ceil(K / BK) BK,
            Q_tile = (BM / cN + BN / cM) K' s_in + BM BN s_out, Q_min = (M K + K N) s_in
            + M N s_out, with a cM x cN thread-block cluster sharing panels by TMA multicast
Attention:  (FlashAttention-2 forward, one tile = BM queries of one head against all keys)
            T = batch_heads * ceil(Sq / BM), F_tile = 4 BM Sk' d (QK^T and PV; half of it
            causal), E_tile = BM Sk' (one exponential per score, half of it causal),
            Q_tile = (BM d + 2 Sk d) s_in + BM d s_out, Q_min = batch_heads ((Sq + 2 Sk) d s_in
            + Sq d s_out), Sk' = ceil(Sk / BN) BN

A GEMM's tile is picked by its shape as libraries pick it (G.8, `select_gemm_tile`): M <= 64
rows run 64 x 64 tiles, M <= 128 64 x 128 tiles (vLLM's CUTLASS FP8 dispatch for Hopper),
larger M the 256 x 128 tile eta is fitted with; a small-M grid with fewer tiles than SMs is
split along K (serial split-K: S_k slices, each slice after the first reading and writing
the partial output once more, CUTLASS's SplitKMode::kSerial) into min(floor(S / T),
ceil(K / BK)) slices:

    T = ceil(M / BM) ceil(N / BN) S_k,  K' = ceil(ceil(K / BK) / S_k) BK,
    output bytes (2 S_k - 1) M N s_out                                                      (G.8)

Sources: the tile and wave quantisation of NVIDIA's "Matrix Multiplication Background User's
Guide" (https://docs.nvidia.com/deeplearning/performance/dl-performance-matrix-multiplication/);
FlashAttention-2's tiling (Dao, 2023, arXiv:2307.08691) and FlashAttention-3's observation
that an H100's exponentials (3.9 TFLOPS of MUFU) bound attention beside its matmuls (Shah et
al., 2024, arXiv:2407.08608); the small-M tiles of vLLM's
csrc/quantization/cutlass_w8a8/c3x/scaled_mm_sm90_fp8_dispatch.cuh (commit 44d638a8) and
split-K as CUTLASS's examples/06_splitK_gemm describes it. What the model leaves out is in
docs/gemm-model.md.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Literal, TypedDict

from simulator.models.gpu_current import CURRENT_ERRORS, TENSOR_PRECISIONS, CurrentGpu

MODEL_NAME = "the tiled tensor-kernel model"

# A record's fraction of its dense tensor rate that GEMM main loops sustain (eta in G.2) and
# the L2 bandwidth tile loads reach (G.4); both optional (docs/gemm-model.md "Sustained rate").
TENSOR_EFFICIENCY = "tensorEfficiency"
L2_TILE_BANDWIDTH = "L2TileBandwidth"

# Bytes of one input element and, by default, of one output element per precision: FP16/BF16
# in and out, TF32 stored as FP32, FP8 and FP4 written as BF16, INT8 accumulated to INT32.
ELEMENT_BYTES: dict[str, tuple[float, float]] = {
    "fp16": (2, 2),
    "bf16": (2, 2),
    "tf32": (4, 4),
    "fp8": (1, 2),
    "fp4": (0.5, 2),
    "fp64": (8, 8),
    "int8": (1, 4),
}

GEMM_ERRORS: dict[str, str] = {
    "non_positive": "{name} must be positive",
    "unknown_precision": CURRENT_ERRORS["unknown_precision"],
    "no_tensor_rate": CURRENT_ERRORS["no_tensor_rate"],
    "no_sfus": "attention's exponentials need the hardware's SFUs",
    "missing_parameter": "parameter {name!r} is required by " + MODEL_NAME,
    "unknown_kind": "kind must be 'gemm' or 'attention', not {kind!r}",
    "efficiency_range": TENSOR_EFFICIENCY + " must be in (0, 1], not {value!r}",
}

TiledBound = Literal["launch", "tensor", "sfu", "l2", "global_memory"]


@dataclass(frozen=True)
class TiledWork:
    """A tiled tensor kernel's work: tiles and what each one computes and moves."""

    tiles: int
    tile_flops: float
    tile_bytes: float  # read from L2 and written, per tile (Q_tile)
    minimum_bytes: float  # operands once, result once (Q_min)
    precision: str
    tile_sfu_ops: float = 0.0
    # GEMM: the tile grid (rows, cols) and the bytes of one A panel, one B panel and the
    # output; attention: no grid, the K and V bytes of one head and its tiles
    grid: tuple[int, int] | None = None
    panel_bytes: tuple[float, float] = (0.0, 0.0)
    output_bytes: float = 0.0
    head_bytes: float = 0.0
    head_tiles: int = 1  # attention: the tiles of one head

    def dram_bytes(self, tiles_per_wave: int, l2_bytes: float | None) -> float:
        """Return the bytes read from and written to DRAM (G.5)."""
        if l2_bytes is not None and self.minimum_bytes <= l2_bytes:
            return self.minimum_bytes
        if self.grid is None:  # attention: each head's K and V once per wave while they fit
            # a wave may straddle one more head than it covers
            heads = math.ceil(tiles_per_wave / self.head_tiles) + 1
            if l2_bytes is not None and heads * self.head_bytes <= l2_bytes:
                return self.minimum_bytes
            return self.tiles * self.tile_bytes
        rows, cols = self.grid
        c = min(cols, math.ceil(math.sqrt(tiles_per_wave)))
        r = min(rows, math.ceil(tiles_per_wave / c))
        c = min(cols, math.ceil(tiles_per_wave / r))
        waves = self.tiles / min(tiles_per_wave, self.tiles)
        per_wave = r * self.panel_bytes[0] + c * self.panel_bytes[1]
        return max(self.minimum_bytes, waves * per_wave + self.output_bytes)


@dataclass(frozen=True)
class TiledEstimate:
    """The kernel time, its terms and what bounds it."""

    time_s: float
    launch_s: float
    bound: TiledBound
    waves: int
    tiles: int
    tensor_s: float
    sfu_s: float
    l2_s: float
    dram_s: float
    flops: float

    def as_dict(self) -> dict[str, float | int | str]:
        """Return the estimate as a JSON-ready mapping."""
        return {
            "time_s": self.time_s,
            "launch_s": self.launch_s,
            "bound": self.bound,
            "waves": self.waves,
            "tiles": self.tiles,
            "tensor_s": self.tensor_s,
            "sfu_s": self.sfu_s,
            "l2_s": self.l2_s,
            "dram_s": self.dram_s,
            "flops": self.flops,
        }


def _positive(**values: float) -> None:
    for name, value in values.items():
        if not value > 0:
            raise ValueError(GEMM_ERRORS["non_positive"].format(name=name))


def _element_bytes(precision: str) -> tuple[float, float]:
    if precision not in ELEMENT_BYTES:
        raise ValueError(
            GEMM_ERRORS["unknown_precision"].format(
                precision=precision, known=", ".join(ELEMENT_BYTES)
            )
        )
    return ELEMENT_BYTES[precision]


def gemm_work(
    *,
    m: int,
    n: int,
    k: int,
    precision: str,
    tile_m: int = 128,
    tile_n: int = 128,
    tile_k: int = 32,
    output_bytes: float | None = None,
    cluster_m: int = 1,
    cluster_n: int = 1,
    split_k: int = 1,
) -> TiledWork:
    """Return the tiles of C (M x N) = A (M x K) B (K x N) and each one's work (G GEMM);
    `cluster_m` x `cluster_n` tiles of a thread-block cluster share their panels by TMA
    multicast (Hopper and later), so each tile reads 1 / cluster_n of its A panel and
    1 / cluster_m of its B panel from L2. `split_k` > 1 splits K into that many slices, one
    tile per slice (serial split-K, G.8): each slice but the first reads the partial output
    and writes it back."""
    _positive(M=m, N=n, K=k, tileM=tile_m, tileN=tile_n, tileK=tile_k)
    _positive(clusterM=cluster_m, clusterN=cluster_n, splitK=split_k)
    s_in, s_out = _element_bytes(precision)
    if output_bytes is not None:
        _positive(outputBytes=output_bytes)
        s_out = output_bytes
    k_blocks = math.ceil(k / tile_k)
    split = min(split_k, k_blocks)
    k_padded = math.ceil(k_blocks / split) * tile_k  # the K of one slice
    rows, cols = math.ceil(m / tile_m), math.ceil(n / tile_n)
    # serial split-K: every slice after the first reads the partial tile and writes it again
    passes = 2 * split - 1
    return TiledWork(
        tiles=rows * cols * split,
        grid=(rows, cols * split),
        panel_bytes=(tile_m * k_padded * s_in, tile_n * k_padded * s_in),
        output_bytes=passes * m * n * s_out,
        tile_flops=2.0 * tile_m * tile_n * k_padded,
        tile_bytes=(tile_m / cluster_n + tile_n / cluster_m) * k_padded * s_in
        + passes / split * tile_m * tile_n * s_out,
        minimum_bytes=(m * k + k * n) * s_in + passes * m * n * s_out,
        precision=precision,
    )


@dataclass(frozen=True)
class GemmTile:
    """A GEMM kernel's configuration: its tile (rows, columns, depth), its thread-block
    cluster (rows, columns) and its split-K slices."""

    tile_m: int
    tile_n: int
    tile_k: int
    cluster_m: int = 1
    cluster_n: int = 1
    split_k: int = 1


# The tile of a GEMM with more rows than SMALL_M_TILES cover: CUTLASS-style 256 x 128 x 64,
# in 2 x 1 clusters on Hopper and later (the tile eta is fitted with, docs/gemm-model.md).
LARGE_M_TILE = GemmTile(256, 128, 64, 2, 1)
# The tiles a library picks by the number of rows M (G.8): vLLM's CUTLASS FP8 GEMM dispatch
# for Hopper (csrc/quantization/cutlass_w8a8/c3x/scaled_mm_sm90_fp8_dispatch.cuh, commit
# 44d638a89638f617e8315b25ad699a5a72e845b9): M in [1, 64] runs 64 x 64 tiles in 1 x 8
# clusters, M in (64, 128] 64 x 128 tiles in 2 x 1 clusters, larger M its default tile. 64
# rows is the M of one warpgroup's Hopper MMA (wgmma m64nNk16). Depth 64 as LARGE_M_TILE's.
SMALL_M_TILES: tuple[tuple[int, GemmTile], ...] = (
    (64, GemmTile(64, 64, 64, 1, 8)),
    (128, GemmTile(64, 128, 64, 2, 1)),
)


def select_gemm_tile(m: int, n: int, k: int, *, sms: int, clusters: bool) -> GemmTile:
    """Return the tile a library runs an M x N x K GEMM with (G.8): by M, SMALL_M_TILES,
    else LARGE_M_TILE; a small-M grid that leaves SMs idle is split along K (split-K) into
    as many slices as fill them once, at most one per K block. `clusters` False (before
    Hopper): no thread-block clusters."""
    _positive(M=m, N=n, K=k, SMs=sms)
    tile = next((t for limit, t in SMALL_M_TILES if m <= limit), LARGE_M_TILE)
    rows, cols = math.ceil(m / tile.tile_m), math.ceil(n / tile.tile_n)
    cluster_m, cluster_n = (tile.cluster_m, tile.cluster_n) if clusters else (1, 1)
    split = 1
    if tile is not LARGE_M_TILE and rows * cols < sms:
        split = max(1, min(sms // (rows * cols), math.ceil(k / tile.tile_k)))
    return GemmTile(tile.tile_m, tile.tile_n, tile.tile_k, cluster_m, cluster_n, split)


def attention_work(
    *,
    batch_heads: int,
    seq_q: int,
    seq_k: int,
    head_dim: int,
    precision: str,
    tile_q: int = 128,
    tile_k: int = 128,
    causal: bool = False,
) -> TiledWork:
    """Return the tiles of a FlashAttention-2 style forward pass and each one's work."""
    _positive(batchHeads=batch_heads, seqQ=seq_q, seqK=seq_k, headDim=head_dim)
    _positive(tileM=tile_q, tileN=tile_k)
    s_in, s_out = _element_bytes(precision)
    keys = math.ceil(seq_k / tile_k) * tile_k
    # a causal mask skips the key tiles past the diagonal: half of them on average
    share = 0.5 if causal else 1.0
    return TiledWork(
        tiles=batch_heads * math.ceil(seq_q / tile_q),
        tile_flops=4.0 * tile_q * keys * head_dim * share,
        tile_bytes=(tile_q * head_dim + 2 * keys * head_dim * share) * s_in
        + tile_q * head_dim * s_out,
        minimum_bytes=batch_heads
        * ((seq_q + 2 * seq_k) * head_dim * s_in + seq_q * head_dim * s_out),
        precision=precision,
        tile_sfu_ops=tile_q * keys * share,
        head_bytes=2 * seq_k * head_dim * s_in,
        head_tiles=math.ceil(seq_q / tile_q),
    )


class SustainedTerms(TypedDict):
    """`estimate_tiled`'s keywords read from a record (`sustained_terms`)."""

    tensor_efficiency: float
    l2_tile_bandwidth: float | None


def sustained_terms(attributes: Mapping[str, float | str]) -> SustainedTerms:
    """Return a record's eta (G.2) and tile-load L2 bandwidth (G.4) as `estimate_tiled`'s
    keywords: 1 and None (the record's L2Bandwidth) where the record gives none."""
    eta = float(attributes.get(TENSOR_EFFICIENCY, 1.0))
    if not 0 < eta <= 1:
        raise ValueError(GEMM_ERRORS["efficiency_range"].format(value=eta))
    tile_l2 = attributes.get(L2_TILE_BANDWIDTH)
    if tile_l2 is not None:
        _positive(**{L2_TILE_BANDWIDTH: float(tile_l2)})
    return {
        "tensor_efficiency": eta,
        "l2_tile_bandwidth": None if tile_l2 is None else float(tile_l2),
    }


def estimate_tiled(
    gpu: CurrentGpu,
    work: TiledWork,
    *,
    tiles_per_sm: int = 1,
    idle_before_s: float = 0.0,
    tensor_efficiency: float | None = 1.0,
    l2_tile_bandwidth: float | None = None,
) -> TiledEstimate:
    """Return the time of a tiled tensor kernel by (G.1)-(G.6); `tensor_efficiency` is eta
    (G.2) and `l2_tile_bandwidth` the L2 bandwidth of tile loads (G.4), by default the
    record's L2Bandwidth."""
    _positive(tilesPerSM=tiles_per_sm)
    eta = 1.0 if tensor_efficiency is None else tensor_efficiency
    if not 0 < eta <= 1:
        raise ValueError(GEMM_ERRORS["efficiency_range"].format(value=eta))
    hw = gpu.base
    name, _ = TENSOR_PRECISIONS[work.precision]
    rate = gpu.tensor_rates.get(name)
    if rate is None or rate <= 0:
        raise ValueError(GEMM_ERRORS["no_tensor_rate"].format(name=name, precision=work.precision))
    per_wave = hw.sms * tiles_per_sm
    waves = max(1, math.ceil(work.tiles / per_wave))
    tail = work.tiles - (waves - 1) * per_wave
    # tiles the busiest SM runs, one after another or sharing its tensor cores
    busiest = (waves - 1) * tiles_per_sm + math.ceil(tail / hw.sms)
    clock = hw.sm_clock_hz
    tensor_s = busiest * work.tile_flops / (eta * rate * clock)
    sfu_s = 0.0
    if work.tile_sfu_ops > 0:
        if hw.sfus is None:
            raise ValueError(GEMM_ERRORS["no_sfus"])
        sfu_s = busiest * work.tile_sfu_ops / (hw.sfus * clock)
    dram_per_sm_cycle, _ = gpu.memory_bandwidth_per_sm(l2_resident=False, footprint_bytes=None)
    dram = dram_per_sm_cycle * hw.sms * clock
    l2 = gpu.l2_bandwidth if gpu.l2_bandwidth is not None else dram
    if l2_tile_bandwidth is not None:
        _positive(**{L2_TILE_BANDWIDTH: l2_tile_bandwidth})
        l2 = l2_tile_bandwidth
    tile_traffic = work.tiles * work.tile_bytes
    l2_s = tile_traffic / l2
    dram_s = work.dram_bytes(per_wave, gpu.l2_bytes) / dram
    launch_s = gpu.launch_overhead_s + gpu.wake_s(idle_before_s)
    terms: list[tuple[TiledBound, float]] = [
        ("tensor", tensor_s),
        ("sfu", sfu_s),
        ("l2", l2_s),
        ("global_memory", dram_s),
    ]
    bound, work_s = max(terms, key=lambda term: term[1])
    return TiledEstimate(
        time_s=launch_s + work_s,
        launch_s=launch_s,
        bound="launch" if launch_s > work_s else bound,
        waves=waves,
        tiles=work.tiles,
        tensor_s=tensor_s,
        sfu_s=sfu_s,
        l2_s=l2_s,
        dram_s=dram_s,
        flops=work.tiles * work.tile_flops,
    )


def decode_attention_per_token_s(
    gpu: CurrentGpu, kv_bytes_per_token: float, *, group: int, grouped: bool
) -> float:
    """Return a decode step's attention time per context token (G.7): the K and V bytes of one
    token of every sequence are read from DRAM once; a kernel that runs one query head per
    thread block (`grouped` False: TensorRT-LLM's masked multi-head attention before its XQA
    kernel) reads them once per query head of the group, the repeats from L2 at the
    record's L2Bandwidth (thread loads, not TMA tiles); a grouped kernel (FlashDecoding,
    XQA) reads them once for the whole group.

        t_token = max(Q_kv / BW_DRAM, g Q_kv / BW_L2), g = 1 when grouped       (G.7)
    """
    _positive(kvBytesPerToken=kv_bytes_per_token, group=group)
    dram_per_sm_cycle, _ = gpu.memory_bandwidth_per_sm(l2_resident=False, footprint_bytes=None)
    dram = dram_per_sm_cycle * gpu.base.sms * gpu.base.sm_clock_hz
    l2 = gpu.l2_bandwidth if gpu.l2_bandwidth is not None else dram
    reads = 1 if grouped else group
    return max(kv_bytes_per_token / dram, reads * kv_bytes_per_token / l2)


def computation_estimate(
    attributes: Mapping[str, float | str], params: Mapping[str, object]
) -> TiledEstimate:
    """Return the estimate from a computation's params: `kind` "gemm" (M, N, K, tileM, tileN,
    tileK, outputBytes, clusterM, clusterN, splitK) or "attention" (batchHeads, seqQ, seqK, headDim, tileM, tileN,
    causal), with precision, tilesPerSM and idleBeforeS."""

    def number(name: str, default: float | None = None) -> float:
        value = params.get(name, default)
        if value is None:
            raise ValueError(GEMM_ERRORS["missing_parameter"].format(name=name))
        return float(value)  # type: ignore[arg-type]

    precision = str(params.get("precision", "fp16")).lower()
    kind = params.get("kind", "gemm")
    work: TiledWork
    if kind == "gemm":
        output = params.get("outputBytes")
        work = gemm_work(
            m=int(number("M")),
            n=int(number("N")),
            k=int(number("K")),
            precision=precision,
            tile_m=int(number("tileM", 128)),
            tile_n=int(number("tileN", 128)),
            tile_k=int(number("tileK", 32)),
            output_bytes=None if output is None else float(output),  # type: ignore[arg-type]
            cluster_m=int(number("clusterM", 1)),
            cluster_n=int(number("clusterN", 1)),
            split_k=int(number("splitK", 1)),
        )
    elif kind == "attention":
        work = attention_work(
            batch_heads=int(number("batchHeads")),
            seq_q=int(number("seqQ")),
            seq_k=int(number("seqK")),
            head_dim=int(number("headDim")),
            precision=precision,
            tile_q=int(number("tileM", 128)),
            tile_k=int(number("tileN", 128)),
            causal=bool(params.get("causal", False)),
        )
    else:
        raise ValueError(GEMM_ERRORS["unknown_kind"].format(kind=kind))
    return estimate_tiled(
        CurrentGpu.from_attributes(attributes),
        work,
        tiles_per_sm=int(number("tilesPerSM", 1)),
        idle_before_s=number("idleBeforeS", 0.0),
        **sustained_terms(attributes),
    )
