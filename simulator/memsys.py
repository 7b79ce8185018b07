"""The memory system of a run: caches, fabric and main memory as contended resources.

`MemorySystem` is built from the memory nodes of a snapshot (simulator.memory_spec). An
application's memory work (`sim.memoryAccess`, or `sim.computation(..., memory=...)`) is
evaluated in two steps:

1. **What happens** (functional, at once). A *trace* (addresses) runs through the cache
   simulator of the whole system, `simulator.models.coherence.CacheTree`, whose state
   persists for the run: caches stay warm between calls and processes, a shared LLC serves
   whoever misses into it, and below a cache whose `coherence` is "mesi" the caches are kept
   coherent by its directory, with every message counted. A *pattern* (bytes read and
   written, footprint, stride, order) is evaluated by the analytic hit-ratio model
   (`pattern_misses`) on the levels of the process's path, without state.
2. **How long it takes** (in simulated time, with contention). The call's traffic becomes
   bytes at each resource it uses: every cache instance with a `bandwidth`, every fabric
   link (the link into the port the bytes go to, bytes plus message headers), every memory
   channel. Each resource is a FIFO server; the call's bytes cross it as `CHUNKS` chunks
   and all resources of a call work at once (the levels are independent pipes, as in
   simulator.models.memory.hierarchy_terms). The call ends when its last chunk is through
   and not before its latency bound, the summed latency of its accesses divided by the
   parallelism of the leaf caches (their MSHRs): Little's law. Two processes streaming
   through the same DRAM queue their chunks behind each other, so each slows the other.

Where a call spreads over several leaf caches (a GPU's per-SM L1s), a trace is cut into as
many contiguous parts and a pattern into equal shares.
"""

from __future__ import annotations

import itertools
import math
from array import array
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from simulator import memory_spec
from simulator.engine import Engine, EventCount, Resource
from simulator.models.coherence import CacheSpec, CacheTree
from simulator.results import Usage
from simulator.snapshot import Node, SystemSnapshot

CHUNKS = 16
MAX_TRACE = 4_000_000
MEMORY_LINE_BYTES = 64  # the access size of a path without caches

MEMSYS_MESSAGES = {
    "no_path": (
        "{call}: node {node!r} has no memory path; set its next memory level in the system "
        "model (a cache or a memory node)"
    ),
    "level": (
        "{call}: level {level!r} is not on the memory path of node {node!r} (its path: {path})"
    ),
    "trace_level": (
        "{call}: a trace starts at the first cache or at memory (uncached); {level!r} is a "
        "cache inside the path: give a pattern to start there"
    ),
    "trace_range": "{call}: trace addresses (after their region's base) must be below 2**64",
    "trace_length": "{call}: the trace holds more than {limit} accesses; split it over calls",
    "trace_item": (
        "{call}: trace entry {index} must be an address (a whole number >= 0) or an "
        "(address, is_write) pair, got {value!r}"
    ),
    "pattern_field": "{call}: {name} must be a finite number >= 0 (got {value!r})",
    "pattern_positive": "{call}: {name} must be greater than 0 (got {value!r})",
    "order": "{call}: order is 'sequential' or 'random' (got {value!r})",
    "both": "{call}: give a trace or a pattern (read/write bytes), not both",
    "nothing": "{call}: give a trace, or bytes to read or write",
    "unknown": "{call}: unknown argument {name!r}; expected {expected}",
    "region": "{call}: region must be a non-empty string (got {value!r})",
    "shared_with": "{call}: sharedWith is a label or a list of labels (got {value!r})",
}
PATTERN_KEYS = ("read", "write", "footprint", "stride", "element", "order", "sharedWith")
CALL_KEYS = (*PATTERN_KEYS, "trace", "writes", "region", "level")
# Coherence messages a system without coherence does not send. The others (Get, GetX and
# their data replies, write-backs) are the requests and data moves every miss needs; their
# bytes are charged with the line transfers, so only these add headers on the fabric.
COHERENCE_ONLY_MESSAGES = frozenset(
    {
        "Get_Fwd",
        "GetX_Fwd",
        "GetX_Fwd_Ack",
        "Downgrade_Ack",
        "Inval",
        "Inval_Ack",
        "Upgrade",
        "Upgrade_Ack",
        "Clean_Write_Back",
    }
)
REGION_ALIGN = 1 << 40  # regions are 1 TiB apart: traces of different regions never alias


class MemoryUsageError(Exception):
    """The application asked for memory work wrongly; the API turns it into its own error."""


@dataclass
class LevelStats:
    """What one instance of a cache or memory node saw over the run."""

    accesses: int = 0
    hits: int = 0
    misses: int = 0
    evictions: int = 0
    writebacks: int = 0
    invalidations: int = 0
    bytes: float = 0.0

    def add(self, other: LevelStats) -> None:
        """Add `other`'s counts to these."""
        self.accesses += other.accesses
        self.hits += other.hits
        self.misses += other.misses
        self.evictions += other.evictions
        self.writebacks += other.writebacks
        self.invalidations += other.invalidations
        self.bytes += other.bytes


@dataclass
class FabricStats:
    """What one fabric instance carried: messages (with or without data), bytes, hops."""

    messages: int = 0
    bytes: float = 0.0
    hops: int = 0


