"""result_metrics: a result's figures by column, from today's results and older ones."""

from __future__ import annotations

import pytest

from simulator.result_metrics import (
    gpu_names,
    model_warnings_text,
    power_missing_text,
    result_metrics,
)


def process(node: str, **times: float) -> dict[str, object]:
    figures = {"compute_s": 0.0, "comm_s": 0.0, "wait_s": 0.0, "memory_s": 0.0}
    return {"node": node, **figures, **times}


RESULT = {
    "overall_time_s": 3.0,
    "energy_j": {"total": 30.0, "per_component": {"cpu0": 10.0, "gpu0": 20.0}},
    "processes": [
        process("cpu0", compute_s=0.5, wait_s=2.0),
        process("gpu0", compute_s=1.0, comm_s=0.25),
        process("gpu1", compute_s=2.0),
    ],
    "components": [
        {"node": "cpu0", "type": "CPU", "busy_s": 0.5},
        {"node": "gpu0", "type": "GPU", "busy_s": 1.0},
        {"node": "gpu1", "type": "GPU", "busy_s": 2.0},
        {"node": "gpu1", "type": "GPU", "busy_s": 0.5},
    ],
    "reliability": {"p_success": 0.99},
    "stats": {"events": 12, "wall_s": 0.01},
}


def test_kernel_time_sums_the_computing_of_processes_on_gpu_nodes() -> None:
    metrics = result_metrics(RESULT)
    assert (metrics["kernel_s"], metrics["cpu_compute_s"], metrics["compute_s"]) == (3.0, 0.5, 3.5)
    assert (metrics["transfer_s"], metrics["wait_s"], metrics["memory_s"]) == (0.25, 2.0, 0.0)
    assert metrics["busy_s.gpu1"] == 2.5  # its two instances
    assert (metrics["energy_j.gpu0"], metrics["energy_j.gpu1"]) == (20.0, None)
    assert (metrics["p_success"], metrics["events"]) == (0.99, 12.0)


def test_a_system_without_a_gpu_has_no_kernel_time_and_an_older_result_no_warning() -> None:
    cpu_only = {
        **RESULT,
        "components": RESULT["components"][:1],
        "processes": RESULT["processes"][:1],
    }
    metrics = result_metrics(cpu_only)
    assert metrics["kernel_s"] is None
    assert metrics["cpu_compute_s"] == 0.5
    assert metrics["power_missing"] == ""
    assert metrics["link_busy_s"] == 0.0


def test_an_empty_result_gives_none_for_each_figure() -> None:
    metrics = result_metrics({})
    assert {key for key, value in metrics.items() if value not in (None, "")} == set()


@pytest.mark.parametrize(
    ("entries", "text"),
    [
        (None, ""),
        ([], ""),
        (
            [{"node": "gpu0", "name": "GTX 970", "attributes": ["powerIdle"]}],
            "GTX 970 (gpu0): powerIdle",
        ),
        (
            [{"node": "bus0", "name": "bus0", "attributes": ["powerIdle", "powerConsumptionLoad"]}],
            "bus0: powerIdle, powerConsumptionLoad",
        ),
    ],
)
def test_the_power_warning_reads_as_one_line(entries: object, text: str) -> None:
    assert power_missing_text(entries) == text


def test_the_architecture_warnings_read_as_one_line() -> None:
    assert model_warnings_text(None) == "" and result_metrics({})["model_warnings"] == ""
    warning = {
        "code": "architecture",
        "node": "gpu0",
        "hardware": "H100 SXM5 80GB",
        "model": "Volkov GPU",
        "architecture": "Hopper",
        "validated": ["Maxwell", "Pascal"],
    }
    unknown = {**warning, "node": "gpu1", "architecture": None}
    assert result_metrics({"warnings": [warning, unknown]})["model_warnings"] == (
        "Volkov GPU on H100 SXM5 80GB (gpu0, Hopper): validated on Maxwell and Pascal; "
        "Volkov GPU on H100 SXM5 80GB (gpu1, unknown architecture): validated on Maxwell "
        "and Pascal"
    )


def test_the_gpus_of_a_snapshot_are_those_its_nodes_run_on() -> None:
    snapshot = {
        "hardware": {
            "old": {"type": "GPU", "name": "GTX 970"},
            "new": {"type": "GPU", "name": "H100"},
            "cpu": {"type": "CPU", "name": "i7"},
        },
        "nodes": [
            {"id": "host", "group": True},
            {"id": "cpu0", "hardware": "cpu"},
            {"id": "gpu0", "hardware": "new"},
            {"id": "gpu1", "hardware": "new"},
        ],
    }
    assert gpu_names(snapshot) == ["H100"]
    assert gpu_names(None) == []


def test_the_energy_accounting_and_estimated_states_are_columns() -> None:
    result = {
        **RESULT,
        "energy_j": {**RESULT["energy_j"], "accounting": "whole_run"},
        "energy_accounting": [
            {"node": "cpu0", "name": "cpu0", "estimated": []},
            {
                "node": "gpu0",
                "name": "B200 SXM 180GB",
                "estimated": [
                    {"attribute": "powerIdle", "rule": "estimated: ..."},
                    {"attribute": "powerActiveIdle", "rule": "estimated: ..."},
                ],
            },
        ],
    }
    metrics = result_metrics(result)
    assert metrics["energy_accounting"] == "whole_run"
    assert metrics["energy_estimated"] == "B200 SXM 180GB (gpu0): powerIdle, powerActiveIdle"
    # a result stored before issue 45 names no accounting
    assert result_metrics(RESULT)["energy_accounting"] == ""
