"""A GPU node in the detailed kernel mode: chosen in the snapshot, run through the runner,
the sandbox and the CLI, with its figures in the timeline."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest

from simulator.errors import ModelEvaluationError, SnapshotError
from simulator.runner import run_simulation
from simulator.sandbox import run_sandboxed
from simulator.sandbox.preparation import modules_needed
from simulator.snapshot import load_snapshot

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "examples" / "merpsys_gtx970"
APP = (EXAMPLE / "app.py").read_text()
VARIABLES = {"N": 10**7, "blockSz": 256, "computeIntensity": 1, "occupancy": 64}
LABELS = {"CPU": 1, "GPU": 1}


def snapshot(**gpu_fields: Any) -> dict[str, Any]:
    data = json.loads((EXAMPLE / "snapshot.json").read_text())
    for node in data["nodes"]:
        if node["id"] == "gpu0":
            node.update(gpu_fields)
    return data


def kernel_entries(result: dict[str, Any]) -> list[dict[str, Any]]:
    return [entry for entry in result["timeline"] if entry["kind"] == "compute"]


def test_the_example_in_the_detailed_mode_keeps_the_papers_kernel_time_within_the_tolerance() -> (
    None
):
    analytic = run_simulation(snapshot(), APP, labels=LABELS, variables=VARIABLES)
    detailed = run_simulation(
        snapshot(kernelMode="detailed"), APP, labels=LABELS, variables=VARIABLES
    )
    (kernel,) = kernel_entries(detailed)
    (formula,) = kernel_entries(analytic)
    detail = kernel["detail"]
    assert detail["mode"] == "detailed"
    assert detail["analyticTime"] == pytest.approx(formula["end_s"] - formula["start_s"], rel=1e-12)
    assert kernel["end_s"] - kernel["start_s"] == pytest.approx(detail["analyticTime"], rel=0.03)
    assert detail["bound"] == "global_memory"
    assert (detail["residentBlocks"], detail["blocksPerWave"], detail["waves"]) == (8, 104, 376)
    assert detail["tailBlocks"] == 39063 % 104
    assert sum(detail["smBlocks"]) == 39063 and len(detail["smBusy"]) == 13
    # The transfers are the paper's; only the kernel term moved.
    assert detailed["overall_time_s"] - analytic["overall_time_s"] == pytest.approx(
        (kernel["end_s"] - kernel["start_s"]) - detail["analyticTime"], abs=1e-12
    )


def test_more_kernel_workers_change_nothing_but_the_workers_count() -> None:
    # A tenth of the example's elements: 38 waves with a partial last one, every SM in use,
    # which is what the split over workers (by SM) has to get right.
    variables = {**VARIABLES, "N": 10**6}
    one = run_simulation(snapshot(kernelMode="detailed"), APP, labels=LABELS, variables=variables)
    two = run_simulation(
        snapshot(kernelMode="detailed", kernelWorkers=2), APP, labels=LABELS, variables=variables
    )
    (first,) = kernel_entries(one)
    (second,) = kernel_entries(two)
    assert second["detail"].pop("workers") == 2 and first["detail"].pop("workers") == 1
    assert first == second
    assert (first["detail"]["waves"], first["detail"]["tailBlocks"]) == (38, 3907 % 104)
    assert one["overall_time_s"] == two["overall_time_s"]


def test_the_detailed_mode_runs_in_the_sandbox_with_worker_processes() -> None:
    payload = {
        "snapshot": snapshot(kernelMode="detailed", kernelWorkers=2),
        "app_source": APP,
        "labels": LABELS,
        "variables": {**VARIABLES, "N": 10**6},
    }
    result = run_sandboxed(payload)
    (kernel,) = kernel_entries(result)
    assert kernel["detail"]["workers"] == 2
    assert kernel["detail"]["waves"] == 38


def test_the_sandbox_preloads_the_detailed_mode_only_when_a_node_uses_it() -> None:
    assert modules_needed({"snapshot": snapshot()}) == ()
    assert "simulator.models.gpu_detailed" in modules_needed(
        {"snapshot": snapshot(kernelMode="detailed")}
    )


@pytest.mark.parametrize(
    ("variables", "message"),
    [
        ({"occupancy": 4}, "occupancy (4 warps/SM) is less than one block (8 warps)"),
    ],
)
def test_launches_the_detailed_mode_cannot_place_are_refused_with_the_reason(
    variables: dict[str, object], message: str
) -> None:
    with pytest.raises(
        ModelEvaluationError, match=message.replace("(", r"\(").replace(")", r"\)")
    ) as caught:
        run_simulation(
            snapshot(kernelMode="detailed"),
            APP,
            labels=LABELS,
            variables={**VARIABLES, **variables},
        )
    assert caught.value.model == "detailed kernel mode"
    assert caught.value.function == "computationTime"


DETAILED_APP = """
sim.computation({"CUDACoreInstructions": 27, "issuedInstructions": 27, "GMEMBytesTransferred": 384,
                 "latencyBound": 966, "gridSize": grid, "blockSize": 256, "occupancy": 64,
                 **extra})
