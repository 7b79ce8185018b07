"""A model's computationTime as a program of doubles (simulator.models.js_program): the
programs give V8's very values where they answer and decline everything else; the C core
(`_speedups.evaluate_program`, and SimCore.computation before the memo) runs them as the
Python reference (`evaluate_python`) does, on the values, the declines and the errors.

Property tests: random models of the program subset (helpers, `var`, `if`/`else`, ternaries,
comparisons, `&&`/`||`, `+ - * / %`, `Math`, `params.get`, attribute globals and `hw`) on
random parameters (negative, zero, huge, ints, strings, booleans, missing), against V8
through `ShallowFunctions` with no compiled model, and the C core against the reference.
"""

from __future__ import annotations

import json
import math
import os
import struct
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from simulator import hotpath, shallow
from simulator.errors import ModelEvaluationError
from simulator.models.js_program import OPS, Program, evaluate_python, program_of
from simulator.runner import run_simulation
from simulator.shallow import ShallowFunctions
from tests.simulator.models.v8_outcomes import outcome

PROJECT_ROOT = Path(__file__).resolve().parents[3]

SETTINGS = settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
C_CORE = hotpath.speedups
needs_c = pytest.mark.skipif(C_CORE is None, reason="the C core is not built")

pytestmark = pytest.mark.usefixtures("fresh_caches")

ATTRIBUTES = {"k": 2.5, "n": 3, "big": 1e300, "label": "x", "flag": True}

EDITED = """\
// The pause model, edited: a helper keeps a time within bounds.
function bounded(t, low, high) {
  return t < low ? low : (t > high ? high : t);
}

function computationTime(params) {
  var t = params.get('t');
  if (t > 1e9) {
    return 1e9; // no computation lasts longer
  }
  return bounded(t, 0, 1e9);
}
"""


def bits(value: object) -> str:
    if isinstance(value, float):
        return "nan" if value != value else struct.pack(">d", value).hex()
    return repr(value)


def program(source: str, attributes: dict[str, object] | None = None) -> Program | None:
    attributes = ATTRIBUTES if attributes is None else attributes
    names = frozenset(shallow._global_names(attributes, source)) - {"Math"}
    return program_of(source, attributes, names)


def both(compiled: Program, params: dict[str, object]) -> float | None:
    """The reference's answer, checked equal (bits) to the C core's where it is built."""
    value = evaluate_python(compiled, params)
    if C_CORE is not None:
        assert bits(C_CORE.evaluate_program(compiled, params)) == bits(value), params
    return value


@needs_c
def test_the_c_core_numbers_the_instructions_as_the_reference_does() -> None:
    assert C_CORE.program_ops() == OPS


def code(*instructions: tuple[str, int]) -> bytes:
    """A program's code: (opcode name, argument) pairs as js_program writes them."""
    return b"".join(struct.pack("=HH", OPS[name], argument) for name, argument in instructions)


@needs_c
def test_the_c_core_refuses_a_malformed_instruction_where_a_run_reaches_it() -> None:
    malformed = [
        (Program(code(("ADD", 0), ("RETURN", 0)), (), (), 0), ValueError),  # an empty stack
        (Program(code(("CONST", 0), ("JUMP", 0)), (1.0,), (), 0), ValueError),  # backward
        (Program(code(("LOAD", 1), ("RETURN", 0)), (), (), 1), ValueError),  # no such slot
        (Program(code(("PARAM", 1), ("RETURN", 0)), (), ("t",), 0), ValueError),
        (Program(code(("CONST", 0)), (1.0,), (), 0), ValueError),  # no RETURN
        (Program(code(("CONST", 0), ("RETURN", 0)), (1,), (), 0), TypeError),  # an int constant
    ]
    for compiled, error in malformed:
        for _ in range(2):  # and again: what was refused is never taken for sound
            with pytest.raises(error):
                C_CORE.evaluate_program(compiled, {"t": 1.0})
    # malformed only where no run goes: the run answers, as the reference does
    unreached = Program(code(("CONST", 0), ("RETURN", 0), ("ADD", 0)), (2.0,), (), 0)
    assert both(unreached, {}) == 2.0
    # malformed on the path a true t takes: answered while t is false, refused once it is not
    one_path = Program(
        code(("PARAM", 0), ("JUMP_IF_FALSE", 3), ("ADD", 0), ("CONST", 0), ("RETURN", 0)),
        (1.0,),
        ("t",),
        0,
    )
    assert C_CORE.evaluate_program(one_path, {"t": 0.0}) == 1.0
    with pytest.raises(ValueError, match="well-formed"):
        C_CORE.evaluate_program(one_path, {"t": 1.0})


