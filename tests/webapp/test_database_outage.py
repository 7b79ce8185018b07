"""Issue 38 item 23: while the database cannot be reached, requests answer 503 with
Retry-After (webapp/middleware.py), not 500."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from django.db import OperationalError, connection
from django.test import Client
from rest_framework.test import APIClient

from tests.hwdb.factories import UserFactory
from webapp.middleware import DATABASE_UNAVAILABLE

pytestmark = pytest.mark.django_db

ROOT = Path(__file__).resolve().parents[2]


def refuse(execute: Any, sql: str, params: Any, many: bool, context: Any) -> Any:
    raise OperationalError("connection to server at 127.0.0.1, port 5432 failed")


@pytest.fixture
def outage() -> Iterator[None]:
    """Every query of this thread's connection fails as during an outage."""
    with connection.execute_wrapper(refuse):
        yield


def assert_unavailable(response: Any, *, json_body: bool = True) -> None:
    assert response.status_code == 503
    assert int(response["Retry-After"]) > 0
    if json_body:
        assert response.json() == {"detail": DATABASE_UNAVAILABLE}
    else:
        assert response.content.decode() == DATABASE_UNAVAILABLE


@pytest.mark.parametrize(
    "path",
    [
        "/api/simulations/",
        "/api/applications/",
        "/api/components/",
        "/api/systems/",
        "/api/sweeps/",
    ],
)
def test_api_requests_answer_503_with_retry_after_during_an_outage(path: str) -> None:
    client = APIClient()
    client.force_authenticate(user=UserFactory())
    with connection.execute_wrapper(refuse):
        assert_unavailable(client.get(path))


def test_token_authentication_during_an_outage_is_503(outage: None) -> None:
    response = APIClient().get("/api/simulations/", HTTP_AUTHORIZATION="Token " + "0" * 40)
    assert_unavailable(response)


def test_a_launch_during_an_outage_is_503() -> None:
    client = APIClient()
    client.force_authenticate(user=UserFactory())
    with connection.execute_wrapper(refuse):
        response = client.post("/api/simulations/", {"labels": {"CPU": 1}}, format="json")
    assert_unavailable(response)


def test_the_sign_in_page_during_an_outage_is_503(outage: None) -> None:
    response = Client().post("/accounts/login/", {"username": "ada", "password": "x"})
    assert_unavailable(response, json_body=False)


def test_other_errors_are_not_taken_for_an_outage() -> None:
    client = APIClient()
    client.force_authenticate(user=UserFactory())
    assert client.get("/api/simulations/999999/").status_code == 404


def closed_port() -> int:
    """Return a local TCP port nothing listens on."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


REQUEST = """
import json, django
django.setup()
from django.test import Client
from django.test.utils import setup_test_environment
setup_test_environment()  # as pytest-django: the test client's host allowed
response = Client().get("/api/simulations/", HTTP_AUTHORIZATION="Token " + "0" * 40)
print(json.dumps([response.status_code, response.get("Retry-After"), response.content.decode()]))
"""


def test_a_postgresql_that_cannot_be_reached_gives_503() -> None:
    pytest.importorskip("psycopg")
    env = {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": "webapp.settings.test",
        "DATABASE_URL": f"postgres://postgres@127.0.0.1:{closed_port()}/parasim_outage",
        "PYTHONPATH": str(ROOT),
    }
    done = subprocess.run(
        [sys.executable, "-c", REQUEST],
        env=env,
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    status, retry_after, body = json.loads(done.stdout.strip().splitlines()[-1])
    assert (status, json.loads(body)) == (503, {"detail": DATABASE_UNAVAILABLE})
    assert int(retry_after) > 0
