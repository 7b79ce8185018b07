"""Result assembly: per-process and per-component figures, energy, reliability, timeline.

The result follows DESIGN.md "Result". Energy uses linear power states (SimGrid style,
MODELS.md 4a): a component instance draws its idle power for the whole run plus
(loaded - idle) x its load, where load = processes (or transfers) busy on it / its capacity,
capped at 1. Reliability is exp(-sum lambda_i t_i) over component instances, t_i being the
time the instance was busy (MODELS.md 6).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, TypedDict

from simulator.models.energy import power_state_energy
from simulator.models.reliability import success_probability

# Timeline entries a run keeps by default (each of its two lists: processes, busy periods).
DEFAULT_TIMELINE_LIMIT = 10_000


class EnergyFigures(TypedDict):
    """The run's energy [J]: the total and each node's share (its instances summed)."""

    total: float
    per_component: dict[str, float]


class ReliabilityFigures(TypedDict):
    """The probability that no component instance failed during the run (MODELS.md 6)."""

    p_success: float


class ProcessRow(TypedDict):
    """One simulated process: where it ran and how its time was spent [s]."""

    process: str  # "label[rank]"
    label: str
    rank: int
    node: str
    instance: int
    compute_s: float
    comm_s: float
    wait_s: float
    memory_s: float
    finish_s: float


class ComponentRow(TypedDict):
    """One component instance: its busy time, utilisation, energy and the figures behind it."""

    node: str
    name: str
    hardware: str
    type: str
    instance: int
    busy_s: float
    utilisation: float
    energy_j: float
    power_idle_w: float
    power_active_w: float
    failure_rate_per_s: float


class TimelineEntry(TypedDict):
    """One Gantt interval; transfers, computations and memory calls add their own keys
    (`node`, `instance`, `size`, `detail`...)."""

    process: str
    kind: str
    start_s: float
    end_s: float


class BusyInterval(TypedDict):
    """One period during which a component instance (a GPU computing, a link carrying a
    message, a memory level serving) was busy without a break: the resource rows of the
    Gantt. Its node's name and type are in the result's `components`."""

    node: str
    instance: int
    start_s: float
    end_s: float


class EngineStats(TypedDict):
    """The engine's figures for the run."""

    events: int
    wall_s: float
    events_per_s: float
    processes: int
    seed: int


class _FinishedRun(TypedDict):
    status: str  # "finished"
    overall_time_s: float
    energy_j: EnergyFigures
    reliability: ReliabilityFigures
    processes: list[ProcessRow]
    components: list[ComponentRow]
    timeline: list[TimelineEntry]
    timeline_dropped: int
    resource_timeline: list[BusyInterval]
    resource_timeline_dropped: int
    stats: EngineStats


class Result(_FinishedRun, total=False):
    """What a finished run returns (DESIGN.md "Result"): the one shape every reader reads.

    `memory` (simulator.memsys.MemorySystem.result: levels, fabrics, coherence) is there
    only for a system with a memory hierarchy (a TypedDict's optional key: `total=False`).
    """

    memory: dict[str, Any]


class Usage:
    """Busy time and load integral of one component instance, updated as work starts and stops.

    With a `track` (the run's Timeline), its busy periods also go to the resource timeline:
    a period is recorded once the instance starts again after a break (work that resumes at
    the very moment the last work stopped continues the period), or when the run ends
    (`close`).
    """

    __slots__ = (
        "_busy_from",
        "_busy_to",
        "_since",
        "active",
        "busy_s",
        "capacity",
        "instance",
        "load_s",
        "node",
        "track",
    )

    def __init__(self, node: str, instance: int, capacity: int) -> None:
        self.node = node
        self.instance = instance
        self.capacity = max(1, capacity)
        self.active = 0
        self.busy_s = 0.0
        self.load_s = 0.0
        self._since = 0.0
        self.track: Timeline | None = None
        self._busy_from = 0.0  # the busy period not recorded yet: [_busy_from, _busy_to]
        self._busy_to = 0.0

    def start(self, now: float) -> None:
        """Record that one more process or transfer keeps the instance busy from `now`."""
        active = self.active
        if active:  # the busy time and load integral up to now (inlined: once per computation)
            elapsed = now - self._since
            self.busy_s += elapsed
            self.load_s += elapsed * (min(active, self.capacity) / self.capacity)
        elif self.track is not None and now > self._busy_to:  # after a break: a new period
            self._record_busy()
            self._busy_from = now
        self._since = now
        self.active = active + 1

    def stop(self, now: float) -> None:
        """Record that one process or transfer stopped using the instance at `now`."""
        active = self.active
        elapsed = now - self._since
        self.busy_s += elapsed
        self.load_s += elapsed * (min(active, self.capacity) / self.capacity)
        self._since = now
        self.active = active - 1
        if active == 1:
            self._busy_to = now

    def close(self, now: float) -> None:
        """Record the last busy period on the track at the end of the run (`now`)."""
        if self.active:
            self._busy_to = now
        self._record_busy()
        self._busy_from = self._busy_to

    def _record_busy(self) -> None:
        if self.track is not None and self._busy_to > self._busy_from:
            self.track.add_busy(self.node, self.instance, self._busy_from, self._busy_to)


