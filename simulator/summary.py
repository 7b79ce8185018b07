"""A run's summary: what `python -m simulator run` prints without `--json`.

The result's figures (totals, processes, components, memory hierarchy, flow links, engine
statistics) without its lists of entries, of which the summary shows the timeline's length.
A run asked for its summary alone returns this (`run_simulation(summary=True)`), so that a
sandbox child sends no timeline the command line would only count: a 1,000-process run's 20,000 timeline
entries are 64 % of its result's JSON. Light: the command line imports it (no `typing`, no
engine: simulator.cli.common says why).
"""

from __future__ import annotations

TYPE_CHECKING = False  # `typing.TYPE_CHECKING` without importing `typing` (mypy reads it)
if TYPE_CHECKING:
    from collections.abc import Mapping
    from typing import Any, TypedDict

    from simulator.cost import CostFigures
    from simulator.results import (
        ComponentRow,
        EnergyFigures,
        EngineStats,
        ProcessRow,
        ReliabilityFigures,
    )

    class _SummaryFigures(TypedDict):
        status: str
        overall_time_s: float
        energy_j: EnergyFigures
        reliability: ReliabilityFigures
        processes: list[ProcessRow]
        components: list[ComponentRow]
        stats: EngineStats
        timeline_entries: int  # the timeline's length
        timeline_dropped: int

    class ResultSummary(_SummaryFigures, total=False):
        """A run's summary (`result_summary`); `memory`, `links` and `collectives` as in
        Result; `energy_accounting` for results since issue 45: each node's energy, what it
        includes and the names of its estimated states (the rules' text stays in the whole
        result)."""

        memory: dict[str, Any]
        links: list[dict[str, Any]]
        energy_accounting: list[dict[str, Any]]
        cost: CostFigures
        failure_injection: dict[str, Any]
        uncertainty: dict[str, Any]
        collectives: list[dict[str, Any]]
        symmetry: dict[str, Any]


def result_summary(result: Mapping[str, Any]) -> ResultSummary:
    """Return the summary of `result` (simulator.results.Result): its figures, the timeline's
    length in place of the timeline, and none of its lists of entries (timeline, resource
    timeline, kernels, rooflines, power); a run's collective calls stay (one row each)."""
    summary: ResultSummary = {
        "status": result["status"],
        "overall_time_s": result["overall_time_s"],
        "energy_j": result["energy_j"],
        "reliability": result["reliability"],
        "processes": result["processes"],
        "components": result["components"],
        "stats": result["stats"],
        "timeline_entries": len(result["timeline"]),
        "timeline_dropped": result["timeline_dropped"],
    }
    if "memory" in result:
        summary["memory"] = result["memory"]
    if "energy_accounting" in result:
        summary["energy_accounting"] = [
            {
                "node": row["node"],
                "energy_j": row["energy_j"],
                "includes": row["includes"],
                "estimated": [{"attribute": e["attribute"]} for e in row["estimated"]],
            }
            for row in result["energy_accounting"]
        ]
    if "links" in result:
        summary["links"] = result["links"]
    if "cost" in result:
        summary["cost"] = result["cost"]
    if "failure_injection" in result:
        summary["failure_injection"] = result["failure_injection"]
    if "uncertainty" in result:
        summary["uncertainty"] = result["uncertainty"]
    if "collectives" in result:
        summary["collectives"] = result["collectives"]
    if "symmetry" in result:
        summary["symmetry"] = result["symmetry"]
    return summary
