"""The memory hierarchy in the browser: memory paths in the system editor, cache and fabric
records in the hardware database, and a run's "Memory hierarchy" figures with their CSV.

The system is the seeded M2S-CGM processor (examples/m2s_cgm_memory): CPU cores -> L1 -> L2
-(ring)-> shared L3 (MESI directory) -(ring)-> DRAM, and GPU -> per-CU L1 -> L2 -(ring)-> L3.
"""

from __future__ import annotations

import csv
import io
import json
import re
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import expect

from hwdb.models import ComponentType
from tests.e2e.conftest import screenshot
from tests.e2e.helpers import ROOT, create_application

pytestmark = pytest.mark.e2e

EXAMPLE = ROOT / "examples" / "m2s_cgm_memory"
M2S_CGM = json.loads((EXAMPLE / "snapshot.json").read_text(encoding="utf-8"))["name"]
M2S_CGM_APP = (EXAMPLE / "app.py").read_text(encoding="utf-8")
M2S_CGM_VARIABLES = [
    ("workload", "str", "streaming"),
    ("size_kb", "int", "512"),
    ("rounds", "int", "2"),
    ("flush", "int", "0"),
]
MEMORY_PATHS = 7  # cpu, cpu_l1, cpu_l2, gpu, gpu_l1, gpu_l2 and llc name a next level


def open_copy_of_m2s_cgm(page: Any) -> str:
    """Open the built-in M2S-CGM system, clone it and return the copy's id."""
    page.goto("/app/systems")
    page.get_by_role("link", name=M2S_CGM, exact=True).click()
    page.get_by_role("button", name="Clone").click()
    page.get_by_role("heading", name=f"{M2S_CGM} (copy)").wait_for()
    return page.url.rsplit("/", 1)[1]


def select_node(page: Any, name: str) -> Any:
    """Select the node called `name` and return the properties panel."""
    page.get_by_label("Select node").select_option(label=name)
    return page.get_by_role("complementary", name="Properties")


def graph_node(page: Any, system: str, name: str) -> dict[str, Any]:
    graph = page.evaluate(f"fetch('/api/systems/{system}/').then(r => r.json())")["graph"]
    return next(node for node in graph["nodes"] if node["name"] == name)


def launch_m2s_cgm(page: Any, *, workload: str, size_kb: int, rounds: int, flush: int) -> str:
    """Launch the example application on the seeded system; return the run's id once it
    succeeded on the e2e worker."""
    application = create_application(
        page, f"M2S-CGM memory ({workload})", M2S_CGM_APP, M2S_CGM_VARIABLES
    )
    page.goto(f"/app/launch?application={application}")
    page.get_by_label("System model").select_option(label=M2S_CGM)
    page.get_by_label("Processes with label CPU").fill("8")
    page.get_by_label("Processes with label GPU").fill("1")
    for variable, value in (
        ("workload", workload),
        ("size_kb", size_kb),
        ("rounds", rounds),
        ("flush", flush),
    ):
        page.get_by_label(f"Variable {variable}").fill(str(value))
    page.get_by_role("button", name="Launch", exact=True).click()
    page.wait_for_url(re.compile(r"/app/runs/\d+$"))
    page.get_by_test_id("run-status").filter(has_text="succeeded").wait_for(timeout=120_000)
    return page.url.rsplit("/", 1)[1]


def test_the_seeded_memory_paths_show_and_a_changed_coherence_is_saved(page: Any) -> None:
    page.goto("/app/systems")
    page.get_by_role("link", name=M2S_CGM, exact=True).click()
    # Each memory path is a dashed arrow to its next level, labelled with the fabric crossed.
    # The canvas draws edges once its nodes are measured, which takes a while on a busy CI
    # machine, hence the longer wait.
    expect(page.locator(".react-flow__node").filter(has_text="Shared L3")).to_be_visible(
        timeout=20_000
    )
    expect(page.locator(".react-flow__edge.memory-edge")).to_have_count(
        MEMORY_PATHS, timeout=20_000
    )
    expect(
        page.locator(".memory-edge .react-flow__edge-text").filter(has_text="Ring")
    ).to_have_count(3)
    expect(page.locator(".hw-node").filter(has_text="cache · MESI directory")).to_have_count(1)
    panel = select_node(page, "Shared L3")
    expect(panel.get_by_label("Next memory level")).to_have_value("dram")
    expect(panel.get_by_label("Via fabric")).to_have_value("ring")
    expect(panel.get_by_label("Coherence")).to_have_value("mesi")
    expect(panel.get_by_label("Next memory level")).to_be_disabled()  # built-in: read-only
    expect(panel.get_by_label("Topology")).to_have_count(0)
    page.get_by_role("button", name="Done").click()
    panel = select_node(page, "CPU cores")
    expect(panel.get_by_label("Next memory level")).to_have_value("cpu_l1")
    expect(panel.get_by_label("Via fabric")).to_have_value("")
    expect(panel.get_by_label("Coherence")).to_have_count(0)
    page.get_by_role("button", name="Done").click()
    panel = select_node(page, "Ring")
    expect(panel.get_by_label("Topology")).to_have_value("ring")
    expect(panel.get_by_label("Next memory level")).to_have_count(0)
    screenshot(page, "22-memory-paths")

    system = open_copy_of_m2s_cgm(page)
    panel = select_node(page, "Shared L3")
    panel.get_by_label("Coherence").select_option("none")
    expect(page.locator(".hw-node").filter(has_text="cache · MESI directory")).to_have_count(0)
    page.get_by_role("button", name="Save", exact=True).click()
    page.get_by_text("Saved.").wait_for()
    page.reload()
    panel = select_node(page, "Shared L3")
    expect(panel.get_by_label("Coherence")).to_have_value("none")
    expect(panel.get_by_label("Next memory level")).to_have_value("dram")
    llc = graph_node(page, system, "Shared L3")
    assert "coherence" not in llc and (llc["next"], llc["via"]) == ("dram", "ring")
    assert graph_node(page, system, "Ring")["topology"] == "ring"


