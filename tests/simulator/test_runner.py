"""run_simulation end to end: energy, reliability, timeline bound, launch and code errors."""

from __future__ import annotations

import gc
import math
import textwrap
import time
from concurrent.futures import ThreadPoolExecutor
from itertools import pairwise
from typing import Any

import pytest

from simulator import runner
from simulator.errors import LaunchError, ModelEvaluationError, SnapshotError, UserCodeError
from simulator.models import builtin_models
from simulator.runner import run_simulation

COMPUTE = "function computationTime(params) { return params.get('seconds'); }"


def machine(
    *, attributes: dict[str, float] | None = None, model: str = COMPUTE, slots: int = 2
) -> dict[str, Any]:
    """Return a one-node system with `slots` process slots and the given power attributes."""
    return {
        "name": "one machine",
        "hardware": {"cpu": {"type": "CPU", "name": "CPU", "attributes": attributes or {}}},
        "models": {"m": {"language": "javascript", "source": model}},
        "nodes": [{"id": "cpu0", "hardware": "cpu", "model": "m", "labels": {"P": slots}}],
        "edges": [],
    }


def run(app: str, system: dict[str, Any], labels: dict[str, int], **kw: Any) -> dict:
    kw.setdefault("variables", {})
    return run_simulation(system, textwrap.dedent(app), labels=labels, **kw)


def test_energy_is_idle_power_plus_linear_load_over_the_run() -> None:
    # P[0] computes 4 s, P[1] 2 s on a node with room for two: load 1 for 2 s, 0.5 for 2 s
    system = machine(attributes={"powerIdle": 10.0, "powerConsumptionLoad": 30.0})
    result = run('sim.computation({"seconds": 4 - 2 * rank})', system, {"P": 2})
    (component,) = result["components"]
    assert result["overall_time_s"] == 4.0
    assert component["busy_s"] == 4.0
    assert component["utilisation"] == 1.0
    assert component["energy_j"] == pytest.approx(10 * 4 + (30 - 10) * (2 * 1.0 + 2 * 0.5))
    assert result["energy_j"] == {
        "total": component["energy_j"],
        "per_component": {"cpu0": 100.0},
        "accounting": "whole_run",
    }


def test_a_models_power_function_overrides_the_attributes() -> None:
    model = COMPUTE + "\nfunction power(state, params) { return state === 'idle' ? 5 : 50; }"
    system = machine(attributes={"powerIdle": 1.0, "powerConsumptionLoad": 2.0}, model=model)
    result = run('sim.computation({"seconds": 2})', system, {"P": 1}, seed=0)
    (component,) = result["components"]
    assert component["energy_j"] == pytest.approx(5 * 2 + 45 * 2 * 0.5)


@pytest.mark.parametrize(
    ("attributes", "missing"),
    [
        ({"powerIdle": 10.0, "powerConsumptionLoad": 30.0}, []),
        ({"powerConsumptionLoad": 168.0}, ["powerIdle"]),
        ({"powerIdle": 10.0}, ["powerConsumptionLoad"]),
        ({}, ["powerIdle", "powerConsumptionLoad"]),
    ],
)
def test_the_result_names_the_power_attributes_a_nodes_energy_lacked(
    attributes: dict[str, float], missing: list[str]
) -> None:
    result = run('sim.computation({"seconds": 2})', machine(attributes=attributes), {"P": 1})
    expected = (
        [{"node": "cpu0", "name": "cpu0", "hardware": "CPU", "type": "CPU", "attributes": missing}]
        if missing
        else []
    )
    assert result["power_missing"] == expected


def test_a_models_power_function_leaves_no_power_attribute_missing() -> None:
    model = COMPUTE + "\nfunction power(state, params) { return state === 'idle' ? 5 : 50; }"
    result = run('sim.computation({"seconds": 2})', machine(model=model), {"P": 1})
    assert result["power_missing"] == []


def test_reliability_is_exp_of_minus_failure_rate_times_busy_time() -> None:
    system = machine(attributes={"failuresPerSecond": 1e-3})
    result = run('sim.computation({"seconds": 3})', system, {"P": 1})
    assert result["reliability"]["p_success"] == pytest.approx(math.exp(-1e-3 * 3))


