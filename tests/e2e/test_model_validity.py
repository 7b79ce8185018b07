"""A GPU model outside the architectures it was validated on, in the browser (issue 38): the
run page warns for Volkov's model on an H100, and a sweep swapping the H100 in for the GTX 970
runs the H100's recommended model there."""

from __future__ import annotations

import re
from typing import Any

import pytest
from playwright.sync_api import expect

from tests.e2e.conftest import screenshot
from tests.e2e.helpers import add_hardware, build_gtx970_testbed, create_listing5

pytestmark = [pytest.mark.e2e, pytest.mark.slow]

H100 = "H100 SXM5 80GB"
CURRENT = "GPU kernel (current architectures)"


def build_h100_with_volkov(page: Any, name: str) -> int:
    """Build CPU -- PCIe -- H100 with the built-in Volkov model on the H100; return its id."""
    page.goto("/app/systems/new")
    page.get_by_label("System model name").fill(name)
    page.get_by_role("button", name="Add group").click()
    page.get_by_label("Node name").fill("Testbed")
    add_hardware(page, "Intel Core i7-4790K", name="CPU", label="CPU")
    add_hardware(page, "PCIe 3.0 16x", name="PCIe", model="PCIe link", connect_to="CPU")
    add_hardware(page, H100, name="GPU", model="Volkov GPU", label="GPU", connect_to="PCIe")
    page.get_by_role("button", name="Done").click()
    page.get_by_role("button", name="Save", exact=True).click()
    page.wait_for_url(re.compile(r"/app/systems/\d+$"))
    return int(page.url.rstrip("/").rsplit("/", 1)[1])


def test_the_run_page_warns_of_volkovs_model_on_an_h100_and_a_sweep_swaps_it(page: Any) -> None:
    application = create_listing5(page, "saxpy2 (model validity)")
    system = build_h100_with_volkov(page, "H100 with Volkov (model validity)")
    page.goto(f"/app/launch?system={system}&application={application}")
    page.get_by_label("Variable N").fill("100000")
    page.get_by_role("button", name="Launch", exact=True).click()
    page.wait_for_url(re.compile(r"/app/runs/\d+$"))
    page.get_by_test_id("run-status").filter(has_text="succeeded").wait_for(timeout=120_000)

    warning = page.get_by_role("note", name="Model warning")
    expect(warning).to_contain_text("outside the architectures it was validated on")
    expect(warning).to_contain_text(
        f"'Volkov GPU' was validated on Maxwell and Pascal GPUs; '{H100}' is Hopper "
        f"(compute capability 9.0)"
    )
    expect(warning).to_contain_text(f"The GPU record recommends '{CURRENT}'.")
    screenshot(page, "model-validity-run-warning")

    # The GTX 970 testbed swept onto the H100: the H100's point runs its recommended model,
    # the GTX 970's keeps Volkov's, and neither is outside its model's architectures.
    testbed = build_gtx970_testbed(page, "GTX 970 testbed (model validity)")
    page.goto(f"/app/sweeps/new?system={testbed}&application={application}")
    page.get_by_label("Sweep name").fill("GTX 970 and H100")
    page.get_by_label("Sweep values of N").fill("100000")
    page.get_by_label("Node to swap").select_option(label="GPU")
    choices = page.get_by_role("group", name="Hardware choices")
    for gpu in ("GeForce GTX 970", H100):
        choices.get_by_label(gpu, exact=True).first.check()
    page.get_by_role("button", name="Launch sweep").click()
    page.wait_for_url(re.compile(r"/app/sweeps/\d+$"))
    page.get_by_test_id("sweep-status").filter(has_text="finished").wait_for(timeout=180_000)
    expect(page.get_by_role("note", name="Models swapped")).to_contain_text(f"{H100}: {CURRENT}")
    expect(page.get_by_role("note", name="Model warning")).to_have_count(0)
