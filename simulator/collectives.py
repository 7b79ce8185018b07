"""The collectives' algorithms as schedules of point-to-point transfers (docs/collectives.md).

A schedule is a list of steps; a step is the transfers `(source, target, bytes, reduced)`
between the group's members (indices 0..p-1, label by label, rank by rank) that may run at
once, `reduced` saying whether the target combines what it received with its own data (an
arithmetic charged to its hardware). `simulator.api` runs a schedule through the same sends
and receives a point-to-point message uses (`World.send`), piece by piece: a message of m
bytes travels as ceil(m / chunk) pieces, and a process sends step s's piece c as soon as it
received every piece of the diagonals before s + c (`program`), so pieces pipeline through
the steps and share the network with every other message of the run.

Sizes follow nccl-tests (doc/PERFORMANCE.md): `size` is the whole buffer of one rank: the
vector an allreduce or a reduce reduces, the output of an allgather (each rank contributes
size / p), the input of a reduce-scatter (each rank keeps size / p), the send buffer of an
alltoall (size / p to each rank). Nothing here depends on the engine.
"""

from __future__ import annotations

import heapq
import itertools
import math
import operator
from collections.abc import Callable, Iterator, Sequence
from typing import overload

Transfer = tuple[int, int, float, bool]  # source, target, bytes, whether the target reduces
Schedule = list[list[Transfer]]

DEFAULT_CHUNK_BYTES = 512 * 1024
"""A piece's bytes unless the call gives `chunk`: NCCL's default buffer (NCCL_BUFFSIZE,
4 MiB) over its NCCL_STEPS (8) slots, the piece one step of its Simple protocol moves."""

DEFAULT_MOST_PIECES = 64
"""Without `chunk`, a message travels as at most this many pieces (larger ones for a larger
message): simulating a call costs events in proportion to its pieces. Filling a pipeline of S
stages costs S - 1 pieces' time more than a stream of infinitely small ones: (S - 1) / 64 of
a message's time at this cap. An explicit `chunk` is kept as it is, without a cap."""

KINDS = ("allreduce", "allgather", "reduceScatter", "reduce", "alltoall")

ALGORITHMS: dict[str, tuple[str, ...]] = {
    "allreduce": (
        "ring",
        "tree",
        "double_binary_tree",
        "recursive_doubling",
        "halving_doubling",
        "direct",
        "hierarchical",
        "nvls",
    ),
    "allgather": ("ring", "tree", "recursive_doubling", "direct", "hierarchical"),
    "reduceScatter": ("ring", "halving_doubling", "direct", "hierarchical"),
    "reduce": ("tree", "ring", "direct", "hierarchical"),
    "alltoall": ("pairwise", "direct", "bruck", "hierarchical"),
}
"""The algorithms each collective has, its name first; "auto" picks one (`choose`)."""

BUS_FACTORS: dict[str, Callable[[int], float]] = {
    "allreduce": lambda p: 2 * (p - 1) / p,
    "allgather": lambda p: (p - 1) / p,
    "reduceScatter": lambda p: (p - 1) / p,
    "reduce": lambda p: 1.0,
    "alltoall": lambda p: (p - 1) / p,
}
"""busbw = algbw x factor(ranks), nccl-tests doc/PERFORMANCE.md's corrections."""

COLLECTIVE_MESSAGES = {
    "algorithm": "{call}: algorithm must be 'auto' or one of {known} (got {value!r})",
    "chunk": "{call}: chunk must be a number of bytes > 0, or 0 for no pipelining (got {value!r})",
    "protocol": "{call}: protocol must be one of {known} (got {value!r})",
    "power_of_two": "{call}: the {algorithm} algorithm needs a power-of-two number of "
    "participants (got {count})",
    "hosts": "{call}: the hierarchical algorithm needs the same number of participants on every "
    "host (got {counts})",
    "nvls": "{call}: algorithm 'nvls' needs every participant on one switch whose hardware "
    "record says it supports NVLink SHARP (attribute 'nvls' = 1); {why}",
    "nvls_protocol": "{call}: algorithm 'nvls' runs NCCL's Simple protocol only (got {value!r})",
}


class ScheduleError(ValueError):
    """An algorithm cannot run on this group (its message says why)."""


