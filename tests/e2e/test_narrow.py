"""The run page on a phone (390 px wide): nothing wider than the screen, and every chart
(the timeline, the roofline, power over time, energy) inside it; a run of thousands of
messages lists its transfers a page at a time with their count.

The run is Listing 5 on the seeded GTX 970 testbed, plus a ping-pong sending thousands of
messages between its CPU and GPU.
"""

from __future__ import annotations

import itertools
import re
from typing import Any

import pytest
from playwright.sync_api import expect

from tests.e2e.conftest import screenshot
from tests.e2e.helpers import EXAMPLE_SYSTEM, create_application, create_listing5

pytestmark = pytest.mark.e2e

PHONE = {"width": 390, "height": 844}
PING_PONG = """\
for step in range(steps):
    if tag.equals("CPU"):
        sim.p2pCommunicationSend(4000.0, "GPU", ConstVar.HostToDevice)
        sim.p2pCommunicationReceive("GPU")
    else:
        sim.p2pCommunicationReceive("CPU")
        sim.p2pCommunicationSend(4000.0, "CPU", ConstVar.DeviceToHost)
"""
STEPS = 1250  # two transfers a step: 2,500 rows of kernel and transfer times


def launch(page: Any, application: int) -> None:
    """Launch `application` on the example system and wait for its run to succeed."""
    page.goto(f"/app/launch?application={application}")
    page.get_by_label("System model").select_option(label=EXAMPLE_SYSTEM)
    page.get_by_role("button", name="Launch", exact=True).click()
    page.wait_for_url(re.compile(r"/app/runs/\d+$"))
    page.get_by_test_id("run-status").filter(has_text="succeeded").wait_for(timeout=120_000)


def overflow(page: Any) -> dict[str, Any]:
    """Return the page's scroll width and the figures that reach past the viewport."""
    return page.evaluate(
        """() => ({
            width: document.documentElement.scrollWidth,
            outside: [...document.querySelectorAll('figure.chart')]
                .map((f) => [f.getAttribute('aria-label'), f.getBoundingClientRect()])
                .filter(([, r]) => r.left < 0 || r.right > window.innerWidth)
                .map(([label, r]) => `${label}: ${Math.round(r.left)}..${Math.round(r.right)}`),
        })"""
    )


def test_the_run_page_fits_a_phone_with_its_charts_inside(page: Any) -> None:
    application = create_listing5(page, "saxpy2 (phone)")
    page.set_viewport_size(PHONE)
    launch(page, application)
    for chart in ("Gantt timeline of processes", "Power over time", "Energy per component"):
        expect(page.get_by_role("figure", name=chart)).to_be_visible()
    expect(page.get_by_role("figure", name=re.compile("^Roofline of"))).to_be_visible()
    assert overflow(page) == {"width": PHONE["width"], "outside": []}
    screenshot(page, "run-page-phone")


def test_thousands_of_transfers_are_listed_a_page_at_a_time(page: Any) -> None:
    application = create_application(
        page, "Ping-pong (long table)", PING_PONG, [("steps", "int", str(STEPS))]
    )
    launch(page, application)
    table = page.get_by_role("table", name="Kernel and transfer times")
    expect(table.locator("tbody tr")).to_have_count(50)
    pages = page.get_by_role("navigation", name="Kernel and transfer times pages")
    expect(pages.get_by_test_id("table-rows")).to_have_text("Rows 1–50 of 2,500")
    pages.get_by_role("button", name="Last page").click()
    expect(pages.get_by_test_id("table-rows")).to_have_text("Rows 2,451–2,500 of 2,500")
    expect(table.locator("tbody tr")).to_have_count(50)
    # the page stays about a screen's worth of table long, not tens of thousands of pixels
    assert page.evaluate("document.documentElement.scrollHeight") < 12_000
    page.set_viewport_size(PHONE)
    assert overflow(page) == {"width": PHONE["width"], "outside": []}


SEND = """\
if tag.equals("CPU"):
    sim.p2pCommunicationSend(float(n), "GPU", ConstVar.HostToDevice)
else:
    sim.p2pCommunicationReceive("CPU")
"""


def test_the_sweep_chart_fits_a_phone_and_its_x_labels_do_not_overlap(page: Any) -> None:
    application = create_application(page, "Send n bytes (phone sweep)", SEND, [("n", "int", "1")])
    page.goto(f"/app/sweeps/new?application={application}")
    page.get_by_label("System model").select_option(label=EXAMPLE_SYSTEM)
    page.get_by_label("Sweep values of n").fill("1000000:24000000:1000000")
    page.get_by_role("button", name="Launch sweep").click()
    page.wait_for_url(re.compile(r"/app/sweeps/\d+$"))
    page.get_by_test_id("sweep-status").filter(has_text="finished").wait_for(timeout=180_000)
    page.set_viewport_size(PHONE)
    # the first chart: the metric against the variable (the trade-off chart follows it)
    labels = page.locator("figure.chart").first.locator("svg text.x-tick")
    expect(labels.first).to_be_visible()
    boxes = labels.evaluate_all(
        "ts => ts.map(t => t.getBoundingClientRect()).map(r => [r.left, r.right])"
    )
    assert 1 < len(boxes) < 24
    assert all(left >= before for (_, before), (left, _) in itertools.pairwise(boxes))
    assert overflow(page) == {"width": PHONE["width"], "outside": []}
    screenshot(page, "sweep-chart-phone")
