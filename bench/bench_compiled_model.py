"""An uncached call of a user-edited JavaScript model, compiled to Python (issue 41 item 1).

The model has a comment, a helper function and a conditional; every call's parameters are
distinct, so each is a memo miss. Rounds of N calls each, median per call:
- `call`: `ShallowFunctions.call` (the memo's key and miss, the compiled model, the checks);
- `compiled`: the compiled model alone (`CompiledTwin.call`);
- `v8`: the same calls evaluated in V8 (`twin=False`: what every call of such a model cost
  before), on a twentieth of the calls;
- `python`: the same formula written in Python (what a SimPy user pays for it), as the
  machine's yardstick: the ratios hold on a loaded machine where the microseconds do not.

    .venv/bin/python bench/bench_compiled_model.py [--rounds 7] [--calls 20000]
"""

from __future__ import annotations

import argparse
import statistics
import time

from simulator.models.js_compiler import CompiledTwin
from simulator.shallow import ShallowFunctions

SOURCE = """\
// a user's edit of a CPU model: a helper and a conditional
function rate(gflops, efficiency) {
  return gflops * 1e9 * efficiency;
}

function computationTime(params) {
  var flops = params.get('flops');
  var efficiency = params.get('efficiency', 0.8);
  if (flops > 1e9) {
    return flops / rate(gflops, efficiency) + overhead;
  }
  return flops / rate(gflops, 1) + overhead;
}
"""
ATTRIBUTES = {"gflops": 12.5, "overhead": 2e-6}


def python_model(params: dict[str, float]) -> float:
    flops = params["flops"]
    efficiency = params.get("efficiency", 0.8)
    if flops > 1e9:
        return flops / (12.5 * 1e9 * efficiency) + 2e-6
    return flops / (12.5 * 1e9 * 1) + 2e-6


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--calls", type=int, default=20_000)
    options = parser.parse_args()
    functions = ShallowFunctions(model_key="edited", source=SOURCE, attributes=ATTRIBUTES)
    twin = functions._twin
    assert isinstance(twin, CompiledTwin), functions.fallback
    in_v8 = ShallowFunctions(model_key="edited", source=SOURCE, attributes=ATTRIBUTES, twin=False)
    figures: dict[str, list[float]] = {"call": [], "compiled": [], "v8": [], "python": []}
    offset = 0
    for _ in range(options.rounds):
        batches = {
            name: [{"flops": float(offset + i) * 1e5 + 0.5} for i in range(options.calls)]
            for name in figures
        }
        offset += options.calls
        functions._memo.clear()
        started = time.perf_counter()
        for params in batches["call"]:
            functions.call("computationTime", params=params)
        figures["call"].append(time.perf_counter() - started)
        started = time.perf_counter()
        for params in batches["compiled"]:
            twin.call("computationTime", (), params)
        figures["compiled"].append(time.perf_counter() - started)
        started = time.perf_counter()
        for params in batches["v8"][: options.calls // 20]:
            in_v8.call("computationTime", params=params)
        figures["v8"].append((time.perf_counter() - started) * 20)
        started = time.perf_counter()
        for params in batches["python"]:
            python_model(params)
        figures["python"].append(time.perf_counter() - started)
    assert twin.declines == 0
    python = statistics.median(figures["python"])
    for name, seconds in figures.items():
        median = statistics.median(seconds)
        per_call = median / options.calls * 1e6
        print(
            f"{name:9s} {per_call:7.2f} us a call (median of {options.rounds}), {median / python:5.1f}x Python"
        )


if __name__ == "__main__":
    main()
