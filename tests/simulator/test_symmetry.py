"""Symmetric collectives (simulator.symmetry): a call simulated once per orbit of ranks gives
the full simulation's answer, and a call the proof does not cover is simulated in full."""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

import pytest

from simulator import collectives
from simulator.cli import main
from simulator.runner import run_simulation
from simulator.symmetry import _messages, _schedule_invariant, _schedule_tables

CLUSTER = Path(__file__).resolve().parents[2] / "examples" / "dgx_h100_cluster_128"
RELATIVE = 1e-12


def cluster() -> dict[str, Any]:
    return json.loads((CLUSTER / "snapshot.json").read_text())


def both(
    app: str, gpus: int, snapshot: dict[str, Any] | None = None, limit: int = 10_000
) -> tuple[Any, Any]:
    """The run with symmetry asked for, and the same run in full."""
    system = snapshot or cluster()
    arguments: dict[str, Any] = {
        "labels": {"GPU": gpus},
        "variables": {},
        "timeline_limit": limit,
    }
    symmetric = run_simulation(system, app, symmetry=True, **arguments)
    full = run_simulation(system, app, **arguments)
    return symmetric, full


def close(a: float, b: float) -> bool:
    return a == b or abs(a - b) <= RELATIVE * max(abs(a), abs(b))


def assert_same(symmetric: Any, full: Any) -> None:
    """Completion times, every process's figures, the calls' records and every link's
    figures agree to RELATIVE."""
    assert close(symmetric["overall_time_s"], full["overall_time_s"])
    for mine, theirs in zip(symmetric["processes"], full["processes"], strict=True):
        for key, value in theirs.items():
            if isinstance(value, float):
                assert close(mine[key], value), (mine["process"], key, mine[key], value)
            else:
                assert mine[key] == value, (key, mine[key], value)
    for mine, theirs in zip(symmetric["collectives"], full["collectives"], strict=True):
        for key in ("start_s", "end_s", "time_s", "algbw", "busbw", "messages", "wire_bytes"):
            assert close(mine[key], theirs[key]), (key, mine[key], theirs[key])
    links = {link["link"]: link for link in symmetric.get("links", [])}
    assert set(links) == {link["link"] for link in full.get("links", [])}
    for theirs in full.get("links", []):
        mine = links[theirs["link"]]
        for key in ("bytes", "peak_utilisation", "mean_utilisation", "saturated_s"):
            assert close(mine[key], theirs[key]) or abs(mine[key] - theirs[key]) < 1e-15, (
                theirs["link"],
                key,
                mine[key],
                theirs[key],
            )
        # four decimals: a value at a rounding edge may land on either side
        series = zip(mine["utilisation_series"], theirs["utilisation_series"], strict=True)
        assert all(abs(a - b) <= 1.01e-4 for a, b in series), theirs["link"]
    rows = zip(symmetric["components"], full["components"], strict=True)
    for mine, theirs in rows:
        assert (mine["node"], mine["instance"]) == (theirs["node"], theirs["instance"])
        assert close(mine["busy_s"], theirs["busy_s"]) or abs(mine["busy_s"]) < 1e-15
    energy, energy_full = symmetric["energy_j"]["total"], full["energy_j"]["total"]
    assert abs(energy - energy_full) <= 1e-9 * energy_full


@pytest.mark.parametrize(
    ("gpus", "app", "period"),
    [
        (8, "sim.allreduce(2**26, algorithm='ring')\n", 1),
        (16, "sim.allreduce(2**26, algorithm='ring')\n", 8),
        (64, "sim.allreduce(2**28, algorithm='ring')\n", 32),
        (16, "sim.allgather(2**26, algorithm='ring', chunk=0)\n", 8),
        (16, "sim.reduceScatter(2**26, algorithm='ring')\n", 8),
        # each member sends to 0, 1, ... in that order: not a rotation of another's order
        (16, "sim.allreduce(2**24, algorithm='direct', chunk=0)\n", None),
        # i xor 2^k shifted by 8 (mod 16) is (i + 8) xor 2^k for every k < 4
        (16, "sim.allreduce(2**24, algorithm='recursive_doubling', chunk=0)\n", 8),
        (16, "sim.alltoall(2**24, algorithm='pairwise', chunk=0)\n", 8),
    ],
)
def test_symmetric_equals_full(gpus: int, app: str, period: int | None) -> None:
    """Where a rotation is proven, the call is simulated by `period` members (None: none
    is, the call runs in full); either way the answer is the full simulation's."""
    symmetric, full = both(app, gpus)
    assert "symmetry" not in full
    if period is None:
        assert symmetric["symmetry"] == {"used": False, "calls": [], "redone": None}
        assert_same(symmetric, full)
        return
    assert symmetric["symmetry"]["used"]
    assert symmetric["symmetry"]["calls"][0]["period"] == period
    assert symmetric["collectives"][0]["symmetry"] == {"period": period, "simulated": period}
    assert_same(symmetric, full)