@needs_c
def test_a_program_whose_paths_meet_at_other_depths_runs_checked_with_the_references_values() -> (
    None
):
    # at 4 the stack holds nothing (t is 0) or two values (t is not): no single depth
    joined = Program(
        code(
            ("PARAM", 0),
            ("JUMP_IF_FALSE", 4),
            ("CONST", 0),
            ("CONST", 0),
            ("CONST", 1),
            ("RETURN", 0),
        ),
        (1.0, 2.5),
        ("t",),
        0,
    )
    assert both(joined, {"t": 0.0}) == 2.5
    assert both(joined, {"t": 3.0}) == 2.5


@needs_c
def test_programs_beyond_those_the_c_core_keeps_checked_give_the_references_values() -> None:
    programs = [
        Program(code(("PARAM", 0), ("CONST", 0), ("MUL", 0), ("RETURN", 0)), (float(k),), ("t",), 0)
        for k in range(40)
    ]
    for _ in range(3):
        for k, compiled in enumerate(programs):
            assert both(compiled, {"t": 1.5}) == 1.5 * k


def test_the_user_s_models_become_programs_and_other_models_do_not() -> None:
    assert program("function computationTime(params) { return params.t; }") is not None
    assert program(EDITED) is not None
    assert (
        program(
            "function rate(g, e) { return g * 1e9 * e; }\n"
            "function computationTime(p) { var f = p.get('flops'), e = p.get('e', 0.8);\n"
            "  if (f > 1e9) { return f / rate(k, e) + hw.n; } else return f / rate(k, 1); }"
        )
        is not None
    )
    refused = [
        "function computationTime(p) { var s = 0; for (var i = 0; i < 3; i++) s += p.t; return s; }",
        "function computationTime(p) { var s = p.t; s = s * 2; return s; }",
        "function computationTime(p) { return p.t + 'x'; }",
        "function f(x) { return x < 1 ? x : f(x - 1); }\nfunction computationTime(p) { return f(p.t); }",
        "function f(p) { return p.t; }\nfunction computationTime(p) { return f(p); }",
        "var c = 2;\nfunction computationTime(p) { return p.t * c; }",
        "function computationTime(p) { if (p.t > 1) return 1; }",
        "function computationTime(p) { return Math.log(p.t); }",
        "function computationTime(p) { { let a = 1; } return a; }",
        "function computationTime(p) { var a; if (p.t > 1) { a = 1; } return a; }",
        "function computationTime(p) { if (p.t > 1) { var a = 1; } return a; }",
        "function computationTime(p) { return label; }",
        "function computationTime(p) { return flag ? 1 : 2; }",
        "function computationTime(p) { return missing; }",
        "function computationTime(p) { return p.t > 1; }",
        "function computationTime(p) { return p.get('1'); }",
        "function computationTime(p) { return p.hasOwnProperty; }",
        "function computationTime(p) { return p.t || 0.5; }",
        "function computationTime(p) { return Math.pow(p.t, 2); }",
        "function computationTime(p, q) { return p.t; }",
        "function computationTime(p) { return hw.label === undefined ? 1 : 2; }",
        "function computationTime(p) { return p.get('t', p.u); }",
        "function computationTime(p) { if (p.t > 1) throw new Error('x'); else throw 1; }",
    ]
    for source in refused:
        assert program(source) is None, source


