"""A flow-level network: messages share link bandwidth by (weighted) max-min fairness.

The store-and-forward FIFO of simulator.platform serves one message at a time per hop
direction. A link whose node says `sharing: "shared"` or `"full-duplex"` is a *flow link*
instead: a message crossing it is one flow over every flow link of its route at once, as in
SimGrid's CM02/LV08 models (docs/network-model.md gives the sources). For a flow f on route
R(f) of links l:

    start:       f waits  L_f = phi_L * sum_{l in R(f)} lat_{f,l}                       (F1)
    then moves:  r_f = phi_B * x_f bytes/s until its bytes are done                     (F2)
    links:       sum_{f crosses l} a_{f,l} x_f <= 1        for every link l             (F3)
    bound:       x_f <= gamma / (2 sum_l lat_{f,l})        (TCP window, gamma > 0 only) (F4)
    fairness:    x is the weighted max-min fair point of (F3)-(F4) with weights
                 w_f = 1 / p_f, p_f = sum_l lat_{f,l} + S * sum_l a_{f,l}  (p_f = 0: w = 1) (F5)

where lat_{f,l} = T_l(0) and a_{f,l} = (T_l(n) - T_l(0)) / n are read from the link node's
own computational model T_l(n) = p2pTime(n, params) for the flow's size n, direction and host
memory kind: seconds per byte, so a constraint's capacity is one second of link time per
second. For the MERPSYS model (eq. 4.6) T_l(n) = t_s + n / (bw lambda_c), hence lat = t_s and
a = 1 / (bw lambda_c): a flow alone on a one-link route finishes after
t_s + n / (bw lambda_c), eq. 4.6 itself.

The models (`NETWORK_MODELS`): "maxmin" (phi_L = phi_B = 1, S = 0, gamma = 0, all w_f = 1:
plain max-min fairness, the default), "CM02" (SimGrid's: no factors, S = 0, so w_f is the
inverse of the route latency, gamma = 4 MiB) and "LV08" (SimGrid's: phi_L = 13.01,
phi_B = 0.97, S = 20537, gamma = 4 MiB).

The max-min point is found by progressive filling, as SimGrid's lmm solver does: repeatedly,
the level lambda = min over links of (remaining capacity / sum of a_{f,l} w_f over unfixed
flows) and over unfixed flows' bounds b_f / w_f; the flows at that level are fixed at
x_f = lambda w_f and their links' remaining capacity reduced. Whenever a flow starts moving or
ends, only its connected component (flows and links reachable through shared links) is
re-solved, for a flow that ended that of every link it left (`FlowNetwork._solve_changed`);
the other flows keep their rates and completion events.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

from simulator import hotpath

SHARING_POLICIES = ("fifo", "shared", "full-duplex")
"""A network node's `sharing`: "fifo" (store and forward, one message at a time per travel
direction: the default), "shared" (one flow constraint per instance for every direction,
SimGrid's SHARED) or "full-duplex" (one flow constraint per instance and travel direction,
SimGrid's SPLITDUPLEX)."""

FLOW_SHARING = frozenset(SHARING_POLICIES[1:])

SATURATED = 1.0 - 1e-9
"""A link whose constraint is used to this fraction counts as saturated (rounding aside)."""

SERIES_POINTS = 4096
"""Change points of a link's utilisation kept while it runs: past this, neighbouring steps are
merged pairwise (their time-weighted mean), so memory stays bounded and the integral exact."""

SERIES_BINS = 100
"""Time bins of the utilisation series in the result (`utilisation_series`): the mean use of
the link in each of this many equal parts of the run, small enough for a chart of hundreds of
links in the browser."""


@dataclass(frozen=True)
class NetworkModel:
    """The factors of a flow model (module docstring, F1-F5)."""

    name: str
    latency_factor: float = 1.0
    bandwidth_factor: float = 1.0
    weight_s: float = 0.0
    tcp_gamma: float = 0.0
    latency_weighted: bool = False


NETWORK_MODELS: dict[str, NetworkModel] = {
    "maxmin": NetworkModel("maxmin"),
    "CM02": NetworkModel("CM02", tcp_gamma=4194304.0, latency_weighted=True),
    "LV08": NetworkModel(
        "LV08",
        latency_factor=13.01,
        bandwidth_factor=0.97,
        weight_s=20537.0,
        tcp_gamma=4194304.0,
        latency_weighted=True,
    ),
}
DEFAULT_MODEL = "maxmin"

FLOW_MESSAGES = {
    "sharing": "Unknown sharing {value!r}; expected one of " + ", ".join(SHARING_POLICIES) + ".",
    "model": "Unknown network model {value!r}; expected one of " + ", ".join(NETWORK_MODELS) + ".",
    "sharing_network": "Only a NETWORK node carries flows; sharing {value!r} is set on a "
    "{kind} node.",
    "negative": "a link's p2pTime({size}) ({seconds} s) is below its p2pTime(0) ({latency} s)",
}


def network_model(name: object) -> NetworkModel:
    """Return the model called `name`; ValueError naming the choices for any other value."""
    model = NETWORK_MODELS.get(name) if isinstance(name, str) else None
    if model is None:
        raise ValueError(FLOW_MESSAGES["model"].format(value=name))
    return model


class FlowLink:
    """One flow constraint: a network node's instance (and travel direction when full
    duplex), with what it carried: bytes, the integral of its utilisation, its peak and the
    time it was saturated."""

    __slots__ = (
        "byte_rate",
        "bytes",
        "flows",
        "id",
        "instance",
        "left",
        "multi",
        "node",
        "peak",
        "saturated_s",
        "series_t",
        "series_u",
        "sharing",
        "since",
        "usage",
        "used",
        "used_s",
    )

    def __init__(self, node: str, instance: int, link_id: str, sharing: str) -> None:
        self.node = node
        self.instance = instance
        self.id = link_id
        self.sharing = sharing
        self.flows: dict[Flow, float] = {}  # each flow crossing it and its a_{f,l}
        self.used = 0.0  # sum of a_{f,l} r_f: the fraction of the link in use now
        self.byte_rate = 0.0  # sum of r_f
        self.since = 0.0
        self.bytes = 0.0
        self.used_s = 0.0
        self.saturated_s = 0.0
        self.peak = 0.0
        # its utilisation as a step function: series_u[i] holds from series_t[i] on
        self.series_t: list[float] = [0.0]
        self.series_u: list[float] = [0.0]
        self.left = 0.0  # capacity left and unfixed flows' usage in solve_max_min
        self.usage = 0.0
        self.multi = 0  # the flows on it that cross other links too (`component`)

    def mark(self, now: float) -> None:
        """Note the utilisation `used` from `now` on (after a solve of its component)."""
        times, values = self.series_t, self.series_u
        used = self.used
        if times[-1] == now:  # re-solved in the same instant: the last value stands
            values[-1] = used
            if len(values) > 1 and values[-2] == used:
                times.pop()
                values.pop()
        elif values[-1] != used:
            times.append(now)
            values.append(used)
            if len(times) > SERIES_POINTS:
                self._merge(now)

    def _merge(self, now: float) -> None:
        """Halve the change points: each pair of steps becomes one at their time-weighted
        mean (the last step, still open, is kept as it is)."""
        times, values = self.series_t, self.series_u
        merged_t: list[float] = []
        merged_u: list[float] = []
        last = len(times) - 1
        for i in range(0, last - 1, 2):
            start, middle, end = times[i], times[i + 1], times[i + 2]
            span = end - start
            mean = (
                (values[i] * (middle - start) + values[i + 1] * (end - middle)) / span
                if span > 0.0
                else values[i + 1]
            )
            merged_t.append(start)
            merged_u.append(mean)
        if last % 2:  # an odd step left before the open one
            merged_t.append(times[last - 1])
            merged_u.append(values[last - 1])
        merged_t.append(times[last])
        merged_u.append(values[last])
        self.series_t, self.series_u = merged_t, merged_u

    def series(self, overall_s: float, bins: int = SERIES_BINS) -> list[float]:
        """Return the link's mean utilisation in each of `bins` equal parts of [0, overall_s]."""
        if overall_s <= 0.0:
            return []
        width = overall_s / bins
        sums = [0.0] * bins
        times, values = self.series_t, self.series_u
        top = bins - 1
        ends = times[1:]
        ends.append(overall_s)
        # min() and max() written out (the same choice: the first argument on ties)
        for start, end, value in zip(times, ends, values, strict=True):
            if value == 0.0 or end <= start:
                continue
            first = int(start / width)
            if first > top:
                first = top
            last = int(end / width)
            if last > top:
                last = top
            for b in range(first, last + 1):
                edge = b * width
                low = edge if edge > start else start
                edge = (b + 1) * width if b < top else overall_s
                high = edge if edge < end else end
                if high > low:
                    sums[b] += value * (high - low)
        # four decimals: a chart's resolution, and a result a fraction of the size
        return [round(total / width, 4) for total in sums]

    def advance(self, now: float) -> None:
        """Account the time since the last change at the current usage."""
        elapsed = now - self.since
        if elapsed > 0.0:
            self.bytes += self.byte_rate * elapsed
            self.used_s += self.used * elapsed
            if self.used >= SATURATED:
                self.saturated_s += elapsed
        self.since = now

    def result(self, overall_s: float, series: list[float] | None = None) -> dict[str, Any]:
        """Return the link's figures for the run's result (`links`); `series`: its
        `series(overall_s)` when the caller made it already."""
        return {
            "link": self.id,
            "node": self.node,
            "instance": self.instance,
            "sharing": self.sharing,
            "bytes": self.bytes,
            "peak_utilisation": self.peak,
            "mean_utilisation": self.used_s / overall_s if overall_s > 0 else 0.0,
            "saturated_s": self.saturated_s,
            "utilisation_series": self.series(overall_s) if series is None else series,
        }


class Flow:
    """One message moving over its flow links (F1-F5): `done(now)` is called when its last
    byte arrived."""

    __slots__ = (
        "bound",
        "done",
        "links",
        "open",
        "pending",
        "rate",
        "remaining",
        "updated",
        "version",
        "weight",
        "x",
    )

    def __init__(
        self,
        links: Iterable[tuple[FlowLink, float]],
        size: float,
        weight: float,
        bound: float,
        done: Callable[[float], None],
    ) -> None:
        self.links = tuple(links)
        self.remaining = size
        self.weight = weight
        self.bound = bound
        self.done = done
        self.x = 0.0
        self.rate = 0.0
        self.updated = 0.0
        self.version = 0
        self.pending = False  # whether an end event of this version is scheduled
        self.open = False  # whether solve_max_min has yet to fix it


class FlowPath:
    """The links of a flow with its a_{f,l} on each, its weight w_f, bound and latency
    (F1, F4, F5): the same for every message of one size over one run of flow links."""

    __slots__ = ("bound", "delay", "links", "weight")

    def __init__(
        self, links: tuple[tuple[FlowLink, float], ...], weight: float, bound: float, delay: float
    ) -> None:
        self.links = links
        self.weight = weight
        self.bound = bound
        self.delay = delay


class FlowNetwork:
    """The flow links of one run and the flows moving over them (module docstring)."""

    def __init__(self, engine: Any, model: NetworkModel) -> None:
        self.engine = engine
        self.model = model
        self.links: dict[tuple[object, ...], FlowLink] = {}
        # flows that joined or left since the last solve, whose components are re-solved
        # once at the end of the instant (_solve_changed): flows that start together, as a
        # collective's pieces do, cost one solve rather than one each
        self._changed: list[Flow] = []
        # a flow's start and end events (`join`, `finish`)
        on_join, on_finish = _flow_events(engine)
        self._join = functools.partial(on_join, engine, self._changed, self._solve_changed)
        self._finish = functools.partial(on_finish, engine, self._changed, self._solve_changed)
        # the flow paths made so far, per run of flow links, size, direction and host memory
        # (simulator.platform `_RouteTransfer._flow_start`)
        self.paths: dict[tuple[object, ...], FlowPath] = {}
        # `_solve_uniform`'s figures per (links, weight, bound, flow count): `_uniform_state`
        self._uniform_states: dict[tuple[int, float, float, int], UniformState] = {}

    def link(
        self, node: str, instance: int, sharing: str, came_from: str, going_to: str
    ) -> FlowLink:
        """Return the constraint of `node`'s `instance` for travel from one neighbour to
        another: one per instance when shared, one per direction when full duplex."""
        shared = sharing == "shared"
        key = (node, instance, "", "") if shared else (node, instance, came_from, going_to)
        link = self.links.get(key)
        if link is None:  # its name made once, when it is first crossed
            link_id = f"{node}[{instance}]"
            if not shared:
                link_id += f" {came_from}->{going_to}"
            link = self.links[key] = FlowLink(node, instance, link_id, sharing)
        return link

    def port(
        self, node: str, instance: int, sharing: str, neighbour: str, entering: bool
    ) -> FlowLink:
        """Return the constraint of the port of a switch's `instance` that faces `neighbour`
        (simulator.topology.SWITCH_ROLES): for a flow `entering` the switch from it, or
        leaving to it; one per port and direction when full duplex, one per port when
        shared."""
        shared = sharing == "shared"
        key: tuple[object, ...] = (
            ("port", node, instance, neighbour)
            if shared
            else ("port", node, instance, neighbour, "in" if entering else "out")
        )
        link = self.links.get(key)
        if link is None:  # its name made once, when it is first crossed
            name = f"{node}[{instance}]"
            if shared:
                link_id = f"{name} {neighbour}<->"
            else:
                link_id = f"{name} {neighbour}->" if entering else f"{name} ->{neighbour}"
            link = self.links[key] = FlowLink(node, instance, link_id, sharing)
        return link

    def start(
        self,
        crossings: list[tuple[FlowLink, float, float]],
        size: float,
        done: Callable[[float], None],
    ) -> float:
        """Start a message of `size` bytes over `crossings` (each link with the message's
        latency lat_{f,l} and seconds per byte a_{f,l} on it): after the route's latency
        (F1, returned) it moves by (F2-F5); `done(now)` runs when it arrived."""
        return self.start_path(self.path(crossings), size, done)

    def path(self, crossings: list[tuple[FlowLink, float, float]]) -> FlowPath:
        """Return what (F1), (F4) and (F5) make of `crossings` (`start`'s), which every
        message of the same size on the same links shares (a collective's pieces)."""
        model = self.model
        latency = sum(lat for _, lat, _ in crossings)
        penalty = latency + model.weight_s * sum(a for _, _, a in crossings)
        weight = 1.0 / penalty if model.latency_weighted and penalty > 0.0 else 1.0
        bound = (
            model.tcp_gamma / (2.0 * latency) if model.tcp_gamma > 0 and latency > 0 else math.inf
        )
        links = tuple((link, a) for link, _, a in crossings)
        return FlowPath(links, weight, bound, latency * model.latency_factor)

    def start_path(self, path: FlowPath, size: float, done: Callable[[float], None]) -> float:
        """`start` a message of `size` bytes over a `path` made by `path()`."""
        flow = Flow(path.links, size, path.weight, path.bound, done)
        self.engine.schedule(path.delay, self._join, flow)
        return path.delay

    def _solve_changed(self, _: object) -> None:
        """Re-solve, once each, the components of the flows that joined or left: scheduled
        by the first of an instant to join or leave, it runs after that instant's other
        events (the engine runs same-time events in order)."""
        changed = self._changed.copy()  # the list `join` and `finish` add to
        self._changed.clear()
        now = self.engine.now
        first = self._solve(changed[0], now)
        if len(changed) == 1:  # one flow joined or left: its component
            return
        if len(changed) == 2:  # one left and one joined (a ring's pieces), often one component
            flow = changed[1]
            hops = flow.links
            if hops is changed[0].links:  # the first one's links (one flow path): solved
                return
            hop = hops[0][0]
            if hop not in first:  # not solved with the first one's
                self._solve(flow, now)
            elif len(hops) > 1 and flow not in hop.flows:  # it left: `_solve_left`
                self._solve_left(flow, now, set(first))
            return
        solved = set(first)
        for flow in changed[1:]:
            hop = flow.links[0][0]
            if hop not in solved:
                solved.update(self._solve(flow, now))
            elif len(flow.links) > 1 and flow not in hop.flows:  # it left: `_solve_left`
                self._solve_left(flow, now, solved)

    def _solve_left(self, flow: Flow, now: float, solved: set[FlowLink]) -> None:
        """Re-solve the links `flow` left that are not in `solved` (its first link is). A
        flow that crosses its links makes them one component, so its first link's component
        holds them all; once it has left, nothing may join them (a piece from one switch port
        to another), and a link left unsolved would keep its share, bytes and use. Each such
        link is solved from a flow still on it, or falls idle when none is."""
        for link, _ in flow.links:
            if link in solved:
                continue
            on = link.flows
            if on:
                solved.update(self._solve(next(iter(on)), now))
            else:  # the last flow on it left: idle from now on
                link.advance(now)
                link.used = 0.0
                link.byte_rate = 0.0
                link.mark(now)
                solved.add(link)

    def _solve(self, changed: Flow, now: float) -> list[FlowLink]:
        """Re-solve the component of `changed` at `now` and reschedule its flows' ends;
        return the component's links."""
        hops = changed.links
        if len(hops) == 1:
            link = hops[0][0]
            if not link.multi:  # every flow on it crosses it alone (`component`)
                return self._solve_link(link, now)
        else:
            solved = _solve_uniform(
                changed,
                now,
                self._uniform_states,
                self._uniform_state,
                self.engine.schedule,
                self._finish,
            )
            if solved is not None:
                return solved
        return self._solve_from(changed, now)

    def _solve_link(self, link: FlowLink, now: float) -> list[FlowLink]:
        """`solve_from` of a link whose flows cross it alone, in one pass when none has
        a bound: `solve_max_min`'s one-link step (the shares are the weights') and the
        one-link scheduling (only the first to end gets its end event), the same sums in the
        same order. With a bound, the general course."""
        on = link.flows
        total = 0.0
        inf = math.inf
        for flow, a in on.items():
            if flow.bound != inf:  # its component is the link's flows: `component`
                return self._solve_from(flow, now)
            total += a * flow.weight
        elapsed = now - link.since  # `link.advance(now)`, inline (once per solve)
        if elapsed > 0.0:
            link.bytes += link.byte_rate * elapsed
            link.used_s += link.used * elapsed
            if link.used >= SATURATED:
                link.saturated_s += elapsed
        link.since = now
        level = 1.0 / total if total > 0.0 else inf
        factor = self.model.bandwidth_factor
        used = byte_rate = 0.0
        first: list[Flow] = []  # the flows that end first (ties end together)
        first_delay = inf
        for flow, a in on.items():
            flow.x = x = level * flow.weight
            rate = x * factor
            used += a * x
            byte_rate += rate
            old = flow.rate
            flow.remaining -= old * (now - flow.updated)  # the bytes moved at the old rate
            flow.updated = now
            flow.rate = rate
            flow.version += 1
            flow.pending = False
            if rate > 0.0:
                remaining = flow.remaining if flow.remaining > 0.0 else 0.0
                delay = remaining / rate
                if delay < first_delay:
                    first, first_delay = [flow], delay
                elif delay == first_delay:
                    first.append(flow)
        link.used = used
        link.byte_rate = byte_rate
        if first:
            schedule, finish = self.engine.schedule, self._finish
            for flow in first:
                flow.pending = True
                schedule(first_delay, finish, (flow, flow.version))
        if used > link.peak:
            link.peak = used
        link.mark(now)
        return [link]

    def _solve_from(self, changed: Flow, now: float) -> list[FlowLink]:
        """`_solve`'s general course: `solve_from`, in C where it is built."""
        return _solve_from(
            changed, now, self.model.bandwidth_factor, self.engine.schedule, self._finish
        )

    def _uniform_state(
        self, hops: tuple[tuple[FlowLink, float], ...], weight: float, bound: float, count: int
    ) -> UniformState:
        """Return `_make_uniform_state(hops, weight, bound, count)`, kept in `_uniform_states`
        under (id(hops), weight, bound, count) for `solve_uniform` to find (a bounded memo,
        as `_repeated_sum`'s)."""
        state = self._make_uniform_state(hops, weight, bound, count)
        states = self._uniform_states
        if len(states) >= _SUMS_KEPT:
            states.clear()
        states[id(hops), weight, bound, count] = state
        return state

    def _make_uniform_state(
        self, hops: tuple[tuple[FlowLink, float], ...], weight: float, bound: float, count: int
    ) -> UniformState:
        """Return what `solve_uniform` sets for `count` flows of `weight` and `bound` over
        `hops`, the same whenever they come back (a ring step's pieces between two ranks,
        thousands of times): (hops, x, the rate, per link from the last to the first: the
        link, its use and its byte rate); x None when the general course must solve it."""
        # the level of the filling's first round: each link's capacity over its flows' sum
        # of a_{f,l} w_f (module docstring), then the flows' common bound
        level = math.inf
        for _link, a in hops:
            usage = _repeated_sum(a * weight, count)
            if not usage > 0.0:  # a link without cost or a NaN
                return hops, None, 0.0, ()
            share = 1.0 / usage
            if share < level:
                level = share
        if bound != math.inf and bound / weight < level:
            level = bound / weight
        if level == math.inf:
            return hops, None, 0.0, ()
        x = min(level * weight, bound)
        rate = x * self.model.bandwidth_factor
        byte_rate = _repeated_sum(rate, count)
        figures = tuple((link, _repeated_sum(a * x, count), byte_rate) for link, a in hops)
        return hops, x, rate, figures[::-1]

    def result(self, overall_s: float) -> list[dict[str, Any]]:
        """Return every flow link's figures, in the order they were first crossed. Links
        whose utilisation stepped alike (a symmetric collective's, simulator.symmetry) share
        the binning of their steps, made once."""
        figures = []
        binned: dict[tuple[int, float, float], list[tuple[list[float], list[float], list[float]]]]
        binned = {}
        for link in self.links.values():
            link.advance(overall_s)
            times, values = link.series_t, link.series_u
            alike = binned.setdefault((len(times), times[-1], values[-1]), [])
            series = next((s for t, u, s in alike if t == times and u == values), None)
            figure = link.result(overall_s, None if series is None else list(series))
            if series is None:
                alike.append((times, values, figure["utilisation_series"]))
            figures.append(figure)
        return figures


def join(
    engine: Any, changed: list[Flow], solve_changed: Callable[[object], None], flow: Flow
) -> None:
    """`flow` joins its links after its route's latency (F1), and its component is re-solved
    at the end of the instant: the first flow of an instant to join or leave (`changed`
    empty) schedules `solve_changed` (`FlowNetwork._solve_changed`), which runs after that
    instant's other events; a flow with no bytes or no links is done at once.

    simulator/_speedups_flows_uniform.c `flow_join` is its C copy (chosen where the engine runs on
    the C core, `FlowNetwork.__init__`; tests/simulator/test_flow_solver.py)."""
    now = engine.now
    if flow.remaining <= 0.0 or not flow.links:
        flow.done(now)
        return
    flow.updated = now
    links = flow.links
    if len(links) > 1:
        for link, a in links:
            link.flows[flow] = a
            link.multi += 1
    else:
        for link, a in links:
            link.flows[flow] = a
    if not changed:
        engine.schedule(0.0, solve_changed, None)
    changed.append(flow)


def finish(
    engine: Any,
    changed: list[Flow],
    solve_changed: Callable[[object], None],
    arg: tuple[Flow, int],
) -> None:
    """A flow's end event, (flow, the version it was scheduled for): unless the flow was
    re-solved since (a later event stands for it), it leaves its links, its component is
    re-solved as `join` has it, and it is done.

    simulator/_speedups_flows_uniform.c `flow_finish` is its C copy (as `join`'s)."""
    flow, version = arg
    if version != flow.version:  # re-solved since: a later event stands for it
        return
    now = engine.now
    flow.remaining = 0.0
    links = flow.links
    if len(links) > 1:
        for link, _ in links:
            del link.flows[flow]
            link.multi -= 1
    else:
        for link, _ in links:
            del link.flows[flow]
    if not changed:
        engine.schedule(0.0, solve_changed, None)
    changed.append(flow)
    flow.done(now)


def _flow_events(engine: Any) -> tuple[Callable[..., None], Callable[..., None]]:
    """Return `join` and `finish`, or their C copies where `engine` runs on the C core."""
    core = hotpath.core_of(engine)
    return (
        hotpath.choose_in(core, join, "flow_join"),
        hotpath.choose_in(core, finish, "flow_finish"),
    )


def component(flow: Flow) -> tuple[list[Flow], list[FlowLink]]:
    """Return the flows and links connected to `flow`'s links (the flow itself only when
    it still crosses them). Flows and links hash by identity."""
    if len(flow.links) == 1:
        link = flow.links[0][0]
        if not link.multi:  # every flow on it crosses it alone: the walk's answer
            return list(link.flows), [link]
    links: list[FlowLink] = []
    flows: list[Flow] = []
    seen_links: set[FlowLink] = set()
    seen_flows: set[Flow] = set()
    stack = [link for link, _ in flow.links]
    while stack:
        link = stack.pop()
        if link in seen_links:
            continue
        seen_links.add(link)
        links.append(link)
        for other in link.flows:
            if other not in seen_flows:
                seen_flows.add(other)
                flows.append(other)
                hops = other.links
                if len(hops) > 1:
                    for hop, _ in hops:
                        if hop not in seen_links:
                            stack.append(hop)
    return flows, links


def solve_from(
    changed: Flow,
    now: float,
    factor: float,
    schedule: Callable[[float, Callable[[tuple[Flow, int]], None], tuple[Flow, int]], object],
    finish: Callable[[tuple[Flow, int]], None],
) -> list[FlowLink]:
    """Re-solve at `now` the component of `changed` (`component`) by the general filling
    (`solve_max_min`) and return its links: each link's use is accounted up to `now`
    (`FlowLink.advance`) and from it (`used`, `byte_rate`, `peak`, `mark`); each flow gets
    the rate x_f * `factor` (phi_B, F2), is charged the bytes it moved at its old rate and,
    unless its end event stands, a new `version` and `schedule(delay, finish, (flow,
    version))` for its end. The general course of `FlowNetwork._solve`.

    simulator/_speedups_flows.c is its C copy (`hotpath.flow_solver` chooses): the same
    float operations in the same order, so the same bits, and the same calls to `schedule`
    in the same order (tests/simulator/test_flow_solver.py)."""
    flows, links = component(changed)
    for link in links:
        link.advance(now)
        link.used = 0.0
        link.byte_rate = 0.0
    solve_max_min(flows, links)
    # One link: every change to these flows' rates comes through this link (a flow
    # joining it, or one of them ending), so only the first to end needs its end event;
    # the others get theirs when it ends and the link is solved again. Otherwise each
    # flow whose rate changed, or that has no end event, gets a new one.
    one_link = len(links) == 1
    first: list[Flow] = []  # on one link: the flows that end first (ties end together)
    first_delay = math.inf
    for flow in flows:
        x = flow.x
        rate = x * factor
        for link, a in flow.links:
            link.used += a * x
            link.byte_rate += rate
        old = flow.rate
        flow.remaining -= old * (now - flow.updated)  # the bytes moved at the old rate
        flow.updated = now
        if rate == old and flow.pending and not one_link:  # its end event stands
            continue
        flow.rate = rate
        flow.version += 1
        flow.pending = False
        if rate > 0.0:
            remaining = flow.remaining if flow.remaining > 0.0 else 0.0
            delay = remaining / rate
            if one_link:
                if delay < first_delay:
                    first, first_delay = [flow], delay
                elif delay == first_delay:
                    first.append(flow)
            else:
                flow.pending = True
                schedule(delay, finish, (flow, flow.version))
    for flow in first:
        flow.pending = True
        schedule(first_delay, finish, (flow, flow.version))
    for link in links:
        if link.used > link.peak:
            link.peak = link.used
        link.mark(now)
    return links


def solve_max_min(flows: list[Flow], links: list[FlowLink]) -> None:
    """Set each flow's `x` to the weighted max-min fair point of (F3)-(F5) by progressive
    filling (module docstring). `links` are every link the flows cross, and the flows every
    flow on those links."""
    inf = math.inf
    unbounded = True
    for flow in flows:
        if flow.bound != inf:
            unbounded = False
            break
    if unbounded and len(links) == 1:
        # one link, no bound: the shares are the weights' (one step of the filling below)
        (link,) = links
        total = 0.0
        for flow, a in link.flows.items():
            total += a * flow.weight
        level = 1.0 / total if total > 0.0 else inf
        for flow in flows:
            flow.x = level * flow.weight
        return
    # per link still open: capacity left (`left`) and the sum of a_{f,l} w_f over its
    # unfixed flows (`usage`), kept on the link while the filling runs; a flow is unfixed
    # while its `open` is set
    for link in links:
        link.left = 1.0
        total = 0.0
        for flow, a in link.flows.items():
            total += a * flow.weight
        link.usage = total
    unfixed = len(flows)
    bounded = [] if unbounded else [flow for flow in flows if flow.bound < inf]
    for flow in flows:
        flow.x = 0.0
        flow.open = True
    open_links = [link for link in links if link.usage > 0.0]
    while unfixed:
        level = inf
        for link in open_links:
            left = link.left
            share = (0.0 if left < 0.0 else left) / link.usage  # max(left, 0.0), NaN kept
            if share < level:
                level = share
        for flow in bounded:
            if flow.open and flow.bound / flow.weight < level:
                level = flow.bound / flow.weight
        if level == inf:  # flows that cross no constrained link: no limit
            for flow in flows:
                if flow.open:
                    flow.x = inf
                    flow.open = False
            return
        threshold = level * (1.0 + 1e-12)
        fixed = [f for f in bounded if f.open and f.bound / f.weight <= threshold]
        still_open = []
        for link in open_links:
            left = link.left
            if (0.0 if left < 0.0 else left) / link.usage <= threshold:
                fixed.extend([flow for flow in link.flows if flow.open])
            else:
                still_open.append(link)
        for flow in fixed:
            if not flow.open:
                continue
            flow.open = False
            unfixed -= 1
            weight = flow.weight
            flow.x = x = min(level * weight, flow.bound)
            for link, a in flow.links:
                link.left -= a * x
                link.usage -= a * weight
        open_links = [link for link in still_open if link.usage > 1e-300]


def solve_uniform(
    changed: Flow,
    now: float,
    states: dict[tuple[int, float, float, int], UniformState],
    state_of: Callable[[tuple[tuple[FlowLink, float], ...], float, float, int], UniformState],
    schedule: Callable[[float, Callable[[tuple[Flow, int]], None], tuple[Flow, int]], object],
    finish: Callable[[tuple[Flow, int]], None],
) -> list[FlowLink] | None:
    """Re-solve at `now` the component of `changed` (a flow over two or more links) when its
    flows all cross the same links with one weight and one bound (`_uniform_component`: a
    ring step's pieces between two ranks) and return its links; return None, having changed
    nothing, when `solve_from` must (another component, a link with no cost, an odd weight).
    Every flow of such a component gets one rate, so the filling's sums are one value added
    once per flow (`_repeated_sum`, in the same order, hence the same bits) and one round of
    it fixes them all: what it sets is `states[id(hops), weight, bound, count]`, made by
    `state_of(hops, weight, bound, count)` (which keeps it there) when absent.
    Each link is accounted and marked as `solve_from` does (`FlowLink.advance`, `mark`),
    each flow charged and given its end event as there, in the same order.

    simulator/_speedups_flows_uniform.c `flow_solve_uniform` is its C copy (`hotpath.
    flow_uniform_solver` chooses): the same float operations in the same order and the same
    calls to `schedule` (tests/simulator/test_flow_solver.py)."""
    uniform = _uniform_component(changed)
    if uniform is None:
        return None
    flows, links = uniform
    hops = changed.links
    figures: Iterable[tuple[FlowLink, float, float]]
    if flows:
        first = flows[0]
        weight, bound, count = first.weight, first.bound, len(flows)
        state = states.get((id(hops), weight, bound, count))
        if state is None or state[0] is not hops:
            state = state_of(hops, weight, bound, count)
        _, solved_x, rate, figures = state
        if solved_x is None:  # a link without cost, a NaN or no limit: the general course
            return None
        x = solved_x
    else:  # the last flow left: the links fall idle
        x = rate = 0.0
        figures = [(link, 0.0, 0.0) for link in links]
    # each link: `advance(now)` inline, then its new use, peak and change point; a
    # link's own steps in `solve_from`'s order (links do not depend on each other)
    for link, used, byte_rate in figures:
        elapsed = now - link.since
        if elapsed > 0.0:
            link.bytes += link.byte_rate * elapsed
            link.used_s += link.used * elapsed
            if link.used >= SATURATED:
                link.saturated_s += elapsed
        link.since = now
        link.used = used
        link.byte_rate = byte_rate
        if used > link.peak:
            link.peak = used
        times, values = link.series_t, link.series_u  # `link.mark(now)`, inline
        if times[-1] == now:
            values[-1] = used
            if len(values) > 1 and values[-2] == used:
                times.pop()
                values.pop()
        elif values[-1] != used:
            times.append(now)
            values.append(used)
            if len(times) > SERIES_POINTS:
                link._merge(now)
    for flow in flows:
        flow.x = x
        old = flow.rate
        flow.remaining -= old * (now - flow.updated)  # the bytes moved at the old rate
        flow.updated = now
        if rate == old and flow.pending:  # its end event stands
            continue
        flow.rate = rate
        flow.version += 1
        flow.pending = False
        if rate > 0.0:
            remaining = flow.remaining if flow.remaining > 0.0 else 0.0
            flow.pending = True
            schedule(remaining / rate, finish, (flow, flow.version))
    return links


def _uniform_component(flow: Flow) -> tuple[list[Flow], list[FlowLink]] | None:
    """Return `component(flow)` when every flow on `flow`'s links (two or more)
    crosses exactly those links with the same a_{f,l}, weight and bound, in the walk's own
    order (its flows as the last link holds them, its links from the last to the first);
    None otherwise. A flow joins all its links at once, so they hold its flows in one order;
    a link holding as many flows as the last one, each crossing it, holds no other."""
    hops = flow.links
    walked = _WALKS.get(id(hops))
    if walked is None or walked[0] is not hops:  # a route's links, checked once
        if len(_WALKS) >= _SUMS_KEPT:  # bounded, as `_repeated_sum`'s
            _WALKS.clear()
        walk = [link for link, _ in reversed(hops)]
        walked = _WALKS[id(hops)] = (hops, walk if len(set(walk)) == len(walk) else None)
    links = walked[1]
    if links is None:  # a link crossed twice: not the walk's order
        return None
    on = links[0].flows
    count = len(on)
    for link in links:
        if len(link.flows) != count:
            return None
    weight = bound = None
    for other in on:
        if other.links is not hops and other.links != hops:
            return None
        if weight is None:
            weight, bound = other.weight, other.bound
        elif other.weight != weight or other.bound != bound:
            return None
    return list(on), links


_WALKS: dict[int, tuple[tuple[tuple[FlowLink, float], ...], list[FlowLink] | None]] = {}
"""`_uniform_component`'s links of a route, from the last to the first (None when a link
comes twice), by the identity of the route's tuple, which a flow path's flows share."""

_SUMS: dict[tuple[float, int], float] = {}
_SUMS_KEPT = 1 << 16


UniformState = tuple[
    tuple[tuple[FlowLink, float], ...],
    float | None,
    float,
    tuple[tuple[FlowLink, float, float], ...],
]
"""`FlowNetwork._make_uniform_state`'s answer: (hops, x, the rate, each link's figures)."""


def _repeated_sum(value: float, count: int) -> float:
    """Return 0.0 + value + value + ... (`count` times) added one by one, as a loop over
    `count` equal terms sums them (not value * count, which may round differently);
    remembered, as a uniform component's sums repeat (a bounded memo)."""
    key = (value, count)
    total = _SUMS.get(key)
    if total is None:
        if len(_SUMS) >= _SUMS_KEPT:
            _SUMS.clear()
        total = 0.0
        for _ in range(count):
            total += value
        _SUMS[key] = total
    return total


_solve_from = hotpath.flow_solver(solve_from, SATURATED, SERIES_POINTS)
"""`solve_from`, or its C copy where the C core is in use (`FlowNetwork._solve_from`)."""

_solve_uniform = hotpath.flow_uniform_solver(solve_uniform)
"""`solve_uniform`, or its C copy where the C core is in use (`FlowNetwork._solve`)."""
