"""Rotation symmetry of a collective call: simulate one representative per orbit of ranks.

A ring allreduce over p ranks of a cluster built from templates repeats itself: shifting
every rank by d (one leaf's worth of GPUs, say) maps the call's traffic and the platform onto
themselves, so every rank's figures equal those of the rank d before it. This module proves
that for the actual call on the actual platform and then simulates only the first d members,
deriving the others (docs/collectives.md, "Symmetry").

The proof, for a rotation sigma(i) = i + d (mod p), d a divisor of p (the smallest that
passes is taken):

* the call is the run's only activity: its members are every process of the run, in order;
  all of them call it at one instant; when the last one arrives nothing else is scheduled
  (no message in flight, no flow, no computation), and no one else can start anything while
  it runs (every process is in it);
* member sigma(i) runs on the same node (hardware and model) as member i, and no two members
  share a processor instance;
* the schedule is invariant: member sigma(i)'s messages, in the order its program takes them,
  are member i's with every peer shifted by d;
* the routes are invariant: for every pair (i, j) that exchanges messages, the route from
  sigma(i) to sigma(j) crosses, hop by hop, the same nodes as the route from i to j, and the
  correspondence pi (a link of the one route to the link at the same place of the other,
  likewise each hop's instance usage) is one bijection over all the pairs. Every hop must be a
  flow link (a store-and-forward FIFO's tie-breaking is not symmetric); the flow links' orbits
  under pi must all have p / d elements (no link is its own image, which would carry several
  images of one flow), and no representative route may cross two links of one orbit.

Then the max-min problem at any instant is invariant under (sigma, pi), its fair point is
unique, so every flow of an orbit has one rate; the quotient problem (a representative flow per
orbit of flows, a representative link per orbit of links: each orbit's constraint is the same
sum) has the same fair point. Members 0..d-1 run their programs; a message to member j goes
to member j mod d as the image of its true receiver, over the route's links replaced by their
orbits' representatives. Every other member waits until its representative is done, then ends
the call at that instant with its representative's figures (wait, transfer and reduction
times, its processor's busy periods); every non-representative link and hop usage gets the
figures its representative accumulated during the call.

A condition that can only fail after members already waited (a member arriving at another
instant, or never) marks the run broken: the runner runs it again without symmetry, so the
answer is never a symmetric one that the proof did not cover.
"""

from __future__ import annotations

import bisect
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from simulator import collectives
from simulator.api import _message_filter, charge_receive
from simulator.engine import EventCount
from simulator.errors import SimulationError
from simulator.flows import SERIES_POINTS, FlowLink
from simulator.platform import FlowRoute

if TYPE_CHECKING:
    from simulator.api import Sim
    from simulator.platform import Hop, ProcessState, World

SYMMETRY_MESSAGES = {
    "broken": "the collective's symmetric simulation does not hold ({reason}); the run is "
    "simulated again in full",
}


class SymmetryBroken(SimulationError):
    """A symmetric call's condition failed after members already waited on it: the run must
    be simulated again without symmetry (the runner does)."""


_Taken = tuple[float, float, float, list[tuple[float, float]], float, float]
"""A representative's figures over the call (`_Call.figures`)."""


class _Call:
    """One collective call simulated by its representatives (module docstring)."""

    def __init__(
        self,
        period: int,
        members: list[ProcessState],
        messages: list[list[collectives.Message]],
        routes: dict[tuple[int, int], tuple[ProcessState, ProcessState, Sequence[Hop]]],
        link_orbits: list[list[FlowLink]],
        usage_orbits: list[list[Any]],
        start: float,
    ) -> None:
        self.period = period
        self.members = members
        self.messages = messages  # the representatives' messages (`_messages`)
        # per (representative, peer): the message's target (the peer's representative),
        # the source it names (the image of the sender) and the hops (orbits' representatives)
        self.routes = routes
        self.link_orbits = link_orbits  # each orbit, its representative first
        self.usage_orbits = usage_orbits
        self.start = start
        self.arrived = 0
        self.symmetric = True  # False: the last arrival found other activity; run in full
        self.done: list[EventCount | None] = [None] * period
        # per representative: its figures' increments, its processor's busy periods and
        # the increments of its busy time and load integral
        self.figures: list[_Taken | None] = [None] * period
        self.left = period  # representatives still running
        self.snapshot: list[tuple[float, float, float, float, int]] = []
        self.usage_snapshot: list[tuple[float, float]] = []


