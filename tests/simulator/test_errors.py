"""Errors survive the trip across the sandbox's process boundary unchanged, and every text
they carry is bounded."""

from __future__ import annotations

import json

import pytest

from simulator.errors import (
    ERROR_LIMIT_ITEMS,
    MESSAGE_LIMIT_CHARS,
    MESSAGE_PARTS,
    DeadlockError,
    LaunchError,
    ModelEvaluationError,
    SandboxLimitError,
    SimulationError,
    SnapshotError,
    UserCodeError,
    bounded_text,
    bounded_value,
    error_from_dict,
)
from simulator.runner import run_simulation


@pytest.mark.parametrize(
    "error",
    [
        UserCodeError("name 'x' is not defined", line=3, process="GPU[0]"),
        ModelEvaluationError("boom", model="volkov", function="computationTime", line=2),
        SnapshotError({"nodes[0].count": ["Ensure this value is greater than or equal to 1."]}),
        LaunchError("labels.GPU", "asks for 3 processes but the system holds 2"),
        DeadlockError({"CPU[0]": "a message from GPU"}, 1.5),
        SandboxLimitError("cpu", "the run used more than 10 s of CPU time"),
    ],
)
def test_an_error_round_trips_through_its_dict(error):
    rebuilt = error_from_dict(error.to_dict())
    assert type(rebuilt) is type(error)
    assert str(rebuilt) == str(error)
    assert rebuilt.to_dict() == error.to_dict()


def test_a_user_code_error_names_the_line():
    assert "line 7" in str(UserCodeError("division by zero", line=7))


# --- every stored message is bounded, whatever produced it ---------------------------------

HUGE = 3_000_000


def stored_size(error: SimulationError) -> int:
    """Return the characters of the error's stored (JSON) form."""
    return len(json.dumps(error.to_dict()))


def one_machine(model: str) -> dict:
    return {
        "name": "one machine",
        "hardware": {"cpu": {"type": "CPU", "name": "CPU", "attributes": {}}},
        "models": {"m": {"language": "javascript", "source": model}},
        "nodes": [{"id": "cpu0", "hardware": "cpu", "model": "m", "labels": {"P": 1}}],
        "edges": [],
    }


SECONDS_MODEL = "function computationTime(params) { return params.get('seconds'); }"


@pytest.mark.parametrize(
    ("app", "model"),
    [
        # a simulation-API call echoing its huge argument in its message
        (f"sim.p2pCommunicationSend(1, 'L' * {HUGE})", SECONDS_MODEL),
        (f"sim.p2pCommunicationSend('L' * {HUGE}, 'P')", SECONDS_MODEL),
        # a Python exception
        (f"raise ValueError('x' * {HUGE})", SECONDS_MODEL),
        # a JavaScript exception of the computational model
        (
            "sim.computation({'seconds': 1})",
            f"function computationTime(params) {{ throw new Error('j'.repeat({HUGE})); }}",
        ),
        # a JavaScript value echoed as the model's bad return value
        (
            "sim.computation({'seconds': 1})",
            f"function computationTime(params) {{ return 'r'.repeat({HUGE}); }}",
        ),
    ],
)
def test_a_huge_argument_or_message_gives_a_bounded_stored_error(app: str, model: str) -> None:
    with pytest.raises(SimulationError) as caught:
        run_simulation(one_machine(model), app, labels={"P": 1}, variables={})
    error = caught.value
    assert stored_size(error) < 3 * MESSAGE_LIMIT_CHARS * MESSAGE_PARTS
    assert len(str(error)) <= MESSAGE_LIMIT_CHARS * MESSAGE_PARTS
    # a bounded error crosses the sandbox's boundary unchanged
    assert error_from_dict(error.to_dict()).to_dict() == error.to_dict()


def test_an_errors_mappings_keep_their_first_entries_and_count_the_rest() -> None:
    # one huge text under every key: 1,000 copies of it would take gigabytes of memory and
    # test nothing more (each entry is cut on its own)
    message = "a message from " + "Q" * HUGE
    waiting = {f"P[{i}]": message for i in range(1000)}
    error = DeadlockError(waiting, 1.0)
    assert len(error.waiting) == ERROR_LIMIT_ITEMS
    assert list(error.waiting)[-1] == f"[... {1000 - ERROR_LIMIT_ITEMS + 1} more]"
    assert all(len(what) <= MESSAGE_LIMIT_CHARS for what in error.waiting.values())
    assert stored_size(error) < 2 * ERROR_LIMIT_ITEMS * MESSAGE_LIMIT_CHARS
    assert error_from_dict(error.to_dict()).to_dict() == error.to_dict()

    bad = "bad " + "n" * HUGE
    snapshot = SnapshotError({f"nodes[{i}].name": [bad] for i in range(500)})
    assert len(snapshot.errors) == ERROR_LIMIT_ITEMS
    assert len(str(snapshot)) <= MESSAGE_LIMIT_CHARS * MESSAGE_PARTS


def test_bounding_a_bounded_value_leaves_it_unchanged() -> None:
    text = bounded_text("y" * HUGE)
    assert len(text) <= MESSAGE_LIMIT_CHARS
    assert text.endswith(f"[... {HUGE - text.index(' [')} more characters]")
    assert bounded_text(text) == text
    value = bounded_value({"a": ["z" * HUGE] * 500, "b": 1.5, "c": None})
    assert bounded_value(value) == value
    assert len(value["a"]) == ERROR_LIMIT_ITEMS
    assert bounded_value("short") == "short"
