"""Memory work inside simulations: patterns, traces, contention, coherence and their errors."""

from __future__ import annotations

import copy
import json
import sys
from pathlib import Path
from typing import Any

import pytest

from simulator import memsys
from simulator.errors import UserCodeError
from simulator.memsys import Pattern, pattern_misses
from simulator.models.cache import CacheHierarchy, CacheHierarchyConfig, CacheLevelConfig
from simulator.results import memory_rows
from simulator.runner import run_simulation
from simulator.sandbox.preparation import modules_needed

EXAMPLE_DIR = Path(__file__).resolve().parents[2] / "examples" / "m2s_cgm_memory"
sys.path.insert(0, str(EXAMPLE_DIR))
import study  # noqa: E402

GB = 1e9


def two_cores(*, l1_bandwidth: float = 256 * GB) -> dict[str, Any]:
    """Two CPU cores, each with a private 32 KB L1, sharing one DRAM of 10 GB/s."""
    return {
        "name": "two cores",
        "hardware": {
            "core": {"type": "CPU", "name": "core", "attributes": {}},
            "l1": {
                "type": "CACHE",
                "name": "L1",
                "attributes": {
                    "size": 32768,
                    "ways": 8,
                    "lineSize": 64,
                    "latencyCycles": 4,
                    "clock": 1000,
                    "bandwidth": l1_bandwidth,
                },
            },
            "dram": {
                "type": "MEMORY",
                "name": "DRAM",
                "attributes": {"latency": 1e-8, "bandwidth": 10 * GB},
            },
        },
        "nodes": [
            {"id": "cpu", "hardware": "core", "count": 2, "labels": {"CPU": 1}, "next": "l1"},
            {"id": "l1", "hardware": "l1", "count": 2, "next": "dram"},
            {"id": "dram", "hardware": "dram"},
        ],
        "edges": [],
    }


STREAM = "sim.memoryAccess(read=read_bytes, stride=64, element=64)\n"
ONLY_RANK_0 = "if rank == 0:\n    sim.memoryAccess(read=read_bytes, stride=64, element=64)\n"


def run(snapshot: dict[str, Any], app: str, cpus: int = 2, **variables: object) -> dict[str, Any]:
    return run_simulation(snapshot, app, labels={"CPU": cpus}, variables=variables)


def test_two_processes_streaming_from_one_dram_take_longer_than_either_alone() -> None:
    size = 64_000_000
    alone = run(two_cores(), ONLY_RANK_0, read_bytes=size)["overall_time_s"]
    together = run(two_cores(), STREAM, read_bytes=size)["overall_time_s"]
    # alone: 64 MB at 10 GB/s; together the DRAM serves both, one after the other's chunks
    assert alone == pytest.approx(size / (10 * GB), rel=0.01)
    assert together == pytest.approx(2 * alone, rel=0.02)


def test_private_levels_do_not_contend() -> None:
    # a footprint that fits the L1, read 100 times: after the cold misses every read hits
    app = "sim.memoryAccess(read=3_200_000, footprint=32_000, stride=64, element=64)\n"
    alone = run(two_cores(l1_bandwidth=1 * GB), "if rank == 0:\n    " + app)
    together = run(two_cores(l1_bandwidth=1 * GB), app)
    assert together["overall_time_s"] == pytest.approx(alone["overall_time_s"], rel=1e-9)
    level = next(row for row in together["memory"]["levels"] if row["node"] == "l1")
    assert level["hit_ratio"] == pytest.approx(0.99, abs=1e-9)  # 500 cold misses of 50,000


