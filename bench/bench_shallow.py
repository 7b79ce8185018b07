"""Shallow-function latency: memoized and uncached calls of a JavaScript computational model.

The model is the shipped MERPSYS example's Volkov GPU model (examples/merpsys_gtx970) bound
to the GTX 970's attributes, called as the runner calls it: `computationTime(params)` with
the kernel's parameters. Measured, each the best of `--repeat` rounds:

- memoized: the same call again (a dict lookup; target <= 2 us);
- uncached: a different `gridSize` every call, so every call evaluates JavaScript in the
  warm, shared V8 context (target <= 200 us);
- first call: creating the context (V8 isolate, prelude, model source) and evaluating;
- for comparison, one evaluation through mini-racer's public `MiniRacer.eval`.

Like a sandboxed simulation run (simulator/_child.py), the process first keeps itself and
V8's threads on one CPU (`shallow.keep_on_one_cpu`); `--no-pin` measures without that.

    PYTHONPATH=. .venv/bin/python bench/bench_shallow.py [--repeat N] [--json]
"""

from __future__ import annotations

import argparse
import json
import platform
import sys
import time
from pathlib import Path

from py_mini_racer import MiniRacer

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # `python bench/<file>.py`

from simulator import shallow
from simulator.shallow import ShallowFunctions, keep_on_one_cpu

EXAMPLE = Path(__file__).resolve().parent.parent / "examples" / "merpsys_gtx970"
KERNEL_PARAMS: dict[str, object] = {
    "gridSize": 39063,
    "blockSize": 256,
    "CUDACoreInstructions": 27,
    "issuedInstructions": 27,
    "GMEMBytesTransferred": 384,
    "occupancy": 64,
    "latencyBound": 966,
    "kernelExecutionLambda": 0.703787,
}


def gpu_model() -> ShallowFunctions:
    """Return the example's GPU model bound to the example's GTX 970 record."""
    snapshot = json.loads((EXAMPLE / "snapshot.json").read_text())
    gpu = next(node for node in snapshot["nodes"] if node["id"] == "gpu0")
    return ShallowFunctions(
        model_key=gpu["model"],
        source=snapshot["models"][gpu["model"]]["source"],
        attributes=snapshot["hardware"][gpu["hardware"]]["attributes"],
    )


def best_per_call_us(run: object, calls: int, repeat: int) -> float:
    """Return the best over `repeat` rounds of the mean time of one of `calls` calls (us)."""
    assert callable(run)
    best = float("inf")
    for round_index in range(repeat):
        started = time.perf_counter()
        run(calls, round_index)
        best = min(best, (time.perf_counter() - started) / calls * 1e6)
    return best


def measure(repeat: int) -> dict[str, float]:
    """Return the latencies in microseconds."""
    shallow.clear_caches()
    functions = gpu_model()
    started = time.perf_counter()
    functions.call("computationTime", params=KERNEL_PARAMS)
    first_call_us = (time.perf_counter() - started) * 1e6

    def memoized(calls: int, _round: int) -> None:
        for _ in range(calls):
            functions.call("computationTime", params=KERNEL_PARAMS)

    grid_sizes = iter(range(1, 10**9))

    def uncached(calls: int, _round: int) -> None:
        for _ in range(calls):
            params = dict(KERNEL_PARAMS, gridSize=next(grid_sizes))
            functions.call("computationTime", params=params)

    racer = MiniRacer()
    racer.eval("function f(p) { return p.x * 2; }")

    def public_eval(calls: int, _round: int) -> None:
        for index in range(calls):
            racer.eval(f"f({{x: {index}}})", timeout_sec=1.0)

    figures = {
        "memoized_us": best_per_call_us(memoized, 200_000, repeat),
        "uncached_us": best_per_call_us(uncached, 2_000, repeat),
        "first_call_ms": first_call_us / 1e3,
        "mini_racer_public_eval_us": best_per_call_us(public_eval, 2_000, repeat),
    }
    racer.close()
    shallow.clear_caches()
    return figures


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5, help="rounds; the best is kept")
    parser.add_argument("--json", action="store_true", help="print JSON instead of a table")
    parser.add_argument(
        "--no-pin", action="store_true", help="do not keep Python and V8 on one CPU"
    )
    options = parser.parse_args()
    cpu = None if options.no_pin else keep_on_one_cpu()
    figures = measure(options.repeat)
    figures["pinned_cpu"] = -1 if cpu is None else cpu
    if options.json:
        print(json.dumps(figures, indent=2))
        return
    print(
        f"shallow functions, {platform.python_implementation()} {platform.python_version()}, "
        f"best of {options.repeat}, "
        + ("not pinned" if cpu is None else f"Python and V8 kept on CPU {cpu}")
    )
    print(f"  memoized call          {figures['memoized_us']:10.3f} us   (target <= 2)")
    print(f"  uncached call          {figures['uncached_us']:10.1f} us   (target <= 200)")
    print(f"  first call (context)   {figures['first_call_ms']:10.1f} ms")
    print(f"  mini-racer public eval {figures['mini_racer_public_eval_us']:10.1f} us   (reference)")


if __name__ == "__main__":
    main()
