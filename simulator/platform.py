"""The platform of a run: nodes, their link FIFOs, messages in transit, and the world.

What the processes share and the `sim` object (simulator.api) acts on, as SimGrid's S4U
puts hosts, links and communications beside its actor API:

* `NodeRuntime`: one node of the system, its model (`ModelFunctions`), the usage of each
  instance, and one FIFO per instance and travel direction (the pair of neighbours on the
  path), so transfers through a node contend there; `p2pTime` is kept per distinct
  (size, direction, host memory), a model being a function of them.
* `Message` and `_Transfer`: a message crossing its charging hops store and forward, a hop
  starting when the previous one ended, into the target's mailbox.
* `FlowRoute` and `_RouteTransfer`: a route that crosses flow links (a network node whose
  `sharing` is "shared" or "full-duplex"): each run of consecutive flow links is crossed as
  one flow of simulator.flows (bandwidth shared by max-min fairness), its FIFO hops store and
  forward as above (docs/network-model.md).
* `ProcessState`: the world's record of one simulated process (placement, mailbox, figures).
* `World`: the engine, nodes, routes, processes, timeline and memory system of one run, the
  hops between two slots (cached), sends and barriers.

The semantics the application model sees are written in simulator.api's docstring.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Protocol

from simulator import hotpath
from simulator.engine import Engine, EventCount, Mailbox, Resource
from simulator.errors import ModelEvaluationError
from simulator.flows import FLOW_MESSAGES, FLOW_SHARING, FlowLink, FlowNetwork, FlowPath
from simulator.placement import Routes, Slot
from simulator.results import ProcessFigures, Timeline, Usage
from simulator.topology import port_switches

if TYPE_CHECKING:  # loaded by the runner only for systems with a memory hierarchy
    from simulator.memsys import MemorySystem

NODE_MESSAGES = {
    "no_model": "node {node!r} has no computational model",
    "no_function": "the model does not define {function}()",
}


class ModelFunctions(Protocol):
    """A computational model bound to a hardware record (simulator.shallow.ShallowFunctions)."""

    def has(self, function: str) -> bool:
        """Return whether the model defines `function`."""
        ...

    def call(self, function: str, *args: object, params: Mapping[str, object]) -> float:
        """Return the value of `function(*args, params)`: seconds that passed the one rule of
        a model's times (simulator.errors.model_seconds), else ModelEvaluationError."""
        ...

    def evaluate(self, function: str, *args: object, params: Mapping[str, object]) -> float:
        """Return `call`'s value for a caller that keeps its own memo of the values."""
        ...

    def evaluator(
        self, function: str
    ) -> Callable[[tuple[object, ...], Mapping[str, object]], float]:
        """Return `(args, params) -> evaluate(function, *args, params=params)`, made once for
        a caller that evaluates `function` many times."""
        ...

    def call_detail(self, function: str, *, params: Mapping[str, object]) -> dict[str, object]:
        """Return `function(params)` as a flat object (see ShallowFunctions.call_detail)."""
        ...


