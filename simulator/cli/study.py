"""`python -m simulator study`: an optimiser's search over a sweep's axes, run here.

The web side's study (webapp.studio.services.studies) in this process: the same search space
(simulator.study: a list is categorical, START:STOP:STEP an ordered range never listed, one
value fixed), the same axis checks (simulator.sweep.parse_axes), objectives, constraints and
samplers (TPE for one objective, NSGA-II for several), with Optuna's storage in memory, or
with `--storage` in a database (a SQLAlchemy URL, or a file path: SQLite) where a study of
`--study-name` goes on from the trials it holds: `--trials` more are run, none asked again
(simulator.study.resumed_seed), and every trial it holds is printed.
The hardware records a sweep's `--hardware NODE=FILE,...` swaps in are one more dimension,
`hardware:NODE`, valued by the files (as the web side's `hardware`, by component names).
`--parallel` points are asked for at a time and run at once (as a sweep's `--jobs`).
"""

from __future__ import annotations

import argparse
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, TextIO

from simulator.cli.common import (
    CLI_MESSAGES,
    EXIT_ERROR,
    CliError,
    ProgressBar,
    add_common,
    add_uncertainty,
    load_inputs,
    one_line,
    parse_labels,
    parse_value,
    split_pair,
    table,
    uncertainty_options,
    var_pair,
    write_json,
)
from simulator.cli.sweep import _builtin_model, _hardware_choices, _jobs, run_points
from simulator.cli.workload_points import (
    check_axes,
    known_metrics,
    parse_workload_spec,
    refuse_others,
    require_system,
    workload_metrics,
    workload_points,
)
from simulator.model_validity import with_recommended_model
from simulator.result_metrics import result_metrics
from simulator.study import (
    SAMPLERS,
    Evaluate,
    Outcome,
    StudyError,
    StudySetup,
    best_trials,
    check_sampler,
    parse_constraints,
    parse_objectives,
    run_study,
    search_space,
    study_metrics,
    trial_rows,
)
from simulator.sweep import Axis, AxisError, apply_point, parse_axes, swap_hardware

HARDWARE_PREFIX = "hardware:"
DEFAULT_STUDY_NAME = "study"


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add the `study` command to the command line's subparsers."""
    study = subparsers.add_parser(
        "study", help="search the axes for the best runs (Optuna TPE / NSGA-II)"
    )
    add_common(study, sweep=True, workload=True)
    study.add_argument(
        "--workload",
        metavar="SPEC",
        help="search a training workload's plans instead of a system and application: SPEC "
        "as a sweep's --workload (a JSON object or a file of one: model, gbs, ...), each --axis "
        "a plan axis (tp, pp, dp, gpus, ..., system); a plan that cannot run is a failed trial "
        "with its reason",
    )
    study.add_argument(
        "--axis",
        action="append",
        default=[],
        metavar="AXIS=V1,V2|START:STOP:STEP",
        help="an axis of any kind, as a sweep's (N, gpu0.memoryBandwidth, GPU.SMCoreClock, "
        "labels.GPU); a range is searched without being listed; repeatable",
    )
    study.add_argument(
        "--hardware",
        action="append",
        default=[],
        metavar="NODE=FILE.json,...",
        help="hardware records (JSON) to choose from for NODE: one more dimension of the "
        "search, hardware:NODE (the sweep's --hardware); repeatable",
    )
    study.add_argument(
        "--objective",
        action="append",
        default=[],
        metavar="METRIC[:min|max]",
        help="a metric to optimise (simulator.result_metrics; default overall_time_s); "
        "repeatable: several give a Pareto front",
    )
    study.add_argument(
        "--constraint",
        action="append",
        default=[],
        metavar="'METRIC OP NUMBER'",
        help="a trial is feasible when it holds (e.g. 'gpu_power_w <= 700'); repeatable",
    )
    study.add_argument(
        "--trials",
        type=_jobs,
        required=True,
        metavar="N",
        help="runs the study makes (this many more on a study --storage holds)",
    )
    study.add_argument(
        "--sampler",
        choices=SAMPLERS,
        default="auto",
        help="auto: TPE for one objective, NSGA-II for several (default auto)",
    )
    study.add_argument("--study-seed", type=int, default=0, help="the sampler's seed (default 0)")
    study.add_argument(
        "--parallel", type=_jobs, default=1, metavar="N", help="trials run at once (default 1)"
    )
    study.add_argument(
        "--storage",
        metavar="URL|PATH",
        help="keep the study in this database (sqlite:///file.db, postgresql://..., or a "
        "file path: SQLite) so that running it again goes on from its trials",
    )
    study.add_argument(
        "--study-name",
        default=DEFAULT_STUDY_NAME,
        metavar="NAME",
        help=f"the study's name in --storage (default {DEFAULT_STUDY_NAME})",
    )
    add_uncertainty(study)
    study.set_defaults(handler=command_study)


