"""Topology templates (simulator.topology): expansion, routing, refused parameters, and the
ready system models of examples/ (issue 40, item 3)."""

from __future__ import annotations

import io
import itertools
import json
import time
from pathlib import Path
from typing import Any

import pytest

from examples.topologies import build
from simulator.cli import main
from simulator.errors import SnapshotError
from simulator.placement import Routes
from simulator.runner import run_simulation
from simulator.snapshot import load_snapshot
from simulator.topology import (
    Topology,
    expanded_size,
    flow_hash,
    instance_edges,
    parse_topologies,
    port_switches,
)

ROOT = Path(__file__).resolve().parents[2]


def one(template: dict[str, Any], counts: dict[str, int]) -> Topology:
    topologies, errors = parse_topologies([template], counts)
    assert errors == {}
    return topologies[0]


def adjacency(topology: Topology) -> dict[tuple[str, int], set[tuple[str, int]]]:
    links: dict[tuple[str, int], set[tuple[str, int]]] = {}
    for a, b in instance_edges(topology):
        links.setdefault(a, set()).add(b)
        links.setdefault(b, set()).add(a)
    return links


def follows_links(topology: Topology, links: dict[Any, set[Any]], s: int, d: int) -> bool:
    middle = topology.route(s, d)
    assert middle is not None
    path = ((topology.endpoints, s), *middle, (topology.endpoints, d))
    return all(b in links[a] for a, b in itertools.pairwise(path))


FAT_1024 = {
    "kind": "fatTree",
    "endpoints": "nic",
    "switches": ["leaf", "spine"],
    "down": [32, 32],
    "up": [1, 32],
    "routing": "dmodk",
}


def test_a_1024_endpoint_fat_tree_expands_and_routes_every_pair_along_its_links() -> None:
    fat = one(FAT_1024, {"nic": 1024, "leaf": 32, "spine": 32})
    assert fat.sizes == {"leaf": 32, "spine": 32}
    links = adjacency(fat)
    assert expanded_size([fat]) == {"endpoints": 1024, "instances": 64, "links": 1024 + 32 * 32}
    started = time.perf_counter()
    routes = {(s, d): fat.route(s, d) for s in range(1024) for d in range(1024)}
    elapsed = time.perf_counter() - started
    # a bound far above what it takes, so that a loaded machine passes: the routes come from
    # arithmetic, never from searching the expanded graph
    assert elapsed < 60
    assert len(routes) == 1024 * 1024
    lengths = {len(route) for route in routes.values() if route}
    assert lengths == {1, 3}  # the leaf alone, or leaf-spine-leaf
    for s in (0, 31, 32, 517, 1023):
        assert all(follows_links(fat, links, s, d) for d in range(1024) if d != s)
    # D-mod-k: the spine is the destination mod 32, whatever the source
    assert routes[0, 33] == (("leaf", 0), ("spine", 1), ("leaf", 1))
    assert routes[5, 1000] == (("leaf", 0), ("spine", 1000 % 32), ("leaf", 31))
    assert (routes[900, 1000] or ())[1] == ("spine", 1000 % 32)


def test_a_three_level_fat_tree_routes_up_to_the_nearest_common_level() -> None:
    counts = {"e": 64, "l1": 16, "l2": 16, "l3": 16}
    template = {
        "kind": "fatTree",
        "endpoints": "e",
        "switches": ["l1", "l2", "l3"],
        "down": [4, 4, 4],
        "up": [1, 4, 4],
    }
    fat = one(template, counts)
    links = adjacency(fat)
    assert all(follows_links(fat, links, s, d) for s in range(64) for d in range(64) if s != d)
    assert len(fat.route(0, 1) or ()) == 1
    assert len(fat.route(0, 5) or ()) == 3
    assert len(fat.route(0, 63) or ()) == 5


