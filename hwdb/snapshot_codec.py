"""The snapshot codec: stored records and graphs to docs/contracts.md's system snapshot and back.

Pure functions, no queries: the callers load the records (hwdb.selectors) and pass them in.
Both apps use it (hwdb's export and import of a system model, the studio's hardware swap in
a sweep), so a snapshot's hardware record and its `hw-{pk}` key are written in one place.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any

from hwdb.validation import is_record_id
from simulator.sweep import swap_hardware

if TYPE_CHECKING:
    from hwdb.models import Component, ComputationalModel


def hardware_key(component_id: int) -> str:
    """Return the snapshot key of the component with this id."""
    return f"hw-{component_id}"


def model_key(model_id: int) -> str:
    """Return the snapshot key of the computational model with this id."""
    return f"model-{model_id}"


def graph_references(graph: object, key: str) -> set[int]:
    """Return the record ids the graph's nodes hold under `key` ("hardware" or "model")."""
    nodes = graph.get("nodes") if isinstance(graph, dict) else None
    if not isinstance(nodes, list):
        return set()
    return {node[key] for node in nodes if isinstance(node, dict) and is_record_id(node.get(key))}


def hardware_record(component: Component) -> dict[str, Any]:
    """Return the snapshot's record of `component`, from the attribute rows
    `hwdb.selectors.component_attributes` loaded onto it."""
    rows = component.attribute_rows
    if rows is None:
        raise ValueError(f"component {component.pk} has no attribute rows loaded")
    record: dict[str, Any] = {
        "type": component.type,
        "name": component.name,
        "vendor": component.vendor,
        "attributes": {row["key"]: row["value"] for row in rows},
        "units": {row["key"]: row["unit"] for row in rows if row["unit"]},
    }
    if component.recommended_model:
        record["recommendedModel"] = component.recommended_model
    return record


def record_attributes(record: Mapping[str, Any]) -> dict[str, float]:
    """Return a snapshot hardware record's attributes as floats by key."""
    return {str(key): float(value) for key, value in record.get("attributes", {}).items()}


def record_attribute_data(record: Mapping[str, Any]) -> list[dict[str, Any]]:
    """Return a snapshot hardware record's attributes as component attribute data
    (key, value, unit), the form `component_create` takes."""
    units = record.get("units", {})
    return [
        {"key": key, "value": value, "unit": units.get(key, "")}
        for key, value in record_attributes(record).items()
    ]


def model_record(model: ComputationalModel) -> dict[str, Any]:
    """Return the snapshot's record of a computational model."""
    record: dict[str, Any] = {
        "name": model.name,
        "language": model.language,
        "source": model.source,
    }
    if model.validated_architectures:
        record["validatedArchitectures"] = list(model.validated_architectures)
    return record


def system_snapshot(
    *,
    name: str,
    description: str,
    graph: object,
    components: Iterable[Component],
    models: Iterable[ComputationalModel],
) -> dict[str, Any]:
    """Return the self-contained snapshot of a system model's `graph` (docs/contracts.md),
    its records inlined and its nodes pointing at them by key."""
    graph = graph if isinstance(graph, dict) else {}
    nodes = []
    for node in graph.get("nodes", []):
        node = dict(node)
        if node.get("hardware") is not None:
            node["hardware"] = hardware_key(node["hardware"])
        if node.get("model") is not None:
            node["model"] = model_key(node["model"])
        nodes.append(node)
    return {
        "name": name,
        "description": description,
        "hardware": {hardware_key(c.pk): hardware_record(c) for c in components},
        "models": {model_key(m.pk): model_record(m) for m in models},
        "nodes": nodes,
        "edges": [list(edge) for edge in graph.get("edges", [])],
        **_topologies(graph),
    }


def _topologies(graph: Mapping[str, Any]) -> dict[str, Any]:
    """Return the graph's topology templates and network model under their keys, or nothing
    for what it does not set (templates name nodes by id, and the network model is one name,
    so graph and snapshot hold the same ones)."""
    topologies = graph.get("topologies")
    extra: dict[str, Any] = (
        {"topologies": [dict(item) for item in topologies]} if topologies else {}
    )
    if "networkModel" in graph:
        extra["networkModel"] = graph["networkModel"]
    return extra


def system_graph(
    snapshot: Mapping[str, Any], *, hardware_ids: Mapping[str, int], model_ids: Mapping[str, int]
) -> dict[str, Any]:
    """Return the stored graph of a snapshot whose records are stored under these ids (by
    snapshot key): the inverse of `system_snapshot` for the graph."""
    nodes = []
    for node in snapshot["nodes"]:
        node = dict(node)
        if node.get("hardware") is not None:
            node["hardware"] = hardware_ids[node["hardware"]]
        if node.get("model") is not None:
            node["model"] = model_ids[node["model"]]
        nodes.append(node)
    return {
        "nodes": nodes,
        "edges": [list(edge) for edge in snapshot.get("edges", [])],
        **_topologies(snapshot),
    }


def with_hardware(
    snapshot: Mapping[str, Any], *, node_id: str, component: Component
) -> dict[str, Any]:
    """Return a copy of `snapshot` whose node `node_id` runs on `component` instead."""
    return swap_hardware(
        snapshot, node_id, hardware_record(component), key=hardware_key(component.pk)
    )
