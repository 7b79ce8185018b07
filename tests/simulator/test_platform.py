"""The platform of a run (simulator.platform): nodes and their link models."""

from __future__ import annotations

import re
from typing import Any

import pytest

from simulator import shallow
from simulator.engine import Engine
from simulator.errors import ModelEvaluationError, model_seconds
from simulator.platform import NodeRuntime


class CountingModel:
    """A computational model that counts its evaluations (ModelFunctions)."""

    def __init__(self) -> None:
        self.calls: list[tuple[object, ...]] = []

    def has(self, function: str) -> bool:
        return function == "p2pTime"

    def call(self, function: str, *args: object, params: Any) -> float:
        self.calls.append((function, *args, dict(params)))
        return 1e-6 * float(args[0]) if args else 0.0  # type: ignore[arg-type]

    evaluate = call  # the node keeps its own memo of transfer times

    def evaluator(self, function: str) -> Any:
        return lambda args, params: self.evaluate(function, *args, params=params)

    def call_detail(self, function: str, *, params: Any) -> dict[str, object]:
        raise AssertionError("not used")


def test_a_link_evaluates_its_model_once_per_distinct_transfer() -> None:
    model = CountingModel()
    node = NodeRuntime(
        Engine(), "bus", count=1, capacity=1, is_network=True, model_key="m", functions=model
    )

    times = [
        node.transfer_time(1000.0, "HostToDevice", "pinned"),
        node.transfer_time(1000.0, "HostToDevice", "pinned"),
        node.transfer_time(1000.0, "DeviceToHost", None),
        node.transfer_time(2000.0, "HostToDevice", "pinned"),
    ]

    assert times == [1e-3, 1e-3, 1e-3, 2e-3]
    assert model.calls == [
        ("p2pTime", 1000.0, {"direction": "HostToDevice", "hostMemory": "pinned"}),
        ("p2pTime", 1000.0, {"direction": "DeviceToHost"}),
        ("p2pTime", 2000.0, {"direction": "HostToDevice", "hostMemory": "pinned"}),
    ]


def _node_on(source: str) -> NodeRuntime:
    functions = shallow.ShallowFunctions(model_key="m", source=source, attributes={})
    return NodeRuntime(
        Engine(), "gpu", count=1, capacity=1, is_network=False, model_key="m", functions=functions
    )


@pytest.mark.parametrize(
    ("body", "detail"),
    [
        ("return -0.5;", "returned -0.5, expected a non-negative number"),
        ("return 0 / 0;", "returned NaN, expected a finite number"),
        ("return undefined;", "returned undefined, expected a number"),
    ],
)
def test_a_node_tells_a_bad_time_as_the_model_does_with_its_line(body: str, detail: str) -> None:
    shallow.clear_caches()
    node = _node_on(f"// model\nfunction computationTime(params) {{\n  {body}\n}}")

    with pytest.raises(ModelEvaluationError) as caught:
        node.computation_time({"n": 1})

    assert (caught.value.detail, caught.value.line, caught.value.function) == (
        detail,
        2,
        "computationTime",
    )


def test_a_value_evaluated_once_is_checked_once(monkeypatch: pytest.MonkeyPatch) -> None:
    """One rule checks a model's times (simulator.errors.model_seconds), where the value is
    evaluated: the node trusts what its model functions answer and does not check again."""
    shallow.clear_caches()
    checked: list[object] = []

    def counting(value: object) -> float:
        checked.append(value)
        return model_seconds(value)

    monkeypatch.setattr(shallow, "model_seconds", counting)
    node = _node_on("function computationTime(params) { return params.n * 0.25 + 0 * Math.E; }")

    assert node.computation_time({"n": 3}) == 0.75
    assert checked == [0.75]


@pytest.mark.parametrize(
    ("value", "message"),
    [
        (True, "returned True, expected a number"),
        ("1", "returned '1', expected a number"),
        (float("inf"), "returned Infinity, expected a finite number"),
        (float("-inf"), "returned -Infinity, expected a finite number"),
        (-1, "returned -1, expected a non-negative number"),
    ],
)
def test_the_one_rule_of_a_model_time_says_what_was_returned(value: object, message: str) -> None:
    with pytest.raises(ValueError, match=f"^{re.escape(message)}$"):
        model_seconds(value)
    assert model_seconds(2) == 2.0
    assert type(model_seconds(2)) is float


# A link model with every outcome a transfer time can have: a value, a value the one rule
# refuses (negative), an error the model throws, and a branch on a string parameter.
LINK = """\
function p2pTime(size, params) {
  if (size > 1e9) { throw new Error('too big: ' + size); }
  if (size === 7) { return -1; }
  var rate = params.get('direction') === 'HostToDevice' ? bandwidth * 0.7 : bandwidth;
  return latency + size / rate;
}
"""
LINK_ATTRIBUTES = {"latency": 2e-6, "bandwidth": 1.5e10}


def _link_node() -> NodeRuntime:
    functions = shallow.ShallowFunctions(model_key="m", source=LINK, attributes=LINK_ATTRIBUTES)
    return NodeRuntime(
        Engine(), "bus", count=1, capacity=1, is_network=True, model_key="m", functions=functions
    )


def _outcome(evaluate: Any, size: float, direction: str | None) -> object:
    try:
        return evaluate(size, direction)
    except ModelEvaluationError as error:
        return (error.detail, error.line, error.function)


def test_a_compiled_link_model_answers_as_the_general_path_and_leaves_it_only_its_refusals(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    shallow.clear_caches()
    cases = [
        (float(size), direction)
        for size in (0, 1, 7, 4096, 3.5e8, 2e9)
        for direction in ("HostToDevice", "DeviceToHost", None)
    ]
    general = _link_node().functions
    assert general is not None

    def by_evaluate(size: float, direction: str | None) -> object:
        params = {} if direction is None else {"direction": direction}
        return general.evaluate("p2pTime", size, params=params)

    expected = [_outcome(by_evaluate, size, direction) for size, direction in cases]

    shallow.clear_caches()
    node = _link_node()
    evaluated: list[tuple[object, ...]] = []
    evaluate = shallow.ShallowFunctions.evaluate

    def counted(self: Any, function: str, *args: object, params: Any) -> float:
        evaluated.append(args)
        return evaluate(self, function, *args, params=params)

    monkeypatch.setattr(shallow.ShallowFunctions, "evaluate", counted)
    got = [_outcome(node.transfer_time, size, direction) for size, direction in cases]

    assert got == expected
    assert any(isinstance(value, tuple) for value in got)  # the refusals were told
    # the compiled model answered every transfer time it decides; the general path had only
    # the negative value and the thrown error
    assert sorted(evaluated) == sorted([(7.0,)] * 3 + [(2e9,)] * 3)


def test_a_process_s_figures_carry_its_name_made_once_for_its_result_row() -> None:
    from simulator.placement import Slot
    from simulator.platform import ProcessState

    slot = Slot("GPU", 3, "gpu0", 1)
    state = ProcessState(Engine(), slot)
    # the result's row names the process from its figures: the placement's name, not a
    # second formatting of it
    assert state.figures.name == state.name == slot.name == "GPU[3]"
