"""Tests of the JavaScript computational-model runtime (shallow functions)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from simulator import shallow
from simulator.errors import ModelEvaluationError
from simulator.shallow import ShallowFunctions
from tests.simulator.fresh_python import run_code

GPU_ATTRIBUTES = {"SMs": 13, "SMCoreClock": 1050.0, "L2 size": 1.75, "class": 3}

MODEL = """\
var scale = 2;
function computationTime(params) {
  return params.x * scale / SMs + hw["L2 size"] * 0 + params.get('extra', 0);
}
function p2pTime(size, params) {
  return params.direction === 'HostToDevice' ? size / 1e9 : size / 2e9;
}
function power(state, params) {
  if (state === 'idle') return 10;
  throw new Error('no power figure for ' + state);
}
function failureRate(params) { return hw.SMs * 1e-9; }
"""


@pytest.fixture(autouse=True)
def fresh_caches() -> Iterator[None]:
    shallow.clear_caches()
    yield
    shallow.clear_caches()


def model(source: str = MODEL, **kwargs: object) -> ShallowFunctions:
    return ShallowFunctions(
        model_key="gtx970",
        source=source,
        attributes=GPU_ATTRIBUTES,
        **kwargs,  # type: ignore[arg-type]
    )


def test_it_exposes_attributes_as_globals_and_hw_and_params_as_fields_and_get() -> None:
    functions = model()

    assert functions.call("computationTime", params={"x": 13}) == pytest.approx(2.0)
    assert functions.call("computationTime", params={"x": 13, "extra": 0.5}) == pytest.approx(2.5)
    assert functions.call("failureRate", params={}) == pytest.approx(13e-9)


def test_it_passes_positional_arguments_and_params_direction() -> None:
    functions = model()

    assert functions.call("p2pTime", 1e9, params={"direction": "HostToDevice"}) == 1.0
    assert functions.call("p2pTime", 1e9, params={"direction": "DeviceToHost"}) == 0.5
    assert functions.call("power", "idle", params={}) == 10.0


def test_it_tells_which_well_known_functions_the_model_defines() -> None:
    functions = ShallowFunctions(
        model_key="link", source="function p2pTime(size, params) { return 1; }", attributes={}
    )

    assert functions.has("p2pTime")
    assert not functions.has("computationTime")
    assert not functions.has("constructor")
    assert not functions.has("parseInt")
    assert not functions.has("not a name")


@pytest.mark.parametrize("made_ahead", [False, True], ids=["new-isolate", "spare-isolate"])
def test_the_attributes_are_bound_once_and_the_global_object_is_frozen_after(
    made_ahead: bool,
) -> None:
    # A spare isolate runs the prelude before the attributes are known (a pooled sandbox
    # child); either way the model finds the same frozen world and cannot bind again.
    if made_ahead:
        shallow.start_spare_racer()
    source = """\
function computationTime(params) {
  var rebound = 0;
  try { __parasim_bind({evil: 1}, ['evil']); } catch (e) { rebound = e instanceof TypeError; }
  return (Object.isFrozen(globalThis) ? 1 : 0) + (Object.isFrozen(hw) ? 2 : 0) +
      (rebound ? 4 : 0) + (typeof evil === 'undefined' ? 8 : 0) + SMs * 100;
}"""
    functions = model(source, twin=False)

    assert functions.call("computationTime", params={}) == 15.0 + 1300
    assert shallow._spare_racers == []


def test_the_functions_a_model_defines_are_told_as_it_loads_without_further_calls(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    functions = model(twin=False)
    functions.has("power")  # the context is made and the source loaded
    evaluated: list[str] = []
    real_eval = shallow._Evaluator.eval
    monkeypatch.setattr(
        shallow._Evaluator,
        "eval",
        lambda self, code: evaluated.append(code) or real_eval(self, code),
    )

    answers = {name: functions.has(name) for name in (*shallow.WELL_KNOWN_FUNCTIONS, "scale", "hw")}

    assert answers == {
        "computationTime": True,
        "p2pTime": True,
        "power": True,
        "failureRate": True,
        "scale": False,  # a variable, not a function
        "hw": False,
    }
    assert evaluated == []


def test_it_makes_non_identifier_attributes_reachable_only_through_hw() -> None:
    source = (
        "function computationTime(params) {\n"
        "  return (typeof L2size === 'undefined' ? 1 : 0) + (typeof hw['class'] === 'number' ? 1 : 0);\n"
        "}"
    )

    assert model(source).call("computationTime", params={}) == 2.0


def test_it_keeps_attributes_and_params_read_only() -> None:
    source = """\
