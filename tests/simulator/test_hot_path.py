"""The sim API's hot path: the C core's `SimCore.computation` and `Usage`
(simulator/_speedups.c) give exactly what their Python references give
(simulator/api.py `_PythonSimCore`, simulator/results.py `PythonUsage`), and collectives
build each group of participants once without changing what a wrong call is told."""

from __future__ import annotations

import json
import os
import random
import re
import subprocess
import sys
import textwrap
from collections.abc import Callable, Mapping
from typing import Any

import pytest

from simulator.api import P2P, Sim, _PythonMessageFilter, _PythonSimCore
from simulator.engine import Engine, Mailbox, Resource, speedups
from simulator.errors import ModelEvaluationError, UserCodeError
from simulator.models.js_compiler import CompiledTwin
from simulator.placement import Slot
from simulator.platform import Message, NodeRuntime, ProcessState
from simulator.results import PythonUsage, Timeline, Usage
from simulator.runner import run_simulation

USAGES = [pytest.param(PythonUsage, id="python-core")]
if speedups is not None:
    USAGES.append(pytest.param(speedups.Usage, id="c-core"))

TWO_HOSTS_AND_A_SWITCH: dict[str, Any] = {
    "name": "hot path",
    "hardware": {
        "host": {"type": "CPU", "name": "host", "attributes": {}},
        "switch": {
            "type": "NETWORK",
            "name": "switch",
            "attributes": {"latency": 5e-5, "bandwidth": 1.25e8},
        },
    },
    "models": {
        "pause": {
            "language": "javascript",
            "source": "function computationTime(params) { return params.t || 0.5; }\n",
        },
        "link": {
            "language": "javascript",
            "source": "function p2pTime(size, params) { return latency + size / bandwidth; }\n",
        },
    },
    "nodes": [
        {"id": "root", "hardware": "host", "model": "pause", "labels": {"Root": 1}},
        {"id": "workers", "hardware": "host", "model": "pause", "count": 6, "labels": {"W": 1}},
        {"id": "switch", "hardware": "switch", "model": "link"},
    ],
    "edges": [["root", "switch"], ["workers", "switch"]],
}
LABELS = {"Root": 1, "W": 6}

# Every way an application model calls `sim.computation`: memoized plain dicts and HashMaps
# (the C hot path), and what it leaves to Python: keywords, more positional arguments, an
# unhashable parameter, no params, a first evaluation; with collectives in between.
APP = """\
for step in range(rounds):
    sim.computation({"t": 0.001 * (1 + (rank + step) % 3)})
    p = HashMap()
    p.put("t", 0.002 * (1 + step % 2))
    sim.computation(p)
    sim.computation(params={"t": 0.003})
    sim.computation({"t": 0.004}, SoftwareStack.Undefined, OptimizationType.None_)
    sim.computation({"t": 0.001, "list": [rank % 2]})
    sim.computation()
    sim.broadcast(1000.0, "Root", 0)
    sim.scatter(6000.0, "Root", 0, ["Root", "W"])
    sim.gather(10.0, "Root", 0)
    sim.barrier()
    sim.barrier("W") if tag.equals("W") else None
"""

RUN_AND_PRINT = """\
import json, sys
from simulator.runner import run_simulation
app, system, labels, limit = json.loads(sys.stdin.read())
result = run_simulation(system, app, labels=labels, variables={"rounds": 4}, timeline_limit=limit)
print(json.dumps(result))
"""


def comparable(result: Mapping[str, Any]) -> str:
    """Return the result as JSON without the figures of the wall clock."""
    stats = dict(result["stats"], wall_s=0.0, events_per_s=0.0)
    return json.dumps({**result, "stats": stats}, sort_keys=True)


def run_here(app: str, timeline_limit: int) -> dict[str, Any]:
    """Return the result of `app` (4 rounds) on two hosts and a switch, run in this process
    (the C core where it is built)."""
    return run_simulation(
        TWO_HOSTS_AND_A_SWITCH,
        app,
        labels=LABELS,
        variables={"rounds": 4},
        timeline_limit=timeline_limit,
    )


def run_pure_python(
    app: str,
    timeline_limit: int,
    system: Mapping[str, Any] = TWO_HOSTS_AND_A_SWITCH,
    labels: Mapping[str, int] = LABELS,
) -> dict[str, Any]:
    """Return the result of `app` run with PARASIM_PURE_PYTHON=1 (in a child interpreter:
    the core is chosen at import)."""
    done = subprocess.run(
        [sys.executable, "-c", RUN_AND_PRINT],
        input=json.dumps([app, system, labels, timeline_limit]),
        capture_output=True,
        text=True,
        env={**os.environ, "PARASIM_PURE_PYTHON": "1"},
        check=True,
    )
    result: dict[str, Any] = json.loads(done.stdout)
    return result


@pytest.mark.skipif(speedups is None, reason="the C core is not built")
def test_the_c_core_answers_computation_and_keeps_the_python_one_for_the_rest() -> None:
    assert Sim.computation is speedups.SimCore.computation
    assert Sim._computation_fallback is _PythonSimCore.computation
    assert Usage is speedups.Usage


@pytest.mark.skipif(speedups is None, reason="the C core is not built")
@pytest.mark.parametrize("timeline_limit", [0, 25, 10_000])
def test_the_c_hot_path_gives_the_pure_python_result_to_the_last_digit(
    timeline_limit: int,
) -> None:
    result = run_here(APP, timeline_limit)

    assert comparable(result) == comparable(run_pure_python(APP, timeline_limit))
    # Root[0]: 0.007 + 0.012 (HashMap) + 0.012 + 0.016 + 0.004 (a list) + 2.0 (no params)
    assert result["processes"][0]["compute_s"] == pytest.approx(2.051)


# Messages crossing two charging hops (store and forward, one FIFO per direction), with
# contention: the C core's Transfer against platform._Transfer.
TWO_SWITCHES: dict[str, Any] = {
    "name": "two switches",
    "hardware": TWO_HOSTS_AND_A_SWITCH["hardware"],
    "models": TWO_HOSTS_AND_A_SWITCH["models"],
    "nodes": [
        {"id": "left", "hardware": "host", "model": "pause", "count": 3, "labels": {"A": 1}},
        {"id": "right", "hardware": "host", "model": "pause", "count": 3, "labels": {"B": 1}},
        {"id": "sw1", "hardware": "switch", "model": "link"},
        {"id": "sw2", "hardware": "switch", "model": "link", "count": 2},
    ],
    "edges": [["left", "sw1"], ["sw1", "sw2"], ["sw2", "right"]],
}
MESSAGES_APP = """\
for step in range(rounds):
    if tag.equals("A"):
        sim.p2pCommunicationSend(1e5 * (1 + rank), "B")
        sim.p2pCommunicationSend(2e5, "B", target_rank=(rank + 1) % 3)
        sim.p2pCommunicationReceive("B")
    else:
        sim.p2pCommunicationReceive("A")
        sim.p2pCommunicationReceive("A")
        sim.computation({"t": 0.0001 * rank})
        sim.p2pCommunicationSend(5e4, "A")
    sim.broadcast(3e4, "A", 0)
"""


