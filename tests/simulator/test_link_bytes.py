"""What a run reports per flow link (simulator.flows `FlowLink.result`) is what crossed it: each
link's bytes are the bytes of the flows over it, and a link is idle once its last flow left.

A collective's pieces make flows over two switch ports or more (in at the sender's, out at the
receiver's); when one leaves, the ports it joined may lie in components of their own, each of
which is re-solved (`FlowNetwork._solve_changed`). Checked with the C copies of the flow
solvers and events and with their Python references, and once with PARASIM_PURE_PYTHON set.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from simulator import flows, hotpath
from simulator.runner import run_simulation

ROOT = Path(__file__).resolve().parents[2]
DGX = ROOT / "examples" / "dgx_h100" / "snapshot.json"
CLUSTER = ROOT / "examples" / "dgx_h100_cluster_4" / "snapshot.json"
C_SOLVER: Any = getattr(hotpath.speedups, "flow_solve_from", None)
MIB = 2**20


@pytest.fixture(params=["c", "python"])
def solvers(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    """The flow network's C copies (where built), or its Python references."""
    if request.param == "c":
        if C_SOLVER is None:
            pytest.skip("the C core is not in use")
    else:
        monkeypatch.setattr(flows, "_solve_from", flows.solve_from)
        monkeypatch.setattr(flows, "_solve_uniform", flows.solve_uniform)
        monkeypatch.setattr(flows, "_flow_events", lambda engine: (flows.join, flows.finish))
    return str(request.param)


def _run(snapshot: Path, app: str, gpus: int) -> tuple[dict[str, Any], dict[str, float]]:
    """Run `app` on `gpus` GPUs of `snapshot`; return its result and the bytes of the flows
    started over each link (by the link's name). Checks, after each instant's re-solves,
    that every flow moves at the max-min rate of its component as solved afresh and that a
    link without flows is idle, and that every link is left idle when the run ends."""
    crossed: dict[flows.FlowLink, float] = {}
    start_path: Callable[..., float] = flows.FlowNetwork.start_path
    solve_changed: Callable[[flows.FlowNetwork, object], None] = flows.FlowNetwork._solve_changed
    unfair: list[tuple[float, str, float, float]] = []  # when, a link of the flow, held, fair
    checked = [0]

    def solving(network: flows.FlowNetwork, arg: object) -> None:
        solve_changed(network, arg)
        now, factor = network.engine.now, network.model.bandwidth_factor
        seen: set[flows.Flow] = set()
        for link in network.links.values():
            if not link.flows and (link.used, link.byte_rate) != (0.0, 0.0):
                unfair.append((now, link.id, link.byte_rate, 0.0))
            for flow in link.flows:
                if flow in seen:
                    continue
                on, links = flows.component(flow)
                held = {other: (other.x, other.rate) for other in on}
                flows.solve_max_min(on, links)  # a dry run: only x (and scratch) changes
                for other, (x, rate) in held.items():
                    seen.add(other)
                    checked[0] += 1
                    if other.x * factor != pytest.approx(rate, rel=1e-9):
                        unfair.append((now, other.links[0][0].id, rate, other.x * factor))
                    other.x = x

    def counting(
        network: flows.FlowNetwork,
        path: flows.FlowPath,
        size: float,
        done: Callable[[float], None],
    ) -> float:
        for link, _ in path.links:
            crossed[link] = crossed.get(link, 0.0) + size
        return start_path(network, path, size, done)

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(flows.FlowNetwork, "start_path", counting)
        patch.setattr(flows.FlowNetwork, "_solve_changed", solving)
        result = run_simulation(
            json.loads(snapshot.read_text()), app + "\n", labels={"GPU": gpus}, variables={}
        )
    assert unfair[:5] == []
    assert checked[0] > 0
    idle = [(link.id, len(link.flows), link.used, link.byte_rate) for link in crossed]
    assert idle == [(link.id, 0, 0.0, 0.0) for link in crossed]
    by_name = {link.id: total for link, total in crossed.items()}
    assert len(by_name) == len(crossed)  # one name a link
    return dict(result), by_name


def _assert_links_carry_their_flows(result: dict[str, Any], crossed: dict[str, float]) -> None:
    links = result["links"]
    assert {link["link"] for link in links} == set(crossed)
    reported = {link["link"]: link["bytes"] for link in links}
    assert reported == pytest.approx(crossed, rel=1e-9)