class _Instance:
    """One instance of a memory node: counts, usage and its FIFO servers."""

    __slots__ = ("servers", "stats", "usage")

    def __init__(self, node_id: str, instance: int, servers: list[Resource], stats: Any) -> None:
        self.stats = stats
        self.usage = Usage(node_id, instance, 1)
        self.servers = servers


class MemoryNode:
    """A CACHE or MEMORY node at run time."""

    def __init__(
        self, engine: Engine, node: Node, kind: str, hardware_name: str, attrs: Mapping[str, float]
    ) -> None:
        self.id = node.id
        self.name = node.name
        self.hardware = hardware_name
        self.kind = kind
        self.count = node.count
        self.coherence = node.coherence
        self.next: MemoryNode | None = None
        self.via: FabricNode | None = None
        if kind == "CACHE":
            self.line = int(attrs["lineSize"])
            self.size = float(attrs["size"])
            self.ways = int(attrs["ways"])
            self.latency_s = attrs["latencyCycles"] / (attrs["clock"] * 1e6)
            self.bandwidth = float(attrs.get("bandwidth", math.inf))
            self.mshrs = int(attrs.get("mshrs", memory_spec.DEFAULT_MSHRS))
            self.write_back = attrs.get("writeBack", 1) == 1
            channels = int(attrs.get("slices", 1))  # a striped cache: one server per slice
        else:
            self.line = MEMORY_LINE_BYTES
            self.size = float(attrs.get("size", math.inf))
            self.ways = 0
            self.latency_s = float(attrs["latency"])
            self.bandwidth = float(attrs["bandwidth"])
            self.mshrs = memory_spec.DEFAULT_MSHRS
            self.write_back = True
            channels = int(attrs.get("channels", 1))
        self.channels = channels
        # memory: bandwidth is the whole instance's, shared by its channels; cache: per slice
        self.server_bandwidth = self.bandwidth / channels if kind == "MEMORY" else self.bandwidth
        self.instances = [
            _Instance(
                node.id,
                index,
                [Resource(engine, f"{node.id}[{index}] channel {c}") for c in range(channels)],
                LevelStats(),
            )
            for index in range(node.count)
        ]
        self.tree_index: list[int] = []  # CACHE: the CacheTree index of each instance


class FabricNode:
    """A FABRIC node at run time: ports are the nodes that reach something through it."""

    def __init__(
        self, engine: Engine, node: Node, hardware_name: str, attrs: Mapping[str, float]
    ) -> None:
        self.engine = engine
        self.id = node.id
        self.name = node.name
        self.hardware = hardware_name
        self.topology = node.topology
        self.count = node.count
        self.hop_latency_s = attrs["hopLatencyCycles"] / (attrs["clock"] * 1e6)
        self.link_bandwidth = float(attrs["linkBandwidth"])
        self.header_bytes = float(attrs.get("headerBytes", memory_spec.DEFAULT_HEADER_BYTES))
        self.ports: list[str] = []
        self.stats = [FabricStats() for _ in range(node.count)]
        self.usages = [Usage(node.id, index, 1) for index in range(node.count)]
        self._links: dict[tuple[int, str], list[Resource]] = {}
        self.link_bytes: dict[Resource, float] = {}

    def port(self, node_id: str) -> int:
        """Return the port of `node_id`, adding one the first time it is seen."""
        if node_id not in self.ports:
            self.ports.append(node_id)
        return self.ports.index(node_id)

    def hops(self, a: str, b: str) -> int:
        """Return the hops from the port of `a` to the port of `b`."""
        return memory_spec.fabric_hops(self.topology, len(self.ports), self.port(a), self.port(b))

    def charge(self, demand: Demand, instance: int, to: str, stops: int, amount: float) -> None:
        """Charge `amount` bytes to the links into `to` (spread over its stops)."""
        links = self.links(instance, to, stops)
        for link in links:
            self.link_bytes[link] = self.link_bytes.get(link, 0.0) + amount / len(links)
        demand.spread(links, amount, self.link_bandwidth, self.usages[instance])

    def busiest_link_s(self, instance: int) -> float:
        """Return the busy time of the instance's busiest link (bytes / bandwidth: a link
        is a FIFO server, busy exactly while it moves bytes)."""
        prefix = f"{self.id}[{instance}] "
        loads = [amount for link, amount in self.link_bytes.items() if link.name.startswith(prefix)]
        return max(loads, default=0.0) / self.link_bandwidth

    def links(self, instance: int, to: str, stops: int = 1) -> list[Resource]:
        """Return the FIFOs of the links into `to`: one per ring stop (slice) it has."""
        key = (instance, to)
        links = self._links.get(key)
        if links is None:
            links = [
                Resource(self.engine, f"{self.id}[{instance}] link to {to} ({stop})")
                for stop in range(stops)
            ]
            self._links[key] = links
        return links


@dataclass
class Demand:
    """One call's traffic: bytes per FIFO server and the latency it needs at least."""

    latency_s: float = 0.0
    servers: dict[Resource, tuple[float, float, Usage]] = field(default_factory=dict)
    # server -> (bytes, bandwidth B/s, usage to mark busy)

    def spread(
        self, servers: Sequence[Resource], amount: float, bandwidth: float, usage: Usage
    ) -> None:
        """Charge `amount` bytes evenly to `servers` (channels, slices, striped links)."""
        for server in servers:
            self.add(server, amount / len(servers), bandwidth, usage)

    def add(self, server: Resource, amount: float, bandwidth: float, usage: Usage) -> None:
        """Charge `amount` bytes to `server`, which moves `bandwidth` bytes a second."""
        if amount <= 0 or not math.isfinite(bandwidth):
            return
        held, _, _ = self.servers.get(server, (0.0, bandwidth, usage))
        self.servers[server] = (held + amount, bandwidth, usage)


