"""What the command line's subcommands share: errors, parsing, input files, running a
payload (in the sandbox or in this process), progress, tables and JSON output."""

from __future__ import annotations

import argparse
import json
import math
from collections.abc import Callable, Mapping, Sequence

from simulator.sandbox.parent import Limits, RawResult, grown_with_run, run_sandboxed
from simulator.sandbox.wire import encode_json

# What a sandboxed `run` loads here is on its critical path: no `typing`, `pathlib` or
# snapshot parser at run time (the child checks the snapshot; issue 16, start-up).
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, NoReturn, TextIO

    from simulator.sandbox import Progress
    from simulator.sandbox.launch import StartedChild

__all__ = [
    "CLI_MESSAGES",
    "EXIT_BROKEN_PIPE",
    "EXIT_ERROR",
    "CliError",
    "Parser",
    "ProgressBar",
    "Runner",
    "add_common",
    "load_inputs",
    "one_line",
    "parse_labels",
    "parse_value",
    "parse_variables",
    "read_inputs",
    "read_json",
    "read_text",
    "run_once",
    "runner",
    "split_pair",
    "table",
    "var_pair",
    "write_json",
]

EXIT_ERROR = 2
EXIT_BROKEN_PIPE = 128 + 13  # what a shell reports for a process ended by SIGPIPE

CLI_MESSAGES = {
    "pair": "{option} expects NAME=VALUE, got {text!r}",
    "count": "--labels: the count of {label!r} must be a whole number, got {text!r}",
    "repeated": "{option}: {name!r} is given twice; give its values once, e.g. {name}=1,2,4",
    "range": "{option}: in the range {text!r} (start:stop:step), the {part}: {message}",
    "read": "cannot read {path}: {reason}",
    "write": "cannot write {path}: {reason}",
    "encoding": "cannot read {path}: it is not UTF-8 text ({reason})",
    "json": "{path} is not valid JSON: {reason}",
    "hardware": "{path}: a hardware record is an object with type, name and attributes",
    "unknown_node": "--hardware: the system has no node {node!r}",
    "sweep_failed": "{failed} of {total} runs failed",
    "study_failed": "{failed} of {total} trials failed (their runs failed or lack a figure)",
    "jobs": "expected a whole number of runs at once, at least 1, got {text!r}",
    "pareto": "expected two metrics, X,Y (each METRIC or METRIC:min or METRIC:max), got {text!r}",
}


class CliError(Exception):
    """A bad command-line argument or input file (exit status 2)."""


class Parser(argparse.ArgumentParser):
    """An argument parser whose errors are one line and exit with status 2."""

    def error(self, message: str) -> NoReturn:
        raise CliError(message)


# -- parsing -----------------------------------------------------------------------------------
def parse_value(text: str) -> int | float | bool | str:
    """Return a variable's value: int, float, bool ("true"/"false") or the string itself."""
    lowered = text.strip().lower()
    if lowered in ("true", "false"):
        return lowered == "true"
    try:
        return int(text)
    except ValueError:
        pass
    try:
        number = float(text)
    except ValueError:
        return text
    return number if math.isfinite(number) else text


def split_pair(option: str, text: str) -> tuple[str, str]:
    name, sep, value = text.partition("=")
    if not sep or not name.strip():
        raise CliError(CLI_MESSAGES["pair"].format(option=option, text=text))
    return name.strip(), value.strip()


def parse_labels(text: str) -> dict[str, int]:
    """Return label counts from "CPU=1,GPU=2"."""
    labels: dict[str, int] = {}
    for part in filter(None, (p.strip() for p in text.split(","))):
        name, value = split_pair("--labels", part)
        try:
            labels[name] = int(value)
        except ValueError:
            raise CliError(CLI_MESSAGES["count"].format(label=name, text=value)) from None
    return labels


