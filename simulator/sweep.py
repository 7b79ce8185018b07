"""Sweeps: axes of values, their points, and hardware swapped into a node of the snapshot.

One rule set for the CLI (`python -m simulator sweep`) and the web side (a sweep launched
through REST), so both run the same points for the same axes. An axis is a single value, a
list of values, or an inclusive range {start, stop, step}: from start to stop, `stop`
included when the steps reach it within a millionth of a step (`RANGE_TOLERANCE`, so that
0.1-steps do not lose their last point to float drift); a stop the steps miss is not
reached. A range of integers gives integers, computed exactly; any float in it gives floats
rounded to 12 significant digits (`SIGNIFICANT_DIGITS`: 0.1-steps give 0.3, not
0.30000000000000004).

What an axis varies is read from its name (`axis_kind`, `parse_axes`), by one rule for both:

- `N`: the application variable `N`;
- `gpu0.memoryBandwidth`: the hardware attribute `memoryBandwidth` of node `gpu0`;
- `GPU.SMCoreClock`: that attribute of every node whose hardware is of type GPU;
- `labels.GPU`: the number of processes of label GPU, and with it the instances (`count`)
  of the one node carrying that label: ceil(processes / the node's multiplicity), so a
  scaling study from 1 to 1,024 GPUs needs no edited system;
- `topology.nvlink.domainSize`: a parameter of the topology template `nvlink`
  (simulator.topology PARAMETERS: a fat tree's `down`/`up` as whole lists or one level,
  `up[1]`; a torus's `dims` or `dims[0]`; `rails`, `spines`, `serversPerLeaf`,
  `domainSize`; `routing`), and `topology.nvlink.endpoints`: the instances of the
  template's endpoints node, with the processes of the labels that node carries (count x
  multiplicity), the scaling axis of a templated network.

A template's switch and link nodes are given the instance counts the point's template needs
(simulator.topology's own sizes), after every axis of the point is applied; a point the
template's rules refuse (a fat tree's `down` whose product is not the endpoints' count) is
refused naming the axis and the template's field, at parse time where no other axis of the
sweep changes that template's endpoints, else when the point is made.

A point is applied to a copy of the snapshot (`apply_point`): an attribute is set in the
snapshot's own copy of the record (a node sharing its record with nodes the axis does not
name gets a copy of its own inside the snapshot); no hardware database record is cloned.
The attributes of a type are set before those of a node, so a node's own axis wins.
"""

from __future__ import annotations

import copy
import itertools
import math
import re
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

from simulator import topology as templates
from simulator.attribute_ranges import range_error as attribute_range_error
from simulator.snapshot import IDENTIFIER

__all__ = [
    "AXIS_MESSAGES",
    "MAX_POINTS",
    "RANGE_MESSAGES",
    "RANGE_TOLERANCE",
    "SIGNIFICANT_DIGITS",
    "Axis",
    "AxisError",
    "apply_point",
    "axis_values",
    "parse_axes",
    "range_count",
    "range_error",
    "range_values",
    "size_error",
    "swap_hardware",
    "swap_model",
    "sweep_points",
]

RANGE_TOLERANCE = 1e-6  # of a step
# The most points a sweep may have where no other cap is configured (the command line's;
# the web side reads its own setting, PARASIM_MAX_SWEEP, through the same message).
MAX_POINTS = 10_000
SIGNIFICANT_DIGITS = 12

Number = int | float

RANGE_MESSAGES = {
    "number": "Expected a finite number.",
    "step": "The step must be above 0.",
    "order": "The stop must not be below the start.",
}


def range_error(start: object, stop: object, step: object) -> tuple[str, str] | None:
    """Return (the part at fault: "start", "stop" or "step", its message) when these do not
    make a range, else None: each a finite number (not a bool), step above 0, stop not
    below start."""
    parts = {"start": start, "stop": stop, "step": step}
    for name, value in parts.items():
        if isinstance(value, bool) or not isinstance(value, int | float):
            return name, RANGE_MESSAGES["number"]
        if isinstance(value, float) and not math.isfinite(value):
            return name, RANGE_MESSAGES["number"]
    assert isinstance(start, int | float) and isinstance(stop, int | float)
    assert isinstance(step, int | float)
    if step <= 0:
        return "step", RANGE_MESSAGES["step"]
    if stop < start:
        return "stop", RANGE_MESSAGES["order"]
    return None