class RotationSymmetry:
    """A run's symmetric collective calls (`World.symmetry`, set by the runner)."""

    def __init__(self, world: World) -> None:
        self.world = world
        self.calls: dict[object, _Call | None] = {}  # per call's channel; None: in full
        self.broken: str | None = None  # why the run must be simulated again
        self.used: list[dict[str, Any]] = []  # each symmetric call: what the result reports
        self.waiting = 0  # members waiting at a symmetric call's start

    # -- the call ----------------------------------------------------------------------------

    def collective(
        self,
        sim: Sim,
        kind: str,
        op: object,
        members: list[ProcessState],
        index: int,
        operations: Sequence[list[collectives.Message]],
        chunk: float,
        most: int,
        channel: object,
        call: tuple[float, dict[str, Any], str, float],
    ) -> bool:
        """Run member `index`'s part of a collective symmetrically and return True, or
        return False (the call is simulated in full, by `Sim._collective`'s loop)."""
        world = self.world
        engine = world.engine
        if channel not in self.calls:
            steps = getattr(operations, "steps", None)  # collectives.MemberMessages's
            self.calls[channel] = None if steps is None else self._prove(members, steps)
        state = self.calls[channel]
        if state is None:
            return False
        if engine.now != state.start:
            self._break("the members call it at different times")
        state.arrived += 1
        if state.arrived < len(members):
            self.waiting += 1
            barrier = world.arrive(("symmetry", *map(str, _flat(channel))), len(members))
            assert barrier is not None
            barrier[0].await_(barrier[1])
            self.waiting -= 1
        else:
            # nothing else scheduled: no message in flight, no flow, no computation (before
            # the others waiting here are woken)
            state.symmetric = engine.pending == 0
            world.arrive(("symmetry", *map(str, _flat(channel))), len(members))
            if state.symmetric:
                self._begin(state)
        if not state.symmetric:
            return False
        period = state.period
        if index < period:
            self._representative(sim, kind, op, state, index, chunk, most, channel)
        else:
            self._image(sim, state, index % period)
        started, record, chosen, size = call
        if index == 0:
            record["symmetry"] = {"period": period, "simulated": period}
        sim._collective_done(started, record, kind, chosen, size)
        return True

    def _break(self, reason: str) -> None:
        self.broken = reason
        raise SymmetryBroken(SYMMETRY_MESSAGES["broken"].format(reason=reason))

    def _begin(self, state: _Call) -> None:
        """Note each representative link's and usage's figures at the call's start."""
        self.used.append(
            {
                "period": state.period,
                "members": len(state.members),
                "simulated_members": state.period,
            }
        )
        now = self.world.engine.now
        for orbit in state.link_orbits:
            link = orbit[0]
            link.advance(now)
            state.snapshot.append(
                (link.bytes, link.used_s, link.saturated_s, link.peak, len(link.series_t))
            )
            link.peak = 0.0  # the call's own peak, put back at its end
        for usages in state.usage_orbits:
            state.usage_snapshot.append((usages[0].busy_s, usages[0].load_s))

    def _representative(
        self,
        sim: Sim,
        kind: str,
        op: object,
        state: _Call,
        index: int,
        chunk: float,
        most: int,
        channel: object,
    ) -> None:
        """`Sim._collective`'s loop for representative `index`: a send goes to the
        representative of its receiver, over the representatives of its route's links."""
        world = self.world
        engine = world.engine
        member = state.members[index]
        figures = member.figures
        mailbox = member.mailbox
        before = (figures.wait_s, figures.comm_s, figures.compute_s)
        slot = member.slot
        usage = world.nodes[slot.node].usages[slot.instance]
        used = (usage.busy_s, usage.load_s)
        busy: list[tuple[float, float]] = []
        routes = state.routes
        send, get = world.send, mailbox.get
        send_kind, data = collectives.SEND, f"the {kind}'s data"
        reduce_seconds: dict[float, float] = {}
        members = state.members
        for what, peer, piece, reduced, tag in collectives.program(
            state.messages[index], chunk, most
        ):
            if what == send_kind:
                target, source, hops = routes[index, peer]
                send(source, target, piece, None, (channel, tag), None, hops)
                continue
            waited_from = engine.now
            message = get(_message_filter((channel, tag), None, members[peer]), data)
            now = engine.now
            if now > waited_from:
                charge_receive(figures, waited_from, message.sent_at, now)
            if reduced:
                seconds = reduce_seconds.get(piece)
                if seconds is None:
                    seconds = reduce_seconds[piece] = sim._reduce_piece(kind, piece, op)
                if seconds > 0:
                    begin = engine.now
                    usage.start(begin)
                    engine.pause(seconds)
                    usage.stop(engine.now)
                    if busy and busy[-1][1] == begin:  # one busy period goes on
                        busy[-1] = (busy[-1][0], engine.now)
                    else:
                        busy.append((begin, engine.now))
                    figures.compute_s += seconds
        state.figures[index] = (
            figures.wait_s - before[0],
            figures.comm_s - before[1],
            figures.compute_s - before[2],
            busy,
            usage.busy_s - used[0],
            usage.load_s - used[1],
        )
        state.left -= 1
        if state.left == 0:
            self._finish(state)
        done = state.done[index]
        if done is not None:
            done.advance()

    def _image(self, sim: Sim, state: _Call, representative: int) -> None:
        """Wait until `representative` is done, then take its figures as this member's."""
        world = self.world
        if state.figures[representative] is None:
            done = state.done[representative]
            if done is None:
                done = state.done[representative] = EventCount(world.engine, "symmetry")
            done.await_(1)
        taken = state.figures[representative]
        assert taken is not None
        wait_s, comm_s, compute_s, busy, busy_s, load_s = taken
        member = sim._state
        figures = member.figures
        figures.wait_s += wait_s
        figures.comm_s += comm_s
        figures.compute_s += compute_s
        if not busy:
            return
        slot = member.slot
        usage = world.nodes[slot.node].usages[slot.instance]
        track = usage.track
        if track is not None and len(track.busy) < track.limit:
            for begin, end in busy:  # the periods, recorded as they would be
                usage.start(begin)
                usage.stop(end)
            return
        # the periods as `Usage.start`/`stop` would leave them, without a call per period:
        # the first one ends the period before it; each later one records the one before
        # (only counted: the track is full); the last stays open
        busy_before, load_before = usage.busy_s, usage.load_s
        usage.start(busy[0][0])
        usage.stop(busy[0][1])
        usage.busy_s, usage.load_s = busy_before + busy_s, load_before + load_s
        if track is not None:
            track.busy_dropped += len(busy) - 1
        usage._busy_from, usage._busy_to = busy[-1]

    def _finish(self, state: _Call) -> None:
        """Give every other link and usage of an orbit what its representative accumulated
        during the call (all the call's flows have ended: every message was received)."""
        now = self.world.engine.now
        start = state.start
        for orbit, (bytes_, used_s, saturated_s, peak, points) in zip(
            state.link_orbits, state.snapshot, strict=True
        ):
            link = orbit[0]
            link.advance(now)
            call_peak = link.peak
            link.peak = max(peak, call_peak)
            times, values = link.series_t, link.series_u
            if len(times) >= points and times[points - 1] <= start:
                first = points
            else:  # its change points were merged meanwhile: those from the start on
                first = bisect.bisect_left(times, start)
            new_t, new_u = times[first:], values[first:]
            before_t, before_u = times[:first], values[:first]
            for image in orbit[1:]:
                image.advance(now)
                image.bytes += link.bytes - bytes_
                image.used_s += link.used_s - used_s
                image.saturated_s += link.saturated_s - saturated_s
                if call_peak > image.peak:
                    image.peak = call_peak
                if image.series_t == before_t and image.series_u == before_u:
                    # the same steps before the call (both idle, mostly): the same after
                    image.series_t, image.series_u = times.copy(), values.copy()
                    continue
                for at, value in zip(new_t, new_u, strict=True):
                    image.used = value
                    image.mark(at)
                image.used = 0.0
                if len(image.series_t) > SERIES_POINTS:
                    image._merge(now)
        track = None
        for usages, (busy_s, load_s) in zip(state.usage_orbits, state.usage_snapshot, strict=True):
            usage = usages[0]
            periods: list[dict[str, Any]] = []
            track = usage.track
            if track is not None:
                usage.close(now)  # its last busy period, on the track
                periods = [
                    entry
                    for entry in track.busy
                    if entry["node"] == usage.node
                    and entry["instance"] == usage.instance
                    and entry["end_s"] > start
                ]
            for other in usages[1:]:
                other.busy_s += usage.busy_s - busy_s
                other.load_s += usage.load_s - load_s
                if track is not None:
                    for entry in periods:
                        track.add_busy(other.node, other.instance, entry["start_s"], entry["end_s"])

    # -- the proof ---------------------------------------------------------------------------

    def _prove(self, members: list[ProcessState], steps: collectives.Schedule) -> _Call | None:
        """Return the call's symmetric simulation when a rotation passes the module
        docstring's checks that can be made now, else None."""
        world = self.world
        p = len(members)
        if p < 2 or world.network is None or len(world.processes) != p:
            return None
        if any(a is not b for a, b in zip(members, world.processes, strict=True)):
            return None
        slots = {(m.slot.node, m.slot.instance) for m in members}
        if len(slots) != p:
            return None
        runs, tables = _schedule_tables(steps, p)
        pairs = _pairs(tables, p)
        for period in range(1, p):
            if p % period:
                continue
            if any(members[i].slot.node != members[(i + period) % p].slot.node for i in range(p)):
                continue
            if not _schedule_invariant(tables, period):
                continue
            made = self._routes(members, pairs, period)
            if made is not None:
                messages = _messages(runs, tables, period)
                return _Call(period, members, messages, *made, world.engine.now)
        return None

    def _routes(
        self, members: list[ProcessState], pairs: list[tuple[int, int]], period: int
    ) -> (
        tuple[
            dict[tuple[int, int], tuple[ProcessState, ProcessState, Sequence[Hop]]],
            list[list[FlowLink]],
            list[list[Any]],
        ]
        | None
    ):
        """Return the representatives' routes and the orbits of links and usages when the
        routes are invariant under the rotation by `period` (module docstring), else None."""
        world = self.world
        p = len(members)
        hops = {(i, j): world.hops(members[i].slot, members[j].slot) for i, j in pairs}
        link_map: dict[FlowLink, FlowLink] = {}
        usage_map: dict[Any, Any] = {}
        for (i, j), route in hops.items():
            image = hops.get(((i + period) % p, (j + period) % p))
            if image is None or len(image) != len(route):
                return None
            if not route:
                continue
            if not isinstance(route, FlowRoute) or not isinstance(image, FlowRoute):
                return None  # a store-and-forward hop
            for k, hop in enumerate(route):
                other = image[k]
                if hop[0] is not other[0]:
                    return None
                if route.links[k] is None or image.links[k] is None:
                    return None  # a store-and-forward hop inside a flow route
                for mine, theirs in (
                    (route.links[k], image.links[k]),
                    (route.exits[k], image.exits[k]),
                ):
                    if mine is None or theirs is None:
                        if mine is not theirs:
                            return None
                        continue
                    if link_map.setdefault(mine, theirs) is not theirs:
                        return None
                if usage_map.setdefault(hop[3], other[3]) is not other[3]:
                    return None
        if len(set(map(id, link_map.values()))) != len(link_map):
            return None
        if len(set(map(id, usage_map.values()))) != len(usage_map):
            return None
        order = p // period
        link_canon: dict[FlowLink, FlowLink] = {}
        link_orbits: list[list[FlowLink]] = []
        usage_canon: dict[Any, Any] = {}
        usage_orbits: list[list[Any]] = []
        for (i, _j), route in hops.items():
            if i >= period or not route:
                continue
            assert isinstance(route, FlowRoute)
            for k, hop in enumerate(route):
                for link in (route.links[k], route.exits[k]):
                    if link is None or link in link_canon:
                        continue
                    orbit = _orbit(link, link_map)
                    if orbit is None or len(orbit) != order:
                        return None  # a link that is its own image carries several flows
                    for member in orbit:
                        link_canon[member] = link
                    link_orbits.append(orbit)
                usage = hop[3]
                if usage not in usage_canon:
                    orbit = _orbit(usage, usage_map)
                    if orbit is None or (len(orbit) != order and usage.capacity > 1):
                        return None  # its load would count one image per flow
                    for member in orbit:
                        usage_canon[member] = usage
                    usage_orbits.append(orbit)
        routes: dict[tuple[int, int], tuple[ProcessState, ProcessState, Sequence[Hop]]] = {}
        for (i, j), route in hops.items():
            if i >= period:
                continue
            shift = j - j % period
            target, source = members[j % period], members[(i - shift) % p]
            if not route:
                routes[i, j] = (target, source, route)
                continue
            assert isinstance(route, FlowRoute)
            links = tuple(link_canon[link] if link is not None else None for link in route.links)
            exits = tuple(link_canon[link] if link is not None else None for link in route.exits)
            crossed = [link for link in links + exits if link is not None]
            if len(set(map(id, crossed))) != len(crossed):
                return None  # one flow on one link twice: the quotient cannot say it
            canonical = FlowRoute(
                (node, usage_canon[usage].instance, fifo, usage_canon[usage])
                for node, _instance, fifo, usage in route
            )
            canonical.links = links
            canonical.exits = exits
            canonical.paths = {}
            routes[i, j] = (target, source, canonical)
        return routes, link_orbits, usage_orbits


