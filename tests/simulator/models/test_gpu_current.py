"""The current-architecture GPU kernel model (C.1)-(C.4): Volkov's model as its limit case, the
tail wave, the launch bound, the L2 bandwidth and its error messages."""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from typing import Any

import pytest

from simulator.models.architectures import profile_for_compute_capability
from simulator.models.gpu_current import (
    CURRENT_ERRORS,
    TRANSITION_EXPONENT,
    CurrentGpu,
    CurrentKernelEstimate,
    computation_estimate,
    estimate_kernel_current,
    smooth_warp_throughput,
)
from simulator.models.volkov import (
    VOLKOV_ERRORS,
    GpuHardware,
    KernelProfile,
    estimate_kernel,
    saxpy2_profile,
)

GTX970 = {
    "SMs": 13,
    "SMCoreClock": 1253,
    "CUDACores": 128,
    "schedulers": 4,
    "warpSize": 32,
    "memoryClock": 1753,
    "busWidth": 256,
    "dataRate": 4,
    "computeCapability": 5.2,
}
# Volkov's model has neither a launch overhead nor an achievable fraction of the bandwidth.
GTX970_AS_VOLKOV = {**GTX970, "kernelLaunchOverhead": 0.0, "memoryEfficiency": 1.0}
H100 = {
    "SMs": 132,
    "SMCoreClock": 1980,
    "CUDACores": 128,
    "schedulers": 4,
    "memoryClock": 2619,
    "busWidth": 5120,
    "dataRate": 2,
    "computeCapability": 9.0,
    "L2Cache": 50 * 2**20,
    "L2Bandwidth": 10e12,
}
STREAM = KernelProfile(
    cuda_core_instructions=10, issued_instructions=10, gmem_bytes=384, latency_bound=900
)
# enough warps in flight at full occupancy to be bound by the bandwidth, even the L2's
BANDWIDTH_BOUND = KernelProfile(
    cuda_core_instructions=10, issued_instructions=10, gmem_bytes=384, latency_bound=100
)


def _current(
    attributes: Mapping[str, float | str], profile: KernelProfile = STREAM, **launch: Any
) -> CurrentKernelEstimate:
    return estimate_kernel_current(CurrentGpu.from_attributes(attributes), profile, **launch)


@pytest.mark.parametrize("intensity", [0, 1, 8, 64])  # memory-, then CUDA-core-bound
@pytest.mark.parametrize("waves", [1, 3, 1000])
def test_with_infinite_p_whole_waves_and_no_overhead_it_is_volkovs_model(intensity, waves):
    profile = saxpy2_profile(intensity)
    occupancy, block_size = 64.0, 256  # 8 warps a block, 8 blocks per SM
    grid = waves * 8 * GTX970["SMs"]
    current = _current(
        GTX970_AS_VOLKOV,
        profile,
        block_size=block_size,
        grid_size=grid,
        occupancy=occupancy,
        exponent=math.inf,
    )
    volkov = estimate_kernel(
        GpuHardware.from_attributes(GTX970),
        profile,
        block_size=block_size,
        grid_size=grid,
        occupancy=occupancy,
    )
    # the same quantities in another order of operations: equal to the last bits of a double
    assert current.time_s == pytest.approx(volkov.time_s, rel=1e-14)
    assert current.throughput_bound == volkov.throughput_bound
    assert current.waves == waves and current.launch_s == 0.0


def test_a_large_p_approaches_volkovs_minimum():
    launch: dict[str, Any] = {"block_size": 256, "grid_size": 13 * 8 * 10, "occupancy": 64.0}
    exact = _current(GTX970_AS_VOLKOV, saxpy2_profile(1), exponent=math.inf, **launch).time_s
    near = _current(GTX970_AS_VOLKOV, saxpy2_profile(1), exponent=1e4, **launch).time_s
    assert near == pytest.approx(exact, rel=1e-3) and near >= exact


@pytest.mark.parametrize("exponent", [None, 1.0, 8.0, math.inf])
def test_one_block_past_a_whole_wave_costs_one_more_wave_of_one_block_per_sm(exponent):
    gpu = CurrentGpu.from_attributes(H100)
    blocks_per_sm, warps_per_block = 2, 8  # 256 threads, 16 warps per SM
    whole = blocks_per_sm * H100["SMs"]
    launch: dict[str, Any] = {"block_size": 256, "occupancy": 16.0, "exponent": exponent}
    even = _current(H100, grid_size=whole, **launch)
    tail = _current(H100, grid_size=whole + 1, **launch)
    p = TRANSITION_EXPONENT if exponent is None else exponent
    one_block_per_sm = smooth_warp_throughput(
        occupancy=warps_per_block,
        latency_bound=STREAM.latency_bound,
        throughput_bound=even.throughput_bound,
        exponent=p,
    )
    tail_s = warps_per_block / one_block_per_sm / gpu.base.sm_clock_hz
    assert (even.waves, tail.waves, tail.tail_blocks) == (1, 2, 1)
    assert tail.time_s - even.time_s == pytest.approx(tail_s, rel=1e-9)


