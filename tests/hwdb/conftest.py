"""Fixtures of the hardware database tests: users and signed-in API clients."""

from __future__ import annotations

import pytest
from rest_framework.test import APIClient

from tests.hwdb.factories import UserFactory


@pytest.fixture
def user(db: None) -> object:
    """Return an ordinary user."""
    return UserFactory()


@pytest.fixture
def other_user(db: None) -> object:
    """Return a second ordinary user."""
    return UserFactory()


@pytest.fixture
def staff(db: None) -> object:
    """Return a staff user."""
    return UserFactory(is_staff=True)


@pytest.fixture
def client_for(db: None):  # type: ignore[no-untyped-def]
    """Return a function giving an API client signed in (forced) as a user."""

    def make(user: object) -> APIClient:
        client = APIClient()
        client.force_authenticate(user=user)
        return client

    return make


@pytest.fixture
def api(user: object, client_for) -> APIClient:  # type: ignore[no-untyped-def]
    """Return an API client signed in as `user`."""
    return client_for(user)