class NodeRuntime:
    """One node of the system during a run: its model, instances' usage and link FIFOs."""

    __slots__ = (
        "_links",
        "_p2p_time",
        "_transfer_times",
        "computation_memos",
        "compute_capability",
        "engine",
        "functions",
        "has_detail",
        "has_p2p",
        "id",
        "is_network",
        "model_key",
        "nvls",
        "reduce_bytes_per_s",
        "sharing",
        "title",
        "usages",
    )

    def __init__(
        self,
        engine: Engine,
        node_id: str,
        *,
        count: int,
        capacity: int,
        is_network: bool,
        model_key: str | None,
        functions: ModelFunctions | None,
        title: str | None = None,
        sharing: str = "fifo",
        reduce_bytes_per_s: float | None = None,
        nvls: bool = False,
        compute_capability: float | None = None,
    ) -> None:
        self.engine = engine
        self.id = node_id
        # a GPU's record's `computeCapability`, which picks NCCL's per-generation constants
        # (simulator.nccl_model.architecture); None for other hardware or where not given
        self.compute_capability = compute_capability
        # whether the node's record says the switch reduces and multicasts NVLink traffic
        # (NVLink SHARP), which a collective's algorithm "nvls" needs (simulator.api)
        self.nvls = nvls
        # the rate at which a collective's reduction streams through the node's memory: a
        # GPU's DRAM roof (simulator.api Sim._reduction_time); None for other hardware
        self.reduce_bytes_per_s = reduce_bytes_per_s
        self.sharing = sharing  # simulator.flows.SHARING_POLICIES
        self.title = title or node_id  # what messages call the node: its name
        self.is_network = is_network
        self.model_key = model_key
        self.functions = functions
        self.has_p2p = functions is not None and functions.has("p2pTime")
        # what a transfer time the node's memo lacks evaluates (transfer_time)
        self._p2p_time = (
            functions.evaluator("p2pTime") if functions is not None and self.has_p2p else None
        )
        self.has_detail = functions is not None and functions.has("computationDetail")
        self.usages = [Usage(node_id, instance, capacity) for instance in range(count)]
        # what a computation of any process on the node looks its values up in (the memo,
        # the detail memo, the miss), found as its first process's sim is made
        # (simulator.api `_node_memos`)
        self.computation_memos: tuple[Any, Any, Any] | None = None
        self._links: dict[tuple[int, str, str], Resource] = {}
        self._transfer_times: dict[tuple[object, ...], float] = {}

    def link(self, instance: int, came_from: str, going_to: str) -> Resource:
        """Return the FIFO of `instance` for messages travelling from one neighbour to another."""
        key = (instance, came_from, going_to)
        link = self._links.get(key)
        if link is None:
            link = Resource(self.engine, f"link {self.id}[{instance}] {came_from}->{going_to}")
            self._links[key] = link
        return link

    def _time(self, function: str, *args: object, params: Mapping[str, object]) -> float:
        if self.functions is None:
            raise ModelEvaluationError(
                NODE_MESSAGES["no_model"].format(node=self.title), model="(none)", function=function
            )
        if not self.functions.has(function):
            raise ModelEvaluationError(
                NODE_MESSAGES["no_function"].format(function=function),
                model=str(self.model_key),
                function=function,
            )
        return self.functions.call(function, *args, params=params)  # checked where evaluated

    def computation_time(self, params: Mapping[str, object]) -> float:
        """Return `computationTime(params)` of the node's model, in seconds."""
        return self._time("computationTime", params=params)

    def computation_detail(self, params: Mapping[str, object]) -> dict[str, object] | None:
        """Return `computationDetail(params)` of the node's model (what bounds a kernel, the
        occupancy used, ...) for the timeline, or None when the model defines none."""
        functions = self.functions
        if functions is None or not self.has_detail:
            return None
        return functions.call_detail("computationDetail", params=params)

    def transfer_time(
        self, size: float, direction: str | None, host_memory: str | None = None
    ) -> float:
        """Return `p2pTime(size, params)` with `params.direction` and `params.hostMemory` set
        when they were given (remembered per arguments: a model is a function of them; a size
        that `hotpath.js_mark` marks has the mark in its key). The C core's hop reads
        `_transfer_times` itself and calls this only for a time not there (or a marked size)."""
        key: tuple[object, ...] = (size, direction, host_memory)
        if size == 0.0 and hotpath.js_mark(size):  # -0 bytes: JavaScript tells it from 0 (1 / size)
            key = (*key, hotpath.js_mark(size))
        seconds = self._transfer_times.get(key)
        if seconds is not None:
            return seconds
        # evaluated here rather than in a helper: every distinct transfer comes this way
        params: dict[str, object] = {}
        if direction is not None:
            params["direction"] = direction
        if host_memory is not None:
            params["hostMemory"] = host_memory
        p2p_time = self._p2p_time
        if p2p_time is None:  # `_time` says what is missing
            seconds = self._time("p2pTime", size, params=params)
        else:
            # kept per arguments below: the twin's value needs no second memo
            seconds = p2p_time((size,), params)
        self._transfer_times[key] = seconds
        return seconds


class Message:
    """A message in flight or delivered: who sent it, how big, on which channel, when, and
    the host memory kind of its copy (None: not given, the link model's default). The C core
    makes one by setting these slots itself, as `__init__` does, while the class is as it was
    when `api` handed it over (simulator/_speedups.c `message_made`)."""

    __slots__ = ("channel", "direction", "host_memory", "sent_at", "size", "source")

    def __init__(
        self,
        source: ProcessState,
        size: float,
        direction: str | None,
        channel: object,
        now: float,
        host_memory: str | None = None,
    ) -> None:
        self.source = source
        self.size = size
        self.direction = direction
        self.channel = channel
        self.sent_at = now
        self.host_memory = host_memory


