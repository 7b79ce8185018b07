"""`python -m simulator import-trace`: a PyTorch profiler (Kineto) trace or an Nsight Systems
SQLite export turned into an application model, a system snapshot to replay it on, and a
report of how each kernel was timed (simulator.trace_model; docs/traces.md).

The trace is read and mapped where the web's upload is: in a sandbox child with the limits of
simulator.trace_sandbox (`import_trace_in_sandbox`), never in this process, so a hostile file
(deep nesting, gigantic numbers, an SQLite export that expands) is refused with the limit it
ran into. A GPU given as a JSON record file is read here (a small record, as the other
commands read hardware files) and sent to the child in front of the hardware seed's records."""

from __future__ import annotations

import argparse
import json
import os
import tempfile

from simulator.cli.common import CLI_MESSAGES, CliError, table
from simulator.gpu_catalogue import GpuCatalogue, seed_catalogue
from simulator.trace_sandbox import MAX_TRACE_BYTES, TraceSandboxError, import_trace_in_sandbox

# The command line's options for the fields a refusal names (simulator.trace_sandbox.FIELDS).
OPTIONS = {
    "measured_gpu": "--measured-gpu",
    "target_gpu": "--target-gpu",
    "system": "--system",
    "ranks": "--ranks",
}
MSG_READ = "cannot read the trace {path}: {reason}"

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping
    from typing import Any, TextIO


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add the `import-trace` command to the command line's subparsers."""
    command = subparsers.add_parser(
        "import-trace",
        help="turn a Kineto trace or an Nsight Systems SQLite export into an application model",
    )
    command.add_argument("trace", help="Kineto JSON (.json or .json.gz) or nsys SQLite export")
    command.add_argument(
        "-o", "--output", required=True, help="application model to write (Python; '-': stdout)"
    )
    command.add_argument("--snapshot", help="also write a system snapshot to replay it on")
    command.add_argument("--report", help="write the import report as JSON ('-': stdout)")
    command.add_argument(
        "--measured-gpu",
        help="the trace's GPU: a catalogue name or a JSON record (default: matched by the "
        "name the trace gives)",
    )
    command.add_argument(
        "--target-gpu", help="predict for this GPU: a catalogue name or a JSON record"
    )
    command.add_argument(
        "--ranks", type=int, default=1, help="ranks that run the traced rank's work (default 1)"
    )
    command.add_argument(
        "--system",
        help="cluster template whose NVLink and InfiniBand join the ranks for the NCCL calls "
        "(dgx-a100, dgx-h100, dgx-b200; default: the target GPU's)",
    )
    command.set_defaults(handler=command_import_trace)


def command_import_trace(args: argparse.Namespace, stdout: TextIO, stderr: TextIO) -> int:
    """Import the trace in the sandbox, write the model (and snapshot and report), print the
    summary."""
    catalogue, measured, target = _catalogue(args.measured_gpu or "", args.target_gpu or "")
    try:
        with open(args.trace, "rb") as file:
            # one byte past the limit is enough for import_trace_in_sandbox to refuse it
            data = file.read(MAX_TRACE_BYTES + 1)
    except OSError as error:
        raise CliError(MSG_READ.format(path=args.trace, reason=error.strerror or error)) from error
    try:
        imported = import_trace_in_sandbox(
            data=data,
            filename=os.path.basename(args.trace),
            catalogue=catalogue,
            measured_gpu=measured,
            target_gpu=target,
            ranks=args.ranks,
            system=args.system,
        )
    except TraceSandboxError as error:
        # a refusal of the trace names its file already; one of an option gets its name
        option = OPTIONS.get(error.field)
        raise CliError(f"{option}: {error.message}" if option else error.message) from error
    # Written only once all of it is ready: a failure above leaves no file behind.
    outputs = [(args.output, imported["app_source"])]
    if args.snapshot:
        outputs.append((args.snapshot, json.dumps(imported["snapshot"], indent=1) + "\n"))
    if args.report:
        outputs.append((args.report, json.dumps(imported["report"], indent=1) + "\n"))
    for target_path, text in outputs:
        _write(target_path, text, stdout)
    if "-" not in (args.output, args.report):
        stdout.write(format_report(imported["report"]) + "\n")
    return 0


