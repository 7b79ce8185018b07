"""The one switch between the simulator's C cores and their Python references.

Every hot loop of the simulator exists twice: a Python reference, which states the rules and
runs everywhere, and a C copy that gives the same results faster where it is built
(`python -m simulator.build_speedups`, which `./studio setup` runs):

    C module                   what it serves                      Python reference
    simulator._speedups        the engine's core, mailboxes,       simulator.engine, api,
                               FIFOs, sim calls, messages, usage,  platform, results,
                               the attribute and multiply guards,  sandbox.restricted,
                               a model's program of doubles,       models.js_program,
                               the flow network's max-min          flows.solve_from and
                               re-solves, a run's process records  solve_uniform, runner
                               and sims, their spawn and rows
    simulator._cachesim        the cache chain and tree            simulator.models.cache,
                                                                   models.coherence
    simulator._v8results       V8's results handed back            simulator.shallow

This module alone decides which runs, as markupsafe and msgpack do: it reads
PARASIM_PURE_PYTHON once (set: the Python references everywhere) and imports each C module
that is built and usable. A module with a C core names its Python reference and asks
`choose` (or `choose_in`) for what to build on; none reads the variable or tests whether a C
module exists. Each C part names its Python reference and its differential test at its top.

It also holds what the C core and the Python references must agree on, defined once:
`NAMES`, every slot, method and key the C core touches, which it receives at start-up
(tests/simulator/test_name_contract.py checks each against its class); `TYPES`, the classes
it recognises, handed over by the modules that define them (`hand_types`); the memo's key
(`memo_key`, `detail_key`, `js_marks`, `COMPUTATION_TIME`) and the kernel marker (`KERNEL_MARKER`).
"""

from __future__ import annotations

import math
import os
from collections.abc import Collection, Mapping
from dataclasses import dataclass
from types import ModuleType
from typing import Any, TypeVar

__all__ = [
    "COMPUTATION_TIME",
    "KERNEL_MARKER",
    "NAMES",
    "PURE_PYTHON",
    "TYPES",
    "attribute_guard",
    "cachesim",
    "choose",
    "choose_in",
    "core_of",
    "detail_key",
    "flow_solver",
    "flow_uniform_solver",
    "hand_types",
    "handed_types",
    "js_mark",
    "js_marks",
    "memo_key",
    "multiply_guard",
    "speedups",
    "v8results",
]

PURE_PYTHON = bool(os.environ.get("PARASIM_PURE_PYTHON"))
"""Whether PARASIM_PURE_PYTHON asks for the Python references everywhere (read here only)."""

_T = TypeVar("_T")


COMPUTATION_TIME = "computationTime"
"""The model function whose values the memo keeps and the hot path reads (`memo_key`)."""
KERNEL_MARKER = "CUDACoreInstructions"
"""The parameter that makes a computation's params a GPU kernel's (its work is a roofline's)."""


JS_BOOLEAN = 1
"""`js_mark` of a bool: JavaScript's `false`/`true`, never the numbers 0 and 1 it equals here."""
JS_NEGATIVE_ZERO = 2
"""`js_mark` of a float -0.0: JavaScript's -0 (`1 / x` is -Infinity), which equals 0 here."""


def js_mark(value: object) -> int | tuple[object, ...]:
    """Return what tells `value` apart in JavaScript from the values Python's equality (and so
    a dict's key) makes it equal to: `JS_BOOLEAN`, `JS_NEGATIVE_ZERO`, for a tuple (a
    JavaScript array) the marks of its items where one is marked, or 0 for any other value (an
    int and a float of one value are one JavaScript number, as js_value gives them). The C
    core's `js_mark` (simulator/_speedups.h) is this rule's copy; it leaves a marked tuple's
    key to this one."""
    if value.__class__ is bool:
        return JS_BOOLEAN
    if isinstance(value, float) and value == 0.0 and math.copysign(1.0, value) < 0.0:
        return JS_NEGATIVE_ZERO
    if isinstance(value, tuple):
        return js_marks(value) or 0
    return 0


