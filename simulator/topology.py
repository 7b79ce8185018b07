"""Topology templates: a network of many instances described by a few nodes with counts.

A system graph may hold `topologies` (docs/topologies.md): each names an endpoints node (its
instances are the template's endpoints: GPUs, NICs) and the nodes whose instances are its
switches or links, with the template's parameters. Nothing is drawn instance by instance:
the template knows which instance joins which (`instance_edges`) and routes a pair of
endpoints arithmetically (`Topology.route`), so a 1,024-GPU fat-tree is three nodes and one
template, and routing a pair costs a few integer operations.

Kinds and their routing:

* ``fatTree``: an extended generalized fat-tree XGFT(h; m_1..m_h; w_1..w_h) (Ohring et al.,
  "On generalized fat trees", IPPS 1995): `down` = m (children per switch, level by level),
  `up` = w (parents per node of the level below). Routing ``dmodk`` (the up-port at level l is
  floor(d / (w_1 ... w_(l-1))) mod w_l, d the destination: Zahavi, "D-Mod-K routing providing
  non-blocking traffic for shift permutations on real life fat trees", 2010) or ``ecmp`` (the
  up-ports are the digits, in the same mixed radix, of a deterministic hash of source and
  destination: `flow_hash`).
* ``railLeafSpine``: servers of `rails` endpoints; endpoint r of every server joins the leaf
  of rail r in its group of `serversPerLeaf` servers; every leaf joins every spine. Routing
  ``dmodk`` (spine d mod spines) or ``ecmp``.
* ``ring``: endpoint i joins i+1 (mod n) through link instance i; ``shortest`` direction
  (ties forwards) or ``forward`` only.
* ``torus``: 2-D or 3-D, `dims` (x fastest); link e*D+k joins endpoint e to its + neighbour
  in dimension k; ``dor``: dimension-order routing, each dimension the shorter way (ties +).
* ``nvswitch``: domains of `domainSize` endpoints, each on one switch instance; ``direct``.
* ``switch``: the same one-hop domains for any other switch (a PCIe switch, an Ethernet
  top-of-rack switch).

The switch instances of every kind (`SWITCH_ROLES`) are non-blocking with a port per
neighbour: as flow links, a message shares the port it enters by and the one it leaves by
(simulator.platform World._route), so an endpoint's total egress and total ingress through a
switch are each limited to the switch's per-port bandwidth.

A route is the (node id, instance) pairs strictly between the two endpoints; None when the
template does not join them (two NVSwitch domains).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

KINDS = ("fatTree", "railLeafSpine", "ring", "torus", "nvswitch", "switch")
ROUTINGS: dict[str, tuple[str, ...]] = {
    "fatTree": ("dmodk", "ecmp"),
    "railLeafSpine": ("dmodk", "ecmp"),
    "ring": ("shortest", "forward"),
    "torus": ("dor",),
    "nvswitch": ("direct",),
    "switch": ("direct",),
}
# The node roles of each kind: a field naming one node, or a list of nodes (fat-tree levels).
ROLES: dict[str, tuple[str, ...]] = {
    "fatTree": ("switches",),
    "railLeafSpine": ("leaf", "spine"),
    "ring": ("link",),
    "torus": ("link",),
    "nvswitch": ("switch",),
    "switch": ("switch",),
}
# The roles whose instances are switches rather than links: a switch is non-blocking and each
# of its ports has the switch's bandwidth, so a flow through a switch instance crosses two
# constraints: the port it enters by (shared by everything the neighbour behind it sends into
# the switch) and the port it leaves by (shared by everything sent to the neighbour behind it),
# per direction when the node is full duplex, both directions of a port together when shared
# (`port_switches`; simulator.platform World._route). A link role (ring, torus) joins two
# neighbours, so its constraint per travel direction already is its port.
SWITCH_ROLES = frozenset({"switches", "leaf", "spine", "switch"})
MAX_LEVELS = 4
MAX_PARAMETER = 1_000_000

MESSAGES = {
    "list": "Expected a list.",
    "object": "Expected an object.",
    "required": "This field is required.",
    "kind": "Unknown topology kind {value!r}; expected one of " + ", ".join(KINDS) + ".",
    "routing": "Unknown routing {value!r} for a {kind}; expected one of {known}.",
    "id": "Expected a non-empty string.",
    "duplicate_id": "Topology id {id!r} is already used.",
    "unknown_node": "Unknown node id {ref!r}.",
    "group_node": "Node {ref!r} is a group; a topology joins hardware nodes.",
    "endpoint_role": "Node {ref!r} is the topology's endpoints; its {role} must be another node.",
    "role_twice": "Node {ref!r} has two roles in this topology.",
    "not_network": "Node {ref!r} is {type} hardware; a topology's switches and links are NETWORK "
    "hardware.",
    "whole": f"Expected a whole number from 1 to {MAX_PARAMETER}.",
    "whole_two": f"Expected a whole number from 2 to {MAX_PARAMETER}.",
    "levels": f"Expected a list of 1 to {MAX_LEVELS} whole numbers, one per level.",
    "switch_levels": "Expected one switch node per level ({levels}).",
    "dims": f"Expected 2 or 3 dimension sizes, each a whole number from 2 to {MAX_PARAMETER}.",
    "product": "The product of {field} ({product}) must equal the count of the endpoints node "
    "{ref!r} ({count}).",
    "divisible": "The endpoints node {ref!r} has count {count}, not a multiple of {field} "
    "({value}).",
    "count": "Node {ref!r} has count {count}; this {kind} needs {needed} {what}.",
    "unknown_keys": "Unknown fields for a {kind}: {keys}; expected {known}.",
}
# The parameters of each kind besides id, kind, endpoints, routing and its roles.
PARAMETERS: dict[str, tuple[str, ...]] = {
    "fatTree": ("down", "up"),
    "railLeafSpine": ("rails", "spines", "serversPerLeaf"),
    "ring": (),
    "torus": ("dims",),
    "nvswitch": ("domainSize",),
    "switch": ("domainSize",),
}

Errors = dict[str, list[str]]
Vertex = tuple[str, int]
_MASK = (1 << 64) - 1


def flow_hash(source: int, target: int, salt: int) -> int:
    """Return a deterministic 64-bit hash of a flow's ends and a salt (splitmix64's finaliser),
    the same in every run and process, unlike Python's `hash` of strings."""
    x = (source * 0x9E3779B97F4A7C15 + target * 0xC2B2AE3D27D4EB4F + salt + 1) & _MASK
    x = ((x ^ (x >> 30)) * 0xBF58476D1CE4E5B9) & _MASK
    x = ((x ^ (x >> 27)) * 0x94D049BB133111EB) & _MASK
    return x ^ (x >> 31)


