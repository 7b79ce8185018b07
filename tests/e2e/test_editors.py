"""The editors for real use: messages that name nodes, placement without piles, auto-layout,
link figures on edges, a hardware picker found by name, the keyboard, and a 390 px screen."""

from __future__ import annotations

import re
from typing import Any

import pytest
from playwright.sync_api import expect

from tests.e2e.conftest import DEMO_USER, screenshot
from tests.e2e.helpers import add_hardware, create_listing5

pytestmark = pytest.mark.e2e

NODE_BOXES = """() => [...document.querySelectorAll('.react-flow__node')].map((el) => {
  const r = el.getBoundingClientRect();
  return {id: el.dataset.id, x: r.x, y: r.y, w: r.width, h: r.height};
})"""


def overlapping(boxes: list[dict[str, Any]]) -> list[tuple[str, str]]:
    """Return the pairs of boxes that overlap."""
    return [
        (a["id"], b["id"])
        for i, a in enumerate(boxes)
        for b in boxes[i + 1 :]
        if a["x"] < b["x"] + b["w"]
        and b["x"] < a["x"] + a["w"]
        and a["y"] < b["y"] + b["h"]
        and b["y"] < a["y"] + a["h"]
    ]


def host_link_gpu(page: Any, name: str) -> None:
    """Start a system of a CPU, a PCIe link and a GPU at the top level, joined in a chain."""
    page.goto("/app/systems/new")
    page.get_by_label("System model name").fill(name)
    add_hardware(page, "Intel Core i7-4790K", name="Host CPU", label="CPU")
    add_hardware(page, "PCIe 3.0 16x", name="PCIe link", model="PCIe link", connect_to="Host CPU")
    add_hardware(
        page, "GeForce GTX 970", name="GPU", model="Volkov GPU", label="GPU", connect_to="PCIe link"
    )


def test_a_graph_message_names_the_nodes_by_their_names(page: Any) -> None:
    host_link_gpu(page, "duplicate edge")
    page.get_by_role("button", name="Done").click()
    page.get_by_label("Select node").select_option(label="Host CPU")
    page.get_by_label("Connect to node").select_option(label="PCIe link")
    page.get_by_role("button", name="Connect", exact=True).click()
    page.get_by_role("button", name="Save", exact=True).click()
    message = page.get_by_text("Duplicate edge between 'Host CPU' and 'PCIe link'.")
    expect(message).to_be_visible()
    ids = page.evaluate(
        "[...document.querySelectorAll('.react-flow__node')].map(n => n.dataset.id)"
    )
    shown = page.locator(".error-box").inner_text()
    assert not [node_id for node_id in ids if re.search(rf"\b{node_id}\b", shown)], shown


def test_new_nodes_do_not_overlap_and_auto_layout_separates_a_pile(page: Any) -> None:
    page.goto("/app/systems/new")
    page.get_by_label("System model name").fill("no piles")
    for component in ("AMD EPYC 9654", "GeForce GTX 970", "PCIe 3.0 16x", "H100 SXM5 80GB"):
        add_hardware(page, component, name=component)
    page.get_by_role("button", name="Add group").click()
    page.get_by_role("button", name="Done").click()
    boxes = page.evaluate(NODE_BOXES)
    assert len(boxes) == 5
    assert overlapping(boxes) == []

    host_link_gpu(page, "piled")
    page.get_by_role("button", name="Save", exact=True).click()
    page.wait_for_url(re.compile(r"/app/systems/\d+$"))
    system = page.url.rsplit("/", 1)[1]
    # Pile every node on one point, as the editor used to, and open the system again.
    page.evaluate(
        """async (id) => {
          const token = document.querySelector('meta[name="csrf-token"]').content;
          const record = await (await fetch(`/api/systems/${id}/`)).json();
          record.graph.nodes.forEach((n) => { n.ui = {x: 40, y: 40}; });
          const response = await fetch(`/api/systems/${id}/`, {
            method: 'PATCH',
            headers: {'Content-Type': 'application/json', 'X-CSRFToken': token},
            body: JSON.stringify({graph: record.graph}),
          });
          if (!response.ok) throw new Error(await response.text());
        }""",
        system,
    )
    page.reload()
    page.locator(".hw-node").first.wait_for()
    assert len(overlapping(page.evaluate(NODE_BOXES))) == 3
    page.get_by_role("button", name="Auto-layout").click()
    page.wait_for_function(
        """() => { const xs = [...document.querySelectorAll('.react-flow__node')]
                     .map((el) => Math.round(el.getBoundingClientRect().x));
                   return new Set(xs).size === 3; }"""
    )
    boxes = page.evaluate(NODE_BOXES)
    assert overlapping(boxes) == []
    by_name = {
        name: page.locator(".react-flow__node").filter(has_text=name).bounding_box()
        for name in ("Host CPU", "PCIe link", "GPU")
    }
    # Layers along the chain: CPU, then the link, then the GPU.
    assert by_name["Host CPU"]["x"] < by_name["PCIe link"]["x"] < by_name["GPU"]["x"]
    screenshot(page, "30-auto-layout")


