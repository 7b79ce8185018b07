"""System snapshots: the self-contained description of the hardware a simulation runs on.

A snapshot (docs/contracts.md, "Contracts") inlines hardware records and computational models and
holds the system graph: nodes are hardware instances, groups nest nodes, edges connect nodes.
`validate_graph` holds the graph rules; the REST API of `hwdb` calls it with its own
reference checks so that the web side and the CLI give the same messages for the same
mistakes. `load_snapshot` validates a whole snapshot and returns frozen dataclasses.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from simulator import memory_spec
from simulator.errors import SnapshotError
from simulator.flows import DEFAULT_MODEL, FLOW_MESSAGES, NETWORK_MODELS, SHARING_POLICIES
from simulator.models.architectures import family_named, known_families
from simulator.topology import Topology, parse_topologies

COMPONENT_TYPES = ("GPU", "CPU", "NETWORK", "MEMORY", "STORAGE", "CACHE", "FABRIC")
MEMORY_FIELDS = ("next", "via", "coherence", "topology")
MODEL_LANGUAGES = ("javascript",)
MAX_NAME_LENGTH = 200
MAX_NODES = 100_000
MAX_COUNT = 1_000_000
KERNEL_MODES = ("analytic", "detailed", "petri", "waves")
MAX_KERNEL_WORKERS = 256

IDENTIFIER = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
NODE_ID = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9_.\-]*$")

# Attributes that are a yes or no, each with what 1 means: any other number is refused rather
# than read as true.
FLAG_ATTRIBUTES = {"nvls": "1: the switch supports NVLink SHARP, which algorithm 'nvls' needs"}

MESSAGES = {
    "object": "Expected an object.",
    "list": "Expected a list.",
    "required": "This field is required.",
    "string": "Expected a non-empty string.",
    "too_long": f"Ensure this field has no more than {MAX_NAME_LENGTH} characters.",
    "integer": "Expected a whole number.",
    "min_one": "Ensure this value is greater than or equal to 1.",
    "too_large": f"Ensure this value is less than or equal to {MAX_COUNT}.",
    "boolean": "Expected true or false.",
    "number": "Expected a finite number.",
    "flag": "Expected 0 or 1 ({meaning}).",
    "node_id": "Node ids are letters, digits, '_', '.' or '-', not starting with '.' or '-'.",
    "duplicate_id": "Node id {id!r} is already used by node {other!r}.",
    "too_many_nodes": f"A system holds at most {MAX_NODES} nodes.",
    "label_name": "Label {label!r} is not an identifier (letters, digits and '_', not starting with a digit).",
    "unknown_type": "Unknown component type {value!r}; expected one of "
    + ", ".join(COMPONENT_TYPES)
    + ".",
    "unknown_language": "Unknown model language {value!r}; expected one of "
    + ", ".join(MODEL_LANGUAGES)
    + ".",
    "unknown_hardware": "Unknown hardware {ref!r}.",
    "unknown_model": "Unknown computational model {ref!r}.",
    "hardware_required": "A node that is not a group needs hardware.",
    "group_hardware": "A group holds other nodes and has no hardware, model or labels.",
    "group_count": "A group cannot be repeated; set count on the nodes inside it.",
    "unknown_parent": "Unknown parent {ref!r}.",
    "parent_not_group": "Parent {ref!r} is not a group.",
    "parent_cycle": "Group nesting forms a cycle: {cycle}.",
    "kernel_mode": "Unknown kernel mode {value!r}; expected one of "
    + ", ".join(KERNEL_MODES)
    + ".",
    "kernel_mode_gpu": "The {mode} kernel mode simulates GPU kernels; {ref!r} is not a GPU.",
    "kernel_workers": f"Expected a whole number from 1 to {MAX_KERNEL_WORKERS}.",
    "edge_pair": "An edge is a pair of node ids.",
    "unknown_node": "Unknown node id {ref!r}.",
    "edge_group": "Node {ref!r} is a group; edges connect hardware nodes.",
    "self_loop": "An edge cannot connect a node to itself.",
    "duplicate_edge": "Duplicate edge between {a!r} and {b!r}.",
    "architectures": "Expected a list of GPU architecture families, each one of {known}.",
    "architecture": "Unknown GPU architecture family {value!r}; expected one of {known}.",
}

Reference = Callable[[object], "str | None"]
ABSENT = object()  # a graph field left out (validate_graph's `topologies`)
Errors = dict[str, list[str]]


@dataclass(frozen=True, slots=True)
class Hardware:
    """A hardware record: what the computational models see as attributes."""

    key: str
    type: str
    name: str
    attributes: Mapping[str, float]
    # The computational model the record's owner recommends for it (a GPU's: the kernel-time
    # model validated on its architecture), by name; "" when the record names none.
    recommended_model: str = ""


@dataclass(frozen=True, slots=True)
class Model:
    """A computational model: JavaScript shallow functions."""

    key: str
    language: str
    source: str
    name: str = ""  # what messages call it; the key when the snapshot gives no name
    # The GPU architecture families the model was validated on (simulator.model_validity);
    # empty: the model makes no such claim.
    validated_architectures: tuple[str, ...] = ()

    @property
    def title(self) -> str:
        """Return the name messages give the model: its name, else its key."""
        return self.name or self.key


@dataclass(frozen=True, slots=True)
class Node:
    """A node of the system graph: `count` instances of one hardware record, or a group."""

    id: str
    name: str
    hardware: str | None
    model: str | None
    count: int
    labels: Mapping[str, int]
    parent: str | None
    group: bool
    kernel_mode: str = "analytic"  # "detailed": GPU kernels simulated block by block
    kernel_workers: int = 1  # processes the detailed mode splits the SMs over
    next: str | None = None  # the next memory level outwards (simulator.memory_spec)
    via: str | None = None  # the fabric crossed on the way to `next`
    coherence: str = "none"  # "mesi": this cache holds the directory of the caches below
    topology: str = "crossbar"  # of a FABRIC node
    sharing: str = "fifo"  # of a network node: simulator.flows.SHARING_POLICIES

    def capacity(self, label: str) -> int:
        """Return how many processes with `label` the node's instances hold together."""
        return self.count * self.labels.get(label, 0)


