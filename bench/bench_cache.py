"""Cache simulator benchmark: accesses per second of the C core and the pure-Python reference.

Three streams of `simulator.models.cache` on the i7-4790K preset (`I7_4790K`: 32 KB 2-way L1,
256 KB 4-way L2, 2 MB 16-way L3, 64 B lines), the same streams for both cores:

strided  `strided_stream`, unit stride over 4-byte words, one pass: 15 of 16 accesses hit L1
random   `random_stream`, seeded, over 64 MiB, 30 % writes: nearly every access misses all
         three levels (evictions, back-invalidations and write-backs at every level)
tiled    `tiled_stream`, a 1024 x 1024 matrix of 4-byte floats in 32 x 32 tiles

Each goes through three paths: `run` fed by the stream's generator (what a caller writes;
the generator's own cost is included), `run` over a prebuilt list of pairs, and `run_arrays`
over an `array('Q')` of addresses and a `bytes` of write flags (no Python object per access
on the C core). A figure is the wall time of one call on a fresh hierarchy (cold caches),
best of `--repeat` runs (`--python-repeat` for the slow reference), taken in turns; the table
gives the best, median and slowest time. Exit status 1 when two runs of a stream disagree.

    .venv/bin/python bench/bench_cache.py [--quick] [--accesses N] [--repeat N]
        [--python-repeat N] [--write-results]

`--write-results` records the run in RESULTS.md between its `bench_cache.py --write-results`
markers (appended when they are missing).

The second part times `simulator.models.coherence.CacheTree` (C core) against
`PythonCacheTree` through `run_arrays` (`array('Q')` addresses, `bytes` write flags) on the
M2S-CGM tree of examples/m2s_cgm_memory (8 CPU agents: L1 32 KB 2-way -> L2 256 KB 4-way; GPU:
8 L1 16 KB 4-way -> 2 L2 64 KB 16-way; a shared 8 MB 16-way L3 holding the MESI directory; 64 B
lines), four workloads of about `--accesses` accesses each, every one a sequence of calls:

gpu-stream         one GPU L1 reads 4-byte words at unit stride, one pass (one call)
cpu-private        each CPU L1 in turn, random words of its own 16 KiB, 30 % writes (8 calls)
producer-consumer  rounds: every CPU L1 writes its 16 KiB, then one GPU L1 reads all 8 regions
                   (modified lines forwarded to the GPU, upgrades and invalidations back)
random             every leaf in turn, uniform over 64 MiB, 30 % writes (16 calls)

A figure is the wall time of every call of the workload on a fresh tree (building it
excluded). `--part tree` (or `hierarchy`) runs one part; each part has its own markers.
"""

from __future__ import annotations

import argparse
import os
import platform
import random
import statistics
import sys
import time
from array import array
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

BENCH_DIR = Path(__file__).resolve().parent
REPO_ROOT = BENCH_DIR.parent
RESULTS_FILE = BENCH_DIR / "RESULTS.md"
if str(REPO_ROOT) not in sys.path:  # `python bench/bench_cache.py` from anywhere
    sys.path.insert(0, str(REPO_ROOT))

from results_block import run_line, write_block  # noqa: E402  # bench/results_block.py

from simulator.models import coherence  # noqa: E402
from simulator.models.cache import (  # noqa: E402
    I7_4790K,
    CacheHierarchy,
    CacheSimulationResult,
    PythonCacheHierarchy,
    cachesim,
    random_stream,
    strided_stream,
    tiled_stream,
)

TARGET = 10e6  # accesses per second, C core through run_arrays on I7_4790K
C_CORE = "C core" if cachesim is not None else "CacheHierarchy (pure Python: C core not built)"
PYTHON_CORE = "Python reference"
PATHS = ("run(generator)", "run(list)", "run_arrays")
TREE_C_CORE = (
    "C core" if coherence.tree_core is not None else "CacheTree (pure Python: C core not built)"
)


@dataclass(frozen=True)
class Stream:
    """A named access stream: a generator factory and its accesses, materialised once."""

    name: str
    make: Callable[[], Iterator[tuple[int, bool]]]
    pairs: list[tuple[int, bool]]
    addresses: array[int]
    writes: bytes