def test_a_program_declines_what_is_no_model_s_time_or_not_a_plain_number() -> None:
    compiled = program("function computationTime(p) { return p.t * 2 - p.get('u', 1); }")
    assert compiled is not None
    assert both(compiled, {"t": 1.5}) == 2.0
    assert both(compiled, {"t": 3, "u": 0.5}) == 5.5  # an int reads as its double
    declined: list[dict[Any, Any]] = [
        {"t": 0.25},  # negative
        {"t": math.nan},
        {"t": math.inf},
        {"t": 1e308},  # an infinity
        {"t": "2"},  # a string: the compiled model converts it
        {"t": True},
        {"t": None},
        {},  # missing
        {"t": 10**400},  # beyond the doubles
        {"t": 1.0, "u": [1]},  # a parameter not plain
        {"t": 1.0, 7: 1.0},  # a key that is no str
        {"t": 1.0, "__proto__": 1.0},
    ]
    for params in declined:
        assert both(compiled, params) is None, params


def test_divisions_by_zero_decline_as_the_compiled_model_does_and_the_rest_is_ieee() -> None:
    compiled = program(
        "function computationTime(p) { return p.t % 0.75 + Math.max(-0, 0) + Math.sqrt(p.t)"
        " + Math.round(p.t) + Math.floor(-p.t) * -1 + 1 / (p.t * 1e308 * 10); }"
    )
    assert compiled is not None
    assert both(compiled, {"t": 2.5}) == 0.25 + 0.0 + math.sqrt(2.5) + 3.0 + 3.0 + 0.0
    for source in (
        "function computationTime(p) { return 1 / (1 / (p.t - p.t)); }",
        "function computationTime(p) { return p.t % (p.t - p.t); }",
        "function computationTime(p) { return (p.t * 1e308 * 10) % 2 + 1; }",
    ):
        declines = program(source)
        assert declines is not None
        assert both(declines, {"t": 2.0}) is None, source
    nan = program("function computationTime(p) { return p.t + Math.min(1, -Infinity * 0); }")
    assert nan is not None
    assert both(nan, {"t": 1.0}) is None


# -- random models against V8 --------------------------------------------------------------------
NUMBERS = st.sampled_from(["0", "1", "2.5", "1e9", "0.1", "3", "Infinity", "NaN", "1e-300"])


MAIN_LEAVES = [
    "t",
    "u",
    "k",
    "n",
    "hw.k",
    "hw.n",
    "Math.PI",
    "params.t",
    "params.get('v', 0.5)",
    "params.get('v', -hw.n)",
    "(hw.k !== undefined ? Math.pow(k, 0.5) : hw.gone)",
    "(undefined == hw.gone ? Math.pow(2, -n) : hw.gone)",
]
HELPER_LEAVES = ["a", "b", "k", "hw.n", "Math.E"]


def numeric(depth: int, leaves: list[str], calls: bool = True) -> st.SearchStrategy[str]:
    leaf = st.one_of(NUMBERS, st.sampled_from(leaves))
    if depth == 0:
        return leaf
    inner = numeric(depth - 1, leaves, calls)
    choices = [
        leaf,
        st.tuples(inner, st.sampled_from(["+", "-", "*", "/", "%"]), inner).map(
            lambda x: f"({x[0]} {x[1]} {x[2]})"
        ),
        st.tuples(condition(depth - 1, leaves, calls), inner, inner).map(
            lambda x: f"({x[0]} ? {x[1]} : {x[2]})"
        ),
        st.tuples(
            st.sampled_from(["abs", "floor", "ceil", "round", "trunc", "sign", "sqrt"]), inner
        ).map(lambda x: f"Math.{x[0]}({x[1]})"),
        st.tuples(st.sampled_from(["min", "max"]), st.lists(inner, min_size=1, max_size=3)).map(
            lambda x: f"Math.{x[0]}({', '.join(x[1])})"
        ),
        inner.map(lambda x: f"(-{x})"),
    ]
    if calls:
        choices.append(st.tuples(inner, inner).map(lambda x: f"helper({x[0]}, {x[1]})"))
    return st.one_of(*choices)


def condition(depth: int, leaves: list[str], calls: bool = True) -> st.SearchStrategy[str]:
    inner = numeric(depth, leaves, calls)
    comparison = st.tuples(
        inner, st.sampled_from(["<", ">", "<=", ">=", "==", "!=", "===", "!=="]), inner
    ).map(lambda x: f"({x[0]} {x[1]} {x[2]})")
    return st.one_of(
        comparison,
        inner,  # a number's truthiness
        st.tuples(comparison, st.sampled_from(["&&", "||"]), comparison).map(
            lambda x: f"({x[0]} {x[1]} {x[2]})"
        ),
        comparison.map(lambda x: f"!{x}"),
    )


