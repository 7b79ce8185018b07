"""Tests of validation/analyze.py on synthetic measurements generated from known parameters."""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest

from simulator.models.energy import BlockRoundModel
from simulator.models.transfer import GTX970_PCIE_ATTRIBUTES, PcieLink
from simulator.models.volkov import GpuHardware, estimate_kernel, saxpy2_profile
from validation import analyze as va

GTX970 = va.load_record("GeForce GTX 970")
TRUE_LAMBDA_K = 0.8
SMS = 13
RESIDENT_PER_SM = 2  # block 1024 on CC 5.2: 2 blocks of 32 warps
TRUE_ENERGY = BlockRoundModel(
    slope_s=2e-5, block_energy_j=3e-3, static_power_w=40.0, concurrent_blocks=SMS * RESIDENT_PER_SM
)


def kernel_time(n: int, block: int, a: int, warps: int) -> float:
    """Return the model's kernel time for the synthetic truth."""
    return estimate_kernel(
        GpuHardware.from_attributes(GTX970),
        saxpy2_profile(a),
        block_size=block,
        grid_size=math.ceil(n / block),
        occupancy=float(warps),
        lambda_k=TRUE_LAMBDA_K,
    ).time_s


def synthetic(noise: float = 0.0, seed: int = 1) -> tuple[list[dict[str, object]], np.ndarray]:
    """Return harness-like CSV rows and a power log generated from known parameters."""
    rng = np.random.default_rng(seed)
    link = PcieLink.from_attributes("truth", GTX970_PCIE_ATTRIBUTES)

    def jitter(value: float) -> float:
        return value * float(np.exp(rng.normal(0.0, noise))) if noise else value

    rows: list[dict[str, object]] = []

    def add(
        scenario: str,
        n: int,
        block: int,
        a: int,
        warps: int,
        shmem: int = 0,
        window: tuple[float, float, int] | None = None,
    ) -> None:
        for rep in range(3):
            htd = float(link.time(4 * n, "HostToDevice"))
            dth = float(link.time(4 * n, "DeviceToHost"))
            kern = kernel_time(n, block, a, warps)
            parts = [jitter(htd), jitter(htd), jitter(kern), jitter(dth)]
            start, end, repeats = window or (0.0, 0.0, 0)
            rows.append(
                {
                    "scenario": scenario,
                    "rep": rep,
                    "n": n,
                    "block_size": block,
                    "grid_size": math.ceil(n / block),
                    "compute_intensity": a,
                    "shmem_bytes": shmem,
                    "registers_per_thread": 8,
                    "active_blocks_per_sm": warps // math.ceil(block / 32),
                    "active_warps_per_sm": warps,
                    "htd_x_s": parts[0],
                    "htd_y_s": parts[1],
                    "kernel_s": parts[2],
                    "dth_s": parts[3],
                    "app_s": sum(parts),
                    "kernel_repeats": repeats,
                    "window_kernel_s": (end - start) / repeats if repeats else 0.0,
                    "window_start_epoch": start,
                    "window_end_epoch": end,
                }
            )

    for a in (1, 4, 16, 64, 256, 1024, 4096):
        add("intensity", 10_000_000, 256, a, 64)
    for warps in (2, 4, 8, 16, 32, 48, 64):
        add("occupancy", 10_000_000, 64, 64, warps, shmem=256 * (65 - warps))
    for n in (10_000, 100_000, 1_000_000, 10_000_000, 30_000_000):
        add("size", n, 256, 1, 64)
    samples = []
    clock = 1000.0
    resident = SMS * RESIDENT_PER_SM
    for nb in (1, resident, resident + 1, 2 * resident, 3 * resident, 4 * resident, 8 * resident):
        time_per_kernel = float(TRUE_ENERGY.time(nb))
        power = float(TRUE_ENERGY.energy(nb)) / time_per_kernel
        repeats = math.ceil(2.0 / time_per_kernel)
        start, end = clock, clock + repeats * time_per_kernel
        samples += [(t, jitter(power)) for t in np.arange(start + 0.025, end, 0.05)]
        samples += [
            (t, TRUE_ENERGY.static_power_w) for t in np.arange(end + 0.025, end + 0.5, 0.05)
        ]
        add("energy", nb * 1024, 1024, 4096, 64, window=(start, end, repeats))
        clock = end + 0.5
    return rows, np.asarray(samples)


def run(noise: float = 0.0, **kwargs: object) -> va.Analysis:
    rows, power = synthetic(noise)
    return va.analyze(
        va.aggregate(rows),
        GTX970,
        gpu_name="synthetic GTX 970",
        link_record=GTX970_PCIE_ATTRIBUTES,
        power=power,
        idle_power_w=TRUE_ENERGY.static_power_w,
        **kwargs,  # type: ignore[arg-type]
    )


def all_comparisons(result: va.Analysis) -> list[va.Comparison]:
    return (
        result.intensity
        + result.occupancy
        + result.size_kernel
        + result.htd
        + result.dth
        + result.application
        + result.energy_time
        + result.energy
    )


