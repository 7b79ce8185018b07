"""The timeline's resource rows: busy periods of component instances, merged and bounded,
from `Usage` to the result's `resource_timeline`."""

from __future__ import annotations

import textwrap
from fractions import Fraction
from typing import Any

import pytest

from simulator.models.roofline import kernel_inputs
from simulator.results import Timeline, Usage
from simulator.runner import run_simulation


def tracked(capacity: int = 1, limit: int = 100) -> tuple[Usage, Timeline]:
    timeline = Timeline(limit)
    usage = Usage("gpu0", 1, capacity)
    usage.track = timeline
    return usage, timeline


def periods(timeline: Timeline) -> list[tuple[float, float]]:
    return [(entry["start_s"], entry["end_s"]) for entry in timeline.busy]


def test_work_resuming_when_the_last_work_stopped_continues_one_busy_period() -> None:
    usage, timeline = tracked()
    for start in (0.0, 1.0, 2.0):  # three back-to-back computations
        usage.start(start)
        usage.stop(start + 1.0)
    usage.close(10.0)
    assert timeline.busy == [{"node": "gpu0", "instance": 1, "start_s": 0.0, "end_s": 3.0}]


def test_a_break_ends_a_busy_period_and_the_next_start_records_it() -> None:
    usage, timeline = tracked()
    usage.start(1.0)
    usage.stop(2.0)
    assert timeline.busy == []  # not known to be over until the instance starts again later
    usage.start(5.0)
    assert periods(timeline) == [(1.0, 2.0)]
    usage.stop(6.0)
    usage.close(9.0)
    assert periods(timeline) == [(1.0, 2.0), (5.0, 6.0)]


def test_overlapping_work_on_a_shared_instance_is_one_period() -> None:
    usage, timeline = tracked(capacity=2)
    usage.start(0.0)
    usage.start(1.0)
    usage.stop(2.0)
    usage.stop(3.0)
    usage.close(3.0)
    assert periods(timeline) == [(0.0, 3.0)]
    assert usage.busy_s == 3.0


def test_zero_length_work_records_no_period_and_close_records_once() -> None:
    usage, timeline = tracked()
    usage.start(1.0)
    usage.stop(1.0)
    usage.close(4.0)
    usage.close(4.0)
    assert timeline.busy == []
    usage.start(5.0)
    usage.close(7.0)  # still busy when the run ends: the period ends with the run
    usage.close(7.0)
    assert periods(timeline) == [(5.0, 7.0)]


def test_an_untracked_usage_records_nothing_and_keeps_its_figures() -> None:
    usage = Usage("cpu0", 0, 1)
    usage.start(0.0)
    usage.stop(2.0)
    usage.start(3.0)
    usage.stop(4.0)
    usage.close(4.0)
    assert (usage.busy_s, usage.load_s) == (3.0, 3.0)


def test_busy_periods_are_bounded_by_the_limit_and_the_rest_counted() -> None:
    usage, timeline = tracked(limit=2)
    for start in range(5):
        usage.start(2.0 * start)
        usage.stop(2.0 * start + 1.0)
    usage.close(10.0)
    assert periods(timeline) == [(0.0, 1.0), (2.0, 3.0)]
    assert timeline.busy_dropped == 3
    assert timeline.entries == [] and timeline.dropped == 0  # the process rows' own bound


# -- in a run ------------------------------------------------------------------------------

COMPUTE = "function computationTime(params) { return params.get('seconds', 0); }"
LINK = "function p2pTime(size, params) { return 1 + size; }"


