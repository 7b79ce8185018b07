"""Command line: `python -m simulator run | sweep | analyze | calibrate`.

`run` simulates one application model on one system snapshot and prints a summary table
(or the result JSON with `--json -`); `sweep` runs the product of variable lists / ranges
and hardware swaps and prints one row per run. Runs go through the sandbox
(simulator.sandbox.run_sandboxed) unless `--no-sandbox` is given. Any simulation error or bad
argument ends with exit status 2 and a one-line message on stderr.
"""

from __future__ import annotations

import argparse
import concurrent.futures
import itertools
import json
import math
import multiprocessing
import sys
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any, NoReturn, TextIO

from simulator.cpus import usable_cpus
from simulator.errors import SimulationError
from simulator.launch import StartedChild
from simulator.snapshot import load_snapshot

EXIT_ERROR = 2

CLI_MESSAGES = {
    "pair": "{option} expects NAME=VALUE, got {text!r}",
    "count": "--labels: the count of {label!r} must be a whole number, got {text!r}",
    "range": "{option}: a range is start:stop:step with step > 0, got {text!r}",
    "read": "cannot read {path}: {reason}",
    "write": "cannot write {path}: {reason}",
    "encoding": "cannot read {path}: it is not UTF-8 text ({reason})",
    "json": "{path} is not valid JSON: {reason}",
    "hardware": "{path}: a hardware record is an object with type, name and attributes",
    "unknown_node": "--hardware: the system has no node {node!r}",
    "sweep_failed": "{failed} of {total} runs failed",
    "jobs": "expected a whole number of runs at once, at least 1, got {text!r}",
}


class CliError(Exception):
    """A bad command-line argument or input file (exit status 2)."""


class _Parser(argparse.ArgumentParser):
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


def _split_pair(option: str, text: str) -> tuple[str, str]:
    name, sep, value = text.partition("=")
    if not sep or not name.strip():
        raise CliError(CLI_MESSAGES["pair"].format(option=option, text=text))
    return name.strip(), value.strip()


def parse_labels(text: str) -> dict[str, int]:
    """Return label counts from "CPU=1,GPU=2"."""
    labels: dict[str, int] = {}
    for part in filter(None, (p.strip() for p in text.split(","))):
        name, value = _split_pair("--labels", part)
        try:
            labels[name] = int(value)
        except ValueError:
            raise CliError(CLI_MESSAGES["count"].format(label=name, text=value)) from None
    return labels


def parse_variables(items: Sequence[str]) -> dict[str, object]:
    """Return variables from repeated NAME=VALUE options."""
    return dict((name, parse_value(value)) for name, value in map(_var_pair, items))


def _var_pair(text: str) -> tuple[str, str]:
    return _split_pair("--var", text)


def expand_values(text: str) -> list[object]:
    """Return a sweep's values: "1,2,4", or "start:stop:step" with stop included, or both."""
    values: list[object] = []
    for part in filter(None, (p.strip() for p in text.split(","))):
        if part.count(":") == 2:
            pieces = [parse_value(p) for p in part.split(":")]
            if not all(isinstance(p, int | float) and not isinstance(p, bool) for p in pieces):
                raise CliError(CLI_MESSAGES["range"].format(option="--var", text=part))
            start, stop, step = (float(p) for p in pieces)
            if step <= 0:
                raise CliError(CLI_MESSAGES["range"].format(option="--var", text=part))
            integral = all(isinstance(p, int) for p in pieces)
            steps = math.floor((stop - start) / step + 1e-9)
            for index in range(steps + 1):
                value = start + index * step
                values.append(round(value) if integral else value)
        else:
            values.append(parse_value(part))
    return values


def _read_json(path: str) -> Any:
    text = _read_text(path)
    try:
        return json.loads(text)
    except json.JSONDecodeError as error:
        raise CliError(CLI_MESSAGES["json"].format(path=path, reason=error)) from None


def _read_text(path: str) -> str:
    try:
        return Path(path).read_text(encoding="utf-8")
    except OSError as error:
        raise CliError(CLI_MESSAGES["read"].format(path=path, reason=error.strerror)) from None
    except UnicodeDecodeError as error:
        reason = f"byte {error.start}: {error.reason}"
        raise CliError(CLI_MESSAGES["encoding"].format(path=path, reason=reason)) from None


# -- running -----------------------------------------------------------------------------------
Runner = Callable[[Mapping[str, Any], "Callable[[float], None] | None"], dict[str, Any]]


