"""A user's arithmetic model compiled to Python gives V8's very floats, or leaves it to V8.

The property test draws arithmetic expressions (simulator.models.js_compiler compiles them) (numbers, a
parameter, params and hw members, attribute globals, unary signs, `+ - * / %`, parentheses),
written with random spacing and comments, and inputs around and at the edges (signed zeros,
tiny and huge numbers, zeros that divide, odd values JavaScript coerces), and calls the model
through `ShallowFunctions` twice: with its twin and in V8 only (`twin=False`). Both must give
the same outcome (the float's `repr`, so -0.0 is not 0.0, or the same error message), and
where the twin answers rather than declines, its own float must be V8's.
"""

from __future__ import annotations

import json
import math
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from simulator import shallow
from simulator.models.js_compiler import JS_GLOBAL_NAMES, CompiledTwin, Refusal, compile_model
from simulator.models.js_twins import Decline
from simulator.runner import run_simulation
from simulator.sandbox.preparation import needs_v8
from simulator.shallow import ShallowFunctions
from tests.simulator.models.v8_outcomes import outcome

SETTINGS = settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
PAUSE = "function computationTime(params) { return params.t; }\n"
SWITCH = "function p2pTime(size, params) { return latency + size / bandwidth; }\n"


pytestmark = pytest.mark.usefixtures("fresh_caches")


def agree(
    source: str,
    attributes: dict[str, object],
    function: str,
    args: tuple[object, ...],
    params: dict[str, object],
) -> bool:
    """Assert the twin's and V8's outcomes are the same; return whether the twin answered."""
    twinned = ShallowFunctions(model_key="m", source=source, attributes=attributes)
    in_v8 = ShallowFunctions(model_key="m", source=source, attributes=attributes, twin=False)
    assert not in_v8.twinned
    assert outcome(twinned, function, *args, params=params) == outcome(
        in_v8, function, *args, params=params
    ), (source, args, params)
    if twinned._twin is None:
        return False  # refused (a builtin's name): V8 answers every call
    assert isinstance(twinned._twin, CompiledTwin)
    try:
        answer = twinned._twin.call(function, args, params)
    except Decline:
        return False
    if not 0.0 <= answer < math.inf:
        return False  # not what the twin hands over (ShallowFunctions._twin_answer): V8 answers
    # its own float, without the memo (which may hold 0.0 for -0.0 from an earlier call)
    assert repr(answer) == repr(in_v8._call_uncached(function, args, params)), (source, params)
    return True


# -- the property test ------------------------------------------------------------------------
NUMBERS = st.sampled_from(
    ["0", "1", "2.5", "0.1", "7", ".5", "3.", "1e-300", "1e300", "2e308", "1.e5", "123456789012"]
)
# what an expression may read: (JavaScript, whether it is a number a clean call gives)
LEAVES = st.sampled_from(
    ["size", "params.a", "params.b", "params.zero", "lat", "bw", "hw.lat", "hw.bw", "hw.cores"]
)
SPACES = st.sampled_from(["", " ", "  ", "\n", " /* c */ ", "\t"])


def expressions() -> st.SearchStrategy[str]:
    leaf = st.one_of(NUMBERS, LEAVES)
    return st.recursive(
        leaf,
        lambda inner: st.one_of(
            st.tuples(inner, st.sampled_from(["+", "-", "*", "/", "%"]), SPACES, inner).map(
                lambda parts: f"{parts[0]}{parts[2]}{parts[1]} {parts[3]}"
            ),
            inner.map(lambda text: f"({text})"),
            inner.map(lambda text: f"-{text}" if not text.startswith("-") else f"- {text}"),
            inner.map(lambda text: f"+{text}" if not text.startswith("+") else f"+ {text}"),
        ),
        max_leaves=8,
    )


INPUTS = st.sampled_from([0, 0.0, -0.0, 1, 3, 2.5, -4.25, 0.1, 1e-310, 1e308, 2**53 + 1, 123456789])
ODD_INPUTS = st.sampled_from(
    [None, "5", True, math.nan, math.inf, [1], {"x": 1}, 10**400, 2**70 + 1]
)