def host_link_gpu() -> dict[str, Any]:
    """A host and a GPU joined by a link whose hop takes 1 + size seconds."""
    return {
        "name": "host-link-gpu",
        "hardware": {
            "cpu": {"type": "CPU", "name": "Host", "attributes": {}},
            "link": {"type": "NETWORK", "name": "PCIe", "attributes": {}},
            "gpu": {"type": "GPU", "name": "Device", "attributes": {}},
        },
        "models": {
            "compute": {"language": "javascript", "source": COMPUTE},
            "link": {"language": "javascript", "source": LINK},
        },
        "nodes": [
            {"id": "host", "hardware": "cpu", "model": "compute", "labels": {"CPU": 1}},
            {"id": "pcie", "hardware": "link", "model": "link"},
            {"id": "gpu", "hardware": "gpu", "model": "compute", "labels": {"GPU": 1}},
        ],
        "edges": [["host", "pcie"], ["pcie", "gpu"]],
    }


OFFLOAD = """
if tag.equals("CPU"):
    sim.p2pCommunicationSend(2, "GPU")
    sim.p2pCommunicationReceive("GPU")
else:
    sim.p2pCommunicationReceive("CPU")
    sim.computation({"seconds": 4})
    sim.computation({"seconds": 1})
    sim.p2pCommunicationSend(0, "CPU")
"""


def run(app: str, system: dict[str, Any], labels: dict[str, int], **kw: Any) -> dict[str, Any]:
    return run_simulation(
        system, textwrap.dedent(app), labels=labels, variables=kw.pop("variables", {}), **kw
    )


def test_the_result_has_a_busy_row_for_the_link_and_the_gpu() -> None:
    result = run(OFFLOAD, host_link_gpu(), {"CPU": 1, "GPU": 1})
    # the link carries 2 units (0..3), the GPU computes 5 s back to back (3..8), the
    # link carries the reply (8..9); the host only waits
    assert result["resource_timeline"] == [
        {"node": "pcie", "instance": 0, "start_s": 0.0, "end_s": 3.0},
        {"node": "pcie", "instance": 0, "start_s": 8.0, "end_s": 9.0},
        {"node": "gpu", "instance": 0, "start_s": 3.0, "end_s": 8.0},
    ]
    assert result["resource_timeline_dropped"] == 0
    busy = {row["node"]: row["busy_s"] for row in result["components"]}
    assert busy == {"host": 0.0, "pcie": 4.0, "gpu": 5.0}  # the rows add up to busy_s


def test_the_resource_rows_keep_to_the_timeline_limit() -> None:
    result = run(OFFLOAD, host_link_gpu(), {"CPU": 1, "GPU": 1}, timeline_limit=1)
    assert len(result["timeline"]) == 1
    assert result["resource_timeline"] == [
        {"node": "pcie", "instance": 0, "start_s": 0.0, "end_s": 3.0}
    ]
    assert result["resource_timeline_dropped"] == 2
    nothing = run(OFFLOAD, host_link_gpu(), {"CPU": 1, "GPU": 1}, timeline_limit=0)
    assert nothing["resource_timeline"] == []
    assert nothing["resource_timeline_dropped"] == 3


def test_a_memory_level_has_busy_rows_while_it_serves() -> None:
    system = {
        "name": "core and dram",
        "hardware": {
            "core": {"type": "CPU", "name": "core", "attributes": {}},
            "dram": {
                "type": "MEMORY",
                "name": "DRAM",
                "attributes": {"latency": 1e-8, "bandwidth": 1e9},
            },
        },
        "nodes": [
            {"id": "cpu", "hardware": "core", "labels": {"CPU": 1}, "next": "dram"},
            {"id": "dram", "hardware": "dram"},
        ],
        "edges": [],
    }
    app = "sim.memoryAccess(read=1_000_000, stride=64, element=64)\n"
    result = run(app, system, {"CPU": 1})
    rows = [row for row in result["resource_timeline"] if row["node"] == "dram"]
    (dram,) = [row for row in result["components"] if row["node"] == "dram"]
    assert rows, "the DRAM served the reads"
    assert sum(row["end_s"] - row["start_s"] for row in rows) == pytest.approx(dram["busy_s"])
    assert max(row["end_s"] for row in rows) <= result["overall_time_s"]


