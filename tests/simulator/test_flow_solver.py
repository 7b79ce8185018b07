"""The flow network's re-solves in C (simulator/_speedups_flows.c `flow_solve_from`,
_speedups_flows_uniform.c `flow_solve_uniform`) against their Python references (simulator.flows `solve_from` and
`solve_uniform`): on random components the two leave every flow and link with the same bits
and schedule the same end events in the same order; a flow's start and end events
(`flow_join`, `flow_finish`) leave what `join` and `finish` leave; and whole runs over flow
links give the same results with either."""

from __future__ import annotations

import copy
import json
import math
import struct
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from simulator import flows, hotpath
from simulator.engine import Engine
from simulator.flows import Flow, FlowLink
from simulator.runner import run_simulation
from simulator.snapshot import load_snapshot

ROOT = Path(__file__).resolve().parents[2]
C_SOLVER: Any = getattr(hotpath.speedups, "flow_solve_from", None)
C_UNIFORM: Any = getattr(hotpath.speedups, "flow_solve_uniform", None)
C_JOIN: Any = getattr(hotpath.speedups, "flow_join", None)
C_FINISH: Any = getattr(hotpath.speedups, "flow_finish", None)

needs_c = pytest.mark.skipif(C_SOLVER is None, reason="the C core is not in use")

FLOW_SLOTS = ("x", "rate", "remaining", "updated", "version", "pending", "open")
LINK_SLOTS = (
    "used",
    "byte_rate",
    "since",
    "bytes",
    "used_s",
    "saturated_s",
    "peak",
    "left",
    "usage",
    "series_t",
    "series_u",
)


def _bits(value: object) -> object:
    """`value` with each float as its bits (NaN equals NaN, -0.0 differs from 0.0)."""
    if isinstance(value, float):
        return ("float", struct.pack("<d", value))
    if isinstance(value, list):
        return [_bits(item) for item in value]
    return (type(value).__name__, value)


def _state(network: tuple[list[Flow], list[FlowLink]]) -> list[object]:
    flow_list, links = network
    return [[_bits(getattr(flow, slot)) for slot in FLOW_SLOTS] for flow in flow_list] + [
        [_bits(getattr(link, slot)) for slot in LINK_SLOTS] for link in links
    ]


def _solve(
    solver: Any, network: tuple[list[Flow], list[FlowLink]], changed: int, now: float
) -> tuple[list[object], list[tuple[object, int, int]], list[int]]:
    """Run `solver` from flow `changed`; return the state after it, the end events it
    scheduled (delay bits, flow index, version) and the indices of the links it returned."""
    flow_list, links = network
    events: list[tuple[object, int, int]] = []

    def schedule(delay: float, finish: object, arg: tuple[Flow, int]) -> None:
        assert finish is _finish
        events.append((_bits(delay), flow_list.index(arg[0]), arg[1]))

    returned = solver(flow_list[changed], now, 0.97, schedule, _finish)
    return _state(network), events, [links.index(link) for link in returned]


def _finish(arg: tuple[Flow, int]) -> None:
    raise AssertionError("the solvers only schedule ends")


AS = st.one_of(
    st.sampled_from([0.0, 1e-9, 2.5e-10, 1.0, math.inf]),
    st.floats(min_value=1e-12, max_value=10.0),
)
FLOATS = st.floats(min_value=0.0, max_value=1e3, allow_nan=False, allow_infinity=False)


@st.composite
def networks(draw: st.DrawFn) -> tuple[tuple[list[Flow], list[FlowLink]], int, float]:
    """A random set of links and flows over them, each with a history (rates, pending ends,
    series near their cap), a flow to re-solve from and the time."""
    link_count = draw(st.integers(1, 7))
    links = [FlowLink("n", i, f"n[{i}]", "shared") for i in range(link_count)]
    now = draw(st.sampled_from([0.0, 1.0, 2.5, 1e-6, 123.456]))
    for link in links:
        link.since = draw(st.sampled_from([0.0, now, now / 3]))
        link.used = draw(st.sampled_from([0.0, 0.5, 1.0, 1.0 - 1e-10, 0.3]))
        link.byte_rate = draw(FLOATS)
        link.peak = draw(st.sampled_from([0.0, 0.7, 2.0]))
        if draw(st.booleans()):  # a series at its cap: the next change point merges
            link.series_t = [i * 1e-3 for i in range(flows.SERIES_POINTS)] + [link.since]
            link.series_u = [float(i % 3) / 3 for i in range(flows.SERIES_POINTS + 1)]
        else:
            link.series_t = [0.0, link.since] if link.since > 0.0 else [0.0]
            link.series_u = [0.25, link.used] if link.since > 0.0 else [link.used]
    flow_list = []
    for _ in range(draw(st.integers(1, 9))):
        hops = draw(st.lists(st.integers(0, link_count - 1), min_size=1, max_size=4))
        crossing = [(links[i], draw(AS)) for i in hops]
        weight = draw(st.one_of(st.just(1.0), st.floats(1e-3, 1e3)))
        bound = draw(st.sampled_from([math.inf, math.inf, 0.25, 1.0, 1e6]))
        size = draw(st.one_of(st.sampled_from([1.0, 0.0, 7]), st.floats(1e-3, 1e10)))
        flow = Flow(crossing, size, weight, bound, lambda now: None)
        flow.rate = draw(st.one_of(st.sampled_from([0.0, 0.97]), st.floats(1e-3, 1e9)))
        flow.updated = draw(st.sampled_from([0.0, now, now / 3, now * 0.7]))
        flow.pending = draw(st.booleans())
        flow.version = draw(st.integers(0, 5))
        for link, a in crossing:
            link.flows[flow] = a
        if len(crossing) > 1:
            for link, _ in crossing:
                link.multi += 1
        flow_list.append(flow)
    changed = draw(st.integers(0, len(flow_list) - 1))
    return (flow_list, links), changed, now


