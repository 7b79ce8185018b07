"""Cluster templates for the workloads: DGX-like nodes of 8 GPUs on an NVSwitch, the nodes
joined by an InfiniBand fabric, one GPU per label `gNNNNN` (the workload's global rank)."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from simulator.gpu_catalogue import SEED, GpuCatalogue, record_attributes
from simulator.workloads.kernels import KernelTimer, gpu_record

# A GPU node's model: the workload's generator has timed each kernel by the GPU models
# (simulator.workloads.kernels) and hands the sum in `seconds`, timed at the record's SM clock
# (`kernelTimedClock`). The sum scales with the clock the record holds at run time, so a
# prediction interval's draw of the kernel model's residual (simulator.uncertainty, which
# multiplies the speed attributes by one factor) divides the kernel time by that factor;
# unperturbed, the ratio is exactly 1.
# A collective's reduction of a received piece streams its operands through DRAM.
KERNEL_SUM_MODEL = (
    "function computationTime(params) {\n"
    "  return params.get('seconds') * (kernelTimedClock / SMCoreClock);\n"
    "}\n"
    "function reduceTime(size, params) { return params.get('bytes') / reduceBandwidth; }"
)
# The model's name says which model timed its kernels: simulator.uncertainty applies that
# model's residual on the GPU to it ("... timed by <model>").
KERNEL_SUM_NAME = "workload kernels timed by GPU kernel (current architectures)"
# A cloud instance's hourly rate covers its NVSwitches and network adapters: where the GPU's
# record carries an `hourlyRental` (per GPU), the fabric's records carry 0 (and no power
# price: the instance's rate includes its power) so that the run's
# cost (simulator.cost) is the GPUs' rental alone and names nothing as unpriced.
LINK_MODEL = "function p2pTime(size, params) { return latency + size / bandwidth; }"


# The templates' links are the seed's records (hwdb/seed/hardware.json, each value with its
# source there), the ones the ready system models of the network issue copy
# (examples/topologies/build.py), so that a workload on `dgx-h100` and a collective on
# examples/dgx_h100_cluster_4 cross the same fabric. They are read once, when this module is
# imported: a sandboxed child imports its modules before it drops the rights to read files
# (simulator/sandbox/child.py).
FABRIC_SWITCH_HOPS = 3
"""Switch ports a message between two nodes crosses on the InfiniBand fabric: leaf, spine,
leaf of a two-level fat-tree, as every message between two nodes of
examples/dgx_h100_cluster_4 does (one leaf per DGX there: NIC, leaf, spine, leaf, NIC;
tests/simulator/test_topology.py). The workload's fabric is one latency-bandwidth node, so
it charges that route's latency once: its two adapters and three switch ports."""


def _seed_links() -> dict[str, dict[str, float | str]]:
    data = json.loads(SEED.read_text(encoding="utf-8"))
    return {
        str(record["name"]): record_attributes(record, str(record["name"]))
        for record in data["components"]
        if record.get("type") == "NETWORK"
    }


_LINKS = _seed_links()


def _link(name: str, key: str) -> float:
    return float(_LINKS[name][key])


@dataclass(frozen=True)
class ClusterTemplate:
    """A cluster of DGX-like nodes: its GPU's record and the seed records of its links
    (`nvswitch`, `nic`, `switch`), from which its link figures are read."""

    name: str
    gpu: str
    gpus_per_node: int
    nvswitch: str
    """The seed record of the node's NVLink domain: a GPU reaches every other of its node
    through it at the GPU's NVLink rate, one hop."""
    nic: str
    """The seed record of each GPU's InfiniBand adapter (one per GPU)."""
    switch: str | None
    """The seed record of one port of the fabric's switches; None where the seed has none
    (the route then charges its adapters' latency alone: a lower bound)."""
    source: str

    @property
    def nvlink_bytes_per_s(self) -> float:
        return _link(self.nvswitch, "bandwidth")

    @property
    def nvlink_latency_s(self) -> float:
        return _link(self.nvswitch, "latency")

    @property
    def network_bytes_per_s(self) -> float:
        """The slowest port of the route between two nodes (adapters and switch ports)."""
        rates = [_link(self.nic, "bandwidth")]
        if self.switch is not None:
            rates.append(_link(self.switch, "bandwidth"))
        return min(rates)

    @property
    def network_latency_s(self) -> float:
        """The latency of the route between two nodes: the sender's and the receiver's
        adapters and FABRIC_SWITCH_HOPS switch ports."""
        switch = 0.0 if self.switch is None else _link(self.switch, "latency")
        return 2 * _link(self.nic, "latency") + FABRIC_SWITCH_HOPS * switch

    @property
    def nvls(self) -> bool:
        """Whether the node's NVSwitch supports NVLink SHARP (the record's `nvls`, which the
        simulator's `algorithm="nvls"` needs; its source is in the record): the H100's and
        the B200's NVSwitch records say 1, the A100's NVLink record has none (NCCL runs no
        NVLS below compute capability 9.0: NVIDIA/nccl
        @5067397c2676d5aed50042fc39e5c8ee96eb0027 src/graph/search.cc line 1124)."""
        return _LINKS[self.nvswitch].get("nvls") == 1


# Seed records of the templates' links (hwdb/seed/hardware.json).
NVLINK_A100 = "NVLink 3 (A100 SXM4, 12 links)"
NVSWITCH_H100 = "NVSwitch (HGX H100, NVLink 4)"
NVSWITCH_B200 = "NVSwitch (HGX B200, NVLink 5)"
HDR_NIC = "InfiniBand HDR 200 Gb/s (ConnectX-6)"
NDR_NIC = "InfiniBand NDR 400 Gb/s (ConnectX-7)"
QM9700 = "NVIDIA Quantum-2 QM9700 NDR switch (one 400 Gb/s port)"

