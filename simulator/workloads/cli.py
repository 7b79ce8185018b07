"""The workload commands' arguments and actions, shared by `python -m simulator workload`
(simulator/cli/workload.py) and `python -m simulator.workloads`."""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any, TextIO

from simulator.cost import run_cost
from simulator.pareto import (
    ObjectiveError,
    check_direction,
    check_metric,
    pareto_flags,
    parse_constraint,
)
from simulator.snapshot import load_snapshot
from simulator.sweep import MAX_POINTS, AxisError, range_error, range_values, size_error
from simulator.workloads.cluster import TEMPLATES, cluster_snapshot
from simulator.workloads.config import ModelConfig, load_model
from simulator.workloads.inference import InferencePlan, saturating_batch, simulate_inference
from simulator.workloads.plan import ATTENTION_KERNELS, ParallelPlan, PlanError
from simulator.workloads.plan_axes import parse_plan_axes, plan_error_field, plan_points
from simulator.workloads.serving import LengthSpec, ServingPlan, saturating_rate, simulate_serving
from simulator.workloads.training import simulate_training, training_files

SUMMARY_KEYS = {
    "train": (
        "step_time_s",
        "tokens_per_s_per_gpu",
        "model_tflops_per_gpu",
        "mfu",
        "memory_per_gpu_bytes",
    ),
    "serve": (
        "requests_per_s",
        "output_tokens_per_s",
        "output_tokens_per_s_per_gpu",
        "duration_s",
    ),
    "infer": (
        "ttft_s",
        "tpot_s",
        "request_latency_s",
        "output_tokens_per_s",
        "output_tokens_per_s_per_gpu",
        "memory_per_gpu_bytes",
    ),
}