def _orbit(start: Any, mapping: dict[Any, Any]) -> list[Any] | None:
    """Return start, pi(start), pi(pi(start)), ... until it comes back; None when pi leaves
    the objects it is known on (cannot be: the pairs are closed under the rotation)."""
    orbit = [start]
    current = mapping.get(start)
    while current is not start:
        if current is None or len(orbit) > len(mapping):
            return None
        orbit.append(current)
        current = mapping.get(current)
    return orbit


Table = list[list[tuple[int, float, bool]]]
"""Per member, its peers, bytes and whether reduced, in the order of a step's transfers."""


def _schedule_tables(
    steps: collectives.Schedule, p: int
) -> tuple[list[tuple[int, int]], list[tuple[Table, Table]]]:
    """Return the schedule's runs of equal steps (first step, count) and, per run, each
    member's sends and receives in one of its steps, in the step's order: what
    `collectives.messages_by_member` makes of each step, which a member's program takes by
    step, sends first, each in this order (a stable sort)."""
    runs: list[tuple[int, int]] = []
    tables: list[tuple[Table, Table]] = []
    count = len(steps)
    first = 0
    while first < count:
        step = steps[first]
        end = first + 1
        while end < count and (steps[end] is step or steps[end] == step):
            end += 1
        runs.append((first, end - first))
        sends: Table = [[] for _ in range(p)]
        receives: Table = [[] for _ in range(p)]
        for source, target, size, reduced in step:
            sends[source].append((target, size, reduced))
            receives[target].append((source, size, reduced))
        tables.append((sends, receives))
        first = end
    return runs, tables