TEMPLATES: dict[str, ClusterTemplate] = {
    # The seed has no record of the HGX A100's NVSwitch: the A100's NVLink 3 record stands
    # for it, its rate per GPU (the DGX A100's six NVSwitches give each GPU all 12 of its
    # links) and its latency NCCL's NVLink step, which NCCL charges on a path through an
    # NVSwitch as on a direct link (the NVSwitch records' latency cites the same line).
    # Nor has it a record of the HDR fabric's switch (Quantum QM8700): no published
    # port-to-port latency was found to cite, so the route charges the two ConnectX-6
    # adapters' latency alone.
    "dgx-a100": ClusterTemplate(
        "dgx-a100",
        "A100 SXM4 80GB",
        8,
        NVLINK_A100,
        HDR_NIC,
        None,
        "NVIDIA DGX A100 user guide: 8 A100 on six NVSwitches, NVLink 3 at 600 GB/s per GPU "
        "both directions together; eight 200 Gb/s HDR InfiniBand adapters (one per GPU)",
    ),
    "dgx-h100": ClusterTemplate(
        "dgx-h100",
        "H100 SXM5 80GB",
        8,
        NVSWITCH_H100,
        NDR_NIC,
        QM9700,
        "NVIDIA DGX H100 user guide: 8 H100 on four NVSwitches, NVLink 4 at 900 GB/s per GPU "
        "both directions together; eight 400 Gb/s NDR ConnectX-7 adapters (one per GPU)",
    ),
    # The DGX H200's NVSwitches and NVLink 4 are the DGX H100's (its datasheet below).
    "dgx-h200": ClusterTemplate(
        "dgx-h200",
        "H200 SXM 141GB",
        8,
        NVSWITCH_H100,
        NDR_NIC,
        QM9700,
        "NVIDIA DGX H200 datasheet "
        "(https://resources.nvidia.com/en-us-dgx-systems/dgx-h200-datasheet): 8 H200 on four NVSwitches, NVLink 4 at 900 GB/s per GPU both directions together; "
        "eight 400 Gb/s ConnectX-7 adapters (one per GPU)",
    ),
    "dgx-b200": ClusterTemplate(
        "dgx-b200",
        "B200 SXM 180GB",
        8,
        NVSWITCH_B200,
        NDR_NIC,
        QM9700,
        "NVIDIA DGX B200 datasheet: 8 B200, NVLink 5 at 1.8 TB/s per GPU both directions "
        "together; eight 400 Gb/s ConnectX-7 adapters",
    ),
}


def rank_label(rank: int) -> str:
    return f"g{rank:05d}"


def cluster_snapshot(
    template: ClusterTemplate, gpus: int, *, catalogue: GpuCatalogue | None = None
) -> dict[str, Any]:
    """The system model of `gpus` GPUs: ceil(gpus / 8) nodes, each GPU its own label; the
    GPU's record from `catalogue` (simulator.gpu_catalogue; by default the seed)."""
    per = template.gpus_per_node
    nodes: list[dict[str, Any]] = [
        {"id": "ib", "name": "InfiniBand fabric", "hardware": "ib", "model": "link"}
    ]
    edges: list[list[str]] = []
    for host in range((gpus + per - 1) // per):
        nodes.append({"id": f"node{host}", "name": f"Node {host}", "group": True})
        nodes.append(
            {
                "id": f"nvs{host}",
                "name": f"NVSwitch {host}",
                "hardware": "nvswitch",
                "model": "link",
                "parent": f"node{host}",
            }
        )
    for rank in range(gpus):
        host = rank // per
        nodes.append(
            {
                "id": f"gpu{rank}",
                "name": f"GPU {rank}",
                "hardware": "gpu",
                "model": "kernels",
                "labels": {rank_label(rank): 1},
                "parent": f"node{host}",
            }
        )
        # the NVSwitch edge first: routes break ties by edge order, so GPUs of one node talk
        # over NVLink
        edges.append([f"gpu{rank}", f"nvs{host}"])
    edges += [[f"gpu{rank}", "ib"] for rank in range(gpus)]
    attributes = dict(gpu_record(template.gpu, catalogue))
    attributes["reduceBandwidth"] = KernelTimer(attributes).dram_bytes_per_s
    attributes["kernelTimedClock"] = attributes["SMCoreClock"]
    fabric_rental = {"hourlyRental": 0.0, "powerPrice": 0.0} if "hourlyRental" in attributes else {}
    return {
        "name": f"{template.name} x {gpus}",
        "hardware": {
            "gpu": {"type": "GPU", "name": template.gpu, "attributes": attributes},
            "nvswitch": {
                "type": "NETWORK",
                "name": "NVSwitch",
                "attributes": {
                    "latency": template.nvlink_latency_s,
                    "bandwidth": template.nvlink_bytes_per_s,
                    **fabric_rental,
                },
            },
            "ib": {
                "type": "NETWORK",
                "name": "InfiniBand",
                "attributes": {
                    "latency": template.network_latency_s,
                    "bandwidth": template.network_bytes_per_s,
                    **fabric_rental,
                },
            },
        },
        "models": {
            "kernels": {
                "language": "javascript",
                "source": KERNEL_SUM_MODEL,
                "name": KERNEL_SUM_NAME,
            },
            "link": {"language": "javascript", "source": LINK_MODEL},
        },
        "nodes": nodes,
        "edges": edges,
    }
