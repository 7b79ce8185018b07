"""An uncached call of a user-edited JavaScript model, compiled to Python (issue 41 items 1-2).

The model has a comment, a helper function and a conditional; every call's parameters are
distinct, so each is a memo miss. Rounds of N calls each, the variants interleaved in every
round, median per call:
- `miss`: the hot path's memo miss as the engine makes it (simulator/_speedups_sim.c
  `memoized_duration`, simulator.api `Sim.computation`): the key built, looked up in the
  memo, and `ShallowFunctions.computation_missed(key, params)` (the compiled model, the one
  check of its value, the memo's keeping);
- `miss, general path`: the same with `ShallowFunctions._missed_general`, the path every
  other model takes (twin's `call`, `model_seconds`, the memo kept at every miss), in the
  same rounds;
- `call`: `ShallowFunctions.call` (the memo's key built from the function's name too);
- the parts of `miss`: `key` (the key alone), `key + lookup`, `seconds` (the compiled model
  and the check of its value, `CompiledTwin.missed_caller` keeping nothing), `model function` (the generated
  Python function alone, on the params object it reads);
- `v8`: the same calls evaluated in V8 (`twin=False`: what every call of such a model cost
  before the compiler), on a twentieth of the calls;
- `python`: the same formula written in Python (what a SimPy user pays for it), as the
  machine's yardstick: the ratios hold on a loaded machine where the microseconds do not.

Times are the process's CPU time (`time.process_time`, `--clock wall` for wall time): on the
shared 2-core machine other engineers' processes stretch wall time, much less CPU time.

    .venv/bin/python bench/bench_compiled_model.py [--rounds 7] [--calls 20000] [--no-v8]
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from simulator.hotpath import COMPUTATION_TIME
from simulator.models.js_compiler import CompiledTwin, JSParams
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


Batch = list[dict[str, float]]


def variants(
    functions: ShallowFunctions, in_v8: ShallowFunctions
) -> dict[str, Callable[[Batch], None]]:
    """Each variant: run it on a batch of distinct params."""
    twin = functions._twin
    assert isinstance(twin, CompiledTwin), functions.fallback
    # the compiled model's miss keeping nothing: its value and the check of it
    seconds = twin.missed_caller(COMPUTATION_TIME, {}, 0, 1 << 62, functions._missed_general)
    assert seconds is not None
    model = twin._bound[0][COMPUTATION_TIME] if twin._bound is not None else None
    assert model is not None
    memo = functions.computation_memo

    def miss(batch: Batch) -> None:
        missed = functions.computation_missed
        get = memo.get
        for params in batch:
            key = (COMPUTATION_TIME, (), tuple(params.items()))
            if get(key) is None:
                missed(key, params)

    def general(batch: Batch) -> None:
        missed = functions._missed_general
        get = memo.get
        for params in batch:
            key = (COMPUTATION_TIME, (), tuple(params.items()))
            if get(key) is None:
                missed(key, params)

    def call(batch: Batch) -> None:
        for params in batch:
            functions.call(COMPUTATION_TIME, params=params)

    def key(batch: Batch) -> None:
        for params in batch:
            (COMPUTATION_TIME, (), tuple(params.items()))

    def lookup(batch: Batch) -> None:
        get = memo.get
        for params in batch:
            get((COMPUTATION_TIME, (), tuple(params.items())))

    def checked(batch: Batch) -> None:
        for params in batch:
            seconds(None, params)

    def function(batch: Batch) -> None:
        for params in [JSParams(params) for params in batch]:
            model(params)

    def v8(batch: Batch) -> None:
        for params in batch[: len(batch) // 20]:
            in_v8.call(COMPUTATION_TIME, params=params)

    def python(batch: Batch) -> None:
        for params in batch:
            python_model(params)

    return {
        "miss": miss,
        "miss, general path": general,
        "call": call,
        "key": key,
        "key + lookup": lookup,
        "seconds": checked,
        "model function": function,
        "v8": v8,
        "python": python,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--calls", type=int, default=20_000)
    parser.add_argument("--no-v8", action="store_true", help="leave out the V8 row")
    parser.add_argument("--clock", choices=("cpu", "wall"), default="cpu")
    options = parser.parse_args()
    functions = ShallowFunctions(model_key="edited", source=SOURCE, attributes=ATTRIBUTES)
    in_v8 = ShallowFunctions(model_key="edited", source=SOURCE, attributes=ATTRIBUTES, twin=False)
    runs = variants(functions, in_v8)
    if options.no_v8:
        del runs["v8"]
    figures: dict[str, list[float]] = {name: [] for name in runs}
    clock = time.process_time if options.clock == "cpu" else time.perf_counter
    offset = 0
    for _ in range(options.rounds):
        for name, run in runs.items():
            batch = [{"flops": float(offset + i) * 1e5 + 0.5} for i in range(options.calls)]
            offset += options.calls
            functions.computation_memo.clear()
            started = clock()
            run(batch)
            elapsed = clock() - started
            figures[name].append(elapsed * 20 if name == "v8" else elapsed)
    twin = functions._twin
    assert isinstance(twin, CompiledTwin) and twin.declines == 0
    print(
        f"{options.rounds} rounds of {options.calls:,} distinct calls, {options.clock} time, "
        "load average " + ", ".join(f"{load:.2f}" for load in os.getloadavg())
    )
    python = statistics.median(figures["python"])
    for name, seconds in figures.items():
        median = statistics.median(seconds)
        per_call = median / options.calls * 1e6
        print(f"{name:19s} {per_call:7.2f} us a call (median), {median / python:6.1f}x Python")
    ratio = statistics.median(figures["miss, general path"]) / statistics.median(figures["miss"])
    print(f"miss: {ratio:.2f}x faster than the general path, same rounds")


if __name__ == "__main__":
    main()
