"""The GEMM tile picked by the problem's shape (simulator/models/gemm.py G.8): a decode GEMM of
a few rows runs a small-M tile (and split-K when its grid leaves SMs idle), so it is bound by
reading its weights; a GEMM with many rows keeps the 256 x 128 tile eta was fitted with."""

from __future__ import annotations

import pytest

from simulator.models.gemm import (
    LARGE_M_TILE,
    computation_estimate,
    estimate_tiled,
    gemm_work,
    select_gemm_tile,
)
from simulator.workloads.kernels import KernelTimer, gpu_record

# Llama 3 70B's weight GEMMs at TP 2 (N x K): fc2, fc1 (gate and up), qkv, proj, the logits
DECODE_SHAPES = ((8192, 14336), (28672, 8192), (5120, 8192), (8192, 4096), (64128, 8192))


def _timer(gpu: str) -> KernelTimer:
    return KernelTimer(gpu_record(gpu))


@pytest.mark.parametrize(
    ("gpu", "precision", "in_bytes"),
    [
        ("H100 SXM5 80GB", "fp8", 1),
        ("H100 SXM5 80GB", "bf16", 2),
        ("A100 SXM4 80GB", "bf16", 2),
    ],
)
@pytest.mark.parametrize("rows", [1, 8, 64])
@pytest.mark.parametrize(("n", "k"), DECODE_SHAPES)
def test_a_decode_gemm_takes_about_the_time_to_read_its_weights(
    gpu: str, precision: str, in_bytes: int, rows: int, n: int, k: int
) -> None:
    timer = _timer(gpu)
    weights_s = n * k * in_bytes / timer.dram_bytes_per_s
    kernel = timer.gemm("decode", rows, n, k, precision)
    work_s = kernel.seconds - timer.gpu.launch_overhead_s
    assert kernel.bound == "global_memory"
    assert work_s >= weights_s
    assert work_s <= 1.2 * weights_s


@pytest.mark.parametrize("gpu", ["H100 SXM5 80GB", "A100 SXM4 80GB"])
@pytest.mark.parametrize(
    ("m", "n", "k", "precision"),
    [
        (8192, 8192, 8192, "fp8"),
        (4096, 28672, 8192, "bf16"),
        (129, 8192, 8192, "bf16"),  # the first M past the small-M tiles
        (8192, 4096, 2048, "bf16"),  # a weight gradient's shape (M = K of the layer)
    ],
)
def test_a_gemm_with_many_rows_keeps_the_256_by_128_tile(
    gpu: str, m: int, n: int, k: int, precision: str
) -> None:
    timer = _timer(gpu)
    if precision == "fp8" and "tensorFLOPsPerCycleFP8" not in timer.attributes:
        pytest.skip("no FP8 tensor cores on record")
    hopper = timer.attributes["computeCapability"] >= 9
    # the one tile every GEMM ran before the tile was picked by shape
    work = gemm_work(
        m=m,
        n=n,
        k=k,
        precision=precision,
        tile_m=256,
        tile_n=128,
        tile_k=64,
        cluster_m=2 if hopper else 1,
        output_bytes=2,
    )
    sustained = dict(timer.sustained)
    if precision == "fp8":
        sustained["tensor_efficiency"] = timer.fp8_efficiency()
    expected = estimate_tiled(timer.gpu, work, **sustained)  # type: ignore[arg-type]
    assert timer.gemm("large", m, n, k, precision).seconds == expected.time_s


def test_the_tile_follows_the_rows_as_the_library_dispatch_does() -> None:
    def pick(m: int) -> tuple[int, int, int, int]:
        tile = select_gemm_tile(m, 65536, 8192, sms=132, clusters=True)
        return tile.tile_m, tile.tile_n, tile.cluster_m, tile.cluster_n

    assert pick(1) == pick(64) == (64, 64, 1, 8)
    assert pick(65) == pick(128) == (64, 128, 2, 1)
    assert pick(129) == pick(100_000) == (256, 128, 2, 1)
    before_hopper = select_gemm_tile(1, 65536, 8192, sms=108, clusters=False)
    assert (before_hopper.cluster_m, before_hopper.cluster_n) == (1, 1)
    assert select_gemm_tile(4096, 128, 8192, sms=132, clusters=True) == LARGE_M_TILE


def test_a_small_grid_is_split_along_k_to_fill_the_sms_once() -> None:
    # 4096 / 64 = 64 tiles on 132 SMs: two slices make 128 tiles
    assert select_gemm_tile(8, 4096, 4096, sms=132, clusters=True).split_k == 2
    # 8 columns of 64: one tile, as many slices as SMs but no more than K blocks (4096 / 64)
    assert select_gemm_tile(8, 8, 4096, sms=132, clusters=True).split_k == 64
    assert select_gemm_tile(8, 8, 128, sms=132, clusters=True).split_k == 2
    # a full grid is not split, nor is a GEMM with many rows
    assert select_gemm_tile(8, 8192, 4096, sms=132, clusters=True).split_k == 1
    assert select_gemm_tile(1024, 128, 65536, sms=132, clusters=True).split_k == 1


def test_split_k_keeps_the_flops_and_adds_the_partial_outputs() -> None:
    whole = gemm_work(m=8, n=4096, k=4096, precision="bf16", tile_m=64, tile_n=64, tile_k=64)
    split = gemm_work(
        m=8, n=4096, k=4096, precision="bf16", tile_m=64, tile_n=64, tile_k=64, split_k=4
    )
    assert split.tiles == 4 * whole.tiles
    assert split.tiles * split.tile_flops == whole.tiles * whole.tile_flops
    # slices 2 to 4 each read the partial output and write it again (serial split-K)
    assert split.minimum_bytes - whole.minimum_bytes == 6 * 8 * 4096 * 2
    # more slices than K blocks: one slice per block
    assert gemm_work(m=1, n=64, k=128, precision="bf16", tile_k=64, split_k=8).tiles == 2


def test_a_computation_takes_split_k_from_its_params() -> None:
    attributes = gpu_record("H100 SXM5 80GB")
    params = {"kind": "gemm", "M": 8, "N": 64, "K": 65536, "tileM": 64, "tileN": 64}
    whole = computation_estimate(attributes, params)
    split = computation_estimate(attributes, {**params, "splitK": 64})
    assert split.tiles == 64 * whole.tiles
    assert split.tensor_s < whole.tensor_s / 32
