"""Command line: `python -m simulator run | sweep | study | analyze | calibrate | import-trace |
workload`.

`run` simulates one application model on one system snapshot and prints a summary table
(or the result JSON with `--json -`); `sweep` runs the product of variable lists / ranges
and hardware swaps and prints one row per run; `study` searches the same axes with an
optimiser (simulator.study) for a budget of runs; `analyze` reads a CUDA kernel's counts
(simulator.analyzer); `calibrate` fits hardware attributes to measurements; `import-trace`
turns a profiler trace into an application model (simulator.trace_model). Runs go through
the sandbox (simulator.sandbox.run_sandboxed) unless `--no-sandbox` is given. Any
simulation error or bad argument ends with exit status 2 and a one-line message on stderr;
output whose reader went away (`| head`) ends the command quietly with status 141, as a
process ended by SIGPIPE reports it.

One module per subcommand, each with `register(subparsers)`; `main` imports only the
module of the command it runs (`COMMANDS`), so that `run` and `sweep` start without NumPy
(its import is most of a short run's start), which `analyze` and `calibrate` load.
"""

from __future__ import annotations

import functools
import importlib
import os
import sys

from simulator.cli.common import EXIT_BROKEN_PIPE, EXIT_ERROR, CliError, Parser, one_line
from simulator.errors import SimulationError

TYPE_CHECKING = False  # no `typing` at run time (simulator.cli.common says why)
if TYPE_CHECKING:
    from collections.abc import Sequence
    from typing import TextIO

    from simulator.sandbox.launch import StartedChild

__all__ = ["COMMANDS", "EXIT_ERROR", "CliError", "build_parser", "main", "parser_for"]

# The subcommands, in the order `--help` lists them, and the modules that register them.
COMMANDS = {
    "run": "simulator.cli.run",
    "sweep": "simulator.cli.sweep",
    "study": "simulator.cli.study",
    "analyze": "simulator.cli.analyze",
    "calibrate": "simulator.cli.calibrate",
    "import-trace": "simulator.cli.import_trace",
    "workload": "simulator.cli.workload",
}
# Subcommands left out when their module cannot be imported (a partial installation).
OPTIONAL_COMMANDS = frozenset({"analyze"})


def build_parser(command: str | None = None) -> Parser:
    """Return the `python -m simulator` argument parser; given the `command` about to be
    parsed, only its subcommand is registered (every one for help or an unknown word)."""
    parser = Parser(prog="python -m simulator", description=__doc__.splitlines()[0])
    subparsers = parser.add_subparsers(dest="command", required=True, parser_class=Parser)
    for name in [command] if command in COMMANDS else list(COMMANDS):
        assert name is not None
        try:
            module = importlib.import_module(COMMANDS[name])
        except ImportError:
            if name not in OPTIONAL_COMMANDS:
                raise
            continue
        module.register(subparsers)
    return parser


@functools.cache
def parser_for(command: str | None) -> Parser:
    """Return `build_parser(command)`, built once per process and subcommand (a parser holds
    no state between parses): the daemon builds it once for every run its copies serve
    (simulator.sandbox.pool)."""
    return build_parser(command if command in COMMANDS else None)


def _let_the_output_go(out: TextIO) -> None:
    """Point `out` at /dev/null once its reader has gone, so that nothing more written to it,
    and not the interpreter's last flush, fails again."""
    try:
        fd = out.fileno()
    except (AttributeError, OSError, ValueError):  # not a file (a test's StringIO)
        return
    devnull = os.open(os.devnull, os.O_WRONLY)
    try:
        os.dup2(devnull, fd)
    finally:
        os.close(devnull)


def main(
    argv: Sequence[str] | None = None,
    *,
    stdout: TextIO | None = None,
    stderr: TextIO | None = None,
    child: StartedChild | None = None,
) -> int:
    """Run the command line; return the exit status (2 with a one-line message on errors).

    `child`: a sandbox child started ahead (`launch.start_child_for`), used by a sandboxed
    `run` and discarded otherwise.
    """
    out = stdout or sys.stdout
    err = stderr or sys.stderr
    try:
        arguments = list(sys.argv[1:] if argv is None else argv)
        command = arguments[0] if arguments else None
        args = parser_for(command if command in COMMANDS else None).parse_args(arguments)
        handler = getattr(args, "handler", None)
        if handler is not None and args.command == "run":
            return int(handler(args, out, err, child))
        if handler is not None:
            return int(handler(args, out, err))
        func = getattr(args, "func", None)  # subcommands registered by other modules
        if func is None:  # pragma: no cover - a registered subcommand without a handler
            raise CliError(f"no handler for command {args.command!r}")
        return int(func(args) or 0)
    except (CliError, SimulationError) as error:
        err.write(f"error: {one_line(str(error))}\n")
        return EXIT_ERROR
    except BrokenPipeError:
        _let_the_output_go(out)
        return EXIT_BROKEN_PIPE
    finally:
        if child is not None:
            child.discard()
