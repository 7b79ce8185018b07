"""The uncertainty table: how far a prediction may be off, per hardware record and attribute,
from the committed kit runs (issue 44 item 5; docs/uncertainty.md).

    python -m validation.uncertainty            # print the table
    python -m validation.uncertainty --write    # write simulator/models/data/uncertainty.json

Two kinds of entry, each computed from `validation/data/<run>/` by this module alone:

- `attributes`: the repeat-run spread of every attribute `validation.profile` measures, over
  every committed run of the record's GPU (and of the run's measured link record): the
  relative sample standard deviation (ddof 1) of the per-run values. The runs span several
  physical GPUs of one kind and fresh machines, so the spread is the noise floor of "a GPU of
  this kind measured by the kit", not of one board.
- `spec_mode` (beside the records): the kernel model's error predicting a GPU from its
  spec-sheet record alone, over the measured GPUs (`spec_mode_residuals`): the basis of the
  interval of a GPU the kit never measured, labelled as such by the simulator.
- `models`: the current-architecture kernel model's residual on each GPU: ln(measured /
  predicted) of saxpy2's kernel time over the intensity, occupancy and size scenarios of every
  run of the GPU, predicted as `validation.evaluate` predicts them. The record's measured
  attributes and the model's fitted exponent come from some of these runs ("calibrate" and
  "fit" roles), so the entry is labelled "fitted on the same data" where such runs are among
  them; `noise_floor` is the median relative standard deviation of the kernel time over the
  repetitions of one configuration (the kit repeats each ten times).

The simulator reads the written table (simulator.uncertainty) and never this module.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from collections import defaultdict
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from simulator.models.gpu_current import CurrentGpu
from validation.analyze import LARGE_N, load_record, read_measurements
from validation.evaluate import (
    BYTES_PER_ELEMENT,
    DATA_DIR,
    MEASURED_KEYS,
    REPO_ROOT,
    Run,
    Saxpy2Profile,
    committed_runs,
    current_kernel_time,
    link_time,
)
from validation.profile import (
    kernel_measurements,
    link_measurements,
    power_measurements,
    wake_measurements,
)

TABLE_PATH = REPO_ROOT / "simulator" / "models" / "data" / "uncertainty.json"
CURRENT_MODEL = "GPU kernel (current architectures)"
KERNEL_SCENARIOS = ("intensity", "occupancy", "size")
SIGNIFICANT_DIGITS = 6
ROUNDING = 1e-12  # relative spreads below this are float rounding of equal values
COMMAND = "python -m validation.uncertainty --write"


def _round(value: float) -> float:
    """Return `value` to SIGNIFICANT_DIGITS digits, so that the table reads and diffs well."""
    return float(f"{value:.{SIGNIFICANT_DIGITS}g}")


def _relative_sd(values: Sequence[float]) -> float:
    """Return the relative sample SD; values equal but for float rounding (the link bandwidth
    computed from one generation and width) give 0."""
    mean = float(np.mean(values))
    spread = float(np.std(values, ddof=1)) / abs(mean) if mean else 0.0
    return spread if spread > ROUNDING else 0.0


def _profiled(runs: Sequence[Run]) -> list[Run]:
    return [run for run in runs if (run.path / "profile.csv").is_file()]


def attribute_spread(runs: Sequence[Run]) -> dict[str, dict[str, dict[str, Any]]]:
    """Return record name -> attribute -> its spread over the runs that measured it."""
    values: dict[tuple[str, str], list[tuple[str, float]]] = defaultdict(list)
    for run in _profiled(runs):
        gpu = [*kernel_measurements(run.path), *power_measurements(run.path)]
        for m in [*gpu, *wake_measurements(run.path)]:
            values[(run.record_name, m.key)].append((run.name, m.value))
        for m in link_measurements(run.path):
            values[(run.current_link, m.key)].append((run.name, m.value))
    table: dict[str, dict[str, dict[str, Any]]] = {}
    for (record, key), measured in sorted(values.items()):
        if len(measured) < 2:
            continue
        numbers = [v for _, v in measured]
        table.setdefault(record, {})[key] = {
            "relative_sd": _round(_relative_sd(numbers)),
            "mean": _round(float(np.mean(numbers))),
            "runs": len(measured),
            "source": (
                "repeat-run spread: relative sample SD of validation.profile's value over the "
                "committed kit runs " + ", ".join(name for name, _ in measured)
            ),
        }
    return table


def kernel_residuals(run: Run, *, spec_only: bool = False) -> tuple[list[float], list[float]]:
    """Return the current model's ln(measured / predicted) kernel times of one run's saxpy2
    configurations, and each configuration's relative SD over its repetitions; `spec_only`
    predicts from the record without its measured attributes (validation.evaluate's "(spec)"
    rows: the spec sheet and the architecture profile)."""
    record = load_record(run.record_name)
    if spec_only:
        record = {k: v for k, v in record.items() if k not in MEASURED_KEYS}
    gpu = CurrentGpu.from_attributes(record)
    profile = Saxpy2Profile.from_run(run)
    link = load_record(run.current_link)
    residuals = []
    for c in run.configs:
        if c.scenario not in KERNEL_SCENARIOS:
            continue
        idle = 2 * link_time(link, c.n * BYTES_PER_ELEMENT, "HostToDevice")
        predicted = current_kernel_time(gpu, profile, c, None, idle)
        residuals.append(math.log(c.kernel_s / predicted))
    repeats: dict[tuple[str, ...], list[float]] = defaultdict(list)
    for row in read_measurements(run.path / "measurements.csv"):
        if row["scenario"] in KERNEL_SCENARIOS:
            key = tuple(row[k] for k in ("scenario", "n", "block_size", "compute_intensity"))
            repeats[key].append(float(row["kernel_s"]))
    spreads = [_relative_sd(times) for times in repeats.values() if len(times) > 1]
    return residuals, spreads


def model_residuals(runs: Sequence[Run]) -> dict[str, dict[str, dict[str, Any]]]:
    """Return record name -> model name -> the kernel model's residual over the record's runs."""
    by_record: dict[str, list[Run]] = defaultdict(list)
    for run in _profiled(runs):
        by_record[run.record_name].append(run)
    table: dict[str, dict[str, dict[str, Any]]] = {}
    for record, record_runs in sorted(by_record.items()):
        residuals: list[float] = []
        spreads: list[float] = []
        for run in record_runs:
            found, spread = kernel_residuals(run)
            residuals.extend(found)
            spreads.extend(spread)
        in_sample = sorted({run.role for run in record_runs} - {"judge"})
        label = (
            "fitted on the same data (runs of role " + ", ".join(in_sample) + " are included)"
            if in_sample
            else "out of sample"
        )
        table[record] = {
            CURRENT_MODEL: {
                "output": "kernel_time",
                "log_sd": _round(float(np.std(residuals, ddof=1))),
                "log_bias": _round(float(np.mean(residuals))),
                "points": len(residuals),
                "noise_floor": _round(float(np.median(spreads))),
                "runs": len(record_runs),
                "label": label,
                "source": (
                    "ln(measured / predicted) of saxpy2's kernel time, scenarios "
                    + ", ".join(KERNEL_SCENARIOS)
                    + f" (sizes below N = {LARGE_N:g} included), predicted as validation."
                    "evaluate predicts them, over the committed kit runs "
                    + ", ".join(run.name for run in record_runs)
                ),
            }
        }
    return table


def spec_mode_residuals(runs: Sequence[Run]) -> dict[str, dict[str, Any]]:
    """Return model name -> the kernel model's spec-mode error: how far it is off predicting
    a GPU from its spec-sheet record alone, over every measured GPU's runs (`spec_only`).

    What it is for: a GPU the kit never measured (a B200) is predicted from its spec record,
    so the error of that kind of prediction on the GPUs that were measured is the one basis
    for its interval. Its `log_sd` is the largest, over the measured GPUs, of the root mean
    square of the GPU's residuals (about zero, not its mean: an unmeasured GPU's bias is not
    known, so it is part of the error), so it is at least each measured GPU's own spread;
    `per_gpu` gives each. It was measured on these GPUs only (Hopper); the result labels an
    interval drawn from it as such, never as a measurement of the GPU it is applied to."""
    by_record: dict[str, list[Run]] = defaultdict(list)
    for run in _profiled(runs):
        by_record[run.record_name].append(run)
    if not by_record:
        return {}
    per_gpu: dict[str, float] = {}
    every: list[float] = []
    names: list[str] = []
    for record, record_runs in sorted(by_record.items()):
        residuals = [r for run in record_runs for r in kernel_residuals(run, spec_only=True)[0]]
        per_gpu[record] = _round(math.sqrt(float(np.mean(np.square(residuals)))))
        every.extend(residuals)
        names.extend(run.name for run in record_runs)
    gpus = list(per_gpu)
    in_sample = sorted({run.role for rs in by_record.values() for run in rs} - {"judge"})
    fitted = f"; fitted on the same data (runs of role {', '.join(in_sample)})" if in_sample else ""
    return {
        CURRENT_MODEL: {
            "output": "kernel_time",
            "log_sd": max(per_gpu.values()),
            "log_bias": _round(float(np.mean(every))),
            "per_gpu": per_gpu,
            "gpus": gpus,
            "points": len(every),
            "runs": len(names),
            "label": "from spec-mode error on other GPUs (" + ", ".join(gpus) + ")" + fitted,
            "source": (
                "ln(measured / predicted) of saxpy2's kernel time, scenarios "
                + ", ".join(KERNEL_SCENARIOS)
                + ", predicted from each GPU's record without its measured attributes "
                "(validation.evaluate's spec rows), the largest per-GPU root mean square, "
                "over the committed kit runs " + ", ".join(names)
            ),
        }
    }


def build_table(data_dir: Path = DATA_DIR) -> dict[str, Any]:
    """Return the uncertainty table computed from the committed runs under `data_dir`."""
    runs = committed_runs(data_dir)
    attributes = attribute_spread(runs)
    models = model_residuals(runs)
    records = {
        name: {"attributes": attributes.get(name, {}), "models": models.get(name, {})}
        for name in sorted(set(attributes) | set(models))
    }
    return {
        "description": (
            "Uncertainty of hardware attributes and model outputs, from the committed kit runs "
            f"(validation/data). Written by `{COMMAND}`; do not edit by hand. See "
            "docs/uncertainty.md."
        ),
        "records": records,
        "spec_mode": spec_mode_residuals(runs),
    }


def render(table: dict[str, Any]) -> str:
    """Return the table as the committed file's text."""
    return json.dumps(table, indent=2, sort_keys=True) + "\n"


def main(argv: Sequence[str] | None = None) -> int:
    """Print or write the table; return the exit status."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--write", action="store_true", help=f"write {TABLE_PATH.name}")
    args = parser.parse_args(argv)
    text = render(build_table())
    if args.write:
        TABLE_PATH.write_text(text, encoding="utf-8")
    else:
        sys.stdout.write(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
