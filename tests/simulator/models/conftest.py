"""Fixtures of the models' tests."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from simulator import shallow


@pytest.fixture
def fresh_caches() -> Iterator[None]:
    """No memo, V8 context or twin left by another test (the twins' tests compare with V8:
    `pytestmark = pytest.mark.usefixtures("fresh_caches")`)."""
    shallow.clear_caches()
    yield
    shallow.clear_caches()