def test_a_timeline_decides_a_kernel_once_per_params_and_never_mixes_equal_values() -> None:
    # True == 1 == 1.0 == Fraction(1) and they hash alike, but only numbers are kernel inputs
    def kernel(block: object, n: object = 2**20) -> dict[str, object]:
        return {
            "CUDACoreInstructions": 40.0,
            "GMEMBytesTransferred": 128.0,
            "blockSize": block,
            "N": n,
        }

    calls = [kernel(256), kernel(True), kernel(1), kernel(1.0), kernel(Fraction(1)),
             kernel(256, [1]), {"t": 1.0}, kernel(256)]  # fmt: skip  # [1]: unhashable
    timeline = Timeline(10)

    decided = [timeline.kernel_inputs(params) for params in calls * 2]

    assert decided == [kernel_inputs(params) for params in calls * 2]
    assert [inputs is None for inputs in decided[:8]] == [
        False, True, False, False, True, True, True, False
    ]  # fmt: skip
    assert decided[0] is decided[7] is decided[8]  # the same params: decided once
    assert decided[2] == decided[3]  # 1 and 1.0: the same numbers, both as floats


def test_a_kept_computation_has_the_keys_of_any_entry_then_its_detail_and_kernel() -> None:
    timeline = Timeline(2)

    timeline.add_computation("P[0]", 0.0, 1.0, {"bound": "memory"}, {"N": 4.0})
    timeline.add_computation("P[1]", 1.0, 2.5, None, None)

    assert [list(entry) for entry in timeline.entries] == [
        ["process", "kind", "start_s", "end_s", "detail", "kernel"],
        ["process", "kind", "start_s", "end_s"],
    ]
    assert timeline.entries[1] == {
        "process": "P[1]",
        "kind": "compute",
        "start_s": 1.0,
        "end_s": 2.5,
    }
    assert timeline.full  # its callers count what comes next as dropped


def test_a_timeline_knows_whether_a_computation_carries_a_detail_or_a_kernel() -> None:
    plain = Timeline(5)
    plain.add_computation("P[0]", 0.0, 1.0, None, None)
    plain.add("P[0]", "memory", 1.0, 2.0, detail={"level": "L2"})  # not a computation
    plain.add("P[0]", "receive", 2.0, 3.0)
    assert plain.annotated is False
    for add in (
        lambda t: t.add_computation("P[0]", 0.0, 1.0, {"bound": "memory"}, None),
        lambda t: t.add_computation("P[0]", 0.0, 1.0, None, {"N": 4.0}),
        lambda t: t.add("P[0]", "compute", 0.0, 1.0, detail={"bound": "memory"}),
    ):
        timeline = Timeline(5)
        add(timeline)
        assert timeline.annotated is True


CPU_KERNEL_MODEL = """
function computationTime(params) { return params.get('seconds'); }
function computationDetail(params) {
  return params.get('bounded') ? {bound: 'memory'} : {note: 'none'};
}
"""


@pytest.mark.parametrize(
    ("params", "rows"),
    [
        ({"seconds": 1.0}, 0),  # no detail's bound, no kernel: not listed
        ({"seconds": 1.0, "bounded": 1}, 2),  # its model names a bound
        ({"seconds": 1.0, "CUDACoreInstructions": 40.0, "GMEMBytesTransferred": 128.0}, 0),
        (
            {
                "seconds": 1.0,
                "CUDACoreInstructions": 40.0,
                "GMEMBytesTransferred": 128.0,
                "blockSize": 256,
                "N": 4096,
            },
            2,  # a kernel's work (`kernel_inputs`)
        ),
    ],
)
def test_a_cpu_only_run_lists_the_kernels_its_computations_describe(
    params: dict[str, float], rows: int
) -> None:
    system = {
        "name": "one machine",
        "hardware": {"cpu": {"type": "CPU", "name": "CPU", "attributes": {}}},
        "models": {"m": {"language": "javascript", "source": CPU_KERNEL_MODEL}},
        "nodes": [{"id": "cpu0", "hardware": "cpu", "model": "m", "labels": {"P": 2}}],
        "edges": [],
    }
    result = run_simulation(system, f"sim.computation({params!r})\n", labels={"P": 2}, variables={})
    assert len(result["kernels"]) == rows
    assert all(row["node"] == "cpu0" for row in result["kernels"])