@st.composite
def models(draw: st.DrawFn) -> str:
    first = draw(numeric(2, MAIN_LEAVES))
    test = draw(condition(1, MAIN_LEAVES))
    then = draw(numeric(2, MAIN_LEAVES))
    rest = draw(numeric(2, MAIN_LEAVES))
    helper = draw(numeric(2, HELPER_LEAVES, calls=False))
    refuse = draw(condition(0, MAIN_LEAVES))
    return (
        "// a random model of the program subset\n"
        f"function helper(a, b) {{ var c = a - b; return {helper} + c; }}\n"
        "function computationTime(params) {\n"
        "  var t = params.get('t');\n"
        "  let u = params.get('u', 2);\n"
        f"  const w = {first};\n"
        f"  if ({refuse}) throw new Error('refused');\n"
        f"  if ({test}) {{ return {then}; }}\n"
        f"  return {rest} + w;\n"
        "}\n"
    )


PARAMETER = st.one_of(
    st.floats(allow_nan=True, allow_infinity=True),
    st.floats(min_value=-3, max_value=3),
    st.integers(-(2**60), 2**60),
    st.sampled_from(["1.5", True, None]),
)


@SETTINGS
@given(
    source=models(),
    t=PARAMETER,
    u=st.one_of(PARAMETER, st.none()),
    v=st.one_of(PARAMETER, st.just("missing")),
)
def test_a_random_program_gives_v8_s_value_or_declines(
    source: str, t: object, u: object, v: object
) -> None:
    compiled = program(source, {"k": 2.5, "n": 3})
    assert compiled is not None, source  # every model drawn is in the subset
    params: dict[str, object] = {"t": t}
    if u is not None:
        params["u"] = u
    if v != "missing":
        params["v"] = v
    value = both(compiled, params)
    if value is None:
        return
    in_v8 = ShallowFunctions(
        model_key="m", source=source, attributes={"k": 2.5, "n": 3}, twin=False
    )
    assert outcome(in_v8, "computationTime", params=params) == repr(value)
    # the compiled model answers it too, with the same double (no call changes hands)
    twin = ShallowFunctions(model_key="m", source=source, attributes={"k": 2.5, "n": 3})._twin
    assert twin is not None
    assert bits(twin.call("computationTime", (), params)) == bits(value)


# -- the program's shortening (js_program._optimized) against the program as compiled ----------
GLOBAL_COPIED = ["k", "hw.n", "0", "2.5", "1e9", "NaN", "-0"]
BEFORE_W = st.sampled_from(["t", "u", *GLOBAL_COPIED])
COPIED = st.sampled_from(["t", "u", "w", *GLOBAL_COPIED])


@st.composite
def models_with_copies(draw: st.DrawFn) -> str:
    """Models whose helpers take constants and variables (the copies the shortening removes),
    nested calls and ternaries (jumps to jumps and to the RETURN)."""
    a, b, c = (draw(BEFORE_W) for _ in range(3))
    d, f, g = (draw(COPIED) for _ in range(3))
    e = draw(st.sampled_from(GLOBAL_COPIED))  # pick's body sees no variable of the caller
    inner = draw(numeric(1, ["a", "b", "c"], calls=False))
    test = draw(condition(1, MAIN_LEAVES, calls=False))
    return (
        "function clamp(a, b, c) { return a < b ? b : (a > c ? c : " + inner + "); }\n"
        "function pick(a, b) { var z = a; return z > b ? clamp(z, b, " + e + ") : b; }\n"
        "function computationTime(params) {\n"
        "  var t = params.get('t');\n"
        "  let u = params.get('u', 2);\n"
        f"  const w = clamp({a}, {b}, {c});\n"
        f"  if ({test}) {{ return pick({d}, w); }}\n"
        f"  return {test} ? clamp(w, {f}, {g}) : pick(t, u);\n"
        "}\n"
    )