def test_a_latency_bound_tail_wave_lasts_one_latency():
    launch: dict[str, Any] = {"block_size": 256, "occupancy": 16.0, "exponent": math.inf}
    whole = 2 * H100["SMs"]
    even = _current(H100, grid_size=whole, **launch)
    tail = _current(H100, grid_size=whole + 1, **launch)
    assert 16 / STREAM.latency_bound < even.throughput_bound  # latency-bound
    clock_hz = H100["SMCoreClock"] * 1e6
    assert tail.time_s - even.time_s == pytest.approx(STREAM.latency_bound / clock_hz, rel=1e-12)


def test_a_tiny_grid_is_bound_by_the_launch_overhead_of_its_architecture():
    estimate = _current(H100, block_size=256, grid_size=1, occupancy=64.0)
    overhead = profile_for_compute_capability("9.0").launch_overhead_s
    assert estimate.bound == "launch"
    assert estimate.launch_s == overhead
    assert overhead < estimate.time_s < 2 * overhead


def test_recorded_launch_overhead_and_memory_efficiency_override_the_architectures():
    gpu = CurrentGpu.from_attributes(
        {**H100, "kernelLaunchOverhead": 1e-6, "memoryEfficiency": 0.5}
    )
    assert (gpu.launch_overhead_s, gpu.memory_efficiency) == (1e-6, 0.5)
    default = CurrentGpu.from_attributes(H100)
    profile = profile_for_compute_capability("9.0")
    assert (default.launch_overhead_s, default.memory_efficiency) == (
        profile.launch_overhead_s,
        profile.memory_efficiency,
    )


@pytest.mark.parametrize(
    ("l2_resident", "footprint", "uses_l2"),
    [
        (True, 1e6, True),
        (True, float(H100["L2Cache"]), True),  # exactly the L2's size still fits
        (True, H100["L2Cache"] + 1.0, False),
        (True, None, False),
        (False, 1e6, False),
    ],
)
def test_the_l2_bandwidth_serves_only_resident_data_that_fit_in_l2(l2_resident, footprint, uses_l2):
    estimate = _current(
        H100,
        BANDWIDTH_BOUND,
        block_size=256,
        grid_size=132 * 8 * 100,
        occupancy=64.0,
        footprint_bytes=footprint,
        l2_resident=l2_resident,
    )
    gpu = CurrentGpu.from_attributes(H100)
    dram = gpu.base.gmem_bandwidth * gpu.memory_efficiency * 132 * gpu.base.sm_clock_hz
    expected = H100["L2Bandwidth"] if uses_l2 else dram
    assert estimate.memory_bandwidth == pytest.approx(expected, rel=1e-12)
    assert estimate.bound == ("l2" if uses_l2 else "global_memory")


def test_without_l2_attributes_resident_data_use_the_dram_bandwidth():
    record = {key: value for key, value in H100.items() if not key.startswith("L2")}
    launch: dict[str, Any] = {"block_size": 256, "grid_size": 132 * 8 * 100, "occupancy": 64.0}
    resident = _current(record, footprint_bytes=1e6, l2_resident=True, **launch)
    assert resident.time_s == _current(record, **launch).time_s


def test_an_l2_resident_kernel_needs_no_dram_attributes():
    record = {key: value for key, value in H100.items() if key != "memoryClock"}
    estimate = _current(
        record,
        BANDWIDTH_BOUND,
        block_size=256,
        grid_size=132 * 8 * 100,
        occupancy=64.0,
        footprint_bytes=1e6,
        l2_resident=True,
    )
    assert estimate.bound == "l2"


@pytest.mark.parametrize("missing", ["SMs", "SMCoreClock", "CUDACores", "schedulers"])
def test_a_missing_volkov_attribute_is_named(missing):
    record = {key: value for key, value in H100.items() if key != missing}
    message = VOLKOV_ERRORS["missing_attribute"].format(name=missing)
    with pytest.raises(ValueError, match=message):
        CurrentGpu.from_attributes(record)