def test_it_recovers_lambda_k_from_one_configuration() -> None:
    result = run()
    assert result.calibration_label == "intensity:compute_intensity=1024"
    assert result.lambda_k == pytest.approx(TRUE_LAMBDA_K, rel=1e-12)


def test_errors_are_zero_on_noise_free_measurements() -> None:
    result = run()
    comparisons = all_comparisons(result)
    assert (
        len(result.intensity) == 7 and len(result.occupancy) == 7 and len(result.application) == 5
    )
    assert len(result.energy) == 4  # seven block counts minus three calibration points
    assert max(c.error for c in comparisons) < 1e-9


def test_it_fits_the_transfer_parameters_of_fig_5_2_without_a_link_record() -> None:
    rows, _ = synthetic()
    result = va.analyze(va.aggregate(rows), GTX970, bus_bandwidth=1.58e10)
    assert result.link is result.fitted_link and result.link is not None
    assert result.link.host_to_device.startup_s == pytest.approx(3.9687e-6, rel=1e-6)
    assert result.link.host_to_device.lambda_c == pytest.approx(0.689, rel=1e-9)
    assert result.link.device_to_host.startup_s == pytest.approx(5.1569e-6, rel=1e-6)
    assert result.link.device_to_host.lambda_c == pytest.approx(0.653, rel=1e-9)
    assert "fitted" in result.link_source


def test_it_recovers_the_block_energy_parameters() -> None:
    note = run().energy_notes[-1]
    assert "R = 26 blocks per round" in note
    assert "E_b = 0.003 J/block" in note and "a = 2e-05 s/block" in note


def test_noise_gives_nonzero_but_moderate_errors() -> None:
    result = run(noise=0.05)
    errors = [c.error for c in all_comparisons(result)]
    assert 0.005 < float(np.mean(errors)) < 0.2
    assert result.lambda_k == pytest.approx(TRUE_LAMBDA_K, rel=0.15)
    assert result.lambda_k != TRUE_LAMBDA_K


def test_a_different_calibration_point_is_honoured() -> None:
    result = run(calibration="occupancy:active_warps_per_sm=64")
    assert result.lambda_k == pytest.approx(TRUE_LAMBDA_K, rel=1e-12)


def test_it_rejects_a_calibration_filter_that_matches_nothing() -> None:
    with pytest.raises(ValueError, match="no configuration matches"):
        run(calibration="intensity:compute_intensity=3")
    with pytest.raises(ValueError, match="must look like"):
        va.parse_calibration("intensity:a")


def test_the_report_lays_out_000_section_6_and_003(tmp_path: Path) -> None:
    text = va.render_report(run(noise=0.05))
    for heading in (
        "compute intensity",
        "occupancy",
        "data size",
        "Transfers per direction",
        "Whole application",
        "Energy by number of blocks",
        "Summary",
    ):
        assert heading in text
    assert "lambda_k = **0.8" in text or "lambda_k = **0.7" in text
    assert "ARE" in text and "WRE" in text


def test_the_command_line_reads_csv_power_log_and_seed_names(tmp_path: Path) -> None:
    rows, power = synthetic()
    csv_path = tmp_path / "m.csv"
    with csv_path.open("w", encoding="utf-8") as handle:
        handle.write(",".join(va.CSV_COLUMNS) + "\n")
        for row in rows:
            handle.write(",".join(str(row[c]) for c in va.CSV_COLUMNS) + "\n")
    power_path = tmp_path / "power.csv"
    lines = ["timestamp,power_w,sm_clock_mhz,mem_clock_mhz,utilization_pct,temperature_c"]
    lines += [f"{t:.3f}, {p:.4f}, 1253, 3505, 100, 60" for t, p in power]
    power_path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    report = tmp_path / "out" / "gtx970.md"
    status = va.main(
        [
            "--measurements",
            str(csv_path),
            "--report",
            str(report),
            "--record",
            "GeForce GTX 970",
            "--link",
            "PCIe 3.0 16x",
            "--power",
            str(power_path),
            "--idle-end-epoch",
            "0",
        ]
    )
    assert status == 0
    text = report.read_text(encoding="utf-8")
    assert "| kernel vs occupancy | 0.0 % |" in text
    assert "lambda_k = **0.800000**" in text


def test_nvidia_smi_timestamps_and_missing_readings_are_parsed(tmp_path: Path) -> None:
    path = tmp_path / "p.csv"
    path.write_text(
        "timestamp,power_w\n2024/01/02 03:04:05.250, 71.5, 1\n2024/01/02 03:04:05.300, [N/A], 1\n",
        encoding="utf-8",
    )
    samples = va.read_power_log(path)
    assert samples.shape == (1, 2) and samples[0, 1] == 71.5
    assert samples[0, 0] % 1 == pytest.approx(0.25)


