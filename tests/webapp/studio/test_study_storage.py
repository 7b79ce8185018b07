"""Tests of webapp.studio.study_storage: the SQLAlchemy URL of Django's database settings."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from django.core.exceptions import ImproperlyConfigured
from sqlalchemy.engine import make_url

from webapp.studio.study_storage import MESSAGES, optuna_url


def test_postgresql_keeps_credentials_escaped_and_its_libpq_options() -> None:
    url = optuna_url(
        {
            "ENGINE": "webapp.db.postgresql",
            "NAME": "parasim",
            "USER": "postgres",
            "PASSWORD": "p@ss/w:rd",
            "HOST": "db.example",
            "PORT": "5433",
            "OPTIONS": {"sslmode": "require", "pool": True},
        }
    )
    parsed = make_url(url)
    assert parsed.drivername == "postgresql+psycopg"
    assert (parsed.username, parsed.password) == ("postgres", "p@ss/w:rd")
    assert (parsed.host, parsed.port, parsed.database) == ("db.example", 5433, "parasim")
    assert dict(parsed.query) == {"sslmode": "require"}  # Django's own options stay out


def test_postgresql_without_host_or_password_leaves_them_to_libpq() -> None:
    url = optuna_url({"ENGINE": "django.db.backends.postgresql", "NAME": "p", "PORT": ""})
    assert url == "postgresql+psycopg:///p"


def test_sqlite_is_the_same_file_and_a_shared_memory_database_the_same_uri(
    tmp_path: Path,
) -> None:
    path = tmp_path / "data" / "parasim.sqlite3"
    url = make_url(optuna_url({"ENGINE": "django.db.backends.sqlite3", "NAME": str(path)}))
    assert (url.drivername, url.database) == ("sqlite", str(path))
    memory = optuna_url(
        {
            "ENGINE": "django.db.backends.sqlite3",
            "NAME": "file:memorydb_default?mode=memory&cache=shared",
        }
    )
    parsed = make_url(memory)
    assert parsed.database == "file:memorydb_default"
    assert dict(parsed.query) == {"mode": "memory", "cache": "shared", "uri": "true"}


@pytest.mark.parametrize(
    ("database", "message"),
    [
        ({"ENGINE": "django.db.backends.sqlite3", "NAME": ":memory:"}, MESSAGES["memory"]),
        (
            {"ENGINE": "django.db.backends.mysql", "NAME": "p"},
            MESSAGES["engine"].format(engine="django.db.backends.mysql"),
        ),
    ],
)
def test_a_database_a_study_cannot_share_is_refused(database: dict[str, str], message: str) -> None:
    with pytest.raises(ImproperlyConfigured, match=re.escape(message)):
        optuna_url(database)
