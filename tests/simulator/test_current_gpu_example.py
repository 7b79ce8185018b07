"""The saxpy2 application of 000 on an H100 with the current-architecture models, through the
CLI as a user runs it: the kernel's entry in the timeline says what bounds it, pageable copies
run at the measured testbed's staging rate and pinned ones at its link rate (issue 11)."""

from __future__ import annotations

import json
import math
import subprocess
import sys
from pathlib import Path

import pytest

from simulator.models import builtin_models
from simulator.models.gpu_current import computation_estimate
from simulator.models.transfer import PcieLink
from validation.analyze import load_record

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "examples" / "merpsys_gtx970"
N = 10**7
# saxpy2 on sm_90 as the analyzer reads the H100's SASS (validation/data): 15 + 3a CUDA-core
# and 26 + 4a issued instructions, 384 bytes per warp; Lat_bound from Hopper's table
APP = """
gridSize = (N + 255) // 256
params = HashMap()
params.put("CUDACoreInstructions", 15 + 3 * computeIntensity)
params.put("issuedInstructions", 26 + 4 * computeIntensity)
params.put("GMEMBytesTransferred", 384)
params.put("latencyBound", 1839 + 29 * computeIntensity)
params.put("gridSize", gridSize)
params.put("blockSize", 256)
params.put("occupancy", 64)
if tag.equals("CPU"):
    sim.p2pCommunicationSend(4 * float(N), "GPU", ConstVar.HostToDevice, hostMemory=memory)
    sim.p2pCommunicationReceive("GPU")
else:
    sim.p2pCommunicationReceive("CPU")
    sim.computation(params, SoftwareStack.Undefined, OptimizationType.None_)
    sim.p2pCommunicationSend(0, "CPU")
"""


def snapshot(tmp_path: Path) -> Path:
    data = json.loads((EXAMPLE / "snapshot.json").read_text(encoding="utf-8"))
    current = next(m for m in builtin_models() if m.name == "GPU kernel (current architectures)")
    link = next(m for m in builtin_models() if m.name == "PCIe link")
    data["hardware"]["gtx970"] = {
        "type": "GPU",
        "name": "H100 SXM5 80GB",
        "attributes": load_record("H100 SXM5 80GB"),
    }
    data["hardware"]["pcie3_x16"] = {
        "type": "NETWORK",
        "name": "PCIe 5.0 x16 (H100 SXM5 testbed, measured)",
        "attributes": load_record("PCIe 5.0 x16 (H100 SXM5 testbed, measured)"),
    }
    data["models"]["volkov_gtx970"] = {
        "language": "javascript",
        "source": current.source,
        "name": current.name,
    }
    data["models"]["pcie_eq46"] = {
        "language": "javascript",
        "source": link.source,
        "name": link.name,
    }
    path = tmp_path / "h100.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    (tmp_path / "app.py").write_text(APP, encoding="utf-8")
    return path


def run(tmp_path: Path, a: int, memory: str) -> dict:
    command = [
        sys.executable, "-m", "simulator", "run",
        "--system", str(snapshot(tmp_path)), "--app", str(tmp_path / "app.py"),
        "--labels", "CPU=1,GPU=1",
        "--var", f"N={N}", "--var", f"computeIntensity={a}", "--var", f"memory={memory}",
        "--json", "-",
    ]  # fmt: skip
    completed = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert completed.returncode == 0, completed.stderr
    return json.loads(completed.stdout)


@pytest.mark.parametrize(("a", "bound"), [(1, "global_memory"), (4096, "issue")])
def test_the_kernel_says_what_bounds_it(tmp_path: Path, a: int, bound: str) -> None:
    result = run(tmp_path, a, "pinned")
    (compute,) = [e for e in result["timeline"] if e["kind"] == "compute"]
    assert compute["detail"]["bound"] == bound
    assert compute["detail"]["occupancy"] == 64
    assert compute["detail"]["waves"] == math.ceil(math.ceil(N / 256) / (8 * 132))
    params = {
        "CUDACoreInstructions": 15 + 3 * a, "issuedInstructions": 26 + 4 * a,
        "GMEMBytesTransferred": 384, "latencyBound": 1839 + 29 * a,
        "gridSize": math.ceil(N / 256), "blockSize": 256, "occupancy": 64,
    }  # fmt: skip
    expected = computation_estimate(load_record("H100 SXM5 80GB"), params).time_s
    assert compute["end_s"] - compute["start_s"] == pytest.approx(expected, rel=1e-12)


def test_pageable_copies_run_at_the_staging_rate_and_pinned_ones_at_the_link_rate(
    tmp_path: Path,
) -> None:
    link = PcieLink.from_attributes(
        "testbed", load_record("PCIe 5.0 x16 (H100 SXM5 testbed, measured)")
    )
    for memory in ("pageable", "pinned"):
        result = run(tmp_path, 1, memory)
        (copy,) = [e for e in result["timeline"] if e["kind"] == "transfer" and e["size"] > 0]
        expected = float(link.time(4 * N, "HostToDevice", host_memory=memory))
        assert copy["end_s"] - copy["start_s"] == pytest.approx(expected, rel=1e-12)
    # 40 MB: about 5.2 ms pageable, 0.74 ms pinned on the measured testbed
    assert float(link.time(4 * N, "HostToDevice")) > 5 * float(
        link.time(4 * N, "HostToDevice", host_memory="pinned")
    )
