"""The collectives with algorithms (`sim.allreduce`, `allgather`, `reduceScatter`, `reduce`,
`alltoall`; simulator.collectives, docs/collectives.md).

Each algorithm's messages and bytes on the wire are checked against its textbook count, and
its completion time on a uniform network (every ordered pair of processes has a link of its
own: latency a, bandwidth B) against the alpha-beta cost the literature gives for it (Thakur,
Rabenseifner and Gropp, "Optimization of Collective Communication Operations in MPICH",
IJHPCA 19(1), 2005; Chan et al., "Collective communication: theory, practice, and
experience", CCPE 19(13), 2007). Bus bandwidth is nccl-tests' (doc/PERFORMANCE.md).
"""

from __future__ import annotations

import json
import textwrap
from pathlib import Path
from typing import Any

import pytest

from simulator import collectives, runner
from simulator.errors import UserCodeError
from simulator.models.roofline import gpu_roof
from simulator.runner import run_simulation

A, B = 1.0, 2.0  # the uniform network: latency a (s), bandwidth B (bytes/s)
CPU_MODEL = "function computationTime(params) { return params.get('seconds', 0); }"
FLOP_MODEL = "function computationTime(params) { return params.get('flops') / 8; }"
LINK_MODEL = "function p2pTime(size, params) { return latency + size / bandwidth; }"