def _runner(
    no_sandbox: bool, child: StartedChild | None = None, *, keep_spare: bool = False
) -> Runner:
    """Return a function running one payload (run_simulation's keyword arguments);
    `child`, a sandbox child started ahead, runs the first sandboxed payload; `keep_spare`:
    each sandboxed run starts the next one's child as it ends (a sweep)."""
    if no_sandbox:
        from simulator.runner import run_simulation

        def run_in_process(
            payload: Mapping[str, Any], progress: Callable[[float], None] | None
        ) -> dict[str, Any]:
            arguments = dict(payload)
            snapshot = arguments.pop("snapshot")
            app_source = arguments.pop("app_source")
            return run_simulation(snapshot, app_source, progress=progress, **arguments)

        return run_in_process

    from simulator.sandbox import run_sandboxed

    started = [child] if child is not None else []

    def run_in_sandbox(
        payload: Mapping[str, Any], progress: Callable[[float], None] | None
    ) -> dict[str, Any]:
        child = started.pop() if started else None
        return run_sandboxed(payload, progress=progress, child=child, keep_spare=keep_spare)

    return run_in_sandbox


Outcome = tuple[str, dict[str, Any]]  # ("result", result) or ("error", error.to_dict())


def _outcome(run: Runner, payload: Mapping[str, Any]) -> Outcome:
    try:
        return "result", run(payload, None)
    except SimulationError as error:
        return "error", error.to_dict()


def _outcome_in_process(payload: Mapping[str, Any]) -> Outcome:
    """Run one point without the sandbox (in a worker process of `run_points`)."""
    return _outcome(_runner(True), payload)


def run_points(
    payloads: Sequence[Mapping[str, Any]],
    *,
    jobs: int,
    no_sandbox: bool,
    progress: Callable[[float], None] | None = None,
) -> list[Outcome]:
    """Return each payload's outcome, in order, running up to `jobs` at once.

    Sandboxed runs are child processes already, so threads only wait for them; without the
    sandbox the runs go to worker processes (the GIL would serialise threads), spawned, not
    forked, because a V8 context this process holds would be unusable in a fork. Either
    way every point runs alone with its own seed, so the outcomes are those of a serial sweep.
    """
    total = len(payloads)
    outcomes: list[Outcome | None] = [None] * total
    done = 0
    jobs = max(1, min(jobs, total))
    if jobs == 1:
        run = _runner(no_sandbox, keep_spare=total > 1)
        for number, payload in enumerate(payloads):
            outcomes[number] = _outcome(run, payload)
            if progress is not None:
                progress((number + 1) / total)
        return [outcome for outcome in outcomes if outcome is not None]
    executor: concurrent.futures.Executor
    if no_sandbox:
        executor = concurrent.futures.ProcessPoolExecutor(
            jobs, mp_context=multiprocessing.get_context("spawn")
        )
        futures = {executor.submit(_outcome_in_process, p): n for n, p in enumerate(payloads)}
    else:
        run = _runner(False, keep_spare=True)
        executor = concurrent.futures.ThreadPoolExecutor(jobs)
        futures = {executor.submit(_outcome, run, p): n for n, p in enumerate(payloads)}
    with executor:
        for future in concurrent.futures.as_completed(futures):
            outcomes[futures[future]] = future.result()
            done += 1
            if progress is not None:
                progress(done / total)
    return [outcome for outcome in outcomes if outcome is not None]


