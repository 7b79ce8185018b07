"""Analysis of the saxpy2 validation measurements (issue 4 item 10; 000 section 6; 003).

Reads the harness's CSV (validation/saxpy2.cu), the hardware record of the GPU (seed
vocabulary: SMs, SMCoreClock [MHz], CUDACores, schedulers, memoryClock [MHz], busWidth,
dataRate, ...), optionally a bus record (startupHTD, startupDth [s], lambdaHTD, lambdaDth,
bandwidth [B/s]) and the nvidia-smi power log; fits lambda_k on one configuration (000
section 4.1), predicts every other configuration with the reference models of
`simulator.models` (Volkov 4.1-4.5, transfers 4.6, 003's block-round energy model) and
writes a Markdown report of mean relative errors laid out like 000 section 6:
kernel time against compute intensity, occupancy and data size, transfers per direction,
the whole application, and 003's time and energy errors by number of blocks.

Run from the repository root: ``python -m validation.analyze --measurements m.csv ...``.
No Django; only the standard library, NumPy and `simulator.models`.
"""

from __future__ import annotations

import argparse
import csv
import datetime as dt
import json
import math
import os
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from simulator.models.calibration import (
    CalibrationError,
    fit_block_energy,
    fit_lambda_k,
    fit_transfer,
)
from simulator.models.energy import BlockRoundModel
from simulator.models.transfer import LinkDirection, PcieLink
from simulator.models.volkov import GpuHardware, KernelProfile, estimate_kernel, saxpy2_profile

REPO_ROOT = Path(__file__).resolve().parents[1]
SEED_PATH = REPO_ROOT / "hwdb" / "seed" / "hardware.json"
# measured attributes a spec-sheet record does not have (for the H200 prediction from spec, in
# the kit's "(spec)" rows and the zoo's spec predictions alike): the kit's profile and the
# clock-wake penalty and time constant (issue 42: the spec rows must not read the H200's runs)
MEASURED_KEYS = (
    "kernelLaunchOverhead",
    "memoryEfficiency",
    "L2Bandwidth",
    "powerIdle",
    "powerActiveIdle",
    "powerLoadedCompute",
    "powerLoadedMemory",
    "globalLoadLatency",
    "L2HitLatency",
    "L1HitLatency",
    "dependentIssueLatency",
    "issueRate",
    "clockWakePenalty",
    "clockWakeTimeConstant",
)

LARGE_N = 10_000_000  # 000 section 6.3: "large data size (>= 10000000 elements)"
BYTES_PER_ELEMENT = 4  # one float per vector element and transfer (Listing 6)
PAPER_LAMBDA_K = 0.703787  # 000 section 6.1, GTX 970
# nvidia-smi's power.draw is a moving average over the last second on Ampere (except GA100)
# and newer GPUs (NVML nvmlDeviceGetPowerUsage); older GPUs report instantaneous power. A
# window's first second therefore still averages in what ran before it, so window energies
# use only the samples from this long after the window starts (measured on an H100: without
# it the 2 s windows were off by up to 14 %; see docs/validation/h100-2026-11-22.md).
POWER_AVERAGING_S = 1.0
# A window further than this from every power sample is not covered by the log.
POWER_LOG_GAP_S = 1.0

# Per-lane, per-direction PCIe bandwidth [B/s] by generation (encoding included).
PCIE_LANE_BANDWIDTH: dict[int, float] = {
    1: 2.5e9 * 0.8 / 8,
    2: 5e9 * 0.8 / 8,
    3: 8e9 * 128 / 130 / 8,
    4: 16e9 * 128 / 130 / 8,
    5: 32e9 * 128 / 130 / 8,
    6: 64e9 * 242 / 256 / 8,
}
# FP32 CUDA cores and warp schedulers per SM by compute capability (NVIDIA architecture
# whitepapers), for a record built from the CUDA runtime's device properties.
CORES_AND_SCHEDULERS: dict[str, tuple[int, int]] = {
    "5.0": (128, 4),
    "5.2": (128, 4),
    "5.3": (128, 4),
    "6.0": (64, 2),
    "6.1": (128, 4),
    "6.2": (128, 4),
    "7.0": (64, 4),
    "7.2": (64, 4),
    "7.5": (64, 4),
    "8.0": (64, 4),
    "8.6": (128, 4),
    "8.7": (128, 4),
    "8.9": (128, 4),
    "9.0": (128, 4),
    "10.0": (128, 4),
    "12.0": (128, 4),
}

