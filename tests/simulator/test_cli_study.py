"""Tests of `python -m simulator study`: a search over the MERPSYS saxpy2 example whose
trials are the runs a sweep makes of the same points, and its refusals."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest

from simulator.cli import main

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "merpsys_gtx970"
LAUNCH = [
    "--system",
    str(EXAMPLE / "snapshot.json"),
    "--app",
    str(EXAMPLE / "app.py"),
    "--labels",
    "CPU=1,GPU=1",
    "--var",
    "N=1000000",
    "--var",
    "occupancy=64",
    "--no-sandbox",
]


def cli(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    status = main(list(argv), stdout=out, stderr=err)
    return status, out.getvalue(), err.getvalue()


def test_a_study_s_trials_are_the_runs_a_sweep_makes_of_their_points() -> None:
    status, out, err = cli(
        "study",
        *LAUNCH,
        "--var",
        "blockSz=64,256,1024",
        "--var",
        "computeIntensity=1:64:1",
        "--axis",
        "gpu0.SMCoreClock=900:1500:100",
        "--objective",
        "overall_time_s",
        "--trials",
        "8",
        "--parallel",
        "2",
        "--study-seed",
        "5",
        "--json",
        "-",
    )
    assert status == 0, err
    study = json.loads(out)
    trials = study["trials"]
    assert len(trials) == 8 and {t["state"] for t in trials} == {"complete"}
    times = [t["metrics"]["overall_time_s"] for t in trials]
    (best,) = study["best"]
    assert times[best] == min(times)
    point = trials[best]["point"]
    status, out, err = cli(
        "sweep",
        *LAUNCH,
        "--var",
        f"blockSz={point['blockSz']}",
        "--var",
        f"computeIntensity={point['computeIntensity']}",
        "--axis",
        f"gpu0.SMCoreClock={point['gpu0.SMCoreClock']}",
        "--json",
        "-",
    )
    assert status == 0, err
    (run,) = json.loads(out)["runs"]
    assert run["result"]["overall_time_s"] == times[best]


def test_a_study_prints_one_row_per_trial_with_the_best_marked() -> None:
    status, out, err = cli(
        "study",
        *LAUNCH,
        "--var",
        "blockSz=64,1024",
        "--var",
        "computeIntensity=1,64",
        "--trials",
        "3",
    )
    assert status == 0, err
    lines = out.strip().splitlines()
    assert lines[0].split() == [
        "trial",
        "N",
        "occupancy",
        "blockSz",
        "computeIntensity",
        "overall_time_s",
        "state",
        "best",
    ]
    assert len(lines) == 4 and any(line.rstrip().endswith("*") for line in lines[1:])


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (
            ["--var", "blockSz=64,128", "--axis", "gpu0.nothing=1,2"],
            "error: --axis gpu0.nothing: 'GeForce GTX 970' (node 'gpu0') has no attribute "
            "'nothing'",
        ),
        (
            ["--var", "blockSz=64,128", "--objective", "speed"],
            "error: --objective[0].metric: Unknown metric 'speed'",
        ),
        (
            ["--var", "blockSz=64,128", "--constraint", "power_w < a lot"],
            "error: --constraint[0]: Expected",
        ),
        (["--var", "blockSz=64"], "error: --var/--axis: A study needs at least one axis"),
        (["--var", "blockSz=64:32:1"], "error: --var blockSz.stop: In the range, the stop:"),
    ],
)
def test_a_bad_study_is_refused_naming_the_option(argv: list[str], message: str) -> None:
    status, _, err = cli("study", *LAUNCH, "--var", "computeIntensity=1", *argv, "--trials", "2")
    assert status == 2
    assert err.startswith(message), err


def test_a_study_chooses_among_hardware_records_as_a_sweep_swaps_them(tmp_path: Path) -> None:
    snapshot = json.loads((EXAMPLE / "snapshot.json").read_text())
    faster = dict(snapshot["hardware"]["gtx970"], name="Faster GTX")
    faster["attributes"] = dict(faster["attributes"], SMCoreClock=2506.0)
    files = {}
    for name, record in (("gtx970", snapshot["hardware"]["gtx970"]), ("faster", faster)):
        files[name] = tmp_path / f"{name}.json"
        files[name].write_text(json.dumps(record))
    choices = f"gpu0={files['gtx970']},{files['faster']}"
    axes = ["--var", "blockSz=256", "--var", "computeIntensity=32:64:8", "--hardware", choices]
    status, out, err = cli("study", *LAUNCH, *axes, "--trials", "6", "--json", "-")
    assert status == 0, err
    trials = json.loads(out)["trials"]
    assert {t["point"]["hardware:gpu0"] for t in trials} <= {str(p) for p in files.values()}
    status, out, err = cli("sweep", *LAUNCH, *axes, "--json", "-")
    assert status == 0, err
    swept = {
        (run["hardware"]["gpu0"], run["variables"]["computeIntensity"]): run["result"]
        for run in json.loads(out)["runs"]
    }
    for trial in trials:  # each trial is the sweep's run of its point
        point = trial["point"]
        result = swept[(point["hardware:gpu0"], point["computeIntensity"])]
        assert trial["metrics"]["overall_time_s"] == result["overall_time_s"]


@pytest.mark.parametrize("as_url", [True, False])
def test_a_study_kept_in_a_storage_goes_on_after_a_restart_asking_no_point_twice(
    tmp_path: Path, as_url: bool
) -> None:
    database = tmp_path / "study.db"
    storage = f"sqlite:///{database}" if as_url else str(database)
    argv = [
        "study",
        *LAUNCH,
        "--var",
        "blockSz=64,128,256,512,1024",
        "--var",
        "computeIntensity=1:64:1",
        "--sampler",
        "random",
        "--trials",
        "5",
        "--storage",
        storage,
        "--study-name",
        "saxpy",
        "--json",
        "-",
    ]
    status, out, err = cli(*argv)
    assert status == 0, err
    first = json.loads(out)["trials"]
    assert [t["number"] for t in first] == [0, 1, 2, 3, 4]
    # A second process (as after a restart) with the same storage and study name.
    status, out, err = cli(*argv)
    assert status == 0, err
    trials = json.loads(out)["trials"]
    assert [t["number"] for t in trials] == list(range(10))
    # The first five as stored (their metrics, wall time included, as told then).
    assert [(t["point"], t["metrics"]) for t in trials[:5]] == [
        (t["point"], t["metrics"]) for t in first
    ]
    assert {t["state"] for t in trials} == {"complete"}
    points = [tuple(sorted(t["point"].items())) for t in trials]
    assert len(set(points)) == 10
    # Another name in the same storage is another study.
    status, out, err = cli(*argv[: argv.index("--study-name") + 1], "other", "--json", "-")
    assert status == 0, err
    assert len(json.loads(out)["trials"]) == 5
