"""Whether a GPU node's computational model was validated on the node's GPU architecture.

A model may declare the architecture families it was validated on (a snapshot model's
`validatedArchitectures`; the built-in ones in `simulator.models.VALIDATED_ARCHITECTURES`).
Evaluated on a GPU of another family, or on one whose `computeCapability` names no known
family, it still runs, but its figures are an extrapolation: Volkov's model as published
predicts sub-microsecond kernels on Hopper and Blackwell, where a real launch alone costs
microseconds. The run's result then carries an "architecture" warning per such node
(`architecture_warnings`), which the run and sweep pages show. A GPU record without a
`computeCapability` cannot be judged and gets none (the paper's own GTX 970 record, Fig. 5.2,
has none).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, TypedDict

from simulator.models.architectures import architecture_family, family_named
from simulator.snapshot import SystemSnapshot
from simulator.sweep import swap_model

MESSAGES = {
    "outside": "{model!r} was validated on {validated} GPUs; {hardware!r} is {family} "
    "(compute capability {cc}), so its times there are an extrapolation.",
    "unknown": "{model!r} was validated on {validated} GPUs; {hardware!r} has compute "
    "capability {cc}, of no known architecture, so whether its times hold there is unknown.",
    "recommended": " The GPU record recommends {recommended!r}.",
}


class ModelWarning(TypedDict):
    """A node whose computational model was evaluated outside the architectures it was
    validated on. `architecture` is the GPU's family, None when it is not known."""

    code: str  # "architecture"
    node: str
    name: str
    hardware: str
    model: str
    architecture: str | None
    compute_capability: float
    validated: list[str]
    recommended: str | None  # the model the GPU record recommends, when it names one
    message: str


def _cc_text(cc: float) -> str:
    return f"{cc:.1f}"


def architecture_warnings(system: SystemSnapshot) -> list[ModelWarning]:
    """Return a warning for each GPU node whose own model computes its kernel times (the
    analytic kernel mode) and declares validated architectures that exclude the node's GPU."""
    warnings: list[ModelWarning] = []
    for node in system.nodes.values():
        if node.group or node.hardware is None or node.model is None:
            continue
        if node.kernel_mode != "analytic":  # a kernel mode, not the model, times the kernels
            continue
        hardware = system.hardware[node.hardware]
        model = system.models[node.model]
        if hardware.type != "GPU" or not model.validated_architectures:
            continue
        raw_cc = hardware.attributes.get("computeCapability")
        if raw_cc is None:  # nothing to judge the GPU by
            continue
        cc = float(raw_cc)
        family = architecture_family(cc)
        if family in model.validated_architectures:
            continue
        template = MESSAGES["outside"] if family is not None else MESSAGES["unknown"]
        message = template.format(
            model=model.title,
            validated=" and ".join(model.validated_architectures),
            hardware=hardware.name,
            family=family,
            cc=_cc_text(cc),
        )
        recommended = hardware.recommended_model or None
        if recommended is not None and recommended != model.title:
            message += MESSAGES["recommended"].format(recommended=recommended)
        warnings.append(
            {
                "code": "architecture",
                "node": node.id,
                "name": node.name,
                "hardware": hardware.name,
                "model": model.title,
                "architecture": family,
                "compute_capability": cc,
                "validated": list(model.validated_architectures),
                "recommended": recommended,
                "message": message,
            }
        )
    return warnings


def validated_on(model: Mapping[str, Any] | None, hardware: Mapping[str, Any]) -> bool | None:
    """Return whether a snapshot's model record was validated on the GPU of a snapshot's
    hardware record: None when the model declares no validated architectures (nothing to
    judge by), False when the GPU's architecture is outside them or unknown."""
    declared = model.get("validatedArchitectures") if isinstance(model, Mapping) else None
    if not isinstance(declared, list) or not declared:
        return None
    attributes = hardware.get("attributes")
    cc = attributes.get("computeCapability") if isinstance(attributes, Mapping) else None
    family = architecture_family(cc)
    return family is not None and family in {family_named(name) for name in declared}


# A model found by name: (its key in a snapshot's models, its snapshot record), or None.
ModelLookup = Callable[[str], "tuple[str, dict[str, Any]] | None"]


def with_recommended_model(
    variant: Mapping[str, Any], node_id: str, find: ModelLookup
) -> tuple[dict[str, Any], str | None, bool]:
    """Return (the snapshot, the name of the model node `node_id` runs, whether it changed)
    after a sweep swapped a GPU into the node: the GPU record's `recommendedModel`, looked up
    by `find`, replaces the node's model only where that model declares validated
    architectures and the GPU is outside them. A model that claims nothing is the user's own
    choice and stays, as does one validated on the GPU; where the GPU recommends none, or
    `find` does not know it, the model stays and the run's result warns. One rule for the
    web side's sweeps (models looked up in the database) and the CLI's (the built-ins)."""
    snapshot = dict(variant)
    node = next(n for n in snapshot["nodes"] if n.get("id") == node_id)
    key = node.get("model")
    current = (snapshot.get("models") or {}).get(key) if key is not None else None
    name = (current.get("name") or key) if isinstance(current, Mapping) else None
    hardware = snapshot["hardware"][node["hardware"]]
    recommended = hardware.get("recommendedModel")
    if current is None or not isinstance(recommended, str) or name == recommended:
        return snapshot, name, False
    if validated_on(current, hardware) is not False:
        return snapshot, name, False
    found = find(recommended)
    if found is None:
        return snapshot, name, False
    model_key, record = found
    return swap_model(snapshot, node_id, record, key=model_key), recommended, True
