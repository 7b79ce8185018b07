"""Write the ready system models of issue 40 (examples/<name>/snapshot.json) from the seed
hardware (hwdb/seed/hardware.json, every value with its source there) and the built-in
models, so that a snapshot never disagrees with the records it copies.

    python -m examples.topologies.build          # rewrite the snapshots
    python -m examples.topologies.build --check  # exit 1 when a snapshot is out of date

Systems (docs/topologies.md): one DGX H100 and one DGX B200 (8 GPUs on an NVSwitch domain),
a GH200 superchip (Grace CPU and Hopper GPU over NVLink-C2C), a 4-GPU PCIe workstation
(a PCIe 5.0 switch) and 4-, 32- and 128-node DGX H100 clusters: each GPU's ConnectX-7 NDR
port on a two-level fat-tree of Quantum-2 switches, D-mod-k routing.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

from simulator.models import builtin_models

ROOT = Path(__file__).resolve().parents[2]
SEED = ROOT / "hwdb" / "seed" / "hardware.json"

H100 = "H100 SXM5 80GB"
A100 = "A100 SXM4 80GB"
B200 = "B200 SXM 180GB"
GH200 = "GH200 Grace Hopper (H100 96GB HBM3)"
H100_PCIE = "H100 PCIe 80GB"
NVSWITCH_H100 = "NVSwitch (HGX H100, NVLink 4)"
NVSWITCH_B200 = "NVSwitch (HGX B200, NVLink 5)"
# The seed has no record of the HGX A100's NVSwitch: the A100's NVLink 3 record stands for it,
# its rate per GPU (the DGX A100's six NVSwitches give each GPU all 12 of its links) and its
# latency NCCL's NVLink step, as the workloads' dgx-a100 cluster takes it.
NVLINK_A100 = "NVLink 3 (A100 SXM4, 12 links)"
C2C = "NVLink-C2C (Grace Hopper)"
GRACE = "NVIDIA Grace CPU (GH200 superchip)"
PCIE5 = "PCIe 5.0 x16"
EPYC = "AMD EPYC 9654"
NDR_NIC = "InfiniBand NDR 400 Gb/s (ConnectX-7)"
QM9700 = "NVIDIA Quantum-2 QM9700 NDR switch (one 400 Gb/s port)"

# Every link of the ready systems is a flow link, full duplex (simulator.flows): NVLink,
# NVLink-C2C, PCIe and InfiniBand carry both directions at once at the full rate, and flows in
# one direction share it, so a collective's traffic contends as on the hardware and a run
# reports each link's bytes and utilisation. A lone transfer takes what the FIFO gave it
# (docs/network-model.md), so no single-message figure changes.
LINK_SHARING = "full-duplex"

EXAMPLE_PREFIX = "Ready systems: "  # the names of the models the examples bring
GPU_MODEL = "GPU kernel (current architectures)"
LINK_MODEL = "Latency-bandwidth link"
PCIE_MODEL = "PCIe link"
CPU_MODEL = "CPU"

# Fat-tree shapes of the clusters (XGFT down/up per level, simulator.topology): NIC ports
# per leaf, then leaves per spine; every NIC has one uplink, every leaf one to each spine.
# 64-port switches: no leaf uses more than 32 ports down and 32 up (non-blocking).
CLUSTERS = {4: ([8, 4], [1, 8]), 32: ([32, 8], [1, 32]), 128: ([32, 32], [1, 32])}


def _records() -> dict[str, dict[str, Any]]:
    data = json.loads(SEED.read_text(encoding="utf-8"))
    return {record["name"]: record for record in data["components"]}


def _models() -> dict[str, Any]:
    return {model.name: model for model in builtin_models()}


class _System:
    def __init__(self, name: str, description: str) -> None:
        self.records = _records()
        self.builtins = _models()
        self.data: dict[str, Any] = {
            "name": name,
            "description": description,
            "hardware": {},
            "models": {},
            "nodes": [],
            "edges": [],
        }

    def hardware(self, key: str, name: str) -> str:
        record = self.records[name]
        item: dict[str, Any] = {
            "type": record["type"],
            "name": record["name"],
            "attributes": {a["key"]: a["value"] for a in record["attributes"]},
        }
        if record.get("recommended_model"):
            item["recommendedModel"] = record["recommended_model"]
        self.data["hardware"][key] = item
        return key

    def model(self, key: str, name: str) -> str:
        builtin = self.builtins[name]
        # Seeding reuses the built-in model with this source; the name is the example's own
        # only where no built-in has the source (a test's stand-in library).
        item: dict[str, Any] = {
            "language": "javascript",
            "source": builtin.source,
            "name": f"{EXAMPLE_PREFIX}{name}",
        }
        if builtin.validated_architectures:
            item["validatedArchitectures"] = list(builtin.validated_architectures)
        self.data["models"][key] = item
        return key

    def node(
        self,
        node_id: str,
        name: str,
        hardware: str,
        model: str | None,
        count: int,
        labels: dict[str, int] | None = None,
    ) -> None:
        item: dict[str, Any] = {"id": node_id, "name": name, "hardware": hardware}
        if model is not None:
            item["model"] = model
        item.update(count=count, labels=labels or {})
        if self.data["hardware"][hardware]["type"] == "NETWORK":
            item["sharing"] = LINK_SHARING
        self.data["nodes"].append(item)

    def topology(self, **template: Any) -> None:
        self.data.setdefault("topologies", []).append(template)


def dgx(gpu: str, switch: str, name: str, description: str) -> dict[str, Any]:
    """Return one 8-GPU DGX: its GPUs on one NVSwitch domain."""
    system = _System(name, description)
    system.node(
        "gpu",
        "GPU",
        system.hardware("gpu", gpu),
        system.model("gpu_model", GPU_MODEL),
        8,
        {"GPU": 1},
    )
    system.node(
        "nvswitch",
        "NVSwitch",
        system.hardware("nvswitch", switch),
        system.model("link", LINK_MODEL),
        1,
    )
    system.topology(id="nvlink", kind="nvswitch", endpoints="gpu", switch="nvswitch", domainSize=8)
    return system.data


def gh200() -> dict[str, Any]:
    """Return a GH200 superchip: Grace CPU and Hopper GPU over NVLink-C2C."""
    system = _System(
        "GH200 Grace Hopper superchip (Grace CPU + H100 over NVLink-C2C)",
        "One GH200: the Grace CPU and the Hopper GPU joined by NVLink-C2C, 900 GB/s in total "
        "(450 GB/s per direction). NVIDIA publishes no C2C latency; the link's model charges "
        "size / bandwidth only.",
    )
    # The Grace CPU has no seed record (no sourced clock or FLOP rate): the node carries
    # its name only, as the MERPSYS example's host CPU does.
    system.data["hardware"]["grace"] = {"type": "CPU", "name": GRACE, "attributes": {}}
    system.node("cpu", "Grace CPU", "grace", None, 1, {"CPU": 1})
    c2c = system.hardware("c2c", C2C)
    system.data["models"]["c2c_model"] = {
        "language": "javascript",
        "name": f"{EXAMPLE_PREFIX}NVLink-C2C, size / bandwidth (no published latency)",
        "source": "// NVLink-C2C of GH200: size / bandwidth per direction. NVIDIA publishes no\n"
        "// latency for the link, so none is charged (the record leaves it out).\n"
        "function p2pTime(size, params) {\n  return size / hw.bandwidth;\n}\n",
    }
    system.node("c2c", "NVLink-C2C", c2c, "c2c_model", 1)
    system.node(
        "gpu",
        "Hopper GPU",
        system.hardware("gpu", GH200),
        system.model("gpu_model", GPU_MODEL),
        1,
        {"GPU": 1},
    )
    system.data["edges"] = [["cpu", "c2c"], ["c2c", "gpu"]]
    return system.data


def workstation() -> dict[str, Any]:
    """Return a 4-GPU PCIe workstation: four H100 PCIe cards behind one PCIe 5.0 switch."""
    system = _System(
        "4-GPU PCIe workstation (4 x H100 PCIe, PCIe 5.0 x16 switch)",
        "Four H100 PCIe cards and an EPYC host on one PCIe 5.0 x16 switch: GPU-to-GPU copies "
        "cross the switch once (a 'switch' topology); host copies name their direction "
        "(HostToDevice / DeviceToHost) as the PCIe model asks.",
    )
    system.node(
        "cpu",
        "Host CPU",
        system.hardware("cpu", EPYC),
        system.model("cpu_model", CPU_MODEL),
        1,
        {"CPU": 1},
    )
    system.node(
        "pcie",
        "PCIe 5.0 switch",
        system.hardware("pcie", PCIE5),
        system.model("pcie_model", PCIE_MODEL),
        1,
    )
    system.node(
        "gpu",
        "GPU",
        system.hardware("gpu", H100_PCIE),
        system.model("gpu_model", GPU_MODEL),
        4,
        {"GPU": 1},
    )
    system.data["edges"] = [["cpu", "pcie"]]
    system.topology(id="pcie", kind="switch", endpoints="gpu", switch="pcie", domainSize=4)
    return system.data


def cluster(nodes: int) -> dict[str, Any]:
    """Return `nodes` DGX H100 on an NDR fat-tree: each GPU's own ConnectX-7 port."""
    down, up = CLUSTERS[nodes]
    gpus = 8 * nodes
    leaves, spines = down[1] * up[0], up[0] * up[1]
    system = _System(
        f"{nodes}-node DGX H100 cluster on an NDR fat-tree ({gpus} GPUs)",
        f"{nodes} DGX H100 (8 x H100 SXM each on an NVSwitch domain, NVLink 4 at 450 GB/s "
        f"per direction per GPU) and one ConnectX-7 NDR 400 Gb/s port per GPU on a two-level "
        f"fat-tree of Quantum-2 switches: {leaves} leaves of {down[0]} ports down, {spines} "
        "spines; D-mod-k routing.",
    )
    link = system.model("link", LINK_MODEL)
    system.node(
        "gpu",
        "GPU",
        system.hardware("gpu", H100),
        system.model("gpu_model", GPU_MODEL),
        gpus,
        {"GPU": 1},
    )
    system.node("nvswitch", "NVSwitch", system.hardware("nvswitch", NVSWITCH_H100), link, nodes)
    system.node("nic", "ConnectX-7 NDR", system.hardware("nic", NDR_NIC), link, gpus)
    switch = system.hardware("switch", QM9700)
    system.node("leaf", "Leaf switch", switch, link, leaves)
    system.node("spine", "Spine switch", switch, link, spines)
    system.data["edges"] = [["gpu", "nic"]]
    system.topology(id="nvlink", kind="nvswitch", endpoints="gpu", switch="nvswitch", domainSize=8)
    system.topology(
        id="ndr",
        kind="fatTree",
        endpoints="nic",
        switches=["leaf", "spine"],
        down=down,
        up=up,
        routing="dmodk",
    )
    return system.data