@pytest.mark.skipif(speedups is None, reason="the C core is not built")
@pytest.mark.parametrize("timeline_limit", [0, 7, 10_000])
def test_the_c_message_path_gives_the_pure_python_result_to_the_last_digit(
    timeline_limit: int,
) -> None:
    labels = {"A": 3, "B": 3}
    result = run_simulation(
        TWO_SWITCHES,
        MESSAGES_APP,
        labels=labels,
        variables={"rounds": 4},
        timeline_limit=timeline_limit,
    )

    python = run_pure_python(MESSAGES_APP, timeline_limit, TWO_SWITCHES, labels)
    assert comparable(result) == comparable(python)
    transfers = [e for e in result["timeline"] if e["kind"] == "transfer"]
    if timeline_limit == 10_000:  # every message crossed both switches, one after the other
        assert {e["node"] for e in transfers} == {"sw1", "sw2"}
        # a round: 6 sends of A, 3 of B and the broadcast's 3 to B (A's own node: no hop)
        assert len(transfers) == 2 * 4 * (6 + 3 + 3)


@pytest.mark.parametrize("timeline_limit", [0, 25])
def test_a_full_timeline_keeps_the_first_entries_and_counts_every_other(
    timeline_limit: int,
) -> None:
    def run(limit: int) -> Mapping[str, Any]:
        return run_here(APP, limit)

    everything = run(10_000)
    computations = [entry for entry in everything["timeline"] if entry["kind"] == "compute"]
    assert everything["timeline_dropped"] == 0
    assert len(computations) == 6 * 4 * sum(LABELS.values())  # six a round on every process

    result = run(timeline_limit)

    assert result["timeline"] == everything["timeline"][:timeline_limit]
    assert result["timeline_dropped"] == len(everything["timeline"]) - timeline_limit


# A GPU whose model gives a detail, and CPUs without one: the kept computations of the C core
# (plain memoized params), of the C core handing a kernel's params to Python, and of Python
# (a detail, a first evaluation), in one timeline.
CPUS_AND_A_GPU: dict[str, Any] = {
    "name": "kernels on the timeline",
    "hardware": {
        "host": {"type": "CPU", "name": "host", "attributes": {}},
        "gpu": {
            "type": "GPU",
            "name": "gpu",
            "attributes": {
                "SMs": 13,
                "SMCoreClock": 1.05e9,
                "CUDACores": 1664,
                "memoryBandwidth": 2.24e11,
                "maxWarpsPerSM": 64,
            },
        },
    },
    "models": {
        "pause": {
            "language": "javascript",
            "source": "function computationTime(params) { return params.t || 0.5; }\n",
        },
        "kernel": {
            "language": "javascript",
            "source": (
                "function computationTime(params) { return params.N * 1e-9; }\n"
                "function computationDetail(params) {\n"
                "  return {bound: 'memory', occupancy: params.blockSize / 32}; }\n"
            ),
        },
    },
    "nodes": [
        {"id": "cpus", "hardware": "host", "model": "pause", "count": 3, "labels": {"CPU": 1}},
        {"id": "gpu", "hardware": "gpu", "model": "kernel", "labels": {"GPU": 1}},
    ],
    "edges": [],
}
KERNEL_LABELS = {"CPU": 3, "GPU": 1}
KERNEL_APP = """\
def kernel(n):
    return {"CUDACoreInstructions": 40.0, "GMEMBytesTransferred": 128.0, "blockSize": 256,
            "N": n}
for step in range(rounds):
    if tag.equals("GPU"):
        sim.computation(kernel(2 ** 20 * (1 + step % 2)))
    else:
        sim.computation({"t": 0.001 * (1 + (rank + step) % 3)})
        sim.computation(kernel(2 ** 18))  # a kernel's params on a CPU: no detail
        sim.computation({"t": 0.002, "blockSize": True, "CUDACoreInstructions": 1})
"""


@pytest.mark.skipif(speedups is None, reason="the C core is not built")
@pytest.mark.parametrize("timeline_limit", [0, 7, 10_000])
def test_a_kept_timeline_with_details_and_kernels_is_the_pure_python_one(
    timeline_limit: int,
) -> None:
    result = run_simulation(
        CPUS_AND_A_GPU,
        KERNEL_APP,
        labels=KERNEL_LABELS,
        variables={"rounds": 4},
        timeline_limit=timeline_limit,
    )

    pure = run_pure_python(KERNEL_APP, timeline_limit, CPUS_AND_A_GPU, KERNEL_LABELS)
    assert comparable(result) == comparable(pure)
    assert json.dumps(result["timeline"]) == json.dumps(pure["timeline"])  # keys in order too
    kept = min(timeline_limit, 4 + 3 * 4 * 3)
    assert len(result["timeline"]) == kept
    assert result["timeline_dropped"] == 4 + 3 * 4 * 3 - kept
    if timeline_limit == 10_000:
        entries = result["timeline"]
        assert sum("detail" in entry for entry in entries) == 4  # the GPU's
        assert sum("kernel" in entry for entry in entries) == 4 + 4 * 3  # not `blockSize: True`
        assert {row["bound"] for row in result["kernels"]} == {"memory", None}


# What a kernel's input may be: missing (left out of the params), None, a bool, a number kept or
# left out (not positive, not finite), or a value the C core leaves to Python (a str).
KERNEL_VALUES = (
    "MISSING", "None", "True", "False", "0", "-3", "7", "2 ** 40", "0.0", "-1.5", "3.25",
    "float('nan')", "float('inf')", "'12'",
)  # fmt: skip


def random_kernels_app(seed: int, count: int) -> str:
    """Return an application whose CPU processes compute `count` times with params naming
    CUDACoreInstructions and random kernel inputs, some repeated, as dicts and HashMaps."""
    draw = random.Random(seed)
    names = ("CUDACoreInstructions", "GMEMBytesTransferred", "gridSize", "N", "blockSize",
             "occupancy", "t")  # fmt: skip
    lines = ["if tag.equals('CPU'):"]
    made: list[str] = []
    for index in range(count):
        if made and draw.random() < 0.25:  # the same inputs again: one dict on the timeline
            lines.append(f"    sim.computation({draw.choice(made)})")
            continue
        items = {"CUDACoreInstructions": draw.choice(("40.0", "27", "0.5", "True"))}
        for name in draw.sample(names[1:], len(names) - 1):  # any order: the dict's is kept
            value = draw.choice(KERNEL_VALUES[:1] + KERNEL_VALUES[6:] * 3 + KERNEL_VALUES[1:6])
            if value != "MISSING":
                items[name] = value if name != "t" else f"0.001 * {index % 3 + 1}"
        text = "{" + ", ".join(f"{name!r}: {value}" for name, value in items.items()) + "}"
        made.append(text)
        if draw.random() < 0.5:
            lines.append(f"    sim.computation({text})")
        else:
            lines.append(f"    p = HashMap({text})")
            lines.append("    sim.computation(p)")
    return "\n".join(lines) + "\n"


