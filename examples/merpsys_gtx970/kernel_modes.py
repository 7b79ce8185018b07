"""Print the example's kernel time in every kernel mode: the table of docs/kernel-modes.md.

The MERPSYS saxpy2 application (app.py, a = 1, block 256, 64 warps/SM) on the GTX 970
testbed (snapshot.json), its GPU node switched to each mode in turn, run in-process:

    .venv/bin/python examples/merpsys_gtx970/kernel_modes.py
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parents[1]))  # the repository root, for `simulator`

from simulator.runner import run_simulation  # noqa: E402

MODES = ("analytic", "detailed", "petri", "waves")
SIZES = (104 * 256, 104 * 256 + 1, 10**6, 10**7)  # one full wave, one block more, 000's N


def kernel_seconds(mode: str, n: int) -> tuple[float, dict[str, Any]]:
    """Return the kernel time and detail of the example with its GPU node in `mode`."""
    snapshot = json.loads((HERE / "snapshot.json").read_text())
    for node in snapshot["nodes"]:
        if node["id"] == "gpu0":
            node["kernelMode"] = mode
    result = run_simulation(
        snapshot,
        (HERE / "app.py").read_text(),
        labels={"CPU": 1, "GPU": 1},
        variables={"N": n, "blockSz": 256, "computeIntensity": 1, "occupancy": 64},
    )
    (kernel,) = [entry for entry in result["timeline"] if entry["kind"] == "compute"]
    return kernel["end_s"] - kernel["start_s"], kernel.get("detail", {})


def main() -> None:
    """Print one Markdown row per N: blocks, waves and each mode's kernel time in µs."""
    print("| N | blocks | waves | " + " | ".join(f"{mode} µs" for mode in MODES) + " |")
    print("|---:|---:|---:|" + "---:|" * len(MODES))
    for n in SIZES:
        times = {mode: kernel_seconds(mode, n) for mode in MODES}
        waves = times["waves"][1]["waves"]
        cells = " | ".join(f"{times[mode][0] * 1e6:.3f}" for mode in MODES)
        print(f"| {n:,} | {-(-n // 256):,} | {waves} | {cells} |")


if __name__ == "__main__":
    main()
