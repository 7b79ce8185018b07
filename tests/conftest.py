"""Suite-wide collection rules for parallel runs (`./studio test` runs pytest-xdist with
`--dist loadgroup`).

A test is sent to a worker on its own unless it belongs to a group, whose tests all run on one
worker in their file order:

- the browser tests (tests/e2e) share one live server and one browser per worker, and some
  read what an earlier one left there: they form one group;
- a test that uses a fixture living for its module or class (a started worker, a built
  example) is grouped with the rest of its file, so the fixture is made once.

Each worker has its own test database (pytest-django adds the worker's name) and its own key
prefix in the broker's Redis database (webapp/settings/test.py).
"""

from __future__ import annotations

import pytest

E2E_GROUP = "e2e"


def _group_of(item: pytest.Item) -> str | None:
    """Return the xdist group `item` must run in, or None when it may run anywhere."""
    path = item.nodeid.split("::", 1)[0]
    if path.startswith("tests/e2e/"):
        return E2E_GROUP
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
    for item in items:
        group = _group_of(item)
        if group is not None:
            item.add_marker(pytest.mark.xdist_group(group))