@pytest.mark.parametrize(
    ("footprint", "reads"),
    [(16384, 65536), (65536, 262144), (32768, 32768), (1 << 20, 1 << 22)],
)
def test_the_sequential_pattern_model_matches_the_cache_simulator(
    footprint: int, reads: int
) -> None:
    levels = (
        CacheLevelConfig.from_size("L1", size_bytes=32768, ways=8, line_bytes=64, latency_cycles=1),
        CacheLevelConfig.from_size(
            "L2", size_bytes=262144, ways=8, line_bytes=64, latency_cycles=2
        ),
    )
    hierarchy = CacheHierarchy(CacheHierarchyConfig(levels))
    stream = [(address % footprint, False) for address in range(0, reads, 8)]
    result = hierarchy.run(stream)
    accesses, misses = pattern_misses(
        Pattern(read=reads, write=0, footprint=footprint, stride=8, element=8, order="sequential"),
        [32768, 262144],
        64,
    )
    assert accesses == result.accesses
    assert misses == [result.level("L1").misses, result.level("L2").misses]


def test_a_random_pattern_hits_in_proportion_to_the_share_it_fits() -> None:
    pattern = Pattern(read=8e6, write=0, footprint=1e6, stride=64, element=64, order="random")
    accesses, (misses,) = pattern_misses(pattern, [250_000], 64)
    lines = 1e6 / 64
    assert misses == pytest.approx(lines + 7 * lines * 0.75)  # 8 passes, a quarter fits
    assert accesses == 125_000


def test_a_trace_runs_through_the_caches_and_its_rows_reach_the_csv() -> None:
    app = (
        "sim.memoryAccess(trace=range(0, lines * 64, 64))\n"
        "sim.memoryAccess(trace=range(0, lines * 64, 64), writes=True)\n"
    )
    result = run(two_cores(), app, cpus=1, lines=256)
    l1 = next(row for row in result["memory"]["levels"] if row["node"] == "l1")
    assert (l1["accesses"], l1["hits"], l1["misses"]) == (512, 256, 256)  # 256 lines fit
    # 1024 lines do not fit 512: under LRU the second sweep misses every line again
    too_big = run(two_cores(), app, cpus=1, lines=1024)["memory"]["levels"][0]
    assert (too_big["accesses"], too_big["hits"], too_big["misses"]) == (2048, 0, 2048)
    assert result["processes"][0]["memory_s"] > 0
    columns, rows = memory_rows(result)
    assert "hit_ratio" in columns
    assert any(row["node"] == "l1" and row["accesses"] == 512 for row in rows)
    kinds = [entry["kind"] for entry in result["timeline"]]
    assert kinds.count("memory") == 2


def test_a_computation_with_memory_takes_the_longer_of_the_two() -> None:
    snapshot = two_cores()
    snapshot["models"] = {
        "fixed": {"source": "function computationTime(params) { return params.t; }"}
    }
    snapshot["nodes"][0]["model"] = "fixed"
    app = "sim.computation({'t': t}, memory={'read': 10_000_000, 'stride': 64, 'element': 64})\n"
    memory_bound = run(snapshot, app, cpus=1, t=1e-6)
    compute_bound = run(snapshot, app, cpus=1, t=5e-3)
    assert memory_bound["overall_time_s"] == pytest.approx(1e-3, rel=0.01)  # 10 MB at 10 GB/s
    assert compute_bound["overall_time_s"] == pytest.approx(5e-3, rel=1e-9)
    detail = memory_bound["timeline"][0]["detail"]
    assert detail["computeSeconds"] == pytest.approx(1e-6)
    assert detail["mode"] == "pattern"