@SETTINGS
@given(source=models_with_copies(), t=PARAMETER, u=st.one_of(PARAMETER, st.none()))
def test_a_shortened_program_gives_the_compiled_program_s_values_with_fewer_steps(
    source: str, t: object, u: object
) -> None:
    from unittest import mock

    from simulator.models import js_program

    shortened = program(source, {"k": 2.5, "n": 3})
    with mock.patch.object(js_program, "_optimized", lambda code, slots: (code, slots)):
        compiled = program(source, {"k": 2.5, "n": 3})
    assert shortened is not None and compiled is not None, source
    assert len(shortened.code) <= len(compiled.code) and shortened.slots <= compiled.slots
    params: dict[str, object] = {"t": t}
    if u is not None:
        params["u"] = u
    assert bits(both(shortened, params)) == bits(both(compiled, params)), source


def test_the_edited_model_s_helper_reads_its_arguments_where_they_are() -> None:
    from simulator.models.js_program import _OP_NAMES

    compiled = program(EDITED)
    assert compiled is not None
    words = struct.unpack(f"={len(compiled.code) // 2}H", compiled.code)
    ops = [_OP_NAMES[op] for op in words[::2]]
    # the helper's three arguments are not copied into slots, and no jump leads to a jump or
    # to the RETURN: 22 instructions, 16 of them on a call's path, not 29 and 25
    assert ops.count("STORE") == 1 and "JUMP" not in ops and compiled.slots == 1
    assert len(ops) == 22
    expected = {0.5: 0.5, 1.49: 1.49, -1.0: 0.0, 0.0: 0.0, 2e9: 1e9, math.inf: 1e9, 3: 3.0}
    for t, value in [*expected.items(), (-0.0, -0.0), (math.nan, None)]:
        assert bits(both(compiled, {"t": t})) == bits(value), t


def test_a_parameter_under_an_equal_name_of_another_object_reads_the_same() -> None:
    # the C core takes a parameter met in params' walk under the program's very name object,
    # and looks up any other: a key made at run time is an equal str of another object
    compiled = program(
        "function computationTime(params) {\n"
        "  return params.get('flops') / 1e9 + params.get('bytes', 2) + params.missing_one;\n"
        "}\n"
    )
    assert compiled is not None
    made = "".join(["fl", "ops"])
    assert made == "flops" and made is not compiled.names[0]
    cases: list[tuple[dict[str, object], float | None]] = [
        ({"flops": 3e9, "bytes": 1.0, "missing_one": 0.5}, 4.5),
        ({made: 3e9, "".join(["by", "tes"]): 1, "".join(["missing", "_one"]): 0.5}, 4.5),
        ({made: 3e9, "missing_one": 0.5}, 5.5),
        ({"flops": 3e9, "bytes": 1.0}, None),  # params.missing_one: V8 says what follows
    ]
    for params, value in cases:
        assert bits(both(compiled, params)) == bits(value), params


SHIPPED = {
    "simulator/models/js/cpu.js": {"cores": 8, "coreClock": 2000.0, "flopsPerCycle": 16},
    "examples/merpsys_gtx970/gpu_model.js": json.loads(
        (PROJECT_ROOT / "examples/merpsys_gtx970/snapshot.json").read_text()
    )["hardware"]["gtx970"]["attributes"],
}
GPU_PARAMS = st.fixed_dictionaries(
    {
        name: st.one_of(st.integers(0, 10**7), st.floats(0, 1e7))
        for name in (
            "gridSize",
            "blockSize",
            "CUDACoreInstructions",
            "issuedInstructions",
            "GMEMBytesTransferred",
            "occupancy",
            "latencyBound",
            "kernelExecutionLambda",
        )
    }
)
CPU_PARAMS = st.fixed_dictionaries(
    {"flops": st.floats(-1, 1e15)},
    optional={"threads": st.integers(-2, 20), "efficiency": st.floats(-0.5, 2)},
)


@SETTINGS
@given(path=st.sampled_from(sorted(SHIPPED)), gpu=GPU_PARAMS, cpu=CPU_PARAMS)
def test_the_cpu_model_and_the_merpsys_gpu_model_run_as_programs_with_v8_s_values(
    path: str, gpu: dict[str, object], cpu: dict[str, object]
) -> None:
    source = (PROJECT_ROOT / path).read_text()
    attributes = SHIPPED[path]
    compiled = program(source, attributes)
    assert compiled is not None, path  # a throw, hw.x !== undefined, Math.pow of constants
    params = gpu if "gpu" in path else cpu
    value = both(compiled, params)
    if value is None:
        return
    in_v8 = ShallowFunctions(model_key="m", source=source, attributes=attributes, twin=False)
    assert outcome(in_v8, "computationTime", params=params) == repr(value)


