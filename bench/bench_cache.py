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
"""

from __future__ import annotations

import argparse
import datetime
import os
import platform
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
RESULTS_BEGIN = "<!-- bench_cache.py --write-results: begin -->"
RESULTS_END = "<!-- bench_cache.py --write-results: end -->"


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


def write_results(block: list[str]) -> None:
    """Put `block` between the markers of RESULTS.md (appended when they are missing)."""
    text = RESULTS_FILE.read_text(encoding="utf-8") if RESULTS_FILE.exists() else ""
    section = "\n".join([RESULTS_BEGIN, *block, RESULTS_END])
    if RESULTS_BEGIN in text and RESULTS_END in text:
        head, rest = text.split(RESULTS_BEGIN, 1)
        tail = rest.split(RESULTS_END, 1)[1]
        text = head + section + tail
    else:
        text = text + ("\n" if text else "") + section + "\n"
    RESULTS_FILE.write_text(text, encoding="utf-8")


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
    stream_list = streams(accesses)
    rows, results, problems = measure(stream_list, repeat, python_repeat)
    lines = table(rows, results)
    print("\n".join(lines))
    summary = verdicts(rows)
    print("\n".join(summary))
    for problem in problems:
        print(f"DISAGREEMENT: {problem}")

    if options.write_results:
        stamp = datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%d %H:%M UTC")
        command = " ".join(["bench/bench_cache.py", *(argv if argv is not None else sys.argv[1:])])
        block = [
            f"Run of {stamp}: `.venv/bin/python {command}` (C core best of {repeat}, Python "
            f"reference best of {python_repeat}, taken in turns)",
            "",
            *(f"- {line}" for line in header),
            "",
            *lines,
            "",
            *(f"- {line}" for line in summary),
        ]
        write_results(block)
        print(f"wrote {RESULTS_FILE.relative_to(REPO_ROOT)}")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