def range_count(start: Number, stop: Number, step: Number) -> int:
    """Return how many values the inclusive range holds (0 when stop is below start).

    `step` must be above 0. Beyond the float range (1e308 / 1e-308) the count is exact.
    """
    if stop < start:
        return 0
    try:
        steps = (stop - start) / step
    except OverflowError:  # integers beyond the float range
        steps = math.inf
    if math.isfinite(steps):
        return math.floor(steps + RANGE_TOLERANCE) + 1
    return math.floor((Fraction(stop) - Fraction(start)) / Fraction(step)) + 1


def range_values(start: Number, stop: Number, step: Number) -> list[Number]:
    """Return the values of the inclusive range start..stop by `step` (above 0)."""
    count = range_count(start, stop, step)
    if all(isinstance(value, int) for value in (start, stop, step)):
        return [start + index * step for index in range(count)]
    # The tolerance lets the last step land a hair beyond stop: it is stop.
    return [
        float(f"{min(start + index * step, stop):.{SIGNIFICANT_DIGITS}g}") for index in range(count)
    ]


def axis_values(axis: object) -> list[object]:
    """Return the values of an axis: a list (as is), a range {start, stop, step} (already
    checked: numbers, step above 0), or a single value."""
    if isinstance(axis, list):
        return list(axis)
    if isinstance(axis, Mapping):
        return list(range_values(axis["start"], axis["stop"], axis["step"]))
    return [axis]


def sweep_points(axes: Mapping[str, Sequence[object]]) -> list[dict[str, object]]:
    """Return the points of the product of `axes` (name -> values), the last axis varying
    fastest, each point mapping every axis's name to its value."""
    names = list(axes)
    return [
        dict(zip(names, values, strict=True))
        for values in itertools.product(*(axes[name] for name in names))
    ]


def swap_hardware(
    snapshot: Mapping[str, Any], node_id: str, record: Mapping[str, Any], *, key: str
) -> dict[str, Any]:
    """Return a copy of `snapshot` whose node `node_id` uses the hardware `record`, stored
    in the snapshot's hardware under `key` (the snapshot itself is left unchanged).

    A node named after its hardware (the system editor names a new node so) or not named
    takes the new record's name, so that results and charts name the hardware the point ran
    on, not the one it replaced; a name of the user's own choosing is kept.
    """
    variant: dict[str, Any] = copy.deepcopy(dict(snapshot))
    hardware = variant["hardware"]
    for node in variant["nodes"]:
        if node.get("id") == node_id:
            replaced = hardware.get(node.get("hardware"))
            replaced_name = replaced.get("name") if isinstance(replaced, Mapping) else None
            if not node.get("name") or node.get("name") == replaced_name:
                node["name"] = record.get("name") or node.get("name", "")
            node["hardware"] = key
    hardware[key] = copy.deepcopy(dict(record))
    return variant


def swap_model(
    snapshot: Mapping[str, Any], node_id: str, record: Mapping[str, Any], *, key: str
) -> dict[str, Any]:
    """Return a copy of `snapshot` whose node `node_id` runs the computational model
    `record`, stored in the snapshot's models under `key` (the snapshot is left unchanged;
    the model it replaces stays, for the other nodes that may use it)."""
    variant: dict[str, Any] = copy.deepcopy(dict(snapshot))
    for node in variant["nodes"]:
        if node.get("id") == node_id:
            node["model"] = key
    variant.setdefault("models", {})[key] = copy.deepcopy(dict(record))
    return variant


