"""The shipped JavaScript models, compiled to Python, give V8's very floats, or leave it to V8.

A shipped model's fast twin is what simulator.models.js_compiler makes of its source (no
digest, no hand-written twin): these tests hold that for every shipped source as it is now.

Each property test draws hardware records from the seed data (hwdb/seed/hardware.json and the
examples' snapshots), sometimes with an attribute dropped, nulled, zeroed, doubled or made a
string, and parameters around the values the examples use, sometimes odd ones (missing, null,
a string, a boolean, NaN, an infinity, an integer past 2**53, something JSON refuses). It then calls the model
twice through `ShallowFunctions`: once with its twin, once in V8 only (`twin=False`). Both must
give the same outcome: the same float (`repr`, so -0.0 is not 0.0) or the same error message.
When the draw had no odd value and V8 gives a number, the twin itself must have answered
(not declined), so the equality is the twin's and not V8's twice.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from simulator import shallow
from simulator.errors import ModelEvaluationError
from simulator.models import builtin_models, js_compiler
from simulator.models.js_compiler import Refusal, compile_model, referenced_names
from simulator.models.js_twins import Decline
from simulator.sandbox import child_entry
from simulator.shallow import _DECLARATION, WELL_KNOWN_FUNCTIONS, ShallowFunctions
from tests.simulator.models.v8_outcomes import outcome

ROOT = Path(__file__).resolve().parents[3]
EXAMPLE = ROOT / "examples" / "merpsys_gtx970"
BUILTINS = {model.name: model.source for model in builtin_models()}
SETTINGS = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
MISSING = object()  # a parameter or attribute left out
MERPSYS_GPU = "examples/merpsys_gtx970/gpu_model.js"
MERPSYS_PCIE = "examples/merpsys_gtx970/pcie_model.js"
VOLKOV_GPU = "builtin:Volkov GPU"
# Every shipped source compiles (Math.exp and a fractional Math.pow included, as V8's)
NOT_COMPILED: set[str] = set()
SHIPPED = sorted({f"builtin:{name}" for name in BUILTINS} | {MERPSYS_GPU, MERPSYS_PCIE})
TWINS = [label for label in SHIPPED if label not in NOT_COMPILED]


def shipped_source(label: str) -> str:
    if label.startswith("builtin:"):
        return BUILTINS[label.removeprefix("builtin:")]
    return (ROOT / label).read_text(encoding="utf-8")


def seeded(kind: str) -> list[dict[str, object]]:
    components = json.loads((ROOT / "hwdb" / "seed" / "hardware.json").read_text())["components"]
    return [
        {row["key"]: row["value"] for row in component.get("attributes", [])}
        for component in components
        if component["type"] == kind
    ]


EXAMPLE_HARDWARE = json.loads((EXAMPLE / "snapshot.json").read_text())["hardware"]
GPUS = [*seeded("GPU"), EXAMPLE_HARDWARE["gtx970"]["attributes"]]
PCIE_LINKS = [
    *(record for record in seeded("NETWORK") if "startupHTD" in record),
    EXAMPLE_HARDWARE["pcie3_x16"]["attributes"],
]
NETWORKS = [record for record in seeded("NETWORK") if "startupHTD" not in record]
# The seed's CPUs name their clock `clock`; the built-in CPU model reads `coreClock`.
CPUS = [*seeded("CPU"), *({**cpu, "coreClock": cpu["clock"]} for cpu in seeded("CPU"))]

# 2**53 + 1 and 10**25 + 1 are read as the nearest double on both sides; 10**400 as Infinity
ODD_VALUES = st.sampled_from(
    [
        *(MISSING, None, 0, 0.0, -0.0, -1.0, "256", "", True, [1]),
        *(math.nan, math.inf, -math.inf, 2**53 + 1, 2**60 + 1, 10**25 + 1, 10**400),
    ]
)
UNSERIALISABLE = st.sampled_from([{1, 2}, b"bytes", {"nested": {"x": [1, 2]}}])


pytestmark = pytest.mark.usefixtures("fresh_caches")


def detail_outcome(functions: ShallowFunctions, function: str, params: Any) -> str:
    try:
        return repr(functions.call_detail(function, params=params))
    except ModelEvaluationError as error:
        return f"error: {error}"


def without_missing(values: Mapping[str, object]) -> dict[str, object]:
    return {key: value for key, value in values.items() if value is not MISSING}


class Record(dict[str, object]):
    """A hardware record's attributes; `changed`: whether one was dropped, nulled, zeroed,
    made a string or doubled (then the twin may decline what V8 answers, by coercing)."""

    changed = False


@st.composite
def record(draw: st.DrawFn, records: list[dict[str, object]], keys: list[str]) -> Record:
    """Return a seeded record, sometimes with one of `keys` dropped, nulled, zeroed, made a
    string or doubled, and with its numbers as ints or floats."""
    attributes = Record(draw(st.sampled_from(records)))
    if draw(st.booleans()):
        attributes = Record(
            {
                key: float(value) if isinstance(value, int) else value
                for key, value in attributes.items()
            }
        )
    if draw(st.integers(0, 3)) == 0:
        attributes.changed = True
        key = draw(st.sampled_from(keys))
        change = draw(st.sampled_from(["drop", "null", "zero", "string", "double"]))
        if change == "drop":
            attributes.pop(key, None)
        elif change == "null":
            attributes[key] = None
        elif change == "zero":
            attributes[key] = 0
        elif change == "string":
            attributes[key] = "13"
        else:
            number = attributes.get(key)
            if isinstance(number, int | float):
                attributes[key] = number * 2
    return attributes


@st.composite
def value(draw: st.DrawFn, clean: st.SearchStrategy[object], odd: bool) -> object:
    return draw(st.one_of(clean, ODD_VALUES) if odd else clean)


def check(
    source: str,
    attributes: Record,
    function: str,
    calls: Sequence[tuple[tuple[object, ...], Mapping[str, object]]],
    *,
    odd: bool,
) -> None:
    """Assert that the twin and V8 agree on every call, and that the twin answered the calls
    V8 gives a number for when neither the calls nor the record were made odd."""
    clean = not odd and not attributes.changed
    twinned = ShallowFunctions(model_key="m", source=source, attributes=attributes, twin=True)
    in_v8 = ShallowFunctions(model_key="m", source=source, attributes=attributes, twin=False)
    assert not in_v8.twinned
    for args, params in calls:
        expected = outcome(in_v8, function, *args, params=params)
        assert outcome(twinned, function, *args, params=params) == expected, (args, params)
        if clean and not expected.startswith("error") and twinned._twin is not None:
            # without the memo, which takes 0.0 for -0.0 (and 1 for 1.0) from an earlier call
            in_v8_now = in_v8._call_uncached(function, args, params)
            assert repr(twinned._twin.call(function, args, params)) == repr(in_v8_now), params


def test_every_shipped_model_compiles():
    for label in SHIPPED:
        source = shipped_source(label)
        compiled = compile_model(source, referenced_names(source))
        assert not isinstance(compiled, Refusal), (label, compiled)


@pytest.mark.parametrize("twin", TWINS)
def test_a_twin_defines_the_functions_v8_finds_in_its_source(twin: str):
    source = shipped_source(twin)
    in_v8 = ShallowFunctions(model_key="m", source=source, attributes={}, twin=False)
    names = {*_DECLARATION.findall(source), *WELL_KNOWN_FUNCTIONS, "computationDetail"}
    names |= {"constructor", "toString", "hw", "not a name"}
    twinned = ShallowFunctions(model_key="m", source=source, attributes={})
    assert twinned.twinned
    assert all(twinned.has(name) == in_v8.has(name) for name in names)


def test_an_edited_shipped_source_stays_compiled():
    source = (EXAMPLE / "gpu_model.js").read_text()
    attributes = EXAMPLE_HARDWARE["gtx970"]["attributes"]
    params = {
        "gridSize": 39063,
        "blockSize": 256,
        "CUDACoreInstructions": 27,
        "issuedInstructions": 27,
        "GMEMBytesTransferred": 384,
        "occupancy": 64,
        "latencyBound": 966,
        "kernelExecutionLambda": 0.703787,
    }
    shipped = ShallowFunctions(model_key="m", source=source, attributes=attributes)
    assert shipped.twinned
    assert shipped.call("computationTime", params=params) == pytest.approx(7.596e-4, rel=1e-3)
    assert not shallow._contexts  # the twin answered: no V8 context was made

    edited = source.replace("Math.pow(10, 6)", "Math.pow(10, 7)")
    assert (
        len(edited) == len(source) and sum(a != b for a, b in zip(edited, source, strict=True)) == 1
    )
    user = ShallowFunctions(model_key="m", source=edited, attributes=attributes)
    assert user.twinned
    assert user.call("computationTime", params=params) == pytest.approx(
        shipped.call("computationTime", params=params) / 10, rel=1e-12
    )
    commented = source.replace(
        "function computationTime(params) {",
        "// edited\nfunction computationTime(params) {\n  if (params.get('gridSize') < 0) return 0;",
    )
    user = ShallowFunctions(model_key="m", source=commented, attributes=attributes)
    assert user.twinned
    assert user.call("computationTime", params=params) == shipped.call(
        "computationTime", params=params
    )
    assert not shallow._contexts  # compiled: still no V8 context
    in_v8 = ShallowFunctions(model_key="m", source=commented, attributes=attributes, twin=False)
    assert in_v8.call("computationTime", params=params) == user.call(
        "computationTime", params=params
    )


def test_the_environment_can_send_every_call_to_v8(monkeypatch: pytest.MonkeyPatch):
    source = (EXAMPLE / "pcie_model.js").read_text()
    attributes = EXAMPLE_HARDWARE["pcie3_x16"]["attributes"]
    monkeypatch.setenv("PARASIM_JS_TWINS", "0")
    assert not ShallowFunctions(model_key="m", source=source, attributes=attributes).twinned
    assert ShallowFunctions(model_key="m", source=source, attributes=attributes, twin=True).twinned
    monkeypatch.setenv("PARASIM_JS_TWINS", "1")
    assert ShallowFunctions(model_key="m", source=source, attributes=attributes).twinned


def test_an_attribute_named_like_the_preludes_globals_keeps_v8s_behaviour():
    source = (EXAMPLE / "pcie_model.js").read_text()
    attributes = {**EXAMPLE_HARDWARE["pcie3_x16"]["attributes"], "__parasim_call": 1}
    assert not ShallowFunctions(model_key="m", source=source, attributes=attributes).twinned


def test_a_twin_reports_v8s_errors_with_their_lines():
    source = (EXAMPLE / "pcie_model.js").read_text()
    attributes = EXAMPLE_HARDWARE["pcie3_x16"]["attributes"]
    twinned = ShallowFunctions(model_key="pcie", source=source, attributes=attributes)
    with pytest.raises(ModelEvaluationError) as caught:
        twinned.call("p2pTime", 8, params={})
    assert caught.value.line == 18  # the `throw`, as V8 reports it
    assert caught.value.detail == (
        "Error: a transfer of 8 bytes needs params.direction HostToDevice or DeviceToHost, "
        "got undefined"
    )
    with pytest.raises(ModelEvaluationError, match="does not define function power"):
        twinned.call("power", "idle", params={})
    with pytest.raises(ModelEvaluationError, match="not JSON-serialisable"):
        twinned.call("p2pTime", 8, params={"direction": "HostToDevice", "x": {1, 2}})


def test_a_twinned_model_memoizes_and_answers_uncached_calls_without_starting_v8():
    """Its speed (a few us per uncached call) is measured in bench/bench_shallow.py; what
    makes it fast, and is tested here, is that no V8 context is ever started."""
    source = (EXAMPLE / "gpu_model.js").read_text()
    attributes = EXAMPLE_HARDWARE["gtx970"]["attributes"]
    functions = ShallowFunctions(model_key="m", source=source, attributes=attributes)
    params = {
        "gridSize": 1,
        "blockSize": 256,
        "CUDACoreInstructions": 27,
        "issuedInstructions": 27,
        "GMEMBytesTransferred": 384,
        "occupancy": 64,
        "latencyBound": 966,
        "kernelExecutionLambda": 0.703787,
    }
    rounds = 5_000
    for grid in range(1, rounds + 1):
        functions.call("computationTime", params={**params, "gridSize": grid})
    assert len(functions._memo) == rounds
    assert not shallow._contexts


# --- JavaScript's semantics of the helpers, against V8 itself ------------------------------

PROBE = """\
function computationDetail(params) {
  var x = params.x, y = params.y;
  var results = {ceil: Math.ceil(x), floor: Math.floor(x), min: Math.min(x, y),
                 max: Math.max(x, y), fixed: x.toFixed(1)};
  var flat = {};
  for (var key in results) {
    var v = results[key];
    flat[key] = typeof v === 'number' && !Number.isFinite(v) ? String(v) : v;
    flat[key + 'Negative'] = Object.is(v, -0);
  }
  return flat;
}
"""


def _shown(x: float | str) -> object:
    if isinstance(x, str):
        return x
    if not math.isfinite(x):
        return "NaN" if math.isnan(x) else ("Infinity" if x > 0 else "-Infinity")
    return x


@SETTINGS
@given(
    x=st.one_of(
        st.floats(allow_nan=True, allow_infinity=True, width=64),
        st.sampled_from([0.25, 0.75, -0.25, -0.05, 5.25, 8.95, -0.0, 0.0, 6.05, 1e21, -1e21]),
        st.integers(-20, 200).map(lambda n: n / 20),
    ),
    y=st.sampled_from([0.0, -0.0, 1.0, -1.0, math.nan, math.inf]),
)
def test_the_javascript_helpers_give_v8s_results(x: float, y: float):
    from simulator.models import js_twins

    functions = ShallowFunctions(model_key="probe", source=PROBE, attributes={})
    detail = functions.call_detail("computationDetail", params={"x": x, "y": y})
    expected: dict[str, object] = {}
    for name, result in (
        ("ceil", js_compiler._ceil(x)),
        ("floor", js_compiler._floor(x)),
        ("min", js_compiler._math_min(x, y)),
        ("max", js_compiler._math_max(x, y)),
    ):
        expected[name] = _shown(result)
        expected[name + "Negative"] = result == 0 and math.copysign(1.0, result) < 0
    try:
        expected["fixed"] = js_compiler._to_fixed(x, 1.0)
    except Decline:
        expected["fixed"] = detail["fixed"]  # beyond 1e21 the twin declines: nothing to check
        assert abs(x) >= 1e21
    expected["fixedNegative"] = False
    assert {key: detail[key] for key in expected} == {
        key: js_twins.json_number(v) if isinstance(v, float) else v for key, v in expected.items()
    }


def test_v8s_math_exp_is_not_cpythons_and_the_compiled_model_s_is_v8s():
    # One argument of many (about 10 % in [-20, 0]): V8's fdlibm exp rounds the other way.
    x = -1.3105771847962622
    source = "function computationTime(params) { return Math.exp(params.x); }"
    in_v8 = ShallowFunctions(model_key="exp", source=source, attributes={}, twin=False)
    assert in_v8.call("computationTime", params={"x": x}) == 0.2696643652860048
    assert math.exp(x) == 0.26966436528600485
    compiled = ShallowFunctions(model_key="exp", source=source, attributes={})
    assert compiled.twinned
    assert compiled._twin is not None
    assert compiled._twin.call("computationTime", (), {"x": x}) == 0.2696643652860048


def test_v8s_math_pow_of_ten_to_the_sixth_is_exactly_a_million():
    source = "function computationTime(params) { return Math.pow(10, 6) === 1e6 ? 1 : 0; }"
    assert (
        ShallowFunctions(model_key="p", source=source, attributes={}).call(
            "computationTime", params={}
        )
        == 1.0
    )


# --- The models ------------------------------------------------------------------------------

GPU_KEYS = [
    "warpSize",
    "SMs",
    "SMCoreClock",
    "CUDACores",
    "schedulers",
    "GMEMThroughput",
    "memoryClock",
    "busWidth",
    "dataRate",
    "computeCapability",
    "maxWarpsPerSM",
    "maxBlocksPerSM",
    "registersPerSM",
    "sharedMemPerSM",
    "maxSharedMemPerBlock",
    "maxRegistersPerThread",
    "FP64Units",
    "SFUs",
    "LDSTUnits",
]


@st.composite
def kernel_params(draw: st.DrawFn, odd: bool, merpsys: bool) -> dict[str, object]:
    """Return a kernel launch like the examples' (saxpy2 at intensity a), sometimes odd."""
    intensity = draw(st.integers(0, 4096))
    block = st.one_of(st.sampled_from([32, 64, 96, 128, 256, 512, 1024]), st.integers(1, 2048))
    params: dict[str, object] = {
        "blockSize": draw(value(block, odd)),
        "CUDACoreInstructions": draw(value(st.just(23 + 4 * intensity), odd)),
        "issuedInstructions": draw(value(st.just(23 + 4 * intensity), odd)),
        "GMEMBytesTransferred": draw(value(st.sampled_from([384, 256, 0, 4096.5]), odd)),
        "latencyBound": draw(value(st.just(942 + 24 * intensity), odd)),
        "kernelExecutionLambda": draw(value(st.floats(0.05, 2.0), odd)),
    }
    grid = st.one_of(st.integers(1, 10**7), st.floats(1, 1e9))
    occupancy = st.one_of(st.floats(0.5, 64), st.integers(1, 64))
    if merpsys:
        params["gridSize"] = draw(value(grid, odd))
        params["occupancy"] = draw(value(occupancy, odd))
    else:
        if draw(st.booleans()):
            params["gridSize"] = draw(value(grid, odd))
        else:
            params["N"] = draw(value(st.integers(1, 10**9), odd))
        if draw(st.booleans()):
            params["occupancy"] = draw(value(occupancy, odd))
        else:
            params["registersPerThread"] = draw(value(st.integers(0, 255), odd))
            if draw(st.booleans()):
                params["sharedMemPerBlock"] = draw(value(st.integers(0, 100 * 1024), odd))
        for name in ("FP64Instructions", "SFUInstructions", "sharedMemoryInstructions"):
            if draw(st.integers(0, 3)) == 0:
                params[name] = draw(value(st.integers(0, 64), odd))
        if draw(st.booleans()):
            params["extraCyclesPerWarp"] = draw(
                st.lists(st.floats(0, 2000), max_size=3)
                if not odd
                else st.one_of(st.lists(st.floats(0, 2000), max_size=3), ODD_VALUES)
            )
    if odd and draw(st.integers(0, 5)) == 0:
        params["extra"] = draw(UNSERIALISABLE)
    return without_missing(params)


