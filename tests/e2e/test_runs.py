"""The run history with many runs: paging, filters and search reach the first run of 150,
which is compared with another; three runs compared show their differences in percent."""

from __future__ import annotations

import re
import subprocess
import sys
from typing import Any

import pytest
from playwright.sync_api import expect

from tests.e2e.conftest import ROOT, screenshot
from tests.e2e.seed_runs import RUN_NAME

pytestmark = [pytest.mark.e2e]

RUNS = 150


@pytest.fixture(scope="module")
def history(live_studio_env: dict[str, str]) -> list[int]:
    """Return the ids of RUNS finished runs of the demo user, run 1 (the oldest) first."""
    completed = subprocess.run(
        [sys.executable, "-m", "tests.e2e.seed_runs", str(RUNS)],
        cwd=ROOT,
        env=live_studio_env,
        check=True,
        capture_output=True,
        text=True,
    )
    ids = [int(word) for word in completed.stdout.split()]
    assert len(ids) == RUNS
    return ids


def run_name(number: int) -> str:
    return RUN_NAME.format(number=number)


def runs_table(page: Any) -> Any:
    return page.get_by_role("table", name="Simulations")


def tick(page: Any, run_id: int) -> None:
    page.get_by_label(f"Select run {run_id} for comparison", exact=True).check()


def test_the_first_of_150_runs_is_reached_by_paging_and_search_and_compared(
    page: Any, history: list[int]
) -> None:
    first, last = history[0], history[-1]
    page.goto("/app/runs")
    status = page.get_by_test_id("page-status")
    expect(status).to_contain_text(re.compile(r"Page 1 of \d+"))
    count = int(re.search(r"(\d+) rows", status.inner_text()).group(1))
    assert count >= RUNS
    expect(runs_table(page).locator("tbody tr")).to_have_count(50)
    expect(runs_table(page)).not_to_contain_text(run_name(1))

    # paging: among this history (other tests' runs share the server), the last page holds
    # the oldest run
    page.get_by_label("Search runs").fill("History run")
    page.get_by_role("button", name="Search", exact=True).click()
    expect(status).to_contain_text(f"{RUNS} rows")
    count = RUNS
    page.get_by_role("navigation", name="Runs pages").get_by_role(
        "button", name="Last page"
    ).click()
    expect(status).to_contain_text(f"Page {-(-count // 50)} of {-(-count // 50)}")
    expect(runs_table(page).get_by_role("link", name=run_name(1), exact=True)).to_be_visible()
    tick(page, first)
    screenshot(page, "runs-last-page")

    # search: the newest run by its name, with the first still selected
    page.get_by_label("Search runs").fill(run_name(RUNS))
    page.get_by_role("button", name="Search", exact=True).click()
    expect(runs_table(page).locator("tbody tr")).to_have_count(1)
    expect(status).to_contain_text("Page 1 of 1 · 1 row")
    tick(page, last)
    # and a filter by status alone still finds all of them
    page.get_by_label("Search runs").fill("History run")
    page.get_by_role("button", name="Search", exact=True).click()
    page.get_by_label("Status", exact=True).select_option("succeeded")
    expect(status).to_contain_text(f"{RUNS} rows")

    page.get_by_role("button", name="Compare the 2 selected").click()
    page.wait_for_url(re.compile(r"/app/compare\?runs="))
    differences = page.get_by_role("table", name="Differences between the runs")
    expect(differences).to_be_visible()
    expect(differences.locator("thead")).to_contain_text(run_name(1))
    expect(differences.locator("thead")).to_contain_text(run_name(RUNS))
    # run 1 computes one step, run 150 three: kernel time three times as long
    kernel = differences.get_by_role("row", name=re.compile("Kernel time"))
    expect(kernel).to_contain_text("+200.0%")

    # the run page of the first run: its facts
    page.get_by_role("link", name=run_name(1), exact=True).first.click()
    page.wait_for_url(re.compile(rf"/app/runs/{first}$"))
    facts = page.get_by_label("Run facts")
    expect(facts).to_contain_text("Wall time")
    expect(page.get_by_test_id("wall-time")).to_have_text("500 ms")
    expect(facts).to_contain_text("seeded@e2e")
    expect(page.get_by_test_id("simulated-time")).to_have_text("1.000 s")