def test_kernel_rows_give_kernel_point_s_figures_for_random_kernels() -> None:
    """kernel_rows computes a row's roofline figures itself: they are `kernel_point`'s, bit for
    bit, whatever the inputs, the duration (none, a negative one) and the GPU record."""
    import random

    from simulator.models.roofline import KernelPoint, bound_class, gpu_roof, kernel_point
    from simulator.results import ComponentFigures, kernel_rows

    draw = random.Random(41)
    roofs = [
        gpu_roof({"SMs": 13, "SMCoreClock": 1253, "CUDACores": 128, "GMEMThroughput": 13.78}),
        gpu_roof(
            {
                "SMs": 132,
                "SMCoreClock": 1980,
                "CUDACores": 128,
                "GMEMThroughput": 3.1,
                "warpSize": 16,
                "maxWarpsPerSM": 64,
            }
        ),
    ]
    figures_of = {
        f"gpu{index}": ComponentFigures(
            f"gpu{index}", "GPU", "gpu", "GPU", 1.0, 2.0, 0.0, roof=roof
        )
        for index, roof in enumerate(roofs)
    }
    figures_of["cpu"] = ComponentFigures("cpu", "CPU", "host", "CPU", 1.0, 2.0, 0.0)
    where: dict[str, tuple[str, int]] = {}
    entries: list[Any] = []
    for index in range(400):
        node = draw.choice(sorted(figures_of))
        process = f"P[{index}]"
        where[process] = (node, index % 3)
        start = draw.uniform(0, 1)
        entry: dict[str, Any] = {
            "process": process,
            "kind": "compute",
            "start_s": start,
            "end_s": start + draw.choice([0.0, -1e-6, draw.uniform(1e-9, 1e-2)]),
        }
        if draw.random() < 0.9:
            inputs = {
                "CUDACoreInstructions": float(draw.randint(1, 400)),
                "GMEMBytesTransferred": draw.uniform(1, 1e4),
                "blockSize": float(draw.choice([32, 96, 100, 256, 1024])),
                "occupancy": float(draw.randint(1, 64)),
            }
            if draw.random() < 0.5:
                inputs["gridSize"] = float(draw.randint(1, 10**6))
            else:
                inputs["N"] = float(draw.randint(1, 10**8))
            entry["kernel"] = inputs
        if draw.random() < 0.3:
            entry["detail"] = {"bound": draw.choice(["l2", "latency", 3, None, "other"]),
                               "occupancy": draw.choice([12, 7.5, "x", True])}  # fmt: skip
        entries.append(entry)
        entries.append({"process": process, "kind": "receive", "start_s": 0.0, "end_s": 1.0})

    rows = kernel_rows(entries, [], figures_of, where=where)

    kernels = [e for e in entries if e["kind"] == "compute"]
    kernels = [
        e for e in kernels
        if figures_of[where[e["process"]][0]].type == "GPU" or e.get("kernel")
        or "bound" in e.get("detail", {})
    ]  # fmt: skip
    assert len(rows) == len(kernels)
    for row, entry in zip(rows, kernels, strict=True):
        figures = figures_of[where[entry["process"]][0]]
        duration = entry["end_s"] - entry["start_s"]
        kernel: Any = entry.get("kernel")
        point = kernel_point(kernel, duration, figures.roof) if kernel and figures.roof else None
        expected: Any = point or KernelPoint._make((None,) * len(KernelPoint._fields))
        detail = entry.get("detail") or {}
        occupancy = detail.get("occupancy", (kernel or {}).get("occupancy"))
        occupancy = float(occupancy) if isinstance(occupancy, int | float) else None
        max_warps = figures.roof.max_warps_per_sm if figures.roof else None
        bound = detail.get("bound")
        assert row == {
            "process": entry["process"],
            "node": figures.node,
            "instance": where[entry["process"]][1],
            "start_s": entry["start_s"],
            "duration_s": duration,
            "bound": bound if isinstance(bound, str) else None,
            "bound_class": None if bound is None else bound_class(bound),
            "occupancy": occupancy,
            "occupancy_fraction": (
                occupancy / max_warps if occupancy is not None and max_warps else None
            ),
            "ops": expected.ops,
            "bytes": expected.bytes,
            "intensity": expected.intensity,
            "ops_per_s": expected.ops_per_s,
            "bytes_per_s": expected.bytes_per_s,
            "roof_ops_per_s": expected.roof_ops_per_s,
            "roof_fraction": expected.roof_fraction,
        }
        assert list(row) == list(KERNEL_ROW_KEYS)


