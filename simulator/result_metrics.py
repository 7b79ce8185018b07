"""A result's scalar figures, one flat mapping per run, for sweep tables, charts and CSVs.

`result_metrics` reads a `Result` (simulator.results; also one stored before a key was added)
and returns every figure a sweep plots or downloads under a stable column name:

- `overall_time_s`, `energy_j` (total), `p_success`, the engine's `events` and `wall_s`;
- what the run cost (simulator.cost, docs/cost.md): `cost_usd`, `energy_cost_usd`,
  `hardware_cost_usd`, `cost_per_step_usd`, `cost_per_token_usd` (None where not priced);
- power: `power_w`, the run's mean power (energy over time), and `gpu_power_w`, the highest
  mean power of any one GPU instance (its energy over the run's time), so that a constraint
  such as "at most 700 W per GPU" reads one figure;
- process time by phase, summed over the run's processes (process-seconds, so that phases
  running in parallel add up): `kernel_s` (computing on GPU nodes; None without a GPU node),
  `cpu_compute_s` (computing on the other nodes), `compute_s` (both), `transfer_s`
  (receiving a message while it was in flight), `wait_s` (waiting: for a message not yet
  sent, at a barrier), `memory_s` (in memory calls);
- `link_busy_s`: the busy time of the network links' instances, summed;
- per node (its id, as in `energy_j.per_component`): `energy_j.<node>` and `busy_s.<node>`;
- `power_missing`: the nodes whose energy rests on missing power attributes, as text
  ("GeForce GTX 970 (gpu0): powerIdle"), empty when none;
- `energy_accounting`: how `energy_j` was counted (simulator.models.energy.ACCOUNTINGS:
  "whole_run"), "" for a result stored before issue 45 (which counted idle power, 0 W where
  missing, over the run: not comparable with "whole_run"); `energy_estimated`: the nodes
  whose power states were estimated, as text ("B200 SXM 180GB (gpu0): powerIdle,
  powerActiveIdle"), empty when none;
- the prediction interval of a run that asked for one (simulator.uncertainty):
  `overall_time_s_median`, `overall_time_s_low`, `overall_time_s_high` and the same of
  `energy_j` (the 5th and 95th percentiles); present only in such a run's figures, with
  `cost_usd_median`, `_low`, `_high` and those of `cost_per_step_usd` and
  `cost_per_token_usd` where the run is priced (the same samples' costs,
  COST_INTERVAL_METRICS); `interval_unmeasured`: the GPU records the interval has no
  spread for and no spec-mode basis, as text ("GeForce GTX 970: no interval: no
  measurement, ..."), empty when none; `interval_from_spec`: the GPU records whose interval
  is the model's spec-mode error on other GPUs, as text ("B200 SXM 180GB: from spec-mode
  error on other GPUs (H100 SXM5 80GB, H200 SXM 141GB), ..., not a B200 SXM 180GB
  measurement"), empty when none;
- `model_warnings`: the nodes whose model ran outside the GPU architectures it was validated
  on (simulator.model_validity), as text ("Volkov GPU on H100 SXM5 80GB (gpu0, Hopper):
  validated on Maxwell and Pascal"), empty when none.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

__all__ = [
    "COST_INTERVAL_METRICS",
    "INTERVAL_METRICS",
    "PHASES",
    "SUMMARY_METRICS",
    "energy_estimated_text",
    "gpu_names",
    "model_warnings_text",
    "power_missing_text",
    "result_metrics",
]

# The phases of process time, in the order a stacked chart piles them up.
PHASES = ("kernel_s", "cpu_compute_s", "transfer_s", "memory_s", "wait_s")
# A prediction interval's figures (simulator.uncertainty), present when the run asked for one.
INTERVAL_METRICS = tuple(
    f"{figure}_{end}"
    for figure in ("overall_time_s", "energy_j")
    for end in ("median", "low", "high")
)
# The interval of the cost (the same samples' costs), present when the run asked for an
# interval and its records are priced; per step or token where the run declared them.
COST_INTERVAL_METRICS = tuple(
    f"{figure}_{end}"
    for figure in ("cost_usd", "cost_per_step_usd", "cost_per_token_usd")
    for end in ("median", "low", "high")
)
# The run-wide figures, in column order; per-node columns follow them.
SUMMARY_METRICS = (
    "overall_time_s",
    "kernel_s",
    "cpu_compute_s",
    "compute_s",
    "transfer_s",
    "wait_s",
    "memory_s",
    "link_busy_s",
    "energy_j",
    "p_success",
    "events",
    "wall_s",
    "cost_usd",
    "energy_cost_usd",
    "hardware_cost_usd",
    "cost_per_step_usd",
    "cost_per_token_usd",
    "power_w",
    "gpu_power_w",
)

Metric = float | int | str | None


def _number(value: object) -> float | None:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return float(value)


def power_missing_text(entries: object) -> str:
    """Return the power attributes the result says were missing, as one line of text:
    "<name> (<node>): <attribute>, <attribute>; ..." ("" when none or not reported)."""
    if not isinstance(entries, Sequence) or isinstance(entries, str):
        return ""
    parts = []
    for entry in entries:
        if not isinstance(entry, Mapping):
            continue
        node = str(entry.get("node", ""))
        name = str(entry.get("name") or node)
        label = name if name == node else f"{name} ({node})"
        parts.append(f"{label}: {', '.join(str(a) for a in entry.get('attributes', []))}")
    return "; ".join(parts)


def energy_estimated_text(rows: object) -> str:
    """Return the nodes whose power states the result says were estimated, as one line:
    "<name> (<node>): <attribute>, <attribute>; ..." ("" when none or not reported)."""
    if not isinstance(rows, Sequence) or isinstance(rows, str):
        return ""
    parts = []
    for row in rows:
        if not isinstance(row, Mapping) or not row.get("estimated"):
            continue
        node = str(row.get("node", ""))
        name = str(row.get("name") or node)
        label = name if name == node else f"{name} ({node})"
        attributes = [str(e.get("attribute")) for e in row["estimated"] if isinstance(e, Mapping)]
        parts.append(f"{label}: {', '.join(attributes)}")
    return "; ".join(parts)


def model_warnings_text(entries: object) -> str:
    """Return the result's architecture warnings as one line of text: "<model> on <hardware>
    (<node>, <architecture>): validated on <families>; ..." ("" when none or not reported)."""
    if not isinstance(entries, Sequence) or isinstance(entries, str):
        return ""
    parts = []
    for entry in entries:
        if not isinstance(entry, Mapping) or entry.get("code") != "architecture":
            continue
        family = entry.get("architecture") or "unknown architecture"
        validated = " and ".join(str(name) for name in entry.get("validated", []))
        parts.append(
            f"{entry.get('model')} on {entry.get('hardware')} ({entry.get('node')}, {family}): "
            f"validated on {validated}"
        )
    return "; ".join(parts)