ANALYSIS_ERRORS: dict[str, str] = {
    "no_rows": "no measurements in {path}",
    "missing_column": "measurements lack the column {column!r}",
    "record_not_found": "no component named {name!r} in {path}",
    "unknown_cc": "no CUDA-core table entry for compute capability {cc}; pass --record",
    "no_calibration": "no configuration matches the calibration filter {spec!r}",
    "bad_filter": "calibration filter must look like 'scenario:key=value,...', got {spec!r}",
    "power_log_gap": (
        "the power log does not cover the kernel window {start:.3f}-{end:.3f} (epoch s; the log "
        "is {gap:.1f} s away): nvidia-smi writes local time, so run the analysis with the "
        "measuring machine's TZ"
    ),
}

CSV_COLUMNS = (
    "scenario",
    "rep",
    "n",
    "block_size",
    "grid_size",
    "compute_intensity",
    "shmem_bytes",
    "registers_per_thread",
    "active_blocks_per_sm",
    "active_warps_per_sm",
    "htd_x_s",
    "htd_y_s",
    "kernel_s",
    "dth_s",
    "app_s",
    "kernel_repeats",
    "window_kernel_s",
    "window_start_epoch",
    "window_end_epoch",
)


@dataclass(frozen=True)
class Configuration:
    """One launch configuration and the mean of its repetitions (000 takes the mean of 10)."""

    scenario: str
    n: int
    block_size: int
    grid_size: int
    compute_intensity: int
    shmem_bytes: int
    active_blocks_per_sm: int
    active_warps_per_sm: int
    repetitions: int
    htd_x_s: float
    htd_y_s: float
    kernel_s: float
    dth_s: float
    app_s: float
    window_kernel_s: float = 0.0
    windows: tuple[tuple[float, float, int], ...] = ()  # (start epoch, end epoch, repeats)


def read_measurements(path: Path) -> list[dict[str, str]]:
    """Return the CSV rows of the harness (all repetitions)."""
    with path.open(newline="", encoding="utf-8") as handle:
        rows = list(csv.DictReader(handle))
    if not rows:
        raise ValueError(ANALYSIS_ERRORS["no_rows"].format(path=path))
    for column in CSV_COLUMNS:
        if column not in rows[0]:
            raise ValueError(ANALYSIS_ERRORS["missing_column"].format(column=column))
    return rows


def aggregate(rows: Sequence[Mapping[str, object]]) -> list[Configuration]:
    """Return one Configuration per distinct launch, times averaged over its repetitions."""
    groups: dict[tuple[object, ...], list[Mapping[str, object]]] = {}
    for row in rows:
        key = tuple(
            row[k] if k == "scenario" else int(float(str(row[k])))
            for k in (
                "scenario",
                "n",
                "block_size",
                "grid_size",
                "compute_intensity",
                "shmem_bytes",
            )
        )
        groups.setdefault(key, []).append(row)
    configs = []
    for (scenario, n, block, grid, a, shmem), members in groups.items():

        def mean(column: str, members: list[Mapping[str, object]] = members) -> float:
            return float(np.mean([float(str(m[column])) for m in members]))

        windows = tuple(
            (
                float(str(m["window_start_epoch"])),
                float(str(m["window_end_epoch"])),
                int(float(str(m["kernel_repeats"]))),
            )
            for m in members
            if int(float(str(m["kernel_repeats"]))) > 0
        )
        configs.append(
            Configuration(
                scenario=str(scenario),
                n=int(str(n)),
                block_size=int(str(block)),
                grid_size=int(str(grid)),
                compute_intensity=int(str(a)),
                shmem_bytes=int(str(shmem)),
                active_blocks_per_sm=int(mean("active_blocks_per_sm")),
                active_warps_per_sm=int(mean("active_warps_per_sm")),
                repetitions=len(members),
                htd_x_s=mean("htd_x_s"),
                htd_y_s=mean("htd_y_s"),
                kernel_s=mean("kernel_s"),
                dth_s=mean("dth_s"),
                app_s=mean("app_s"),
                window_kernel_s=mean("window_kernel_s"),
                windows=windows,
            )
        )
    return configs


def load_record(spec: str, seed_path: Path = SEED_PATH) -> dict[str, float]:
    """Return a record's attributes as key -> value.

    `spec` is a JSON file (one component with "attributes", or a plain key -> value object)
    or the name of a component in the seed data.
    """
    path = Path(spec)
    if path.is_file():
        data = json.loads(path.read_text(encoding="utf-8"))
        if isinstance(data, dict) and "attributes" in data:
            return attributes_of(data)
        return {str(k): float(v) for k, v in data.items()}
    components = json.loads(seed_path.read_text(encoding="utf-8"))["components"]
    for component in components:
        if component["name"] == spec:
            return attributes_of(component)
    raise ValueError(ANALYSIS_ERRORS["record_not_found"].format(name=spec, path=seed_path))