@pytest.mark.skipif(speedups is None, reason="the C core is not built")
@pytest.mark.parametrize("seed", range(4))
def test_a_kernel_s_inputs_on_the_timeline_are_the_pure_python_ones(
    seed: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    app = random_kernels_app(seed, 60)
    handed = []  # the kernels the C core handed to Python (a str among the inputs)
    python_record = _PythonSimCore._record_computation

    def record(self: Any, *arguments: Any) -> None:
        handed.append(arguments)
        python_record(self, *arguments)

    monkeypatch.setattr(Sim, "_record_computation", record)
    result = run_simulation(
        CPUS_AND_A_GPU, app, labels=KERNEL_LABELS, variables={"rounds": 1}, timeline_limit=10_000
    )

    pure = run_pure_python(app, 10_000, CPUS_AND_A_GPU, KERNEL_LABELS)
    assert json.dumps(result["timeline"]) == json.dumps(pure["timeline"])  # keys in order too
    assert comparable(result) == comparable(pure)
    # kernels of equal inputs share one dict (Timeline.kernel_inputs), as in Python
    kernels = [entry["kernel"] for entry in result["timeline"] if "kernel" in entry]
    distinct = {(tuple(inputs), tuple(inputs.values())) for inputs in kernels}
    assert len({id(inputs) for inputs in kernels}) == len(distinct)
    assert 0 < len(handed) < len(result["timeline"])  # the C core kept most entries itself


@pytest.mark.parametrize("limit", [5, 500])  # 5: busy periods past the limit are counted
@pytest.mark.parametrize("usage_class", USAGES)
def test_both_usages_account_a_random_workload_identically(
    usage_class: type[Usage], limit: int
) -> None:
    def account(cls: type[Usage], seed: int) -> tuple[object, ...]:
        rng = random.Random(seed)
        timeline = Timeline(limit)
        usage = cls("gpu", 3, rng.randint(0, 3))
        usage.track = timeline
        now, active = 0.0, 0
        for _ in range(200):
            now += rng.choice((0.0, rng.random()))
            if active and rng.random() < 0.5:
                usage.stop(now)
                active -= 1
            else:
                usage.start(now)
                active += 1
        usage.close(now + 1.0)
        return (
            usage.busy_s,
            usage.load_s,
            usage.active,
            usage.capacity,
            timeline.busy,
            timeline.busy_dropped,
        )

    dropped = 0
    for seed in range(20):
        figures = account(usage_class, seed)
        assert figures == account(PythonUsage, seed)
        dropped += figures[-1]  # type: ignore[operator]
    assert (dropped > 0) == (limit == 5)


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (
            'sim.barrier("W")',
            "sim.barrier: process Root[0] is not among the participants (labels ['W'])",
        ),
        (
            'sim.broadcast(1, "Root", 0, ["W", "DSP"])',
            "sim.broadcast: there are no processes of label 'DSP' in this launch (labels: Root, W)",
        ),
        (
            'sim.gather(1, "W", 0, "Root")',
            "sim.gather: the root W[0] is not among the participants (labels ['Root'])",
        ),
    ],
)
def test_a_collective_called_wrongly_after_a_right_one_is_told_why(call: str, message: str) -> None:
    # the first barrier builds the group of every label; the wrong call comes after it
    app = f"sim.barrier()\nif tag.equals('Root'):\n    {call}\n"
    with pytest.raises(UserCodeError) as caught:
        run_simulation(TWO_HOSTS_AND_A_SWITCH, textwrap.dedent(app), labels=LABELS, variables={})
    assert (caught.value.detail, caught.value.line, caught.value.process) == (message, 3, "Root[0]")


def test_every_process_of_a_node_reads_the_memos_its_first_computation_found() -> None:
    # each process looks the memos up at its first computation (the C core from C); with a
    # detail model the repeated computations are Python's, and keep their detail
    model = (
        "function computationTime(params) { return params.n * 1e-3; }\n"
        "function computationDetail(params) { return {n: params.n}; }\n"
    )
    system = {
        "name": "one node",
        "hardware": {"gpu": {"type": "GPU", "name": "G", "attributes": {}}},
        "models": {"m": {"language": "javascript", "source": model}},
        "nodes": [{"id": "g", "name": "g", "hardware": "gpu", "model": "m", "labels": {"P": 3}}],
        "edges": [],
    }
    app = "for n in [1, 2, 1, 2]:\n    sim.computation({'n': n + rank})\n"

    result = run_simulation(system, app, labels={"P": 3}, variables={})

    for rank in range(3):
        entries = [entry for entry in result["timeline"] if entry["process"] == f"P[{rank}]"]
        assert [entry["detail"] for entry in entries] == [{"n": n + rank} for n in [1, 2, 1, 2]]
        assert result["processes"][rank]["compute_s"] == pytest.approx((6 + 4 * rank) * 1e-3)


@pytest.mark.skipif(speedups is None, reason="the C core is not built here")
def test_a_c_core_whose_process_is_not_set_up_raises_instead_of_crashing() -> None:
    # The memo is the only thing set: the C path must not reach for the engine, the usage
    # or the figures that nobody gave it (a NULL there used to be dereferenced).
    core = speedups.SimCore()
    core._memo = {("computationTime", (), (("t", 1.0),)): 1.0}
    with pytest.raises(RuntimeError, match="not set up"):
        core.computation({"t": 1.0})


# Params the memo's index (shallow.Memo.index, read by the C core) must tell apart or take as
# one exactly as the memo's key does: several items, the same items in another order, 1, 1.0
# and True under one name (equal keys: the first one's value answers all three), an empty
# dict, strings, an unhashable value.
INDEX_MODEL = """\
function computationTime(params) {
    var t = 0.001;
    for (var name in params) {
        var value = params[name];
        t += typeof value === "number" ? value * 1e-3 : value === true ? 5e-3 : 7e-3;
    }
    return t;
}
"""
INDEX_APP = """\
for step in range(rounds):
    sim.computation({"a": 1 + rank, "b": 2 * (1 + step % 2)})
    sim.computation({"b": 2 * (1 + step % 2), "a": 1 + rank})
    sim.computation({"n": [1, 1.0, True][(rank + step) % 3]})
    sim.computation({})
    sim.computation({"s": "fast", "n": step % 2})
    sim.computation({"l": [step]})
"""


