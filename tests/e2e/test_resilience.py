"""A lost connection or a server failure is said plainly, keeps the user's work and the live view.

Failures are injected in the browser (Playwright routes), so the live server and worker stay up
for the other tests.
"""

from __future__ import annotations

import re
from typing import Any

import pytest

from tests.e2e.conftest import screenshot
from tests.e2e.helpers import EXAMPLE_SYSTEM, create_listing5, set_code

pytestmark = pytest.mark.e2e

NETWORK_ERROR = "Could not reach the server."
SERVER_ERROR = "The server failed (500)."
SERVER_ERROR_PAGE = (
    "<!doctype html><html><body><h1>Server Error (500)</h1><pre>Traceback</pre></body></html>"
)


def new_component_with_bad_value(page: Any) -> None:
    """Open a new component with a name and a valid attribute, ready to save."""
    page.get_by_role("button", name="New component").click()
    page.get_by_label("Name", exact=True).fill("Resilience GPU")
    page.get_by_role("button", name="Add attribute").click()
    page.get_by_label("Attribute 1 key").fill("SMs")
    page.get_by_label("Attribute 1 value").fill("12")


def test_a_save_without_a_connection_says_so_and_keeps_the_work(page: Any) -> None:
    new_component_with_bad_value(page)
    page.route("**/api/**", lambda route: route.abort("connectionrefused"))
    page.get_by_role("button", name="Save", exact=True).click()
    alert = page.locator(".error-box")
    alert.wait_for()
    assert NETWORK_ERROR in alert.inner_text()
    assert "Failed to fetch" not in alert.inner_text()
    assert page.get_by_label("Attribute 1 value").input_value() == "12"
    screenshot(page, "16-save-offline")


def test_a_server_error_page_is_not_dumped_into_the_form(page: Any) -> None:
    new_component_with_bad_value(page)
    page.route(
        "**/api/components/",
        lambda route: (
            route.fulfill(status=500, body=SERVER_ERROR_PAGE, content_type="text/html")
            if route.request.method == "POST"
            else route.continue_()
        ),
    )
    page.get_by_role("button", name="Save", exact=True).click()
    alert = page.locator(".error-box")
    alert.wait_for()
    assert SERVER_ERROR in alert.inner_text()
    assert "<" not in alert.inner_text() and "Traceback" not in alert.inner_text()
    assert page.get_by_label("Name", exact=True).input_value() == "Resilience GPU"


def test_a_failed_save_moves_the_focus_to_the_first_invalid_field(page: Any) -> None:
    page.get_by_role("button", name="New component").click()
    page.get_by_role("button", name="Add attribute").click()
    page.get_by_label("Attribute 1 key").fill("SMs")
    page.get_by_label("Attribute 1 value").fill("many")
    page.get_by_role("button", name="Save", exact=True).press("Enter")
    name = page.get_by_label("Name", exact=True)
    page.wait_for_function(
        "document.activeElement && document.activeElement.getAttribute('aria-invalid') === 'true'"
    )
    assert name.evaluate("element => element === document.activeElement")
    described = name.get_attribute("aria-describedby")
    assert described and "may not be blank" in page.locator(f"#{described}").inner_text()
    value = page.get_by_label("Attribute 1 value")
    assert (
        "valid number" in page.locator(f"#{value.get_attribute('aria-describedby')}").inner_text()
    )


def test_the_launch_screen_reports_a_lost_connection_instead_of_loading_forever(
    page: Any,
) -> None:
    page.route("**/api/**", lambda route: route.abort("connectionrefused"))
    page.get_by_role("link", name="Launch").click()
    assert NETWORK_ERROR in page.locator(".error-box").inner_text()


def test_the_live_progress_survives_a_lost_connection(page: Any) -> None:
    application = create_listing5(page, "saxpy2 (connection lost)")
    page.goto(f"/app/launch?application={application}")
    page.get_by_label("System model").select_option(label=EXAMPLE_SYSTEM)
    page.route(
        re.compile(r".*/api/simulations/\d+/$"),
        lambda route: (
            route.abort("connectionrefused") if route.request.method == "GET" else route.continue_()
        ),
    )
    page.get_by_role("button", name="Launch", exact=True).click()
    page.wait_for_url(re.compile(r"/app/runs/\d+$"))
    assert NETWORK_ERROR in page.get_by_test_id("retrying").inner_text()
    page.unroute(re.compile(r".*/api/simulations/\d+/$"))
    page.get_by_test_id("run-status").filter(has_text="succeeded").wait_for(timeout=120_000)
    page.get_by_test_id("overall-time").wait_for()
    assert page.get_by_test_id("retrying").count() == 0


def test_a_model_test_run_error_marks_its_line_and_a_clone_starts_clean(page: Any) -> None:
    page.get_by_role("link", name="Computational models").click()
    page.get_by_role("link", name="Volkov GPU", exact=True).click()
    page.get_by_label("Component to test against").select_option(label="GPU · GeForce GTX 970")
    page.get_by_role("button", name="Run", exact=True).click()
    page.locator(".result-value").wait_for()
    page.get_by_role("button", name="Clone").click()
    page.wait_for_url(re.compile(r"/app/models/\d+$"))
    page.get_by_role("heading", name="Volkov GPU (copy)").first.wait_for()
    # The clone is another record: no answer of the original is shown as its own.
    assert page.locator(".result-value").count() == 0
    broken = (
        "// broken on line 3\nfunction computationTime(params) {\n  return undefinedThing * 2;\n}\n"
    )
    set_code(page, "Computational model source", broken)
    page.get_by_role("button", name="Save", exact=True).click()
    page.get_by_text("· unsaved").wait_for(state="detached")
    page.get_by_label("Component to test against").select_option(label="GPU · GeForce GTX 970")
    page.get_by_role("button", name="Run", exact=True).click()
    error = page.locator(".panel .error-box")
    error.wait_for()
    assert error.inner_text().startswith("Line 3:")
    assert "undefinedThing" in error.inner_text()
    assert page.locator(".code-editor").get_attribute("data-error-line") == "3"
    page.locator(".cm-lintRange-error").first.wait_for()
    screenshot(page, "17-model-test-run-error")


def test_an_attribute_range_that_is_not_a_finite_number_is_flagged_not_dropped(
    page: Any,
) -> None:
    page.goto("/app/hardware")
    page.get_by_role("button", name="Add range").click()
    page.get_by_label("Attribute 1 key").fill("SMs")
    page.get_by_label("Attribute 1 value").fill("1e999")
    screenshot(page, "20-hardware-bad-range")
    alert = page.get_by_role("alert").filter(has_text="Enter a finite number")
    alert.wait_for()
    assert page.get_by_label("Attribute 1 value").get_attribute("aria-invalid") == "true"
    page.get_by_label("Attribute 1 value").fill("80")
    alert.wait_for(state="detached")
    page.wait_for_url(re.compile(r"attr=SMs__gte%3A80"))