_UNMARKED_KINDS = frozenset((float, int, str))
"""Kinds of which only a zero (a float -0.0) can be marked: `js_marks` answers them at once."""


def js_marks(values: Collection[object]) -> tuple[object, ...] | None:
    """Return the `js_mark` of each value, or None when none is marked: a memo's key carries
    them only then, so that values JavaScript tells apart (false, 0, -0; true, 1) never share
    a key, while the common key (plain numbers and strings) stays the plain items."""
    if _UNMARKED_KINDS.issuperset(map(type, values)) and 0 not in values:
        return None  # numbers and strings, no zero among them: the common case, in C loops
    marks = tuple(map(js_mark, values))
    return marks if any(marks) else None


def memo_key(function: str, args: tuple[object, ...], params: Mapping[str, object]) -> object:
    """Return the memo's key of `function(*args, params)` (TypeError: unhashable values):
    (function, args, items), with the `js_marks` of the args and values last where there are
    any. The hot path builds the key of `COMPUTATION_TIME` inline in the same form
    (simulator.api `_PythonSimCore.computation`, and `computation_key` in
    simulator/_speedups_sim.c)."""
    items = tuple(params.items())
    marks = js_marks((*args, *params.values()))
    return (function, args, items) if marks is None else (function, args, items, marks)


def detail_key(function: str, params: Mapping[str, object]) -> object:
    """Return the detail memo's key of `function(params)` (`computationDetail`): (function,
    items), with the params' `js_marks` last where there are any (as `memo_key`)."""
    items = tuple(params.items())
    marks = js_marks(params.values())
    return (function, items) if marks is None else (function, items, marks)


@dataclass(frozen=True)
class Name:
    """One name the C core reads, writes or calls: `name`, on `owner`.

    `owner` is "module:attribute": a class, whose attribute (slot, method, member) `name` is;
    a TypedDict, whose key it is; a tuple, which holds it; or "module" alone, whose code uses
    it as a string or a keyword argument (a timeline entry's kind or key)."""

    name: str
    owner: str


_SIM = "simulator.api:Sim"
_STACKLESS_SIM = "simulator.api:StacklessSim"
_COLLECTIVE = "simulator.api:_Collective"
_MESSAGE = "simulator.platform:Message"
_STATE = "simulator.platform:ProcessState"
_NODE = "simulator.platform:NodeRuntime"
_TIMELINE = "simulator.results:Timeline"
_FIGURES = "simulator.results:ProcessFigures"
_ENTRY = "simulator.results:TimelineEntry"
_FLOW = "simulator.flows:Flow"
_FLOW_LINK = "simulator.flows:FlowLink"

