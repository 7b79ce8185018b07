"""Result assembly: per-process and per-component figures, energy, reliability, timeline.

The result follows DESIGN.md "Result". Energy uses linear power states (SimGrid style,
MODELS.md 4a): a component instance draws its idle power for the whole run plus
(loaded - idle) x its load, where load = processes (or transfers) busy on it / its capacity,
capped at 1. Reliability is exp(-sum lambda_i t_i) over component instances, t_i being the
time the instance was busy (MODELS.md 6).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from time import perf_counter
from typing import TYPE_CHECKING, Any, TypedDict

from simulator import hotpath
from simulator.cost import CostFigures
from simulator.hotpath import KERNEL_MARKER
from simulator.models.energy import (
    ACCOUNTINGS,
    KERNEL_LOAD_000,
    WHOLE_RUN,
    PowerStates,
    kernel_load_energies,
    power_state_energies,
    whole_run_e1_energy,
)
from simulator.models.reliability import success_probability
from simulator.models.roofline import BOUND_CLASSES, Roof, kernel_inputs

# Timeline entries a run keeps by default (each of its two lists: processes, busy periods).
DEFAULT_TIMELINE_LIMIT = 10_000


class _EnergyFigures(TypedDict):
    total: float
    per_component: dict[str, float]


class EnergyFigures(_EnergyFigures, total=False):
    """The run's energy [J]: the total and each node's share (its instances summed), and the
    accounting that counted them (simulator.models.energy.ACCOUNTINGS; results stored before
    issue 45 lack the key: they counted idle power, 0 W where missing, over the whole run)."""

    accounting: str


class EstimatedState(TypedDict):
    """A power state a component's record lacked, and the rule that estimated it."""

    attribute: str
    rule: str


class EnergyAccountingRow(TypedDict):
    """What one node's energy includes (issue 45): its accounting, the power states it was
    charged by, the times they were charged over, and which of them were estimated."""

    node: str
    name: str
    hardware: str
    type: str
    accounting: str
    includes: str
    base_state: str  # "active idle" or "idle"
    base_w: float
    load_w: float
    idle_w: float
    active_idle_w: float | None
    off_w: float | None
    run_s: float
    loaded_s: float  # the instances' load integrals, summed
    kernel_model: str | None  # "E.1" or "load" for a GPU, else None
    blocks: float | None  # E.1's blocks, all kernels on the node
    block_energy_j: float | None
    energy_j: float
    estimated: list[EstimatedState]
    states_from: str  # "record" (its attributes) or "model" (the model's power function)


class AlternativeEnergy(TypedDict):
    """The run's energy under another named accounting (a paper's), never added to the
    whole-run figure nor compared with it."""

    accounting: str
    description: str
    total: float
    per_component: dict[str, float]


class PowerMissing(TypedDict):
    """A node whose energy rests on missing power attributes: their names (`powerIdle`
    missing counts 0 W idle, `powerConsumptionLoad` missing the idle power when loaded)."""

    node: str
    name: str
    hardware: str
    type: str
    attributes: list[str]


# The power attributes energy reads when the node's model has no `power` function.
POWER_ATTRIBUTES = ("powerIdle", "powerConsumptionLoad")


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


class KernelRow(TypedDict):
    """One GPU kernel of the timeline: what bounds it, its occupancy and its roofline point
    (simulator.models.roofline; the figures are None where the model or the GPU record does
    not give them)."""

    process: str
    node: str
    instance: int
    start_s: float
    duration_s: float
    bound: str | None  # the model's name for it (computationDetail's `bound`)
    bound_class: str | None  # latency, issue, memory, compute or launch
    occupancy: float | None  # warps per SM
    occupancy_fraction: float | None  # of the GPU's maxWarpsPerSM
    ops: float | None  # CUDA-core instructions, all threads
    bytes: float | None  # global-memory bytes
    intensity: float | None  # instructions per byte
    ops_per_s: float | None
    bytes_per_s: float | None
    roof_ops_per_s: float | None  # the roof at the kernel's intensity
    roof_fraction: float | None


class RooflineRow(TypedDict):
    """One GPU node's roofline from its hardware attributes."""

    node: str
    name: str
    hardware: str
    peak_ops_per_s: float  # CUDA-core instructions per second
    peak_bytes_per_s: float
    ridge_intensity: float  # instructions per byte where the two roofs meet
    # every compute ceiling (FP32, FP64, tensor by precision) in instructions per second, an
    # FMA one, and every memory roof (shared/L1, L2, DRAM) in bytes per second
    ceilings: list[dict[str, float | str]]
    memory_roofs: list[dict[str, float | str]]