KERNEL_ROW_KEYS = (
    "process", "node", "instance", "start_s", "duration_s", "bound", "bound_class", "occupancy",
    "occupancy_fraction", "ops", "bytes", "intensity", "ops_per_s", "bytes_per_s",
    "roof_ops_per_s", "roof_fraction",
)  # fmt: skip


@pytest.mark.parametrize("seed", range(6))
def test_the_c_power_series_are_the_python_ones_for_random_timelines(seed: int) -> None:
    """The C core's power_series_of gives the Python reference's series (simulator/results.py
    `power_series_of`) for random timelines: computations and transfers on nodes that draw
    power or not, overlapping, empty or reversed intervals, ties, capacities above one; and
    NotImplemented, for Python to compute, where a value is not a plain one."""
    import json
    import random

    from simulator.engine import speedups
    from simulator.results import ComponentFigures, PythonUsage, power_series, power_series_of

    if speedups is None:
        pytest.skip("the C core is not built")
    draw = random.Random(seed)
    components = []
    for index in range(4):
        usages = [PythonUsage(f"n{index}", i, draw.choice([1, 1, 2, 3])) for i in range(3)]
        idle = draw.choice([0.0, 12.5, 30.25])
        figures = ComponentFigures(
            f"n{index}", f"N{index}", "hw", draw.choice(["GPU", "CPU", "NETWORK"]), idle,
            idle + draw.choice([0.0, 100.0, 0.1]), 0.0,
        )  # fmt: skip
        components.append((figures, usages))
    where = {f"P[{rank}]": (f"n{rank % 5}", rank % 3) for rank in range(12)}  # n4: no component
    times = [draw.choice([0.0, 0.5, 1.0]) + draw.random() for _ in range(10)] + [0.25, 0.75]
    entries: list[Any] = []
    for _ in range(120):
        start, end = draw.choice(times), draw.choice(times)
        process = draw.choice(sorted(where))
        kind = draw.choice(["compute", "transfer", "receive", "transfer"])
        entry: dict[str, Any] = {"process": process, "kind": kind, "start_s": start, "end_s": end}
        if kind == "transfer" and draw.random() < 0.9:
            entry["node"] = f"n{draw.randrange(5)}"
            if draw.random() < 0.8:
                entry["instance"] = draw.randrange(3)
        entries.append(entry)
    overall = max(times) + draw.choice([0.0, 1.0])
    drawing = [(f, u) for f, u in components if f.idle_w != 0 or f.active_w != 0]
    wanted = {(f.node, u.instance) for f, usages in drawing for u in usages}

    def both(entries: list[Any], overall: float = overall) -> tuple[Any, Any]:
        c_core = speedups.power_series_of(entries, where, drawing, wanted, overall)
        python = power_series_of(entries, where, drawing, wanted, overall)
        return c_core, python

    c_core, python = both(entries)
    assert json.dumps(c_core) == json.dumps(python)  # keys and points in order, to the digit
    assert c_core == power_series(entries, [], components, overall, where)
    # not plain values: an int time, a bool instance, an int run time; Python computes them
    for changed in (
        [*entries, {"process": "P[0]", "kind": "compute", "start_s": 0, "end_s": 1.5}],
        [
            *entries,
            {
                "process": "P[1]",
                "kind": "transfer",
                "start_s": 0.0,
                "end_s": 1.5,
                "node": "n0",
                "instance": True,
            },
        ],
    ):
        c_core, python = both(changed)
        assert c_core is NotImplemented
        assert power_series(changed, [], components, overall, where) == python
    assert both(entries, 2)[0] is NotImplemented


