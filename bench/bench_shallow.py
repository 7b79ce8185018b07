"""Shallow-function latency: memoized and uncached calls of a JavaScript computational model.

The model is the shipped MERPSYS example's Volkov GPU model (examples/merpsys_gtx970) bound
to the GTX 970's attributes, called as the runner calls it: `computationTime(params)` with
the kernel's parameters. Measured, each the best of `--repeat` rounds:

- memoized: the same call again (a dict lookup; target <= 2 us);
- uncached in V8: a different `gridSize` every call, so every call evaluates JavaScript in
  the warm, shared V8 context (`ShallowFunctions(..., twin=False)`; target <= 200 us), its
  result handed back through simulator._v8results's C slot; and, interleaved with it, the same
  calls handed back through mini-racer's own Python callback (as without that extension);
- uncached through the Python twin: the same distinct calls answered by the model's Python
  twin (`simulator/models/js_compiler.py`), as every run of the shipped source now is (target:
  a few us); also the built-in "Volkov GPU" model's twin, occupancy from registers;
- first call: creating the V8 context (isolate, prelude, model source) and evaluating; and
  binding the twin and its first call;
- for comparison, one evaluation through mini-racer's public `MiniRacer.eval`;
- with `--quickjs`, where the `quickjs` package can be imported (it is not a requirement:
  `pip install --target /tmp/qjs quickjs`, then `PYTHONPATH=/tmp/qjs`): the same distinct
  calls in an in-process QuickJS context built like the V8 one (the model's source as the body
  of a factory run afresh for every call, frozen params with `get`), by a call script (as V8
  gets) and through a function handle given the params as JSON text; and whether QuickJS's
  time and memory limits stop a runaway loop and a heap blow-up and leave the context usable;
- with `--scaled-example PAIRS`, whole runs (`run_simulation`, in this process) of the example
  scaled to PAIRS CPU-GPU pairs, each running the application `--rounds` times, with the
  kernel size differing in every round of every pair (every model call is new) or the same
  everywhere (the memo answers), through the twins and in V8: events per second.

Like a sandboxed simulation run (simulator/_child.py), the process first keeps itself and
V8's threads on one CPU (`shallow.keep_on_one_cpu`); `--no-pin` measures without that.

    PYTHONPATH=. .venv/bin/python bench/bench_shallow.py [--repeat N] [--json] [--quickjs]
        [--scaled-example PAIRS [--rounds R]]
"""

from __future__ import annotations

import argparse
import importlib.metadata
import json
import os
import platform
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from py_mini_racer import MiniRacer

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # `python bench/<file>.py`

from simulator import shallow
from simulator.models import builtin_models
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
# The built-in "Volkov GPU" model on the seed's GTX 970: occupancy from 8 registers per thread
GTX970 = {
    "SMs": 13,
    "SMCoreClock": 1253,
    "CUDACores": 128,
    "schedulers": 4,
    "warpSize": 32,
    "memoryClock": 1753,
    "busWidth": 256,
    "dataRate": 4,
    "computeCapability": 5.2,
    "maxWarpsPerSM": 64,
    "maxBlocksPerSM": 32,
    "registersPerSM": 65536,
    "sharedMemPerSM": 98304,
    "maxSharedMemPerBlock": 49152,
}
VOLKOV_PARAMS: dict[str, object] = {
    "N": 10**7,
    "blockSize": 256,
    "registersPerThread": 8,
    "CUDACoreInstructions": 27,
    "issuedInstructions": 27,
    "GMEMBytesTransferred": 384,
    "latencyBound": 966,
    "kernelExecutionLambda": 0.703787,
}


def example_model() -> tuple[str, dict[str, object]]:
    """Return the example's GPU model source and the example's GTX 970 attributes."""
    snapshot = json.loads((EXAMPLE / "snapshot.json").read_text())
    gpu = next(node for node in snapshot["nodes"] if node["id"] == "gpu0")
    return snapshot["models"][gpu["model"]]["source"], snapshot["hardware"][gpu["hardware"]][
        "attributes"
    ]


def gpu_model(*, twin: bool) -> ShallowFunctions:
    """Return the example's GPU model bound to the example's GTX 970 record."""
    source, attributes = example_model()
    return ShallowFunctions(
        model_key="volkov_gtx970", source=source, attributes=attributes, twin=twin
    )


