"""The `sim` object and the constants an application model sees (DESIGN.md item 4).

Each simulated process runs the application model once with its own globals: `tag`, `rank`,
`labels`, the launch variables, `ConstVar`, `SoftwareStack`, `OptimizationType`, `HashMap`
and `sim`, so MERPSYS's Listing 5 (000, section 5.4.2) ports line by line. A `Sim` binds
one process (its `ProcessState`) to the run's `World`; the platform it acts on (nodes, link
FIFOs, messages in transit) is simulator.platform.

Semantics (where MERPSYS leaves a choice, the choice is written here):

* `sim.computation(params)` evaluates the node model's `computationTime(params)` (seconds)
  and pauses that long; the process's node instance is busy meanwhile.
* `sim.p2pCommunicationSend(size, target_label, direction=None, target_rank=None,
  hostMemory=None)` never blocks. Without `target_rank` the target is rank
  `rank % labels[target_label]` (the same index, wrapped). The message travels the shortest
  path of edges; every NETWORK node on it whose model defines `p2pTime` charges
  `p2pTime(size, params)` with `params.direction` set when a direction was given and
  `params.hostMemory` ('pageable' or 'pinned', checked at the send) when a host memory kind
  was given; the PCIe model takes a missing one as 'pageable' (simulator.models.transfer).
  Store and forward: a hop starts when the previous one ended.
  Each network instance serves one transfer at a time per travel direction (the pair of
  neighbours on the path), first come first served, so contention shows. An intermediate
  network node with count k carries the message on instance `source instance % k`.
  Processes on the same node talk for free unless the node's own model defines `p2pTime`.
* `sim.p2pCommunicationReceive(source_label, source_rank=None)` blocks until a matching
  message arrived (any rank when None) and returns its size. Time blocked before the
  message was sent counts as wait, time after as communication.
* Collectives involve the processes whose label is in `labels` (default: every process),
  every one of which must make the same call; the root is `(root_label, root_rank)`.
  `broadcast(size, ...)`: the root sends `size` bytes to each other participant.
  `scatter(size, ...)`: the root's `size` bytes are split evenly, each other participant
  receives `size / participants`. `gather(size, ...)`: each other participant sends `size`
  bytes to the root. Sends are non-blocking, receivers (and the root of a gather) block until
  their messages arrived. `barrier(labels=None)` blocks until every participant reached it
  and costs no time of its own.
* `allreduce`, `allgather`, `reduceScatter`, `reduce` and `alltoall` run an algorithm's
  schedule of point-to-point messages (simulator.collectives), piece by piece through
  `World.send`, each reduction charged to the receiving process's node; docs/collectives.md
  gives their arguments, algorithms, automatic choice and what the result reports of them.
"""

from __future__ import annotations

import contextlib
import functools
import math
from collections.abc import Callable, Iterable, Mapping
from typing import TYPE_CHECKING, Any

from greenlet import getcurrent

from simulator import collectives, hotpath, nccl_model
from simulator.engine import WAIT, Process
from simulator.hotpath import COMPUTATION_TIME, js_marks
from simulator.models.host_memory import HOST_MEMORY_ERROR, host_memory_kind
from simulator.platform import FlowRoute, Message
from simulator.shallow import Memo

if TYPE_CHECKING:
    from collections.abc import Sequence

    from simulator.engine import Engine, EventCount, StacklessProcess
    from simulator.platform import Hop, NodeRuntime, ProcessState, World
    from simulator.results import ProcessFigures, Timeline, Usage

    _Route = tuple[ProcessState, Sequence[Hop]]  # a send's target and the hops to it
    # NCCL's tree allreduce of a call: its nodes, its bytes, its trees' spans of steps
    NcclTree = tuple[int, float, list[collectives.TreeSpan]]
    NcclLayer = tuple[
        str,
        float,
        float,
        NcclTree | None,
        list[collectives.RingSpan] | None,
        float,
        nccl_model.Architecture,
    ]
    """NCCL's cost layer of a call: its protocol, the latency it charges before any data
    moves and the launch cost (s), NCCL's tree allreduce's (nodes, bytes, spans) or None,
    the spans of NCCL's rings over several nodes or None, NCCL's model latency (s), and
    NCCL's constants for the members' GPUs (`Sim._nccl_architecture`)."""

_INF = math.inf
API_MESSAGES = {
    "size": "{call}: the size must be a finite number of bytes >= 0 (got {value!r})",
    "label": "{call}: there are no processes of label {label!r} in this launch (labels: {known})",
    "rank": "{call}: label {label!r} has {count} processes, so rank {rank!r} does not exist",
    "params": "sim.computation: params must be a dict (or HashMap) of names to values, got {kind}",
    "root": "{call}: the root {root} is not among the participants (labels {labels})",
    "not_participant": "{call}: process {process} is not among the participants (labels {labels})",
    "host_memory": "{call}: " + HOST_MEMORY_ERROR,
}

# The globals the runner binds for every process besides the launch variables (runner.py); a
# variable of one of these names would hide it. The web side refuses them when an application
# model declares its variables (webapp.studio.validation), the runner when a run starts.
RUNTIME_GLOBALS = frozenset(
    {"sim", "tag", "rank", "labels", "ConstVar", "SoftwareStack", "OptimizationType", "HashMap"}
)

NO_MEMORY_HIERARCHY = "the system model has no memory hierarchy"
P2P = "p2p"
"""Channel of point-to-point messages; collectives use their own channels."""


class _Collective:
    """A rooted collective call as the run's processes make it, checked once (`Sim._rooted`):
    the participants' label names, the participants, the root, the channel its messages share
    (one object per collective, kind and root in the run: `World.channel`), what a broadcast's
    or scatter's receivers wait for, and the routes between the root and the others."""

    __slots__ = ("_routes", "_to_root", "channel", "members", "names", "root", "waiting")

    def __init__(
        self,
        names: tuple[str, ...],
        members: list[ProcessState],
        root: ProcessState,
        channel: tuple[object, ...],
        waiting: str,
    ) -> None:
        self.names = names
        self.members = members
        self.root = root
        self.channel = channel
        self.waiting = waiting
        self._routes: list[_Route] | None = None
        self._to_root: dict[ProcessState, Sequence[_Route]] = {}

    def to_root(self, world: World, state: ProcessState) -> Sequence[_Route]:
        """Return the one route from `state`, the participant making the call, to the root,
        as a list of routes (made at its first use)."""
        routes = self._to_root.get(state)
        if routes is None:
            hops = world.hops(state.slot, self.root.slot)
            # a route over flow links (platform.FlowRoute) is sent by Python alone: kept in a
            # tuple, which the C core's gather leaves to Python (it sends lists only)
            routes = self._to_root[state] = (
                [(self.root, hops)] if hops.__class__ is tuple else ((self.root, hops),)
            )
        return routes

    def routes(self, world: World) -> list[_Route]:
        """Return the root's route to each other participant (made at the first use)."""
        routes = self._routes
        if routes is None:
            root = self.root
            routes = self._routes = [
                (member, world.hops(root.slot, member.slot))
                for member in self.members
                if member is not root
            ]
        return routes


class _PythonMessageFilter:
    """Whether a receive takes a message: on `channel`, and from a process of `label` or
    from `peer` when given. The C core's `MessageFilter` does the same in C (a mailbox asks
    its filter about every message it holds), this is its reference."""

    __slots__ = ("channel", "label", "peer")

    def __init__(self, channel: object, label: object = None, peer: object = None) -> None:
        self.channel = channel
        self.label = label
        self.peer = peer

    def __call__(self, message: Message) -> bool:
        if message.channel != self.channel:
            return False
        if self.peer is not None:
            return message.source is self.peer
        return self.label is None or message.source.slot.label == self.label


_message_filter: Callable[..., Callable[[Message], bool]] = hotpath.choose(
    _PythonMessageFilter, "MessageFilter"
)


def charge_receive(figures: ProcessFigures, waited_from: float, sent_at: float, now: float) -> None:
    """Charge a receive that waited from `waited_from` until `now` for a message sent at
    `sent_at`: waiting until the message left, communication while it was on its way (the
    C core's `SimCore._received` charges the same)."""
    in_flight_from = sent_at if sent_at > waited_from else waited_from
    figures.wait_s += in_flight_from - waited_from
    figures.comm_s += now - in_flight_from


class ApiUsageError(Exception):
    """The application model called the sim API wrongly; the runner adds the line number."""


class ConstVar:
    """MERPSYS's transfer directions, passed to `p2pTime` as `params.direction`."""

    HostToDevice = "HostToDevice"
    DeviceToHost = "DeviceToHost"


class SoftwareStack:
    """MERPSYS's software stacks (accepted by `sim.computation`, not used by the models)."""

    Undefined = "Undefined"


class OptimizationType:
    """MERPSYS's optimization types; Python cannot spell `.None`, so it is `None_`."""

    None_ = "None"


class HashMap(dict[str, Any]):
    """A dict with Java's `put` / `get`, so `new HashMap()` and `.put(k, v)` port as they are."""

    # Store `value` under `key` (Java's `Map.put`): dict's own item assignment, in C (a GPU
    # model's params are a row of puts per kernel)
    put = dict.__setitem__


class Label(str):
    """A process's label (`tag`), with Java's `equals` so `tag.equals("CPU")` ports as is."""

    __slots__ = ()

    def equals(self, other: object) -> bool:
        """Return whether the label is `other`."""
        return str(self) == other