def index_system() -> dict[str, Any]:
    """Return a system of four hosts whose model is INDEX_MODEL."""
    return {
        "name": "memo index",
        "hardware": {"host": {"type": "CPU", "name": "host", "attributes": {}}},
        "models": {"m": {"language": "javascript", "source": INDEX_MODEL}},
        "nodes": [{"id": "h", "hardware": "host", "model": "m", "count": 4, "labels": {"P": 1}}],
        "edges": [],
    }


def index_leaves(level: Any, path: tuple[object, ...] = ()) -> list[tuple[object, ...]]:
    """Return every path through the index, its leaf last (count, name0, value0, ..., value)."""
    if not isinstance(level, dict):
        return [(*path, level)]
    return [leaf for key, below in level.items() for leaf in index_leaves(below, (*path, key))]


@pytest.mark.skipif(speedups is None, reason="the C core is not built")
@pytest.mark.parametrize("timeline_limit", [0, 10, 10_000])
def test_the_memo_index_answers_as_the_memo_does(timeline_limit: int) -> None:
    from simulator import shallow

    shallow.clear_caches()
    system = index_system()

    result = run_simulation(
        system, INDEX_APP, labels={"P": 4}, variables={"rounds": 4}, timeline_limit=timeline_limit
    )

    expected = run_pure_python(INDEX_APP, timeline_limit, system, {"P": 4})
    assert comparable(result) == comparable(expected)
    memo = next(iter(shallow._memos.values()))
    leaves = index_leaves(memo.index)
    assert len(leaves) >= 8  # what was computed twice or more: all but the lists
    for count, *items, duration in leaves:
        pairs = tuple(zip(items[::2], items[1::2], strict=True))
        assert len(pairs) == count
        assert memo[("computationTime", (), pairs)] == duration
    memo.clear()
    assert memo.index == {}


@pytest.mark.skipif(speedups is None, reason="the C core is not built")
def test_params_in_another_order_are_another_key_of_the_index() -> None:
    from simulator import shallow

    shallow.clear_caches()
    app = 'sim.computation({"a": 1, "b": 2})\nsim.computation({"a": 1, "b": 2})\n'
    app += 'sim.computation({"b": 2, "a": 1})\nsim.computation({"b": 2, "a": 1})\n'

    run_simulation(index_system(), app, labels={"P": 1}, variables={})

    memo = next(iter(shallow._memos.values()))
    ab = memo[("computationTime", (), (("a", 1), ("b", 2)))]
    ba = memo[("computationTime", (), (("b", 2), ("a", 1)))]
    assert memo.index == {2: {"a": {1: {"b": {2: ab}}}, "b": {2: {"a": {1: ba}}}}}


class PlainFigures:
    """Process figures without slots (an attribute dict): the C core adds to them through
    the attribute protocol."""

    def __init__(self) -> None:
        self.compute_s = 0.0


class SlottedFigures:
    __slots__ = ("compute_s",)

    def __init__(self) -> None:
        self.compute_s = 0.0


class ComputeSeconds:
    """A `compute_s` that is a property: neither a slot nor an attribute of the instance."""

    __slots__ = ("total",)

    def __init__(self) -> None:
        self.total = 0.0

    @property
    def compute_s(self) -> float:
        return self.total

    @compute_s.setter
    def compute_s(self, value: float) -> None:
        self.total = value


def computed(figures: list[object], timeline: Timeline) -> None:
    """Run one process per figures, each computing three memoized 0.5 s on the C core."""
    from simulator.engine import Engine

    engine = Engine(0)
    memo = {("computationTime", (), (("t", 0.5),)): 0.5}

    def body(figures: object) -> None:
        core = speedups.SimCore()
        core._memo, core._details, core._engine = memo, None, engine
        core._usage, core._figures = Usage("h", 0, 1), figures
        core._timeline, core._process = timeline, "P[0]"
        for _ in range(3):
            core.computation({"t": 0.5})

    for number, one in enumerate(figures):
        engine.spawn(f"P[{number}]", body, one)
    engine.run()


@pytest.mark.skipif(speedups is None, reason="the C core is not built")
@pytest.mark.parametrize("limit", [0, 4, 20])
def test_the_c_core_keeps_figures_and_timeline_of_any_kind_of_class(limit: int) -> None:
    # a slot is read and written in place; anything else (a dict attribute, a property, a
    # class changed after the C core first read it) through the attribute protocol
    timeline = Timeline(limit)
    figures = [SlottedFigures(), PlainFigures(), ComputeSeconds()]

    computed(figures, timeline)

    assert [one.compute_s for one in figures] == [1.5, 1.5, 1.5]  # type: ignore[attr-defined]
    assert len(timeline.entries) == min(limit, 9) and timeline.dropped == 9 - min(limit, 9)
    assert timeline.full == (limit <= 9)
    seen: list[float] = []
    slot = SlottedFigures.__dict__["compute_s"]
    SlottedFigures.compute_s = property(  # type: ignore[assignment,misc]
        lambda self: 2.0, lambda self, value: seen.append(value)
    )
    try:
        computed([SlottedFigures.__new__(SlottedFigures)], Timeline(limit))
    finally:
        SlottedFigures.compute_s = slot  # type: ignore[misc]
    assert seen == [2.5, 2.5, 2.5]


def index_dicts(level: object) -> int:
    """Return how many dicts hang below `level` (a memo's index)."""
    if not isinstance(level, dict):
        return 0
    return sum(isinstance(below, dict) + index_dicts(below) for below in level.values())


@pytest.mark.skipif(speedups is None, reason="the C core is not built")
def test_the_memo_index_makes_no_more_dicts_than_its_room() -> None:
    from simulator import shallow

    shallow.clear_caches()
    system = index_system()
    run_simulation(system, INDEX_APP, labels={"P": 4}, variables={"rounds": 4})
    memo = next(iter(shallow._memos.values()))
    full = index_dicts(memo.index)
    assert full > 3 and memo.index_room == shallow.MEMO_INDEX_DICTS - full
    memo.index.clear()
    memo.index_room = 3

    result = run_simulation(system, INDEX_APP, labels={"P": 4}, variables={"rounds": 4})

    assert index_dicts(memo.index) == 3 and memo.index_room == 0
    assert comparable(result) == comparable(run_pure_python(INDEX_APP, 10_000, system, {"P": 4}))
    memo.clear()
    assert memo.index == {} and memo.index_room == shallow.MEMO_INDEX_DICTS


