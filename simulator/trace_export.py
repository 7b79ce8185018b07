"""A run's result as a Chrome trace (issue 43 item 6), for Perfetto and chrome://tracing.

The Trace Event Format (https://docs.google.com/document/d/1CvAClvFfyA5R-PhYUmn5OOQtYMH4h6I0nSsKchNAySU/)
is a JSON object whose `traceEvents` list holds events with a phase `ph`; this module writes
three phases:

- "M" metadata: `process_name`, `thread_name` and `process_sort_index`, so that each track is
  named;
- "X" complete events, one per timeline entry: `name`, `cat`, `ts` and `dur` in microseconds,
  `pid` and `tid` integers, `args` the entry's own keys (its size, route, kernel figures);
- "C" counter events: a component instance's busy state (1 while the resource timeline holds
  it busy, else 0) and its power in watts, each a step series.

Tracks: every hardware node instance that hosts a simulated process is one process track (pid
1, 2, ... in the order the result lists its processes) and each simulated process on it is a
thread (its computations, transfers, receives, barriers, memory calls). Component instances
(GPUs, links, memory levels) follow as one process track each, with their busy intervals as
"X" events on thread 0 and their counters. The function is pure: it reads the result only, and
covers what the result keeps (`timeline_dropped` > 0 says the timeline kept less than the run
did; `otherData` carries the counts).
"""

from __future__ import annotations

# No `typing` at run time: `python -m simulator run` imports this module (simulator.cli.common
# says why its start-up stays lean).
TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence
    from typing import Any

# Microseconds per second: the format's `ts` and `dur` are in microseconds.
US = 1e6

# Timeline keys that every entry has and the event carries in its own fields.
_OWN_KEYS = frozenset({"process", "kind", "start_s", "end_s"})

# Names the format gives metadata events (the spec's "Metadata Events").
METADATA_NAMES = ("process_name", "process_sort_index", "thread_name", "thread_sort_index")


def _us(seconds: float) -> float:
    return float(seconds) * US


def _event_name(entry: Mapping[str, Any]) -> str:
    """Return the readable name of a timeline entry: a kernel's name when the application
    gave one, the transfer's direction and peer, else its kind."""
    kind = str(entry["kind"])
    kernel = entry.get("kernel")
    detail = entry.get("detail")
    for source in (detail, kernel):
        if isinstance(source, dict):
            for key in ("kernelName", "name"):
                if isinstance(source.get(key), str):
                    return str(source[key])
    if isinstance(entry.get("collective"), str):
        return str(entry["collective"])
    if kind == "transfer" and entry.get("to") is not None:
        return f"send to {entry['to']}"
    return kind


def _category(entry: Mapping[str, Any]) -> str:
    kind = str(entry["kind"])
    if "collective" in entry or kind in ("barrier", "broadcast", "scatter", "gather"):
        return "collective"
    if kind == "compute" and ("kernel" in entry or "detail" in entry):
        return "kernel"
    return kind


def _args(entry: Mapping[str, Any]) -> dict[str, Any]:
    return {key: value for key, value in entry.items() if key not in _OWN_KEYS}