@SETTINGS
@given(
    attributes=record(GPUS, GPU_KEYS),
    odd=st.booleans(),
    data=st.data(),
)
def test_the_merpsys_gpu_twin_equals_v8(attributes: Record, odd: bool, data: st.DataObject):
    calls = [
        ((), data.draw(kernel_params(odd, merpsys=True)))
        for _ in range(data.draw(st.integers(1, 4)))
    ]
    check(shipped_source(MERPSYS_GPU), attributes, "computationTime", calls, odd=odd)


@SETTINGS
@given(
    attributes=record(GPUS, GPU_KEYS),
    odd=st.booleans(),
    data=st.data(),
)
def test_the_volkov_gpu_twin_equals_v8(attributes: Record, odd: bool, data: st.DataObject):
    source = shipped_source(VOLKOV_GPU)
    calls = [
        ((), data.draw(kernel_params(odd, merpsys=False)))
        for _ in range(data.draw(st.integers(1, 4)))
    ]
    check(source, attributes, "computationTime", calls, odd=odd)
    twinned = ShallowFunctions(model_key="m", source=source, attributes=attributes, twin=True)
    in_v8 = ShallowFunctions(model_key="m", source=source, attributes=attributes, twin=False)
    for _, params in calls:
        expected = detail_outcome(in_v8, "computationDetail", params)
        assert detail_outcome(twinned, "computationDetail", params) == expected, params
        clean = not odd and not attributes.changed
        if clean and not expected.startswith("error") and twinned._twin is not None:
            in_v8_now = in_v8._evaluate_detail("computationDetail", params)
            assert repr(twinned._twin.detail("computationDetail", params)) == repr(in_v8_now)