def storage_url(text: str | None) -> str | None:
    """Return the storage URL of `--storage`: a URL as given, a file path as SQLite's."""
    if text is None or "://" in text:
        return text
    return f"sqlite:///{Path(text).expanduser().resolve()}"


def study_axis(text: str) -> object:
    """Return a study axis from its text: START:STOP:STEP a range (not listed), V1,V2 a
    list, one value fixed."""
    parts = [p.strip() for p in text.split(",") if p.strip()]
    if len(parts) == 1 and parts[0].count(":") == 2:
        start, stop, step = (parse_value(p) for p in parts[0].split(":"))
        return {"start": start, "stop": stop, "step": step}
    values = [parse_value(part) for part in parts]
    return values if len(values) != 1 else values[0]


def _objectives(texts: Sequence[str], default: str = "overall_time_s") -> list[dict[str, str]]:
    entries = []
    for text in texts or [default]:
        metric, _, direction = text.strip().partition(":")
        entries.append({"metric": metric, "direction": direction})
    return entries


def command_study(args: argparse.Namespace, stdout: TextIO, stderr: TextIO) -> int:
    """Run a study of the axes; print one row per trial (or JSON), the best marked."""
    if args.workload is not None:
        return command_workload_study(args, stdout, stderr)
    require_system(args)
    snapshot, app_source = load_inputs(args)
    labels = parse_labels(args.labels)
    axes: dict[str, object] = {}
    kinds: dict[str, str] = {}
    for option, (name, text) in [
        *(("--var", var_pair(spec)) for spec in args.var),
        *(("--axis", split_pair("--axis", spec)) for spec in args.axis),
    ]:
        if name in axes:
            raise CliError(f"{option}: {name!r} is given twice")
        axes[name] = study_axis(text)
        kinds[name] = option
    hardware = {node: records for node, records in _hardware_choices(args.hardware, snapshot)}
    for node, records in hardware.items():
        axes[f"{HARDWARE_PREFIX}{node}"] = [path for path, _ in records]
        kinds[f"{HARDWARE_PREFIX}{node}"] = "--hardware"
    known = study_metrics(snapshot)
    try:
        dimensions = search_space(axes)
        setup = StudySetup(
            dimensions=tuple(dimensions),
            objectives=tuple(parse_objectives(_objectives(args.objective), known)),
            constraints=tuple(parse_constraints(list(args.constraint), known)),
            sampler=check_sampler(args.sampler),
            seed=args.study_seed,
        )
    except StudyError as error:
        field = error.field.removeprefix("axes.").replace("objectives", "--objective")
        field = field.replace("constraints", "--constraint").replace("axes", "--var/--axis")
        named = [n for n in axes if field == n or field.startswith(f"{n}.")]
        if named:  # the option that gave the axis
            field = f"{kinds[named[0]]} {field}"
        raise CliError(f"{field}: {error.message}") from error
    probes = {d.name: d.probe() for d in dimensions}

    def swapped(point: Mapping[str, object]) -> dict[str, Any]:
        """Return the snapshot with the point's hardware records swapped in (each node's
        model the GPU's recommended one where the node's was not validated on it)."""
        variant = snapshot
        for index, (node, records) in enumerate(hardware.items()):
            record = dict(records)[str(point[f"{HARDWARE_PREFIX}{node}"])]
            variant = swap_hardware(variant, node, record, key=f"study-{index}-{node}")
            variant = with_recommended_model(variant, node, _builtin_model)[0]
        return variant

    others = {n: probes[n] for n in axes if kinds[n] == "--axis"}
    checked: list[Axis] = []
    # Checked on every record a node may be given: an attribute an axis sets must be in all.
    first = {n: probes[n][0] for n in axes if kinds[n] == "--hardware"}
    variants = [snapshot] if not hardware else []
    for node, records in hardware.items():
        for path, _ in records:
            variants.append(swapped({**first, f"{HARDWARE_PREFIX}{node}": path}))
    try:
        for variant in variants:
            checked = [
                Axis(name, "variable", name, tuple(probes[name]))
                for name in axes
                if kinds[name] == "--var"
            ] + parse_axes(others, variant)
    except AxisError as error:
        raise CliError(f"--axis {error.field.removeprefix('axes.')}: {error.message}") from error

    def evaluate(points: Sequence[Mapping[str, object]]) -> list[Mapping[str, object] | None]:
        payloads = []
        for point in points:
            try:
                variant, point_labels, variables = apply_point(
                    swapped(point), labels, checked, point
                )
            except AxisError as error:  # a template's rules refusing a point
                field = error.field.removeprefix("axes.")
                raise CliError(f"--axis {field}: {error.message}") from error
            payloads.append(
                {
                    "snapshot": variant,
                    "app_source": app_source,
                    "labels": point_labels,
                    "variables": variables,
                    "seed": args.seed,
                    "timeline_limit": args.timeline_limit,
                    **_interval(args),
                }
            )
        outcomes = run_points(payloads, jobs=args.parallel, no_sandbox=args.no_sandbox)
        return [result_metrics(value) if kind == "result" else None for kind, value in outcomes]

    return _search(args, setup, evaluate, list(axes), stdout, stderr)