NAMES: dict[str, Name] = {
    # a process and the engine
    "waiting": Name("waiting", "simulator.engine:Process"),
    "pause": Name("pause", "simulator.engine:Engine"),
    "on_process_end": Name("on_process_end", "simulator.engine:Engine"),
    "processes": Name("processes", "simulator.engine:Engine"),
    "failed": Name("_failed", "simulator.engine:StacklessProcess"),
    "throw": Name("throw", "types:GeneratorType"),
    "request": Name("request", "simulator.engine:Resource"),
    "release": Name("release", "simulator.engine:Resource"),
    "put": Name("put", "simulator.engine:Mailbox"),
    "append": Name("append", "collections:deque"),
    "popleft": Name("popleft", "collections:deque"),
    # the sim object: its slots and the Python methods the C core leaves calls to
    "targets": Name("_targets", _SIM),
    "state": Name("_state", _SIM),
    "receivers": Name("_receivers", _SIM),
    "collectives_slot": Name("_collectives", _SIM),
    "computation_fallback": Name("_computation_fallback", _SIM),
    "computation_missed": Name("_missed", _SIM),
    "record_computation": Name("_record_computation", _SIM),
    "p2p_send_fallback": Name("_p2p_send_fallback", _SIM),
    "target": Name("_target", _SIM),
    "broadcast": Name("broadcast", _SIM),
    "scatter": Name("scatter", _SIM),
    "gather": Name("gather", _SIM),
    "receive_fallback": Name("_receive_fallback", _STACKLESS_SIM),
    "broadcast_fallback": Name("_broadcast_fallback", _STACKLESS_SIM),
    "scatter_fallback": Name("_scatter_fallback", _STACKLESS_SIM),
    "gather_fallback": Name("_gather_fallback", _STACKLESS_SIM),
    "root": Name("root", _COLLECTIVE),
    "to_root": Name("_to_root", _COLLECTIVE),
    "collective_waiting": Name("waiting", _COLLECTIVE),
    # the memo and the model's values
    "computation_time": Name(COMPUTATION_TIME, "simulator.shallow:WELL_KNOWN_FUNCTIONS"),
    "cuda_core_instructions": Name(KERNEL_MARKER, "simulator.models.roofline:KERNEL_INPUTS"),
    # a kernel's timeline entry: kernel_inputs' further names, in KERNEL_INPUTS' order
    "kernel_gmem": Name("GMEMBytesTransferred", "simulator.models.roofline:KERNEL_INPUTS"),
    "kernel_grid": Name("gridSize", "simulator.models.roofline:KERNEL_INPUTS"),
    "kernel_n": Name("N", "simulator.models.roofline:KERNEL_INPUTS"),
    "kernel_block": Name("blockSize", "simulator.models.roofline:KERNEL_INPUTS"),
    "kernel_occupancy": Name("occupancy", "simulator.models.roofline:KERNEL_INPUTS"),
    "kernels": Name("_kernels", _TIMELINE),
    "annotated": Name("annotated", _TIMELINE),
    "kernel_key": Name("kernel", "simulator.results"),
    "index": Name("index", "simulator.shallow:Memo"),
    "index_room": Name("index_room", "simulator.shallow:Memo"),
    "program": Name("program", "simulator.shallow:Memo"),
    # a process's figures, the timeline and a component's usage
    "compute_s": Name("compute_s", _FIGURES),
    "comm_s": Name("comm_s", _FIGURES),
    "wait_s": Name("wait_s", _FIGURES),
    "full": Name("full", _TIMELINE),
    "dropped": Name("dropped", _TIMELINE),
    "entries": Name("entries", _TIMELINE),
    "limit": Name("limit", _TIMELINE),
    "busy": Name("busy", _TIMELINE),
    "busy_dropped": Name("busy_dropped", _TIMELINE),
    "add_busy": Name("add_busy", _TIMELINE),
    "process": Name("process", _ENTRY),
    "kind": Name("kind", _ENTRY),
    "start_s": Name("start_s", _ENTRY),
    "end_s": Name("end_s", _ENTRY),
    "node_key": Name("node", "simulator.results:BusyInterval"),
    "instance_key": Name("instance", "simulator.results:BusyInterval"),
    "compute": Name("compute", "simulator.results"),
    "receive": Name("receive", "simulator.api"),
    "barrier": Name("barrier", "simulator.api"),
    "transfer": Name("transfer", "simulator.platform"),
    "entry_node": Name("node", "simulator.platform"),
    "entry_instance": Name("instance", "simulator.platform"),
    "entry_size": Name("size", "simulator.platform"),
    "entry_direction": Name("direction", "simulator.platform"),
    "entry_to": Name("to", "simulator.platform"),
    "start": Name("start", "simulator.results:PythonUsage"),
    "stop": Name("stop", "simulator.results:PythonUsage"),
    # messages, processes' states and nodes
    "init": Name("__init__", _MESSAGE),
    "source": Name("source", _MESSAGE),
    "size": Name("size", _MESSAGE),
    "direction": Name("direction", _MESSAGE),
    "channel": Name("channel", _MESSAGE),
    "sent_at": Name("sent_at", _MESSAGE),
    "host_memory": Name("host_memory", _MESSAGE),
    "collectives": Name("collectives", _STATE),
    "mailbox": Name("mailbox", _STATE),
    "name": Name("name", _STATE),
    "slot": Name("slot", _STATE),
    "label": Name("label", "simulator.placement:Slot"),
    "id": Name("id", _NODE),
    "transfer_time": Name("transfer_time", _NODE),
    "transfer_times": Name("_transfer_times", _NODE),
    "usages": Name("usages", _NODE),
    "links": Name("_links", _NODE),
    "link": Name("link", _NODE),
    "node_engine": Name("engine", _NODE),
    "resource_name": Name("name", "simulator.engine:Resource"),
    "slot_node": Name("node", "simulator.placement:Slot"),
    "slot_instance": Name("instance", "simulator.placement:Slot"),
    # the result's kernel rows (simulator.results kernel_rows): a row's keys, and what an
    # entry's detail names
    "row_node": Name("node", "simulator.results:KernelRow"),
    "row_instance": Name("instance", "simulator.results:KernelRow"),
    "row_duration": Name("duration_s", "simulator.results:KernelRow"),
    "row_bound": Name("bound", "simulator.results:KernelRow"),
    "row_bound_class": Name("bound_class", "simulator.results:KernelRow"),
    "row_occupancy": Name("occupancy", "simulator.results:KernelRow"),
    "row_fraction": Name("occupancy_fraction", "simulator.results:KernelRow"),
    "row_ops": Name("ops", "simulator.results:KernelRow"),
    "row_bytes": Name("bytes", "simulator.results:KernelRow"),
    "row_intensity": Name("intensity", "simulator.results:KernelRow"),
    "row_ops_per_s": Name("ops_per_s", "simulator.results:KernelRow"),
    "row_bytes_per_s": Name("bytes_per_s", "simulator.results:KernelRow"),
    "row_roof_ops": Name("roof_ops_per_s", "simulator.results:KernelRow"),
    "row_roof_fraction": Name("roof_fraction", "simulator.results:KernelRow"),
    "detail": Name("detail", "simulator.results"),
    "bound": Name("bound", "simulator.results"),
    "detail_occupancy": Name("occupancy", "simulator.results"),
    # the result's power series (simulator.results power_series_of)
    "series_node": Name("node", "simulator.results:PowerSeries"),
    "series_name": Name("name", "simulator.results:PowerSeries"),
    "series_instance": Name("instance", "simulator.results:PowerSeries"),
    "series_points": Name("points", "simulator.results:PowerSeries"),
    "figures_node": Name("node", "simulator.results:ComponentFigures"),
    "figures_name": Name("name", "simulator.results:ComponentFigures"),
    "idle_w": Name("idle_w", "simulator.results:ComponentFigures"),
    "active_w": Name("active_w", "simulator.results:ComponentFigures"),
    "usage_instance": Name("instance", "simulator.results:PythonUsage"),
    "usage_capacity": Name("capacity", "simulator.results:PythonUsage"),
    # a run's processes' records and sim objects made, and its stackless processes spawned, in
    # C (simulator.runner states_made, sims_made, stackless_spawned): the slots they set
    "state_engine": Name("engine", _STATE),
    "state_figures": Name("figures", _STATE),
    "process_label": Name("label", _FIGURES),
    "process_rank": Name("rank", _FIGURES),
    "process_node": Name("node", _FIGURES),
    "process_instance": Name("instance", _FIGURES),
    "process_name": Name("name", _FIGURES),
    "finish_s": Name("finish_s", _FIGURES),
    "memory_s": Name("memory_s", _FIGURES),
    "sim_world": Name("_world", _SIM),
    "sim_labels": Name("_labels", _SIM),
    "sim_random": Name("random", _SIM),
    "computation_memos": Name("computation_memos", _NODE),
    "slot_rank": Name("rank", "simulator.placement:Slot"),
    "spawn_stackless": Name("spawn_stackless", "simulator.engine:Engine"),
    "process_data": Name("data", "simulator.engine:StacklessProcess"),
    "process_on_error": Name("on_error", "simulator.engine:StacklessProcess"),
    "sim_stackless": Name("_stackless", _SIM),
    # the flow network's re-solve (simulator.flows.solve_from): a flow and a flow link
    "flow_links": Name("links", _FLOW),
    "flow_weight": Name("weight", _FLOW),
    "flow_bound": Name("bound", _FLOW),
    "flow_x": Name("x", _FLOW),
    "flow_rate": Name("rate", _FLOW),
    "flow_remaining": Name("remaining", _FLOW),
    "flow_updated": Name("updated", _FLOW),
    "flow_version": Name("version", _FLOW),
    "flow_pending": Name("pending", _FLOW),
    "flow_open": Name("open", _FLOW),
    "link_flows": Name("flows", _FLOW_LINK),
    "link_multi": Name("multi", _FLOW_LINK),
    "link_used": Name("used", _FLOW_LINK),
    "link_byte_rate": Name("byte_rate", _FLOW_LINK),
    "link_since": Name("since", _FLOW_LINK),
    "link_bytes": Name("bytes", _FLOW_LINK),
    "link_used_s": Name("used_s", _FLOW_LINK),
    "link_saturated_s": Name("saturated_s", _FLOW_LINK),
    "link_peak": Name("peak", _FLOW_LINK),
    "link_series_t": Name("series_t", _FLOW_LINK),
    "link_series_u": Name("series_u", _FLOW_LINK),
    "link_left": Name("left", _FLOW_LINK),
    "link_usage": Name("usage", _FLOW_LINK),
    "link_merge": Name("_merge", _FLOW_LINK),
    "flow_done": Name("done", _FLOW),
}
"""Every name the C core (simulator._speedups) uses, by the key it knows it by (its
`ContractName` table, simulator/_speedups.c): it receives them at start-up (`set_names`) and
interns no name of its own. Renaming one on the Python side is one edit here, and
tests/simulator/test_name_contract.py fails until the two agree."""