PCIE_KEYS = [
    "startupHTD",
    "startupDth",
    "lambdaHTD",
    "lambdaDth",
    "bandwidth",
    "pageableStartupHTD",
    "pageableBandwidthHTD",
    "pageableStartupDth",
    "pageableBandwidthDth",
]
SIZES = st.one_of(st.integers(0, 2**34), st.floats(0, 1e12), st.just(0))
DIRECTIONS = st.sampled_from(["HostToDevice", "DeviceToHost", MISSING])


@SETTINGS
@given(
    attributes=record(PCIE_LINKS, PCIE_KEYS),
    odd=st.booleans(),
    data=st.data(),
)
def test_the_merpsys_pcie_twin_equals_v8(attributes: Record, odd: bool, data: st.DataObject):
    calls = []
    for _ in range(data.draw(st.integers(1, 4))):
        size = data.draw(value(SIZES, odd))
        params = {"direction": data.draw(value(DIRECTIONS, odd))}
        calls.append(((size,) if size is not MISSING else (), without_missing(params)))
    check(shipped_source(MERPSYS_PCIE), attributes, "p2pTime", calls, odd=odd)


@SETTINGS
@given(
    attributes=record(PCIE_LINKS, PCIE_KEYS),
    odd=st.booleans(),
    data=st.data(),
)
def test_the_pcie_link_twin_equals_v8(attributes: Record, odd: bool, data: st.DataObject):
    calls = []
    for _ in range(data.draw(st.integers(1, 4))):
        size = data.draw(value(SIZES, odd))
        params = {
            "direction": data.draw(value(DIRECTIONS, odd)),
            "hostMemory": data.draw(value(st.sampled_from(["pageable", "pinned", MISSING]), odd)),
        }
        calls.append(((size,) if size is not MISSING else (), without_missing(params)))
    check(BUILTINS["PCIe link"], attributes, "p2pTime", calls, odd=odd)


