"""Processes to node instances by label, capacity checks and shortest-path routing.

A node with `count` k has instances 0..k-1; a label's capacity on it is multiplicity x count
(000, section 5.4.2). Processes of a label fill the nodes carrying it in snapshot order, and
within a node instance 0 first (multiplicity processes each), then instance 1, and so on.
Messages travel the shortest path of edges between the two nodes (breadth-first search;
edges only join hardware nodes, so groups are never on a path).
"""

from __future__ import annotations

import itertools
from collections import deque
from collections.abc import Mapping
from typing import NamedTuple

from simulator.errors import LaunchError
from simulator.snapshot import SystemSnapshot
from simulator.topology import Topology

LAUNCH_MESSAGES = {
    "count": "the number of processes of label {label!r} must be a whole number >= 0 (got {value!r})",
    "unknown_label": "no node of the system carries label {label!r}; labels in the system: {known}",
    "capacity": "asked for {asked} processes of label {label!r} but its capacity is {capacity} "
    "(multiplicity x count over the nodes carrying it: {where})",
    "no_processes": "no processes to run: give at least one label a count above 0",
    "no_route": "no path of edges joins node {source!r} to node {target!r}",
}


class Slot(NamedTuple):
    """Where one simulated process runs: its label and rank, a node and an instance of it.

    A named tuple rather than a frozen dataclass: a run makes one per process, and a frozen
    dataclass's `__init__` calls `object.__setattr__` once a field."""

    label: str
    rank: int
    node: str
    instance: int

    @property
    def name(self) -> str:
        """Return the process name used in results and messages, e.g. `GPU[0]`."""
        return f"{self.label}[{self.rank}]"


_new_tuple = tuple.__new__


def label_capacities(snapshot: SystemSnapshot) -> dict[str, int]:
    """Return each label's capacity: the sum of multiplicity x count over its nodes."""
    capacities: dict[str, int] = {}
    for node in snapshot.nodes.values():
        for label in node.labels:
            capacities[label] = capacities.get(label, 0) + node.capacity(label)
    return capacities


def place_processes(snapshot: SystemSnapshot, labels: Mapping[str, object]) -> list[Slot]:
    """Return the processes of a launch, placed on instances; raise LaunchError if they don't fit.

    Processes come out label by label in the order of `labels`, ranks 0..n-1 each.
    """
    capacities = label_capacities(snapshot)
    slots: list[Slot] = []
    for label, value in labels.items():
        field = f"labels.{label}"
        if not isinstance(value, int) or isinstance(value, bool) or value < 0:
            raise LaunchError(field, LAUNCH_MESSAGES["count"].format(label=label, value=value))
        if label not in capacities:
            known = ", ".join(sorted(capacities)) or "none"
            raise LaunchError(
                field, LAUNCH_MESSAGES["unknown_label"].format(label=label, known=known)
            )
        if value > capacities[label]:
            where = ", ".join(
                f"{node.name or node.id} {node.labels[label]} x {node.count}"
                for node in snapshot.nodes.values()
                if label in node.labels
            )
            raise LaunchError(
                field,
                LAUNCH_MESSAGES["capacity"].format(
                    asked=value, label=label, capacity=capacities[label], where=where
                ),
            )
        rank = 0
        for node in snapshot.nodes.values():
            multiplicity = node.labels.get(label, 0)
            for instance in range(node.count):
                for _ in range(multiplicity):
                    if rank == value:
                        break
                    # what Slot(label, rank, node.id, instance) makes, without the named
                    # tuple's __new__ (a Python function) between: a call per process
                    slots.append(_new_tuple(Slot, (label, rank, node.id, instance)))
                    rank += 1
            if rank == value:
                break
    if not slots:
        raise LaunchError("labels", LAUNCH_MESSAGES["no_processes"])
    return slots