def streams(accesses: int) -> list[Stream]:
    """Return the strided, random and tiled streams of about `accesses` accesses each."""
    side = max(32, round(accesses**0.5 / 32) * 32)  # tiled: a side x side matrix
    makers: dict[str, Callable[[], Iterator[tuple[int, bool]]]] = {
        "strided": lambda: strided_stream(count=accesses, stride_bytes=4),
        "random": lambda: random_stream(
            count=accesses, span_bytes=64 << 20, seed=1, write_fraction=0.3
        ),
        "tiled": lambda: tiled_stream(
            rows=side, cols=side, element_bytes=4, tile_rows=32, tile_cols=32
        ),
    }
    result = []
    for name, make in makers.items():
        pairs = list(make())
        addresses = array("Q", [address for address, _ in pairs])
        writes = bytes(is_write for _, is_write in pairs)
        result.append(Stream(name, make, pairs, addresses, writes))
    return result


def timed_run(
    hierarchy: type[CacheHierarchy] | type[PythonCacheHierarchy], stream: Stream, path: str
) -> tuple[float, CacheSimulationResult]:
    """Return the wall time of one run of `stream` through `path` on a fresh hierarchy."""
    cache = hierarchy(I7_4790K)
    if path == "run(generator)":
        generator = stream.make()
        start = time.perf_counter()
        result = cache.run(generator)
    elif path == "run(list)":
        start = time.perf_counter()
        result = cache.run(stream.pairs)
    else:
        start = time.perf_counter()
        result = cache.run_arrays(stream.addresses, stream.writes)
    return time.perf_counter() - start, result


@dataclass
class Row:
    """The timings of one stream, core and path."""

    stream: Stream
    core: str
    path: str
    times: list[float]

    def rate(self, seconds: float) -> float:
        return len(self.stream.pairs) / seconds


def measure(
    stream_list: list[Stream], repeat: int, python_repeat: int
) -> tuple[list[Row], dict[str, CacheSimulationResult], list[str]]:
    """Time every stream, core and path in turns; return rows, results and disagreements."""
    cores: list[tuple[str, type[CacheHierarchy] | type[PythonCacheHierarchy], int]] = [
        (C_CORE, CacheHierarchy, repeat),
        (PYTHON_CORE, PythonCacheHierarchy, python_repeat),
    ]
    rows: list[Row] = []
    results: dict[str, CacheSimulationResult] = {}
    problems: list[str] = []
    for stream in stream_list:
        stream_rows = {
            (core, path): Row(stream, core, path, []) for core, _, _ in cores for path in PATHS
        }
        for round_index in range(max(repeat, python_repeat)):
            for core, hierarchy, runs in cores:
                if round_index >= runs:
                    continue
                for path in PATHS:
                    wall, result = timed_run(hierarchy, stream, path)
                    stream_rows[(core, path)].times.append(wall)
                    expected = results.setdefault(stream.name, result)
                    if result != expected:
                        problems.append(f"{stream.name}: {core} {path} gave another result")
        rows.extend(stream_rows.values())
    return rows, results, problems


def table(rows: list[Row], results: dict[str, CacheSimulationResult]) -> list[str]:
    """Return the Markdown table of the run."""
    lines = [
        "| stream | accesses | L1 hit ratio | core | path | best s | median s | slowest s "
        "| M accesses/s, best | M accesses/s, median / slowest | C core vs Python (best) |",
        "|---|---:|---:|---|---|---:|---:|---:|---:|---:|---:|",
    ]
    best = {(row.stream.name, row.core, row.path): min(row.times) for row in rows}
    for row in rows:
        fastest, median, slowest = min(row.times), statistics.median(row.times), max(row.times)
        versus = ""
        if row.core == C_CORE:
            reference = best[(row.stream.name, PYTHON_CORE, row.path)]
            versus = f"{reference / fastest:.1f}x"
        hit_ratio = results[row.stream.name].level("L1").hit_ratio
        lines.append(
            f"| {row.stream.name} | {len(row.stream.pairs):,} | {hit_ratio:.4f} | {row.core} | "
            f"{row.path} | {fastest:.4f} | {median:.4f} | {slowest:.4f} | "
            f"{row.rate(fastest) / 1e6:.2f} | {row.rate(median) / 1e6:.2f} / "
            f"{row.rate(slowest) / 1e6:.2f} | {versus} |"
        )
    return lines