@pytest.fixture(autouse=True, params=["greenlets", "stackless"])
def process_kind(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    """Run every model on greenlets, and stackless with every call on a borrowed greenlet."""
    calls: frozenset[str] | None = frozenset() if request.param == "greenlets" else None
    monkeypatch.setattr(runner, "STACKLESS_CALLS", calls)
    return str(request.param)


def uniform(p: int, *, hosts: int = 0, compute: str = CPU_MODEL) -> dict[str, Any]:
    """p processes (label R), one node each, all joined by one switch whose every direction
    between two nodes is its own FIFO: a uniform network. With `hosts`, the nodes are
    spread evenly over that many group nodes (the hierarchical algorithms' hosts)."""
    nodes: list[dict[str, Any]] = []
    for index in range(hosts):
        nodes.append({"id": f"host{index}", "name": f"Host {index}", "group": True})
    for index in range(p):
        node: dict[str, Any] = {
            "id": f"n{index}",
            "hardware": "cpu",
            "model": "compute",
            "labels": {"R": 1},
        }
        if hosts:
            node["parent"] = f"host{index * hosts // p}"
        nodes.append(node)
    nodes.append({"id": "net", "hardware": "net", "model": "link"})
    return {
        "name": "uniform",
        "hardware": {
            "cpu": {"type": "CPU", "name": "Processor", "attributes": {}},
            "net": {
                "type": "NETWORK",
                "name": "Switch",
                "attributes": {"latency": A, "bandwidth": B},
            },
        },
        "models": {
            "compute": {"language": "javascript", "source": compute},
            "link": {"language": "javascript", "source": LINK_MODEL},
        },
        "nodes": nodes,
        "edges": [[f"n{index}", "net"] for index in range(p)],
    }


def run(app: str, p: int, system: dict[str, Any] | None = None) -> dict[str, Any]:
    result = run_simulation(
        system or uniform(p), textwrap.dedent(app), labels={"R": p}, variables={}
    )
    return dict(result)


def step(n: float) -> float:
    """One message of n bytes on the uniform network."""
    return A + n / B


# -- bytes on the wire: the textbook counts ------------------------------------------------------


@pytest.mark.parametrize("p", [2, 3, 4, 5, 8, 16])
def test_ring_allreduce_puts_2_p_minus_1_over_p_n_per_rank_on_the_wire(p: int) -> None:
    n = 1024.0
    messages, wire = collectives.wire_figures(
        collectives.schedule("allreduce", "ring", n, list(range(p)))
    )
    assert messages == 2 * (p - 1) * p
    assert wire / p == pytest.approx(2 * (p - 1) / p * n)


@pytest.mark.parametrize(
    ("kind", "algorithm", "p", "messages", "per_rank"),
    [
        # Rabenseifner: 2 log p steps, 2(p-1)/p n per rank
        ("allreduce", "halving_doubling", 8, 2 * 3 * 8, 2 * 7 / 8),
        ("allreduce", "recursive_doubling", 8, 3 * 8, 3.0),  # log p exchanges of n
        ("allreduce", "direct", 4, 2 * 4 * 3, 2 * 3 / 4),
        ("allreduce", "tree", 7, 2 * 6, 2 * 6 / 7),  # p - 1 edges, n each, up then down
        ("allreduce", "double_binary_tree", 8, 4 * 7, 2 * 7 / 8),  # two trees, n/2 each
        ("allreduce", "nvls", 8, 8 * 7, 1 + 1 / 8),  # the switch reduces: n (1 + 1/p) a port
        ("allgather", "ring", 5, 4 * 5, 4 / 5),
        ("allgather", "recursive_doubling", 8, 3 * 8, 7 / 8),
        ("allgather", "direct", 4, 4 * 3, 3 / 4),
        ("reduceScatter", "ring", 6, 5 * 6, 5 / 6),
        ("reduceScatter", "halving_doubling", 16, 4 * 16, 15 / 16),
        ("reduceScatter", "direct", 4, 4 * 3, 3 / 4),
        ("reduce", "tree", 6, 5, 5 / 6),
        ("reduce", "direct", 6, 5, 5 / 6),
        ("reduce", "ring", 4, 3 * 4 + 3, (3 + 3 / 4) / 4),  # reduce-scatter, gather to root
        ("alltoall", "pairwise", 5, 4 * 5, 4 / 5),
        ("alltoall", "direct", 5, 4 * 5, 4 / 5),
        ("alltoall", "bruck", 8, 3 * 8, 3 * 4 / 8),  # log p steps, half the blocks each
    ],
)
def test_each_algorithm_puts_its_textbook_bytes_on_the_wire(
    kind: str, algorithm: str, p: int, messages: int, per_rank: float
) -> None:
    n = 4096.0
    counted, wire = collectives.wire_figures(
        collectives.schedule(kind, algorithm, n, list(range(p)))
    )
    assert counted == messages
    assert wire / p == pytest.approx(per_rank * n)


def test_recursive_doubling_folds_a_group_that_is_not_a_power_of_two() -> None:
    # p = 6: 2 extra ranks send n before and get n back after; 4 ranks do log 4 exchanges
    counted, wire = collectives.wire_figures(
        collectives.schedule("allreduce", "recursive_doubling", 100.0, list(range(6)))
    )
    assert (counted, wire) == (2 + 2 * 4 + 2, (2 + 2 * 4 + 2) * 100.0)


def test_hierarchical_allreduce_splits_the_group_by_host() -> None:
    # 2 hosts x 4: ring reduce-scatter inside each host (3 steps of n/4), a ring allreduce
    # of each n/4 shard across the hosts (2 steps of n/8), ring allgather inside (3 of n/4)
    hosts = [0, 0, 0, 0, 1, 1, 1, 1]
    steps = collectives.schedule("allreduce", "hierarchical", 800.0, hosts)
    assert len(steps) == 3 + 2 + 3
    assert [len(s) for s in steps] == [8, 8, 8, 8, 8, 8, 8, 8]
    assert {t[2] for s in steps[:3] for t in s} == {200.0}
    assert {t[2] for s in steps[3:5] for t in s} == {100.0}
    assert all(hosts[a] != hosts[b] for s in steps[3:5] for a, b, _, _ in s)
    assert all(hosts[a] == hosts[b] for s in steps[:3] + steps[5:] for a, b, _, _ in s)


# -- completion time on a uniform network: the alpha-beta costs -----------------------------------


@pytest.mark.parametrize(
    ("app", "p", "expected"),
    [
        # ring: 2(p-1) steps of n/p
        ("sim.allreduce(40, algorithm='ring', chunk=0)", 5, 2 * 4 * step(40 / 5)),
        # recursive doubling: log p steps of n
        ("sim.allreduce(40, algorithm='recursive_doubling', chunk=0)", 8, 3 * step(40)),
        # Rabenseifner: halving steps of n/2, n/4, ... then doubling back
        (
            "sim.allreduce(64, algorithm='halving_doubling', chunk=0)",
            8,
            2 * (step(32) + step(16) + step(8)),
        ),
        # direct: every pair at once (the uniform network has no port limit), twice
        ("sim.allreduce(40, algorithm='direct', chunk=0)", 5, 2 * step(8)),
        # binary tree of 7: depth 2, up then down, n each hop
        ("sim.allreduce(40, algorithm='tree', chunk=0)", 7, 4 * step(40)),
        ("sim.allgather(40, algorithm='ring', chunk=0)", 5, 4 * step(8)),
        (
            "sim.allgather(64, algorithm='recursive_doubling', chunk=0)",
            8,
            step(8) + step(16) + step(32),
        ),
        ("sim.reduceScatter(40, algorithm='ring', chunk=0)", 5, 4 * step(8)),
        (
            "sim.reduceScatter(64, algorithm='halving_doubling', chunk=0)",
            8,
            step(32) + step(16) + step(8),
        ),
        ("sim.reduce(40, 'R', 0, algorithm='direct', chunk=0)", 5, step(40)),
        ("sim.reduce(40, 'R', 0, algorithm='tree', chunk=0)", 7, 2 * step(40)),
        ("sim.alltoall(40, algorithm='pairwise', chunk=0)", 5, 4 * step(8)),
        ("sim.alltoall(40, algorithm='direct', chunk=0)", 5, step(8)),
        ("sim.alltoall(64, algorithm='bruck', chunk=0)", 8, 3 * step(4 * 8)),
    ],
)
def test_unpipelined_completion_time_is_the_alpha_beta_cost(
    app: str, p: int, expected: float
) -> None:
    result = run(app + "\n", p)
    assert result["overall_time_s"] == pytest.approx(expected)
    (call,) = result["collectives"]
    assert call["time_s"] == pytest.approx(expected)


def test_a_pipelined_tree_moves_pieces_one_step_behind_each_other() -> None:
    # C pieces through S steps whose links each carry one step: (S + C - 1) piece times
    pieces, n = 4, 40.0
    result = run(f"sim.allreduce({n}, algorithm='tree', chunk={n / pieces})\n", 7)
    assert result["overall_time_s"] == pytest.approx((4 + pieces - 1) * step(n / pieces))
    assert result["collectives"][0]["chunk"] == n / pieces


def test_a_pipelined_ring_pays_each_pieces_latency_on_its_busy_link() -> None:
    # every ring link carries a piece in every step: 2(p-1)(C a + n/(pB)) on FIFO links
    p, pieces, n = 4, 3, 48.0
    result = run(f"sim.allreduce({n}, algorithm='ring', chunk={n / p / pieces})\n", p)
    assert result["overall_time_s"] == pytest.approx(2 * (p - 1) * (pieces * A + n / p / B))


def test_bus_bandwidth_is_nccl_tests_correction_of_the_algorithm_bandwidth() -> None:
    result = run(
        """
        sim.allreduce(40, algorithm='ring', chunk=0)
        sim.allgather(40, algorithm='ring', chunk=0)
        sim.reduceScatter(40, algorithm='ring', chunk=0)
        sim.alltoall(40, algorithm='pairwise', chunk=0)
        sim.reduce(40, 'R', 1, algorithm='direct', chunk=0)
        """,
        5,
    )
    factors = {
        "allreduce": 2 * 4 / 5,
        "allgather": 4 / 5,
        "reduceScatter": 4 / 5,
        "alltoall": 4 / 5,
        "reduce": 1.0,
    }
    calls = result["collectives"]
    assert [call["collective"] for call in calls] == list(factors)
    for call in calls:
        assert call["algbw"] == pytest.approx(40 / call["time_s"])
        assert call["busbw"] == pytest.approx(call["algbw"] * factors[call["collective"]])
    # the ring allreduce's busbw is what one link carries: n/p per step over the step time
    assert calls[0]["busbw"] == pytest.approx(2 * 4 / 5 * 40 / (2 * 4 * step(8)))
    assert [c["start_s"] for c in calls[1:]] == [c["end_s"] for c in calls[:-1]]


def test_the_reduction_is_charged_to_each_process_hardware() -> None:
    # ring reduce-scatter over 4: each rank reduces 3 pieces of n/4 bytes = n/4/4 flops each,
    # and the model takes flops / 8 seconds
    n = 256.0
    result = run(
        f"sim.reduceScatter({n}, algorithm='ring', chunk=0)\n", 4, uniform(4, compute=FLOP_MODEL)
    )
    per_piece = n / 4 / 4 / 8
    assert [p["compute_s"] for p in result["processes"]] == [3 * per_piece] * 4
    assert result["overall_time_s"] == pytest.approx(3 * (step(n / 4) + per_piece))
    gathered = run(
        f"sim.allgather({n}, algorithm='ring', chunk=0)\n", 4, uniform(4, compute=FLOP_MODEL)
    )
    assert [p["compute_s"] for p in gathered["processes"]] == [0.0] * 4


def test_a_node_model_may_define_the_reduction_time_itself() -> None:
    model = CPU_MODEL + "\nfunction reduceTime(size, params) { return size / 100; }"
    result = run(
        "sim.reduce(100, 'R', 0, algorithm='direct', chunk=0)\n", 3, uniform(3, compute=model)
    )
    assert [p["compute_s"] for p in result["processes"]] == [2.0, 0.0, 0.0]


def test_the_timeline_entry_names_the_collective_and_its_algorithm() -> None:
    result = run("sim.allreduce(8, chunk=0)\n", 4)
    entries = [e for e in result["timeline"] if e["kind"] == "collective"]
    assert len(entries) == 4
    assert {(e["collective"], e["algorithm"], e["size"], e["call"]) for e in entries} == {
        ("allreduce", "recursive_doubling", 8.0, 0)
    }
    assert result["collectives"][0]["requested"] == "auto"
    assert not any(e["kind"] == "receive" for e in result["timeline"])
    transfers = [e for e in result["timeline"] if e["kind"] == "transfer"]
    assert len(transfers) == result["collectives"][0]["messages"] == 8


def test_other_traffic_on_a_link_delays_the_collective() -> None:
    app = """
    if rank == 0:
        sim.p2pCommunicationSend({extra}, "R", target_rank=1)
    sim.allreduce(40, algorithm='ring', chunk=0)
    if rank == 1:
        sim.p2pCommunicationReceive("R", 0)
    """
    alone = run(app.format(extra=0), 4)["collectives"][0]["time_s"]
    crowded = run(app.format(extra=100), 4)["collectives"][0]["time_s"]
    assert crowded > alone


def test_hierarchical_runs_on_hosts_from_the_system_groups() -> None:
    result = run("sim.allreduce(2 ** 22, labels='R')\n", 8, uniform(8, hosts=2))
    (call,) = result["collectives"]
    assert (call["algorithm"], call["requested"]) == ("hierarchical", "auto")
    assert call["wire_bytes"] == pytest.approx(2 * 7 / 8 * 2**22 * 8)


# -- the automatic choice ------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("kind", "size", "p", "algorithm"),
    [
        ("allreduce", 9999, 8, "recursive_doubling"),
        ("allreduce", 10000, 8, "ring"),
        ("allgather", 49999, 8, "recursive_doubling"),
        ("allgather", 49999, 6, "ring"),
        ("allgather", 50000, 8, "ring"),
        ("reduceScatter", 12 * 1024, 6, "ring"),
        ("reduceScatter", 256 * 1024, 8, "halving_doubling"),
        ("reduceScatter", 256 * 1024 + 1, 8, "ring"),
        ("reduce", 511, 4, "direct"),
        ("reduce", 512, 4, "tree"),
        ("alltoall", 199 * 16, 16, "bruck"),
        ("alltoall", 2999 * 8, 8, "direct"),
        ("alltoall", 3000 * 8, 8, "pairwise"),
    ],
)
def test_auto_follows_the_selection_table(kind: str, size: float, p: int, algorithm: str) -> None:
    assert collectives.choose(kind, size, list(range(p))) == algorithm