def add_workload_commands(parser: argparse.ArgumentParser, parser_class: Any = None) -> None:
    """Add `train` and `infer` below `parser`."""
    extra = {} if parser_class is None else {"parser_class": parser_class}
    sub = parser.add_subparsers(dest="workload", required=True, **extra)
    train = sub.add_parser("train", help="simulate one training step")
    _common(train)
    train.add_argument("--gpus", type=int, required=True)
    for name in ("tp", "pp", "cp", "vp", "ep", "mbs"):
        train.add_argument(f"--{name}", type=int, default=1)
    train.add_argument("--gbs", type=int, required=True)
    train.add_argument("--seq", type=int, default=None)
    train.add_argument("--fsdp", type=int, default=0, help="1: FSDP over the DP group")
    train.add_argument("--zero1", action="store_true", help="the distributed optimizer")
    train.add_argument("--recompute", choices=("none", "selective", "full"), default="none")
    train.add_argument("--overlap-grad-reduce", action="store_true")
    train.add_argument(
        "--fp8-param-gather",
        action="store_true",
        help="with --precision fp8 and --zero1: gather the layers' weights in FP8 (Megatron's)",
    )
    train.add_argument(
        "--no-sequence-parallel",
        action="store_true",
        help="with TP: run the norms and residual adds on the whole sequence on every rank "
        "and keep their activations whole (Megatron-LM before --sequence-parallel)",
    )
    train.add_argument(
        "--attention",
        choices=ATTENTION_KERNELS,
        default="flash",
        help="flash: FlashAttention-3's published rates on Hopper; cudnn: cuDNN's fused "
        "attention (Transformer Engine's on Hopper); unfused: Megatron's 2021 attention over "
        "materialised scores",
    )
    train.add_argument("--full", action="store_true", help="simulate every rank")
    train.add_argument(
        "--axis",
        action="append",
        default=[],
        metavar="FIELD=V1,V2|START:STOP:STEP",
        help="sweep a plan field (tp, pp, dp, gpus, cp, vp, ep, mbs, gbs, seq, data_parallel, "
        "recompute, precision) over these values, the other flags fixed; a plan that cannot "
        "run is listed with its reason; repeatable",
    )
    train.add_argument(
        "--pareto",
        metavar="X,Y",
        help="with --axis: flag the plans on the Pareto front of these two figures (each "
        "FIGURE or FIGURE:max; e.g. step_time_s,cost_per_step_usd) among the feasible ones, "
        "by the sweep page's rule (simulator.pareto)",
    )
    train.add_argument(
        "--constraint",
        action="append",
        default=[],
        metavar='"FIGURE OP NUMBER"',
        help='with --axis: a plan is feasible when each holds, e.g. "step_time_s <= 10"; '
        "repeatable",
    )
    train.add_argument(
        "--max-points",
        type=int,
        default=MAX_POINTS,
        metavar="N",
        help="refuse a plan sweep of more points than this (default %(default)s)",
    )
    train.add_argument(
        "--emit",
        metavar="DIR",
        help="write system.json, app.py and labels.txt (every rank) for `python -m simulator "
        "run` instead of simulating",
    )
    infer = sub.add_parser("infer", help="simulate a batch of requests (prefill and decode)")
    _common(infer)
    infer.add_argument("--tp", type=int, default=1)
    infer.add_argument("--pp", type=int, default=1)
    infer.add_argument("--batch", type=int, default=1)
    infer.add_argument("--input", type=int, default=1024, help="prompt tokens per request")
    infer.add_argument("--output", type=int, default=128, help="generated tokens per request")
    infer.add_argument(
        "--saturate",
        action="store_true",
        help="sweep the batch by doubling; with a request stream, sweep the arrival rate",
    )
    stream = infer.add_argument_group(
        "request stream (continuous batching)",
        "any of these serves a stream of requests with iteration-level scheduling instead of "
        "one static batch",
    )
    stream.add_argument("--requests", type=int, help="requests in the stream (default 200)")
    stream.add_argument(
        "--arrival-rate",
        type=float,
        help="Poisson arrivals per second (default: every request at time 0)",
    )
    stream.add_argument(
        "--arrivals", help="comma-separated arrival times in seconds, one per request"
    )
    stream.add_argument(
        "--max-concurrency",
        type=int,
        help="requests in flight at most, as a benchmark client's (the next is sent when one "
        "completes)",
    )
    stream.add_argument(
        "--measurement-interval",
        type=_seconds,
        metavar="SECONDS",
        help="measure as GenAI-Perf does (its --measurement-interval): the figures over the "
        "requests its windows of 1.2 x SECONDS count (default: every request)",
    )
    stream.add_argument(
        "--input-len",
        help="prompt tokens: N, uniform:LOW:HIGH, normal:MEAN:STD or exponential:MEAN "
        "(default: --input)",
    )
    stream.add_argument("--output-len", help="generated tokens, as --input-len (default: --output)")
    stream.add_argument("--seed", type=int, help="seed of the arrivals and lengths (default 0)")
    stream.add_argument("--max-batch", type=int, help="running requests at most (default 256)")
    stream.add_argument(
        "--max-batched-tokens", type=int, help="tokens per iteration at most (default 8192)"
    )
    stream.add_argument(
        "--no-chunked-prefill",
        action="store_true",
        help="whole prompts in prefill-only iterations (vLLM V0's default)",
    )
    stream.add_argument(
        "--gpu-memory-utilization",
        type=float,
        help="share of the GPU's memory for weights and KV cache (default 0.9)",
    )


