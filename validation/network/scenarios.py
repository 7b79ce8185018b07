"""The network scenarios run on SimGrid and on ParaSim alike (stdlib only: the system Python
that has SimGrid's bindings imports it too).

A scenario is a tree of hosts and routers joined by links (a tree, so that every route is the
one path both simulators find), and flows: (source host, target host, bytes, start time).
Each link has a bandwidth [B/s], a latency [s] and a sharing policy, "full-duplex" (SimGrid's
SPLITDUPLEX: one capacity per direction) or "shared" (SimGrid's SHARED: both directions share
one capacity).
"""

from __future__ import annotations

import random
from collections import deque
from typing import Any

Scenario = dict[str, Any]

GB = 1e9
MB = 1e6
US = 1e-6
SWITCH_PORT = (2 * GB, 3 * US)  # the bandwidth and latency of every link of a `switch` scenario


def _scenario(name: str, what: str) -> Scenario:
    return {"name": name, "what": what, "hosts": [], "routers": [], "links": [], "flows": []}


def _link(
    s: Scenario, link_id: str, a: str, b: str, bw: float, lat: float, sharing: str = "full-duplex"
) -> None:
    s["links"].append({"id": link_id, "a": a, "b": b, "bw": bw, "lat": lat, "sharing": sharing})


def _flow(s: Scenario, src: str, dst: str, size: float, start: float = 0.0) -> None:
    s["flows"].append({"src": src, "dst": dst, "size": size, "start": start})


def dumbbell(
    n: int,
    *,
    name: str | None = None,
    sharing: str = "full-duplex",
    access_bw: list[float] | None = None,
    access_lat: list[float] | None = None,
    sizes: list[float] | None = None,
    starts: list[float] | None = None,
    reverse: int = 0,
) -> Scenario:
    """`n` flows a_i -> b_i over access links and one 1 GB/s bottleneck (R1-R2);
    `reverse` more flows b_i -> a_i the other way."""
    s = _scenario(name or f"dumbbell-{n}", f"dumbbell, {n} competing flows")
    s["routers"] = ["R1", "R2"]
    _link(s, "bottleneck", "R1", "R2", 1 * GB, 10 * US, sharing)
    for i in range(n):
        s["hosts"] += [f"a{i}", f"b{i}"]
        bw = access_bw[i] if access_bw else 10 * GB
        lat = access_lat[i] if access_lat else 5 * US
        _link(s, f"la{i}", f"a{i}", "R1", bw, lat, sharing)
        _link(s, f"lb{i}", "R2", f"b{i}", bw, lat, sharing)
        size = sizes[i] if sizes else 10 * MB
        _flow(s, f"a{i}", f"b{i}", size, starts[i] if starts else 0.0)
    for i in range(reverse):
        _flow(s, f"b{i}", f"a{i}", 10 * MB)
    return s


def star(
    k: int, pairs: list[tuple[int, int]], *, name: str, sharing: str = "full-duplex"
) -> Scenario:
    """`k` hosts on their own links to one hub router; a flow per (source, target) pair."""
    s = _scenario(name, f"star of {k} hosts, {len(pairs)} flows")
    s["routers"] = ["hub"]
    for i in range(k):
        s["hosts"].append(f"h{i}")
        _link(s, f"l{i}", f"h{i}", "hub", (1 + i % 3) * GB, (2 + i) * US, sharing)
    for n, (a, b) in enumerate(pairs):
        _flow(s, f"h{a}", f"h{b}", (4 + 3 * n) * MB)
    return s


def switch(
    k: int, pairs: list[tuple[int, int]], *, name: str, sharing: str = "full-duplex"
) -> Scenario:
    """`k` hosts on one non-blocking switch: a star whose links are all alike (2 GB/s, 3 us),
    SimGrid's way of drawing a switch with a port per host, which ParaSim also runs as a
    `switch` topology template (validation/network/parasim_flows.py `run_on_switch`)."""
    s = _scenario(name, f"switch of {k} ports, {len(pairs)} flows")
    s["routers"] = ["hub"]
    for i in range(k):
        s["hosts"].append(f"h{i}")
        _link(s, f"l{i}", f"h{i}", "hub", SWITCH_PORT[0], SWITCH_PORT[1], sharing)
    for n, (a, b) in enumerate(pairs):
        _flow(s, f"h{a}", f"h{b}", (4 + 3 * n) * MB)
    return s