def test_ecmp_is_a_deterministic_hash_that_spreads_flows_over_the_spines() -> None:
    fat = one({**FAT_1024, "routing": "ecmp"}, {"nic": 1024, "leaf": 32, "spine": 32})
    assert fat.route(3, 700) == fat.route(3, 700)
    spines = {fat.route(s, 700)[1][1] for s in range(32)}  # type: ignore[index]
    assert len(spines) > 8  # D-mod-k would put all 32 on spine 700 mod 32
    links = adjacency(fat)
    assert all(follows_links(fat, links, s, 700) for s in range(0, 1024, 7) if s != 700)


def test_flow_hash_is_the_same_in_every_process() -> None:
    # splitmix64's finaliser over fixed integers: these values, pinned, hold in every run and
    # process (hash() of a string would change with PYTHONHASHSEED)
    assert flow_hash(3, 700, 1) == 0x5DC00C3FF5E3A1E4
    assert [flow_hash(s, 1, 1) % 4 for s in range(8)] == [2, 2, 1, 1, 3, 0, 2, 1]
    assert len({flow_hash(s, 9, 1) for s in range(1000)}) == 1000


def test_rail_optimised_leaf_spine() -> None:
    counts = {"nic": 32, "leaf": 8, "spine": 4}
    rail = one(
        {
            "kind": "railLeafSpine",
            "endpoints": "nic",
            "leaf": "leaf",
            "spine": "spine",
            "rails": 8,
            "spines": 4,
        },
        counts,
    )
    links = adjacency(rail)
    assert rail.route(0, 8) == (("leaf", 0),)  # rail 0 of servers 0 and 1
    assert rail.route(0, 9) == (("leaf", 0), ("spine", 9 % 4), ("leaf", 1))
    assert all(follows_links(rail, links, s, d) for s in range(32) for d in range(32) if s != d)


def test_ring_goes_the_shorter_way_or_forwards_only() -> None:
    ring = one({"kind": "ring", "endpoints": "g", "link": "l"}, {"g": 8, "l": 8})
    assert ring.route(0, 2) == (("l", 0), ("g", 1), ("l", 1))
    assert ring.route(0, 7) == (("l", 7),)
    forward = one(
        {"kind": "ring", "endpoints": "g", "link": "l", "routing": "forward"}, {"g": 8, "l": 8}
    )
    assert len(forward.route(0, 7) or ()) == 13
    links = adjacency(ring)
    assert all(follows_links(ring, links, s, d) for s in range(8) for d in range(8) if s != d)


def test_torus_routes_dimension_by_dimension() -> None:
    torus = one(
        {"kind": "torus", "endpoints": "g", "link": "l", "dims": [4, 4, 2]}, {"g": 32, "l": 96}
    )
    # from (0,0,0) to (1,3,1) = 1 + 12 + 16 = 29: x forwards, y backwards (the wrap: link 13
    # in y joins (1,3,0) to its + neighbour (1,0,0)), then z
    assert torus.route(0, 29) == (
        ("l", 0),
        ("g", 1),
        ("l", 13 * 3 + 1),
        ("g", 13),
        ("l", 13 * 3 + 2),
    )
    links = adjacency(torus)
    assert all(follows_links(torus, links, s, d) for s in range(32) for d in range(32) if s != d)


def test_nvswitch_domains_join_only_their_own_endpoints() -> None:
    nv = one(
        {"kind": "nvswitch", "endpoints": "g", "switch": "s", "domainSize": 8}, {"g": 16, "s": 2}
    )
    assert nv.route(0, 7) == (("s", 0),)
    assert nv.route(9, 15) == (("s", 1),)
    assert nv.route(0, 8) is None


def cluster_snapshot(nodes: int = 4) -> dict[str, Any]:
    return json.loads(
        (ROOT / "examples" / f"dgx_h100_cluster_{nodes}" / "snapshot.json").read_text()
    )