class ProcessState:
    """The world's record of one simulated process: placement, mailbox, figures."""

    __slots__ = ("collectives", "engine", "figures", "mailbox", "name", "slot")

    if TYPE_CHECKING:  # made at first use (__getattr__): a process that only computes has none
        mailbox: Mailbox
        collectives: dict[tuple[object, ...], int]

    def __init__(self, engine: Engine, slot: Slot) -> None:
        self.engine = engine
        self.slot = slot
        self.name = name = slot.name
        self.figures = ProcessFigures(slot.label, slot.rank, slot.node, slot.instance, name)

    def __getattr__(self, name: str) -> Any:
        """Make the mailbox or the collectives' counters at their first use (only an unset
        slot comes here)."""
        if name == "mailbox":
            self.mailbox = Mailbox(self.engine, f"the mailbox of {self.name}")
            return self.mailbox
        if name == "collectives":
            self.collectives = {}
            return self.collectives
        raise AttributeError(name)


Hop = tuple[NodeRuntime, int, Resource, Usage]
"""A charging hop: the network node, its instance, the FIFO of the hop's travel direction
and the instance's usage (resolved once per pair of slots, World.hops)."""


class _Transfer:
    """One message crossing its hops, store and forward, one FIFO per hop direction: the
    sender asks for the first hop's FIFO (World.send), each hop's end for the next one's.
    A FIFO calls the transfer with None when the hop may start; the engine calls it with True
    when the hop ends. The C core's `Transfer` (simulator/_speedups.c) does the same in C;
    this is its reference, used without the C core."""

    __slots__ = ("engine", "hop_start", "hops", "index", "message", "target", "timeline")

    def __init__(
        self,
        engine: Engine,
        timeline: Timeline,
        message: Message,
        hops: Sequence[Hop],
        target: ProcessState,
    ) -> None:
        self.engine = engine
        self.timeline = timeline
        self.message = message
        self.hops = hops
        self.target = target
        self.index = 0
        self.hop_start = 0.0

    def __call__(self, end: object) -> None:
        if end is True:
            self._end()
        else:
            self._start()

    def _start(self) -> None:
        node, _, _, usage = self.hops[self.index]
        message = self.message
        duration = node.transfer_time(message.size, message.direction, message.host_memory)
        engine = self.engine
        now = self.hop_start = engine.now
        usage.start(now)
        engine.schedule(duration, self, True)

    def _end(self) -> None:
        hops = self.hops
        index = self.index
        node, instance, link, usage = hops[index]
        now = self.engine.now
        usage.stop(now)
        link.release()
        message = self.message
        timeline = self.timeline
        if timeline.full:
            timeline.dropped += 1
        else:
            timeline.add(
                message.source.name,
                "transfer",
                self.hop_start,
                now,
                node=node.id,
                instance=instance,
                size=message.size,
                direction=message.direction,
                to=self.target.name,
            )
        index += 1
        if index == len(hops):
            self.target.mailbox.put(message)
        else:
            self.index = index
            hops[index][2].request(self, None)


class FlowRoute(tuple[Hop, ...]):
    """The charging hops of a route that crosses flow links, with `links`: per hop, its
    flow constraint (simulator.flows.FlowLink), or None for a store-and-forward hop, whose
    FIFO the hop holds. Not an exact tuple, so the C core's sends leave it to Python
    (`World.send`): the flow model has no C twin."""

    links: tuple[FlowLink | None, ...]
    # per hop, the port a flow leaves a template's switch by (simulator.topology
    # SWITCH_ROLES): its second constraint, `links` holding the port it enters by; else None
    exits: tuple[FlowLink | None, ...]
    # per (stage's first hop, size, direction, host memory): the flow path of the stage's
    # run of flow links, the index after it and its hops' usages (`_RouteTransfer._flow_start`)
    paths: dict[tuple[int, float, str | None, str | None], tuple[FlowPath, int, tuple[Usage, ...]]]