@SETTINGS
@given(
    expression=expressions(),
    inputs=st.fixed_dictionaries(
        {"size": INPUTS, "a": INPUTS, "b": INPUTS, "lat": INPUTS, "bw": INPUTS, "cores": INPUTS}
    ),
    odd=st.one_of(st.none(), st.tuples(st.sampled_from(["size", "a", "lat", "cores"]), ODD_INPUTS)),
)
def test_an_arithmetic_model_gives_v8_s_floats(
    expression: str, inputs: dict[str, object], odd: tuple[str, object] | None
) -> None:
    source = f"function p2pTime(size, params) {{ return {expression}; }}\n"
    assert not isinstance(compile_model(source), Refusal), source
    values = dict(inputs)
    if odd is not None:
        values[odd[0]] = odd[1]
    attributes = {"lat": values["lat"], "bw": values["bw"], "cores": values["cores"]}
    params = {"a": values["a"], "b": values["b"], "zero": 0}
    agree(source, attributes, "p2pTime", (values["size"],), params)


def test_plain_calls_are_the_twin_s_not_v8_s_twice() -> None:
    """The property test's equality is mostly the twin's own: plain numbers are answered."""
    attributes = {"latency": 1e-6, "bandwidth": 12e9}
    answered = [
        agree(SWITCH, attributes, "p2pTime", (size,), {})
        for size in (0, 1, 4096, 2.5e9, 1e-300, -0.0)
    ]
    answered += [agree(PAUSE, {}, "computationTime", (), {"t": t}) for t in (1.3, 0, -0.0, 2**60)]
    assert all(answered)


# -- what is read, and what is left to V8 -----------------------------------------------------
@pytest.mark.parametrize(
    ("source", "functions"),
    [
        (PAUSE, {"computationTime"}),
        (SWITCH, {"p2pTime"}),
        ("function f(p){return p.x}", {"f"}),  # no semicolon: ASI before `}`
        (
            "// a\nfunction f(p) { return p.x\n + 1; }\n;\nfunction g(s, p) { return -s % 2 }",
            {"f", "g"},
        ),
        ("function f(p) { return /* no break */ p.x; }", {"f"}),
        ("function f(undefined) { return undefined.x; }", {"f"}),  # a parameter may take it
        ("function f(p) { return p\n.x; }", {"f"}),  # a member across a line break
        ("function f(p) { return 1.e5 * .5 / 3. - 0; }", {"f"}),
    ],
)
def test_a_source_of_arithmetic_functions_is_read(source: str, functions: set[str]) -> None:
    model = compile_model(source)
    assert not isinstance(model, Refusal) and model.defines == functions


@pytest.mark.parametrize(
    "source",
    [
        "function f(p) { return\n p.x; }",  # returns undefined
        "function f(p) { return /*\n*/ p.x; }",  # a comment with a line break: the same
        "function f(p) { return p.x--1; }",  # a decrement, not a minus and a sign
        "function f(p) { return p.x++ + 1; }",
        "function f(p) { return Math.max(p.x, 1); }",  # a call
        "function f(p) { return p.x > 1 ? 1 : 2; }",
        "function f(p) { return p['x']; }",
        "function f(p) { return 'x' + p.x; }",
        "function f(p) { return p.x ** 2; }",
        "function f(p) { return 1_000 * p.x; }",  # a numeric separator
        "function f(p) { return 010 * p.x; }",  # a legacy octal
        "function f(p) { return 0x10 * p.x; }",
        "function f(p) { return 10n; }",
        "function f(p) { return 1..toString; }",
        "function f(p) { return this.x; }",
        "function f(p) { var y = 2; return p.x * y; }",
        "function f(p,) { return p.x; }",  # a trailing comma
        "function f(p, p) { return p.x; }",
        "function f(p) { return p.x; }\nfunction f(p) { return 2; }",  # the later one wins
        "function escape(p) { return p.x; }",  # a builtin's name: no model function
        "function hw(p) { return p.x; }",
        "function f(p) { return p.x; }\nvar y = 1;",
        "function f(p) { return p.x; } f(1);",
        "function f(p) { return p.\\u0078; }",  # an escape in a name
        "function f(p) { return p.\u00e9t\u00e9; }",  # not ASCII
        "function f(p) { return p.x / /re/; }",
        "async function f(p) { return p.x; }",
        "function* f(p) { return p.x; }",
        "'use strict'; function f(p) { return p.x; }",
        "",
        "function f(p) { return " + "(" * 100 + "1" + ")" * 100 + "; }",  # too deep for us
        "function f(p) { return " + "p.x + " * 500 + "1; }",  # as deep, computed
    ],
)
def test_anything_else_is_left_to_v8_or_answered_as_v8_does(source: str) -> None:
    model = compile_model(source, {"x"})
    if isinstance(model, Refusal):
        return
    for params in ({"x": 2.5}, {"x": 0}, {}):
        agree(source, {}, sorted(model.defines)[0], (), params)