_PLAIN_PARAMS: frozenset[type[object]] = frozenset(
    (dict, HashMap)
)  # params the hot path reads as they are


class _SimCalls:
    """What the calls of a `sim` object share, whichever core runs its hot path (the C core's
    `SimCore` or `_PythonSimCore`, below): the checks of a call's arguments, a computation's
    evaluation and accounting, the memory hierarchy's calls. Both cores call these back, so
    they come first. No state of its own: the core's fields and Sim's slots hold it."""

    if not TYPE_CHECKING:  # no slots of its own: either core can be Sim's base beside it
        __slots__ = ()
    else:  # what mypy reads: the core's fields (_PythonSimCore's slots) and Sim's slots
        _details: dict[object, dict[str, object]] | None
        _engine: Engine
        _figures: ProcessFigures
        _memo: dict[object, float] | None
        _missed: Callable[..., float] | None
        _process: str  # the process's name, for its timeline entries
        _timeline: Timeline
        _usage: Usage
        _continuation: Callable[[Any], object] | None  # a StacklessSim's (the C core's)
        _world: World
        _state: ProcessState
        _targets: dict[tuple[object, object, type], _Route] | None

    # -- the checks of a call's arguments ----------------------------------------------------------
    def _check_size(self, call: str, size: object) -> float:
        if (
            not isinstance(size, int | float)
            or isinstance(size, bool)
            or not math.isfinite(size)
            or size < 0
        ):
            raise ApiUsageError(API_MESSAGES["size"].format(call=call, value=size))
        return float(size)

    def _check_host_memory(self, call: str, host_memory: object) -> str | None:
        if host_memory is None:
            return None
        try:
            return host_memory_kind(host_memory)
        except ValueError:
            raise ApiUsageError(
                API_MESSAGES["host_memory"].format(call=call, value=host_memory)
            ) from None

    def _peers(self, call: str, label: object) -> list[ProcessState]:
        peers = self._world.by_label.get(label) if isinstance(label, str) else None
        if not peers:
            known = ", ".join(sorted(self._world.by_label))
            raise ApiUsageError(API_MESSAGES["label"].format(call=call, label=label, known=known))
        return peers

    def _peer(self, call: str, label: object, rank: object) -> ProcessState:
        peers = self._peers(call, label)
        if not isinstance(rank, int) or isinstance(rank, bool) or not 0 <= rank < len(peers):
            raise ApiUsageError(
                API_MESSAGES["rank"].format(call=call, label=label, count=len(peers), rank=rank)
            )
        return peers[rank]

    def _target(self, target_label: object, target_rank: object) -> _Route:
        """Return the process a send to (`target_label`, `target_rank`) goes to and the hops
        to it, checked once and kept for the next send to it."""
        call = "sim.p2pCommunicationSend"
        if target_rank is None:
            # `_peers`' look-up of a plain label inline (every process's first send comes here);
            # any other label, or none found, goes there for its check and message
            by_label = self._world.by_label
            peers = by_label.get(target_label) if target_label.__class__ is str else None
            if not peers:
                peers = self._peers(call, target_label)
            target = peers[self._state.slot.rank % len(peers)]
        else:
            target = self._peer(call, target_label, target_rank)
        if self._targets is None:
            self._targets = {}
        route = (target, self._world.hops(self._state.slot, target.slot))
        self._targets[target_label, target_rank, target_rank.__class__] = route
        return route

    # -- a computation (the hot path itself: the cores' `computation`) -----------------------------
    def _pause_computing(
        self, duration: float, detail: dict[str, object] | None, params: Mapping[str, object]
    ) -> float:
        """Keep the node busy for `duration` seconds of this process's computing; `detail`
        (the model's computationDetail) and a GPU kernel's work (`kernel_inputs`, for its
        roofline point) go on its timeline entry."""
        engine = self._engine
        usage = self._usage
        start = engine.now
        usage.start(start)
        engine.pause(duration)
        usage.stop(engine.now)
        self._figures.compute_s += duration
        timeline = self._timeline
        if timeline.full:
            timeline.dropped += 1
        else:
            self._record_computation(start, detail, params)
        return duration

    def _record_computation(
        self, start: float, detail: dict[str, object] | None, params: Mapping[str, object]
    ) -> None:
        """Put a memoized computation that ran from `start` to now on the timeline (which is
        not full), with its `detail` and a GPU kernel's work (`kernel_inputs`). The C core
        keeps one without either itself (simulator/_speedups.c `keep_computation`)."""
        timeline = self._timeline
        timeline.add_computation(
            self._process,
            start,
            self._engine.now,
            None if detail is None else dict(detail),
            timeline.kernel_inputs(params),
        )

    def _evaluated(
        self, params: object
    ) -> tuple[dict[str, object], float, dict[str, object] | None]:
        """Return a computation's params (a copy), the seconds and the detail the node's
        model gives for them (ApiUsageError when `params` is not a mapping)."""
        if params is None:
            params = {}
        if not isinstance(params, Mapping):
            raise ApiUsageError(API_MESSAGES["params"].format(kind=type(params).__name__))
        node = self._world.nodes[self._state.slot.node]
        params = dict(params)
        duration = node.computation_time(params)
        detail = node.computation_detail(params) if node.has_detail else None
        return params, duration, detail

    def _computation(self, params: object, memory: Mapping[str, object] | None) -> float:
        """`computation` in general: any model, detail, memory work, first evaluations."""
        params, duration, detail = self._evaluated(params)
        state = self._state
        slot = state.slot
        node = self._world.nodes[slot.node]
        engine = self._engine
        start = engine.now
        usage = node.usages[slot.instance]
        usage.start(start)
        if memory is None:
            engine.pause(duration)
        else:
            memory_detail = self._memory("sim.computation", memory, until=start + duration)
            detail = {**(detail or {}), **memory_detail, "computeSeconds": duration}
            duration = engine.now - start
        usage.stop(engine.now)
        state.figures.compute_s += duration
        timeline = self._timeline
        if timeline.full:
            timeline.dropped += 1
        else:
            timeline.add_computation(
                state.name, start, engine.now, detail, timeline.kernel_inputs(params)
            )
        return duration

    # -- the memory hierarchy ----------------------------------------------------------------------
    def _memory(
        self, call: str, arguments: object, until: float | None = None
    ) -> dict[str, object]:
        """Serve one memory call through the hierarchy; return its detail for the timeline.

        With `until`, the call also lasts at least until then (a computation's own time).
        """
        memory = self._world.memory
        slot = self._state.slot
        if not isinstance(arguments, Mapping):
            raise ApiUsageError(f"{call}: memory must be a dict of memoryAccess arguments")
        if memory is None:
            raise ApiUsageError(f"{call}: {NO_MEMORY_HIERARCHY}")
        # loaded (and, in the sandbox, preloaded: sandbox.preparation.modules_needed) with the memory system
        from simulator.memsys import MemoryUsageError, parse_call

        try:
            pattern, addresses, writes, level = parse_call(call, arguments, memory.region_base)
            count = len(self._world.nodes[slot.node].usages)
            levels, instances = memory.entry(
                slot.node, slot.instance, count, level, call, trace=addresses is not None
            )
        except MemoryUsageError as error:
            raise ApiUsageError(str(error)) from None
        if pattern is not None:
            for label in pattern.shared_with:
                self._peers(call, label)
        if addresses is not None and writes is not None:
            demand, detail = memory.trace_demand(levels, instances, addresses, writes)
        else:
            assert pattern is not None
            demand, detail = memory.pattern_demand(levels, instances, pattern)
        if until is not None:
            demand.latency_s = max(demand.latency_s, until - self._engine.now)
        seconds = memory.serve(demand, self._state.name)
        detail["memorySeconds"] = seconds
        detail["path"] = " -> ".join(level.id for level in levels)
        return detail