function computationTime(params) {
  SMs = 1000;
  try { hw.SMs = 1000; } catch (e) {}
  try { params.x = 1000; } catch (e) {}
  return SMs + hw.SMs + params.x;
}"""

    assert model(source).call("computationTime", params={"x": 1}) == 27.0


def test_it_reports_a_javascript_exception_with_model_function_and_line() -> None:
    with pytest.raises(ModelEvaluationError) as caught:
        model().call("power", "active", params={})

    error = caught.value
    assert (error.model, error.function, error.line) == ("gtx970", "power", 10)
    assert str(error) == (
        "computational model 'gtx970', function power(), line 10: Error: no power figure for active"
    )


def test_it_reports_a_type_error_deep_in_a_helper_at_the_helper_line() -> None:
    source = """\
function helper(params) {
  var missing = params.nested;
  return missing.value;
}
function computationTime(params) {
  return helper(params);
}"""

    with pytest.raises(ModelEvaluationError) as caught:
        model(source).call("computationTime", params={})

    assert caught.value.line == 3
    assert "TypeError: Cannot read properties of undefined (reading 'value')" in str(caught.value)


def test_it_reports_a_syntax_error_at_the_users_line() -> None:
    source = "var a = 1;\n\nfunction computationTime(params) {\n  return a +;\n}\n"

    with pytest.raises(ModelEvaluationError) as caught:
        model(source).call("computationTime", params={})

    assert caught.value.line == 4
    assert caught.value.detail == "SyntaxError: Unexpected token ';'"


@pytest.mark.parametrize(
    ("body", "detail"),
    [
        ("return 'fast';", 'returned the string "fast", expected a number'),
        ("return undefined;", "returned undefined, expected a number"),
        ("return true;", "returned the boolean true, expected a number"),
        ("return -0.5;", "returned -0.5, expected a non-negative number"),
        ("return 0 / 0;", "returned NaN, expected a finite number"),
        ("return 1 / 0;", "returned Infinity, expected a finite number"),
    ],
)
def test_it_rejects_results_that_are_not_finite_non_negative_numbers(
    body: str, detail: str
) -> None:
    source = f"// model\nfunction computationTime(params) {{\n  {body}\n}}"

    with pytest.raises(ModelEvaluationError) as caught:
        model(source).call("computationTime", params={})

    assert caught.value.detail == detail
    assert caught.value.line == 2  # where the function is defined


def test_it_reports_a_function_the_model_does_not_define() -> None:
    with pytest.raises(ModelEvaluationError) as caught:
        model().call("memoryTime", params={})

    assert caught.value.detail == "the model does not define function memoryTime()"


def needs_the_c_slot() -> None:
    """Skip where simulator._v8results is not used; fail where CI requires the C cores."""
    if shallow._v8results is not None:
        return
    if os.environ.get("PARASIM_PURE_PYTHON"):
        pytest.skip("PARASIM_PURE_PYTHON is set: mini-racer's own callback hands results back")
    if os.environ.get("PARASIM_REQUIRE_SPEEDUPS") == "1":
        pytest.fail("simulator._v8results is required (PARASIM_REQUIRE_SPEEDUPS=1) but not built")
    pytest.skip("simulator._v8results is not built")


@pytest.fixture(params=["C slot", "mini-racer's callback"])
def hand_back(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    """Each way V8's results come back: simulator._v8results's slot, or mini-racer's own
    Python callback (where the C extension is not built)."""
    if request.param == "C slot":
        needs_the_c_slot()
    else:
        monkeypatch.setattr(shallow, "_v8results", None)
    return str(request.param)


def test_results_come_back_through_the_slot_where_it_is_built_and_say_the_same(
    hand_back: str,
) -> None:
    functions = model()

    assert functions.call("computationTime", params={"x": 26.0}) == 4.0
    assert functions.call("p2pTime", 2e9, params={"direction": "DeviceToHost"}) == 1.0
    with pytest.raises(ModelEvaluationError) as caught:
        functions.call("power", "busy", params={})
    assert caught.value.detail == "Error: no power figure for busy"
    assert caught.value.line == 10
    racer = functions._cached_context.evaluator.racer  # type: ignore[union-attr]
    assert isinstance(racer, shallow._Isolate) == (hand_back == "C slot")


def test_an_isolate_with_the_slot_has_no_event_loop_and_starts_no_thread_for_one() -> None:
    needs_the_c_slot()
    before = set(threading.enumerate())

    functions = model(twin=False)  # in V8, not the compiled Python
    assert functions.call("computationTime", params={"x": 13.0}) == 2.0

    # mini-racer's MiniRacer runs its own asyncio loop: the one running in this thread (the
    # end-to-end tests' Playwright leaves one), else on a thread it starts, named by target
    racer = functions._cached_context.evaluator.racer  # type: ignore[union-attr]
    assert isinstance(racer, shallow._Isolate) and racer._ctx.event_loop is None
    started = set(threading.enumerate()) - before
    assert not [thread for thread in started if "run_event_loop" in thread.name]


def test_it_stops_an_infinite_loop_at_the_time_limit_and_stays_usable(hand_back: str) -> None:
    source = "function computationTime(params) {\n  while (params.spin) {}\n  return 1;\n}"
    functions = model(source, timeout_s=0.2)

    started = time.monotonic()
    with pytest.raises(ModelEvaluationError) as caught:
        functions.call("computationTime", params={"spin": True})

    assert time.monotonic() - started < 2.0
    assert caught.value.detail == "evaluation exceeded the time limit of 0.2 s"
    assert caught.value.line == 1
    assert functions.call("computationTime", params={"spin": False}) == 1.0


def test_it_stops_a_memory_blow_up_at_the_heap_limit_and_recovers(hand_back: str) -> None:
    source = """\
