"""The memo miss of a compiled model (issue 41 item 2): `CompiledTwin.missed_caller` checks the
value once and keeps what the memo policy says (it is `ShallowFunctions.computation_missed`),
and everything the compiled model does not decide goes to V8 with V8's error."""

from __future__ import annotations

import math
import random
from collections.abc import Callable

import pytest

from simulator import hotpath, shallow
from simulator.errors import ModelEvaluationError, model_seconds
from simulator.hotpath import COMPUTATION_TIME
from simulator.models.js_compiler import CompiledTwin
from simulator.models.js_twins import Decline
from simulator.shallow import ShallowFunctions
from tests.simulator.models.v8_outcomes import outcome

EDITED = """\
// a user's edit: a helper and a conditional
function bounded(t, low, high) {
  return t < low ? low : (t > high ? high : t);
}

function computationTime(params) {
  var t = params.get('t');
  if (t > 1e9) {
    return 1e9;
  }
  return bounded(t, 0, 1e9) * scale;
}
"""


def functions(source: str = EDITED, **attributes: object) -> ShallowFunctions:
    shallow.clear_caches()
    return ShallowFunctions(model_key="m", source=source, attributes=attributes or {"scale": 1.5})


def missed(f: ShallowFunctions, params: dict[str, object]) -> float:
    return f.computation_missed(hotpath.memo_key(COMPUTATION_TIME, (), params), params)


def declined(key: object, params: object) -> float:
    raise Decline


def seconds_of(body: str) -> tuple[CompiledTwin, Callable[[dict[str, object]], float]]:
    """The compiled model's miss with nothing kept and no V8: its value, or Decline."""
    f = functions(f"function computationTime(params) {{ {body} }}\n", k=1)
    twin = f._twin
    assert isinstance(twin, CompiledTwin), f.fallback
    missed = twin.missed_caller(COMPUTATION_TIME, {}, 0, 1, declined)
    assert missed is not None
    return twin, lambda params: missed(None, params)


def test_the_miss_path_equals_the_general_path_on_random_inputs() -> None:
    compiled = functions()
    general = functions()
    rng = random.Random(41)
    for _ in range(2000):
        t = rng.choice([rng.uniform(0, 10), rng.uniform(-5, 5), rng.uniform(1e8, 2e9)])
        params: dict[str, object] = {"t": t}
        if t < 0:
            params = {"t": -t}  # a negative time is the model's error (tested below)
        expected = general._missed_general(hotpath.memo_key(COMPUTATION_TIME, (), params), params)
        got = missed(compiled, params)
        assert math.copysign(1, got) == math.copysign(1, expected)
        assert got == expected
    assert isinstance(compiled._twin, CompiledTwin) and compiled._twin.declines == 0


@pytest.mark.parametrize(
    ("body", "counted"),
    [
        ("return -params.t;", False),  # a negative time: V8 reports the model's error
        ("return params.t * 1e308 * 10;", False),  # Infinity
        ("var i = params.t * 1e308 * 10; return i - i;", False),  # NaN
        ("return params.t / 0;", True),  # a division by zero: Python's error, V8 answers
        ("return 'a';", True),  # not a number
        ("return;", True),  # undefined
        ("return params.get('x').y;", True),  # a TypeError in JavaScript
    ],
)
def test_the_miss_declines_what_is_not_a_models_time(body: str, counted: bool) -> None:
    twin, seconds = seconds_of(body)
    with pytest.raises(Decline):
        seconds({"t": 2.0})
    assert twin.declines == (1 if counted else 0)


def test_the_miss_checks_the_value_as_model_seconds_does() -> None:
    _twin, seconds = seconds_of("return params.t;")
    for value in (0.0, -0.0, 5e-324, 1.5, 1.7976931348623157e308):
        assert math.copysign(1, seconds({"t": value})) == math.copysign(1, model_seconds(value))
        assert seconds({"t": value}) == model_seconds(value)
    assert seconds({"t": 3}) == 3.0  # an int is the double nearest it