@pytest.mark.parametrize(
    ("app", "fragment"),
    [
        ("sim.memoryAccess(read=-1)\n", "read must be a finite number >= 0"),
        ("sim.memoryAccess(read=10, stride=0)\n", "stride must be greater than 0"),
        ("sim.memoryAccess(read=10, order='zigzag')\n", "order is 'sequential' or 'random'"),
        ("sim.memoryAccess(reads=10)\n", "unknown argument 'reads'"),
        ("sim.memoryAccess()\n", "give a trace, or bytes to read or write"),
        ("sim.memoryAccess(read=1, trace=[0])\n", "not both"),
        ("sim.memoryAccess(trace=[0, -64])\n", "trace entry 1 must be an address"),
        ("sim.memoryAccess(trace=[2 ** 63, 2 ** 64])\n", "must be below 2**64"),
        ("sim.memoryAccess(trace=[0], level='llc')\n", "level 'llc' is not on the memory path"),
    ],
)
def test_bad_memory_calls_name_the_argument_and_the_line(app: str, fragment: str) -> None:
    with pytest.raises(UserCodeError) as caught:
        run(two_cores(), "x = 1\n" + app, cpus=1)
    assert fragment in str(caught.value)
    assert caught.value.line == 2


def test_a_trace_over_the_bound_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(memsys, "MAX_TRACE", 100)
    with pytest.raises(UserCodeError, match="more than 100 accesses"):
        run(two_cores(), "sim.memoryAccess(trace=range(0, 64 * 101, 64))\n", cpus=1)


def test_a_node_without_a_memory_path_is_told_so() -> None:
    snapshot = two_cores()
    snapshot["nodes"].append({"id": "host", "hardware": "core", "labels": {"HOST": 1}})
    with pytest.raises(UserCodeError, match="node 'host' has no memory path"):
        run_simulation(snapshot, "sim.memoryAccess(read=64)\n", labels={"HOST": 1}, variables={})
    del snapshot["nodes"][0]["next"]
    with pytest.raises(UserCodeError, match="the system model has no memory hierarchy"):
        run(snapshot, "sim.memoryAccess(read=64)\n", cpus=1)


def test_level_starts_the_access_further_out() -> None:
    app = (
        "if tag.equals('GPU'):\n"
        "    sim.memoryAccess(read=6400, stride=64, element=64, level='llc')\n"
        "    sim.memoryAccess(trace=range(0, 6400, 64), level='dram')\n"
    )
    result = run_simulation(
        study.configuration("C-L3"), app, labels={"CPU": 8, "GPU": 1}, variables={}
    )
    rows = {(row["node"], row["instance"]): row for row in result["memory"]["levels"]}
    assert rows[("gpu_l1", 0)]["accesses"] == 0
    assert rows[("llc", 0)]["accesses"] == 100
    assert rows[("dram", 0)]["accesses"] == 200  # the pattern's misses and the trace


def test_a_trace_cannot_start_inside_the_caches() -> None:
    app = "if tag.equals('GPU'):\n    sim.memoryAccess(trace=[0], level='llc')\n"
    with pytest.raises(UserCodeError, match="a trace starts at the first cache or at memory"):
        run_simulation(study.configuration("C-L3"), app, labels={"CPU": 8, "GPU": 1}, variables={})


def test_a_gpu_only_run_pays_no_sharing_and_a_collaborative_one_does() -> None:
    variables = {"size_kb": 64, "rounds": 2, "flush": 0}
    alone = study.run("C-L3", "streaming", 256, 1)
    shared = run_simulation(
        study.configuration("C-L3"),
        (EXAMPLE_DIR / "app.py").read_text(),
        labels={"CPU": 8, "GPU": 1},
        variables={"workload": "collaborative", **variables},
    )
    sharing = {"Get_Fwd", "Inval", "Upgrade", "Downgrade_Ack"}
    assert not sharing & set(alone["memory"]["coherence"]["messages"])
    assert sharing <= set(shared["memory"]["coherence"]["messages"])
    assert shared["memory"]["coherence"]["protocol"] == "mesi"


def test_the_study_reproduces_002s_qualitative_results() -> None:
    streaming = {name: study.run(name, "streaming", 1024, 1) for name in study.CONFIGURATIONS}
    collaborative = {name: study.run(name, "collaborative", 64, 4) for name in study.CONFIGURATIONS}
    # a streaming GPU gains nothing from the shared L3: it never hits there
    assert study.l3_hit_ratio(streaming["NC-L3"]) == 0
    assert streaming["NC-L3"]["overall_time_s"] >= 0.99 * streaming["NC-MC"]["overall_time_s"]
    # a collaborative workload gains from coherence: no flushes, data forwarded on chip
    best_without = min(collaborative[n]["overall_time_s"] for n in ("NC-MC", "NC-L3"))
    assert collaborative["C-L3"]["overall_time_s"] < 0.8 * best_without