function computationTime(params) {
  var hoard = [];
  while (params.grow) hoard.push(new Array(100000).fill(1.5));
  return 1;
}"""
    functions = model(source, memory_limit_bytes=32 * 1024 * 1024, timeout_s=10)

    with pytest.raises(ModelEvaluationError) as caught:
        functions.call("computationTime", params={"grow": True})

    assert caught.value.detail == "evaluation exceeded the memory limit of 32 MiB"
    assert functions.call("computationTime", params={"grow": False}) == 1.0


class Interrupted(Exception):
    pass


def test_a_signal_handlers_exception_while_waiting_leaves_the_context_unused_after() -> None:
    needs_the_c_slot()
    source = "function computationTime(params) {\n  while (params.spin) {}\n  return 1;\n}"
    functions = model(source, timeout_s=30, twin=False)  # in V8, not the compiled Python
    assert functions.call("computationTime", params={"spin": False}) == 1.0
    context = functions._cached_context
    assert context is not None

    def interrupt(signum: int, frame: object) -> None:
        raise Interrupted

    main = threading.get_ident()
    previous = signal.signal(signal.SIGUSR1, interrupt)
    timer = threading.Timer(0.2, signal.pthread_kill, (main, signal.SIGUSR1))
    try:
        timer.start()
        started = time.monotonic()
        with pytest.raises(Interrupted):
            functions.call("computationTime", params={"spin": True})
    finally:
        timer.cancel()
        signal.signal(signal.SIGUSR1, previous)

    assert time.monotonic() - started < 5.0
    evaluator = context.evaluator
    assert evaluator.broken and isinstance(evaluator.racer, shallow._Isolate)
    assert evaluator.racer.abandoned
    # its next evaluation is refused as a timeout, which discards it; a new context answers
    with pytest.raises(ModelEvaluationError, match="time limit"):
        functions.call("computationTime", params={"spin": False, "again": 1})
    assert context.closed and evaluator.racer.slot in shallow._abandoned_slots
    assert functions.call("computationTime", params={"spin": False, "again": 2}) == 1.0


def test_it_gives_javascript_no_typed_arrays_wasm_or_timers() -> None:
    source = """\