AXIS_MESSAGES = {
    "name": (
        "Unknown axis {name!r}: expected a variable name, NODE.attribute, TYPE.attribute, "
        "labels.LABEL or topology.ID.PARAMETER."
    ),
    "topology": "No topology template {id!r} in the system; its templates: {known}.",
    "topology_parameter": (
        "A {kind} template has no parameter {parameter!r}; expected one of {known}."
    ),
    "topology_index": "{parameter} has {length} levels; index {index} is not one of them.",
    "topology_value": "{field}: {message}",
    "topology_point": "At {point}: {field}: {message}",
    "two_counts": (
        "A labels axis already sets the instances of node {node!r}; sweep one of the two."
    ),
    "variable": "Unknown variable {name!r}; the application model declares: {declared}.",
    "target": (
        "{target!r} is neither a node nor a hardware type of the system; nodes: {nodes}; "
        "types: {types}."
    ),
    "ambiguous": "{target!r} is both a node id and a hardware type; rename the node.",
    "no_hardware": "Node {target!r} has no hardware record.",
    "attribute": (
        "{record!r} (node {node!r}) has no attribute {key!r}; it has: {known}. Add it to the "
        "record first."
    ),
    "attribute_value": "Expected a finite number for {key}, got {value!r}.",
    "attribute_range": "{message}",
    "label": "No node of the system carries label {label!r}; labels in the system: {known}.",
    "label_nodes": (
        "Label {label!r} is carried by {count} nodes ({nodes}); a count axis needs exactly one "
        "node carrying it."
    ),
    "count_value": "A process count is a whole number of at least 1, got {value!r}.",
    "repeated": "Axis {name!r} is given twice.",
    "too_many": "The sweep has {size} points; at most {limit} are allowed.",
}

LABELS_PREFIX = "labels."
TOPOLOGY_PREFIX = "topology."
# What a topology axis may set besides the kind's PARAMETERS.
TOPOLOGY_EXTRA = ("endpoints", "routing")
_INDEXED = re.compile(r"^([A-Za-z]+)\[(\d+)\]$")


class AxisError(ValueError):
    """A sweep axis that cannot be swept: `field` names it (`axes.gpu0.SMs[2]`)."""

    def __init__(self, field: str, message: str) -> None:
        super().__init__(f"{field}: {message}")
        self.field = field
        self.message = message


@dataclass(frozen=True)
class Axis:
    """One checked axis: what it varies (`kind`: "variable", "attribute", "count" or
    "topology"), on what (`target`: the variable, the node id or hardware type, the label,
    the template's id), the attribute or template parameter `key` (`index`: the level of a
    list parameter, -1 for the whole), the `nodes` it sets, its values, and the `field` its
    refusals name."""

    name: str
    kind: str
    target: str
    values: tuple[object, ...]
    key: str = ""
    nodes: tuple[str, ...] = ()
    index: int = -1
    field: str = ""


def size_error(size: int, limit: int) -> str | None:
    """Return the message for a sweep of `size` points over the cap `limit`, else None."""
    return AXIS_MESSAGES["too_many"].format(size=size, limit=limit) if size > limit else None


def _hardware_nodes(snapshot: Mapping[str, Any]) -> dict[str, Mapping[str, Any]]:
    return {
        str(node.get("id")): node
        for node in snapshot.get("nodes") or []
        if isinstance(node, Mapping) and not node.get("group")
    }


def _record(snapshot: Mapping[str, Any], node: Mapping[str, Any]) -> Mapping[str, Any] | None:
    record = (snapshot.get("hardware") or {}).get(node.get("hardware"))
    return record if isinstance(record, Mapping) else None