@dataclass
class Pattern:
    """An access pattern (bytes): what `pattern_misses` needs."""

    read: float
    write: float
    footprint: float
    stride: float
    element: float
    order: str
    shared_with: tuple[str, ...] = ()  # labels of the processes that also use this data


def pattern_lines(pattern: Pattern, line: float) -> float:
    """Return the distinct lines a pattern touches: footprint / max(line, stride), at least
    one, and no more than its accesses reach."""
    accesses = (pattern.read + pattern.write) / pattern.element
    per_line = max(1.0, line / pattern.stride)
    lines = max(1.0, pattern.footprint / max(line, pattern.stride))
    return min(lines, accesses / per_line)


def pattern_misses(
    pattern: Pattern, capacities: Sequence[float], line: float
) -> tuple[float, list[float]]:
    """Return (accesses, misses at each level) of `pattern` on levels of `capacities` bytes.

    The analytic model (ours; docs/models.md 5b takes hit ratios as given):

    * accesses N = (read + write) / element; lines touched per pass U = footprint /
      max(line, stride) (accesses closer than a line share it); passes P = N / (U x a) with
      a = max(1, line / stride) accesses per line and pass (at least one pass).
    * sequential order under LRU: a level that holds the footprint (U x line <= capacity)
      misses each line once (cold misses), one that does not misses it on every pass (the
      cyclic sweep evicts a line before its reuse);
    * random order: after the cold misses a reuse hits with probability capacity /
      (U x line), the share of the footprint the level holds.

    Levels are inclusive, so misses never grow inwards: each level's misses are capped by
    the level inside it.
    """
    total = pattern.read + pattern.write
    accesses = total / pattern.element
    if accesses <= 0:
        return 0.0, [0.0 for _ in capacities]
    per_line = max(1.0, line / pattern.stride)
    lines = max(1.0, pattern.footprint / max(line, pattern.stride))
    passes = max(1.0, accesses / (lines * per_line))
    lines = min(lines, accesses / per_line) if passes == 1.0 else lines
    misses: list[float] = []
    previous = accesses
    for capacity in capacities:
        if lines * line <= capacity:
            level = lines
        elif pattern.order == "random":
            level = lines + (passes - 1) * lines * (1 - capacity / (lines * line))
        else:
            level = lines * passes
        level = min(level, previous)
        misses.append(level)
        previous = level
    return accesses, misses