function computationTime(params) {
  var names = ['ArrayBuffer', 'SharedArrayBuffer', 'Float64Array', 'WebAssembly', 'setTimeout'];
  return names.filter(function (n) { return typeof globalThis[n] !== 'undefined'; }).length;
}"""

    assert model(source).call("computationTime", params={}) == 0.0


def counting_evaluations(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Return a list that records each evaluation in V8 (a call the memo did not answer).

    A model cannot count its own calls: every call starts from the same state.
    """
    evaluated: list[str] = []
    uncached = ShallowFunctions._call_uncached

    def spy(self: ShallowFunctions, function: str, *rest: object) -> float:
        evaluated.append(function)
        return uncached(self, function, *rest)  # type: ignore[arg-type]

    monkeypatch.setattr(ShallowFunctions, "_call_uncached", spy)
    return evaluated


def test_it_memoizes_on_function_arguments_and_params(monkeypatch: pytest.MonkeyPatch) -> None:
    source = """\
function computationTime(params) { return 1; }
function p2pTime(size, params) { return 2; }
"""
    evaluated = counting_evaluations(monkeypatch)
    functions = model(source)

    functions.call("computationTime", params={"x": 1})
    functions.call("computationTime", params={"x": 1})
    assert len(evaluated) == 1
    functions.call("computationTime", params={"x": 2})
    assert len(evaluated) == 2
    functions.call("p2pTime", 10, params={"x": 1})
    functions.call("p2pTime", 10, params={"x": 1})
    assert len(evaluated) == 3
    functions.call("p2pTime", 20, params={"x": 1})
    assert len(evaluated) == 4
    functions.call("computationTime", params={"x": [1, 2]})
    functions.call("computationTime", params={"x": [1, 2]})
    assert len(evaluated) == 5


