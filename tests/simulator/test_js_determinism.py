"""JavaScript models see no real clock, time zone, locale or host data, and every call starts
from the same state (simulator/shallow.py's prelude; docs/sandbox.md, "JavaScript models:
determinism").

The leak routes are evaluated in a child process whose TZ and LANG are far from UTC and
en-US, because V8 reads the host's zone and locale once per process.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from simulator import shallow
from simulator.errors import ModelEvaluationError
from simulator.shallow import ShallowFunctions

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "examples" / "merpsys_gtx970"
HOST_ELSEWHERE = {"TZ": "Asia/Kolkata", "LANG": "de_DE.UTF-8", "LC_ALL": "de_DE.UTF-8"}
EPOCH_STRING = "Thu Jan 01 1970 00:00:00 GMT+0000 (Coordinated Universal Time)"

# (JavaScript expression, its value as String(value)) for every route to the time, the host's
# zone or locale, and the real Date.
ROUTES: list[tuple[str, str]] = [
    ("Date.now()", "0"),
    ("new Date().getTime()", "0"),
    ("Date()", EPOCH_STRING),
    ("new Date(0).toString()", EPOCH_STRING),
    ("new Date(0).toTimeString()", "00:00:00 GMT+0000 (Coordinated Universal Time)"),
    ("new Date(0).getHours() + ',' + new Date(0).getTimezoneOffset()", "0,0"),
    ("new Date(2020, 0, 1, 10).getTime()", "1577872800000"),
    ("new Date(Date.UTC(2020, 0, 1)).setHours(10)", "1577872800000"),
    ("Date.parse('2020-01-01T10:00')", "1577872800000"),
    ("new Date('Jan 1 2020 10:00').getTime()", "1577872800000"),
    ("Date.parse('Jan 1 2020 10:00 GMT+0100')", "1577869200000"),
    ("Date.parse('Wed Jan 01 2020 10:00:00 GMT+0530 (India Standard Time)')", "1577853000000"),
    ("new Date(0).toLocaleString()", "1/1/1970, 12:00:00 AM"),
    ("new Date(0).toLocaleTimeString('de-DE', {timeZone: 'Asia/Kolkata'})", "05:30:00"),
    ("Intl.DateTimeFormat().resolvedOptions().timeZone", "UTC"),
    ("new Intl.DateTimeFormat().resolvedOptions().locale", "en-US"),
    ("new Intl.DateTimeFormat().format()", "1/1/1970"),
    ("new Intl.DateTimeFormat().formatToParts().map(p => p.value).join('')", "1/1/1970"),
    ("new Intl.NumberFormat().format(1234.5)", "1,234.5"),
    ("new Intl.NumberFormat('xx-YY').resolvedOptions().locale", "en-US"),
    ("new Intl.Collator().resolvedOptions().locale", "en-US"),
    ("new Intl.PluralRules().resolvedOptions().locale", "en"),  # ICU's plural data is per language
    ("new Intl.NumberFormat('de-DE').format(1234.5)", "1.234,5"),
    ("(1234.5).toLocaleString() + ' ' + [1234.5].toLocaleString()", "1,234.5 1,234.5"),
    ("(12345n).toLocaleString()", "12,345"),
    ("'i'.toLocaleUpperCase() + 'a'.localeCompare('b')", "I-1"),
    ("typeof Temporal", "undefined"),
    ("typeof new Date(0).toTemporalInstant", "undefined"),
    ("typeof performance", "undefined"),
    (
        "[typeof WeakRef, typeof FinalizationRegistry, typeof SharedArrayBuffer].join()",
        "undefined,undefined,undefined",
    ),
    ("[typeof Atomics, typeof WebAssembly].join()", "undefined,undefined"),
    ("Object.getPrototypeOf(new Date(0)).constructor.now()", "0"),
    ("new (Object.getPrototypeOf(new Date(0)).constructor)().getTime()", "0"),
    ("new Date(0).constructor === Date", "true"),
    ("Reflect.construct(Date, []).getTime()", "0"),
    ("new (class extends Date {})().getTime()", "0"),
    ("Function('return this')().Date.now()", "0"),
    ("new (function () {}).constructor('return Date.now()')()", "0"),
    ("(0, eval)('new Date().getFullYear()')", "1970"),
    ("Intl.DateTimeFormat.prototype.constructor().resolvedOptions().timeZone", "UTC"),
    ("Object.getPrototypeOf(Intl.DateTimeFormat()).constructor === Intl.DateTimeFormat", "true"),
    (
        "(() => { try { Error.prepareStackTrace = () => 1; } catch (e) {}"
        " return typeof Error.prepareStackTrace; })()",
        "undefined",
    ),
]


def _route_script(routes: list[tuple[str, str]]) -> str:
    """Return a Python program that prints each route's value (or error) as JSON."""
    sources = [
        "function computationTime(params) {\n"
        f"  throw new Error('VALUE:' + String(({expression})));\n"
        "}"
        for expression, _ in routes
    ]
    return f"""
import json
from simulator.errors import ModelEvaluationError
from simulator.shallow import ShallowFunctions
values = []
for source in {sources!r}:
    try:
        ShallowFunctions(model_key="m", source=source, attributes={{}}).call(
            "computationTime", params={{}})
        values.append("no error")
    except ModelEvaluationError as error:
        values.append(error.detail.split("VALUE:", 1)[-1])
print(json.dumps(values))
"""


