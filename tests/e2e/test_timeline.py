"""The timeline in the browser: a run whose timeline was cut shows how much was dropped, an
axis over the run's whole time, a row per process and per resource, and zooms and pans.

The run is a ping-pong between the CPU and the GPU of the seeded GTX 970 testbed, launched
from the launch screen with a small "Timeline entries" (REST `timeline_limit`); a limit
above the server's maximum is refused there first, naming the field.
"""

from __future__ import annotations

import re
from typing import Any

import pytest
from playwright.sync_api import expect

from tests.e2e.conftest import screenshot
from tests.e2e.helpers import EXAMPLE_SYSTEM, create_application

pytestmark = pytest.mark.e2e

PING_PONG = """\
for step in range(steps):
    if tag.equals("CPU"):
        sim.p2pCommunicationSend(4000.0, "GPU", ConstVar.HostToDevice)
        sim.p2pCommunicationReceive("GPU")
    else:
        sim.p2pCommunicationReceive("CPU")
        sim.p2pCommunicationSend(4000.0, "CPU", ConstVar.DeviceToHost)
"""
STEPS = 2000  # each step: two transfers and two receives on the timeline
KEPT = 1000


def window_text(page: Any) -> str:
    return page.get_by_test_id("gantt-window").inner_text()


def test_a_truncated_timeline_says_what_was_dropped_spans_the_run_and_zooms(page: Any) -> None:
    application = create_application(
        page, "Ping-pong (timeline)", PING_PONG, [("steps", "int", str(STEPS))]
    )
    page.goto(f"/app/launch?application={application}")
    page.get_by_label("System model").select_option(label=EXAMPLE_SYSTEM)

    # Above the server's maximum: refused, the message beside the field naming the setting.
    page.get_by_label("Timeline entries").fill("100000000")
    page.get_by_role("button", name="Launch", exact=True).click()
    refused = page.locator("[data-error-path='timeline_limit']")
    expect(refused).to_contain_text("from 0 to 100,000")
    expect(refused).to_contain_text("PARASIM_MAX_TIMELINE_LIMIT")
    assert re.search(r"/app/launch", page.url)

    page.get_by_label("Timeline entries").fill(str(KEPT))
    page.get_by_role("button", name="Launch", exact=True).click()
    page.wait_for_url(re.compile(r"/app/runs/\d+$"))
    page.get_by_test_id("run-status").filter(has_text="succeeded").wait_for(timeout=120_000)
    run = page.url.rsplit("/", 1)[1]
    result = page.evaluate(f"fetch('/api/simulations/{run}/result.json').then(r => r.json())")
    assert len(result["timeline"]) == KEPT
    assert result["timeline_dropped"] == 4 * STEPS - KEPT
    overall = result["overall_time_s"]

    # The notice: how many entries were kept and dropped, and how to keep more.
    notice = page.get_by_test_id("timeline-dropped")
    expect(notice).to_contain_text(f"kept its first {KEPT:,} process entries")
    expect(notice).to_contain_text(f"{4 * STEPS - KEPT:,} later entries were dropped")
    expect(notice).to_contain_text("timeline_limit")

    # The axis spans the run's whole time, not only the kept entries (about a quarter of it).
    chart = page.get_by_role("img", name=re.compile(r"^Timeline of \d+ rows"))
    assert float(chart.get_attribute("data-end")) == overall
    overall_text = page.get_by_test_id("overall-time").inner_text()
    assert window_text(page) == f"Whole run: 0 – {overall_text}"
    kept_until = max(entry["end_s"] for entry in result["timeline"])
    assert kept_until < overall / 2
    ticks = page.locator(".gantt-tick text").all_text_contents()
    assert len(ticks) >= 3
    assert page.locator("rect[fill^='url(#gantt-dropped']").count() == 2  # CPU[0], GPU[0]

    # A row per process and per component instance; the PCIe link is busy the whole run.
    figure = page.locator("figure[aria-label='Gantt timeline of processes']")
    expect(figure.get_by_text("Resources", exact=True)).to_be_visible()
    labels = figure.locator("text[data-row-label]").all_text_contents()
    assert labels[:2] == ["CPU[0]", "GPU[0]"]
    assert len(labels) == 2 + len(result["components"])
    busy = result["resource_timeline"]
    assert busy and {row["node"] for row in busy} <= {c["node"] for c in result["components"]}
    assert result["resource_timeline_dropped"] == 0
    page.get_by_role("heading", name="Timeline").scroll_into_view_if_needed()
    screenshot(page, "timeline-truncated")

    # Zoom in with the button, then the keyboard, the wheel, and pan by dragging.
    page.get_by_role("button", name="Zoom in").click()
    assert window_text(page).startswith("Showing ")
    after_button = window_text(page)
    chart.focus()
    page.keyboard.press("+")
    assert window_text(page) not in (after_button, f"Whole run: 0 – {overall_text}")
    box = chart.bounding_box()
    page.mouse.move(box["x"] + 300, box["y"] + 40)
    before_wheel = window_text(page)
    page.mouse.wheel(0, -300)
    expect(page.get_by_test_id("gantt-window")).not_to_have_text(before_wheel)
    before_drag = window_text(page)
    page.mouse.down()
    page.mouse.move(box["x"] + 500, box["y"] + 40, steps=5)
    page.mouse.up()
    assert window_text(page) != before_drag
    screenshot(page, "timeline-zoomed")
    page.get_by_role("button", name="Whole run").click()
    assert window_text(page) == f"Whole run: 0 – {overall_text}"