# -- choosing an algorithm ---------------------------------------------------------------------


def _power_of_two(p: int) -> bool:
    return p > 0 and p & (p - 1) == 0


def multi_host(hosts: Sequence[object]) -> bool:
    """Whether the group spans several hosts with several members on each, the same number
    everywhere (what the hierarchical algorithms take)."""
    counts: dict[object, int] = {}
    for host in hosts:
        counts[host] = counts.get(host, 0) + 1
    values = set(counts.values())
    return len(counts) > 1 and len(values) == 1 and values.pop() > 1


def choose(kind: str, size: float, hosts: Sequence[object]) -> str:
    """Return the algorithm "auto" runs for `kind` of `size` bytes over members on `hosts`
    (one host key per member): the table of docs/collectives.md."""
    p = len(hosts)
    if multi_host(hosts) and size >= 1 << 20:
        return "hierarchical"
    if kind == "allreduce":
        return "recursive_doubling" if size < 10000 else "ring"
    if kind == "allgather":
        return "recursive_doubling" if size < 50000 and _power_of_two(p) else "ring"
    if kind == "reduceScatter":
        small = size <= 12 * 1024 or (size <= 256 * 1024 and _power_of_two(p))
        return "halving_doubling" if small and _power_of_two(p) else "ring"
    if kind == "reduce":
        return "direct" if p < 8 and size < 512 else "tree"
    block = size / p
    if block < 200 and p > 12:
        return "bruck"
    return "direct" if block < 3000 else "pairwise"


# -- the schedules -----------------------------------------------------------------------------


def _merge(*schedules: Schedule) -> Schedule:
    """Run schedules side by side: step s of the result holds step s of each."""
    length = max((len(schedule) for schedule in schedules), default=0)
    merged: Schedule = [[] for _ in range(length)]
    for schedule in schedules:
        for index, step in enumerate(schedule):
            merged[index].extend(step)
    return merged


def _ring(group: Sequence[int], block: float, reduced: bool) -> Schedule:
    """p - 1 steps; in each, every member sends `block` bytes to the next on the ring (one
    list for all of them: nothing edits a schedule's steps)."""
    g = len(group)
    return [[(group[i], group[(i + 1) % g], block, reduced) for i in range(g)]] * (g - 1)


def _direct(group: Sequence[int], block: float, reduced: bool) -> Schedule:
    """One step: every member sends `block` bytes to every other."""
    return (
        [[(a, b, block, reduced) for a in group for b in group if a != b]] if len(group) > 1 else []
    )


def _nvls(group: Sequence[int], size: float) -> Schedule:
    """NCCL's NVLS allreduce on one NVSwitch as point-to-point transfers with its bytes on
    every switch port. NVLS (NVLink SHARP) moves each GPU's data once up to the switch, which
    reduces it and hands each member its reduced share (multimem ld_reduce: up S, down S/p
    per member), then each member writes its reduced share once and the switch multicasts
    it to all (multimem st: up S/p, down S); NCCL pipelines the two (tuning.cc: "AllReduce
    pipelines two operations"). So each member's port carries S (1 + 1/p) each way, against
    a ring's 2 (p - 1) / p S. The flow model's flows run between members, not to the switch,
    so the schedule is one step in which every member sends each other member
    S (p + 1) / (p (p - 1)) bytes: its port carries S (1 + 1/p) up and down at once, and
    every flow shares the ports with other traffic. The reduction is the switch's, done as
    the data streams through it: no member reduces (`reduced` False)."""
    p = len(group)
    share = size * (p + 1) / (p * (p - 1))
    return [[(a, b, share, False) for a in group for b in group if a != b]]


def _pairwise(group: Sequence[int], block: float) -> Schedule:
    """p - 1 steps; in step s, member i sends `block` bytes to member i + s (mod p)."""
    g = len(group)
    return [[(group[i], group[(i + s) % g], block, False) for i in range(g)] for s in range(1, g)]