def best_per_call_us(run: Callable[[int], None], calls: int, repeat: int) -> float:
    """Return the best over `repeat` rounds of the mean time of one of `calls` calls (us)."""
    best = float("inf")
    for _ in range(repeat):
        started = time.perf_counter()
        run(calls)
        best = min(best, (time.perf_counter() - started) / calls * 1e6)
    return best


def distinct_calls(
    functions: ShallowFunctions, params: dict[str, object], key: str
) -> Callable[[int], None]:
    """Return a run of `computationTime` calls whose `key` differs every time (no memo hit)."""
    values = iter(range(1, 10**9))

    def run(calls: int) -> None:
        for _ in range(calls):
            functions.call("computationTime", params={**params, key: next(values)})

    return run


def measure(repeat: int) -> dict[str, float]:
    """Return the latencies in microseconds (first V8 call in milliseconds)."""
    shallow.clear_caches()
    in_v8 = gpu_model(twin=False)
    started = time.perf_counter()
    in_v8.call("computationTime", params=KERNEL_PARAMS)
    first_call_ms = (time.perf_counter() - started) * 1e3

    source, attributes = example_model()
    started = time.perf_counter()
    twinned = ShallowFunctions(
        model_key="volkov_gtx970", source=source, attributes=attributes, twin=True
    )
    twinned.call("computationTime", params=KERNEL_PARAMS)
    twin_first_call_us = (time.perf_counter() - started) * 1e6
    assert twinned.twinned, (
        "the example's source is no longer compiled (simulator.models.js_compiler)"
    )

    def memoized(calls: int) -> None:
        for _ in range(calls):
            in_v8.call("computationTime", params=KERNEL_PARAMS)

    volkov_source = next(m.source for m in builtin_models() if m.name == "Volkov GPU")
    volkov = ShallowFunctions(model_key="volkov", source=volkov_source, attributes=GTX970)
    assert volkov.twinned, (
        "the built-in Volkov GPU source is no longer compiled (simulator.models.js_compiler)"
    )

    racer = MiniRacer()
    racer.eval("function f(p) { return p.x * 2; }")

    def public_eval(calls: int) -> None:
        for index in range(calls):
            racer.eval(f"f({{x: {index}}})", timeout_sec=1.0)

    # The same distinct calls with the results coming back through mini-racer's own Python
    # callback, as where simulator._v8results is not built (a context of its own: another
    # attribute set), interleaved round by round with the C slot's.
    built = shallow._v8results
    shallow._v8results = None
    try:
        through_callback = ShallowFunctions(
            model_key="volkov_gtx970",
            source=source,
            attributes={**attributes, "benchHandBack": 1},
            twin=False,
        )
        through_callback.call("computationTime", params=KERNEL_PARAMS)
    finally:
        shallow._v8results = built
    uncached, uncached_callback = float("inf"), float("inf")
    slot_calls = distinct_calls(in_v8, KERNEL_PARAMS, "gridSize")
    callback_calls = distinct_calls(through_callback, KERNEL_PARAMS, "gridSize")
    for _ in range(repeat):
        uncached = min(uncached, best_per_call_us(slot_calls, 2_000, 1))
        uncached_callback = min(uncached_callback, best_per_call_us(callback_calls, 2_000, 1))

    figures = {
        "memoized_us": best_per_call_us(memoized, 200_000, repeat),
        "uncached_us": uncached,
        "uncached_callback_us": uncached_callback,
        "hand_back": "C slot" if built is not None else "mini-racer's callback",
        "uncached_twin_us": best_per_call_us(
            distinct_calls(twinned, KERNEL_PARAMS, "gridSize"), 100_000, repeat
        ),
        "uncached_volkov_builtin_twin_us": best_per_call_us(
            distinct_calls(volkov, VOLKOV_PARAMS, "N"), 100_000, repeat
        ),
        "first_call_ms": first_call_ms,
        "twin_first_call_us": twin_first_call_us,
        "mini_racer_public_eval_us": best_per_call_us(public_eval, 2_000, repeat),
    }
    racer.close()
    shallow.clear_caches()
    return figures


# A QuickJS context built like shallow.py's V8 one, less the determinism prelude: attributes
# as globals and `hw`, the source as the body of a factory run afresh for every call, params
# frozen with `get`.
QUICKJS_PRELUDE = """
var makeParams = function (values) {
  var proto = {get: function (name, fallback) {
    return Object.prototype.hasOwnProperty.call(values, name) ? values[name] : fallback; }};
  return Object.freeze(Object.assign(Object.create(proto), values));
};
var __parasim_call = function (name, params) {
  return modelFactory()[name](makeParams(params));
};
var __parasim_call_json = function (name, text) { return __parasim_call(name, JSON.parse(text)); };
"""


