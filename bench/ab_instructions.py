"""Checkouts' instructions per computation, counted by callgrind (issue 41).

A diagnostic beside ab_miss.py for a machine whose load is larger than a change: callgrind
(`valgrind --tool=callgrind`) counts the instructions a process executes, whatever else the
machine runs. Each checkout's scenario runs in-process (`run_simulation` of bench_userpath's
case, the memos emptied first) once in one process and three times in another; the difference
of the two counts, halved, is one run's own count (imports, compilation and start-up left out),
printed per computation.

    .venv/bin/python bench/ab_instructions.py /tmp/before . --scenario compute-distinct
"""

from __future__ import annotations

import argparse
import re
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve()
MERPSYS = ("merpsys", "merpsys-edited")  # their events are the case's, not processes x steps
TOTAL = re.compile(r"I\s+refs:\s+([\d,]+)")


def run(checkout: Path, scenario: str, processes: int, steps: int, times: int) -> None:
    """Run `scenario` `times` times in this process (the counted process's body)."""
    sys.path[:0] = [str(checkout), str(checkout / "bench")]
    import simulator.shallow as shallow
    from simulator.runner import run_simulation

    case = scenario_case(scenario, processes, steps)
    for _ in range(times):
        shallow._memos.clear()
        run_simulation(
            case.parasim.snapshot,
            case.parasim.app,
            labels=case.parasim.labels,
            variables=case.parasim.variables,
            summary=True,
        )


def scenario_case(scenario: str, processes: int, steps: int) -> Any:
    """Return bench_userpath's case of `scenario`: a compute workload at `processes` x
    `steps`, or the MERPSYS example (`merpsys`, `merpsys-edited`) at its default pairs."""
    from bench_userpath import Sizes, compute_case, merpsys_case

    if scenario in MERPSYS:
        return merpsys_case(Sizes(), edited=scenario == "merpsys-edited")
    return compute_case(processes, steps, 0, scenario=scenario)


def counted(checkout: Path, scenario: str, processes: int, steps: int, times: int) -> int:
    """Return the instructions of a process that runs the scenario `times` times."""
    with tempfile.TemporaryDirectory() as folder:
        command = [
            "valgrind",
            "--tool=callgrind",
            f"--callgrind-out-file={folder}/out",
            sys.executable,
            str(HERE),
            "--one",
            str(times),
            "--scenario",
            scenario,
            "--processes",
            str(processes),
            "--steps",
            str(steps),
            str(checkout),
        ]
        done = subprocess.run(command, check=True, capture_output=True, text=True, cwd="/")
    found = TOTAL.search(done.stderr)
    if found is None:
        raise SystemExit(f"no instruction count in callgrind's output: {done.stderr[-500:]}")
    return int(found.group(1).replace(",", ""))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("checkouts", nargs="+", type=Path)
    parser.add_argument("--scenario", default="compute-distinct")
    parser.add_argument("--processes", type=int, default=1000)
    parser.add_argument("--steps", type=int, default=20)
    parser.add_argument("--one", type=int, help=argparse.SUPPRESS)  # a counted process
    options = parser.parse_args()
    if options.one is not None:
        run(
            options.checkouts[0].resolve(),
            options.scenario,
            options.processes,
            options.steps,
            options.one,
        )
        return
    if options.scenario in MERPSYS:
        sys.path[:0] = [str(HERE.parent)]
        from bench_userpath import Sizes, merpsys_case

        computations = merpsys_case(Sizes()).events
        print(f"{options.scenario}: instructions an event ({computations:,} events) and a run")
    else:
        computations = options.processes * options.steps
        print(
            f"{options.scenario} {options.processes:,} x {options.steps}: "
            "instructions a computation"
        )
    first = None
    for path in options.checkouts:
        checkout = path.resolve()
        once = counted(checkout, options.scenario, options.processes, options.steps, 1)
        thrice = counted(checkout, options.scenario, options.processes, options.steps, 3)
        each = (thrice - once) / 2 / computations
        first = each if first is None else first
        print(
            f"{path}: {each:,.0f} ({first / each:.2f}x fewer than the first; "
            f"{(thrice - once) / 2 / 1e6:,.1f} M a run)"
        )


if __name__ == "__main__":
    main()