def instance_across(instance: int, count: int, other: int) -> int:
    """Return the instance of a neighbour node (`other` instances) that instance `instance` of
    a node of `count` instances joins in a system with topology templates: the same index
    when the counts agree, else blocks (child c of n_c joins parent c * n_p // n_c; a parent
    reaches its first child)."""
    if other == count:
        return instance
    if other < count:
        return instance * other // count
    return -(-instance * other // count)


TREE_ENTRIES_KEPT = 1 << 22
SEARCHES_BEFORE_TREE = 4
"""Paths a source gets by a walk that stops at its target (`Routes._search`) before its whole
tree is made (`Routes._tree`): a source that sends to one peer (pairs, a ring's neighbour)
then costs no walk over every node, one that sends to many one walk for all of them."""
"""`Routes._tree`s kept at most (as node entries, a tree holding every node), so memory stays
bounded on a system of very many nodes."""


class Routes:
    """Shortest paths of edges between nodes, computed on demand and cached; with topology
    templates (simulator.topology), routes between instances too (`instance_path`)."""

    __slots__ = (
        "_adjacent",
        "_cache",
        "_counts",
        "_neighbours",
        "_plans",
        "_searches",
        "_titles",
        "_trees",
        "topologies",
    )

    def __init__(self, snapshot: SystemSnapshot) -> None:
        neighbours: dict[str, list[str]] = {node_id: [] for node_id in snapshot.nodes}
        for a, b in snapshot.edges:
            neighbours[a].append(b)
            neighbours[b].append(a)
        self._neighbours = neighbours
        self._adjacent = {node_id: frozenset(near) for node_id, near in neighbours.items()}
        self._searches: dict[str, int] = {}  # per source without a tree: `_search`es made
        # Messages name nodes by their names; the ids stay in the paths.
        self._titles = {node.id: node.name or node.id for node in snapshot.nodes.values()}
        self._cache: dict[tuple[str, str], tuple[str, ...]] = {}
        self._trees: dict[str, dict[str, str | None]] = {}  # per source: `_tree`
        self.topologies = snapshot.topologies
        self._counts = {node.id: node.count for node in snapshot.nodes.values()}
        self._plans: dict[
            tuple[str, str],
            tuple[tuple[str, ...] | None, list[tuple[Topology, tuple[str, ...], tuple[str, ...]]]],
        ] = {}

    def instance_path(
        self, source: str, source_instance: int, target: str, target_instance: int
    ) -> tuple[tuple[str, int], ...] | None:
        """Return the (node id, instance) pairs from one instance to another, both included,
        through a topology template; None when no template joins them (then `path` routes).

        Candidates: the edges' path where the instances mapped from both ends meet (up a
        tree of counts and back down), and for each template the edges from `source` to its
        endpoints node, its route between the two endpoint instances, and the edges on to
        `target` (instances mapped by `instance_across`). The shortest wins, ties to the
        meeting, then to the template listed first. Not kept here: World keeps each pair's
        hops."""
        if not self.topologies:
            return None
        plans = self._plans.get((source, target))
        if plans is None:
            plans = self._plans[source, target] = self._plan(source, target)
        meeting, through = plans
        best: tuple[tuple[str, int], ...] | None = None
        if meeting is not None and len(meeting) == 1:
            if source_instance == target_instance:
                best = ((source, source_instance),)
        elif meeting is not None:
            forward = self._walk(meeting, source_instance)
            backward = self._walk(meeting[::-1], target_instance)[::-1]
            for index in range(len(meeting)):
                if forward[index] == backward[index]:
                    best = forward[:index] + backward[index:]
                    break
        for topology, to_ends, from_ends in through:
            before = self._walk(to_ends, source_instance)
            after = self._walk(from_ends, target_instance)
            middle = topology.route(before[-1][1], after[-1][1])
            if middle is None:
                continue
            if before[-1] == after[-1]:
                middle = ()
                after = after[:-1]
            route = (*before, *middle, *reversed(after))
            if best is None or len(route) < len(best):
                best = route
        return best

    def _plan(
        self, source: str, target: str
    ) -> tuple[tuple[str, ...] | None, list[tuple[Topology, tuple[str, ...], tuple[str, ...]]]]:
        """Return the node paths `instance_path` maps instances along for a pair of nodes:
        the edges' path between them (None: none) and, per template reached from both, the
        paths from the source and from the target to its endpoints node."""
        try:
            meeting: tuple[str, ...] | None = self.path(source, target)
        except LaunchError:
            meeting = None
        through = []
        for topology in self.topologies:
            try:
                to_ends = self.path(source, topology.endpoints)
                from_ends = self.path(target, topology.endpoints)
            except LaunchError:
                continue
            through.append((topology, to_ends, from_ends))
        return meeting, through

    def _walk(self, nodes: tuple[str, ...], instance: int) -> tuple[tuple[str, int], ...]:
        if len(nodes) == 1:
            return ((nodes[0], instance),)
        counts = self._counts
        steps = [(nodes[0], instance)]
        for here, there in itertools.pairwise(nodes):
            instance = instance_across(instance, counts[here], counts[there])
            steps.append((there, instance))
        return tuple(steps)

    def path(self, source: str, target: str) -> tuple[str, ...]:
        """Return the node ids from `source` to `target`, both included (BFS, edge order ties).

        Raise LaunchError when no path joins them.
        """
        key = (source, target)
        cached = self._cache.get(key)
        if cached is not None:
            return cached
        if source == target:
            result: tuple[str, ...] = (source,)
        else:
            previous = self._trees.get(source)
            found: tuple[str, ...] | None = None
            if previous is None:
                searches = self._searches.get(source, 0)
                if searches < SEARCHES_BEFORE_TREE:
                    self._searches[source] = searches + 1
                    found = self._search(source, target)
                else:
                    if len(self._trees) * len(self._neighbours) > TREE_ENTRIES_KEPT:
                        self._trees.clear()  # bounded memory; a tree is made again if needed
                    previous = self._trees[source] = self._tree(source)
            if found is not None:
                result = found
            elif previous is None or target not in previous:
                raise LaunchError(
                    "edges",
                    LAUNCH_MESSAGES["no_route"].format(
                        source=self._titles.get(source, source),
                        target=self._titles.get(target, target),
                    ),
                )
            else:
                hops: list[str] = []
                step: str | None = target
                while step is not None:
                    hops.append(step)
                    step = previous[step]
                result = tuple(reversed(hops))
        self._cache[key] = result
        return result

    def last_step(self, source: str, target: str) -> str:
        """Return the node before `target` on `path(source, target)` (`source` != `target`):
        its source's tree's entry once the tree is made, without the path's tuple; else the
        path's. Raise LaunchError when no path joins them."""
        previous = self._trees.get(source)
        if previous is not None:
            before = previous.get(target)
            if before is not None:
                return before
        return self.path(source, target)[-2]

    def _search(self, source: str, target: str) -> tuple[str, ...] | None:
        """Return `_tree(source)`'s path to `target` (None: none joins them) by its walk
        stopped when it reaches `target`: the walk gives `target` the first node it expands
        that neighbours it, so that node is checked before its neighbours are listed, and
        the path to it is the tree's so far (a star's hosts: two steps, not every host)."""
        previous: dict[str, str | None] = {source: None}
        frontier = deque([source])
        neighbours, adjacent = self._neighbours, self._adjacent
        while frontier:
            here = frontier.popleft()
            if target in adjacent[here]:
                hops = [target]
                step: str | None = here
                while step is not None:
                    hops.append(step)
                    step = previous[step]
                return tuple(reversed(hops))
            for there in neighbours[here]:
                if there not in previous:
                    previous[there] = here
                    frontier.append(there)
        return None

    def _tree(self, source: str) -> dict[str, str | None]:
        """Return each node's predecessor on its path from `source` (None: the source): one
        breadth-first walk for every target, which gives each node the predecessor that a
        walk stopped at that target gives it (nodes are reached in the same order), so a
        star of n hosts costs n walks rather than one per pair."""
        previous: dict[str, str | None] = {source: None}
        frontier = deque([source])
        neighbours = self._neighbours
        while frontier:
            here = frontier.popleft()
            for there in neighbours[here]:
                if there not in previous:
                    previous[there] = here
                    frontier.append(there)
        return previous