@pytest.mark.parametrize(
    ("change", "path", "words"),
    [
        ({"down": [8, 3]}, "topologies[1].down", "8 x 3 = 24"),
        ({"up": [1]}, "topologies[1].up", "It has 1, down has 2"),
        ({"routing": "random"}, "topologies[1].routing", "dmodk, ecmp"),
        ({"switches": ["leaf", "gpu"]}, "topologies[1].switches[1]", "GPU hardware"),
        ({"switches": ["leaf", "nowhere"]}, "topologies[1].switches[1]", "Unknown node id"),
        ({"kind": "mesh"}, "topologies[1].kind", "fatTree"),
        ({"down": [8, "4"]}, "topologies[1].down", "whole numbers"),
        ({"up": [1, 4]}, "topologies[1].switches[1]", "needs 4 switches"),
    ],
)
def test_bad_parameters_are_refused_naming_the_field(
    change: dict[str, Any], path: str, words: str
) -> None:
    snapshot = cluster_snapshot()
    snapshot["topologies"][1].update(change)
    with pytest.raises(SnapshotError) as caught:
        load_snapshot(snapshot)
    errors = caught.value.errors
    assert path in errors, errors
    assert any(words in message for message in errors[path]), errors[path]


def test_a_wrong_switch_count_names_the_node_and_the_count_needed() -> None:
    snapshot = cluster_snapshot()
    snapshot["nodes"][3]["count"] = 3  # leaf
    with pytest.raises(SnapshotError) as caught:
        load_snapshot(snapshot)
    assert caught.value.errors == {
        "topologies[1].switches[0]": [
            "Node 'Leaf switch' has count 3; this fatTree needs 4 switches."
        ]
    }


def test_the_ready_system_models_are_what_the_builder_writes() -> None:
    assert build.main(["--check"]) == 0


def test_the_4_node_cluster_routes_across_the_expected_switches() -> None:
    system = load_snapshot(cluster_snapshot())
    routes = Routes(system)
    # GPU 0 and GPU 15: DGX 0 and DGX 1, so NIC 0 -> leaf 0 -> spine 15 mod 8 -> leaf 1 -> NIC 15
    assert routes.instance_path("gpu", 0, "gpu", 15) == (
        ("gpu", 0),
        ("nic", 0),
        ("leaf", 0),
        ("spine", 7),
        ("leaf", 1),
        ("nic", 15),
        ("gpu", 15),
    )
    # GPU 0 and GPU 7 share DGX 0: its NVSwitch
    assert routes.instance_path("gpu", 0, "gpu", 7) == (("gpu", 0), ("nvswitch", 0), ("gpu", 7))
    assert routes.instance_path("gpu", 8, "gpu", 31) == (
        ("gpu", 8),
        ("nic", 8),
        ("leaf", 1),
        ("spine", 7),
        ("leaf", 3),
        ("nic", 31),
        ("gpu", 31),
    )


P2P = """
if rank == 0:
    sim.p2pCommunicationSend(size, "GPU", None, target)
elif rank == target:
    sim.p2pCommunicationReceive("GPU", 0)
"""


def transfers(result: Any) -> list[tuple[str, int]]:
    return [(e["node"], e["instance"]) for e in result["timeline"] if e["kind"] == "transfer"]


@pytest.mark.parametrize("sharing", ["full-duplex", "fifo"])
def test_a_p2p_message_on_the_4_node_cluster_crosses_nic_leaf_spine_leaf_nic(sharing: str) -> None:
    size = 1e9
    snapshot = cluster_snapshot()
    for node in snapshot["nodes"]:
        if "sharing" in node:  # the ready system's links are full duplex flow links
            node["sharing"] = sharing
    result = run_simulation(
        snapshot, P2P, labels={"GPU": 32}, variables={"size": size, "target": 15}
    )
    assert transfers(result) == [("nic", 0), ("leaf", 0), ("spine", 7), ("leaf", 1), ("nic", 15)]
    # five 50 GB/s hops (ConnectX-7 and Quantum-2 ports), each with its record's latency:
    # 2 x 1 us (NIC) + 3 x 0.33 us (switch ports). As one flow the message crosses them all
    # at once (the route's latency, then size / 50 GB/s); stored and forwarded, each in turn.
    hops = 5 if sharing == "fifo" else 1
    expected = hops * size / 50e9 + 2 * 1e-6 + 3 * 3.3e-7
    assert result["overall_time_s"] == pytest.approx(expected, rel=1e-9)
    inside = run_simulation(
        cluster_snapshot(), P2P, labels={"GPU": 32}, variables={"size": size, "target": 7}
    )
    assert transfers(inside) == [("nvswitch", 0)]
    assert inside["overall_time_s"] == pytest.approx(size / 450e9 + 6e-7, rel=1e-9)