def parse_variables(items: Sequence[str]) -> dict[str, object]:
    """Return variables from repeated NAME=VALUE options."""
    return dict((name, parse_value(value)) for name, value in map(var_pair, items))


def var_pair(text: str) -> tuple[str, str]:
    """Return (name, value) of a NAME=VALUE `--var` option."""
    return split_pair("--var", text)


def read_json(path: str) -> Any:
    text = read_text(path)
    try:
        return json.loads(text)
    except json.JSONDecodeError as error:
        raise CliError(CLI_MESSAGES["json"].format(path=path, reason=error)) from None


def read_text(path: str) -> str:
    try:
        with open(path, encoding="utf-8") as handle:
            return handle.read()
    except OSError as error:
        raise CliError(CLI_MESSAGES["read"].format(path=path, reason=error.strerror)) from None
    except UnicodeDecodeError as error:
        reason = f"byte {error.start}: {error.reason}"
        raise CliError(CLI_MESSAGES["encoding"].format(path=path, reason=reason)) from None


# -- running -----------------------------------------------------------------------------------
Runner = Callable[[Mapping[str, "Any"], "Progress | None"], Mapping[str, "Any"]]


def runner(
    no_sandbox: bool, child: StartedChild | None = None, *, keep_spare: bool = False
) -> Runner:
    """Return a function running one payload (run_simulation's keyword arguments);
    `child`, a sandbox child started ahead, runs the first sandboxed payload; `keep_spare`:
    each sandboxed run starts the next one's child as it ends (a sweep)."""
    if no_sandbox:
        # Imported here: a sandboxed run's process needs neither the runner nor the engine.
        from simulator.runner import prepare_simulation_process, run_simulation

        # this process runs simulations now, as a child would: the same chunk cache and the
        # young threshold kept raised, so that no run's end collects all it left on the way
        # to the result
        prepare_simulation_process()

        def run_in_process(
            payload: Mapping[str, Any], progress: Progress | None
        ) -> Mapping[str, Any]:
            arguments = dict(payload)
            snapshot = arguments.pop("snapshot")
            app_source = arguments.pop("app_source")
            return run_simulation(snapshot, app_source, progress=progress, **arguments)

        return run_in_process

    started = [child] if child is not None else []

    def run_in_sandbox(payload: Mapping[str, Any], progress: Progress | None) -> Mapping[str, Any]:
        child = started.pop() if started else None
        limits = grown_with_run(Limits(), payload)  # the user's run, its result to a file
        return run_sandboxed(
            payload, limits=limits, progress=progress, child=child, keep_spare=keep_spare
        )

    return run_in_sandbox


def run_once(
    payload: Mapping[str, Any],
    progress: Progress | None,
    *,
    no_sandbox: bool,
    child: StartedChild | None = None,
) -> Mapping[str, Any] | RawResult:
    """Run `run`'s one payload: in this process, or in the sandbox (on `child`, started
    ahead) with the result left as the JSON the child sent (RawResult), which `write_json`
    writes out unparsed."""
    if no_sandbox:
        return runner(True)(payload, progress)
    limits = grown_with_run(Limits(), payload)  # the user's run, its result to a file
    return run_sandboxed(payload, limits=limits, progress=progress, child=child, raw_result=True)


class ProgressBar:
    """A one-line progress bar on a terminal (nothing when the stream is not a TTY)."""

    WIDTH = 30

    def __init__(self, stream: TextIO, label: str = "simulating") -> None:
        self.stream = stream
        self.label = label
        self.enabled = stream.isatty()
        self.shown = False

    def __call__(self, fraction: float, simulated_s: float | None = None, /) -> None:
        if not self.enabled:
            return
        filled = round(max(0.0, min(1.0, fraction)) * self.WIDTH)
        bar = "#" * filled + "-" * (self.WIDTH - filled)
        reached = "" if simulated_s is None else f", {simulated_s:.6g} s simulated"
        self.stream.write(f"\r{self.label} [{bar}] {fraction * 100:5.1f}%{reached}")
        self.stream.flush()
        self.shown = True

    def close(self) -> None:
        if self.shown:
            self.stream.write("\n")
            self.stream.flush()
            self.shown = False


