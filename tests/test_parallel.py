"""Which tests `./studio test` keeps together when it runs pytest in parallel (tests/conftest.py)."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import pytest

from tests.conftest import _group_of, file_totals, pytest_collection_modifyitems

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


def test_each_browser_test_file_is_a_group_of_its_own() -> None:
    for path, group in [
        ("tests/e2e/test_tour.py::test_tour", "tests/e2e/test_tour.py"),
        ("tests/e2e/test_runs.py::test_a_run", "tests/e2e/test_runs.py"),
        ("tests/e2e/test_runs.py::test_another_run", "tests/e2e/test_runs.py"),
    ]:
        assert _group_of(SimpleNamespace(nodeid=path, _fixtureinfo=None)) == group


def test_the_browser_tests_are_handed_out_first_each_file_in_its_order() -> None:
    nodeids = [
        "tests/simulator/test_a.py::test_one",
        "tests/e2e/test_tour.py::test_tour",
        "tests/webapp/test_b.py::test_two",
        "tests/e2e/test_runs.py::test_first",
        "tests/e2e/test_runs.py::test_second",
    ]
    items: list[Any] = [FakeItem(nodeid) for nodeid in nodeids]
    config = SimpleNamespace(pluginmanager=SimpleNamespace(hasplugin=lambda name: True))
    pytest_collection_modifyitems(config, items)  # type: ignore[arg-type]
    assert [item.nodeid for item in items] == [
        "tests/e2e/test_tour.py::test_tour",
        "tests/e2e/test_runs.py::test_first",
        "tests/e2e/test_runs.py::test_second",
        "tests/simulator/test_a.py::test_one",
        "tests/webapp/test_b.py::test_two",
    ]
    assert [item.markers for item in items] == [
        [("tests/e2e/test_tour.py",)],
        [("tests/e2e/test_runs.py",)],
        [("tests/e2e/test_runs.py",)],
        [],
        [],
    ]


class FakeItem:
    """A collected test as the collection hook sees it: a node id, markers added to it."""

    def __init__(self, nodeid: str) -> None:
        self.nodeid = nodeid
        self._fixtureinfo = None
        self.markers: list[tuple[Any, ...]] = []

    def add_marker(self, marker: Any) -> None:
        self.markers.append(marker.args)


def test_the_slowest_files_sum_their_tests_phases_slowest_first() -> None:
    reports = [
        ("tests/a.py::test_one", 1.0),
        ("tests/b.py::test_two[x]", 0.5),
        ("tests/a.py::test_one", 0.25),  # its teardown
        ("tests/b.py::test_two[y]", 1.0),
        ("tests/c.py::Case::test_three", 0.5),
    ]
    assert file_totals(reports) == [("tests/b.py", 1.5), ("tests/a.py", 1.25), ("tests/c.py", 0.5)]