def test_a_model_whose_top_level_runs_every_call_takes_the_general_miss() -> None:
    source = "var n = 0;\nfunction computationTime(params) { n = n + 1; return n; }\n"
    f = functions(source, k=1)
    twin = f._twin
    assert isinstance(twin, CompiledTwin) and not twin.model.once
    assert twin.missed_caller(COMPUTATION_TIME, {}, 1, 1, declined) is None
    assert f.computation_missed == f._missed_general
    # no state between calls: each call sees the top level afresh
    assert [missed(f, {"t": float(i)}) for i in range(3)] == [1.0, 1.0, 1.0]


def test_params_are_copied_for_the_call_and_the_callers_dict_is_untouched() -> None:
    source = "function computationTime(params) { params.t = 7; return params.t; }\n"
    f = functions(source, k=1)
    params: dict[str, object] = {"t": 1.0}
    value = missed(f, params)
    assert params == {"t": 1.0}
    assert value == ShallowFunctions(
        model_key="m", source=source, attributes={"k": 1}, twin=False
    ).call(COMPUTATION_TIME, params={"t": 1.0})


def test_a_bad_value_at_the_miss_is_v8s_error_with_the_line() -> None:
    f = functions("// x\nfunction computationTime(params) {\n  return params.t - 1;\n}\n", k=1)
    with pytest.raises(ModelEvaluationError) as caught:
        missed(f, {"t": 0.5})
    assert "negative" in str(caught.value) and caught.value.line == 2


def test_the_memo_keeps_the_first_values_then_refreshes(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(shallow, "COMPILED_MEMO_ENTRIES", 8)
    monkeypatch.setattr(shallow, "COMPILED_MEMO_REFRESH", 2)
    f = functions()
    memo = f.computation_memo
    for i in range(8):
        missed(f, {"t": float(i)})
    assert len(memo) == 8
    for i in range(8, 8 + 15):
        assert missed(f, {"t": float(i)}) == i * 1.5
    assert len(memo) == 8  # full: distinct inputs are not kept
    missed(f, {"t": 100.0})  # the 16th unkept miss: emptied, to be refilled
    assert len(memo) == 0
    missed(f, {"t": 101.0})
    assert list(memo.values()) == [101.0 * 1.5]


def test_what_v8_answers_at_a_miss_is_kept_even_when_the_memo_is_full(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(shallow, "COMPILED_MEMO_ENTRIES", 2)
    source = (
        "function computationTime(params) {\n"
        "  var x = params.get('x');\n"
        "  if (x !== undefined) return x.length;\n"  # an array's length: compiled
        "  return params.t;\n"
        "}\n"
    )
    f = functions(source, k=1)
    twin = f._twin
    assert isinstance(twin, CompiledTwin), f.fallback
    missed(f, {"t": 1.0})
    missed(f, {"t": 2.0})
    declined = {"t": 3.0, "x": {"length": "a"}}  # a string length: V8 reports the error
    with pytest.raises(ModelEvaluationError):
        missed(f, declined)
    assert len(f.computation_memo) == 2


@pytest.mark.parametrize(
    "source",
    [
        "var seen = [];\nfunction computationTime(params) { seen.push(1); return seen.length; }\n",
        "function computationTime(params) {\n"
        "  computationTime.n = (computationTime.n || 0) + 1; return computationTime.n;\n}\n",
        "function computationTime(params) { params.n = (params.n || 0) + 1; return params.n; }\n",
        "function computationTime(params) { hw.k = hw.k + 1; return hw.k; }\n",
        "function computationTime(params) { k = k + 1; return k; }\n",
    ],
)
def test_no_state_outlives_a_miss(source: str) -> None:
    """A model that tries to count its calls sees each miss afresh, as V8 does."""
    compiled = functions(source, k=1)
    in_v8 = ShallowFunctions(model_key="m", source=source, attributes={"k": 1}, twin=False)

    def miss_outcome(params: dict[str, object]) -> str:
        try:
            return repr(missed(compiled, params))
        except ModelEvaluationError as error:
            return f"error: {error}"

    got = [miss_outcome({"t": float(i)}) for i in range(3)]
    expected = [outcome(in_v8, COMPUTATION_TIME, params={"t": float(i)}) for i in range(3)]
    assert got == expected
    assert len(set(got)) == 1
