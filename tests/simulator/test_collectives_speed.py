"""The collectives' and flows' fast paths against their references: the same operations in
the same order, and the same run results to the last bit."""

from __future__ import annotations

import json
import math
import random
from pathlib import Path
from typing import Any

import pytest

from simulator import collectives, flows
from simulator.runner import run_simulation


def _schedules() -> list[tuple[str, str, int, float]]:
    cases = []
    for kind, algorithms in collectives.ALGORITHMS.items():
        for algorithm in algorithms:
            for p, per_host in ((2, 1), (3, 1), (5, 1), (6, 3), (8, 4), (16, 8)):
                for size in (1000.0, 3e6, 2.0**20 * 7 + 13):
                    cases.append((kind, algorithm, p * 100 + per_host, size))
    return cases


@pytest.mark.parametrize("chunk,most", [(512 * 1024, 64), (100000, 0), (0, 0), (1e6, 3)])
def test_the_uniform_program_is_the_heap_program(chunk: float, most: int) -> None:
    checked = whole = 0
    for kind, algorithm, shape, size in _schedules():
        p, per_host = divmod(shape, 100)
        hosts = [i // per_host for i in range(p)]
        try:
            steps = collectives.schedule(kind, algorithm, size, hosts)
        except collectives.ScheduleError:
            continue
        for messages in collectives.messages_by_member(steps, p):
            reference = list(collectives._heap_program(messages, chunk, most))
            assert list(collectives.program(messages, chunk, most)) == reference
            counts = {collectives.pieces(m[3], chunk, most) for m in messages}
            if len(counts) == 1:  # the uniform order itself, one piece each included
                count = counts.pop()
                uniform = collectives._uniform_program(messages, chunk, most, count)
                assert list(uniform) == reference
                if count == 1:  # and the order of whole messages
                    assert list(collectives._whole_program(messages)) == reference
                    whole += 1
            checked += 1
    assert checked > 1000
    if chunk == 0:
        assert whole > 100


def test_a_program_of_pieces_of_different_counts_takes_the_heap() -> None:
    messages = [(0, collectives.SEND, 1, 3e6, False), (1, collectives.RECEIVE, 1, 1e6, True)]
    operations = list(collectives.program(messages, 1e6, 0))
    assert operations == list(collectives._heap_program(messages, 1e6, 0))
    assert [op[4] for op in operations] == [(0, 0), (0, 1), (1, 0), (0, 2)]


def _reference_max_min(flow_list: list[flows.Flow], links: list[flows.FlowLink]) -> None:
    """The progressive filling as it was written before the link-held sums: dicts."""
    remaining = {link: 1.0 for link in links}
    usage = {link: sum(a * f.weight for f, a in link.flows.items()) for link in links}
    unfixed = set(flow_list)
    bounded = [f for f in flow_list if f.bound < math.inf]
    for f in flow_list:
        f.x = 0.0
    open_links = [link for link in links if usage[link] > 0.0]
    while unfixed:
        level = math.inf
        for link in open_links:
            level = min(level, max(remaining[link], 0.0) / usage[link])
        for f in bounded:
            if f in unfixed and f.bound / f.weight < level:
                level = f.bound / f.weight
        if level == math.inf:
            for f in unfixed:
                f.x = math.inf
            return
        threshold = level * (1.0 + 1e-12)
        fixed = [f for f in bounded if f in unfixed and f.bound / f.weight <= threshold]
        still = []
        for link in open_links:
            if max(remaining[link], 0.0) / usage[link] <= threshold:
                fixed.extend(f for f in link.flows if f in unfixed)
            else:
                still.append(link)
        for f in fixed:
            if f not in unfixed:
                continue
            unfixed.discard(f)
            f.x = x = min(level * f.weight, f.bound)
            for link, a in f.links:
                remaining[link] -= a * x
                usage[link] -= a * f.weight
        open_links = [link for link in still if usage[link] > 1e-300]


def test_the_max_min_filling_gives_the_reference_rates_bit_for_bit() -> None:
    rng = random.Random(7)
    for _ in range(200):
        links = [flows.FlowLink(f"l{i}", 0, f"l{i}", "shared") for i in range(rng.randint(1, 6))]
        flow_list = []
        for _ in range(rng.randint(1, 12)):
            crossed = rng.sample(links, rng.randint(1, len(links)))
            bound = rng.choice([math.inf, rng.uniform(1e2, 1e4)])
            flow = flows.Flow(
                [(link, rng.uniform(1e-9, 1e-6)) for link in crossed],
                1e6,
                rng.uniform(0.1, 2.0),
                bound,
                lambda now: None,
            )
            flow_list.append(flow)
            for link, a in flow.links:
                link.flows[flow] = a
        flows.solve_max_min(flow_list, links)
        fast = [f.x for f in flow_list]
        _reference_max_min(flow_list, links)
        assert fast == [f.x for f in flow_list]


APP = """
sim.allreduce(16 * 1024 * 1024)
sim.alltoall(2 * 1024 * 1024, algorithm='pairwise')
sim.allgather(1024 * 1024, algorithm='ring', chunk=100000)
sim.allreduce(8 * 1024 * 1024, algorithm='double_binary_tree')
sim.allreduce(4 * 1024 * 1024, algorithm='ring', chunk=0)
"""
CLUSTER = Path(__file__).resolve().parents[2] / "examples" / "dgx_h100_cluster_4" / "snapshot.json"


@pytest.mark.parametrize(
    "sharing,model",
    [("full-duplex", None), ("shared", None), ("fifo", None), ("full-duplex", "LV08")],
)
def test_a_run_gives_the_reference_results(
    sharing: str, model: str | None, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A 4-node DGX H100 cluster's run with the fast paths, and with the references patched
    in (the heap program, the dict-held filling, the component walk always taken, no
    uniform component): the same result to the last bit. LV08: flows with a bound."""
    system = json.loads(CLUSTER.read_text())
    if model is not None:
        system["networkModel"] = model
    for node in system["nodes"]:
        if node["id"] != "gpu":
            node["sharing"] = sharing
    uniform = flows._solve_uniform
    taken = []

    def counted(*args: Any) -> object:
        found = uniform(*args)
        taken.append(found is not None)
        return found

    monkeypatch.setattr(flows, "_solve_uniform", counted)
    fast = run_simulation(system, APP, labels={"GPU": 16}, variables={})
    if sharing == "full-duplex":  # a ring's steps between nodes, and other components
        assert any(taken) and not all(taken)
    monkeypatch.setattr(collectives, "program", collectives._heap_program)
    monkeypatch.setattr(flows, "solve_max_min", _reference_max_min)
    monkeypatch.setattr(flows.FlowLink, "multi", property(lambda _: 1, lambda _, __: None))
    monkeypatch.setattr(flows, "_solve_uniform", lambda *args: None)
    slow = run_simulation(system, APP, labels={"GPU": 16}, variables={})
    for key in ("overall_time_s", "processes", "collectives", "links", "timeline"):
        assert fast.get(key) == slow.get(key), key
    assert fast["collectives"][0]["time_s"] > 0
    assert ("links" in fast) == (sharing != "fifo")
