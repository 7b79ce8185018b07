"""Two or more checkouts' `python -m simulator run` against each other, rounds interleaved.

A diagnostic, not a benchmark of record (bench_userpath.py measures the user's path): whether a
change made the user's command faster when the machine's noise is as large as the change. Each
checkout runs the same bench_userpath.py scenario with its own interpreter
(CHECKOUT/.venv/bin/python, else this one) from its own directory, so each has its own pool
daemon (a pool's name depends on the files of `simulator/`), both private to this script
(`cli_pool.private_pool`). Every round runs each checkout once, the order turning each round,
and the pools settle after every command. Prints per checkout the median and minimum of the
whole command and of the run's `stats.wall_s` (from the result JSON it prints, or with
`--summary` writes to a file while it prints the summary; with `--summary-alone`, the engine's
time as the summary prints it); quote them with the machine and the number of rounds.

    .venv/bin/python bench/ab_checkouts.py --scenario compute-1000 --rounds 31 /tmp/before .
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT / "bench")]

import bench_userpath  # noqa: E402
from cli_pool import private_pool, settle  # noqa: E402

SCENARIOS = {
    "startup": lambda: bench_userpath.compute_case(1, 1, 0, title="startup: one computation"),
    "compute-100": lambda: bench_userpath.compute_case(100, 20, 0),
    "compute-1000": lambda: bench_userpath.compute_case(1000, 20, 0),
    "compute-10000": lambda: bench_userpath.compute_case(10_000, 20, 0),
    "pairs": lambda: bench_userpath.pairs_case(bench_userpath.Sizes(), 0),
    "collectives": lambda: bench_userpath.collectives_case(bench_userpath.Sizes(), 0),
    "merpsys": lambda: bench_userpath.merpsys_case(bench_userpath.Sizes()),
    "merpsys-edited": lambda: bench_userpath.merpsys_case(bench_userpath.Sizes(), edited=True),
    **{
        f"{scenario}-{processes}": (
            lambda scenario=scenario, processes=processes: bench_userpath.compute_case(
                processes, 20, 0, scenario=scenario
            )
        )
        for scenario in ("compute-distinct", "compute-edited")
        for processes in (100, 1000, 10_000)
    },
    "large-result": lambda: bench_userpath.large_result_case(bench_userpath.Sizes()),
}


def command_of(
    checkout: Path,
    files: dict[str, Path],
    inputs: bench_userpath.ParaSimInputs,
    json_to: str | None,
) -> list[str]:
    """Return the scenario's sandboxed command line for `checkout`'s interpreter: the result
    JSON on stdout (`json_to` "-"), or in that file with the summary printed, or (None) the
    summary alone."""
    argv = bench_userpath.cli_argv(files, inputs, sandbox=True, json_to=json_to)
    python = checkout / ".venv" / "bin" / "python"
    argv[0] = str(python if python.exists() else Path(sys.executable))
    return argv


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("checkouts", nargs="+", type=Path, help="repository roots")
    parser.add_argument("--scenario", choices=sorted(SCENARIOS), default="compute-1000")
    parser.add_argument("--rounds", type=int, default=21)
    parser.add_argument(
        "--summary", action="store_true", help="the summary printed, the JSON in a file"
    )
    parser.add_argument(
        "--summary-alone",
        action="store_true",
        help="the summary printed and no JSON (no --json: the run returns its summary)",
    )
    args = parser.parse_args()

    checkouts = [path.resolve() for path in args.checkouts]
    inputs = SCENARIOS[args.scenario]().parasim
    walls: dict[Path, list[float]] = {path: [] for path in checkouts}
    runs: dict[Path, list[float]] = {path: [] for path in checkouts}
    with tempfile.TemporaryDirectory() as scratch:
        files = bench_userpath.write_inputs(Path(scratch), inputs)
        result_file = Path(scratch) / "result.json"
        json_to = None if args.summary_alone else str(result_file) if args.summary else "-"
        commands = {path: command_of(path, files, inputs, json_to) for path in checkouts}
        with private_pool(commands[checkouts[0]]):
            for path in checkouts:  # each daemon started and its first run paid
                subprocess.run(commands[path], cwd=path, check=True, capture_output=True)
                settle()
            for round_ in range(args.rounds):
                turn = round_ % len(checkouts)
                for path in checkouts[turn:] + checkouts[:turn]:
                    start = time.perf_counter()
                    done = subprocess.run(commands[path], cwd=path, check=True, capture_output=True)
                    walls[path].append(time.perf_counter() - start)
                    if args.summary_alone:  # the engine's time as the summary prints it
                        run_s = bench_userpath.summary_figures(done.stdout.decode())[2]
                    else:
                        printed = result_file.read_bytes() if args.summary else done.stdout
                        run_s = json.loads(printed)["stats"]["wall_s"]
                    runs[path].append(run_s)
                    settle()
    what = (
        "summary alone" if args.summary_alone else "summary printed" if args.summary else "--json -"
    )
    print(f"{args.scenario} ({what}), {args.rounds} rounds interleaved (ms: median, min)")
    for path in checkouts:
        wall, run = walls[path], runs[path]
        print(
            f"  {path!s:40s} command {1e3 * statistics.median(wall):7.1f} {1e3 * min(wall):7.1f}"
            f"   run_simulation {1e3 * statistics.median(run):7.1f} {1e3 * min(run):7.1f}"
        )


if __name__ == "__main__":
    main()