@needs_c
@settings(max_examples=300, deadline=None)
@given(networks())
def test_the_c_solver_leaves_the_same_bits_and_events_as_the_python_reference(
    drawn: tuple[tuple[list[Flow], list[FlowLink]], int, float],
) -> None:
    network, changed, now = drawn
    python_side = copy.deepcopy(network)
    c_side = copy.deepcopy(network)

    expected = _solve(flows.solve_from, python_side, changed, now)
    got = _solve(C_SOLVER, c_side, changed, now)

    assert got == expected


@needs_c
def test_the_c_solver_walks_the_whole_component_and_only_it() -> None:
    a, b, c, far = (FlowLink("n", i, f"n[{i}]", "full-duplex") for i in range(4))
    chained = []
    for hops in ([(a, 0.1), (b, 0.2)], [(b, 0.2), (c, 0.3)], [(c, 0.3)], [(far, 1.0)]):
        flow = Flow(hops, 10.0, 1.0, math.inf, lambda now: None)
        for link, cost in hops:
            link.flows[flow] = cost
            link.multi += len(hops) > 1
        chained.append(flow)
    network = ([*chained], [a, b, c, far])

    _, events, returned = _solve(C_SOLVER, network, 2, 0.0)

    assert returned == [2, 1, 0]  # the walk's order: the changed flow's link first
    assert sorted(index for _, index, _ in events) == [0, 1, 2]
    assert chained[3].version == 0 and far.used == 0.0  # another component: untouched
    assert (chained[0].x, chained[1].x, chained[2].x) == pytest.approx((10 / 3, 5 / 3, 5 / 3))


@needs_c
def test_the_c_solver_refuses_a_flow_outside_its_component() -> None:
    a, b = FlowLink("n", 0, "a", "shared"), FlowLink("n", 1, "b", "shared")
    inside = Flow([(a, 1.0)], 1.0, 1.0, math.inf, lambda now: None)
    a.flows[inside] = 1.0
    # a flow held by `a` that says it crosses only `b`: not a component the walk can make
    stray = Flow([(b, 1.0)], 1.0, 1.0, math.inf, lambda now: None)
    a.flows[stray] = 1.0

    with pytest.raises(ValueError, match="outside its component"):
        C_SOLVER(inside, 0.0, 1.0, lambda *args: None, _finish)


