"""The memo of a JavaScript model's values keeps apart the inputs JavaScript tells apart
(issue 41: no state between calls). Python's equality makes False == 0 == 0.0 == -0.0 and
True == 1 == 1.0, so a key of plain params would give `params.get('d') === false` or
`1 / x` another call's value, and the answer would depend on the order of the calls."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from simulator import hotpath, shallow
from simulator.engine import speedups
from simulator.runner import run_simulation
from simulator.shallow import ShallowFunctions

# 1 for false, 4 for a negative zero, 8 for true, 2 for any other value; 16 times that of
# an array's first item
MODEL = (
    "function kind(d) {\n"
    "  if (d === false) return 1;\n"
    "  if (d === true) return 8;\n"
    "  return d === 0 && 1 / d < 0 ? 4 : 2;\n"
    "}\n"
    "function computationTime(params) {\n"
    "  var d = params.get('d');\n"
    "  return Array.isArray(d) ? 16 * kind(d[0]) : kind(d);\n"
    "}\n"
)
# every value equal to 0 or 1 in Python, in the order that fooled the memo, and in a tuple
INPUTS: list[object] = [0, False, 0.0, -0.0, 1, True, 1.0, False, -0.0, True]
INPUTS += [(0,), (False,), (-0.0,), (True,), (1,), (False,), (-0.0,)]
EXPECTED = [2.0, 1.0, 2.0, 4.0, 2.0, 8.0, 2.0, 1.0, 4.0, 8.0]
EXPECTED += [32.0, 16.0, 64.0, 128.0, 32.0, 16.0, 64.0]


def test_the_memo_tells_apart_what_javascript_tells_apart() -> None:
    shallow.clear_caches()
    functions = ShallowFunctions(model_key="js-values", source=MODEL, attributes={})

    values = [functions.call("computationTime", params={"d": d}) for d in INPUTS]

    assert values == EXPECTED


def test_a_memo_key_differs_where_javascript_differs_and_only_there() -> None:
    def key(value: object) -> object:
        return hotpath.memo_key("computationTime", (), {"d": value})

    assert len({key(value) for value in (0, False, -0.0, True)}) == 4
    assert len({key(value) for value in ((0,), (False,), (-0.0,), ((False,),), ((0,),))}) == 5
    # the same JavaScript number: one key, and the common float keeps its plain key
    assert key(1) == key(1.0) and key(0) == key(0.0)
    assert key(2.5) == ("computationTime", (), (("d", 2.5),))


SYSTEM: dict[str, Any] = {
    "name": "memo of JavaScript values",
    "hardware": {"host": {"type": "CPU", "name": "host", "attributes": {}}},
    "models": {"m": {"language": "javascript", "source": MODEL}},
    "nodes": [{"id": "h", "hardware": "host", "model": "m", "count": 1, "labels": {"P": 1}}],
    "edges": [],
}
# twice, so that the second round reads the memo (and the C core's index)
APP = "for _ in range(2):\n" + "".join(
    f"    sim.computation({{'d': {value!r}}})\n" for value in INPUTS
)
RUN_AND_PRINT = """\
import json, sys
from simulator.runner import run_simulation
system, app = json.loads(sys.stdin.read())
print(json.dumps(run_simulation(system, app, labels={"P": 1}, variables={})["overall_time_s"]))
"""


@pytest.mark.parametrize("core", ["here", "pure-python"])
def test_a_run_tells_apart_what_javascript_tells_apart(core: str) -> None:
    if core == "here":
        if speedups is None:
            pytest.skip("the C core is not built")
        shallow.clear_caches()
        overall = run_simulation(SYSTEM, APP, labels={"P": 1}, variables={})["overall_time_s"]
    else:
        done = subprocess.run(
            [sys.executable, "-c", RUN_AND_PRINT],
            input=json.dumps([SYSTEM, APP]),
            capture_output=True,
            text=True,
            env={**os.environ, "PARASIM_PURE_PYTHON": "1"},
            check=True,
        )
        overall = json.loads(done.stdout)

    assert overall == 2 * sum(EXPECTED)


PARAM_VALUES = st.one_of(
    st.booleans(),
    st.sampled_from([0, 1, -1, 0.0, -0.0, 1.0, -1.0, 2]),
    st.floats(allow_nan=False, allow_infinity=False, min_value=-4, max_value=4),
    st.tuples(st.sampled_from([0, False, 0.0, -0.0, True, 1])),
)
PROPERTY_MODEL = (
    "function computationTime(params) {\n"
    "  var a = params.get('a'), b = params.get('b');\n"
    "  var t = (typeof a === 'boolean' ? 3 : 5) + (b === false ? 7 : 11);\n"
    "  return t + (1 / a < 0 ? 13 : 0) + (1 / b < 0 ? 17 : 0) + (a === 1 ? 19 : 0);\n"
    "}\n"
)


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(PARAM_VALUES, PARAM_VALUES), min_size=1, max_size=6))
def test_a_memoized_value_is_a_fresh_evaluation(calls: list[tuple[object, object]]) -> None:
    shallow.clear_caches()
    functions = ShallowFunctions(model_key="js-values", source=PROPERTY_MODEL, attributes={})
    memoized = [functions.call("computationTime", params={"a": a, "b": b}) for a, b in calls]
    fresh = []
    for a, b in calls:
        shallow.clear_caches()  # an empty memo: the value of this call alone
        alone = ShallowFunctions(model_key="js-values", source=PROPERTY_MODEL, attributes={})
        fresh.append(alone.call("computationTime", params={"a": a, "b": b}))
    assert memoized == fresh


LINKED: dict[str, Any] = {
    "name": "transfer memo of JavaScript values",
    "hardware": {
        "host": {"type": "CPU", "name": "host", "attributes": {}},
        "switch": {"type": "NETWORK", "name": "switch", "attributes": {}},
    },
    "models": {
        "pause": {
            "language": "javascript",
            "source": "function computationTime(params) { return 1; }\n",
        },
        # -0 bytes take longer than 0 bytes: only a model that divides by the size sees it
        "link": {
            "language": "javascript",
            "source": "function p2pTime(size, params) { return 1 / size < 0 ? 5 : 1; }\n",
        },
    },
    "nodes": [
        {"id": "root", "hardware": "host", "model": "pause", "labels": {"Root": 1}},
        {"id": "worker", "hardware": "host", "model": "pause", "labels": {"W": 1}},
        {"id": "switch", "hardware": "switch", "model": "link"},
    ],
    "edges": [["root", "switch"], ["worker", "switch"]],
}
TRANSFER_RUN = """\
import json, sys
from simulator.runner import run_simulation
system, app = json.loads(sys.stdin.read())
result = run_simulation(system, app, labels={"Root": 1, "W": 1}, variables={})
print(json.dumps(result["overall_time_s"]))
"""


def broadcasts(sizes: list[float]) -> str:
    return "".join(f"sim.broadcast({size!r}, 'Root', 0)\n" for size in sizes)


@pytest.mark.parametrize("core", ["here", "pure-python"])
def test_a_transfer_of_minus_zero_bytes_is_not_one_of_zero_bytes(core: str) -> None:
    def overall(sizes: list[float]) -> float:
        if core == "here":
            if speedups is None:
                pytest.skip("the C core is not built")
            shallow.clear_caches()
            result = run_simulation(
                LINKED, broadcasts(sizes), labels={"Root": 1, "W": 1}, variables={}
            )
            return float(result["overall_time_s"])
        done = subprocess.run(
            [sys.executable, "-c", TRANSFER_RUN],
            input=json.dumps([LINKED, broadcasts(sizes)]),
            capture_output=True,
            text=True,
            env={**os.environ, "PARASIM_PURE_PYTHON": "1"},
            check=True,
        )
        return float(json.loads(done.stdout))

    both = overall([0.0, -0.0, 0.0, -0.0])
    assert both == overall([-0.0, 0.0, -0.0, 0.0])
    assert both > overall([0.0, 0.0, 0.0, 0.0])
