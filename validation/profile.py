"""A GPU's measured profile as hardware records (issue 11 item 5).

Reads what `validation/run_all.sh` leaves in a run folder (`profile.csv` of
`validation/gpuprofile.cu`, the power log, `device.json`, `nvidia-smi.csv`) and writes the
attributes the current-architecture models read, in the bulk import format of
`hwdb` (`{"components": [...]}`): the GPU (its database record's attributes with the measured
ones replacing or added to them) and its host link (pinned and pageable copies per direction).

    python -m validation.profile validation/data/<run> --base "H100 SXM5 80GB" \
        --name "H100 SXM5 80GB (measured)" [--out record.json]

Every measured attribute's source names the run folder and what was measured. Times in the
power log are read in the time zone of the run's `run.json` (UTC when absent).
"""

from __future__ import annotations

import argparse
import csv
import json
import math
import sys
from collections import defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from validation.analyze import (
    PCIE_LANE_BANDWIDTH,
    SEED_PATH,
    fit_direction,
    read_power_in_zone,
    run_timezone,
    window_energy,
)

PROFILE_ERRORS: dict[str, str] = {
    "missing": "{path}: no {what} in the run folder (run validation/run_all.sh first)",
    "no_rows": "{path}: no '{benchmark}' rows in profile.csv",
    "base_not_found": "no component named {name!r} in {path}",
    "peak_mismatch": (
        "{name!r} has {key} {record:g} but the run's device.json {device:g}: memoryEfficiency "
        "is measured against the run's Eq. 4.5 peak, so the record must carry the same {key}"
    ),
}
PAGEABLE_MIN_BYTES = 1 << 20  # below this the startup term dominates the pageable fit
PAGEABLE_STARTUP_MAX_BYTES = 16 << 10  # copies this small cost their startup time alone
COLD_FOOTPRINT_L2 = 4.0  # pointer-chase footprints this many times L2 or more miss in L2


@dataclass(frozen=True)
class Measurement:
    """One measured attribute: key, value, unit and what it was measured from."""

    key: str
    value: float
    unit: str
    how: str


def read_profile(path: Path) -> dict[tuple[str, str, float], list[dict[str, str]]]:
    """Return profile.csv's rows grouped by (benchmark, param, param_value)."""
    if not path.is_file():
        raise ValueError(PROFILE_ERRORS["missing"].format(path=path.parent, what=path.name))
    groups: dict[tuple[str, str, float], list[dict[str, str]]] = defaultdict(list)
    with path.open(newline="", encoding="utf-8") as handle:
        for row in csv.DictReader(handle):
            groups[(row["benchmark"], row["param"], float(row["param_value"]))].append(row)
    return groups


def _median(rows: Sequence[Mapping[str, str]]) -> float:
    return float(np.median([float(r["value"]) for r in rows]))


