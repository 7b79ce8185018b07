"""Stackless processes against greenlets: the same runs, each way, in `run_simulation`.

A model the runner can compile into a generator function runs its processes stackless
(simulator/sandbox/stackless.py, simulator/engine.py StacklessProcess); the rest run on
greenlets. This benchmark runs each of `bench_userpath.py`'s scenarios both ways in this
interpreter (`simulator.runner.STACKLESS_CALLS`: the empty set forces greenlets), rounds
interleaved, and gives the best and the median time of `run_simulation` with the ratio;
then the peak resident memory of 100,000 simultaneous processes each way, each run in a
fresh child interpreter (its VmHWM). Both ways give the same result: it exits 1 if not.

The headline figures are the user's path (`bench_userpath.py`); these say what the
stackless processes changed in the engine's own time and memory.

    .venv/bin/python bench/bench_stackless.py [--repeat N] [--processes N] [--write-results]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

BENCH_DIR = Path(__file__).resolve().parent
sys.path.insert(0, str(BENCH_DIR.parent))

import bench_userpath as userpath  # noqa: E402  # bench/bench_userpath.py
from results_block import run_line, write_block  # noqa: E402  # bench/results_block.py

from simulator import runner  # noqa: E402
from simulator.engine import install_allocator_hook  # noqa: E402

GREENLETS: frozenset[str] = frozenset()
MODES = {"greenlets": GREENLETS, "stackless": runner.FAST_CALLS}

MEMORY_CHILD = """
import json, sys
sys.path.insert(0, sys.argv[1])
from simulator import runner
from simulator.engine import install_allocator_hook
install_allocator_hook()
snapshot, app, labels, mode = json.loads(sys.stdin.read())
runner.STACKLESS_CALLS = frozenset(mode)
result = runner.run_simulation(snapshot, app, labels=labels, variables={}, timeline_limit=100)
peak = [line for line in open("/proc/self/status") if line.startswith("VmHWM")][0]
print(json.dumps({"peak_kib": int(peak.split()[1]), "end": result["overall_time_s"]}))
"""


def comparable(result: dict[str, Any]) -> str:
    """Return the result as JSON without the wall clock's figures."""
    stats = dict(result["stats"], wall_s=0.0, events_per_s=0.0)
    return json.dumps({**result, "stats": stats}, sort_keys=True)


def time_cases(repeat: int) -> tuple[list[str], bool]:
    """Return the table rows of every scenario both ways, and whether the results agreed."""
    sizes = userpath.Sizes()
    cases = [
        userpath.compute_case(1_000, sizes.compute_steps, 0),
        userpath.compute_case(10_000, sizes.compute_steps, 0),
        userpath.pairs_case(sizes, 0),
        userpath.master_worker_case(sizes, 0),
        userpath.collectives_case(sizes, 0),
        userpath.merpsys_case(sizes),
    ]
    rows, agree = [], True
    for case in cases:
        inputs = case.parasim
        times: dict[str, list[float]] = {mode: [] for mode in MODES}
        results: dict[str, str] = {}
        for _ in range(repeat):
            for mode, calls in MODES.items():
                runner.STACKLESS_CALLS = calls
                started = time.perf_counter()
                result = runner.run_simulation(
                    inputs.snapshot, inputs.app, labels=inputs.labels, variables=inputs.variables
                )
                times[mode].append(time.perf_counter() - started)
                results[mode] = comparable(dict(result))
        runner.STACKLESS_CALLS = runner.FAST_CALLS
        same = results["greenlets"] == results["stackless"]
        agree &= same
        greenlets, stackless = times["greenlets"], times["stackless"]
        rows.append(
            f"| {case.title} | {min(greenlets) * 1e3:.1f} | {statistics.median(greenlets) * 1e3:.1f}"
            f" | {min(stackless) * 1e3:.1f} | {statistics.median(stackless) * 1e3:.1f}"
            f" | {min(greenlets) / min(stackless):.2f}x"
            f" / {statistics.median(greenlets) / statistics.median(stackless):.2f}x"
            f" | {'yes' if same else 'NO'} |"
        )
        print(rows[-1], file=sys.stderr, flush=True)
    return rows, agree


def peak_memory(processes: int) -> tuple[list[str], bool]:
    """Return the rows of the peak memory of `processes` simultaneous processes each way."""
    snapshot = userpath.cluster_snapshot(
        "many processes", [userpath.host("hosts", processes, {"P": 1})]
    )
    rows, ends = [], set()
    for mode, calls in MODES.items():
        done = subprocess.run(
            [sys.executable, "-c", MEMORY_CHILD, str(BENCH_DIR.parent)],
            input=json.dumps([snapshot, userpath.MEMORY_APP, {"P": processes}, sorted(calls)]),
            capture_output=True,
            text=True,
            check=True,
        )
        figures = json.loads(done.stdout)
        ends.add(figures["end"])
        peak = figures["peak_kib"] * 1024
        rows.append(
            f"| {processes:,} processes, {mode} | {peak / 1e9:.3f} GB |"
            f" {peak / processes:,.0f} bytes |"
        )
        print(rows[-1], file=sys.stderr, flush=True)
    return rows, len(ends) == 1


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeat", type=int, default=7, help="rounds per case (default 7)")
    parser.add_argument(
        "--processes", type=int, default=100_000, help="processes of the memory rows"
    )
    parser.add_argument("--write-results", action="store_true", help="record in RESULTS.md")
    args = parser.parse_args(argv)
    install_allocator_hook()
    load = ", ".join(f"{value:.2f}" for value in os.getloadavg())
    cpu = next(
        (
            line.split(":", 1)[1].strip()
            for line in Path("/proc/cpuinfo").read_text().splitlines()
            if line.startswith("model name")
        ),
        "unknown CPU",
    )
    timing, agree = time_cases(args.repeat)
    memory, same_end = peak_memory(args.processes)
    block = [
        run_line("bench_stackless.py", argv, f"best and median of {args.repeat} rounds"),
        "",
        f"- machine: {os.cpu_count()} CPUs ({cpu}), load average {load} at the start",
        "- ms: `run_simulation` in this interpreter, greenlets and stackless interleaved; "
        "ratios above 1 mean stackless is faster",
        "",
        "| scenario | greenlets best ms | median | stackless best ms | median "
        "| greenlets / stackless (best / median) | same result |",
        "|---|---:|---:|---:|---:|---:|---|",
        *timing,
        "",
        "| peak resident memory (VmHWM of a fresh interpreter) | peak | peak / processes |",
        "|---|---:|---:|",
        *memory,
    ]
    print("\n".join(block))
    if args.write_results:
        print(f"wrote {write_block(block, 'bench_stackless.py')}", file=sys.stderr)
    return 0 if agree and same_end else 1


if __name__ == "__main__":
    sys.exit(main())
