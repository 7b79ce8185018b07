"""The system-model editor: drag from the palette, groups that nest, save, snapshot export."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import expect

from tests.e2e.conftest import screenshot
from tests.e2e.helpers import add_hardware, create_listing5

pytestmark = pytest.mark.e2e


def test_groups_nest_a_cluster_holds_a_machine_that_holds_a_gpu(page: Any) -> None:
    page.goto("/app/systems/new")
    page.get_by_label("System model name").fill("nested groups")
    page.get_by_role("button", name="Add group").click()
    page.get_by_label("Node name").fill("Cluster")
    page.get_by_role("button", name="Add group").click()  # goes into the selected group
    page.get_by_label("Node name").fill("Machine")
    page.get_by_label("Search the palette").fill("H100 SXM5")
    page.get_by_role("button", name="Add H100 SXM5 80GB", exact=True).click()
    page.get_by_label("Node count").fill("8")
    page.get_by_label("New label").fill("GPU")
    page.get_by_role("button", name="Add label").click()
    page.get_by_label("Multiplicity of label GPU").fill("2")
    page.get_by_role("button", name="Save", exact=True).click()
    page.wait_for_url(re.compile(r"/app/systems/\d+$"))
    system = page.url.rsplit("/", 1)[1]
    graph = page.evaluate(f"fetch('/api/systems/{system}/').then(r => r.json())")["graph"]
    by_name = {node["name"]: node for node in graph["nodes"]}
    assert by_name["Machine"]["parent"] == by_name["Cluster"]["id"]
    assert by_name["H100 SXM5 80GB"]["parent"] == by_name["Machine"]["id"]
    assert by_name["H100 SXM5 80GB"]["count"] == 8
    assert by_name["H100 SXM5 80GB"]["labels"] == {"GPU": 2}
    assert by_name["Cluster"]["group"] is True

    with page.expect_download() as download_info:
        page.get_by_role("button", name="Export snapshot JSON").click()
    snapshot = json.loads(Path(download_info.value.path()).read_text())
    assert {node["name"] for node in snapshot["nodes"]} == {"Cluster", "Machine", "H100 SXM5 80GB"}
    assert [hw["name"] for hw in snapshot["hardware"].values()] == ["H100 SXM5 80GB"]


def test_hardware_dragged_from_the_palette_lands_on_the_canvas(page: Any) -> None:
    page.goto("/app/systems/new")
    page.get_by_label("Search the palette").fill("AMD EPYC")
    item = page.locator(".palette-item").filter(has_text="AMD EPYC 9654")
    item.drag_to(page.locator(".react-flow__pane"))
    node = page.locator(".hw-node").filter(has_text="AMD EPYC 9654")
    node.wait_for()
    assert page.get_by_label("Node name").input_value() == "AMD EPYC 9654"
    assert "unsaved" in page.get_by_role("heading", level=1).inner_text()
    screenshot(page, "18-system-drag")


def test_the_main_screens_are_reachable_with_the_keyboard(page: Any) -> None:
    page.keyboard.press("Tab")
    assert page.evaluate("document.activeElement.textContent") == "Skip to content"
    for _ in range(12):
        page.keyboard.press("Tab")
        if page.evaluate("document.activeElement.textContent") == "System models":
            break
    page.keyboard.press("Enter")
    page.get_by_role("heading", name="System models").wait_for()
    assert page.url.endswith("/app/systems")


def test_a_gpu_node_can_simulate_its_kernels_block_by_block(page: Any) -> None:
    application = create_listing5(page, "saxpy2 (detailed kernels)")
    page.goto("/app/systems/new")
    page.get_by_label("System model name").fill("GTX 970 testbed (detailed kernels)")
    page.get_by_role("button", name="Add group").click()
    page.get_by_label("Node name").fill("Testbed")
    add_hardware(page, "Intel Core i7-4790K", name="CPU", label="CPU")
    expect(page.get_by_label("Kernel simulation")).to_have_count(0)  # a CPU has no kernels
    add_hardware(page, "PCIe 3.0 16x", name="PCIe", model="PCIe link", connect_to="CPU")
    add_hardware(
        page, "GeForce GTX 970", name="GPU", model="Volkov GPU", label="GPU", connect_to="PCIe"
    )
    page.get_by_label("Kernel simulation").select_option("detailed")
    page.get_by_label("Kernel worker processes").fill("2")
    expect(page.locator(".hw-node").filter(has_text="kernels: block by block")).to_have_count(1)
    page.get_by_role("button", name="Done").click()
    page.get_by_role("button", name="Save", exact=True).click()
    page.wait_for_url(re.compile(r"/app/systems/\d+$"))
    system = page.url.rsplit("/", 1)[1]
    graph = page.evaluate(f"fetch('/api/systems/{system}/').then(r => r.json())")["graph"]
    gpu = next(node for node in graph["nodes"] if node["name"] == "GPU")
    assert (gpu["kernelMode"], gpu["kernelWorkers"]) == ("detailed", 2)

    page.goto(f"/app/launch?system={system}&application={application}")
    page.get_by_label("Variable N").fill("1000000")
    page.get_by_label("Variable computeIntensity").fill("1")
    page.get_by_label("Queue").select_option("gajgerqueue")
    page.get_by_role("button", name="Launch", exact=True).click()
    page.wait_for_url(re.compile(r"/app/runs/\d+$"))
    page.get_by_test_id("run-status").filter(has_text="succeeded").wait_for(timeout=120_000)
    table = page.get_by_role("table", name="Kernel and transfer times")
    bound = table.locator("tbody tr").filter(has_text="kernel").locator("[data-testid^=bound-]")
    expect(bound).to_contain_text("global memory, 64 warps/SM, 38 waves; block by block")
    # and as a chart: a bar of busy time per SM of the GTX 970 (13), the waves and the tail
    chart = page.get_by_role("figure", name=re.compile("^Detailed kernel of"))
    expect(chart).to_have_count(1)
    expect(chart.locator("rect.sm-busy")).to_have_count(13)
    expect(chart.locator("figcaption")).to_contain_text(
        re.compile(r"38 waves of 104 blocks, the last one a tail of \d+ blocks?; 13 SMs busy")
    )
    screenshot(page, "21-detailed-kernel")


@pytest.mark.parametrize(
    ("mode", "bound"),
    [
        (
            "waves",
            r"^global memory, 64 warps/SM, 38 waves; 104 blocks per wave × [\d.]+ µs, formula",
        ),
        (
            "petri",
            r"^Petri net, \d+ steps \(\d+ idle\), 64 warps/SM, 38 waves; 104 blocks per wave",
        ),
    ],
)
def test_a_gpu_node_can_step_its_kernels_by_waves(page: Any, mode: str, bound: str) -> None:
    application = create_listing5(page, f"saxpy2 ({mode} kernels)")
    page.goto("/app/systems/new")
    page.get_by_label("System model name").fill(f"GTX 970 testbed ({mode} kernels)")
    page.get_by_role("button", name="Add group").click()
    page.get_by_label("Node name").fill("Testbed")
    add_hardware(page, "Intel Core i7-4790K", name="CPU", label="CPU")
    add_hardware(page, "PCIe 3.0 16x", name="PCIe", model="PCIe link", connect_to="CPU")
    add_hardware(
        page, "GeForce GTX 970", name="GPU", model="Volkov GPU", label="GPU", connect_to="PCIe"
    )
    page.get_by_label("Kernel simulation").select_option(mode)
    expect(page.locator(".field .hint").filter(has_text="docs/kernel-modes.md")).to_have_count(1)
    expect(page.get_by_label("Kernel worker processes")).to_have_count(0)
    page.get_by_role("button", name="Done").click()
    page.get_by_role("button", name="Save", exact=True).click()
    page.wait_for_url(re.compile(r"/app/systems/\d+$"))
    system = page.url.rsplit("/", 1)[1]
    graph = page.evaluate(f"fetch('/api/systems/{system}/').then(r => r.json())")["graph"]
    gpu = next(node for node in graph["nodes"] if node["name"] == "GPU")
    assert gpu["kernelMode"] == mode and "kernelWorkers" not in gpu

    page.goto(f"/app/launch?system={system}&application={application}")
    page.get_by_label("Variable N").fill("1000000")
    page.get_by_label("Variable computeIntensity").fill("1")
    page.get_by_label("Queue").select_option("gajgerqueue")
    page.get_by_role("button", name="Launch", exact=True).click()
    page.wait_for_url(re.compile(r"/app/runs/\d+$"))
    page.get_by_test_id("run-status").filter(has_text="succeeded").wait_for(timeout=120_000)
    table = page.get_by_role("table", name="Kernel and transfer times")
    cell = table.locator("tbody tr").filter(has_text="kernel").locator("[data-testid^=bound-]")
    expect(cell).to_have_text(re.compile(bound))


def test_a_fat_tree_template_is_inserted_with_its_expanded_size_and_saved(page: Any) -> None:
    page.goto("/app/systems/new")
    page.get_by_label("System model name").fill("fat-tree template")
    page.get_by_label("Search the palette").fill("ConnectX-7")
    page.get_by_role("button", name="Add InfiniBand NDR 400 Gb/s (ConnectX-7)", exact=True).click()
    page.get_by_label("Template down").fill("8, 4")
    page.get_by_label("Template up").fill("1, 8")
    expect(page.get_by_label("Expanded size")).to_have_text(
        "Expands to 32 endpoints; 12 switch or link instances in 2 nodes; 64 links."
    )
    nic = page.locator(".hw-node").filter(has_text="ConnectX-7").first
    nic.wait_for()
    endpoints = page.get_by_label("Template endpoints")
    endpoints.select_option(label="InfiniBand NDR 400 Gb/s (ConnectX-7)")
    switch = "NVIDIA Quantum-2 QM9700 NDR switch (one 400 Gb/s port)"
    page.get_by_label("Level 1 switch hardware").select_option(label=switch)
    page.get_by_label("Level 2 switch hardware").select_option(label=switch)
    page.get_by_role("button", name="Insert template").click()
    page.get_by_role("button", name="Save", exact=True).click()
    page.wait_for_url(re.compile(r"/app/systems/\d+$"))
    system = page.url.rsplit("/", 1)[1]
    graph = page.evaluate(f"fetch('/api/systems/{system}/').then(r => r.json())")["graph"]
    counts = {node["id"]: node["count"] for node in graph["nodes"]}
    (template,) = graph["topologies"]
    assert template["kind"] == "fatTree" and template["down"] == [8, 4]
    assert [counts[node] for node in template["switches"]] == [4, 8]
    assert counts[template["endpoints"]] == 32
    expect(page.get_by_label("Templates in this system")).to_contain_text(
        "Fat-tree (k levels) over"
    )