def test_three_runs_compare_on_one_axis_with_a_table_of_differences_in_percent(
    page: Any, history: list[int]
) -> None:
    page.goto("/app/runs")
    page.get_by_label("Search runs").fill("History run 00")
    page.get_by_role("button", name="Search", exact=True).click()
    expect(page.get_by_test_id("page-status")).to_contain_text("9 rows")
    for run_id in history[:3]:  # one, two and three steps
        tick(page, run_id)
    page.get_by_role("button", name="Compare the 3 selected").click()
    page.wait_for_url(re.compile(r"/app/compare\?runs="))
    expect(page.get_by_role("heading", name="Compare 3 runs")).to_be_visible()

    differences = page.get_by_role("table", name="Differences between the runs")
    kernel = differences.get_by_role("row", name=re.compile("Kernel time"))
    cells = kernel.locator("td")
    expect(cells).to_have_count(3)
    expect(cells.nth(0)).to_have_text("2.000 s")
    expect(cells.nth(1)).to_have_text("4.000 s (+100.0%)")
    expect(cells.nth(2)).to_have_text("6.000 s (+200.0%)")
    energy = differences.get_by_role("row", name=re.compile("Energy, total"))
    expect(energy.locator("td").nth(2)).to_contain_text("%")

    # one time axis: every timeline ends at the longest run's end
    timelines = page.locator(".compare-timelines figure svg")
    expect(timelines).to_have_count(3)
    labels = timelines.evaluate_all("svgs => svgs.map(s => s.getAttribute('aria-label'))")
    assert len(set(labels)) == 1 and " over 3.000 s;" in labels[0], labels
    ticks = timelines.evaluate_all(
        "svgs => svgs.map(s => [...s.querySelectorAll('text')].map(t => t.textContent))"
    )
    assert ticks[0] == ticks[1] == ticks[2]  # the same ticks, though runs last 1, 2 and 3 s
    expect(
        page.get_by_role("heading", name=re.compile(r"Timelines on one axis, 0 to 3\.000 s"))
    ).to_be_visible()
    screenshot(page, "24-compare-three")


def test_back_returns_to_the_page_filters_and_search_and_a_run_is_found_by_its_id(
    page: Any, history: list[int]
) -> None:
    first = history[0]
    page.goto("/app/runs")
    status = page.get_by_test_id("page-status")
    page.get_by_label("Search runs").fill("History run")
    page.get_by_role("button", name="Search", exact=True).click()
    expect(status).to_contain_text(f"{RUNS} rows")
    page.get_by_label("Status", exact=True).select_option("succeeded")
    expect(page).to_have_url(re.compile(r"status=succeeded"))
    expect(status).to_contain_text(f"{RUNS} rows")
    page.get_by_role("navigation", name="Runs pages").get_by_role(
        "button", name="Last page"
    ).click()
    last_page = f"Page {-(-RUNS // 50)} of {-(-RUNS // 50)}"
    expect(status).to_contain_text(last_page)
    assert "search=History+run" in page.url and "status=succeeded" in page.url

    # the run page and Back: the same page of the same search
    page.get_by_role("link", name=run_name(1), exact=True).click()
    page.wait_for_url(re.compile(rf"/app/runs/{first}$"))
    page.go_back()
    expect(status).to_contain_text(last_page)
    expect(page.get_by_label("Search runs")).to_have_value("History run")
    expect(page.get_by_label("Status", exact=True)).to_have_value("succeeded")
    expect(runs_table(page).get_by_role("link", name=run_name(1), exact=True)).to_be_visible()

    # the id as the list writes it finds that run alone, and the row's own words find it
    for words in (f"#{first}", f"{run_name(1)} #{first}"):
        page.get_by_label("Search runs").fill(words)
        page.get_by_role("button", name="Search", exact=True).click()
        expect(status).to_contain_text("Page 1 of 1 · 1 row")
        expect(runs_table(page).get_by_role("link", name=run_name(1), exact=True)).to_be_visible()
    page.go_back()
    expect(page.get_by_label("Search runs")).to_have_value(f"#{first}")
    page.go_back()
    expect(page.get_by_label("Search runs")).to_have_value("History run")
    expect(status).to_contain_text(last_page)

    # an address past the end of the list (a link kept while runs were deleted) says so
    page.goto("/app/runs?search=History+run&page=99")
    past = page.get_by_test_id("past-the-end")
    expect(past).to_contain_text("Page 99 is past the end of this list.")
    past.get_by_role("button", name="First page").click()
    expect(status).to_contain_text(f"Page 1 of {-(-RUNS // 50)}")
    expect(past).to_have_count(0)
