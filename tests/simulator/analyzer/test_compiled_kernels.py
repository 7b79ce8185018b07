"""Kernels compiled here with nvcc for sm_80 / sm_90 (skipped without nvcc and cuobjdump).

Each (source, arch) compiles once per test session: compile_cuda caches its results.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from simulator.analyzer import AnalyzerError, analyze_cuda
from simulator.analyzer.analysis import KernelAnalysis
from simulator.analyzer.compile import nvcc_available
from simulator.analyzer.polynomial import Polynomial
from simulator.models.volkov import GpuHardware, computation_time, estimate_kernel

pytestmark = pytest.mark.skipif(
    not nvcc_available(), reason="nvcc and cuobjdump are needed to compile CUDA kernels"
)
KERNELS = Path(__file__).parents[3] / "examples" / "kernels"
a = Polynomial.symbol("a")

H100_SXM = {  # attributes as the hardware database stores them (clocks in MHz)
    "SMs": 132,
    "SMCoreClock": 1755,
    "CUDACores": 128,
    "schedulers": 4,
    "memoryClock": 2619,
    "busWidth": 5120,
    "dataRate": 2,
    "computeCapability": 9.0,
}


def analysis(name: str, arch: str, **options: object) -> KernelAnalysis:
    return analyze_cuda(KERNELS / f"{name}.cu", arch, **options)  # type: ignore[arg-type]


@pytest.mark.parametrize(("arch", "registers"), [("sm_80", 9), ("sm_90", 8)])
def test_saxpy2_registers_come_from_ptxas(arch: str, registers: int) -> None:
    # 000 Listing 1 reports 8 registers on sm_52; nvcc 13's ptxas reports 9 on sm_80, 8 on sm_90
    result = analysis("saxpy2", arch, block_size=256)
    assert result.resources is not None
    assert result.resources.registers == registers
    assert result.resources.shared_bytes == 0 and result.resources.spill_store_bytes == 0
    assert result.occupancy is not None and result.occupancy.active_warps_per_sm == 64


@pytest.mark.parametrize("arch", ["sm_80", "sm_90"])
def test_saxpy2_keeps_the_paper_structure(arch: str) -> None:
    result = analysis("saxpy2", arch)
    assert result.trip_symbols == ["a"]
    assert result.gmem_bytes == 384  # two loads and a store of 4 bytes x 32 threads
    assert result.counts.global_accesses == 3
    (loop,) = result.graph.loops
    per_iteration = loop.per_iteration.single
    assert per_iteration is not None and per_iteration.is_constant
    lat = result.lat_bound.single
    assert lat is not None and lat.coefficient("a") == per_iteration.coefficient()
    assert result.graph.breakdown["memory"].coefficient() >= 2 * result.table.memory["global"]
    assert result.ins_cuda.coefficient("a") >= 3  # counter add, compare, FADD, branch


def test_saxpy2_for_sm_90_drives_the_volkov_model_unchanged() -> None:
    result = analysis("saxpy2", "sm_90", trips={"a": 64}, block_size=256)
    params = result.model_params()
    assert params["registersPerThread"] == 8 and params["occupancy"] == 64
    time_s = computation_time(H100_SXM, {**params, "N": 10**7})
    expected = estimate_kernel(
        GpuHardware.from_attributes(H100_SXM),
        result.profile(),
        block_size=256,
        n=10**7,
        occupancy=64,
    ).time_s
    assert time_s == pytest.approx(expected, rel=1e-12)
    assert 0 < time_s < 1e-2


def test_vector_add_has_no_loop_and_one_memory_latency_on_its_path() -> None:
    result = analysis("vector_add", "sm_80")
    assert result.trip_symbols == []
    assert result.gmem_bytes == 384 and result.counts.global_accesses == 3
    assert result.lat_bound.single is not None and result.lat_bound.single.is_constant
    # the two loads overlap: only one global latency lies on the critical path
    assert result.graph.breakdown["memory"] == result.table.memory["global"]


def test_tiled_matmul_loops_over_tiles_with_shared_memory() -> None:
    result = analysis("matmul_tiled", "sm_80", trips={"a": 64}, block_size=256)
    assert result.resources is not None and result.resources.shared_bytes == 2 * 16 * 16 * 4
    assert result.trip_symbols == ["a"]
    assert result.gmem_bytes == 128 + 256 * a  # two tile loads per iteration, one store
    assert result.counts.shared_accesses.coefficient() == 0
    assert result.counts.shared_accesses.coefficient("a") >= 2 + 16  # 2 stores + the dot product
    assert result.counts.by_class["sync"].coefficient("a") == 2  # two __syncthreads per tile
    loop = result.graph.loops[0].per_iteration.single
    assert loop is not None and loop.coefficient() > result.table.memory["global"]


def test_reduction_loop_counts_shared_traffic_per_step() -> None:
    result = analysis("reduction", "sm_80", trips={"a": 8}, block_size=256)
    assert result.trip_symbols == ["a"]
    assert result.gmem_bytes == 256  # one load and one store per thread
    shared = result.counts.shared_accesses
    assert shared.coefficient("a") >= 2 and shared.coefficient() >= 1
    assert result.values()["INS_shared"] == shared.evaluate({"a": 8})


def test_compiler_errors_are_shown_verbatim() -> None:
    with pytest.raises(AnalyzerError) as caught:
        analyze_cuda("__global__ void broken(int *x) { x[0] = undefined_name; }\n", "sm_80")
    message = str(caught.value)
    assert message.startswith("nvcc failed for sm_80")
    assert 'identifier "undefined_name" is undefined' in message


def test_an_architecture_nvcc_dropped_fails_with_its_message() -> None:
    with pytest.raises(AnalyzerError, match="nvcc failed for sm_52") as caught:
        analysis("saxpy2", "sm_52")
    assert "sm_52" in str(caught.value) or "compute_52" in str(caught.value)