def parse_axes(
    axes: Mapping[str, Sequence[object]],
    snapshot: Mapping[str, Any],
    *,
    declared: Collection[str] | None = None,
    field: str = "axes",
) -> list[Axis]:
    """Return the checked axes of `axes` (name -> values) on `snapshot`; raise AxisError
    naming the first bad one (`field`.name, with [index] for a bad value).

    `declared`: the application's variable names (None: any variable name is taken).
    An attribute must already be in every record the axis sets (a misspelt key would
    otherwise sweep nothing), each value in its key's range (simulator.attribute_ranges).
    """
    nodes = _hardware_nodes(snapshot)
    types: dict[str, list[str]] = {}
    for node_id, node in nodes.items():
        record = _record(snapshot, node)
        if record is not None:
            types.setdefault(str(record.get("type")), []).append(node_id)
    checked: list[Axis] = []
    for name, raw in axes.items():
        path = f"{field}.{name}"
        values = tuple(raw)
        topology_prefix = TOPOLOGY_PREFIX.rstrip(".")
        if name.startswith(TOPOLOGY_PREFIX) and topology_prefix not in nodes | types:
            checked.append(_topology_axis(name, path, values, snapshot))
            continue
        if name.startswith(LABELS_PREFIX):
            label = name[len(LABELS_PREFIX) :]
            carriers = [i for i, n in nodes.items() if label in (n.get("labels") or {})]
            if not carriers:
                known = sorted({lb for n in nodes.values() for lb in n.get("labels") or {}})
                raise AxisError(
                    path,
                    AXIS_MESSAGES["label"].format(label=label, known=", ".join(known) or "none"),
                )
            if len(carriers) > 1:
                raise AxisError(
                    path,
                    AXIS_MESSAGES["label_nodes"].format(
                        label=label, count=len(carriers), nodes=", ".join(carriers)
                    ),
                )
            for index, value in enumerate(values):
                if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                    raise AxisError(
                        f"{path}[{index}]", AXIS_MESSAGES["count_value"].format(value=value)
                    )
            checked.append(Axis(name, "count", label, values, nodes=(carriers[0],), field=path))
            continue
        if "." not in name:
            if not IDENTIFIER.match(name):
                raise AxisError(path, AXIS_MESSAGES["name"].format(name=name))
            if declared is not None and name not in declared:
                listed = ", ".join(declared) or "none"
                raise AxisError(path, AXIS_MESSAGES["variable"].format(name=name, declared=listed))
            checked.append(Axis(name, "variable", name, values))
            continue
        target, _, key = name.rpartition(".")
        if not IDENTIFIER.match(key) or not target:
            raise AxisError(path, AXIS_MESSAGES["name"].format(name=name))
        if target in nodes and target in types:
            raise AxisError(path, AXIS_MESSAGES["ambiguous"].format(target=target))
        if target in nodes:
            if _record(snapshot, nodes[target]) is None:
                raise AxisError(path, AXIS_MESSAGES["no_hardware"].format(target=target))
            targets = [target]
        elif target in types:
            targets = types[target]
        else:
            raise AxisError(
                path,
                AXIS_MESSAGES["target"].format(
                    target=target,
                    nodes=", ".join(nodes) or "none",
                    types=", ".join(sorted(types)) or "none",
                ),
            )
        for node_id in targets:
            record = _record(snapshot, nodes[node_id]) or {}
            attributes = record.get("attributes") or {}
            if key not in attributes:
                raise AxisError(
                    path,
                    AXIS_MESSAGES["attribute"].format(
                        record=record.get("name") or nodes[node_id].get("hardware"),
                        node=node_id,
                        key=key,
                        known=", ".join(sorted(attributes)) or "none",
                    ),
                )
        for index, value in enumerate(values):
            finite = isinstance(value, int | float) and not isinstance(value, bool)
            if not finite or not math.isfinite(float(value)):  # type: ignore[arg-type]
                raise AxisError(
                    f"{path}[{index}]",
                    AXIS_MESSAGES["attribute_value"].format(key=key, value=value),
                )
            fault = attribute_range_error(key, float(value))  # type: ignore[arg-type]
            if fault is not None:
                raise AxisError(f"{path}[{index}]", fault)
        checked.append(
            Axis(name, "attribute", target, values, key=key, nodes=tuple(targets), field=path)
        )
    _check_topology_values(checked, snapshot)
    return checked


def _templates(snapshot: Mapping[str, Any]) -> dict[str, dict[str, Any]]:
    return {
        str(item.get("id")): item
        for item in snapshot.get("topologies") or []
        if isinstance(item, dict) and item.get("id")
    }