def _pairs(tables: list[tuple[Table, Table]], p: int) -> list[tuple[int, int]]:
    """Each (member, peer) that a message goes between, member by member, in the order the
    member first sends to the peer."""
    pairs: list[tuple[int, int]] = []
    for member in range(p):
        seen: set[int] = set()
        for sends, _ in tables:
            for peer, _, _ in sends[member]:
                if peer not in seen:
                    seen.add(peer)
                    pairs.append((member, peer))
    return pairs


def _schedule_invariant(tables: list[tuple[Table, Table]], period: int) -> bool:
    """Whether member i + period's sends and receives are member i's with every peer
    shifted by `period` (indices mod p), in every run of steps, for every member."""
    for table in (table for pair in tables for table in pair):
        p = len(table)
        for i, mine in enumerate(table):
            theirs = table[(i + period) % p]
            if len(mine) != len(theirs):
                return False
            for (peer, size, reduced), other in zip(mine, theirs, strict=True):
                if other != ((peer + period) % p, size, reduced):
                    return False
    return True


def _messages(
    runs: list[tuple[int, int]], tables: list[tuple[Table, Table]], period: int
) -> list[list[collectives.Message]]:
    """Return members 0..period-1's messages, step by step, sends first: their programs'
    order (`_schedule_tables`)."""
    made: list[list[collectives.Message]] = []
    send, receive = collectives.SEND, collectives.RECEIVE
    for member in range(period):
        messages: list[collectives.Message] = []
        for (first, count), (sends, receives) in zip(runs, tables, strict=True):
            mine = [(send, peer, size, reduced) for peer, size, reduced in sends[member]]
            mine += [(receive, peer, size, reduced) for peer, size, reduced in receives[member]]
            for step in range(first, first + count):
                messages += [(step, *entry) for entry in mine]
        made.append(messages)
    return made


def _flat(channel: object) -> tuple[object, ...]:
    return channel if isinstance(channel, tuple) else (channel,)