@dataclass(frozen=True, slots=True)
class Topology:
    """A validated topology template bound to its nodes' counts."""

    id: str
    kind: str
    endpoints: str
    endpoint_count: int
    routing: str
    roles: Mapping[str, tuple[str, ...]]  # role -> node ids (fat-tree: one per level)
    params: Mapping[str, Any]
    sizes: Mapping[str, int]  # node id -> the instances the template needs of it
    route: Callable[[int, int], tuple[Vertex, ...] | None] = field(compare=False, repr=False)

    def to_dict(self) -> dict[str, Any]:
        """Return the JSON form of the template (as a graph holds it)."""
        item: dict[str, Any] = {"kind": self.kind, "endpoints": self.endpoints}
        if self.id:
            item["id"] = self.id
        for role, nodes in self.roles.items():
            item[role] = list(nodes) if role == "switches" else nodes[0]
        item.update({key: list(v) if isinstance(v, tuple) else v for key, v in self.params.items()})
        item["routing"] = self.routing
        return item

    def links(self) -> int:
        """Return how many instance-to-instance links the expanded template has."""
        return sum(1 for _ in instance_edges(self))


def _product(values: Sequence[int]) -> int:
    return math.prod(values)


def _fat_tree(
    endpoints: str, switches: Sequence[str], down: Sequence[int], up: Sequence[int], routing: str
) -> tuple[dict[str, int], Callable[[int, int], tuple[Vertex, ...] | None]]:
    h = len(down)
    below = [1]  # M_l: endpoints under one level-l subtree
    parents = [1]  # W_l: w_1 ... w_l
    for level in range(h):
        below.append(below[-1] * down[level])
        parents.append(parents[-1] * up[level])
    total = below[h]
    sizes = {
        switches[level]: parents[level + 1] * (total // below[level + 1]) for level in range(h)
    }
    # The up-port at level l is digit l of a key in the mixed radix (w_1, w_2, ...), so the
    # ports chosen up to level l add up to key mod (w_1 ... w_l): the destination under
    # D-mod-k, one hash of source and destination under ECMP.
    levels = range(1, h + 1)
    names = tuple(switches)
    prefix_memo: dict[int, tuple[int, ...]] = {}

    def prefixes_of(source: int, target: int) -> tuple[int, ...]:
        if routing == "ecmp":
            key = flow_hash(source, target, 0)
            return tuple(key % parents[level] for level in levels)
        memo = prefix_memo.get(target)
        if memo is None:
            memo = prefix_memo[target] = tuple(target % parents[level] for level in levels)
        return memo

    # Under D-mod-k a route depends on the source only through its level-1 switch group:
    # the endpoints under one leaf share their routes to a destination.
    route_memo: dict[tuple[int, int], tuple[Vertex, ...]] = {}
    leaf_width = below[1]

    def route(source: int, target: int) -> tuple[Vertex, ...] | None:
        if source == target:
            return ()
        if routing != "ecmp":
            key = (source // leaf_width, target)
            known = route_memo.get(key)
            if known is None:
                known = route_memo[key] = walk(source, target)
            return known
        return walk(source, target)

    def walk(source: int, target: int) -> tuple[Vertex, ...]:
        top = 1
        while source // below[top] != target // below[top]:
            top += 1
        prefixes = prefixes_of(source, target)
        path = [
            (names[level], prefixes[level] + parents[level + 1] * (source // below[level + 1]))
            for level in range(top)
        ]
        path += [
            (names[level], prefixes[level] + parents[level + 1] * (target // below[level + 1]))
            for level in range(top - 2, -1, -1)
        ]
        return tuple(path)

    return sizes, route


def _rail(
    endpoints: str,
    leaf: str,
    spine: str,
    count: int,
    rails: int,
    per_leaf: int,
    spines: int,
    routing: str,
) -> tuple[dict[str, int], Callable[[int, int], tuple[Vertex, ...] | None]]:
    servers = count // rails
    groups = -(-servers // per_leaf)
    ecmp = routing == "ecmp"

    def leaf_of(endpoint: int) -> int:
        return (endpoint // rails // per_leaf) * rails + endpoint % rails

    def route(source: int, target: int) -> tuple[Vertex, ...] | None:
        if source == target:
            return ()
        a, b = leaf_of(source), leaf_of(target)
        if a == b:
            return ((leaf, a),)
        choice = flow_hash(source, target, 1) % spines if ecmp else target % spines
        return ((leaf, a), (spine, choice), (leaf, b))

    return {leaf: rails * groups}, route


def _ring(
    endpoints: str, link: str, count: int, routing: str
) -> tuple[dict[str, int], Callable[[int, int], tuple[Vertex, ...] | None]]:
    both_ways = routing == "shortest"

    def route(source: int, target: int) -> tuple[Vertex, ...] | None:
        if source == target:
            return ()
        forward = (target - source) % count
        path: list[Vertex] = []
        here = source
        if not both_ways or forward <= count - forward:
            for _ in range(forward):
                path.append((link, here))
                here = (here + 1) % count
                path.append((endpoints, here))
        else:
            for _ in range(count - forward):
                here = (here - 1) % count
                path.append((link, here))
                path.append((endpoints, here))
        return tuple(path[:-1])

    return {link: count}, route


def _torus(
    endpoints: str, link: str, dims: Sequence[int]
) -> tuple[dict[str, int], Callable[[int, int], tuple[Vertex, ...] | None]]:
    ndim = len(dims)
    strides = [1]
    for size in dims[:-1]:
        strides.append(strides[-1] * size)
    count = strides[-1] * dims[-1]

    def route(source: int, target: int) -> tuple[Vertex, ...] | None:
        if source == target:
            return ()
        path: list[Vertex] = []
        here = source
        for k in range(ndim):
            size, stride = dims[k], strides[k]
            at, goal = (here // stride) % size, (target // stride) % size
            forward = (goal - at) % size
            if forward <= size - forward:
                for _ in range(forward):
                    path.append((link, here * ndim + k))
                    at = (at + 1) % size
                    here = here - ((here // stride) % size) * stride + at * stride
                    path.append((endpoints, here))
            else:
                for _ in range(size - forward):
                    at = (at - 1) % size
                    here = here - ((here // stride) % size) * stride + at * stride
                    path.append((link, here * ndim + k))
                    path.append((endpoints, here))
        return tuple(path[:-1])

    return {link: count * ndim}, route


def _nvswitch(
    switch: str, count: int, domain: int
) -> tuple[dict[str, int], Callable[[int, int], tuple[Vertex, ...] | None]]:
    def route(source: int, target: int) -> tuple[Vertex, ...] | None:
        if source == target:
            return ()
        if source // domain != target // domain:
            return None
        return ((switch, source // domain),)

    return {switch: -(-count // domain)}, route


def instance_edges(topology: Topology) -> Iterator[tuple[Vertex, Vertex]]:
    """Yield the expanded template's links, instance to instance (for display and checks;
    routing never needs them)."""
    kind, params, ends, count = (
        topology.kind,
        topology.params,
        topology.endpoints,
        topology.endpoint_count,
    )
    if kind == "fatTree":
        switches = topology.roles["switches"]
        down, up = params["down"], params["up"]
        nodes = [ends, *switches]
        below, parents = [1], [1]
        for level in range(len(down)):
            below.append(below[-1] * down[level])
            parents.append(parents[-1] * up[level])
        for level in range(1, len(down) + 1):
            for q in range(count // below[level - 1]):
                for prefix in range(parents[level - 1]):
                    lower = prefix + parents[level - 1] * q
                    for b in range(up[level - 1]):
                        upper = (
                            prefix
                            + b * parents[level - 1]
                            + parents[level] * (q // down[level - 1])
                        )
                        yield (nodes[level - 1], lower), (nodes[level], upper)
    elif kind == "railLeafSpine":
        leaf, spine = topology.roles["leaf"][0], topology.roles["spine"][0]
        rails, per_leaf = params["rails"], params["serversPerLeaf"]
        for e in range(count):
            yield (ends, e), (leaf, (e // rails // per_leaf) * rails + e % rails)
        for a in range(topology.sizes[leaf]):
            for s in range(params["spines"]):
                yield (leaf, a), (spine, s)
    elif kind == "ring":
        link = topology.roles["link"][0]
        for e in range(count):
            yield (ends, e), (link, e)
            yield (link, e), (ends, (e + 1) % count)
    elif kind == "torus":
        link = topology.roles["link"][0]
        dims = params["dims"]
        stride = 1
        for k, size in enumerate(dims):
            for e in range(count):
                at = (e // stride) % size
                nxt = e + (((at + 1) % size) - at) * stride
                yield (ends, e), (link, e * len(dims) + k)
                yield (link, e * len(dims) + k), (ends, nxt)
            stride *= size
    else:
        switch = topology.roles["switch"][0]
        domain = params["domainSize"]
        for e in range(count):
            yield (ends, e), (switch, e // domain)


def _whole(value: object, low: int = 1) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and low <= value <= MAX_PARAMETER


def _add(errors: Errors, path: str, message: str) -> None:
    errors.setdefault(path, []).append(message)


def parse_topologies(
    raw: object,
    counts: Mapping[str, int],
    *,
    groups: frozenset[str] | set[str] = frozenset(),
    titles: Mapping[str, str] | None = None,
    node_type: Callable[[str], str | None] | None = None,
) -> tuple[list[Topology], Errors]:
    """Return the graph's topologies and their errors ({"topologies[i].field": [messages]}).

    `counts` gives each hardware node's count by id, `groups` the group ids, `titles` what
    messages call a node, `node_type` a node's hardware type (None: unknown)."""
    errors: Errors = {}
    result: list[Topology] = []
    if not isinstance(raw, list):
        _add(errors, "topologies", MESSAGES["list"])
        return result, errors
    titles = titles or {}
    ids: set[str] = set()
    for index, item in enumerate(raw):
        path = f"topologies[{index}]"
        before = sum(len(v) for v in errors.values())
        topology = _parse_one(errors, path, item, counts, groups, titles, node_type, ids)
        if topology is not None and sum(len(v) for v in errors.values()) == before:
            result.append(topology)
    return result, errors


def _node_ref(
    errors: Errors,
    path: str,
    ref: object,
    counts: Mapping[str, int],
    groups: frozenset[str] | set[str],
    titles: Mapping[str, str],
) -> str | None:
    if ref is None:
        _add(errors, path, MESSAGES["required"])
        return None
    if isinstance(ref, str) and ref in groups:
        _add(errors, path, MESSAGES["group_node"].format(ref=titles.get(ref, ref)))
        return None
    if not isinstance(ref, str) or ref not in counts:
        _add(errors, path, MESSAGES["unknown_node"].format(ref=ref))
        return None
    return ref


def _parse_one(
    errors: Errors,
    path: str,
    item: object,
    counts: Mapping[str, int],
    groups: frozenset[str] | set[str],
    titles: Mapping[str, str],
    node_type: Callable[[str], str | None] | None,
    ids: set[str],
) -> Topology | None:
    if not isinstance(item, dict):
        _add(errors, path, MESSAGES["object"])
        return None
    topology_id = item.get("id", "")
    if not isinstance(topology_id, str) or ("id" in item and not topology_id.strip()):
        _add(errors, f"{path}.id", MESSAGES["id"])
        topology_id = ""
    elif topology_id:
        if topology_id in ids:
            _add(errors, f"{path}.id", MESSAGES["duplicate_id"].format(id=topology_id))
        ids.add(topology_id)
    kind = item.get("kind")
    if kind not in KINDS:
        _add(
            errors,
            f"{path}.kind",
            MESSAGES["required"] if kind is None else MESSAGES["kind"].format(value=kind),
        )
        return None
    allowed = ("id", "kind", "endpoints", "routing", *ROLES[kind], *PARAMETERS[kind])
    unknown = sorted(str(key) for key in item if key not in allowed)
    if unknown:
        message = MESSAGES["unknown_keys"].format(
            kind=kind, keys=", ".join(unknown), known=", ".join(allowed)
        )
        _add(errors, path, message)
    known = ROUTINGS[kind]
    routing = item.get("routing", known[0])
    if routing not in known:
        message = MESSAGES["routing"].format(value=routing, kind=kind, known=", ".join(known))
        _add(errors, f"{path}.routing", message)
    endpoints = _node_ref(
        errors, f"{path}.endpoints", item.get("endpoints"), counts, groups, titles
    )
    roles: dict[str, tuple[str, ...]] = {}
    used: set[str] = set()
    for role in ROLES[kind]:
        refs: list[tuple[str, object]]
        if role == "switches":
            value = item.get(role)
            if not isinstance(value, list) or not value:
                _add(
                    errors,
                    f"{path}.{role}",
                    MESSAGES["required"] if value is None else MESSAGES["list"],
                )
                continue
            refs = [(f"{path}.{role}[{i}]", ref) for i, ref in enumerate(value)]
        else:
            refs = [(f"{path}.{role}", item.get(role))]
        nodes: list[str] = []
        for ref_path, ref in refs:
            node = _node_ref(errors, ref_path, ref, counts, groups, titles)
            if node is None:
                continue
            title = titles.get(node, node)
            if node == endpoints:
                _add(errors, ref_path, MESSAGES["endpoint_role"].format(ref=title, role=role))
            elif node in used:
                _add(errors, ref_path, MESSAGES["role_twice"].format(ref=title))
            else:
                kind_of = node_type(node) if node_type is not None else None
                if kind_of is not None and kind_of != "NETWORK":
                    _add(errors, ref_path, MESSAGES["not_network"].format(ref=title, type=kind_of))
            used.add(node)
            nodes.append(node)
        roles[role] = tuple(nodes)
    count = counts.get(endpoints, 0) if endpoints is not None else 0
    params, sizes_route = _parameters(errors, path, kind, item, count, roles, endpoints, titles)
    if sizes_route is None or endpoints is None:
        return None
    sizes, route = sizes_route
    for node, needed in sizes.items():
        have = counts.get(node)
        if have is not None and have != needed:
            role_path = _role_path(path, roles, node)
            what = "links" if "link" in roles else "switches"
            _add(
                errors,
                role_path,
                MESSAGES["count"].format(
                    ref=titles.get(node, node), count=have, kind=kind, needed=needed, what=what
                ),
            )
    return Topology(
        id=topology_id,
        kind=kind,
        endpoints=endpoints,
        endpoint_count=count,
        routing=str(routing),
        roles=roles,
        params=params,
        sizes=sizes,
        route=route,
    )


def _role_path(path: str, roles: Mapping[str, tuple[str, ...]], node: str) -> str:
    """Return the field path that names `node` in a template's roles."""
    for role, nodes in roles.items():
        if node in nodes:
            return f"{path}.{role}[{nodes.index(node)}]" if role == "switches" else f"{path}.{role}"
    return path


def _parameters(
    errors: Errors,
    path: str,
    kind: str,
    item: Mapping[str, Any],
    count: int,
    roles: Mapping[str, tuple[str, ...]],
    endpoints: str | None,
    titles: Mapping[str, str],
) -> tuple[
    dict[str, Any],
    tuple[dict[str, int], Callable[[int, int], tuple[Vertex, ...] | None]] | None,
]:
    """Check the kind's parameters; return them and (sizes, route) when all are good."""
    ref = titles.get(endpoints, endpoints) if endpoints else ""
    routing = str(item.get("routing", ROUTINGS[kind][0]))
    roles_ok = all(roles.get(role) for role in ROLES[kind]) and endpoints is not None
    if kind == "fatTree":
        down, up = item.get("down"), item.get("up")
        good = True
        for name, value in (("down", down), ("up", up)):
            if (
                not isinstance(value, list)
                or not 1 <= len(value) <= MAX_LEVELS
                or not all(_whole(v) for v in value)
            ):
                _add(errors, f"{path}.{name}", MESSAGES["levels"])
                good = False
        if not good:
            return {}, None
        assert isinstance(down, list) and isinstance(up, list)
        if len(up) != len(down):
            _add(
                errors,
                f"{path}.up",
                MESSAGES["levels"] + f" It has {len(up)}, down has {len(down)}.",
            )
            return {}, None
        switches = roles.get("switches", ())
        if isinstance(item.get("switches"), list) and len(item["switches"]) != len(down):
            _add(errors, f"{path}.switches", MESSAGES["switch_levels"].format(levels=len(down)))
            return {}, None
        product = _product(down)
        if endpoints is not None and product != count:
            shown = " x ".join(str(v) for v in down) + (f" = {product}" if len(down) > 1 else "")
            _add(
                errors,
                f"{path}.down",
                MESSAGES["product"].format(field="down", product=shown, ref=ref, count=count),
            )
            return {}, None
        if not roles_ok or len(switches) != len(down):
            return {}, None
        params: dict[str, Any] = {"down": tuple(down), "up": tuple(up)}
        return params, _fat_tree(endpoints, switches, down, up, routing)  # type: ignore[arg-type]
    if kind == "railLeafSpine":
        rails, spines = item.get("rails"), item.get("spines")
        per_leaf = item.get("serversPerLeaf")
        good = True
        for name, value in (("rails", rails), ("spines", spines)):
            if not _whole(value):
                _add(errors, f"{path}.{name}", MESSAGES["whole"])
                good = False
        if per_leaf is not None and not _whole(per_leaf):
            _add(errors, f"{path}.serversPerLeaf", MESSAGES["whole"])
            good = False
        if not good:
            return {}, None
        assert isinstance(rails, int) and isinstance(spines, int)
        if endpoints is not None and count % rails:
            _add(
                errors,
                f"{path}.rails",
                MESSAGES["divisible"].format(ref=ref, count=count, field="rails", value=rails),
            )
            return {}, None
        if not roles_ok:
            return {}, None
        servers = count // rails
        per = per_leaf if isinstance(per_leaf, int) else servers
        params = {"rails": rails, "spines": spines, "serversPerLeaf": per}
        leaf, spine = roles["leaf"][0], roles["spine"][0]
        sizes, route = _rail(endpoints, leaf, spine, count, rails, per, spines, routing)  # type: ignore[arg-type]
        sizes[spine] = spines
        return params, (sizes, route)
    if kind == "ring":
        if endpoints is not None and count < 2:
            _add(
                errors,
                f"{path}.endpoints",
                MESSAGES["count"].format(
                    ref=ref, count=count, kind=kind, needed="at least 2", what="endpoints"
                ),
            )
            return {}, None
        if not roles_ok:
            return {}, None
        return {}, _ring(endpoints, roles["link"][0], count, routing)  # type: ignore[arg-type]
    if kind == "torus":
        dims = item.get("dims")
        if (
            not isinstance(dims, list)
            or len(dims) not in (2, 3)
            or not all(_whole(v, 2) for v in dims)
        ):
            _add(errors, f"{path}.dims", MESSAGES["dims"])
            return {}, None
        product = _product(dims)
        if endpoints is not None and product != count:
            shown = " x ".join(str(v) for v in dims) + f" = {product}"
            _add(
                errors,
                f"{path}.dims",
                MESSAGES["product"].format(field="dims", product=shown, ref=ref, count=count),
            )
            return {}, None
        if not roles_ok:
            return {}, None
        return {"dims": tuple(dims)}, _torus(endpoints, roles["link"][0], dims)  # type: ignore[arg-type]
    domain = item.get("domainSize")
    if not _whole(domain):
        _add(errors, f"{path}.domainSize", MESSAGES["whole"])
        return {}, None
    assert isinstance(domain, int)
    if not roles_ok:
        return {}, None
    return {"domainSize": domain}, _nvswitch(roles["switch"][0], count, domain)


def template_sizes(item: Mapping[str, Any], count: int) -> tuple[dict[str, int], Errors]:
    """Return the instances each switch or link node of the template `item` needs with
    `count` endpoints and the errors of its parameters by the kind's rules ({"down":
    [message]}, no `topologies[i].` prefix); the sizes are {} where there are errors. The
    roles are taken as given (a sweep changes parameters and counts, not roles)."""
    kind = str(item.get("kind"))
    if kind not in KINDS:
        return {}, {"kind": [MESSAGES["kind"].format(value=kind)]}
    roles = {
        role: tuple(item.get(role) or ()) if role == "switches" else (item.get(role),)
        for role in ROLES[kind]
    }
    errors: Errors = {}
    endpoints = str(item.get("endpoints"))
    _, sizes_route = _parameters(errors, "", kind, item, count, roles, endpoints, {})
    errors = {path.lstrip("."): messages for path, messages in errors.items()}
    if errors or sizes_route is None:
        return {}, errors
    return dict(sizes_route[0]), {}


def port_switches(topologies: Sequence[Topology]) -> frozenset[str]:
    """Return the ids of the nodes whose instances are the templates' switches (SWITCH_ROLES):
    their flow constraints are their ports, not the pairs of neighbours a flow joins."""
    return frozenset(
        node
        for topology in topologies
        for role, nodes in topology.roles.items()
        if role in SWITCH_ROLES
        for node in nodes
    )


def expanded_size(topologies: Sequence[Topology]) -> dict[str, int]:
    """Return what the templates expand to: endpoints, switch or link instances, links."""
    endpoints = {t.endpoints: t.endpoint_count for t in topologies}
    return {
        "endpoints": sum(endpoints.values()),
        "instances": sum(sum(t.sizes.values()) for t in topologies),
        "links": sum(t.links() for t in topologies),
    }