class MemorySystem:
    """The memory nodes of a run, the cache tree and the per-call evaluation."""

    def __init__(self, engine: Engine, system: SystemSnapshot) -> None:
        self.engine = engine
        self.levels: dict[str, MemoryNode] = {}
        self.fabrics: dict[str, FabricNode] = {}
        self.sources: dict[str, Node] = {}
        self.messages: dict[str, int] = {}
        self.protocol = "none"
        for node in system.nodes.values():
            if node.group or node.hardware is None:
                continue
            hardware = system.hardware[node.hardware]
            if hardware.type in ("CACHE", "MEMORY") and (
                hardware.type == "CACHE" or self._reached(system, node.id)
            ):
                self.levels[node.id] = MemoryNode(
                    engine, node, hardware.type, hardware.name, hardware.attributes
                )
            elif hardware.type == "FABRIC":
                self.fabrics[node.id] = FabricNode(engine, node, hardware.name, hardware.attributes)
            if hardware.type in ("CPU", "GPU") and node.next is not None:
                self.sources[node.id] = node
        for node in system.nodes.values():
            level = self.levels.get(node.id)
            if level is not None and node.next is not None:
                level.next = self.levels[node.next]
                level.via = self.fabrics.get(node.via) if node.via else None
        self._vias: dict[str, FabricNode | None] = {
            node.id: self.fabrics.get(node.via) if node.via else None
            for node in system.nodes.values()
            if node.next is not None
        }
        for node in system.nodes.values():
            fabric = self.fabrics.get(node.via) if node.via else None
            if fabric is not None and node.next is not None:
                fabric.port(node.id)
                fabric.port(node.next)
        self._build_tree()
        self._regions: dict[str, int] = {}

    @staticmethod
    def _reached(system: SystemSnapshot, node_id: str) -> bool:
        return any(node.next == node_id for node in system.nodes.values())

    @property
    def active(self) -> bool:
        """Return whether the system has any memory path at all."""
        return bool(self.sources)

    def _build_tree(self) -> None:
        specs: list[CacheSpec] = []
        caches = [level for level in self.levels.values() if level.kind == "CACHE"]
        # outermost first, so a parent's index exists before its children's
        ordered: list[MemoryNode] = []
        remaining = list(caches)
        while remaining:
            for level in list(remaining):
                if level.next is None or level.next.kind != "CACHE" or level.next in ordered:
                    ordered.append(level)
                    remaining.remove(level)
        self._owner: list[tuple[MemoryNode, int]] = []
        directory: int | None = None
        for level in ordered:
            sets = int(level.size) // (level.ways * level.line)
            for instance in range(level.count):
                parent: int | None = None
                if level.next is not None and level.next.kind == "CACHE":
                    outer = memory_spec.block_of(instance, level.count, level.next.count)
                    parent = level.next.tree_index[outer.start]
                level.tree_index.append(len(specs))
                self._owner.append((level, instance))
                specs.append(
                    CacheSpec(
                        name=f"{level.id}[{instance}]",
                        sets=sets,
                        ways=level.ways,
                        line_bytes=level.line,
                        latency_s=level.latency_s,
                        parent=parent,
                        write_back=level.write_back,
                    )
                )
            if level.coherence == "mesi":
                directory = level.tree_index[0]
                self.protocol = "mesi"
        self._specs = specs
        self.tree = CacheTree(specs, directory=directory, memory_latency_s=0.0) if specs else None

    # -- paths ---------------------------------------------------------------------------------
    def path(self, node_id: str) -> list[MemoryNode]:
        """Return the memory levels of `node_id`'s path, innermost first."""
        source = self.sources.get(node_id)
        if source is None or source.next is None:
            return []
        levels = [self.levels[source.next]]
        while levels[-1].next is not None:
            levels.append(levels[-1].next)
        return levels

    def entry(
        self,
        node_id: str,
        instance: int,
        count: int,
        level: str | None,
        call: str,
        *,
        trace: bool = False,
    ) -> tuple[list[MemoryNode], list[int]]:
        """Return the path from the entry level and the entry level's instances used.

        A trace enters the cache simulator at a leaf, so it may start at the first level or
        at memory only (uncached accesses); a pattern may start at any level of the path."""
        levels = self.path(node_id)
        if not levels:
            raise MemoryUsageError(MEMSYS_MESSAGES["no_path"].format(call=call, node=node_id))
        instances = list(memory_spec.block_of(instance, count, levels[0].count))
        if level is not None:
            ids = [item.id for item in levels]
            if level not in ids:
                raise MemoryUsageError(
                    MEMSYS_MESSAGES["level"].format(
                        call=call, level=level, node=node_id, path=" -> ".join(ids)
                    )
                )
            if trace and level not in (ids[0], ids[-1]):
                raise MemoryUsageError(
                    MEMSYS_MESSAGES["trace_level"].format(call=call, level=level)
                )
            for inner, outer in itertools.pairwise(levels):
                if inner.id == level:
                    break
                instances = sorted(
                    {
                        i
                        for used in instances
                        for i in memory_spec.block_of(used, inner.count, outer.count)
                    }
                )
            levels = levels[ids.index(level) :]
        return levels, instances

    def region_base(self, region: str) -> int:
        """Return the base address of `region` (1 TiB apart, in order of first use)."""
        base = self._regions.get(region)
        if base is None:
            base = self._regions[region] = (len(self._regions) + 1) * REGION_ALIGN
        return base

    # -- evaluation ----------------------------------------------------------------------------
    def trace_demand(
        self,
        levels: list[MemoryNode],
        instances: list[int],
        addresses: array[int],
        writes: bytes,
    ) -> tuple[Demand, dict[str, Any]]:
        """Run a trace through the caches from `levels[0]`'s `instances`; return its demand."""
        demand = Demand()
        first = levels[0]
        detail: dict[str, Any] = {"mode": "trace", "accesses": len(addresses)}
        assert first.kind == "MEMORY" or self.tree is not None
        if first.kind == "MEMORY":
            self._memory_traffic(
                demand,
                first,
                instances,
                len(addresses),
                len(writes) - writes.count(0),
                len(addresses) * first.latency_s,
            )
            demand.latency_s /= max(1, len(instances) * first.mshrs)
            return demand, detail
        assert self.tree is not None
        parts = len(instances)
        size = len(addresses)
        latency = 0.0
        messages_before = dict(self.messages)
        address_view, write_view = memoryview(addresses), memoryview(writes)
        for part, instance in enumerate(instances):
            low, high = size * part // parts, size * (part + 1) // parts
            if low == high:
                continue
            outcome = self.tree.run_arrays(
                first.tree_index[instance], address_view[low:high], write_view[low:high]
            )
            latency += outcome.latency_s + self._charge(demand, outcome)
        demand.latency_s = (demand.latency_s + latency) / max(1, parts * first.mshrs)
        detail["messages"] = {
            key: value - messages_before.get(key, 0)
            for key, value in self.messages.items()
            if value != messages_before.get(key, 0)
        }
        return demand, detail

    def flush_demand(
        self, levels: list[MemoryNode], instances: list[int]
    ) -> tuple[Demand, dict[str, Any]]:
        """Write back and invalidate the dirty lines of the private caches of the leaves
        `instances` of `levels[0]` (a software flush); return its demand.

        Besides its write-backs a flush walks every line of every cache it empties, one
        look-up at the cache's hit latency each (as a write-back-and-invalidate instruction
        does); the walks of one leaf's caches follow each other, leaves flush in parallel."""
        demand = Demand()
        first = levels[0]
        if first.kind == "MEMORY" or self.tree is None:
            return demand, {"mode": "flush", "lines": 0}
        latency = 0.0
        walk = 0.0
        lines = 0
        for instance in instances:
            leaf = first.tree_index[instance]
            leaf_walk = 0.0
            for cache in self.tree.private_path(leaf):
                spec = self._specs[cache]
                leaf_walk += spec.sets * spec.ways * spec.latency_s
            walk = max(walk, leaf_walk)
            outcome = self.tree.flush(leaf)
            lines += outcome.memory_writes
            latency += outcome.latency_s + self._charge(demand, outcome)
        mlp = max(1, len(instances) * first.mshrs)
        demand.latency_s = walk + (demand.latency_s + latency) / mlp
        return demand, {"mode": "flush", "lines": lines, "walkSeconds": walk}

    def _charge(self, demand: Demand, outcome: Any) -> float:
        """Add one TraceOutcome's counts to the stats and its bytes to `demand`; return the
        latency it adds beyond the caches (memory and fabric)."""
        extra = 0.0
        for index, counts in enumerate(outcome.caches):
            if not counts.accesses and not counts.invalidations and not counts.writebacks:
                continue
            level, instance = self._owner[index]
            stats = level.instances[instance].stats
            stats.add(
                LevelStats(
                    counts.accesses,
                    counts.hits,
                    counts.misses,
                    counts.evictions,
                    counts.writebacks,
                    counts.invalidations,
                    0.0,
                )
            )
        for (source, target), lines in outcome.line_transfers.items():
            if not lines:
                continue
            if source is not None:
                level, instance = self._owner[source]
                amount = lines * level.line
                level.instances[instance].stats.bytes += amount
                demand.spread(
                    level.instances[instance].servers,
                    amount,
                    level.server_bandwidth,
                    level.instances[instance].usage,
                )
            extra += self._cross(demand, source, target, lines)
            if source is None or target is None:
                cache = source if source is not None else target
                assert cache is not None
                level, instance = self._owner[cache]
                memory, memory_instance = self._memory_of(level, instance)
                reads = lines if source is None else 0
                extra += self._memory_traffic(
                    demand,
                    memory,
                    [memory_instance],
                    lines,
                    lines - reads,
                    lines * memory.latency_s if source is None else 0.0,
                )
        for kind, count in outcome.messages.items():
            self.messages[kind] = self.messages.get(kind, 0) + count
            if kind in COHERENCE_ONLY_MESSAGES:
                self._message_traffic(demand, count)
        return extra

    def _memory_of(self, level: MemoryNode, instance: int) -> tuple[MemoryNode, int]:
        while level.next is not None and level.next.kind == "CACHE":
            instance = memory_spec.block_of(instance, level.count, level.next.count).start
            level = level.next
        assert level.next is not None
        return level.next, memory_spec.block_of(instance, level.count, level.next.count).start

    def _cross(self, demand: Demand, source: int | None, target: int | None, lines: int) -> float:
        """Charge the fabrics a transfer of `lines` lines from `source` to `target` (tree
        caches, None: memory) crosses; return the latency the hops add.

        Between a cache and its parent, or a root cache and memory, the bytes cross the
        child's `via`; a forward between two agents crosses both agents' `via`s (up to the
        directory and down again). Each crossing uses the link into the receiving node."""
        specs = self._specs
        if source is not None and target is not None and specs[source].parent == target:
            legs = [(source, self._owner[target][0].id)]
        elif source is not None and target is not None and specs[target].parent == source:
            legs = [(target, self._owner[target][0].id)]
        elif source is None or target is None:
            cache = source if source is not None else target
            assert cache is not None
            level = self._owner[cache][0]
            to = level.next.id if target is None and level.next is not None else level.id
            legs = [(cache, to)]
        else:
            up = self._owner[source][0].next
            legs = [
                (source, up.id if up is not None else self._owner[target][0].id),
                (target, self._owner[target][0].id),
            ]
        latency = 0.0
        for cache, to in legs:
            level, instance = self._owner[cache]
            fabric = level.via
            if fabric is None or level.next is None:
                continue
            hops = fabric.hops(level.id, level.next.id)
            fabric_instance = instance % fabric.count
            stats = fabric.stats[fabric_instance]
            amount = lines * (level.line + fabric.header_bytes)
            stats.messages += lines
            stats.bytes += amount
            stats.hops += hops * lines
            fabric.charge(demand, fabric_instance, to, self._stops(to), amount)
            latency += lines * hops * fabric.hop_latency_s
        return latency

    def _stops(self, node_id: str) -> int:
        """Return the fabric stops of `node_id`: a striped cache has one per slice."""
        level = self.levels.get(node_id)
        return level.channels if level is not None and level.kind == "CACHE" else 1

    def _message_traffic(self, demand: Demand, count: int) -> None:
        """Charge coherence messages without data to the fabric under the directory."""
        for level in self.levels.values():
            if level.coherence == "mesi":
                for inner in self.levels.values():
                    if inner.next is level and inner.via is not None:
                        fabric = inner.via
                        amount = count * fabric.header_bytes
                        fabric.stats[0].messages += count
                        fabric.stats[0].bytes += amount
                        fabric.charge(demand, 0, level.id, self._stops(level.id), amount)
                        return

    def _memory_traffic(
        self,
        demand: Demand,
        memory: MemoryNode,
        instances: Sequence[int],
        lines: float,
        written: float,
        latency: float,
    ) -> float:
        """Charge `lines` line transfers to the channels of `memory`'s `instances`."""
        share = lines / len(instances)
        for instance in instances:
            state = memory.instances[instance]
            state.stats.accesses += round(share)
            state.stats.bytes += share * memory.line
            per_channel = share * memory.line / memory.channels
            for server in state.servers:
                demand.add(server, per_channel, memory.server_bandwidth, state.usage)
        demand.latency_s += latency
        return 0.0

    def pattern_demand(
        self, levels: list[MemoryNode], instances: list[int], pattern: Pattern
    ) -> tuple[Demand, dict[str, Any]]:
        """Evaluate `pattern` analytically on the path from `levels[0]`'s `instances`."""
        demand = Demand()
        caches = [level for level in levels if level.kind == "CACHE"]
        memory = levels[-1]
        line = float(caches[0].line) if caches else float(MEMORY_LINE_BYTES)
        parts = len(instances)
        share = Pattern(
            pattern.read / parts,
            pattern.write / parts,
            pattern.footprint / parts,
            pattern.stride,
            pattern.element,
            pattern.order,
            pattern.shared_with,
        )
        accesses, misses = pattern_misses(share, [level.size for level in caches], line)
        forwarded, sharing_messages = self._shared_lines(caches, share, line, misses)
        write_fraction = (
            pattern.write / (pattern.read + pattern.write) if pattern.read + pattern.write else 0.0
        )
        hit_ratios: dict[str, float] = {}
        latency = 0.0
        for instance in instances:
            reaching = accesses
            cumulative = 0.0
            index = instance
            for position, level in enumerate(caches):
                if position:
                    index = memory_spec.block_of(
                        index, caches[position - 1].count, level.count
                    ).start
                state = level.instances[index]
                level_misses = misses[position]
                hits = reaching - level_misses
                supplied = accesses * share.element if position == 0 else reaching * line
                writebacks = level_misses * write_fraction if level.write_back else 0.0
                state.stats.add(
                    LevelStats(
                        round(reaching),
                        round(hits),
                        round(level_misses),
                        round(level_misses),
                        round(writebacks),
                        0,
                        supplied,
                    )
                )
                demand.spread(state.servers, supplied, level.server_bandwidth, state.usage)
                cumulative += level.latency_s
                latency += hits * cumulative
                if level.via is not None and level.next is not None:
                    fabric = level.via
                    hops = fabric.hops(level.id, level.next.id)
                    moved = level_misses + writebacks
                    amount = moved * (line + fabric.header_bytes)
                    stats = fabric.stats[index % fabric.count]
                    stats.messages += round(moved)
                    stats.bytes += amount
                    stats.hops += round(moved) * hops
                    fabric.charge(
                        demand,
                        index % fabric.count,
                        level.next.id,
                        self._stops(level.next.id),
                        amount,
                    )
                    cumulative += hops * fabric.hop_latency_s
                hit_ratios[level.id] = hits / reaching if reaching else 0.0
                reaching = level_misses
            if caches:
                memory_index = memory_spec.block_of(index, caches[-1].count, memory.count).start
            else:
                memory_index = instance
            memory_lines = reaching + (
                reaching * write_fraction if caches and caches[-1].write_back else 0.0
            )
            self._memory_traffic(
                demand, memory, [memory_index], memory_lines, reaching * write_fraction, 0.0
            )
            latency += reaching * (cumulative + memory.latency_s)
        mshrs = caches[0].mshrs if caches else memory.mshrs
        demand.latency_s = latency / max(1, parts * mshrs)
        detail: dict[str, Any] = {
            "mode": "pattern",
            "accesses": accesses * parts,
            "hitRatios": hit_ratios,
        }
        if forwarded:
            messages = {name: round(count * parts) for name, count in sharing_messages.items()}
            for name, count in messages.items():
                self.messages[name] = self.messages.get(name, 0) + count
            directory = next(level for level in caches if level.coherence == "mesi")
            self._sharing_traffic(demand, caches, directory, forwarded * parts, line, messages)
            detail["messages"] = messages
            detail["forwardedLines"] = forwarded * parts
        return demand, detail

    def _shared_lines(
        self, caches: list[MemoryNode], share: Pattern, line: float, misses: list[float]
    ) -> tuple[float, dict[str, float]]:
        """Return (lines obtained from sharers, coherence messages) of a shared pattern, and
        take those lines out of the misses beyond the directory (in place).

        A pattern `sharedWith` other processes touches data they have written since (the
        producer-consumer case). Below a MESI directory on its path, its first touch of each
        line the directory level can hold (min(lines, its capacity)) is served on chip: a
        read is forwarded from the producer's cache (Get, Get_Fwd, PutS, Downgrade_Ack), a
        write takes the line over (GetX, GetX_Fwd, PutX, GetX_Fwd_Ack), a read then write
        adds an upgrade that invalidates the producer's copy (Upgrade, Upgrade_Ack, Inval,
        Inval_Ack). Without a directory the data comes from memory, as written back by the
        producer's flush: nothing changes here. Message names: simulator.models.coherence.
        """
        if not share.shared_with:
            return 0.0, {}
        position = next((i for i, level in enumerate(caches) if level.coherence == "mesi"), None)
        if position is None or position == 0:
            return 0.0, {}
        lines = pattern_lines(share, line)
        forwarded = min(lines, caches[position].size / line, misses[position - 1])
        if forwarded <= 0:
            return 0.0, {}
        for outer in range(position, len(misses)):
            misses[outer] = max(0.0, misses[outer] - forwarded)
        names: tuple[str, ...]
        if share.write and not share.read:
            names = ("GetX", "GetX_Fwd", "PutX", "GetX_Fwd_Ack")
        else:
            names = ("Get", "Get_Fwd", "PutS", "Downgrade_Ack")
            if share.write:
                names += ("Upgrade", "Upgrade_Ack", "Inval", "Inval_Ack")
        return forwarded, dict.fromkeys(names, forwarded)

    def _sharing_traffic(
        self,
        demand: Demand,
        caches: list[MemoryNode],
        directory: MemoryNode,
        forwarded: float,
        line: float,
        messages: Mapping[str, int],
    ) -> None:
        """Charge forwarded lines and coherence-only headers to the fabric into the
        directory: the producer's data goes up to the directory, which also takes the
        sharing write-back (two lines into it per forwarded line)."""
        inner = caches[caches.index(directory) - 1]
        fabric = inner.via
        if fabric is None:
            return
        headers = sum(count for name, count in messages.items() if name in COHERENCE_ONLY_MESSAGES)
        amount = 2 * forwarded * (line + fabric.header_bytes) + headers * fabric.header_bytes
        stats = fabric.stats[0]
        stats.messages += round(2 * forwarded + headers)
        stats.bytes += amount
        fabric.charge(demand, 0, directory.id, self._stops(directory.id), amount)

    # -- time ----------------------------------------------------------------------------------
    def serve(self, demand: Demand, label: str) -> float:
        """Block the calling process until `demand` is served; return the seconds it took."""
        engine = self.engine
        start = engine.now
        flows = [
            (server, amount, bandwidth, usage)
            for server, (amount, bandwidth, usage) in demand.servers.items()
        ]
        if flows:
            done = EventCount(engine, f"the memory traffic of {label}")
            for server, amount, bandwidth, usage in flows:
                _Flow(
                    engine, server, amount / CHUNKS, amount / CHUNKS / bandwidth, usage, done
                ).next()
            done.await_(len(flows))
        elapsed = engine.now - start
        if elapsed < demand.latency_s:
            engine.pause(demand.latency_s - elapsed)
        return engine.now - start

    # -- results -------------------------------------------------------------------------------
    def usages(self, node_id: str) -> list[Usage]:
        """Return the usage of each instance of a memory node (empty for other nodes)."""
        level = self.levels.get(node_id)
        if level is not None:
            return [state.usage for state in level.instances]
        fabric = self.fabrics.get(node_id)
        return list(fabric.usages) if fabric is not None else []

    def result(self, overall_time_s: float) -> dict[str, Any]:
        """Return the `memory` section of the run's result."""
        levels = []
        for level in self.levels.values():
            for index, state in enumerate(level.instances):
                stats = state.stats
                levels.append(
                    {
                        "node": level.id,
                        "name": level.name,
                        "hardware": level.hardware,
                        "type": level.kind,
                        "instance": index,
                        "accesses": stats.accesses,
                        "hits": stats.hits,
                        "misses": stats.misses,
                        "hit_ratio": stats.hits / stats.accesses
                        if stats.accesses and level.kind == "CACHE"
                        else None,
                        "evictions": stats.evictions,
                        "writebacks": stats.writebacks,
                        "invalidations": stats.invalidations,
                        "bytes": stats.bytes,
                        "busy_s": state.usage.busy_s,
                        "utilisation": state.usage.busy_s / overall_time_s
                        if overall_time_s > 0
                        else 0.0,
                    }
                )
        fabrics = []
        for fabric in self.fabrics.values():
            for index, stats in enumerate(fabric.stats):
                busy = fabric.busiest_link_s(index)
                fabrics.append(
                    {
                        "node": fabric.id,
                        "name": fabric.name,
                        "hardware": fabric.hardware,
                        "instance": index,
                        "topology": fabric.topology,
                        "ports": len(fabric.ports),
                        "messages": stats.messages,
                        "bytes": stats.bytes,
                        "hops": stats.hops,
                        "links": sum(
                            1
                            for link in fabric.link_bytes
                            if link.name.startswith(f"{fabric.id}[{index}] ")
                        ),
                        "busy_s": busy,  # of the busiest link
                        "utilisation": busy / overall_time_s if overall_time_s > 0 else 0.0,
                    }
                )
        return {
            "levels": levels,
            "fabrics": fabrics,
            "coherence": {
                "protocol": self.protocol,
                "messages": dict(sorted(self.messages.items())),
            },
        }