def test_a_models_failure_rate_function_is_used_when_defined() -> None:
    model = COMPUTE + "\nfunction failureRate(params) { return 0.01; }"
    result = run('sim.computation({"seconds": 10})', machine(model=model), {"P": 1})
    assert result["reliability"]["p_success"] == pytest.approx(math.exp(-0.1))


def test_the_timeline_keeps_at_most_its_limit_and_counts_the_rest() -> None:
    app = """
    for step in range(10):
        sim.computation({"seconds": 1})
    """
    result = run(app, machine(), {"P": 2}, timeline_limit=5)
    assert len(result["timeline"]) == 5
    assert result["timeline_dropped"] == 15
    assert result["timeline"][0] == {
        "process": "P[0]",
        "kind": "compute",
        "start_s": 0.0,
        "end_s": 1.0,
    }


def test_the_result_carries_engine_statistics() -> None:
    result = run('sim.computation({"seconds": 1})', machine(), {"P": 2}, seed=9)
    stats = result["stats"]
    assert stats["events"] == 4  # two starts, two resumptions
    assert stats["processes"] == 2
    assert stats["seed"] == 9
    assert stats["wall_s"] > 0
    assert stats["events_per_s"] == pytest.approx(stats["events"] / stats["wall_s"])
    assert result["status"] == "finished"


def test_the_wall_time_covers_the_result_s_assembly(monkeypatch: pytest.MonkeyPatch) -> None:
    from simulator import results

    power_series = results.power_series

    def slow_power_series(*args: Any) -> Any:
        time.sleep(0.3)  # a result that takes long to assemble: the user waits for it too
        return power_series(*args)

    monkeypatch.setattr(results, "power_series", slow_power_series)
    stats = run('sim.computation({"seconds": 1})', machine(), {"P": 2})["stats"]
    assert stats["wall_s"] >= 0.3
    assert stats["events_per_s"] == pytest.approx(stats["events"] / stats["wall_s"])


def test_progress_reaches_one_and_the_overall_time_when_every_process_finished() -> None:
    seen: list[tuple[float, float | None]] = []
    result = run(
        'sim.computation({"seconds": 1 + rank})',
        machine(),
        {"P": 2},
        progress=lambda fraction, simulated_s=None: seen.append((fraction, simulated_s)),
    )
    assert seen[-1] == (1.0, result["overall_time_s"]) == (1.0, 2.0)


