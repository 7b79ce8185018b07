"""`python -m simulator run`: one application model on one system snapshot, its summary
(totals, processes, components, memory hierarchy, engine) or its result JSON."""

from __future__ import annotations

import argparse

from simulator.cli.common import (
    ProgressBar,
    add_common,
    add_uncertainty,
    parse_labels,
    parse_variables,
    read_inputs,
    record_table,
    run_once,
    table,
    uncertainty_lines,
    uncertainty_options,
    write_json,
)
from simulator.sandbox.parent import RawResult
from simulator.summary import result_summary
from simulator.trace_export import chrome_trace

TYPE_CHECKING = False  # no `typing` at run time (simulator.cli.common says why)
if TYPE_CHECKING:
    from collections.abc import Mapping
    from typing import Any, TextIO

    from simulator.sandbox.launch import StartedChild


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add the `run` command to the command line's subparsers."""
    run = subparsers.add_parser("run", help="simulate one application on one system")
    add_common(run, sweep=False)
    run.add_argument(
        "--inject-failures",
        choices=("abort", "restart"),
        help="Monte Carlo failure injection from the records' failure rates: a failure "
        "aborts the run, or restarts it from the beginning (docs/models.md 6)",
    )
    run.add_argument(
        "--failure-samples",
        type=int,
        default=10_000,
        metavar="N",
        help="samples of the failure injection (default %(default)s), seeded by --seed",
    )
    run.add_argument(
        "--restart-cost",
        type=float,
        default=0.0,
        metavar="SECONDS",
        help="seconds each restart costs of its own (with --inject-failures restart)",
    )
    add_uncertainty(run)
    run.add_argument(
        "--symmetry",
        action="store_true",
        help="simulate a collective whose ranks a rotation of the platform and the traffic "
        "relates once per orbit of ranks, where that is proven to give the full simulation's "
        "answer (docs/collectives.md, Symmetry); the result's `symmetry` says where",
    )
    run.add_argument(
        "--trace",
        metavar="FILE",
        help="also write the run as a Chrome trace (Perfetto, chrome://tracing) to FILE",
    )
    run.set_defaults(handler=command_run)


def command_run(
    args: argparse.Namespace, stdout: TextIO, stderr: TextIO, child: StartedChild | None = None
) -> int:
    """Run one simulation and print its summary or JSON; return the exit status.

    `child`: the sandbox child `python -m simulator` started ahead for this run.
    """
    # The snapshot is checked where the run is (the same SnapshotError, the same message).
    snapshot, app_source = read_inputs(args)
    payload = {
        "snapshot": snapshot,
        "app_source": app_source,
        "labels": parse_labels(args.labels),
        "variables": parse_variables(args.var),
        "seed": args.seed,
        "timeline_limit": args.timeline_limit,
    }
    if args.symmetry:
        payload["symmetry"] = True
    if args.uncertainty is not None:
        payload["uncertainty"] = uncertainty_options(args)
    if args.inject_failures is not None:
        payload["failures"] = {
            "mode": args.inject_failures,
            "samples": args.failure_samples,
            "restart_s": args.restart_cost,
        }
    trace = getattr(args, "trace", None)
    if args.json is None and trace is None:  # only the summary is printed: the run returns that
        payload["summary"] = True
    bar = ProgressBar(stderr)
    try:
        result = run_once(payload, bar, no_sandbox=args.no_sandbox, child=child)
    finally:
        bar.close()
    if args.json is not None:
        write_json(result, args.json, stdout)
    if trace is not None:
        parsed = result.parsed() if isinstance(result, RawResult) else result
        write_json(chrome_trace(parsed), trace, stdout)
    if args.json != "-":
        data = result.parsed() if isinstance(result, RawResult) else result
        if args.json is not None or trace is not None:  # the whole result, read above
            data = result_summary(data)
        stdout.write(format_summary(data, system_name=str(snapshot.get("name", ""))) + "\n")
    return 0


