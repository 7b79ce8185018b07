"""`python -m simulator workload train|infer ...`: an LLM training step or an inference
batch from the workload library (simulator.workloads, docs/workloads.md), simulated in this
process; an impossible plan ends with status 2 and its reason."""

from __future__ import annotations

import argparse
from typing import TextIO

from simulator.cli.common import CliError, Parser
from simulator.workloads.cli import add_workload_commands, run_workload


def command_workload(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    try:
        return run_workload(args, out)
    except ValueError as error:
        raise CliError(str(error)) from None


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add the `workload` command (handler in `handler`)."""
    parser = subparsers.add_parser(
        "workload", help="LLM training and inference from model configs and parallel plans"
    )
    add_workload_commands(parser, Parser)
    parser.set_defaults(handler=command_workload)
