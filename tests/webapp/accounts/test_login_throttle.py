"""Issue 38 item 19: wrong passwords are counted per username and per address; at the limit
the API's token request answers 429 with Retry-After and the sign-in page says why."""

from __future__ import annotations

import os
import uuid
from typing import Any

import pytest
from django.test import Client
from rest_framework.test import APIClient

from tests.hwdb.factories import UserFactory
from tests.webapp.studio.live import require_services
from webapp.accounts import throttling
from webapp.cache import SharedRedisCache

pytestmark = pytest.mark.django_db

PASSWORD = "analytical-engine"
LIMIT = 3


@pytest.fixture(autouse=True)
def limits(settings: Any) -> None:
    settings.PARASIM_LOGIN_FAILURES_PER_USERNAME = LIMIT
    settings.PARASIM_LOGIN_FAILURES_PER_ADDRESS = 2 * LIMIT
    settings.PARASIM_LOGIN_WINDOW_S = 600


@pytest.fixture
def ada(db: None) -> Any:
    user = UserFactory(username="ada")
    user.set_password(PASSWORD)
    user.save()
    return user


def token(client: APIClient, username: str, password: str, address: str = "10.0.0.1") -> Any:
    return client.post(
        "/api/auth/token/", {"username": username, "password": password}, REMOTE_ADDR=address
    )


def sign_in(client: Client, username: str, password: str, address: str = "10.0.0.1") -> Any:
    return client.post(
        "/accounts/login/", {"username": username, "password": password}, REMOTE_ADDR=address
    )


def test_the_token_request_refuses_a_username_after_too_many_wrong_passwords(ada: Any) -> None:
    client = APIClient()
    for _ in range(LIMIT):
        assert token(client, "ada", "wrong").status_code == 400
    refused = token(client, "ada", PASSWORD)  # the right password too: no oracle
    assert refused.status_code == 429
    assert 0 < int(refused["Retry-After"]) <= 600
    message = throttling.throttled_message(int(refused["Retry-After"]))
    assert refused.json()["detail"].startswith(message)
    # from another address as well: the count is the username's
    assert token(client, "ADA", PASSWORD, address="10.0.0.2").status_code == 429
    # another user is not affected
    UserFactory(username="grace").set_password(PASSWORD)
    assert token(client, "grace", "wrong", address="10.0.0.3").status_code == 400


def test_the_token_request_refuses_an_address_guessing_many_usernames(ada: Any) -> None:
    client = APIClient()
    for number in range(2 * LIMIT):
        assert token(client, f"user{number}", "wrong").status_code == 400
    assert token(client, "ada", PASSWORD).status_code == 429
    assert token(client, "ada", PASSWORD, address="10.0.0.9").json().keys() == {"token"}


def test_a_right_password_clears_its_usernames_count(ada: Any) -> None:
    client = APIClient()
    for _ in range(LIMIT - 1):
        assert token(client, "ada", "wrong").status_code == 400
    assert token(client, "ada", PASSWORD).status_code == 200
    for _ in range(LIMIT - 1):
        assert token(client, "ada", "wrong", address="10.0.0.2").status_code == 400
    assert token(client, "ada", PASSWORD, address="10.0.0.3").status_code == 200


def test_the_window_ends_the_refusal(ada: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    client = APIClient()
    now = [1_000_000.0]
    monkeypatch.setattr(throttling.time, "time", lambda: now[0])
    for _ in range(LIMIT):
        token(client, "ada", "wrong")
    assert token(client, "ada", PASSWORD)["Retry-After"] == "600"
    now[0] += 599
    assert token(client, "ada", PASSWORD)["Retry-After"] == "1"
    now[0] += 1
    assert token(client, "ada", PASSWORD).status_code == 200


def test_the_sign_in_page_refuses_with_a_clear_message(ada: Any) -> None:
    client = Client()
    for _ in range(LIMIT):
        page = sign_in(client, "ada", "wrong")
        assert page.status_code == 200
        assert "username and password didn't match" in page.content.decode()
    refused = sign_in(client, "ada", PASSWORD)
    assert refused.status_code == 429
    assert "Too many failed sign-ins for this username or from this address" in (
        refused.content.decode()
    )
    assert "_auth_user_id" not in client.session
    # the form and the API count together
    assert token(APIClient(), "ada", PASSWORD).status_code == 429


def test_a_right_password_on_the_page_signs_in(ada: Any) -> None:
    client = Client()
    assert sign_in(client, "ada", "wrong").status_code == 200
    assert sign_in(client, "ada", PASSWORD).status_code == 302


def test_the_counts_live_in_the_shared_redis_cache(
    ada: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    require_services()
    shared = SharedRedisCache(
        os.environ["CELERY_BROKER_URL"], {"KEY_PREFIX": f"test-{uuid.uuid4().hex}"}
    )
    monkeypatch.setattr(throttling, "cache", shared)
    try:
        client = APIClient()
        for _ in range(LIMIT):
            assert token(client, "ada", "wrong").status_code == 400
        assert token(client, "ada", PASSWORD).status_code == 429
    finally:
        redis = shared._cache.get_client(write=True)
        for key in redis.scan_iter(f"{shared.key_prefix}:*"):
            redis.delete(key)


def test_the_admin_sign_in_counts_with_the_others(ada: Any) -> None:
    client = Client()
    for _ in range(LIMIT):
        assert token(APIClient(), "ada", "wrong").status_code == 400
    page = client.post(
        "/admin/login/", {"username": "ada", "password": PASSWORD}, REMOTE_ADDR="10.0.0.1"
    )
    assert page.status_code == 200
    assert "Too many failed sign-ins for this username or from this address" in (
        page.content.decode()
    )
    assert "_auth_user_id" not in client.session