def test_a_record_can_be_built_from_the_cuda_device_properties() -> None:
    info = {
        "name": "NVIDIA H100 80GB HBM3",
        "computeCapability": "9.0",
        "SMs": 132,
        "SMCoreClockMHz": 1980.0,
        "memoryClockMHz": 2619.0,
        "busWidth": 5120,
    }
    record = va.record_from_device(info)
    assert record["CUDACores"] == 128 and record["schedulers"] == 4
    bandwidth = record["memoryClock"] * 1e6 * record["busWidth"] / 8 * record["dataRate"]
    assert bandwidth == pytest.approx(3.35e12, rel=0.01)
    with pytest.raises(ValueError, match="no CUDA-core table entry"):
        va.record_from_device({**info, "computeCapability": "1.3"})


def test_pcie_bandwidth_comes_from_generation_and_width(tmp_path: Path) -> None:
    path = tmp_path / "smi.csv"
    path.write_text("NVIDIA GeForce GTX 970, 3, 16, 200.00, 550.54\n", encoding="utf-8")
    assert va.bus_bandwidth_from_nvidia_smi(path) == pytest.approx(15.75e9, rel=1e-3)


def test_the_seed_record_json_file_form_is_accepted(tmp_path: Path) -> None:
    path = tmp_path / "gpu.json"
    path.write_text(
        json.dumps(
            {
                "name": "x",
                "attributes": [{"key": "SMs", "value": 13, "unit": "count", "source": "s"}],
            }
        )
    )
    assert va.load_record(str(path)) == {"SMs": 13.0}
    with pytest.raises(ValueError, match="no component named"):
        va.load_record("No Such GPU")


def test_the_transfer_fit_stays_physical_on_noisy_measurements() -> None:
    rows, _ = synthetic(noise=0.05)
    result = va.analyze(va.aggregate(rows), GTX970, bus_bandwidth=1.58e10)
    assert result.fitted_link is not None
    htd = result.fitted_link.host_to_device
    assert 0 < htd.startup_s < 2e-5
    assert htd.lambda_c == pytest.approx(0.689, rel=0.1)
    assert not any("failed" in note for note in result.notes)


def boxcar_power_log(steps: list[tuple[float, float, float]], average_s: float = 1.0) -> np.ndarray:
    """Return (t, W) samples as nvidia-smi reports power.draw on Ampere and newer GPUs.

    `steps` are (start, end, true watts); the reading is the true power averaged over the last
    `average_s` seconds, updated every 100 ms and sampled every 50 ms (as on the H100 run).
    """
    fine = np.arange(steps[0][0], steps[-1][1], 0.001)
    true = np.zeros_like(fine)
    for start, end, watts in steps:
        true[(fine >= start) & (fine < end)] = watts
    samples = []
    for t in np.arange(steps[0][0] + average_s, steps[-1][1], 0.05):
        updated = math.floor(round(t / 0.1, 6)) * 0.1
        recent = (fine > updated - average_s) & (fine <= updated)
        samples.append((t, float(np.mean(true[recent]))))
    return np.asarray(samples)


def test_window_energy_skips_the_second_that_power_draw_still_averages() -> None:
    # H100, driver 580: a 2 s window at 226 W after one at 120 W (NB = 132 after NB = 2).
    log = boxcar_power_log([(0.0, 3.0, 120.0), (3.0, 5.0, 226.0), (5.0, 7.0, 240.0)])
    assert va.window_energy(log, 3.0, 5.0) == pytest.approx(2 * 226.0, rel=0.01)
    # The plain mean over the window, as before, is a quarter of the step too low.
    biased = va.window_energy(log, 3.0, 5.0, settle_s=0.0)
    assert biased == pytest.approx(2 * (226.0 - 0.25 * 106.0), rel=0.02)
    # A window shorter than the averaging time falls back to all of its samples.
    assert va.window_energy(log, 3.0, 3.8) == pytest.approx(
        va.window_energy(log, 3.0, 3.8, settle_s=0.0)
    )


def test_a_power_log_in_another_time_zone_is_refused() -> None:
    log = boxcar_power_log([(0.0, 3.0, 120.0), (3.0, 5.0, 226.0)])
    with pytest.raises(ValueError, match=r"does not cover the kernel window.*TZ"):
        va.window_energy(log, 3600.0 + 3.0, 3600.0 + 5.0)
    assert va.window_energy(log, 5.5, 5.9) == pytest.approx(0.4 * 226.0)  # just past the end


def test_with_a_link_record_the_fitted_link_residuals_are_reported_beside_the_predictions() -> None:
    result = run()
    assert len(result.htd_fitted) == len(result.htd) == 5
    assert max(c.error for c in result.htd_fitted + result.application_fitted) < 1e-6
    text = va.render_report(result)
    assert "| transfer HtD, fitted link (in-sample) | 0.0 % |" in text
    assert "fitted to this run instead (in-sample residuals, not predictions)" in text
    rows, _ = synthetic()
    without = va.analyze(va.aggregate(rows), GTX970, bus_bandwidth=1.58e10)
    assert without.htd and not without.htd_fitted
    assert "fitted link (in-sample)" not in va.render_report(without)
