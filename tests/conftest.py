"""Suite-wide collection rules for parallel runs (`./studio test` runs pytest-xdist with
`--dist loadgroup --no-loadscope-reorder`).

A test is sent to a worker on its own unless it belongs to a group, whose tests all run on one
worker in their file order:

- each browser test file (tests/e2e) is a group: its tests share the worker's live server and
  browser, and some read what an earlier test of the file left there. Each worker starts its
  own server on free ports over its own data folder (tests/e2e/conftest.py), so the files are
  spread over the workers instead of queuing behind one;
- a test that uses a fixture living for its module or class (a started worker, a built
  example) is grouped with the rest of its file, so the fixture is made once.

The workers take their work in collection order, so the browser files, which wait on a server
and a browser far longer than the other tests run, are moved to the front: started last, one of
them would keep a worker busy long after the other has emptied the queue.

Each worker has its own test database (pytest-django adds the worker's name) and its own key
prefix in the broker's Redis database (webapp/settings/test.py).

With `--durations` (`./studio test` asks for it), the summary also lists the files whose tests
took longest, setup and teardown included, summed over the workers: the suite's time is
spent there, and a file that grows shows up in CI's log. It reports and never fails a run.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable

import pytest

E2E_DIR = "tests/e2e/"


def _is_e2e(item: pytest.Item) -> bool:
    return item.nodeid.startswith(E2E_DIR)


def _group_of(item: pytest.Item) -> str | None:
    """Return the xdist group `item` must run in, or None when it may run anywhere."""
    path = item.nodeid.split("::", 1)[0]
    if path.startswith(E2E_DIR):
        return path
    fixtureinfo = getattr(item, "_fixtureinfo", None)
    definitions = fixtureinfo.name2fixturedefs.values() if fixtureinfo else ()
    # the suite's own fixtures (a plugin's, such as pytest-django's, have no base id)
    if any(d.baseid and d.scope in {"module", "class"} for defs in definitions for d in defs):
        return path
    return None


@pytest.hookimpl(tryfirst=True)  # before xdist reads the groups off the items
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    if not config.pluginmanager.hasplugin("xdist"):
        return
    # a stable sort: each file's tests keep their order
    items.sort(key=lambda item: not _is_e2e(item))
    for item in items:
        group = _group_of(item)
        if group is not None:
            item.add_marker(pytest.mark.xdist_group(group))


SLOWEST_FILES_SHOWN = 15
_file_seconds: defaultdict[str, float] = defaultdict(float)


def file_totals(reports: Iterable[tuple[str, float]]) -> list[tuple[str, float]]:
    """Return (file, seconds) for each file of the (node id, duration) `reports`, its
    phases summed, slowest first (ties by name)."""
    totals: defaultdict[str, float] = defaultdict(float)
    for nodeid, duration in reports:
        totals[nodeid.split("::", 1)[0]] += duration
    return sorted(totals.items(), key=lambda item: (-item[1], item[0]))


def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    # On a parallel run the controller gets every worker's reports, each phase with its time.
    _file_seconds[report.nodeid] += report.duration


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    config = terminalreporter.config
    if config.option.durations is None or hasattr(config, "workerinput") or not _file_seconds:
        return
    totals = file_totals(_file_seconds.items())
    whole = sum(seconds for _, seconds in totals)
    terminalreporter.write_sep("=", f"slowest {min(SLOWEST_FILES_SHOWN, len(totals))} files")
    terminalreporter.write_line(
        f"{whole:.1f} s in all, summed over the test processes (setup, call and teardown)"
    )
    for path, seconds in totals[:SLOWEST_FILES_SHOWN]:
        terminalreporter.write_line(f"{seconds:8.1f} s {100 * seconds / whole:5.1f} %  {path}")
