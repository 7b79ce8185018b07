"""Roofline and bounds of a run, and the kernel analyzer, in a real browser (issue 14, items 6-7)."""

from __future__ import annotations

import csv
import math
import re
from typing import Any

import pytest
from playwright.sync_api import expect

from tests.e2e.conftest import screenshot
from tests.e2e.helpers import ROOT, build_gtx970_testbed, create_listing5

pytestmark = [pytest.mark.e2e, pytest.mark.slow]

LISTING3 = (ROOT / "examples" / "kernels" / "listing3.sass").read_text(encoding="utf-8")


def test_a_tour_run_shows_its_kernels_bound_and_its_point_under_the_gtx970_roofline(
    page: Any,
) -> None:
    application = create_listing5(page, "saxpy2 (roofline)")
    system = build_gtx970_testbed(page, "GTX 970 testbed (roofline)")
    page.goto(f"/app/launch?system={system}&application={application}")
    page.get_by_label("Variable computeIntensity").fill("1")
    page.get_by_label("Queue").select_option("gajgerqueue")
    page.get_by_role("button", name="Launch", exact=True).click()
    page.wait_for_url(re.compile(r"/app/runs/\d+$"))
    page.get_by_test_id("run-status").filter(has_text="succeeded").wait_for(timeout=120_000)

    # saxpy2 at a = 1: 384 / 13.78 cycles per warp of memory beat 27 / 4 of issue (4.4).
    bounds = page.get_by_role("table", name="Kernel bounds")
    expect(bounds.locator("tbody tr")).to_have_count(1)
    expect(page.get_by_test_id("kernel-bound-0")).to_have_text("memory (global memory)")
    expect(page.get_by_test_id("kernel-intensity-0")).to_have_text("2.25")  # 32 x 27 / 384
    row = bounds.locator("tbody tr").first
    expect(row).to_contain_text("0.760 ms")
    expect(row).to_contain_text("64 (100.0 %)")  # occupancy 64 of the GTX 970's 64 warps/SM
    expect(row).to_contain_text("70.4 %")  # lambda_k = 0.703787 of the memory roof

    roofline = page.get_by_role("figure", name="Roofline of GPU (GeForce GTX 970)")
    expect(roofline.locator("polyline.roof")).to_have_count(1)
    expect(roofline.locator("circle.kernel-point")).to_have_count(1)
    expect(roofline).to_contain_text("ridge at 9.289 instructions per byte")
    power = page.get_by_role("figure", name="Power over time")
    expect(power.locator("polyline[data-series='GPU[0]']")).to_have_count(1)
    expect(power).to_contain_text("up to 168 W")
    roofline.scroll_into_view_if_needed()
    screenshot(page, "25-roofline")


def test_the_analyzer_derives_listing3s_23_plus_4a_and_draws_its_execution_graph(
    page: Any,
) -> None:
    page.get_by_role("link", name="Analyzer", exact=True).click()
    page.get_by_role("heading", name="Kernel analyzer").wait_for()
    page.get_by_label("Kernel source").fill("FOO R1;")
    page.get_by_role("button", name="Analyze").click()
    expect(page.locator(".field-error")).to_contain_text("unknown opcode 'FOO' on line 1")

    page.get_by_label("Kernel source").fill(LISTING3)
    page.get_by_label("Architecture").select_option("sm_52")
    page.get_by_label("Trip counts").fill("a=1")
    page.get_by_role("button", name="Analyze").click()
    expect(page.get_by_test_id("analyzer-INS_cuda")).to_have_text("23 + 4a")
    expect(page.get_by_test_id("analyzer-INS_cuda-value")).to_have_text("= 27")
    expect(page.get_by_test_id("analyzer-GMem_bytes")).to_have_text("384")
    expect(page.get_by_test_id("analyzer-Lat_bound")).to_have_text("942 + 24a")
    graph = page.get_by_role("img", name=re.compile("Execution graph of"))
    expect(graph).to_be_visible()
    assert graph.evaluate("img => img.naturalWidth") > 0
    screenshot(page, "26-kernel-analyzer")


KIT_CSV = ROOT / "validation" / "data" / "h200-20261123-091741" / "measurements.csv"
INTENSITIES = (1, 16, 64)


def saxpy2_kernel_s(a: int) -> float:
    """Listing 5's kernel on the seeded GTX 970 by eqs 4.1-4.4 (as test_merpsys_example)."""
    warps = math.ceil(10**7 / 256) * 8
    th_bound = 1 / max(32 * (23 + 4 * a) / 128, (23 + 4 * a) / 4, 384 / 13.78)
    warp_throughput = min(64 / (942 + 24 * a), th_bound)
    return warps / (warp_throughput * 13 * 1253e6 * 0.703787)


def kit_kernel_s(a: int) -> float:
    """The mean kernel time of the kit's intensity rows at compute intensity `a`."""
    with KIT_CSV.open(encoding="utf-8") as handle:
        times = [
            float(row["kernel_s"])
            for row in csv.DictReader(handle)
            if row["scenario"] == "intensity" and int(row["compute_intensity"]) == a
        ]
    return sum(times) / len(times)


def test_a_measurement_csv_overlays_a_sweeps_predictions_with_the_mean_error(page: Any) -> None:
    application = create_listing5(page, "saxpy2 (measured)")
    system = build_gtx970_testbed(page, "GTX 970 testbed (measured)")
    page.goto(f"/app/sweeps/new?system={system}&application={application}")
    page.get_by_label("Sweep name").fill("intensity for the H200 kit")
    page.get_by_label("Sweep values of computeIntensity").fill(",".join(map(str, INTENSITIES)))
    page.get_by_role("button", name="Launch sweep").click()
    page.wait_for_url(re.compile(r"/app/sweeps/\d+$"))
    page.get_by_test_id("sweep-status").filter(has_text="finished").wait_for(timeout=180_000)
    sweep = page.url.rsplit("/", 1)[1]

    page.get_by_role("link", name="Measurements", exact=True).click()
    page.get_by_label("Sweep with the predictions").select_option(sweep)
    page.get_by_label("Measurements CSV").set_input_files(str(KIT_CSV))
    expect(page.get_by_label("Scenario")).to_have_value("intensity")
    expect(page.get_by_test_id("matched-by")).to_contain_text(
        "N = n, blockSz = block_size, computeIntensity = compute_intensity, "
        "occupancy = active_warps_per_sm"
    )
    table = page.get_by_role("table", name="Measured against predicted")
    expect(table.locator("tbody tr")).to_have_count(len(INTENSITIES))
    chart = page.get_by_role("figure", name="Kernel time: measured against predicted")
    expect(chart.locator("circle.measured")).to_have_count(len(INTENSITIES))
    expect(chart.locator("polyline.predicted")).to_have_count(1)

    errors = [(saxpy2_kernel_s(a) - kit_kernel_s(a)) / kit_kernel_s(a) for a in INTENSITIES]
    shown = [f"{'+' if e >= 0 else ''}{100 * e:.1f} %" for e in errors]
    expect(page.get_by_test_id("point-error")).to_have_text(shown)
    mean = sum(abs(e) for e in errors) / len(errors)
    expect(page.get_by_test_id("mean-error")).to_have_text(f"{100 * mean:.1f} %")
    screenshot(page, "20-measured-vs-predicted")

    page.get_by_label("GPU record").select_option(label="GeForce GTX 970")
    page.get_by_role("button", name="Calibrate", exact=True).click()
    expect(page.get_by_test_id("calibration-result")).to_contain_text(
        f"from {len(INTENSITIES)} points"
    )
    expect(page.get_by_test_id("calibration-result")).to_contain_text("not stored")