# Each C module that is built (an ImportError: it is not).
try:
    from simulator import _speedups as _built_speedups
except ImportError:
    _built_speedups = None
try:
    from simulator import _cachesim as _built_cachesim
except ImportError:
    _built_cachesim = None
try:
    from simulator import _v8results as _built_v8results
except ImportError:
    _built_v8results = None

speedups: Any = None
"""`simulator._speedups` (the engine's core, the sim calls, messages, usage, the attribute
guard and the chunk cache) when in use, else None."""
cachesim: Any = None
"""`simulator._cachesim` (the cores of `CacheHierarchy` and `CacheTree`) when in use, else None."""
v8results: Any = None
"""`simulator._v8results` (V8's results handed back in C) when in use, else None."""

if not PURE_PYTHON:
    # the engine's core serves the main interpreter only (its allocator hook and its types are
    # the process's): a subinterpreter runs the Python references
    if _built_speedups is not None and _built_speedups.in_main_interpreter():
        speedups = _built_speedups
        speedups.set_names({key: entry.name for key, entry in NAMES.items()})
    cachesim = _built_cachesim
    v8results = _built_v8results


def choose(reference: _T, name: str) -> _T:
    """Return the engine's C core's `name` when it is in use, else the Python `reference`."""
    return choose_in(speedups, reference, name)