def test_auto_goes_hierarchical_over_several_hosts_from_1_mib() -> None:
    hosts = [0] * 4 + [1] * 4
    assert collectives.choose("allreduce", 2**20, hosts) == "hierarchical"
    assert collectives.choose("allreduce", 2**20 - 1, hosts) == "ring"
    assert collectives.choose("allreduce", 2**20, [0] * 4 + [1] * 3) == "ring"


# -- bad calls -----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("app", "message"),
    [
        (
            "sim.allreduce(8, algorithm='rings')",
            "sim.allreduce: algorithm must be 'auto' or one of",
        ),
        ("sim.allgather(8, chunk=-1)", "sim.allgather: chunk must be a number of bytes"),
        ("sim.allreduce(-1)", "sim.allreduce: the size must be a finite number"),
        (
            "sim.reduceScatter(8, algorithm='halving_doubling')",
            "needs a power-of-two number of participants (got 3)",
        ),
        ("sim.reduce(8, 'R', 7)", "label 'R' has 3 processes, so rank 7 does not exist"),
        ("sim.alltoall(8, labels='GPU')", "no processes of label 'GPU'"),
    ],
)
def test_a_bad_call_is_refused_with_a_message_naming_it(app: str, message: str) -> None:
    with pytest.raises(UserCodeError) as error:
        run(app + "\n", 3)
    assert message in str(error.value)