@dataclass(frozen=True, slots=True)
class SystemSnapshot:
    """A validated system: hardware and models by key, nodes by id in order, edges."""

    name: str
    hardware: Mapping[str, Hardware]
    models: Mapping[str, Model]
    nodes: Mapping[str, Node]
    edges: tuple[tuple[str, str], ...] = field(default=())
    # topology templates (simulator.topology): instance-level links and routing of the nodes
    # they name; empty for a graph drawn box by box
    topologies: tuple[Topology, ...] = field(default=())
    # how flow links share bandwidth (simulator.flows.NETWORK_MODELS)
    network_model: str = DEFAULT_MODEL

    def to_dict(self) -> dict[str, Any]:
        """Return the JSON form of docs/contracts.md's snapshot contract."""
        nodes: list[dict[str, Any]] = []
        for node in self.nodes.values():
            item: dict[str, Any] = {"id": node.id, "name": node.name}
            if node.group:
                item["group"] = True
            else:
                item.update(hardware=node.hardware, model=node.model, count=node.count)
                item["labels"] = dict(node.labels)
                if node.kernel_mode != "analytic":
                    item["kernelMode"] = node.kernel_mode
                if node.kernel_workers != 1:
                    item["kernelWorkers"] = node.kernel_workers
                for key, value, default in (
                    ("next", node.next, None),
                    ("via", node.via, None),
                    ("coherence", node.coherence, "none"),
                    ("topology", node.topology, "crossbar"),
                    ("sharing", node.sharing, "fifo"),
                ):
                    if value != default:
                        item[key] = value
            if node.parent is not None:
                item["parent"] = node.parent
            nodes.append(item)
        network = (
            {} if self.network_model == DEFAULT_MODEL else {"networkModel": self.network_model}
        )
        return {
            "name": self.name,
            **network,
            "hardware": {
                key: {
                    "type": hw.type,
                    "name": hw.name,
                    "attributes": dict(hw.attributes),
                    **({"recommendedModel": hw.recommended_model} if hw.recommended_model else {}),
                }
                for key, hw in self.hardware.items()
            },
            "models": {
                key: {
                    "language": m.language,
                    "source": m.source,
                    **({"name": m.name} if m.name else {}),
                    **(
                        {"validatedArchitectures": list(m.validated_architectures)}
                        if m.validated_architectures
                        else {}
                    ),
                }
                for key, m in self.models.items()
            },
            "nodes": nodes,
            "edges": [list(edge) for edge in self.edges],
            **({"topologies": [t.to_dict() for t in self.topologies]} if self.topologies else {}),
        }


