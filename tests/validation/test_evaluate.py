"""The committed GPU measurements are test vectors (issue 11 item 4): every scenario's error of
the current-architecture models, out of sample, stays within the issue's thresholds; the paper
models keep their (large) errors on the same data; the fitted parameters are what the fit run
gives; a regressed model is caught."""

from __future__ import annotations

import json
import math
import re
import subprocess
import sys
from pathlib import Path

import pytest

from simulator.analyzer.latency import latency_table
from simulator.models import gpu_current
from simulator.models.gpu_current import CurrentGpu
from validation import evaluate as ev
from validation.analyze import SEED_PATH, load_record

REPO_ROOT = Path(__file__).resolve().parents[2]
RUNS = ev.committed_runs()
H100_JUDGED = [r for r in RUNS if r.record_name.startswith("H100") and r.role == "judge"]
FIT_RUN = next(r for r in RUNS if r.role == "fit")


@pytest.fixture(scope="module")
def h100_results() -> list[ev.RunErrors]:
    return [ev.evaluate_run(run) for run in H100_JUDGED]


def test_the_data_hold_two_h100_runs_out_of_sample_and_h200_runs():
    assert FIT_RUN.record_name == "H100 SXM5 80GB"
    assert len(H100_JUDGED) >= 2
    assert len([r for r in RUNS if r.record_name.startswith("H200")]) >= 2
    for run in RUNS:  # each run says where it was measured and how
        meta = json.loads((run.path / "run.json").read_text(encoding="utf-8"))
        assert meta["machine"] and meta["command"].startswith("ARCHS=90 validation/run_all.sh")


@pytest.mark.parametrize("scenario", ev.SCENARIOS)
def test_the_current_models_meet_the_threshold_on_every_out_of_sample_h100_run(
    h100_results, scenario
):
    for result in h100_results:
        assert result.current[scenario] <= ev.THRESHOLDS[scenario], (result.run, scenario)


def test_every_judged_miss_is_declared_with_its_reason_and_every_declared_one_misses():
    """issue 42: no exemption. Every judged run (H100 and H200, from the record and from the
    spec sheet) meets every threshold of issue 11, or the miss is declared, with its reason, in
    validation/data/known_misses.json, which the report prints; a declared miss that holds
    again fails too, so that the list says what the data say."""
    results = []
    for run in RUNS:
        results.append(ev.evaluate_run(run))
        if run.record_name.startswith("H200"):
            results.append(ev.evaluate_run(run, spec_only=True))
    declared = ev.load_known_misses()
    assert all(m["reason"] and m["mode"] in ("record", "spec") for m in declared)
    actual = ev.threshold_misses(results)
    assert actual == ev.declared_misses(declared), (
        "undeclared misses: "
        + repr(sorted(actual - ev.declared_misses(declared)))
        + "; declared but holding: "
        + repr(sorted(ev.declared_misses(declared) - actual))
    )
    # the judged runs are most of the data: both GPUs, both modes
    assert {r.run for r in results if r.role == "judge"} >= {r.name for r in H100_JUDGED}


def test_an_undeclared_miss_is_found():
    run = next(r for r in RUNS if r.record_name.startswith("H200") and r.role == "judge")
    slow = {**load_record(run.record_name), "memoryEfficiency": 0.3}
    result = ev.evaluate_run(run, gpu_record=slow)
    assert (run.name, "record", "large_n") in ev.threshold_misses([result])


def test_the_paper_models_are_still_far_off_on_the_same_runs(h100_results):
    # what the issue reported (docs/validation): the paper models miss by 20-90 % here
    for result in h100_results:
        assert result.paper["occupancy"] > 0.25
        assert result.paper["application"] > 0.7
        assert result.paper["energy_003"] > 0.5


def test_a_regressed_kernel_model_fails_the_thresholds(h100_results):
    # Volkov's hard min() in place of the fitted smooth transition
    hard_min = ev.evaluate_run(H100_JUDGED[0], exponent=math.inf)
    for scenario in ("intensity", "large_n", "time_003"):
        assert hard_min.current[scenario] > ev.THRESHOLDS[scenario], scenario
    # the theoretical HBM bandwidth of (4.5) in place of the measured efficiency
    record = {**load_record(H100_JUDGED[0].record_name), "memoryEfficiency": 1.0}
    peak = ev.evaluate_run(H100_JUDGED[0], gpu_record=record)
    assert peak.current["large_n"] > ev.THRESHOLDS["large_n"]