def test_hierarchical_needs_as_many_members_on_every_host() -> None:
    with pytest.raises(UserCodeError) as error:
        run("sim.allreduce(8, algorithm='hierarchical')\n", 3, uniform(3, hosts=2))
    assert "the same number of participants on every host" in str(error.value)


# -- a model's own time for a collective (MERPSYS's per-hardware communication functions) -------


def test_a_network_model_may_define_the_time_of_a_whole_collective() -> None:
    # the switch every route crosses defines allreduceTime: with algorithm "auto" the call
    # takes that time once every participant came, and sends nothing
    system = uniform(4)
    system["models"]["link"]["source"] = LINK_MODEL + (
        "\nfunction allreduceTime(size, params) { return size / 10 + params.participants; }"
    )
    result = run(
        """
        sim.computation({"seconds": rank})
        sim.allreduce(40)
        sim.allreduce(40, algorithm='ring', chunk=0)
        """,
        4,
        system,
    )
    model, ring = result["collectives"]
    assert (model["algorithm"], model["model_node"], model["messages"]) == ("model", "net", 0)
    assert (model["start_s"], model["end_s"]) == (0.0, 3.0 + 40 / 10 + 4)
    assert (model["last_call_s"], model["time_s"]) == (3.0, 40 / 10 + 4)
    assert model["busbw"] == pytest.approx(40 / 8 * 2 * 3 / 4)
    assert (ring["algorithm"], ring["model_node"]) == ("ring", None)
    assert ring["time_s"] == pytest.approx(2 * 3 * step(10))
    waits = [p["wait_s"] for p in result["processes"]]
    assert waits == [3.0, 2.0, 1.0, 0.0]
    assert not [e for e in result["timeline"] if e["kind"] == "transfer"][: -ring["messages"]]


