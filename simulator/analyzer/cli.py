"""`python -m simulator analyze FILE` (and `python -m simulator.analyzer FILE`).

FILE is CUDA source (``.cu``, compiled with nvcc for --arch) or SASS text (anything else).
Prints the parameter set; --json writes it as JSON (``-`` for stdout), --svg draws the
execution graph. Exit status 2 with the analyzer's message on an error.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from simulator.analyzer.analysis import KernelAnalysis, analyze_cuda, analyze_sass
from simulator.analyzer.errors import BAD_STRIDE, BAD_TRIP, MISSING_FILE, NO_ARCH, AnalyzerError


def _pairs(values: Sequence[str], message: str, key_type: type) -> dict[Any, int]:
    result: dict[Any, int] = {}
    for text in values:
        name, _, value = text.partition("=")
        try:
            result[key_type(name.strip())] = int(value)
        except ValueError:
            raise AnalyzerError(message.format(text=text)) from None
        if not name.strip() or not value:
            raise AnalyzerError(message.format(text=text))
    return result


def _add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("file", help="CUDA source (.cu) or SASS text (cuobjdump/nvdisasm/pasted)")
    parser.add_argument("--arch", help="target architecture, e.g. sm_52, sm_80, sm_90")
    parser.add_argument(
        "--trip",
        action="append",
        default=[],
        metavar="NAME=N",
        help="trip count of a loop (loops are named a, b, ... in order)",
    )
    parser.add_argument(
        "--stride",
        action="append",
        default=[],
        metavar="LINE=S",
        help="access stride (elements) of the memory instruction on SASS LINE",
    )
    parser.add_argument("--block", type=int, help="block size for the occupancy")
    parser.add_argument("--registers", type=int, help="registers per thread (SASS input)")
    parser.add_argument("--shared-mem", type=int, default=0, help="shared bytes per block (SASS)")
    parser.add_argument("--kernel", help="kernel name when the input holds several")
    parser.add_argument("--json", metavar="OUT", help="write the JSON parameter set ('-': stdout)")
    parser.add_argument("--svg", metavar="OUT", help="write the execution graph as SVG")


def run(args: argparse.Namespace) -> int:
    """Run the analysis for parsed `args`; return the exit status."""
    try:
        analysis = _analyze(args)
    except AnalyzerError as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    if args.svg:
        Path(args.svg).write_text(analysis.svg())
    if args.json == "-":
        print(json.dumps(analysis.to_dict(), indent=2))
    else:
        print(analysis.summary())
        if args.json:
            Path(args.json).write_text(json.dumps(analysis.to_dict(), indent=2) + "\n")
    return 0


def _analyze(args: argparse.Namespace) -> KernelAnalysis:
    path = Path(args.file)
    if not path.is_file():
        raise AnalyzerError(MISSING_FILE.format(path=path))
    trips = _pairs(args.trip, BAD_TRIP, str)
    strides = _pairs(args.stride, BAD_STRIDE, int)
    if path.suffix in {".cu", ".cuh"}:
        if not args.arch:
            raise AnalyzerError(NO_ARCH)
        return analyze_cuda(
            path, args.arch, trips=trips, strides=strides, kernel=args.kernel, block_size=args.block
        )
    return analyze_sass(
        path.read_text(),
        args.arch,
        trips=trips,
        strides=strides,
        kernel=args.kernel,
        block_size=args.block,
        registers=args.registers,
        shared_mem=args.shared_mem,
    )


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add the `analyze` command to the simulator CLI's subparsers (handler in `func`)."""
    parser = subparsers.add_parser(
        "analyze",
        help="derive INS_cuda, INS_issued, GMem_bytes, Lat_bound from CUDA or SASS",
        description=__doc__,
    )
    _add_arguments(parser)
    parser.set_defaults(func=run)


def main(argv: Sequence[str] | None = None) -> int:
    """Run `python -m simulator.analyzer [analyze] FILE ...`; return the exit status."""
    arguments = list(sys.argv[1:] if argv is None else argv)
    if arguments[:1] == ["analyze"]:
        arguments = arguments[1:]
    parser = argparse.ArgumentParser(prog="python -m simulator.analyzer", description=__doc__)
    _add_arguments(parser)
    return run(parser.parse_args(arguments))
