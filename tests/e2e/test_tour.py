"""The README's five-minute tour in a real browser: hardware, system model, Listing 5, launch."""

from __future__ import annotations

import re
from typing import Any

import pytest
from playwright.sync_api import expect

from tests.e2e.conftest import screenshot
from tests.e2e.helpers import build_gtx970_testbed, create_listing5

pytestmark = [pytest.mark.e2e, pytest.mark.slow]


def test_the_tour_builds_the_gtx970_testbed_launches_listing5_and_reads_the_times(
    page: Any,
) -> None:
    # 1. The hardware database holds the seeded GTX 970 with its attributes (Fig. 5.2).
    page.get_by_label("Search name or vendor").fill("GTX 970")
    seeded = page.get_by_role("row").filter(has_text="NVIDIA").filter(has_text="GeForce GTX 970")
    seeded.get_by_role("link", name="GeForce GTX 970").click()
    page.get_by_role("heading", name="GeForce GTX 970").wait_for()
    assert page.get_by_label("Attribute 1 key").input_value()
    screenshot(page, "02-hardware-detail")
    page.get_by_role("link", name="Hardware", exact=True).click()
    page.get_by_role("link", name="GeForce GTX 970").first.wait_for()
    page.get_by_label("Search name or vendor").fill("")
    page.get_by_label("Type").select_option("GPU")
    page.wait_for_function("!document.querySelector('table .tag-NETWORK')")
    assert page.locator("table .tag-GPU").count() == page.locator("table tbody tr").count()
    screenshot(page, "01-hardware-list")

    # 2. The application model: Listing 5 with its four variables.
    application = create_listing5(page, "saxpy2 (Listing 5)")
    page.get_by_role("heading", name="saxpy2 (Listing 5)").wait_for()
    screenshot(page, "04-application-editor")

    # 3. The system model: CPU -- PCIe 3.0 16x -- GTX 970 inside a group, built-in models.
    system = build_gtx970_testbed(page, "GTX 970 testbed (tour)")
    page.locator(".hw-node").first.wait_for()
    # React Flow draws edges once it has measured the nodes, a moment after they appear: on
    # a loaded CI machine more than the default 5 s (as in test_memory_hierarchy).
    expect(page.locator(".hw-node")).to_have_count(3)
    expect(page.locator(".react-flow__edge")).to_have_count(2, timeout=20_000)
    screenshot(page, "03-system-editor")

    # 4. Launch on the MERPSYS queue with N = 10^7, block size 256, a = 1, occupancy 64.
    page.goto(f"/app/launch?system={system}&application={application}")
    page.get_by_label("Variable N").fill("10000000")
    page.get_by_label("Variable computeIntensity").fill("1")
    page.get_by_label("Queue").select_option("gajgerqueue")
    screenshot(page, "05-launch")
    page.get_by_role("button", name="Launch", exact=True).click()
    page.wait_for_url(re.compile(r"/app/runs/\d+$"))
    page.get_by_test_id("run-status").filter(has_text="succeeded").wait_for(timeout=120_000)

    # 5. The kernel and transfer times of section 5.4: 2 x 3.678 ms in, 0.760 ms, 3.882 ms out.
    table = page.get_by_role("table", name="Kernel and transfer times")
    rows = table.locator("tbody tr")
    kernel = rows.filter(has_text="kernel").locator("td.num").inner_text()
    transfers = [
        rows.filter(has_text=d).locator("td.num").all_inner_texts()
        for d in ("HostToDevice", "DeviceToHost")
    ]
    assert kernel == "0.760 ms"
    assert transfers == [["3.678 ms", "3.678 ms"], ["3.882 ms"]]
    assert page.get_by_test_id("overall-time").inner_text() == "11.998 ms"
    assert page.locator("figure[aria-label='Gantt timeline of processes'] rect").count() > 0
    screenshot(page, "06-results")
    first_run = page.url.rsplit("/", 1)[1]

    # 6. A second run at compute intensity 64, then both side by side from the run history.
    page.goto(f"/app/launch?system={system}&application={application}")
    page.get_by_label("Variable computeIntensity").fill("64")
    page.get_by_label("Run name").fill("intensity 64")
    page.get_by_role("button", name="Launch", exact=True).click()
    page.wait_for_url(re.compile(r"/app/runs/\d+$"))
    page.get_by_test_id("run-status").filter(has_text="succeeded").wait_for(timeout=120_000)
    second_run = page.url.rsplit("/", 1)[1]
    page.get_by_role("link", name="Runs", exact=True).click()
    page.get_by_label(f"Select run {first_run} for comparison").check()
    page.get_by_label(f"Select run {second_run} for comparison").check()
    screenshot(page, "16-run-history")
    page.get_by_role("button", name="Compare the 2 selected").click()
    settings = page.get_by_role("table", name="Settings of the compared runs")
    intensity = settings.get_by_role("row", name=re.compile("Variable computeIntensity"))
    intensity.wait_for()
    assert intensity.locator("td").all_inner_texts()[:2] == ["1", "64"]
    differences = page.get_by_role("table", name="Differences between the runs")
    overall = differences.get_by_role("row", name=re.compile("Overall time"))
    assert overall.locator("td").first.inner_text() == "11.998 ms"
    screenshot(page, "17-compare")
