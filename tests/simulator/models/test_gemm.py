"""GEMM and attention timed from shape, tile and precision (simulator/models/gemm.py, G.1-G.6):
tensor-bound large GEMMs at the precision's rate, wave quantisation, memory-bound skinny
GEMMs, attention's exponentials, and the messages for bad input."""

from __future__ import annotations

import math
import re

import pytest

from simulator.models.gemm import (
    GEMM_ERRORS,
    attention_work,
    computation_estimate,
    estimate_tiled,
    gemm_work,
)
from simulator.models.gpu_current import CurrentGpu

# The H100 SXM5 seed record's figures the model reads.
H100 = {
    "SMs": 132,
    "SMCoreClock": 1980,
    "CUDACores": 128,
    "schedulers": 4,
    "SFUs": 16,
    "memoryClock": 2619,
    "busWidth": 5120,
    "dataRate": 2,
    "computeCapability": 9.0,
    "L2Cache": 52428800,
    # te42kyfo/gpu-benches' L2 figure for GH100 (the GH200 record's); the kit's saxpy-based
    # 4.9 TB/s is what a one-load-per-thread kernel reaches, not TMA's tile loads
    "L2Bandwidth": 9.8e12,
    "kernelLaunchOverhead": 5.744e-6,
    "memoryEfficiency": 0.8221,
    "tensorFLOPsPerCycleFP16": 3786.0,
    "tensorFLOPsPerCycleTF32": 1893.0,
    "tensorFLOPsPerCycleFP8": 7572.0,
    "tensorFLOPsPerCycleFP64": 256.0,
}
GPU = CurrentGpu.from_attributes(H100)
CYCLES = 132 * 1980e6


@pytest.mark.parametrize(
    ("precision", "rate"), [("fp16", 3786.0), ("tf32", 1893.0), ("fp8", 7572.0), ("fp64", 256.0)]
)
def test_a_large_square_gemm_runs_at_the_tensor_rate_of_its_precision(precision, rate):
    # 16896 = 132 x 128 = 66 x 256: 132 x 66 tiles of 128 x 256 = exactly 66 waves; a 2 x 1
    # cluster halves the B panel's L2 traffic
    n, k = 16896, 8192
    work = gemm_work(m=n, n=n, k=k, precision=precision, tile_n=256, cluster_m=2)
    estimate = estimate_tiled(GPU, work)
    assert estimate.bound == "tensor"
    assert estimate.waves == 66
    assert estimate.flops == 2.0 * n * n * k
    assert estimate.tensor_s == pytest.approx(2.0 * n * n * k / (rate * CYCLES), rel=1e-12)
    assert estimate.time_s == pytest.approx(H100["kernelLaunchOverhead"] + estimate.tensor_s)


def test_small_tiles_without_multicast_are_bound_by_the_l2():
    # 128 x 128 FP16 tiles: 64 FLOPs per byte from L2, below the 101 of 989 TFLOPS / 9.8 TB/s
    work = gemm_work(m=16896, n=16896, k=8192, precision="fp16")
    estimate = estimate_tiled(GPU, work)
    assert estimate.bound == "l2"
    assert estimate.l2_s == pytest.approx(work.tiles * work.tile_bytes / 9.8e12)


def test_one_tile_past_a_whole_wave_costs_a_whole_tile_time_more():
    # 132 tiles are one wave; 133 are two, the second of one tile on one SM
    whole = estimate_tiled(GPU, gemm_work(m=128 * 132, n=128, k=4096, precision="fp16"))
    one_more = estimate_tiled(GPU, gemm_work(m=128 * 133, n=128, k=4096, precision="fp16"))
    assert (whole.waves, one_more.waves) == (1, 2)
    assert one_more.tensor_s == pytest.approx(2 * whole.tensor_s)