def test_a_cache_without_a_next_level_shows_the_error_beside_the_field(page: Any) -> None:
    system = open_copy_of_m2s_cgm(page)
    panel = select_node(page, "Shared L3")
    # The copy's canvas draws its edges once its nodes are measured: slow on a busy CI machine.
    edges = page.locator(".react-flow__edge.memory-edge")
    expect(edges).to_have_count(MEMORY_PATHS, timeout=20_000)
    panel.get_by_label("Next memory level").select_option("")
    expect(panel.get_by_label("Via fabric")).to_have_value("")  # no fabric without a next level
    expect(edges).to_have_count(MEMORY_PATHS - 1)
    page.get_by_role("button", name="Save", exact=True).click()
    field = panel.locator("label.field.invalid").filter(has=page.get_by_label("Next memory level"))
    expect(field.locator(".field-error")).to_contain_text(
        "CPU cores -> CPU L1D -> CPU L2 -> Shared L3 ends at cache 'Shared L3', which has no next "
        "level; end it at a MEMORY node."
    )
    expect(panel.get_by_label("Next memory level")).to_have_attribute("aria-invalid", "true")
    expect(page.locator(".hw-node.has-error").filter(has_text="Shared L3")).to_have_count(1)
    assert graph_node(page, system, "Shared L3")["next"] == "dram"  # nothing was saved

    panel.get_by_label("Next memory level").select_option(label="DRAM")
    page.get_by_role("button", name="Save", exact=True).click()
    page.get_by_text("Saved.").wait_for()
    expect(panel.locator(".field-error")).to_have_count(0)
    llc = graph_node(page, system, "Shared L3")
    assert (llc["next"], llc["coherence"], "via" in llc) == ("dram", "mesi", False)


def test_a_run_shows_its_memory_hierarchy_and_downloads_it_as_csv(page: Any) -> None:
    run = launch_m2s_cgm(page, workload="collaborative", size_kb=256, rounds=1, flush=0)
    result = page.evaluate(f"fetch('/api/simulations/{run}/result.json').then(r => r.json())")
    memory = result["memory"]
    llc = next(level for level in memory["levels"] if level["node"] == "llc")
    assert llc["hit_ratio"] > 0  # the GPU reads in the L3 what the CPU cores wrote

    levels = page.get_by_role("table", name="Memory levels")
    expect(levels.locator("tbody tr")).to_have_count(len(memory["levels"]))
    expect(page.get_by_label(re.compile("Show idle instances"))).to_have_count(0)
    expect(page.get_by_test_id("hit-ratio-llc-0")).to_have_text(f"{100 * llc['hit_ratio']:.1f}%")
    expect(levels.locator("tr[data-node='llc'] td").first).to_have_text("Shared L3")
    expect(page.get_by_test_id("hit-ratio-dram-0")).to_have_text("—")
    fabrics = page.get_by_role("table", name="Memory fabrics")
    expect(fabrics.locator("tr[data-node='ring'] td").nth(2)).to_have_text("ring")
    expect(page.get_by_test_id("coherence-protocol")).to_contain_text("MESI directory protocol")
    messages = memory["coherence"]["messages"]
    assert messages["GetX"] > 0
    for message, count in messages.items():
        expect(page.get_by_test_id(f"coherence-{message}")).to_have_text(f"{count:,}")
    # Each sim.memoryAccess is a row of the phases table, its path named by the nodes' names.
    phases = page.get_by_role("table", name="Kernel and transfer times")
    first_write = phases.locator("tbody tr").filter(has_text="CPU[0]").first
    expect(first_write).to_contain_text("memory access")
    expect(first_write).to_contain_text(
        "trace: 512 accesses via CPU L1D → CPU L2 → Shared L3 → DRAM; GetX 512"
    )
    processes = page.get_by_role("table", name="Processes")
    expect(processes.locator("thead")).to_contain_text("Memory")
    # The shared L3, the DRAM, the ring and the MESI messages in view.
    levels.locator("tr[data-node='gpu_l1']").last.scroll_into_view_if_needed()
    page.evaluate(
        "window.scrollBy(0, document.querySelector(\"tr[data-node='gpu_l1']\")"
        ".getBoundingClientRect().top - 80)"
    )
    screenshot(page, "23-memory-hierarchy")

    with page.expect_download() as download_info:
        page.get_by_role("link", name="Download memory CSV").click()
    assert download_info.value.suggested_filename == f"simulation-{run}-memory.csv"
    text = Path(download_info.value.path()).read_text(encoding="utf-8")
    rows = list(csv.DictReader(io.StringIO(text)))
    (llc_row,) = (row for row in rows if row["node"] == "llc")
    assert (llc_row["name"], llc_row["type"], float(llc_row["hit_ratio"])) == (
        "Shared L3",
        "CACHE",
        llc["hit_ratio"],
    )
    coherence = {row["name"]: int(row["messages"]) for row in rows if row["type"] == "COHERENCE"}
    assert coherence == messages