def choose_in(module: ModuleType | None, reference: _T, name: str) -> _T:
    """Return `module`'s `name` (dotted for a class's member: "SimCore._stackless_receive")
    when `module` (one of this module's C modules) is in use, else the Python `reference`."""
    if module is None:
        return reference
    chosen: Any = module
    for part in name.split("."):
        chosen = getattr(chosen, part)
    found: _T = chosen
    return found


def core_of(engine: object) -> ModuleType | None:
    """Return the C module whose core `engine` runs on (`speedups`), else None: what a
    module built on an engine passes to `choose_in` to pick the same side as the engine."""
    if speedups is not None and isinstance(engine, speedups.Core):
        return speedups
    return None


TYPES: dict[str, str] = {
    "process": "simulator.engine:Process",
    "stackless": "simulator.engine:StacklessProcess",
    "carrier": "simulator.engine:_Carrier",
    "plain_params": "simulator.api:HashMap",
    "memo": "simulator.shallow:Memo",
    "message": "simulator.platform:Message",
    "p2p": "simulator.api:P2P",
    "resource": "simulator.engine:Resource",
}
"""The Python classes the C core recognises by identity (and the channel of a send), by key,
with where each is defined: that module hands it over as it defines it (`hand_types`); the
names the core uses on them are NAMES'."""

