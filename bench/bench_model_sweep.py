"""Sweep the closed-form Volkov + PCIe model over >= 10^6 configurations with NumPy.

Configurations: compute intensity (64 values, 1..4096) x occupancy (32 values, 2..64 warps/SM)
x data size N (50 values, 10^3..10^9) x block size (4) x the three testbeds of 000 (GTX 970,
TITAN X, GTX 1070 with their PCIe buses) = 1,228,800 whole-application times (saxpy2:
HtD copy of x and y, kernel, DtH copy of y). Prints configurations per second (best of 5).

    PYTHONPATH=. .venv/bin/python bench/bench_model_sweep.py
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # `python bench/<file>.py`

from simulator.models.transfer import TABLE_6_2_TESTBEDS, transfer_time
from simulator.models.volkov import (
    gmem_bandwidth_per_sm,
    kernel_time,
    throughput_bound,
    warp_throughput,
    warps_launched,
)

LAMBDA_K = 0.703787
# SMs, SM clock MHz, memory clock MHz, bus bits (000 Table 6.1); all CC 5.x/6.1: 128 cores, 4 schedulers
GPUS = {
    "GTX 970": (13, 1253, 1753, 256),
    "GTX TITAN X": (24, 1076, 1753, 384),
    "GTX 1070": (15, 1923, 2002, 256),
}


def sweep() -> np.ndarray:
    """Return the application time of every configuration as one array (GPU, a, occ, N, block)."""
    sms, sm_clock, mem_clock, bus = (
        np.array(column, dtype=np.float64) for column in zip(*GPUS.values(), strict=True)
    )
    links = [TABLE_6_2_TESTBEDS[name] for name in GPUS]
    shape = (-1, 1, 1, 1, 1)
    sms, sm_clock_hz = sms.reshape(shape), (sm_clock * 1e6).reshape(shape)
    bandwidth = np.array([link.bandwidth for link in links]).reshape(shape)
    htd = [
        np.array([getattr(link.host_to_device, f) for link in links]).reshape(shape)
        for f in ("startup_s", "lambda_c")
    ]
    dth = [
        np.array([getattr(link.device_to_host, f) for link in links]).reshape(shape)
        for f in ("startup_s", "lambda_c")
    ]

    intensities = np.unique(np.round(np.geomspace(1, 4096, 200)))
    a = intensities[np.linspace(0, intensities.size - 1, 64).astype(int)].reshape(1, -1, 1, 1, 1)
    occupancy = np.linspace(2, 64, 32).reshape(1, 1, -1, 1, 1)
    n = np.geomspace(1e3, 1e9, 50).round().reshape(1, 1, 1, -1, 1)
    block = np.array([128.0, 256.0, 512.0, 1024.0]).reshape(1, 1, 1, 1, -1)

    gmem_bw = gmem_bandwidth_per_sm(
        memory_clock_hz=(mem_clock * 1e6).reshape(shape),
        bus_width_bits=bus.reshape(shape),
        data_rate=4,
        sms=sms,
        sm_clock_hz=sm_clock_hz,
    )
    th = throughput_bound(
        cuda_core_instructions=23 + 4 * a,
        issued_instructions=23 + 4 * a,
        gmem_bytes=384,
        gmem_bandwidth=gmem_bw,
        cuda_cores=128,
        schedulers=4,
    )
    w_th = warp_throughput(occupancy=occupancy, latency_bound=942 + 24 * a, throughput_bound=th)
    w_l = warps_launched(np.ceil(n / block), block)
    t_k = kernel_time(
        warps_launched=w_l,
        warp_throughput=w_th,
        sms=sms,
        sm_clock_hz=sm_clock_hz,
        lambda_k=LAMBDA_K,
    )
    t_htd = transfer_time(4 * n, startup_s=htd[0], bandwidth=bandwidth, lambda_c=htd[1])
    t_dth = transfer_time(4 * n, startup_s=dth[0], bandwidth=bandwidth, lambda_c=dth[1])
    return np.asarray(2 * t_htd + t_k + t_dth)


def main() -> None:
    """Time the sweep and print configurations per second."""
    result = sweep()
    configurations = result.size
    best = float("inf")
    for _ in range(5):
        start = time.perf_counter()
        sweep()
        best = min(best, time.perf_counter() - start)
    print(f"configurations: {configurations:,} ({result.shape})")
    print(f"best of 5: {best * 1e3:.1f} ms -> {configurations / best:,.0f} configurations/s")
    assert configurations >= 10**6 and np.all(np.isfinite(result)) and np.all(result > 0)


if __name__ == "__main__":
    main()