def measure_quickjs(repeat: int) -> dict[str, Any]:
    """Return QuickJS's per-call costs for the example's model and whether its limits work."""
    import quickjs  # optional: not a requirement

    source, attributes = example_model()
    context = quickjs.Context()
    context.set_memory_limit(shallow.DEFAULT_MEMORY_LIMIT_BYTES)
    context.set_time_limit(shallow.DEFAULT_TIMEOUT_S)
    context.eval(f"var hw = Object.freeze({json.dumps(attributes)});")
    for name, value in attributes.items():
        context.eval(f"var {name} = {json.dumps(value)};")
    context.eval(QUICKJS_PRELUDE)
    context.eval(
        f"var modelFactory = function () {{{source}\n;return {{computationTime: computationTime}};}};"
    )
    expected = gpu_model(twin=False).call("computationTime", params=KERNEL_PARAMS)
    script = f"__parasim_call('computationTime', {json.dumps(KERNEL_PARAMS)})"
    assert context.eval(script) == expected, "QuickJS and V8 disagree on the example"
    call_json = context.get("__parasim_call_json")
    grid_sizes = iter(range(1, 10**9))

    def by_script(calls: int) -> None:
        for _ in range(calls):
            params = json.dumps({**KERNEL_PARAMS, "gridSize": next(grid_sizes)})
            context.eval(f"__parasim_call('computationTime', {params})")

    def by_handle(calls: int) -> None:
        for _ in range(calls):
            call_json(
                "computationTime", json.dumps({**KERNEL_PARAMS, "gridSize": next(grid_sizes)})
            )

    figures: dict[str, Any] = {
        "quickjs_version": importlib.metadata.version("quickjs"),
        "quickjs_uncached_script_us": best_per_call_us(by_script, 20_000, repeat),
        "quickjs_uncached_handle_us": best_per_call_us(by_handle, 20_000, repeat),
    }
    limited = quickjs.Context()
    limited.set_time_limit(0.2)
    limited.set_memory_limit(32 * 1024 * 1024)
    started = time.perf_counter()
    try:
        limited.eval("while (true) {}")
        figures["quickjs_time_limit"] = "not enforced"
    except quickjs.JSException as error:
        figures["quickjs_time_limit"] = (
            f"{str(error).splitlines()[0]} after {time.perf_counter() - started:.3f} s (limit 0.2)"
        )
    try:
        limited.eval("var hoard = []; while (true) hoard.push(new Array(100000).fill(1.5));")
        figures["quickjs_memory_limit"] = "not enforced"
    except quickjs.JSException as error:
        figures["quickjs_memory_limit"] = f"{str(error).splitlines()[0]} (limit 32 MiB)"
    figures["quickjs_usable_after_limits"] = limited.eval("1 + 1") == 2
    return figures


def scaled_example_app(rounds: int, *, distinct: bool) -> str:
    """Return the example's application run `rounds` times, with a kernel size (N) that
    differs in every round of every pair when `distinct`."""
    body = (EXAMPLE / "app.py").read_text()
    size = "N = N0 + 256 * (rank * ROUNDS + round_index)" if distinct else "N = N0"
    lines = [size, *body.splitlines()]
    return f"ROUNDS = {rounds}\nN0 = N\nfor round_index in range(ROUNDS):\n" + "".join(
        f"    {line}\n" for line in lines
    )