def _whole(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value >= 1


def _topology_axis(
    name: str, path: str, values: tuple[object, ...], snapshot: Mapping[str, Any]
) -> Axis:
    """Return the checked axis `topology.ID.PARAMETER` (the values' shapes checked here, the
    template's rules by `_check_topology_values` or when the point is made)."""
    topology_id, _, parameter = name[len(TOPOLOGY_PREFIX) :].rpartition(".")
    known = _templates(snapshot)
    item = known.get(topology_id)
    if item is None or item.get("kind") not in templates.KINDS:
        listed = ", ".join(sorted(known)) or "none"
        raise AxisError(path, AXIS_MESSAGES["topology"].format(id=topology_id, known=listed))
    kind = str(item["kind"])
    allowed = (*templates.PARAMETERS[kind], *TOPOLOGY_EXTRA)
    index = -1
    match = _INDEXED.match(parameter)
    key = match.group(1) if match else parameter
    if key not in allowed:
        raise AxisError(
            path,
            AXIS_MESSAGES["topology_parameter"].format(
                kind=kind, parameter=parameter, known=", ".join(allowed)
            ),
        )
    current = item.get(key)
    if match:
        index = int(match.group(2))
        if not isinstance(current, list) or index >= len(current):
            length = len(current) if isinstance(current, list) else 0
            raise AxisError(
                path,
                AXIS_MESSAGES["topology_index"].format(parameter=key, length=length, index=index),
            )
    for position, value in enumerate(values):
        fault = None
        if key == "routing":
            if value not in templates.ROUTINGS[kind]:
                fault = templates.MESSAGES["routing"].format(
                    value=value, kind=kind, known=", ".join(templates.ROUTINGS[kind])
                )
        elif isinstance(current, list) and index < 0:
            levels = _levels(value)
            if levels is None or not all(_whole(v) for v in levels):
                fault = templates.MESSAGES["dims" if key == "dims" else "levels"]
        elif not _whole(value):
            fault = AXIS_MESSAGES["count_value"].format(value=value)
            if key != "endpoints":
                fault = templates.MESSAGES["whole"]
        if fault is not None:
            raise AxisError(f"{path}[{position}]", fault)
    endpoints = str(item.get("endpoints"))
    return Axis(
        name, "topology", topology_id, values, key=key, nodes=(endpoints,), index=index, field=path
    )


def _levels(value: object) -> list[object] | None:
    """Return a list parameter's value: a list, or its text "8x4" (the command line's)."""
    if isinstance(value, list):
        return value
    if isinstance(value, str) and re.fullmatch(r"\d+(x\d+)*", value):
        return [int(part) for part in value.split("x")]
    return None


def _set_parameter(item: dict[str, Any], axis: Axis, value: object) -> None:
    if axis.index < 0 and isinstance(item.get(axis.key), list):
        item[axis.key] = _levels(value)
    elif axis.index >= 0:
        levels = list(item[axis.key])
        levels[axis.index] = value
        item[axis.key] = levels
    else:
        item[axis.key] = copy.deepcopy(value)


def _template_fault(item: Mapping[str, Any], count: int) -> tuple[str, str] | None:
    """Return (the template's field, its message) when `item` breaks its kind's rules with
    `count` endpoints, else None (simulator.topology's own rules, not a copy of them)."""
    _, errors = templates.template_sizes(item, count)
    for where, messages in errors.items():
        return where, messages[0]
    return None


def _template_sizes(item: Mapping[str, Any], count: int) -> dict[str, int]:
    return templates.template_sizes(item, count)[0]


def _check_topology_values(checked: Sequence[Axis], snapshot: Mapping[str, Any]) -> None:
    """Refuse a template parameter's value its template's rules refuse, where no other axis
    changes that template's endpoints (else the point is checked when it is made)."""
    counted = {node for a in checked if a.kind == "count" for node in a.nodes}
    for axis in checked:
        if axis.kind == "topology" and axis.key == "endpoints" and axis.nodes[0] in counted:
            raise AxisError(axis.field, AXIS_MESSAGES["two_counts"].format(node=axis.nodes[0]))
    counted |= {a.nodes[0] for a in checked if a.kind == "topology" and a.key == "endpoints"}
    by_id = _hardware_nodes(snapshot)
    parameters = [a for a in checked if a.kind == "topology" and a.key != "endpoints"]
    for axis in parameters:
        if axis.nodes[0] in counted:
            continue
        if sum(1 for other in parameters if other.target == axis.target) > 1:
            continue  # two parameters of one template: checked together, point by point
        count = int((by_id.get(axis.nodes[0]) or {}).get("count", 1))
        for position, value in enumerate(axis.values):
            item = copy.deepcopy(_templates(snapshot)[axis.target])
            _set_parameter(item, axis, value)
            fault = _template_fault(item, count)
            if fault is not None:
                where, message = fault
                raise AxisError(
                    f"{axis.field}[{position}]",
                    AXIS_MESSAGES["topology_value"].format(field=where, message=message),
                )


def apply_point(
    snapshot: Mapping[str, Any],
    labels: Mapping[str, object],
    axes: Sequence[Axis],
    point: Mapping[str, object],
) -> tuple[dict[str, Any], dict[str, object], dict[str, object]]:
    """Return (snapshot, labels, variables) of one point: `point` maps each axis's name to
    its value. The snapshot is copied only when an attribute or count axis changes it; the
    given snapshot and labels are left unchanged."""
    variables = {a.name: point[a.name] for a in axes if a.kind == "variable"}
    changes = [a for a in axes if a.kind != "variable"]
    new_labels = dict(labels)  # checked by the caller, with the point's counts
    if not changes:
        return dict(snapshot), new_labels, variables
    variant: dict[str, Any] = copy.deepcopy(dict(snapshot))
    hardware: dict[str, Any] = variant["hardware"]
    by_id = {node.get("id"): node for node in variant["nodes"] if isinstance(node, dict)}
    # Types first, then nodes: a node's own axis wins over its type's.
    ordered = sorted(changes, key=lambda a: a.kind != "attribute" or a.target in by_id)
    for axis in ordered:
        value = point[axis.name]
        if axis.kind == "count":
            node = by_id[axis.nodes[0]]
            multiplicity = max(int((node.get("labels") or {}).get(axis.target, 1)), 1)
            assert isinstance(value, int)
            new_labels[axis.target] = value
            node["count"] = -(-value // multiplicity)
            continue
        if axis.kind == "topology":
            if axis.key == "endpoints":
                node = by_id[axis.nodes[0]]
                node["count"] = value
                for label, multiplicity in (node.get("labels") or {}).items():
                    new_labels[label] = int(value) * max(int(multiplicity), 1)  # type: ignore[call-overload]
            else:
                item = next(t for t in variant["topologies"] if t.get("id") == axis.target)
                _set_parameter(item, axis, value)
            continue
        named = set(axis.nodes)
        for node_id in axis.nodes:
            node = by_id[node_id]
            key = node["hardware"]
            shared = any(
                other.get("hardware") == key and other_id not in named
                for other_id, other in by_id.items()
            )
            if shared:  # give this node its own copy, leaving the others' record as it is
                own = f"{key}@{node_id}"
                hardware[own] = copy.deepcopy(hardware[key])
                node["hardware"] = key = own
            hardware[key]["attributes"][axis.key] = value
    _resize_templates(variant, by_id, changes, point)
    return variant, new_labels, variables


def _resize_templates(
    variant: dict[str, Any],
    by_id: Mapping[object, dict[str, Any]],
    changes: Sequence[Axis],
    point: Mapping[str, object],
) -> None:
    """Give the switch and link nodes of every template a point's axes touch the instances
    the template needs; raise AxisError naming the axis when its rules refuse the point."""
    set_nodes = {node for a in changes if a.kind in ("count", "topology") for node in a.nodes}
    for item in variant.get("topologies") or []:
        if not isinstance(item, dict) or item.get("endpoints") not in set_nodes:
            continue
        endpoints = item["endpoints"]
        count = int(by_id[endpoints].get("count", 1))
        fault = _template_fault(item, count)
        if fault is not None:
            blamed = [a for a in changes if a.kind == "topology" and a.target == item.get("id")]
            blamed = [a for a in blamed if a.key != "endpoints"] or blamed
            blamed = blamed or [a for a in changes if endpoints in a.nodes]
            where, message = fault
            at = ", ".join(f"{a.name}={point[a.name]}" for a in changes if a.name in point)
            raise AxisError(
                blamed[0].field or blamed[0].name,
                AXIS_MESSAGES["topology_point"].format(point=at, field=where, message=message),
            )
        for node_id, needed in _template_sizes(item, count).items():
            if node_id in by_id:
                by_id[node_id]["count"] = needed
