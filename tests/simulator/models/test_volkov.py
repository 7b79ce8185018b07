"""Volkov's kernel model against 000's reference values (docs/models.md 1)."""

from __future__ import annotations

import numpy as np
import pytest

from simulator.models.volkov import (
    VOLKOV_ERRORS,
    GpuHardware,
    KernelProfile,
    estimate_kernel,
    gmem_bandwidth_per_sm,
    grid_size_for,
    kernel_time,
    lambda_k,
    saxpy2_profile,
    throughput_bound,
    warp_throughput,
    warps_launched,
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
GTX970_MERPSYS = {**GTX970, "GMEMThroughput": 13.78}  # Fig. 5.2
LAMBDA_K = 0.703787


@pytest.mark.parametrize(
    ("sms", "sm_clock", "memory_clock", "bus", "printed"),
    [
        (13, 1253, 1753, 256, "13.78"),  # GTX 970
        (24, 1076, 1753, 384, "13.03"),  # GTX TITAN X (Maxwell)
        (15, 1923, 2002, 256, "8.88"),  # GTX 1070
    ],
)
def test_it_reproduces_the_global_memory_bandwidths_of_table_6_1(
    sms, sm_clock, memory_clock, bus, printed
):
    bandwidth = gmem_bandwidth_per_sm(
        memory_clock_hz=memory_clock * 1e6,
        bus_width_bits=bus,
        data_rate=4,
        sms=sms,
        sm_clock_hz=sm_clock * 1e6,
    )
    assert f"{bandwidth:.2f}" == printed


def test_it_computes_the_bandwidths_of_all_three_gpus_in_one_vectorised_call():
    bandwidth = gmem_bandwidth_per_sm(
        memory_clock_hz=np.array([1753e6, 1753e6, 2002e6]),
        bus_width_bits=np.array([256, 384, 256]),
        data_rate=4,
        sms=np.array([13, 24, 15]),
        sm_clock_hz=np.array([1253e6, 1076e6, 1923e6]),
    )
    assert isinstance(bandwidth, np.ndarray)
    assert np.round(bandwidth, 2).tolist() == [13.78, 13.03, 8.88]


def test_it_reproduces_the_saxpy2_worked_example_on_the_gtx_970():
    hardware = GpuHardware.from_attributes(GTX970_MERPSYS)
    estimate = estimate_kernel(
        hardware, saxpy2_profile(1), block_size=256, n=10**7, occupancy=64, lambda_k=LAMBDA_K
    )
    assert estimate.grid_size == 39063
    assert estimate.warps_launched == 312504
    assert 1 / estimate.warp_throughput == pytest.approx(384 / 13.78, rel=1e-12)
    assert f"{1 / estimate.warp_throughput:.3f}" == "27.866"
    assert estimate.bound == "global_memory"
    assert f"{estimate.time_s:.2e}" == "7.60e-04"


def test_the_saxpy2_memory_term_is_bytes_over_bandwidth_not_the_printed_13_78():
    # 000 prints "13.78" as the third term of Th_bound; by (4.4) it is 384 / 13.78 cycles.
    bound = throughput_bound(
        cuda_core_instructions=27,
        issued_instructions=27,
        gmem_bytes=384,
        gmem_bandwidth=13.78,
        cuda_cores=128,
        schedulers=4,
    )
    assert bound == pytest.approx(13.78 / 384)


def test_the_saxpy2_profile_keeps_the_derived_issue_count_not_listing_5():
    profile = saxpy2_profile(3)
    assert profile.cuda_core_instructions == 23 + 4 * 3
    assert profile.issued_instructions == 23 + 4 * 3  # Listing 5 has 26 + 4a
    assert profile.gmem_bytes == 384
    assert profile.latency_bound == 942 + 24 * 3


def test_saxpy2_becomes_bound_by_cuda_cores_at_high_compute_intensity():
    hardware = GpuHardware.from_attributes(GTX970)
    low = estimate_kernel(hardware, saxpy2_profile(1), block_size=256, n=10**7, occupancy=64)
    high = estimate_kernel(hardware, saxpy2_profile(64), block_size=256, n=10**7, occupancy=64)
    assert low.bound == "global_memory"
    assert high.bound == "cuda_cores"


def test_low_occupancy_makes_the_kernel_latency_bound():
    hardware = GpuHardware.from_attributes(GTX970)
    estimate = estimate_kernel(hardware, saxpy2_profile(1), block_size=256, n=10**7, occupancy=2)
    assert estimate.bound == "latency"
    assert estimate.warp_throughput == pytest.approx(2 / 966)


def test_the_equations_compose_to_the_same_time_as_the_entry_point():
    w_l = warps_launched(grid_size_for(10**7, 256), 256)
    th = throughput_bound(
        cuda_core_instructions=27,
        issued_instructions=27,
        gmem_bytes=384,
        gmem_bandwidth=13.78,
        cuda_cores=128,
        schedulers=4,
    )
    w_th = warp_throughput(occupancy=64, latency_bound=966, throughput_bound=th)
    t = kernel_time(
        warps_launched=w_l, warp_throughput=w_th, sms=13, sm_clock_hz=1253e6, lambda_k=LAMBDA_K
    )
    expected = estimate_kernel(
        GpuHardware.from_attributes(GTX970_MERPSYS),
        saxpy2_profile(1),
        block_size=256,
        n=10**7,
        occupancy=64,
        lambda_k=LAMBDA_K,
    )
    assert t == pytest.approx(expected.time_s, rel=1e-15)


def test_a_partial_warp_counts_as_a_whole_warp():
    assert warps_launched(10, 33) == 20
    assert warps_launched(np.array([1, 2]), np.array([32, 64])).tolist() == [1, 4]


def test_it_computes_occupancy_from_registers_when_none_is_given():
    hardware = GpuHardware.from_attributes(GTX970_MERPSYS)
    by_registers = estimate_kernel(
        hardware, saxpy2_profile(1), block_size=256, n=10**7, registers_per_thread=8
    )
    assert by_registers.occupancy == 64
    limited = estimate_kernel(
        hardware,
        saxpy2_profile(1),
        block_size=256,
        n=10**7,
        registers_per_thread=8,
        shared_mem_per_block=48 * 1024,
    )
    assert limited.occupancy == 16  # 96 KB / 48 KB = 2 blocks of 8 warps


def test_it_requires_an_occupancy_or_registers():
    with pytest.raises(ValueError, match="either occupancy"):
        estimate_kernel(
            GpuHardware.from_attributes(GTX970), saxpy2_profile(1), block_size=256, n=100
        )
    assert "either occupancy" in VOLKOV_ERRORS["occupancy_or_registers"]


def test_fp64_sfu_and_shared_memory_add_throughput_terms():
    base = {
        "cuda_core_instructions": 4,
        "issued_instructions": 4,
        "gmem_bytes": 0,
        "gmem_bandwidth": 13.78,
        "cuda_cores": 128,
        "schedulers": 4,
    }
    assert throughput_bound(**base) == pytest.approx(1.0)
    assert throughput_bound(**base, fp64_instructions=4, fp64_units=4) == pytest.approx(1 / 32)
    assert throughput_bound(**base, sfu_instructions=2, sfus=32) == pytest.approx(1 / 2)
    assert throughput_bound(
        **base, shared_memory_instructions=3, shared_memory_units=32
    ) == pytest.approx(1 / 3)
    assert throughput_bound(**base, extra_cycles_per_warp=[5.0, 7.0]) == pytest.approx(1 / 7)


def test_fp64_instructions_without_fp64_units_are_an_error():
    with pytest.raises(ValueError, match="FP64Units"):
        throughput_bound(
            cuda_core_instructions=4,
            issued_instructions=4,
            gmem_bytes=0,
            gmem_bandwidth=1,
            cuda_cores=128,
            schedulers=4,
            fp64_instructions=1,
        )


def test_the_hardware_record_uses_gmem_throughput_as_is_when_present():
    assert GpuHardware.from_attributes(GTX970_MERPSYS).gmem_bandwidth == 13.78
    assert GpuHardware.from_attributes(GTX970).gmem_bandwidth == pytest.approx(13.7752, abs=1e-4)
    assert GpuHardware.from_attributes({**GTX970, "SMS": 13} | {"SMs": 13}).sms == 13


def test_a_missing_attribute_is_named():
    with pytest.raises(ValueError, match="'CUDACores'"):
        GpuHardware.from_attributes({k: v for k, v in GTX970.items() if k != "CUDACores"})


def test_lambda_k_is_estimated_over_measured():
    assert lambda_k(estimated_s=0.7, measured_s=1.0) == pytest.approx(0.7)
    profile = KernelProfile(
        cuda_core_instructions=1, issued_instructions=1, gmem_bytes=0, latency_bound=1
    )
    hardware = GpuHardware.from_attributes(GTX970)
    base = estimate_kernel(hardware, profile, block_size=32, grid_size=1, occupancy=1).time_s
    scaled = estimate_kernel(
        hardware, profile, block_size=32, grid_size=1, occupancy=1, lambda_k=0.5
    ).time_s
    assert scaled == pytest.approx(2 * base)
