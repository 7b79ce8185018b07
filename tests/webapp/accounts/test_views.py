"""The pages: sign in and out, and the application shell built from Vite's manifest."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.test import Client

from webapp.accounts import views
from webapp.accounts.views import NOT_BUILT, entry_assets

MANIFEST = {
    "src/main.jsx": {
        "file": "assets/main-abc.js",
        "isEntry": True,
        "css": ["assets/main-abc.css"],
        "imports": ["_vendor.js"],
    },
    "_vendor.js": {"file": "assets/vendor-def.js", "css": ["assets/vendor-def.css"]},
}


@pytest.fixture
def manifest(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Return a fake Vite manifest that the shell view reads."""
    path = tmp_path / "manifest.json"
    path.write_text(json.dumps(MANIFEST), encoding="utf-8")
    monkeypatch.setattr(views, "manifest_path", lambda: path)
    return path


@pytest.fixture
def signed_in(client: Client, db: Any) -> Client:
    """Return a client signed in as a fresh user."""
    User.objects.create_user("ada", password="analytical-engine")
    assert client.login(username="ada", password="analytical-engine")
    return client


def test_entry_assets_lists_the_entry_script_and_every_imported_stylesheet() -> None:
    assert entry_assets(MANIFEST) == {
        "scripts": ["assets/main-abc.js"],
        "styles": ["assets/vendor-def.css", "assets/main-abc.css"],
    }


def test_entry_assets_of_a_missing_entry_are_empty() -> None:
    assert entry_assets({}) == {"scripts": [], "styles": []}


@pytest.mark.django_db
@pytest.mark.parametrize("path", ["/", "/app/hardware", "/app/systems/3"])
def test_the_application_asks_anonymous_visitors_to_sign_in(client: Client, path: str) -> None:
    response = client.get(path)
    assert response.status_code == 302
    assert response["Location"].startswith("/accounts/login/?next=")


@pytest.mark.parametrize("path", ["/", "/app/hardware", "/app/runs/12", "/app/compare"])
def test_every_application_path_serves_the_shell_with_the_built_assets(
    signed_in: Client, manifest: Path, path: str
) -> None:
    response = signed_in.get(path)
    html = response.content.decode()
    assert response.status_code == 200
    assert '<script type="module" src="/static/assets/main-abc.js">' in html
    assert '<link rel="stylesheet" href="/static/assets/vendor-def.css">' in html
    assert 'data-user="ada"' in html
    assert 'name="csrf-token"' in html
    assert "csrftoken" in response.cookies


def test_the_shell_says_how_to_build_the_front_end_when_it_is_missing(
    signed_in: Client, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(views, "manifest_path", lambda: tmp_path / "absent.json")
    response = signed_in.get("/app/hardware")
    assert response.status_code == 503
    assert response.content.decode() == NOT_BUILT


@pytest.mark.django_db
def test_signing_in_with_a_wrong_password_shows_the_form_again_with_an_error(
    client: Client,
) -> None:
    User.objects.create_user("ada", password="analytical-engine")
    response = client.post("/accounts/login/", {"username": "ada", "password": "wrong"})
    assert response.status_code == 200
    assert "didn't match" in response.content.decode()


@pytest.mark.django_db
def test_signing_in_and_out_moves_between_the_application_and_the_sign_in_page(
    client: Client,
) -> None:
    User.objects.create_user("ada", password="analytical-engine")
    response = client.post(
        "/accounts/login/",
        {"username": "ada", "password": "analytical-engine", "next": "/app/runs"},
    )
    assert response.status_code == 302
    assert response["Location"] == "/app/runs"
    response = client.post("/accounts/logout/")
    assert response.status_code == 302
    assert response["Location"] == "/accounts/login/"
    assert client.get("/app/runs").status_code == 302