def test_idle_cache_instances_start_hidden_when_there_are_many(page: Any) -> None:
    run = launch_m2s_cgm(page, workload="streaming", size_kb=64, rounds=1, flush=0)
    result = page.evaluate(f"fetch('/api/simulations/{run}/result.json').then(r => r.json())")
    levels = result["memory"]["levels"]
    idle = [level for level in levels if not level["accesses"]]
    assert len(idle) == 16  # the CPU cores' L1s and L2s: the GPU streams alone
    rows = page.get_by_role("table", name="Memory levels").locator("tbody tr")
    expect(rows).to_have_count(len(levels) - len(idle))
    toggle = page.get_by_label(f"Show idle instances ({len(idle)} of {len(levels)} saw no access)")
    expect(toggle).not_to_be_checked()
    toggle.check()
    expect(rows).to_have_count(len(levels))
    expect(page.get_by_test_id("coherence-protocol")).to_contain_text("MESI directory protocol")


def test_the_hardware_page_offers_caches_and_fabrics_and_names_a_bad_geometry(page: Any) -> None:
    options = page.get_by_label("Type", exact=True).locator("option").all_inner_texts()
    assert sorted(options[1:]) == sorted(ComponentType.values)  # the first is "any"
    page.get_by_label("Type", exact=True).select_option("CACHE")
    rows = page.get_by_role("table", name="Hardware components").locator("tbody tr")
    expect(rows.filter(has_text="M2S-CGM shared L3 (i7-4790K model, 4 slices)")).to_have_count(1)
    expect(rows.filter(has_text="FABRIC")).to_have_count(0)

    page.get_by_role("button", name="New component").click()
    # The label wraps the select, so its name ends with the chosen type: "Type GPU".
    page.get_by_role("combobox", name=re.compile(r"^Type")).select_option("CACHE")
    # the type's hint is the first field's (the recommended model has one too)
    expect(page.locator(".field .hint").first).to_contain_text(
        "A cache needs size (B), ways, lineSize"
    )
    page.get_by_label("Name", exact=True).fill("Odd cache e2e")
    attributes = [("size", "1000"), ("ways", "3"), ("lineSize", "64"), ("latencyCycles", "1")]
    attributes.append(("clock", "1000"))
    for index, (key, value) in enumerate(attributes):
        page.get_by_role("button", name="Add attribute").click()
        page.get_by_label(f"Attribute {index + 1} key").fill(key)
        page.get_by_label(f"Attribute {index + 1} value").fill(value)
    page.get_by_role("button", name="Save", exact=True).click()
    expect(page.locator("[data-error-path='attributes[1].value']")).to_have_text(
        "size / (ways x lineSize) must be a whole number of sets: 1000 B / (3 x 64 B) = 5.20833."
    )
    expect(page.get_by_label("Attribute 2 value")).to_have_attribute("aria-invalid", "true")
    page.get_by_label("Attribute 1 value").fill("12288")  # 64 sets of 3 ways
    page.get_by_role("button", name="Save", exact=True).click()
    page.wait_for_url(re.compile(r"/app/hardware/\d+$"))