def test_the_committed_fit_is_what_the_fit_run_gives():
    fit = ev.compute_fit(FIT_RUN)
    hopper = latency_table("sm_90")
    assert hopper.memory["global"] == fit.global_latency
    assert hopper.branch_taken == fit.branch_taken
    assert hopper.block_replacement == fit.block_replacement
    assert fit.exponent == gpu_current.TRANSITION_EXPONENT
    assert ev.fitted_validation_parameters()["saxpy2_energy_block_energy_j"] == pytest.approx(
        fit.block_energy_j, rel=1e-5
    )


def test_the_h100_record_carries_the_profile_of_its_runs():
    # the seed's measured attributes are what validation.profile gives for the named runs
    from validation.profile import kernel_measurements, power_measurements, wake_measurements

    record = load_record("H100 SXM5 80GB")
    measured = kernel_measurements(FIT_RUN.path) + power_measurements(FIT_RUN.path)
    wake_run = next(r for r in RUNS if r.record_name.startswith("H100") and "093046" in r.name)
    measured += wake_measurements(wake_run.path)
    for m in measured:
        assert record[m.key] == pytest.approx(m.value, rel=1e-3), m.key
    gpu = CurrentGpu.from_attributes(record)
    assert gpu.memory_efficiency == pytest.approx(0.82, abs=0.01)


def test_evaluate_prints_every_scenario_as_json_for_one_run_and_for_all():
    command = [sys.executable, "-m", "validation.evaluate", "--json"]
    one = subprocess.run(
        [*command, str(H100_JUDGED[0].path)], cwd=REPO_ROOT, capture_output=True, text=True
    )
    assert one.returncode == 0, one.stderr
    data = json.loads(one.stdout)
    # the scenarios, and the application with pageable copies reported apart (the host's)
    assert set(data) == {*ev.SCENARIOS, "application_pageable"}
    assert set(data.pop("application_pageable")) == {"current"}
    assert all(set(v) == {"paper", "current"} for v in data.values())
    assert data["occupancy"]["current"] < data["occupancy"]["paper"]
    every = subprocess.run(command, cwd=REPO_ROOT, capture_output=True, text=True)
    assert every.returncode == 0, every.stderr
    assert set(json.loads(every.stdout)) == {*ev.SCENARIOS, "application_pageable"}


def test_the_report_is_generated_from_the_data(tmp_path):
    committed = (REPO_ROOT / "docs" / "validation" / "accuracy.md").read_text(encoding="utf-8")
    ev.main(["--report", str(tmp_path / "accuracy.md")])
    assert (tmp_path / "accuracy.md").read_text(encoding="utf-8") == committed


def test_the_paper_models_reproduce_the_first_h100_reports_figures():
    # the 2026-11-22 run's means, recomputed: docs/validation/h100-2026-11-22.md, run 1
    earlier = next(r for r in RUNS if r.role == "earlier")
    paper = ev.evaluate_run(earlier).paper
    published = {
        "intensity": 0.226,
        "occupancy": 0.330,
        "large_n": 0.357,
        "small_n": 0.831,
        "application": 0.874,
    }
    for scenario, value in published.items():
        assert paper[scenario] == pytest.approx(value, abs=0.0006), scenario


@pytest.mark.parametrize(
    ("run", "report"),
    [
        ("h100-80gb-hbm3-20261123-091411", "h100-80gb-hbm3.md"),
        ("h200-20261123-091741", "h200.md"),
    ],
)
def test_the_per_gpu_reports_are_generated_from_the_data(tmp_path, run, report):
    from validation import analyze

    out = tmp_path / report
    analyze.main(["--run", str(ev.DATA_DIR / run), "--report", str(out)])
    committed = REPO_ROOT / "docs" / "validation" / report
    assert out.read_text(encoding="utf-8") == committed.read_text(encoding="utf-8")


def test_a_second_kernel_the_stream_saxpy_is_predicted_without_fitting(h100_results):
    # nothing is fitted on it; the guard is its present accuracy with some room
    for result in h100_results:
        assert result.stream["cold"] <= 0.12, result.run
        assert result.stream["warm"] <= 0.12, result.run


def test_the_commands_name_what_is_wrong_with_a_folder(tmp_path, capsys):
    from validation import profile

    assert ev.main(["--json", str(tmp_path)]) == 2
    assert "is not a run folder" in capsys.readouterr().err
    assert profile.main([str(tmp_path), "--name", "x"]) == 2
    assert "no profile.csv in the run folder" in capsys.readouterr().err


