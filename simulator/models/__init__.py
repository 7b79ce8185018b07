"""Reference performance, energy and reliability models and their built-in JavaScript versions.

Each closed-form model is a typed Python function (NumPy-vectorised where it is a formula) in
its own module; the built-in JavaScript computational models users copy and edit live in
`js/`. `builtin_models()` lists them: adding a model is adding one file to `js/` and one line
to `_REGISTRY`. Data a model shares with its Python reference (fitted parameters, architecture
profiles) are not copied into `js/`: a generated prelude (`_GENERATED`) declares them, built
from the same files the Python reads, so the data have one home.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from simulator.models.architectures import (
    known_compute_capabilities,
    profile_for_compute_capability,
)

JS_DIR = Path(__file__).parent / "js"


@dataclass(frozen=True)
class BuiltinModel:
    """A built-in JavaScript computational model: its name, what it does, its source and the
    paper or document it implements."""

    name: str
    description: str
    source: str
    reference: str
    # The architecture families whose measurements the model was validated against (empty:
    # not a kernel-time model, or no claim); a run outside them carries a warning.
    validated_architectures: tuple[str, ...] = ()


def _gpu_current_defaults() -> str:
    """Return `GPU_CURRENT_DEFAULTS` for `gpu_current.js`: the fitted transition exponent,
    the tensor precisions' rate attributes and instruction FLOPs, and each compute
    capability's launch overhead and memory efficiency, as `gpu_current.py` reads them (`data/gpu_current_fit.json`, `data/architecture_profiles.json`)."""
    # Imported here: gpu_current imports NumPy (through volkov), which a run's sandbox child
    # loads only when one of its models needs it.
    from simulator.models.gpu_current import TENSOR_PRECISIONS, TRANSITION_EXPONENT

    rows = []
    for cc in known_compute_capabilities():
        profile = profile_for_compute_capability(cc)
        values = {
            "kernelLaunchOverhead": profile.launch_overhead_s,
            "memoryEfficiency": profile.memory_efficiency,
        }
        rows.append(f"    {json.dumps(cc)}: {json.dumps(values)}")
    architectures = ",\n".join(rows)
    # json.dumps writes an infinite exponent as Infinity, which JavaScript reads as such
    return (
        "// Generated from simulator/models/data/gpu_current_fit.json and\n"
        "// architecture_profiles.json, which the Python reference reads too.\n"
        "var GPU_CURRENT_DEFAULTS = {\n"
        f"  transitionExponent: {json.dumps(TRANSITION_EXPONENT)},\n"
        f"  tensorPrecisions: {json.dumps(TENSOR_PRECISIONS)},\n"
        f"  architectures: {{\n{architectures}\n  }}\n"
        "};\n"
    )


# Sources a registry entry names that are generated rather than read from `js/`.
_GENERATED: dict[str, Callable[[], str]] = {
    "gpu_current_defaults.js": _gpu_current_defaults,
}

# name, description, reference, JavaScript files concatenated in order
_REGISTRY: tuple[tuple[str, str, str, tuple[str, ...]], ...] = (
    (
        "Volkov GPU",
        "Kernel time by Volkov's model (eqs 4.1-4.5): occupancy, latency and throughput "
        "bounds; occupancy from registers and shared memory when not given.",
        "000 sections 4-5 (MERPSYS Listing 4); simulator/models/volkov.py",
        ("occupancy.js", "throughput_terms.js", "volkov_gpu.js"),
    ),
    (
        "GPU kernel (current architectures)",
        "Kernel time on current GPUs: Volkov's bounds plus launch overhead, a tail wave, a "
        "smooth latency-throughput transition and the achievable DRAM or L2 bandwidth.",
        "issue 11; simulator/models/gpu_current.py",
        ("gpu_current_defaults.js", "occupancy.js", "throughput_terms.js", "gpu_current.js"),
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
        "Host-device transfer time t_s + n / (bw lambda_c) per direction (eq 4.6); a pageable "
        "copy (params.hostMemory, the default) over a link with pageableStartup*/"
        "pageableBandwidth* runs at min(link, host staging rate); an empty message without "
        "direction is a free synchronisation.",
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
        "docs/models.md 6; simulator/models/reliability.py",
        ("reliability.js",),
    ),
)


# The architecture families each built-in kernel-time model was validated on, with the
# evidence: a run of the model on a GPU of another family carries a warning
# (simulator.model_validity). Volkov's model as published: 000 section 6 measured the GTX 970
# and GTX TITAN X (Maxwell) and the GTX 1070 (Pascal). The current-architecture model: fitted
# and checked out of sample on H100 SXM5 and H200 runs (docs/validation/), both Hopper; its
# other families' profiles come from the literature, not from measurements of the model.
VALIDATED_ARCHITECTURES: dict[str, tuple[str, ...]] = {
    "Volkov GPU": ("Maxwell", "Pascal"),
    "GPU kernel (current architectures)": ("Hopper",),
}


def _source(file: str) -> str:
    """Return one file of a built-in's source: generated, or read from `js/`."""
    generate = _GENERATED.get(file)
    return generate() if generate is not None else (JS_DIR / file).read_text(encoding="utf-8")


def builtin_model_names() -> list[str]:
    """Return the names of the built-in models (without reading their sources)."""
    return [name for name, *_ in _REGISTRY]


def builtin_models() -> list[BuiltinModel]:
    """Return the built-in JavaScript computational models, sources read from `js/` (and
    generated from the models' data where `_GENERATED` says)."""
    return [
        BuiltinModel(
            name=name,
            description=description,
            source="\n".join(_source(file) for file in files),
            reference=reference,
            validated_architectures=VALIDATED_ARCHITECTURES.get(name, ()),
        )
        for name, description, reference, files in _REGISTRY
    ]