class _RouteTransfer:
    """One message crossing a FlowRoute: its stages in path order, each a store-and-forward
    hop (its FIFO, as `_Transfer`) or a run of consecutive flow links crossed as one flow
    (simulator.flows.FlowNetwork.start). A flow's timeline entries and usage cover each of its
    links from the flow's start to its last byte's arrival."""

    __slots__ = (
        "delivered",
        "end",
        "engine",
        "index",
        "message",
        "network",
        "ready_at",
        "route",
        "start",
        "target",
        "timeline",
    )

    def __init__(
        self,
        engine: Engine,
        timeline: Timeline,
        network: FlowNetwork,
        message: Message,
        route: FlowRoute,
        target: ProcessState,
    ) -> None:
        self.engine = engine
        self.timeline = timeline
        self.network = network
        self.message = message
        self.route = route
        self.target = target
        self.index = 0
        self.start = 0.0
        self.end = 0  # the index after the flow stage under way
        self.delivered: Callable[[], None] | None = None  # `World.send`'s
        self.ready_at: float | None = None  # `World.send`'s, until its first flow stage starts

    def go(self) -> None:
        """Start the stage at `index`, or deliver the message after the last one."""
        route = self.route
        index = self.index
        if index == len(route):
            self.target.mailbox.put(self.message)
            if self.delivered is not None:
                self.delivered()
        elif route.links[index] is None:
            route[index][2].request(self._hop_start, None)
        else:
            self._flow_start()

    def _hop_start(self, _: object) -> None:
        node, _instance, _link, usage = self.route[self.index]
        message = self.message
        duration = node.transfer_time(message.size, message.direction, message.host_memory)
        self.start = now = self.engine.now
        usage.start(now)
        self.engine.schedule(duration, self._hop_end, None)

    def _hop_end(self, _: object) -> None:
        node, instance, link, usage = self.route[self.index]
        now = self.engine.now
        usage.stop(now)
        link.release()
        self._record(node, instance, now)
        self.index += 1
        self.go()

    def _flow_start(self) -> None:
        route = self.route
        message = self.message
        size = message.size
        start = self.index
        now = self.start = self.engine.now
        key = (start, size, message.direction, message.host_memory)
        made = route.paths.get(key)
        if made is not None:  # a message like it crossed these links before
            path, self.end, usages = made
            for usage in usages:
                usage.start(now)
            if self.ready_at is not None:
                path = self._following(path)
            self.network.start_path(path, size, self._flow_end)
            return
        links = route.links
        end = start
        while end < len(route) and links[end] is not None:
            end += 1
        # routes between other pairs that cross the same links share the path (an alltoall)
        shared_key = (
            links[start:end],
            route.exits[start:end],
            size,
            message.direction,
            message.host_memory,
        )
        usages = tuple(route[index][3] for index in range(start, end))
        self.end = end
        shared = self.network.paths.get(shared_key)
        if shared is not None:
            route.paths[key] = (shared, end, usages)
            for usage in usages:
                usage.start(now)
            if self.ready_at is not None:
                shared = self._following(shared)
            self.network.start_path(shared, size, self._flow_end)
            return
        end = start
        crossings: list[tuple[FlowLink, float, float]] = []
        while end < len(route):
            link = route.links[end]
            if link is None:
                break
            node = route[end][0]
            latency = node.transfer_time(0.0, message.direction, message.host_memory)
            seconds = node.transfer_time(size, message.direction, message.host_memory)
            if seconds < latency:
                raise ModelEvaluationError(
                    FLOW_MESSAGES["negative"].format(size=size, seconds=seconds, latency=latency),
                    model=str(node.model_key),
                    function="p2pTime",
                )
            per_byte = (seconds - latency) / size if size > 0 else 0.0
            crossings.append((link, latency, per_byte))
            exit_port = route.exits[end]
            if exit_port is not None:  # a switch: the port it leaves by, its latency paid once
                crossings.append((exit_port, 0.0, per_byte))
            route[end][3].start(now)
            end += 1
        path = self.network.paths[shared_key] = self.network.path(crossings)
        route.paths[key] = (path, end, usages)
        if self.ready_at is not None:
            path = self._following(path)
        self.network.start_path(path, size, self._flow_end)

    def _following(self, path: FlowPath) -> FlowPath:
        """Return `path` for a message that was ready to leave at `ready_at` and held since
        behind the message before it on its connection, which has just arrived (`World.send`):
        its first byte left right behind that message's last, so it joins its links at
        `ready_at` + the route's latency or now, whichever is later, not the latency from now.
        The same links, weight and bound: it shares them as any other flow of its path."""
        ready, self.ready_at = self.ready_at, None
        assert ready is not None
        delay = ready + path.delay - self.engine.now
        return FlowPath(path.links, path.weight, path.bound, delay if delay > 0.0 else 0.0)

    def _flow_end(self, now: float) -> None:
        """The flow stage from `index` to `end` ended at `now`: its links' usage and
        timeline entries close, then the next stage starts (`go`)."""
        route = self.route
        start, end = self.index, self.end
        timeline = self.timeline
        if timeline.full:  # no entry is kept: each counts as dropped, as `_record` counts it
            for index in range(start, end):
                route[index][3].stop(now)
            timeline.dropped += end - start
        else:
            for index in range(start, end):
                node, instance, _link, usage = route[index]
                usage.stop(now)
                self._record(node, instance, now)
        self.index = end
        if end == len(route):  # `go`'s delivery, inline: most routes are one flow stage
            self.target.mailbox.put(self.message)
            if self.delivered is not None:
                self.delivered()
        else:
            self.go()

    def _record(self, node: NodeRuntime, instance: int, now: float) -> None:
        timeline = self.timeline
        if timeline.full:
            timeline.dropped += 1
            return
        message = self.message
        timeline.add(
            message.source.name,
            "transfer",
            self.start,
            now,
            node=node.id,
            instance=instance,
            size=message.size,
            direction=message.direction,
            to=self.target.name,
        )