def chain(hops: int, *, name: str, sharing: str = "full-duplex", reverse: bool = False) -> Scenario:
    """Routers r0..r<hops> in a line; one long flow h0 -> h<hops> and a cross flow over each
    segment (from the host at its left router to the host at its right one), plus the long
    flow backwards when `reverse`."""
    s = _scenario(name, f"{hops}-hop route with cross traffic")
    s["routers"] = [f"r{i}" for i in range(hops + 1)]
    for i in range(hops):
        _link(s, f"seg{i}", f"r{i}", f"r{i + 1}", (1 + 0.5 * i) * GB, 20 * US, sharing)
    for i in range(hops + 1):
        s["hosts"].append(f"h{i}")
        _link(s, f"acc{i}", f"h{i}", f"r{i}", 4 * GB, 3 * US, sharing)
        s["hosts"].append(f"x{i}")
        _link(s, f"accx{i}", f"x{i}", f"r{i}", 4 * GB, 3 * US, sharing)
    _flow(s, "h0", f"h{hops}", 20 * MB)
    for i in range(hops):
        _flow(s, f"x{i}", f"x{i + 1}", (5 + 2 * i) * MB, (i % 2) * 2e-3)
    if reverse:
        _flow(s, f"h{hops}", "h0", 15 * MB)
    return s


def duplex(sharing: str, sizes: tuple[float, float], *, name: str) -> Scenario:
    """Two hosts on one link, one flow each way."""
    s = _scenario(name, f"one {sharing} link, a flow each way")
    s["hosts"] = ["h0", "h1"]
    _link(s, "wire", "h0", "h1", 1.25 * GB, 50 * US, sharing)
    _flow(s, "h0", "h1", sizes[0])
    _flow(s, "h1", "h0", sizes[1])
    return s


def fat_tree(
    leaves: int,
    per_leaf: int,
    *,
    name: str,
    flows: list[tuple[int, int]],
    sharing: str = "full-duplex",
    starts: list[float] | None = None,
) -> Scenario:
    """A two-level fat tree: hosts on leaf switches (1 GB/s), leaves on one core switch over
    uplinks as fat as the leaf's hosts together; flows between host numbers."""
    s = _scenario(name, f"fat tree, {leaves} leaves x {per_leaf} hosts, {len(flows)} flows")
    s["routers"] = ["core"] + [f"leaf{j}" for j in range(leaves)]
    for j in range(leaves):
        _link(s, f"up{j}", f"leaf{j}", "core", per_leaf * 1 * GB / 2, 2 * US, sharing)
        for i in range(per_leaf):
            h = j * per_leaf + i
            s["hosts"].append(f"h{h}")
            _link(s, f"l{h}", f"h{h}", f"leaf{j}", 1 * GB, 1 * US, sharing)
    for n, (a, b) in enumerate(flows):
        _flow(s, f"h{a}", f"h{b}", (8 + 2 * (n % 5)) * MB, starts[n] if starts else 0.0)
    return s


