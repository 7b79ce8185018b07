"""Errors survive the trip across the sandbox's process boundary unchanged."""

from __future__ import annotations

import pytest

from simulator.errors import (
    DeadlockError,
    LaunchError,
    ModelEvaluationError,
    SandboxLimitError,
    SnapshotError,
    UserCodeError,
    error_from_dict,
)


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