@SETTINGS
@given(
    attributes=record(NETWORKS, ["latency", "bandwidth"]),
    odd=st.booleans(),
    data=st.data(),
)
def test_the_latency_bandwidth_link_twin_equals_v8(
    attributes: Record, odd: bool, data: st.DataObject
):
    sizes = [data.draw(value(SIZES, odd)) for _ in range(data.draw(st.integers(1, 4)))]
    calls: list[tuple[tuple[object, ...], dict[str, object]]] = [
        ((size,), {}) for size in sizes if size is not MISSING
    ]
    check(BUILTINS["Latency-bandwidth link"], attributes, "p2pTime", calls, odd=odd)


@SETTINGS
@given(
    attributes=record(CPUS, ["cores", "coreClock", "flopsPerCycle"]),
    odd=st.booleans(),
    data=st.data(),
)
def test_the_cpu_twin_equals_v8(attributes: Record, odd: bool, data: st.DataObject):
    calls = []
    for _ in range(data.draw(st.integers(1, 4))):
        params = {
            "flops": data.draw(value(st.one_of(st.floats(0, 1e15), st.integers(0, 10**12)), odd)),
            "threads": data.draw(value(st.one_of(st.just(MISSING), st.integers(1, 512)), odd)),
            "efficiency": data.draw(value(st.one_of(st.just(MISSING), st.floats(0.01, 1)), odd)),
        }
        calls.append(((), without_missing(params)))
    check(BUILTINS["CPU"], attributes, "computationTime", calls, odd=odd)