def attributes_of(component: Mapping[str, object]) -> dict[str, float]:
    """Return a component's attribute list as key -> value."""
    items = component["attributes"]
    assert isinstance(items, list)
    return {str(item["key"]): float(item["value"]) for item in items}


def record_from_device(info: Mapping[str, object]) -> dict[str, float]:
    """Return a GPU record built from the harness's device.json (CUDA runtime properties).

    The CUDA runtime reports the memory clock so that bytes/s = clock x bus/8 x 2.
    """
    cc = str(info["computeCapability"])
    if cc not in CORES_AND_SCHEDULERS:
        raise ValueError(ANALYSIS_ERRORS["unknown_cc"].format(cc=cc))
    cores, schedulers = CORES_AND_SCHEDULERS[cc]
    return {
        "SMs": float(str(info["SMs"])),
        "SMCoreClock": float(str(info["SMCoreClockMHz"])),
        "CUDACores": float(cores),
        "schedulers": float(schedulers),
        "warpSize": 32.0,
        "memoryClock": float(str(info["memoryClockMHz"])),
        "busWidth": float(str(info["busWidth"])),
        "dataRate": 2.0,
        "computeCapability": float(cc),
    }


def relative_error(predicted: float, measured: float) -> float:
    """Return |predicted - measured| / measured (000 and 003's relative error)."""
    return abs(predicted - measured) / measured


@dataclass(frozen=True)
class Comparison:
    """One measured and predicted value, labelled by its configuration."""

    label: str
    measured: float
    predicted: float

    @property
    def error(self) -> float:
        """Return the relative error of the prediction."""
        return relative_error(self.predicted, self.measured)


def mean_error(items: Sequence[Comparison]) -> float:
    """Return the mean relative error of the comparisons (nan when empty)."""
    return float(np.mean([c.error for c in items])) if items else math.nan


@dataclass
class Analysis:
    """Everything the report shows."""

    gpu: str
    lambda_k: float
    calibration_label: str
    intensity: list[Comparison] = field(default_factory=list)
    occupancy: list[Comparison] = field(default_factory=list)
    size_kernel: list[Comparison] = field(default_factory=list)
    htd: list[Comparison] = field(default_factory=list)
    dth: list[Comparison] = field(default_factory=list)
    application: list[Comparison] = field(default_factory=list)
    link_source: str = ""
    link: PcieLink | None = None
    fitted_link: PcieLink | None = None
    # With a link record: the same comparisons with the parameters fitted to this run
    # (in-sample residuals, shown beside the record's predictions).
    htd_fitted: list[Comparison] = field(default_factory=list)
    dth_fitted: list[Comparison] = field(default_factory=list)
    application_fitted: list[Comparison] = field(default_factory=list)
    energy_time: list[Comparison] = field(default_factory=list)
    energy: list[Comparison] = field(default_factory=list)
    energy_notes: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)


ProfileFunction = Callable[[int], KernelProfile]


def parse_calibration(spec: str) -> tuple[str, dict[str, int]]:
    """Return (scenario, {column: value}) from 'scenario:key=value,...'."""
    scenario, _, rest = spec.partition(":")
    filters: dict[str, int] = {}
    for item in filter(None, rest.split(",")):
        key, sep, value = item.partition("=")
        if not sep:
            raise ValueError(ANALYSIS_ERRORS["bad_filter"].format(spec=spec))
        filters[key.strip()] = int(float(value))
    if not scenario:
        raise ValueError(ANALYSIS_ERRORS["bad_filter"].format(spec=spec))
    return scenario, filters


def default_calibration(configs: Sequence[Configuration]) -> str:
    """Return the default calibration: the intensity sweep's largest a up to 1024 (compute bound)."""
    intensities = sorted(c.compute_intensity for c in configs if c.scenario == "intensity")
    candidates = [a for a in intensities if a <= 1024] or intensities
    if candidates:
        return f"intensity:compute_intensity={candidates[-1]}"
    first = configs[0]
    return f"{first.scenario}:n={first.n},compute_intensity={first.compute_intensity}"


def select(configs: Sequence[Configuration], spec: str) -> list[Configuration]:
    """Return the configurations matching a calibration filter."""
    scenario, filters = parse_calibration(spec)
    chosen = [
        c
        for c in configs
        if c.scenario == scenario
        and all(getattr(c, key) == value for key, value in filters.items())
    ]
    if not chosen:
        raise ValueError(ANALYSIS_ERRORS["no_calibration"].format(spec=spec))
    return chosen


