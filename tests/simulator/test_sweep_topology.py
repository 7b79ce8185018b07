"""Topology-parameter axes (simulator.sweep): a template's parameter or endpoint count swept
on the point's own snapshot, its switch and link counts following the template's rules."""

from __future__ import annotations

import copy
import io
import json
from pathlib import Path
from typing import Any

import pytest

from simulator.cli import main
from simulator.runner import run_simulation
from simulator.sweep import AxisError, apply_point, parse_axes

ROOT = Path(__file__).resolve().parents[2]
CLUSTER = ROOT / "examples" / "dgx_h100_cluster_4" / "snapshot.json"
ALLREDUCE = "sim.allreduce(size, algorithm='ring', chunk=0)\n"


def cluster() -> dict[str, Any]:
    """Four DGX H100: 32 GPUs in NVSwitch domains of 8 (`nvlink`), their NICs on a two-level
    fat tree (`ndr`)."""
    return json.loads(CLUSTER.read_text())


def counts(snapshot: dict[str, Any]) -> dict[str, int]:
    return {node["id"]: node["count"] for node in snapshot["nodes"]}


def test_a_domain_size_axis_sets_the_template_and_its_switch_count_on_a_copy() -> None:
    snapshot = cluster()
    before = copy.deepcopy(snapshot)
    axes = parse_axes({"topology.nvlink.domainSize": [8, 16, 32]}, snapshot)
    switches = []
    for size in (8, 16, 32):
        variant, labels, variables = apply_point(
            snapshot, {"GPU": 32}, axes, {"topology.nvlink.domainSize": size}
        )
        nvlink = next(t for t in variant["topologies"] if t["id"] == "nvlink")
        assert nvlink["domainSize"] == size
        switches.append(counts(variant)["nvswitch"])
        assert labels == {"GPU": 32} and variables == {}
        assert variant["hardware"] == snapshot["hardware"]  # no record cloned
    assert switches == [4, 2, 1]  # ceil(32 GPUs / the domain)
    assert snapshot == before


def test_a_bigger_nvswitch_domain_makes_a_cross_domain_allreduce_faster() -> None:
    # 16 GPUs: two DGX. With domains of 8 the ring crosses NIC -> leaf -> spine at 50 GB/s
    # (ConnectX-7, Quantum-2); one domain of 16 keeps it on NVLink at 450 GB/s per GPU.
    snapshot = cluster()
    axes = parse_axes({"topology.nvlink.domainSize": [8, 16]}, snapshot)
    times = {}
    for size in (8, 16):
        variant, labels, _ = apply_point(
            snapshot, {"GPU": 16}, axes, {"topology.nvlink.domainSize": size}
        )
        counts_ = {label: int(count) for label, count in labels.items()}  # type: ignore[call-overload]
        result = run_simulation(variant, ALLREDUCE, labels=counts_, variables={"size": 1e9})
        times[size] = result["overall_time_s"]
    assert times[16] < times[8] / 4  # the slowest hop of the ring: 50 vs 450 GB/s


def test_a_fat_tree_level_and_its_endpoint_count_scale_the_network_together() -> None:
    snapshot = cluster()
    axes = parse_axes(
        {"topology.ndr.endpoints": [16, 32], "topology.ndr.down[1]": [2, 4]}, snapshot
    )
    variant, labels, _ = apply_point(
        snapshot, {"GPU": 32}, axes, {"topology.ndr.endpoints": 16, "topology.ndr.down[1]": 2}
    )
    ndr = next(t for t in variant["topologies"] if t["id"] == "ndr")
    assert ndr["down"] == [8, 2]
    assert counts(variant) == {"gpu": 32, "nvswitch": 4, "nic": 16, "leaf": 2, "spine": 8}
    assert labels == {"GPU": 32}  # the NIC node carries no label
    # 16 NICs under leaves of 8 cannot have 4 leaves: refused naming the axis and the field
    with pytest.raises(AxisError) as raised:
        apply_point(
            snapshot, {"GPU": 32}, axes, {"topology.ndr.endpoints": 16, "topology.ndr.down[1]": 4}
        )
    assert raised.value.field == "axes.topology.ndr.down[1]"
    assert "down: The product of down (8 x 4 = 32)" in raised.value.message
    assert "'nic' (16)" in raised.value.message


