"""`python -m simulator sweep`: the product of swept variables (simulator.sweep's axes)
and hardware swaps, run at once up to `--jobs`, one row (or JSON entry) per point."""

from __future__ import annotations

import argparse
import concurrent.futures
import itertools
import math
import multiprocessing
import re
from collections.abc import Callable, Mapping, Sequence
from typing import Any, TextIO

from simulator.cli.common import (
    CLI_MESSAGES,
    EXIT_ERROR,
    CliError,
    ProgressBar,
    Runner,
    add_common,
    add_uncertainty,
    load_inputs,
    one_line,
    parse_labels,
    parse_value,
    read_json,
    runner,
    split_pair,
    table,
    uncertainty_options,
    var_pair,
    write_json,
)
from simulator.cli.workload_points import (
    TABLE_METRICS,
    check_axes,
    known_metrics,
    parse_workload_spec,
    refuse_others,
    require_system,
    workload_metrics,
    workload_points,
)
from simulator.cpus import usable_cpus
from simulator.errors import SimulationError
from simulator.model_validity import with_recommended_model
from simulator.models import builtin_models
from simulator.pareto import (
    ObjectiveError,
    check_direction,
    check_metric,
    pareto_flags,
    parse_constraint,
)
from simulator.result_metrics import INTERVAL_METRICS, SUMMARY_METRICS, result_metrics
from simulator.sweep import (
    MAX_POINTS,
    AxisError,
    apply_point,
    parse_axes,
    range_error,
    range_values,
    size_error,
    swap_hardware,
    sweep_points,
)


def _builtin_model(name: str) -> tuple[str, dict[str, Any]] | None:
    """Return the snapshot key and record of the built-in model called `name`, if any."""
    for model in builtin_models():
        if model.name == name:
            record: dict[str, Any] = {
                "name": model.name,
                "language": "javascript",
                "source": model.source,
                "validatedArchitectures": list(model.validated_architectures),
            }
            return "builtin-" + re.sub(r"[^a-z0-9]+", "-", name.lower()).strip("-"), record
    return None


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add the `sweep` command to the command line's subparsers."""
    sweep = subparsers.add_parser("sweep", help="simulate the product of variables and hardware")
    add_common(sweep, sweep=True, workload=True)
    sweep.add_argument(
        "--workload",
        metavar="SPEC",
        help="sweep a training workload's plans instead of a system and application: SPEC is "
        'a JSON object (or a file of one) as POST /api/workloads/sweep/ takes, e.g. \'{"model": '
        '"llama3-70b", "gbs": 512, "recompute": "full"}\', and each --axis a plan axis (tp, pp, '
        "dp, gpus, cp, vp, ep, mbs, gbs, seq, data_parallel, recompute, precision, system)",
    )
    sweep.add_argument(
        "--hardware",
        action="append",
        default=[],
        metavar="NODE=FILE.json,...",
        help="hardware records (JSON) to swap into NODE, one run each; repeatable",
    )
    sweep.add_argument(
        "--axis",
        action="append",
        default=[],
        metavar="AXIS=V1,V2|START:STOP:STEP",
        help="an axis of any kind: a variable (N), a node's hardware attribute "
        "(gpu0.memoryBandwidth), every node of a type's (GPU.SMCoreClock) or a label's "
        "process count with its node's instances (labels.GPU), a topology template's "
        "parameter (topology.nvlink.domainSize, topology.ndr.up[1], topology.ndr.down=8x4) or "
        "endpoint count (topology.ndr.endpoints); repeatable",
    )
    sweep.add_argument(
        "--max-points",
        type=_jobs,
        default=MAX_POINTS,
        metavar="N",
        help="refuse a sweep of more points than this (default %(default)s)",
    )
    sweep.add_argument(
        "--pareto",
        metavar="X,Y",
        help="flag the points on the Pareto front of two metrics (e.g. overall_time_s,cost_usd; "
        "METRIC:max to maximise one), by the web side's rule (simulator.pareto)",
    )
    sweep.add_argument(
        "--constraint",
        action="append",
        default=[],
        metavar="'METRIC OP NUMBER'",
        help="a point is feasible when it holds (e.g. 'gpu_power_w <= 700'); repeatable",
    )
    add_uncertainty(sweep)
    sweep.add_argument(
        "--keep-model",
        action="store_true",
        help="keep the node's model on every swapped-in GPU (default: a GPU outside the "
        "model's validated architectures runs the built-in model its record recommends)",
    )
    sweep.add_argument(
        "--jobs",
        type=_jobs,
        default=len(usable_cpus()),
        metavar="N",
        help="runs at once (default: every core, %(default)s here); results are the same",
    )
    sweep.set_defaults(handler=command_sweep)