@SETTINGS
@given(
    attributes=record(GPUS, ["powerIdle", "powerConsumptionLoad"]),
    odd=st.booleans(),
    data=st.data(),
)
def test_the_power_states_twin_equals_v8(attributes: Record, odd: bool, data: st.DataObject):
    calls = []
    for _ in range(data.draw(st.integers(1, 4))):
        state = data.draw(value(st.sampled_from(["idle", "active"]), odd))
        params = {"load": data.draw(value(st.one_of(st.just(MISSING), st.floats(0, 1)), odd))}
        calls.append(((state,) if state is not MISSING else (), without_missing(params)))
    check(BUILTINS["Power states"], attributes, "power", calls, odd=odd)


@SETTINGS
@given(
    rate=st.one_of(st.just(MISSING), st.floats(0, 1), ODD_VALUES),
    mtbf=st.one_of(st.just(MISSING), st.floats(1, 1e9), st.integers(1, 10**9), ODD_VALUES),
)
def test_the_reliability_twin_equals_v8(rate: object, mtbf: object):
    attributes = without_missing({"failuresPerSecond": rate, "mtbf": mtbf})
    clean = all(
        v is MISSING or type(v) is float or (type(v) is int and v < 10**300) for v in (rate, mtbf)
    )
    check(BUILTINS["Reliability"], Record(attributes), "failureRate", [((), {})], odd=not clean)