@pytest.mark.parametrize("missing", ["kernelLaunchOverhead", "memoryEfficiency"])
@pytest.mark.parametrize("cc", [None, "1.0"])  # no compute capability, or one without a profile
def test_a_missing_architecture_value_is_named_without_a_known_compute_capability(missing, cc):
    record: dict[str, float | str] = {
        key: value for key, value in H100.items() if key != "computeCapability"
    }
    record |= {"kernelLaunchOverhead": 5e-6, "memoryEfficiency": 0.8}
    del record[missing]
    if cc is not None:
        record |= {"computeCapability": cc, "maxWarpsPerSM": 64, "maxBlocksPerSM": 32}
        record |= {"registersPerSM": 65536, "sharedMemPerSM": 233472}
    message = CURRENT_ERRORS["missing_attribute"].format(name=missing)
    with pytest.raises(ValueError, match=re.escape(message)):
        CurrentGpu.from_attributes(record)


def test_a_block_that_does_not_fit_at_the_occupancy_is_refused():
    message = CURRENT_ERRORS["no_blocks"].format(block_size=512, occupancy=8.0)
    with pytest.raises(ValueError, match=re.escape(message)):
        _current(H100, block_size=512, grid_size=1000, occupancy=8.0)


def test_a_missing_kernel_parameter_is_named():
    params = {"gridSize": 1, "blockSize": 256, "occupancy": 64, "issuedInstructions": 10}
    with pytest.raises(ValueError, match="'CUDACoreInstructions'"):
        computation_estimate(H100, params)


@pytest.mark.parametrize(("name", "value"), [("occupancy", 0), ("transitionExponent", -1.0)])
def test_non_positive_occupancy_and_exponent_are_refused(name, value):
    params = {
        "gridSize": 1,
        "blockSize": 256,
        "occupancy": 64,
        "CUDACoreInstructions": 10,
        "issuedInstructions": 10,
        "GMEMBytesTransferred": 384,
        "latencyBound": 900,
        name: value,
    }
    with pytest.raises(ValueError, match="must be positive"):
        computation_estimate(H100, params)


def test_the_wake_penalty_grows_with_idle_time_to_its_recorded_maximum():
    record = {**H100, "clockWakePenalty": 25e-6, "clockWakeTimeConstant": 0.02}
    launch: dict[str, Any] = {"block_size": 256, "grid_size": 132 * 8, "occupancy": 64.0}
    busy = _current(record, **launch).time_s
    after_20_ms = _current(record, idle_before_s=0.02, **launch).time_s
    after_long = _current(record, idle_before_s=10.0, **launch).time_s
    assert after_20_ms - busy == pytest.approx(25e-6 * (1 - math.exp(-1)))
    assert after_long - busy == pytest.approx(25e-6)
    assert _current(H100, idle_before_s=10.0, **launch).time_s == _current(H100, **launch).time_s


def test_a_negative_idle_time_is_refused():
    with pytest.raises(ValueError, match="idleBeforeS must be zero or positive"):
        _current(H100, idle_before_s=-1.0, block_size=256, grid_size=1, occupancy=64.0)


# -- (C.6): tensor cores by precision, INT32 lanes ------------------------------------------

# The H100 SXM5 seed record's tensor-core rates [FLOP/cycle/SM] and INT32 lanes.
H100_TENSOR = {
    **H100,
    "kernelLaunchOverhead": 5e-6,
    "memoryEfficiency": 0.82,
    "tensorFLOPsPerCycleFP16": 3786.0,
    "tensorFLOPsPerCycleTF32": 1893.0,
    "tensorFLOPsPerCycleFP8": 7572.0,
    "tensorFLOPsPerCycleFP64": 256.0,
    "tensorOpsPerCycleINT8": 7572.0,
    "INTUnits": 64,
}
# A GEMM main loop: per warp 4096 mma.sync instructions, a few hundred other instructions and
# a few kB from global memory (the tiles come through shared memory, reused)
GEMM_PARAMS: dict[str, Any] = {
    "gridSize": 132 * 8 * 10,
    "blockSize": 128,
    "occupancy": 32,
    "CUDACoreInstructions": 600,
    "issuedInstructions": 4096 + 600,
    "GMEMBytesTransferred": 8192,
    "latencyBound": 2000,
    "tensorInstructions": 4096,
}


def tensor_work_s(attributes: Mapping[str, Any], params: Mapping[str, Any]) -> float:
    estimate = computation_estimate(attributes, params)
    assert estimate.bound == "tensor"
    return estimate.time_s - estimate.launch_s