def gpu_names(snapshot: object) -> list[str]:
    """Return the names of the GPU hardware a snapshot's nodes run on, each once, in node
    order: the GPUs a run of this snapshot actually uses."""
    if not isinstance(snapshot, Mapping):
        return []
    hardware = snapshot.get("hardware")
    nodes = snapshot.get("nodes")
    if not isinstance(hardware, Mapping) or not isinstance(nodes, Sequence):
        return []
    names: list[str] = []
    for node in nodes:
        if not isinstance(node, Mapping) or node.get("group"):
            continue
        record = hardware.get(node.get("hardware"))
        if isinstance(record, Mapping) and record.get("type") == "GPU":
            name = str(record.get("name") or node.get("hardware"))
            if name not in names:
                names.append(name)
    return names


def result_metrics(result: Mapping[str, Any]) -> dict[str, Metric]:
    """Return the result's scalar figures under their column names (module docstring);
    a figure the result does not hold is None."""
    processes = [p for p in result.get("processes") or [] if isinstance(p, Mapping)]
    components = [c for c in result.get("components") or [] if isinstance(c, Mapping)]
    node_types = {c.get("node"): c.get("type") for c in components}

    def total(key: str, rows: Sequence[Mapping[str, Any]]) -> float:
        return sum(_number(row.get(key)) or 0.0 for row in rows)

    on_gpu = [p for p in processes if node_types.get(p.get("node")) == "GPU"]
    elsewhere = [p for p in processes if node_types.get(p.get("node")) != "GPU"]
    has_gpu = "GPU" in node_types.values()
    energy = result.get("energy_j")
    stats = result.get("stats") or {}
    reliability = result.get("reliability") or {}
    metrics: dict[str, Metric] = {
        "overall_time_s": _number(result.get("overall_time_s")),
        "kernel_s": total("compute_s", on_gpu) if has_gpu else None,
        "cpu_compute_s": total("compute_s", elsewhere) if processes else None,
        "compute_s": total("compute_s", processes) if processes else None,
        "transfer_s": total("comm_s", processes) if processes else None,
        "wait_s": total("wait_s", processes) if processes else None,
        "memory_s": total("memory_s", processes) if processes else None,
        "link_busy_s": total("busy_s", [c for c in components if c.get("type") == "NETWORK"])
        if components
        else None,
        "energy_j": _number(energy.get("total")) if isinstance(energy, Mapping) else None,
        "p_success": _number(reliability.get("p_success")),
        "events": _number(stats.get("events")),
        "wall_s": _number(stats.get("wall_s")),
    }
    metrics.update(_cost_and_power(result, components, metrics))
    per_node_energy = energy.get("per_component", {}) if isinstance(energy, Mapping) else {}
    busy: dict[str, float] = {}
    for component in components:
        node = str(component.get("node"))
        busy[node] = busy.get(node, 0.0) + (_number(component.get("busy_s")) or 0.0)
    # In the components' order (the system's nodes): a stored mapping's keys may be sorted.
    for node in dict.fromkeys([*busy, *per_node_energy]):
        metrics[f"energy_j.{node}"] = _number(per_node_energy.get(node))
        metrics[f"busy_s.{node}"] = busy.get(node)
    metrics["power_missing"] = power_missing_text(result.get("power_missing"))
    accounting = energy.get("accounting") if isinstance(energy, Mapping) else None
    metrics["energy_accounting"] = accounting if isinstance(accounting, str) else ""
    metrics["energy_estimated"] = energy_estimated_text(result.get("energy_accounting"))
    metrics["model_warnings"] = model_warnings_text(result.get("warnings"))
    interval = result.get("uncertainty")
    if isinstance(interval, Mapping):
        for figure in ("overall_time_s", "energy_j"):
            ends = interval.get(figure)
            ends = ends if isinstance(ends, Mapping) else {}
            for end in ("median", "low", "high"):
                metrics[f"{figure}_{end}"] = _number(ends.get(end))
        costs = {"cost_usd": interval.get("cost_usd")}
        per_unit = interval.get("cost_per_unit")
        for unit, ends in per_unit.items() if isinstance(per_unit, Mapping) else ():
            costs[f"cost_per_{unit}_usd"] = ends
        for figure, ends in costs.items():
            if isinstance(ends, Mapping):
                for end in ("median", "low", "high"):
                    metrics[f"{figure}_{end}"] = _number(ends.get(end))
        unmeasured = interval.get("unmeasured") or []
        metrics["interval_unmeasured"] = "; ".join(
            f"{item.get('record')}: {item.get('label')}"
            for item in unmeasured
            if isinstance(item, Mapping)
        )
        from_spec = interval.get("from_spec_mode") or []
        metrics["interval_from_spec"] = "; ".join(
            f"{item.get('record')}: {item.get('label')}"
            for item in from_spec
            if isinstance(item, Mapping)
        )
    return metrics


