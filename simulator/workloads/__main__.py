"""`python -m simulator.workloads train --model NAME --system NAME --gpus N ... [--json]`:
a training step from the command line (issue 43 item 2, training only); an impossible plan
exits with status 2 and the reason."""

from __future__ import annotations

import argparse
import json
import sys

from simulator.workloads.config import load_model
from simulator.workloads.plan import ParallelPlan, PlanError
from simulator.workloads.training import simulate_training


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m simulator.workloads")
    sub = parser.add_subparsers(dest="command", required=True)
    train = sub.add_parser("train", help="simulate one training step")
    train.add_argument("--model", required=True, help="a shipped config or a JSON file")
    train.add_argument("--system", default="dgx-h100")
    train.add_argument("--gpus", type=int, required=True)
    for name in ("tp", "pp", "cp", "vp", "ep", "mbs"):
        train.add_argument(f"--{name}", type=int, default=1)
    train.add_argument("--gbs", type=int, required=True)
    train.add_argument("--seq", type=int, default=None)
    train.add_argument("--dp-mode", choices=("ddp", "zero1", "fsdp"), default="ddp")
    train.add_argument("--recompute", choices=("none", "selective", "full"), default="none")
    train.add_argument("--precision", choices=("bf16", "fp8"), default="bf16")
    train.add_argument("--overlap-grad-reduce", action="store_true")
    train.add_argument("--full", action="store_true", help="simulate every rank")
    train.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    try:
        model = load_model(args.model)
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
            data_parallel=args.dp_mode,
            recompute=args.recompute,
            precision=args.precision,
            overlap_grad_reduce=args.overlap_grad_reduce,
        )
        result = simulate_training(model, plan, args.system, symmetric=not args.full)
    except (PlanError, ValueError) as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    if args.json:
        json.dump(result, sys.stdout, indent=2)
        sys.stdout.write("\n")
    else:
        for key in (
            "step_time_s",
            "tokens_per_s_per_gpu",
            "model_tflops_per_gpu",
            "mfu",
            "memory_per_gpu_bytes",
        ):
            print(f"{key:<24} {result[key]:.6g}")
        for key, value in result["time_split_s"].items():
            print(f"  {key:<22} {value:.6g}")
        print(f"symmetry: {result['symmetry']['note']}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
