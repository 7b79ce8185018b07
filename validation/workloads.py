"""`python -m validation.workloads [--json] [--rows N]`: the workload library's predictions
against published training tables (docs/workloads.md "Validation").

Megatron-LM, Narayanan et al., SC'21, Table 1 (validation/data/megatron-sc21-table1.json):
achieved teraFLOP/s per A100, counted with the paper's eq. 3, against the step time the
simulation of the same model and plan on the dgx-a100 template gives. The table does not
give the micro-batch size: every row runs with 1 (an assumption, not fitted). A row that
misses its threshold is listed with the reason found, never dropped.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from simulator.workloads.config import ModelConfig
from simulator.workloads.plan import ParallelPlan, PlanError
from simulator.workloads.training import simulate_training

DATA = Path(__file__).resolve().parent / "data" / "megatron-sc21-table1.json"
MEGATRON_THRESHOLD = 0.15
# The reason found for the rows that miss (docs/workloads.md "Validation"): the tiled GEMM
# model has no tile pipeline fill, epilogue or clock drop under load, so its A100 BF16 GEMMs
# of these shapes run near the 312 TFLOP/s peak, above what the paper's runs reached.
MISS_REASON = (
    "predicted above published: the tiled GEMM model (docs/gemm-model.md) times these "
    "A100 GEMMs near the tensor peak (no tile fill, epilogue or clock drop modelled)"
)


def megatron_flops(batch: int, seq: int, layers: int, hidden: int, vocab: int) -> float:
    """Narayanan et al. eq. 3: FLOPs of one iteration with activation recomputation."""
    h, s, v = hidden, seq, vocab
    return 96.0 * batch * s * layers * h * h * (1 + s / (6 * h) + v / (16 * layers * h))


def megatron_rows(limit: int | None = None) -> list[dict[str, Any]]:
    data = json.loads(DATA.read_text(encoding="utf-8"))
    out: list[dict[str, Any]] = []
    for row in data["rows"][:limit]:
        size, heads, hidden, layers, tp, pp, gpus, batch, published = row[:9]
        model = ModelConfig(
            f"gpt-{size}b",
            layers,
            hidden,
            4 * hidden,
            heads,
            heads,
            51200,
            2048,
            gated=False,
            tied_embeddings=True,
            source=data["source"],
        )
        plan = ParallelPlan(gpus=gpus, tp=tp, pp=pp, mbs=1, gbs=batch, recompute="full")
        entry: dict[str, Any] = {
            "table": "megatron-sc21-table1",
            "row": f"GPT {size}B, {gpus} GPUs, TP {tp} PP {pp}, batch {batch}",
            "metric": "tflops_per_gpu",
            "published": float(published),
            "threshold": MEGATRON_THRESHOLD,
        }
        try:
            result = simulate_training(model, plan, "dgx-a100")
        except PlanError as refused:
            entry |= {"predicted": None, "error": None, "within": False, "reason": str(refused)}
            out.append(entry)
            continue
        flops = megatron_flops(batch, 2048, layers, hidden, 51200)
        predicted = flops / result["step_time_s"] / gpus / 1e12
        error = (predicted - published) / published
        within = abs(error) <= MEGATRON_THRESHOLD
        entry |= {
            "predicted": predicted,
            "error": error,
            "within": within,
            "step_time_s": result["step_time_s"],
            "simulation_wall_s": result["simulation_wall_s"],
            "reason": None if within else MISS_REASON,
        }
        out.append(entry)
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m validation.workloads")
    parser.add_argument("--json", action="store_true", help="print the rows as JSON")
    parser.add_argument("--rows", type=int, default=None, help="only the first N rows")
    args = parser.parse_args(argv)
    rows = megatron_rows(args.rows)
    report = {"source": json.loads(DATA.read_text(encoding="utf-8"))["source"], "rows": rows}
    if args.json:
        json.dump(report, sys.stdout, indent=2)
        sys.stdout.write("\n")
        return 0
    for row in rows:
        predicted = "-" if row["predicted"] is None else f"{row['predicted']:.1f}"
        error = "-" if row["error"] is None else f"{100 * row['error']:+.1f} %"
        mark = "ok" if row["within"] else "MISS: " + str(row["reason"])
        print(f"{row['row']:<45} {predicted:>8} {row['published']:>8.1f} {error:>9}  {mark}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
