"""The roofline of a GPU and a kernel's point on it (simulator/models/roofline.py)."""

from __future__ import annotations

import math

import pytest

from simulator.models.roofline import bound_class, gpu_roof, kernel_inputs, kernel_point

# GTX 970 as 000 Fig. 5.2 records it: GMEMThroughput 13.78 B/cycle/SM.
GTX970 = {"SMs": 13, "SMCoreClock": 1253, "CUDACores": 128, "warpSize": 32, "GMEMThroughput": 13.78}
SAXPY2 = {  # Listing 5 at N = 10^7, a = 1
    "CUDACoreInstructions": 27,
    "GMEMBytesTransferred": 384,
    "gridSize": 39063,
    "blockSize": 256,
    "occupancy": 64,
    "latencyBound": 966,
}


def test_the_gtx970_roofs_are_its_cores_and_its_recorded_bandwidth_over_the_gpu() -> None:
    roof = gpu_roof({**GTX970, "maxWarpsPerSM": 64})
    assert roof is not None
    assert roof.peak_ops_per_s == 13 * 128 * 1253e6
    assert roof.peak_bytes_per_s == pytest.approx(13.78 * 13 * 1253e6)
    assert roof.ridge_intensity == pytest.approx(128 / 13.78)
    assert roof.max_warps_per_sm == 64
    assert roof.attainable(1.0) == roof.peak_bytes_per_s
    assert roof.attainable(100.0) == roof.peak_ops_per_s


def test_without_gmem_throughput_the_bandwidth_is_eq_4_5_over_the_gpu() -> None:
    attributes = {k: v for k, v in GTX970.items() if k != "GMEMThroughput"}
    roof = gpu_roof({**attributes, "memoryClock": 1753, "busWidth": 256, "dataRate": 4})
    assert roof is not None
    assert roof.peak_bytes_per_s == pytest.approx(1753e6 * 32 * 4)


@pytest.mark.parametrize("missing", ["SMs", "SMCoreClock", "CUDACores", "GMEMThroughput"])
def test_a_record_without_a_roof_figure_has_no_roofline(missing: str) -> None:
    assert gpu_roof({k: v for k, v in GTX970.items() if k != missing}) is None


def test_only_a_kernels_params_give_kernel_inputs() -> None:
    assert kernel_inputs({"seconds": 2}) is None
    assert kernel_inputs({"CUDACoreInstructions": 27, "blockSize": 256, "gridSize": 4}) is None
    assert kernel_inputs({**SAXPY2, "GMEMBytesTransferred": "many"}) is None
    inputs = kernel_inputs({**SAXPY2, "name": "saxpy2"})
    assert inputs == {k: float(v) for k, v in SAXPY2.items() if k != "latencyBound"}


def test_a_memory_bound_saxpy2_runs_at_lambda_k_of_the_memory_roof() -> None:
    roof = gpu_roof(GTX970)
    inputs = kernel_inputs(SAXPY2)
    assert roof is not None and inputs is not None
    warps = 39063 * 8
    cycles_per_warp = 384 / 13.78  # the third term of (4.4), the largest
    time_s = warps * cycles_per_warp / (13 * 1253e6 * 0.703787)  # (4.1) with lambda_k
    point = kernel_point(inputs, time_s, roof)
    assert point is not None
    assert point.ops == warps * 32 * 27
    assert point.bytes == warps * 384
    assert point.intensity == 32 * 27 / 384
    assert point.roof_ops_per_s == pytest.approx(point.intensity * roof.peak_bytes_per_s)
    assert point.roof_fraction == pytest.approx(0.703787)


def test_n_gives_the_grid_when_the_params_have_no_grid_size() -> None:
    roof = gpu_roof(GTX970)
    inputs = kernel_inputs({k: v for k, v in SAXPY2.items() if k != "gridSize"} | {"N": 10**7})
    assert roof is not None and inputs is not None
    point = kernel_point(inputs, 1e-3, roof)
    assert point is not None and point.warps == math.ceil(10**7 / 256) * 8
    assert kernel_point(inputs, 0.0, roof) is None


@pytest.mark.parametrize(
    ("bound", "kind"),
    [
        ("latency", "latency"),
        ("schedulers", "issue"),
        ("issue", "issue"),
        ("global_memory", "memory"),
        ("l2", "memory"),
        ("launch", "launch"),
        ("cuda_cores", "compute"),
        ("unknown", None),
        (None, None),
    ],
)
def test_each_model_bound_falls_in_one_class(bound: object, kind: str | None) -> None:
    assert bound_class(bound) == kind


def test_every_ceiling_and_memory_roof_of_an_h100_record_is_listed() -> None:
    h100 = {
        "SMs": 132,
        "SMCoreClock": 1980,
        "CUDACores": 128,
        "FP64Units": 64,
        "memoryClock": 2619,
        "busWidth": 5120,
        "dataRate": 2,
        "L2Bandwidth": 4.923e12,
        "tensorFLOPsPerCycleFP16": 3786.0,
        "tensorFLOPsPerCycleFP8": 7572.0,
        "tensorFLOPsPerCycleFP64": 256.0,
    }
    roof = gpu_roof(h100)
    assert roof is not None
    cycles = 132 * 1980e6
    ceilings = dict(roof.ceilings)
    assert list(ceilings) == ["FP32", "FP64", "tensor FP16/BF16", "tensor FP8", "tensor FP64"]
    assert ceilings["FP32"] == roof.peak_ops_per_s
    assert ceilings["FP64"] == pytest.approx(64 * cycles)
    # FLOPs per cycle / 2: the roofline counts an FMA as one instruction
    assert ceilings["tensor FP16/BF16"] == pytest.approx(3786 / 2 * cycles)
    assert ceilings["tensor FP8"] == pytest.approx(2 * ceilings["tensor FP16/BF16"])
    roofs = dict(roof.memory_roofs)
    assert list(roofs) == ["shared memory / L1", "L2", "DRAM"]
    assert roofs["shared memory / L1"] == pytest.approx(128 * cycles)
    assert roofs["L2"] == 4.923e12
    assert roofs["DRAM"] == roof.peak_bytes_per_s


def test_a_tensor_bound_kernel_is_compute_bound() -> None:
    assert bound_class("tensor") == "compute"
    assert bound_class("int") == "compute"