# Which instance of a hop's node a message charges (World._plan): the sender's (the route's
# first node), the receiver's (its last), or for a node between them the sender's, wrapped.
_SOURCE, _TARGET, _BETWEEN = 0, 1, 2


def fifo_hops(
    plan: tuple[tuple[NodeRuntime, int, str, str], ...],
    nodes: tuple[str, str],
    source: int,
    target: int,
    hop_tuples: dict[tuple[tuple[str, str], tuple[int, ...]], tuple[Hop, ...]],
) -> tuple[Hop, ...]:
    """Return the hops of `plan` (World._plan, between the nodes `nodes`) from instance `source`
    to instance `target` when every hop is its FIFO (no flow link in the run): each hop's node,
    the instance it charges, its FIFO (`NodeRuntime.link`) and its usage. Pairs whose hops
    charge the same instances share one tuple, kept in `hop_tuples`. The C core's `fifo_hops`
    (simulator/_speedups_transfer.c) does the same in C: every process's first send comes here."""
    ends = (source, target)
    # the instance each hop charges (loops, not generators: a comprehension is a call)
    instances = []
    for node, end, _, _ in plan:
        instances.append(ends[end] if end != _BETWEEN else source % len(node.usages))
    shared = (nodes, tuple(instances))
    result = hop_tuples.get(shared)
    if result is None:
        hops = []
        for index, (node, _, came_from, going_to) in enumerate(plan):
            instance = instances[index]
            link = node.link(instance, came_from, going_to)
            hops.append((node, instance, link, node.usages[instance]))
        result = hop_tuples[shared] = tuple(hops)
    return result


def fifo_route(
    cache: dict[tuple[str, int, str, int], tuple[Hop, ...]],
    plans: dict[tuple[str, str], tuple[tuple[NodeRuntime, int, str, str], ...]],
    plan_of: Callable[[str, str], tuple[tuple[NodeRuntime, int, str, str], ...]],
    hop_tuples: dict[tuple[tuple[str, str], tuple[int, ...]], tuple[Hop, ...]],
    source: Slot,
    target: Slot,
) -> tuple[Hop, ...]:
    """Return World.hops of a run whose every hop is its FIFO (no flow link, no topology
    template): the hops kept in `cache` per pair of instances, else made by `fifo_hops` from
    the plan of the pair's nodes (kept in `plans`, made by `plan_of`: World._plan). The C
    core's `fifo_route` (simulator/_speedups_transfer.c) does the same in C."""
    key = (source.node, source.instance, target.node, target.instance)
    cached = cache.get(key)
    if cached is not None:
        return cached
    nodes = (source.node, target.node)
    plan = plans.get(nodes)
    if plan is None:
        plan = plans[nodes] = plan_of(source.node, target.node)
    hops = cache[key] = fifo_hops(plan, nodes, source.instance, target.instance, hop_tuples)
    return hops


