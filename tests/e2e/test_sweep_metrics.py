"""Sweep metrics in the browser: kernel time on log axes with one line per GPU actually used,
the per-phase stack, the energy warning, and a swapped GPU named by its own name."""

from __future__ import annotations

import csv
import io
import re
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import expect

from tests.e2e.conftest import screenshot
from tests.e2e.helpers import add_hardware, create_listing5

pytestmark = [pytest.mark.e2e, pytest.mark.slow]

GPUS = ("GeForce GTX 970", "H100 SXM5 80GB")
SIZES = (100_000, 1_000_000, 10_000_000)


def build_testbed_named_after_its_gpu(page: Any, name: str) -> int:
    """Build CPU -- PCIe -- GPU with the GPU node named after its hardware; return its id."""
    page.goto("/app/systems/new")
    page.get_by_label("System model name").fill(name)
    page.get_by_role("button", name="Add group").click()
    page.get_by_label("Node name").fill("Testbed")
    add_hardware(page, "Intel Core i7-4790K", name="CPU", label="CPU")
    add_hardware(page, "PCIe 3.0 16x", name="PCIe", model="PCIe link", connect_to="CPU")
    add_hardware(page, GPUS[0], name=GPUS[0], model="Volkov GPU", label="GPU", connect_to="PCIe")
    page.get_by_role("button", name="Done").click()
    page.get_by_role("button", name="Save", exact=True).click()
    page.wait_for_url(re.compile(r"/app/systems/\d+$"))
    return int(page.url.rstrip("/").rsplit("/", 1)[1])


def test_a_sweep_plots_kernel_time_on_log_axes_one_line_per_gpu_used(page: Any) -> None:
    application = create_listing5(page, "saxpy2 (sweep metrics)")
    system = build_testbed_named_after_its_gpu(page, "GTX 970 testbed (sweep metrics)")

    page.goto(f"/app/sweeps/new?system={system}&application={application}")
    page.get_by_label("Sweep name").fill("N x GPU")
    page.get_by_label("Sweep values of N").fill(",".join(map(str, SIZES)))
    page.get_by_label("Node to swap").select_option(label=GPUS[0])
    choices = page.get_by_role("group", name="Hardware choices")
    for gpu in GPUS:
        choices.get_by_label(gpu, exact=True).first.check()
    page.get_by_role("button", name="Launch sweep").click()
    page.wait_for_url(re.compile(r"/app/sweeps/\d+$"))
    page.get_by_test_id("sweep-status").filter(has_text="finished").wait_for(timeout=180_000)
    rows = page.get_by_role("table", name="Sweep points").locator("tbody tr")
    expect(rows.filter(has_text="succeeded")).to_have_count(len(GPUS) * len(SIZES))

    page.get_by_label("Metric").select_option("kernel_s")
    page.get_by_label("X axis scale").select_option("log")
    page.get_by_label("Y axis scale").select_option("log")
    chart = page.locator("figure.chart").first  # the trade-off chart follows it
    expect(chart).to_have_attribute("data-y-scale", "log")
    expect(chart).to_have_attribute("data-x-scale", "log")
    expect(chart.get_by_role("img")).to_have_attribute(
        "aria-label", "kernel time (GPU compute) (log) against N (log), 2 lines"
    )
    legend = chart.get_by_label("Legend").locator("span")
    assert sorted(legend.all_inner_texts()) == sorted(GPUS)
    series = chart.locator("g.series")
    assert sorted(series.evaluate_all("gs => gs.map(g => g.dataset.series)")) == sorted(GPUS)
    for gpu in GPUS:
        expect(chart.locator(f'g.series[data-series="{gpu}"] circle')).to_have_count(len(SIZES))
    # Kernel time grows tenfold per decade of N: on a log axis the points climb by equal steps.
    heights = chart.locator(f'g.series[data-series="{GPUS[0]}"] circle').evaluate_all(
        "cs => cs.map(c => Number(c.getAttribute('cy')))"
    )
    steps = [heights[i] - heights[i + 1] for i in range(len(heights) - 1)]
    assert steps[0] > 0 and steps[1] == pytest.approx(steps[0], rel=0.05)
    warning = page.get_by_role("note", name="Energy warning")
    expect(warning).to_contain_text("rests on missing power attributes")
    # every point counted its energy one way (issue 45): nothing to refuse side by side
    expect(page.get_by_role("note", name="Energy accountings differ")).to_have_count(0)
    expect(warning).to_contain_text(re.compile(rf"{GPUS[0]} \(\w+\): powerIdle"))
    screenshot(page, "sweep-kernel-log")

    page.get_by_label("Metric").select_option("phases")
    expect(page.locator("figure.chart g.stack")).to_have_count(len(GPUS) * len(SIZES))
    expect(page.locator("figure.chart").first.get_by_label("Legend")).to_contain_text("transfer")

    with page.expect_download() as download_info:
        page.get_by_role("link", name="Download CSV", exact=True).click()
    table = list(csv.DictReader(io.StringIO(Path(download_info.value.path()).read_text())))
    assert {row["gpu"] for row in table} == set(GPUS)
    kernel = {(row["gpu"], int(row["N"])): float(row["kernel_s"]) for row in table}
    assert all(kernel[(GPUS[1], n)] < kernel[(GPUS[0], n)] for n in SIZES)
    assert all(float(row["transfer_s"]) > 0 for row in table)
    assert all("powerIdle" in row["power_missing"] for row in table if row["gpu"] == GPUS[0])
    assert {row["energy_accounting"] for row in table} == {"whole_run"}
    # the GTX 970's idle states are estimated by the named rules; the H100's were measured
    assert all(
        "powerActiveIdle" in row["energy_estimated"] for row in table if row["gpu"] == GPUS[0]
    )
    assert all(GPUS[1] not in row["energy_estimated"] for row in table if row["gpu"] == GPUS[1])

    # The H100 point's run names its GPU node after the H100, not the GTX 970 it replaced.
    h100_run = next(row["simulation"] for row in table if row["gpu"] == GPUS[1])
    page.goto(f"/app/runs/{h100_run}")
    components = page.get_by_role("table", name="Components")
    gpu_row = components.locator("tr", has_text="GPU").filter(has_text=GPUS[1])
    expect(gpu_row.locator("td").first).to_have_text(f"{GPUS[1]}[0]")
    expect(components).not_to_contain_text(GPUS[0])
    # what its energy includes: the H100's measured active idle over the run, nothing estimated
    expect(page.get_by_test_id("energy-accounting")).to_contain_text("whole run")
    includes = page.get_by_role("table", name="Energy per node and what it includes")
    h100_energy = includes.locator("tr", has_text=GPUS[1])
    expect(h100_energy).to_contain_text("active idle 119.6 W")
    expect(h100_energy).to_contain_text("no: from the record")
    expect(page.get_by_role("list", name="Energy under other accountings")).to_contain_text(
        "seed 000"
    )