def _jobs(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        value = 0
    if value < 1:
        raise argparse.ArgumentTypeError(CLI_MESSAGES["jobs"].format(text=text))
    return value


class ProgressBar:
    """A one-line progress bar on a terminal (nothing when the stream is not a TTY)."""

    WIDTH = 30

    def __init__(self, stream: TextIO, label: str = "simulating") -> None:
        self.stream = stream
        self.label = label
        self.enabled = stream.isatty()
        self.shown = False

    def __call__(self, fraction: float) -> None:
        if not self.enabled:
            return
        filled = round(max(0.0, min(1.0, fraction)) * self.WIDTH)
        bar = "#" * filled + "-" * (self.WIDTH - filled)
        self.stream.write(f"\r{self.label} [{bar}] {fraction * 100:5.1f}%")
        self.stream.flush()
        self.shown = True

    def close(self) -> None:
        if self.shown:
            self.stream.write("\n")
            self.stream.flush()
            self.shown = False


def _table(headers: Sequence[str], rows: Sequence[Sequence[object]]) -> str:
    """Return a plain-text table with left-aligned columns."""
    cells = [[_cell(value) for value in row] for row in rows]
    widths = [max([len(h), *(len(row[i]) for row in cells)]) for i, h in enumerate(headers)]
    lines = ["  ".join(h.ljust(w) for h, w in zip(headers, widths, strict=True)).rstrip()]
    for row in cells:
        lines.append("  ".join(c.ljust(w) for c, w in zip(row, widths, strict=True)).rstrip())
    return "\n".join(lines)


def _cell(value: object) -> str:
    if isinstance(value, float):
        return f"{value:.6g}"
    return "-" if value is None else str(value)


def format_summary(result: Mapping[str, Any], *, system_name: str = "") -> str:
    """Return the readable summary of a result: totals, processes, components, engine."""
    lines = []
    if system_name:
        lines.append(f"System:       {system_name}")
    overall = result["overall_time_s"]
    lines.append(f"Overall time: {overall:.9g} s")
    lines.append(f"Energy:       {result['energy_j']['total']:.6g} J")
    lines.append(f"Reliability:  P(success) = {result['reliability']['p_success']:.9g}")
    lines.append("")
    lines.append("Processes")
    lines.append(
        _table(
            ["process", "node", "instance", "compute_s", "comm_s", "wait_s", "finish_s"],
            [
                [
                    p["process"],
                    p["node"],
                    p["instance"],
                    p["compute_s"],
                    p["comm_s"],
                    p["wait_s"],
                    p["finish_s"],
                ]
                for p in result["processes"]
            ],
        )
    )
    lines.append("")
    lines.append("Components")
    lines.append(
        _table(
            ["node", "instance", "hardware", "busy_s", "utilisation", "energy_j"],
            [
                [
                    c["node"],
                    c["instance"],
                    c["hardware"],
                    c["busy_s"],
                    c["utilisation"],
                    c["energy_j"],
                ]
                for c in result["components"]
            ],
        )
    )
    memory = result.get("memory")
    if memory:
        lines.append("")
        lines.extend(_memory_summary(memory))
    stats = result["stats"]
    lines.append("")
    lines.append(
        f"Engine: {stats['events']} events in {stats['wall_s']:.3g} s "
        f"({stats['events_per_s']:.3g} events/s); timeline {len(result['timeline'])} entries, "
        f"{result.get('timeline_dropped', 0)} dropped"
    )
    return "\n".join(lines)


def _memory_summary(memory: Mapping[str, Any]) -> list[str]:
    """Return the memory hierarchy's lines: each node's instances summed, fabrics, messages."""
    totals: dict[str, dict[str, Any]] = {}
    for level in memory["levels"]:
        row = totals.setdefault(
            level["node"],
            {
                "node": level["node"],
                "type": level["type"],
                "instances": 0,
                "accesses": 0,
                "hits": 0,
                "misses": 0,
                "writebacks": 0,
                "invalidations": 0,
                "bytes": 0.0,
            },
        )
        row["instances"] += 1
        for key in ("accesses", "hits", "misses", "writebacks", "invalidations", "bytes"):
            row[key] += level[key]
    lines = ["Memory hierarchy (instances summed)"]
    lines.append(
        _table(
            [
                "node",
                "instances",
                "accesses",
                "hits",
                "hit_ratio",
                "misses",
                "writebacks",
                "invalidations",
                "bytes",
            ],
            [
                [
                    row["node"],
                    row["instances"],
                    row["accesses"],
                    row["hits"],
                    row["hits"] / row["accesses"]
                    if row["type"] == "CACHE" and row["accesses"]
                    else "-",
                    row["misses"],
                    row["writebacks"],
                    row["invalidations"],
                    row["bytes"],
                ]
                for row in totals.values()
            ],
        )
    )
    if memory["fabrics"]:
        lines.append("")
        lines.append(
            _table(
                ["fabric", "instance", "topology", "messages", "bytes", "hops", "utilisation"],
                [
                    [
                        f["node"],
                        f["instance"],
                        f["topology"],
                        f["messages"],
                        f["bytes"],
                        f["hops"],
                        f["utilisation"],
                    ]
                    for f in memory["fabrics"]
                ],
            )
        )
    coherence = memory["coherence"]
    messages = ", ".join(f"{name} {count}" for name, count in coherence["messages"].items())
    lines.append("")
    lines.append(f"Coherence: {coherence['protocol']}; messages: {messages or 'none'}")
    return lines


def _write_json(data: object, target: str, stdout: TextIO) -> None:
    # One line, not indented: indenting runs Python's pure-Python encoder, 9 s of a 60 MB
    # result's 13 (issue 16); `python -m json.tool` or jq indent it for reading.
    text = json.dumps(data)
    if target == "-":
        stdout.write(text + "\n")
    else:
        try:
            Path(target).write_text(text + "\n", encoding="utf-8")
        except OSError as error:
            raise CliError(
                CLI_MESSAGES["write"].format(path=target, reason=error.strerror)
            ) from None


def _load_inputs(args: argparse.Namespace) -> tuple[dict[str, Any], str]:
    snapshot = _read_json(args.system)
    load_snapshot(snapshot)  # fail fast, before a sandbox is started
    return snapshot, _read_text(args.app)


def command_run(
    args: argparse.Namespace, stdout: TextIO, stderr: TextIO, child: StartedChild | None = None
) -> int:
    """Run one simulation and print its summary or JSON; return the exit status.

    `child`: the sandbox child `python -m simulator` started ahead for this run.
    """
    snapshot, app_source = _load_inputs(args)
    payload = {
        "snapshot": snapshot,
        "app_source": app_source,
        "labels": parse_labels(args.labels),
        "variables": parse_variables(args.var),
        "seed": args.seed,
        "timeline_limit": args.timeline_limit,
    }
    bar = ProgressBar(stderr)
    try:
        result = _runner(args.no_sandbox, None if args.no_sandbox else child)(payload, bar)
    finally:
        bar.close()
    if args.json is not None:
        _write_json(result, args.json, stdout)
    if args.json != "-":
        stdout.write(format_summary(result, system_name=str(snapshot.get("name", ""))) + "\n")
    return 0


def _hardware_choices(
    specs: Sequence[str], snapshot: Mapping[str, Any]
) -> list[tuple[str, list[tuple[str, dict[str, Any]]]]]:
    """Return, per node, the hardware records a sweep swaps in: [(node, [(path, record)])]."""
    node_ids = {node.get("id") for node in snapshot.get("nodes", []) if isinstance(node, dict)}
    choices: list[tuple[str, list[tuple[str, dict[str, Any]]]]] = []
    for spec in specs:
        node, files = _split_pair("--hardware", spec)
        if node not in node_ids:
            raise CliError(CLI_MESSAGES["unknown_node"].format(node=node))
        records = []
        for path in filter(None, (p.strip() for p in files.split(","))):
            record = _read_json(path)
            if not isinstance(record, dict) or "attributes" not in record:
                raise CliError(CLI_MESSAGES["hardware"].format(path=path))
            records.append((path, record))
        choices.append((node, records))
    return choices


def _swap_hardware(
    snapshot: Mapping[str, Any], swaps: Sequence[tuple[str, str, dict[str, Any]]]
) -> dict[str, Any]:
    """Return a copy of `snapshot` where each (node, path, record) node uses `record`."""
    copy = json.loads(json.dumps(snapshot))
    for index, (node_id, _path, record) in enumerate(swaps):
        key = f"sweep-{index}-{node_id}"
        copy["hardware"][key] = record
        for node in copy["nodes"]:
            if node.get("id") == node_id:
                node["hardware"] = key
    return copy


def command_sweep(args: argparse.Namespace, stdout: TextIO, stderr: TextIO) -> int:
    """Run the product of swept variables and hardware; print a table or JSON."""
    snapshot, app_source = _load_inputs(args)
    labels = parse_labels(args.labels)
    swept = [(name, expand_values(value)) for name, value in map(_var_pair, args.var)]
    hardware = _hardware_choices(args.hardware, snapshot)
    variable_points = list(itertools.product(*(values for _, values in swept)))
    hardware_points = list(
        itertools.product(
            *([(node, path, record) for path, record in records] for node, records in hardware)
        )
    )
    points = list(itertools.product(variable_points, hardware_points))
    entries: list[dict[str, Any]] = []
    payloads: list[dict[str, Any]] = []
    for values, swaps in points:
        variables = {name: values[i] for i, (name, _) in enumerate(swept)}
        entries.append(
            {"variables": variables, "hardware": {node: path for node, path, _ in swaps}}
        )
        payloads.append(
            {
                "snapshot": _swap_hardware(snapshot, swaps) if swaps else snapshot,
                "app_source": app_source,
                "labels": labels,
                "variables": variables,
                "seed": args.seed,
                "timeline_limit": args.timeline_limit,
            }
        )
    bar = ProgressBar(stderr, "sweeping")
    try:
        outcomes = run_points(payloads, jobs=args.jobs, no_sandbox=args.no_sandbox, progress=bar)
    finally:
        bar.close()
    failed = 0
    runs: list[dict[str, Any]] = []
    for entry, (kind, value) in zip(entries, outcomes, strict=True):
        entry[kind] = value
        failed += kind == "error"
        runs.append(entry)
    if args.json is not None:
        _write_json({"runs": runs}, args.json, stdout)
    if args.json != "-":
        headers = [name for name, _ in swept] + [node for node, _ in hardware]
        headers += ["overall_time_s", "energy_j", "p_success"]
        rows: list[list[object]] = []
        for entry in runs:
            row: list[object] = [*entry["variables"].values(), *entry["hardware"].values()]
            if "result" in entry:
                result = entry["result"]
                row += [
                    result["overall_time_s"],
                    result["energy_j"]["total"],
                    result["reliability"]["p_success"],
                ]
            else:
                row += ["error: " + _one_line(entry["error"]["message"]), None, None]
            rows.append(row)
        stdout.write(_table(headers, rows) + "\n")
    if failed:
        stderr.write(
            "error: " + CLI_MESSAGES["sweep_failed"].format(failed=failed, total=len(runs)) + "\n"
        )
        return EXIT_ERROR
    return 0


# -- the parser --------------------------------------------------------------------------------
def _add_common(parser: argparse.ArgumentParser, *, sweep: bool) -> None:
    parser.add_argument("--system", required=True, help="system snapshot (JSON)")
    parser.add_argument("--app", required=True, help="application model (Python)")
    parser.add_argument("--labels", required=True, help="process counts, e.g. CPU=1,GPU=1")
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


# Subcommands whose modules load NumPy: registered only when asked for (or for the top-level
# help), so that `run` and `sweep` start without them (issue 16: NumPy cost 125 ms a run).
HEAVY_COMMANDS = ("analyze", "calibrate")


def build_parser(command: str | None = None) -> argparse.ArgumentParser:
    """Return the `python -m simulator` argument parser; given the `command` about to be
    parsed ("run", "sweep"), only the subcommands that do not load NumPy are registered."""
    parser = _Parser(prog="python -m simulator", description=__doc__.splitlines()[0])
    subparsers = parser.add_subparsers(dest="command", required=True, parser_class=_Parser)
    run = subparsers.add_parser("run", help="simulate one application on one system")
    _add_common(run, sweep=False)
    run.set_defaults(handler=command_run)
    sweep = subparsers.add_parser("sweep", help="simulate the product of variables and hardware")
    _add_common(sweep, sweep=True)
    sweep.add_argument(
        "--hardware",
        action="append",
        default=[],
        metavar="NODE=FILE.json,...",
        help="hardware records (JSON) to swap into NODE, one run each; repeatable",
    )
    sweep.add_argument(
        "--jobs",
        type=_jobs,
        default=len(usable_cpus()),
        metavar="N",
        help="runs at once (default: every core, %(default)s here); results are the same",
    )
    sweep.set_defaults(handler=command_sweep)
    if command in ("run", "sweep"):
        return parser
    try:
        from simulator.analyzer.cli import register
    except ImportError:
        pass
    else:
        register(subparsers)
    from simulator.calibrate import register as register_calibrate

    register_calibrate(subparsers)
    return parser


def _one_line(message: str) -> str:
    return "; ".join(line.strip() for line in message.splitlines() if line.strip())


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
        args = build_parser(command).parse_args(arguments)
        handler = getattr(args, "handler", None)
        if handler is command_run:
            return command_run(args, out, err, child)
        if handler is not None:
            return int(handler(args, out, err))
        func = getattr(args, "func", None)  # subcommands registered by other modules
        if func is None:  # pragma: no cover - a registered subcommand without a handler
            raise CliError(f"no handler for command {args.command!r}")
        return int(func(args) or 0)
    except (CliError, SimulationError) as error:
        err.write(f"error: {_one_line(str(error))}\n")
        return EXIT_ERROR
    finally:
        if child is not None:
            child.discard()
