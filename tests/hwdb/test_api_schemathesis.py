"""Property-based run over the OpenAPI schema of the API: no server errors, and every answer
the schema documents in the shape it documents.

Schemathesis generates requests (valid and malformed) for every operation under the paths
below and sends them, signed in with a token, to the Django WSGI app in-process. Few examples
per operation keep it bounded; any 5xx, any documented answer outside its documented schema or
content type, fails the test with the request that caused it. Explicit cases pin the answers
the generated ones may miss (issue 38 item 24: schema drift).
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
from schemathesis.specs.openapi.checks import (
    content_type_conformance,
    response_schema_conformance,
)

from tests.hwdb.factories import (
    ComputationalModelFactory,
    GpuFactory,
    SystemModelFactory,
    UserFactory,
)
from webapp.wsgi import application

# The hardware database's endpoints and token authentication, and the studio's reads.
PATHS = r"^/api/(components|models|systems|auth)/"
STUDIO_READS = r"^/api/(applications|simulations|sweeps|queues)/"
CHECKS = [not_a_server_error, response_schema_conformance, content_type_conformance]

everything = schemathesis.openapi.from_wsgi("/api/schema/?format=json", application)
schema = everything.include(path_regex=PATHS)
studio_reads = everything.include(path_regex=STUDIO_READS, method="GET")


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
    case.validate_response(response, checks=CHECKS)


@pytest.mark.slow
@studio_reads.parametrize()
@settings(
    max_examples=3,
    deadline=None,
    phases=[Phase.explicit, Phase.generate],
    suppress_health_check=list(HealthCheck),
    derandomize=True,
)
def test_no_studio_read_answers_outside_its_schema(case: Any, token: str) -> None:
    response = case.call(headers={"Authorization": f"Token {token}"})
    case.validate_response(response, checks=CHECKS)


def call(token: str, path: str, method: str, **parts: Any) -> Any:
    """Return the answer to one request built from the schema's operation, checked like the
    generated ones."""
    case = schema[path][method].Case(**parts)
    response = case.call(headers={"Authorization": f"Token {token}"})
    case.validate_response(response, checks=CHECKS)
    return response


def test_an_import_answers_the_list_of_components_its_schema_documents(token: str) -> None:
    component = {"type": "GPU", "name": "Imported", "attributes": []}
    body = {"components": [component], "shared": False}
    response = call(token, "/api/components/import/", "POST", body=body)
    assert response.status_code == 201
    assert [made["name"] for made in response.json()] == ["Imported"]


def test_evaluate_answers_field_errors_and_model_failures_as_documented(token: str) -> None:
    model = ComputationalModelFactory(
        owner=Token.objects.get(key=token).user,
        source="function computationTime(params) { throw new Error('no'); }",
    )
    path = "/api/models/{id}/evaluate/"
    fields = call(token, path, "POST", path_parameters={"id": model.pk}, body={"component": 0})
    assert fields.status_code == 400
    assert set(fields.json()) == {"component", "function"}
    gpu = GpuFactory(owner=None, shared=True)
    failed = call(
        token,
        path,
        "POST",
        path_parameters={"id": model.pk},
        body={"component": gpu.pk, "function": "computationTime", "params": {}},
    )
    assert failed.status_code == 400
    assert failed.json()["function"] == "computationTime"