class PowerSeries(TypedDict):
    """One component instance's power over time: steps [time s, watts], each level held until
    the next point's time, from the run's start to its end, from the timeline's intervals on it (its linear power state, MODELS.md 4a)."""

    node: str
    name: str
    instance: int
    points: list[list[float]]


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
    power_missing: list[PowerMissing]
    # issue 45: what each node's energy includes, and the papers' accountings beside it
    energy_accounting: list[EnergyAccountingRow]
    energy_alternatives: dict[str, AlternativeEnergy]
    kernels: list[KernelRow]  # issue 14: the run's GPU kernels, bounds and roofline points
    rooflines: list[RooflineRow]  # each GPU's roofline
    power: list[PowerSeries]  # each powered component instance's power over time
    # issue 38: nodes whose model ran outside the GPU architectures it was validated on
    # (simulator.model_validity.ModelWarning; results stored before lack the key)
    warnings: list[dict[str, Any]]


class Result(_FinishedRun, total=False):
    """What a finished run returns (DESIGN.md "Result"): the one shape every reader reads.

    `memory` (simulator.memsys.MemorySystem.result: levels, fabrics, coherence) is there
    only for a system with a memory hierarchy (a TypedDict's optional key: `total=False`).
    `kernels`, `rooflines` and `power` are written by every run since issue 14 (results
    stored before lack them); like the timeline, `kernels` and `power` cover the timeline's
    entries: a run with `timeline_dropped` > 0 had more. `collectives` (issue 40) is there
    only for a run that made a collective with an algorithm (`sim.allreduce`...): one row per
    call with its algorithm, bytes on the wire, algorithm and bus bandwidth.
    """

    memory: dict[str, Any]
    # per flow link (simulator.flows.FlowLink.result): only for a run that has flow links
    links: list[dict[str, Any]]
    cost: CostFigures  # simulator.cost (issue 44): results stored before lack it
    # simulator.failure_injection: only for a run that asked for it
    failure_injection: dict[str, Any]
    # simulator.uncertainty: only for a run that asked for a prediction interval
    uncertainty: dict[str, Any]
    collectives: list[dict[str, Any]]
    # simulator.symmetry: only for a run that asked for symmetric collectives
    symmetry: dict[str, Any]


