"""Reference performance, energy and reliability models and their built-in JavaScript versions.

Each closed-form model is a typed Python function (NumPy-vectorised where it is a formula) in
its own module; the built-in JavaScript computational models users copy and edit live in
`js/`. `builtin_models()` lists them: adding a model is adding one file to `js/` and one line
to `_REGISTRY`.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

JS_DIR = Path(__file__).parent / "js"


@dataclass(frozen=True)
class BuiltinModel:
    """A built-in JavaScript computational model: its name, what it does, its source and the
    paper or document it implements."""

    name: str
    description: str
    source: str
    reference: str


# name, description, reference, JavaScript files concatenated in order
_REGISTRY: tuple[tuple[str, str, str, tuple[str, ...]], ...] = (
    (
        "Volkov GPU",
        "Kernel time by Volkov's model (eqs 4.1-4.5): occupancy, latency and throughput "
        "bounds; occupancy from registers and shared memory when not given.",
        "000 sections 4-5 (MERPSYS Listing 4); simulator/models/volkov.py",
        ("occupancy.js", "volkov_gpu.js"),
    ),
    (
        "Occupancy calculator",
        "Resident warps per SM from block size, registers per thread and shared memory "
        "(NVIDIA occupancy calculator rules).",
        "CUDA Occupancy Calculator; simulator/models/occupancy.py",
        ("occupancy.js",),
    ),
    (
        "PCIe link",
        "Host-device transfer time t_s + n / (bw lambda_c) per direction (eq 4.6); an empty "
        "message without direction is a free synchronisation.",
        "000 section 4.3; simulator/models/transfer.py",
        ("pcie_link.js",),
    ),
    (
        "Latency-bandwidth link",
        "Generic network link: latency + size / bandwidth.",
        "000 eq 4.6 with lambda_c = 1; simulator/models/transfer.py",
        ("latency_bandwidth_link.js",),
    ),
    (
        "CPU",
        "Compute time from flops / (threads x clock x flops per cycle x efficiency).",
        "simulator/models/cpu.py",
        ("cpu.js",),
    ),
    (
        "Power states",
        "Idle and loaded power (SimGrid linear power states) for the energy of a run.",
        "MERPSYS powerConsumptionLoad; 003 section V; simulator/models/energy.py",
        ("power.js",),
    ),
    (
        "Reliability",
        "Failure rate from failureRate or 1 / mtbf for the probability of completing a run.",
        "MODELS.md 6; simulator/models/reliability.py",
        ("reliability.js",),
    ),
)


def builtin_models() -> list[BuiltinModel]:
    """Return the built-in JavaScript computational models, sources read from `js/`."""
    return [
        BuiltinModel(
            name=name,
            description=description,
            source="\n".join((JS_DIR / file).read_text(encoding="utf-8") for file in files),
            reference=reference,
        )
        for name, description, reference, files in _REGISTRY
    ]