# Sends the C core makes itself (a plain size, positional: to a target sent to before, or a
# first one with the route Sim._target checks) and those it leaves to Python (keywords,
# hostMemory).
SENDS_APP = """\
for step in range(rounds):
    if tag.equals("A"):
        sim.p2pCommunicationSend(1000 * (step + 1), "B", None, rank)
        sim.p2pCommunicationSend(2.5e4, "B", "HostToDevice", rank)
        sim.p2pCommunicationSend(0, "B", None, rank)
        sim.p2pCommunicationSend(1e3, "B", target_rank=rank)
        sim.p2pCommunicationSend(3e3, "B")
        sim.p2pCommunicationSend(4e3, "B", None, rank, "pinned")
    else:
        for _ in range(6):
            sim.p2pCommunicationReceive("A", rank)
"""


@pytest.mark.skipif(speedups is None, reason="the C core is not built")
@pytest.mark.parametrize("timeline_limit", [0, 9, 10_000])
def test_the_c_send_gives_the_pure_python_result_to_the_last_digit(timeline_limit: int) -> None:
    assert Sim.p2pCommunicationSend is speedups.SimCore.p2pCommunicationSend
    result = run_simulation(
        TWO_SWITCHES,
        SENDS_APP,
        labels={"A": 3, "B": 3},
        variables={"rounds": 4},
        timeline_limit=timeline_limit,
    )

    expected = run_pure_python(SENDS_APP, timeline_limit, TWO_SWITCHES, {"A": 3, "B": 3})
    assert comparable(result) == comparable(expected)


FIRST_SENDS_APP = """\
if tag.equals("A"):
    sim.p2pCommunicationSend(1e3 * (1 + rank), "B", "HostToDevice", rank)
    sim.p2pCommunicationSend(2e3, "B")
    sim.p2pCommunicationReceive("B", rank)
else:
    sim.p2pCommunicationReceive("A", rank)
    sim.p2pCommunicationReceive("A")
    sim.p2pCommunicationSend(0, "A", None, rank)
"""


def random_fifo_routes(
    make: Callable[..., tuple[Any, ...]], seed: int
) -> tuple[list[tuple[Any, ...]], dict[Any, Any], list[NodeRuntime]]:
    """Return the routes `make` (platform.fifo_hops or the C core's) gives for random plans
    between random instances, with the hop tuples it kept and the nodes it made FIFOs on."""
    draw = random.Random(seed)
    engine = Engine(0)
    nodes = [
        NodeRuntime(
            engine,
            f"n{index}",
            count=draw.randint(1, 5),
            capacity=1,
            is_network=True,
            model_key=None,
            functions=None,
        )
        for index in range(4)
    ]
    plans = []
    for _ in range(6):
        steps = draw.sample(nodes, draw.randint(0, 3))
        ends = ["a", *(node.id for node in steps), "b"]
        plans.append(
            tuple(
                (node, draw.choice((0, 1, 2)), ends[index], ends[index + 2])
                for index, node in enumerate(steps)
            )
        )
    hop_tuples: dict[Any, Any] = {}
    routes = []
    for _ in range(200):
        index = draw.randrange(len(plans))
        plan = plans[index]
        # an end's instance is valid on each node that charges it: below the smallest count
        smallest = min((len(step[0].usages) for step in plan), default=5)
        source, target = draw.randrange(smallest), draw.randrange(smallest)
        routes.append(make(plan, ("a", f"b{index}"), source, target, hop_tuples))
    return routes, hop_tuples, nodes


def described(routes: list[tuple[Any, ...]], nodes: list[NodeRuntime]) -> list[Any]:
    """Return `routes` as names and numbers, each FIFO and usage by its name and its place
    among the objects met so far (so that the same object twice reads the same)."""
    seen: dict[int, int] = {}
    result = []
    for route in routes:
        hops = []
        for node, instance, link, usage in route:
            place = seen.setdefault(id(link), len(seen))
            fifo = (type(link), link.name, link.capacity, link.users, list(link._queue))
            made = (link.engine is node.engine, usage is node.usages[instance])
            hops.append((node.id, instance, fifo, place, made))
        result.append((seen.setdefault(id(route), len(seen)), hops))
    return [result, [sorted(node._links) for node in nodes]]


@pytest.mark.skipif(speedups is None, reason="the C core is not built")
@pytest.mark.parametrize("seed", range(5))
def test_a_route_s_fifo_hops_are_the_pure_python_ones(seed: int) -> None:
    from simulator.platform import fifo_hops

    python = random_fifo_routes(fifo_hops, seed)
    c_core = random_fifo_routes(speedups.fifo_hops, seed)

    assert described(c_core[0], c_core[2]) == described(python[0], python[2])
    assert [(nodes, instances) for nodes, instances in c_core[1]] == list(python[1])
    assert all(type(route) is tuple for route in c_core[0])


@pytest.mark.skipif(speedups is None, reason="the C core is not built")
@pytest.mark.parametrize("seed", range(3))
def test_a_fifo_only_run_s_routes_are_the_pure_python_ones(seed: int) -> None:
    from simulator.platform import fifo_hops, fifo_route

    def routes(route: Callable[..., Any]) -> tuple[Any, ...]:
        """Ask `route` for random pairs' hops, their plans made by a plan_of that counts its
        calls, on the plans of random_fifo_routes' first seed."""
        draw = random.Random(seed)
        made_plans = []
        plans_of = {}

        def keep(plan: Any, nodes: Any, source: int, target: int, hop_tuples: Any) -> Any:
            plans_of[nodes] = plan
            return fifo_hops(plan, nodes, source, target, hop_tuples)

        random_fifo_routes(keep, seed)  # its plans, by a pair of node names
        pairs = sorted(plans_of)

        def plan_of(source: str, target: str) -> Any:
            made_plans.append((source, target))
            return plans_of[source, target]

        cache: dict[Any, Any] = {}
        plans: dict[Any, Any] = {}
        hop_tuples: dict[Any, Any] = {}
        found = []
        for _ in range(150):
            source_node, target_node = draw.choice(pairs)
            # an end's instance is valid on each node that charges it
            plan = plans_of[source_node, target_node]
            smallest = min((len(step[0].usages) for step in plan), default=5)
            source = Slot("A", draw.randrange(3), source_node, draw.randrange(smallest))
            target = Slot("B", draw.randrange(3), target_node, draw.randrange(smallest))
            found.append(route(cache, plans, plan_of, hop_tuples, source, target))
        nodes = [step[0] for plan in plans_of.values() for step in plan]
        return described(found, nodes), list(cache), list(plans), list(hop_tuples), made_plans

    assert routes(speedups.fifo_route) == routes(fifo_route)