def _catalogue(measured: str, target: str) -> tuple[GpuCatalogue, str, str]:
    """Return the catalogue sent to the child and the names it is asked for: a spec that is a
    JSON record file (simulator.trace_model.gpu_record) is read here and its record put in
    front of the hardware seed's; a name is passed on as it is."""
    seed = seed_catalogue()
    own = []
    names = []
    for option, spec in (("--measured-gpu", measured), ("--target-gpu", target)):
        if spec.strip().endswith(".json") and os.path.exists(spec.strip()):
            # Lazy: the kernel models load NumPy, needed here only for a record file.
            from simulator.trace_model import TraceImportError, gpu_record

            try:
                record = gpu_record(spec.strip())
            except TraceImportError as error:
                raise CliError(f"{option}: {error}") from error
            own.append(record)
            names.append(record.name)
        else:
            names.append(spec)
    catalogue = GpuCatalogue([*own, *seed.records], where=seed.where) if own else seed
    return catalogue, names[0], names[1]


def _write(path: str, text: str, stdout: TextIO) -> None:
    if path == "-":
        stdout.write(text)
        return
    directory = os.path.dirname(os.path.abspath(path))
    try:
        handle, temporary = tempfile.mkstemp(dir=directory, prefix=".import-trace-")
        with os.fdopen(handle, "w", encoding="utf-8") as file:
            file.write(text)
        os.replace(temporary, path)
    except OSError as error:
        raise CliError(
            CLI_MESSAGES["write"].format(path=path, reason=error.strerror or error)
        ) from error


def format_report(report: Mapping[str, Any]) -> str:
    """Return the readable text of an import's report."""
    counts = report["counts"]
    lines = [
        f"Trace:      {report['source']}, GPU {report['gpu'] or 'not named'}, rank "
        f"{report['rank']} of {report['world_size']}",
        f"Operations: {counts.get('kernel', 0)} kernels, {counts.get('memcpy', 0)} copies, "
        f"{counts.get('memset', 0)} memsets, {counts.get('collective', 0)} collectives on "
        f"{report['streams']} streams; span {report['span_us'] / 1e3:.6g} ms",
        f"Records:    measured {report['measured_record'] or '-'}, target "
        f"{report['target_record'] or '-'}",
        "Rules:      " + ", ".join(f"{rule} {n}" for rule, n in sorted(report["rules"].items())),
        "Labels:     " + ",".join(f"{label}={n}" for label, n in report["labels"].items()),
    ]
    if "predicted_busy_us" in report:
        lines.append(
            f"GPU time:   measured {report['measured_busy_us'] / 1e3:.6g} ms, predicted "
            f"{report['predicted_busy_us'] / 1e3:.6g} ms (all streams summed)"
        )
    calls = report.get("collectives", {})
    if calls.get("count"):
        network = ", ".join(f"{name} {n}" for name, n in sorted(calls["network"].items()))
        lines.append(
            f"NCCL calls: {calls['count']}; as collectives over "
            f"{calls['fabric'] or 'no network (one rank)'}: {network or 'none'}"
        )
        for note, count in calls.get("notes", {}).items():
            lines.append(f"  note: {count} x {note}")
        for row in calls["unmapped"]:
            lines.append(f"  kept measured: {row['count']} x {row['name'][:60]}: {row['reason']}")
    unmapped = report["unmapped"]
    if unmapped:
        lines.append(f"Not mapped to a kernel model ({len(unmapped)} names, by measured time):")
        lines.append(
            table(
                ["kernel", "count", "measured_us"],
                [
                    [row["name"][:70], row["count"], f"{row['measured_us']:.6g}"]
                    for row in unmapped[:15]
                ],
            )
        )
    return "\n".join(lines)