def test_an_endpoint_count_axis_sets_the_processes_of_the_endpoints_labels() -> None:
    snapshot = cluster()
    axes = parse_axes({"topology.nvlink.endpoints": [8, 24]}, snapshot)
    variant, labels, _ = apply_point(snapshot, {"GPU": 32}, axes, {"topology.nvlink.endpoints": 24})
    assert labels == {"GPU": 24}
    assert counts(variant)["gpu"] == 24 and counts(variant)["nvswitch"] == 3


def test_a_fat_tree_up_list_is_given_whole_or_as_text() -> None:
    snapshot = cluster()
    axes = parse_axes({"topology.ndr.up": [[1, 8], "1x4"]}, snapshot)
    variant, _, _ = apply_point(snapshot, {"GPU": 32}, axes, {"topology.ndr.up": "1x4"})
    assert next(t for t in variant["topologies"] if t["id"] == "ndr")["up"] == [1, 4]
    assert counts(variant)["spine"] == 4


@pytest.mark.parametrize(
    ("axes", "field", "words"),
    [
        ({"topology.ib.down": [[8, 4]]}, "axes.topology.ib.down", "No topology template 'ib'"),
        (
            {"topology.nvlink.dims": [[2, 2]]},
            "axes.topology.nvlink.dims",
            "A nvswitch template has no parameter 'dims'; expected one of domainSize",
        ),
        ({"topology.ndr.up[2]": [1]}, "axes.topology.ndr.up[2]", "up has 2 levels"),
        ({"topology.nvlink.domainSize": [8, 0]}, "axes.topology.nvlink.domainSize[1]", "whole"),
        ({"topology.ndr.down": [[8, 4], "8y4"]}, "axes.topology.ndr.down[1]", "list of 1 to 4"),
        (
            {"topology.ndr.down": [[8, 8]]},
            "axes.topology.ndr.down[0]",
            "down: The product of down (8 x 8 = 64) must equal the count of the endpoints node",
        ),
        ({"topology.ndr.routing": ["dor"]}, "axes.topology.ndr.routing[0]", "Unknown routing"),
        ({"topology.nvlink.endpoints": [0]}, "axes.topology.nvlink.endpoints[0]", "at least 1"),
        (
            {"labels.GPU": [8], "topology.nvlink.endpoints": [8]},
            "axes.topology.nvlink.endpoints",
            "A labels axis already sets the instances of node 'gpu'",
        ),
    ],
)
def test_bad_topology_axes_are_refused_naming_the_field(
    axes: dict[str, list[object]], field: str, words: str
) -> None:
    with pytest.raises(AxisError) as raised:
        parse_axes(axes, cluster())
    assert raised.value.field == field
    assert words in raised.value.message


def _cli(tmp_path: Path, *axes: str) -> tuple[int, str, str]:
    app = tmp_path / "app.py"
    app.write_text(ALLREDUCE)
    out, err = io.StringIO(), io.StringIO()
    argv = ["sweep", "--system", str(CLUSTER), "--app", str(app), "--labels", "GPU=16"]
    argv += ["--var", "size=1e8", "--no-sandbox", "--jobs", "1", "--json", "-", *axes]
    return main(argv, stdout=out, stderr=err), out.getvalue(), err.getvalue()


def test_the_cli_sweeps_a_topology_parameter(tmp_path: Path) -> None:
    status, out, err = _cli(tmp_path, "--axis", "topology.nvlink.domainSize=8,16")
    assert status == 0, err
    points = json.loads(out)["runs"]
    assert [p["axes"] for p in points] == [
        {"topology.nvlink.domainSize": 8},
        {"topology.nvlink.domainSize": 16},
    ]
    first, second = (p["result"]["overall_time_s"] for p in points)
    assert second < first


def test_the_cli_refuses_a_point_the_template_refuses_naming_the_axis(tmp_path: Path) -> None:
    status, _, err = _cli(
        tmp_path, "--axis", "topology.ndr.endpoints=16,32", "--axis", "topology.ndr.down[1]=2"
    )
    assert status == 2
    assert (
        "--axis topology.ndr.down[1]: At topology.ndr.endpoints=32, topology.ndr.down[1]=2" in err
    )


