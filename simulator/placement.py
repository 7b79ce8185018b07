"""Processes to node instances by label, capacity checks and shortest-path routing.

A node with `count` k has instances 0..k-1; a label's capacity on it is multiplicity x count
(000, section 5.4.2). Processes of a label fill the nodes carrying it in snapshot order, and
within a node instance 0 first (multiplicity processes each), then instance 1, and so on.
Messages travel the shortest path of edges between the two nodes (breadth-first search;
edges only join hardware nodes, so groups are never on a path).
"""

from __future__ import annotations

from collections import deque
from collections.abc import Mapping
from typing import NamedTuple

from simulator.errors import LaunchError
from simulator.snapshot import SystemSnapshot

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
                    slots.append(Slot(label, rank, node.id, instance))
                    rank += 1
            if rank == value:
                break
    if not slots:
        raise LaunchError("labels", LAUNCH_MESSAGES["no_processes"])
    return slots


class Routes:
    """Shortest paths of edges between nodes, computed on demand and cached."""

    __slots__ = ("_cache", "_neighbours", "_titles")

    def __init__(self, snapshot: SystemSnapshot) -> None:
        neighbours: dict[str, list[str]] = {node_id: [] for node_id in snapshot.nodes}
        for a, b in snapshot.edges:
            neighbours[a].append(b)
            neighbours[b].append(a)
        self._neighbours = neighbours
        # Messages name nodes by their names; the ids stay in the paths.
        self._titles = {node.id: node.name or node.id for node in snapshot.nodes.values()}
        self._cache: dict[tuple[str, str], tuple[str, ...]] = {}

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
            previous: dict[str, str | None] = {source: None}
            frontier = deque([source])
            while frontier and target not in previous:
                here = frontier.popleft()
                for there in self._neighbours[here]:
                    if there not in previous:
                        previous[there] = here
                        frontier.append(there)
            if target not in previous:
                raise LaunchError(
                    "edges",
                    LAUNCH_MESSAGES["no_route"].format(
                        source=self._titles.get(source, source),
                        target=self._titles.get(target, target),
                    ),
                )
            hops: list[str] = []
            step: str | None = target
            while step is not None:
                hops.append(step)
                step = previous[step]
            result = tuple(reversed(hops))
        self._cache[key] = result
        return result
