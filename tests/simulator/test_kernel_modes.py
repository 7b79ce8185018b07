"""GPU nodes in the "petri" (004's SM net) and "waves" (003's block waves) kernel modes:
chosen in the snapshot, run through the runner and the sandbox, stepping by waves."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from simulator.errors import ModelEvaluationError, SnapshotError
from simulator.models.gpu_modes import MODE_ERRORS, PETRI_MODEL_NAME, petri_estimate
from simulator.runner import run_simulation
from simulator.sandbox import run_sandboxed
from simulator.sandbox.preparation import modules_needed
from simulator.snapshot import load_snapshot

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "examples" / "merpsys_gtx970"
APP = (EXAMPLE / "app.py").read_text()
VARIABLES = {"N": 10**6, "blockSz": 256, "computeIntensity": 1, "occupancy": 64}
LABELS = {"CPU": 1, "GPU": 1}
GTX970_WAVE = 13 * 8  # SMs x resident blocks of 256 threads at 64 warps/SM

# saxpy2 at a = 1 (000 Listing 5) with the grid and any further parameters from variables.
KERNEL_APP = """
params = {"CUDACoreInstructions": 27, "issuedInstructions": 27, "GMEMBytesTransferred": 384,
          "latencyBound": 966, "gridSize": grid, "blockSize": 256, "occupancy": 64,
          "kernelExecutionLambda": 0.703787}