def predict_kernel(
    hardware: GpuHardware,
    config: Configuration,
    lambda_k: float,
    profile: ProfileFunction = saxpy2_profile,
) -> float:
    """Return the Volkov-model kernel time (4.1) of a configuration at its measured occupancy."""
    return estimate_kernel(
        hardware,
        profile(config.compute_intensity),
        block_size=config.block_size,
        grid_size=config.grid_size,
        occupancy=float(config.active_warps_per_sm),
        lambda_k=lambda_k,
    ).time_s


def fit_direction(
    sizes: Sequence[float], times_s: Sequence[float], bandwidth: float
) -> LinkDirection:
    """Return t_s and lambda_c of one direction (4.6) by relative-weighted least squares.

    Each measurement is weighted by 1 / T so that the fit minimises relative residuals: the
    sizes span several decades, and a plain least-squares line (calibration.fit_transfer) is
    dominated by the largest copies and can give a negative startup time on noisy data.
    """
    n = np.asarray(sizes, dtype=np.float64)
    t = np.asarray(times_s, dtype=np.float64)
    if len(np.unique(n)) < 2 or np.any(t <= 0):
        return _plain_fit(n, t, bandwidth)
    design = np.column_stack([np.ones_like(n), n]) / t[:, None]
    (startup, inverse_rate), *_ = np.linalg.lstsq(design, np.ones_like(t), rcond=None)
    if startup < 0 or inverse_rate <= 0:
        return _plain_fit(n, t, bandwidth)
    return LinkDirection(startup_s=float(startup), lambda_c=float(1.0 / (inverse_rate * bandwidth)))


def _plain_fit(n: np.ndarray, t: np.ndarray, bandwidth: float) -> LinkDirection:
    fit = fit_transfer(sizes=list(n), times_s=list(t), bandwidth=bandwidth)
    return LinkDirection(startup_s=fit.startup_s, lambda_c=fit.lambda_c)


def fit_link(configs: Sequence[Configuration], bandwidth: float) -> PcieLink:
    """Return t_s and lambda_c per direction fitted to the size sweep (4.6)."""
    sizes = [float(c.n * BYTES_PER_ELEMENT) for c in configs]
    return PcieLink(
        name="fitted from this run",
        bandwidth=bandwidth,
        host_to_device=fit_direction(
            sizes + sizes, [c.htd_x_s for c in configs] + [c.htd_y_s for c in configs], bandwidth
        ),
        device_to_host=fit_direction(sizes, [c.dth_s for c in configs], bandwidth),
    )


def window_energy(
    samples: np.ndarray, start: float, end: float, settle_s: float = POWER_AVERAGING_S
) -> float:
    """Return the energy [J] of a window: mean sampled power inside it times its length.

    `samples` is an (m, 2) array of (epoch seconds, watts). Samples from the window's first
    `settle_s` seconds are skipped while later ones exist (see POWER_AVERAGING_S); with no
    sample inside the window the nearest sample's power is used, and a window the log does
    not reach at all is an error (a time-zone mismatch, typically).
    """
    times = samples[:, 0]
    gap = max(float(times.min()) - end, start - float(times.max()), 0.0)
    if gap > POWER_LOG_GAP_S:
        raise ValueError(ANALYSIS_ERRORS["power_log_gap"].format(start=start, end=end, gap=gap))
    inside = samples[(times >= start) & (times <= end)]
    settled = inside[inside[:, 0] >= start + settle_s]
    if len(settled):
        power = float(np.mean(settled[:, 1]))
    elif len(inside):
        power = float(np.mean(inside[:, 1]))
    else:
        middle = 0.5 * (start + end)
        power = float(samples[int(np.argmin(np.abs(times - middle))), 1])
    return power * (end - start)


def read_power_log(path: Path) -> np.ndarray:
    """Return the power sampler's log as an (m, 2) array of (epoch seconds, watts)."""
    rows = []
    with path.open(encoding="utf-8") as handle:
        for line in handle:
            fields = [f.strip() for f in line.split(",")]
            if len(fields) < 2 or fields[0] == "timestamp":
                continue
            try:
                power = float(fields[1])
            except ValueError:
                continue  # "[N/A]" or a truncated last line
            rows.append((parse_timestamp(fields[0]), power))
    return np.asarray(rows, dtype=np.float64).reshape(-1, 2)


def run_timezone(folder: Path) -> str:
    """Return the time zone of the run's power log (run.json's "timezone", else UTC)."""
    meta = folder / "run.json"
    if meta.is_file():
        return str(json.loads(meta.read_text(encoding="utf-8")).get("timezone", "UTC"))
    return "UTC"


def read_power_in_zone(path: Path, zone: str) -> np.ndarray:
    """Return the power log as (epoch, W), its local timestamps read in time zone `zone`."""
    previous = os.environ.get("TZ")
    os.environ["TZ"] = zone
    time.tzset()
    try:
        return read_power_log(path)
    finally:
        if previous is None:
            os.environ.pop("TZ", None)
        else:
            os.environ["TZ"] = previous
        time.tzset()