def run_python(code: str, env: dict[str, str]) -> str:
    completed = subprocess.run(
        [sys.executable, "-c", code],
        cwd=ROOT,
        env={**os.environ, "PYTHONPATH": str(ROOT), **env},
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert completed.returncode == 0, completed.stderr
    return completed.stdout


@pytest.fixture(scope="module")
def route_values() -> list[str]:
    values: list[str] = json.loads(run_python(_route_script(ROUTES), HOST_ELSEWHERE))
    return values


@pytest.fixture(autouse=True)
def fresh_caches() -> Iterator[None]:
    shallow.clear_caches()
    yield
    shallow.clear_caches()


@pytest.mark.parametrize(("index", "route"), list(enumerate(ROUTES)), ids=[r[0] for r in ROUTES])
def test_every_route_to_time_zone_and_locale_gives_the_stopped_utc_en_us_value(
    route_values: list[str], index: int, route: tuple[str, str]
) -> None:
    assert route_values[index] == route[1]


def test_the_host_zone_really_differs_in_the_child_so_the_routes_are_tested() -> None:
    code = "import time; print(time.strftime('%z', time.localtime(0)))"
    assert run_python(code, HOST_ELSEWHERE).strip() == "+0530"


def detail_of(source: str, function: str = "computationTime") -> str:
    with pytest.raises(ModelEvaluationError) as caught:
        ShallowFunctions(model_key="m", source=source, attributes={}).call(function, params={})
    return caught.value.detail


def test_a_stack_trace_names_only_the_model_script_never_a_host_path() -> None:
    source = (
        "function computationTime(params) {\n"
        "  throw new Error(new Error('x').stack.split('\\n').join(' | '));\n}"
    )

    detail = detail_of(source)

    assert "at computationTime (parasim-computational-model.js:2:" in detail
    assert "/" not in detail


def call_twice(source: str, **attributes: object) -> tuple[float, float]:
    """Return two evaluations (different params, so the memo does not answer the second)."""
    functions = ShallowFunctions(model_key="counter", source=source, attributes=attributes)
    return (
        functions.call("computationTime", params={"run": 1}),
        functions.call("computationTime", params={"run": 2}),
    )


@pytest.mark.parametrize(
    "source",
    [
        "var calls = 0;\nfunction computationTime(params) { calls += 1; return calls; }",
        "let calls = 0;\nfunction computationTime(params) { return ++calls; }",
        "const seen = new Map();\n"
        "function computationTime(params) { seen.set(params.run, 1); return seen.size; }",
        "function computationTime(params) {\n"
        "  computationTime.calls = (computationTime.calls || 0) + 1;\n"
        "  return computationTime.calls;\n}",
        "var next = (function () { var n = 0; return function () { return ++n; }; })();\n"
        "function computationTime(params) { return next(); }",
        "arguments.callee.calls = (arguments.callee.calls || 0) + 1;\n"
        "var calls = arguments.callee.calls;\n"
        "function computationTime(params) { return calls || 0; }",
        "function computationTime(params) { return Math.random() < 1 ? Math.random() : 0; }",
        "function computationTime(params) {\n"
        "  var before = RegExp.$1 === '' ? 1 : 2;\n"
        "  /(a)/.exec('a');\n  return before;\n}",
    ],
    ids=[
        "var",
        "let",
        "map",
        "function-property",
        "closure",
        "arguments-callee",
        "random",
        "regexp-statics",
    ],
)
def test_a_model_that_keeps_its_own_state_gets_a_fresh_one_every_call(source: str) -> None:
    first, second = call_twice(source)

    assert first == second


@pytest.mark.parametrize(
    ("source", "what"),
    [
        (
            "function computationTime(params) { counter = (params.run || 0) + 1; return 1; }",
            "it assigned global 'counter'",
        ),
        (
            "function computationTime(params) { globalThis.cache = {}; return 1; }",
            "it assigned global 'cache'",
        ),
        (
            "function computationTime(params) { this.cache = 1; return 1; }\n"
            "computationTime = computationTime.bind(globalThis);",
            "it assigned global 'cache'",
        ),
    ],
    ids=["implicit-global", "globalThis", "this-bound-to-the-global"],
)
def test_a_model_that_adds_a_global_is_told_it_tried_to_keep_state(source: str, what: str) -> None:
    detail = detail_of(source)

    assert detail == (
        f"tried to keep state between calls ({what}); a model must be a pure function of its "
        "parameters"
    )


def test_the_state_message_names_the_model_and_the_function() -> None:
    source = "function computationTime(params) {\n  counter = 1;\n  return 1;\n}"
    with pytest.raises(ModelEvaluationError) as caught:
        ShallowFunctions(model_key="leaky", source=source, attributes={}).call(
            "computationTime", params={}
        )

    assert str(caught.value) == (
        "computational model 'leaky', function computationTime(), line 2: tried to keep state "
        "between calls (it assigned global 'counter'); a model must be a pure function of its "
        "parameters"
    )


@pytest.mark.parametrize(
    "statement",
    [
        "Object.defineProperty(globalThis, 'counter', {value: 1})",
        "(0, eval)('var counter = 1')",
        "Array.prototype.calls = 1",
        "Math.calls = 1",
        "Object.prototype.calls = 1",
        "Error.stackTraceLimit = 1",
        "Date.now = function () { return 5; }",
        "JSON.parse = null",
        "Object.setPrototypeOf(globalThis, null)",
        "delete globalThis.Math",
        "Object.getPrototypeOf(function* () {}).calls = 1",
        "Object.getPrototypeOf([][Symbol.iterator]()).calls = 1",
        # frozen as the first segmenter is made, not by the prelude (issue 16: start-up)
        "Object.getPrototypeOf(new Intl.Segmenter().segment('')).calls = 1",
        "Object.getPrototypeOf(new Intl.Segmenter().segment('')[Symbol.iterator]()).calls = 1",
        "Object.getPrototypeOf(new (class extends Intl.Segmenter {})().segment('')).calls = 1",
    ],
)
def test_builtins_and_the_global_object_cannot_change(statement: str) -> None:
    # Strict code is told (TypeError); sloppy code's write has no effect. Either way the
    # next call sees the builtins as they were.
    strict = f"function computationTime(params) {{ 'use strict'; {statement}; return 1; }}"
    sloppy = (
        f"function computationTime(params) {{ try {{ {statement}; }} catch (e) {{}}\n"
        "  return (Array.prototype.calls || Math.calls || ({}).calls || 0) + Date.now() +\n"
        "      (typeof JSON.parse === 'function' ? 0 : 100) + (Error.stackTraceLimit === 10 ? 0 : 10)"
        " + (typeof counter === 'undefined' ? 0 : 1000) + (typeof Math === 'object' ? 0 : 1e4);"
        " }"
    )

    assert "TypeError" in detail_of(strict) or "tried to keep state" in detail_of(strict)
    assert call_twice(sloppy) == (0.0, 0.0)


def test_a_segmenter_works_and_its_prototypes_keep_no_state_between_calls() -> None:
    # The prelude leaves %SegmentsPrototype% to the first segmenter a model makes (making one
    # loads ICU's break rules): a write to it before any segmenter exists reaches nothing.
    source = (
        "function computationTime(params) {\n"
        "  const segments = new Intl.Segmenter('en', {granularity: 'word'}).segment('a bc');\n"
        "  const proto = Object.getPrototypeOf(segments);\n"
        "  try { proto.calls = (proto.calls || 0) + 1; } catch (e) {}\n"
        "  return [...segments].length * 10 + (proto.calls || 0) + Object.isFrozen(proto);\n"
        "}"
    )

    assert call_twice(source) == (31.0, 31.0)


def test_hardware_attributes_are_frozen_all_the_way_down() -> None:
    source = "function computationTime(params) { hw.sizes.push(1); return hw.sizes.length; }"
    functions = ShallowFunctions(model_key="m", source=source, attributes={"sizes": [1, 2]})

    with pytest.raises(ModelEvaluationError, match="object is not extensible"):
        functions.call("computationTime", params={})


def test_a_source_that_closes_its_factory_is_refused_before_it_runs() -> None:
    source = (
        "function computationTime(params) { return calls; }\n"
        "});\nlet calls = 0;\n__parasim_model(function () {\n"
    )

    detail = detail_of(source)

    assert detail in (
        "the source is not a list of declarations and statements (it closes a brace it did "
        "not open)",
        "SyntaxError: Unexpected token '}'",
    )


LEAKY_GPU_MODEL = """\
function computationTime(params) {
  var now = new Date();
  var local = new Date(2020, 0, 1, 10);
  var text = now.toString() + local.toLocaleString() + (1234.5).toLocaleString() +
      Intl.DateTimeFormat().resolvedOptions().timeZone + new Intl.DateTimeFormat().format() +
      'i'.toLocaleUpperCase() + Date.parse('Jan 1 2020 10:00');
  var hash = 0;
  for (var i = 0; i < text.length; i++) hash = (hash * 31 + text.charCodeAt(i)) % 1000003;
  return (1 + now.getHours() + local.getTime() / 1e12 + hash / 1e6 + Math.random()) * 1e-3;
}
"""


def test_the_cli_gives_byte_identical_results_in_any_time_zone_and_locale(tmp_path: Path) -> None:
    snapshot = json.loads((EXAMPLE / "snapshot.json").read_text())
    gpu = next(node for node in snapshot["nodes"] if node["id"] == "gpu0")
    snapshot["models"][gpu["model"]]["source"] = LEAKY_GPU_MODEL
    system = tmp_path / "snapshot.json"
    system.write_text(json.dumps(snapshot))
    command = [
        sys.executable,
        "-m",
        "simulator",
        "run",
        "--system",
        str(system),
        "--app",
        str(EXAMPLE / "app.py"),
        "--labels",
        "CPU=1,GPU=1",
        "--var",
        "N=1000000",
        "--var",
        "blockSz=256",
        "--var",
        "computeIntensity=1",
        "--var",
        "occupancy=32",
        "--json",
        "-",
    ]
    outputs = []
    for env in (
        {"TZ": "UTC", "LANG": "C.UTF-8", "LC_ALL": "C.UTF-8"},
        HOST_ELSEWHERE,
        {"TZ": "America/St_Johns", "LANG": "ja_JP.UTF-8", "LC_ALL": "ja_JP.UTF-8"},
    ):
        completed = subprocess.run(
            command,
            cwd=ROOT,
            env={**os.environ, **env},
            capture_output=True,
            timeout=120,
        )
        assert completed.returncode == 0, completed.stderr.decode()
        result = json.loads(completed.stdout)
        del result["stats"]["wall_s"], result["stats"]["events_per_s"]  # the simulator's speed
        outputs.append(json.dumps(result, indent=2).encode())

    assert outputs[0] == outputs[1] == outputs[2]
    assert json.loads(outputs[0])["overall_time_s"] > 0
