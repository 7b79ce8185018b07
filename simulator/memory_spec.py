"""The memory hierarchy of a system model: what its hardware records and nodes must say.

A system graph may hold caches, a switching fabric and main memory as nodes, as M2S-CGM
does (002, chapter 3): CACHE, FABRIC and MEMORY hardware records with the attributes below,
joined into memory paths by two node fields (docs/contracts.md):

    "next": "<node id>"   on a CPU, GPU or CACHE node: the next level outwards, a CACHE or a
                          MEMORY node; the path of a CPU or GPU node follows `next` until it
                          reaches a MEMORY node.
    "via":  "<node id>"   optional, beside `next`: the FABRIC node crossed on the way there.
    "coherence": "mesi"   on a CACHE node: it holds the MESI directory of the caches below it
                          (the point of coherence, the shared LLC of 002); "none" (default):
                          caches below it are not kept coherent.
    "topology": "ring"    on a FABRIC node: "ring", "mesh" or "crossbar" (default).

Instances map block-wise: when a node has n instances and its `next` m, one of them must
divide the other; with m >= n instance i uses instances [i*m/n, (i+1)*m/n) (a GPU's per-SM
L1s: its work is spread over them), with m < n instance i uses instance i*m//n (n/m
instances share one, e.g. one L2 per four compute units).

Attributes (SI units, clocks in MHz as elsewhere in the hardware database):

    CACHE   size (bytes), ways, lineSize (bytes), latencyCycles, clock (MHz): required;
            bandwidth (B/s per slice), mshrs (default 16), writeBack (1, default: write-back
            with write-allocate; 0: write-through), slices (default 1: a striped cache of n
            slices interleaved by line, each with its own bandwidth and fabric stop; its hits
            and misses are those of one cache of the total size when the set index selects
            the slice, so `size` is the total)
    FABRIC  hopLatencyCycles, clock (MHz), linkBandwidth (B/s per link): required;
            headerBytes (default 8: the size of a message without data, 002 Table 4.1)
    MEMORY  latency (s), bandwidth (B/s, achievable): required when on a memory path;
            channels (default 1), peakBandwidth (B/s), size (bytes)

This module holds the rules and their messages, once, for the CLI, the REST API and the
runtime (simulator.memsys).
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

MEMORY_TYPES = ("CACHE", "FABRIC", "MEMORY")
PATH_SOURCES = ("CPU", "GPU", "CACHE")
COHERENCE_PROTOCOLS = ("none", "mesi")
TOPOLOGIES = ("crossbar", "ring", "mesh")
DEFAULT_MSHRS = 16
DEFAULT_HEADER_BYTES = 8
MAX_CACHE_BYTES = 2**44
MAX_WAYS = 1024

CACHE_REQUIRED = ("size", "ways", "lineSize", "latencyCycles", "clock")
FABRIC_REQUIRED = ("hopLatencyCycles", "clock", "linkBandwidth")
MEMORY_REQUIRED = ("latency", "bandwidth")

MEMORY_MESSAGES = {
    "required": "A {kind} record needs the attribute {name!r} ({meaning}).",
    "positive": "{name} must be greater than 0.",
    "non_negative": "{name} must be 0 or more.",
    "whole": "{name} must be a whole number.",
    "power_of_two": "{name} must be a power of two (got {value:g}).",
    "line_over_size": "The line ({line:g} B) is larger than the cache ({size:g} B).",
    "sets": (
        "size / (ways x lineSize) must be a whole number of sets: {size:g} B / ({ways:g} x "
        "{line:g} B) = {sets:g}."
    ),
    "ways_over_lines": "ways ({ways:g}) exceeds the lines the cache holds ({lines:g}).",
    "too_large": "{name} must be at most {limit}.",
    "slices": "The {sets:g} sets must split evenly over the {slices:g} slices.",
    "write_back": "writeBack is 1 (write-back) or 0 (write-through).",
    "next_source": "Only CPU, GPU and CACHE nodes have a next memory level; this is a {kind}.",
    "next_unknown": "Unknown node {ref!r}.",
    "next_group": "{ref!r} is a group; the next memory level is a CACHE or MEMORY node.",
    "next_kind": "The next memory level is a CACHE or MEMORY node; {ref!r} is a {kind}.",
    "via_without_next": "A fabric is crossed on the way to the next level; set next too.",
    "via_kind": "via names a FABRIC node; {ref!r} is a {kind}.",
    "via_unknown": "Unknown node {ref!r}.",
    "cycle": "The memory path loops: {cycle}.",
    "dead_end": (
        "The memory path {path} ends at cache {ref!r}, which has no next level; end it at a "
        "MEMORY node."
    ),
    "instances": (
        "{a!r} has {n} instances and its next level {b!r} has {m}: one count must divide the "
        "other (instance i of {a!r} uses the matching block of {b!r})."
    ),
    "line_sizes": "Line sizes differ along the memory path: {a!r} has {x:g} B lines, {b!r} {y:g} B.",
    "striped": (
        "{b!r} has more instances ({m}) than the cache {a!r} ({n}) that uses it; describe a "
        "striped level as one cache of the total size with the attribute slices."
    ),
    "directory_count": "A coherence directory is one cache (count 1); this node has {count}.",
    "two_directories": "The memory path {path} has two coherence directories ({a!r}, {b!r}); keep one.",
    "coherence": "Unknown coherence protocol {value!r}; expected one of "
    + ", ".join(COHERENCE_PROTOCOLS)
    + ".",
    "coherence_kind": "Only a CACHE node can hold a coherence directory; this is a {kind}.",
    "topology": "Unknown topology {value!r}; expected one of " + ", ".join(TOPOLOGIES) + ".",
    "topology_kind": "Only a FABRIC node has a topology; this is a {kind}.",
}

ATTRIBUTE_MEANINGS = {
    "size": "capacity in bytes",
    "ways": "set associativity",
    "lineSize": "line size in bytes",
    "latencyCycles": "hit latency in cycles of its clock",
    "clock": "clock in MHz",
    "hopLatencyCycles": "latency of one hop in cycles of its clock",
    "linkBandwidth": "bandwidth of one link in B/s",
    "latency": "access latency in seconds",
    "bandwidth": "achievable bandwidth in B/s",
}

Errors = dict[str, list[str]]


def _add(errors: Errors, path: str, message: str) -> None:
    messages = errors.setdefault(path, [])
    if message not in messages:  # paths that share levels would repeat a level's problem
        messages.append(message)


def _whole(value: float) -> bool:
    return float(value).is_integer()


def attribute_errors(
    kind: str, attributes: Mapping[str, float], *, on_path: bool = False
) -> Errors:
    """Return {attribute name: [messages]} for a CACHE, FABRIC or MEMORY record.

    A MEMORY record needs latency and bandwidth only when a memory path reaches it
    (`on_path`): memory records also describe host memory for transfers.
    """
    errors: Errors = {}
    if kind == "CACHE":
        required: tuple[str, ...] = CACHE_REQUIRED
    elif kind == "FABRIC":
        required = FABRIC_REQUIRED
    elif kind == "MEMORY" and on_path:
        required = MEMORY_REQUIRED
    else:
        required = ()
    for name in required:
        if name not in attributes:
            _add(
                errors,
                name,
                MEMORY_MESSAGES["required"].format(
                    kind=kind, name=name, meaning=ATTRIBUTE_MEANINGS[name]
                ),
            )
    positive = {
        "CACHE": ("size", "ways", "lineSize", "clock", "bandwidth", "mshrs", "slices"),
        "FABRIC": ("clock", "linkBandwidth", "headerBytes"),
        "MEMORY": ("bandwidth", "channels", "peakBandwidth", "size"),
    }.get(kind, ())
    for name in positive:
        value = attributes.get(name)
        if value is not None and not value > 0:
            _add(errors, name, MEMORY_MESSAGES["positive"].format(name=name))
    non_negative = {
        "CACHE": ("latencyCycles",),
        "FABRIC": ("hopLatencyCycles",),
        "MEMORY": ("latency",),
    }.get(kind, ())
    for name in non_negative:
        value = attributes.get(name)
        if value is not None and not value >= 0:
            _add(errors, name, MEMORY_MESSAGES["non_negative"].format(name=name))
    whole = {"CACHE": ("size", "ways", "lineSize", "mshrs", "slices"), "MEMORY": ("channels",)}.get(
        kind, ()
    )
    for name in whole:
        value = attributes.get(name)
        if value is not None and name not in errors and not _whole(value):
            _add(errors, name, MEMORY_MESSAGES["whole"].format(name=name))
    # The geometry reads size, ways and lineSize: checked whenever those three read, so that
    # its errors come with the others of the record instead of after they are fixed.
    if kind == "CACHE" and all(
        name in attributes and name not in errors for name in ("size", "ways", "lineSize")
    ):
        _cache_geometry_errors(attributes, errors)
    return errors


def _cache_geometry_errors(attributes: Mapping[str, float], errors: Errors) -> None:
    size, ways, line = attributes["size"], attributes["ways"], attributes["lineSize"]
    if size > MAX_CACHE_BYTES:
        _add(
            errors, "size", MEMORY_MESSAGES["too_large"].format(name="size", limit=MAX_CACHE_BYTES)
        )
        return
    if ways > MAX_WAYS:
        _add(errors, "ways", MEMORY_MESSAGES["too_large"].format(name="ways", limit=MAX_WAYS))
        return
    if int(line) & (int(line) - 1):
        _add(
            errors, "lineSize", MEMORY_MESSAGES["power_of_two"].format(name="lineSize", value=line)
        )
    elif line > size:
        _add(errors, "lineSize", MEMORY_MESSAGES["line_over_size"].format(line=line, size=size))
    elif ways > size // line:
        _add(
            errors, "ways", MEMORY_MESSAGES["ways_over_lines"].format(ways=ways, lines=size // line)
        )
    elif size % (ways * line):
        _add(
            errors,
            "ways",
            MEMORY_MESSAGES["sets"].format(
                size=size, ways=ways, line=line, sets=size / (ways * line)
            ),
        )
    slices = attributes.get("slices", 1)
    sets = size // (ways * line)
    fine = not {"ways", "lineSize", "slices"} & errors.keys()
    if fine and sets % slices:
        _add(errors, "slices", MEMORY_MESSAGES["slices"].format(sets=sets, slices=slices))
    write_back = attributes.get("writeBack", 1)
    if write_back not in (0, 1):
        _add(errors, "writeBack", MEMORY_MESSAGES["write_back"])


@dataclass(frozen=True)
class GraphNode:
    """What the memory rules need of one node: kind, instances, fields, line size."""

    index: int
    id: str
    name: str  # what messages call the node (its name, else its id)
    kind: str | None
    count: int
    next: object
    via: object
    coherence: object
    topology: object
    attributes: Mapping[str, float] | None  # the hardware record's, None when unknown

    @property
    def line_size(self) -> float | None:
        """Return the cache line size, None for other kinds or unknown attributes."""
        if self.kind != "CACHE" or self.attributes is None:
            return None
        return self.attributes.get("lineSize")


def graph_errors(nodes: Sequence[GraphNode]) -> Errors:
    """Return {field path: [messages]} for the memory fields of a graph's nodes.

    Paths are "nodes[i].next" and the like. Nodes whose kind is unknown (a bad hardware
    reference, reported elsewhere) are skipped.
    """
    errors: Errors = {}
    by_id = {node.id: node for node in nodes}
    for node in nodes:
        path = f"nodes[{node.index}]"
        _field_errors(node, by_id, path, errors)
    for node in nodes:
        if (
            node.kind in ("CPU", "GPU")
            and node.next is not None
            and f"nodes[{node.index}].next" not in errors
        ):
            _path_errors(node, by_id, errors)
    return errors


def _field_errors(
    node: GraphNode, by_id: Mapping[str, GraphNode], path: str, errors: Errors
) -> None:
    kind = node.kind
    if node.coherence is not None:
        if kind is not None and kind != "CACHE":
            _add(errors, f"{path}.coherence", MEMORY_MESSAGES["coherence_kind"].format(kind=kind))
        elif node.coherence not in COHERENCE_PROTOCOLS:
            _add(
                errors,
                f"{path}.coherence",
                MEMORY_MESSAGES["coherence"].format(value=node.coherence),
            )
        elif node.coherence == "mesi" and node.count > 1:
            _add(
                errors,
                f"{path}.coherence",
                MEMORY_MESSAGES["directory_count"].format(count=node.count),
            )
    if node.topology is not None:
        if kind is not None and kind != "FABRIC":
            _add(errors, f"{path}.topology", MEMORY_MESSAGES["topology_kind"].format(kind=kind))
        elif node.topology not in TOPOLOGIES:
            _add(
                errors, f"{path}.topology", MEMORY_MESSAGES["topology"].format(value=node.topology)
            )
    if node.next is None:
        if node.via is not None:
            _add(errors, f"{path}.via", MEMORY_MESSAGES["via_without_next"])
        return
    if kind is not None and kind not in PATH_SOURCES:
        _add(errors, f"{path}.next", MEMORY_MESSAGES["next_source"].format(kind=kind))
        return
    target = by_id.get(node.next) if isinstance(node.next, str) else None
    if target is None:
        _add(errors, f"{path}.next", MEMORY_MESSAGES["next_unknown"].format(ref=node.next))
    elif target.kind == "GROUP":
        _add(errors, f"{path}.next", MEMORY_MESSAGES["next_group"].format(ref=target.name))
    elif target.kind is not None and target.kind not in ("CACHE", "MEMORY"):
        _add(
            errors,
            f"{path}.next",
            MEMORY_MESSAGES["next_kind"].format(ref=target.name, kind=target.kind),
        )
    elif target.count > 0 and node.count > 0:
        n, m = node.count, target.count
        if kind == "CACHE" and target.kind == "CACHE" and m > n:
            _add(
                errors,
                f"{path}.next",
                MEMORY_MESSAGES["striped"].format(a=node.name, n=n, b=target.name, m=m),
            )
        elif (m >= n and m % n) or (m < n and n % m):
            _add(
                errors,
                f"{path}.next",
                MEMORY_MESSAGES["instances"].format(a=node.name, n=n, b=target.name, m=m),
            )
    if node.via is not None:
        fabric = by_id.get(node.via) if isinstance(node.via, str) else None
        if fabric is None:
            _add(errors, f"{path}.via", MEMORY_MESSAGES["via_unknown"].format(ref=node.via))
        elif fabric.kind is not None and fabric.kind != "FABRIC":
            _add(
                errors,
                f"{path}.via",
                MEMORY_MESSAGES["via_kind"].format(ref=fabric.name, kind=fabric.kind or "group"),
            )


def _path_errors(start: GraphNode, by_id: Mapping[str, GraphNode], errors: Errors) -> None:
    chain = [start]
    current = start
    while current.next is not None:
        target = by_id.get(current.next) if isinstance(current.next, str) else None
        if target is None or target.kind not in ("CACHE", "MEMORY"):
            return  # reported as a field error, or an unknown hardware kind
        if target in chain:
            cycle = " -> ".join(node.name for node in [*chain[chain.index(target) :], target])
            _add(
                errors, f"nodes[{current.index}].next", MEMORY_MESSAGES["cycle"].format(cycle=cycle)
            )
            return
        chain.append(target)
        current = target
        if current.kind == "MEMORY":
            break
    if current.kind == "MEMORY" and current.attributes is not None:
        for name, messages in attribute_errors("MEMORY", current.attributes, on_path=True).items():
            for message in messages:
                _add(errors, f"nodes[{current.index}].hardware", f"{name}: {message}")
    if current.kind != "MEMORY":
        path_text = " -> ".join(node.name for node in chain)
        _add(
            errors,
            f"nodes[{current.index}].next",
            MEMORY_MESSAGES["dead_end"].format(path=path_text, ref=current.name),
        )
        return
    directories = [node for node in chain if node.coherence == "mesi"]
    if len(directories) > 1:
        _add(
            errors,
            f"nodes[{directories[1].index}].coherence",
            MEMORY_MESSAGES["two_directories"].format(
                path=" -> ".join(node.name for node in chain),
                a=directories[0].name,
                b=directories[1].name,
            ),
        )
    caches = [node for node in chain if node.kind == "CACHE" and node.line_size is not None]
    for inner, outer in itertools.pairwise(caches):
        if inner.line_size != outer.line_size:
            _add(
                errors,
                f"nodes[{outer.index}].hardware",
                MEMORY_MESSAGES["line_sizes"].format(
                    a=inner.name, x=inner.line_size, b=outer.name, y=outer.line_size
                ),
            )
            return


def block_of(instance: int, count: int, next_count: int) -> range:
    """Return the instances of the next level that `instance` of `count` uses (block-wise)."""
    if next_count >= count:
        per = next_count // count
        return range(instance * per, (instance + 1) * per)
    return range(instance * next_count // count, instance * next_count // count + 1)


def fabric_hops(topology: str, ports: int, a: int, b: int) -> int:
    """Return the hops between ports `a` and `b` of a fabric with `ports` ports.

    crossbar: 1 hop between any two ports; ring: the shorter way round (bidirectional ring,
    as M2S-CGM's ring bus); mesh: ports placed row by row on a ceil(sqrt(ports)) wide grid,
    Manhattan distance (dimension-ordered routing), at least 1.
    """
    if a == b:
        return 1
    if topology == "ring":
        distance = abs(a - b)
        return min(distance, ports - distance)
    if topology == "mesh":
        width = math.ceil(math.sqrt(ports))
        return abs(a // width - b // width) + abs(a % width - b % width)
    return 1