def kernel_measurements(folder: Path) -> list[Measurement]:
    """Return launch overhead, latencies, issue rate, bandwidths and the clock of one run."""
    groups = read_profile(folder / "profile.csv")
    info = json.loads((folder / "device.json").read_text(encoding="utf-8"))
    name = folder.name

    def rows(benchmark: str, param: str, value: float) -> list[dict[str, str]]:
        found = groups.get((benchmark, param, value))
        if not found:
            raise ValueError(PROFILE_ERRORS["no_rows"].format(path=folder, benchmark=benchmark))
        return found

    launch = _median(rows("launch", "event_pair_grid", 1.0))
    clock_mhz = _median(rows("clock", "sm_clock", 0.0))
    sms = float(info["SMs"])
    l2 = float(info["L2Cache"])
    peak = float(info["memoryClockMHz"]) * 1e6 * 2 * float(info["busWidth"]) / 8

    stream: dict[tuple[str, str], list[tuple[float, float]]] = defaultdict(list)
    for (benchmark, param, _), found in groups.items():
        if benchmark != "stream":
            continue
        kernel, mode, _, nbytes = param.split("_")
        stream[(kernel, mode)].append((float(nbytes), _median(found)))
    cold = max(stream[("saxpy", "cold")])
    efficiency = cold[0] / cold[1] / peak
    resident = [
        nbytes / (seconds - launch)
        for kernel in ("saxpy", "copy4")
        for nbytes, seconds in stream[(kernel, "warm")]
        # the footprint (two arrays: 8 of the 12 or 8 bytes per element) well inside L2,
        # and long enough for the launch to be a small part of it
        if nbytes * (8 / 12 if kernel == "saxpy" else 1) <= 0.5 * l2 and seconds > 2 * launch
    ]
    chase = [
        (footprint, _median(found))
        for (benchmark, param, footprint), found in groups.items()
        if benchmark == "pchase"
    ]
    l1_latency = min(c for _, c in chase)
    global_latency = float(np.median([c for f, c in chase if f >= COLD_FOOTPRINT_L2 * l2]))
    l2_latency = float(np.median([c for f, c in chase if 1e6 <= f <= 0.4 * l2]))
    issue_rows = [
        (float(param_value), _median(found))
        for (benchmark, _, param_value), found in groups.items()
        if benchmark == "issue"
    ]
    warp_instructions, seconds = max(issue_rows)
    issue_rate = warp_instructions / (seconds * clock_mhz * 1e6 * sms)
    fadd = _median(rows("dependent", "fadd", 1.0))
    return [
        Measurement(
            "kernelLaunchOverhead",
            launch,
            "s",
            f"median of 200 empty <<<1,32>>> kernels between two CUDA events ({name})",
        ),
        Measurement(
            "memoryEfficiency",
            efficiency,
            "fraction",
            f"saxpy (12 B/element) at {cold[0] / 1e9:.3g} GB with L2 flushed: "
            f"{cold[0] / cold[1] / 1e12:.3f} TB/s of the {peak / 1e12:.3f} TB/s of eq 4.5 ({name})",
        ),
        Measurement(
            "L2Bandwidth",
            float(np.median(resident)),
            "B/s",
            f"saxpy and float4 copy with the data resident in L2 (footprint <= L2/2), launch "
            f"overhead subtracted, median of {len(resident)} points ({name})",
        ),
        Measurement(
            "globalLoadLatency",
            global_latency,
            "cycles",
            f"one-thread pointer chase over footprints >= {COLD_FOOTPRINT_L2:g} x L2, L2 flushed, "
            f"each line once ({name})",
        ),
        Measurement(
            "L2HitLatency",
            l2_latency,
            "cycles",
            f"pointer chase over 1 MB .. 0.4 x L2, walked once before timing ({name})",
        ),
        Measurement("L1HitLatency", l1_latency, "cycles", f"pointer chase over 16-192 KB ({name})"),
        Measurement(
            "dependentIssueLatency",
            fadd,
            "cycles",
            f"one warp, 16384 dependent FADDs (add.f32) timed with clock64 ({name})",
        ),
        Measurement(
            "issueRate",
            issue_rate,
            "warp instructions/cycle/SM",
            f"eight independent FADD chains per thread, 8 full waves, at the measured "
            f"{clock_mhz:.0f} MHz ({name})",
        ),
    ]


def wake_measurements(folder: Path) -> list[Measurement]:
    """Return the clock-ramp penalty (C.5) fitted to the run's wake benchmark, if it has one.

    penalty(idle) = median time after `idle` ms of idleness - median time with none; fitted by
    least squares to W (1 - exp(-idle / tau)) over a grid of tau.
    """
    groups = read_profile(folder / "profile.csv")
    times = {
        idle_ms / 1e3: _median(rows)
        for (benchmark, _, idle_ms), rows in groups.items()
        if benchmark == "wake"
    }
    if len(times) < 3 or 0.0 not in times:
        return []
    idle = np.array(sorted(times))
    penalty = np.array([times[i] - times[0.0] for i in idle])
    best = (math.inf, 0.0, 0.0)
    for tau in np.geomspace(1e-3, 1.0, 301):
        shape = 1.0 - np.exp(-idle / tau)
        height = max(0.0, float(np.sum(shape * penalty) / np.sum(shape * shape)))
        residual = float(np.sum((height * shape - penalty) ** 2))
        best = min(best, (residual, height, float(tau)))
    _, height, tau = best
    how = (
        f"saxpy of 10^7 elements timed after the GPU idled {', '.join(f'{1e3 * i:g}' for i in idle)} "
        f"ms: W (1 - exp(-idle / tau)) fitted to the extra time over no idleness ({folder.name})"
    )
    return [
        Measurement("clockWakePenalty", height, "s", how),
        Measurement("clockWakeTimeConstant", tau, "s", how),
    ]