# -- the hot path: a run with the C core and with the Python references --------------------------
SYSTEM: dict[str, Any] = {
    "name": "programs",
    "hardware": {"host": {"type": "CPU", "name": "host", "attributes": {"scale": 1.5}}},
    "models": {
        "pause": {
            "language": "javascript",
            "source": EDITED.replace("bounded(t, 0, 1e9)", "bounded(t, 0, 1e9) * scale"),
        }
    },
    "nodes": [
        {"id": "hosts", "hardware": "host", "model": "pause", "count": 4, "labels": {"P": 1}}
    ],
    "edges": [],
}
APP = """\
for step in range(steps):
    sim.computation({"t": 0.5 + ((rank * steps + step) * 7919 % 100000007) / 100000007})
    p = HashMap()
    p.put("t", 0.25 * (1 + step % 3))
    sim.computation(p)
    sim.computation({"t": 1 + rank})
    sim.computation({"t": "0.125"})
    sim.computation({"t": 0.5, "note": [rank]})
"""
NEGATIVE_APP = 'sim.computation({"t": 0.5})\nsim.computation({"t": 0.5 - rank})\n'
PAUSE = "function computationTime(params) { return params.t * scale; }\n"

RUN_AND_PRINT = """\
import json, sys
from simulator.errors import ModelEvaluationError
from simulator.runner import run_simulation
app, system = json.loads(sys.stdin.read())
try:
    result = run_simulation(system, app, labels={"P": 4}, variables={"steps": 5})
except ModelEvaluationError as error:
    result = {"error": str(error)}
print(json.dumps(result))
"""


def comparable(result: dict[str, Any]) -> str:
    if "stats" in result:
        result = {**result, "stats": dict(result["stats"], wall_s=0.0, events_per_s=0.0)}
    return json.dumps(result, sort_keys=True)


def system(source: str | None = None) -> dict[str, Any]:
    if source is None:
        return SYSTEM
    return {**SYSTEM, "models": {"pause": {"language": "javascript", "source": source}}}


def run_pure_python(app: str, source: str | None = None) -> dict[str, Any]:
    done = subprocess.run(
        [sys.executable, "-c", RUN_AND_PRINT],
        input=json.dumps([app, system(source)]),
        capture_output=True,
        text=True,
        env={**os.environ, "PARASIM_PURE_PYTHON": "1"},
        check=True,
    )
    result: dict[str, Any] = json.loads(done.stdout)
    return result


def run_here(app: str, source: str | None = None) -> dict[str, Any]:
    try:
        return run_simulation(system(source), app, labels={"P": 4}, variables={"steps": 5})
    except ModelEvaluationError as error:
        return {"error": str(error)}


@needs_c
def test_a_run_with_programs_is_the_pure_python_run_to_the_last_digit() -> None:
    result = run_here(APP)
    assert "error" not in result
    assert comparable(result) == comparable(run_pure_python(APP))
    # the string and the list went the compiled model's way, and none to V8
    assert result["warnings"] == []


@needs_c
def test_a_negative_time_is_v8_s_error_with_and_without_the_c_core() -> None:
    assert program(PAUSE, {"scale": 1.5}) is not None
    result = run_here(NEGATIVE_APP, PAUSE)
    assert "error" in result
    assert result == run_pure_python(NEGATIVE_APP, PAUSE)


def test_the_memo_holds_the_program_and_a_call_keeps_nothing() -> None:
    functions = ShallowFunctions(model_key="m", source=EDITED, attributes={})
    memo = functions.computation_memo
    assert isinstance(memo, shallow.Memo)
    assert memo.program == program(EDITED, {})
    before = dict(memo)
    compiled = memo.program
    assert compiled is not None
    for t in (0.5, 0.75, 2e9, -1.0):
        evaluate_python(compiled, {"t": t})
    assert dict(memo) == before  # no state between calls: nothing written anywhere
    off = ShallowFunctions(model_key="m", source=EDITED, attributes={}, twin=False)
    assert off.computation_memo.program is None  # V8 only: no program either