P2P = """
if rank == 0:
    sim.p2pCommunicationSend(size, "GPU", None, target)
elif rank == target:
    sim.p2pCommunicationReceive("GPU", 0)
"""


def test_a_template_s_switch_bandwidth_is_its_node_s_attribute_axis() -> None:
    # GPU 0 to GPU 15 crosses NIC, leaf, spine, leaf, NIC; the spine's ports at half the
    # Quantum-2 rate become the route's slowest hop (the leaves keep the shared record's).
    snapshot = cluster()
    axes = parse_axes({"spine.bandwidth": [50e9, 25e9]}, snapshot)
    times = []
    for bandwidth in (50e9, 25e9):
        variant, _, _ = apply_point(snapshot, {"GPU": 32}, axes, {"spine.bandwidth": bandwidth})
        result = run_simulation(
            variant, P2P, labels={"GPU": 32}, variables={"size": 1e9, "target": 15}
        )
        times.append(result["overall_time_s"])
    latency = 2 * 1e-6 + 3 * 3.3e-7  # two NICs and three switch ports, as the records say
    assert times[0] == pytest.approx(1e9 / 50e9 + latency, rel=1e-9)
    assert times[1] == pytest.approx(1e9 / 25e9 + latency, rel=1e-9)


def torus() -> dict[str, Any]:
    """Eight endpoints on a 2 x 4 torus (no model or application needed to apply axes)."""
    return {
        "hardware": {
            "chip": {"name": "chip", "type": "GPU", "attributes": {"SMs": 1}},
            "wire": {"name": "wire", "type": "NETWORK", "attributes": {"bandwidth": 1e9}},
        },
        "nodes": [
            {"id": "chip", "hardware": "chip", "count": 8, "labels": {"GPU": 1}},
            {"id": "wire", "hardware": "wire", "count": 16},
        ],
        "topologies": [
            {"id": "t", "kind": "torus", "endpoints": "chip", "link": "wire", "dims": [2, 4]}
        ],
    }


def test_torus_dims_are_swept_whole_or_one_at_a_time_with_the_endpoints() -> None:
    snapshot = torus()
    axes = parse_axes({"topology.t.dims": [[2, 4], "2x2x2", [4, 2]]}, snapshot)
    variant, _, _ = apply_point(snapshot, {"GPU": 8}, axes, {"topology.t.dims": "2x2x2"})
    assert variant["topologies"][0]["dims"] == [2, 2, 2]
    assert counts(variant) == {"chip": 8, "wire": 24}  # a link per endpoint and dimension
    with pytest.raises(AxisError) as raised:
        parse_axes({"topology.t.dims": [[2, 4], [3, 3]]}, snapshot)
    assert raised.value.field == "axes.topology.t.dims[1]"
    assert "dims: The product of dims (3 x 3 = 9)" in raised.value.message
    scaled = parse_axes({"topology.t.endpoints": [8, 16], "topology.t.dims[1]": [4, 8]}, snapshot)
    variant, labels, _ = apply_point(
        snapshot, {"GPU": 8}, scaled, {"topology.t.endpoints": 16, "topology.t.dims[1]": 8}
    )
    assert counts(variant) == {"chip": 16, "wire": 32} and labels == {"GPU": 16}
    with pytest.raises(AxisError, match=r"At topology.t.endpoints=16, topology.t.dims\[1\]=4"):
        apply_point(
            snapshot, {"GPU": 8}, scaled, {"topology.t.endpoints": 16, "topology.t.dims[1]": 4}
        )


def test_a_label_count_axis_on_a_template_s_endpoints_resizes_its_switches() -> None:
    snapshot = cluster()
    axes = parse_axes({"labels.GPU": [8, 20]}, snapshot)
    variant, labels, _ = apply_point(snapshot, {"GPU": 32}, axes, {"labels.GPU": 20})
    assert labels == {"GPU": 20}
    assert counts(variant)["gpu"] == 20 and counts(variant)["nvswitch"] == 3  # ceil(20 / 8)
