"""A sweep in the browser: compute intensity x two GPUs, its chart, table and CSV."""

from __future__ import annotations

import csv
import io
import re
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import expect

from tests.e2e.conftest import screenshot
from tests.e2e.helpers import (
    EXAMPLE_SYSTEM,
    build_gtx970_testbed,
    create_application,
    create_listing5,
)

pytestmark = [pytest.mark.e2e, pytest.mark.slow]

GPUS = ("GeForce GTX 970", "GeForce GTX TITAN X (Maxwell)")
INTENSITIES = (1, 16, 32, 64)


def by_header(table: Any, header: str) -> Any:
    """Return the row of `table` whose row header reads exactly `header`."""
    return table.locator("tbody tr").filter(
        has=table.page.get_by_role("rowheader", name=header, exact=True)
    )


def test_a_sweep_over_intensity_and_two_gpus_charts_one_line_per_gpu(
    page: Any, tmp_path: Path
) -> None:
    application = create_listing5(page, "saxpy2 (sweep)")
    system = build_gtx970_testbed(page, "GTX 970 testbed (sweep)")

    page.goto(f"/app/sweeps/new?system={system}&application={application}")
    page.get_by_label("Sweep name").fill("intensity x GPU")
    page.get_by_label("Sweep values of computeIntensity").fill(",".join(map(str, INTENSITIES)))
    page.get_by_label("Node to swap").select_option(label="GPU")
    choices = page.get_by_role("group", name="Hardware choices")
    for gpu in GPUS:
        choices.get_by_label(gpu, exact=True).first.check()
    screenshot(page, "08-sweep-new")
    page.get_by_role("button", name="Launch sweep").click()
    page.wait_for_url(re.compile(r"/app/sweeps/\d+$"))
    page.get_by_test_id("sweep-status").filter(has_text="finished").wait_for(timeout=180_000)

    rows = page.get_by_role("table", name="Sweep points").locator("tbody tr")
    expect(rows).to_have_count(len(GPUS) * len(INTENSITIES))
    expect(rows.filter(has_text="succeeded")).to_have_count(len(GPUS) * len(INTENSITIES))
    series = page.locator("figure.chart g.series")
    expect(series).to_have_count(len(GPUS))
    assert sorted(series.evaluate_all("gs => gs.map(g => g.dataset.series)")) == sorted(GPUS)
    expect(page.locator("figure.chart g.series").first.locator("circle")).to_have_count(
        len(INTENSITIES)
    )
    screenshot(page, "09-sweep-chart")

    with page.expect_download() as download_info:
        page.get_by_role("link", name="Download CSV", exact=True).click()
    table = list(csv.DictReader(io.StringIO(Path(download_info.value.path()).read_text())))
    assert {row["hardware"] for row in table} == set(GPUS)
    assert sorted({int(row["computeIntensity"]) for row in table}) == list(INTENSITIES)
    # The TITAN X has more SMs than the GTX 970: its kernels, hence its runs, are shorter.
    times = {(r["hardware"], r["computeIntensity"]): float(r["overall_time_s"]) for r in table}
    assert all(times[(GPUS[1], str(a))] < times[(GPUS[0], str(a))] for a in INTENSITIES)

    page.get_by_label("Metric").select_option("energy_j")
    screenshot(page, "10-sweep-energy")

    # Measurements of one GPU over this two-GPU sweep: matched to that GPU's points only, once
    # the page is told which GPU it was measured on.
    sweep = page.url.rsplit("/", 1)[1]
    measured = tmp_path / "gtx970.csv"
    measured.write_text(
        "n,block_size,compute_intensity,kernel_s\n"
        + "".join(f"10000000,256,{a},{1e-3 * (1 + a / 64)}\n" for a in INTENSITIES)
    )
    page.goto(f"/app/measurements?sweep={sweep}")
    page.get_by_label("Measurements CSV").set_input_files(str(measured))
    expect(page.get_by_test_id("match-error")).to_contain_text(
        f"The runs ran on 2 GPUs ({GPUS[0]}, {GPUS[1]})"
    )
    expect(page.get_by_role("table", name="Measured against predicted")).to_have_count(0)
    page.get_by_label("GPU the CSV was measured on").select_option(GPUS[0])
    expect(page.get_by_test_id("match-error")).to_have_count(0)
    table = page.get_by_role("table", name="Measured against predicted")
    expect(table.locator("tbody tr")).to_have_count(len(INTENSITIES))
    expect(table.locator("tbody tr").filter(has_text=GPUS[0])).to_have_count(len(INTENSITIES))

    # Two points of the sweep, one per GPU, compared: energy by node, each cell naming the
    # hardware that point had in the node, and a hardware row.
    points = page.evaluate(
        "async (id) => (await (await fetch(`/api/sweeps/${id}/`)).json()).points", sweep
    )
    pair = [
        next(p["simulation"] for p in points if p["hardware"] == gpu and p["computeIntensity"] == 1)
        for gpu in GPUS
    ]
    page.goto(f"/app/compare?runs={pair[0]},{pair[1]}")
    settings = page.get_by_role("table", name="Settings of the compared runs")
    hardware = by_header(settings, "Hardware, GPU")
    expect(hardware.locator("td")).to_have_text(list(GPUS))
    differences = page.get_by_role("table", name="Differences between the runs")
    energy = by_header(differences, "Energy, GPU")
    expect(energy.locator("td").nth(0)).to_contain_text(f"on {GPUS[0]}")
    expect(energy.locator("td").nth(1)).to_contain_text(f"on {GPUS[1]}")
    host = by_header(differences, "Energy, CPU")
    expect(host.locator("td")).to_contain_text(["on Intel Core i7-4790K"] * 2)


def test_a_sweep_whose_points_all_failed_says_so_with_their_errors(page: Any) -> None:
    application = create_application(
        page,
        "always fails (sweep)",
        'raise RuntimeError(f"no point at x = {x}")\n',
        [("x", "int", "1")],
    )
    page.goto(f"/app/sweeps/new?application={application}")
    page.get_by_label("System model").select_option(label=EXAMPLE_SYSTEM)
    page.get_by_label("Sweep name").fill("all failed")
    page.get_by_label("Sweep values of x").fill("1,2")
    page.get_by_role("button", name="Launch sweep").click()
    page.wait_for_url(re.compile(r"/app/sweeps/\d+$"))
    page.get_by_test_id("sweep-status").filter(has_text="finished").wait_for(timeout=120_000)

    expect(page.get_by_test_id("sweep-summary")).to_have_text("All 2 points failed.")
    errors = page.get_by_test_id("sweep-errors")
    expect(errors).to_contain_text("The failed points gave 2 errors:")
    expect(errors).to_contain_text("no point at x = 1")
    expect(errors).to_contain_text("no point at x = 2")
    expect(page.get_by_text("No finished points yet.")).to_have_count(0)
    expect(page.get_by_text("points done")).to_have_count(0)
