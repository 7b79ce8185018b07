"""Where studies keep their optimiser's state: Optuna's tables in the project's own database.

`optuna_url` builds the SQLAlchemy URL of Django's `DATABASES["default"]` (PostgreSQL at
scale through psycopg 3, the driver Django uses; SQLite embedded, the same file, or the same
shared in-memory database a test run uses), so that a study's trials live beside its runs
and survive a worker's restart with them. `optuna_storage` keeps one Optuna storage (and
its connection pool) per URL and process; `close_storages` closes them.

Optuna writes through its own connections: the studies' services never call it inside a
Django transaction, which on SQLite (writes serialised, Django's transactions IMMEDIATE)
would wait on itself.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from django.conf import settings
from django.core.exceptions import ImproperlyConfigured

if TYPE_CHECKING:
    from optuna.storages import RDBStorage

POSTGRESQL_ENGINES = ("django.db.backends.postgresql", "webapp.db.postgresql")
SQLITE_ENGINE = "django.db.backends.sqlite3"
# Connection options of libpq that a Django PostgreSQL OPTIONS may carry and psycopg takes.
LIBPQ_OPTIONS = (
    "sslmode",
    "sslrootcert",
    "sslcert",
    "sslkey",
    "connect_timeout",
    "options",
    "application_name",
    "target_session_attrs",
)
SQLITE_TIMEOUT_S = 30  # as Django's OPTIONS (webapp/settings/base.py)
MESSAGES = {
    "engine": "A study's storage needs PostgreSQL or SQLite, not {engine}.",
    "memory": "A private in-memory SQLite database cannot be shared with a study's storage.",
}


def optuna_url(database: Mapping[str, Any]) -> str:
    """Return the SQLAlchemy URL of the Django database settings `database` (one entry of
    DATABASES); raise ImproperlyConfigured for an engine Optuna cannot share."""
    from sqlalchemy.engine import URL

    engine = database.get("ENGINE", "")
    name = str(database.get("NAME") or "")
    if engine in POSTGRESQL_ENGINES:
        options = database.get("OPTIONS") or {}
        query = {key: str(options[key]) for key in LIBPQ_OPTIONS if key in options}
        port = database.get("PORT")
        url = URL.create(
            "postgresql+psycopg",
            username=database.get("USER") or None,
            password=database.get("PASSWORD") or None,
            host=database.get("HOST") or None,
            port=int(port) if port not in (None, "") else None,
            database=name,
            query=query,
        )
        return url.render_as_string(hide_password=False)
    if engine == SQLITE_ENGINE:
        if name.startswith("file:"):
            # A URI filename (the test run's shared in-memory database): its parameters
            # travel with it and `uri` tells pysqlite to open it as a URI.
            path, _, parameters = name.partition("?")
            query = dict(p.split("=", 1) for p in parameters.split("&") if "=" in p)
            return URL.create(
                "sqlite", database=path, query={**query, "uri": "true"}
            ).render_as_string()
        if name in ("", ":memory:"):
            raise ImproperlyConfigured(MESSAGES["memory"])
        return URL.create("sqlite", database=str(Path(name).resolve())).render_as_string()
    raise ImproperlyConfigured(MESSAGES["engine"].format(engine=engine))


_storages: dict[str, RDBStorage] = {}


def _storage(url: str) -> RDBStorage:
    if url in _storages:
        return _storages[url]
    from optuna.storages import RDBStorage
    from sqlalchemy.pool import SingletonThreadPool

    engine_kwargs: dict[str, Any] = {"pool_pre_ping": True}
    if url.startswith("sqlite"):
        engine_kwargs["connect_args"] = {"timeout": SQLITE_TIMEOUT_S}
    if "mode=memory" in url:  # one connection per thread keeps a memory database alive
        engine_kwargs["poolclass"] = SingletonThreadPool
    _storages[url] = RDBStorage(url, engine_kwargs=engine_kwargs)
    return _storages[url]


def close_storages() -> None:
    """Close every connection the studies' storages hold in this process (a test database
    cannot be dropped while they are open) and forget the storages."""
    for storage in _storages.values():
        storage.engine.dispose()
    _storages.clear()


def optuna_storage() -> RDBStorage:
    """Return the Optuna storage in the project's default database (created on first use)."""
    return _storage(optuna_url(settings.DATABASES["default"]))