@pytest.mark.parametrize(
    ("folder", "labels", "app", "hops"),
    [
        ("dgx_h100", {"GPU": 8}, P2P, [("nvswitch", 0)]),
        ("dgx_a100", {"GPU": 8}, P2P, [("nvswitch", 0)]),
        ("dgx_b200", {"GPU": 8}, P2P, [("nvswitch", 0)]),
        ("pcie_workstation_4gpu", {"GPU": 4}, P2P, [("pcie", 0)]),
        ("dgx_h100_cluster_32", {"GPU": 256}, P2P, None),
        ("dgx_h100_cluster_128", {"GPU": 1024}, P2P, None),
    ],
)
def test_every_ready_system_model_runs_a_p2p_application(
    folder: str, labels: dict[str, int], app: str, hops: list[tuple[str, int]] | None
) -> None:
    snapshot = json.loads((ROOT / "examples" / folder / "snapshot.json").read_text())
    last = labels["GPU"] - 1
    if folder == "pcie_workstation_4gpu":
        app = app.replace("None, target", "'HostToDevice', target")
    result = run_simulation(snapshot, app, labels=labels, variables={"size": 1e6, "target": last})
    if hops is not None:
        assert transfers(result) == hops
    else:  # NIC, leaf, spine, leaf, NIC: the last GPU is under the last leaf
        assert [node for node, _ in transfers(result)] == ["nic", "leaf", "spine", "leaf", "nic"]
    assert result["overall_time_s"] > 0


PATTERN = """
PAIRS = {pairs!r}
for source, target in PAIRS:
    if rank == source:
        sim.p2pCommunicationSend(size, "GPU", {direction!r}, target)
for source, target in PAIRS:
    if rank == target:
        sim.p2pCommunicationReceive("GPU", source)
"""


def run_pattern(
    folder: str,
    gpus: int,
    pairs: list[tuple[int, int]],
    *,
    size: float = 1e9,
    direction: str | None = None,
    sharing: str | None = None,
) -> dict[str, Any]:
    """Run every (source, target) message of `pairs` at once on a ready system."""
    snapshot = json.loads((ROOT / "examples" / folder / "snapshot.json").read_text())
    if sharing is not None:
        for node in snapshot["nodes"]:
            if "sharing" in node:
                node["sharing"] = sharing
    app = PATTERN.format(pairs=pairs, direction=direction)
    return run_simulation(snapshot, app, labels={"GPU": gpus}, variables={"size": size})


# DGX H100: each GPU's 18 NVLink 4 links give it 450 GB/s per direction into the NVSwitch
# fabric, which is non-blocking (H100 datasheet; NVSwitch blog, docs/topologies.md's table).
# The route's latency is the NVSwitch record's 0.6 us (NCCL's LL step over NVLink bounds it).
NVLINK, NVSWITCH_LATENCY = 450e9, 6e-7


