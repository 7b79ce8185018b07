"""Project-wide pytest fixtures; app-specific ones live beside their tests."""

from __future__ import annotations

import os
from collections.abc import Iterator
from typing import Any

import pytest
from hypothesis import settings
from rest_framework.test import APIClient

# Property tests explore new inputs on every local run; in CI they replay a fixed set, so a
# red CI always means a change broke something, never that the dice found something old.
settings.register_profile("ci", derandomize=True, print_blob=True)
if os.environ.get("CI"):
    settings.load_profile("ci")

# No command line run by a test leaves a pool daemon behind (simulator.sandbox.pool); the
# pool's own tests turn it on, each with a directory of its own.
os.environ.setdefault("PARASIM_CHILD_POOL", "0")


@pytest.fixture
def api_client() -> APIClient:
    """Return an unauthenticated DRF test client."""
    return APIClient()


@pytest.fixture(autouse=True)
def _fresh_response_cache(request: pytest.FixtureRequest) -> Iterator[None]:
    """Empty Django's caches after each database test: cached list responses
    (restapi.cache), launch throttle counts and the launches' parsed snapshots
    (webapp.studio.services.launch) never outlive the test that made them."""
    yield
    if "_django_db_helper" in request.fixturenames:
        from django.core.cache import caches

        caches["default"].clear()
        caches["local"].clear()


@pytest.fixture(scope="session", autouse=True)
def _flush_by_delete() -> Iterator[None]:
    """Empty the tables after a transactional test with DELETE rather than TRUNCATE.

    Django ends each transactional test with `flush`: on PostgreSQL one TRUNCATE of every
    table, which gives each table new files and costs far more than deleting the few rows a
    test leaves; it was most of those tests' time. The same tables are emptied in the flush's
    one transaction (Django's foreign keys are deferred, so they are checked at its commit,
    when every table is empty). A flush that resets sequences or cascades keeps TRUNCATE."""
    from django.db.backends.postgresql.operations import DatabaseOperations

    truncate = DatabaseOperations.sql_flush

    def sql_flush(
        self: DatabaseOperations,
        style: Any,
        tables: list[str],
        *,
        reset_sequences: bool = False,
        allow_cascade: bool = False,
    ) -> list[str]:
        if reset_sequences or allow_cascade:
            return truncate(
                self, style, tables, reset_sequences=reset_sequences, allow_cascade=allow_cascade
            )
        delete = f"{style.SQL_KEYWORD('DELETE')} {style.SQL_KEYWORD('FROM')}"
        return [f"{delete} {style.SQL_FIELD(self.quote_name(table))};" for table in tables]

    DatabaseOperations.sql_flush = sql_flush  # type: ignore[method-assign]
    yield
    DatabaseOperations.sql_flush = truncate  # type: ignore[method-assign]