def parse_timestamp(text: str) -> float:
    """Return epoch seconds from nvidia-smi's local-time stamp (or an epoch number)."""
    try:
        return float(text)
    except ValueError:
        return dt.datetime.strptime(text, "%Y/%m/%d %H:%M:%S.%f").timestamp()


def analyze(
    configs: Sequence[Configuration],
    gpu_record: Mapping[str, float],
    *,
    gpu_name: str = "GPU",
    link_record: Mapping[str, float] | None = None,
    bus_bandwidth: float | None = None,
    power: np.ndarray | None = None,
    idle_power_w: float | None = None,
    calibration: str | None = None,
    profile: ProfileFunction = saxpy2_profile,
    power_settle_s: float = POWER_AVERAGING_S,
) -> Analysis:
    """Return the comparisons of measured and predicted times and energies.

    lambda_k is fitted on the calibration configuration(s) only (000 section 4.1) and then
    used unchanged everywhere; transfers use the link record's t_s and lambda_c when given,
    otherwise parameters fitted to this run's size sweep (then the transfer errors are fit
    residuals, not predictions); with a link record the fitted parameters' residuals are
    reported beside the predictions.
    """
    hardware = GpuHardware.from_attributes(gpu_record)
    spec = calibration or default_calibration(configs)
    chosen = select(configs, spec)
    lam = fit_lambda_k(
        estimated_s=[predict_kernel(hardware, c, 1.0, profile) for c in chosen],
        measured_s=[c.kernel_s for c in chosen],
    )
    result = Analysis(gpu=gpu_name, lambda_k=lam, calibration_label=spec)

    def kernel_comparison(c: Configuration, label: str) -> Comparison:
        return Comparison(label, c.kernel_s, predict_kernel(hardware, c, lam, profile))

    for c in sorted(
        (c for c in configs if c.scenario == "intensity"), key=lambda c: c.compute_intensity
    ):
        result.intensity.append(kernel_comparison(c, f"a = {c.compute_intensity}"))
    for c in sorted(
        (c for c in configs if c.scenario == "occupancy"), key=lambda c: c.active_warps_per_sm
    ):
        result.occupancy.append(
            kernel_comparison(
                c,
                f"{c.active_warps_per_sm} warps/SM (block {c.block_size}, {c.shmem_bytes} B shared)",
            )
        )
    sizes = sorted((c for c in configs if c.scenario == "size"), key=lambda c: c.n)
    for c in sizes:
        result.size_kernel.append(kernel_comparison(c, f"N = {c.n}"))

    if sizes:
        bandwidth = bus_bandwidth or (link_record or {}).get("bandwidth")
        if bandwidth is None:
            bandwidth = 15.8e9
            result.notes.append(
                "bus bandwidth unknown (no --link, no nvidia-smi PCIe data): 15.8 GB/s assumed"
            )
        if len({c.n for c in sizes}) >= 2:
            try:
                result.fitted_link = fit_link(sizes, float(bandwidth))
            except CalibrationError as error:
                result.notes.append(f"transfer fit failed: {error}")
        if link_record is not None:
            result.link = PcieLink.from_attributes("database record", link_record)
            result.link_source = "the database record (predictions)"
        else:
            result.link = result.fitted_link
            result.link_source = (
                "parameters fitted to this run (in-sample fit residuals, not predictions)"
            )
        targets = [(result.link, result.htd, result.dth, result.application)]
        if link_record is not None and result.fitted_link is not None:
            targets.append(
                (
                    result.fitted_link,
                    result.htd_fitted,
                    result.dth_fitted,
                    result.application_fitted,
                )
            )
        for link, htd_items, dth_items, app_items in targets:
            if link is None:
                continue
            for c in sizes:
                nbytes = c.n * BYTES_PER_ELEMENT
                htd = float(link.time(nbytes, "HostToDevice"))
                dth = float(link.time(nbytes, "DeviceToHost"))
                label = f"N = {c.n}"
                htd_items.append(Comparison(label, c.htd_x_s + c.htd_y_s, 2 * htd))
                dth_items.append(Comparison(label, c.dth_s, dth))
                kernel = predict_kernel(hardware, c, lam, profile)
                app_items.append(Comparison(label, c.app_s, 2 * htd + kernel + dth))

    energy_configs = sorted(
        (c for c in configs if c.scenario == "energy" and c.windows), key=lambda c: c.grid_size
    )
    if energy_configs and power is not None and len(power):
        analyze_energy(
            result, energy_configs, hardware, power, idle_power_w, gpu_record, power_settle_s
        )
    return result