_handed: dict[str, object] = {}


def hand_types(**types: object) -> None:
    """Hand the C core, when it is in use, the classes of TYPES that the caller defines (its
    module imports this one, so this one cannot import them): `process` with `stackless` and
    `carrier`, `plain_params`, `memo`, `message` with `p2p`, `resource`."""
    unknown = sorted(set(types) - set(TYPES))
    if unknown:
        raise TypeError(f"hand_types: unknown keys {unknown} (simulator.hotpath.TYPES)")
    _handed.update(types)
    if speedups is None:
        return
    if "process" in types:
        speedups.set_process_type(types["process"])
    if "stackless" in types:
        speedups.set_stackless_types(types["stackless"], types["carrier"])
    if "plain_params" in types:
        speedups.set_plain_params_type(types["plain_params"])
    if "memo" in types:
        speedups.set_memo_type(types["memo"])
    if "message" in types:
        speedups.set_message_type(types["message"], types["p2p"])
    if "resource" in types:
        speedups.set_resource_type(types["resource"])


def handed_types() -> dict[str, object]:
    """Return what `hand_types` was given so far, by key."""
    return dict(_handed)


def attribute_guard(reference: Any, inspect_attributes: frozenset[str]) -> Any:
    """Return the attribute guard of application models: the C core's copy of `reference`
    when the core is in use (it answers the reads the guard lets through and passes every
    other call to `reference`, whose rules and messages stay in one place), else
    `reference`."""
    if speedups is None:
        return reference
    speedups.set_attribute_guard(reference, inspect_attributes)
    return speedups.guarded_getattr


def multiply_guard(reference: Any, max_int_bits: int) -> Any:
    """Return the multiplication guard of application models: the C core's copy of
    `reference` when the core is in use (it makes the products of ints and floats that the
    guard lets through and passes every other call to `reference`, whose rules and messages
    stay in one place), else `reference`."""
    if speedups is None:
        return reference
    speedups.set_multiply_guard(reference, max_int_bits)
    return speedups.guarded_mul


def flow_solver(reference: _T, saturated: float, series_points: int) -> _T:
    """Return the flow network's re-solve of a component (`reference`, simulator.flows
    `solve_from`): the C core's copy when the core is in use, told once the constants it
    shares with the reference (a link's saturation fraction and its kept change points),
    else `reference`."""
    if speedups is None:
        return reference
    speedups.set_flow_constants(saturated, series_points)
    solver: _T = speedups.flow_solve_from
    return solver


def flow_uniform_solver(reference: _T) -> _T:
    """Return the flow network's re-solve of a uniform component (`reference`,
    simulator.flows `solve_uniform`): the C core's copy when the core is in use (after
    `flow_solver`, which told it the constants), else `reference`."""
    return choose(reference, "flow_solve_uniform")