def test_without_progress_a_process_s_end_costs_no_call_and_keeps_its_finish_time(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from simulator.engine import Engine

    hooks: list[object] = []
    engine_run = Engine.run

    def spying_run(self: Any, *args: Any, **kwargs: Any) -> Any:
        hooks.append(self.on_process_end)
        return engine_run(self, *args, **kwargs)

    monkeypatch.setattr(Engine, "run", spying_run)
    app = 'sim.computation({"seconds": 1 + rank})'
    quiet = run(app, machine(), {"P": 2})
    reported = run(app, machine(), {"P": 2}, progress=lambda fraction, simulated_s=None: None)
    assert hooks[0] is None and hooks[1] is not None  # the hook only where progress is told
    finishes = [row["finish_s"] for row in quiet["processes"]]
    assert finishes == [row["finish_s"] for row in reported["processes"]] == [1.0, 2.0]


def test_a_single_long_process_reports_the_simulated_time_it_reached_before_it_ends(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # reports every 2 ms over a run many times that long even on a fast machine (on one in
    # 2026-11, 40,000 memoized computations got no report at 5 ms; 200,000 take 30 ms there)
    monkeypatch.setattr(runner, "SIMULATED_TIME_EVERY_S", 0.002)
    seen: list[tuple[float, float | None]] = []
    app = """
    for step in range(steps):
        sim.computation({"seconds": 1})
    """
    result = run(
        app,
        machine(),
        {"P": 1},
        variables={"steps": 200_000},
        progress=lambda fraction, simulated_s=None: seen.append((fraction, simulated_s)),
    )
    assert result["overall_time_s"] == 200_000.0
    during = [simulated for fraction, simulated in seen if fraction == 0.0]
    assert during, "no report while the only process ran"
    assert all(simulated is not None and 0 <= simulated <= 200_000 for simulated in during)
    assert during == sorted(during)  # the engine's clock never goes back
    assert seen[-1] == (1.0, 200_000.0)


def test_a_runtime_error_reports_the_users_line_and_process() -> None:
    app = """
    x = 1
    if rank == 1:
        y = x / 0
    """
    with pytest.raises(UserCodeError) as caught:
        run(app, machine(), {"P": 2})
    assert str(caught.value) == (
        "application model, line 4: ZeroDivisionError: division by zero (process P[1])"
    )


def test_a_syntax_error_reports_the_users_line() -> None:
    with pytest.raises(UserCodeError) as caught:
        run("x = 1\nif x\n", machine(), {"P": 1})
    assert caught.value.line == 2


def test_forbidden_imports_are_refused_in_every_process() -> None:
    with pytest.raises(UserCodeError) as caught:
        run("x = 1\nimport os\n", machine(), {"P": 1})
    assert (caught.value.line, caught.value.process) == (2, "P[0]")
    assert caught.value.detail.startswith("import of 'os' is not allowed")


def test_computing_on_a_node_without_a_model_is_a_model_error() -> None:
    system = machine()
    del system["nodes"][0]["model"]
    with pytest.raises(ModelEvaluationError) as caught:
        run('sim.computation({"seconds": 1})', system, {"P": 1})
    assert str(caught.value) == (
        "computational model '(none)', function computationTime(): "
        "node 'cpu0' has no computational model"
    )


def test_a_node_without_a_model_is_named_by_its_name() -> None:
    system = machine()
    del system["nodes"][0]["model"]
    system["nodes"][0]["name"] = "Head node"
    with pytest.raises(ModelEvaluationError) as caught:
        run('sim.computation({"seconds": 1})', system, {"P": 1})
    assert str(caught.value).endswith("node 'Head node' has no computational model")


def test_a_negative_model_time_is_a_model_error() -> None:
    with pytest.raises(ModelEvaluationError, match="computationTime"):
        run('sim.computation({"seconds": -1})', machine(), {"P": 1})


def test_a_model_error_names_the_model_by_its_name_not_its_snapshot_key() -> None:
    system = machine()
    system["models"] = {"model-10": {**system["models"]["m"], "name": "Volkov GPU"}}
    system["nodes"][0]["model"] = "model-10"
    with pytest.raises(ModelEvaluationError) as caught:
        run('sim.computation({"seconds": -1})', system, {"P": 1})
    assert caught.value.model == "Volkov GPU"
    assert str(caught.value).startswith(
        "computational model 'Volkov GPU', function computationTime(), line 1: returned -1"
    )


@pytest.mark.parametrize(
    ("variables", "field", "message"),
    [
        ({"sim": 1}, "variables.sim", "'sim' is a name the application model already has"),
        ({"2x": 1}, "variables.2x", "variable names are identifiers"),
        ({"x": [1]}, "variables.x", "a variable is a number, a boolean or a string, got list"),
        ({"_x": 1}, "variables._x", "'_x' starts with '_', which application models cannot use"),
    ],
)
def test_it_rejects_bad_variables(variables: dict, field: str, message: str) -> None:
    with pytest.raises(LaunchError) as caught:
        run("pass", machine(), {"P": 1}, variables=variables)
    assert caught.value.field == field
    assert message in str(caught.value)


def test_an_invalid_snapshot_is_reported_with_field_paths() -> None:
    system = machine()
    system["nodes"][0]["count"] = 0
    with pytest.raises(SnapshotError) as caught:
        run("pass", system, {"P": 1})
    assert "nodes[0].count" in caught.value.errors


def test_power_over_time_steps_with_the_load_and_integrates_to_the_energy() -> None:
    # as above: load 1 for 2 s (both processes), 0.5 for 2 s, on a 10 W idle / 30 W node
    system = machine(attributes={"powerIdle": 10.0, "powerConsumptionLoad": 30.0})
    result = run('sim.computation({"seconds": 4 - 2 * rank})', system, {"P": 2})
    (series,) = result["power"]
    assert (series["node"], series["instance"]) == ("cpu0", 0)
    assert series["points"] == [[0.0, 30.0], [2.0, 20.0], [4.0, 10.0]]
    points = series["points"]
    energy = sum((t1 - t0) * w for (t0, w), (t1, _) in pairwise(points))
    assert energy == pytest.approx(result["components"][0]["energy_j"])


def test_a_component_that_draws_no_power_has_no_power_series() -> None:
    result = run('sim.computation({"seconds": 1})', machine(), {"P": 1})
    assert result["power"] == []
    assert result["kernels"] == []
    assert result["rooflines"] == []


def test_each_gpu_kernel_has_its_bound_occupancy_and_roofline_point() -> None:
    volkov = next(m for m in builtin_models() if m.name == "Volkov GPU")
    gpu = {"SMs": 13, "SMCoreClock": 1253, "CUDACores": 128, "schedulers": 4, "warpSize": 32}
    system = {
        "name": "one GPU",
        "hardware": {
            "gpu": {
                "type": "GPU",
                "name": "GeForce GTX 970",
                "attributes": {**gpu, "GMEMThroughput": 13.78, "maxWarpsPerSM": 64},
            }
        },
        "models": {"v": {"language": "javascript", "source": volkov.source}},
        "nodes": [
            {"id": "gpu0", "name": "GPU", "hardware": "gpu", "model": "v", "labels": {"G": 1}}
        ],
        "edges": [],
    }
    app = """
    for a in (1, 64):
        sim.computation({"CUDACoreInstructions": 23 + 4 * a, "issuedInstructions": 23 + 4 * a,
                         "GMEMBytesTransferred": 384, "latencyBound": 942 + 24 * a,
                         "gridSize": 39063, "blockSize": 256, "occupancy": 64})
    """
    result = run(app, system, {"G": 1})
    (roofline,) = result["rooflines"]
    assert roofline["node"] == "gpu0" and roofline["peak_ops_per_s"] == 13 * 128 * 1253e6
    # every ceiling and memory roof the record gives (issue 42): a GTX 970 has no tensor cores
    assert roofline["ceilings"][0] == {"name": "FP32", "ops_per_s": roofline["peak_ops_per_s"]}
    assert not any(c["name"].startswith("tensor") for c in roofline["ceilings"])
    roofs = [m["name"] for m in roofline["memory_roofs"]]
    assert roofs[0] == "shared memory / L1" and roofs[-1] == "DRAM"
    memory_bound, compute_bound = result["kernels"]
    assert (memory_bound["bound"], memory_bound["bound_class"]) == ("global_memory", "memory")
    assert (compute_bound["bound"], compute_bound["bound_class"]) == ("cuda_cores", "compute")
    assert memory_bound["occupancy"] == 64 and memory_bound["occupancy_fraction"] == 1.0
    assert memory_bound["intensity"] == 32 * 27 / 384
    assert compute_bound["intensity"] == 32 * 279 / 384
    # Volkov's (4.4) is the roofline itself: a throughput-bound kernel (lambda_k = 1) is on it
    assert memory_bound["roof_fraction"] == pytest.approx(1.0)
    assert compute_bound["ops_per_s"] == pytest.approx(roofline["peak_ops_per_s"])


# -- the garbage collector during a run ----------------------------------------------------


def test_a_run_collects_young_objects_in_larger_batches_and_restores_the_thresholds() -> None:
    before = gc.get_threshold()
    during: list[tuple[int, int, int]] = []

    run(
        "sim.computation({'seconds': 1.0})",
        machine(),
        {"P": 2},
        progress=lambda fraction, simulated=None: during.append(gc.get_threshold()),
    )

    assert during and all(seen == (runner.RUN_GC_YOUNG_THRESHOLD, *before[1:]) for seen in during)
    assert gc.get_threshold() == before


def test_a_failed_run_restores_the_thresholds_and_a_higher_one_is_kept() -> None:
    before = gc.get_threshold()
    with pytest.raises(UserCodeError):
        run("sim.computation(5)", machine(), {"P": 1})
    assert gc.get_threshold() == before

    during: list[tuple[int, int, int]] = []
    gc.set_threshold(10 * runner.RUN_GC_YOUNG_THRESHOLD, *before[1:])
    try:
        run(
            "sim.computation({'seconds': 1.0})",
            machine(),
            {"P": 1},
            progress=lambda fraction, simulated=None: during.append(gc.get_threshold()),
        )
    finally:
        gc.set_threshold(*before)
    assert during[0][0] == 10 * runner.RUN_GC_YOUNG_THRESHOLD


def test_overlapping_runs_in_threads_leave_the_thresholds_as_they_found_them() -> None:
    before = gc.get_threshold()
    app = "for step in range(200):\n    sim.computation({'seconds': 1.0 + step % 3})\n"
    with ThreadPoolExecutor(max_workers=3) as pool:
        results = list(pool.map(lambda _: run(app, machine(slots=20), {"P": 20}), range(6)))
    assert {result["overall_time_s"] for result in results} == {399.0}
    assert gc.get_threshold() == before


def test_only_the_nodes_that_draw_power_have_a_series_beside_nodes_that_do_not() -> None:
    # Two hosts: the one without power attributes adds timeline entries but no series (its
    # entries are not even collected), the other's series is as if it were alone.
    drawing = machine(attributes={"powerIdle": 10.0, "powerConsumptionLoad": 30.0})
    both = machine(attributes={"powerIdle": 10.0, "powerConsumptionLoad": 30.0})
    both["hardware"]["quiet"] = {"type": "CPU", "name": "quiet CPU", "attributes": {}}
    both["nodes"].append({"id": "cpu1", "hardware": "quiet", "model": "m", "labels": {"Q": 2}})
    app = 'sim.computation({"seconds": 4 - 2 * rank})'

    alone = run(app, drawing, {"P": 2})
    beside = run(app, both, {"P": 2, "Q": 2})

    (series,) = beside["power"]
    assert len(beside["timeline"]) == 2 * len(alone["timeline"]) == 4
    assert series == alone["power"][0]
    assert series["points"] == [[0.0, 30.0], [2.0, 20.0], [4.0, 10.0]]
    assert beside["kernels"] == []  # CPU computations with no kernel inputs


def test_a_models_power_function_is_named_as_the_source_of_the_states() -> None:
    model = COMPUTE + "\nfunction power(state, params) { return state === 'idle' ? 5 : 50; }"
    system = machine(attributes={"powerConsumptionLoad": 2.0}, model=model)
    result = run('sim.computation({"seconds": 2})', system, {"P": 1}, seed=0)
    (row,) = result["energy_accounting"]
    assert (row["states_from"], row["estimated"], row["base_w"]) == ("model", [], 5.0)
    plain = run('sim.computation({"seconds": 2})', machine(attributes={}), {"P": 1})
    (row,) = plain["energy_accounting"]
    assert row["states_from"] == "record"
    assert [e["attribute"] for e in row["estimated"]] == ["powerIdle", "powerConsumptionLoad"]
    assert row["includes"] == "nothing: the record gives no power (0 W counted)"


def test_a_reporter_thread_that_cannot_start_is_the_run_out_of_memory(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # Under the sandbox's data limit a run's processes can leave no room for the reporter's
    # stack: the run outgrew its memory (the child's "memory" limit), not a simulator bug.
    import threading

    def refuse(self: threading.Thread) -> None:
        raise RuntimeError("can't start new thread")

    def report(fraction: float, simulated_s: float | None = None, /) -> None:
        raise AssertionError("nothing to report")

    monkeypatch.setattr(threading.Thread, "start", refuse)
    with (
        pytest.raises(MemoryError, match="can't start new thread"),
        runner._reporting_simulated_time(report, lambda: (0.0, 0.0)),
    ):
        pass