@pytest.mark.parametrize(
    ("source", "attributes", "args", "params"),
    [
        # params' methods, Object.prototype's members, a missing or odd parameter
        ("function f(p) { return p.get; }", {}, (), {"get": 1}),
        ("function f(p) { return p.has * 1; }", {}, (), {"has": 2}),
        ("function f(p) { return p.toString * 1; }", {}, (), {}),
        ("function f(p) { return p.constructor * 1; }", {}, (), {}),
        ("function f(p) { return p.__proto__ * 1; }", {}, (), {"__proto__": 3}),
        ("function f(p) { return p.x * 1; }", {}, (), {}),
        ("function f(p) { return p.x * 1; }", {}, (), {"x": "4"}),
        ("function f(p) { return p.x * 1; }", {}, (), {"x": True}),
        ("function f(p) { return p.x * 1; }", {}, (), {"x": None}),
        # an attribute global named like a builtin is no global; a parameter shadows one
        ("function f(p) { return escape * 1; }", {"escape": 2}, (), {}),
        ("function f(p) { return toString * 1; }", {"toString": 2}, (), {}),
        ("function f(lat) { return lat * 2; }", {"lat": 5}, (3,), {}),
        ("function f(p) { return lat * 2; }", {"lat": 5}, (), {}),
        ("function f(p) { return hw.lat * 2 + hw.missing; }", {"lat": 5}, (), {}),
        ("function f(p) { return lat * 2; }", {"lat": "5"}, (), {}),
        # another function, hw itself, a number's member, an undefined parameter
        ("function f(p) { return g * 1; }\nfunction g(p) { return 1; }", {}, (), {}),
        ("function f(p) { return hw * 1; }", {"x": 1}, (), {}),
        ("function f(s, p) { return s.x * 1; }", {}, (2,), {}),
        ("function f(s, p, q) { return q * 1 + p.t; }", {}, (2,), {"t": 1}),
        ("function f(s, p) { return p * 1; }", {}, (2,), {"t": 1}),
        # division and remainder by zero, an infinite dividend, signed zeros
        ("function f(p) { return 1 / p.x; }", {}, (), {"x": 0}),
        ("function f(p) { return 1 / (1 / p.x); }", {}, (), {"x": 0}),
        ("function f(p) { return p.y % p.x; }", {}, (), {"x": 0, "y": 3}),
        ("function f(p) { return 1e308 * 10 % 2; }", {}, (), {}),
        ("function f(p) { return -5 % p.x + 7.5 % -2; }", {}, (), {"x": 5}),
        ("function f(p) { return -p.x * 0; }", {}, (), {"x": 3}),
        ("function f(p) { return -(p.x - p.x); }", {}, (), {"x": 3}),
        ("function f(p) { return p.x - 1e308 * 10; }", {}, (), {"x": 3}),  # -Infinity
        ("function f(p) { return p.x * 2; }", {}, (), {"x": 2**70 + 1}),
        ("function f(p) { return p.x * 2; }", {}, (), {"x": 10**400}),
    ],
)
def test_what_javascript_coerces_or_throws_for_is_v8_s(
    source: str, attributes: dict[str, object], args: tuple[object, ...], params: dict[str, object]
) -> None:
    agree(source, attributes, "f", args, params)