def test_a_calls_time_starts_when_its_last_participant_is_in_it() -> None:
    # a reduce's senders return at once; its root, done later, comes late to the alltoall
    result = run(
        """
        sim.reduce(30, 'R', 2, algorithm='tree', chunk=0)
        sim.alltoall(30, algorithm='direct', chunk=0)
        """,
        3,
    )
    reduce, alltoall = result["collectives"]
    assert reduce["time_s"] == pytest.approx(step(30))
    assert (alltoall["start_s"], alltoall["last_call_s"]) == (0.0, step(30))
    assert alltoall["time_s"] == pytest.approx(step(10))
    assert alltoall["end_s"] == pytest.approx(step(30) + step(10))


def test_hierarchical_allreduce_costs_its_three_rings() -> None:
    # 2 hosts x 4: 2(L-1) intra-host steps of n/L and 2(H-1) inter-host steps of n/p
    n, hosts, width = 64.0, 2, 4
    result = run(
        f"sim.allreduce({n}, algorithm='hierarchical', chunk=0)\n", 8, uniform(8, hosts=hosts)
    )
    expected = 2 * (width - 1) * step(n / width) + 2 * (hosts - 1) * step(n / 8)
    assert result["collectives"][0]["time_s"] == pytest.approx(expected)


@pytest.mark.parametrize("p", [3, 5, 7, 8, 16])
def test_the_double_binary_trees_share_no_link_and_halve_the_trees_time(p: int) -> None:
    # two balanced in-order trees of depth floor(log2 p), n/2 each, up then down at once
    result = run("sim.allreduce(64, algorithm='double_binary_tree', chunk=0)\n", p)
    depth = p.bit_length() - 1
    assert result["collectives"][0]["time_s"] == pytest.approx(2 * depth * step(32))