def _tree_links(count: int) -> list[int]:
    """Return each position's parent (-1: the root) in the binary heap tree of `count`."""
    return [-1] + [(i - 1) // 2 for i in range(1, count)]


def _in_order_tree(count: int) -> list[int]:
    """Return each position's parent in the balanced in-order binary tree over 0..count-1
    (the middle position is the root; NCCL's double binary tree pairs two such trees)."""
    parents = [-1] * count

    def build(lo: int, hi: int, parent: int) -> None:
        if lo > hi:
            return
        mid = (lo + hi) // 2
        parents[mid] = parent
        build(lo, mid - 1, mid)
        build(mid + 1, hi, mid)

    build(0, count - 1, -1)
    return parents


def _tree_up(group: Sequence[int], parents: Sequence[int], size: float) -> Schedule:
    """Reduce `size` bytes up a tree to its root: a member sends to its parent at the step of
    its height (leaves 0), after every child's data arrived."""
    count = len(group)
    height = [0] * count
    order = sorted(range(count), key=lambda i: _depth(parents, i), reverse=True)
    for i in order:
        if parents[i] >= 0:
            height[parents[i]] = max(height[parents[i]], height[i] + 1)
    steps = max(height) if count > 1 else 0
    schedule: Schedule = [[] for _ in range(steps)]
    for i in range(count):
        if parents[i] >= 0:
            schedule[height[i]].append((group[i], group[parents[i]], size, True))
    return schedule


def _tree_down(group: Sequence[int], parents: Sequence[int], size: float) -> Schedule:
    """Broadcast `size` bytes down a tree from its root: a member at depth d receives at
    step d - 1 and sends on at step d."""
    count = len(group)
    depth = [_depth(parents, i) for i in range(count)]
    steps = max(depth) if count > 1 else 0
    schedule: Schedule = [[] for _ in range(steps)]
    for i in range(count):
        if parents[i] >= 0:
            schedule[depth[i] - 1].append((group[parents[i]], group[i], size, False))
    return schedule


def _depth(parents: Sequence[int], i: int) -> int:
    depth = 0
    while parents[i] >= 0:
        i = parents[i]
        depth += 1
    return depth


def _rooted(group: Sequence[int], root: int) -> list[int]:
    """The group reordered so that `root` comes first (a tree's root is position 0)."""
    at = list(group).index(root)
    return list(group[at:]) + list(group[:at])


def _folded(p: int, size: float, inner: Callable[[list[int]], Schedule]) -> Schedule:
    """Run `inner` over a power-of-two part of `p` members as MPICH does for the others
    (Thakur, Rabenseifner and Gropp 2005): with r = p - p' (p' the largest power of two <= p),
    each of the first r even members sends its `size` bytes to the odd one after it (which
    reduces them) before, and gets the result back after."""
    p2 = 1 << (p.bit_length() - 1)
    extra = p - p2
    active = [2 * i + 1 for i in range(extra)] + list(range(2 * extra, p))
    if extra == 0:
        return inner(active)
    before = [[(2 * i, 2 * i + 1, size, True) for i in range(extra)]]
    after = [[(2 * i + 1, 2 * i, size, False) for i in range(extra)]]
    return before + inner(active) + after


def _recursive_doubling(group: Sequence[int], size: float, reduced: bool) -> Schedule:
    """log2 p steps; in step k, member i exchanges `size` bytes with member i xor 2^k."""
    g = len(group)
    return [
        [(group[i], group[i ^ (1 << k)], size, reduced) for i in range(g)]
        for k in range(g.bit_length() - 1)
    ]


def _halving(group: Sequence[int], size: float) -> Schedule:
    """Reduce-scatter by recursive halving: in step k, member i sends the half of what it
    still holds that its partner i xor p/2^(k+1) keeps (size / 2^(k+1) bytes) and reduces the
    half it keeps."""
    g = len(group)
    steps = g.bit_length() - 1
    return [
        [(group[i], group[i ^ (g >> (k + 1))], size / (2 << k), True) for i in range(g)]
        for k in range(steps)
    ]


def _doubling_gather(group: Sequence[int], size: float) -> Schedule:
    """Allgather by recursive doubling of blocks, the reverse of `_halving`: in step k,
    member i sends the size / 2^(steps-k) bytes it holds to i xor 2^k."""
    g = len(group)
    steps = g.bit_length() - 1
    return [
        [(group[i], group[i ^ (1 << k)], size * (1 << k) / g, False) for i in range(g)]
        for k in range(steps)
    ]


def _bruck(group: Sequence[int], block: float) -> Schedule:
    """Bruck's alltoall: ceil(log2 p) steps; in step k, member i sends to i + 2^k the blocks
    whose index has bit k set."""
    g = len(group)
    schedule: Schedule = []
    k = 0
    while (1 << k) < g:
        blocks = sum(1 for j in range(g) if j >> k & 1)
        schedule.append(
            [(group[i], group[(i + (1 << k)) % g], blocks * block, False) for i in range(g)]
        )
        k += 1
    return schedule


def _host_groups(hosts: Sequence[object], call: str) -> list[list[int]]:
    """The members host by host, each host's in member order; ScheduleError unless every
    host has as many."""
    by_host: dict[object, list[int]] = {}
    for index, host in enumerate(hosts):
        by_host.setdefault(host, []).append(index)
    groups = list(by_host.values())
    if len({len(group) for group in groups}) != 1:
        counts = {str(host): len(members) for host, members in by_host.items()}
        raise ScheduleError(COLLECTIVE_MESSAGES["hosts"].format(call=call, counts=counts))
    return groups


def schedule(
    kind: str,
    algorithm: str,
    size: float,
    hosts: Sequence[object],
    root: int = 0,
    call: str = "",
) -> Schedule:
    """Return the steps of `kind` by `algorithm` of `size` bytes over members on `hosts`
    (`root`: the reduce's root's index). ScheduleError when the algorithm cannot run."""
    p = len(hosts)
    members = list(range(p))
    if p < 2:
        return []

    def need_power_of_two() -> None:
        if not _power_of_two(p):
            raise ScheduleError(
                COLLECTIVE_MESSAGES["power_of_two"].format(call=call, algorithm=algorithm, count=p)
            )

    if algorithm == "hierarchical":
        local = _host_groups(hosts, call)
        across = [list(column) for column in zip(*local, strict=True)]
        count, width = len(local), len(local[0])
        if kind == "allreduce":
            shard = size / width
            return (
                _merge(*(_ring(g, shard, True) for g in local))
                + _merge(
                    *(
                        _ring(g, shard / count, True) + _ring(g, shard / count, False)
                        for g in across
                    )
                )
                + _merge(*(_ring(g, shard, False) for g in local))
            )
        if kind == "allgather":
            return _merge(*(_ring(g, size / p, False) for g in across)) + _merge(
                *(_ring(g, size / width, False) for g in local)
            )
        if kind == "reduceScatter":
            return _merge(*(_ring(g, size / width, True) for g in local)) + _merge(
                *(_ring(g, size / p, True) for g in across)
            )
        if kind == "reduce":
            leaders = [next((m for m in g if m == root), g[0]) for g in local]
            up = _merge(
                *(
                    _tree_up(_rooted(g, lead), _tree_links(len(g)), size)
                    for g, lead in zip(local, leaders, strict=True)
                )
            )
            return up + _tree_up(_rooted(leaders, root), _tree_links(count), size)
        # alltoall: a member sends its peer of the same local index on each other host the
        # blocks for that host's members, then hands each local peer the blocks it holds
        # for it (its own and those from the other hosts)
        return _merge(*(_pairwise(g, size / count) for g in across)) + _merge(
            *(_pairwise(g, size / width) for g in local)
        )

    if kind == "allreduce":
        if algorithm == "ring":
            return _ring(members, size / p, True) + _ring(members, size / p, False)
        if algorithm == "direct":
            return _direct(members, size / p, True) + _direct(members, size / p, False)
        if algorithm == "tree":
            parents = _tree_links(p)
            return _tree_up(members, parents, size) + _tree_down(members, parents, size)
        if algorithm == "double_binary_tree":
            first = _in_order_tree(p)
            # the second tree is the first shifted by one rank, so that a leaf of one is
            # inside the other (NCCL mirrors it for an odd count, but a balanced in-order
            # tree is its own mirror, which would put both trees on the same links)
            second = [first[(r - 1) % p] for r in range(p)]
            second = [-1 if q < 0 else (q + 1) % p for q in second]
            half = size / 2
            return _merge(
                _tree_up(members, first, half) + _tree_down(members, first, half),
                _tree_up(members, second, half) + _tree_down(members, second, half),
            )
        if algorithm == "recursive_doubling":
            return _folded(p, size, lambda g: _recursive_doubling(g, size, True))
        if algorithm == "halving_doubling":
            return _folded(p, size, lambda g: _halving(g, size) + _doubling_gather(g, size))
        if algorithm == "nvls":
            return _nvls(members, size)
    elif kind == "allgather":
        if algorithm == "ring":
            return _ring(members, size / p, False)
        if algorithm == "direct":
            return _direct(members, size / p, False)
        if algorithm == "recursive_doubling":
            need_power_of_two()
            return _doubling_gather(members, size)
        if algorithm == "tree":  # gather up a binary tree to member 0, broadcast back down
            parents = _tree_links(p)
            gathering: Schedule = [[] for _ in range(max(_depth(parents, i) for i in members))]
            for i in members[1:]:  # a subtree's blocks go up together
                below = sum(1 for j in members if _ancestor(parents, i, j))
                gathering[_height(parents, i)].append((i, parents[i], below * size / p, False))
            return gathering + _tree_down(members, parents, size)
    elif kind == "reduceScatter":
        if algorithm == "ring":
            return _ring(members, size / p, True)
        if algorithm == "direct":
            return _direct(members, size / p, True)
        if algorithm == "halving_doubling":
            need_power_of_two()
            return _halving(members, size)
    elif kind == "reduce":
        if algorithm == "tree":
            return _tree_up(_rooted(members, root), _tree_links(p), size)
        if algorithm == "direct":
            return [[(i, root, size, True) for i in members if i != root]]
        if algorithm == "ring":  # Rabenseifner's: a ring reduce-scatter, then a gather
            return [
                *_ring(members, size / p, True),
                [(i, root, size / p, False) for i in members if i != root],
            ]
    elif kind == "alltoall":
        if algorithm == "pairwise":
            return _pairwise(members, size / p)
        if algorithm == "direct":
            return _direct(members, size / p, False)
        if algorithm == "bruck":
            return _bruck(members, size / p)
    raise ScheduleError(f"{call}: {kind} has no algorithm {algorithm!r}")  # checked by callers


RingSpan = tuple[int, int]  # a channel's first step, its steps


def nccl_ring(
    kind: str, size: float, nodes: Sequence[Sequence[int]]
) -> tuple[Schedule, list[RingSpan]]:
    """Return NCCL's rings for `kind` (allreduce, allgather, reduceScatter) of `size` bytes
    over members grouped by node, several nodes, and each ring's span of steps: a channel per
    member place (as many as the smallest node has members), each a ring through every node
    in turn with size / channels of the data, channel c entering each node at its member c
    (the node's members from c on, then those before), so that the channels cross between
    nodes through every member's link, as NCCL's rings spread over a node's NICs (NCCL's
    logs: `Channel 00/16 : 0 7 6 13 12 ...`). The rings follow one another in the schedule,
    each its own span of steps, for `ring_streams`, which runs them side by side."""
    channels = min(len(node) for node in nodes)
    p = sum(len(node) for node in nodes)
    block = size / (channels * p)
    schedule: Schedule = []
    spans: list[RingSpan] = []
    for c in range(channels):
        order = [m for node in nodes for m in list(node[c:]) + list(node[:c])]
        if kind == "allreduce":
            ring = _ring(order, block, True) + _ring(order, block, False)
        else:
            ring = _ring(order, block, kind == "reduceScatter")
        spans.append((len(schedule), len(ring)))
        schedule += ring
    return schedule, spans


def ring_streams(
    messages: Sequence[Message], chunk: float, most: int, spans: Sequence[RingSpan]
) -> list[list[Operation]]:
    """Return a member's operations of `nccl_ring`'s schedule as one stream per ring, each in
    `program`'s order within its ring, to run side by side: NCCL runs each channel in a
    CUDA block of its own (NVIDIA/nccl commit 5067397c2676d5aed50042fc39e5c8ee96eb0027,
    src/device/common.h line 372: block n takes the n-th channel of the mask), each on its
    own part of the data (src/device/all_reduce.h lines 14-34, `runRing`: `ncclCollCbdPart`
    gives the channel's `gridOffset` and `channelCount`, and the channel loops over its own
    part), and the channels meet only when the kernel ends, so a member's piece of one ring
    never waits for a piece of another.
    `chunk` and `most` as `program`'s."""
    by_ring: dict[int, list[Message]] = {}
    for message in messages:
        ring = next(r for r, (first, length) in enumerate(spans) if message[0] < first + length)
        by_ring.setdefault(ring, []).append(message)
    return [list(program(mine, chunk, most)) for _, mine in sorted(by_ring.items())]


NCCL_RING_KINDS = frozenset({"allreduce", "allgather", "reduceScatter"})
"""The collectives `nccl_ring` schedules."""

TreeSpan = tuple[int, int, int]  # a tree's first step, its steps up, its steps in all


def nccl_tree(size: float, nodes: Sequence[Sequence[int]]) -> tuple[Schedule, list[TreeSpan]]:
    """Return NCCL's allreduce tree (NCCL_ALGO=Tree) of `size` bytes over members grouped by
    node (`nodes`: each node's member indices, in order), and each tree's span of steps.

    Within a node a chain, each member's parent the one before it (NCCL's intra-node tree:
    `Trees [0] 2/-1/-1->1->0` in its logs); across nodes NCCL's double binary tree over the
    chains' heads, two trees with half the data each (the second the first shifted by one
    node, as `double_binary_tree`). Over several nodes a channel per member place (as many as
    the smallest node has members), channel c's chains headed by each node's member c, so
    that the trees' network traffic leaves every node through all its members' links, as
    NCCL's channels spread it over a node's NICs; one node: one chain, as NCCL's logs show
    every channel's chain alike. The trees follow one another in the schedule, each its own
    span of steps, for `tree_streams`, which runs them side by side."""
    p = sum(len(node) for node in nodes)
    members = list(range(p))
    if p < 2:
        return [], []

    def parents_of(channel: int, across: Sequence[int]) -> list[int]:
        parents = [-1] * p
        heads = []
        for node in nodes:
            chain = list(node[channel:]) + list(node[:channel])
            heads.append(chain[0])
            for before, member in itertools.pairwise(chain):
                parents[member] = before
        for index, parent in enumerate(across):
            if parent >= 0:
                parents[heads[index]] = heads[parent]
        return parents

    if len(nodes) == 1:
        trees, part = [parents_of(0, [-1])], size
    else:
        count = len(nodes)
        first = _in_order_tree(count)
        second = [first[(r - 1) % count] for r in range(count)]
        second = [-1 if q < 0 else (q + 1) % count for q in second]
        channels = min(len(node) for node in nodes)
        trees = [parents_of(c, across) for c in range(channels) for across in (first, second)]
        part = size / (2 * channels)
    schedule: Schedule = []
    spans: list[TreeSpan] = []
    for parents in trees:
        up = _tree_up(members, parents, part)
        spans.append((len(schedule), len(up), 2 * len(up)))
        schedule += up + _tree_down(members, parents, part)
    return schedule, spans


def tree_streams(
    messages: Sequence[Message], chunk: float, most: int, spans: Sequence[TreeSpan]
) -> list[list[Operation]]:
    """Return a member's operations of `nccl_tree`'s schedule as streams that run side by
    side, each in its order: NCCL's tree kernel gives its reduction and its broadcast
    threads of their own (NCCL's runTreeSplit), and each channel its own, so a member's
    pieces go up without waiting for those coming down. Per tree: the reduction (piece by
    piece, the receives from the children, then the send to the parent) and the broadcast
    (the receive from the parent, then the sends to the children); the root's one stream
    receives a piece from its children, then sends it down. A leaf, which receives nothing
    on the way up, sends piece c + w up only once piece c came back down (w: twice its depth
    and two, more than a piece's round trip), as NCCL's connections hold a sender to the
    buffer slots its receiver has freed: without it a leaf would run ahead of its parent by
    all its pieces. A connection's pieces cross one at a time (`simulator.api._Connection`).
    `chunk` and `most` as `program`'s."""
    by_tree: dict[int, list[Message]] = {}
    for message in messages:
        tree = next(t for t, (first, _, length) in enumerate(spans) if message[0] < first + length)
        by_tree.setdefault(tree, []).append(message)
    streams: list[list[Operation]] = []
    for tree, mine in sorted(by_tree.items()):
        first, up_steps = spans[tree][:2]
        up = [m for m in mine if m[0] - first < up_steps]
        down = [m for m in mine if m[0] - first >= up_steps]
        from_above = [m for m in down if m[1] == RECEIVE]
        leaf = not any(m[1] == RECEIVE for m in up)
        if not from_above:  # the root: a piece from its children, then down
            parts = [(up + down, 0)]
        elif leaf:  # NCCL's credits: a piece up once the one `window` before came back down
            depth = from_above[0][0] - first - up_steps + 1
            parts = [(up + down, 2 * depth + 2)]
        else:
            parts = [(up, 0), (down, 0)]
        for part, window in parts:
            # in a piece: receives before sends, each by step; a leaf's receive `window` late
            ops = []
            for step, what, peer, size, reduced in part:
                n = pieces(size, chunk, most)
                late = window if what == RECEIVE else 0
                ops += [
                    (
                        (c + late, what != RECEIVE, step, peer),
                        (what, peer, size / n, reduced, (step, c)),
                    )
                    for c in range(n)
                ]
            ops.sort(key=lambda op: op[0])
            if ops:
                streams.append([op[1] for op in ops])
    return streams


def _ancestor(parents: Sequence[int], ancestor: int, node: int) -> bool:
    """Whether `node` is `ancestor` or below it."""
    while node >= 0:
        if node == ancestor:
            return True
        node = parents[node]
    return False


def _height(parents: Sequence[int], node: int) -> int:
    children = [i for i, q in enumerate(parents) if q == node]
    return 0 if not children else 1 + max(_height(parents, c) for c in children)


# -- a member's program ------------------------------------------------------------------------

SEND, RECEIVE = 0, 1
Operation = tuple[int, int, float, bool, tuple[int, int]]  # what, peer, bytes, reduced, tag


def pieces(size: float, chunk: float, most: int = 0) -> int:
    """Return how many pieces a message of `size` bytes travels as (chunk 0: one), at most
    `most` when given (> 0)."""
    if chunk <= 0 or size <= chunk:
        return 1
    count = math.ceil(size / chunk)
    return min(count, most) if most > 0 else count


Message = tuple[int, int, int, float, bool]  # step, SEND or RECEIVE, peer, bytes, reduced


def messages_by_member(steps: Schedule, members: int) -> list[list[Message]]:
    """Return each member's messages of a schedule: what it sends and receives, step by step."""
    mine: list[list[Message]] = [[] for _ in range(members)]
    for index, step in enumerate(steps):
        for source, target, size, reduced in step:
            mine[source].append((index, SEND, target, size, reduced))
            mine[target].append((index, RECEIVE, source, size, reduced))
    return mine


class MemberMessages(Sequence[list[Message]]):
    """`messages_by_member(steps, members)`, made at the first member's look-up: a call
    simulated by some members only (simulator.symmetry) reads `steps` instead."""

    def __init__(self, steps: Schedule, members: int) -> None:
        self.steps = steps
        self.members = members
        self._made: list[list[Message]] | None = None

    def __len__(self) -> int:
        return self.members

    @overload
    def __getitem__(self, index: int) -> list[Message]: ...
    @overload
    def __getitem__(self, index: slice) -> Sequence[list[Message]]: ...
    def __getitem__(self, index: int | slice) -> list[Message] | Sequence[list[Message]]:
        made = self._made
        if made is None:
            made = self._made = messages_by_member(self.steps, self.members)
        return made[index]


def program(messages: Sequence[Message], chunk: float, most: int = 0) -> Iterator[Operation]:
    """Return a member's operations, an iterator, in the order it makes them: the sends of a step's piece
    (step s, piece c) on diagonal s + c, then that diagonal's receives; a send waits only for
    the receives of earlier diagonals, which is how pieces pipeline. Every receive is of a
    piece its sender sends on the same diagonal, so no member waits for ever. Made as they
    are taken (a heap of the member's messages, each at its next piece), so a call's pieces
    need no memory of their own. `most`: `pieces`'s."""
    counts = {pieces(size, chunk, most) for size in {message[3] for message in messages}}
    if counts == {1}:  # every message whole (unpipelined)
        return _whole_program(messages)
    if len(counts) == 1:  # every message as many pieces, several
        return _uniform_program(messages, chunk, most, counts.pop())
    return _heap_program(messages, chunk, most)


def _whole_program(messages: Sequence[Message]) -> Iterator[Operation]:
    """`program`'s order when every message travels whole: diagonal s holds step s alone,
    so the order is the messages' by step, sends first, then by place in `messages` (the
    heap's order, one sort instead of a heap operation per message)."""
    for step, what, peer, size, reduced in sorted(messages, key=_STEP_WHAT):  # a stable sort
        yield what, peer, size, reduced, (step, 0)


_STEP_WHAT = operator.itemgetter(0, 1)
_WHAT_STEP = operator.itemgetter(1, 0)


def _heap_program(messages: Sequence[Message], chunk: float, most: int) -> Iterator[Operation]:
    """`program`'s order made by a heap of the messages, each at its next piece: the
    reference for `_uniform_program`, and the order for messages of different piece counts."""
    heap = []
    for number, (step, what, peer, size, reduced) in enumerate(messages):
        count = pieces(size, chunk, most)
        heap.append((step, what, step, 0, number, count, peer, size / count, reduced))
    heapq.heapify(heap)
    while heap:
        diagonal, what, step, c, number, count, peer, piece, reduced = heap[0]
        yield what, peer, piece, reduced, (step, c)
        if c + 1 < count:
            heapq.heapreplace(
                heap, (diagonal + 1, what, step, c + 1, number, count, peer, piece, reduced)
            )
        else:
            heapq.heappop(heap)


def _uniform_program(
    messages: Sequence[Message], chunk: float, most: int, count: int
) -> Iterator[Operation]:
    """`program`'s order when every message travels as `count` pieces: diagonal d holds
    piece d - s of each message of step s in d - count < s <= d, its sends first, each kind
    by step then by the message's place in `messages` (the heap's order, without a heap).
    `chunk` and `most` as `program`'s."""
    groups: list[list[tuple[int, int, float, bool]]] = [[], []]
    for step, what, peer, size, reduced in sorted(messages, key=_WHAT_STEP):  # a stable sort
        groups[what].append((step, peer, size / count, reduced))
    if not messages:
        return
    first = min(group[0][0] for group in groups if group)  # each group is in step order
    last = max(group[-1][0] for group in groups if group) + count - 1
    # per kind, the window of messages whose pieces are on the diagonal: from its first
    # message of a step > diagonal - count to after its last of a step <= diagonal
    sends, receives = groups
    send_count, receive_count = len(sends), len(receives)
    send_start = send_end = receive_start = receive_end = 0
    for diagonal in range(first, last + 1):
        oldest = diagonal - count
        while send_end < send_count and sends[send_end][0] <= diagonal:
            send_end += 1
        while send_start < send_end and sends[send_start][0] <= oldest:
            send_start += 1
        for step, peer, piece, reduced in sends[send_start:send_end]:
            yield SEND, peer, piece, reduced, (step, diagonal - step)
        while receive_end < receive_count and receives[receive_end][0] <= diagonal:
            receive_end += 1
        while receive_start < receive_end and receives[receive_start][0] <= oldest:
            receive_start += 1
        for step, peer, piece, reduced in receives[receive_start:receive_end]:
            yield RECEIVE, peer, piece, reduced, (step, diagonal - step)


def wire_figures(steps: Schedule) -> tuple[int, float]:
    """Return the messages (unpipelined) and the bytes a schedule puts on the wire (the
    sizes added one by one in the schedule's order)."""
    sizes = map(_SIZE, itertools.chain.from_iterable(steps))
    return sum(map(len, steps)), sum(sizes)


_SIZE = operator.itemgetter(2)


def bus_bandwidth(kind: str, algbw: float, members: int) -> float:
    """Return nccl-tests' bus bandwidth of `kind` over `members` ranks at `algbw`."""
    return algbw * BUS_FACTORS[kind](members) if members > 1 else algbw