class _PythonSimCore(_SimCalls):
    """The hot path of `Sim.computation` in Python: the C core's `SimCore`
    (simulator/_speedups.c) does the same in C and calls `computation` here for every call it
    does not answer itself, so both give the same results."""

    __slots__ = (
        "_continuation",  # the C core's fields: a StacklessSim's (C core only)
        "_details",
        "_engine",
        "_figures",
        "_memo",
        "_process",
        "_stackless",
        "_timeline",
        "_usage",
    )

    def computation(
        self,
        params: Mapping[str, object] | None = None,
        software_stack: object = None,
        optimization: object = None,
        memory: Mapping[str, object] | None = None,
    ) -> float:
        """Run the node model's `computationTime(params)`; return the seconds it took.

        `software_stack` and `optimization` are accepted for MERPSYS compatibility. With
        `memory` (the arguments of `memoryAccess`), the computation's memory work goes
        through the memory hierarchy at the same time, and the computation takes the longer
        of the two (compute and memory overlap, as in a roofline).
        """
        if memory is None and params.__class__ in _PLAIN_PARAMS and params is not None:
            # The hot path (one call per computation of a run): a computation whose value
            # the model already gave for these params, or gives now under the key built here
            # (a miss: `_missed`). The keys are hotpath.memo_key's and detail_key's, inlined.
            memo = self._memo
            # The C core first runs the model's program of doubles where the memo has one
            # (Memo.program, simulator.models.js_program): it answers only what the
            # compiled model below answers, with the same double, and keeps nothing, so this
            # reference leaves it out (interpreted in Python it costs more than the miss);
            # tests/simulator/models/test_js_program.py checks both and the runs equal.
            if memo is not None:
                try:
                    items = tuple(params.items())
                    marks = js_marks(params.values())
                    if marks is None:
                        key: object = (COMPUTATION_TIME, (), items)
                        detail_key: object = ("computationDetail", items)
                    else:  # a value JavaScript tells apart from its equals (false, -0)
                        key = (COMPUTATION_TIME, (), items, marks)
                        detail_key = ("computationDetail", items, marks)
                    duration = memo.get(key)
                except TypeError:  # an unhashable parameter (a list): the general path
                    return self._computation(params, memory)
                details = self._details
                if duration is not None:
                    if details is None:
                        return self._pause_computing(duration, None, params)
                    detail = details.get(detail_key)
                    if detail is not None:  # the model gave the detail too (shallow's key)
                        return self._pause_computing(duration, detail, params)
                elif details is None and self._missed is not None:
                    # a miss: the model evaluates these params once, under the key built here
                    return self._pause_computing(self._missed(key, params), None, params)
        return self._computation(params, memory)

    def _received(self, started: float, message: Message) -> Message:
        """Account a receive that began at `started` and got `message` now; return it (the
        C core's `SimCore._received` does the same)."""
        now = self._engine.now
        if now > started:
            figures = self._figures
            charge_receive(figures, started, message.sent_at, now)
            timeline = self._timeline
            if timeline.full:  # counted here: a receive is as frequent as a computation
                timeline.dropped += 1
            else:
                timeline.add(self._process, "receive", started, now)
        return message

    def _collective_channel(self, key: tuple[object, ...]) -> tuple[object, int]:
        """Return the channel of this process's next collective of `key` (World.channel):
        every participant makes the same calls in the same order, so the n-th call of each
        gets the same channel (the C core's `SimCore._collective_channel` does the same)."""
        counts = self._state.collectives
        sequence = counts.get(key, 0)
        counts[key] = sequence + 1
        return (key, sequence)

    def _barrier_waited(self, started: float, _value: object = None) -> None:
        """Account a wait at a barrier from `started` to now (the C core's
        `SimCore._barrier_waited` does the same)."""
        now = self._engine.now
        if now > started:
            self._figures.wait_s += now - started
            self._timeline.add(self._process, "barrier", started, now)

    def p2pCommunicationSend(
        self,
        size: object,
        target_label: object,
        direction: str | None = None,
        target_rank: object = None,
        hostMemory: object = None,  # the parameter's name in p2pTime's params too
    ) -> None:
        """Send `size` bytes to a process of `target_label` without waiting for delivery;
        `hostMemory` ('pageable' or 'pinned') is the host memory the copy reads or writes.
        (The C core's `SimCore.p2pCommunicationSend` sends a plain size to a target sent to
        before in C, and calls this, `Sim._p2p_send_fallback`, for every other call.)"""
        size_b = _checked_size(self, "sim.p2pCommunicationSend", size)
        host_memory = None
        if hostMemory is not None:
            host_memory = self._check_host_memory("sim.p2pCommunicationSend", hostMemory)
        key = (target_label, target_rank, target_rank.__class__)  # rank 1.0 or True: not 1
        # The C core sends to a target it knows itself: with it, a call here is most often a
        # process's first send, which must not raise and catch on the way to `_target`.
        targets = self._targets
        try:
            route = None if targets is None else targets.get(key)
        except TypeError:  # unhashable: `_target` says what is wrong with it
            route = None
        if route is None:
            route = self._target(target_label, target_rank)
        target, hops = route
        self._world.send(self._state, target, size_b, direction, P2P, host_memory, hops)


if TYPE_CHECKING:
    _SimCore = _PythonSimCore
else:
    _SimCore = hotpath.choose(_PythonSimCore, "SimCore")
# HashMap read as a dict; Memo's `index`: the memo read without building keys; Message and
# P2P: what SimCore's send makes
hotpath.hand_types(plain_params=HashMap, memo=Memo, message=Message, p2p=P2P)


def _node_memos(node: NodeRuntime) -> tuple[Any, Any, Any]:
    """Return what the computations of `node`'s processes read (a Sim's `_memo`, `_details`
    and `_missed`): the memo of its `computationTime` values (None: the model is asked every
    time); the memo of its `computationDetail` objects when the model defines one, else None
    (when both hold the params, they are the computation's whole story); and the miss, what
    evaluates a value the memo lacks and keeps it there, given the key the hot path built
    (`ShallowFunctions.computation_missed`: a miss is one call to the model's evaluation, its
    key built once and its value checked where it is evaluated), None without a memo or
    with a detail."""
    functions = node.functions
    if functions is None or not functions.has(COMPUTATION_TIME):
        return None, None, None
    memo: dict[object, float] | None = getattr(functions, "computation_memo", None)
    if node.has_detail:
        details = getattr(functions, "detail_memo", None)
        return (None if details is None else memo), details, None
    missed = getattr(functions, "computation_missed", None) if memo is not None else None
    return memo, None, missed