"""


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        ({"segmentsPerWarp": 0}, "segmentsPerWarp must be a whole number from 1 to 10000"),
        ({"segmentsPerWarp": 2.5}, "segmentsPerWarp must be a whole number"),
        ({"blockWork": []}, "blockWork must be a list of at most"),
        ({"blockWork": [1, "x"]}, "blockWork must be a list of at most"),
        ({"blockWorkSpread": 1.5}, "blockWorkSpread must be a number in [0, 1)"),
        ({"blockLaunchCycles": -1}, "blockLaunchCycles must be a non-negative number of cycles"),
    ],
)
def test_bad_detailed_parameters_are_named(extra: dict[str, object], message: str) -> None:
    app = "extra = " + repr(extra) + "\n" + DETAILED_APP
    with pytest.raises(ModelEvaluationError) as caught:
        run_simulation(
            snapshot(kernelMode="detailed"), app, labels={"GPU": 1}, variables={"grid": 100}
        )
    assert message in str(caught.value)


def test_block_work_is_a_launch_parameter() -> None:
    app = "extra = {'blockWork': [1] * 99 + [40]}\n" + DETAILED_APP
    even = run_simulation(
        snapshot(kernelMode="detailed"),
        "extra = {}\n" + DETAILED_APP,
        labels={"GPU": 1},
        variables={"grid": 100},
    )
    skewed = run_simulation(
        snapshot(kernelMode="detailed"), app, labels={"GPU": 1}, variables={"grid": 100}
    )
    assert skewed["overall_time_s"] > 3 * even["overall_time_s"]
    assert kernel_entries(skewed)[0]["detail"]["smImbalance"] > 1.5


@pytest.mark.parametrize(
    ("fields", "path", "message"),
    [
        (
            {"kernelMode": "cycle"},
            "nodes[3].kernelMode",
            "Unknown kernel mode 'cycle'; expected one of analytic, detailed, petri, waves.",
        ),
        ({"kernelWorkers": 0}, "nodes[3].kernelWorkers", "Expected a whole number from 1 to 256."),
        (
            {"kernelWorkers": True},
            "nodes[3].kernelWorkers",
            "Expected a whole number from 1 to 256.",
        ),
    ],
)
def test_bad_kernel_modes_are_named_in_the_snapshot(
    fields: dict[str, object], path: str, message: str
) -> None:
    with pytest.raises(SnapshotError) as caught:
        load_snapshot(snapshot(**fields))
    assert caught.value.errors[path] == [message]


def test_only_a_gpu_simulates_kernels_block_by_block() -> None:
    data = snapshot()
    data["nodes"][1]["kernelMode"] = "detailed"  # the host CPU
    with pytest.raises(SnapshotError) as caught:
        load_snapshot(data)
    assert caught.value.errors["nodes[1].kernelMode"] == [
        "The detailed kernel mode simulates GPU kernels; 'CPU' is not a GPU."
    ]
    group = copy.deepcopy(snapshot())
    group["nodes"][0]["kernelMode"] = "detailed"
    with pytest.raises(SnapshotError) as caught:
        load_snapshot(group)
    assert "nodes[0].kernelMode" in caught.value.errors


def test_the_kernel_mode_survives_a_snapshot_round_trip() -> None:
    system = load_snapshot(snapshot(kernelMode="detailed", kernelWorkers=4))
    assert (system.nodes["gpu0"].kernel_mode, system.nodes["gpu0"].kernel_workers) == (
        "detailed",
        4,
    )
    again = load_snapshot(system.to_dict())
    assert again.nodes["gpu0"] == system.nodes["gpu0"]
    plain = load_snapshot(snapshot()).to_dict()
    assert all("kernelMode" not in node for node in plain["nodes"])