def _cost_and_power(
    result: Mapping[str, Any],
    components: Sequence[Mapping[str, Any]],
    metrics: Mapping[str, Metric],
) -> dict[str, Metric]:
    """Return the cost and power figures (module docstring) of `result`, whose run-wide
    `metrics` are already read."""
    cost = result.get("cost")
    cost = cost if isinstance(cost, Mapping) else {}
    per_unit = cost.get("per_unit")
    per_unit = per_unit if isinstance(per_unit, Mapping) else {}
    time_s = metrics["overall_time_s"]
    energy_j = metrics["energy_j"]
    timed = isinstance(time_s, float) and time_s > 0
    gpu_watts = [
        (_number(c.get("energy_j")) or 0.0) / time_s
        for c in components
        if c.get("type") == "GPU" and timed and isinstance(time_s, float)
    ]
    return {
        "cost_usd": _number(cost.get("total")),
        "energy_cost_usd": _number(cost.get("energy")),
        "hardware_cost_usd": _number(cost.get("hardware")),
        "cost_per_step_usd": _number(per_unit.get("step")),
        "cost_per_token_usd": _number(per_unit.get("token")),
        "power_w": energy_j / time_s
        if timed and isinstance(energy_j, float) and isinstance(time_s, float)
        else None,
        "gpu_power_w": max(gpu_watts) if gpu_watts else None,
    }