def verdicts(rows: list[Row]) -> list[str]:
    """Return one line per stream: the C core's run_arrays rate against the target."""
    lines = []
    for row in rows:
        if row.core == C_CORE and row.path == "run_arrays":
            rate = row.rate(min(row.times))
            median = row.rate(statistics.median(row.times))
            verdict = "reaches" if median >= TARGET else "does NOT reach"
            lines.append(
                f"{row.stream.name}: {row.core} run_arrays {rate / 1e6:.1f} M accesses/s best, "
                f"{median / 1e6:.1f} median: {verdict} {TARGET / 1e6:.0f} M/s (median)"
            )
    return lines


# -- the cache tree ----------------------------------------------------------------------

CPU_L1 = range(9, 17)  # cache indices in m2s_cgm_specs()
GPU_L1 = range(19, 27)
KIB = 1024


def m2s_cgm_specs() -> list[coherence.CacheSpec]:
    """Return the M2S-CGM tree of examples/m2s_cgm_memory: L3 (the directory, index 0),
    CPU L2[0-7] (1-8), CPU L1[0-7] (9-16), GPU L2[0-1] (17-18), GPU L1[0-7] (19-26)."""
    spec = coherence.CacheSpec.from_size
    cpu_cycle, gpu_cycle = 1 / 4e9, 1 / 1e9
    specs = [
        spec("L3", size_bytes=8 << 20, ways=16, line_bytes=64, latency_s=4 * cpu_cycle, parent=None)
    ]
    specs += [
        spec(
            f"CPU L2[{k}]",
            size_bytes=256 * KIB,
            ways=4,
            line_bytes=64,
            latency_s=2 * cpu_cycle,
            parent=0,
        )
        for k in range(8)
    ]
    specs += [
        spec(
            f"CPU L1[{k}]",
            size_bytes=32 * KIB,
            ways=2,
            line_bytes=64,
            latency_s=cpu_cycle,
            parent=1 + k,
        )
        for k in range(8)
    ]
    specs += [
        spec(
            f"GPU L2[{k}]",
            size_bytes=64 * KIB,
            ways=16,
            line_bytes=64,
            latency_s=3 * gpu_cycle,
            parent=0,
        )
        for k in range(2)
    ]
    specs += [
        spec(
            f"GPU L1[{k}]",
            size_bytes=16 * KIB,
            ways=4,
            line_bytes=64,
            latency_s=gpu_cycle,
            parent=17 + k // 4,
        )
        for k in range(8)
    ]
    return specs


Call = tuple[int, "array[int]", bytes]


@dataclass(frozen=True)
class TreeStream:
    """A named workload of the tree: (leaf, addresses, write flags) calls."""

    name: str
    calls: list[Call]

    @property
    def accesses(self) -> int:
        return sum(len(addresses) for _, addresses, _ in self.calls)