@st.composite
def uniform_networks(
    draw: st.DrawFn,
) -> tuple[tuple[list[Flow], list[FlowLink]], int, float, float]:
    """Flows over one route (mostly a uniform component: a ring step's pieces), some drawn
    to break it (a link crossed twice, a flow with another weight, bound or route, a link
    holding another flow), each with a history, a flow to re-solve from, the time and the
    bandwidth factor; or a route whose flows all left (the changed flow gone from it)."""
    (flow_list, links), _, now = draw(networks())
    for flow in flow_list:  # the drawn flows leave; their links keep their histories
        for link in links:
            link.flows.pop(flow, None)
            link.multi = 0
    while len(links) < 2:
        links.append(FlowLink("n", len(links), f"n[{len(links)}]", "full-duplex"))
    if draw(st.integers(0, 9)) == 0:  # a link crossed twice, perhaps
        route_links = draw(st.lists(st.sampled_from(links), min_size=2, max_size=4))
    else:
        route_links = draw(st.permutations(links))[: draw(st.integers(2, 4))]
    hops = tuple((link, draw(AS)) for link in route_links)
    weight = draw(st.one_of(st.just(1.0), st.floats(1e-3, 1e3)))
    bound = draw(st.sampled_from([math.inf, math.inf, 0.25, 1e6]))
    count = draw(st.integers(0, 6))
    route = []
    for index in range(max(count, 1)):
        odd = draw(st.sampled_from([None] * 40 + ["weight", "bound", "route", "equal"]))
        crossing: Any = hops
        if odd == "route":
            crossing = hops[::-1]
        elif odd == "equal":  # an equal tuple, not the same one
            crossing = tuple(list(hops))
        flow = Flow(
            crossing,
            draw(st.one_of(st.sampled_from([1.0, 7.0]), st.floats(1e-3, 1e10))),
            weight * 2 if odd == "weight" else weight,
            1.0 if odd == "bound" else bound,
            lambda now: None,
        )
        flow.links = crossing  # the route's tuple itself, as a flow path's flows share it
        flow.rate = draw(st.sampled_from([0.0, 0.97, 1e9 / (index + 1)]))
        flow.updated = draw(st.sampled_from([0.0, now, now / 3]))
        flow.pending = draw(st.booleans())
        flow.version = draw(st.integers(0, 5))
        if index < count:
            for link, a in crossing:
                link.flows[flow] = a
                link.multi += 1
        route.append(flow)
    if draw(st.integers(0, 9)) == 0:  # another flow on the route's first link only
        other = Flow([(route_links[0], 1.0)], 5.0, weight, bound, lambda now: None)
        route_links[0].flows[other] = 1.0
    factor = draw(st.sampled_from([1.0, 0.97]))
    return (route, links), 0, now, factor


def _solve_uniform(
    solver: Any, network: tuple[list[Flow], list[FlowLink]], changed: int, now: float, factor: float
) -> tuple[list[object], list[tuple[object, int, int]], list[int] | None, object]:
    """Run the uniform `solver` from flow `changed` with a network's memo of states (empty or
    holding this route's: `state_of` fills it); return the state after it, the end events,
    the returned links' indices (None: the general course) and the memo's states' keys."""
    flow_list, links = network
    events: list[tuple[object, int, int]] = []
    network_ = flows.FlowNetwork(None, flows.NetworkModel("test", bandwidth_factor=factor))

    def schedule(delay: float, finish: object, arg: tuple[Flow, int]) -> None:
        assert finish is _finish
        events.append((_bits(delay), flow_list.index(arg[0]), arg[1]))

    returned = solver(
        flow_list[changed],
        now,
        network_._uniform_states,
        network_._uniform_state,
        schedule,
        _finish,
    )
    kept = [(key[1:], state[1:3]) for key, state in network_._uniform_states.items()]
    indices = None if returned is None else [links.index(link) for link in returned]
    return _state(network), events, indices, _bits(kept)


@needs_c
@settings(max_examples=400, deadline=None)
@given(uniform_networks())
def test_the_c_uniform_solver_leaves_the_same_bits_and_events_as_the_python_reference(
    drawn: tuple[tuple[list[Flow], list[FlowLink]], int, float, float],
) -> None:
    network, changed, now, factor = drawn
    python_side = copy.deepcopy(network)
    c_side = copy.deepcopy(network)

    expected = _solve_uniform(flows.solve_uniform, python_side, changed, now, factor)
    got = _solve_uniform(C_UNIFORM, c_side, changed, now, factor)

    assert got == expected


def test_the_uniform_solver_solves_a_uniform_component_and_declines_others() -> None:
    a, b, c = (FlowLink("n", i, f"n[{i}]", "full-duplex") for i in range(3))
    hops = ((a, 0.5), (b, 0.25))
    pieces = [Flow(hops, 10.0, 1.0, math.inf, lambda now: None) for _ in range(2)]
    for flow in pieces:
        flow.links = hops
        for link, cost in hops:
            link.flows[flow] = cost
            link.multi += 1
    solvers = [flows.solve_uniform] + ([C_UNIFORM] if C_UNIFORM is not None else [])
    for solver in solvers:
        network, changed, now = copy.deepcopy(((pieces, [a, b, c]), 0, 0.0))
        _, events, returned, _ = _solve_uniform(solver, network, changed, now, 1.0)
        assert returned == [1, 0]  # the links from the last to the first
        assert [index for _, index, _ in events] == [0, 1]
        # each piece gets half of the first link (a = 0.5 per byte): 1 byte/s
        assert [flow.x for flow in network[0]] == [1.0, 1.0]
        assert network[1][0].used == 1.0 and network[1][1].used == 0.5
    stray = Flow(((c, 1.0),), 1.0, 1.0, math.inf, lambda now: None)
    b.flows[stray] = 1.0  # another flow on one of the route's links: not uniform
    for solver in solvers:
        assert _solve_uniform(solver, ([*pieces, stray], [a, b, c]), 0, 0.0, 1.0)[2] is None
    assert pieces[0].version == 0  # nothing changed


