"""Sharing (issue 44 item 7) in a real browser with two users: the demo user shares a run
with a second user by name and publishes a sweep under a link; the second user reads both as
the owner does, read-only, downloads the run's trace, and loses the run when it is revoked."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import expect

from tests.e2e.conftest import ROOT, screenshot, signed_in_page

pytestmark = [pytest.mark.e2e]

READER = ("grace", "grace-hopper-1906")
# Written into the live server's database (its environment): the second user, one run of
# the demo user and a sweep of two more (genuine results: tests.e2e.seed_runs).
SEED = f"""
import json
from django.contrib.auth import get_user_model
from tests.e2e.seed_runs import seed
from webapp.studio.models import Simulation, Sweep, SweepStatus
from webapp.studio.selectors import sweep_aggregate
get_user_model().objects.create_user({READER[0]!r}, password={READER[1]!r})
run, *points = seed(3)
owner = get_user_model().objects.get(username="demo")
sweep = Sweep.objects.create(owner=owner, name="Shared steps", spec={{"variables": {{"steps": [2, 3]}}}},
                             status=SweepStatus.FINISHED)
for pk in points:
    child = Simulation.objects.get(pk=pk)
    child.sweep, child.sweep_point = sweep, {{"variables": {{"steps": child.variables["steps"]}}}}
    child.save()
sweep.aggregate = sweep_aggregate(sweep=sweep)
sweep.save()
print(json.dumps({{"run": run, "sweep": sweep.pk, "points": points}}))
"""


@pytest.fixture(scope="module")
def records(live_studio_env: dict[str, str]) -> dict[str, Any]:
    """Return the ids of the demo user's run, sweep and sweep points, and make READER."""
    done = subprocess.run(
        [sys.executable, "manage.py", "shell", "-c", SEED],
        cwd=ROOT,
        env=live_studio_env,
        check=True,
        capture_output=True,
        text=True,
    )
    return dict(json.loads(done.stdout.strip().splitlines()[-1]))


@pytest.fixture
def reader(browser: Any, live_studio: str, records: dict[str, Any]) -> Iterator[Any]:
    """Return a page signed in as READER."""
    page = signed_in_page(browser, live_studio, *READER)
    yield page
    page.context.close()


def test_a_run_and_a_sweep_shared_by_name_and_link_read_alike_and_revoke(
    page: Any, reader: Any, records: dict[str, Any]
) -> None:
    run, sweep = records["run"], records["sweep"]
    # Before any share the reader finds nothing: the same 404 as for no run at all.
    reader.goto(f"/app/runs/{run}")
    expect(reader.get_by_role("alert")).to_contain_text("No simulation")

    # The owner shares the run with the reader by name.
    page.goto(f"/app/runs/{run}")
    page.get_by_role("button", name="Share…").click()
    page.get_by_label("Share read-only with user").fill(READER[0])
    page.get_by_role("button", name="Share", exact=True).click()
    expect(page.get_by_role("list", name="Shares")).to_contain_text(READER[0])
    owner_status = page.get_by_test_id("run-status").text_content()

    # The reader sees the run as its owner does, without the owner's controls.
    reader.goto(f"/app/runs/{run}")
    expect(reader.get_by_test_id("shared-note")).to_contain_text("read-only by demo")
    expect(reader.get_by_test_id("run-status")).to_have_text(owner_status)
    expect(reader.get_by_role("button", name="Share…")).to_have_count(0)
    expect(reader.get_by_role("button", name="Edit application model")).to_have_count(0)
    with reader.expect_download() as download:
        reader.get_by_role("link", name="Download trace (Perfetto)").click()
    trace = json.loads(Path(download.value.path()).read_text())
    assert trace["traceEvents"], "the shared run's trace holds its events"
    screenshot(reader, "shared-run")

    # The owner publishes the sweep under a link; the reader opens it.
    page.goto(f"/app/sweeps/{sweep}")
    page.get_by_role("button", name="Share…").click()
    page.get_by_role("button", name="Publish link").click()
    address = page.get_by_label("Link address").input_value()
    assert "/app/shared/" in address and len(address.rsplit("/", 1)[1]) >= 40
    owner_summary = page.get_by_test_id("sweep-summary").text_content()
    reader.goto(f"/app/sweeps/{sweep}")
    expect(reader.get_by_role("alert")).to_contain_text("No sweep")
    reader.goto(address)
    expect(reader).to_have_url(re.compile(rf"/app/sweeps/{sweep}$"))
    expect(reader.get_by_test_id("shared-note")).to_contain_text("read-only by demo")
    expect(reader.get_by_test_id("sweep-summary")).to_have_text(owner_summary)
    reader.goto(f"/app/runs/{records['points'][0]}")  # a point of the shared sweep
    expect(reader.get_by_test_id("shared-note")).to_be_visible()

    # Revoked, the run is gone for the reader.
    page.goto(f"/app/runs/{run}")
    page.get_by_role("button", name="Share…").click()
    page.get_by_role("list", name="Shares").get_by_role("button", name="Revoke").click()
    expect(page.get_by_text("Shared with no one.")).to_be_visible()
    reader.goto(f"/app/runs/{run}")
    expect(reader.get_by_role("alert")).to_contain_text("No simulation")