def test_profile_refuses_a_base_record_whose_bus_is_not_the_runs(tmp_path):
    # memoryEfficiency is measured against the run's Eq. 4.5 peak; a base record with another
    # bus width would get an efficiency that overstates (or understates) its bandwidth
    from validation import profile

    seed = json.loads(SEED_PATH.read_text(encoding="utf-8"))
    for component in seed["components"]:
        if component["name"] == "H200 SXM 141GB":
            for attribute in component["attributes"]:
                if attribute["key"] == "busWidth":
                    attribute["value"] = 6144
    path = tmp_path / "hardware.json"
    path.write_text(json.dumps(seed), encoding="utf-8")
    run = ev.DATA_DIR / "h200-20261123-091741"
    with pytest.raises(ValueError, match=re.escape("busWidth 6144 but the run's device.json 6016")):
        profile.records(run, base="H200 SXM 141GB", name="x", link_name="y", seed_path=path)
    made = profile.records(run, base="H200 SXM 141GB", name="x", link_name="y")
    keys = {a["key"]: a["value"] for a in made["components"][0]["attributes"]}
    assert keys["busWidth"] == 6016


# Issue 45: the energy of a whole application run. The committed runs hold none (their power
# log resolves only windows of >= 2 s, and only the kernel scenario "energy" had windows).
def test_the_committed_runs_hold_no_whole_application_energy():
    assert all(ev.application_energy(run) == [] for run in RUNS)


def test_a_run_with_application_windows_gives_predicted_and_measured_energy(tmp_path):
    import shutil
    from datetime import UTC, datetime

    source = next(r for r in H100_JUDGED).path
    folder = tmp_path / source.name
    shutil.copytree(source, folder)
    # two windows of 3 s of back-to-back applications at a steady 150 W, after the log's end
    power = (folder / "power.csv").read_text(encoding="utf-8").splitlines()
    last = datetime.strptime(power[-1].split(",")[0], "%Y/%m/%d %H:%M:%S.%f").replace(tzinfo=UTC)
    start = last.timestamp() + 10
    lines = []
    for k in range(int(8 / 0.05)):
        stamp = datetime.fromtimestamp(start + 0.05 * k, UTC).strftime("%Y/%m/%d %H:%M:%S.%f")
        lines.append(f"{stamp[:-3]}, 150.00, 1980, 2619, 40, 50")
    (folder / "power.csv").write_text("\n".join([*power, *lines]) + "\n", encoding="utf-8")
    rows = []
    for rep, (s0, repeats) in enumerate([(start + 0.5, 250), (start + 4.5, 250)]):
        rows.append(
            f"app-energy,{rep},10000000,256,39063,1,0,8,8,64,4.6e-03,4.6e-03,7.2e-05,3.1e-03,"
            f"1.23e-02,{repeats},1.2e-02,{s0:.6f},{s0 + 3:.6f}"
        )
    with (folder / "measurements.csv").open("a", encoding="utf-8") as handle:
        handle.write("\n".join(rows) + "\n")

    run = ev.Run.load(folder)
    record = load_record(run.record_name)
    (found,) = ev.application_energy(run, record)
    assert (found.n, found.windows) == (10_000_000, 2)
    assert found.measured_j == pytest.approx(150.0 * 3 / 250)
    # W.1 with the record's kit-measured active idle (119.6 W) and its 700 W load
    expected = 119.6 * found.predicted_s + (700.0 - 119.6) * found.kernel_s
    assert found.predicted_j == pytest.approx(expected)
    assert 0 < found.kernel_s < found.predicted_s
    notes = ev.evaluate_run(run).notes
    assert any(note.startswith("application energy (whole run") for note in notes)


def test_the_spec_rows_read_no_measured_attribute_of_the_gpu_the_wake_included():
    """issue 42: the "(spec)" rows predict from the spec sheet plus the architecture profile;
    a record whose clock-wake penalty is absurd changes the record rows, not the spec rows."""
    run = next(r for r in RUNS if r.record_name.startswith("H200") and r.role == "judge")
    record = load_record(run.record_name)
    absurd = {**record, "clockWakePenalty": 1e-3, "clockWakeTimeConstant": 1e-3}
    spec = ev.evaluate_run(run, spec_only=True, gpu_record=record).current
    assert ev.evaluate_run(run, spec_only=True, gpu_record=absurd).current == spec
    as_recorded = ev.evaluate_run(run, gpu_record=record).current["application"]
    assert ev.evaluate_run(run, gpu_record=absurd).current["application"] != as_recorded
