"""`python -m simulator.workloads train|infer ...`: the workload commands without the rest
of the command line (the same as `python -m simulator workload ...`); an impossible plan
exits with status 2 and the reason."""

from __future__ import annotations

import argparse
import sys

from simulator.workloads.cli import add_workload_commands, run_workload


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m simulator.workloads")
    add_workload_commands(parser)
    args = parser.parse_args(argv)
    try:
        return run_workload(args, sys.stdout)
    except ValueError as error:
        print(f"error: {error}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    raise SystemExit(main())