def format_summary(result: Mapping[str, Any], *, system_name: str = "") -> str:
    """Return the readable text of a result's summary (simulator.summary.ResultSummary):
    totals, processes, components, memory hierarchy, flow links, collectives, engine."""
    lines = []
    if system_name:
        lines.append(f"System:       {system_name}")
    overall = result["overall_time_s"]
    lines.append(f"Overall time: {overall:.9g} s")
    energy = result["energy_j"]
    accounting = energy.get("accounting")
    lines.append(
        f"Energy:       {energy['total']:.6g} J"
        + (f" ({accounting.replace('_', ' ')} accounting)" if accounting else "")
    )
    for row in result.get("energy_accounting") or []:
        estimated = ", ".join(e["attribute"] for e in row.get("estimated", []))
        lines.append(
            f"  {row['node']}: {row['energy_j']:.6g} J = {row['includes']}"
            + (f" [estimated: {estimated}]" if estimated else "")
        )
    interval = result.get("uncertainty")
    if interval:
        lines.extend(uncertainty_lines(interval))
    lines.append(f"Reliability:  P(success) = {result['reliability']['p_success']:.9g}")
    injected = result.get("failure_injection")
    if injected:
        lines.extend(_failure_summary(injected))
    lines.append("")
    lines.append("Processes")
    lines.append(
        record_table(
            ["process", "node", "instance", "compute_s", "comm_s", "wait_s", "finish_s"],
            result["processes"],
        )
    )
    lines.append("")
    lines.append("Components")
    lines.append(
        record_table(
            ["node", "instance", "hardware", "busy_s", "utilisation", "energy_j"],
            result["components"],
        )
    )
    memory = result.get("memory")
    if memory:
        lines.append("")
        lines.extend(_memory_summary(memory))
    links = result.get("links")
    if links:
        lines.append("")
        lines.append("Links (flows sharing bandwidth)")
        lines.append(
            record_table(
                ["link", "bytes", "peak_utilisation", "mean_utilisation", "saturated_s"], links
            )
        )
    calls = result.get("collectives")
    if calls:
        lines.append("")
        lines.append("Collectives (busbw as nccl-tests reports it, bytes/s)")
        lines.append(
            record_table(
                [
                    "call",
                    "collective",
                    "algorithm",
                    "protocol",
                    "participants",
                    "size",
                    "wire_bytes",
                    "time_s",
                    "algbw",
                    "busbw",
                ],
                calls,
            )
        )
    symmetry = result.get("symmetry")
    if symmetry is not None:  # asked for (`--symmetry`): where it was used, or why not
        lines.append("")
        if symmetry["used"]:
            periods = ", ".join(
                f"{call['simulated_members']} of {call['members']}" for call in symmetry["calls"]
            )
            lines.append(f"Symmetry:     used; members simulated per call: {periods}")
        elif symmetry["redone"]:
            lines.append(f"Symmetry:     not used ({symmetry['redone']})")
        else:
            lines.append("Symmetry:     not used (no call was proven symmetric)")
    stats = result["stats"]
    lines.append("")
    lines.append(
        f"Engine: {stats['events']} events in {stats['wall_s']:.3g} s "
        f"({stats['events_per_s']:.3g} events/s); timeline {result['timeline_entries']} entries, "
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
        table(
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
            table(
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


def _failure_summary(injected: Mapping[str, Any]) -> list[str]:
    """Return the lines of a run's Monte Carlo failure injection (simulator.failure_injection)."""
    low, high = injected["ci_95"]
    lines = [
        f"Failure injection ({injected['mode']}, {injected['samples']} samples, seed "
        f"{injected['seed']}): P(complete) = {injected['p_complete']:.6g} "
        f"(95 % interval {low:.6g} to {high:.6g}; analytic {injected['analytic_p_success']:.6g})"
    ]
    if injected["mode"] == "restart":
        percentiles = injected["completion_percentiles_s"]
        lines.append(
            f"  completion time: mean {injected['mean_completion_s']:.6g} s (analytic "
            f"{injected['analytic_mean_completion_s']:.6g} s), p50 {percentiles['50']:.6g} s, "
            f"p90 {percentiles['90']:.6g} s, p99 {percentiles['99']:.6g} s; "
            f"{injected['mean_attempts']:.6g} attempts on average, each restart costing "
            f"{injected['restart_s']:.6g} s"
        )
    return lines