def test_an_edge_through_a_link_shows_its_bandwidth_and_latency(page: Any) -> None:
    host_link_gpu(page, "link figures")
    labels = page.locator(".react-flow__edge.link-edge .react-flow__edge-text")
    expect(labels).to_have_count(2)
    # PCIe 3.0 16x: bandwidth 15.8e9 B/s, startup 3.9687 us host to device.
    expect(labels.first).to_have_text("15.8 GB/s · 3.969 µs")


def test_typing_a_hardware_name_in_the_picker_finds_it_and_keeps_the_focus(page: Any) -> None:
    page.goto("/app/systems/new")
    add_hardware(page, "Intel Core i7-4790K", name="Accelerator")
    picker = page.get_by_role("combobox", name="Node hardware")
    picker.focus()
    page.keyboard.type("GTX 970")
    option = page.get_by_role("option", name=re.compile(r"^GeForce GTX 970\b"))
    expect(option.first).to_be_visible()
    assert page.evaluate("document.activeElement.getAttribute('aria-label')") == "Node hardware"
    page.keyboard.press("Enter")
    expect(picker).to_have_value(re.compile(r"^GeForce GTX 970 \(GPU\)$"))
    assert page.evaluate("document.activeElement.getAttribute('aria-label')") == "Node hardware"
    expect(page.locator(".hw-node").filter(has_text="Accelerator")).to_contain_text(
        "GeForce GTX 970"
    )
    # Picking a node from the list moves the focus into its properties, not back to the page.
    page.get_by_role("button", name="Done").click()
    assert page.evaluate("document.activeElement.getAttribute('aria-label')") == "Select node"
    page.get_by_label("Select node").select_option(label="Accelerator")
    assert page.evaluate("document.activeElement.getAttribute('aria-label')") == "Node name"


def test_at_390_px_the_menu_wraps_and_nothing_overflows(browser: Any, live_studio: str) -> None:
    context = browser.new_context(viewport={"width": 390, "height": 844}, base_url=live_studio)
    context.set_default_timeout(15_000)
    page = context.new_page()
    try:
        page.goto("/accounts/login/")
        page.get_by_label("Username").fill(DEMO_USER[0])
        page.get_by_label("Password").fill(DEMO_USER[1])
        page.get_by_role("button", name="Sign in").click()
        page.get_by_role("heading", name="Hardware database").wait_for()
        tops = page.evaluate(
            "[...document.querySelectorAll('.topbar nav a')]"
            ".map((a) => Math.round(a.getBoundingClientRect().top))"
        )
        assert len(set(tops)) > 1, tops  # the menu takes more than one line
        for path, ready in (
            ("/app/hardware", "Hardware database"),
            ("/app/systems", "System models"),
            ("/app/systems/new", "New system model"),
            ("/app/launch", "Launch a simulation"),
            ("/app/sweeps/new", "New sweep"),
            ("/app/runs", None),
            ("/app/models", "Computational models"),
            ("/app/applications", "Application models"),
            ("/app/sweeps", "Sweeps"),
            ("/app/analyzer", "Kernel analyzer"),
            ("/app/measurements", "Measured against predicted"),
        ):
            page.goto(path)
            if ready:
                page.get_by_role("heading", name=ready).wait_for()
            else:
                page.locator("main h1").first.wait_for()
            # Record names are the user's: a select must not widen the page for a long one.
            page.evaluate(
                "document.querySelectorAll('main select').forEach((s) => "
                "s.add(new Option('A system model with a rather long name, ' .repeat(3))))"
            )
            width = page.evaluate("document.documentElement.scrollWidth")
            wide = page.evaluate(
                "[...document.querySelectorAll('main *')]"
                ".filter((e) => e.getBoundingClientRect().right > 391)"
                ".slice(0, 5).map((e) => e.tagName + '.' + e.className + ' ' +"
                " Math.round(e.getBoundingClientRect().right))"
            )
            assert width <= 390, f"{path} is {width} px wide: {wide}"
        page.goto("/app/systems/new")
        page.get_by_role("heading", name="New system model").wait_for()
        # Every control of the editor is reachable with Tab, and the focus is drawn.
        page.get_by_label("System model name").focus()
        reached = set()
        for _ in range(12):
            page.keyboard.press("Tab")
            reached.add(page.evaluate("document.activeElement.textContent || ''").strip())
        assert {"Auto-layout", "Add"} & reached, reached
        outline = page.evaluate("getComputedStyle(document.activeElement).outlineStyle")
        assert outline != "none"
        screenshot(page, "31-system-editor-390px")
    finally:
        context.close()


def test_a_sweeps_errors_sit_beside_their_fields_without_the_raw_spec_path(page: Any) -> None:
    application = create_listing5(page, "saxpy2 (sweep errors)")
    page.goto(f"/app/sweeps/new?application={application}")
    page.get_by_label("Sweep values of N").fill("1000")
    counts = page.get_by_label(re.compile(r"^Processes with label "))
    counts.first.wait_for()
    label = counts.first.get_attribute("aria-label").removeprefix("Processes with label ")
    counts.first.fill("99999")
    page.get_by_role("button", name="Launch sweep").click()
    beside = page.locator(f"[data-error-path='labels.{label}']")
    expect(beside).to_contain_text(f"asked for 99999 processes of label '{label}'")
    expect(counts.first).to_have_attribute("aria-invalid", "true")
    expect(page.locator(".error-box")).not_to_contain_text("spec")