def test_a_sweep_over_gpus_n_and_link_bandwidth_shows_its_pareto_front_and_constraints(
    page: Any,
) -> None:
    """Issue 44's question for the MERPSYS saxpy2 system: across GPUs, N and the PCIe
    bandwidth (a hardware attribute axis, no record cloned), which points trade time against
    energy best, and which remain under a constraint; the CSV carries the same flags."""
    application = create_listing5(page, "saxpy2 (trade-off)")
    system = build_testbed_named_after_its_gpu(page, "GTX 970 testbed (trade-off)")

    page.goto(f"/app/sweeps/new?system={system}&application={application}")
    page.get_by_label("Sweep name").fill("GPU x N x PCIe")
    page.get_by_label("Sweep values of N").fill("1000000,10000000")
    page.get_by_label("Node to swap").select_option(label=GPUS[0])
    choices = page.get_by_role("group", name="Hardware choices")
    for gpu in GPUS:
        choices.get_by_label(gpu, exact=True).first.check()
    page.get_by_label("Hardware attribute axes").fill("NETWORK.bandwidth = 8e9,15.8e9")
    page.get_by_role("button", name="Launch sweep").click()
    page.wait_for_url(re.compile(r"/app/sweeps/\d+$"))
    page.get_by_test_id("sweep-status").filter(has_text="finished").wait_for(timeout=180_000)
    points = page.get_by_role("table", name="Sweep points")
    expect(points.locator("tbody tr").filter(has_text="succeeded")).to_have_count(8)
    expect(points.locator("thead")).to_contain_text("NETWORK.bandwidth")

    tradeoff = page.get_by_role("region", name="Trade-off")
    chart = tradeoff.locator("figure.chart")
    expect(chart.locator("[data-kind]")).to_have_count(8)
    expect(chart.locator('[data-kind="infeasible"]')).to_have_count(0)
    front = chart.locator('[data-kind="front"]').count()
    assert front >= 1

    tradeoff.get_by_label("Constraints").fill("N <= 1000000")
    tradeoff.get_by_role("button", name="Apply").click()
    expect(tradeoff.get_by_test_id("constraints-applied")).to_have_text("Feasible: N <= 1e+06.")
    expect(chart.locator('[data-kind="infeasible"]')).to_have_count(4)
    screenshot(page, "sweep-tradeoff")

    tradeoff.get_by_label("Constraints").fill("speed <= 3")
    tradeoff.get_by_role("button", name="Apply").click()
    expect(tradeoff.get_by_test_id("constraint-problem")).to_contain_text('Unknown metric "speed"')

    with page.expect_download() as download_info:
        tradeoff.get_by_test_id("tradeoff-csv").click()
    table = list(csv.DictReader(io.StringIO(Path(download_info.value.path()).read_text())))
    assert len(table) == 8
    assert {float(row["NETWORK.bandwidth"]) for row in table} == {8e9, 15.8e9}
    assert all((row["feasible"] == "True") == (float(row["N"]) <= 1e6) for row in table)
    shown = chart.locator('[data-kind="front"]').count()
    assert sum(row["pareto"] == "True" for row in table) == shown
    assert all(row["feasible"] == "True" for row in table if row["pareto"] == "True")
