"""Zoo runs scored against the frozen predictions, per kernel class and per run (issue 42 item 4).

A run folder (validation/zoo/run.sh's output; committed ones under validation/data/zoo/) holds
zoo.csv and run.json. A configuration's measured time is the mean over passes of each pass's
median window; its repeat-run noise floor is the spread of the pass medians, (max - min) / mean.
A run is "prospective" when it started after the predictions were made and the model files
still hash as they did then (predictions.json's created_utc and model_hash): the predictions
could not have seen it.
"""

from __future__ import annotations

import csv
import json
from collections import defaultdict
from collections.abc import Sequence
from datetime import datetime
from pathlib import Path
from typing import Any

from validation.zoo import predict

ZOO_DATA = predict.REPO_ROOT / "validation" / "data" / "zoo"
CLASSES = (
    "gemm_tensor",
    "ffma_ilp",
    "fp64",
    "smem_transpose",
    "stencil",
    "reduction_atomic",
    "histogram",
    "spmv",
    "softmax",
    "saxpy2",
    "stream",
)
# issue 42, "Done when": every class within 15 % on the H100 (its record), GEMM and the
# streaming kernels within 10 %; the H200 from its spec record within 15 % per class
THRESHOLDS = {"gemm_tensor": 0.10, "saxpy2": 0.10, "stream": 0.10}
DEFAULT_THRESHOLD = 0.15
JUDGED_MODE = {"H100 SXM5 80GB": "record", "H200 SXM 141GB": "spec"}
# the GPU's record in the predictions, by what nvidia-smi calls it
GPU_RECORDS = {"H100": "H100 SXM5 80GB", "H200": "H200 SXM 141GB"}
SCORE_ERRORS = {
    "not_a_run": "{path} is not a zoo run folder (no zoo.csv and run.json)",
    "unknown_gpu": "{path}/run.json: GPU {gpu!r} has no predictions (known: {known})",
    "bad_row": "{path} line {line}: {problem}",
}


def _utc(text: str) -> datetime:
    return datetime.fromisoformat(text.replace("Z", "+00:00"))


def read_run(path: Path) -> tuple[dict[str, Any], dict[str, dict[int, list[float]]]]:
    """Return run.json and {class/kernel/config: {pass: [per-launch seconds]}}."""
    if not (path / "zoo.csv").is_file() or not (path / "run.json").is_file():
        raise ValueError(SCORE_ERRORS["not_a_run"].format(path=path))
    meta = json.loads((path / "run.json").read_text(encoding="utf-8"))
    times: dict[str, dict[int, list[float]]] = defaultdict(lambda: defaultdict(list))
    with (path / "zoo.csv").open(encoding="utf-8") as handle:
        for line, row in enumerate(csv.DictReader(handle), start=2):
            try:
                value = float(row["kernel_s"])
                pass_ = int(row["pass"])
            except (KeyError, TypeError, ValueError) as error:
                raise ValueError(
                    SCORE_ERRORS["bad_row"].format(path=path / "zoo.csv", line=line, problem=error)
                ) from error
            if not value > 0:
                raise ValueError(
                    SCORE_ERRORS["bad_row"].format(
                        path=path / "zoo.csv",
                        line=line,
                        problem=f"kernel_s {row['kernel_s']} is not positive",
                    )
                )
            times[f"{row['class']}/{row['kernel']}/{row['config']}"][pass_].append(value)
    return meta, times


def _median(values: Sequence[float]) -> float:
    ordered = sorted(values)
    mid = len(ordered) // 2
    return ordered[mid] if len(ordered) % 2 else (ordered[mid - 1] + ordered[mid]) / 2


def score_run(path: Path, predictions: dict[str, Any] | None = None) -> dict[str, Any]:
    """Return one run's mean absolute percentage error per class for the record and spec
    predictions, the classes' repeat-run noise floor, and whether the run is prospective."""
    document = predictions or json.loads(predict.PREDICTIONS.read_text(encoding="utf-8"))
    meta, times = read_run(path)
    gpu = next(
        (record for key, record in GPU_RECORDS.items() if key in str(meta.get("gpu", ""))), None
    )
    if gpu is None:
        raise ValueError(
            SCORE_ERRORS["unknown_gpu"].format(
                path=path, gpu=meta.get("gpu"), known=", ".join(GPU_RECORDS)
            )
        )
    after = _utc(meta["started_utc"]) > _utc(document["created_utc"])
    unchanged = document["model_hash"] == predict.model_hash()
    per_class: dict[str, dict[str, list[float]]] = defaultdict(lambda: defaultdict(list))
    unpredicted = []
    for key, passes in sorted(times.items()):
        entry = document["predictions"].get(key)
        if entry is None:
            unpredicted.append(key)
            continue
        medians = [_median(v) for v in passes.values()]
        measured = sum(medians) / len(medians)
        cls = entry["class"]
        per_class[cls]["noise"].append((max(medians) - min(medians)) / measured)
        for mode in ("record", "spec"):
            predicted = entry["time_s"][f"{gpu} ({mode})"]
            per_class[cls][mode].append(abs(predicted - measured) / measured)
    mode = JUDGED_MODE[gpu]
    classes: dict[str, dict[str, Any]] = {}
    for cls, values in per_class.items():
        threshold = (
            THRESHOLDS.get(cls, DEFAULT_THRESHOLD) if mode == "record" else DEFAULT_THRESHOLD
        )
        mape = {m: sum(values[m]) / len(values[m]) for m in ("record", "spec")}
        classes[cls] = {
            "configurations": len(values["noise"]),
            "mape_record": mape["record"],
            "mape_spec": mape["spec"],
            "noise_floor": sum(values["noise"]) / len(values["noise"]),
            "judged": mode,
            "threshold": threshold,
            "within": mape[mode] <= threshold,
        }
    return {
        "run": path.name,
        "gpu": gpu,
        "prospective": after and unchanged,
        "why": (
            "measured after the predictions, model unchanged"
            if after and unchanged
            else (
                "measured before the predictions were made"
                if not after
                else "the model changed since"
            )
        ),
        "classes": {cls: classes[cls] for cls in CLASSES if cls in classes},
        "unpredicted": unpredicted,
    }


def committed_zoo_runs(data_dir: Path = ZOO_DATA) -> list[Path]:
    """Return the committed zoo run folders."""
    if not data_dir.is_dir():
        return []
    return [p for p in sorted(data_dir.iterdir()) if (p / "run.json").is_file()]


def evaluate_runs(paths: Sequence[Path]) -> list[dict[str, Any]]:
    """Return every run's scores, prospective runs first."""
    scores = [score_run(p) for p in paths]
    return sorted(scores, key=lambda s: (not s["prospective"], s["run"]))