class Sim(_SimCore, _SimCalls):
    """The `sim` object of one process: MERPSYS's computation and communication calls.

    `computation` is `_SimCore`'s: the C core's when it is in use, else `_PythonSimCore`'s.
    """

    __slots__ = (
        "_collectives",
        "_labels",
        "_missed",
        "_receivers",
        "_state",
        "_targets",
        "_world",
        "random",
    )
    # what the C core's `computation` calls for every call it does not answer itself
    _computation_fallback = _PythonSimCore.computation
    _p2p_send_fallback = _PythonSimCore.p2pCommunicationSend  # the same for a send

    def __init__(self, world: World, state: ProcessState, labels: Mapping[str, int]) -> None:
        engine, slot = world.engine, state.slot
        self._world = world
        self._engine = engine
        self._state = state
        self._labels = labels
        # per source: the message filter and what a receive from it waits for, the same for
        # every process of the run (the world's, made at the run's first receive from it)
        self._receivers = world.receivers
        # per (label, rank) a process sends to: the target and the hops to it, checked once
        # (made at the first send)
        self._targets: dict[tuple[object, object, type], _Route] | None = None
        # per rooted collective call and its arguments: what it was checked to be, the same
        # for every process of the run (the world's, made at the run's first such call)
        self._collectives: dict[tuple[object, ...], _Collective] = world.collectives
        # what the hot path of `computation` updates, looked up once
        node = world.nodes[slot.node]
        self._usage = node.usages[slot.instance]
        # the node's memos and miss (`_node_memos`): the same model for all its processes,
        # found for the first one made, kept on the node for the others
        found = node.computation_memos
        if found is None:
            found = node.computation_memos = _node_memos(node)
        self._memo, self._details, self._missed = found
        self._figures = state.figures
        self._process = state.name
        self._timeline = world.timeline
        self.random = engine.random

    # -- helpers -----------------------------------------------------------------------------------
    def now(self) -> float:
        """Return the simulated time in seconds."""
        return self._engine.now

    def _receive(self, accept: Callable[[Message], bool], waiting: str) -> Message:
        started = self._engine.now
        message: Message = self._state.mailbox.get(accept, waiting)
        return self._received(started, message)

    def _participants(
        self, call: str, labels: object
    ) -> tuple[tuple[str, ...], list[ProcessState], frozenset[ProcessState]]:
        """Return the participants' label names, the processes (label by label, rank by rank)
        and the same as a set; each group is built once per run (World.groups): every
        participant of a collective asks for it."""
        if labels is None:
            names = self._world.label_names
        elif isinstance(labels, str):
            names = (labels,)
        elif isinstance(labels, Iterable):
            names = tuple(sorted({str(label) for label in labels}))
        else:
            raise ApiUsageError(f"{call}: labels must be a label or a list of labels")
        group = self._world.groups.get(names)
        if group is None:
            members: list[ProcessState] = []
            for name in names:
                members.extend(self._peers(call, name))
            group = self._world.groups[names] = (members, frozenset(members))
        members, member_set = group
        if self._state not in member_set:
            raise ApiUsageError(
                API_MESSAGES["not_participant"].format(
                    call=call, process=self._state.name, labels=list(names)
                )
            )
        return names, members, member_set

    # -- memory ------------------------------------------------------------------------------------
    def memoryAccess(self, **arguments: object) -> float:
        """Move data through the memory hierarchy; return the seconds it took.

        A pattern: `read` and `write` (bytes), `footprint` (bytes of distinct data, default
        read + write), `stride` (bytes between accesses, default `element`), `element` (bytes
        per access, default 8), `order` ('sequential' or 'random'), `sharedWith` (labels of
        the processes that wrote this data: below a MESI directory it comes from their
        caches, with the coherence messages, instead of memory). Or a trace: `trace` (a
        list or range of addresses, or (address, is_write) pairs; `writes=True` makes them
        all writes), with `region` naming data other processes can reach at the same
        addresses. `level`: start at that node of the path instead of the first level.
        """
        call = "sim.memoryAccess"
        state = self._state
        start = self._engine.now
        detail = self._memory(call, arguments)
        now = self._engine.now
        state.figures.memory_s += now - start
        self._world.timeline.add(state.name, "memory", start, now, detail=detail)
        return now - start

    def memoryFlush(self) -> float:
        """Write back every dirty line of this process's private caches to memory and drop
        them (what software does on a system without coherence); return the seconds it took."""
        call = "sim.memoryFlush"
        memory = self._world.memory
        state = self._state
        slot = state.slot
        if memory is None:
            raise ApiUsageError(f"{call}: {NO_MEMORY_HIERARCHY}")
        from simulator.memsys import MemoryUsageError  # loaded with the memory system

        try:
            count = len(self._world.nodes[slot.node].usages)
            levels, instances = memory.entry(slot.node, slot.instance, count, None, call)
        except MemoryUsageError as error:
            raise ApiUsageError(str(error)) from None
        start = self._engine.now
        demand, detail = memory.flush_demand(levels, instances)
        memory.serve(demand, state.name)
        now = self._engine.now
        state.figures.memory_s += now - start
        self._world.timeline.add(state.name, "memory", start, now, detail=detail)
        return now - start

    # -- point to point ----------------------------------------------------------------------------
    def p2pCommunicationReceive(self, source_label: object, source_rank: object = None) -> float:
        """Block until a message from `source_label` (rank `source_rank`, or any) arrived."""
        return self._receive(*self._receiving_from(source_label, source_rank)).size

    def _receiving_from(
        self, source_label: object, source_rank: object
    ) -> tuple[Callable[[Message], bool], str]:
        """Return (the filter, what the process waits for) of receives from a source."""
        try:
            return self._receivers[source_label, source_rank, source_rank.__class__]
        except (KeyError, TypeError):  # the run's first receive from this source, or unhashable
            return self._receiver(source_label, source_rank)

    def _receiver(
        self, source_label: object, source_rank: object
    ) -> tuple[Callable[[Message], bool], str]:
        """Return (the filter, what the process waits for) of receives from a source, checked
        once and kept for every next receive from it (by any process: neither depends on
        which process receives)."""
        call = "sim.p2pCommunicationReceive"
        if source_rank is None:
            self._peers(call, source_label)
            waiting = f"a message from {source_label} (any rank)"
            accept = _message_filter(P2P, label=source_label)
        else:
            peer = self._peer(call, source_label, source_rank)
            waiting = f"a message from {peer.name}"
            accept = _message_filter(P2P, peer=peer)

        self._receivers[source_label, source_rank, source_rank.__class__] = (accept, waiting)
        return accept, waiting

    # -- collectives -------------------------------------------------------------------------------
    def _rooted(
        self, kind: str, root_label: object, root_rank: object, labels: object
    ) -> _Collective:
        """Return the rooted collective `sim.<kind>(..., root_label, root_rank, labels)`,
        checked at this process's first such call and kept for the next ones."""
        key = (kind, root_label, root_rank, root_rank.__class__, labels)  # rank 1.0: not 1
        try:
            collective = self._collectives.get(key)
        except TypeError:  # unhashable labels (a list): checked every call
            collective = None
        if collective is not None:
            return collective
        call = f"sim.{kind}"
        names, members, member_set = self._participants(call, labels)
        root = self._peer(call, root_label, root_rank)
        if root not in member_set:
            raise ApiUsageError(
                API_MESSAGES["root"].format(call=call, root=root.name, labels=list(names))
            )
        channel = self._world.channel((kind, names, root.name))
        collective = _Collective(names, members, root, channel, f"the {kind} from {root.name}")
        with contextlib.suppress(TypeError):  # unhashable labels (a list): checked every call
            self._collectives[key] = collective
        return collective

    def _spread(
        self,
        kind: str,
        size: float,
        share: float,
        root_label: object,
        root_rank: object,
        labels: object,
        collective: _Collective | None = None,
    ) -> object:
        if collective is None:
            collective = self._rooted(kind, root_label, root_rank, labels)
        channel = self._collective_channel(collective.channel)
        root = collective.root
        if self._state is root:
            world = self._world
            world.send_each(root, share, channel, collective.routes(world))
            return None
        return self._collective_receive(channel, collective.waiting)

    def _collective_receive(self, channel: object, waiting: str) -> object:
        """Receive a collective's message on `channel` (StacklessSim: without a greenlet)."""
        self._receive(_message_filter(channel), waiting)
        return None

    def _gather_messages(self, channel: object, count: int) -> object:
        """The gather's root: receive `count` messages on `channel`."""
        for _ in range(count):
            self._receive(_message_filter(channel), "the gather's messages")
        return None

    def _barrier_wait(self, event_count: EventCount, generation: int, started: float) -> object:
        """Wait at the barrier until `event_count` reaches `generation`; account the wait."""
        event_count.await_(generation)
        self._barrier_waited(started)
        return None

    def broadcast(
        self, size: object, root_label: object, root_rank: object = 0, labels: object = None
    ) -> Any:
        """Every participant receives the root's `size` bytes (the root does not block)."""
        size_b = _checked_size(self, "sim.broadcast", size)
        return self._spread("broadcast", size_b, size_b, root_label, root_rank, labels)

    def scatter(
        self, size: object, root_label: object, root_rank: object = 0, labels: object = None
    ) -> Any:
        """The root's `size` bytes are split evenly; each other participant receives its share."""
        size_b = _checked_size(self, "sim.scatter", size)
        collective = self._rooted("scatter", root_label, root_rank, labels)
        share = size_b / len(collective.members)
        return self._spread("scatter", size_b, share, root_label, root_rank, labels, collective)

    def gather(
        self, size: object, root_label: object, root_rank: object = 0, labels: object = None
    ) -> Any:
        """Each other participant sends `size` bytes to the root, which waits for all of them."""
        size_b = _checked_size(self, "sim.gather", size)
        collective = self._rooted("gather", root_label, root_rank, labels)
        channel = self._collective_channel(collective.channel)
        root = collective.root
        state = self._state
        if state is not root:
            world = self._world
            world.send_each(state, size_b, channel, collective.to_root(world, state))
            return None
        return self._gather_messages(channel, len(collective.members) - 1)

    # -- collectives with algorithms (simulator.collectives, docs/collectives.md) ------------------
    def allreduce(
        self,
        size: object,
        labels: object = None,
        algorithm: object = "auto",
        chunk: object = None,
        op: object = "sum",
        protocol: object = "ideal",
    ) -> Any:
        """Every participant ends with the reduction (`op`) of everyone's `size` bytes."""
        return self._collective("allreduce", size, labels, algorithm, chunk, op, None, protocol)

    def allgather(
        self,
        size: object,
        labels: object = None,
        algorithm: object = "auto",
        chunk: object = None,
        protocol: object = "ideal",
    ) -> Any:
        """Every participant ends with everyone's `size / participants` bytes (`size` in all)."""
        return self._collective("allgather", size, labels, algorithm, chunk, None, None, protocol)

    def reduceScatter(
        self,
        size: object,
        labels: object = None,
        algorithm: object = "auto",
        chunk: object = None,
        op: object = "sum",
        protocol: object = "ideal",
    ) -> Any:
        """The reduction of everyone's `size` bytes, each participant keeping its
        `size / participants` share."""
        return self._collective("reduceScatter", size, labels, algorithm, chunk, op, None, protocol)

    def reduce(
        self,
        size: object,
        root_label: object,
        root_rank: object = 0,
        labels: object = None,
        algorithm: object = "auto",
        chunk: object = None,
        op: object = "sum",
        protocol: object = "ideal",
    ) -> Any:
        """The root ends with the reduction (`op`) of everyone's `size` bytes."""
        return self._collective(
            "reduce", size, labels, algorithm, chunk, op, (root_label, root_rank), protocol
        )

    def alltoall(
        self,
        size: object,
        labels: object = None,
        algorithm: object = "auto",
        chunk: object = None,
        protocol: object = "ideal",
    ) -> Any:
        """Each participant sends `size / participants` of its `size` bytes to each other."""
        return self._collective("alltoall", size, labels, algorithm, chunk, None, None, protocol)

    def _collective(
        self,
        kind: str,
        size: object,
        labels: object,
        algorithm: object,
        chunk: object,
        op: object,
        root: tuple[object, object] | None = None,
        protocol: object = "ideal",
    ) -> None:
        """Run this process's part of a collective: its sends and receives of the schedule
        `simulator.collectives` gives, piece by piece through `World.send`, each reduction
        charged to its node; the call's record (`World.collective_calls`) gets its figures."""
        call = f"sim.{kind}"
        size_b = _checked_size(self, call, size)
        names, members, member_set = self._participants(call, labels)
        world = self._world
        root_index = 0
        root_name = None
        if root is not None:
            root_state = self._peer(call, root[0], root[1])
            if root_state not in member_set:
                raise ApiUsageError(
                    API_MESSAGES["root"].format(call=call, root=root_state.name, labels=list(names))
                )
            root_index = members.index(root_state)
            root_name = root_state.name
        if algorithm != "auto" and algorithm not in collectives.ALGORITHMS[kind]:
            raise ApiUsageError(
                collectives.COLLECTIVE_MESSAGES["algorithm"].format(
                    call=call, known=list(collectives.ALGORITHMS[kind]), value=algorithm
                )
            )
        if chunk is None:
            chunk_b = float(collectives.DEFAULT_CHUNK_BYTES)
            most = collectives.DEFAULT_MOST_PIECES
        else:
            if (
                not isinstance(chunk, int | float)
                or isinstance(chunk, bool)
                or not math.isfinite(chunk)
                or chunk < 0
            ):
                raise ApiUsageError(
                    collectives.COLLECTIVE_MESSAGES["chunk"].format(call=call, value=chunk)
                )
            chunk_b = float(chunk)
            most = 0
        if not isinstance(protocol, str) or protocol not in nccl_model.CHOICES:
            raise ApiUsageError(
                collectives.COLLECTIVE_MESSAGES["protocol"].format(
                    call=call, known=list(nccl_model.CHOICES), value=protocol
                )
            )
        plan = self._collective_plan(
            call, kind, size_b, names, members, root_index, algorithm, chunk_b, most, protocol
        )
        chosen, operations, record_of, model_seconds, layer, (chunk_b, most) = plan
        key = world.channel((kind, names, root_name))
        channel = self._collective_channel(key)
        state = self._state
        index = members.index(state)
        engine = self._engine
        started = engine.now
        record = record_of(channel, started)
        figures = state.figures
        mailbox = state.mailbox
        symmetry = world.symmetry
        if (
            symmetry is not None
            and model_seconds is None
            and layer is None
            and symmetry.collective(
                self,
                kind,
                op,
                members,
                index,
                operations,
                chunk_b,
                most,
                channel,
                (started, record, chosen, size_b),
            )
        ):  # simulated by the call's representatives (simulator.symmetry)
            return None
        if model_seconds is not None:  # the model's time for the whole call, once all came
            waiting = world.arrive((f"{kind}Time", *map(str, channel)), len(members))
            if waiting is not None:
                waiting[0].await_(waiting[1])
            figures.wait_s += engine.now - started
            engine.pause(model_seconds)
            figures.comm_s += model_seconds
        if layer is not None:  # NCCL's per-call latency and launch, before any data moves
            engine.pause(layer[1] + layer[2])
            figures.comm_s += layer[1] + layer[2]
            return self._collective_nccl(
                kind,
                op,
                members,
                index,
                operations,
                chunk_b,
                most,
                channel,
                layer[0],
                layer[3],
                layer[4],
                (started, record, chosen, size_b),
                layer[6],
            )
        routes: dict[int, Sequence[Hop]] = {}  # per peer this process sends to: the hops
        # the loop runs once per piece: what it calls is bound once
        send, get, reduce_piece = world.send, mailbox.get, self._reduce_piece
        send_kind, data = collectives.SEND, f"the {kind}'s data"
        reduce_seconds: dict[float, float] = {}  # per piece size: `_reduce_piece`'s seconds
        slot = state.slot
        usage = world.nodes[slot.node].usages[slot.instance]
        for what, peer, piece, reduced, tag in collectives.program(
            operations[index], chunk_b, most
        ):
            if what == send_kind:
                hops = routes.get(peer)
                if hops is None:
                    hops = routes[peer] = world.hops(state.slot, members[peer].slot)
                send(state, members[peer], piece, None, (channel, tag), None, hops)
                continue
            waited_from = engine.now
            message = get(_message_filter((channel, tag), peer=members[peer]), data)
            now = engine.now
            if now > waited_from:
                charge_receive(figures, waited_from, message.sent_at, now)
            if reduced:  # `_reduce_piece`, its seconds kept for the call
                seconds = reduce_seconds.get(piece)
                if seconds is None:
                    seconds = reduce_seconds[piece] = reduce_piece(kind, piece, op)
                if seconds > 0:
                    usage.start(engine.now)
                    engine.pause(seconds)
                    usage.stop(engine.now)
                    figures.compute_s += seconds
        self._collective_done(started, record, kind, chosen, size_b)

    def _collective_done(
        self, started: float, record: dict[str, Any], kind: str, chosen: str, size_b: float
    ) -> None:
        """Close this process's part of a collective call: its record and timeline entry."""
        now = self._engine.now
        record["start_s"] = min(record["start_s"], started)
        record["last_call_s"] = max(record["last_call_s"], started)
        record["end_s"] = max(record["end_s"], now)
        record["_left"] -= 1
        if record["_left"] == 0:
            _finish_record(record)
        self._timeline.add(
            self._process,
            "collective",
            started,
            now,
            collective=kind,
            algorithm=chosen,
            size=size_b,
            call=record["call"],
        )

    def _collective_nccl(
        self,
        kind: str,
        op: object,
        members: list[ProcessState],
        index: int,
        operations: Sequence[list[collectives.Message]],
        chunk: float,
        most: int,
        channel: object,
        protocol: str,
        tree: NcclTree | None,
        rings: list[collectives.RingSpan] | None,
        call: tuple[float, dict[str, Any], str, float],
        arch: nccl_model.Architecture,
    ) -> None:
        """`_collective`'s loop under NCCL's cost layer (simulator.nccl_model): each piece
        goes on the wire as its bytes over the protocol's efficiency on its route, and a
        received piece's reduction runs while the piece streams in, as NCCL's fused kernels
        reduce (the process waits only for what the reduction takes beyond the transfer,
        the reductions of one process one after another). NCCL's tree allreduce (`tree`)
        and NCCL's rings over several nodes (`rings`: `collectives.nccl_ring`'s spans) run
        as streams side by side (`_collective_nccl_streams`)."""
        if tree is not None or rings is not None:
            if tree is not None:
                if most > 0:
                    chunk = float(
                        nccl_model.tree_chunk_bytes(
                            protocol, tree[1], len(tree[2]), len(members), tree[0]
                        )
                    )
                    most = nccl_model.TREE_MOST_PIECES
                streams = collectives.tree_streams(operations[index], chunk, most, tree[2])
            else:
                assert rings is not None
                streams = collectives.ring_streams(operations[index], chunk, most, rings)
            self._collective_nccl_streams(
                kind,
                op,
                members,
                index,
                streams,
                channel,
                protocol,
                None if tree is None else (tree[0], tree[1]),
                arch,
            )
            started, record, chosen, size_b = call
            self._collective_done(started, record, kind, chosen, size_b)
            return
        world, engine, state = self._world, self._engine, self._state
        figures, mailbox = state.figures, state.mailbox
        hosts = [world.hosts.get(m.slot.node, m.slot.node) for m in members]
        wire: dict[int, tuple[Sequence[Hop], float]] = {}  # per peer: hops, wire bytes per byte
        data = f"the {kind}'s data"
        nvls = call[2] == "nvls"  # NVLS's share of a link, whatever the route's class
        slot = state.slot
        usage = world.nodes[slot.node].usages[slot.instance]
        reducer_free = engine.now  # when this process's last reduction ends
        for what, peer, piece, reduced, tag in collectives.program(operations[index], chunk, most):
            if what == collectives.SEND:
                route = wire.get(peer)
                if route is None:
                    hops = world.hops(slot, members[peer].slot)
                    hw = nccl_model.hardware(_leaves_host(hops, hosts[index] != hosts[peer]))
                    share = (
                        nccl_model.nvls_share(arch)
                        if nvls
                        else nccl_model.efficiency(protocol, hw, _route_rate(hops), None, arch)
                    )
                    route = wire[peer] = (hops, 1.0 / share)
                world.send(
                    state, members[peer], piece * route[1], None, (channel, tag), None, route[0]
                )
                continue
            waited_from = engine.now
            message = mailbox.get(_message_filter((channel, tag), peer=members[peer]), data)
            now = engine.now
            if now > waited_from:
                charge_receive(figures, waited_from, message.sent_at, now)
            if reduced:
                seconds = self._reduce_piece(kind, piece, op)
                reducer_free = max(reducer_free, message.sent_at) + seconds
                if reducer_free > now:  # the reduction outlasts the piece's transfer
                    usage.start(now)
                    engine.pause(reducer_free - now)
                    usage.stop(engine.now)
                    figures.compute_s += reducer_free - now
        started, record, chosen, size_b = call
        self._collective_done(started, record, kind, chosen, size_b)

    def _collective_nccl_streams(
        self,
        kind: str,
        op: object,
        members: list[ProcessState],
        index: int,
        streams: list[list[collectives.Operation]],
        channel: object,
        protocol: str,
        shape: tuple[int, float] | None,
        arch: nccl_model.Architecture,
    ) -> None:
        """`_collective_nccl`'s loop for a member's streams (`collectives.tree_streams`: per
        tree of NCCL's tree allreduce its reduction and its broadcast; `ring_streams`: one
        per ring of NCCL's channels over several nodes), run side by side in this one
        process, each in its order: a stream goes on while its next receive is in; when none
        is, the process takes the call's next piece that comes in, keeps it for its stream
        and runs that stream if it waited for it. A connection (a peer, in one stream)
        carries its pieces one after another, as NCCL's chunks go through a peer's buffer,
        while the process goes on with the other streams: over flow links each once the one
        before it arrived (`_Connection`), over store-and-forward hops each at its route's
        rate alone after the one before; the links share what the pieces of several
        connections put on them at once. A piece's
        reduction overlaps its transfer as in `_collective_nccl`. `shape`: (nodes, bytes) of
        NCCL's tree allreduce, whose share of a link is the tree's (`nccl_model.efficiency`),
        None for rings; `arch`: NCCL's constants for the members' GPUs."""
        world, engine, state = self._world, self._engine, self._state
        figures, mailbox = state.figures, state.mailbox
        hosts = [world.hosts.get(m.slot.node, m.slot.node) for m in members]
        slot = state.slot
        usage = world.nodes[slot.node].usages[slot.instance]
        wire: dict[int, tuple[Sequence[Hop], float, float, bool]] = {}  # per peer: hops,
        # wire bytes per byte, seconds a wire byte holds the connection (the route's rate
        # alone), whether the route is flow links only (its connection a `_Connection`)
        busy: dict[tuple[int, int], float] = {}  # per (stream, peer) over FIFO hops: when it frees
        connections: dict[tuple[int, int], _Connection] = {}  # per (stream, peer), over flows
        at = [0] * len(streams)  # each stream's next operation
        pending: dict[tuple[object, ProcessState], int] = {}  # awaited piece: its stream
        arrived: dict[tuple[object, ProcessState], Message] = {}  # in, not yet taken
        reducer_free = engine.now  # when this process's last reduction ends
        started = engine.now
        computing = 0.0

        def step(number: int) -> bool:
            """Run stream `number` while it can; return whether it is finished."""
            nonlocal reducer_free, computing
            stream = streams[number]
            while at[number] < len(stream):
                what, peer, piece, reduced, tag = stream[at[number]]
                if what == collectives.SEND:
                    route = wire.get(peer)
                    if route is None:
                        hops = world.hops(slot, members[peer].slot)
                        crosses = _leaves_host(hops, hosts[index] != hosts[peer])
                        rate = _route_rate(hops)
                        share = nccl_model.efficiency(
                            protocol, nccl_model.hardware(crosses), rate, shape, arch
                        )
                        flows_only = isinstance(hops, FlowRoute) and None not in hops.links
                        route = wire[peer] = (
                            hops,
                            1.0 / share,
                            1.0 / rate if rate > 0 else 0.0,
                            flows_only,
                        )
                    size = piece * route[1]
                    if route[3]:
                        connection = connections.get((number, peer))
                        if connection is None:
                            connection = connections[number, peer] = _Connection(
                                world, state, members[peer], route[0]
                            )
                        connection.send(size, (channel, tag))
                        at[number] += 1
                        continue
                    sending = (state, members[peer], size, None, (channel, tag), None, route[0])
                    now = engine.now
                    free = busy.get((number, peer), now)
                    begin = free if free > now else now
                    busy[number, peer] = begin + size * route[2]
                    if begin > now:
                        engine.schedule(begin - now, _send_later, (world, sending))
                    else:
                        world.send(*sending)
                    at[number] += 1
                    continue
                key = ((channel, tag), members[peer])
                message = arrived.pop(key, None)
                if message is None:
                    pending[key] = number
                    return False
                at[number] += 1
                if reduced:
                    now = engine.now
                    seconds = self._reduce_piece(kind, piece, op)
                    reducer_free = max(reducer_free, message.sent_at) + seconds
                    if reducer_free > now:  # the reduction outlasts the piece's transfer
                        usage.start(now)
                        engine.pause(reducer_free - now)
                        usage.stop(engine.now)
                        computing += reducer_free - now
            return True

        left = sum(1 for number in range(len(streams)) if not step(number))
        of_call, data = _OfCall(channel), f"the {kind}'s data"
        while left:  # every piece of the call that comes in, kept for its stream
            message = mailbox.get(of_call, data)
            key = (message.channel, message.source)
            arrived[key] = message
            number = pending.pop(key, None)
            if number is not None and step(number):
                left -= 1
        figures.compute_s += computing
        figures.comm_s += engine.now - started - computing

    def _collective_plan(
        self,
        call: str,
        kind: str,
        size: float,
        names: tuple[str, ...],
        members: list[ProcessState],
        root: int,
        algorithm: object,
        chunk: float,
        most: int,
        protocol: str = "ideal",
    ) -> tuple[
        str,
        Sequence[list[collectives.Message]],
        Callable[[object, float], dict[str, Any]],
        float | None,
        NcclLayer | None,
        tuple[float, int],
    ]:
        """Return the algorithm, every member's messages, the call's record maker, under
        NCCL's cost layer `NcclLayer`, and the (chunk, most pieces) its messages travel by,
        of a collective, made once per run for its arguments (every member asks)."""
        world = self._world
        key = ("plan", kind, size, names, root, algorithm, chunk, most, protocol)
        plan = world.collectives.get(key)
        if plan is not None:
            return plan
        hosts = [world.hosts.get(m.slot.node, m.slot.node) for m in members]
        model = self._collective_model(kind, members) if algorithm == "auto" else None
        model_seconds: float | None = None
        if model is not None:
            chosen = "model"
            assert model.functions is not None
            params = {"participants": len(members), "collective": kind}
            model_seconds = model.functions.call(f"{kind}Time", size, params=params)
            steps: collectives.Schedule = []
        crossing: dict[tuple[int, int], bool] = {}  # per pair: whether it leaves a host

        def crosses(a: int, b: int) -> bool:
            known = crossing.get((a, b))
            if known is None:
                hops = world.hops(members[a].slot, members[b].slot)
                known = crossing[a, b] = _leaves_host(hops, hosts[a] != hosts[b])
            return known

        arch = self._nccl_architecture(members)
        if model is None:
            if algorithm != "auto":
                chosen = str(algorithm)
                if chosen == "nvls":
                    refusal = self._nvls_refusal(members, crosses, arch)
                    if refusal is not None:
                        raise ApiUsageError(
                            collectives.COLLECTIVE_MESSAGES["nvls"].format(call=call, why=refusal)
                        )
                    if protocol not in ("ideal", "nccl", nccl_model.NVLS_PROTOCOL):
                        raise ApiUsageError(
                            collectives.COLLECTIVE_MESSAGES["nvls_protocol"].format(
                                call=call, value=protocol
                            )
                        )
            elif protocol == "nccl" and kind == "allreduce" and len(members) > 1:
                chosen = self._nccl_algorithm(
                    size, members, _nccl_nodes(len(members), crosses), crosses, arch
                )
            else:
                chosen = collectives.choose(kind, size, hosts)
            try:
                steps = collectives.schedule(kind, chosen, size, hosts, root, call)
            except collectives.ScheduleError as error:
                raise ApiUsageError(str(error)) from None
        if chosen == "nvls" and most > 0:
            # without a `chunk` NVLS's messages travel whole: its one step has nothing to
            # pipeline, and in pieces each piece would wait for every peer's previous one, a
            # round trip NCCL's NVLS kernel does not make (its pieces stream through the
            # switch, NCCL_STEPS slots deep); `chunk` given, its pieces are kept
            chunk, most = 0.0, 0
        tree: tuple[int, float] | None = None  # NCCL's tree allreduce: (nodes, bytes)
        spans: list[collectives.TreeSpan] = []  # its trees' steps (`collectives.tree_streams`)
        rings: list[collectives.RingSpan] | None = None  # NCCL's rings' steps (`ring_streams`)
        ring_nodes = 1  # the nodes NCCL's rings cross (`nccl_model.step_latency_us`)
        if protocol != "ideal" and kind == "allreduce" and chosen in nccl_model.TREE_ALGORITHMS:
            nodes = _nccl_nodes(len(members), crosses)
            steps, spans = collectives.nccl_tree(size, nodes)
            tree = (len(nodes), size)
        elif protocol != "ideal" and chosen == "ring" and kind in collectives.NCCL_RING_KINDS:
            nodes = _nccl_nodes(len(members), crosses)
            if len(nodes) > 1:  # NCCL's rings, a channel through each member's link
                steps, rings = collectives.nccl_ring(kind, size, nodes)
                ring_nodes = len(nodes)
        # trees and rings run side by side: the call's steps are one tree's or ring's
        step_count = spans[0][2] if spans else rings[0][1] if rings else len(steps)
        messages, wire = collectives.wire_figures(steps)
        operations = collectives.MemberMessages(steps, len(members))
        layer: NcclLayer | None = None
        if protocol != "ideal" and steps:
            if tree is None:
                # each step's hardware along one piece's path (NCCL counts a ring's steps so):
                # the transfer that forwards what the previous step delivered, else the first
                step_hw = []
                step_route = []  # each step's route latency, which its transfer pays
                at = -1
                for step in steps[:step_count]:  # the first ring's, where there are several
                    pick = next((t for t in step if t[0] == at), step[0])
                    step_hw.append(nccl_model.hardware(crosses(pick[0], pick[1])))
                    step_route.append(
                        _route_latency(world.hops(members[pick[0]].slot, members[pick[1]].slot))
                    )
                    at = pick[1]
                pairs = {(a, b) for a, b, _, _ in steps[0]}  # the first step's: NCCL's bus
            else:
                step_hw = nccl_model.tree_steps(len(members) // tree[0], tree[0])
                pairs = {(a, b) for step in steps for a, b, _, _ in step}  # the whole tree's
                by_hw: dict[str, float] = {}  # the latency of a route of each hardware class
                for a, b in sorted(pairs):
                    hw = nccl_model.hardware(crosses(a, b))
                    if hw not in by_hw:
                        by_hw[hw] = _route_latency(world.hops(members[a].slot, members[b].slot))
                step_route = [by_hw[hw] for hw in step_hw]
            rate = min(  # the slowest of these routes: the bus NCCL's model divides by
                _route_rate(world.hops(members[a].slot, members[b].slot)) for a, b in pairs
            )
            chosen_protocol = protocol
            if chosen == "nvls":
                chosen_protocol = nccl_model.NVLS_PROTOCOL
            elif protocol == "nccl":
                factor = collectives.BUS_FACTORS[kind](len(members))
                chosen_protocol = nccl_model.choose(
                    chosen, size, factor, step_hw, rate, tree, ring_nodes, arch
                )
            latency = nccl_model.latency_s(chosen, chosen_protocol, step_hw, ring_nodes)
            charged = latency
            if rings is not None or (tree is not None and tree[0] > 1):
                # NCCL's channels over several nodes: each step's latency once
                charged = nccl_model.charged_latency_s(
                    chosen, chosen_protocol, step_hw, step_route, ring_nodes
                )
            layer = (
                chosen_protocol,
                charged,
                nccl_model.LAUNCH_US * 1e-6,
                None if tree is None else (*tree, spans),
                rings,
                latency,
                arch,
            )
        records: dict[object, dict[str, Any]] = {}

        def record_of(channel: object, now: float) -> dict[str, Any]:
            record = records.get(channel)
            if record is None:
                record = records[channel] = {
                    "call": len(world.collective_calls),
                    "collective": kind,
                    "algorithm": chosen,
                    "requested": str(algorithm),
                    "model_node": None if model is None else model.id,
                    "participants": len(members),
                    "labels": list(names),
                    "size": size,
                    "chunk": chunk,
                    "most_pieces": most or None,
                    "protocol": protocol if layer is None else layer[0],
                    "protocol_latency_s": None if layer is None else layer[5],
                    "charged_latency_s": None if layer is None else layer[1],
                    "launch_s": None if layer is None else layer[2],
                    "steps": step_count,
                    "messages": messages,
                    "wire_bytes": wire,
                    "start_s": now,
                    "last_call_s": now,
                    "end_s": now,
                    "time_s": None,
                    "algbw": None,
                    "busbw": None,
                    "_left": len(members),
                }
                world.collective_calls.append(record)
            return record

        plan = world.collectives[key] = (
            chosen,
            operations,
            record_of,
            model_seconds,
            layer,
            (chunk, most),
        )
        return plan

    def _nvls_refusal(
        self,
        members: list[ProcessState],
        crosses: Callable[[int, int], bool],
        arch: nccl_model.Architecture,
    ) -> str | None:
        """Return why NVLS cannot run over these members, None where it can: GPUs of a
        generation NCCL runs NVLS on (`arch`, from Hopper), every member on one node (NCCL
        runs NVLS over several nodes only with CollNet, not modelled), and every route
        between two members through a switch whose record says it supports NVLink SHARP
        (`NodeRuntime.nvls`, the hardware attribute `nvls`)."""
        if arch.nvls_efficiency == 0:
            return f"NCCL runs no NVLS on {arch.name} GPUs (compute capability below 9.0)"
        count = len(members)
        nodes = _nccl_nodes(count, crosses)
        if len(nodes) > 1:
            return f"the participants are on {len(nodes)} nodes (NVLS over several nodes is not modelled)"
        world = self._world
        for a in range(count):
            for b in range(count):
                if a == b:
                    continue
                hops = world.hops(members[a].slot, members[b].slot)
                if not any(hop[0].is_network and hop[0].nvls for hop in hops):
                    crossed = ", ".join(dict.fromkeys(hop[0].title for hop in hops)) or "no switch"
                    return (
                        f"the route from {members[a].name} to {members[b].name} crosses "
                        f"{crossed}, none with 'nvls'"
                    )
        return None

    def _nccl_algorithm(
        self,
        size: float,
        members: list[ProcessState],
        nodes: list[list[int]],
        crosses: Callable[[int, int], bool],
        arch: nccl_model.Architecture,
    ) -> str:
        """Return the allreduce algorithm NCCL's model picks ("ring", "tree" or "nvls",
        `nccl_model.choose_algorithm`) for these members grouped into `nodes`: the bus is a
        node's NVLink at NCCL's Simple share, over several nodes at most a channel per member
        crossing at its route's rate (the channels of `collectives.nccl_ring`/`nccl_tree`);
        NVLS is a candidate where `_nvls_refusal` finds nothing against it; `arch`: NCCL's
        constants for the members' GPUs."""
        world = self._world

        def rate(a: int, b: int) -> float:
            return _route_rate(world.hops(members[a].slot, members[b].slot))

        first = nodes[0]
        bus = (
            rate(first[0], first[1]) * nccl_model.link_efficiency("nvlink", arch)
            if len(first) > 1
            else 0.0
        )
        if len(nodes) > 1:
            across = rate(first[0], nodes[1][0]) * min(len(node) for node in nodes)
            bus = min(bus, across) if bus > 0 else across
        nvls = (
            nccl_model.nvls_enabled(len(members), len(nodes))
            and self._nvls_refusal(members, crosses, arch) is None
        )
        return nccl_model.choose_algorithm(size, len(members), len(nodes), bus, nvls, arch)

    def _nccl_architecture(self, members: list[ProcessState]) -> nccl_model.Architecture:
        """Return NCCL's constants for these members' GPUs: by the smallest compute
        capability among their nodes' records, as NCCL takes its communicator's
        (`nccl_model.architecture`; a node whose record gives none does not count)."""
        nodes = self._world.nodes
        known = [
            capability
            for node in dict.fromkeys(m.slot.node for m in members)
            if (capability := nodes[node].compute_capability) is not None
        ]
        return nccl_model.architecture(min(known) if known else None)

    def _collective_model(self, kind: str, members: list[ProcessState]) -> NodeRuntime | None:
        """Return the node whose model gives the time of the whole call (MERPSYS's
        per-hardware collective functions, 000 section 3): the first node, in route order,
        that lies on the route from the first participant to every other (the participants'
        own node when they share one) and whose model defines `<kind>Time(size, params)`."""
        world = self._world
        first = members[0].slot.node
        common: list[str] | None = None
        for member in members[1:]:
            path = world.routes.path(first, member.slot.node)
            common = list(path) if common is None else [n for n in common if n in path]
        for node_id in common or [first]:
            node = world.nodes[node_id]
            if node.functions is not None and node.functions.has(f"{kind}Time"):
                return node
        return None

    def _reduce_piece(self, kind: str, piece: float, op: object) -> float:
        """Return the seconds the reduction of a received piece of `piece` bytes takes on
        this process's node, which `_collective` charges to it: its model's
        `reduceTime(bytes, params)` when it defines one; on a GPU, the bytes read and written
        (`bytes`) at its DRAM roof, as NCCL reduces inside its communication kernel (no
        kernel launch per piece); else its `computationTime(params)` with `flops` one per
        4-byte element and `bytes`; a node with none of these reduces for free (0)."""
        slot = self._state.slot
        world = self._world
        node = world.nodes[slot.node]
        key = ("reduce", node.id, kind, piece, op)
        seconds = world.collectives.get(key)
        if seconds is None:
            seconds = world.collectives[key] = self._reduction_time(node, kind, piece, op)
        return seconds

    @staticmethod
    def _reduction_time(node: NodeRuntime, kind: str, piece: float, op: object) -> float:
        """Return the seconds `node` takes to reduce a piece (`_reduce_piece`), 0 without
        a model that says."""
        functions = node.functions
        params = {
            "collective": kind,
            "op": str(op),
            "flops": piece / REDUCE_ELEMENT_BYTES,
            "bytes": 3 * piece,
        }
        if functions is not None and functions.has("reduceTime"):
            return functions.call("reduceTime", piece, params=params)
        if node.reduce_bytes_per_s:
            return 3 * piece / node.reduce_bytes_per_s
        if functions is not None and functions.has(COMPUTATION_TIME):
            return node.computation_time(params)
        return 0.0

    def barrier(self, labels: object = None) -> Any:
        """Block until every participant (processes of `labels`, default all) reached it."""
        names, members, _ = self._participants("sim.barrier", labels)
        started = self._engine.now
        waiting = self._world.arrive(names, len(members))
        if waiting is None:  # the last to arrive: nobody waits any more
            return None
        return self._barrier_wait(*waiting, started)


class _OfCall:
    """A mailbox filter: any piece of one collective call (its channel, any tag)."""

    __slots__ = ("channel",)

    def __init__(self, channel: object) -> None:
        self.channel = channel

    def __call__(self, message: Message) -> bool:
        tagged = message.channel
        return tagged.__class__ is tuple and len(tagged) == 2 and tagged[0] == self.channel


class _Connection:
    """A connection of `Sim._collective_nccl_streams` (a peer, in one stream) over a route
    of flow links: its pieces cross one at a time, in order, each once the one before it has
    arrived, a piece that was ready before then joining the wire right behind that one
    (`World.send`'s `ready_at`). NCCL moves a connection's data so: its threads write slice
    after slice, waiting for each slot of the peer's buffer and posting the step before the
    next (NVIDIA/nccl commit 5067397c2676d5aed50042fc39e5c8ee96eb0027,
    src/device/prims_simple.h lines 101-160, waitPeer, and 165-167, postPeer, in the loop of
    lines 218-281), so the data of a connection is one stream at whatever rate the links give
    it. Pieces sent side by side as flows of their own would each take a share of a link
    they cross, a connection with several pieces in flight taking several shares against
    another's one, and each piece would arrive later than in order, delaying what its
    receiver forwards."""

    __slots__ = ("held", "hops", "moving", "source", "target", "world")

    def __init__(
        self, world: World, source: ProcessState, target: ProcessState, hops: Sequence[Hop]
    ) -> None:
        self.world = world
        self.source = source
        self.target = target
        self.hops = hops
        self.moving = False  # whether a piece of it is on its way
        self.held: list[tuple[float, object, float]] = []  # waiting: bytes, channel, when ready

    def send(self, size: float, channel: object) -> None:
        """Send a piece of `size` bytes on `channel` now, or after those on their way."""
        if self.moving:
            self.held.append((size, channel, self.world.engine.now))
            return
        self.moving = True
        self.world.send(
            self.source, self.target, size, None, channel, None, self.hops, self._arrived
        )

    def _arrived(self) -> None:
        """The piece on its way arrived: the next held one follows it."""
        held = self.held
        if held:
            size, channel, ready = held.pop(0)
            self.world.send(
                self.source, self.target, size, None, channel, None, self.hops, self._arrived, ready
            )
        else:
            self.moving = False


def _send_later(call: tuple[World, tuple[Any, ...]]) -> None:
    """Send, from an engine event, a message `_collective_nccl` held back for its connection."""
    world, sending = call
    world.send(*sending)


def _nccl_nodes(count: int, crosses: Callable[[int, int], bool]) -> list[list[int]]:
    """Return the members 0..count-1 grouped into NCCL's nodes: those whose routes to each
    other stay inside a host (`crosses` False: one NVLink fabric), in member order; a member
    is tried against the newest node first, so that ranks numbered node by node cost one
    route each."""
    nodes: list[list[int]] = []
    for member in range(count):
        home = next((node for node in reversed(nodes) if not crosses(node[0], member)), None)
        if home is None:
            nodes.append([member])
        else:
            home.append(member)
    return nodes


def _leaves_host(hops: Sequence[Hop], other_host: bool) -> bool:
    """Return whether a route is NCCL's network rather than one host's NVLink: its ends on
    different hosts, or its hops on more than one network node (a NIC, a switch, beyond the
    one fabric a host's GPUs share: instances of a topology template share one host key)."""
    return other_host or len({hop[0].id for hop in hops}) > 1


def _route_latency(hops: Sequence[Hop]) -> float:
    """Return the seconds a route's hops charge before its first byte arrives: each hop's
    model time for an empty message."""
    return sum(hop[0].transfer_time(0.0, None) for hop in hops)


def _route_rate(hops: Sequence[Hop]) -> float:
    """Return the bytes per second of a route's slowest hop alone (its model's time for
    2 MB less that for 1 MB: the latency cancels), for NCCL's protocol bandwidths; 0 when
    no hop charges time."""
    rates = []
    for hop in hops:
        node = hop[0]
        extra = node.transfer_time(2e6, None) - node.transfer_time(1e6, None)
        if extra > 0:
            rates.append(1e6 / extra)
    return min(rates, default=0.0)


REDUCE_ELEMENT_BYTES = 4
"""A reduction's element: 4 bytes (float32, nccl-tests' default type), one flop each."""


def _finish_record(record: dict[str, Any]) -> None:
    """Set a collective call's time (from its last participant's call, when every
    participant is in it, to the last return) and its algorithm and bus bandwidth once its
    last participant left it (nccl-tests' doc/PERFORMANCE.md: algbw = size / time, busbw =
    algbw x the collective's factor)."""
    del record["_left"]
    time_s = record["end_s"] - record["last_call_s"]
    record["time_s"] = time_s
    if time_s > 0:
        algbw = record["size"] / time_s
        record["algbw"] = algbw
        record["busbw"] = collectives.bus_bandwidth(
            record["collective"], algbw, record["participants"]
        )


def _checked_size(sim: _SimCalls, call: str, size: object) -> float:
    """Return `size` in bytes: `Sim._check_size`, a plain finite number >= 0 taken at once
    (a send's or a collective's call per message)."""
    kind = size.__class__
    if (kind is float or kind is int) and 0 <= size < _INF:  # type: ignore[operator]
        return float(size)  # type: ignore[arg-type]
    return sim._check_size(call, size)


def _on_a_greenlet() -> bool:
    """Whether the caller runs on a process's greenlet (a stackless process's borrowed one),
    where a call blocks as Sim's do, rather than on the loop's."""
    return isinstance(getcurrent(), Process)


def _size(message: Message) -> float:
    return message.size


def _no_value(_message: Message) -> None:
    return None


def _on_borrowed_greenlet(method: Callable[..., Any]) -> Callable[..., Any]:
    """Return `method` made for a stackless process: it runs on a greenlet the process
    borrows for the call (StacklessProcess.call), and gives WAIT when it blocked."""

    def call(self: StacklessSim, *args: object, **kwargs: object) -> object:
        return self._stackless.call(method, self, *args, **kwargs)

    call.__name__ = method.__name__
    call.__qualname__ = f"StacklessSim.{method.__name__}"
    call.__doc__ = method.__doc__
    return call


class StacklessSim(Sim):
    """The `sim` object of a stackless process (simulator.engine.StacklessProcess).

    Its application model yields at every `sim` call that may wait
    (simulator.sandbox.stackless); a call that must wait gives WAIT. A `computation` starts
    without waiting (`SimCore._resumed` ends it): a memoized one in the C core, any other but
    one with memory work after its model is evaluated here. A receive and the collectives
    wait in the process's mailbox or the barrier's event count, with a continuation
    (`_continuation`) that does what Sim's code does after its wait. Memory calls, and any
    call made on a borrowed greenlet, block there as Sim's do: the same code, the same
    results (tests/simulator/test_stackless.py).
    """

    __slots__ = ()
    if TYPE_CHECKING:  # the C core's (simulator/_speedups.c SimCore)
        _stackless: StacklessProcess

        def _start_computing(
            self, duration: float, detail: dict[str, object] | None, params: Mapping[str, object]
        ) -> object: ...
        def _await_message(self, started: float, then: Callable[[Message], object]) -> None: ...
        def _take_or_wait(
            self,
            accept: Callable[[Message], bool],
            waiting: str,
            then: Callable[[Message], object] | None,
        ) -> object: ...

    def _computation_fallback(
        self,
        params: Mapping[str, object] | None = None,
        software_stack: object = None,
        optimization: object = None,
        memory: Mapping[str, object] | None = None,
    ) -> Any:
        """What the C core's `computation` leaves to Python: the model evaluated here and the
        computation started as the memoized one (WAIT); with `memory`, on a borrowed
        greenlet (the memory hierarchy's transfers wait in turn)."""
        if memory is not None or _on_a_greenlet():
            return self._stackless.call(
                _PythonSimCore.computation, self, params, software_stack, optimization, memory
            )
        params, duration, detail = self._evaluated(params)
        return self._start_computing(duration, detail, params)

    memoryAccess = _on_borrowed_greenlet(Sim.memoryAccess)
    allreduce = _on_borrowed_greenlet(Sim.allreduce)
    allgather = _on_borrowed_greenlet(Sim.allgather)
    reduceScatter = _on_borrowed_greenlet(Sim.reduceScatter)
    reduce = _on_borrowed_greenlet(Sim.reduce)
    alltoall = _on_borrowed_greenlet(Sim.alltoall)
    memoryFlush = _on_borrowed_greenlet(Sim.memoryFlush)
    # p2pCommunicationSend never waits: Sim's, on whichever greenlet runs the process

    def _receive_fallback(self, source_label: object, source_rank: object = None) -> Any:
        """Sim's receive: a message already there is taken at once; else the process waits
        in its mailbox (no greenlet) and gets the message's size when it comes."""
        if _on_a_greenlet():  # a borrowed one: block as Sim does
            return Sim.p2pCommunicationReceive(self, source_label, source_rank)
        accept, waiting = self._receiving_from(source_label, source_rank)
        return self._wait_for_message(accept, waiting, _size)

    # A receive and the rooted collectives: the C core's `SimCore._stackless_<call>` makes in C
    # a receive from a source the run received from before, and a collective's call of a
    # process that is not its root of a collective the run checked before, and calls the
    # Python call for every other (NAMES: "<call>_fallback"); without the C core, the Python
    # calls (a StacklessSim runs on the C core only: engine.STACKLESS_CORE).
    _broadcast_fallback = Sim.broadcast
    _scatter_fallback = Sim.scatter
    _gather_fallback = Sim.gather
    p2pCommunicationReceive = hotpath.choose(_receive_fallback, "SimCore._stackless_receive")
    broadcast = hotpath.choose(Sim.broadcast, "SimCore._stackless_broadcast")
    scatter = hotpath.choose(Sim.scatter, "SimCore._stackless_scatter")
    gather = hotpath.choose(Sim.gather, "SimCore._stackless_gather")

    # broadcast, scatter, gather and barrier are Sim's, waiting through these:

    def _collective_receive(self, channel: object, waiting: str) -> object:
        if _on_a_greenlet():
            return Sim._collective_receive(self, channel, waiting)
        return self._wait_for_message(_message_filter(channel), waiting, _no_value)

    def _gather_messages(self, channel: object, count: int) -> object:
        if _on_a_greenlet():
            return Sim._gather_messages(self, channel, count)

        accept = _message_filter(channel)

        def rest(remaining: int) -> object:
            if remaining == 0:
                return None
            return self._wait_for_message(
                accept, "the gather's messages", lambda _message: rest(remaining - 1)
            )

        return rest(count)

    def _barrier_wait(self, event_count: EventCount, generation: int, started: float) -> object:
        if _on_a_greenlet():
            return Sim._barrier_wait(self, event_count, generation, started)
        if not event_count.wait(self._stackless, generation):
            self._barrier_waited(started)
            return None
        self._continuation = functools.partial(self._barrier_waited, started)
        return WAIT

    def _wait_for_message(
        self, accept: Callable[[Message], bool], waiting: str, then: Callable[[Message], object]
    ) -> object:
        """Return `then(message)` for the oldest message `accept` takes, accounted as a
        receive; WAIT when there is none yet: the process then waits in its mailbox, and
        gets `then(message)` (which may wait again) when the message comes. The C core's
        `_take_or_wait` does it where it can (then None there: the message's size); a
        StacklessSim runs on the C core only (`engine.STACKLESS_CORE`)."""
        result = self._take_or_wait(accept, waiting, then)
        if result is not NotImplemented:
            return result
        started = self._engine.now
        mailbox = self._state.mailbox
        message = mailbox.take(accept)
        if message is not None:
            return then(self._received(started, message))
        mailbox.wait(self._stackless, accept, waiting)
        self._await_message(started, then)  # `_resumed` gives then(self._received(...))
        return WAIT
