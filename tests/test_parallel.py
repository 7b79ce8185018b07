"""Which tests `./studio test` keeps together when it runs pytest in parallel (tests/conftest.py)."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import pytest

from tests.conftest import E2E_GROUP, _group_of

MADE: list[int] = []


@pytest.fixture(scope="module")
def made_once() -> int:
    MADE.append(1)
    return len(MADE)


def groups(item: Any) -> list[Any]:
    return [mark.args for mark in item.iter_markers("xdist_group")]


def test_a_test_using_a_module_fixture_runs_on_the_worker_of_the_rest_of_its_file(
    request: pytest.FixtureRequest, made_once: int
) -> None:
    assert _group_of(request.node) == "tests/test_parallel.py"
    assert groups(request.node) == [("tests/test_parallel.py",)]


def test_a_test_using_only_its_own_fixtures_runs_anywhere(
    request: pytest.FixtureRequest, tmp_path: Any
) -> None:
    assert _group_of(request.node) is None
    assert groups(request.node) == []


def test_the_browser_tests_share_one_group_across_their_files() -> None:
    for path in ("tests/e2e/test_tour.py::test_tour", "tests/e2e/test_runs.py::test_a_run"):
        assert _group_of(SimpleNamespace(nodeid=path, _fixtureinfo=None)) == E2E_GROUP