def systems() -> dict[str, dict[str, Any]]:
    """Return the ready system models by example folder name."""
    result = {
        "dgx_h100": dgx(
            H100,
            NVSWITCH_H100,
            "DGX H100 (8 x H100 SXM on NVSwitch, NVLink 4)",
            "One DGX H100: 8 H100 SXM GPUs on third-generation NVSwitch, NVLink 4 at 450 GB/s "
            "per direction per GPU (its 8 ConnectX-7 NDR ports are in the cluster models).",
        ),
        "dgx_a100": dgx(
            A100,
            NVLINK_A100,
            "DGX A100 (8 x A100 SXM4 on NVSwitch, NVLink 3)",
            "One DGX A100: 8 A100 SXM4 80GB GPUs on second-generation NVSwitch, NVLink 3 at "
            "300 GB/s per direction per GPU (the switch is the A100's NVLink 3 record: the "
            "seed has none of the HGX A100's NVSwitch).",
        ),
        "dgx_b200": dgx(
            B200,
            NVSWITCH_B200,
            "DGX B200 (8 x B200 on NVSwitch, NVLink 5)",
            "One DGX B200: 8 B200 GPUs on NVSwitch, NVLink 5 at 900 GB/s per direction per GPU.",
        ),
        "gh200_pair": gh200(),
        "pcie_workstation_4gpu": workstation(),
    }
    for nodes in CLUSTERS:
        result[f"dgx_h100_cluster_{nodes}"] = cluster(nodes)
    return result


def main(argv: list[str]) -> int:
    stale = []
    for folder, data in systems().items():
        path = ROOT / "examples" / folder / "snapshot.json"
        text = json.dumps(data, indent=2) + "\n"
        if "--check" in argv:
            if not path.exists() or path.read_text(encoding="utf-8") != text:
                stale.append(str(path))
            continue
        path.parent.mkdir(exist_ok=True)
        path.write_text(text, encoding="utf-8")
    for name in stale:
        print(f"out of date: {name}", file=sys.stderr)
    return 1 if stale else 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
