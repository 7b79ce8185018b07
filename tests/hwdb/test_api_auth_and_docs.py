"""Token authentication, session authentication and the offline API documentation."""

from __future__ import annotations

from typing import Any

import pytest
from django.test import Client
from rest_framework.test import APIClient

from tests.hwdb.factories import UserFactory

pytestmark = pytest.mark.django_db


def test_a_token_is_obtained_with_username_and_password_and_opens_the_api(
    api_client: APIClient,
) -> None:
    user = UserFactory()
    response = api_client.post(
        "/api/auth/token/",
        {"username": user.username, "password": "secret-pass-123"},
        format="json",
    )
    assert response.status_code == 200
    api_client.credentials(HTTP_AUTHORIZATION=f"Token {response.data['token']}")
    assert api_client.get("/api/components/").status_code == 200


def test_a_wrong_password_gets_no_token(api_client: APIClient) -> None:
    user = UserFactory()
    response = api_client.post(
        "/api/auth/token/", {"username": user.username, "password": "wrong"}, format="json"
    )
    assert response.status_code == 400


def test_a_bad_token_is_refused(api_client: APIClient) -> None:
    api_client.credentials(HTTP_AUTHORIZATION="Token not-a-token")
    response = api_client.get("/api/systems/")
    # 403 rather than 401 because session authentication is listed first in the settings.
    assert (response.status_code, response.data["detail"]) == (403, "Invalid token.")


def test_a_token_signs_in_its_own_user_and_not_once_the_user_is_inactive(
    api_client: APIClient,
) -> None:
    from rest_framework.authtoken.models import Token

    from tests.webapp.studio.factories import SimulationFactory

    user, other = UserFactory(), UserFactory()
    Token.objects.create(user=other)
    SimulationFactory(owner=other)
    mine = SimulationFactory(owner=user)
    api_client.credentials(HTTP_AUTHORIZATION=f"Token {Token.objects.create(user=user).key}")
    listed = api_client.get("/api/simulations/").json()["results"]
    assert [(run["id"], run["owner"]) for run in listed] == [(mine.pk, user.username)]
    user.is_active = False
    user.save()
    response = api_client.get("/api/simulations/")
    assert (response.status_code, response.data["detail"]) == (403, "User inactive or deleted.")


def test_a_session_signs_in_too() -> None:
    user = UserFactory()
    client = Client()
    client.force_login(user)
    assert client.get("/api/models/").status_code == 200


def test_the_schema_documents_the_attribute_filter_and_every_endpoint(
    api_client: APIClient,
) -> None:
    schema = api_client.get("/api/schema/", {"format": "json"}).json()
    paths = schema["paths"]
    for path in [
        "/api/components/",
        "/api/components/{id}/",
        "/api/components/{id}/clone/",
        "/api/components/export/",
        "/api/components/import/",
        "/api/models/",
        "/api/models/{id}/clone/",
        "/api/systems/",
        "/api/systems/{id}/snapshot/",
        "/api/systems/import/",
        "/api/auth/token/",
    ]:
        assert path in paths, path
    parameters = {p["name"]: p for p in paths["/api/components/"]["get"]["parameters"]}
    assert "SMs__gte:80" in parameters["attr"]["description"]
    assert parameters["type"]["schema"]["enum"] == [
        "CACHE",
        "CPU",
        "FABRIC",
        "GPU",
        "MEMORY",
        "NETWORK",
        "STORAGE",
    ]


@pytest.mark.parametrize("page", ["/api/docs/", "/api/redoc/"])
def test_the_interactive_docs_use_local_assets(api_client: APIClient, page: str) -> None:
    html = api_client.get(page).content.decode()
    assert "drf_spectacular_sidecar" in html
    assert "cdn.jsdelivr.net" not in html and "unpkg.com" not in html


def test_the_health_check_answers(api_client: APIClient, settings: Any) -> None:
    assert api_client.get("/healthz").json() == {"status": "ok"}