CASES = [
    (f"sim.allreduce({16 * MIB}, algorithm='direct')", 4),  # the report: ->gpu[3] 33.8 MB
    (f"sim.allreduce({16 * MIB}, algorithm='direct', chunk=0)", 8),
    (f"sim.allreduce({4 * MIB}, algorithm='ring')", 8),
    (f"sim.allreduce({4 * MIB}, algorithm='ring', chunk=0)", 5),
    (f"sim.allreduce({4 * MIB}, algorithm='tree')", 8),
    (f"sim.allreduce({4 * MIB}, algorithm='tree', chunk=0)", 6),
    (f"sim.allreduce({4 * MIB}, algorithm='nvls')", 8),
    (f"sim.allreduce({4 * MIB}, algorithm='nvls', chunk={MIB // 4})", 8),
    (f"sim.allreduce({4 * MIB}, algorithm='nvls', chunk=0)", 4),
    (f"sim.alltoall({4 * MIB}, algorithm='direct')", 8),
    (f"sim.allgather({4 * MIB}, algorithm='direct', chunk={MIB // 2})", 6),
]


@pytest.mark.parametrize(("app", "gpus"), CASES)
def test_each_links_bytes_are_those_of_the_flows_that_crossed_it(
    app: str, gpus: int, solvers: str
) -> None:
    result, crossed = _run(DGX, app, gpus)
    _assert_links_carry_their_flows(result, crossed)


def test_the_16_mib_direct_allreduce_puts_its_bytes_on_every_port() -> None:
    """4 GPUs of one NVSwitch, direct: a reduce-scatter, then an allgather, in each of
    which every GPU sends its quarter of 16 MiB to each of the 3 others, so every port in
    and out carries 2 x 3 x 4 MiB = 25.2 MB (the outgoing ones reported 29.5-33.8 MB)."""
    result, _ = _run(DGX, f"sim.allreduce({16 * MIB}, algorithm='direct')", 4)
    expected = 2 * 3 * (16 * MIB / 4)
    assert [link["bytes"] for link in result["links"]] == pytest.approx([expected] * 8, rel=1e-12)


def test_a_tree_over_four_dgx_nodes_frees_the_links_a_piece_leaves(solvers: str) -> None:
    """Across nodes a tree's pieces cross NICs and fabric switches: a link left by a piece
    whose other links were re-solved already must be re-solved too (its flows take the
    freed share), so its bytes and its flows' times are the max-min model's."""
    result, crossed = _run(CLUSTER, f"sim.allreduce({8 * MIB}, algorithm='tree')", 32)
    _assert_links_carry_their_flows(result, crossed)


def test_with_pure_python_the_links_carry_what_crossed_them() -> None:
    """PARASIM_PURE_PYTHON set: no C core anywhere (simulator.hotpath), the same bytes."""
    code = (
        "import json, sys; sys.path.insert(0, 'tests/simulator'); "
        "from test_link_bytes import DGX, _run; "
        f"r, c = _run(DGX, \"sim.allreduce({16 * MIB}, algorithm='direct')\", 4); "
        "print(json.dumps([[l['bytes'] for l in r['links']], [c[l['link']] for l in r['links']]]))"
    )
    env = dict(os.environ, PARASIM_PURE_PYTHON="1")
    child = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, env=env, capture_output=True, text=True
    )
    assert child.returncode == 0, child.stderr
    reported, crossed = json.loads(child.stdout)
    assert reported == pytest.approx(crossed, rel=1e-9)
    assert reported == pytest.approx([2 * 3 * 4 * MIB] * 8, rel=1e-12)


COLLECTIVES = {
    "allreduce": ("ring", "tree", "direct", "nvls", "recursive_doubling"),
    "allgather": ("ring", "direct", "tree"),
    "reduceScatter": ("ring", "direct"),
    "alltoall": ("pairwise", "direct"),
}


@settings(
    max_examples=12, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    call=st.sampled_from(
        [(kind, algorithm) for kind, names in COLLECTIVES.items() for algorithm in names]
    ),
    gpus=st.integers(2, 8),
    size=st.sampled_from([64 * 1024, MIB, 3 * MIB + 4096]),
    pieces=st.sampled_from([None, 0, 1, 3, 16]),
)
def test_random_collectives_put_on_each_link_the_bytes_of_its_flows(
    call: tuple[str, str], gpus: int, size: int, pieces: int | None, solvers: str
) -> None:
    kind, algorithm = call
    chunk = "" if pieces is None else f", chunk={0 if pieces == 0 else size / pieces / gpus}"
    result, crossed = _run(DGX, f"sim.{kind}({size}, algorithm='{algorithm}'{chunk})", gpus)
    _assert_links_carry_their_flows(result, crossed)
