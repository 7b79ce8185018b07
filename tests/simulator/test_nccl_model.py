"""NCCL's cost layer on the collectives (simulator/nccl_model.py, `protocol=` of the
collective calls): its constants restated from NCCL's source, its per-call latency, its
protocol efficiency, its choice by size, the reduction overlapped with the transfers, and the
default unchanged."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from simulator import collectives, nccl_model, platform
from simulator.collectives import ALGORITHMS
from simulator.errors import UserCodeError
from simulator.runner import run_simulation

SYSTEM = Path(__file__).resolve().parents[2] / "examples" / "dgx_h100" / "snapshot.json"


def _call(program: str, gpus: int = 4) -> dict[str, Any]:
    result = run_simulation(
        json.loads(SYSTEM.read_text()), program, labels={"GPU": gpus}, variables={}
    )
    (call,) = result["collectives"]
    return dict(call)


def test_the_latencies_are_nccl_s_ring_formula() -> None:
    # tuning.cc: ring latency = baseLat + nsteps x hwLat; a 4-GPU allreduce has 2(n-1) = 6
    # steps: LL 6.6 + 6 x 0.6, Simple 8.4 + 6 x 3.4 (us, NVLink); a network step 14 us.
    assert nccl_model.latency_s("ring", "LL", ["nvlink"] * 6) == pytest.approx(10.2e-6)
    assert nccl_model.latency_s("ring", "Simple", ["nvlink"] * 6) == pytest.approx(28.8e-6)
    assert nccl_model.latency_s("tree", "Simple", ["nvlink", "net"]) == pytest.approx(
        (8.4 + 4.0 + 14.0) * 1e-6
    )


def test_small_messages_pay_nccl_s_latency_floor() -> None:
    ideal = _call("sim.allreduce(64, algorithm='ring')\n")
    nccl = _call("sim.allreduce(64, algorithm='ring', protocol='nccl')\n")
    assert nccl["protocol"] == "LL"
    assert nccl["protocol_latency_s"] == pytest.approx(10.2e-6)
    assert nccl["time_s"] >= ideal["time_s"] + 10.2e-6 * (1 - 1e-9)
    assert ideal["protocol"] == "ideal" and ideal["protocol_latency_s"] is None


def test_a_call_under_the_layer_pays_the_launch_cost_once() -> None:
    # the host's enqueue and launch (nccl_model.LAUNCH_US), on top of NCCL's model latency
    ll = _call("sim.allreduce(64, algorithm='ring', protocol='LL')\n")
    ideal = _call("sim.allreduce(64, algorithm='ring')\n")
    assert ll["launch_s"] == pytest.approx(nccl_model.LAUNCH_US * 1e-6)
    assert ideal["launch_s"] is None
    assert ll["time_s"] == pytest.approx(
        ideal["time_s"] + ll["protocol_latency_s"] + ll["launch_s"], rel=1e-4
    )


def test_the_protocol_is_chosen_by_size_as_nccl_s_tuner_does() -> None:
    chosen = [
        _call(f"sim.allreduce({size}, algorithm='ring', protocol='nccl')\n")["protocol"]
        for size in (1024, 8 << 20, 1 << 30)
    ]
    assert chosen == ["LL", "LL128", "Simple"]
    given = _call("sim.allreduce(1024, algorithm='ring', protocol='Simple')\n")
    assert given["protocol"] == "Simple"


def test_the_plateau_moves_at_nccl_s_simple_efficiency_of_nvlink() -> None:
    # NCCL counts 20.6 GB/s per NVLink 4 link of 25 (topo.h): 450 x 0.824 = 370.8 GB/s bus.
    ideal = _call("sim.allgather(1073741824, algorithm='ring')\n")
    nccl = _call("sim.allgather(1073741824, algorithm='ring', protocol='nccl')\n")
    assert nccl["protocol"] == "Simple"
    # within the pipeline's fill (3 of 64 pieces on 4 GPUs) and NCCL's latency
    assert nccl["busbw"] == pytest.approx(450e9 * 20.6 / 25, rel=0.05)
    assert nccl["busbw"] < ideal["busbw"] * 0.85


def test_ll_moves_half_of_simple_capped_at_nccl_s_ll_bandwidth() -> None:
    assert nccl_model.efficiency("LL", "net", 50e9) == pytest.approx(0.5)
    assert nccl_model.efficiency("LL", "nvlink", 450e9) == pytest.approx(141 / 450)
    assert nccl_model.efficiency("LL128", "net", 50e9) == pytest.approx(0.92)


def test_the_reduction_is_hidden_when_faster_than_the_link() -> None:
    # H100's HBM (3.35 TB/s, 3 bytes moved per byte reduced) outruns NVLink: the reduce-
    # scatter moves as fast as the allgather, which has no reduction; the default model
    # charges the reduction between transfers and is slower.
    gather = _call("sim.allgather(1073741824, algorithm='ring', protocol='Simple')\n")
    scatter = _call("sim.reduceScatter(1073741824, algorithm='ring', protocol='Simple')\n")
    assert scatter["busbw"] == pytest.approx(gather["busbw"], rel=0.01)
    ideal = _call("sim.reduceScatter(1073741824, algorithm='ring')\n")
    assert ideal["busbw"] < scatter["busbw"] * 0.92


def test_a_reduction_slower_than_the_link_still_shows() -> None:
    fast = _call("sim.reduceScatter(1073741824, algorithm='ring', protocol='Simple')\n")
    system = json.loads(SYSTEM.read_text())
    # every GPU reduces at 1 GB/s (the model's `reduceTime`), far slower than NVLink: the
    # call takes at least the reduction of the (n-1)/n of the buffer each GPU reduces
    system["models"]["gpu_model"]["source"] += (
        "\nfunction reduceTime(size, params) {\n  return size / 1e9;\n}\n"
    )
    program = "sim.reduceScatter(1073741824, algorithm='ring', protocol='Simple')\n"
    result = run_simulation(system, program, labels={"GPU": 4}, variables={})
    (slow,) = result["collectives"]
    assert slow["time_s"] >= 0.75 * 1073741824 / 1e9 * (1 - 1e-6)
    assert slow["time_s"] > 10 * fast["time_s"]


def test_the_default_is_the_ideal_model() -> None:
    program = "sim.allreduce(8388608, algorithm='ring')\n"
    explicit = "sim.allreduce(8388608, algorithm='ring', protocol='ideal')\n"
    assert _call(program)["time_s"] == _call(explicit)["time_s"]


def test_an_unknown_protocol_is_refused() -> None:
    with pytest.raises(Exception, match="protocol must be one of"):
        _call("sim.allreduce(64, protocol='fast')\n")


def test_steps_that_leave_a_node_pay_nccl_s_network_latency() -> None:
    # Two DGX H100 of the 4-node cluster: a 16-GPU ring allreduce has 30 steps; one piece's
    # path crosses between the nodes 3 times (7 -> 8, 15 -> 0, 7 -> 8 again), each step
    # paying NCCL's network latency (LL 2.7 us), the others NVLink's (0.6 us), raised over
    # several nodes to NCCL's network post overhead (1 us). NCCL's own count, 2 (nNodes - 1)
    # = 2, leaves out the ring's closing edge.
    cluster = Path(SYSTEM).parents[1] / "dgx_h100_cluster_4" / "snapshot.json"
    program = "sim.allreduce(65536, algorithm='ring', protocol='LL')\n"
    one = run_simulation(json.loads(cluster.read_text()), program, labels={"GPU": 8}, variables={})
    two = run_simulation(json.loads(cluster.read_text()), program, labels={"GPU": 16}, variables={})
    assert one["collectives"][0]["protocol_latency_s"] == pytest.approx((6.6 + 14 * 0.6) * 1e-6)
    assert two["collectives"][0]["protocol_latency_s"] == pytest.approx(
        (6.6 + 3 * 2.7 + 27 * 1.0) * 1e-6
    )


@pytest.mark.parametrize(
    ("kind", "algorithm"),
    [(kind, algorithm) for kind, names in ALGORITHMS.items() for algorithm in names],
)
def test_every_algorithm_runs_under_the_layer_and_pays_its_latency(
    kind: str, algorithm: str
) -> None:
    root = ", 'GPU', 0" if kind == "reduce" else ""
    call = _call(f"sim.{kind}(1048576{root}, algorithm='{algorithm}', protocol='nccl')\n")
    assert call["protocol"] in nccl_model.PROTOCOLS
    assert call["time_s"] > call["protocol_latency_s"] > 0


CLUSTER = Path(SYSTEM).parents[1] / "dgx_h100_cluster_4" / "snapshot.json"


def _cluster_call(program: str, gpus: int) -> dict[str, Any]:
    result = run_simulation(
        json.loads(CLUSTER.read_text()), program, labels={"GPU": gpus}, variables={}
    )
    (call,) = result["collectives"]
    return dict(call)


def test_nccl_s_tree_is_a_chain_in_a_node_and_a_double_binary_tree_across_nodes() -> None:
    # one node: one chain, NCCL's "Trees [0] 2/-1/-1->1->0"; up 3 -> 2 -> 1 -> 0, then down
    steps, spans = collectives.nccl_tree(8.0, [[0, 1, 2, 3]])
    assert spans == [(0, 3, 6)]
    assert [[(a, b) for a, b, _, _ in step] for step in steps] == [
        [(3, 2)],
        [(2, 1)],
        [(1, 0)],
        [(0, 1)],
        [(1, 2)],
        [(2, 3)],
    ]
    # four nodes of two: two channels (heads: member 0 of each node, then member 1), two
    # trees each (the second the first shifted by a node), a quarter of the data in each
    steps, spans = collectives.nccl_tree(16.0, [[0, 1], [2, 3], [4, 5], [6, 7]])
    assert len(spans) == 4 and {t[2] for t in spans} == {2 * spans[0][1]}
    sends = {(a, b) for step in steps for a, b, size, _ in step if size == 4.0}
    assert (1, 0) in sends and (0, 1) in sends  # each channel's chain inside a node
    heads = {(a, b) for a, b in sends if a // 2 != b // 2}
    assert {a % 2 for a, _ in heads} == {0, 1}  # both members' links cross between nodes
    up = sum(1 for step in steps for t in step if t[3])
    assert up == 4 * 7  # every tree reduces over its 8 members: 7 sends up


def test_nccl_s_tree_latency_is_tuning_cc_s() -> None:
    # tuning.cc line 416: base + 2 ((ranks per node - 1) intra + log2(nodes) inter)
    assert nccl_model.tree_steps(8, 4) == ["nvlink"] * 14 + ["net"] * 4
    call = _cluster_call("sim.allreduce(65536, algorithm='tree', protocol='LL')\n", 32)
    assert call["protocol_latency_s"] == pytest.approx((6.8 + 2 * (7 * 0.6 + 2 * 5.0)) * 1e-6)
    assert call["steps"] == 2 * (7 + 2)


def test_the_tree_s_bandwidth_is_nccl_s_refined_share_corrected_by_size() -> None:
    # tuning.cc: x 0.92 for a tree allreduce, LL x 1/3.8, LL128 x 7/9 in one node (120/128
    # over several); treeCorrectionFactor by log2(bytes / 64), 0..22 only
    assert nccl_model.efficiency("Simple", "net", 50e9, (2, 1 << 30)) == pytest.approx(0.92)
    assert nccl_model.efficiency("LL", "net", 50e9, (2, 1 << 30)) == pytest.approx(0.92 / 3.8)
    assert nccl_model.tree_factor("LL128", 1) == pytest.approx(0.92 * 7 / 9)
    assert nccl_model.tree_factor("LL128", 4) == pytest.approx(0.92 * 120 / 128)
    assert nccl_model.tree_correction("Simple", 256 << 20) == 0.9  # log2(4 Mi) = 22
    assert nccl_model.tree_correction("Simple", 1 << 30) == 1.0  # beyond the table
    assert nccl_model.tree_correction("LL", 32) == 1.0  # under 64 bytes


def test_the_tree_s_chunk_is_nccl_s_and_pieces_the_simulated_tree() -> None:
    # enqueue.cc calcCollChunking: a step of the protocol's buffer (Simple 4 MiB / 8; LL
    # 512 KiB / 8, half of it data; LL128 4800 KiB / 8, 15 of 16 words data); LL128's tree
    # halves it while a channel has under nsteps x 64 / ppn chunks (above 128 KiB), then under
    # nsteps x 16 / ppn (above 32 KiB); 4 nodes of 8: nsteps = 1 + 2 + 0.8 = 3.8
    assert nccl_model.tree_chunk_bytes("Simple", 128 << 20, 16, 32, 4) == 524288
    assert nccl_model.tree_chunk_bytes("LL", 128 << 20, 16, 32, 4) == 32768
    assert nccl_model.tree_chunk_bytes("LL128", 8 << 30, 16, 32, 4) == 576000
    assert nccl_model.tree_chunk_bytes("LL128", 128 << 20, 16, 32, 4) == 144000  # 58 >= 30.4
    assert nccl_model.tree_chunk_bytes("LL128", 1 << 20, 16, 32, 4) == 18000
    # the simulated tree travels in these chunks: the same call with them as its `chunk`
    # takes the same time; in the 512 KiB pieces of the ring's default it fills its pipeline
    # over 16 pieces a tree and takes longer
    program = "sim.allreduce(134217728, algorithm='tree', protocol='LL128'{})\n"
    default = _cluster_call(program.format(""), 32)["time_s"]
    assert _cluster_call(program.format(", chunk=144000"), 32)["time_s"] == default
    assert _cluster_call(program.format(", chunk=524288"), 32)["time_s"] > 1.1 * default


def test_nccl_s_tree_on_one_node_carries_a_stream_up_and_one_down_per_port() -> None:
    # a middle GPU of the chain sends up and down at once through its one NVSwitch port:
    # the tree's busbw on 4 GPUs is at most 3/4 of NCCL's tree share of NVLink (2 S / B),
    # and it comes within the fill of a pipeline of 4 stages in 64 pieces of it (the
    # reduction and broadcast overlap, each connection one flow at a time)
    call = _call("sim.allreduce(1073741824, algorithm='tree', protocol='Simple')\n")
    bound = 0.75 * 450e9 * 20.6 / 25 * 0.92
    fill = (4 - 1) / nccl_model.TREE_MOST_PIECES
    assert (1 - fill) * bound < call["busbw"] <= bound * (1 + 1e-9)
    ideal = _call("sim.allreduce(1073741824, algorithm='tree')\n")
    assert call["busbw"] > ideal["busbw"]


def test_a_connection_s_pieces_cross_one_at_a_time(monkeypatch: pytest.MonkeyPatch) -> None:
    # NCCL's threads write a connection's slices in step order (prims_simple.h), so a piece
    # goes on the wire once the one before it on its connection arrived (api._Connection),
    # one that waited meanwhile right behind it: on the chain 0 <- 1 <- 2 <- 3 each pair of
    # GPUs is one connection, and the leaf's first pieces, alone on its port, arrive one
    # piece's wire time apart, without a route latency each
    sent: dict[tuple[str, str], list[float]] = {}
    arrived: dict[tuple[str, str], list[float]] = {}
    send, flow_end = platform.World.send, platform._RouteTransfer._flow_end

    def sending(world: platform.World, source: Any, target: Any, *rest: Any) -> None:
        sent.setdefault((source.name, target.name), []).append(world.engine.now)
        send(world, source, target, *rest)

    def ending(transfer: Any, now: float) -> None:
        pair = (transfer.message.source.name, transfer.target.name)
        arrived.setdefault(pair, []).append(now)
        flow_end(transfer, now)

    monkeypatch.setattr(platform.World, "send", sending)
    monkeypatch.setattr(platform._RouteTransfer, "_flow_end", ending)
    call = _call("sim.allreduce(268435456, algorithm='tree', protocol='Simple')\n")
    assert len(sent) == 6
    for pair, times in sent.items():
        assert len(times) == len(arrived[pair]) == nccl_model.TREE_MOST_PIECES
        assert all(b >= a for a, b in zip(arrived[pair], times[1:], strict=False)), pair
    share = 20.6 / 25 * 0.92 * nccl_model.tree_correction("Simple", 268435456)
    wire_s = 268435456 / nccl_model.TREE_MOST_PIECES / share / 450e9
    leaf = arrived["GPU[3]", "GPU[2]"]
    assert leaf[1] - leaf[0] == pytest.approx(wire_s, rel=1e-9)
    assert call["time_s"] > 0


def test_nccl_s_rings_cross_between_nodes_through_every_nic() -> None:
    # one ring alone crosses each node boundary through one NIC (50 GB/s); NCCL's rings, a
    # channel per member place, cross through all eight
    alone = _cluster_call("sim.allgather(268435456, algorithm='ring')\n", 16)
    nccl = _cluster_call("sim.allgather(268435456, algorithm='ring', protocol='Simple')\n", 16)
    assert alone["busbw"] < 55e9
    assert nccl["busbw"] > 4 * alone["busbw"]


def test_auto_under_the_layer_picks_as_nccl_s_model_does() -> None:
    # tree for a small allreduce over 4 nodes (its latency grows with log2 nodes, the ring's
    # with the ranks), ring for a large one (the tree moves at 0.92 of the bus bandwidth)
    small = _cluster_call("sim.allreduce(1048576, protocol='nccl')\n", 32)
    large = _cluster_call("sim.allreduce(4294967296 // 4, protocol='nccl')\n", 32)
    assert (small["algorithm"], large["algorithm"]) == ("tree", "ring")
    assert nccl_model.choose_algorithm(1 << 20, 32, 4, 400e9) == "tree"
    assert nccl_model.choose_algorithm(1 << 30, 32, 4, 400e9) == "ring"
    # one node, 4 GPUs: NCCL's model keeps the ring at every size here
    assert nccl_model.choose_algorithm(1 << 30, 4, 1, 370e9) == "ring"
    # the default "auto" is unchanged
    assert _call("sim.allreduce(1048576)\n")["algorithm"] == "ring"


def test_a_tree_stream_waits_for_no_piece_that_comes_later() -> None:
    # every member's streams together receive exactly what the others send, so none waits
    # for ever (a run that deadlocked would raise)
    call = _cluster_call(
        "sim.allreduce(8388608, algorithm='tree', protocol='nccl', chunk=65536)\n", 16
    )
    assert call["time_s"] > 0 and call["algorithm"] == "tree"


def test_nccl_s_rings_over_nodes_are_one_span_of_steps_each() -> None:
    # two nodes of two: two channels, each a whole ring (2 (p - 1) = 6 steps of an
    # allreduce) entering each node at its member c, a quarter of a channel's half each step
    steps, spans = collectives.nccl_ring("allreduce", 16.0, [[0, 1], [2, 3]])
    assert spans == [(0, 6), (6, 6)]
    first = [(a, b) for a, b, _, _ in steps[0]]
    second = [(a, b) for a, b, _, _ in steps[6]]
    assert sorted(first) == [(0, 1), (1, 2), (2, 3), (3, 0)]
    assert sorted(second) == [(0, 3), (1, 0), (2, 1), (3, 2)]
    assert {size for step in steps for _, _, size, _ in step} == {16.0 / (2 * 4)}


def test_a_member_s_rings_run_as_streams_that_wait_for_no_other_ring() -> None:
    # each stream is `program`'s order of one ring's messages alone, and the streams
    # together are the member's operations
    steps, spans = collectives.nccl_ring("allgather", 8 << 20, [[0, 1], [2, 3]])
    mine = collectives.messages_by_member(steps, 4)[1]
    streams = collectives.ring_streams(mine, 65536, 0, spans)
    assert len(streams) == 2
    for stream, (first, length) in zip(streams, spans, strict=True):
        own = [m for m in mine if first <= m[0] < first + length]
        assert stream == list(collectives.program(own, 65536, 0))
    together = sorted(op for stream in streams for op in stream)
    assert together == sorted(collectives.program(mine, 65536, 0))


def test_a_step_s_latency_is_charged_once_the_larger_of_nccl_s_and_the_route_s() -> None:
    # NCCL's per-step latencies are whole steps (its InfiniBand transport reports no latency
    # of its own), so the layer charges only what they exceed the route's latency by
    us = 1e-6
    nvlink, net = 1.0 * us, 3.0 * us  # the routes' latencies
    assert nccl_model.charged_latency_s("ring", "LL", ["nvlink", "net"], [nvlink, net]) == (
        pytest.approx(6.6 * us)  # 0.6 < 1, 2.7 < 3: the base alone
    )
    assert nccl_model.charged_latency_s(
        "ring", "Simple", ["nvlink", "net"], [nvlink, net]
    ) == pytest.approx((8.4 + 2.4 + 11.0) * us)
    assert nccl_model.charged_latency_s("tree", "LL", ["net"] * 4, [net] * 4) == pytest.approx(
        (6.8 + 4 * 2.0) * us
    )


def test_a_ring_s_nvlink_step_over_several_nodes_costs_at_least_the_net_overhead() -> None:
    # tuning.cc lines 404-410: "inter-node rings still have to launch nsteps * net overhead",
    # 1 us a step (x 3 for Simple) where NVLink's own figure is less; trees and one node keep
    # NVLink's, and the network's steps their own
    step = nccl_model.step_latency_us
    assert [step("nvlink", "ring", p, 4) for p in nccl_model.PROTOCOLS] == [1.0, 1.9, 3.4]
    assert [step("nvlink", "ring", p, 1) for p in nccl_model.PROTOCOLS] == [0.6, 1.9, 3.4]
    assert [step("nvlink", "tree", p, 4) for p in nccl_model.PROTOCOLS] == [0.6, 1.25, 4.0]
    assert [step("net", "ring", p, 4) for p in nccl_model.PROTOCOLS] == [2.7, 4.0, 14.0]
    us = 1e-6
    assert nccl_model.latency_s("ring", "LL", ["nvlink", "net"], 2) == pytest.approx(10.3 * us)
    # charged once: the overhead over a 0.6 us NVLink route, nothing over a 3 us network one
    assert nccl_model.charged_latency_s(
        "ring", "LL", ["nvlink", "net"], [0.6 * us, 3.0 * us], 2
    ) == pytest.approx((6.6 + 0.4) * us)
    # NCCL's own model of a 4 x 8 ring allreduce counts the same steps (algorithm_time_s)
    ring = nccl_model.algorithm_time_s("ring", "LL", 0.0, 32, 4, 1e11)
    assert ring == pytest.approx((6.6 + 56 * 1.0 + 6 * 2.7) * us)


def test_over_several_nodes_the_layer_charges_each_step_s_latency_once() -> None:
    # one node (8 GPUs of the cluster): NCCL's latency whole, on top of the routes' (the
    # single-node comparison's form); two nodes: NCCL's rings as streams, each step once
    program = "sim.allgather(512, algorithm='ring', protocol='LL')\n"
    one = _cluster_call(program, 8)
    assert (
        one["charged_latency_s"]
        == one["protocol_latency_s"]
        == pytest.approx((6.6 + 7 * 0.6) * 1e-6)
    )
    two = _cluster_call(program, 16)
    # a piece's 15 steps along the first ring cross between the nodes once (7 -> 8)
    # (its NVLink steps at NCCL's network post overhead, 1 us, over several nodes)
    assert two["protocol_latency_s"] == pytest.approx((6.6 + 2.7 + 14 * 1.0) * 1e-6)
    # the routes cover the crossing (3 us against 2.7) and 0.6 us of each NVLink step
    assert two["charged_latency_s"] == pytest.approx((6.6 + 14 * 0.4) * 1e-6)
    # what is left is one ring's 15 steps of route latency, its longest path 13 NVLink
    # hops of 0.6 us and two crossings of about 3 us, not the slowest ring's crossing at
    # every step (15 x 3 us), as when the rings ran as one schedule
    transfers = two["time_s"] - two["launch_s"] - two["charged_latency_s"]
    assert 13e-6 < transfers < 15e-6


# -- NVLS (NVLink SHARP): the NVSwitch reduces and multicasts ------------------------------------


def _run(program: str, gpus: int, system: Path = SYSTEM) -> dict[str, Any]:
    return dict(
        run_simulation(json.loads(system.read_text()), program, labels={"GPU": gpus}, variables={})
    )


@pytest.mark.parametrize("gpus", [2, 4, 8])
def test_nvls_puts_s_times_1_plus_1_over_n_on_each_switch_port_each_way(gpus: int) -> None:
    # multimem ld_reduce: each GPU's data goes up once (S), its reduced share comes down
    # (S/n); multimem st: its share goes up once (S/n), the switch multicasts every share
    # down (S): S (1 + 1/n) per port and direction, against the ring's 2 (n - 1) / n S
    size = 2.0**24
    result = _run(f"sim.allreduce({size}, algorithm='nvls')\n", gpus)
    ports = {link["link"]: link["bytes"] for link in result["links"]}
    assert len(ports) == 2 * gpus
    assert list(ports.values()) == [pytest.approx(size * (1 + 1 / gpus))] * (2 * gpus)
    (call,) = result["collectives"]
    assert call["algorithm"] == "nvls"
    assert call["wire_bytes"] == pytest.approx(gpus * size * (1 + 1 / gpus))
    # alone on the switch, the ports move at the link's rate: S (1 + 1/n) / B + the hop
    hop = json.loads(SYSTEM.read_text())["hardware"]["nvswitch"]["attributes"]
    expected = size * (1 + 1 / gpus) / hop["bandwidth"] + hop["latency"]
    assert call["time_s"] == pytest.approx(expected, rel=1e-9)
    assert all(p["compute_s"] == 0 for p in result["processes"])  # the switch reduces


def test_nvls_shares_the_switch_ports_with_other_traffic() -> None:
    program = "sim.allreduce(2 ** 24, algorithm='nvls')\n"
    alone = _run(program, 4)["collectives"][0]["time_s"]
    crowded = _run(
        "if rank == 0:\n    sim.p2pCommunicationSend(2 ** 24, 'GPU', target_rank=1)\n"
        + program
        + "if rank == 1:\n    sim.p2pCommunicationReceive('GPU', 0)\n",
        4,
    )["collectives"][0]["time_s"]
    assert crowded > alone


def test_a_switch_whose_record_lacks_nvls_refuses_the_algorithm() -> None:
    snapshot = json.loads(SYSTEM.read_text())
    del snapshot["hardware"]["nvswitch"]["attributes"]["nvls"]
    with pytest.raises(UserCodeError) as error:
        run_simulation(
            snapshot, "sim.allreduce(1024, algorithm='nvls')\n", labels={"GPU": 4}, variables={}
        )
    assert "sim.allreduce: algorithm 'nvls' needs every participant on one switch" in str(
        error.value
    )
    assert "(attribute 'nvls' = 1)" in str(error.value)
    assert "none with 'nvls'" in str(error.value)
    # and NCCL's model does not pick it there
    snapshot["hardware"]["nvswitch"]["attributes"]["latency"] = 1e-6
    result = run_simulation(
        snapshot, "sim.allreduce(2 ** 22, protocol='nccl')\n", labels={"GPU": 8}, variables={}
    )
    assert result["collectives"][0]["algorithm"] != "nvls"


def test_nvls_over_several_nodes_and_with_ll_is_refused() -> None:
    with pytest.raises(UserCodeError) as error:
        _run("sim.allreduce(1024, algorithm='nvls')\n", 16, CLUSTER)
    assert "the participants are on 2 nodes" in str(error.value)
    with pytest.raises(UserCodeError) as error:
        _run("sim.allreduce(1024, algorithm='nvls', protocol='LL')\n", 4)
    assert "runs NCCL's Simple protocol only (got 'LL')" in str(error.value)


def test_nvls_under_the_layer_is_nccl_s_simple_at_its_nvls_efficiency_and_latency() -> None:
    # tuning.cc: NVLS latency 25 us on one node (hwLatencies[NVLINK][NVLS][Simple], base 0),
    # Simple only, its share of NVLink 20.6/25 (SM90_NVLINK_BW) x 0.85 (nvlsEfficiency)
    size, gpus = 2.0**30, 8
    call = _call(f"sim.allreduce({size}, algorithm='nvls', protocol='nccl')\n", gpus)
    assert (call["algorithm"], call["protocol"]) == ("nvls", "Simple")
    assert call["protocol_latency_s"] == pytest.approx(25e-6)
    hop = json.loads(SYSTEM.read_text())["hardware"]["nvswitch"]["attributes"]
    share = 20.6 / 25 * 0.85
    moving = size * (1 + 1 / gpus) / (hop["bandwidth"] * share)
    expected = 25e-6 + nccl_model.LAUNCH_US * 1e-6 + hop["latency"] + moving
    assert call["time_s"] == pytest.approx(expected, rel=1e-9)


def test_nccl_s_model_of_nvls_and_when_its_tuner_picks_it() -> None:
    # search.cc: one channel per GPU at the speed the search starts from, the fastest SM90
    # speed within NCCL's 18 x 20.6 GB/s whose n channels fit in n / (n - 1) of it
    bus = 18 * 20.6e9
    speeds = [nccl_model.nvls_channel_gbps(n, bus) for n in (2, 4, 6, 8)]
    assert speeds == [60.0, 60.0, 60.0, 50.0]
    # busBw = channels x min(speed x 0.85 x (n-1)/n x 2, speed); algbw = busBw x n / (2(n-1)):
    # NCCL 2.29.2's own tuning table on 2, 4 and 6 H100 prints NVLS AllReduce 102.0, 160.0
    # and 216.0 GB/s (results/scaling_attributed/g{2,4,6}_auto.log of the source in
    # validation/network/nccl/README.md)
    algbw = [nccl_model.nvls_bus_bytes_per_s(n, bus) * n / (2 * (n - 1)) for n in (2, 4, 6)]
    assert algbw == [pytest.approx(x * 1e9) for x in (102.0, 160.0, 216.0)]
    assert nccl_model.nvls_bus_bytes_per_s(8, bus) == pytest.approx(400e9)
    assert nccl_model.nvls_time_s(2**30, 8, bus) == pytest.approx(25e-6 + 2**30 / (400e9 * 8 / 14))
    # never over several nodes (no CollNet), never without an NVLS switch
    assert not nccl_model.nvls_enabled(16, 2)
    sizes = [2**k for k in range(10, 34)]
    assert all(nccl_model.choose_algorithm(s, 16, 2, bus, True) != "nvls" for s in sizes)
    assert all(nccl_model.choose_algorithm(s, 8, 1, bus, False) != "nvls" for s in sizes)
    # 2 and 4 GPUs: the ring at every size (NCCL's logs of these GPUs: RING from 256 MB up);
    # 8 GPUs: NVLS from 2 MiB up, the ring's LL and LL128 below
    for gpus in (2, 4):
        assert all(nccl_model.choose_algorithm(s, gpus, 1, bus, True) == "ring" for s in sizes)
    picked = [s for s in sizes if nccl_model.choose_algorithm(s, 8, 1, bus, True) == "nvls"]
    assert picked == [2**k for k in range(21, 34)]
    call = _call("sim.allreduce(2 ** 22, protocol='nccl')\n", 8)
    assert (call["algorithm"], call["protocol"]) == ("nvls", "Simple")
    assert _call("sim.allreduce(2 ** 22)\n", 8)["algorithm"] == "ring"  # the default: unchanged


B200 = Path(__file__).resolve().parents[2] / "examples" / "dgx_b200" / "snapshot.json"


def test_the_layer_takes_nccl_s_constants_by_the_gpus_compute_capability() -> None:
    # tuning.cc lines 263-266: Blackwell from compute capability 10.0, Hopper from 9.0,
    # Ampere from 8.0, Volta below; topo.h lines 275-281: 8.6's NVLink and 6.x's their own
    # (and Hopper's values for a record without one)
    chosen = {cc: nccl_model.architecture(cc).name for cc in (12.0, 10.0, 9.0, 8.9, 8.6, 8.0)}
    assert chosen == {
        12.0: "Blackwell",
        10.0: "Blackwell",
        9.0: "Hopper",
        8.9: "Ampere",
        8.6: "Ampere (GA10x)",
        8.0: "Ampere",
    }
    older = {cc: nccl_model.architecture(cc).name for cc in (7.5, 7.0, 6.1, 6.0, 5.2)}
    assert older == {7.5: "Volta", 7.0: "Volta", 6.1: "Pascal", 6.0: "Pascal", 5.2: "Volta"}
    assert nccl_model.architecture(None) is nccl_model.HOPPER
    # topo.h lines 19-23 over each NVLink generation's rate per link and direction
    shares = {
        arch.name: nccl_model.link_efficiency("nvlink", arch)
        for arch in (
            nccl_model.PASCAL,
            nccl_model.VOLTA,
            nccl_model.AMPERE,
            nccl_model.AMPERE_GA10X,
        )
    }
    assert shares == {
        "Pascal": 18.0 / 20,
        "Volta": 20.0 / 25,
        "Ampere": 20.0 / 25,
        "Ampere (GA10x)": 12.0 / 14.0625,
    }
    # tuning.cc lines 179-180, llMaxBws[Volta | Ampere][N1]; lines 140-141, no NVLS
    assert nccl_model.efficiency("LL", "nvlink", 300e9, None, nccl_model.AMPERE) == 87.7 / 300
    assert nccl_model.efficiency("LL", "nvlink", 150e9, None, nccl_model.VOLTA) == 39.0 / 150
    older_archs = (nccl_model.PASCAL, nccl_model.VOLTA, nccl_model.AMPERE)
    assert {nccl_model.nvls_share(arch) for arch in older_archs} == {0.0}
    # topo.h SM90_NVLINK_BW 20.6 of NVLink 4's 25 GB/s, SM100_NVLINK_BW 40.1 of NVLink 5's 50
    assert nccl_model.link_efficiency("nvlink") == 20.6 / 25
    assert nccl_model.link_efficiency("nvlink", nccl_model.BLACKWELL) == 40.1 / 50
    # tuning.cc lines 142-143 (nvlsEfficiency), 181-182 (llMaxBws, one node)
    assert nccl_model.nvls_share(nccl_model.BLACKWELL) == 40.1 / 50 * 0.74
    assert nccl_model.efficiency("LL", "nvlink", 900e9, None, nccl_model.BLACKWELL) == (
        2 * 141e9 / 900e9
    )


def test_nccl_s_model_of_nvls_on_blackwell() -> None:
    # search.cc line 1063 (sm100SpeedArrayIntra 90, 80, ...): the fastest within NCCL's
    # 18 x 40.1 GB/s whose n channels fit in n / (n - 1) of it is 90 GB/s for 2 to 8 GPUs;
    # busBw = n x min(90 x 0.74 x (n-1)/n x 2, 90) (tuning.cc lines 307-324)
    bus = 18 * 40.1e9
    arch = nccl_model.BLACKWELL
    assert [nccl_model.nvls_channel_gbps(n, bus, arch) for n in (2, 4, 8)] == [90.0] * 3
    expected = [n * min(90 * 0.74 * (n - 1) / n * 2, 90) * 1e9 for n in (2, 4, 8)]
    assert expected == [pytest.approx(x * 1e9) for x in (133.2, 360.0, 720.0)]
    got = [nccl_model.nvls_bus_bytes_per_s(n, bus, arch) for n in (2, 4, 8)]
    assert got == [pytest.approx(x) for x in expected]
    # Hopper's 0.85 and SM90 speeds would give 2 x 51 = 102 GB/s on 2 GPUs: not these
    assert nccl_model.nvls_bus_bytes_per_s(2, bus) != pytest.approx(expected[0])
    assert nccl_model.nvls_time_s(2**30, 8, bus, arch) == pytest.approx(
        25e-6 + 2**30 / (720e9 * 8 / 14)
    )


def test_an_nvls_allreduce_on_a_dgx_b200_runs_with_blackwell_s_constants() -> None:
    # the B200 record's computeCapability 10.0 picks NCCL's Blackwell constants: latency
    # 25 us (tuning.cc line 161, every generation), the ports at NVLink 5's 900 GB/s x
    # 40.1/50 (SM100_NVLINK_BW) x 0.74 (nvlsEfficiency[Blackwell])
    size, gpus = 2.0**30, 8
    snapshot = json.loads(B200.read_text())
    assert snapshot["hardware"]["gpu"]["attributes"]["computeCapability"] == 10.0
    result = run_simulation(
        snapshot,
        f"sim.allreduce({size}, algorithm='nvls', protocol='nccl')\n",
        labels={"GPU": gpus},
        variables={},
    )
    (call,) = result["collectives"]
    assert (call["algorithm"], call["protocol"]) == ("nvls", "Simple")
    assert call["protocol_latency_s"] == pytest.approx(25e-6)
    hop = snapshot["hardware"]["nvswitch"]["attributes"]
    assert hop["bandwidth"] == 900e9 and hop["nvls"] == 1
    moving = size * (1 + 1 / gpus) / (900e9 * 40.1 / 50 * 0.74)
    time = 25e-6 + nccl_model.LAUNCH_US * 1e-6 + hop["latency"] + moving
    assert call["time_s"] == pytest.approx(time, rel=1e-9)
    # nccl-tests' bus bandwidth: S x 2 (n - 1) / n over the time
    assert call["busbw"] == pytest.approx(size * 2 * (gpus - 1) / gpus / time, rel=1e-9)
    # and NCCL's tuner on these GPUs picks NVLS for it
    auto = run_simulation(
        snapshot, f"sim.allreduce({size}, protocol='nccl')\n", labels={"GPU": gpus}, variables={}
    )
    assert auto["collectives"][0]["algorithm"] == "nvls"


def _a100(program: str, gpus: int = 8) -> dict[str, Any]:
    """Run `program` on the DGX H100 system made an A100's: compute capability 8.0 and
    NVLink 3's 300 GB/s a GPU and direction (12 links of 25 GB/s, the A100 whitepaper), its
    switch left without NVLink SHARP as the A100 seed record is."""
    system = json.loads(SYSTEM.read_text())
    system["hardware"]["gpu"]["attributes"]["computeCapability"] = 8.0
    switch = system["hardware"]["nvswitch"]["attributes"]
    switch["bandwidth"] = 300e9
    switch.pop("nvls", None)
    result = run_simulation(system, program, labels={"GPU": gpus}, variables={})
    (call,) = result["collectives"]
    return dict(call)


def test_an_a100_system_runs_nccl_s_ampere_constants() -> None:
    # Simple moves 20 of NVLink 3's 25 GB/s (SM80_NVLINK_BW), not Hopper's 20.6
    simple = _a100("sim.allgather(1073741824, algorithm='ring', protocol='Simple')\n")
    assert simple["busbw"] == pytest.approx(300e9 * 20.0 / 25, rel=0.05)
    assert simple["busbw"] < 300e9 * 20.6 / 25 * 0.99
    # LL is capped at Ampere's 87.7 GB/s bus (Hopper's 141 would be above LL's half of 240)
    ll = _a100("sim.allgather(67108864, algorithm='ring', protocol='LL')\n")
    assert ll["busbw"] < 87.7e9


def test_nvls_is_refused_below_hopper_whatever_the_switch_says() -> None:
    # search.cc line 1124: NCCL builds no NVLS graph below compute capability 9.0
    system = json.loads(SYSTEM.read_text())
    system["hardware"]["gpu"]["attributes"]["computeCapability"] = 8.0
    assert system["hardware"]["nvswitch"]["attributes"]["nvls"] == 1
    with pytest.raises(UserCodeError, match="no NVLS on Ampere GPUs"):
        run_simulation(
            system,
            "sim.allreduce(2 ** 30, algorithm='nvls', protocol='nccl')\n",
            labels={"GPU": 8},
            variables={},
        )
    auto = run_simulation(
        system, "sim.allreduce(2 ** 30, protocol='nccl')\n", labels={"GPU": 8}, variables={}
    )
    assert auto["collectives"][0]["algorithm"] != "nvls"