def expand_values(text: str) -> list[object]:
    """Return a sweep's values: "1,2,4", or "start:stop:step" with stop included, or both
    (a range's values by simulator.sweep's rule, the web side's too)."""
    values: list[object] = []
    for part in filter(None, (p.strip() for p in text.split(","))):
        if part.count(":") == 2:
            start, stop, step = (parse_value(p) for p in part.split(":"))
            fault = range_error(start, stop, step)
            if fault is not None:
                raise CliError(
                    CLI_MESSAGES["range"].format(
                        option="--var", text=part, part=fault[0], message=fault[1]
                    )
                )
            values.extend(range_values(start, stop, step))  # type: ignore[arg-type]
        else:
            values.append(parse_value(part))
    return values


Outcome = tuple[str, Mapping[str, Any]]  # ("result", result) or ("error", error.to_dict())


def _outcome(run: Runner, payload: Mapping[str, Any]) -> Outcome:
    try:
        return "result", run(payload, None)
    except SimulationError as error:
        return "error", error.to_dict()


def _outcome_in_process(payload: Mapping[str, Any]) -> Outcome:
    """Run one point without the sandbox (in a worker process of `run_points`)."""
    return _outcome(runner(True), payload)


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
        run = runner(no_sandbox, keep_spare=total > 1)
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
        run = runner(False, keep_spare=True)
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


def _hardware_choices(
    specs: Sequence[str], snapshot: Mapping[str, Any]
) -> list[tuple[str, list[tuple[str, dict[str, Any]]]]]:
    """Return, per node, the hardware records a sweep swaps in: [(node, [(path, record)])]."""
    node_ids = {node.get("id") for node in snapshot.get("nodes", []) if isinstance(node, dict)}
    choices: list[tuple[str, list[tuple[str, dict[str, Any]]]]] = []
    for spec in specs:
        node, files = split_pair("--hardware", spec)
        if node not in node_ids:
            raise CliError(CLI_MESSAGES["unknown_node"].format(node=node))
        records = []
        for path in filter(None, (p.strip() for p in files.split(","))):
            record = read_json(path)
            if not isinstance(record, dict) or "attributes" not in record:
                raise CliError(CLI_MESSAGES["hardware"].format(path=path))
            records.append((path, record))
        choices.append((node, records))
    return choices


def _flag_points(
    runs: list[dict[str, Any]], axes: list[str], pareto: str | None, constraints: list[str]
) -> bool:
    """Flag each run `feasible` and `pareto` (simulator.pareto: the web side's rule) when
    `--pareto` or `--constraint` was given; return whether it was."""
    if pareto is None and not constraints:
        return False
    rows = []
    for entry in runs:
        values = {**entry["variables"], **entry.get("axes", {})}
        metrics = result_metrics(entry["result"]) if "result" in entry else {}
        rows.append({**{name: values.get(name) for name in axes}, **metrics})
    known = list(dict.fromkeys([*axes, *SUMMARY_METRICS, *(k for r in rows for k in r)]))
    return flag_rows(runs, rows, known, pareto or "overall_time_s,energy_j", constraints)


def flag_rows(
    runs: list[dict[str, Any]],
    rows: Sequence[Mapping[str, Any]],
    known: Sequence[str],
    pareto: str,
    constraints: Sequence[str],
) -> bool:
    """Flag each run `feasible` and `pareto` by its row of figures (simulator.pareto)."""
    objectives: list[tuple[str, str]] = []
    try:
        for part in pareto.split(","):
            metric, _, direction = part.strip().partition(":")
            objectives.append((check_metric(metric, known), check_direction(direction, metric)))
        if len(objectives) != 2:
            raise ObjectiveError(CLI_MESSAGES["pareto"].format(text=pareto))
        rules = [parse_constraint(text, known) for text in constraints]
    except ObjectiveError as error:
        raise CliError(f"--pareto/--constraint: {error.message}") from error
    for entry, (feasible, front) in zip(runs, pareto_flags(rows, objectives, rules), strict=True):
        entry["feasible"] = feasible
        entry["pareto"] = front
    return True