def chrome_trace(result: Mapping[str, Any]) -> dict[str, Any]:
    """Return the Chrome trace (JSON object format) of a finished run's `result`."""
    events: list[dict[str, Any]] = []
    processes: Sequence[Mapping[str, Any]] = result.get("processes", [])
    components: Sequence[Mapping[str, Any]] = result.get("components", [])
    names = {row["node"]: row for row in components}

    # Process tracks: one per hosting (node, instance), threads per simulated process.
    host_pid: dict[tuple[str, int], int] = {}
    thread_of: dict[str, tuple[int, int]] = {}
    for row in processes:
        host = (str(row["node"]), int(row["instance"]))
        if host not in host_pid:
            pid = host_pid[host] = len(host_pid) + 1
            component = names.get(host[0], {})
            title = f"{component.get('name', host[0])} [{host[1]}]"
            if component.get("hardware"):
                title += f" ({component['hardware']})"
            events.append(_meta("process_name", pid, 0, {"name": title}))
            events.append(_meta("process_sort_index", pid, 0, {"sort_index": pid}))
        pid = host_pid[host]
        tid = len(thread_of) + 1
        thread_of[str(row["process"])] = (pid, tid)
        events.append(_meta("thread_name", pid, tid, {"name": str(row["process"])}))

    next_pid = len(host_pid) + 1
    for entry in result.get("timeline", []):
        process = str(entry["process"])
        if process not in thread_of:  # a process the result's rows do not list
            thread_of[process] = (next_pid, 1)
            events.append(_meta("process_name", next_pid, 0, {"name": process}))
            next_pid += 1
        pid, tid = thread_of[process]
        start = _us(entry["start_s"])
        events.append(
            {
                "name": _event_name(entry),
                "cat": _category(entry),
                "ph": "X",
                "ts": start,
                "dur": max(0.0, _us(entry["end_s"]) - start),
                "pid": pid,
                "tid": tid,
                "args": _args(entry),
            }
        )

    # Resource tracks: one per component instance that was busy or drew power.
    resource_pid: dict[tuple[str, int], int] = {}

    def resource(node: str, instance: int) -> int:
        key = (node, instance)
        if key not in resource_pid:
            pid = resource_pid[key] = next_pid + len(resource_pid)
            component = names.get(node, {})
            title = f"{component.get('name', node)} [{instance}] busy"
            events.append(_meta("process_name", pid, 0, {"name": title}))
            events.append(_meta("process_sort_index", pid, 0, {"sort_index": pid}))
        return resource_pid[key]

    changes: dict[int, list[tuple[float, int]]] = {}
    for busy in result.get("resource_timeline", []):
        pid = resource(str(busy["node"]), int(busy["instance"]))
        start = _us(busy["start_s"])
        end = max(start, _us(busy["end_s"]))
        events.append(
            {
                "name": "busy",
                "cat": "resource",
                "ph": "X",
                "ts": start,
                "dur": end - start,
                "pid": pid,
                "tid": 0,
                "args": {"node": busy["node"], "instance": busy["instance"]},
            }
        )
        changes.setdefault(pid, []).extend(((start, 1), (end, -1)))
    for pid, steps in changes.items():
        events.extend(_step_counter("busy", pid, steps))
    for series in result.get("power", []):
        pid = resource(str(series["node"]), int(series["instance"]))
        for time_s, watts in series["points"]:
            events.append(_counter("power", pid, _us(time_s), {"W": float(watts)}))

    return {
        "traceEvents": events,
        "displayTimeUnit": "ns",
        "otherData": {
            "generator": "ParaSim Studio",
            "overall_time_s": result.get("overall_time_s"),
            "timeline_dropped": result.get("timeline_dropped", 0),
            "resource_timeline_dropped": result.get("resource_timeline_dropped", 0),
        },
    }


def _meta(name: str, pid: int, tid: int, args: dict[str, Any]) -> dict[str, Any]:
    return {"name": name, "ph": "M", "ts": 0, "pid": pid, "tid": tid, "args": args}


def _counter(name: str, pid: int, ts: float, args: dict[str, float]) -> dict[str, Any]:
    return {"name": name, "ph": "C", "ts": ts, "pid": pid, "tid": 0, "args": args}


def _step_counter(name: str, pid: int, steps: list[tuple[float, int]]) -> list[dict[str, Any]]:
    """Return the counter events of a count that rises and falls by `steps` (time, +1 or -1):
    one event per distinct time, holding the count after every change at that time, so that
    back-to-back intervals read as one busy stretch rather than a drop to zero."""
    out: list[dict[str, Any]] = []
    level = 0
    steps.sort()
    for index, (ts, change) in enumerate(steps):
        level += change
        if index + 1 < len(steps) and steps[index + 1][0] == ts:
            continue
        if out and out[-1]["args"][name] == level:
            continue
        out.append(_counter(name, pid, ts, {name: level}))
    return out
