"""Property-based run over the OpenAPI schema of the hardware database API: no server errors.

Schemathesis generates requests (valid and malformed) for every operation under the paths
below and sends them, signed in with a token, to the Django WSGI app in-process. Few examples
per operation keep it bounded; any 5xx fails the test with the request that caused it.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
import schemathesis
from django.core.signals import request_finished, request_started
from django.db import close_old_connections
from hypothesis import HealthCheck, Phase, settings
from rest_framework.authtoken.models import Token
from schemathesis.checks import not_a_server_error

from tests.hwdb.factories import (
    ComputationalModelFactory,
    GpuFactory,
    SystemModelFactory,
    UserFactory,
)
from webapp.wsgi import application

# The hardware database's endpoints and token authentication; other apps test their own.
PATHS = r"^/api/(components|models|systems|auth)/"

schema = schemathesis.openapi.from_wsgi("/api/schema/?format=json", application).include(
    path_regex=PATHS
)


@pytest.fixture
def keep_connection() -> Iterator[None]:
    """Keep the test's database connection open across requests, as Django's test client does.

    Called as a plain WSGI app, Django closes the connection when a request finishes, which
    would end the test transaction (PostgreSQL).
    """
    request_started.disconnect(close_old_connections)
    request_finished.disconnect(close_old_connections)
    yield
    request_started.connect(close_old_connections)
    request_finished.connect(close_old_connections)


@pytest.fixture
def token(db: None, keep_connection: None) -> str:
    """Return the API token of a user who owns a few records (so ids 1.. often exist)."""
    user = UserFactory()
    GpuFactory(owner=user)
    GpuFactory(owner=None, shared=True)
    ComputationalModelFactory(owner=user)
    SystemModelFactory(owner=user)
    return Token.objects.create(user=user).key


@pytest.mark.slow
@schema.parametrize()
@settings(
    max_examples=3,
    deadline=None,
    phases=[Phase.explicit, Phase.generate],
    suppress_health_check=list(HealthCheck),
    derandomize=True,
)
def test_no_operation_answers_with_a_server_error(case: Any, token: str) -> None:
    response = case.call(headers={"Authorization": f"Token {token}"})
    case.validate_response(response, checks=[not_a_server_error])
