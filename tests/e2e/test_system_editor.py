"""The system-model editor: drag from the palette, groups that nest, save, snapshot export."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from tests.e2e.conftest import screenshot

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