def _interval(args: argparse.Namespace) -> dict[str, Any]:
    """Return the payload's `uncertainty` where the command asked for an interval."""
    return {} if args.uncertainty is None else {"uncertainty": uncertainty_options(args)}


def _search(
    args: argparse.Namespace,
    setup: StudySetup,
    evaluate: Evaluate,
    axes: Sequence[str],
    stdout: TextIO,
    stderr: TextIO,
) -> int:
    """Run the study and print its trials (a table, or JSON), the best marked."""
    bar = ProgressBar(stderr, "searching")
    try:
        study = run_study(
            setup,
            evaluate,
            trials=args.trials,
            parallel=args.parallel,
            storage=storage_url(args.storage),
            name=args.study_name,
            told=lambda done: bar(done / args.trials),
        )
    finally:
        bar.close()
    rows = trial_rows(study)
    best = set(best_trials(rows, setup.objectives, setup.constraints))
    if args.json is not None:
        document: dict[str, Any] = {
            "objectives": [
                {"metric": o.metric, "direction": o.direction} for o in setup.objectives
            ],
            "trials": [{**row, "best": index in best} for index, row in enumerate(rows)],
            "best": [rows[index]["number"] for index in sorted(best)],
        }
        write_json(document, args.json, stdout)
    if args.json != "-":
        metrics = [o.metric for o in setup.objectives]
        # why a trial made no run (a plan that cannot run), where any has a reason
        reasons = ["error"] if any(row.get("error") for row in rows) else []
        headers = ["trial", *axes, *metrics, "state", "best", *reasons]
        lines = [
            [
                row["number"],
                *(row["point"].get(name) for name in axes),
                *(row["metrics"].get(metric) for metric in metrics),
                row["state"],
                "*" if index in best else "",
                *([one_line(row.get("error") or "")] if reasons else []),
            ]
            for index, row in enumerate(rows)
        ]
        stdout.write(table(headers, lines) + "\n")
    failed = sum(row["state"] != "complete" for row in rows)
    if failed:
        message = CLI_MESSAGES["study_failed"].format(failed=failed, total=len(rows))
        stderr.write(f"note: {message}\n")
    return EXIT_ERROR if failed == len(rows) else 0


def command_workload_study(args: argparse.Namespace, stdout: TextIO, stderr: TextIO) -> int:
    """Search a training workload's plan axes (`--workload`, simulator.cli.workload_points):
    each trial one plan, run as a workload sweep's point; a plan that cannot run is a
    failed trial whose error is its field and reason, and the sampler learns nothing from
    it."""
    refuse_others(args)
    spec = parse_workload_spec(args.workload)
    axes: dict[str, object] = {}
    for name, text in (split_pair("--axis", text) for text in args.axis):
        if name in axes:
            raise CliError(f"--axis: {name!r} is given twice")
        axes[name] = study_axis(text)
    known = known_metrics()
    try:
        dimensions = search_space(axes, field="--axis")
        setup = StudySetup(
            dimensions=tuple(dimensions),
            objectives=tuple(parse_objectives(_objectives(args.objective, "step_time_s"), known)),
            constraints=tuple(parse_constraints(list(args.constraint), known)),
            sampler=check_sampler(args.sampler),
            seed=args.study_seed,
        )
    except StudyError as error:
        field = error.field.replace("--axis.", "--axis ", 1)
        field = field.replace("objectives", "--objective").replace("constraints", "--constraint")
        raise CliError(f"{field}: {error.message}") from error
    check_axes(spec, {d.name: d.probe() for d in dimensions})
    interval = _interval(args).get("uncertainty")

    def evaluate(points: Sequence[Mapping[str, object]]) -> list[Outcome]:
        made = [
            workload_points(
                spec,
                {name: [value] for name, value in point.items()},
                seed=args.seed,
                uncertainty=interval,
            )[0]
            for point in points
        ]
        payloads = [m.payload for m in made if m.payload is not None]
        outcomes = iter(run_points(payloads, jobs=args.parallel, no_sandbox=args.no_sandbox))
        answers: list[Outcome] = []
        for point in made:
            if point.invalid is not None:
                invalid = point.invalid
                answers.append(f"invalid plan ({invalid['field']}): {invalid['reason']}")
                continue
            kind, value = next(outcomes)
            if kind == "result" and point.basis is not None:
                answers.append(workload_metrics(point.basis, value))
            else:  # the run failed: a failed trial, its error in the run's outcome
                answers.append(None)
        return answers

    return _search(args, setup, evaluate, list(axes), stdout, stderr)