@pytest.mark.parametrize(
    ("pairs", "messages_through_busiest_port"),
    [
        ([(0, i) for i in range(1, 8)], 7),  # one GPU sends to seven: its egress port is shared
        ([(i, 0) for i in range(1, 8)], 7),  # seven send to one: its ingress port is shared
        ([(i, (i + 1) % 8) for i in range(8)], 1),  # a shift: every port once, non-blocking
        ([(0, 1), (1, 0)], 1),  # both directions of a port at once: full duplex
        ([(0, 1), (2, 3), (4, 5), (6, 7)], 1),  # disjoint pairs: the switch is non-blocking
    ],
)
def test_a_gpu_s_nvswitch_port_limits_its_total_egress_and_ingress(
    pairs: list[tuple[int, int]], messages_through_busiest_port: int
) -> None:
    size = 1e9
    result = run_pattern("dgx_h100", 8, pairs, size=size)
    expected = NVSWITCH_LATENCY + messages_through_busiest_port * size / NVLINK
    assert result["overall_time_s"] == pytest.approx(expected, rel=1e-9)
    # the flow constraints are the GPUs' ports, named by the GPU and the direction
    ports = {link["link"] for link in result["links"]}
    assert ports == {f"nvswitch[0] gpu[{s}]->" for s, _ in pairs} | {
        f"nvswitch[0] ->gpu[{t}]" for _, t in pairs
    }


def test_a_shared_switch_port_carries_both_directions_together() -> None:
    size = 1e9
    result = run_pattern("dgx_h100", 8, [(0, 1), (1, 0)], size=size, sharing="shared")
    assert result["overall_time_s"] == pytest.approx(NVSWITCH_LATENCY + 2 * size / NVLINK, rel=1e-9)
    assert sorted(link["link"] for link in result["links"]) == [
        "nvswitch[0] gpu[0]<->",
        "nvswitch[0] gpu[1]<->",
    ]


def test_the_pcie_switch_shares_a_gpu_s_port_between_its_copies() -> None:
    # The PCIe model (MERPSYS eq. 4.6, startup + size / (bw lambda)): a lone copy of n bytes
    # and one of 2n give the startup; three copies into one GPU share its x16 port, so they
    # end after the startup and three copies' worth of transfer.
    def overall(pairs: list[tuple[int, int]], size: float) -> float:
        result = run_pattern("pcie_workstation_4gpu", 4, pairs, size=size, direction="HostToDevice")
        return float(result["overall_time_s"])

    one, two = overall([(1, 0)], 1e9), overall([(1, 0)], 2e9)
    startup = 2 * one - two
    assert startup > 0
    incast = overall([(1, 0), (2, 0), (3, 0)], 1e9)
    assert incast == pytest.approx(startup + 3 * (one - startup), rel=1e-9)
    assert overall([(1, 0), (2, 3)], 1e9) == pytest.approx(one, rel=1e-9)


@pytest.mark.parametrize(("second", "messages_on_the_uplink"), [((1, 16), 2), ((1, 17), 1)])
def test_a_leaf_s_uplink_to_a_spine_is_one_port_for_every_nic_under_it(
    second: tuple[int, int], messages_on_the_uplink: int
) -> None:
    # 4-node cluster: NICs 0-7 under leaf 0; D-mod-k sends to NIC d through spine d mod 8, so
    # 0 -> 8 and 1 -> 16 share leaf 0's port to spine 0 (one 400 Gb/s cable), while 1 -> 17
    # goes up to spine 1. Route latency: two NICs (1 us) and three switch ports (0.33 us).
    size = 1e9
    result = run_pattern("dgx_h100_cluster_4", 32, [(0, 8), second], size=size)
    expected = 2 * 1e-6 + 3 * 3.3e-7 + messages_on_the_uplink * size / 50e9
    assert result["overall_time_s"] == pytest.approx(expected, rel=1e-9)


def test_port_switches_are_the_templates_switch_roles_not_their_links() -> None:
    system = load_snapshot(cluster_snapshot())
    assert port_switches(system.topologies) == {"nvswitch", "leaf", "spine"}
    ring = one({"kind": "ring", "endpoints": "g", "link": "l"}, {"g": 4, "l": 4})
    assert port_switches([ring]) == frozenset()


def test_the_gh200_superchip_copies_over_nvlink_c2c() -> None:
    snapshot = json.loads((ROOT / "examples" / "gh200_pair" / "snapshot.json").read_text())
    app = """
if tag.equals("CPU"):
    sim.p2pCommunicationSend(size, "GPU")
else:
    sim.p2pCommunicationReceive("CPU")
"""
    result = run_simulation(snapshot, app, labels={"CPU": 1, "GPU": 1}, variables={"size": 9e8})
    assert transfers(result) == [("c2c", 0)]
    assert result["overall_time_s"] == pytest.approx(9e8 / 450e9, rel=1e-9)


