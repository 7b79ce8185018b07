"""Steps the end-to-end tests share: application models (Listing 5), the GTX 970 testbed."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
LISTING_5 = (ROOT / "examples" / "merpsys_gtx970" / "app.py").read_text(encoding="utf-8")
EXAMPLE_SYSTEM = json.loads(
    (ROOT / "examples" / "merpsys_gtx970" / "snapshot.json").read_text(encoding="utf-8")
)["name"]
LISTING_5_VARIABLES = [
    ("N", "int", "10000000"),
    ("blockSz", "int", "256"),
    ("computeIntensity", "int", "1"),
    ("occupancy", "int", "64"),
]


def set_code(page: Any, label: str, source: str) -> None:
    """Replace the text of the CodeMirror editor labelled `label` with `source`."""
    editor = page.get_by_label(label, exact=True)
    editor.click()
    page.keyboard.press("Control+a")
    page.keyboard.press("Delete")
    page.keyboard.insert_text(source)


def create_application(
    page: Any, name: str, source: str, variables: list[tuple[str, str, str]]
) -> int:
    """Write an application model (source and (name, type, default) variables) in the
    application model editor, save it and return its id."""
    page.goto("/app/applications/new")
    page.get_by_label("Name", exact=True).fill(name)
    for index, (variable, kind, default) in enumerate(variables):
        if index > 0:
            page.get_by_role("button", name="Add variable").click()
        page.get_by_label(f"Variable {index + 1} name").fill(variable)
        page.get_by_label(f"Variable {index + 1} type").select_option(kind)
        page.get_by_label(f"Variable {index + 1} default").fill(default)
    set_code(page, "Application model source", source)
    page.get_by_role("button", name="Save", exact=True).click()
    page.wait_for_url(re.compile(r"/app/applications/\d+$"))
    return int(page.url.rstrip("/").rsplit("/", 1)[1])


def create_listing5(page: Any, name: str) -> int:
    """Write Listing 5 in the application model editor, save it and return its id."""
    return create_application(page, name, LISTING_5, LISTING_5_VARIABLES)


def add_hardware(
    page: Any,
    component: str,
    *,
    name: str,
    model: str | None = None,
    label: str | None = None,
    connect_to: str | None = None,
) -> None:
    """Add `component` from the palette into the selected group and fill its properties."""
    page.get_by_label("Search the palette").fill(component)
    # The seeded record comes first (examples may hold copies with the same name).
    page.get_by_role("button", name=f"Add {component}", exact=True).first.click()
    page.get_by_label("Node name").fill(name)
    if model:
        page.get_by_label("Node computational model").select_option(label=f"{model} (built-in)")
    if label:
        page.get_by_label("New label").fill(label)
        page.get_by_role("button", name="Add label").click()
    if connect_to:
        page.get_by_label("Connect to node").select_option(label=connect_to)
        page.get_by_role("button", name="Connect", exact=True).click()


def build_gtx970_testbed(page: Any, name: str) -> int:
    """Build the GTX 970 testbed (Fig. 5.3) in the system-model editor; return its id."""
    page.goto("/app/systems/new")
    page.get_by_label("System model name").fill(name)
    page.get_by_role("button", name="Add group").click()
    page.get_by_label("Node name").fill("Testbed")
    add_hardware(page, "Intel Core i7-4790K", name="CPU", label="CPU")
    add_hardware(page, "PCIe 3.0 16x", name="PCIe", model="PCIe link", connect_to="CPU")
    add_hardware(
        page, "GeForce GTX 970", name="GPU", model="Volkov GPU", label="GPU", connect_to="PCIe"
    )
    page.get_by_role("button", name="Done").click()
    page.get_by_role("button", name="Save", exact=True).click()
    page.wait_for_url(re.compile(r"/app/systems/\d+$"))
    return int(page.url.rstrip("/").rsplit("/", 1)[1])