def measure_scaled_example(pairs: int, rounds: int, repeat: int) -> dict[str, Any]:
    """Return events per second of the example scaled to `pairs` CPU-GPU pairs (best of
    `repeat` interleaved runs): distinct or repeated inputs, through the twins or in V8."""
    from simulator.runner import run_simulation

    snapshot = json.loads((EXAMPLE / "snapshot.json").read_text())
    for node in snapshot["nodes"]:
        if node["id"] in ("cpu0", "bus0", "gpu0"):
            node["count"] = pairs
    variables = {"N": 10**7, "blockSz": 256, "computeIntensity": 1, "occupancy": 64}
    cases = {
        f"{inputs}_{engine}": (twins, inputs == "distinct")
        for inputs in ("distinct", "repeated")
        for engine, twins in (("twins", "1"), ("v8", "0"))
    }
    best: dict[str, dict[str, Any]] = {}
    previous = os.environ.get(shallow.TWINS_ENVIRONMENT_VARIABLE)
    try:
        for _ in range(repeat):
            for case, (twins, distinct) in cases.items():
                os.environ[shallow.TWINS_ENVIRONMENT_VARIABLE] = twins
                shallow.clear_caches()
                stats = run_simulation(
                    snapshot,
                    scaled_example_app(rounds, distinct=distinct),
                    labels={"CPU": pairs, "GPU": pairs},
                    variables=variables,
                )["stats"]
                if case not in best or stats["wall_s"] < best[case]["wall_s"]:
                    best[case] = stats
    finally:
        if previous is None:
            os.environ.pop(shallow.TWINS_ENVIRONMENT_VARIABLE, None)
        else:
            os.environ[shallow.TWINS_ENVIRONMENT_VARIABLE] = previous
        shallow.clear_caches()
    figures: dict[str, Any] = {"scaled_pairs": pairs, "scaled_rounds": rounds}
    for case, stats in best.items():
        figures[f"scaled_{case}_events"] = stats["events"]
        figures[f"scaled_{case}_events_per_s"] = stats["events_per_s"]
    return figures


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5, help="rounds; the best is kept")
    parser.add_argument("--json", action="store_true", help="print JSON instead of a table")
    parser.add_argument(
        "--no-pin", action="store_true", help="do not keep Python and V8 on one CPU"
    )
    parser.add_argument(
        "--quickjs", action="store_true", help="also measure the optional `quickjs` package"
    )
    parser.add_argument(
        "--scaled-example",
        type=int,
        metavar="PAIRS",
        help="also run the example scaled to PAIRS CPU-GPU pairs (events per second)",
    )
    parser.add_argument(
        "--rounds", type=int, default=20, help="application rounds per pair (--scaled-example)"
    )
    options = parser.parse_args()
    cpu = None if options.no_pin else keep_on_one_cpu()
    figures: dict[str, Any] = dict(measure(options.repeat))
    if options.quickjs:
        figures.update(measure_quickjs(options.repeat))
    if options.scaled_example:
        figures.update(
            measure_scaled_example(options.scaled_example, options.rounds, options.repeat)
        )
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
    print(
        f"  uncached call, V8      {figures['uncached_us']:10.1f} us   (target <= 200;"
        f" results handed back through {figures['hand_back']})"
    )
    print(
        f"  uncached call, V8      {figures['uncached_callback_us']:10.1f} us   "
        "(through mini-racer's Python callback, as without simulator._v8results)"
    )
    print(f"  uncached call, twin    {figures['uncached_twin_us']:10.2f} us   (target: a few)")
    print(
        f"  uncached, built-in Volkov GPU twin {figures['uncached_volkov_builtin_twin_us']:6.2f} us"
        "   (occupancy from registers)"
    )
    print(f"  first call, V8 context {figures['first_call_ms']:10.1f} ms")
    print(f"  first call, twin       {figures['twin_first_call_us']:10.1f} us")
    print(f"  mini-racer public eval {figures['mini_racer_public_eval_us']:10.1f} us   (reference)")
    if options.quickjs:
        print(f"  QuickJS {figures['quickjs_version']}, in process, same model and distinct calls:")
        print(f"    by call script       {figures['quickjs_uncached_script_us']:10.1f} us")
        print(f"    by function handle   {figures['quickjs_uncached_handle_us']:10.1f} us")
        print(f"    time limit:   {figures['quickjs_time_limit']}")
        print(f"    memory limit: {figures['quickjs_memory_limit']}")
        print(f"    context usable after both: {figures['quickjs_usable_after_limits']}")
    if options.scaled_example:
        print(
            f"  the example scaled to {figures['scaled_pairs']} CPU-GPU pairs, "
            f"{figures['scaled_rounds']} rounds each, events per second (run_simulation):"
        )
        for inputs in ("distinct", "repeated"):
            for engine in ("twins", "v8"):
                case = f"scaled_{inputs}_{engine}"
                print(
                    f"    {inputs:8s} inputs, {engine:5s} {figures[case + '_events_per_s']:10.0f}"
                    f"   ({figures[case + '_events']} events)"
                )


if __name__ == "__main__":
    main()
