"""Project-wide pytest fixtures; app-specific ones live beside their tests."""

from __future__ import annotations

import os
from collections.abc import Iterator

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
