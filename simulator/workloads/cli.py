"""The workload commands' arguments and actions, shared by `python -m simulator workload`
(simulator/cli/workload.py) and `python -m simulator.workloads`."""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any, TextIO

from simulator.workloads.config import load_model
from simulator.workloads.inference import InferencePlan, saturating_batch, simulate_inference
from simulator.workloads.plan import ParallelPlan
from simulator.workloads.training import simulate_training, training_files

SUMMARY_KEYS = {
    "train": (
        "step_time_s",
        "tokens_per_s_per_gpu",
        "model_tflops_per_gpu",
        "mfu",
        "memory_per_gpu_bytes",
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
    train.add_argument("--full", action="store_true", help="simulate every rank")
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
    infer.add_argument("--saturate", action="store_true", help="sweep the batch by doubling")


def _common(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--model", required=True, help="a shipped config or a JSON file")
    parser.add_argument("--system", default="dgx-h100", help="dgx-a100, dgx-h100 or dgx-b200")
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
        )
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
    else:
        inference = InferencePlan(
            args.tp, args.pp, args.batch, args.input, args.output, args.precision
        )
        result = simulate_inference(model, inference, args.system)
        if args.saturate:
            result["saturation"] = saturating_batch(model, inference, args.system)
    if args.json:
        text = json.dumps(result, indent=2) + "\n"
        if args.json == "-":
            out.write(text)
        else:
            with open(args.json, "w", encoding="utf-8") as handle:
                handle.write(text)
        return 0
    for key in SUMMARY_KEYS[args.workload]:
        out.write(f"{key:<30} {result[key]:.6g}\n")
    for key, value in result.get("time_split_s", {}).items():
        out.write(f"  {key:<28} {value:.6g}\n")
    if "symmetry" in result:
        out.write(f"symmetry: {result['symmetry']['note']}\n")
    if "saturation" in result:
        out.write(f"saturating batch: {result['saturation']['saturating_batch']}\n")
    return 0