class _Flow:
    """One resource's share of a call: CHUNKS chunks through its FIFO, one after another."""

    __slots__ = ("chunk_s", "done", "engine", "left", "server", "usage")

    def __init__(
        self,
        engine: Engine,
        server: Resource,
        _chunk: float,
        chunk_s: float,
        usage: Usage,
        done: EventCount,
    ) -> None:
        self.engine = engine
        self.server = server
        self.chunk_s = chunk_s
        self.usage = usage
        self.done = done
        self.left = CHUNKS

    def next(self, _arg: object = None) -> None:
        if self.left == 0:
            self.done.advance()
            return
        self.server.request(self._start)

    def _start(self, _arg: object) -> None:
        self.usage.start(self.engine.now)
        self.engine.schedule(self.chunk_s, self._end)

    def _end(self, _arg: object) -> None:
        self.usage.stop(self.engine.now)
        self.server.release()
        self.left -= 1
        self.next()


def parse_call(
    call: str,
    arguments: Mapping[str, object],
    region_base: Callable[[str], int] | None = None,
) -> tuple[Pattern | None, array[int] | None, bytes | None, str | None]:
    """Return (pattern, addresses, writes, level) of a memory call's arguments.

    A trace's addresses come back as an `array('Q')` shifted by its region's base
    (`region_base(region)`), its write flags as bytes: buffers the cache simulator's C core
    reads without a Python object per access."""
    unknown = sorted(set(arguments) - set(CALL_KEYS))
    if unknown:
        raise MemoryUsageError(
            MEMSYS_MESSAGES["unknown"].format(
                call=call, name=unknown[0], expected=", ".join(CALL_KEYS)
            )
        )
    region = arguments.get("region")
    if region is not None and (not isinstance(region, str) or not region):
        raise MemoryUsageError(MEMSYS_MESSAGES["region"].format(call=call, value=region))
    level = arguments.get("level")
    level_id = str(level) if level is not None else None
    trace = arguments.get("trace")
    has_pattern = any(arguments.get(key) is not None for key in ("read", "write"))
    if trace is not None and has_pattern:
        raise MemoryUsageError(MEMSYS_MESSAGES["both"].format(call=call))
    if trace is not None:
        base = region_base(region) if region is not None and region_base is not None else 0
        addresses, writes = _parse_trace(call, trace, bool(arguments.get("writes", False)), base)
        return None, addresses, writes, level_id
    if not has_pattern:
        raise MemoryUsageError(MEMSYS_MESSAGES["nothing"].format(call=call))
    values: dict[str, float] = {}
    for name in ("read", "write", "footprint", "stride", "element"):
        value = arguments.get(name)
        if value is None:
            continue
        if (
            isinstance(value, bool)
            or not isinstance(value, int | float)
            or not math.isfinite(value)
            or value < 0
        ):
            raise MemoryUsageError(
                MEMSYS_MESSAGES["pattern_field"].format(call=call, name=name, value=value)
            )
        values[name] = float(value)
    for name in ("stride", "element", "footprint"):
        if name in values and values[name] == 0:
            raise MemoryUsageError(
                MEMSYS_MESSAGES["pattern_positive"].format(
                    call=call, name=name, value=arguments[name]
                )
            )
    order = arguments.get("order", "sequential")
    if order not in ("sequential", "random"):
        raise MemoryUsageError(MEMSYS_MESSAGES["order"].format(call=call, value=order))
    shared = arguments.get("sharedWith")
    if isinstance(shared, str):
        shared = [shared]
    if shared is not None and (
        not isinstance(shared, list | tuple)
        or not shared
        or not all(isinstance(label, str) for label in shared)
    ):
        raise MemoryUsageError(MEMSYS_MESSAGES["shared_with"].format(call=call, value=shared))
    read, write = values.get("read", 0.0), values.get("write", 0.0)
    element = values.get("element", 8.0)
    pattern = Pattern(
        read=read,
        write=write,
        footprint=values.get("footprint", read + write),
        stride=values.get("stride", element),
        element=element,
        order=str(order),
        shared_with=tuple(shared or ()),
    )
    return pattern, None, None, level_id


