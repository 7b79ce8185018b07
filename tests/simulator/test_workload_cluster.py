"""The workloads' cluster templates (simulator.workloads.cluster) read their links from the
seed records that the ready system models of the network issue copy, so that a workload on
`dgx-h100` and a collective on examples/dgx_h100_cluster_4 cross the same fabric."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from simulator.gpu_catalogue import SEED, record_attributes
from simulator.runner import run_simulation
from simulator.workloads.cluster import (
    FABRIC_SWITCH_HOPS,
    TEMPLATES,
    cluster_snapshot,
    rank_label,
)

ROOT = Path(__file__).resolve().parents[2]


def ready(folder: str) -> dict[str, Any]:
    return json.loads((ROOT / "examples" / folder / "snapshot.json").read_text())


def seed(name: str) -> dict[str, Any]:
    data = json.loads(SEED.read_text(encoding="utf-8"))
    record = next(r for r in data["components"] if r["name"] == name)
    return record_attributes(record, name)


@pytest.mark.parametrize(("system", "folder"), [("dgx-h100", "dgx_h100_cluster_4")])
def test_the_templates_fabric_is_the_ready_clusters_route_between_two_nodes(
    system: str, folder: str
) -> None:
    hardware = ready(folder)["hardware"]
    template = TEMPLATES[system]
    nvswitch = hardware["nvswitch"]["attributes"]
    nic, switch = hardware["nic"]["attributes"], hardware["switch"]["attributes"]
    assert template.nvlink_latency_s == nvswitch["latency"]
    assert template.nvlink_bytes_per_s == nvswitch["bandwidth"]
    assert template.nvls == (nvswitch.get("nvls") == 1)
    # NIC, leaf, spine, leaf, NIC (tests/simulator/test_topology.py)
    assert FABRIC_SWITCH_HOPS == 3
    assert template.network_latency_s == pytest.approx(
        2 * nic["latency"] + 3 * switch["latency"], rel=1e-12
    )
    assert template.network_bytes_per_s == min(nic["bandwidth"], switch["bandwidth"])


@pytest.mark.parametrize(
    ("system", "nvswitch", "nic", "switch"),
    [
        (
            "dgx-a100",
            "NVLink 3 (A100 SXM4, 12 links)",
            "InfiniBand HDR 200 Gb/s (ConnectX-6)",
            None,
        ),
        (
            "dgx-h100",
            "NVSwitch (HGX H100, NVLink 4)",
            "InfiniBand NDR 400 Gb/s (ConnectX-7)",
            "NVIDIA Quantum-2 QM9700 NDR switch (one 400 Gb/s port)",
        ),
        (
            "dgx-h200",
            "NVSwitch (HGX H100, NVLink 4)",
            "InfiniBand NDR 400 Gb/s (ConnectX-7)",
            "NVIDIA Quantum-2 QM9700 NDR switch (one 400 Gb/s port)",
        ),
        (
            "dgx-b200",
            "NVSwitch (HGX B200, NVLink 5)",
            "InfiniBand NDR 400 Gb/s (ConnectX-7)",
            "NVIDIA Quantum-2 QM9700 NDR switch (one 400 Gb/s port)",
        ),
    ],
)
def test_every_templates_links_are_its_seed_records(
    system: str, nvswitch: str, nic: str, switch: str | None
) -> None:
    template = TEMPLATES[system]
    assert (template.nvswitch, template.nic, template.switch) == (nvswitch, nic, switch)
    link, adapter = seed(nvswitch), seed(nic)
    port = seed(switch) if switch else {"latency": 0.0, "bandwidth": adapter["bandwidth"]}
    assert template.nvlink_latency_s == link["latency"]
    assert template.nvlink_bytes_per_s == link["bandwidth"]
    assert template.network_latency_s == 2 * adapter["latency"] + 3 * port["latency"]
    assert template.network_bytes_per_s == min(adapter["bandwidth"], port["bandwidth"])
    snapshot = cluster_snapshot(template, 16)
    for key, latency, bandwidth in (
        ("nvswitch", template.nvlink_latency_s, template.nvlink_bytes_per_s),
        ("ib", template.network_latency_s, template.network_bytes_per_s),
    ):
        attributes = snapshot["hardware"][key]["attributes"]
        assert (attributes["latency"], attributes["bandwidth"]) == (latency, bandwidth)


def test_only_the_nvswitches_with_nvlink_sharp_in_their_record_run_nvls() -> None:
    assert {name: t.nvls for name, t in TEMPLATES.items()} == {
        "dgx-a100": False,
        "dgx-h100": True,
        "dgx-h200": True,
        "dgx-b200": True,
    }


READY_P2P = """
if rank == 0:
    sim.p2pCommunicationSend(size, "GPU", None, target)
elif rank == target:
    sim.p2pCommunicationReceive("GPU", 0)
"""

WORKLOAD_P2P = """
if tag == "g00000":
    sim.p2pCommunicationSend(size, "g%05d" % target, None, 0)
elif tag == "g%05d" % target:
    sim.p2pCommunicationReceive("g00000", 0)
"""


@pytest.mark.parametrize("target", [7, 15])
def test_a_message_takes_the_same_time_on_dgx_h100_and_on_the_4_node_cluster(
    target: int,
) -> None:
    """GPU 7 shares GPU 0's NVSwitch; GPU 15 is on the next DGX, across the NDR fabric."""
    size = 1e9
    variables = {"size": size, "target": target}
    on_ready = run_simulation(
        ready("dgx_h100_cluster_4"), READY_P2P, labels={"GPU": 32}, variables=variables
    )
    workload = cluster_snapshot(TEMPLATES["dgx-h100"], 16)
    on_workload = run_simulation(
        workload,
        WORKLOAD_P2P,
        labels={rank_label(rank): 1 for rank in range(16)},
        variables=variables,
    )
    assert on_workload["overall_time_s"] == pytest.approx(on_ready["overall_time_s"], rel=1e-12)