def analyze_energy(
    result: Analysis,
    configs: Sequence[Configuration],
    hardware: GpuHardware,
    power: np.ndarray,
    idle_power_w: float | None,
    record: Mapping[str, float],
    settle_s: float = POWER_AVERAGING_S,
) -> None:
    """Fill the 003 comparison: fit T(NB) and E_b on three full-round points, predict the rest."""
    resident = configs[0].active_blocks_per_sm * hardware.sms
    measured: dict[int, tuple[float, float]] = {}
    for c in configs:
        energies = [
            window_energy(power, start, end, settle_s) / repeats
            for start, end, repeats in c.windows
        ]
        measured[c.grid_size] = (c.window_kernel_s, float(np.mean(energies)))
    result.energy_notes.append(
        f"energy per kernel = mean board power from {settle_s:g} s after each repeat window's start "
        "to its end x window length / repeats (nvidia-smi averages power.draw over 1 s on "
        "Ampere and newer)"
    )
    p_s = idle_power_w if idle_power_w is not None else record.get("powerIdle")
    if p_s is None:
        p_s = float(np.min(power[:, 1]))
        result.energy_notes.append(
            "no idle measurement or powerIdle attribute: P_s = lowest sampled power"
        )
    full_rounds = [nb for nb in sorted(measured) if nb % resident == 0]
    if len(full_rounds) < 3:
        result.energy_notes.append(
            "fewer than three full-round block counts: energy model not fitted"
        )
        return
    calibration = [full_rounds[0], full_rounds[1], full_rounds[len(full_rounds) // 2]]
    if calibration[2] in calibration[:2]:
        calibration[2] = full_rounds[-1]
    fit = fit_block_energy(
        blocks=[float(nb) for nb in calibration],
        times_s=[measured[nb][0] for nb in calibration],
        energies_j=[measured[nb][1] for nb in calibration],
        static_power_w=p_s,
    )
    model = BlockRoundModel(
        slope_s=fit.slope_s,
        block_energy_j=fit.block_energy_j,
        static_power_w=p_s,
        concurrent_blocks=resident,
    )
    result.energy_notes.append(
        f"R = {resident} blocks per round ({hardware.sms} SMs x {configs[0].active_blocks_per_sm} blocks/SM); "
        f"calibrated on NB = {', '.join(map(str, calibration))}: a = {fit.slope_s:.4g} s/block, "
        f"E_b = {fit.block_energy_j:.4g} J/block, P_s = {p_s:.4g} W, P_r = {model.round_power_w:.4g} W"
    )
    for nb, (time_s, energy_j) in sorted(measured.items()):
        if nb in calibration:
            continue
        result.energy_time.append(Comparison(f"NB = {nb}", time_s, float(model.time(nb))))
        result.energy.append(Comparison(f"NB = {nb}", energy_j, float(model.energy(nb))))


def _table(items: Sequence[Comparison], unit: str = "ms", scale: float = 1e3) -> list[str]:
    lines = [
        f"| configuration | measured [{unit}] | predicted [{unit}] | relative error |",
        "|---|---|---|---|",
    ]
    lines += [
        f"| {c.label} | {c.measured * scale:.4g} | {c.predicted * scale:.4g} | {100 * c.error:.1f} % |"
        for c in items
    ]
    return lines


def _mean_line(items: Sequence[Comparison], paper: str) -> str:
    value = mean_error(items)
    shown = "n/a (no data)" if math.isnan(value) else f"{100 * value:.1f} %"
    return f"Mean relative error: **{shown}** ({paper})."


def _large(items: Sequence[Comparison]) -> list[Comparison]:
    return [c for c in items if int(c.label.split("= ")[1]) >= LARGE_N]


def _small(items: Sequence[Comparison]) -> list[Comparison]:
    return [c for c in items if int(c.label.split("= ")[1]) < LARGE_N]


def render_report(result: Analysis) -> str:
    """Return the Markdown report, laid out like 000 section 6 plus 003's energy errors."""
    large_kernel, small_kernel = _large(result.size_kernel), _small(result.size_kernel)
    large_app, small_app = _large(result.application), _small(result.application)
    # With a link record, the fitted link's in-sample residuals too: (summary row, short name, items)
    fitted: list[tuple[str, str, list[Comparison]]] = []
    if result.htd_fitted:
        fitted = [
            ("transfer HtD, fitted link (in-sample)", "HtD", result.htd_fitted),
            ("transfer DtH, fitted link (in-sample)", "DtH", result.dth_fitted),
            (
                "application, large data, fitted link (in-sample)",
                "application N >= 10^7",
                _large(result.application_fitted),
            ),
            (
                "application, small data, fitted link (in-sample)",
                "application N < 10^7",
                _small(result.application_fitted),
            ),
        ]
    out = [
        f"# saxpy2 validation: {result.gpu}",
        "",
        "Measured with `validation/run_all.sh`, analysed by `validation/analyze.py` with the reference "
        "models of `simulator/models` (Volkov 4.1-4.5, transfers 4.6, 003's block-round energy model). "
        "Relative error = |predicted - measured| / measured; every time is the mean of the repetitions.",
        "",
        f"lambda_k = **{result.lambda_k:.6f}**, fitted on `{result.calibration_label}` only "
        f"(000: {PAPER_LAMBDA_K} on the GTX 970). Kernel profile: saxpy2 on sm_52 (INS = 23 + 4a, "
        "GMem_bytes = 384, Lat_bound = 942 + 24a); newer architectures compile to other SASS, which "
        "lambda_k absorbs only in part.",
        "",
    ]
    out += [f"- {note}" for note in result.notes]
    out += ["", "## 1. Kernel time against compute intensity (000 section 6.3, first scenario)", ""]
    out += [
        *_table(result.intensity),
        "",
        _mean_line(result.intensity, "000: accurate, worse when memory bound"),
        "",
    ]
    out += ["## 2. Kernel time against occupancy (000 Fig. 6.1)", ""]
    out += [
        *_table(result.occupancy),
        "",
        _mean_line(result.occupancy, "000: 5.4 % GTX 970, 7.8 % TITAN X, 3.9 % GTX 1070"),
        "",
    ]
    out += ["## 3. Kernel time against data size (000 Figs. 6.2, 6.3)", ""]
    out += [*_table(result.size_kernel), ""]
    out += [_mean_line(large_kernel, "large data, N >= 10^7; 000: 3.7 % / 4.6 % / 13.6 %")]
    out += [
        _mean_line(small_kernel, "small data; 000: worse, up to 32.8 % with memory-bound cases"),
        "",
    ]
    out += [
        "## 4. Transfers per direction (000 Fig. 6.4, Eq. 4.6)",
        "",
        f"Link parameters from {result.link_source}.",
    ]
    for name, link in (("used", result.link), ("fitted to this run", result.fitted_link)):
        if link is not None:
            out.append(
                f"- {name}: bandwidth {link.bandwidth / 1e9:.4g} GB/s; HtD t_s = {link.host_to_device.startup_s * 1e3:.5f} ms, "
                f"lambda_c = {link.host_to_device.lambda_c:.3f}; DtH t_s = {link.device_to_host.startup_s * 1e3:.5f} ms, "
                f"lambda_c = {link.device_to_host.lambda_c:.3f} (000 Table 6.2, GTX 970: 0.00397 / 0.00516 ms, 0.689 / 0.653)"
            )
    out += ["", "Host to device (two arrays of 4N bytes):", "", *_table(result.htd)]
    out += [
        "",
        _mean_line(result.htd, "HtD"),
        "",
        "Device to host (one array of 4N bytes):",
        "",
        *_table(result.dth),
    ]
    out += ["", _mean_line(result.dth, "DtH"), ""]
    if fitted:
        shown = "; ".join(f"{short} {100 * mean_error(items):.1f} %" for _, short, items in fitted)
        out += [
            "With t_s and lambda_c fitted to this run instead (in-sample residuals, not "
            f"predictions), mean relative errors: {shown}.",
            "",
        ]
    out += ["## 5. Whole application (000 Fig. 6.5)", "", *_table(result.application), ""]
    out += [_mean_line(large_app, "N >= 10^7; 000: 1.8 % GTX 970, 0.5 % TITAN X, 1.5 % GTX 1070")]
    out += [_mean_line(small_app, "N < 10^7"), ""]
    out += ["## 6. Energy by number of blocks (003, Eqs. 1-7)", ""]
    out += [f"- {note}" for note in result.energy_notes]
    if result.energy:
        out += ["", "Time per kernel:", "", *_table(result.energy_time)]
        out += ["", "Energy per kernel:", "", *_table(result.energy, unit="J", scale=1.0)]
        for name, items, paper in (
            ("time", result.energy_time, "003: ARE <= 6.69 % M2075, 6.54 % K20Xm"),
            ("energy", result.energy, "003: ARE <= 6.86 % M2075, 8.33 % K20Xm"),
        ):
            errors = [c.error for c in items]
            out.append(
                f"\n{name}: ARE **{100 * float(np.mean(errors)):.2f} %**, WRE {100 * max(errors):.2f} %, "
                f"BRE {100 * min(errors):.2f} % ({paper})."
            )
    out += ["", "## Summary", "", "| scenario | mean relative error |", "|---|---|"]
    for name, items in (
        ("kernel vs compute intensity", result.intensity),
        ("kernel vs occupancy", result.occupancy),
        ("kernel, large data", large_kernel),
        ("kernel, small data", small_kernel),
        ("transfer HtD", result.htd),
        ("transfer DtH", result.dth),
        ("application, large data", large_app),
        ("application, small data", small_app),
        *((name, items) for name, _, items in fitted),
        ("003 time by blocks", result.energy_time),
        ("003 energy by blocks", result.energy),
    ):
        value = mean_error(items)
        out.append(f"| {name} | {'n/a' if math.isnan(value) else f'{100 * value:.1f} %'} |")
    return "\n".join(out) + "\n"


def bus_bandwidth_from_nvidia_smi(path: Path) -> float | None:
    """Return the per-direction PCIe bandwidth from 'name, gen max, width max, ...' or None."""
    try:
        fields = [f.strip() for f in path.read_text(encoding="utf-8").splitlines()[0].split(",")]
        generation, width = int(fields[1]), int(fields[2])
    except (OSError, IndexError, ValueError):
        return None
    lane = PCIE_LANE_BANDWIDTH.get(generation)
    return None if lane is None else lane * width


def main(argv: Sequence[str] | None = None) -> int:
    """Run the analysis from the command line and write the report; return the exit status."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--run",
        type=Path,
        help="a committed run folder (validation/data/<run>): its files, and run.json's record, "
        "link and time zone, in place of the options below",
    )
    parser.add_argument("--measurements", type=Path)
    parser.add_argument("--report", type=Path, required=True)
    parser.add_argument(
        "--record", help="GPU record: JSON file or a GPU name in hwdb/seed/hardware.json"
    )
    parser.add_argument("--link", help="bus record: JSON file or a NETWORK name in the seed data")
    parser.add_argument("--device-info", type=Path, help="device.json written by the harness")
    parser.add_argument("--power", type=Path, help="power log of power_sampler.sh")
    parser.add_argument(
        "--idle-end-epoch", type=float, help="idle samples are those before this time"
    )
    parser.add_argument(
        "--nvidia-smi", type=Path, help="nvidia-smi.csv with PCIe generation and width"
    )
    parser.add_argument("--calibration", help="e.g. 'intensity:compute_intensity=1024'")
    parser.add_argument(
        "--power-settle-s",
        type=float,
        default=POWER_AVERAGING_S,
        help="skip this long of each energy window's power samples (power.draw's averaging)",
    )
    args = parser.parse_args(argv)
    if args.run is not None:
        _fill_from_run(args, args.run)
    elif args.measurements is None:
        parser.error("give --run or --measurements")

    configs = aggregate(read_measurements(args.measurements))
    info = json.loads(args.device_info.read_text(encoding="utf-8")) if args.device_info else {}
    record = load_record(args.record) if args.record else record_from_device(info)
    gpu_name = str(info.get("name", args.record or "GPU"))
    link = load_record(args.link) if args.link else None
    bandwidth = (
        bus_bandwidth_from_nvidia_smi(args.nvidia_smi) if args.nvidia_smi and link is None else None
    )
    if args.power and args.run is not None:
        power: np.ndarray | None = read_power_in_zone(args.power, run_timezone(args.run))
    else:
        power = read_power_log(args.power) if args.power else None
    idle = None
    if power is not None and args.idle_end_epoch is not None:
        before = power[power[:, 0] < args.idle_end_epoch]
        idle = float(np.mean(before[:, 1])) if len(before) else None
    result = analyze(
        configs,
        record,
        gpu_name=gpu_name,
        link_record=link,
        bus_bandwidth=bandwidth,
        power=power,
        idle_power_w=idle,
        calibration=args.calibration,
        power_settle_s=args.power_settle_s,
    )
    if not args.record:
        result.notes.append(
            "GPU record built from the CUDA runtime's device properties (no --record given)"
        )
    args.report.parent.mkdir(parents=True, exist_ok=True)
    args.report.write_text(render_report(result), encoding="utf-8")
    return 0


def _fill_from_run(args: argparse.Namespace, folder: Path) -> None:
    """Set the file and record options from a committed run folder."""
    meta = json.loads((folder / "run.json").read_text(encoding="utf-8"))
    args.measurements = folder / "measurements.csv"
    args.device_info = folder / "device.json"
    args.power = folder / "power.csv"
    args.idle_end_epoch = float((folder / "idle_end_epoch").read_text(encoding="utf-8"))
    args.nvidia_smi = folder / "nvidia-smi.csv"
    args.record = args.record or meta["record"]
    args.link = args.link or meta["paper_link"]


if __name__ == "__main__":
    raise SystemExit(main())