@pytest.mark.parametrize(
    ("kind", "per_rank", "across"),
    [
        # (p-1)/p n in all, as the flat ring; only (H-1) n/p of it between hosts
        ("allgather", 11 / 12, 2 / 12),
        ("reduceScatter", 11 / 12, 2 / 12),
        ("allreduce", 2 * 11 / 12, 2 * 2 / 12),
        ("alltoall", 2 / 3 + 3 / 4, 2 / 3),  # (H-1)/H n across hosts, then (L-1)/L n inside
    ],
)
def test_hierarchical_puts_the_flat_algorithms_bytes_on_the_wire(
    kind: str, per_rank: float, across: float
) -> None:
    hosts = [h for h in range(3) for _ in range(4)]  # 3 hosts x 4
    steps = collectives.schedule(kind, "hierarchical", 1200.0, hosts)
    _, wire = collectives.wire_figures(steps)
    assert wire / 12 == pytest.approx(per_rank * 1200)
    crossing = sum(t[2] for s in steps for t in s if hosts[t[0]] != hosts[t[1]])
    assert crossing / 12 == pytest.approx(across * 1200)


def test_without_chunk_a_message_travels_as_at_most_64_pieces() -> None:
    # direct allreduce over 2: two messages of 64 MiB each way, 128 pieces of 512 KiB each
    # with the chunk given, 64 (of 1 MiB) by default
    app = "sim.allreduce(2 ** 27, algorithm='direct'{chunk})\n"
    capped = run(app.format(chunk=""), 2)
    given = run(app.format(chunk=", chunk=2 ** 19"), 2)
    count = lambda result: sum(e["kind"] == "transfer" for e in result["timeline"])  # noqa: E731
    assert (count(capped), count(given)) == (2 * 2 * 64, 2 * 2 * 128)
    assert capped["collectives"][0]["most_pieces"] == collectives.DEFAULT_MOST_PIECES == 64
    assert given["collectives"][0]["most_pieces"] is None


def test_a_gpu_reduces_at_its_dram_roof_whatever_its_kernel_model_needs() -> None:
    # The ready DGX H100's GPUs run the current-architecture kernel model, which needs a
    # kernel's description (blockSize...) that a collective's reduction does not have: the
    # reduction streams its bytes (two read, one written) through the GPU's memory instead.
    snapshot = json.loads(
        (Path(__file__).parents[2] / "examples" / "dgx_h100" / "snapshot.json").read_text()
    )
    gpu = next(h for h in snapshot["hardware"].values() if h["type"] == "GPU")
    roof = gpu_roof(gpu["attributes"])
    assert roof is not None
    n = 8.0 * 2**20
    result = run_simulation(
        snapshot,
        f"sim.reduceScatter({n}, algorithm='ring', chunk=0)\n",
        labels={"GPU": 8},
        variables={},
    )
    expected = 7 * 3 * (n / 8) / roof.peak_bytes_per_s
    assert [p["compute_s"] for p in result["processes"]] == [pytest.approx(expected)] * 8
