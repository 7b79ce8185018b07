"""Placing processes on node instances by label, capacity errors and shortest-path routes."""

from __future__ import annotations

import itertools
import random
from collections import deque
from typing import Any

import pytest

from simulator.errors import LaunchError
from simulator.placement import Routes, Slot, label_capacities, place_processes
from simulator.snapshot import load_snapshot


def _system(nodes: list[dict[str, Any]], edges: list[list[str]]) -> Any:
    return load_snapshot(
        {
            "name": "test",
            "hardware": {
                "cpu": {"type": "CPU", "name": "CPU", "attributes": {}},
                "net": {"type": "NETWORK", "name": "Switch", "attributes": {}},
            },
            "nodes": nodes,
            "edges": edges,
        }
    )


@pytest.fixture
def cluster() -> Any:
    return _system(
        [
            {"id": "rack", "group": True},
            {"id": "big", "hardware": "cpu", "count": 2, "labels": {"W": 2}, "parent": "rack"},
            {"id": "small", "hardware": "cpu", "count": 1, "labels": {"W": 1, "M": 1}},
            {"id": "sw", "hardware": "net"},
            {"id": "sw2", "hardware": "net"},
            {"id": "far", "hardware": "cpu", "labels": {"F": 1}},
        ],
        [["big", "sw"], ["small", "sw"], ["sw", "sw2"], ["sw2", "far"]],
    )


def test_capacity_is_multiplicity_times_count_summed_over_nodes(cluster: Any) -> None:
    assert label_capacities(cluster) == {"W": 5, "M": 1, "F": 1}


def test_it_fills_instances_in_order(cluster: Any) -> None:
    slots = place_processes(cluster, {"W": 5, "M": 1})
    assert slots == [
        Slot("W", 0, "big", 0),
        Slot("W", 1, "big", 0),
        Slot("W", 2, "big", 1),
        Slot("W", 3, "big", 1),
        Slot("W", 4, "small", 0),
        Slot("M", 0, "small", 0),
    ]
    assert slots[0].name == "W[0]"
    # Slots, not tuples that equal them (placement makes them by tuple.__new__)
    assert all(type(slot) is Slot for slot in slots)
    assert slots[4].node == "small" and slots[4].instance == 0


def test_it_rejects_more_processes_than_label_capacity(cluster: Any) -> None:
    with pytest.raises(LaunchError) as caught:
        place_processes(cluster, {"W": 6})
    assert caught.value.field == "labels.W"
    assert str(caught.value) == (
        "labels.W: asked for 6 processes of label 'W' but its capacity is 5 "
        "(multiplicity x count over the nodes carrying it: big 2 x 2, small 1 x 1)"
    )


def test_it_rejects_a_label_no_node_carries(cluster: Any) -> None:
    with pytest.raises(LaunchError) as caught:
        place_processes(cluster, {"GPU": 1})
    assert str(caught.value) == (
        "labels.GPU: no node of the system carries label 'GPU'; labels in the system: F, M, W"
    )


@pytest.mark.parametrize("count", [-1, 1.5, "2", True])
def test_it_rejects_counts_that_are_not_whole_numbers(cluster: Any, count: object) -> None:
    with pytest.raises(LaunchError, match=r"^labels\.W: the number of processes"):
        place_processes(cluster, {"W": count})


def test_it_rejects_a_launch_without_processes(cluster: Any) -> None:
    with pytest.raises(LaunchError, match="no processes to run"):
        place_processes(cluster, {"W": 0})


def test_routes_follow_the_shortest_path_of_edges(cluster: Any) -> None:
    routes = Routes(cluster)
    assert routes.path("big", "far") == ("big", "sw", "sw2", "far")
    assert routes.path("far", "small") == ("far", "sw2", "sw", "small")
    assert routes.path("big", "big") == ("big",)


def test_routes_prefer_fewer_hops_over_edge_order() -> None:
    system = _system(
        [
            {"id": "a", "hardware": "cpu", "labels": {"P": 1}},
            {"id": "s1", "hardware": "net"},
            {"id": "s2", "hardware": "net"},
            {"id": "b", "hardware": "cpu", "labels": {"P": 1}},
        ],
        [["a", "s1"], ["s1", "s2"], ["s2", "b"], ["a", "b"]],
    )
    assert Routes(system).path("a", "b") == ("a", "b")


def _stopping_walk(edges: list[list[str]], source: str, target: str) -> tuple[str, ...] | None:
    """The walk as `Routes.path` made it per pair before its trees: stopped at `target`."""
    neighbours: dict[str, list[str]] = {}
    for a, b in edges:
        neighbours.setdefault(a, []).append(b)
        neighbours.setdefault(b, []).append(a)
    previous: dict[str, str | None] = {source: None}
    frontier = deque([source])
    while frontier and target not in previous:
        here = frontier.popleft()
        for there in neighbours.get(here, []):
            if there not in previous:
                previous[there] = here
                frontier.append(there)
    if target not in previous:
        return None
    hops: list[str] = []
    step: str | None = target
    while step is not None:
        hops.append(step)
        step = previous[step]
    return tuple(reversed(hops))


