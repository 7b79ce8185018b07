"""A run's cost (simulator.cost, docs/cost.md): energy at the power price, hardware rented or
written off over its lifetime, per step or token. The expected figures are worked by hand
from the formula in docs/cost.md, each written out beside it."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from simulator.attribute_ranges import range_error
from simulator.cost import HOURS_PER_YEAR, J_PER_KWH, run_cost
from simulator.runner import run_simulation
from simulator.snapshot import load_snapshot

SYSTEM: dict[str, Any] = {
    "name": "priced",
    "hardware": {
        "gpu": {"type": "GPU", "name": "GPU", "attributes": {"speed": 1e9}},
        "cpu": {"type": "CPU", "name": "Host", "attributes": {"speed": 1e9}},
    },
    "models": {
        "m": {
            "language": "javascript",
            "source": "function computationTime(params) { return params.ops / hw.speed; }",
        }
    },
    "nodes": [
        {"id": "gpu0", "name": "GPU", "hardware": "gpu", "model": "m", "count": 8,
         "labels": {"GPU": 1}},
        {"id": "cpu0", "name": "Host", "hardware": "cpu", "model": "m", "count": 1,
         "labels": {"CPU": 1}},
    ],
    "edges": [],
}  # fmt: skip


def _system(gpu: dict[str, float], cpu: dict[str, float] | None = None) -> Any:
    snapshot = copy.deepcopy(SYSTEM)
    snapshot["hardware"]["gpu"]["attributes"].update(gpu)
    snapshot["hardware"]["cpu"]["attributes"].update(cpu or {})
    return load_snapshot(snapshot)


def _result(time_s: float, gpu_j: float, cpu_j: float = 0.0) -> dict[str, Any]:
    return {
        "overall_time_s": time_s,
        "energy_j": {"total": gpu_j + cpu_j, "per_component": {"gpu0": gpu_j, "cpu0": cpu_j}},
    }


def test_energy_is_priced_per_kwh() -> None:
    # 7.2 MJ = 2 kWh at 0.15 per kWh: 0.30
    cost = run_cost(_system({"powerPrice": 0.15}, {"powerPrice": 0.15}), _result(10, 7.2e6), {})
    assert cost["energy"] == pytest.approx(0.30)
    assert cost["per_node"]["gpu0"]["energy"] == pytest.approx(0.30)
    assert J_PER_KWH == 3_600_000


def test_rented_hardware_costs_its_hourly_price_per_instance_for_the_runs_time() -> None:
    # 8 GPUs x 0.5 h x 2.50 per hour = 10.00
    system = _system({"hourlyRental": 2.5}, {"hourlyRental": 0})
    cost = run_cost(system, _result(1800, 0), {})
    assert cost["hardware"] == pytest.approx(10.0)
    assert cost["per_node"]["gpu0"]["basis"] == "rental"
    assert cost["total"] == pytest.approx(10.0)
    assert cost["missing"] == []


def test_bought_hardware_is_written_off_over_its_lifetime() -> None:
    # 8 GPUs x 30,000 over 5 Julian years (43,830 h), held 1 h: 8 x 30,000 / 43,830 = 5.4757...
    system = _system({"purchasePrice": 30_000, "lifetime": 5}, {"hourlyRental": 0})
    cost = run_cost(system, _result(3600, 0), {})
    assert HOURS_PER_YEAR == 8766
    assert cost["hardware"] == pytest.approx(8 * 30_000 / 43_830)
    assert cost["per_node"]["gpu0"]["basis"] == "purchase"


def test_a_rental_price_is_used_where_a_record_has_both() -> None:
    system = _system(
        {"purchasePrice": 30_000, "lifetime": 5, "hourlyRental": 1.0}, {"hourlyRental": 0}
    )
    assert run_cost(system, _result(3600, 0), {})["hardware"] == pytest.approx(8.0)


def test_the_total_adds_energy_and_hardware_and_divides_by_declared_work() -> None:
    # energy 3.6 MJ = 1 kWh at 0.20 = 0.20; hardware 8 x 1 h x 1.00 = 8.00; total 8.20
    system = _system({"powerPrice": 0.2, "hourlyRental": 1.0}, {"hourlyRental": 0})
    cost = run_cost(system, _result(3600, 3.6e6), {"tokens": 4100, "steps": 2})
    assert cost["total"] == pytest.approx(8.2)
    assert cost["per_unit"] == pytest.approx({"step": 4.1, "token": 0.002})


def test_a_priced_system_names_the_nodes_it_could_not_price() -> None:
    system = _system({"powerPrice": 0.2, "purchasePrice": 30_000})
    cost = run_cost(system, _result(3600, 3.6e6, 1.0), {})
    assert cost["missing"] == [
        {"node": "gpu0", "name": "GPU", "attributes": ["lifetime"]},
        {
            "node": "cpu0",
            "name": "Host",
            "attributes": ["powerPrice", "hourlyRental or purchasePrice"],
        },
    ]
    assert cost["total"] == pytest.approx(0.2)  # the parts that could be priced


def test_a_system_without_prices_has_no_cost_and_nothing_missing() -> None:
    cost = run_cost(_system({}), _result(3600, 3.6e6), {"tokens": 5})
    assert (cost["total"], cost["energy"], cost["hardware"]) == (None, None, None)
    assert cost["missing"] == [] and cost["per_unit"] == {}


def test_cost_attributes_have_ranges_the_database_checks() -> None:
    assert range_error("lifetime", 0) is not None
    assert range_error("purchasePrice", -1) is not None
    assert range_error("powerPrice", 0) is None  # free power is a real case
    assert range_error("hourlyRental", 0) is None


def test_a_runs_result_carries_its_cost() -> None:
    snapshot = copy.deepcopy(SYSTEM)
    snapshot["hardware"]["gpu"]["attributes"].update({"hourlyRental": 3600.0})
    snapshot["hardware"]["cpu"]["attributes"].update({"hourlyRental": 0.0})
    app = "for i in range(steps):\n    sim.computation({'ops': 1e9})\n"
    result = run_simulation(snapshot, app, labels={"GPU": 2}, variables={"steps": 3})
    # 3 computations of 1 s each: 3 s; 8 GPUs at 1 per second = 24; per step 8
    assert result["overall_time_s"] == pytest.approx(3.0)
    assert result["cost"]["total"] == pytest.approx(24.0)
    assert result["cost"]["per_unit"] == {"step": pytest.approx(8.0)}