class Timeline:
    """The run's Gantt entries, at most `limit` of them (the first ones); counts the rest.

    Two lists, each bounded by `limit`: the processes' intervals (`entries`) and the
    component instances' busy periods (`busy`, the resource rows, from `Usage`).
    """

    __slots__ = ("busy", "busy_dropped", "dropped", "entries", "full", "limit")

    def __init__(self, limit: int) -> None:
        self.limit = max(0, limit)
        self.entries: list[TimelineEntry] = []
        self.dropped = 0
        self.full = self.limit == 0  # no entry will be kept: callers may count drops directly
        self.busy: list[BusyInterval] = []
        self.busy_dropped = 0

    def add(self, process: str, kind: str, start_s: float, end_s: float, **extra: Any) -> None:
        """Record one interval of `kind` ("compute", "transfer", "receive", ...) for `process`."""
        if self.full:
            self.dropped += 1
            return
        entries = self.entries
        entries.append(
            {"process": process, "kind": kind, "start_s": start_s, "end_s": end_s, **extra}  # type: ignore[typeddict-item]
        )
        self.full = len(entries) >= self.limit

    def add_busy(self, node: str, instance: int, start_s: float, end_s: float) -> None:
        """Record one busy period of a component instance."""
        if len(self.busy) >= self.limit:
            self.busy_dropped += 1
            return
        self.busy.append({"node": node, "instance": instance, "start_s": start_s, "end_s": end_s})


@dataclass(frozen=True, slots=True)
class ComponentFigures:
    """What the result needs to know about one node besides its instances' usage."""

    node: str
    name: str
    hardware: str
    type: str
    idle_w: float
    active_w: float
    failure_rate: float


@dataclass(slots=True)
class ProcessFigures:
    """Time one process spent computing, communicating and waiting, and when it finished."""

    label: str
    rank: int
    node: str
    instance: int
    compute_s: float = 0.0
    comm_s: float = 0.0
    wait_s: float = 0.0
    finish_s: float = 0.0
    memory_s: float = 0.0  # in sim.memoryAccess (a computation's memory work is compute_s)


def assemble_result(
    *,
    overall_time_s: float,
    processes: Sequence[ProcessFigures],
    components: Iterable[tuple[ComponentFigures, Sequence[Usage]]],
    timeline: Timeline,
    events: int,
    wall_s: float,
    seed: int,
    memory: dict[str, Any] | None = None,
) -> Result:
    """Return the result (DESIGN.md "Result") of a finished run; `memory`, the memory
    hierarchy's figures (simulator.memsys), when the system has one."""
    component_rows: list[ComponentRow] = []
    per_component: dict[str, float] = {}
    exposures: list[tuple[float, float]] = []
    total_energy = 0.0
    for figures, usages in components:
        node_energy = 0.0
        for usage in usages:
            loaded_s = min(usage.load_s, overall_time_s)
            energy = power_state_energy(
                idle_w=figures.idle_w,
                active_w=figures.active_w,
                total_s=overall_time_s,
                loaded_s=loaded_s,
            )
            node_energy += energy
            exposures.append((figures.failure_rate, usage.busy_s))
            component_rows.append(
                {
                    "node": figures.node,
                    "name": figures.name,
                    "hardware": figures.hardware,
                    "type": figures.type,
                    "instance": usage.instance,
                    "busy_s": usage.busy_s,
                    "utilisation": usage.busy_s / overall_time_s if overall_time_s > 0 else 0.0,
                    "energy_j": energy,
                    "power_idle_w": figures.idle_w,
                    "power_active_w": figures.active_w,
                    "failure_rate_per_s": figures.failure_rate,
                }
            )
        per_component[figures.node] = node_energy
        total_energy += node_energy
    result: Result = {
        "status": "finished",
        "overall_time_s": overall_time_s,
        "energy_j": {"total": total_energy, "per_component": per_component},
        "reliability": {"p_success": success_probability(exposures)},
        "processes": [
            {
                "process": f"{p.label}[{p.rank}]",
                "label": p.label,
                "rank": p.rank,
                "node": p.node,
                "instance": p.instance,
                "compute_s": p.compute_s,
                "comm_s": p.comm_s,
                "wait_s": p.wait_s,
                "memory_s": p.memory_s,
                "finish_s": p.finish_s,
            }
            for p in processes
        ],
        "components": component_rows,
        "timeline": timeline.entries,
        "timeline_dropped": timeline.dropped,
        "resource_timeline": timeline.busy,
        "resource_timeline_dropped": timeline.busy_dropped,
        "stats": {
            "events": events,
            "wall_s": wall_s,
            "events_per_s": events / wall_s if wall_s > 0 else 0.0,
            "processes": len(processes),
            "seed": seed,
        },
    }
    if memory is not None:
        result["memory"] = memory
    return result


MEMORY_COLUMNS = (
    "node",
    "name",
    "hardware",
    "type",
    "instance",
    "accesses",
    "hits",
    "misses",
    "hit_ratio",
    "evictions",
    "writebacks",
    "invalidations",
    "messages",
    "bytes",
    "hops",
    "busy_s",
    "utilisation",
)


def memory_rows(result: Mapping[str, Any]) -> tuple[tuple[str, ...], list[dict[str, Any]]]:
    """Return (columns, rows) of a result's memory figures for a CSV download: one row per
    cache, memory and fabric instance, and one per coherence message type (type
    "COHERENCE", the message's name in `name`, its count in `messages`). No memory
    hierarchy: no rows."""
    memory = result.get("memory")
    rows: list[dict[str, Any]] = []
    if not isinstance(memory, Mapping):
        return MEMORY_COLUMNS, rows
    for level in memory.get("levels", []):
        rows.append({column: level.get(column) for column in MEMORY_COLUMNS})
    for fabric in memory.get("fabrics", []):
        row = {column: fabric.get(column) for column in MEMORY_COLUMNS}
        row["type"] = "FABRIC"
        rows.append(row)
    coherence = memory.get("coherence", {})
    for name, count in coherence.get("messages", {}).items():
        rows.append(
            {
                **dict.fromkeys(MEMORY_COLUMNS),
                "type": "COHERENCE",
                "name": name,
                "hardware": coherence.get("protocol"),
                "messages": count,
            }
        )
    return MEMORY_COLUMNS, rows