def _parse_trace(call: str, trace: object, all_writes: bool, base: int) -> tuple[array[int], bytes]:
    """Return a trace's addresses (plus `base`) and write flags, checking every entry."""
    try:
        if isinstance(trace, range):
            if len(trace) > MAX_TRACE:
                raise MemoryUsageError(
                    MEMSYS_MESSAGES["trace_length"].format(call=call, limit=MAX_TRACE)
                )
            if len(trace) and (trace.start < 0 or trace[-1] < 0):
                raise MemoryUsageError(
                    MEMSYS_MESSAGES["trace_item"].format(call=call, index=0, value=trace.start)
                )
            shifted = range(trace.start + base, trace.stop + base, trace.step)
            flags = b"\x01" * len(trace) if all_writes else bytes(len(trace))
            return array("Q", shifted), flags
        if not isinstance(trace, Iterable) or isinstance(trace, str | bytes):
            raise MemoryUsageError(
                MEMSYS_MESSAGES["trace_item"].format(call=call, index=0, value=trace)
            )
        addresses = array("Q")
        writes = bytearray()
        index = 0
        for index, item in enumerate(trace):
            if index >= MAX_TRACE:
                raise MemoryUsageError(
                    MEMSYS_MESSAGES["trace_length"].format(call=call, limit=MAX_TRACE)
                )
            if type(item) is int and item >= 0:
                addresses.append(item + base)
                writes.append(all_writes)
                continue
            if (
                isinstance(item, tuple | list)
                and len(item) == 2
                and type(item[0]) is int
                and item[0] >= 0
                and isinstance(item[1], bool | int)
            ):
                addresses.append(item[0] + base)
                writes.append(bool(item[1]) or all_writes)
                continue
            raise MemoryUsageError(
                MEMSYS_MESSAGES["trace_item"].format(call=call, index=index, value=item)
            )
    except OverflowError:
        raise MemoryUsageError(MEMSYS_MESSAGES["trace_range"].format(call=call)) from None
    return addresses, bytes(writes)