@pytest.mark.parametrize("limit", [0, 40, 10_000])
def test_resource_timeline(limit: int) -> None:
    """Every busy period of every component instance, as the full simulation records them
    when the timeline holds them all; with the timeline full (or none kept) a member's
    periods are counted rather than replayed one by one, and busy times still agree."""
    app = "sim.allreduce(2**24, algorithm='ring')\n"
    symmetric, full = both(app, 16, limit=limit)
    assert symmetric["symmetry"]["used"]
    assert_same(symmetric, full)
    if limit < 10_000:
        return
    assert not full["resource_timeline_dropped"]

    def periods(result: Any) -> list[tuple[Any, ...]]:
        rows = result["resource_timeline"]
        return sorted((r["node"], r["instance"], r["start_s"], r["end_s"]) for r in rows)

    mine, theirs = periods(symmetric), periods(full)
    assert len(mine) == len(theirs)
    for a, b in zip(mine, theirs, strict=True):
        assert a[:2] == b[:2] and close(a[2], b[2]) and close(a[3], b[3]), (a, b)


def test_two_calls_in_a_row() -> None:
    """A barrier between two calls: the first is symmetric; at the second the engine still
    holds the first's superseded flow ends, so "nothing else scheduled" cannot be shown and
    it runs in full. Without the barrier the members end the first at different instants
    and call the second then: they waited at its start, so the run is redone in full, and
    says why. Every way, the full simulation's answer."""
    app = "sim.allreduce(2**24, algorithm='ring')\nsim.barrier()\n"
    app += "sim.allgather(2**24, algorithm='ring')\n"
    symmetric, full = both(app, 16)
    assert len(symmetric["symmetry"]["calls"]) == 1
    assert "symmetry" not in symmetric["collectives"][1]
    assert_same(symmetric, full)
    symmetric, full = both(app.replace("sim.barrier()\n", ""), 16)
    assert symmetric["symmetry"]["calls"] == []
    assert "different times" in symmetric["symmetry"]["redone"]
    assert_same(symmetric, full)


def test_route_asymmetry_is_refused() -> None:
    """40 GPUs: five nodes, the fifth on another leaf; no rotation maps the ring's routes onto
    themselves (a step through the spines against steps within a leaf)."""
    symmetric, full = both("sim.allreduce(2**24, algorithm='ring')\n", 40)
    assert symmetric["symmetry"] == {"used": False, "calls": [], "redone": None}
    assert "symmetry" not in symmetric["collectives"][0]
    assert_same(symmetric, full)


def star(ranks: int, slow: int | None) -> dict[str, Any]:
    """`ranks` hosts, each joined to one switch by a full-duplex link of its own; link
    `slow` (if any) has a tenth of the others' bandwidth."""
    source = cluster()["models"]["link"]
    hardware: dict[str, Any] = {
        "host": {"type": "CPU", "name": "host", "attributes": {}},
        "link": {
            "type": "NETWORK",
            "name": "link",
            "attributes": {"bandwidth": 1e10, "latency": 1e-6},
        },
        "slow": {
            "type": "NETWORK",
            "name": "slow",
            "attributes": {"bandwidth": 1e9, "latency": 1e-6},
        },
    }
    nodes: list[dict[str, Any]] = [
        {"id": "S", "hardware": "link", "model": "link", "sharing": "full-duplex"}
    ]
    edges = []
    for i in range(ranks):
        nodes.append({"id": f"H{i}", "hardware": "host", "labels": {"GPU": 1}})
        nodes.append(
            {
                "id": f"L{i}",
                "hardware": "slow" if i == slow else "link",
                "model": "link",
                "sharing": "full-duplex",
            }
        )
        edges += [[f"H{i}", f"L{i}"], [f"L{i}", "S"]]
    return {
        "name": "star",
        "hardware": hardware,
        "models": {"link": source},
        "nodes": nodes,
        "edges": edges,
    }