params.update(extra)
sim.computation(params)
"""


def snapshot(**gpu_fields: Any) -> dict[str, Any]:
    data = json.loads((EXAMPLE / "snapshot.json").read_text())
    for node in data["nodes"]:
        if node["id"] == "gpu0":
            node.update(gpu_fields)
    return data


def kernel_of(result: dict[str, Any]) -> tuple[float, dict[str, Any]]:
    (entry,) = [entry for entry in result["timeline"] if entry["kind"] == "compute"]
    return entry["end_s"] - entry["start_s"], entry.get("detail", {})


def kernel(mode: str, grid: int, data: dict[str, Any] | None = None, **extra: object) -> Any:
    app = f"extra = {extra!r}\n{KERNEL_APP}"
    system = data if data is not None else snapshot(kernelMode=mode)
    return kernel_of(run_simulation(system, app, labels={"GPU": 1}, variables={"grid": grid}))


@pytest.mark.parametrize("mode", ["petri", "waves"])
def test_the_example_runs_in_the_mode_and_only_the_kernel_term_moves(mode: str) -> None:
    analytic = run_simulation(snapshot(), APP, labels=LABELS, variables=VARIABLES)
    result = run_simulation(snapshot(kernelMode=mode), APP, labels=LABELS, variables=VARIABLES)
    seconds, detail = kernel_of(result)
    formula, _ = kernel_of(analytic)
    assert detail["mode"] == mode
    # N = 10^6, block 256: 3907 blocks, 104 per wave on the GTX 970.
    assert (detail["residentBlocks"], detail["blocksPerWave"], detail["waves"]) == (8, 104, 38)
    assert detail["tailBlocks"] == 3907 % 104
    assert detail["waveTime"] * 38 == pytest.approx(seconds, rel=1e-12)
    assert result["overall_time_s"] - analytic["overall_time_s"] == pytest.approx(
        seconds - formula, abs=1e-12
    )


def test_the_petri_mode_runs_the_sm_net_for_one_sms_warps_at_the_gpus_clock() -> None:
    seconds, detail = kernel("petri", GTX970_WAVE * 2)
    # saxpy2's 27 CUDA-core instructions and 384 bytes = 3 transactions of 128 B per warp.
    assert (
        detail["arithmeticInstructions"],
        detail["sharedInstructions"],
        detail["globalInstructions"],
    ) == (27, 0, 3)
    assert detail["instructionSource"] == "volkov"
    assert (detail["warpsPerSM"], detail["schedulers"]) == (64, 4)
    assert (detail["globalLatency"], detail["sharedLatency"]) == (20, 2)  # 004's defaults
    assert detail["smClockMHz"] == 1253
    # 64 warps x (27 x 3 + 3 x 2) scheduler steps over 4 schedulers: the SM is saturated.
    assert 64 * 87 / 4 <= detail["steps"] <= 1.05 * 64 * 87 / 4
    assert seconds == pytest.approx(2 * detail["steps"] / 1253e6, rel=1e-12)


def test_the_petri_mode_reads_its_parameters_and_the_hardwares_latencies() -> None:
    data = snapshot(kernelMode="petri")
    data["hardware"]["gtx970"]["attributes"].update(globalLatency=40, sharedLatency=4)
    _, from_hardware = kernel("petri", 13, data, sharedInstructions=5)
    assert (from_hardware["globalLatency"], from_hardware["sharedLatency"]) == (40, 4)
    assert from_hardware["instructionSource"] == "params"
    assert (from_hardware["arithmeticInstructions"], from_hardware["sharedInstructions"]) == (0, 5)
    assert from_hardware["warpsPerSM"] == 8  # 13 blocks: one block of 8 warps per SM
    seconds, detail = kernel(
        "petri", 13, data, globalLatency=10, petriSeed=3, petriRuns=4, cyclesPerStep=2.5
    )
    assert (detail["globalLatency"], detail["petriSeed"], detail["petriRuns"]) == (10, 3, 4)
    assert seconds == pytest.approx(detail["steps"] * 2.5 / 1253e6, rel=1e-12)


def test_a_petri_run_is_reproducible_and_its_seed_is_a_parameter() -> None:
    first = kernel("petri", 104, petriSeed=7)
    assert kernel("petri", 104, petriSeed=7) == first
    steps = {kernel("petri", 104, petriSeed=seed)[1]["steps"] for seed in range(6)}
    assert len(steps) > 1  # the random permutations of 004 section 4 differ by seed


def test_the_waves_mode_is_the_models_time_for_one_wave_times_the_waves() -> None:
    wave, detail = kernel("waves", GTX970_WAVE)
    assert detail["waveModel"] == "node model"
    assert wave == pytest.approx(detail["waveTime"], rel=1e-12)
    # Whole waves: the formula's own time, which is linear in the grid.
    five, detail = kernel("waves", 5 * GTX970_WAVE)
    assert five == pytest.approx(5 * wave, rel=1e-12)
    assert five == pytest.approx(detail["analyticTime"], rel=1e-12)


def test_the_waves_mode_uses_the_volkov_formula_on_a_node_without_a_model() -> None:
    data = snapshot(kernelMode="waves")
    data["nodes"][3].pop("model")
    plain, _ = kernel("waves", GTX970_WAVE)
    seconds, detail = kernel("waves", GTX970_WAVE, data)
    assert (detail["waveModel"], detail["bound"]) == ("Volkov formula", "global_memory")
    assert seconds == pytest.approx(plain, rel=1e-9)


@pytest.mark.parametrize("mode", ["petri", "waves"])
def test_the_kernel_time_steps_up_by_one_wave_across_a_wave_boundary(mode: str) -> None:
    full, detail = kernel(mode, GTX970_WAVE)
    one_more, more = kernel(mode, GTX970_WAVE + 1)
    two_full, _ = kernel(mode, 2 * GTX970_WAVE)
    assert (detail["waves"], more["waves"], more["tailBlocks"]) == (1, 2, 1)
    assert one_more == pytest.approx(2 * full, rel=1e-12)
    assert two_full == one_more  # flat within a wave: 003 Fig. 2's staircase
    assert kernel(mode, GTX970_WAVE - 1)[0] <= full


def test_the_waves_mode_steps_where_003_fig_2_does_on_a_one_block_per_sm_launch() -> None:
    # 1024 threads at 32 warps/SM: one block per SM, so every 13 blocks on the GTX 970.
    times = [kernel("waves", grid, blockSize=1024, occupancy=32)[0] for grid in range(1, 40)]
    steps = [grid + 1 for grid in range(1, 39) if times[grid] > times[grid - 1] * (1 + 1e-9)]
    assert steps == [14, 27]
    assert times[38] == pytest.approx(3 * times[0], rel=1e-12)


ATTRIBUTES = {"SMs": 13.0, "SMCoreClock": 1253.0, "schedulers": 4.0, "CUDACores": 128.0}


def test_the_petri_mode_names_every_missing_attribute_at_once() -> None:
    params = {"arithmeticInstructions": 8, "blockSize": 32, "gridSize": 13, "occupancy": 1}
    bare = {"CUDACores": 128.0, "SMS": 13.0}
    message = MODE_ERRORS["attributes"].format(
        names="'schedulers', 'SMCoreClock'", mode=PETRI_MODEL_NAME
    )
    with pytest.raises(ValueError) as caught:
        petri_estimate(bare, params)
    assert str(caught.value) == message


def test_more_warps_hide_global_latency_until_the_schedulers_saturate() -> None:
    # 004's expected behaviour (docs/models.md 5d): one-warp blocks of 8 arithmetic and 4 global
    # instructions, a fixed grid of 832 blocks, 1 to 64 resident warps per SM.
    def run(occupancy: int) -> Any:
        params = {
            "arithmeticInstructions": 8,
            "globalInstructions": 4,
            "blockSize": 32,
            "gridSize": 13 * 64,
            "occupancy": occupancy,
        }
        return petri_estimate(ATTRIBUTES, params)

    runs = {occupancy: run(occupancy) for occupancy in (1, 2, 4, 8, 16, 32, 64)}
    times = {occupancy: estimate.time_s for occupancy, estimate in runs.items()}
    # Latency-bound: a second warp fits in the first one's waits, so twice the warps per
    # wave cost no more steps and the kernel takes half the time.
    assert times[2] == pytest.approx(times[1] / 2, rel=1e-12)
    assert times[4] == pytest.approx(times[2] / 2, rel=1e-12)
    assert all(times[b] < times[a] for a, b in [(1, 2), (2, 4), (4, 8), (8, 16), (16, 32)])
    # Saturated: (8 x 3 + 4 x 2) scheduler steps per warp over 4 schedulers = 8 steps per
    # warp, so more warps no longer shorten the kernel.
    assert times[64] == pytest.approx(times[32], rel=0.05)
    assert 8 <= runs[64].steps / 64 <= 8 * 1.15
    idle = {occupancy: estimate.idle_steps / estimate.steps for occupancy, estimate in runs.items()}
    assert idle[1] > 0.8 and idle[32] < 0.1


@pytest.mark.parametrize("mode", ["petri", "waves"])
def test_the_mode_runs_in_the_sandbox(mode: str) -> None:
    payload = {
        "snapshot": snapshot(kernelMode=mode),
        "app_source": APP,
        "labels": LABELS,
        "variables": VARIABLES,
    }
    result = run_sandboxed(payload)
    in_process = run_simulation(snapshot(kernelMode=mode), APP, labels=LABELS, variables=VARIABLES)
    assert kernel_of(result) == kernel_of(in_process)
    assert kernel_of(result)[1]["waves"] == 38


def test_the_sandbox_preloads_the_modes_only_when_a_node_uses_one() -> None:
    assert modules_needed({"snapshot": snapshot()}) == ()
    for mode in ("petri", "waves"):
        assert modules_needed({"snapshot": snapshot(kernelMode=mode)}) == (
            "simulator.models.gpu_modes",
        )


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        ({"petriRuns": 0}, "petriRuns must be a whole number from 1 to 100, got 0"),
        ({"petriSeed": -1}, "petriSeed must be a whole number from 0 to 2147483647, got -1"),
        ({"globalLatency": 2.5}, "globalLatency must be a whole number from 1 to 100000, got 2.5"),
        ({"sharedLatency": 0}, "sharedLatency must be a whole number from 1 to 100000, got 0"),
        ({"cyclesPerStep": 0}, "cyclesPerStep must be a positive number, got 0"),
        (
            {"arithmeticInstructions": -1},
            "arithmeticInstructions must be a whole number from 0 to 1000000, got -1",
        ),
        (
            {"globalInstructions": "4"},
            "globalInstructions must be a whole number from 0 to 1000000, got '4'",
        ),
        ({"arithmeticInstructions": 0}, "a warp needs at least one instruction"),
        ({"CUDACoreInstructions": None}, "give the instructions per warp (arithmeticInstructions"),
        ({"GMEMBytesTransferred": -1}, "GMEMBytesTransferred must be a non-negative number"),
        (
            {"arithmeticInstructions": 100_000},
            "the Petri-net mode simulates at most 1000000 instructions per kernel, "
            "got 64 warps x 100000 instructions x 1 runs = 6400000",
        ),
        ({"occupancy": 4}, "occupancy (4 warps/SM) is less than one block (8 warps)"),
        ({"blockSize": 0}, "blockSize must be a positive number, got 0"),
        ({"gridSize": None}, "give gridSize or N"),
    ],
)
def test_bad_petri_parameters_are_named(extra: dict[str, object], message: str) -> None:
    with pytest.raises(ModelEvaluationError) as caught:
        kernel("petri", 200, **extra)
    assert message in str(caught.value)
    assert (caught.value.model, caught.value.function) == (
        "Petri-net kernel mode",
        "computationTime",
    )


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        ({"occupancy": 4}, "occupancy (4 warps/SM) is less than one block (8 warps)"),
        ({"blockSize": "256"}, "blockSize must be a finite number, got '256'"),
        ({"gridSize": 0}, "gridSize must be a positive number, got 0"),
        ({"occupancy": None}, "give either occupancy (warps per SM) or registers per thread"),
    ],
)
def test_bad_waves_parameters_are_named(extra: dict[str, object], message: str) -> None:
    with pytest.raises(ModelEvaluationError) as caught:
        kernel("waves", 200, **extra)
    assert message in str(caught.value)
    assert caught.value.model == "block-wave kernel mode"


@pytest.mark.parametrize("mode", ["petri", "waves"])
def test_only_a_gpu_node_takes_the_mode(mode: str) -> None:
    data = snapshot()
    data["nodes"][1]["kernelMode"] = mode  # the host CPU
    with pytest.raises(SnapshotError) as caught:
        load_snapshot(data)
    assert caught.value.errors["nodes[1].kernelMode"] == [
        f"The {mode} kernel mode simulates GPU kernels; 'CPU' is not a GPU."
    ]


@pytest.mark.parametrize("mode", ["petri", "waves"])
def test_the_mode_survives_a_snapshot_round_trip(mode: str) -> None:
    system = load_snapshot(snapshot(kernelMode=mode))
    assert system.nodes["gpu0"].kernel_mode == mode
    assert load_snapshot(system.to_dict()).nodes["gpu0"] == system.nodes["gpu0"]
