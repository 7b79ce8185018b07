"""Prediction intervals by Monte Carlo over the records' uncertain attributes
(simulator.uncertainty): saxpy2 of 000 on the H100 with the current-architecture models and the
measured testbed link, whose spreads the committed table holds."""

from __future__ import annotations

import io
import json
import math
from pathlib import Path
from typing import Any

import pytest

from simulator.cli import main
from simulator.errors import LaunchError
from simulator.models.gpu_current import CurrentGpu, estimate_kernel_current
from simulator.models.volkov import KernelProfile
from simulator.result_metrics import INTERVAL_METRICS, result_metrics
from simulator.runner import run_simulation
from simulator.snapshot import load_snapshot
from simulator.uncertainty import (
    COMMITTED_TABLE,
    MAX_SAMPLES,
    NO_MEASUREMENT,
    SPEED_ATTRIBUTES,
    UncertaintyOptions,
    check_uncertainty,
    from_spec_mode,
    interval,
    propagate,
    uncertain_sources,
    unmeasured,
)
from tests.simulator.test_current_gpu_example import APP, snapshot
from validation.analyze import load_record

LABELS = {"CPU": 1, "GPU": 1}
VARIABLES = {"N": 10**7, "computeIntensity": 4, "memory": "pinned"}


@pytest.fixture(scope="module")
def system(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    path = snapshot(tmp_path_factory.mktemp("h100"))
    return json.loads(path.read_text(encoding="utf-8"))


def _run(system: dict[str, Any], uncertainty: dict[str, Any] | None) -> Any:
    return run_simulation(
        system, APP, labels=LABELS, variables=VARIABLES, seed=3, uncertainty=uncertainty
    )


def _width(result: Any, figure: str = "overall_time_s") -> float:
    ends = result["uncertainty"][figure]
    return float(ends["high"] - ends["low"])


def test_the_same_seed_gives_the_same_interval_and_another_seed_another(
    system: dict[str, Any],
) -> None:
    first = _run(system, {"samples": 12, "seed": 7})["uncertainty"]
    again = _run(system, {"samples": 12, "seed": 7})["uncertainty"]
    other = _run(system, {"samples": 12, "seed": 8})["uncertainty"]
    assert first == again
    assert first["overall_time_s"] != other["overall_time_s"]
    assert (first["samples"], first["seed"], first["cap"]) == (12, 7, MAX_SAMPLES)
    assert first["percentiles"] == [5.0, 95.0]


def test_zero_uncertainty_gives_a_zero_width_interval_at_the_plain_run(
    system: dict[str, Any],
) -> None:
    result = _run(system, {"samples": 5, "scale": 0})
    for figure, plain in (
        ("overall_time_s", result["overall_time_s"]),
        ("energy_j", result["energy_j"]["total"]),
    ):
        ends = result["uncertainty"][figure]
        assert ends["low"] == ends["median"] == ends["high"] == plain


def test_the_interval_widens_with_the_spread_and_holds_the_plain_run(
    system: dict[str, Any],
) -> None:
    narrow = _run(system, {"samples": 40, "seed": 1, "scale": 0.5})
    wide = _run(system, {"samples": 40, "seed": 1, "scale": 2.0})
    assert 0 < _width(narrow) < _width(wide)
    assert 0 < _width(narrow, "energy_j") < _width(wide, "energy_j")
    ends = wide["uncertainty"]["overall_time_s"]
    assert ends["low"] < wide["overall_time_s"] < ends["high"]


def test_a_larger_residual_in_the_table_gives_a_wider_interval(system: dict[str, Any]) -> None:
    loaded = load_snapshot(system)
    record = "H100 SXM5 80GB"
    options = UncertaintyOptions(samples=30, seed=2)

    def table(log_sd: float) -> dict[str, Any]:
        entry = COMMITTED_TABLE["records"][record]["models"]["GPU kernel (current architectures)"]
        return {
            "records": {
                record: {"attributes": {}, "models": {entry_name: {**entry, "log_sd": log_sd}}}
            }
        }

    entry_name = "GPU kernel (current architectures)"

    def simulate(variant: Any) -> tuple[float, float]:
        result = run_simulation(variant, APP, labels=LABELS, variables=VARIABLES, seed=3)
        return result["overall_time_s"], result["energy_j"]["total"]

    small = propagate(simulate, loaded, options, table=table(0.05))
    large = propagate(simulate, loaded, options, table=table(0.3))
    assert [p["name"] for p in large["perturbed"]] == [entry_name]
    width = [t["overall_time_s"]["high"] - t["overall_time_s"]["low"] for t in (small, large)]
    assert 0 < width[0] < width[1]


def test_the_result_lists_each_perturbed_attribute_with_its_source(
    system: dict[str, Any],
) -> None:
    perturbed = _run(system, {"samples": 2})["uncertainty"]["perturbed"]
    by_name = {(p["hardware"], p["name"]): p for p in perturbed}
    efficiency = by_name[("gtx970", "memoryEfficiency")]
    assert efficiency["record"] == "H100 SXM5 80GB"
    assert (
        efficiency["log_sd"]
        == (
            COMMITTED_TABLE["records"]["H100 SXM5 80GB"]["attributes"]["memoryEfficiency"][
                "relative_sd"
            ]
        )
    )
    assert "h100-80gb-hbm3-20261123-091411" in efficiency["source"]
    assert ("pcie3_x16", "lambdaHTD") in by_name
    model = by_name[("gtx970", "GPU kernel (current architectures)")]
    assert model["kind"] == "model"
    assert model["label"].startswith("fitted on the same data")
    assert set(model["attributes"]) <= set(SPEED_ATTRIBUTES)


def test_a_record_the_table_does_not_know_is_not_perturbed() -> None:
    example = Path(__file__).resolve().parents[2] / "examples" / "merpsys_gtx970"
    loaded = load_snapshot(json.loads((example / "snapshot.json").read_text(encoding="utf-8")))
    assert uncertain_sources(loaded, COMMITTED_TABLE) == []


def test_speed_attributes_scaled_together_divide_the_kernel_time_less_its_launch() -> None:
    record = load_record("H100 SXM5 80GB")
    faster = {k: v * 1.25 if k in SPEED_ATTRIBUTES else v for k, v in record.items()}
    profile = KernelProfile(
        cuda_core_instructions=27, issued_instructions=42, gmem_bytes=384, latency_bound=1955
    )

    def time(attributes: dict[str, float], grid: int) -> float:
        gpu = CurrentGpu.from_attributes(attributes)
        estimate = estimate_kernel_current(
            gpu, profile, block_size=256, grid_size=grid, occupancy=64.0
        )
        return float(estimate.time_s) - gpu.launch_overhead_s

    for grid in (100, 39063, 10**6):  # L2-resident, at the DRAM, many waves
        assert time(faster, grid) == pytest.approx(time(record, grid) / 1.25, rel=1e-12)


@pytest.mark.parametrize(
    ("spec", "field", "words"),
    [
        (5, "uncertainty", "Expected an object"),
        ({"samples": 1}, "uncertainty.samples", "from 2 to"),
        ({"samples": True}, "uncertainty.samples", "from 2 to"),
        ({"samples": MAX_SAMPLES + 1}, "uncertainty.samples", f"At most {MAX_SAMPLES} samples"),
        ({"samples": 4, "seed": -1}, "uncertainty.seed", "0 or more"),
        ({"samples": 4, "scale": math.inf}, "uncertainty.scale", "finite"),
        ({"samples": 4, "scale": "1"}, "uncertainty.scale", "finite"),
        ({"samples": 4, "sample": 4}, "uncertainty", "Unknown fields: sample"),
    ],
)
def test_bad_options_are_refused_naming_the_field(spec: object, field: str, words: str) -> None:
    with pytest.raises(LaunchError) as caught:
        check_uncertainty(spec)
    assert caught.value.field == field
    assert words in str(caught.value)


def test_a_run_refuses_bad_options_before_it_simulates(system: dict[str, Any]) -> None:
    with pytest.raises(LaunchError, match=r"uncertainty\.samples"):
        _run(system, {"samples": 10_000})


def test_the_interval_is_the_median_and_the_5th_and_95th_percentiles() -> None:
    values = [float(v) for v in range(1, 22)]  # 21 values: ranks fall on whole positions
    assert interval(values) == {"median": 11.0, "low": 2.0, "high": 20.0}
    assert interval([3.0, 1.0]) == {"median": 2.0, "low": 1.1, "high": 2.9}


def test_sweep_metrics_carry_the_interval_only_when_asked(system: dict[str, Any]) -> None:
    plain = result_metrics(_run(system, None))
    asked = result_metrics(_run(system, {"samples": 3}))
    assert not set(INTERVAL_METRICS) & set(plain)
    assert all(isinstance(asked[name], float) for name in INTERVAL_METRICS)


def test_the_command_line_prints_the_interval(system: dict[str, Any], tmp_path: Path) -> None:
    (tmp_path / "system.json").write_text(json.dumps(system), encoding="utf-8")
    (tmp_path / "app.py").write_text(APP, encoding="utf-8")
    common = [
        "--system", str(tmp_path / "system.json"), "--app", str(tmp_path / "app.py"),
        "--labels", "CPU=1,GPU=1", "--var", "N=10000000", "--var", "computeIntensity=4",
        "--var", "memory=pinned", "--no-sandbox", "--uncertainty", "4",
    ]  # fmt: skip
    stdout, stderr = io.StringIO(), io.StringIO()
    assert main(["run", *common, "--uncertainty-seed", "9"], stdout=stdout, stderr=stderr) == 0, (
        stderr.getvalue()
    )
    text = stdout.getvalue()
    assert "Interval:     time median" in text
    assert "(4 samples, seed 9, scale 1;" in text
    stdout = io.StringIO()
    assert main(["sweep", *common, "--jobs", "1"], stdout=stdout, stderr=stderr) == 0, (
        stderr.getvalue()
    )
    assert "overall_time_s_low" in stdout.getvalue().splitlines()[0]


def test_a_gpu_never_measured_takes_the_model_s_spec_mode_error_labelled_as_such(
    system: dict[str, Any],
) -> None:
    loaded = load_snapshot(system)
    key = next(k for k, h in loaded.hardware.items() if h.name == "H100 SXM5 80GB")
    name = "GPU kernel (current architectures)"
    spec = COMMITTED_TABLE["spec_mode"][name]
    # the same snapshot with the measured GPU's record renamed: a GPU the kit never measured
    renamed = {**system, "hardware": {**system["hardware"]}}
    renamed["hardware"][key] = {**system["hardware"][key], "name": "Unmeasured GPU"}
    unknown = load_snapshot(renamed)
    sources = [s for s in uncertain_sources(unknown, COMMITTED_TABLE) if s.hardware == key]
    label = f"{spec['label']}, not a Unmeasured GPU measurement"
    assert [(s.kind, s.name, s.log_sd, s.label) for s in sources] == [
        ("spec_mode", name, spec["log_sd"], label)
    ]
    assert set(sources[0].attributes) <= set(SPEED_ATTRIBUTES)
    options = UncertaintyOptions(samples=12, seed=1)

    def simulate(variant: Any) -> tuple[float, float]:
        result = run_simulation(variant, APP, labels=LABELS, variables=VARIABLES, seed=3)
        return result["overall_time_s"], result["energy_j"]["total"]

    result = propagate(simulate, unknown, options)
    assert result["unmeasured"] == []
    assert result["from_spec_mode"] == [{"record": "Unmeasured GPU", "label": label}]
    assert result["overall_time_s"]["high"] > result["overall_time_s"]["low"]
    # without a spec-mode error for its model, the GPU has no interval and says why
    bare = propagate(simulate, unknown, options, table={"records": COMMITTED_TABLE["records"]})
    assert bare["from_spec_mode"] == []
    assert bare["unmeasured"] == [{"record": "Unmeasured GPU", "label": NO_MEASUREMENT}]
    assert all(p["record"] != "Unmeasured GPU" for p in bare["perturbed"])  # the link's only


def test_the_spec_mode_error_is_at_least_each_measured_gpu_s_model_residual() -> None:
    name = "GPU kernel (current architectures)"
    spec = COMMITTED_TABLE["spec_mode"][name]
    assert spec["gpus"] == sorted(spec["per_gpu"]) and len(spec["gpus"]) >= 2
    assert spec["log_sd"] == max(spec["per_gpu"].values())
    for gpu in spec["gpus"]:
        assert spec["log_sd"] >= COMMITTED_TABLE["records"][gpu]["models"][name]["log_sd"]


def test_a_gpu_whose_model_has_no_spec_mode_error_has_no_interval() -> None:
    example = Path(__file__).resolve().parents[2] / "examples" / "merpsys_gtx970"
    loaded = load_snapshot(json.loads((example / "snapshot.json").read_text(encoding="utf-8")))
    gpus = [h.name for h in loaded.hardware.values() if h.type == "GPU"]
    assert from_spec_mode(loaded, COMMITTED_TABLE) == []
    assert unmeasured(loaded, COMMITTED_TABLE) == [
        {"record": name, "label": NO_MEASUREMENT} for name in gpus
    ]
