"""The shipped MERPSYS example (000, section 5.4) reproduces docs/models.md's equations end to end.

Times are computed here by hand from eqs 4.1-4.6 and compared with what the CLI prints
(through the sandbox, as a user runs it).
"""

from __future__ import annotations

import json
import math
import subprocess
import sys
from pathlib import Path

import pytest

from simulator.models.volkov import gmem_bandwidth_per_sm

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "examples" / "merpsys_gtx970"

N = 10**7
BLOCK = 256
A = 1  # computeIntensity
OCCUPANCY = 64  # warps per SM, saxpy2 on sm_52 with block 256
LAMBDA_K = 0.703787

# GTX 970 (000 Fig. 5.2 and Table 6.1) and PCIe v3.1 x16 (Fig. 5.2, Table 6.2)
SMS, SM_CLOCK_MHZ, WARP, CUDA_CORES, SCHEDULERS = 13, 1253, 32, 128, 4
GMEM_BW = 13.78  # bytes per SM per cycle, eq. 4.5 as printed
T_S_HTD, T_S_DTH, LAMBDA_HTD, LAMBDA_DTH, BANDWIDTH = 3.9687e-6, 5.1569e-6, 0.689, 0.653, 1.58e10


def kernel_time_by_hand() -> float:
    ins_cuda = 23 + 4 * A  # section 5.2
    ins_issued = 23 + 4 * A  # section 5.2 (Listing 5 prints 26 + 4a)
    gmem_bytes = 384
    lat_bound = 942 + 24 * A
    grid = math.ceil(N / BLOCK)
    warps_launched = grid * math.ceil(BLOCK / WARP)  # (4.2)
    th_bound = 1 / max(
        WARP * ins_cuda / CUDA_CORES, ins_issued / SCHEDULERS, gmem_bytes / GMEM_BW
    )  # (4.4)
    warp_throughput = min(OCCUPANCY / lat_bound, th_bound)  # (4.3)
    return warps_launched / (warp_throughput * SMS * SM_CLOCK_MHZ * 1e6 * LAMBDA_K)  # (4.1)


def transfer_time_by_hand(size: float, startup: float, utilisation: float) -> float:
    return startup + size / (BANDWIDTH * utilisation)  # (4.6)


def run_cli(*extra: str) -> subprocess.CompletedProcess[str]:
    command = [
        sys.executable,
        "-m",
        "simulator",
        "run",
        "--system",
        str(EXAMPLE / "snapshot.json"),
        "--app",
        str(EXAMPLE / "app.py"),
        "--labels",
        "CPU=1,GPU=1",
        "--var",
        f"N={N}",
        "--var",
        f"blockSz={BLOCK}",
        "--var",
        f"computeIntensity={A}",
        "--var",
        f"occupancy={OCCUPANCY}",
        *extra,
    ]
    return subprocess.run(command, cwd=ROOT, capture_output=True, text=True, timeout=120)


@pytest.fixture(scope="module")
def result() -> dict:
    completed = run_cli("--json", "-")
    assert completed.returncode == 0, completed.stderr
    return json.loads(completed.stdout)


def test_the_cli_gives_the_kernel_time_of_the_worked_example_in_models_md(result: dict) -> None:
    """docs/models.md 1: N = 10^7, block 256, a = 1, occupancy 64 on the GTX 970 -> T_k = 7.60e-4 s.

    Its grid, W_L and W_Th are checked against the Python model in tests/simulator/models/
    test_volkov.py; this is the example's JavaScript model, run by the CLI.
    """
    (compute,) = [e for e in result["timeline"] if e["kind"] == "compute"]
    assert f"{compute['end_s'] - compute['start_s']:.2e}" == "7.60e-04"


def test_the_example_gpu_carries_the_gmem_throughput_eq_4_5_gives() -> None:
    """The snapshot's GMEMThroughput is what eq. 4.5 gives for the GTX 970 (docs/models.md 1)."""
    attributes = json.loads((EXAMPLE / "snapshot.json").read_text())["hardware"]["gtx970"][
        "attributes"
    ]
    bandwidth = gmem_bandwidth_per_sm(
        memory_clock_hz=1753e6,
        bus_width_bits=256,
        data_rate=4,
        sms=attributes["SMs"],
        sm_clock_hz=attributes["SMCoreClock"] * 1e6,
    )
    assert round(bandwidth, 2) == attributes["GMEMThroughput"]


def test_the_cli_reproduces_the_kernel_time(result: dict) -> None:
    (compute,) = [e for e in result["timeline"] if e["kind"] == "compute"]
    kernel = compute["end_s"] - compute["start_s"]
    assert math.isclose(kernel, kernel_time_by_hand(), rel_tol=1e-9)
    gpu = next(p for p in result["processes"] if p["label"] == "GPU")
    assert math.isclose(gpu["compute_s"], kernel_time_by_hand(), rel_tol=1e-9)


def test_the_cli_reproduces_the_transfer_times_per_direction(result: dict) -> None:
    transfers = [e for e in result["timeline"] if e["kind"] == "transfer" and e["size"] > 0]
    assert [e["direction"] for e in transfers] == ["HostToDevice", "HostToDevice", "DeviceToHost"]
    expected = {
        "HostToDevice": transfer_time_by_hand(4 * N, T_S_HTD, LAMBDA_HTD),
        "DeviceToHost": transfer_time_by_hand(4 * N, T_S_DTH, LAMBDA_DTH),
    }
    for entry in transfers:
        duration = entry["end_s"] - entry["start_s"]
        assert math.isclose(duration, expected[entry["direction"]], rel_tol=1e-9)