def _seconds(text: str) -> float:
    """Return --measurement-interval's seconds, checked by the plan's rule; argparse names
    the flag with the message."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number of seconds, not {text!r}") from None
    try:
        ServingPlan(measurement_interval_s=value).check()
    except PlanError as error:
        raise argparse.ArgumentTypeError(str(error)) from None
    return value


def _common(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--model", required=True, help="a shipped config or a JSON file")
    parser.add_argument(
        "--system", default="dgx-h100", help="a cluster template: " + ", ".join(TEMPLATES)
    )
    parser.add_argument("--precision", choices=("bf16", "fp8"), default="bf16")
    parser.add_argument("--json", metavar="OUT", help="write the result JSON to OUT ('-')")


def run_workload(args: argparse.Namespace, out: TextIO) -> int:
    """Run the parsed command; raise ValueError (PlanError) with the reason when the plan
    is impossible."""
    model = load_model(args.model)
    result: dict[str, Any]
    if args.workload == "train":
        plan = ParallelPlan(
            gpus=args.gpus,
            tp=args.tp,
            pp=args.pp,
            cp=args.cp,
            vp=args.vp,
            ep=args.ep,
            mbs=args.mbs,
            gbs=args.gbs,
            seq=args.seq,
            data_parallel="fsdp" if args.fsdp else ("zero1" if args.zero1 else "ddp"),
            recompute=args.recompute,
            precision=args.precision,
            overlap_grad_reduce=args.overlap_grad_reduce,
            fp8_param_gather=args.fp8_param_gather,
            attention=args.attention,
            sequence_parallel=not args.no_sequence_parallel,
        )
        if args.axis:
            return _plan_sweep(args, out, model, plan)
        if args.emit:
            snapshot, app, labels = training_files(model, plan, args.system)
            folder = Path(args.emit)
            folder.mkdir(parents=True, exist_ok=True)
            (folder / "system.json").write_text(json.dumps(snapshot), encoding="utf-8")
            (folder / "app.py").write_text(app, encoding="utf-8")
            text = ",".join(f"{label}={count}" for label, count in labels.items())
            (folder / "labels.txt").write_text(text + "\n", encoding="utf-8")
            out.write(
                f"python -m simulator run --system {folder / 'system.json'} "
                f"--app {folder / 'app.py'} --labels $(cat {folder / 'labels.txt'})\n"
            )
            return 0
        result = simulate_training(model, plan, args.system, symmetric=not args.full)
    elif _is_stream(args):
        serving = serving_plan(args)
        result = simulate_serving(model, serving, args.system)
        if args.saturate:
            result["saturation"] = saturating_rate(model, serving, args.system)
        return _write(args, out, result, "serve")
    else:
        inference = InferencePlan(
            args.tp, args.pp, args.batch, args.input, args.output, args.precision
        )
        result = simulate_inference(model, inference, args.system)
        if args.saturate:
            result["saturation"] = saturating_batch(model, inference, args.system)
    return _write(args, out, result, args.workload)


def _axis_values(name: str, text: str) -> list[object]:
    """Return an axis's values from "1,2,4", "1:8:1" (stop included) or "ddp,fsdp"."""
    values: list[object] = []
    for part in filter(None, (p.strip() for p in text.split(","))):
        pieces = part.split(":")
        if len(pieces) == 3 and all(p.isdigit() for p in pieces):
            start, stop, step = (int(p) for p in pieces)
            fault = range_error(start, stop, step)
            if fault is not None:
                raise PlanError(f"--axis {name}: {part}: {fault[0]}: {fault[1]}")
            values.extend(range_values(start, stop, step))
        else:
            values.append(int(part) if part.isdigit() else part)
    return values


def plan_sweep(
    model: ModelConfig,
    base: ParallelPlan,
    axes: dict[str, list[object]],
    system: str,
    *,
    symmetric: bool = True,
) -> list[dict[str, Any]]:
    """Return each point of a plan sweep (axes already checked): {"point", "result"} or
    {"point", "invalid": {"field", "reason"}} for a plan that cannot run."""
    base_fields = {name: getattr(base, name) for name in base.__dataclass_fields__}
    rows: list[dict[str, Any]] = []
    for point, fields in plan_points({**base_fields, "system": system}, axes):
        template = str(fields.pop("system"))
        try:
            plan = ParallelPlan(**fields)
            result = simulate_training(model, plan, template, symmetric=symmetric)
        except PlanError as error:
            reason = str(error)
            rows.append(
                {"point": point, "invalid": {"field": plan_error_field(reason), "reason": reason}}
            )
            continue
        result.update(step_cost(template, plan.gpus, result["step_time_s"]))
        rows.append({"point": point, "result": result})
    return rows