def test_a_long_chain_of_operators_is_answered_as_v8_does() -> None:
    source = "function f(p) { return " + " + ".join(["p.x * 1.5"] * 90) + " - 0.25; }"
    assert not isinstance(compile_model(source), Refusal)
    assert agree(source, {}, "f", (), {"x": 0.1})


def test_a_function_the_model_does_not_define_is_v8_s_error() -> None:
    twinned = ShallowFunctions(model_key="m", source=PAUSE, attributes={})
    in_v8 = ShallowFunctions(model_key="m", source=PAUSE, attributes={}, twin=False)
    for functions in (twinned, in_v8):
        assert functions.has("computationTime") and not functions.has("p2pTime")
    assert outcome(twinned, "p2pTime", 1, params={}) == outcome(in_v8, "p2pTime", 1, params={})


def test_the_global_names_are_v8_s() -> None:
    """A name of V8's global object (or its prototypes) that JS_GLOBAL_NAMES lacked would
    let an attribute of that name pass for a global: a newer V8 must be added there."""
    in_v8 = ShallowFunctions(model_key="m", source=PAUSE, attributes={}, twin=False)
    context = in_v8._context("computationTime")
    names = json.loads(
        str(
            context.evaluator.eval(
                "(() => { const s = new Set(); for (let o = globalThis; o !== null; "
                "o = Object.getPrototypeOf(o)) for (const k of Object.getOwnPropertyNames(o)) "
                "s.add(k); return JSON.stringify([...s]); })()"
            )
        )
    )
    assert set(names) <= JS_GLOBAL_NAMES


def test_a_run_of_arithmetic_models_needs_no_v8_and_gives_the_same_result(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    snapshot = {
        "name": "arithmetic models",
        "nodes": [
            {"id": node, "name": node, "hardware": "cpu", "model": "pause", "count": 2}
            | {"labels": {"P": 1}}
            for node in ("a", "b")
        ]
        + [{"id": "net", "name": "net", "hardware": "switch", "model": "switch", "labels": {}}],
        "edges": [["a", "net"], ["b", "net"]],
        "hardware": {
            "cpu": {"type": "CPU", "name": "cpu", "attributes": {}},
            "switch": {
                "type": "NETWORK",
                "name": "switch",
                "attributes": {"latency": 1e-6, "bandwidth": 1.25e9},
            },
        },
        "models": {
            "pause": {"language": "javascript", "source": PAUSE},
            "switch": {"language": "javascript", "source": SWITCH},
        },
    }
    app = (
        "sim.computation({'t': 0.5 + rank * 0.25})\n"
        "sim.p2pCommunicationSend(1000 * (rank + 1), 'P', target_rank=(rank + 1) % 4)\n"
        "sim.p2pCommunicationReceive('P')\n"
    )
    arguments: dict[str, Any] = {"labels": {"P": 4}, "variables": {}}
    assert needs_v8({"snapshot": snapshot, "app_source": app, **arguments}) == 0

    twinned = run_simulation(snapshot, app, **arguments)
    shallow.clear_caches()
    monkeypatch.setenv(shallow.TWINS_ENVIRONMENT_VARIABLE, "0")
    assert needs_v8({"snapshot": snapshot, "app_source": app, **arguments}) == 2
    in_v8 = run_simulation(snapshot, app, **arguments)

    for result in (twinned, in_v8):
        result["stats"].pop("wall_s")
        result["stats"].pop("events_per_s")
    assert twinned == in_v8
    assert twinned["status"] == "finished" and twinned["overall_time_s"] > 1.25