def test_it_shares_memo_and_context_between_instances_of_one_model_and_attributes(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    source = "function computationTime(params) { return SMs; }"
    evaluated = counting_evaluations(monkeypatch)
    one, two = model(source), model(source)
    other = ShallowFunctions(model_key="gtx970", source=source, attributes={"SMs": 16})

    assert one.call("computationTime", params={}) == 13.0
    assert two.call("computationTime", params={}) == 13.0
    assert len(evaluated) == 1
    assert other.call("computationTime", params={}) == 16.0
    assert len(evaluated) == 2
    assert one._context("computationTime") is two._context("computationTime")


def test_a_memoized_call_does_not_reach_v8(monkeypatch: pytest.MonkeyPatch) -> None:
    """Its speed (about 2 us) is measured in bench/bench_shallow.py; what makes it fast, and
    is tested here, is that a repeated call is answered from the memo, never by V8."""
    functions = model()
    first = functions.call("computationTime", params={"x": 3})

    def no_v8(*args: object, **kwargs: object) -> float:
        raise AssertionError("a memoized call reached V8")

    monkeypatch.setattr(functions, "_call_uncached", no_v8)
    assert [functions.call("computationTime", params={"x": 3}) for _ in range(3)] == [first] * 3


def test_it_has_no_bridge_back_to_python() -> None:
    source = """\
function computationTime(params) {
  var found = ['require', 'process', 'python', 'pyimport', 'Deno', 'Bun'].filter(
      function (n) { return typeof globalThis[n] !== 'undefined'; });
  return found.length;
}"""

    assert model(source).call("computationTime", params={}) == 0.0


def test_an_attribute_named_like_a_model_function_stays_reachable_through_hw():
    functions = ShallowFunctions(
        model_key="reliability",
        source="function failureRate(params) { return hw.failureRate * 2; }\nvar SMs = 1;",
        attributes={"failureRate": 1e-6, "SMs": 13, "SMCoreClock": 1253},
    )
    assert functions.call("failureRate", params={}) == pytest.approx(2e-6)


@pytest.mark.parametrize(
    ("body", "shown"),
    [
        ("return {t: 1};", "an object"),
        ("return [1, 2];", "an array"),
        ("return 'fast';", 'the string "fast"'),
        ("return true;", "the boolean true"),
        ("return 10n;", "the BigInt 10n"),
        ("return null;", "null"),
        ("return NaN;", "NaN"),
        ("return -Infinity;", "-Infinity"),
    ],
)
def test_a_result_that_is_not_a_finite_number_is_described_in_javascript_terms(body, shown):
    functions = ShallowFunctions(
        model_key="odd", source=f"function computationTime(params) {{ {body} }}", attributes={}
    )
    with pytest.raises(ModelEvaluationError) as info:
        functions.call("computationTime", params={})
    assert f"returned {shown}, expected a" in str(info.value)
    assert "object at 0x" not in str(info.value)


def test_a_parameter_named_get_does_not_hide_params_get():
    functions = ShallowFunctions(
        model_key="params",
        source="function computationTime(params) { return params.get('get') + params.x; }",
        attributes={},
    )
    assert functions.call("computationTime", params={"get": 2, "x": 3}) == 5


def test_random_numbers_and_the_clock_are_the_same_on_every_run():
    source = (
        "function computationTime(params) {"
        " return Math.random() + Date.now() + new Date().getTime() + params.x; }"
    )
    values = [
        ShallowFunctions(model_key=f"noisy{run}", source=source, attributes={"run": run}).call(
            "computationTime", params={"x": 1}
        )
        for run in range(2)
    ]
    assert values[0] == values[1]
    assert 1 <= values[0] < 2


def test_keep_on_one_cpu_pins_the_caller_and_the_v8_threads_it_starts() -> None:
    # In a child process: pinning the test process itself would slow the rest of the suite.
    code = (
        "import os\n"
        "from simulator.shallow import ShallowFunctions, keep_on_one_cpu\n"
        "allowed = os.sched_getaffinity(0)\n"
        "cpu = keep_on_one_cpu()\n"
        "assert cpu in allowed and os.sched_getaffinity(0) == {cpu}, cpu\n"
        "model = ShallowFunctions(model_key='m', source='function computationTime(p) { return 2; }', attributes={}, twin=False)\n"
        "assert model.call('computationTime', params={}) == 2.0\n"
        "threads = os.listdir('/proc/self/task')\n"
        "assert len(threads) > 1, threads\n"
        "assert all(os.sched_getaffinity(int(t)) == {cpu} for t in threads)\n"
        "print('ok')\n"
    )
    done = run_code(code)
    assert done.stdout.strip() == "ok", done.stderr


def test_a_spare_isolate_made_before_the_pin_serves_the_first_model_on_the_pinned_cpu() -> None:
    # As a pooled sandbox child does: V8's isolate (and its threads) made while waiting.
    code = (
        "import os\n"
        "from simulator import shallow\n"
        "shallow.start_spare_racer()\n"
        "spare = shallow._spare_racers[0]\n"
        "cpu = shallow.keep_on_one_cpu()\n"
        "threads = os.listdir('/proc/self/task')\n"
        "assert len(threads) > 1, threads\n"
        "assert all(os.sched_getaffinity(int(t)) == {cpu} for t in threads)\n"
        "model = shallow.ShallowFunctions(model_key='m', source='function computationTime(p) { return 2; }', attributes={}, twin=False)\n"
        "assert model.call('computationTime', params={}) == 2.0\n"
        "assert shallow._spare_racers == []\n"
        "assert model._cached_context.evaluator.racer is spare\n"
        "other = shallow.ShallowFunctions(model_key='o', source='function computationTime(p) { return 3; }', attributes={})\n"
        "assert other.call('computationTime', params={}) == 3.0\n"
        "assert other._cached_context.evaluator.racer is not spare\n"
        "print('ok')\n"
    )
    done = run_code(code, PARASIM_JS_TWINS="0")
    assert done.stdout.strip() == "ok", done.stderr


def test_keep_on_one_cpu_can_be_turned_off() -> None:
    code = (
        "import os\n"
        "from simulator.shallow import keep_on_one_cpu\n"
        "before = os.sched_getaffinity(0)\n"
        "assert keep_on_one_cpu() is None and os.sched_getaffinity(0) == before\n"
        "print('ok')\n"
    )
    done = run_code(code, PARASIM_KEEP_ON_ONE_CPU="0")
    assert done.stdout.strip() == "ok", done.stderr


def test_a_run_whose_models_have_python_twins_never_imports_mini_racer() -> None:
    # mini-racer imports asyncio and ssl (40-50 ms): only a model evaluated in V8 needs it.
    example = Path(__file__).resolve().parents[2] / "examples" / "merpsys_gtx970"
    code = (
        "import json, sys\n"
        "from simulator.runner import run_simulation\n"
        f"snapshot = json.loads(open({str(example / 'snapshot.json')!r}).read())\n"
        f"app = open({str(example / 'app.py')!r}).read()\n"
        "variables = {'N': 1000000, 'blockSz': 256, 'computeIntensity': 1, 'occupancy': 64}\n"
        "result = run_simulation(snapshot, app, labels={'CPU': 1, 'GPU': 1}, variables=variables)\n"
        "print(result['status'], 'py_mini_racer' in sys.modules, 'asyncio' in sys.modules)\n"
    )
    environment = {**os.environ, shallow.TWINS_ENVIRONMENT_VARIABLE: "1"}
    completed = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        check=True,
        env=environment,
        cwd=example.parents[1],
    )

    assert completed.stdout.split() == ["finished", "False", "False"]