def step_cost(system: str, gpus: int, step_time_s: float) -> dict[str, float | None]:
    """Return the step's cost by the runs' rule (simulator.cost.run_cost: the records' rental
    or purchase price over the step's time, the cluster's fabric priced in the GPUs'
    rental): `cost_per_step_usd`, None where the GPU's record carries no price."""
    system_snapshot = load_snapshot(cluster_snapshot(TEMPLATES[system], gpus))
    cost = run_cost(system_snapshot, {"overall_time_s": step_time_s}, {"steps": 1})
    return {"cost_per_step_usd": cost["per_unit"].get("step")}


def flag_plans(rows: list[dict[str, Any]], pareto: str | None, constraints: list[str]) -> bool:
    """Flag each point `feasible` and `pareto` (simulator.pareto, the sweep page's rule) over
    its figures when `pareto` or `constraints` were given; return whether they were."""
    if pareto is None and not constraints:
        return False
    figures = [dict(row.get("result") or {}) for row in rows]
    known = sorted({k for f in figures for k, v in f.items() if isinstance(v, int | float)})
    known = known or [*SUMMARY_KEYS["train"], "cost_per_step_usd"]
    try:
        objectives = []
        for part in (pareto or "step_time_s,cost_per_step_usd").split(","):
            metric, _, direction = part.strip().partition(":")
            objectives.append((check_metric(metric, known), check_direction(direction, metric)))
        if len(objectives) != 2:
            raise PlanError(f"--pareto: expected two figures X,Y, got {pareto!r}")
        rules = [parse_constraint(text, known) for text in constraints]
    except ObjectiveError as error:
        raise PlanError(f"--pareto/--constraint: {error.message}") from None
    for row, (feasible, front) in zip(rows, pareto_flags(figures, objectives, rules), strict=True):
        row["feasible"] = feasible
        row["pareto"] = front
    return True


def _plan_sweep(
    args: argparse.Namespace, out: TextIO, model: ModelConfig, base: ParallelPlan
) -> int:
    raw: dict[str, list[object]] = {}
    for spec in args.axis:
        name, sep, text = spec.partition("=")
        if not sep or not name:
            raise PlanError(f"--axis {spec!r}: expected FIELD=VALUES")
        if name in raw:
            raise PlanError(f"--axis {name}: the axis is given twice")
        raw[name] = _axis_values(name, text)
    try:
        axes = parse_plan_axes(raw)
    except AxisError as error:
        raise PlanError(f"--axis {error.field.removeprefix('axes.')}: {error.message}") from None
    size = 1
    for values in axes.values():
        size *= len(values)
    too_many = size_error(size, args.max_points)
    if too_many is not None:
        raise PlanError(too_many)
    rows = plan_sweep(model, base, axes, args.system, symmetric=not args.full)
    flagged = flag_plans(rows, args.pareto, args.constraint)
    if args.json:
        text = json.dumps({"points": rows}, indent=2) + "\n"
        if args.json == "-":
            out.write(text)
        else:
            Path(args.json).write_text(text, encoding="utf-8")
        return 0
    keys = [*SUMMARY_KEYS["train"], "cost_per_step_usd"]
    flags = ["feasible", "pareto"] if flagged else []
    out.write("  ".join([*axes, *keys, *flags]) + "\n")
    for row in rows:
        cells = [str(row["point"][name]) for name in axes]
        if "result" in row:
            cells += [_cell(row["result"].get(key)) for key in keys]
            cells += ["yes" if row[flag] else "no" for flag in flags]
        else:
            cells.append(f"invalid ({row['invalid']['field']}): {row['invalid']['reason']}")
        out.write("  ".join(cells) + "\n")
    return 0