@pytest.mark.parametrize("slow", [None, 3])
def test_asymmetric_bandwidth_is_refused(slow: int | None) -> None:
    """Hosts that are nodes of their own (one of them on a slower link): no rotation maps a
    member's node onto another's, so the call is simulated in full, with the same answer."""
    symmetric, full = both("sim.allreduce(2**24, algorithm='ring')\n", 8, star(8, slow))
    assert symmetric["symmetry"] == {"used": False, "calls": [], "redone": None}
    assert_same(symmetric, full)


def test_cross_traffic_is_simulated_in_full() -> None:
    """A message still in flight when the call starts: the call is simulated in full (no
    member waited longer for it, so the run is not redone)."""
    app = (
        "if rank == 0:\n"
        "    sim.p2pCommunicationSend(2**26, 'GPU', target_rank=9)\n"
        "sim.allreduce(2**24, algorithm='ring')\n"
        "if rank == 9:\n"
        "    sim.p2pCommunicationReceive('GPU', 0)\n"
    )
    symmetric, full = both(app, 16)
    assert symmetric["symmetry"] == {"used": False, "calls": [], "redone": None}
    assert_same(symmetric, full)


def test_late_member_redoes_the_run() -> None:
    """A member that calls later than the others: the members already waited for it, so the
    whole run is simulated again in full, and says so."""
    app = (
        "if rank == 0:\n"
        "    sim.p2pCommunicationSend(2**26, 'GPU', target_rank=9)\n"
        "if rank == 9:\n"
        "    sim.p2pCommunicationReceive('GPU', 0)\n"
        "sim.allreduce(2**24, algorithm='ring')\n"
    )
    symmetric, full = both(app, 16)
    assert not symmetric["symmetry"]["used"]
    assert "different times" in symmetric["symmetry"]["redone"]
    assert_same(symmetric, full)


def test_schedule_invariance() -> None:
    """The schedule's proof: a ring is invariant under every rotation; recursive doubling
    over 16 only under the rotation by 8 (bit 3 flipped is 8 added, mod 16); a tree under
    none."""
    hosts = [0] * 16

    def tables(kind: str, algorithm: str) -> Any:
        steps = collectives.schedule(kind, algorithm, 2**20, hosts)
        return _schedule_tables(steps, 16)

    runs, ring = tables("allreduce", "ring")
    assert runs == [(0, 15), (15, 15)]  # reduce-scatter steps, then allgather steps
    assert all(_schedule_invariant(ring, d) for d in (1, 2, 4, 8))
    _, doubling = tables("allreduce", "recursive_doubling")
    assert [d for d in (1, 2, 4, 8) if _schedule_invariant(doubling, d)] == [8]
    _, tree = tables("allreduce", "tree")
    assert not any(_schedule_invariant(tree, d) for d in (1, 2, 4, 8))


def test_representatives_messages_are_the_programs() -> None:
    """The representatives' messages made from the runs of steps are what
    `messages_by_member` gives them, in their programs' order (by step, sends first)."""
    hosts = [0] * 16
    for kind, algorithm in (("allreduce", "ring"), ("alltoall", "pairwise")):
        steps = collectives.schedule(kind, algorithm, 2**20, hosts)
        runs, tables = _schedule_tables(steps, 16)
        made = _messages(runs, tables, 8)
        full = collectives.messages_by_member(steps, 16)
        for member in range(8):
            ordered = sorted(full[member], key=lambda m: (m[0], m[1]))
            assert made[member] == ordered


def test_command_line(tmp_path: Path) -> None:
    """`run --symmetry` asks for it; the JSON says it was used, and the same time as without."""
    app = tmp_path / "app.py"
    app.write_text("sim.allreduce(2**24, algorithm='ring')\n")
    times = []
    for options in (["--symmetry"], []):
        out = tmp_path / "out.json"
        argv = ["run", "--no-sandbox", "--system", str(CLUSTER / "snapshot.json")]
        argv += ["--app", str(app), "--labels", "GPU=16", "--json", str(out), *options]
        assert main(argv, stdout=io.StringIO(), stderr=io.StringIO()) == 0
        result = json.loads(out.read_text())
        assert ("symmetry" in result) == bool(options)
        if options:
            assert result["symmetry"]["used"]
        times.append(result["overall_time_s"])
    assert close(times[0], times[1])
    printed = io.StringIO()
    argv = ["run", "--no-sandbox", "--system", str(CLUSTER / "snapshot.json"), "--app", str(app)]
    assert main([*argv, "--labels", "GPU=16", "--symmetry"], stdout=printed) == 0
    assert "Symmetry:     used; members simulated per call: 8 of 16" in printed.getvalue()
