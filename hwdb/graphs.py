"""System-graph validation against the database: the graph rules of `simulator.snapshot`
plus references to components and computational models the owner may see.

A shared system model may reference only shared records, so sharing it never exposes
somebody's private hardware or models.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from hwdb.models import Attribute
from hwdb.selectors import visible_components, visible_computational_models
from hwdb.snapshot_codec import graph_references
from hwdb.validation import MESSAGES, is_record_id, null_character_paths
from simulator.snapshot import validate_graph

if TYPE_CHECKING:
    from django.contrib.auth.models import AbstractBaseUser

GraphErrors = dict[str, list[str]]
GRAPH_KEYS = frozenset({"nodes", "edges", "topologies", "networkModel"})


def graph_errors(graph: object, *, owner: AbstractBaseUser | None, shared: bool) -> GraphErrors:
    """Return {field path: [messages]} for a system graph; empty when it is valid.

    Paths are relative to the graph ("nodes[2].count", "edges[0][1]"). References must be ids
    of records `owner` may see (None: built-in owner, sees shared records only).
    """
    if not isinstance(graph, dict) or "nodes" not in graph:
        return {"non_field_errors": [MESSAGES["graph_shape"]]}
    extra = sorted(set(graph) - GRAPH_KEYS)
    if extra:
        return {"non_field_errors": [MESSAGES["graph_extra_keys"].format(keys=", ".join(extra))]}
    null_paths = null_character_paths(graph)
    if null_paths:
        # The graph is stored as JSON, and PostgreSQL's jsonb refuses NUL in any string.
        return {path: [MESSAGES["null_character"]] for path in null_paths}
    hardware_rows = (
        visible_components(user=owner)
        .filter(pk__in=graph_references(graph, "hardware"))
        .values_list("pk", "shared", "type", "name")
    )
    hardware_shared = {pk: is_shared for pk, is_shared, _, _ in hardware_rows}
    hardware_types = {pk: kind for pk, _, kind, _ in hardware_rows}
    # Messages name a visible record by its name; an invisible one only by the id given.
    hardware_names = {pk: name for pk, _, _, name in hardware_rows}
    attributes: dict[int, dict[str, float]] = {pk: {} for pk in hardware_types}
    for component_id, key, value in Attribute.objects.filter(
        component_id__in=list(hardware_types)
    ).values_list("component_id", "key", "value"):
        attributes[component_id][key] = value
    model_rows = (
        visible_computational_models(user=owner)
        .filter(pk__in=graph_references(graph, "model"))
        .values_list("pk", "shared", "name")
    )
    models_shared = {pk: is_shared for pk, is_shared, _ in model_rows}
    model_names = {pk: name for pk, _, name in model_rows}

    def hardware_ok(ref: object) -> str | None:
        if not is_record_id(ref):
            return MESSAGES["hardware_not_id"]
        if ref not in hardware_shared:
            return MESSAGES["hardware_missing"].format(ref=ref)
        if shared and not hardware_shared[ref]:
            return MESSAGES["shared_needs_shared_hardware"].format(name=hardware_names[ref])
        return None

    def model_ok(ref: object) -> str | None:
        if not is_record_id(ref):
            return MESSAGES["model_not_id"]
        if ref not in models_shared:
            return MESSAGES["model_missing"].format(ref=ref)
        if shared and not models_shared[ref]:
            return MESSAGES["shared_needs_shared_model"].format(name=model_names[ref])
        return None

    return validate_graph(
        graph.get("nodes"),
        graph.get("edges", []),
        hardware_ok=hardware_ok,
        model_ok=model_ok,
        hardware_type=lambda ref: hardware_types.get(ref) if isinstance(ref, int) else None,
        hardware_attributes=lambda ref: attributes.get(ref) if isinstance(ref, int) else None,
        **({"topologies": graph["topologies"]} if "topologies" in graph else {}),
        **({"network_model": graph["networkModel"]} if "networkModel" in graph else {}),
    )
