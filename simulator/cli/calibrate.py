"""`python -m simulator calibrate --kind KIND FILE.csv`: fit hardware attributes to
measurements (simulator.calibrate) from a CSV file whose header row names the kind's
measurement fields; print the fitted values and the attributes to store (or JSON)."""

from __future__ import annotations

import argparse
import csv
import datetime
import io
import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any, TextIO

from simulator.calibrate import (
    FIELDS,
    KINDS,
    CalibrationInputError,
    CalibrationResult,
    calibrate,
)
from simulator.cli.common import CliError

CLI_CALIBRATE_ERRORS = {
    "read": "cannot read {path}: {reason}",
    "header": "{path}: the header must name the columns {fields}, got {header}",
    "row": "{path} line {line}: {field}: {message}",
}


def read_measurements(kind: str, path: str) -> list[dict[str, Any]]:
    """Return the measurements of a CSV file whose header names the kind's fields."""
    try:
        text = Path(path).read_text(encoding="utf-8-sig")
    except OSError as error:
        reason = error.strerror or str(error)
        raise CliError(CLI_CALIBRATE_ERRORS["read"].format(path=path, reason=reason)) from None
    except UnicodeDecodeError as error:
        raise CliError(CLI_CALIBRATE_ERRORS["read"].format(path=path, reason=error)) from None
    reader = csv.DictReader(io.StringIO(text), skipinitialspace=True)
    fields = FIELDS[kind]
    header = [name.strip() for name in reader.fieldnames or []]
    if sorted(header) != sorted(fields):
        raise CliError(
            CLI_CALIBRATE_ERRORS["header"].format(
                path=path, fields=",".join(fields), header=",".join(header) or "nothing"
            )
        )
    reader.fieldnames = header
    rows: list[dict[str, Any]] = []
    for record in reader:
        if not any((value or "").strip() for value in record.values()):
            continue  # a blank line
        rows.append(
            {
                name: (record[name] or "").strip() if name == "direction" else record[name]
                for name in fields
            }
        )
    return rows


def _cli_message(path: str, error: CalibrationInputError) -> str:
    """Return the first error as "FILE line N: field: message" (line counts the header)."""
    where, messages = next(iter(error.errors.items()))
    if where.startswith("measurements["):
        index, _, field = where[len("measurements[") :].partition("].")
        return CLI_CALIBRATE_ERRORS["row"].format(
            path=path, line=int(index) + 2, field=field or "row", message=" ".join(messages)
        )
    return f"{where}: {' '.join(messages)}"


def _cell(value: object) -> str:
    if isinstance(value, float):
        return f"{value:.9g}"
    return "-" if value is None else str(value)


def format_result(result: CalibrationResult) -> str:
    """Return the fitted values and the attributes to store as plain-text tables."""
    fit = result.fit
    if result.kind == "transfer":
        headers = ["direction", "t_s [s]", "lambda_c", "points", "r2"]
        rows = [
            [name, side["startup_s"], side["lambda_c"], side["count"], side["r2"]]
            for name, side in fit["directions"].items()
        ]
    elif result.kind == "kernel":
        headers = ["lambda_k", "points", "r2"]
        rows = [[fit["lambda_k"], fit["count"], fit["r2"]]]
    else:
        headers = ["E_b [J/block]", "P_s [W]", "a [s/block]", "b [s]", "points", "r2"]
        rows = [
            [
                fit["block_energy_j"],
                fit["static_power_w"],
                fit["time_slope_s"],
                fit["time_intercept_s"],
                fit["count"],
                fit["r2"],
            ]
        ]
    attribute_rows = [[a["key"], a["value"], a["unit"]] for a in result.attributes]
    return "\n".join(
        [_table(headers, rows), "", "Attributes", _table(["key", "value", "unit"], attribute_rows)]
    )


def _table(headers: Sequence[str], rows: Sequence[Sequence[object]]) -> str:
    cells = [[_cell(value) for value in row] for row in rows]
    widths = [max([len(h), *(len(row[i]) for row in cells)]) for i, h in enumerate(headers)]
    lines = ["  ".join(h.ljust(w) for h, w in zip(headers, widths, strict=True)).rstrip()]
    lines += [
        "  ".join(c.ljust(w) for c, w in zip(row, widths, strict=True)).rstrip() for row in cells
    ]
    return "\n".join(lines)


def command_calibrate(args: argparse.Namespace, stdout: TextIO, stderr: TextIO) -> int:
    """Fit the measurements of a CSV file and print the values (table or JSON)."""
    measurements = read_measurements(args.kind, args.measurements)
    try:
        result = calibrate(
            args.kind,
            measurements,
            bandwidth=args.bandwidth,
            idle_power_w=args.idle_power,
            date=datetime.date.today().isoformat(),
        )
    except CalibrationInputError as error:
        raise CliError(_cli_message(args.measurements, error)) from None
    if args.json == "-":
        stdout.write(json.dumps(result.to_dict(), indent=2) + "\n")
    else:
        if args.json is not None:
            try:
                Path(args.json).write_text(json.dumps(result.to_dict(), indent=2) + "\n")
            except OSError as error:
                reason = error.strerror or str(error)
                raise CliError(f"cannot write {args.json}: {reason}") from None
        stdout.write(format_result(result) + "\n")
    return 0


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add the `calibrate` command to the simulator CLI's subparsers (handler in `handler`)."""
    parser = subparsers.add_parser(
        "calibrate",
        help="fit t_s/lambda_c, lambda_k or E_b/P_s to measurements (CSV)",
        description=(
            "CSV columns: transfer: bytes,seconds,direction (HostToDevice|DeviceToHost); "
            "kernel: estimated_s,measured_s (estimated with lambda_k = 1); "
            "energy: blocks,seconds,joules (at least 3 rows)."
        ),
    )
    parser.add_argument("--kind", required=True, choices=KINDS, help="what to calibrate")
    parser.add_argument("--bandwidth", type=float, help="link bandwidth in B/s (transfer)")
    parser.add_argument(
        "--idle-power", type=float, help="known idle power P_s in W (energy; fit E_b only)"
    )
    parser.add_argument("--json", metavar="OUT", help="write the result JSON to OUT ('-': stdout)")
    parser.add_argument("measurements", metavar="MEASUREMENTS.csv", help="measurements (CSV)")
    parser.set_defaults(handler=command_calibrate)