def test_a_skinny_gemm_is_bound_by_memory_not_the_tensor_cores():
    # a matrix-vector product in disguise: N = 8 moves all of A for few FLOPs
    estimate = estimate_tiled(GPU, gemm_work(m=65536, n=8, k=8192, precision="fp16"))
    assert estimate.bound in ("l2", "global_memory")
    a_bytes = 65536 * 8192 * 2
    assert estimate.dram_s >= a_bytes / (0.8221 * 2619e6 * 640 * 2)


def test_operands_that_fit_in_l2_are_read_from_dram_once():
    work = gemm_work(m=1024, n=1024, k=1024, precision="fp16")
    estimate = estimate_tiled(GPU, work)
    dram = 0.8221 * 2619e6 * 640 * 2
    assert work.minimum_bytes == 3 * 1024 * 1024 * 2
    assert estimate.dram_s == pytest.approx(work.minimum_bytes / dram)
    # without an L2 on record every tile's panels come from DRAM
    # operands past the L2: each wave reads the A and B panels its block of tiles touches
    big = gemm_work(m=16896, n=16896, k=8192, precision="fp16", tile_n=256)
    # a wave of 132 tiles: 12 tile columns x 11 tile rows
    per_wave = (11 * 128 + 12 * 256) * 8192 * 2
    expected = 66 * per_wave + 16896 * 16896 * 2
    assert estimate_tiled(GPU, big).dram_s == pytest.approx(expected / dram)


def test_attention_counts_two_matmuls_and_one_exponential_per_score():
    work = attention_work(batch_heads=32, seq_q=4096, seq_k=4096, head_dim=128, precision="fp16")
    assert work.tiles == 32 * 32
    assert work.tiles * work.tile_flops == 4.0 * 32 * 4096 * 4096 * 128
    assert work.tiles * work.tile_sfu_ops == 32 * 4096 * 4096
    causal = attention_work(
        batch_heads=32, seq_q=4096, seq_k=4096, head_dim=128, precision="fp16", causal=True
    )
    assert causal.tile_flops == work.tile_flops / 2
    estimate = estimate_tiled(GPU, work)
    # head_dim 128: 512 FLOPs per exponential; at 3786 FLOPs vs 16 MUFU per cycle the tensor
    # cores are still the bound, but the exponentials take about half their time
    assert estimate.bound == "tensor"
    assert estimate.sfu_s / estimate.tensor_s == pytest.approx(3786 / 16 / 512)
    # with head_dim 64 the exponentials bound it (FlashAttention-3's observation)
    small = attention_work(batch_heads=32, seq_q=4096, seq_k=4096, head_dim=64, precision="fp8")
    assert estimate_tiled(GPU, small).bound == "sfu"


def test_a_computation_names_its_kind_and_parameters():
    params = {
        "kind": "gemm",
        "M": 16896,
        "N": 16896,
        "K": 8192,
        "precision": "BF16",
        "tileN": 256,
        "clusterM": 2,
    }
    assert computation_estimate(H100, params).bound == "tensor"
    with pytest.raises(
        ValueError, match=re.escape(GEMM_ERRORS["missing_parameter"].format(name="K"))
    ):
        computation_estimate(H100, {"M": 1, "N": 1})
    with pytest.raises(ValueError, match="kind must be 'gemm' or 'attention', not 'conv'"):
        computation_estimate(H100, {**params, "kind": "conv"})
    with pytest.raises(ValueError, match="tensorPrecision 'fp3' is not one of"):
        computation_estimate(H100, {**params, "precision": "fp3"})
    with pytest.raises(ValueError, match="tileK must be positive"):
        computation_estimate(H100, {**params, "tileK": 0})
    with pytest.raises(ValueError, match="tensorFLOPsPerCycleFP4"):
        computation_estimate(H100, {**params, "precision": "fp4"})
    attention = {"kind": "attention", "batchHeads": 8, "seqQ": 1024, "seqK": 1024, "headDim": 64}
    no_sfus = {k: v for k, v in H100.items() if k != "SFUs"}
    with pytest.raises(ValueError, match="need the hardware's SFUs"):
        computation_estimate(no_sfus, attention)
    assert math.isfinite(computation_estimate(H100, {**attention, "causal": True}).time_s)
