"""Cluster templates for the workloads: DGX-like nodes of 8 GPUs on an NVSwitch, the nodes
joined by an InfiniBand fabric, one GPU per label `gNNNNN` (the workload's global rank)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from simulator.gpu_catalogue import GpuCatalogue
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


@dataclass(frozen=True)
class ClusterTemplate:
    name: str
    gpu: str
    gpus_per_node: int
    nvlink_bytes_per_s: float
    nvlink_latency_s: float
    network_bytes_per_s: float
    network_latency_s: float
    source: str
    nvls: bool = False
    """Whether the node's NVSwitch supports NVLink SHARP (the snapshot's `nvls`, which the
    simulator's `algorithm="nvls"` needs): NVIDIA's third-generation NVSwitch (H100, H200)
    "incorporates hardware acceleration for collective operations with multicast and ...
    SHARP in-network reductions" (https://developer.nvidia.com/blog/upgrading-multi-gpu-interconnectivity-with-the-third-generation-nvidia-nvswitch/),
    as each fifth-generation NVLink Switch (B200) "has engines for ... SHARP for in-network
    reductions and multicast acceleration" (https://www.nvidia.com/en-us/data-center/nvlink/);
    not the A100's (NCCL runs no NVLS below compute capability 9.0: NVIDIA/nccl
    @5067397c2676d5aed50042fc39e5c8ee96eb0027 src/graph/search.cc line 1124)."""


TEMPLATES: dict[str, ClusterTemplate] = {
    "dgx-a100": ClusterTemplate(
        "dgx-a100",
        "A100 SXM4 80GB",
        8,
        300e9,
        2e-6,
        25e9,
        5e-6,
        "NVIDIA DGX A100 user guide: 8 A100 on six NVSwitches, NVLink 3 at 600 GB/s per GPU "
        "both directions together; eight 200 Gb/s HDR InfiniBand adapters (one per GPU)",
    ),
    "dgx-h100": ClusterTemplate(
        "dgx-h100",
        "H100 SXM5 80GB",
        8,
        450e9,
        2e-6,
        50e9,
        5e-6,
        "NVIDIA DGX H100 user guide: 8 H100 on four NVSwitches, NVLink 4 at 900 GB/s per GPU "
        "both directions together; eight 400 Gb/s NDR ConnectX-7 adapters (one per GPU)",
        nvls=True,
    ),
    "dgx-h200": ClusterTemplate(
        "dgx-h200",
        "H200 SXM 141GB",
        8,
        450e9,
        2e-6,
        50e9,
        5e-6,
        "NVIDIA DGX H200 datasheet "
        "(https://resources.nvidia.com/en-us-dgx-systems/dgx-h200-datasheet): 8 H200 on four NVSwitches, NVLink 4 at 900 GB/s per GPU both directions together; "
        "eight 400 Gb/s ConnectX-7 adapters (one per GPU)",
        nvls=True,
    ),
    "dgx-b200": ClusterTemplate(
        "dgx-b200",
        "B200 SXM 180GB",
        8,
        900e9,
        2e-6,
        50e9,
        5e-6,
        "NVIDIA DGX B200 datasheet: 8 B200, NVLink 5 at 1.8 TB/s per GPU both directions "
        "together; eight 400 Gb/s ConnectX-7 adapters",
        nvls=True,
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