def command_sweep(args: argparse.Namespace, stdout: TextIO, stderr: TextIO) -> int:
    """Run the product of swept variables and hardware; print a table or JSON."""
    if args.workload is not None:
        return command_workload_sweep(args, stdout, stderr)
    require_system(args)
    snapshot, app_source = load_inputs(args)
    labels = parse_labels(args.labels)
    axes: dict[str, list[object]] = {}
    for name, text in map(var_pair, args.var):
        if name in axes:
            raise CliError(CLI_MESSAGES["repeated"].format(option="--var", name=name))
        axes[name] = expand_values(text)
    for name, text in (split_pair("--axis", spec) for spec in args.axis):
        if name in axes:
            raise CliError(CLI_MESSAGES["repeated"].format(option="--axis", name=name))
        axes[name] = expand_values(text)
    try:
        checked = parse_axes(axes, snapshot)
    except AxisError as error:
        raise CliError(f"--axis {error.field.removeprefix('axes.')}: {error.message}") from error
    hardware = _hardware_choices(args.hardware, snapshot)
    hardware_points = list(
        itertools.product(
            *([(node, path, record) for path, record in records] for node, records in hardware)
        )
    )
    size = math.prod(len(values) for values in axes.values()) * len(hardware_points)
    too_many = size_error(size, args.max_points)
    if too_many is not None:
        raise CliError(too_many)
    entries: list[dict[str, Any]] = []
    payloads: list[dict[str, Any]] = []
    for point in sweep_points(axes):
        for swaps in hardware_points:
            variant = snapshot
            models: dict[str, str | None] = {}
            for index, (node_id, _path, record) in enumerate(swaps):
                variant = swap_hardware(variant, node_id, record, key=f"sweep-{index}-{node_id}")
                if not args.keep_model:
                    variant, model_name, swapped = with_recommended_model(
                        variant, node_id, _builtin_model
                    )
                    if swapped:
                        models[node_id] = model_name
            try:
                variant, point_labels, variables = apply_point(variant, labels, checked, point)
            except AxisError as error:  # a template's rules refusing a point of combined axes
                field = error.field.removeprefix("axes.")
                raise CliError(f"--axis {field}: {error.message}") from error
            entry: dict[str, Any] = {
                "variables": variables,
                "hardware": {node: path for node, path, _ in swaps},
            }
            others = {a.name: point[a.name] for a in checked if a.kind != "variable"}
            if others:  # the attribute and count axes' values
                entry["axes"] = others
            if models:  # the nodes that ran their GPU's recommended model instead
                entry["models"] = models
            entries.append(entry)
            payloads.append(
                {
                    "snapshot": variant,
                    "app_source": app_source,
                    "labels": point_labels,
                    "variables": variables,
                    "seed": args.seed,
                    "timeline_limit": args.timeline_limit,
                    **(
                        {"uncertainty": uncertainty_options(args)}
                        if args.uncertainty is not None
                        else {}
                    ),
                    # only the table is printed: each run returns its summary alone
                    **({"summary": True} if args.json is None else {}),
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
    flagged = _flag_points(runs, list(axes), args.pareto, args.constraint)
    priced = any(entry.get("result", {}).get("cost", {}).get("total") is not None for entry in runs)
    if args.json is not None:
        write_json({"runs": runs}, args.json, stdout)
    if args.json != "-":
        headers = [*axes, *(node for node, _ in hardware)]
        headers += ["overall_time_s", "energy_j", "p_success"]
        interval = args.uncertainty is not None
        headers += list(INTERVAL_METRICS) if interval else []
        headers += ["cost_usd"] if priced else []
        headers += ["feasible", "pareto"] if flagged else []
        rows: list[list[object]] = []
        for entry in runs:
            values = {**entry["variables"], **entry.get("axes", {})}
            row: list[object] = [
                *(values[name] for name in axes),
                *entry["hardware"].values(),
            ]
            if "result" in entry:
                result = entry["result"]
                row += [
                    result["overall_time_s"],
                    result["energy_j"]["total"],
                    result["reliability"]["p_success"],
                ]
                if interval:
                    metrics = result_metrics(result)
                    row += [metrics.get(column) for column in INTERVAL_METRICS]
            else:
                row += ["error: " + one_line(entry["error"]["message"]), None, None]
                row += [None] * len(INTERVAL_METRICS) if interval else []
            if priced:
                row.append(entry.get("result", {}).get("cost", {}).get("total"))
            if flagged:
                row += [entry["feasible"], entry["pareto"]]
            rows.append(row)
        stdout.write(table(headers, rows) + "\n")
    if failed:
        stderr.write(
            "error: " + CLI_MESSAGES["sweep_failed"].format(failed=failed, total=len(runs)) + "\n"
        )
        return EXIT_ERROR
    return 0


def command_workload_sweep(args: argparse.Namespace, stdout: TextIO, stderr: TextIO) -> int:
    """Run the plans of a training workload (`--workload`, simulator.cli.workload_points)
    over its plan axes; print a table (a plan that cannot run with its field and reason)
    or JSON ({"runs": [{point, result, metrics} or {point, invalid} or {point, error}]})."""
    refuse_others(args)
    spec = parse_workload_spec(args.workload)
    raw: dict[str, list[object]] = {}
    for name, text in (split_pair("--axis", spec_text) for spec_text in args.axis):
        if name in raw:
            raise CliError(CLI_MESSAGES["repeated"].format(option="--axis", name=name))
        raw[name] = expand_values(text)
    axes = check_axes(spec, raw)
    too_many = size_error(math.prod(len(values) for values in axes.values()), args.max_points)
    if too_many is not None:
        raise CliError(too_many)
    interval = uncertainty_options(args) if args.uncertainty is not None else None
    points = workload_points(spec, axes, seed=args.seed, uncertainty=interval)
    valid = [p for p in points if p.payload is not None]
    bar = ProgressBar(stderr, "sweeping")
    try:
        outcomes = run_points(
            [p.payload for p in valid if p.payload is not None],
            jobs=args.jobs,
            no_sandbox=args.no_sandbox,
            progress=bar,
        )
    finally:
        bar.close()
    by_point = {id(point): outcome for point, outcome in zip(valid, outcomes, strict=True)}
    runs: list[dict[str, Any]] = []
    rows: list[dict[str, Any]] = []
    failed = 0
    for point in points:
        entry: dict[str, Any] = {"point": point.point}
        metrics: dict[str, Any] = {}
        if point.invalid is not None:
            entry["invalid"] = point.invalid
        else:
            kind, value = by_point[id(point)]
            entry[kind] = value
            failed += kind == "error"
            if kind == "result" and point.basis is not None:
                metrics = workload_metrics(point.basis, value)
                entry["metrics"] = metrics
        runs.append(entry)
        rows.append({**point.point, **metrics})
    flagged = False
    if args.pareto is not None or args.constraint:
        known = list(dict.fromkeys([*axes, *known_metrics()]))
        pareto = args.pareto or "step_time_s,cost_per_step_usd"
        flagged = flag_rows(runs, rows, known, pareto, args.constraint)
    if args.json is not None:
        write_json({"runs": runs}, args.json, stdout)
    if args.json != "-":
        columns = list(TABLE_METRICS)
        if interval is not None:
            columns += [f"step_time_s_{end}" for end in ("low", "high")]
            columns += [f"cost_per_step_usd_{end}" for end in ("low", "high")]
        notes = ["interval_note"] if interval else []
        headers = [*axes, *columns, *notes]
        headers += ["feasible", "pareto"] if flagged else []
        lines: list[list[object]] = []
        for entry in runs:
            line: list[object] = [entry["point"][name] for name in axes]
            if "metrics" in entry:
                metrics = entry["metrics"]
                line += [metrics.get(c) for c in columns]
                line += [_interval_note(metrics)] if interval else []
            else:
                problem = entry.get("invalid") or {}
                text = (
                    f"invalid ({problem['field']}): {problem['reason']}"
                    if "invalid" in entry
                    else "error: " + one_line(entry["error"]["message"])
                )
                line += [one_line(text), *[None] * (len(headers) - len(axes) - 1 - 2 * flagged)]
            line += [entry["feasible"], entry["pareto"]] if flagged else []
            lines.append(line)
        stdout.write(table(headers, lines) + "\n")
    if failed:
        message = CLI_MESSAGES["sweep_failed"].format(failed=failed, total=len(runs))
        stderr.write(f"error: {message}\n")
        return EXIT_ERROR
    return 0


def _interval_note(metrics: Mapping[str, Any]) -> str:
    """Return what a point's interval rests on where not on its GPU's measurements: a
    spec-mode error on other GPUs, or no interval at all (simulator.uncertainty)."""
    parts = [metrics.get("interval_from_spec"), metrics.get("interval_unmeasured")]
    return "; ".join(str(part) for part in parts if part)