def _flow_event(
    on_event: Any, case: str, changed_before: int
) -> tuple[list[object], list[list[tuple[int, float]]], list[int], list[float], int]:
    """Run `on_event` (a join or a finish) on a fresh network of `case` with `changed_before`
    flows already changed this instant; return the flows' and links' state, each link's flows
    and multi, the changed flows (indices), the `done` calls and the re-solves it scheduled."""
    engine = Engine()
    a, b = FlowLink("n", 0, "a", "full-duplex"), FlowLink("n", 1, "b", "full-duplex")
    done: list[float] = []
    hops = {"two links": [(a, 0.5), (b, 0.25)], "one link": [(a, 0.5)], "no link": []}[
        case.split(", ")[0]
    ]
    flow = Flow(hops, 0.0 if "nothing" in case else 10.0, 1.0, math.inf, done.append)
    other = Flow([(a, 1.0), (b, 1.0)], 5.0, 1.0, math.inf, done.append)
    for link, cost in other.links:
        link.flows[other] = cost
        link.multi += 1
    if "leaving" in case:
        for link, cost in flow.links:
            link.flows[flow] = cost
            link.multi += len(flow.links) > 1
        flow.version = 3
    changed = [other] * changed_before
    solves: list[object] = []
    engine.schedule(0.25, lambda _: None)  # the clock at 0.25 when the event runs
    engine.run()
    arg: object = flow
    if "leaving" in case:
        arg = (flow, 2 if "stale" in case else 3)
    on_event(engine, changed, solves.append, arg)
    engine.run()
    network = ([flow, other], [a, b])
    held = [[([flow, other].index(f), cost) for f, cost in link.flows.items()] for link in (a, b)]
    return (
        _state(network) + [link.multi for link in (a, b)],
        held,
        [[flow, other].index(f) for f in changed],
        done,
        len(solves),
    )


FLOW_EVENT_CASES = [
    "two links",
    "one link",
    "no link",
    "two links, nothing to move",
    "two links, leaving",
    "one link, leaving",
    "two links, leaving, stale",
]


@pytest.mark.skipif(C_JOIN is None, reason="the C core is not in use")
@pytest.mark.parametrize("case", FLOW_EVENT_CASES)
@pytest.mark.parametrize("changed_before", [0, 1])
def test_the_c_flow_events_leave_what_the_python_references_leave(
    case: str, changed_before: int
) -> None:
    python_event = flows.finish if "leaving" in case else flows.join
    c_event = C_FINISH if "leaving" in case else C_JOIN

    expected = _flow_event(python_event, case, changed_before)
    got = _flow_event(c_event, case, changed_before)

    assert got == expected
    _, held, changed, done, solves = got
    if "stale" in case:  # a later end event stands for it: nothing happens
        assert (changed, done, solves) == ([1] * changed_before, [], 0)
    elif "nothing" in case or "no link" in case:  # done at once, nothing to re-solve
        assert (changed, done, solves) == ([1] * changed_before, [0.25], 0)
    else:  # changed, and a re-solve scheduled by the instant's first change only
        assert changed == [1] * changed_before + [0]
        assert solves == (changed_before == 0)
        assert done == ([0.25] if "leaving" in case else [])
        assert [index for index, _ in held[0]] == ([1] if "leaving" in case else [1, 0])


def _run_cluster(solver: Any, monkeypatch: pytest.MonkeyPatch, app: str) -> dict[str, Any]:
    monkeypatch.setattr(flows, "_solve_from", solver)
    monkeypatch.setattr(
        flows, "_solve_uniform", flows.solve_uniform if solver is flows.solve_from else C_UNIFORM
    )
    if solver is flows.solve_from:  # the Python references of the flow events too
        monkeypatch.setattr(flows, "_flow_events", lambda engine: (flows.join, flows.finish))
    system = load_snapshot(
        json.loads((ROOT / "examples" / "dgx_h100_cluster_4" / "snapshot.json").read_text())
    )
    result = run_simulation(system, app, labels={"GPU": 16}, variables={})
    result.pop("stats", None)
    return json.loads(json.dumps(result))


@needs_c
@pytest.mark.parametrize(
    "app",
    [
        "sim.allreduce(4e8, algorithm='ring')\n",
        "sim.allreduce(4e8, algorithm='tree')\n",
        "sim.alltoall(1e6, algorithm='pairwise')\n",
    ],
)
def test_a_run_over_flow_links_gives_the_same_result_with_either_solver(
    app: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    with monkeypatch.context() as patch:
        expected = _run_cluster(flows.solve_from, patch, app)
    got = _run_cluster(C_SOLVER, monkeypatch, app)

    assert got == expected
    assert got["overall_time_s"] > 0.0