class PythonUsage:
    """Busy time and load integral of one component instance, updated as work starts and stops.

    With a `track` (the run's Timeline), its busy periods also go to the resource timeline:
    a period is recorded once the instance starts again after a break (work that resumes at
    the very moment the last work stopped continues the period), or when the run ends
    (`close`).

    The reference of the C core's `Usage` (simulator/_speedups.c), which `Usage` names when
    the C core is in use: the sim API's hot path keeps it busy without a Python call.
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


if TYPE_CHECKING:
    Usage = PythonUsage
else:
    Usage = hotpath.choose(PythonUsage, "Usage")


class Timeline:
    """The run's Gantt entries, at most `limit` of them (the first ones); counts the rest.

    Two lists, each bounded by `limit`: the processes' intervals (`entries`) and the
    component instances' busy periods (`busy`, the resource rows, from `Usage`).

    A kept computation costs one dict (the C core's `SimCore` builds it in C when it has
    neither detail nor kernel: `add_computation`'s reference), and its GPU kernel's work is
    decided once per distinct params (`kernel_inputs`).
    """

    __slots__ = (
        "_kernels",
        "annotated",
        "busy",
        "busy_dropped",
        "dropped",
        "entries",
        "full",
        "limit",
    )

    def __init__(self, limit: int) -> None:
        self.limit = max(0, limit)
        self.entries: list[TimelineEntry] = []
        self.dropped = 0
        self.full = self.limit == 0  # no entry will be kept: callers may count drops directly
        self.busy: list[BusyInterval] = []
        self.busy_dropped = 0
        # Whether a kept computation carries a detail or a GPU kernel's work: without one,
        # and without a GPU node, the result has no kernel rows (`kernel_rows`).
        self.annotated = False
        # kernel_inputs(params) by its own names and values (floats): one dict per distinct
        # kernel
        self._kernels: dict[tuple[tuple[str, ...], tuple[float, ...]], dict[str, float]] = {}

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
        if kind == "compute" and ("detail" in extra or "kernel" in extra):
            self.annotated = True

    def add_computation(
        self,
        process: str,
        start_s: float,
        end_s: float,
        detail: dict[str, object] | None,
        kernel: dict[str, float] | None,
    ) -> None:
        """Record one computation of `process` (the timeline is not full: its callers count
        the drops), with the model's `detail` and its GPU kernel's work (`kernel_inputs`)
        when it has them; `add(process, "compute", ...)` in one dict, without keywords."""
        entry: dict[str, object] = {
            "process": process,
            "kind": "compute",
            "start_s": start_s,
            "end_s": end_s,
        }
        if detail is not None:
            entry["detail"] = detail
            self.annotated = True
        if kernel is not None:
            entry["kernel"] = kernel
            self.annotated = True
        entries = self.entries
        entries.append(entry)  # type: ignore[arg-type]
        self.full = len(entries) >= self.limit

    def kernel_inputs(self, params: Mapping[str, object]) -> dict[str, float] | None:
        """Return `kernel_inputs(params)` (simulator.models.roofline); the entries of kernels
        with the same inputs share one dict (a result is read, never written)."""
        if KERNEL_MARKER not in params:  # not a kernel's: the common case, at once
            return None
        inputs = kernel_inputs(params)
        if inputs is None:
            return None
        # its names and its values: the key of its items, without a pair per item
        return self._kernels.setdefault((tuple(inputs), tuple(inputs.values())), inputs)

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
    power_missing: tuple[str, ...] = ()  # POWER_ATTRIBUTES the energy lacked
    roof: Roof | None = None  # a GPU's roofline (simulator.models.roofline.gpu_roof)
    # the power states behind idle_w (the base power) and active_w (simulator.models.energy)
    states: PowerStates | None = None


@dataclass(slots=True)
class ProcessFigures:
    """Time one process spent computing, communicating and waiting, and when it finished."""

    label: str
    rank: int
    node: str
    instance: int
    name: str  # the process's name, e.g. `GPU[0]` (simulator.placement Slot.name)
    compute_s: float = 0.0
    comm_s: float = 0.0
    wait_s: float = 0.0
    finish_s: float = 0.0
    memory_s: float = 0.0  # in sim.memoryAccess (a computation's memory work is compute_s)


# ROW_COPIES: a run's result has a row per process and one per component instance, by the
# thousand; each is made as a copy of a row of the same keys and its values then set. A copy
# takes the template's key table as it is, where a dict display of ten keys builds a table
# and inserts every key into it. The template also fixes the keys' order (the JSON's).
_PROCESS_ROW: ProcessRow = {
    "process": "",
    "label": "",
    "rank": 0,
    "node": "",
    "instance": 0,
    "compute_s": 0.0,
    "comm_s": 0.0,
    "wait_s": 0.0,
    "memory_s": 0.0,
    "finish_s": 0.0,
}

# each key of a process row and the ProcessFigures attribute it holds, in the row's order: what
# the C core's `process_rows_of` (simulator/_speedups_spawn.c) sets, as assemble_result's loop
_PROCESS_ROW_FIELDS = tuple((key, "name" if key == "process" else key) for key in _PROCESS_ROW)


def _python_process_rows_of(*arguments: object) -> object:
    """Without the C core: NotImplemented, and assemble_result's own loop makes the rows."""
    return NotImplemented


_process_rows_of: Callable[..., Any] = hotpath.choose(_python_process_rows_of, "process_rows_of")


def assemble_result(
    *,
    overall_time_s: float,
    processes: Sequence[ProcessFigures],
    components: Iterable[tuple[ComponentFigures, Sequence[Usage]]],
    timeline: Timeline,
    events: int,
    wall_start: float,
    seed: int,
    memory: dict[str, Any] | None = None,
    warnings: Sequence[Mapping[str, Any]] = (),
    collectives: Sequence[Mapping[str, Any]] = (),
    links: list[dict[str, Any]] | None = None,
) -> Result:
    """Return the result (DESIGN.md "Result") of a finished run; `memory`, the memory
    hierarchy's figures (simulator.memsys), when the system has one; `warnings`, what the
    run's figures should be read with (simulator.model_validity); `links`, the flow links'
    figures (simulator.flows), when the run has any. `stats.wall_s` is the time from
    `wall_start` (time.perf_counter) to the result's completion: its assembly is part of
    the run the user waits for."""
    component_rows: list[ComponentRow] = []
    per_component: dict[str, float] = {}
    per_component_000: dict[str, float] = {}
    accounting_rows: list[EnergyAccountingRow] = []
    exposures: list[tuple[float, float]] = []
    power_missing: list[PowerMissing] = []
    total_energy = total_000 = 0.0
    component_list = list(components)
    # where each process ran (its node and instance by name), which E.1's blocks, the kernel
    # rows and the power series read: made once, when one of them reads the timeline
    where = (
        {p.name: (p.node, p.instance) for p in processes}
        if timeline.annotated or any(f.type == "GPU" or draws_power(f) for f, _ in component_list)
        else None
    )
    blocks_of = _kernel_blocks(timeline, processes, component_list, where)
    for figures, usages in component_list:
        node_energy = node_000 = 0.0
        states = figures.states or PowerStates(
            idle_w=figures.idle_w, base_w=figures.idle_w, base_state="idle", load_w=figures.active_w
        )
        loaded = [min(usage.load_s, overall_time_s) for usage in usages]
        e1 = figures.type == "GPU" and states.block_energy_j is not None and blocks_of is not None
        node_blocks: float | None = None
        if e1 and blocks_of is not None and states.block_energy_j is not None:
            per_instance = [blocks_of.get((figures.node, usage.instance), 0.0) for usage in usages]
            node_blocks = sum(per_instance)
            energies = [
                whole_run_e1_energy(
                    active_idle_w=figures.idle_w,
                    total_s=overall_time_s,
                    block_energy_j=states.block_energy_j,
                    blocks=blocks,
                )
                for blocks in per_instance
            ]
        else:
            energies = power_state_energies(
                idle_w=figures.idle_w,
                active_w=figures.active_w,
                total_s=overall_time_s,
                loaded_s=loaded,
            )
        node, name, hardware, kind = figures.node, figures.name, figures.hardware, figures.type
        idle_w, active_w, failure_rate = figures.idle_w, figures.active_w, figures.failure_rate
        loads_000 = kernel_load_energies(load_w=active_w, loaded_s=loaded)
        # each instance's row a copy of the node's (ROW_COPIES), its own four figures set
        node_row: ComponentRow = {
            "node": node,
            "name": name,
            "hardware": hardware,
            "type": kind,
            "instance": 0,
            "busy_s": 0.0,
            "utilisation": 0.0,
            "energy_j": 0.0,
            "power_idle_w": idle_w,
            "power_active_w": active_w,
            "failure_rate_per_s": failure_rate,
        }
        add_row, add_exposure = component_rows.append, exposures.append
        for usage, energy, load_000 in zip(usages, energies, loads_000, strict=True):
            busy_s = usage.busy_s
            node_energy += energy
            node_000 += load_000
            add_exposure((failure_rate, busy_s))
            row = node_row.copy()
            row["instance"] = usage.instance
            row["busy_s"] = busy_s
            row["utilisation"] = busy_s / overall_time_s if overall_time_s > 0 else 0.0
            row["energy_j"] = energy
            add_row(row)
        per_component[figures.node] = node_energy
        per_component_000[figures.node] = node_000
        total_energy += node_energy
        total_000 += node_000
        accounting_rows.append(
            _accounting_row(
                figures, states, overall_time_s, sum(loaded), node_energy, node_blocks, len(usages)
            )
        )
        if figures.power_missing:
            power_missing.append(
                {
                    "node": figures.node,
                    "name": figures.name,
                    "hardware": figures.hardware,
                    "type": figures.type,
                    "attributes": list(figures.power_missing),
                }
            )
    figures_of = {figures.node: figures for figures, _ in component_list}
    # the C core's rows where it is in use (NotImplemented where a record is not a plain
    # ProcessFigures), else this loop
    process_rows: list[ProcessRow] = _process_rows_of(
        processes, _PROCESS_ROW, ProcessFigures, _PROCESS_ROW_FIELDS
    )
    if process_rows is NotImplemented:
        process_rows = []
        add_process = process_rows.append
        for p in processes:
            process = _PROCESS_ROW.copy()  # ROW_COPIES
            process["process"] = p.name
            process["label"] = p.label
            process["rank"] = p.rank
            process["node"] = p.node
            process["instance"] = p.instance
            process["compute_s"] = p.compute_s
            process["comm_s"] = p.comm_s
            process["wait_s"] = p.wait_s
            process["memory_s"] = p.memory_s
            process["finish_s"] = p.finish_s
            add_process(process)
    # its wall time is taken last (below), once everything else of the result is made
    stats: EngineStats = {
        "events": events,
        "wall_s": 0.0,
        "events_per_s": 0.0,
        "processes": len(processes),
        "seed": seed,
    }
    result: Result = {
        "status": "finished",
        "overall_time_s": overall_time_s,
        "energy_j": {
            "total": total_energy,
            "per_component": per_component,
            "accounting": WHOLE_RUN,
        },
        "reliability": {"p_success": success_probability(exposures)},
        "processes": process_rows,
        "components": component_rows,
        "timeline": timeline.entries,
        "timeline_dropped": timeline.dropped,
        "resource_timeline": timeline.busy,
        "resource_timeline_dropped": timeline.busy_dropped,
        "stats": stats,
        "power_missing": power_missing,
        "energy_accounting": accounting_rows,
        "energy_alternatives": {
            KERNEL_LOAD_000: {
                "accounting": KERNEL_LOAD_000,
                "description": ACCOUNTINGS[KERNEL_LOAD_000],
                "total": total_000,
                "per_component": per_component_000,
            }
        },
        "kernels": kernel_rows(
            timeline.entries, process_rows, figures_of, annotated=timeline.annotated, where=where
        ),
        "rooflines": [
            {
                "node": f.node,
                "name": f.name,
                "hardware": f.hardware,
                "peak_ops_per_s": f.roof.peak_ops_per_s,
                "peak_bytes_per_s": f.roof.peak_bytes_per_s,
                "ridge_intensity": f.roof.ridge_intensity,
                "ceilings": [{"name": name, "ops_per_s": value} for name, value in f.roof.ceilings],
                "memory_roofs": [
                    {"name": name, "bytes_per_s": value} for name, value in f.roof.memory_roofs
                ],
            }
            for f in figures_of.values()
            if f.roof is not None
        ],
        "power": power_series(
            timeline.entries, process_rows, component_list, overall_time_s, where
        ),
        "warnings": [dict(warning) for warning in warnings],
    }
    if memory is not None:
        result["memory"] = memory
    if collectives:
        result["collectives"] = [
            {key: value for key, value in call.items() if not key.startswith("_")}
            for call in collectives
        ]
    if links is not None:
        result["links"] = links
    wall_s = perf_counter() - wall_start
    stats["wall_s"] = wall_s
    stats["events_per_s"] = events / wall_s if wall_s > 0 else 0.0
    return result


def _kernel_blocks(
    timeline: Timeline,
    processes: Sequence[ProcessFigures],
    components: Sequence[tuple[ComponentFigures, Sequence[Usage]]],
    where: Mapping[str, tuple[str, int]] | None = None,
) -> dict[tuple[str, int], float] | None:
    """Return the blocks of the kernels each GPU instance ran, from the timeline's kernel
    entries (their gridSize, else ceil(N / blockSize)), when a GPU's record gives E.1's energy
    per block; None when none does, or when the timeline dropped entries (the blocks of the
    dropped kernels are unknown, so E.1 is not used and the load power counts instead).
    `where`: each process's (node, instance) by name, when the caller made it already."""
    wanted = {
        figures.node
        for figures, _ in components
        if figures.type == "GPU"
        and figures.states is not None
        and figures.states.block_energy_j is not None
    }
    if not wanted or timeline.dropped:
        return None
    if where is None:
        where = {p.name: (p.node, p.instance) for p in processes}
    blocks: dict[tuple[str, int], float] = {}
    for entry in timeline.entries:
        extra: Mapping[str, Any] = entry
        inputs = extra.get("kernel")
        if entry["kind"] != "compute" or not inputs:
            continue
        key = where.get(entry["process"])
        if key is None or key[0] not in wanted:
            continue
        grid = inputs.get("gridSize")
        if grid is None:
            grid = math.ceil(inputs["N"] / inputs["blockSize"])
        blocks[key] = blocks.get(key, 0.0) + float(grid)
    return blocks


def _accounting_row(
    figures: ComponentFigures,
    states: PowerStates,
    run_s: float,
    loaded_s: float,
    energy_j: float,
    blocks: float | None,
    instances: int,
) -> EnergyAccountingRow:
    """Return what the node's whole-run energy includes (EnergyAccountingRow)."""
    base, load = figures.idle_w, figures.active_w
    each = f"{instances} instances, each: " if instances > 1 else ""
    kernel_model: str | None = "load" if figures.type == "GPU" else None
    if blocks is not None and states.block_energy_j is not None:
        kernel_model = "E.1"
        kernels = f" + E.1: {states.block_energy_j:.6g} J per block x {blocks:.6g} blocks"
    elif load != base:
        kernels = f" + (load {load:.6g} W - {base:.6g} W) x {loaded_s:.6g} s loaded"
    else:
        kernels = ""
    if base == 0 and load == 0:
        includes = "nothing: the record gives no power (0 W counted)"
    else:
        includes = f"{each}{states.base_state} {base:.6g} W x the run's {run_s:.6g} s{kernels}"
    return {
        "node": figures.node,
        "name": figures.name,
        "hardware": figures.hardware,
        "type": figures.type,
        "accounting": WHOLE_RUN,
        "includes": includes,
        "base_state": states.base_state,
        "base_w": base,
        "load_w": load,
        "idle_w": states.idle_w,
        "active_idle_w": states.active_idle_w,
        "off_w": states.off_w,
        "run_s": run_s,
        "loaded_s": loaded_s,
        "kernel_model": kernel_model,
        "blocks": blocks,
        "block_energy_j": states.block_energy_j if kernel_model == "E.1" else None,
        "energy_j": energy_j,
        "estimated": [{"attribute": a, "rule": r} for a, r in states.estimated],
        "states_from": states.source,
    }


def kernel_rows(
    entries: Sequence[TimelineEntry],
    processes: Sequence[ProcessRow],
    figures_of: Mapping[str, ComponentFigures],
    *,
    annotated: bool = True,
    where: Mapping[str, tuple[str, int]] | None = None,
) -> list[KernelRow]:
    """Return one row per GPU kernel among the timeline's computations: a computation on a
    GPU node, or one whose params are a kernel's (`kernel_inputs`) or whose model names a
    bound. `annotated` False says that no computation has a detail or a kernel's work
    (`Timeline.annotated`): then only a GPU node's can be a kernel, and without GPU nodes
    the entries are not read (a pass over them would be most of a small run's result).
    `where`: `process_places(processes)` when the caller made it already.

    A row's roofline figures are `kernel_point`'s, computed here in the same operations and
    order (a call and a named tuple per kernel otherwise; tests/simulator/test_results.py
    compares the two). The C core's `kernel_rows_of` runs this loop where it is in use."""
    on_gpus: set[str] = set()
    gpu_nodes = {node for node, figures in figures_of.items() if figures.type == "GPU"}
    if not gpu_nodes and not annotated:
        return []
    if gpu_nodes:
        if where is None:
            where = process_places(processes)
        on_gpus = {process for process, (node, _) in where.items() if node in gpu_nodes}
    if where is not None:  # the C core's loop where it is in use and every value is plain
        nodes_of = {node: _kernel_node(figures) for node, figures in figures_of.items()}
        made = _kernel_rows_of(
            entries, where, on_gpus, nodes_of, _NOT_A_NODE, BOUND_CLASSES, _KERNEL_ROW
        )
        if made is not NotImplemented:
            return made
    rows: list[KernelRow] = []
    add_row = rows.append
    # per node: its figures, whether it is a GPU, its roof and the roof's figures a row
    # reads, looked up once
    nodes: dict[str, _KernelNode] = {}
    for entry in entries:
        if entry["kind"] != "compute":
            continue
        extra: Mapping[str, Any] = entry
        process = entry["process"]
        if process not in on_gpus and "kernel" not in extra and "detail" not in extra:
            continue  # not a kernel (the test below, in short: it runs for every entry)
        # Where each process ran, made when a kernel is found or a GPU node exists (not for
        # the rows of a run without either, where making it would dominate the result's cost).
        if where is None:
            where = process_places(processes)
        node, instance = where.get(process, ("", 0))
        known = nodes.get(node)
        if known is None:
            known = nodes[node] = _kernel_node(figures_of.get(node))
        is_gpu, roof, warp_size, peak_ops, peak_bytes, max_warps = known
        detail = extra.get("detail") or {}
        inputs = extra.get("kernel")
        if not (is_gpu or inputs or "bound" in detail):
            continue
        start = entry["start_s"]
        duration = entry["end_s"] - start
        row = _KERNEL_ROW.copy()  # ROW_COPIES: every figure None until set
        row["process"] = process
        row["node"] = node
        row["instance"] = instance
        row["start_s"] = start
        row["duration_s"] = duration
        bound = detail.get("bound")
        if isinstance(bound, str):
            row["bound"] = bound
            row["bound_class"] = BOUND_CLASSES.get(bound)  # bound_class(bound)
        occupancy = detail.get("occupancy", (inputs or {}).get("occupancy"))
        if isinstance(occupancy, _NUMBERS):
            occupancy = row["occupancy"] = float(occupancy)
            if max_warps:
                row["occupancy_fraction"] = occupancy / max_warps
        if inputs and roof and not duration <= 0:  # kernel_point(inputs, duration, roof)
            block = inputs["blockSize"]
            grid = inputs.get("gridSize") or math.ceil(inputs["N"] / block)
            warps = grid * math.ceil(block / warp_size)  # W_L (4.2)
            row["ops"] = ops = warps * warp_size * inputs[KERNEL_MARKER]
            row["bytes"] = moved = warps * inputs["GMEMBytesTransferred"]
            row["intensity"] = intensity = ops / moved
            row["ops_per_s"] = ops_per_s = ops / duration
            row["bytes_per_s"] = moved / duration
            roof_ops = intensity * peak_bytes
            if not roof_ops < peak_ops:  # Roof.attainable's min(peak_ops, ...), without a call
                roof_ops = peak_ops
            row["roof_ops_per_s"] = roof_ops
            row["roof_fraction"] = ops_per_s / roof_ops
        add_row(row)
    return rows


# A kernel row's keys in the result's order, every figure None (ROW_COPIES).
_KERNEL_ROW: KernelRow = {
    "process": "",
    "node": "",
    "instance": 0,
    "start_s": 0.0,
    "duration_s": 0.0,
    "bound": None,
    "bound_class": None,
    "occupancy": None,
    "occupancy_fraction": None,
    "ops": None,
    "bytes": None,
    "intensity": None,
    "ops_per_s": None,
    "bytes_per_s": None,
    "roof_ops_per_s": None,
    "roof_fraction": None,
}

# A node's figures as kernel_rows reads them: whether it is a GPU, its roof (or None), and the
# roof's warp size, peaks and maxWarpsPerSM (or None)
_KernelNode = tuple[bool, Roof | None, float, float, float, float | None]


def _kernel_node(figures: ComponentFigures | None) -> _KernelNode:
    """Return what kernel_rows reads of a node's `figures` (None: not a component)."""
    roof = figures.roof if figures is not None else None
    is_gpu = figures is not None and figures.type == "GPU"
    if roof is None:
        return is_gpu, None, 0.0, 0.0, 0.0, None
    return (
        is_gpu,
        roof,
        roof.warp_size,
        roof.peak_ops_per_s,
        roof.peak_bytes_per_s,
        roof.max_warps_per_sm,
    )


# What a kernel row's occupancy may be (a tuple: `int | float` makes a union at every row).
_NUMBERS = (int, float)
# what kernel_rows reads of a node that is not a component (`_kernel_node(None)`)
_NOT_A_NODE = _kernel_node(None)


def _python_kernel_rows_of(*arguments: object) -> object:
    """Without the C core: NotImplemented, and kernel_rows' own loop makes the rows."""
    return NotImplemented


# kernel_rows' loop: the C core's `kernel_rows_of` (simulator/_speedups_kernel_rows.c) where it
# is in use (NotImplemented where a value is not a plain one), else kernel_rows' own loop
_kernel_rows_of: Callable[..., Any] = hotpath.choose(_python_kernel_rows_of, "kernel_rows_of")


def process_places(processes: Sequence[ProcessRow]) -> dict[str, tuple[str, int]]:
    """Return where each process of the result's rows ran: its (node, instance) by name."""
    return {p["process"]: (p["node"], p["instance"]) for p in processes}


# Nodes whose busy intervals the memory system keeps (simulator.memsys), not the timeline.
_MEMORY_TYPES = frozenset({"MEMORY", "CACHE", "FABRIC"})


def draws_power(figures: ComponentFigures) -> bool:
    """Whether the node's instances have a power series: power drawn, and not a memory
    node's (the memory system keeps its busy intervals, not the timeline)."""
    return figures.type not in _MEMORY_TYPES and (figures.idle_w != 0 or figures.active_w != 0)


def power_series(
    entries: Sequence[TimelineEntry],
    processes: Sequence[ProcessRow],
    components: Sequence[tuple[ComponentFigures, Sequence[Usage]]],
    overall_time_s: float,
    where: Mapping[str, tuple[str, int]] | None = None,
) -> list[PowerSeries]:
    """Return the power over time of every component instance that draws power: idle power
    plus (loaded - idle) x its load, the load being the computations and transfers the
    timeline puts on it over its capacity (the same rule as its energy; the series' integral
    is its energy_j when no timeline entry was dropped, except for a GPU whose kernels E.1
    counts: its series shows the load power over its kernels, W.1 of docs/energy.md).
    `where`: `process_places(processes)` when the caller made it already."""
    drawing = [(figures, usages) for figures, usages in components if draws_power(figures)]
    # Only the instances that draw power need the timeline's steps: none, no pass over it
    # (a pass over a large timeline is a large part of its result, issue 16).
    wanted = {(figures.node, usage.instance) for figures, usages in drawing for usage in usages}
    if not wanted:
        return []
    if where is None:
        where = process_places(processes)
    series = _power_series_of(entries, where, drawing, wanted, overall_time_s)
    if series is NotImplemented:  # a value the C core leaves to Python
        series = power_series_of(entries, where, drawing, wanted, overall_time_s)
    return series


def power_series_of(
    entries: Sequence[TimelineEntry],
    where: Mapping[str, tuple[str, int]],
    drawing: Sequence[tuple[ComponentFigures, Sequence[Usage]]],
    wanted: set[tuple[str, int]],
    overall_time_s: float,
) -> list[PowerSeries]:
    """Return `power_series`' series of the nodes of `drawing` (those that draw power, with
    their usages), `wanted` their (node, instance) pairs, from the timeline's `entries`. The
    C core's `power_series_of` (simulator/_speedups_power.c) does the same in C where every
    value is a plain one, and gives NotImplemented where one is not."""
    # a transfer on a node that draws no power (a bus, a link without a record's power) is
    # passed over by its node, before its key is made
    drawing_nodes = {figures.node for figures, _ in drawing}
    changes: dict[tuple[str, int], list[tuple[float, int]]] = {}
    for entry in entries:
        kind = entry["kind"]
        if kind == "compute":
            key = where.get(entry["process"])
        elif kind == "transfer":
            extra: Mapping[str, Any] = entry
            node = extra.get("node")  # None when the transfer charged no node
            if node not in drawing_nodes:
                continue
            key = (node, int(extra.get("instance", 0)))
        else:
            continue
        if key not in wanted:
            continue
        start, end = entry["start_s"], entry["end_s"]
        if end <= start:
            continue
        steps = changes.get(key)
        if steps is None:
            changes[key] = [(start, 1), (end, -1)]
        else:
            steps.append((start, 1))
            steps.append((end, -1))
    series: list[PowerSeries] = []
    add_series = series.append
    for figures, usages in drawing:
        node, name, idle_w = figures.node, figures.name, figures.idle_w
        span_w = figures.active_w - idle_w
        for usage in usages:
            instance = usage.instance
            last = [0.0, idle_w]
            points = [last]
            steps = changes.get((node, instance))
            if steps:
                capacity = usage.capacity
                active = 0
                steps.sort()  # the list is this function's own: sorted in place, not copied
                for time, step in steps:
                    active += step
                    loaded = active if active < capacity else capacity  # min(), without a call
                    watts = idle_w + span_w * (loaded / capacity)
                    if last[0] == time:
                        last[1] = watts
                    elif last[1] != watts:
                        last = [time, watts]
                        points.append(last)
            if last[0] < overall_time_s:  # the level held to the end of the run
                points.append([overall_time_s, last[1]])
            add_series({"node": node, "name": name, "instance": instance, "points": points})
    return series


# power_series_of: the C core's where it is in use (NotImplemented for a value it leaves to
# Python), else the Python reference
_power_series_of: Callable[..., Any] = hotpath.choose(power_series_of, "power_series_of")


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