def scenarios() -> list[Scenario]:
    """Return every scenario, in a fixed order."""
    rng = random.Random(40)
    out: list[Scenario] = []
    for n in (2, 4, 8, 16, 32, 64):
        out.append(dumbbell(n, sizes=[(5 + 3 * (i % 7)) * MB for i in range(n)]))
    out.append(
        dumbbell(
            8,
            name="dumbbell-8-shared",
            sharing="shared",
            sizes=[(5 + 3 * (i % 7)) * MB for i in range(8)],
            reverse=3,
        )
    )
    out.append(
        dumbbell(4, name="dumbbell-4-slow-access", access_bw=[0.1 * GB, 0.3 * GB, 5 * GB, 5 * GB])
    )
    out.append(
        dumbbell(
            6,
            name="dumbbell-6-latencies",
            access_lat=[1 * US, 10 * US, 50 * US, 100 * US, 200 * US, 500 * US],
        )
    )
    out.append(
        dumbbell(
            8,
            name="dumbbell-8-arrivals",
            sizes=[rng.choice((2, 5, 10, 20)) * MB for _ in range(8)],
            starts=[round(rng.uniform(0, 0.03), 6) for _ in range(8)],
        )
    )
    out.append(
        dumbbell(
            16,
            name="dumbbell-16-arrivals",
            sizes=[(1 + i) * MB for i in range(16)],
            starts=[i * 1e-3 for i in range(16)],
        )
    )
    out.append(dumbbell(4, name="dumbbell-4-duplex-both-ways", reverse=4))
    out.append(star(8, [(i, 0) for i in range(1, 8)], name="star-incast-7"))
    out.append(star(8, [(0, i) for i in range(1, 8)], name="star-outcast-7"))
    out.append(star(6, [(i, (i + 1) % 6) for i in range(6)], name="star-ring-6"))
    out.append(
        star(6, [(i, (i + 1) % 6) for i in range(6)], name="star-ring-6-shared", sharing="shared")
    )
    out.append(star(10, [(i, (i * 3 + 1) % 10) for i in range(10)], name="star-perm-10"))
    for hops in (2, 3, 5):
        out.append(chain(hops, name=f"chain-{hops}-cross"))
    out.append(chain(3, name="chain-3-cross-reverse", reverse=True))
    out.append(chain(3, name="chain-3-cross-reverse-shared", sharing="shared", reverse=True))
    for sharing in ("full-duplex", "shared"):
        out.append(duplex(sharing, (10 * MB, 10 * MB), name=f"duplex-{sharing}-equal"))
        out.append(duplex(sharing, (4 * MB, 12 * MB), name=f"duplex-{sharing}-unequal"))
    out.append(fat_tree(2, 2, name="fattree-2x2-cross", flows=[(0, 2), (1, 3), (2, 1), (3, 0)]))
    out.append(fat_tree(4, 2, name="fattree-4x2-shift", flows=[(h, (h + 2) % 8) for h in range(8)]))
    out.append(
        fat_tree(4, 4, name="fattree-4x4-random", flows=[(h, rng.randrange(16)) for h in range(16)])
    )
    out.append(
        fat_tree(
            4, 2, name="fattree-4x2-shared", sharing="shared", flows=[(h, 7 - h) for h in range(8)]
        )
    )
    out.append(
        fat_tree(
            4,
            4,
            name="fattree-4x4-arrivals",
            flows=[(h, (h + 5) % 16) for h in range(16)],
            starts=[round(rng.uniform(0, 0.02), 6) for _ in range(16)],
        )
    )
    # flows leaving mid-way: one long flow meets short ones that come and go
    s = dumbbell(
        5,
        name="dumbbell-5-come-and-go",
        sizes=[40 * MB, 2 * MB, 3 * MB, 2 * MB, 5 * MB],
        starts=[0.0, 5e-3, 12e-3, 20e-3, 21e-3],
    )
    out.append(s)
    # one link alone, flows coming and going both ways (the solver's one-link case)
    for sharing in ("shared", "full-duplex"):
        s = duplex(sharing, (6 * MB, 9 * MB), name=f"one-link-{sharing}-come-and-go")
        for n in range(8):
            src, dst = ("h0", "h1") if n % 3 else ("h1", "h0")
            _flow(s, src, dst, (1 + 2 * n) * MB, round(rng.uniform(0, 0.02), 6))
        out.append(s)
    # long routes: TCP's window bound gamma / (2 x latency) is below the links' bandwidth
    out.append(dumbbell(3, name="wan-3-tcp-window", access_lat=[5e-3, 2e-3, 1 * US]))
    out.append(
        dumbbell(2, name="wan-2-tcp-window-alone", access_lat=[4e-3, 4e-3], starts=[0.0, 0.05])
    )
    # one non-blocking switch, a port per host: a host's sends share its port's egress, the
    # sends to a host its ingress; disjoint pairs and shifts do not meet
    out.append(switch(8, [(0, i) for i in range(1, 8)], name="switch-fan-out-7"))
    out.append(switch(8, [(i, 0) for i in range(1, 8)], name="switch-incast-7"))
    out.append(switch(8, [(i, (i + 3) % 8) for i in range(8)], name="switch-shift-8"))
    out.append(
        switch(6, [(a, b) for a in range(6) for b in range(6) if a != b], name="switch-alltoall-6")
    )
    out.append(
        switch(
            6,
            [(0, 1), (0, 2), (3, 1), (4, 5), (5, 4), (2, 0)],
            name="switch-mixed-6-shared",
            sharing="shared",
        )
    )
    for scenario in out:  # a flow from a host to itself is no network transfer
        scenario["flows"] = [f for f in scenario["flows"] if f["src"] != f["dst"]]
    return out


def route(scenario: Scenario, src: str, dst: str) -> list[tuple[str, bool]]:
    """Return the links from `src` to `dst`, each with True when crossed from its `a` end to
    its `b` end (SimGrid's UP direction)."""
    adjacent: dict[str, list[tuple[str, str, bool]]] = {}
    for link in scenario["links"]:
        adjacent.setdefault(link["a"], []).append((link["b"], link["id"], True))
        adjacent.setdefault(link["b"], []).append((link["a"], link["id"], False))
    previous: dict[str, tuple[str, str, bool] | None] = {src: None}
    frontier = deque([src])
    while frontier:
        here = frontier.popleft()
        for there, link_id, up in adjacent.get(here, []):
            if there not in previous:
                previous[there] = (here, link_id, up)
                frontier.append(there)
    path: list[tuple[str, bool]] = []
    step = dst
    while previous[step] is not None:
        here, link_id, up = previous[step]  # type: ignore[misc]
        path.append((link_id, up))
        step = here
    return path[::-1]