def table(headers: Sequence[str], rows: Sequence[Sequence[object]]) -> str:
    """Return a plain-text table with left-aligned columns."""
    columns = list(zip(*rows, strict=True)) if rows else [() for _ in headers]
    return column_table(headers, columns)


def record_table(
    headers: Sequence[str], records: Sequence[Mapping[str, object]], keys: Sequence[str] = ()
) -> str:
    """Return `table` of one row per record: its values under `keys` (default: `headers`)."""
    return column_table(headers, [[record[key] for record in records] for key in keys or headers])


def column_table(headers: Sequence[str], columns: Sequence[Sequence[object]]) -> str:
    """Return `table` of the rows that `columns` hold, one sequence of values per column.

    A column at a time and a row in one format call, not a cell and a pad at a time: the
    summary of a large run has a hundred thousand cells."""
    texts = [_column_texts(column) for column in columns]
    widths = [
        max(len(header), max(map(len, column), default=0))
        for header, column in zip(headers, texts, strict=True)
    ]
    pattern = "  ".join(f"{{:<{width}}}" for width in widths)
    lines = [pattern.format(*headers).rstrip()]
    lines += [pattern.format(*row).rstrip() for row in zip(*texts, strict=True)]
    return "\n".join(lines)


def _column_texts(values: Sequence[object]) -> list[str]:
    """Return the cells of one column as text (`_cell`), a column of one type in one pass."""
    kinds = set(map(type, values))
    if kinds == {float}:
        return [f"{value:.6g}" for value in values]
    if kinds == {str}:
        return list(values)  # type: ignore[arg-type]
    if kinds == {int}:
        return list(map(str, values))
    return [_cell(value) for value in values]


def _cell(value: object) -> str:
    if isinstance(value, float):
        return f"{value:.6g}"
    return "-" if value is None else str(value)


def write_json(data: object, target: str, stdout: TextIO) -> None:
    """Write `data` as one line of compact JSON to `target` ("-": stdout).

    Compact and unindented, as the sandbox child encodes a result (`encode_json`: orjson),
    so that a sandboxed run's result (RawResult) is written as the child sent it, unparsed,
    and the same run in this process (`--no-sandbox`) writes the same bytes. Indenting ran
    Python's pure-Python encoder, which took most of a large result's time, and `json.dumps`
    is much slower than orjson; `python -m json.tool` or jq indent it for reading."""
    # A raw result is written in the pieces it was read in (RawResult says why).
    pieces = (*data.pieces, b"\n") if isinstance(data, RawResult) else (encode_json(data), b"\n")
    if target == "-":
        _write_bytes(stdout, pieces)
        return
    try:
        with open(target, "wb") as handle:
            handle.writelines(pieces)
    except OSError as error:
        raise CliError(CLI_MESSAGES["write"].format(path=target, reason=error.strerror)) from None


def _write_bytes(stream: TextIO, pieces: Sequence[bytes | memoryview]) -> None:
    """Write UTF-8 bytes, given in pieces, to a text stream: to its binary buffer when it has
    one (a 60 MB result is not decoded to be encoded again), else as text (a StringIO in
    tests)."""
    buffer = getattr(stream, "buffer", None)
    if buffer is None:
        stream.write(str(b"".join(pieces), "utf-8"))
        return
    stream.flush()
    buffer.writelines(pieces)
    buffer.flush()


def read_inputs(args: argparse.Namespace) -> tuple[dict[str, Any], str]:
    """Return the snapshot (JSON, not checked: the run checks it) and the application model
    the command line names."""
    return read_json(args.system), read_text(args.app)


