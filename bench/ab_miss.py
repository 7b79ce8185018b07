"""Checkouts' memo-miss path against each other, in-process, rounds interleaved (issue 41).

A diagnostic beside bench_compiled_model.py: whether a change made a compiled model's uncached
call, and a run of distinct inputs, cheaper, when the machine's load is larger than the change.
Each round runs every checkout once, in a fresh process with that checkout first on sys.path
(its `simulator/`, its built extensions, its `bench/`), and measures the process's CPU time:
- `miss <model>`: the hot path's memo miss (key, lookup, `computation_missed`) over 20,000
  distinct params, for bench_userpath's EDITED_MODEL (a helper and a conditional) and
  bench_compiled_model's SOURCE (attribute globals, two `params.get`);
- `program <model>`: the same params run by the model's program of doubles where the checkout
  has one (simulator.models.js_program `evaluate`: the C core's, what its hot path runs before
  the memo);
- `run <scenario>`: `run_simulation` of bench_userpath's compute-edited, compute-distinct and
  compute (the repeating workload: memo hits),
  1,000 processes x 20 computations, per computation (the memos emptied first).
Prints each figure's median per checkout and the ratio to the first checkout.

    .venv/bin/python bench/ab_miss.py --rounds 6 /tmp/before .
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve()
CALLS = 20_000


def measure(checkout: Path) -> dict[str, float]:
    """This checkout's figures, in us of CPU time (run in a process of its own)."""
    import time

    sys.path[:0] = [str(checkout), str(checkout / "bench")]
    from bench_compiled_model import ATTRIBUTES, SOURCE
    from bench_userpath import EDITED_MODEL, compute_case

    import simulator.shallow as shallow
    from simulator.runner import run_simulation

    figures: dict[str, float] = {}
    models = (("edited", EDITED_MODEL, {}, "t"), ("attributes", SOURCE, ATTRIBUTES, "flops"))
    for name, source, attributes, parameter in models:
        functions = shallow.ShallowFunctions(model_key="m", source=source, attributes=attributes)
        times = []
        for round_ in range(5):
            batch = [{parameter: 0.5 + (round_ * CALLS + i) * 1e-7} for i in range(CALLS)]
            memo = functions.computation_memo
            memo.clear()
            missed, get = functions.computation_missed, memo.get
            started = time.process_time()
            for params in batch:
                key = ("computationTime", (), tuple(params.items()))
                if get(key) is None:
                    missed(key, params)
            times.append(time.process_time() - started)
        figures[f"miss {name}"] = statistics.median(times) / CALLS * 1e6
        program = getattr(functions.computation_memo, "program", None)
        if program is not None:  # a checkout with programs (simulator.models.js_program)
            from simulator.models.js_program import evaluate

            times = []
            for round_ in range(5):
                batch = [{parameter: 0.5 + (round_ * CALLS + i) * 1e-7} for i in range(CALLS)]
                started = time.process_time()
                for params in batch:
                    evaluate(program, params)
                times.append(time.process_time() - started)
            figures[f"program {name}"] = statistics.median(times) / CALLS * 1e6
    for scenario in ("compute-edited", "compute-distinct", "compute"):
        case = compute_case(1000, 20, 0, scenario=scenario)
        times = []
        for _ in range(3):
            shallow._memos.clear()
            started = time.process_time()
            run_simulation(
                case.parasim.snapshot,
                case.parasim.app,
                labels=case.parasim.labels,
                variables=case.parasim.variables,
                summary=True,
            )
            times.append(time.process_time() - started)
        figures[f"run {scenario}"] = statistics.median(times) / case.events * 1e6
    return figures


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("checkouts", nargs="+", type=Path)
    parser.add_argument("--rounds", type=int, default=6)
    parser.add_argument("--one", type=Path, help=argparse.SUPPRESS)  # a round's process
    options = parser.parse_args()
    if options.one is not None:
        print(json.dumps(measure(options.one.resolve())))
        return
    results: dict[Path, list[dict[str, float]]] = {path: [] for path in options.checkouts}
    for _ in range(options.rounds):
        for path in options.checkouts:
            command = [sys.executable, str(HERE), "--one", str(path), str(path)]
            output = subprocess.run(command, check=True, capture_output=True, text=True, cwd="/")
            results[path].append(json.loads(output.stdout))
    print(f"{options.rounds} interleaved rounds, load average {os.getloadavg()}, us of CPU time")
    first = options.checkouts[0]
    figures = list(dict.fromkeys(name for path in options.checkouts for name in results[path][0]))
    for figure in figures:
        if figure not in results[first][0]:
            cells = [
                f"{path}: {statistics.median(r[figure] for r in results[path]):.2f}"
                for path in options.checkouts
                if figure in results[path][0]
            ]
            print(f"{figure:22s} " + "  ".join(cells))
            continue
        base = statistics.median(r[figure] for r in results[first])
        cells = []
        for path in options.checkouts:
            if figure not in results[path][0]:
                continue
            median = statistics.median(r[figure] for r in results[path])
            cells.append(f"{path}: {median:.2f} ({base / median:.2f}x)")
        print(f"{figure:22s} " + "  ".join(cells))


if __name__ == "__main__":
    main()
