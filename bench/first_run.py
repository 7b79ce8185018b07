"""One bench_userpath.py scenario run in-process as a sandbox child runs it: its first run.

A sandbox child runs one simulation and exits, so the figure a user feels is a process's
first run: no memo of an earlier run, the collector's threshold as the child sets it. This
prepares the process as the child prepares itself (`prepare_simulation_process`, the
modules it preloads, the stackless check it makes before the run), forks a child for each
round as the pool's zygote does, which makes V8's first isolates before its run as a pool's
child does while it waits, and prints the run's `stats.wall_s` split into its set-up
(before the engine runs), the engine's run, and the result's assembly after it, with the
minor page faults of the run:

    .venv/bin/python bench/first_run.py merpsys --repeat 7
    valgrind --tool=callgrind .venv/bin/python bench/first_run.py merpsys --repeat 1

Engine-side figures only (no command line, no sandbox): bench_userpath.py measures the
user's path; this says where a run's own time goes between two versions of the code.
"""

from __future__ import annotations

import argparse
import gc
import importlib
import json
import os
import resource
import statistics
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "bench")]

import bench_userpath  # noqa: E402

from simulator import engine as engine_module  # noqa: E402
from simulator import runner, shallow  # noqa: E402
from simulator.sandbox import preparation  # noqa: E402
from simulator.sandbox.child import PRELOAD_MODULES, SPARE_ISOLATES  # noqa: E402

SCENARIOS = {
    "merpsys": lambda sizes: bench_userpath.merpsys_case(sizes),
    "merpsys-edited": lambda sizes: bench_userpath.merpsys_case(sizes, edited=True),
    "collectives": lambda sizes: bench_userpath.collectives_case(sizes, 0),
    "pairs": lambda sizes: bench_userpath.pairs_case(sizes, 0),
    "master-worker": lambda sizes: bench_userpath.master_worker_case(sizes, 0),
    "compute-100": lambda sizes: bench_userpath.compute_case(100, 20, 0),
    "compute-1000": lambda sizes: bench_userpath.compute_case(1000, 20, 0),
    "compute-10000": lambda sizes: bench_userpath.compute_case(10_000, 20, 0),
}


def first_run(inputs: bench_userpath.ParaSimInputs) -> dict[str, float]:
    """Run `inputs` once in this process; return its figures in ms (and the page faults)."""
    spans: dict[str, float] = {}
    run, assemble = engine_module.Engine.run, runner.assemble_result

    def timed_run(engine: Any) -> None:
        start = time.perf_counter()
        try:
            run(engine)
        finally:
            spans["run"] = time.perf_counter() - start

    def timed_assembly(**arguments: Any) -> Any:
        start = time.perf_counter()
        result = assemble(**arguments)
        spans["assembly"] = time.perf_counter() - start
        return result

    engine_module.Engine.run = timed_run  # type: ignore[method-assign]
    runner.assemble_result = timed_assembly  # type: ignore[assignment]
    before = resource.getrusage(resource.RUSAGE_SELF)
    result = runner.run_simulation(
        inputs.snapshot, inputs.app, labels=inputs.labels, variables=inputs.variables
    )
    after = resource.getrusage(resource.RUSAGE_SELF)
    wall = result["stats"]["wall_s"]
    return {
        "wall_s": 1e3 * wall,
        # stats.wall_s ends once the result is assembled: the set-up is what is left
        "setup": 1e3 * (wall - spans["run"] - spans["assembly"]),
        "run": 1e3 * spans["run"],
        "assembly": 1e3 * spans["assembly"],
        "faults": float(after.ru_minflt - before.ru_minflt),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("scenario", choices=sorted(SCENARIOS))
    parser.add_argument("--repeat", type=int, default=5, help="rounds, each in a new child")
    args = parser.parse_args()

    inputs = SCENARIOS[args.scenario](bench_userpath.Sizes()).parasim
    for module in PRELOAD_MODULES:  # what the sandbox child imports before its run
        importlib.import_module(module)
    runner.prepare_simulation_process()
    payload = {"app_source": inputs.app, "variables": inputs.variables, "snapshot": inputs.snapshot}
    payload_with_labels = {**payload, "labels": inputs.labels}
    runner.address_space_reserved(payload_with_labels)  # asked before the run
    gc.collect()
    gc.freeze()  # as the pool's zygote does before it forks its children

    rows = []
    for _ in range(args.repeat):
        read, write = os.pipe()
        pid = os.fork()
        if pid == 0:  # the child: one run, its figures written back
            os.close(read)
            # V8 and the run's first isolates, made while a pool's child waits for its run
            # (simulator.sandbox.child `_load_v8_while_idle`; `_load_v8` keeps them all)
            if preparation.needs_v8(payload_with_labels):
                for _ in range(SPARE_ISOLATES):
                    shallow.start_spare_racer()
            os.write(write, json.dumps(first_run(inputs)).encode())
            os._exit(0)
        os.close(write)
        with os.fdopen(read) as answer:
            rows.append(json.loads(answer.read()))
        os.waitpid(pid, 0)

    print(f"{args.scenario}: first run in a forked child, {args.repeat} rounds (ms)")
    for key in ("wall_s", "setup", "run", "assembly", "faults"):
        values = [row[key] for row in rows]
        name = "stats.wall_s" if key == "wall_s" else key
        print(
            f"  {name:13s} median {statistics.median(values):9.1f}  "
            f"min {min(values):9.1f}  max {max(values):9.1f}"
        )


if __name__ == "__main__":
    main()