def test_snapshots_keep_their_topologies_through_to_dict() -> None:
    system = load_snapshot(cluster_snapshot())
    again = load_snapshot(system.to_dict())
    assert [t.to_dict() for t in again.topologies] == [t.to_dict() for t in system.topologies]
    assert system.to_dict()["topologies"][1]["down"] == [8, 4]


def test_every_gpu_pair_of_the_32_node_cluster_routes_through_nvswitch_or_the_fat_tree() -> None:
    routes = Routes(load_snapshot(cluster_snapshot(32)))
    shapes: dict[tuple[str, ...], int] = {}
    for a in range(256):
        for b in range(256):
            path = routes.instance_path("gpu", a, "gpu", b)
            assert path is not None and path[0] == ("gpu", a) and path[-1] == ("gpu", b)
            shape = tuple(node for node, _ in path)
            shapes[shape] = shapes.get(shape, 0) + 1
            if a // 8 == b // 8 and a != b:
                assert path[1] == ("nvswitch", a // 8)
            elif a // 32 == b // 32 and a != b:  # one leaf holds 32 NICs: four DGX
                assert path[2] == ("leaf", a // 32)
    assert shapes == {
        ("gpu",): 256,
        ("gpu", "nvswitch", "gpu"): 256 * 7,
        ("gpu", "nic", "leaf", "nic", "gpu"): 256 * 24,
        ("gpu", "nic", "leaf", "spine", "leaf", "nic", "gpu"): 256 * 224,
    }


def test_the_command_line_runs_a_cluster_and_refuses_a_bad_template_by_field(
    tmp_path: Path,
) -> None:
    app = tmp_path / "p2p.py"
    app.write_text(P2P, encoding="utf-8")
    common = ["--app", str(app), "--labels", "GPU=32", "--var", "size=1e9", "--var", "target=15"]
    out, err = io.StringIO(), io.StringIO()
    system = str(ROOT / "examples" / "dgx_h100_cluster_4" / "snapshot.json")
    result_path = tmp_path / "result.json"
    status = main(
        ["run", "--system", system, *common, "--json", str(result_path)], stdout=out, stderr=err
    )
    assert status == 0, err.getvalue()
    result = json.loads(result_path.read_text(encoding="utf-8"))
    assert [e["node"] for e in result["timeline"] if e["kind"] == "transfer"] == [
        "nic",
        "leaf",
        "spine",
        "leaf",
        "nic",
    ]
    bad = cluster_snapshot()
    bad["topologies"][1]["down"] = [8, 3]
    bad_path = tmp_path / "bad.json"
    bad_path.write_text(json.dumps(bad), encoding="utf-8")
    out, err = io.StringIO(), io.StringIO()
    status = main(["run", "--system", str(bad_path), *common], stdout=out, stderr=err)
    assert status != 0
    assert "topologies[1].down: The product of down (8 x 3 = 24)" in err.getvalue()


def test_an_unknown_template_field_is_named() -> None:
    snapshot = cluster_snapshot()
    snapshot["topologies"][0]["domainsize"] = 8
    with pytest.raises(SnapshotError) as caught:
        load_snapshot(snapshot)
    assert caught.value.errors == {
        "topologies[0]": [
            "Unknown fields for a nvswitch: domainsize; expected id, kind, endpoints, routing, "
            "switch, domainSize."
        ]
    }


def test_null_topologies_are_refused_and_none_left_out_is_fine() -> None:
    snapshot = cluster_snapshot()
    snapshot["topologies"] = None
    with pytest.raises(SnapshotError) as caught:
        load_snapshot(snapshot)
    assert caught.value.errors == {"topologies": ["Expected a list."]}
    del snapshot["topologies"]
    assert load_snapshot(snapshot).topologies == ()
