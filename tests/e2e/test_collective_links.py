"""Issue 40's question in the browser: on a DGX H100 cluster picked from the built-in system
models, an allreduce of 4 GB, ring versus tree; each run page shows the call's algorithm and
bus bandwidth, the run's time and its links' utilisation over time and in a table.

The 4-node cluster (32 GPUs) keeps the two runs short enough for a test, the 32-node one being
the same system model eight times wider (docs/topologies.md); so do pieces of 64 MiB (`chunk`)
instead of the default 64 pieces a message: on this system the answers differ by under 3 %
(ring 0.167 s and 49.0 GB/s busbw against 0.156 s and 50.0 GB/s; tree 0.491 s against
0.489 s, `python -m simulator run` on the snapshot), with a thirtieth of the flows.
"""

from __future__ import annotations

import json
import re
from typing import Any

import pytest
from playwright.sync_api import expect

from tests.e2e.conftest import screenshot
from tests.e2e.helpers import ROOT, create_application

pytestmark = [pytest.mark.e2e, pytest.mark.slow]

CLUSTER = json.loads(
    (ROOT / "examples" / "dgx_h100_cluster_4" / "snapshot.json").read_text(encoding="utf-8")
)["name"]
ALLREDUCE = "sim.allreduce(size, algorithm=algo, chunk=chunk)\n"
SIZE = 4e9
CHUNK = 2**26


def launch(page: Any, application: int, algo: str) -> int:
    page.goto(f"/app/launch?application={application}")
    page.get_by_label("System model").select_option(label=CLUSTER)
    page.get_by_label("Run name").fill(f"allreduce 4 GB, {algo}")
    page.get_by_label("Variable algo").fill(algo)
    page.get_by_label("Processes with label GPU").fill("32")
    page.get_by_role("button", name="Launch", exact=True).click()
    page.wait_for_url(re.compile(r"/app/runs/\d+$"))
    return int(page.url.rsplit("/", 1)[1])


def read_run(page: Any, run: int, algo: str) -> dict[str, Any]:
    """Open the run's page once it succeeded and return what it shows, checked against the
    run's result."""
    page.goto(f"/app/runs/{run}")
    status = page.get_by_test_id("run-status")
    status.filter(has_text=re.compile("succeeded|failed")).wait_for(timeout=120_000)
    expect(status).to_have_text(re.compile("succeeded"))
    result = page.evaluate(f"fetch('/api/simulations/{run}/result.json').then(r => r.json())")
    (call,) = result["collectives"]
    assert (call["collective"], call["algorithm"], call["size"]) == ("allreduce", algo, SIZE)

    calls = page.get_by_role("table", name="Collective calls")
    expect(calls.locator("tbody tr")).to_have_count(1)
    expect(calls.locator("tbody tr td").nth(2)).to_have_text(algo)
    busbw = float(page.get_by_test_id("busbw-0").inner_text())
    assert busbw == pytest.approx(call["busbw"] / 1e9, rel=1e-3)

    # Link utilisation over time under the Gantt: the busiest link first, its row's cells
    # shaded by its series; the table lists every link that carried data.
    chart = page.get_by_role("figure", name="Link utilisation over time")
    chart.scroll_into_view_if_needed()
    rows = chart.locator("[data-testid^='link-row-']")
    carried = [link for link in result["links"] if link["bytes"] > 0]
    expect(rows).to_have_count(min(24, len(carried)))
    busiest = max(carried, key=lambda link: link["mean_utilisation"])
    first = page.get_by_test_id("link-row-0")
    assert float(first.get_attribute("data-mean")) == busiest["mean_utilisation"]
    assert first.locator("rect[fill-opacity]").count() == sum(
        u > 0 for u in busiest["utilisation_series"]
    )
    links = page.get_by_role("table", name="Links")
    expect(links.get_by_text(busiest["link"], exact=True)).to_be_visible()
    mean = page.get_by_test_id("link-mean-0").inner_text()
    assert mean == f"{100 * busiest['mean_utilisation']:.1f}%"
    screenshot(page, f"allreduce-4gb-{algo}")
    return {
        "time_s": result["overall_time_s"],
        "time_text": page.get_by_test_id("overall-time").inner_text(),
        "busbw": busbw,
        "peak": busiest["peak_utilisation"],
    }


def test_allreduce_of_4_gb_ring_versus_tree_on_a_dgx_h100_cluster(page: Any) -> None:
    application = create_application(
        page,
        "Allreduce, ring versus tree",
        ALLREDUCE,
        [("size", "float", str(SIZE)), ("algo", "str", "ring"), ("chunk", "float", str(CHUNK))],
    )
    # The built-in system model, with its flow network's settings in the editor.
    systems = page.evaluate("fetch('/api/systems/?page_size=200').then(r => r.json())")
    (listed,) = [s for s in systems["results"] if s["name"] == CLUSTER]
    system = page.evaluate(f"fetch('/api/systems/{listed['id']}/').then(r => r.json())")
    page.goto(f"/app/systems/{listed['id']}")
    expect(page.get_by_label("Network model")).to_have_value("")
    nic = next(n for n in system["graph"]["nodes"] if n["id"] == "nic")
    assert nic["sharing"] == "full-duplex"

    runs = {algo: launch(page, application, algo) for algo in ("ring", "tree")}
    shown = {algo: read_run(page, run, algo) for algo, run in runs.items()}

    # The ring moves 2(p-1)/p of the data over every link at once; the tree sends the whole
    # vector up and down a tree, its links' bandwidth shared by fewer transfers: the ring is
    # faster and its bus bandwidth higher.
    assert shown["ring"]["time_s"] < shown["tree"]["time_s"]
    assert shown["ring"]["busbw"] > shown["tree"]["busbw"]
    assert shown["ring"]["peak"] == pytest.approx(1.0, abs=1e-6)