def power_measurements(folder: Path) -> list[Measurement]:
    """Return idle, active-idle and loaded board power of one run (nvidia-smi power.draw)."""
    groups = read_profile(folder / "profile.csv")
    power = read_power_in_zone(folder / "power.csv", run_timezone(folder))
    name = folder.name
    idle_end = float((folder / "idle_end_epoch").read_text(encoding="utf-8"))
    before = power[power[:, 0] < idle_end]
    found: list[Measurement] = [
        Measurement(
            "powerIdle",
            float(np.mean(before[:, 1])),
            "W",
            f"mean board power over the 3 s before any CUDA context ({name})",
        )
    ]
    windows = {
        "context_idle": ("powerActiveIdle", "a CUDA context alive, no kernel running"),
        "ffma_loaded": ("powerLoadedCompute", "FFMA-bound kernels back to back"),
        "stream_loaded": ("powerLoadedMemory", "float4 copy of 1 GB arrays back to back"),
    }
    for (benchmark, param, _), rows in groups.items():
        if benchmark != "power" or param not in windows:
            continue
        start = float(rows[0]["window_start_epoch"])
        end = float(rows[0]["window_end_epoch"])
        key, what = windows[param]
        found.append(
            Measurement(
                key,
                window_energy(power, start, end) / (end - start),
                "W",
                f"mean board power, {what}, from 1 s into a {end - start:.1f} s window ({name})",
            )
        )
    return found


def link_measurements(folder: Path) -> list[Measurement]:
    """Return the host link's pinned (eq 4.6) and pageable parameters per direction."""
    groups = read_profile(folder / "profile.csv")
    name = folder.name
    bandwidth = link_bandwidth(folder)
    found = [
        Measurement(
            "bandwidth",
            bandwidth,
            "B/s",
            f"nvidia-smi PCIe generation and width of the run ({name})",
        )
    ]
    for direction, suffix in (("htd", "HTD"), ("dth", "Dth")):
        for memory in ("pinned", "pageable"):
            points = [
                (size, _median(rows))
                for (benchmark, param, size), rows in groups.items()
                if benchmark == "memcpy" and param == f"{direction}_{memory}"
            ]
            sizes = [p[0] for p in points]
            times = [p[1] for p in points]
            if memory == "pinned":
                fit = fit_direction(sizes, times, bandwidth)
                found += [
                    Measurement(
                        f"startup{suffix}",
                        fit.startup_s,
                        "s",
                        f"cudaMemcpy {direction} from pinned memory, 4 KB-1 GB, fitted by eq 4.6 ({name})",
                    ),
                    Measurement(
                        f"lambda{suffix}",
                        fit.lambda_c,
                        "",
                        f"cudaMemcpy {direction} from pinned memory, 4 KB-1 GB, fitted by eq 4.6 ({name})",
                    ),
                ]
            else:
                startup, staging = fit_pageable(sizes, times)
                found += [
                    Measurement(
                        f"pageableStartup{suffix}",
                        startup,
                        "s",
                        f"cudaMemcpy {direction} from pageable memory: median time of the "
                        f"copies up to {PAGEABLE_STARTUP_MAX_BYTES // 1024} KB ({name})",
                    ),
                    Measurement(
                        f"pageableBandwidth{suffix}",
                        staging,
                        "B/s",
                        f"cudaMemcpy {direction} from pageable memory, 1 MB-1 GB: B_staging of "
                        f"t_s + n / B_staging, relative least squares ({name})",
                    ),
                ]
    return found


def fit_pageable(sizes: Sequence[float], times: Sequence[float]) -> tuple[float, float]:
    """Return (t_s, B_staging) of pageable copies: t_s the median time of the smallest copies,
    B_staging the relative least-squares rate of t - t_s = n / B over copies of 1 MB or more.

    The pageable rate falls slowly with size on a VM host (7.4 GB/s at 1 MB, 7.0 at 1 GB on
    the H100 testbed), so a free two-parameter line can give a negative startup time.
    """
    n = np.asarray(sizes, dtype=np.float64)
    t = np.asarray(times, dtype=np.float64)
    startup = float(np.median(t[n <= PAGEABLE_STARTUP_MAX_BYTES]))
    large = n >= PAGEABLE_MIN_BYTES
    excess = t[large] - startup
    # minimise sum ((n / B - excess) / t)^2 over 1 / B
    weights = 1.0 / t[large] ** 2
    inverse = float(np.sum(weights * n[large] * excess) / np.sum(weights * n[large] ** 2))
    return startup, 1.0 / inverse