def test_routes_from_one_walk_per_source_are_the_walks_stopped_at_each_target() -> None:
    rng = random.Random(3)
    for _ in range(30):
        names = [f"n{i}" for i in range(rng.randint(2, 14))]
        edges = [list(pair) for pair in itertools.combinations(names, 2) if rng.random() < 0.25]
        rng.shuffle(edges)
        nodes = [{"id": name, "hardware": "cpu", "labels": {"P": 1}} for name in names]
        routes = Routes(_system(nodes, edges))
        for source in names:
            for target in names:
                expected = _stopping_walk(edges, source, target) if source != target else None
                if source == target:
                    assert routes.path(source, target) == (source,)
                elif expected is None:
                    with pytest.raises(LaunchError):
                        routes.path(source, target)
                else:
                    assert routes.path(source, target) == expected


def test_a_source_with_few_targets_is_searched_without_its_tree() -> None:
    """A source's first paths come from walks stopped at each target (no walk over every
    node), later ones from its tree: both the reference walk's, in any order of asking,
    unreachable targets included."""
    rng = random.Random(11)
    for _ in range(40):
        names = [f"n{i}" for i in range(rng.randint(2, 16))]
        edges = [list(pair) for pair in itertools.combinations(names, 2) if rng.random() < 0.2]
        rng.shuffle(edges)
        nodes = [{"id": name, "hardware": "cpu", "labels": {"P": 1}} for name in names]
        routes = Routes(_system(nodes, edges))
        asked = [(rng.choice(names), rng.choice(names)) for _ in range(3 * len(names))]
        for source, target in asked:
            expected = _stopping_walk(edges, source, target) if source != target else (source,)
            if expected is None:
                with pytest.raises(LaunchError):
                    routes.path(source, target)
            else:
                assert routes.path(source, target) == expected
    hosts = [f"h{i}" for i in range(200)]
    star = [[host, "switch"] for host in hosts]
    nodes = [{"id": host, "hardware": "cpu", "labels": {"P": 1}} for host in hosts]
    routes = Routes(_system([*nodes, {"id": "switch", "hardware": "net"}], star))
    for i, host in enumerate(hosts):  # pairs and a ring: one peer per source
        assert routes.path(host, hosts[i ^ 1]) == (host, "switch", hosts[i ^ 1])
        assert routes.path(host, hosts[i - 1]) == (host, "switch", hosts[i - 1])
    assert not routes._trees  # no source walked the whole star


def test_a_last_step_is_the_node_before_the_target_on_its_path() -> None:
    """`Routes.last_step` answers from the source's tree once made, else by the path: the
    reference walk's node before the target, in any order of asking, with path's error."""
    rng = random.Random(17)
    for _ in range(40):
        names = [f"n{i}" for i in range(rng.randint(2, 16))]
        edges = [list(pair) for pair in itertools.combinations(names, 2) if rng.random() < 0.2]
        rng.shuffle(edges)
        nodes = [{"id": name, "hardware": "cpu", "labels": {"P": 1}} for name in names]
        routes = Routes(_system(nodes, edges))
        pairs = [(a, b) for a in names for b in names if a != b]
        for source, target in rng.sample(pairs, min(len(pairs), 4 * len(names))):
            expected = _stopping_walk(edges, source, target)
            if expected is None:
                with pytest.raises(LaunchError):
                    routes.last_step(source, target)
            else:
                assert routes.last_step(source, target) == expected[-2]


def test_it_reports_nodes_no_path_joins(cluster: Any) -> None:
    system = _system(
        [
            {"id": "a", "hardware": "cpu", "labels": {"P": 1}},
            {"id": "b", "hardware": "cpu", "labels": {"P": 1}},
        ],
        [],
    )
    with pytest.raises(LaunchError) as caught:
        Routes(system).path("a", "b")
    assert str(caught.value) == "edges: no path of edges joins node 'a' to node 'b'"


def test_it_names_the_nodes_no_path_joins_by_their_names(cluster: Any) -> None:
    system = _system(
        [
            {"id": "cpu3", "name": "Head node", "hardware": "cpu", "labels": {"P": 1}},
            {"id": "cpu4", "name": "Worker", "hardware": "cpu", "labels": {"P": 1}},
        ],
        [],
    )
    with pytest.raises(LaunchError) as caught:
        Routes(system).path("cpu3", "cpu4")
    assert str(caught.value) == "edges: no path of edges joins node 'Head node' to node 'Worker'"
