"""The flow-level network (simulator.flows) and its place in a run (simulator.platform)."""

from __future__ import annotations

import copy
import json
import textwrap
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from simulator import flows, platform
from simulator.engine import Engine
from simulator.errors import ModelEvaluationError, SnapshotError
from simulator.flows import (
    NETWORK_MODELS,
    Flow,
    FlowLink,
    FlowNetwork,
    network_model,
    solve_max_min,
)
from simulator.runner import run_simulation
from simulator.snapshot import load_snapshot

ROOT = Path(__file__).resolve().parents[2]
TOUR = ROOT / "examples" / "merpsys_gtx970"
LINK_JS = (ROOT / "simulator" / "models" / "js" / "latency_bandwidth_link.js").read_text()
WAIT_JS = "function computationTime(params) { return params.get('seconds'); }"


def _flow(links: list[tuple[FlowLink, float]], weight: float = 1.0, bound: float = 1e300) -> Flow:
    flow = Flow(links, 1.0, weight, bound, lambda now: None)
    for link, a in links:
        link.flows[flow] = a
    return flow


def test_max_min_gives_the_bottleneck_share_and_the_rest_to_the_others() -> None:
    # link A: 10 B/s, link B: 4 B/s (a = 1 / capacity); f1 crosses both, f2 A, f3 B
    a, b = FlowLink("A", 0, "A", "shared"), FlowLink("B", 0, "B", "shared")
    f1 = _flow([(a, 0.1), (b, 0.25)])
    f2 = _flow([(a, 0.1)])
    f3 = _flow([(b, 0.25)])

    solve_max_min([f1, f2, f3], [a, b])

    assert (f1.x, f2.x, f3.x) == pytest.approx((2.0, 8.0, 2.0))


def test_weights_and_bounds_shape_the_shares() -> None:
    link = FlowLink("L", 0, "L", "shared")
    heavy = _flow([(link, 0.1)], weight=3.0)
    light = _flow([(link, 0.1)], weight=1.0)
    bounded = FlowLink("M", 0, "M", "shared")
    capped = _flow([(bounded, 0.1)], bound=1.5)
    free = _flow([(bounded, 0.1)])

    solve_max_min([heavy, light, capped, free], [link, bounded])

    assert (heavy.x, light.x) == pytest.approx((7.5, 2.5))  # 3 : 1 of 10 B/s
    assert (capped.x, free.x) == pytest.approx((1.5, 8.5))  # the bound, and the rest


def test_a_flow_that_starts_re_solves_only_its_component() -> None:
    engine = Engine()
    network = FlowNetwork(engine, NETWORK_MODELS["maxmin"])
    left = network.link("left", 0, "shared", "", "")
    right = network.link("right", 0, "shared", "", "")
    ended: list[float] = []
    network.start([(left, 0.0, 1e-3)], 1000.0, ended.append)  # 1000 B at 1 kB/s
    network.start([(right, 0.0, 1e-3)], 500.0, ended.append)
    engine.run(until=0.1)
    (on_right,) = right.flows
    version = on_right.version

    network.start([(left, 0.0, 1e-3)], 100.0, ended.append)  # shares `left` only
    engine.run()

    assert on_right.version == version  # its rate and end event were left alone
    assert ended == pytest.approx([0.3, 0.5, 1.1])  # 100 B at half of 1 kB/s from 0.1 s


