"""A run that cannot know how far it is (its processes end together, or never) shows the
simulated time it reached and the time elapsed, never a 0 % bar that does not move."""

from __future__ import annotations

import re
from typing import Any

import pytest
from playwright.sync_api import expect

from tests.e2e.helpers import EXAMPLE_SYSTEM, create_application

pytestmark = pytest.mark.e2e

ENDLESS_PING_PONG = """\
while True:
    if tag.equals("CPU"):
        sim.p2pCommunicationSend(4000.0, "GPU", ConstVar.HostToDevice)
        sim.p2pCommunicationReceive("GPU")
    else:
        sim.p2pCommunicationReceive("CPU")
        sim.p2pCommunicationSend(4000.0, "CPU", ConstVar.DeviceToHost)
"""


def test_an_endless_run_shows_the_simulated_time_reached_and_the_time_elapsed(
    page: Any,
) -> None:
    application = create_application(page, "Endless ping-pong", ENDLESS_PING_PONG, [])
    page.goto(f"/app/launch?application={application}")
    page.get_by_label("System model").select_option(label=EXAMPLE_SYSTEM)
    page.get_by_role("button", name="Launch", exact=True).click()
    page.wait_for_url(re.compile(r"/app/runs/\d+$"))
    page.get_by_test_id("run-status").filter(has_text="running").wait_for(timeout=60_000)

    bar = page.get_by_role("progressbar", name="Simulation progress")
    expect(bar).to_be_visible()
    expect(bar).not_to_have_attribute("aria-valuenow", re.compile(".*"))
    expect(bar).not_to_contain_text("%")
    caption = page.get_by_test_id("progress-caption")
    reached = re.compile(r"^Running: simulated time reached \d[\d.]* (µs|ms|s) · elapsed \d")
    expect(caption).to_have_text(reached, timeout=20_000)
    first = caption.inner_text()
    # the figures move: the engine's clock advances and the elapsed time ticks
    expect(caption).not_to_have_text(first, timeout=10_000)

    # the runs list says the same in a few words, with no percentage either
    run_page = page.url
    page.goto("/app/runs")
    listed = page.get_by_test_id("run-progress").first
    expect(listed).to_have_text(
        re.compile(r"^\s*\d[\d.]* (µs|ms|s) simulated · \d[^%]* elapsed$"), timeout=20_000
    )
    page.goto(run_page)

    page.get_by_role("button", name="Cancel", exact=True).click()
    page.get_by_test_id("run-status").filter(has_text="cancelled").wait_for(timeout=60_000)
    expect(bar).to_have_count(0)