def load_inputs(args: argparse.Namespace) -> tuple[dict[str, Any], str]:
    """Return the command line's snapshot, checked (SnapshotError), and application model:
    for a command that runs many (a sweep), before the first."""
    from simulator.snapshot import load_snapshot

    snapshot, app_source = read_inputs(args)
    load_snapshot(snapshot)
    return snapshot, app_source


# -- the parser --------------------------------------------------------------------------------
def add_common(parser: argparse.ArgumentParser, *, sweep: bool, workload: bool = False) -> None:
    """Add the options every run takes; with `workload` (a sweep or study that may take
    `--workload SPEC` instead) the system, application and labels are checked by its
    handler, required only without a workload (simulator.cli.workload_points)."""
    required = not workload
    also = " (unless --workload)" if workload else ""
    parser.add_argument("--system", required=required, help="system snapshot (JSON)" + also)
    parser.add_argument("--app", required=required, help="application model (Python)" + also)
    parser.add_argument(
        "--labels", required=required, help="process counts, e.g. CPU=1,GPU=1" + also
    )
    parser.add_argument(
        "--var",
        action="append",
        default=[],
        metavar="NAME=VALUE" if not sweep else "NAME=V1,V2|START:STOP:STEP",
        help="a launch variable (int, float, true/false or string); repeatable"
        + ("; lists and inclusive ranges are swept" if sweep else ""),
    )
    parser.add_argument("--json", metavar="OUT", help="write the result JSON to OUT ('-': stdout)")
    parser.add_argument("--seed", type=int, default=0, help="random seed (default 0)")
    parser.add_argument(
        "--timeline-limit", type=int, default=10_000, help="timeline entries kept (default 10000)"
    )
    parser.add_argument(
        "--no-sandbox", action="store_true", help="run in this process (trusted models only)"
    )


def add_uncertainty(parser: argparse.ArgumentParser) -> None:
    """Add the prediction interval's options (simulator.uncertainty) to `parser`."""
    parser.add_argument(
        "--uncertainty",
        type=int,
        metavar="N",
        help="a 5-95 %% prediction interval of time and energy from N Monte Carlo samples over "
        "the records' uncertain attributes (docs/uncertainty.md; at most 200)",
    )
    parser.add_argument(
        "--uncertainty-seed",
        type=int,
        default=0,
        metavar="S",
        help="seed of the interval's draws (default %(default)s)",
    )
    parser.add_argument(
        "--uncertainty-scale",
        type=float,
        default=1.0,
        metavar="F",
        help="multiply every spread by F (default %(default)s; 0 gives the plain run)",
    )


def uncertainty_options(args: argparse.Namespace) -> dict[str, Any]:
    """Return the run payload's `uncertainty` from the command line's options."""
    return {
        "samples": args.uncertainty,
        "seed": args.uncertainty_seed,
        "scale": args.uncertainty_scale,
    }


def uncertainty_lines(interval: Mapping[str, Any]) -> list[str]:
    """Return the summary's lines of a run's prediction interval (simulator.uncertainty)."""
    low, high = interval["percentiles"]
    time_s, energy_j = interval["overall_time_s"], interval["energy_j"]
    perturbed = interval["perturbed"]
    lines = [
        f"Interval:     time median {time_s['median']:.9g} s, {low:g}-{high:g} % "
        f"{time_s['low']:.9g} to {time_s['high']:.9g} s; energy median "
        f"{energy_j['median']:.6g} J, {energy_j['low']:.6g} to {energy_j['high']:.6g} J",
        f"  ({interval['samples']} samples, seed {interval['seed']}, scale "
        f"{interval['scale']:g}; {len(perturbed)} quantities perturbed"
        + (
            ": " + ", ".join(f"{p['hardware']}.{p['name']}" for p in perturbed) + ")"
            if perturbed
            else ")"
        ),
    ]
    return lines


def one_line(message: str) -> str:
    return "; ".join(line.strip() for line in message.splitlines() if line.strip())