def test_the_example_snapshot_is_what_the_study_changes() -> None:
    original = json.loads((EXAMPLE_DIR / "snapshot.json").read_text())
    changed = study.configuration("NC-MC")
    nodes = {node["id"]: node for node in changed["nodes"]}
    assert nodes["gpu_l2"]["next"] == "dram" and nodes["llc"]["coherence"] == "none"
    assert copy.deepcopy(original)["nodes"] != changed["nodes"]


SHARED_APP = """
for _ in range(rounds):
    if tag.equals('CPU'):
        sim.memoryAccess(write=size // labels['CPU'], stride=64, element=64)
    sim.barrier()
    if tag.equals('GPU'):
        sim.memoryAccess(read=size, stride=64, element=64, sharedWith='CPU')
    sim.barrier()
"""


def test_a_shared_pattern_is_forwarded_below_a_directory_and_read_from_memory_without() -> None:
    variables = {"size": 65536, "rounds": 4}
    labels = {"CPU": 8, "GPU": 1}
    coherent = run_simulation(
        study.configuration("C-L3"), SHARED_APP, labels=labels, variables=variables
    )
    plain = run_simulation(
        study.configuration("NC-L3"), SHARED_APP, labels=labels, variables=variables
    )
    lines = 65536 // 64
    messages = coherent["memory"]["coherence"]["messages"]
    # each round the GPU's first touch of each of the 1024 lines is a forward from a CPU
    assert messages == dict.fromkeys(["Downgrade_Ack", "Get", "Get_Fwd", "PutS"], 4 * lines)
    assert plain["memory"]["coherence"]["messages"] == {}

    def dram(result: dict[str, Any]) -> int:
        return sum(row["accesses"] for row in result["memory"]["levels"] if row["type"] == "MEMORY")

    assert dram(plain) - dram(coherent) == 4 * lines
    assert coherent["overall_time_s"] < plain["overall_time_s"]


@pytest.mark.parametrize(
    ("shared", "fragment"),
    [("'DSP'", "no processes of label 'DSP'"), ("[1]", "sharedWith is a label or a list")],
)
def test_shared_with_names_labels_of_the_launch(shared: str, fragment: str) -> None:
    app = f"sim.memoryAccess(read=64, sharedWith={shared})\n"
    with pytest.raises(UserCodeError, match=fragment):
        run(two_cores(), app, cpus=1)


def test_a_sandboxed_run_imports_the_memory_system_only_for_a_system_with_memory_nodes() -> None:
    with_memory = two_cores()
    without = json.loads((EXAMPLE_DIR.parent / "merpsys_gtx970" / "snapshot.json").read_text())

    assert "simulator.memsys" in modules_needed({"snapshot": with_memory})
    assert "simulator.memsys" not in modules_needed({"snapshot": without})


def test_a_sandboxed_memory_call_on_a_system_without_a_hierarchy_is_told_so() -> None:
    from simulator.sandbox import Limits, run_sandboxed

    snapshot = json.loads((EXAMPLE_DIR.parent / "merpsys_gtx970" / "snapshot.json").read_text())
    payload = {
        "snapshot": snapshot,
        "app_source": "if tag.equals('CPU'):\n    sim.memoryAccess(read=64)\n",
        "labels": {"CPU": 1, "GPU": 1},
        "variables": {},
    }
    with pytest.raises(UserCodeError, match="the system model has no memory hierarchy") as caught:
        run_sandboxed(payload, limits=Limits(wall_s=60))

    assert caught.value.line == 2
