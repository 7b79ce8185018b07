"""What a run costs: its energy at the records' power price and the hardware's time, rented or
bought and written off over its lifetime (docs/cost.md gives the formula and its reasons).

A hardware record may carry four cost attributes (hwdb attributes like any other; their
ranges are simulator.attribute_ranges'):

- `purchasePrice`: what one instance costs to buy, in currency units (USD by convention);
- `lifetime`: the years over which a bought instance is written off (straight line);
- `hourlyRental`: what one instance costs per hour rented;
- `powerPrice`: what a kWh of the energy the instance draws costs.

For each hardware node, `count` instances held for the run's whole simulated time `T`:

    energy cost   = energy_j(node) / J_PER_KWH * powerPrice
    hardware cost = count * (T / 3600) * hourlyRental                   where rented, else
                  = count * T / (lifetime * HOURS_PER_YEAR * 3600) * purchasePrice

and the run's cost is the sum over its nodes of both. A rental price that already includes
the power should be entered without a `powerPrice`, or the power is counted twice. Where the
run declares how much work it does, by a launch variable `steps` or `tokens` above 0, the
cost per step or per token is the run's cost divided by it.

A run none of whose records carries a cost attribute has no cost (None figures, nothing
missing); otherwise `missing` names each node whose part could not be priced and what it
lacks, and the totals are those of the parts that could.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypedDict

from simulator.snapshot import SystemSnapshot

__all__ = [
    "COST_ATTRIBUTES",
    "HOURS_PER_YEAR",
    "J_PER_KWH",
    "UNIT_VARIABLES",
    "CostFigures",
    "run_cost",
]

# attribute -> its unit, as the hardware database shows it
COST_ATTRIBUTES = {
    "purchasePrice": "USD",
    "lifetime": "years",
    "hourlyRental": "USD/h",
    "powerPrice": "USD/kWh",
}
J_PER_KWH = 3.6e6
HOURS_PER_YEAR = 365.25 * 24  # a Julian year
# launch variable -> the unit of work a cost is divided by
UNIT_VARIABLES = {"steps": "step", "tokens": "token"}


class NodeCost(TypedDict):
    energy: float | None
    hardware: float | None
    basis: str | None  # "rental", "purchase" or None (not priced)


class CostMissing(TypedDict):
    node: str
    name: str
    attributes: list[str]


class CostFigures(TypedDict):
    """A run's cost (`run_cost`), in the records' currency units."""

    energy: float | None
    hardware: float | None
    total: float | None
    per_unit: dict[str, float]  # "step" / "token" -> total / the run's count of them
    per_node: dict[str, NodeCost]
    missing: list[CostMissing]


def _number(value: object) -> float | None:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return float(value)


def run_cost(
    system: SystemSnapshot, result: Mapping[str, Any], variables: Mapping[str, object]
) -> CostFigures:
    """Return the cost of the run of `system` whose result is `result` (its overall time and
    energy per node) launched with `variables` (module docstring)."""
    overall_s = _number(result.get("overall_time_s")) or 0.0
    energy = result.get("energy_j") or {}
    per_component = energy.get("per_component") or {} if isinstance(energy, Mapping) else {}
    priced = any(
        key in hardware.attributes
        for hardware in system.hardware.values()
        for key in COST_ATTRIBUTES
    )
    per_node: dict[str, NodeCost] = {}
    missing: list[CostMissing] = []
    energy_total: float | None = None
    hardware_total: float | None = None
    for node in system.nodes.values():
        if node.group or node.hardware is None or node.hardware not in system.hardware:
            continue
        record = system.hardware[node.hardware]
        attributes = record.attributes
        lacking: list[str] = []
        energy_cost: float | None = None
        joules = _number(per_component.get(node.id)) or 0.0
        if "powerPrice" in attributes:
            energy_cost = joules / J_PER_KWH * attributes["powerPrice"]
            energy_total = (energy_total or 0.0) + energy_cost
        elif joules > 0:
            lacking.append("powerPrice")
        hardware_cost: float | None = None
        basis: str | None = None
        if "hourlyRental" in attributes:
            hardware_cost = node.count * overall_s / 3600 * attributes["hourlyRental"]
            basis = "rental"
        elif "purchasePrice" in attributes and "lifetime" in attributes:
            lifetime_s = attributes["lifetime"] * HOURS_PER_YEAR * 3600
            hardware_cost = node.count * overall_s / lifetime_s * attributes["purchasePrice"]
            basis = "purchase"
        elif "purchasePrice" in attributes:
            lacking.append("lifetime")
        else:
            lacking.append("hourlyRental or purchasePrice")
        if hardware_cost is not None:
            hardware_total = (hardware_total or 0.0) + hardware_cost
        per_node[node.id] = {"energy": energy_cost, "hardware": hardware_cost, "basis": basis}
        if lacking and priced:
            missing.append(
                {"node": node.id, "name": node.name or record.name, "attributes": lacking}
            )
    total = None
    if energy_total is not None or hardware_total is not None:
        total = (energy_total or 0.0) + (hardware_total or 0.0)
    per_unit: dict[str, float] = {}
    for variable, unit in UNIT_VARIABLES.items():
        amount = _number(variables.get(variable))
        if total is not None and amount is not None and amount > 0:
            per_unit[unit] = total / amount
    return {
        "energy": energy_total,
        "hardware": hardware_total,
        "total": total,
        "per_unit": per_unit,
        "per_node": per_node if priced else {},
        "missing": missing,
    }