def link_bandwidth(folder: Path) -> float:
    """Return the per-direction PCIe bandwidth [B/s] from the run's nvidia-smi.csv."""
    text = (folder / "nvidia-smi.csv").read_text(encoding="utf-8").strip().splitlines()[0]
    fields = [f.strip() for f in text.split(",")]
    generation, width = int(fields[1]), int(fields[2])
    return PCIE_LANE_BANDWIDTH[generation] * width


def _attribute(m: Measurement, command: str) -> dict[str, object]:
    value = float(f"{m.value:.4g}") if math.isfinite(m.value) else m.value
    source = f"measured with the validation kit: {m.how}; {command}"
    return {"key": m.key, "value": value, "unit": m.unit, "source": source[:500]}


def _check_peak(record: Mapping[str, object], folder: Path, name: str) -> None:
    """Raise ValueError when the record's memory clock or bus width is not the run's: the
    measured efficiency would scale another peak than it was measured against."""
    info = json.loads((folder / "device.json").read_text(encoding="utf-8"))
    items = record["attributes"]
    assert isinstance(items, list)
    values = {str(a["key"]): a["value"] for a in items}
    for key, device_key in (("busWidth", "busWidth"), ("memoryClock", "memoryClockMHz")):
        if key in values and float(values[key]) != float(info[device_key]):
            raise ValueError(
                PROFILE_ERRORS["peak_mismatch"].format(
                    name=name, key=key, record=float(values[key]), device=float(info[device_key])
                )
            )


def records(
    folder: Path, *, base: str | None, name: str, link_name: str, seed_path: Path = SEED_PATH
) -> dict[str, list[dict[str, object]]]:
    """Return the GPU and link records of one run in the bulk import format."""
    command = f"python -m validation.profile validation/data/{folder.name}"
    measured = kernel_measurements(folder) + power_measurements(folder) + wake_measurements(folder)
    attributes: list[dict[str, object]] = []
    vendor, comment_base = "NVIDIA", ""
    if base is not None:
        components = json.loads(seed_path.read_text(encoding="utf-8"))["components"]
        match = next((c for c in components if c["name"] == base), None)
        if match is None:
            raise ValueError(PROFILE_ERRORS["base_not_found"].format(name=base, path=seed_path))
        _check_peak(match, folder, base)
        keys = {m.key for m in measured}
        attributes = [a for a in match["attributes"] if a["key"] not in keys]
        vendor = match.get("vendor", vendor)
        comment_base = f"{base} with this project's measurements. "
    attributes += [_attribute(m, command) for m in measured]
    gpu: dict[str, object] = {
        "name": name,
        "type": "GPU",
        "vendor": vendor,
        "comment": comment_base + f"Measured by validation/run_all.sh ({folder.name}).",
        "source_url": "",
        "attributes": attributes,
    }
    link: dict[str, object] = {
        "name": link_name,
        "type": "NETWORK",
        "vendor": "",
        "comment": (
            f"Host link of the {name} testbed as cudaMemcpy measured it ({folder.name}): "
            "startup and lambda for pinned memory (eq 4.6), pageable startup and staging "
            "bandwidth for pageable memory."
        ),
        "source_url": "",
        "attributes": [_attribute(m, command) for m in link_measurements(folder)],
    }
    return {"components": [gpu, link]}


def main(argv: Sequence[str] | None = None) -> int:
    """Write the records of one run folder; return the exit status (2 with a message on bad
    input)."""
    try:
        return _main(argv)
    except (ValueError, OSError, KeyError) as error:
        print(f"validation.profile: {error}", file=sys.stderr)
        return 2


def _main(argv: Sequence[str] | None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("folder", type=Path, help="a run folder (validation/data/<run>)")
    parser.add_argument("--base", help="the GPU's record in hwdb/seed/hardware.json to extend")
    parser.add_argument("--name", required=True, help="name of the GPU record written")
    parser.add_argument("--link-name", help="name of the link record (default: NAME host link)")
    parser.add_argument("--out", type=Path, help="write here instead of standard output")
    args = parser.parse_args(argv)
    data = records(
        args.folder,
        base=args.base,
        name=args.name,
        link_name=args.link_name or f"{args.name} host link",
    )
    text = json.dumps(data, indent=2) + "\n"
    if args.out:
        args.out.write_text(text, encoding="utf-8")
    else:
        print(text, end="")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