def test_two_host_to_device_copies_the_kernel_and_the_copy_back_make_the_overall_time(
    result: dict,
) -> None:
    expected = (
        2 * transfer_time_by_hand(4 * N, T_S_HTD, LAMBDA_HTD)
        + kernel_time_by_hand()
        + transfer_time_by_hand(4 * N, T_S_DTH, LAMBDA_DTH)
    )
    assert math.isclose(result["overall_time_s"], expected, rel_tol=1e-9)
    # the synchronisation message of Listing 5 costs nothing
    syncs = [e for e in result["timeline"] if e["kind"] == "transfer" and e["size"] == 0]
    assert [e["end_s"] - e["start_s"] for e in syncs] == [0.0]


def test_000s_gpu_energy_is_its_load_power_over_the_kernel(result: dict) -> None:
    # seed 000's accounting, kept under its own name (issue 45): 168 W x the kernel only
    figures = result["energy_alternatives"]["kernel_load_000"]
    assert figures["accounting"] == "kernel_load_000"
    assert math.isclose(
        figures["per_component"]["gpu0"], 168.0 * kernel_time_by_hand(), rel_tol=1e-9
    )


def test_the_whole_run_gpu_energy_adds_active_idle_over_the_run(result: dict) -> None:
    # The record has no idle power: active idle = 1.6222 x 0.1067 x 168 W (estimated, the
    # rules of simulator.models.energy), drawn over the whole run, the load over the kernel.
    active_idle = 1.6222 * 0.1067 * 168.0
    run_s, kernel_s = result["overall_time_s"], kernel_time_by_hand()
    gpu = next(c for c in result["components"] if c["node"] == "gpu0")
    expected = active_idle * run_s + (168.0 - active_idle) * kernel_s
    assert math.isclose(gpu["energy_j"], expected, rel_tol=1e-9)
    assert result["energy_j"]["accounting"] == "whole_run"
    row = next(r for r in result["energy_accounting"] if r["node"] == "gpu0")
    assert row["base_state"] == "active idle"
    assert row["kernel_model"] == "load"
    assert [e["attribute"] for e in row["estimated"]] == ["powerIdle", "powerActiveIdle"]


def test_the_summary_prints_the_overall_time() -> None:
    completed = run_cli()
    assert completed.returncode == 0, completed.stderr
    expected = (
        2 * transfer_time_by_hand(4 * N, T_S_HTD, LAMBDA_HTD)
        + kernel_time_by_hand()
        + transfer_time_by_hand(4 * N, T_S_DTH, LAMBDA_DTH)
    )
    assert f"Overall time: {expected:.9g} s" in completed.stdout
    assert "GeForce GTX 970" in completed.stdout


def test_the_snapshot_carries_fig_5_2_and_the_shipped_models() -> None:
    snapshot = json.loads((EXAMPLE / "snapshot.json").read_text())
    gpu = snapshot["hardware"]["gtx970"]
    assert gpu["name"] == "GeForce GTX 970"
    assert gpu["attributes"] == {
        "powerConsumptionLoad": 168.0,
        "warpSize": 32.0,
        "GMEMThroughput": 13.78,
        "SMs": 13.0,
        "SMCoreClock": 1253.0,
        "CUDACores": 128.0,
        "schedulers": 4.0,
    }
    bus = snapshot["hardware"]["pcie3_x16"]
    assert (bus["name"], bus["type"]) == ("PCIe 3.0 16x", "NETWORK")
    assert bus["attributes"] == {
        "startupDth": 5.1569e-6,
        "lambdaHTD": 0.689,
        "lambdaDth": 0.653,
        "bandwidth": 1.58e10,
        "startupHTD": 3.9687e-6,
    }
    assert snapshot["models"]["volkov_gtx970"]["source"] == (EXAMPLE / "gpu_model.js").read_text()
    assert snapshot["models"]["pcie_eq46"]["source"] == (EXAMPLE / "pcie_model.js").read_text()
    assert snapshot["edges"] == [["cpu0", "bus0"], ["bus0", "gpu0"]]


def test_the_example_gpu_model_computes_gmem_throughput_for_a_gpu_without_it():
    """A record without MERPSYS's GMEMThroughput (an H100) gets eq. 4.5 from its memory."""
    from simulator.shallow import ShallowFunctions

    source = (EXAMPLE / "gpu_model.js").read_text()
    gtx970 = {"SMs": 13, "SMCoreClock": 1253, "CUDACores": 128, "schedulers": 4, "warpSize": 32}
    params = {
        "gridSize": 39063,
        "blockSize": 256,
        "CUDACoreInstructions": 27,
        "issuedInstructions": 27,
        "GMEMBytesTransferred": 384,
        "latencyBound": 966,
        "occupancy": 64,
        "kernelExecutionLambda": 0.703787,
    }
    stored = ShallowFunctions(
        model_key="a", source=source, attributes={**gtx970, "GMEMThroughput": 1753 * 32 * 4 / 16289}
    ).call("computationTime", params=params)
    derived = ShallowFunctions(
        model_key="b",
        source=source,
        attributes={**gtx970, "memoryClock": 1753, "busWidth": 256, "dataRate": 4},
    ).call("computationTime", params=params)
    assert derived == pytest.approx(stored, rel=1e-12)