@pytest.mark.parametrize(
    ("precision", "rate"),
    [("fp16", 3786.0), ("bf16", 3786.0), ("tf32", 1893.0), ("fp8", 7572.0), ("fp64", 256.0)],
)
def test_a_tensor_bound_kernels_time_follows_the_tensor_rate_of_its_precision(precision, rate):
    # with the FLOPs of an instruction held, the time is the FLOPs over the precision's rate:
    # waves x warps per SM x INS_tensor x F_mma / rate cycles (p -> inf: no latency blend)
    params = {**GEMM_PARAMS, "tensorPrecision": precision, "tensorFLOPsPerInstruction": 4096}
    params["transitionExponent"] = math.inf
    waves = GEMM_PARAMS["gridSize"] / (132 * 8)
    expected = waves * 32 * 4096 * 4096 / rate / 1980e6
    assert tensor_work_s(H100_TENSOR, params) == pytest.approx(expected, rel=1e-12)


def test_each_precision_defaults_to_its_mma_shape_and_fp8_is_twice_fp16():
    fp16 = tensor_work_s(H100_TENSOR, {**GEMM_PARAMS, "tensorPrecision": "fp16"})
    fp8 = tensor_work_s(H100_TENSOR, {**GEMM_PARAMS, "tensorPrecision": "fp8"})
    tf32 = tensor_work_s(H100_TENSOR, {**GEMM_PARAMS, "tensorPrecision": "tf32"})
    # m16n8k32 at twice the rate of m16n8k16 takes as long per instruction; m16n8k8 at half
    assert fp8 == pytest.approx(fp16)
    assert tf32 == pytest.approx(fp16)
    # a kernel without its tensor instructions is not tensor bound and much faster
    without = computation_estimate(H100_TENSOR, {**GEMM_PARAMS, "tensorInstructions": 0})
    assert without.bound != "tensor"
    assert without.time_s < 0.5 * fp16


def test_a_precision_the_gpu_has_no_tensor_rate_for_is_refused_by_name():
    volta = {k: v for k, v in H100_TENSOR.items() if k != "tensorFLOPsPerCycleFP8"}
    message = CURRENT_ERRORS["no_tensor_rate"].format(
        name="tensorFLOPsPerCycleFP8", precision="fp8"
    )
    with pytest.raises(ValueError, match=re.escape(message)):
        computation_estimate(volta, {**GEMM_PARAMS, "tensorPrecision": "fp8"})
    with pytest.raises(ValueError, match="tensorPrecision 'fp3' is not one of fp16, bf16"):
        computation_estimate(H100_TENSOR, {**GEMM_PARAMS, "tensorPrecision": "fp3"})
    with pytest.raises(ValueError, match="tensorFLOPsPerInstruction must be positive"):
        computation_estimate(H100_TENSOR, {**GEMM_PARAMS, "tensorFLOPsPerInstruction": 0})


def test_int32_instructions_run_on_the_int_lanes_half_the_fp32_lanes():
    params = {
        **GEMM_PARAMS,
        "tensorInstructions": 0,
        "CUDACoreInstructions": 4000,
        "issuedInstructions": 4000,
        "INTInstructions": 3000,
    }
    estimate = computation_estimate(H100_TENSOR, params)
    # 32 x 3000 / 64 lanes = 1500 cycles per warp > 32 x 4000 / 128 cores = 1000
    assert estimate.bound == "int"
    assert estimate.throughput_bound == pytest.approx(1 / 1500)
    # without INTUnits (Maxwell, Pascal: INT32 on the FP32 cores) they count in INS_cuda only
    no_lanes = {k: v for k, v in H100_TENSOR.items() if k != "INTUnits"}
    assert computation_estimate(no_lanes, params).bound == "cuda_cores"


def test_an_n_way_bank_conflict_multiplies_the_shared_memory_term_by_n():
    # a transpose through shared memory: 64 LDS/STS per warp; a column read of a 32 x 32 float
    # tile without padding hits one bank 32 times (n = 32), with padding once (n = 1)
    params = {
        **GEMM_PARAMS,
        "tensorInstructions": 0,
        "CUDACoreInstructions": 40,
        "issuedInstructions": 120,
        "GMEMBytesTransferred": 1024,
        "sharedMemoryInstructions": 64,
    }
    record = {**H100_TENSOR, "LDSTUnits": 32}
    padded = computation_estimate(record, params)
    conflicted = computation_estimate(record, {**params, "sharedMemoryConflictWays": 32})
    assert padded.bound != "shared_memory"
    assert conflicted.bound == "shared_memory"
    assert conflicted.throughput_bound == pytest.approx(1 / (32 * 64 * 32 / 32))
    with pytest.raises(ValueError, match=re.escape(CURRENT_ERRORS["conflict_ways"])):
        computation_estimate(record, {**params, "sharedMemoryConflictWays": 0.5})