def test_spare_isolates_beyond_what_a_run_keeps_are_closed_and_the_rest_serve_in_order() -> None:
    code = (
        "from simulator import shallow\n"
        "shallow.start_spare_racer()\n"
        "shallow.start_spare_racer()\n"
        "shallow.start_spare_racer()\n"
        "first, second, third = shallow._spare_racers\n"
        "shallow.drop_spare_racers(keep=2)\n"
        "assert shallow._spare_racers == [first, second]\n"
        "try:\n"
        "    third.eval('1')\n"
        "except Exception:\n"
        "    pass\n"
        "else:\n"
        "    raise AssertionError('the third isolate is still open')\n"
        "racers = []\n"
        "for value in (2, 3, 4):\n"
        "    model = shallow.ShallowFunctions(model_key='m', source=f'function computationTime(p) {{ return {value}; }}', attributes={'k': value})\n"
        "    assert model.call('computationTime', params={}) == value\n"
        "    racers.append(model._cached_context.evaluator.racer)\n"
        "assert racers[:2] == [first, second] and racers[2] not in (first, second, third)\n"
        "print('ok')\n"
    )
    done = run_code(code, PARASIM_JS_TWINS="0")
    assert done.stdout.strip() == "ok", done.stderr


def test_spare_isolates_a_run_will_not_use_are_closed() -> None:
    code = (
        "from simulator import shallow\n"
        "shallow.start_spare_racer()\n"
        "spare = shallow._spare_racers[0]\n"
        "shallow.drop_spare_racers()\n"
        "assert shallow._spare_racers == []\n"
        "try:\n"
        "    spare.eval('1')\n"
        "except Exception:\n"
        "    print('closed')\n"
    )
    done = run_code(code)
    assert done.stdout.strip() == "closed", done.stderr


def test_evaluate_answers_from_the_twin_without_the_memo_and_keeps_what_v8_answers() -> None:
    shallow.clear_caches()  # the memos are shared by source and attributes
    pcie = Path(__file__).resolve().parents[2] / "examples" / "merpsys_gtx970" / "pcie_model.js"
    source = pcie.read_text()
    attributes = {
        "bandwidth": 16e9,
        "startupHTD": 1e-5,
        "lambdaHTD": 0.8,
        "startupDth": 1.2e-5,
        "lambdaDth": 0.75,
    }
    twinned = ShallowFunctions(model_key="pcie", source=source, attributes=attributes)
    in_v8 = ShallowFunctions(model_key="pcie", source=source, attributes=attributes, twin=False)
    assert twinned.twinned and not in_v8.twinned
    params = {"direction": "HostToDevice"}
    value = twinned.evaluate("p2pTime", 4096.0, params=params)
    assert value == in_v8.evaluate("p2pTime", 4096.0, params=params)  # V8's very float
    assert value == twinned.call("p2pTime", 4096.0, params=params)
    # the twin's answer was not kept by evaluate (call made the one entry), V8's was
    assert len(twinned.computation_memo) == 1
    assert len(in_v8.computation_memo) == 1
