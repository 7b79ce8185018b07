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


# -- (C.8)-(C.10): atomics with contention, barriers, sectors per request ------------------

# atomic_add of the kit's zoo: one atomicAdd per thread after one coalesced 4-byte load, in
# full waves of 8-warp blocks, so that the atomics' term is what bounds the kernel
ATOMIC_PARAMS: dict[str, Any] = {
    "gridSize": 132 * 8 * 10,
    "blockSize": 256,
    "occupancy": 64,
    "CUDACoreInstructions": 12,
    "issuedInstructions": 14,
    "GMEMBytesTransferred": 256,
    "latencyBound": 900,
    "atomicsPerThread": 1,
    "transitionExponent": math.inf,
}


def atomic_cycles(attributes: Mapping[str, Any], params: Mapping[str, Any]) -> float:
    estimate = computation_estimate(attributes, params)
    assert estimate.bound == "atomics"
    return 1 / estimate.throughput_bound


def test_atomics_on_one_address_serialise_at_one_per_clock():
    # 32 operations per warp, one per clock for the whole GPU: 32 x 132 SM cycles per warp
    # (NVIDIA's Kepler GK110 whitepaper: one operation per clock on a common address)
    one = atomic_cycles(H100_TENSOR, {**ATOMIC_PARAMS, "atomicAddresses": 1})
    assert one == pytest.approx(32 * 132)
    # D addresses proceed D at a time
    assert atomic_cycles(H100_TENSOR, {**ATOMIC_PARAMS, "atomicAddresses": 8}) == pytest.approx(
        one / 8
    )
    # a record's own rate per address replaces the whitepaper's
    faster = {**H100_TENSOR, "atomicSameAddressRate": 2}
    assert atomic_cycles(faster, {**ATOMIC_PARAMS, "atomicAddresses": 1}) == pytest.approx(one / 2)


def test_spread_atomics_proceed_at_the_l2s_sector_rate_and_many_addresses_reach_it():
    # one 32-byte sector per operation at the L2's 10 TB/s: 3.125e11 operations per second
    spread_rate = 10e12 / 32
    cycles = 32 * 132 * 1980e6 / spread_rate
    assert atomic_cycles(H100_TENSOR, ATOMIC_PARAMS) == pytest.approx(cycles)
    # 65536 addresses could do 65536 per clock: more than the L2 does, so the L2's rate holds
    many = atomic_cycles(H100_TENSOR, {**ATOMIC_PARAMS, "atomicAddresses": 65536})
    assert many == pytest.approx(cycles)
    # one address is 1980e6 / 3.125e11 = 158 times slower than spread addresses
    one = atomic_cycles(H100_TENSOR, {**ATOMIC_PARAMS, "atomicAddresses": 1})
    assert one / many == pytest.approx(spread_rate / 1980e6)
    # a warp's 4-byte atomics on consecutive addresses share 4 sectors: 8 operations a
    # sector, so 8 such atomics per thread take as long as one scattered
    coalesced = {**ATOMIC_PARAMS, "atomicsPerSector": 8, "atomicsPerThread": 8}
    assert atomic_cycles(H100_TENSOR, coalesced) == pytest.approx(cycles)
    # a recorded L2AtomicThroughput replaces the sector estimate
    recorded = {**H100_TENSOR, "L2AtomicThroughput": spread_rate / 2}
    assert atomic_cycles(recorded, ATOMIC_PARAMS) == pytest.approx(2 * cycles)


def test_an_atomic_per_block_costs_its_fraction_and_no_atomics_add_no_term():
    # reduce_sum: one atomic per block of 256 threads on one address
    # (its loads left out: with them, the kernel is bound by the memory)
    per_block = {
        **ATOMIC_PARAMS,
        "atomicsPerThread": 1 / 256,
        "atomicAddresses": 1,
        "GMEMBytesTransferred": 0,
    }
    assert atomic_cycles(H100_TENSOR, per_block) == pytest.approx(32 * 132 / 256)
    without = {k: v for k, v in ATOMIC_PARAMS.items() if k != "atomicsPerThread"}
    assert computation_estimate(H100_TENSOR, without) == computation_estimate(
        H100_TENSOR, {**without, "atomicsPerThread": 0, "atomicAddresses": 1}
    )


@pytest.mark.parametrize(
    ("name", "value", "message"),
    [
        ("atomicsPerThread", -1, "atomicsPerThread must be zero or positive"),
        ("atomicAddresses", 0, "atomicAddresses must be positive"),
        ("atomicsPerSector", 0, "atomicsPerSector must be positive"),
        ("barrierInstructions", -1, "barrierInstructions must be zero or positive"),
        ("sectorsPerRequest", 0, "sectorsPerRequest must be positive"),
        ("accessBytes", 0, "accessBytes must be positive"),
    ],
)
def test_meaningless_atomic_barrier_and_sector_parameters_are_refused(name, value, message):
    with pytest.raises(ValueError, match=message):
        computation_estimate(H100_TENSOR, {**ATOMIC_PARAMS, name: value})


def test_a_gather_moves_eight_times_the_bytes_of_a_coalesced_access():
    # a stream kernel bound by the DRAM: 4 sectors per 4-byte request is the coalesced case
    params = {**ATOMIC_PARAMS, "atomicsPerThread": 0, "GMEMBytesTransferred": 384}
    coalesced = computation_estimate(H100_TENSOR, params)
    assert coalesced.bound == "global_memory"
    same = computation_estimate(H100_TENSOR, {**params, "sectorsPerRequest": 4})
    assert same == coalesced
    # a random gather: every lane its own sector, 32 per request
    gather = computation_estimate(H100_TENSOR, {**params, "sectorsPerRequest": 32})
    assert coalesced.throughput_bound / gather.throughput_bound == pytest.approx(8)
    # 8-byte lanes coalesced take 8 sectors per request, as many bytes as the analyzer counts
    wide = computation_estimate(H100_TENSOR, {**params, "sectorsPerRequest": 8, "accessBytes": 8})
    assert wide.throughput_bound == pytest.approx(coalesced.throughput_bound)


def test_a_barrier_makes_a_blocks_warps_wait_for_the_slowest():
    # latency bound: one block of 8 warps per SM, 1000 issued instructions per warp
    params = {
        **ATOMIC_PARAMS,
        "atomicsPerThread": 0,
        "gridSize": 132 * 8 * 10,
        "issuedInstructions": 1000,
        "CUDACoreInstructions": 1000,
        "latencyBound": 20000,
    }
    free = computation_estimate(H100_TENSOR, params)
    assert computation_estimate(H100_TENSOR, {**params, "barrierInstructions": 0}) == free
    synced = computation_estimate(H100_TENSOR, {**params, "barrierInstructions": 1})
    # 8 warps on 4 schedulers: the last warp reaches the barrier one segment (500
    # instructions) after the first
    assert synced.latency_bound == pytest.approx(20000 + 500)
    assert (free.bound, synced.bound) == ("latency", "latency")
    work = (free.time_s - free.launch_s, synced.time_s - synced.launch_s)
    assert work[1] / work[0] == pytest.approx(20500 / 20000)
    # a recorded barrier cost adds per barrier
    costly = {**H100_TENSOR, "barrierLatency": 20}
    three = computation_estimate(costly, {**params, "barrierInstructions": 3})
    assert three.latency_bound == pytest.approx(20000 + 3 * (20 + 250))
    # warps no more than the schedulers wait for no one
    small = computation_estimate(
        H100_TENSOR, {**params, "blockSize": 128, "barrierInstructions": 1}
    )
    assert small.latency_bound == pytest.approx(20000)