def _cell(value: object) -> str:
    return "-" if value is None else f"{value:.6g}"


STREAM_FLAGS = (
    "requests",
    "arrival_rate",
    "arrivals",
    "max_concurrency",
    "measurement_interval",
    "input_len",
    "output_len",
    "seed",
    "max_batch",
    "max_batched_tokens",
    "gpu_memory_utilization",
)


def _is_stream(args: argparse.Namespace) -> bool:
    return args.no_chunked_prefill or any(getattr(args, n) is not None for n in STREAM_FLAGS)


def serving_plan(args: argparse.Namespace) -> ServingPlan:
    """Return the request stream's plan from `workload infer`'s flags; raise PlanError."""
    defaults = ServingPlan()
    arrivals = None
    if args.arrivals:
        try:
            arrivals = tuple(float(t) for t in args.arrivals.split(","))
        except ValueError:
            message = f"arrivals must be comma-separated seconds, not {args.arrivals!r}"
            raise PlanError(message) from None
    requests = args.requests
    if requests is None:
        requests = len(arrivals) if arrivals is not None else defaults.requests
    return ServingPlan(
        tp=args.tp,
        pp=args.pp,
        precision=args.precision,
        requests=requests,
        arrival_rate=args.arrival_rate,
        arrivals=arrivals,
        max_concurrency=args.max_concurrency,
        measurement_interval_s=args.measurement_interval,
        input_len=LengthSpec.parse(args.input_len or args.input, "input_len"),
        output_len=LengthSpec.parse(args.output_len or args.output, "output_len"),
        seed=defaults.seed if args.seed is None else args.seed,
        max_batch=args.max_batch or defaults.max_batch,
        max_batched_tokens=args.max_batched_tokens or defaults.max_batched_tokens,
        chunked_prefill=not args.no_chunked_prefill,
        gpu_memory_utilization=args.gpu_memory_utilization or defaults.gpu_memory_utilization,
    )


def _write(args: argparse.Namespace, out: TextIO, result: dict[str, Any], kind: str) -> int:
    if args.json:
        text = json.dumps(result, indent=2) + "\n"
        if args.json == "-":
            out.write(text)
        else:
            with open(args.json, "w", encoding="utf-8") as handle:
                handle.write(text)
        return 0
    if kind == "serve":
        for key in ("ttft_s", "tpot_s", "e2e_latency_s"):
            figures = result[key]
            out.write(
                f"{key:<30} median {figures['median']:.6g}  p90 {figures['p90']:.6g}  "
                f"p99 {figures['p99']:.6g}\n"
            )
        out.write(f"{'batch_mean':<30} {result['batch']['mean']:.6g}\n")
        out.write(f"{'kv_cache_peak_occupancy':<30} {result['kv_cache']['peak_occupancy']:.6g}\n")
        measurement = result.get("measurement")
        if measurement is not None:
            out.write(
                f"measurement: {measurement['requests']} requests in {measurement['windows']} "
                f"windows of {measurement['window_s']:.6g} s "
                f"({'stable' if measurement['stable'] else 'not stable'})\n"
            )
    for key in SUMMARY_KEYS[kind]:
        out.write(f"{key:<30} {result[key]:.6g}\n")
    for key, value in result.get("time_split_s", {}).items():
        out.write(f"  {key:<28} {value:.6g}\n")
    if "symmetry" in result:
        out.write(f"symmetry: {result['symmetry']['note']}\n")
    if "saturation" in result:
        saturation = result["saturation"]
        names = ["saturating_batch"]
        if kind == "serve":
            names += ["capacity_requests_per_s", "saturating_rate", "sustainable_rate"]
        for name in names:
            value = saturation[name]
            out.write(f"{name}: {'-' if value is None else f'{value:.6g}'}\n")
    return 0