def test_flows_that_start_together_are_solved_once_at_their_shares(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # A collective's pieces start together: one solve of their component, not one each, and
    # no instant in which the first flow alone holds the whole link.
    engine = Engine()
    network = FlowNetwork(engine, NETWORK_MODELS["maxmin"])
    link = network.link("L", 0, "shared", "", "")
    solves: list[float] = []
    solve = FlowNetwork._solve

    def counted(self: FlowNetwork, changed: Flow, now: float) -> list[FlowLink]:
        solves.append(now)
        return solve(self, changed, now)

    monkeypatch.setattr(FlowNetwork, "_solve", counted)
    ended: list[float] = []
    for _ in range(8):
        network.start([(link, 0.0, 1e-3)], 100.0, ended.append)  # 8 x 100 B over 1 kB/s
    engine.run()

    assert ended == pytest.approx([0.8] * 8)
    assert solves == pytest.approx([0.0, 0.8])  # together in, together out
    assert link.peak == pytest.approx(1.0)


def test_an_unknown_network_model_is_named() -> None:
    with pytest.raises(ValueError, match="Unknown network model 'TCP'; expected one of maxmin"):
        network_model("TCP")
    assert network_model("LV08").latency_factor == 13.01


def _two_hosts(sharing: str | None, *, members: int = 1, model: str = "maxmin") -> dict[str, Any]:
    """Host h0 (label R) and host h1 (label P, `members` slots) joined by one link of 1 GB/s
    and 10 us latency."""
    link: dict[str, Any] = {"id": "wire", "hardware": "wire", "model": "link"}
    if sharing is not None:
        link["sharing"] = sharing
    return {
        "name": "two hosts",
        "networkModel": model,
        "hardware": {
            "host": {"type": "CPU", "name": "host", "attributes": {}},
            "wire": {
                "type": "NETWORK",
                "name": "wire",
                "attributes": {"bandwidth": 1e9, "latency": 1e-5},
            },
        },
        "models": {
            "wait": {"language": "javascript", "source": WAIT_JS},
            "link": {"language": "javascript", "source": LINK_JS},
        },
        "nodes": [
            {"id": "h0", "hardware": "host", "model": "wait", "labels": {"R": 1}},
            link,
            {"id": "h1", "hardware": "host", "model": "wait", "labels": {"P": members}},
        ],
        "edges": [["h0", "wire"], ["wire", "h1"]],
    }


def test_a_bad_sharing_or_network_model_is_named_by_its_field() -> None:
    system = _two_hosts("half")
    system["networkModel"] = "Reno"
    with pytest.raises(SnapshotError) as caught:
        load_snapshot(system)
    assert caught.value.errors["nodes[1].sharing"] == [
        "Unknown sharing 'half'; expected one of fifo, shared, full-duplex."
    ]
    assert caught.value.errors["networkModel"][0].startswith("Unknown network model 'Reno'")


def test_sharing_is_a_network_nodes_field() -> None:
    system = _two_hosts("fifo")
    system["nodes"][0]["sharing"] = "shared"
    with pytest.raises(SnapshotError) as caught:
        load_snapshot(system)
    assert caught.value.errors["nodes[0].sharing"] == [
        "Only a NETWORK node carries flows; sharing 'shared' is set on a CPU node."
    ]


def test_the_snapshot_keeps_sharing_and_model_and_fifo_is_the_default() -> None:
    assert load_snapshot(_two_hosts(None)).nodes["wire"].sharing == "fifo"
    loaded = load_snapshot(_two_hosts("shared", model="LV08"))
    again = load_snapshot(loaded.to_dict())
    assert (again.nodes["wire"].sharing, again.network_model) == ("shared", "LV08")
    assert "networkModel" not in load_snapshot(_two_hosts(None)).to_dict()


def _tour(sharing: str | None, model: str = "maxmin") -> float:
    snapshot = json.loads((TOUR / "snapshot.json").read_text("utf-8"))
    if sharing is not None:
        for node in snapshot["nodes"]:
            if node["id"] == "bus0":
                node["sharing"] = sharing
        snapshot["networkModel"] = model
    app = (TOUR / "app.py").read_text("utf-8")
    variables = {"N": 10**7, "blockSz": 256, "computeIntensity": 1, "occupancy": 64}
    result = run_simulation(snapshot, app, labels={"CPU": 1, "GPU": 1}, variables=variables)
    assert ("links" in result) == (sharing is not None)
    return float(result["overall_time_s"])


@pytest.mark.parametrize(("sharing", "model"), [("full-duplex", "maxmin"), ("shared", "CM02")])
def test_a_lone_transfer_on_a_flow_link_is_still_eq_4_6(sharing: str, model: str) -> None:
    """The tour (its PCIe bus, eq. 4.6 per direction) gives its 11.998 ms with the bus as a
    flow link too: one message at a time pays t_s + n / (bw lambda_c)."""
    fifo = _tour(None)
    flow = _tour(sharing, model)
    assert round(fifo * 1e3, 3) == 11.998
    assert flow == pytest.approx(fifo, rel=1e-12)


GATHER = """
for _ in range(2):
    sim.gather(1e6, "R")
sim.broadcast(1e6, "R")
"""


@pytest.mark.parametrize("stackless", [True, False])
@pytest.mark.parametrize("sharing", ["fifo", "full-duplex"])
def test_collectives_cross_flow_links_on_the_c_core_as_in_python(
    sharing: str, stackless: bool
) -> None:
    """Three members gather to the root twice (a member's gather does not wait: its six
    messages leave at once), then the root broadcasts: over a flow link the messages share
    the wire (one latency, then 6 MB at 1 GB/s; the broadcast one latency and 3 MB), over a
    FIFO they queue (a latency each). The C core's sends leave a flow route to Python."""
    app = GATHER if stackless else "import math\n" + GATHER  # an import: no stackless run
    result = run_simulation(
        _two_hosts(sharing, members=3),
        textwrap.dedent(app),
        labels={"R": 1, "P": 3},
        variables={},
    )
    if sharing == "fifo":
        expected = 9 * (1e-5 + 1e6 / 1e9)
    else:
        expected = (1e-5 + 6e6 / 1e9) + (1e-5 + 3e6 / 1e9)
    assert result["overall_time_s"] == pytest.approx(expected, rel=1e-12)


def test_a_route_crosses_fifo_hops_and_flow_links_in_turn() -> None:
    """h0 - slow FIFO wire - router - flow wire - h1: the message crosses the FIFO hop, then
    the flow link, one after the other."""
    system = _two_hosts("full-duplex")
    system["hardware"]["slow"] = {
        "type": "NETWORK",
        "name": "slow",
        "attributes": {"bandwidth": 5e8, "latency": 2e-5},
    }
    system["hardware"]["router"] = {"type": "NETWORK", "name": "router", "attributes": {}}
    system["nodes"] += [
        {"id": "fifo", "hardware": "slow", "model": "link"},
        {"id": "r", "hardware": "router"},
    ]
    system["edges"] = [["h0", "fifo"], ["fifo", "r"], ["r", "wire"], ["wire", "h1"]]
    app = 'if tag.equals("R"):\n    sim.p2pCommunicationSend(1e6, "P")\nelse:\n'
    app += '    sim.p2pCommunicationReceive("R")\n'

    result = run_simulation(system, app, labels={"R": 1, "P": 1}, variables={})

    assert result["overall_time_s"] == pytest.approx((2e-5 + 2e-3) + (1e-5 + 1e-3), rel=1e-12)
    transfers: list[dict[str, Any]] = [
        dict(e) for e in result["timeline"] if e["kind"] == "transfer"
    ]
    assert [e["node"] for e in transfers] == ["fifo", "wire"]
    assert [link["link"] for link in result["links"]] == ["wire[0] r->h1"]


def test_a_link_model_faster_for_more_bytes_than_for_none_is_a_model_error() -> None:
    system = _two_hosts("shared")
    system["models"]["link"]["source"] = "function p2pTime(size, params) { return 1 - size; }"
    app = 'if tag.equals("R"):\n    sim.p2pCommunicationSend(0.5, "P")\nelse:\n'
    app += '    sim.p2pCommunicationReceive("R")\n'
    with pytest.raises(ModelEvaluationError, match="below its p2pTime"):
        run_simulation(copy.deepcopy(system), app, labels={"R": 1, "P": 1}, variables={})


def test_a_links_utilisation_series_is_its_use_in_each_hundredth_of_the_run() -> None:
    """One 1 MB message alone over the 1 GB/s, 10 us wire: the link idles through the latency,
    then is full for 1 ms; the run lasts 1.01 ms, so the first bin (10.1 us) is 0.1 us/10.1 us
    full and the other 99 full."""
    app = 'if tag.equals("R"):\n    sim.p2pCommunicationSend(1e6, "P")\nelse:\n'
    app += '    sim.p2pCommunicationReceive("R")\n'
    result = run_simulation(_two_hosts("full-duplex"), app, labels={"R": 1, "P": 1}, variables={})
    (link,) = result["links"]
    series = link["utilisation_series"]
    assert result["overall_time_s"] == pytest.approx(1.01e-3, rel=1e-12)
    assert len(series) == 100
    assert series[0] == round(0.1 / 10.1, 4)
    assert series[1:] == [1.0] * 99
    assert sum(series) / 100 == pytest.approx(link["mean_utilisation"], abs=1e-4)


def test_a_links_series_merges_steps_past_its_cap_keeping_the_integral() -> None:
    link = FlowLink("wire", 0, "wire[0]", "shared")
    for step in range(1, 3 * flows.SERIES_POINTS):
        link.used = (step % 3) / 2  # 0.5, 1, 0, 0.5, ...
        link.mark(step * 1e-3)
    link.used = 0.0
    end = 3 * flows.SERIES_POINTS * 1e-3
    link.mark(end)
    assert len(link.series_t) <= flows.SERIES_POINTS + 1
    series = link.series(end, bins=10)
    exact = sum((step % 3) / 2 * 1e-3 for step in range(1, 3 * flows.SERIES_POINTS))
    assert sum(series) * end / 10 == pytest.approx(exact, rel=1e-3)
    # the same use everywhere (0.5 on average), whatever was merged
    assert series == [pytest.approx(0.5, abs=2e-3)] * 10


def test_a_link_re_solved_in_one_instant_keeps_one_change_point() -> None:
    link = FlowLink("wire", 0, "wire[0]", "shared")
    for used in (0.5, 1.0, 0.0):  # three solves at t = 1: only the last use stands
        link.used = used
        link.mark(1.0)
    assert (link.series_t, link.series_u) == ([0.0], [0.0])
    link.used = 1.0
    link.mark(2.0)
    assert link.series(4.0, bins=4) == [0.0, 0.0, 1.0, 1.0]


SHARED_ROUTES_APP = """\
for target, size in SENDS.get(rank, []):
    sim.p2pCommunicationSend(size, "r", None, target)
for source in RECEIVES.get(rank, []):
    sim.p2pCommunicationReceive("r", source)
sim.alltoall(ALL, algorithm="pairwise", chunk=CHUNK)
sim.allreduce(ALL, algorithm="ring", chunk=CHUNK)
"""


def _two_switches(hosts: int, split: int, sharings: tuple[str, str, str], model: str) -> Any:
    """`hosts` hosts (label r), the first `split` on switch s0, the others on s1, the two
    switches joined by a trunk; each network node's sharing from `sharings`."""
    system = _two_hosts(None, model=model)
    system["hardware"]["wire"]["attributes"]["latency"] = 0.0
    host = {"hardware": "host", "labels": {"r": 1}}
    names = [f"h{i}" for i in range(hosts)]
    system["nodes"] = [{"id": name, **host} for name in names] + [
        {"id": node, "hardware": "wire", "model": "link", "sharing": sharing}
        for node, sharing in zip(("s0", "s1", "trunk"), sharings, strict=True)
    ]
    system["edges"] = [[name, "s0" if i < split else "s1"] for i, name in enumerate(names)]
    system["edges"] += [["s0", "trunk"], ["trunk", "s1"]]
    return system


@given(
    hosts=st.integers(3, 7),
    split=st.integers(1, 6),
    sharings=st.tuples(*[st.sampled_from(("shared", "full-duplex", "fifo"))] * 3),
    model=st.sampled_from(sorted(NETWORK_MODELS)),
    messages=st.lists(
        st.tuples(st.integers(0, 6), st.integers(0, 6), st.sampled_from((1e3, 2.5e5, 1e6))),
        max_size=14,
    ),
    chunk=st.sampled_from((0, 1e5)),
)
@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
def test_routes_over_the_same_constraints_share_one_route_with_the_same_results(
    hosts: int,
    split: int,
    sharings: tuple[str, str, str],
    model: str,
    messages: list[tuple[int, int, float]],
    chunk: float,
) -> None:
    """Pairs whose routes cross the same flow constraints and FIFO hops get one FlowRoute
    (World._route): the run's result, every completion time in its timeline, is the one
    with a route made for each pair."""
    system = _two_switches(hosts, min(split, hosts - 1), sharings, model)
    sends: dict[int, list[tuple[int, float]]] = {}
    receives: dict[int, list[int]] = {}
    for source, target, size in messages:
        source, target = source % hosts, target % hosts
        if source != target:
            sends.setdefault(source, []).append((target, size))
            receives.setdefault(target, []).append(source)
    app = f"SENDS = {sends!r}\nRECEIVES = {receives!r}\n" + SHARED_ROUTES_APP
    variables = {"ALL": 3e6, "CHUNK": chunk}
    original = platform.World._route
    made: list[object] = []

    def recorded(self: platform.World, crossed: Any) -> Any:
        route = original(self, crossed)
        made.append(route)
        return route

    def unshared(self: platform.World, crossed: Any) -> Any:
        self._flow_routes.clear()  # each pair its own route, as before routes were shared
        return original(self, crossed)

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(platform.World, "_route", recorded)
        shared = run_simulation(system, app, labels={"r": hosts}, variables=variables)
        patch.setattr(platform.World, "_route", unshared)
        alone = run_simulation(system, app, labels={"r": hosts}, variables=variables)
    shared.pop("stats", None)
    alone.pop("stats", None)
    assert shared == alone
    assert shared["overall_time_s"] > 0


def test_an_alltoall_through_one_shared_switch_makes_one_route() -> None:
    """Every pair of an alltoall crosses the one constraint of a shared switch: one route."""
    system = _two_switches(6, 6, ("shared", "shared", "shared"), "CM02")
    system["edges"] = [edge for edge in system["edges"] if "s1" not in edge]
    made: list[object] = []
    original = platform.World._route

    def recorded(self: platform.World, crossed: Any) -> Any:
        made.append(original(self, crossed))
        return made[-1]

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(platform.World, "_route", recorded)
        run_simulation(
            system,
            'sim.alltoall(6e6, algorithm="pairwise", chunk=0)\n',
            labels={"r": 6},
            variables={},
        )
    assert len(made) == 6  # a route made for each source's first pair only (World.hops)
    assert len({id(route) for route in made}) == 1


@given(
    hosts=st.integers(3, 7),
    split=st.integers(1, 6),
    sharings=st.tuples(*[st.sampled_from(("shared", "full-duplex", "fifo"))] * 3),
    model=st.sampled_from(sorted(NETWORK_MODELS)),
    order=st.randoms(use_true_random=False),
)
@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
def test_a_pair_routed_by_its_last_step_gets_its_planned_route(
    hosts: int, split: int, sharings: tuple[str, str, str], model: str, order: Any
) -> None:
    """World.hops gives a pair the route of an earlier pair from the same source instance
    whose path ends with the same step: the very route `_planned_hops` makes or finds for
    the pair itself, whatever order the pairs are asked in, and the same results."""
    system = _two_switches(hosts, min(split, hosts - 1), sharings, model)
    original = platform.World.hops
    checked: list[object] = []

    def compared(self: platform.World, source: Any, target: Any) -> Any:
        route = original(self, source, target)
        planned = self._planned_hops(source, target)
        assert route is planned or (route.__class__ is tuple and route == planned)
        checked.append(route)
        return route

    app = "PEERS = {peers!r}\nfor peer in PEERS[rank]:\n    sim.p2pCommunicationSend(1e5, 'r', None, peer)\n"
    app += "for peer in range(len(PEERS)):\n    if rank in PEERS[peer]:\n"
    app += "        sim.p2pCommunicationReceive('r', peer)\n"
    app += "sim.alltoall(ALL, algorithm='pairwise', chunk=0)\n"
    peers = []
    for rank in range(hosts):
        others = [peer for peer in range(hosts) if peer != rank]
        order.shuffle(others)
        peers.append(others[: order.randint(0, len(others))])
    app = app.replace("{peers!r}", repr(peers))
    variables = {"ALL": 3e6}
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(platform.World, "hops", compared)
        fast = run_simulation(system, app, labels={"r": hosts}, variables=variables)
        patch.setattr(platform.World, "hops", lambda self, s, t: self._planned_hops(s, t))
        planned = run_simulation(system, app, labels={"r": hosts}, variables=variables)
    assert checked
    fast.pop("stats", None)
    planned.pop("stats", None)
    assert fast == planned
