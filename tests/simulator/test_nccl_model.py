"""NCCL's cost layer on the collectives (simulator/nccl_model.py, `protocol=` of the
collective calls): its constants restated from NCCL's source, its per-call latency, its
protocol efficiency, its choice by size, the reduction overlapped with the transfers, and the
default unchanged."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from simulator import nccl_model
from simulator.collectives import ALGORITHMS
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
    # paying NCCL's network latency (LL 2.7 us), the others NVLink's (0.6 us). NCCL's own
    # count, 2 (nNodes - 1) = 2, leaves out the ring's closing edge.
    cluster = Path(SYSTEM).parents[1] / "dgx_h100_cluster_4" / "snapshot.json"
    program = "sim.allreduce(65536, algorithm='ring', protocol='LL')\n"
    one = run_simulation(json.loads(cluster.read_text()), program, labels={"GPU": 8}, variables={})
    two = run_simulation(json.loads(cluster.read_text()), program, labels={"GPU": 16}, variables={})
    assert one["collectives"][0]["protocol_latency_s"] == pytest.approx((6.6 + 14 * 0.6) * 1e-6)
    assert two["collectives"][0]["protocol_latency_s"] == pytest.approx(
        (6.6 + 3 * 2.7 + 27 * 0.6) * 1e-6
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