@pytest.mark.skipif(speedups is None, reason="the C core is not built")
def test_a_route_s_fifo_is_made_by_resource_s_init_once_it_is_replaced(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from simulator.platform import fifo_hops

    made = []
    init = Resource.__init__

    def counted(self: Resource, *arguments: Any, **keywords: Any) -> None:
        made.append(arguments)
        init(self, *arguments, **keywords)

    monkeypatch.setattr(Resource, "__init__", counted)
    python = random_fifo_routes(fifo_hops, 7)
    in_python = len(made)
    c_core = random_fifo_routes(speedups.fifo_hops, 7)

    assert len(made) == 2 * in_python > 0  # the C core called the class, and so its __init__
    assert described(c_core[0], c_core[2]) == described(python[0], python[2])


@pytest.mark.skipif(speedups is None, reason="the C core is not built")
def test_a_first_send_is_the_c_core_s_with_the_route_sim_target_checked(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # Every send here is a process's first to its target: the C core asks Sim._target for the
    # route (checked, and kept in _targets as Python's send keeps it) and sends it itself.
    routes: list[tuple[object, object]] = []
    fallbacks: list[tuple[object, ...]] = []
    target, fallback = Sim._target, Sim._p2p_send_fallback

    def counted_target(self: Sim, label: object, rank: object) -> Any:
        routes.append((label, rank))
        return target(self, label, rank)

    def counted_fallback(self: Sim, *args: Any, **kwargs: Any) -> None:
        fallbacks.append(args)
        fallback(self, *args, **kwargs)

    monkeypatch.setattr(Sim, "_target", counted_target)
    monkeypatch.setattr(Sim, "_p2p_send_fallback", counted_fallback)
    result = run_simulation(TWO_SWITCHES, FIRST_SENDS_APP, labels={"A": 3, "B": 3}, variables={})
    monkeypatch.undo()

    assert fallbacks == []
    firsts = [("B", 0), ("B", 1), ("B", 2), ("B", None), ("B", None), ("B", None)]
    firsts += [("A", 0), ("A", 1), ("A", 2)]
    assert sorted(routes, key=repr) == sorted(firsts, key=repr)
    expected = run_pure_python(FIRST_SENDS_APP, 10_000, TWO_SWITCHES, {"A": 3, "B": 3})
    assert comparable(result) == comparable(expected)


@pytest.mark.skipif(speedups is None, reason="the C core is not built")
@pytest.mark.parametrize(
    "call",
    [
        'sim.p2pCommunicationSend(1.0, "C")',
        'sim.p2pCommunicationSend(1.0, "B", None, 7)',
        'sim.p2pCommunicationSend(1.0, "B", None, 0.0)',
        'sim.p2pCommunicationSend(1.0, ["B"])',
        'sim.p2pCommunicationSend(1.0, "B", None, [0])',
    ],
)
def test_a_first_send_to_a_wrong_target_is_told_as_the_pure_python_core_tells_it(
    call: str,
) -> None:
    app = f"{call}\n"
    with pytest.raises(UserCodeError) as raised:
        run_simulation(TWO_SWITCHES, app, labels={"A": 1, "B": 1}, variables={})
    python = subprocess.run(
        [sys.executable, "-c", ERROR_OF],
        input=json.dumps([app, TWO_SWITCHES, {"A": 1, "B": 1}]),
        capture_output=True,
        text=True,
        env={**os.environ, "PARASIM_PURE_PYTHON": "1"},
        check=True,
    )
    assert str(raised.value) == python.stdout.strip()
    assert "line 1" in python.stdout


@pytest.mark.skipif(speedups is None, reason="the C core is not built")
def test_a_message_class_changed_after_import_is_called_for_each_message(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # The C core sets a Message's slots itself while the class is as it found it; once its
    # __init__ is replaced, it calls the class, for the C sends and the collectives alike.
    before = run_simulation(
        TWO_SWITCHES, SENDS_APP, labels={"A": 3, "B": 3}, variables={"rounds": 4}
    )
    made: list[object] = []
    init = Message.__init__

    def counted(self: Message, *args: Any) -> None:
        made.append(args[1])
        init(self, *args)

    monkeypatch.setattr(Message, "__init__", counted)
    after = run_simulation(
        TWO_SWITCHES, SENDS_APP, labels={"A": 3, "B": 3}, variables={"rounds": 4}
    )
    monkeypatch.undo()
    again = run_simulation(
        TWO_SWITCHES, SENDS_APP, labels={"A": 3, "B": 3}, variables={"rounds": 4}
    )

    assert comparable(before) == comparable(after) == comparable(again)
    assert len(made) == 3 * 4 * 6  # each A sends six messages a round
    assert made[0] == 1000.0


@pytest.mark.skipif(speedups is None, reason="the C core is not built")
def test_a_mailbox_s_or_fifo_s_method_replaced_is_the_one_the_c_core_calls(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # The C message path calls the cores' own put, request and release directly while the
    # classes keep them, and the replacement once a class has one.
    def run() -> dict[str, Any]:
        return run_simulation(
            TWO_SWITCHES, SENDS_APP, labels={"A": 3, "B": 3}, variables={"rounds": 4}
        )

    before = run()
    calls = {"put": 0, "request": 0, "release": 0}
    for cls, name in ((Mailbox, "put"), (Resource, "request"), (Resource, "release")):
        method = getattr(cls, name)

        def counted(self: Any, *args: Any, _name: str = name, _method: Any = method) -> Any:
            calls[_name] += 1
            return _method(self, *args)

        monkeypatch.setattr(cls, name, counted)
    after = run()

    assert comparable(before) == comparable(after)
    messages = 3 * 4 * 6
    assert calls == {"put": messages, "request": 2 * messages, "release": 2 * messages}


@pytest.mark.skipif(speedups is None, reason="the C core is not built")
def test_a_hop_reads_the_node_s_memo_of_transfer_times_without_calling_it() -> None:
    # The C core's hop looks a transfer's time up in NodeRuntime._transfer_times itself; a
    # time not there yet comes from NodeRuntime.transfer_time, which keeps it.
    calls: list[tuple[object, ...]] = []
    transfer_time = NodeRuntime.transfer_time

    def counted(self: NodeRuntime, *args: Any) -> float:
        calls.append((self.id, *args))
        return transfer_time(self, *args)

    NodeRuntime.transfer_time = counted  # type: ignore[method-assign]
    try:
        result = run_simulation(
            TWO_SWITCHES, SENDS_APP, labels={"A": 3, "B": 3}, variables={"rounds": 4}
        )
    finally:
        NodeRuntime.transfer_time = transfer_time  # type: ignore[method-assign]

    transfers = [e for e in result["timeline"] if e["kind"] == "transfer"]
    assert len(transfers) == 3 * 4 * 6 * 2  # every message crossed both switches
    # each node was asked each (size, direction, host memory) once: 7 on each switch
    assert len(calls) == len(set(calls)) == 2 * 7


@pytest.mark.parametrize("size", ["True", "-1.0", "float('nan')", "10 ** 400"])
def test_a_bad_size_after_good_sends_is_told_as_the_first_send_would(size: str) -> None:
    app = f'sim.p2pCommunicationSend(1.0, "B", None, 0)\nsim.p2pCommunicationSend({size}, "B", None, 0)\n'
    first = f'sim.p2pCommunicationSend({size}, "B", None, 0)\n'
    messages = []
    for source in (app, first):
        with pytest.raises(UserCodeError) as raised:
            run_simulation(TWO_SWITCHES, source, labels={"A": 1, "B": 1}, variables={})
        messages.append(re.sub(r"line \d+", "line N", str(raised.value)))
    assert messages[0] == messages[1]


@pytest.mark.skipif(speedups is None, reason="the C core is not built")
def test_the_c_message_filter_takes_what_the_python_one_takes() -> None:
    engine = Engine(0)
    sender = ProcessState(engine, Slot("W", 0, "workers", 0))
    other = ProcessState(engine, Slot("Root", 0, "root", 0))
    collective = ("broadcast", ("Root", "W"), "Root[0]")
    messages = [
        Message(sender, 1.0, None, P2P, 0.0),
        Message(other, 1.0, None, P2P, 0.0),
        Message(sender, 1.0, None, (collective, 0), 0.0),
        Message(sender, 1.0, None, (tuple(list(collective)), 0), 0.0),  # equal, not the same
        Message(sender, 1.0, None, (collective, 1), 0.0),
    ]
    filters: list[tuple[object, dict[str, object]]] = [
        (P2P, {}),
        (P2P, {"label": "W"}),
        (P2P, {"label": "Root"}),
        (P2P, {"peer": sender}),
        (P2P, {"peer": other}),
        ((collective, 0), {}),
        ((collective, 1), {}),
    ]
    for channel, given in filters:
        c_filter = speedups.MessageFilter(channel, **given)
        python_filter = _PythonMessageFilter(channel, **given)
        expected = [python_filter(message) for message in messages]
        assert [c_filter(message) for message in messages] == expected, (channel, given)
    assert [_PythonMessageFilter(P2P, label="W")(m) for m in messages] == [
        True,
        False,
        False,
        False,
        False,
    ]


# Rooted collectives of every shape a stackless process makes in C (`SimCore._stackless_*`:
# a participant that is not the root, a collective checked before) and those it leaves to
# Python (the root, the first call, labels given as an unhashable list).
COLLECTIVES_APP = """\
for step in range(rounds):
    sim.broadcast(1000.0 * (step + 1), "Root", 0)
    sim.scatter(6000, "Root", 0, ("Root", "W"))
    sim.computation({"t": 0.001 * (1 + rank % 3)})
    sim.gather(10.0 + rank, "Root")
    sim.broadcast(5.0, "W", 2, ["Root", "W"])
    sim.gather(1.5, "W", 1, ("W",)) if tag == "W" else None
    sim.barrier()
"""


@pytest.mark.skipif(speedups is None, reason="the C core is not built")
@pytest.mark.parametrize("timeline_limit", [0, 30, 10_000])
def test_the_c_collectives_give_the_pure_python_result_to_the_last_digit(
    timeline_limit: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    from simulator.api import StacklessSim

    assert StacklessSim.broadcast is speedups.SimCore._stackless_broadcast
    python_calls = {"broadcast": 0, "scatter": 0, "gather": 0}
    for kind in python_calls:
        fallback = getattr(StacklessSim, f"_{kind}_fallback")

        def counted(self: Any, *args: Any, _kind: str = kind, _call: Any = fallback) -> Any:
            python_calls[_kind] += 1
            return _call(self, *args)

        monkeypatch.setattr(StacklessSim, f"_{kind}_fallback", counted)

    result = run_here(COLLECTIVES_APP, timeline_limit)

    assert comparable(result) == comparable(run_pure_python(COLLECTIVES_APP, timeline_limit))
    # 7 processes, 4 rounds: Python made the root's calls (the run's first of each collective
    # among them), each other process's first gather (its route to the root) and every
    # broadcast with listed labels; C made the rest
    assert python_calls["scatter"] == 4
    assert python_calls["broadcast"] == 4 + 7 * 4
    assert python_calls["gather"] == (4 + 6) + (4 + 5)


ERROR_OF = """\
import json, sys
from simulator.errors import ModelEvaluationError, UserCodeError
from simulator.models.js_compiler import CompiledTwin
from simulator.runner import run_simulation
app, system, labels = json.loads(sys.stdin.read())
try:
    run_simulation(system, app, labels=labels, variables={})
except UserCodeError as error:
    print(error)
"""


@pytest.mark.skipif(speedups is None, reason="the C core is not built")
@pytest.mark.parametrize("kind", ["broadcast", "scatter", "gather"])
@pytest.mark.parametrize("size", ["True", "-1.0", "float('nan')", "10 ** 400", "'ten'"])
def test_a_bad_collective_size_after_good_calls_is_told_as_the_pure_python_core_tells_it(
    kind: str, size: str
) -> None:
    app = f'sim.{kind}(1.0, "Root", 0)\nsim.{kind}({size}, "Root", 0)\n'
    with pytest.raises(UserCodeError) as raised:
        run_simulation(TWO_HOSTS_AND_A_SWITCH, app, labels=LABELS, variables={})
    python = subprocess.run(
        [sys.executable, "-c", ERROR_OF],
        input=json.dumps([app, TWO_HOSTS_AND_A_SWITCH, LABELS]),
        capture_output=True,
        text=True,
        env={**os.environ, "PARASIM_PURE_PYTHON": "1"},
        check=True,
    )
    assert str(raised.value) == python.stdout.strip()
    assert "line 2" in python.stdout


# MERPSYS's Listing 5 calls sim.computation(params, SoftwareStack..., OptimizationType...):
# params given with one or two more positional arguments are the hot path's too.
POSITIONAL_APP = """\
for step in range(rounds):
    p = HashMap()
    p.put("t", 0.001 * (1 + rank + step))
    sim.computation(p, SoftwareStack.Undefined, OptimizationType.None_)
    sim.computation({"t": 0.002 * (1 + step % 2)}, SoftwareStack.Undefined)
    sim.computation({"t": 0.003}, SoftwareStack.Undefined, OptimizationType.None_, None)
"""


@pytest.mark.skipif(speedups is None, reason="the C core is not built")
@pytest.mark.parametrize("timeline_limit", [0, 10_000])
def test_params_with_positional_merpsys_arguments_stay_on_the_c_hot_path(
    timeline_limit: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    from simulator.api import StacklessSim

    python_calls: list[int] = []
    for sim_class in (Sim, StacklessSim):  # whichever runs the processes
        fallback = sim_class.__dict__["_computation_fallback"]

        def counted(self: Any, *args: Any, _call: Any = fallback, **kwargs: Any) -> Any:
            python_calls.append(len(args))
            return _call(self, *args, **kwargs)

        monkeypatch.setattr(sim_class, "_computation_fallback", counted)

    result = run_here(POSITIONAL_APP, timeline_limit)

    assert comparable(result) == comparable(run_pure_python(POSITIONAL_APP, timeline_limit))
    # 7 processes, 4 rounds: only the calls with a fourth argument (memory) went to Python
    assert python_calls == [4] * (7 * 4)


# Every computation's params distinct (no memo hit): each is a miss, which the core answers by
# one call to the model's evaluation under the key it built (Sim._missed).
DISTINCT_APP = """\
for step in range(rounds):
    n = 1 + 100 * rank + step + (50 if tag.equals("W") else 0)
    sim.computation({"t": n * 1e-4})
    p = HashMap()
    p.put("t", (10_000 + n) * 1e-4)
    sim.computation(p)
"""


@pytest.mark.skipif(speedups is None, reason="the C core is not built")
@pytest.mark.parametrize("timeline_limit", [0, 5, 10_000])
def test_a_miss_on_the_c_core_gives_the_pure_python_result_to_the_last_digit(
    timeline_limit: int,
) -> None:
    from simulator import shallow

    shallow.clear_caches()
    result = run_here(DISTINCT_APP, timeline_limit)

    assert comparable(result) == comparable(run_pure_python(DISTINCT_APP, timeline_limit))
    memo = next(iter(shallow._memos.values()))
    assert len(memo) == 7 * 4 * 2  # every computation a value of its own, kept


def test_a_miss_evaluates_its_params_once_without_building_the_key_again(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from simulator import hotpath, shallow

    shallow.clear_caches()
    evaluated: list[tuple[str, dict[str, object]]] = []
    uncached = shallow.ShallowFunctions._call_uncached

    def counting(
        self: shallow.ShallowFunctions,
        function: str,
        args: tuple[object, ...],
        params: Mapping[str, object],
    ) -> float:
        evaluated.append((function, dict(params)))
        return uncached(self, function, args, params)

    def no_key(*args: object) -> object:
        raise AssertionError("the memo key was built a second time")

    compiled_caller = CompiledTwin.missed_caller

    def counting_caller(
        self: CompiledTwin, function: str, *args: Any
    ) -> Callable[[object, Mapping[str, object]], float] | None:
        missed = compiled_caller(self, function, *args)
        if missed is None:
            return None

        def counted(key: object, params: Mapping[str, object], *plain: bool) -> float:
            evaluated.append((function, dict(params)))
            return missed(key, params, *plain)

        return counted

    monkeypatch.setattr(shallow.ShallowFunctions, "_call_uncached", counting)
    # the compiled model's miss (ShallowFunctions.computation_missed) is its missed_caller
    monkeypatch.setattr(CompiledTwin, "missed_caller", counting_caller)
    monkeypatch.setattr(hotpath, "memo_key", no_key)
    app = "for step in range(rounds):\n    sim.computation({'t': 0.001 * (1 + rank * rounds + step)})\n"

    result = run_simulation(
        TWO_HOSTS_AND_A_SWITCH, app, labels={"W": 6}, variables={"rounds": 3}, timeline_limit=0
    )

    assert len(evaluated) == len({params["t"] for _, params in evaluated}) == 18
    assert {function for function, _ in evaluated} == {"computationTime"}
    assert result["processes"][5]["compute_s"] == pytest.approx(0.001 * (16 + 17 + 18))


# Params of every kind a miss may see: plain values only, and each way of not being so.
PARAMS_KINDS_APP = """\
n = 1 + rank
sim.computation({"t": n * 1e-3, "s": "x", "b": True, "z": None, "i": n})
sim.computation({"t": n * 2e-3, "__proto__": 1})
sim.computation({"t": n * 3e-3, 7: 1})
sim.computation({"t": n * 4e-3, "c": (1, 2)})
p = HashMap()
p.put("t", n * 5e-3)
sim.computation(p)
"""


def test_a_miss_is_told_plain_params_exactly_where_they_are(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The C core tells the compiled model's miss which params are a dict of str names (none
    "__proto__") and plain values, the test the miss makes itself otherwise; the pure Python
    core says nothing (the miss tests them): results are the same either way."""
    from simulator import shallow

    plain_types = (float, int, str, bool, type(None))

    def plain(params: Mapping[object, object]) -> bool:
        return type(params) is dict and all(
            type(name) is str and name != "__proto__" and type(value) in plain_types
            for name, value in params.items()
        )

    told: list[tuple[bool, bool]] = []
    compiled_caller = CompiledTwin.missed_caller

    def telling_caller(
        self: CompiledTwin, function: str, *args: Any
    ) -> Callable[..., float] | None:
        missed = compiled_caller(self, function, *args)
        if missed is None:  # a model without computationTime (the switch's)
            return None

        def recorded(key: object, params: Mapping[str, object], *said: bool) -> float:
            told.append((bool(said) and said[0], plain(params)))
            return missed(key, params, *said)

        return recorded

    monkeypatch.setattr(CompiledTwin, "missed_caller", telling_caller)
    shallow.clear_caches()
    result = run_simulation(
        TWO_HOSTS_AND_A_SWITCH,
        PARAMS_KINDS_APP,
        labels={"W": 3},
        variables={"rounds": 4},
        timeline_limit=10_000,
    )

    assert len(told) == 3 * 5
    if speedups is not None and not os.environ.get("PARASIM_PURE_PYTHON"):
        assert all(said == is_plain for said, is_plain in told), told
        assert sum(said for said, _ in told) == 3
    else:
        assert not any(said for said, _ in told)
    shallow.clear_caches()
    monkeypatch.undo()
    pure = run_pure_python(PARAMS_KINDS_APP, 10_000, labels={"W": 3})
    assert comparable(result) == comparable(pure)


@pytest.mark.parametrize("twin", ["arithmetic", "v8"])
def test_a_bad_value_at_a_miss_is_the_model_error_with_its_line(twin: str) -> None:
    from simulator import shallow

    shallow.clear_caches()
    body = "return params.t - 1;" if twin == "arithmetic" else "if (params.t > 1) { return -1; }"
    source = f"// model\nfunction computationTime(params) {{\n  {body}\n  return params.t;\n}}\n"
    system = {
        **TWO_HOSTS_AND_A_SWITCH,
        "models": {
            **TWO_HOSTS_AND_A_SWITCH["models"],
            "pause": {"language": "javascript", "source": source},
        },
    }
    app = "sim.computation({'t': 1.5})\nsim.computation({'t': 0.5})\n"

    with pytest.raises(ModelEvaluationError) as caught:
        run_simulation(system, app, labels={"W": 1}, variables={})

    value = "-0.5" if twin == "arithmetic" else "-1"
    assert (caught.value.detail, caught.value.line, caught.value.function) == (
        f"returned {value}, expected a non-negative number",
        2,
        "computationTime",
    )