class World:
    """Everything the processes of one run share: engine, nodes, routes, processes, timeline."""

    def __init__(
        self,
        engine: Engine,
        nodes: Mapping[str, NodeRuntime],
        routes: Routes,
        processes: Sequence[ProcessState],
        timeline: Timeline,
        memory: MemorySystem | None = None,
        network: FlowNetwork | None = None,
    ) -> None:
        self.engine = engine
        self.memory = memory
        # the flow links' network: made by the runner when a node's sharing is a flow's
        self.network = network
        self.nodes = nodes
        self.routes = routes
        # the templates' switches, whose flow constraints are their ports (`_route`)
        self._port_switches = port_switches(routes.topologies)
        self.processes = list(processes)
        self.timeline = timeline
        # each process node's host (the group that holds it, else itself), which the
        # hierarchical collectives split a group by (set by the runner from the snapshot)
        self.hosts: Mapping[str, str] = {}
        # one record per collective call with an algorithm (simulator.api Sim._collective),
        # in the order of their first participant's call
        self.collective_calls: list[dict[str, Any]] = []
        self.by_label: dict[str, list[ProcessState]] = {}
        for state in self.processes:
            self.by_label.setdefault(state.slot.label, []).append(state)
        self.label_names = tuple(sorted(self.by_label))  # a collective's default participants
        # the participants of each collective's group of labels, as a list and a set
        # (simulator.api Sim._participants)
        self.groups: dict[tuple[str, ...], tuple[list[ProcessState], frozenset[ProcessState]]] = {}
        self._hops: dict[tuple[str, int, str, int], tuple[Hop, ...]] = {}
        self._plans: dict[tuple[str, str], tuple[tuple[NodeRuntime, int, str, str], ...]] = {}
        self._hop_tuples: dict[tuple[tuple[str, str], tuple[int, ...]], tuple[Hop, ...]] = {}
        # per source node, its instance and the step before a target: the route shared by
        # its pairs whose hop there leaves the target out (`hops`)
        self._via: dict[tuple[str, int, str], tuple[Hop, ...]] = {}
        # per crossing of flow constraints and FIFO hops: its one FlowRoute (`_route`)
        self._flow_routes: dict[tuple[tuple[object, ...], ...], FlowRoute] = {}
        self._barriers: dict[tuple[str, ...], tuple[EventCount, list[int]]] = {}
        # per source a receive names (label, rank, type of rank): its message filter and what
        # a receive from it waits for, the same for every process (simulator.api Sim._receiver)
        self.receivers: dict[
            tuple[object, object, type], tuple[Callable[[Message], bool], str]
        ] = {}
        # per rooted collective call and its arguments: what it was checked to be, the same
        # for every process (simulator.api Sim._rooted: its `_Collective`)
        self.collectives: dict[tuple[object, ...], Any] = {}
        self._channels: dict[tuple[object, ...], tuple[object, ...]] = {}
        # the run's symmetric collectives (simulator.symmetry.RotationSymmetry), set by the
        # runner when the run asks for them
        self.symmetry: Any = None
        # a message's crossing, and a collective root's sends: the C core's when the engine
        # runs on it
        core = hotpath.core_of(engine)
        self._transfer: Any = hotpath.choose_in(core, _Transfer, "Transfer")
        # The C core's sends take exact tuples of FIFO hops only: with flow links in the run, a
        # collective's sends go through `send` (Python), which hands a FlowRoute to
        # `_RouteTransfer`; a point-to-point send's C path leaves a FlowRoute to Python itself.
        self._send_each: Any = hotpath.choose_in(
            core if network is None else None, None, "send_each"
        )
        # a route's FIFO hops without flow links in the run (`_planned_hops`)
        self._fifo_hops: Callable[..., tuple[Hop, ...]] = hotpath.choose_in(
            core, fifo_hops, "fifo_hops"
        )
        # a run whose every hop is its FIFO (no flow link, no topology template): its routes
        # are `fifo_route`'s (`hops`)
        self._fifo_only = network is None and not routes.topologies
        self._fifo_route: Callable[..., tuple[Hop, ...]] = hotpath.choose_in(
            core, fifo_route, "fifo_route"
        )

    def channel(self, key: tuple[object, ...]) -> tuple[object, ...]:
        """Return the run's one object equal to `key` (a collective's kind, participants and
        root), so that its messages' channels compare by identity first."""
        return self._channels.setdefault(key, key)

    def hops(self, source: Slot, target: Slot) -> tuple[Hop, ...]:
        """Return the charging hops of a message from `source` to `target` (cached per pair
        of instances; pairs whose hops charge the same instances share one tuple)."""
        if self._fifo_only:
            return self._fifo_route(
                self._hops, self._plans, self._plan, self._hop_tuples, source, target
            )
        key = (source.node, source.instance, target.node, target.instance)
        cached = self._hops.get(key)
        if cached is not None:
            return cached
        if self.routes.topologies:
            path = self.routes.instance_path(
                source.node, source.instance, target.node, target.instance
            )
            if path is not None and len(path) > 1:
                routed = self._hops[key] = self._instance_hops(path)
                return routed
        elif self.network is not None and source.node != target.node:
            # Pairs from one source instance whose paths end with the same step (an alltoall's
            # through one switch) share their route when that step's hop leaves the target
            # out: `_planned_hops` of the first, the same route, serves the others
            before = self.routes.last_step(source.node, target.node)
            end = self.nodes[target.node]
            if before != source.node and not (end.is_network and end.has_p2p):
                via_key = (source.node, source.instance, before)
                via = self._via.get(via_key)
                if via is None:
                    via = self._planned_hops(source, target)
                    if via.__class__ is FlowRoute and self._leaves_target_out(before):
                        self._via[via_key] = via
                self._hops[key] = via
                return via
        result = self._hops[key] = self._planned_hops(source, target)
        return result

    def _leaves_target_out(self, node_id: str) -> bool:
        """Whether a route's hop at `node_id`, the step before its target, is the same
        whatever the target (`hops`): no hop at all (not a network node with p2pTime), or a
        shared flow link's one constraint (a port switch's ports face their neighbours)."""
        node = self.nodes[node_id]
        if not (node.is_network and node.has_p2p):
            return True
        return node.sharing == "shared" and node_id not in self._port_switches

    def _planned_hops(self, source: Slot, target: Slot) -> tuple[Hop, ...]:
        """`hops` by the pair's node path (`_plan`), without a topology template's route."""
        nodes = (source.node, target.node)
        plan = self._plans.get(nodes)
        if plan is None:
            plan = self._plans[nodes] = self._plan(source.node, target.node)
        if self.network is None:  # every hop its FIFO: `fifo_hops` (the C core's where it runs)
            return self._fifo_hops(plan, nodes, source.instance, target.instance, self._hop_tuples)
        ends = (source.instance, target.instance)
        # a hop between the ends charges the instance of the sender's index, wrapped (loops,
        # not generators: every process's first send comes here)
        instances = []
        for node, end, _, _ in plan:
            instances.append(ends[end] if end != _BETWEEN else source.instance % len(node.usages))
        shared = (nodes, tuple(instances))
        result = self._hop_tuples.get(shared)
        if result is None:
            crossed = []
            for index, (node, _, came_from, going_to) in enumerate(plan):
                crossed.append((node, instances[index], came_from, going_to))
            result = self._hop_tuples[shared] = self._route(crossed)
        return result

    def _instance_hops(self, path: tuple[tuple[str, int], ...]) -> tuple[Hop, ...]:
        """Return the charging hops of a route of (node id, instance) pairs through a
        topology template (simulator.topology): each network node with p2pTime on it, its
        FIFO that of the neighbouring instances it joins."""
        crossed: list[tuple[NodeRuntime, int, str, str]] = []
        last = len(path) - 1
        for index, (node_id, instance) in enumerate(path):
            node = self.nodes[node_id]
            if not (node.is_network and node.has_p2p):
                continue
            came_from = "{}[{}]".format(*path[index - 1]) if index > 0 else node_id
            going_to = "{}[{}]".format(*path[index + 1]) if index < last else node_id
            crossed.append((node, instance, came_from, going_to))
        return self._route(crossed)

    def _route(self, crossed: Sequence[tuple[NodeRuntime, int, str, str]]) -> tuple[Hop, ...]:
        """Return the hops of a route crossing each (network node, instance, neighbour it
        comes from, neighbour it goes to) of `crossed`: a plain tuple when every hop is a
        FIFO, a FlowRoute (simulator.flows) when any is a flow link."""
        network = self.network
        if network is None:  # no flow link in the run: every hop is its FIFO
            hops = []  # a loop (a comprehension is a call of its own): a first send's
            for node, instance, came_from, going_to in crossed:
                link = node.link(instance, came_from, going_to)
                hops.append((node, instance, link, node.usages[instance]))
            return tuple(hops)
        links: list[FlowLink | None] = []
        exits: list[FlowLink | None] = []
        ports = self._port_switches
        for node, instance, came_from, going_to in crossed:
            if node.sharing not in FLOW_SHARING:
                links.append(None)
                exits.append(None)
            elif node.id in ports:
                # a non-blocking switch: the flow shares the port it enters by and the port it
                # leaves by with every other flow through them (simulator.topology.SWITCH_ROLES)
                sharing = node.sharing
                enter = network.port(node.id, instance, sharing, came_from, True)
                leave = network.port(node.id, instance, sharing, going_to, False)
                links.append(enter)
                exits.append(leave if leave is not enter else None)
            else:
                links.append(network.link(node.id, instance, node.sharing, came_from, going_to))
                exits.append(None)
        if all(link is None for link in links):
            return tuple(
                (node, instance, node.link(instance, came_from, going_to), node.usages[instance])
                for node, instance, came_from, going_to in crossed
            )
        # Routes between other pairs that cross the same flow constraints (and the same FIFO
        # hops) are one route: a flow hop's FIFO is never requested, and its node and
        # instance, which its usage and timeline entries charge, are in the key. So an
        # alltoall's or pairs' routes through one switch share one route and its flow paths.
        key = tuple(
            (node, instance, link, exit_port)
            if link is not None
            else (node, instance, came_from, going_to)
            for (node, instance, came_from, going_to), link, exit_port in zip(
                crossed, links, exits, strict=True
            )
        )
        route = self._flow_routes.get(key)
        if route is None:
            route = FlowRoute(
                (node, instance, node.link(instance, came_from, going_to), node.usages[instance])
                for node, instance, came_from, going_to in crossed
            )
            route.links = tuple(links)
            route.exits = tuple(exits)
            route.paths = {}
            self._flow_routes[key] = route
        return route

    def _plan(self, source: str, target: str) -> tuple[tuple[NodeRuntime, int, str, str], ...]:
        """Return the charging hops of a message from node `source` to node `target`: each
        hop's node, which end's instance it charges (_SOURCE, _TARGET, or _BETWEEN: the
        sender's, wrapped), and the neighbours it comes from and goes to."""
        path = self.routes.path(source, target)
        if len(path) == 1:
            node = self.nodes[source]
            return ((node, _SOURCE, "local", "local"),) if node.has_p2p else ()
        plan: list[tuple[NodeRuntime, int, str, str]] = []
        for index, node_id in enumerate(path):
            node = self.nodes[node_id]
            if not (node.is_network and node.has_p2p):
                continue
            end = _SOURCE if index == 0 else _TARGET if index == len(path) - 1 else _BETWEEN
            came_from = path[index - 1] if index > 0 else node_id
            going_to = path[index + 1] if index + 1 < len(path) else node_id
            plan.append((node, end, came_from, going_to))
        return tuple(plan)

    def send(
        self,
        source: ProcessState,
        target: ProcessState,
        size: float,
        direction: str | None,
        channel: object,
        host_memory: str | None = None,
        hops: Sequence[Hop] | None = None,
        delivered: Callable[[], None] | None = None,
        ready_at: float | None = None,
    ) -> None:
        """Start a message on its way; it lands in the target's mailbox when it arrives.
        `hops`: `self.hops(source.slot, target.slot)` when the caller kept them. Over a
        route of flow links only (a `FlowRoute`): `delivered`, called once the message is in
        the target's mailbox; `ready_at`, when the message was ready to leave, held since
        behind its connection's previous message, which has just arrived (`delivered`): it
        joins the wire right behind that one (`_RouteTransfer._following`)."""
        message = Message(source, size, direction, channel, self.engine.now, host_memory)
        if hops is None:
            hops = self.hops(source.slot, target.slot)
        if hops.__class__ is FlowRoute:
            assert self.network is not None and isinstance(hops, FlowRoute)  # made with it
            transfer = _RouteTransfer(
                self.engine, self.timeline, self.network, message, hops, target
            )
            transfer.delivered = delivered
            transfer.ready_at = ready_at
            if hops.links[0] is None:  # `go`, its first stage known: a FIFO hop or a flow
                transfer.go()
            else:
                transfer._flow_start()
        elif hops:
            hops[0][2].request(self._transfer(self.engine, self.timeline, message, hops, target))
        else:
            target.mailbox.put(message)

    def send_each(
        self,
        source: ProcessState,
        size: float,
        channel: object,
        routes: Sequence[tuple[ProcessState, Sequence[Hop]]],
    ) -> None:
        """`send` a message of `size` bytes on `channel` from `source` along each (target,
        hops) of `routes`, in order (a collective's root, or a member sending to it); the C
        core's `send_each` does the same in C."""
        if self._send_each is not None:
            self._send_each(self.engine, self.timeline, source, float(size), channel, routes)
            return
        for target, hops in routes:
            self.send(source, target, size, None, channel, None, hops)

    def arrive(self, participants: tuple[str, ...], count: int) -> tuple[EventCount, int] | None:
        """Count one more process at the barrier of `participants` (`count` of them meet
        there): None when it was the last, which lets the others go; else the event count
        and the value it must wait for."""
        entry = self._barriers.get(participants)
        if entry is None:
            entry = (EventCount(self.engine, f"barrier {'/'.join(participants)}"), [0])
            self._barriers[participants] = entry
        event_count, arrived = entry
        generation = event_count.count + 1
        arrived[0] += 1
        if arrived[0] == count:
            arrived[0] = 0
            event_count.advance()
            return None
        return event_count, generation