def tree_streams(accesses: int, seed: int = 1) -> list[TreeStream]:
    """Return the gpu-stream, cpu-private, producer-consumer and random workloads."""
    rng = random.Random(seed)

    def words(base: int, span: int, count: int) -> array[int]:
        return array("Q", [base + 4 * rng.randrange(span // 4) for _ in range(count)])

    def flags(count: int, fraction: float) -> bytes:
        return bytes(rng.random() < fraction for _ in range(count))

    stream = [(GPU_L1[0], array("Q", range(0, 4 * accesses, 4)), bytes(accesses))]
    private = []
    for k, leaf in enumerate(CPU_L1):
        count = accesses // len(CPU_L1)
        private.append((leaf, words((k + 1) << 20, 16 * KIB, count), flags(count, 0.3)))
    sharing: list[Call] = []
    region = 16 * KIB
    produced = array("Q", range(0, region, 4))
    consumed = array("Q", range(0, len(CPU_L1) * region, 4))
    for _ in range(max(1, accesses // (len(produced) * len(CPU_L1) + len(consumed)))):
        for k, leaf in enumerate(CPU_L1):
            addresses = array("Q", [k * region + address for address in produced])
            sharing.append((leaf, addresses, bytes([1]) * len(addresses)))
        sharing.append((GPU_L1[0], consumed, bytes(len(consumed))))
    leaves = [*CPU_L1, *GPU_L1]
    spread = []
    for leaf in leaves:
        count = accesses // len(leaves)
        spread.append((leaf, words(0, 64 << 20, count), flags(count, 0.3)))
    return [
        TreeStream("gpu-stream", stream),
        TreeStream("cpu-private", private),
        TreeStream("producer-consumer", sharing),
        TreeStream("random", spread),
    ]


def timed_tree_run(
    tree: type[coherence.CacheTree], stream: TreeStream
) -> tuple[float, coherence.TreeStats]:
    """Return the wall time of every call of `stream` on a fresh tree, and its stats."""
    cache_tree = tree(m2s_cgm_specs(), directory=0, memory_latency_s=50e-9)
    start = time.perf_counter()
    for leaf, addresses, writes in stream.calls:
        cache_tree.run_arrays(leaf, addresses, writes)
    return time.perf_counter() - start, cache_tree.stats()


@dataclass
class TreeRow:
    """The timings of one tree workload and core."""

    stream: TreeStream
    core: str
    times: list[float]

    def rate(self, seconds: float) -> float:
        return self.stream.accesses / seconds


def measure_tree(
    stream_list: list[TreeStream], repeat: int, python_repeat: int
) -> tuple[list[TreeRow], dict[str, coherence.TreeStats], list[str]]:
    """Time every workload on both cores in turns; return rows, stats and disagreements."""
    cores: list[tuple[str, type[coherence.CacheTree], int]] = [
        (TREE_C_CORE, coherence.CacheTree, repeat),
        (PYTHON_CORE, coherence.PythonCacheTree, python_repeat),
    ]
    rows: list[TreeRow] = []
    results: dict[str, coherence.TreeStats] = {}
    problems: list[str] = []
    for stream in stream_list:
        stream_rows = {core: TreeRow(stream, core, []) for core, _, _ in cores}
        for round_index in range(max(repeat, python_repeat)):
            for core, tree, runs in cores:
                if round_index >= runs:
                    continue
                wall, stats = timed_tree_run(tree, stream)
                stream_rows[core].times.append(wall)
                if stats != results.setdefault(stream.name, stats):
                    problems.append(f"{stream.name}: {core} gave other stats")
        rows.extend(stream_rows.values())
    return rows, results, problems


def tree_table(rows: list[TreeRow], results: dict[str, coherence.TreeStats]) -> list[str]:
    """Return the Markdown table of the tree part."""
    lines = [
        "| workload | accesses | calls | leaf hit ratio | forwards | core | best s | median s "
        "| slowest s | M accesses/s, best | M accesses/s, median / slowest "
        "| C core vs Python (best) |",
        "|---|---:|---:|---:|---:|---|---:|---:|---:|---:|---:|---:|",
    ]
    best = {(row.stream.name, row.core): min(row.times) for row in rows}
    leaves = [*CPU_L1, *GPU_L1]
    for row in rows:
        stats = results[row.stream.name]
        leaf_hits = sum(stats.caches[leaf].hits for leaf in leaves)
        forwards = stats.messages.get("Get_Fwd", 0) + stats.messages.get("GetX_Fwd", 0)
        fastest, median, slowest = min(row.times), statistics.median(row.times), max(row.times)
        versus = ""
        if row.core == TREE_C_CORE:
            versus = f"{best[(row.stream.name, PYTHON_CORE)] / fastest:.1f}x"
        lines.append(
            f"| {row.stream.name} | {row.stream.accesses:,} | {len(row.stream.calls)} | "
            f"{leaf_hits / stats.accesses:.4f} | {forwards:,} | {row.core} | {fastest:.4f} | "
            f"{median:.4f} | {slowest:.4f} | {row.rate(fastest) / 1e6:.2f} | "
            f"{row.rate(median) / 1e6:.2f} / {row.rate(slowest) / 1e6:.2f} | {versus} |"
        )
    return lines


def tree_verdicts(rows: list[TreeRow]) -> list[str]:
    """Return one line per workload: the C core's rate against the target."""
    lines = []
    for row in rows:
        if row.core == TREE_C_CORE:
            rate = row.rate(min(row.times))
            median = row.rate(statistics.median(row.times))
            verdict = "reaches" if median >= TARGET else "does NOT reach"
            lines.append(
                f"tree {row.stream.name}: {row.core} run_arrays {rate / 1e6:.1f} M accesses/s "
                f"best, {median / 1e6:.1f} median: {verdict} {TARGET / 1e6:.0f} M/s (median)"
            )
    return lines


def machine_description() -> list[str]:
    """Return lines naming the machine, the Python and the core in use."""
    cpu = platform.processor() or "unknown CPU"
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    load = ", ".join(f"{value:.2f}" for value in os.getloadavg())
    core = (
        f"C core: {Path(cachesim.__file__).name}" if cachesim is not None else "C core: not in use"
    )
    return [
        f"machine: {os.cpu_count()} CPUs ({cpu}), load average {load}",
        f"python: {platform.python_version()} ({sys.executable})",
        f"{core}; configuration I7_4790K (L1 256x2, L2 1024x4, L3 2048x16 sets x ways, 64 B)",
    ]


def main(argv: list[str] | None = None) -> int:
    """Run the benchmark and print (and, on request, record) the results; return exit status."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="100,000 accesses, 3 and 1 runs")
    parser.add_argument("--accesses", type=int, default=None, help="accesses per stream")
    parser.add_argument("--repeat", type=int, default=None, help="C core runs per figure")
    parser.add_argument(
        "--python-repeat", type=int, default=None, help="Python reference runs per figure"
    )
    parser.add_argument(
        "--part",
        choices=("all", "hierarchy", "tree"),
        default="all",
        help="run the CacheHierarchy part, the CacheTree part or both (default)",
    )
    parser.add_argument(
        "--write-results",
        action="store_true",
        help=f"record the run in {RESULTS_FILE.name} (between its markers)",
    )
    options = parser.parse_args(argv)
    accesses = options.accesses or (100_000 if options.quick else 1 << 20)
    repeat = max(1, options.repeat or (3 if options.quick else 9))
    python_repeat = max(1, options.python_repeat or (1 if options.quick else 3))

    header = machine_description()
    print("\n".join(header))
    first_line = run_line(
        "bench_cache.py",
        argv,
        f"C core best of {repeat}, Python reference best of {python_repeat}, taken in turns",
    )
    problems: list[str] = []
    if options.part in ("all", "hierarchy"):
        stream_list = streams(accesses)
        rows, results, found = measure(stream_list, repeat, python_repeat)
        problems += found
        lines = table(rows, results)
        print("\n".join(lines))
        summary = verdicts(rows)
        print("\n".join(summary))
        if options.write_results:
            write_block(
                [
                    first_line,
                    "",
                    *(f"- {line}" for line in header),
                    "",
                    *lines,
                    "",
                    *(f"- {line}" for line in summary),
                ],
                "bench_cache.py",
            )
    if options.part in ("all", "tree"):
        tree_rows, tree_results, found = measure_tree(tree_streams(accesses), repeat, python_repeat)
        problems += found
        lines = tree_table(tree_rows, tree_results)
        print("\n".join(lines))
        summary = tree_verdicts(tree_rows)
        print("\n".join(summary))
        if options.write_results:
            tree_header = [
                *header[:2],
                f"C core: {'_cachesim.Tree' if coherence.tree_core is not None else 'not in use'}"
                "; the M2S-CGM tree (m2s_cgm_specs: 27 caches, directory at the 8 MB L3)",
            ]
            write_block(
                [
                    first_line,
                    "",
                    *(f"- {line}" for line in tree_header),
                    "",
                    *lines,
                    "",
                    *(f"- {line}" for line in summary),
                ],
                "bench_cache.py",
                "tree",
            )
    for problem in problems:
        print(f"DISAGREEMENT: {problem}")
    if options.write_results:
        print(f"wrote {RESULTS_FILE.relative_to(REPO_ROOT)}")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