def _add(errors: Errors, path: str, message: str) -> None:
    errors.setdefault(path, []).append(message)


def _is_int(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _check_positive_int(errors: Errors, path: str, value: object) -> None:
    if not _is_int(value):
        _add(errors, path, MESSAGES["integer"])
    elif value < 1:  # type: ignore[operator]
        _add(errors, path, MESSAGES["min_one"])
    elif value > MAX_COUNT:  # type: ignore[operator]
        _add(errors, path, MESSAGES["too_large"])


def _check_kernel_mode(
    errors: Errors,
    path: str,
    node: Mapping[str, Any],
    hardware_type: Callable[[object], str | None] | None,
) -> None:
    mode = node.get("kernelMode", "analytic")
    if mode not in KERNEL_MODES:
        _add(errors, f"{path}.kernelMode", MESSAGES["kernel_mode"].format(value=mode))
    elif mode != "analytic" and hardware_type is not None:
        kind = hardware_type(node.get("hardware"))
        if kind is not None and kind != "GPU":
            ref = node_title(node)
            message = MESSAGES["kernel_mode_gpu"].format(mode=mode, ref=ref)
            _add(errors, f"{path}.kernelMode", message)
    workers = node.get("kernelWorkers", 1)
    if not _is_int(workers) or not 1 <= workers <= MAX_KERNEL_WORKERS:
        _add(errors, f"{path}.kernelWorkers", MESSAGES["kernel_workers"])


def node_title(node: Mapping[str, Any]) -> str:
    """Return what messages call a graph node: its name, else its id."""
    name = node.get("name")
    return name if isinstance(name, str) and name.strip() else str(node.get("id"))


def _check_name(errors: Errors, path: str, value: object, *, required: bool) -> None:
    if value is None and not required:
        return
    if not isinstance(value, str) or not value.strip():
        _add(errors, path, MESSAGES["string"] if value is not None else MESSAGES["required"])
    elif len(value) > MAX_NAME_LENGTH:
        _add(errors, path, MESSAGES["too_long"])


def _check_network_model(errors: Errors, network: object) -> None:
    """A snapshot's (or stored graph's) `networkModel`: one of simulator.flows.NETWORK_MODELS."""
    if not isinstance(network, str) or network not in NETWORK_MODELS:
        _add(errors, "networkModel", FLOW_MESSAGES["model"].format(value=network))


def validate_graph(
    nodes: object,
    edges: object,
    *,
    hardware_ok: Reference,
    model_ok: Reference,
    hardware_type: Callable[[object], str | None] | None = None,
    hardware_attributes: Callable[[object], Mapping[str, float] | None] | None = None,
    topologies: object = ABSENT,
    network_model: object = ABSENT,
) -> Errors:
    """Return the graph's errors as {field path: [messages]}; empty when the graph is valid.

    `hardware_ok` and `model_ok` judge a node's references and return a message for a bad
    one (missing, invisible to the user) or None when it is fine; `hardware_type` returns a
    reference's component type (None: unknown) so that modes only a GPU has are checked;
    `hardware_attributes` returns a reference's attributes (None: unknown) so that memory
    paths are checked for line sizes and memory latency (simulator.memory_spec);
    `topologies`: the graph's topology templates (simulator.topology); left out when the
    graph has none (null is refused: the field is a list); `network_model`: the graph's
    `networkModel` (simulator.flows.NETWORK_MODELS), left out when it has none.
    """
    errors: Errors = {}
    if network_model is not ABSENT:
        _check_network_model(errors, network_model)
    if not isinstance(nodes, list):
        _add(errors, "nodes", MESSAGES["list"])
        nodes = []
    if len(nodes) > MAX_NODES:
        _add(errors, "nodes", MESSAGES["too_many_nodes"])
        return errors
    groups: set[str] = set()
    parents: dict[str, str] = {}
    seen: dict[str, int] = {}
    memory_nodes: list[tuple[int, dict[str, Any]]] = []
    for index, node in enumerate(nodes):
        path = f"nodes[{index}]"
        if not isinstance(node, dict):
            _add(errors, path, MESSAGES["object"])
            continue
        node_id = node.get("id")
        if node_id is None:
            _add(errors, f"{path}.id", MESSAGES["required"])
        elif not isinstance(node_id, str) or not NODE_ID.match(node_id) or len(node_id) > 100:
            _add(errors, f"{path}.id", MESSAGES["node_id"])
        elif node_id in seen:
            other = node_title(nodes[seen[node_id]])
            _add(errors, f"{path}.id", MESSAGES["duplicate_id"].format(id=node_id, other=other))
        else:
            seen[node_id] = index
            memory_nodes.append((index, node))
        _check_name(errors, f"{path}.name", node.get("name"), required=False)
        is_group = node.get("group", False)
        if not isinstance(is_group, bool):
            _add(errors, f"{path}.group", MESSAGES["boolean"])
            is_group = False
        if is_group:
            if isinstance(node_id, str):
                groups.add(node_id)
            for key in (
                "hardware",
                "model",
                "labels",
                "kernelMode",
                "kernelWorkers",
                "sharing",
                *MEMORY_FIELDS,
            ):
                if node.get(key) not in (None, {}):
                    _add(errors, f"{path}.{key}", MESSAGES["group_hardware"])
            if node.get("count", 1) != 1:
                _add(errors, f"{path}.count", MESSAGES["group_count"])
        else:
            hardware = node.get("hardware")
            if hardware is None:
                _add(errors, f"{path}.hardware", MESSAGES["hardware_required"])
            else:
                problem = hardware_ok(hardware)
                if problem:
                    _add(errors, f"{path}.hardware", problem)
            model = node.get("model")
            if model is not None:
                problem = model_ok(model)
                if problem:
                    _add(errors, f"{path}.model", problem)
            _check_positive_int(errors, f"{path}.count", node.get("count", 1))
            _check_kernel_mode(errors, path, node, hardware_type)
            sharing = node.get("sharing", "fifo")
            if sharing not in SHARING_POLICIES:
                _add(errors, f"{path}.sharing", FLOW_MESSAGES["sharing"].format(value=sharing))
            elif sharing != "fifo" and hardware_type is not None:
                kind = hardware_type(node.get("hardware"))
                if kind is not None and kind != "NETWORK":
                    message = FLOW_MESSAGES["sharing_network"].format(value=sharing, kind=kind)
                    _add(errors, f"{path}.sharing", message)
            labels = node.get("labels", {})
            if not isinstance(labels, dict):
                _add(errors, f"{path}.labels", MESSAGES["object"])
            else:
                for label, multiplicity in labels.items():
                    if not isinstance(label, str) or not IDENTIFIER.match(label):
                        _add(errors, f"{path}.labels", MESSAGES["label_name"].format(label=label))
                    else:
                        _check_positive_int(errors, f"{path}.labels.{label}", multiplicity)
        parent = node.get("parent")
        if parent is not None and isinstance(node_id, str) and seen.get(node_id) == index:
            parents[node_id] = parent
    # Messages name a node by its name (node_title); its id stays in the field path.
    titles = {node_id: node_title(nodes[index]) for node_id, index in seen.items()}
    for node_id, parent in parents.items():
        path = f"nodes[{seen[node_id]}].parent"
        if not isinstance(parent, str) or parent not in seen:
            _add(errors, path, MESSAGES["unknown_parent"].format(ref=parent))
        elif parent not in groups:
            _add(errors, path, MESSAGES["parent_not_group"].format(ref=titles[parent]))
    reported: set[str] = set()
    for start in parents:
        chain = [start]
        current = parents.get(start)
        while isinstance(current, str) and current in parents and current not in chain:
            chain.append(current)
            current = parents[current]
        if current == start and start not in reported:
            reported.update(chain)
            cycle = " -> ".join(titles[node_id] for node_id in [*chain, start])
            _add(
                errors, f"nodes[{seen[start]}].parent", MESSAGES["parent_cycle"].format(cycle=cycle)
            )
    _merge(errors, _memory_errors(memory_nodes, hardware_type, hardware_attributes))
    if topologies is not ABSENT:
        _merge(errors, topology_errors(nodes, topologies, hardware_type, seen, groups, titles))
    if not isinstance(edges, list):
        _add(errors, "edges", MESSAGES["list"])
        return errors
    pairs: set[frozenset[str]] = set()
    for index, edge in enumerate(edges):
        path = f"edges[{index}]"
        if not isinstance(edge, list | tuple) or len(edge) != 2:
            _add(errors, path, MESSAGES["edge_pair"])
            continue
        ends_ok = True
        for end, ref in enumerate(edge):
            if not isinstance(ref, str) or ref not in seen:
                _add(errors, f"{path}[{end}]", MESSAGES["unknown_node"].format(ref=ref))
                ends_ok = False
            elif ref in groups:
                _add(errors, f"{path}[{end}]", MESSAGES["edge_group"].format(ref=titles[ref]))
                ends_ok = False
        if not ends_ok:
            continue
        a, b = edge
        if a == b:
            _add(errors, path, MESSAGES["self_loop"])
        elif frozenset((a, b)) in pairs:
            _add(errors, path, MESSAGES["duplicate_edge"].format(a=titles[a], b=titles[b]))
        else:
            pairs.add(frozenset((a, b)))
    return errors


def topology_errors(
    nodes: list[Any],
    topologies: object,
    hardware_type: Callable[[object], str | None] | None,
    seen: Mapping[str, int],
    groups: set[str],
    titles: Mapping[str, str],
) -> Errors:
    """Return the errors of the graph's topology templates (simulator.topology)."""
    counts: dict[str, int] = {}
    for node_id, index in seen.items():
        if node_id not in groups:
            count = nodes[index].get("count", 1)
            counts[node_id] = count if _is_int(count) else 0

    def node_type(node_id: str) -> str | None:
        if hardware_type is None or node_id not in seen:
            return None
        return hardware_type(nodes[seen[node_id]].get("hardware"))

    return parse_topologies(topologies, counts, groups=groups, titles=titles, node_type=node_type)[
        1
    ]


def _merge(errors: Errors, more: Errors) -> None:
    for path, messages in more.items():
        for message in messages:
            _add(errors, path, message)


def _memory_errors(
    nodes: list[tuple[int, dict[str, Any]]],
    hardware_type: Callable[[object], str | None] | None,
    hardware_attributes: Callable[[object], Mapping[str, float] | None] | None,
) -> Errors:
    """Return the errors of the memory fields (next, via, coherence, topology)."""
    if not any(any(key in node for key in MEMORY_FIELDS) for _, node in nodes):
        return {}
    described: list[memory_spec.GraphNode] = []
    for index, node in nodes:
        is_group = node.get("group") is True
        reference = node.get("hardware")
        kind = "GROUP" if is_group else hardware_type(reference) if hardware_type else None
        count = node.get("count", 1)
        described.append(
            memory_spec.GraphNode(
                index=index,
                id=node["id"],
                name=node_title(node),
                kind=kind,
                count=count if _is_int(count) and count >= 1 else 0,
                next=node.get("next"),
                via=node.get("via"),
                coherence=node.get("coherence"),
                topology=node.get("topology"),
                attributes=hardware_attributes(reference)
                if hardware_attributes and not is_group
                else None,
            )
        )
    return memory_spec.graph_errors(described)


def _validate_hardware(data: object, errors: Errors) -> dict[str, Hardware]:
    result: dict[str, Hardware] = {}
    if not isinstance(data, dict):
        _add(errors, "hardware", MESSAGES["object"])
        return result
    for key, record in data.items():
        path = f"hardware.{key}"
        if not isinstance(record, dict):
            _add(errors, path, MESSAGES["object"])
            continue
        before = sum(len(v) for v in errors.values())
        kind = record.get("type")
        if kind not in COMPONENT_TYPES:
            _add(errors, f"{path}.type", MESSAGES["unknown_type"].format(value=kind))
        _check_name(errors, f"{path}.name", record.get("name"), required=True)
        attributes = record.get("attributes", {})
        values: dict[str, float] = {}
        if not isinstance(attributes, dict):
            _add(errors, f"{path}.attributes", MESSAGES["object"])
        else:
            for name, value in attributes.items():
                number_ok = isinstance(value, int | float) and not isinstance(value, bool)
                if not number_ok or not math.isfinite(value):
                    _add(errors, f"{path}.attributes.{name}", MESSAGES["number"])
                elif name in FLAG_ATTRIBUTES and value not in (0, 1):
                    meaning = FLAG_ATTRIBUTES[name]
                    _add(
                        errors,
                        f"{path}.attributes.{name}",
                        MESSAGES["flag"].format(meaning=meaning),
                    )
                else:
                    values[str(name)] = value
        if kind in ("CACHE", "FABRIC") and sum(len(v) for v in errors.values()) == before:
            for name, messages in memory_spec.attribute_errors(str(kind), values).items():
                for message in messages:
                    _add(errors, f"{path}.attributes.{name}", message)
        recommended = record.get("recommendedModel")
        _check_name(errors, f"{path}.recommendedModel", recommended, required=False)
        if sum(len(v) for v in errors.values()) == before:
            result[str(key)] = Hardware(
                str(key), str(kind), str(record["name"]), values, recommended or ""
            )
    return result


def _validate_models(data: object, errors: Errors) -> dict[str, Model]:
    result: dict[str, Model] = {}
    if data is None:
        return result
    if not isinstance(data, dict):
        _add(errors, "models", MESSAGES["object"])
        return result
    for key, record in data.items():
        path = f"models.{key}"
        if not isinstance(record, dict):
            _add(errors, path, MESSAGES["object"])
            continue
        language = record.get("language", "javascript")
        source = record.get("source")
        if language not in MODEL_LANGUAGES:
            _add(errors, f"{path}.language", MESSAGES["unknown_language"].format(value=language))
        elif not isinstance(source, str):
            _add(errors, f"{path}.source", MESSAGES["required"])
        else:
            name = record.get("name")
            title = name if isinstance(name, str) else ""
            families = _validated_architectures(
                errors, f"{path}.validatedArchitectures", record.get("validatedArchitectures", [])
            )
            result[str(key)] = Model(str(key), language, source, title, families)
    return result


def _validated_architectures(errors: Errors, path: str, value: object) -> tuple[str, ...]:
    """Return a model's validated architecture families, each under its canonical name
    ("Ada Lovelace" -> "Ada"); an error at `path` for anything else."""
    known = ", ".join(known_families())
    if not isinstance(value, list):
        _add(errors, path, MESSAGES["architectures"].format(known=known))
        return ()
    families: list[str] = []
    for index, name in enumerate(value):
        family = family_named(name)
        if family is None:
            _add(
                errors, f"{path}[{index}]", MESSAGES["architecture"].format(value=name, known=known)
            )
        elif family not in families:
            families.append(family)
    return tuple(families)


def load_snapshot(data: object) -> SystemSnapshot:
    """Return the validated snapshot for `data`; raise SnapshotError listing every problem."""
    if isinstance(data, SystemSnapshot):
        return data
    errors: Errors = {}
    if not isinstance(data, dict):
        raise SnapshotError({"snapshot": [MESSAGES["object"]]})
    _check_name(errors, "name", data.get("name"), required=True)
    network = data.get("networkModel", DEFAULT_MODEL)
    _check_network_model(errors, network)
    raw_hardware = data.get("hardware")
    raw_models = data.get("models", {})
    hardware = _validate_hardware(raw_hardware, errors)
    models = _validate_models(raw_models, errors)
    hardware_keys = raw_hardware if isinstance(raw_hardware, dict) else {}
    model_keys = raw_models if isinstance(raw_models, dict) else {}

    def hardware_ok(ref: object) -> str | None:
        if not isinstance(ref, str) or ref not in hardware_keys:
            return MESSAGES["unknown_hardware"].format(ref=ref)
        return None

    def model_ok(ref: object) -> str | None:
        if not isinstance(ref, str) or ref not in model_keys:
            return MESSAGES["unknown_model"].format(ref=ref)
        return None

    def hardware_type(ref: object) -> str | None:
        record = hardware_keys.get(ref) if isinstance(ref, str) else None
        kind = record.get("type") if isinstance(record, dict) else None
        return kind if isinstance(kind, str) else None

    def hardware_attributes(ref: object) -> Mapping[str, float] | None:
        record = hardware.get(ref) if isinstance(ref, str) else None
        return record.attributes if record is not None else None

    raw_nodes = data.get("nodes")
    raw_edges = data.get("edges", [])
    raw_topologies = data.get("topologies", ABSENT)
    errors.update(
        {
            path: errors.get(path, []) + messages
            for path, messages in validate_graph(
                raw_nodes,
                raw_edges,
                hardware_ok=hardware_ok,
                model_ok=model_ok,
                hardware_type=hardware_type,
                hardware_attributes=hardware_attributes,
                topologies=raw_topologies,
            ).items()
        }
    )
    if errors:
        raise SnapshotError(errors)
    assert isinstance(raw_nodes, list) and isinstance(raw_edges, list)
    nodes: dict[str, Node] = {}
    for raw in raw_nodes:
        is_group = bool(raw.get("group", False))
        nodes[raw["id"]] = Node(
            id=raw["id"],
            name=raw.get("name") or raw["id"],
            hardware=None if is_group else raw["hardware"],
            model=None if is_group else raw.get("model"),
            count=1 if is_group else raw.get("count", 1),
            labels={} if is_group else dict(raw.get("labels", {})),
            parent=raw.get("parent"),
            group=is_group,
            kernel_mode="analytic" if is_group else raw.get("kernelMode", "analytic"),
            kernel_workers=1 if is_group else raw.get("kernelWorkers", 1),
            next=raw.get("next"),
            via=raw.get("via"),
            coherence=raw.get("coherence", "none"),
            topology=raw.get("topology", "crossbar"),
            sharing="fifo" if is_group else raw.get("sharing", "fifo"),
        )
    edges = tuple((str(a), str(b)) for a, b in raw_edges)
    topologies: tuple[Topology, ...] = ()
    if isinstance(raw_topologies, list):
        counts = {node.id: node.count for node in nodes.values() if not node.group}
        topologies = tuple(parse_topologies(raw_topologies, counts)[0])
    return SystemSnapshot(
        str(data["name"]), hardware, models, nodes, edges, topologies, str(network)
    )