@pytest.mark.parametrize("seed", range(6))
def test_the_c_kernel_rows_are_the_python_ones_for_random_timelines(
    seed: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The C core's kernel_rows_of gives kernel_rows' own loop's rows for random timelines:
    kernels on GPUs and elsewhere, details of every kind, plain and odd values (ints, bools,
    None, a str, a missing place, a zero size); where a value is not a plain one it gives
    NotImplemented and the loop makes the rows."""
    import json
    import random

    from simulator import results
    from simulator.engine import speedups
    from simulator.models.roofline import gpu_roof
    from simulator.results import ComponentFigures, kernel_rows

    if speedups is None:
        pytest.skip("the C core is not built")
    draw = random.Random(seed)
    roof = gpu_roof({"SMs": 13, "SMCoreClock": 1253, "CUDACores": 128, "GMEMThroughput": 13.78,
                     "maxWarpsPerSM": draw.choice([64, 48])})  # fmt: skip
    figures_of = {
        "gpu": ComponentFigures("gpu", "GPU", "gpu", "GPU", 1.0, 2.0, 0.0, roof=roof),
        "bare": ComponentFigures("bare", "GPU", "gpu", "GPU", 1.0, 2.0, 0.0),
        "cpu": ComponentFigures("cpu", "CPU", "host", "CPU", 1.0, 2.0, 0.0),
    }
    where = {f"P[{rank}]": (draw.choice(["gpu", "bare", "cpu", "none"]), rank) for rank in range(9)}
    values = [1.0, 256.0, 0.0, 3.5, 2.0**60, float("nan"), 7, True, None, "x"]
    entries: list[Any] = []
    for _ in range(150):
        start = draw.random()
        entry: dict[str, Any] = {
            "process": draw.choice(sorted(where)),
            "kind": draw.choice(["compute", "compute", "transfer"]),
            "start_s": start,
            "end_s": start + draw.choice([0.0, -0.5, 1e-3, draw.random()]),
        }
        if draw.random() < 0.7:
            plain = draw.random() < 0.8
            inputs = {
                name: draw.choice(values[:6] if plain else values)
                for name in ("CUDACoreInstructions", "GMEMBytesTransferred", "gridSize", "N",
                             "blockSize", "occupancy")
                if draw.random() < 0.9
            }  # fmt: skip
            entry["kernel"] = draw.choice([inputs, inputs, {}, None])
        if draw.random() < 0.5:
            detail: Any = {
                key: draw.choice(["l2", "latency", "other", 3, None, 12, 7.5, True])
                for key in ("bound", "occupancy")
                if draw.random() < 0.7
            }
            entry["detail"] = draw.choice([detail, detail, None, {}])
        entries.append(entry)

    def rows(use_c: bool, entries: list[Any]) -> str:
        if not use_c:
            monkeypatch.setattr(results, "_kernel_rows_of", results._python_kernel_rows_of)
        try:
            return json.dumps(kernel_rows(entries, [], figures_of, where=where))
        except (KeyError, ZeroDivisionError, OverflowError, ValueError, TypeError) as error:
            return repr(error)
        finally:
            monkeypatch.undo()

    for count in (10, 40, 150):  # shorter timelines: fewer odd values among them
        assert rows(True, entries[:count]) == rows(False, entries[:count])
    plain = [
        e for e in entries if all(isinstance(v, float) for v in (e.get("kernel") or {}).values())
    ]
    assert rows(True, plain) == rows(False, plain)
