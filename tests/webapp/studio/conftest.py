"""Fixtures of the studio tests: users, signed-in API clients, captured queueing; and
`launch`, a run launched through the service."""

from __future__ import annotations

from typing import Any

import pytest
from rest_framework.test import APIClient

from tests.hwdb.factories import UserFactory
from tests.webapp.studio.factories import TINY_APP, tiny_snapshot
from webapp.studio import dispatch
from webapp.studio.models import Simulation
from webapp.studio.services.launch import simulation_launch


@pytest.fixture
def user(db: None) -> Any:
    """Return an ordinary user."""
    return UserFactory()


@pytest.fixture
def other_user(db: None) -> Any:
    """Return a second ordinary user."""
    return UserFactory()


@pytest.fixture
def client_for(db: None) -> Any:
    """Return a function giving an API client signed in (forced) as a user."""

    def make(user: Any) -> APIClient:
        client = APIClient()
        client.force_authenticate(user=user)
        return client

    return make


@pytest.fixture
def client(user: Any, client_for: Any) -> APIClient:
    """Return an API client signed in as `user`."""
    return client_for(user)


@pytest.fixture
def sent(monkeypatch: pytest.MonkeyPatch) -> list[list[int]]:
    """Return the ids of the runs sent to the broker, one list per send; nothing is sent."""
    batches: list[list[int]] = []

    def record(simulations: list[Simulation], **options: Any) -> None:
        batches.append([simulation.pk for simulation in simulations])

    monkeypatch.setattr(dispatch, "send_runs", record)
    return batches


@pytest.fixture
def revoked(monkeypatch: pytest.MonkeyPatch) -> list[tuple[str, bool]]:
    """Return the (task id, terminate) pairs revoked; no broker is contacted."""
    calls: list[tuple[str, bool]] = []
    monkeypatch.setattr(
        dispatch, "revoke", lambda task_id, *, terminate: calls.append((task_id, terminate))
    )
    return calls


def launch(user: Any, **overrides: Any) -> Simulation:
    """Launch a run of the tiny system and application for `user`, with `overrides`."""
    fields: dict[str, Any] = {
        "snapshot": tiny_snapshot(),
        "app_source": TINY_APP,
        "variables": {"steps": 2, "ops": 1e9},
        "labels": {"CPU": 2},
    }
    fields.update(overrides)
    return simulation_launch(user=user, **fields)