# --- End to end ------------------------------------------------------------------------------


def test_the_merpsys_example_gives_the_same_result_with_twins_and_in_v8(
    monkeypatch: pytest.MonkeyPatch,
):
    from simulator.runner import run_simulation

    snapshot = json.loads((EXAMPLE / "snapshot.json").read_text())
    app = (EXAMPLE / "app.py").read_text()
    variables = {"N": 10**7, "blockSz": 256, "computeIntensity": 1, "occupancy": 64}

    def run() -> dict[str, Any]:
        result = run_simulation(snapshot, app, labels={"CPU": 1, "GPU": 1}, variables=variables)
        result.pop("stats", None)
        return result

    twinned = run()
    assert not shallow._contexts  # both models were answered by their twins
    monkeypatch.setenv("PARASIM_JS_TWINS", "0")
    shallow.clear_caches()
    assert run() == twinned
    assert shallow._contexts
    assert twinned["overall_time_s"] == pytest.approx(11.998e-3, abs=5e-7)


def test_the_off_switch_reaches_a_sandboxed_run(monkeypatch: pytest.MonkeyPatch) -> None:
    from simulator.sandbox import Limits, run_sandboxed

    monkeypatch.setenv("PARASIM_JS_TWINS", "0")
    result = run_sandboxed({}, limits=Limits(wall_s=30), _entry=f"{__name__}:entry_twinned")

    assert result == {"twinned": False}
    monkeypatch.setenv("PARASIM_JS_TWINS", "1")
    assert run_sandboxed({}, limits=Limits(wall_s=30), _entry=f"{__name__}:entry_twinned") == {
        "twinned": True
    }


@child_entry
def entry_twinned(**_: object) -> dict[str, object]:
    source = (EXAMPLE / "gpu_model.js").read_text()
    functions = ShallowFunctions(model_key="gpu", source=source, attributes={"SMs": 13})
    return {"twinned": functions.twinned}
