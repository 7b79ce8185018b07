"""Limits users can see and set (issue 14, item 2), in a real browser against a real worker.

The server here is its own, with test settings in its environment: the default queue stops a
run after WALL_S seconds unless the launch asks for more (at most MAX_WALL_S), and a user may
have one run in flight at a time. Its one worker runs one simulation at a time, so the order in
which runs start shows the per-user rule: a user's second runaway waits, held back, while
another user's run launched after it goes first.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from datetime import datetime
from typing import Any

import pytest

from tests.e2e.conftest import DEMO_USER, manage, running_studio, screenshot, signed_in_page
from tests.e2e.helpers import EXAMPLE_SYSTEM, create_application

pytestmark = pytest.mark.e2e

WALL_S = 6
MAX_WALL_S = 20
LIMITS_ENV = {
    "PARASIM_QUEUE_LIMITS": json.dumps(
        {"default": {"time_limit_s": [WALL_S, MAX_WALL_S], "cpu_limit_s": [2 * WALL_S, 40]}}
    ),
    "PARASIM_MAX_RUNNING_PER_USER": "1",
}
OTHER_USER = ("ada", "ada-lovelace-1815")
RUNAWAY = "while True:\n    pass\n"
QUICK = "total = N * 2\n"  # declares N (the editor's default variable) and ends at once


@pytest.fixture(scope="module")
def limited_studio(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """Return the base URL of a server with the test limits, and a second user, OTHER_USER."""
    data_dir = tmp_path_factory.mktemp("limits-studio")
    with running_studio(data_dir, LIMITS_ENV) as base:
        create = (
            "from django.contrib.auth import get_user_model; "
            f"get_user_model().objects.create_user({OTHER_USER[0]!r}, password={OTHER_USER[1]!r})"
        )
        manage(data_dir, "shell", "-c", create, extra_env=LIMITS_ENV)
        yield base


def open_launch(page: Any, application: int) -> None:
    """Open the launch screen for `application` on the seeded MERPSYS testbed."""
    page.goto(f"/app/launch?application={application}")
    page.get_by_label("System model").select_option(label=EXAMPLE_SYSTEM)
    page.get_by_label("Processes with label CPU").wait_for()


def launch(page: Any) -> int:
    """Press Launch on the open launch screen; return the new run's id."""
    page.get_by_role("button", name="Launch", exact=True).click()
    page.wait_for_url(re.compile(r"/app/runs/\d+$"))
    return int(page.url.rsplit("/", 1)[1])


def run_json(page: Any, run: int) -> dict[str, Any]:
    """Return the run as the REST API gives it to the page's user."""
    return dict(page.evaluate(f"fetch('/api/simulations/{run}/').then(r => r.json())"))


def moment(text: str) -> datetime:
    """Return a time the REST API gives (ISO 8601)."""
    return datetime.fromisoformat(text)


def test_a_runaway_stops_at_the_queues_limit_while_another_users_later_run_completes(
    browser: Any, limited_studio: str
) -> None:
    demo = signed_in_page(browser, limited_studio, *DEMO_USER)
    ada = signed_in_page(browser, limited_studio, *OTHER_USER)
    try:
        runaway = create_application(demo, "Runaway loop", RUNAWAY, [])
        quick = create_application(ada, "Quick model", QUICK, [])

        # The launch screen shows the queue's default and maximum, and refuses more than the
        # maximum with a message naming the field.
        open_launch(demo, runaway)
        demo.get_by_text(f"(default {WALL_S}, at most {MAX_WALL_S})").first.wait_for()
        wall = demo.get_by_label("Wall-clock limit in seconds")
        assert wall.get_attribute("placeholder") == str(WALL_S)
        wall.fill(str(MAX_WALL_S + 1))
        demo.get_by_role("button", name="Launch", exact=True).click()
        refused = demo.locator(".field.invalid .field-error")
        refused.wait_for()
        assert refused.inner_text() == (
            f"time_limit_s (wall clock): expected a whole number of seconds from 1 to "
            f"{MAX_WALL_S}, the maximum of queue 'default'."
        )
        assert wall.get_attribute("aria-invalid") == "true"
        screenshot(demo, "limits-launch-refused")
        wall.fill("")  # the queue's default

        # Two runaways of one user, then another user's run: the second runaway is held back
        # while the first runs, so the other user's run is sent before it.
        open_launch(ada, quick)
        first = launch(demo)
        open_launch(demo, runaway)
        second = launch(demo)
        theirs = launch(ada)

        demo.goto(f"/app/runs/{first}")
        demo.get_by_test_id("run-status").filter(has_text="failed").wait_for(timeout=90_000)
        stop = demo.get_by_test_id("limit-stop")
        assert stop.inner_text().startswith(f"Stopped by the wall-clock limit of {WALL_S} s.")
        demo.get_by_text(f"Limits: wall clock {WALL_S} s · CPU time {2 * WALL_S} s").wait_for()
        failed = run_json(demo, first)
        assert (failed["error"]["kind"], failed["error"]["limit"]) == ("limit", "wall")
        assert (failed["time_limit_s"], failed["error"]["value"]) == (WALL_S, WALL_S)
        screenshot(demo, "limits-run-stopped")

        ada.get_by_test_id("run-status").filter(has_text="succeeded").wait_for(timeout=90_000)
        demo.goto(f"/app/runs/{second}")
        demo.get_by_test_id("run-status").filter(has_text="failed").wait_for(timeout=90_000)
        assert (
            demo.get_by_test_id("limit-stop")
            .inner_text()
            .startswith(f"Stopped by the wall-clock limit of {WALL_S} s.")
        )
        done, held = run_json(ada, theirs), run_json(demo, second)
        # The other user's run went first: it ended before the held runaway started.
        assert moment(done["finished"]) <= moment(held["started"])
        assert moment(run_json(demo, first)["finished"]) <= moment(held["started"])
    finally:
        demo.context.close()
        ada.context.close()
