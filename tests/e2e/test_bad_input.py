"""Bad input on each form is shown where it happened, and unsaved work is never lost silently."""

from __future__ import annotations

import json
import re
import urllib.error
import urllib.request
from typing import Any

import pytest
from playwright.sync_api import expect

from tests.e2e.conftest import VIEWPORT, screenshot
from tests.e2e.helpers import EXAMPLE_SYSTEM, LISTING_5_VARIABLES, create_listing5, set_code

pytestmark = pytest.mark.e2e


def error_at(page: Any, path: str) -> Any:
    """Return the error message element shown for the API field `path`."""
    return page.locator(f"[data-error-path='{path}']")


def test_a_wrong_password_is_refused_with_a_message(browser: Any, live_studio: str) -> None:
    context = browser.new_context(viewport=VIEWPORT, base_url=live_studio)
    page = context.new_page()
    page.goto("/app/hardware")
    assert "/accounts/login/" in page.url
    page.get_by_label("Username").fill("demo")
    page.get_by_label("Password").fill("not-the-password")
    page.get_by_role("button", name="Sign in").click()
    assert "didn't match" in page.get_by_role("alert").inner_text()
    assert page.get_by_label("Username").get_attribute("aria-invalid") == "true"
    screenshot(page, "00-sign-in-error")
    context.close()


def test_signing_out_returns_to_the_sign_in_page(page: Any) -> None:
    page.get_by_role("link", name="GeForce GTX 970").first.wait_for()
    page.get_by_role("button", name="Sign out").click()
    page.wait_for_url(re.compile(r"/accounts/login/"))
    page.goto("/app/runs")
    assert "/accounts/login/" in page.url


def test_a_bad_attribute_value_is_marked_on_its_row_and_unsaved_work_asks_first(
    page: Any,
) -> None:
    page.get_by_role("button", name="New component").click()
    page.get_by_role("button", name="Add attribute").click()
    page.get_by_label("Attribute 1 key").fill("SMs")
    page.get_by_label("Attribute 1 value").fill("fast")
    page.get_by_role("button", name="Save", exact=True).click()
    assert error_at(page, "attributes[0].value").inner_text() == "A valid number is required."
    assert "may not be blank" in error_at(page, "name").inner_text()
    assert page.get_by_label("Attribute 1 value").get_attribute("aria-invalid") == "true"
    screenshot(page, "11-hardware-bad-input")

    # Leaving with unsaved changes asks; "stay" keeps the work, "leave" goes.
    questions: list[str] = []

    def stay(dialog: Any) -> None:
        questions.append(dialog.message)
        dialog.dismiss()

    page.once("dialog", stay)
    page.get_by_role("link", name="System models").click()
    assert questions and "unsaved changes" in questions[0]
    assert page.get_by_label("Attribute 1 value").input_value() == "fast"
    page.once("dialog", lambda dialog: dialog.accept())
    page.get_by_role("link", name="System models").click()
    page.get_by_role("heading", name="System models").wait_for()


def test_a_component_fixed_after_an_error_saves_and_filters_by_attribute_range(
    page: Any,
) -> None:
    page.get_by_role("button", name="New component").click()
    page.get_by_label("Name", exact=True).fill("Lab GPU e2e")
    page.get_by_label("Vendor", exact=True).fill("LabVendor")
    page.get_by_role("button", name="Add attribute").click()
    page.get_by_label("Attribute 1 key").fill("SMs")
    page.get_by_label("Attribute 1 value").fill("999")
    page.get_by_role("button", name="Save", exact=True).click()
    page.wait_for_url(re.compile(r"/app/hardware/\d+$"))
    page.get_by_role("link", name="Hardware", exact=True).click()
    page.get_by_role("button", name="Add range").click()
    page.get_by_label("Attribute 1 key").fill("SMs")
    page.get_by_label("Attribute 1 value").fill("500")
    rows = page.get_by_role("table", name="Hardware components").locator("tbody tr")
    rows.filter(has_text="Lab GPU e2e").wait_for()
    page.wait_for_function("document.querySelectorAll('table tbody tr').length === 1")
    assert rows.count() == 1


def test_a_system_node_with_a_bad_count_is_marked_on_the_canvas(page: Any) -> None:
    page.goto("/app/systems/new")
    page.get_by_label("System model name").fill("bad count")
    page.get_by_label("Search the palette").fill("GeForce GTX 1070")
    page.get_by_role("button", name="Add GeForce GTX 1070", exact=True).click()
    page.get_by_label("Node name").fill("Broken GPU")
    page.get_by_label("Node count").fill("0")
    page.get_by_role("button", name="Save", exact=True).click()
    node = page.locator(".hw-node.has-error")
    node.wait_for()
    assert "Broken GPU" in node.inner_text()
    assert "count: Ensure this value is greater than or equal to 1." in node.inner_text()
    assert (
        "greater than or equal to 1"
        in page.get_by_role("complementary", name="Properties").inner_text()
    )
    screenshot(page, "12-system-bad-input")


def test_an_application_variable_of_the_wrong_type_is_marked_on_its_row(page: Any) -> None:
    page.goto("/app/applications/new")
    page.get_by_label("Name", exact=True).fill("bad variable")
    page.get_by_label("Variable 1 default").fill("abc")
    page.get_by_role("button", name="Save", exact=True).click()
    message = error_at(page, "variables[0].default").inner_text()
    assert message == "Expected a whole number (int), got 'abc'."
    screenshot(page, "13-application-bad-input")


def test_launch_errors_name_the_variable_and_the_label(page: Any) -> None:
    application = create_listing5(page, "saxpy2 (bad launch)")
    page.goto(f"/app/launch?application={application}")
    page.get_by_label("System model").select_option(label=EXAMPLE_SYSTEM)
    page.get_by_label("Variable N").fill("ten million")
    page.get_by_label("Processes with label GPU").fill("5")
    page.get_by_role("button", name="Launch", exact=True).click()
    assert "got 'ten million'" in error_at(page, "variables.N").inner_text()
    page.get_by_label("Variable N").fill("1000")
    page.get_by_role("button", name="Launch", exact=True).click()
    assert "capacity is 1" in error_at(page, "labels.GPU").inner_text()
    screenshot(page, "14-launch-bad-input")


def test_a_run_name_too_long_is_marked_at_the_name_field(page: Any) -> None:
    application = create_listing5(page, "saxpy2 (long run name)")
    page.goto(f"/app/launch?application={application}")
    page.get_by_label("System model").select_option(label=EXAMPLE_SYSTEM)
    page.get_by_label("Run name", exact=True).fill("x" * 201)
    page.get_by_role("button", name="Launch", exact=True).click()
    message = error_at(page, "name")
    expect(message).to_contain_text("200 characters")
    expect(page.get_by_label("Run name", exact=True)).to_have_attribute("aria-invalid", "true")
    # shown beside its field, so the summary does not repeat it, and nothing went unshown
    expect(page.locator(".error-box")).to_contain_text("Please correct the highlighted fields.")
    expect(page.locator(".error-box li")).to_have_count(0)
    assert page.url.endswith(f"/app/launch?application={application}")


def test_a_runtime_error_in_the_application_points_at_its_line(page: Any) -> None:
    page.goto("/app/applications/new")
    page.get_by_label("Name", exact=True).fill("broken at line 3")
    page.get_by_label("Variable 1 name").fill("N")
    source = "x = N\ny = x * 2\nz = undefined_name + 1\n"
    set_code(page, "Application model source", source)
    page.get_by_role("button", name="Save", exact=True).click()
    page.wait_for_url(re.compile(r"/app/applications/\d+$"))
    application = page.url.rsplit("/", 1)[1]
    page.goto(f"/app/launch?application={application}")
    page.get_by_label("System model").select_option(label=EXAMPLE_SYSTEM)
    page.get_by_role("button", name="Launch", exact=True).click()
    page.get_by_test_id("run-status").filter(has_text="failed").wait_for(timeout=120_000)
    alert = page.get_by_role("alert").first
    assert "at line 3" in alert.inner_text()
    assert "undefined_name" in alert.inner_text()
    page.locator(".cm-lintRange-error").first.wait_for()
    screenshot(page, "15-run-error-line")


def test_the_model_test_run_reports_a_value_or_says_it_is_unavailable(
    page: Any, live_studio: str
) -> None:
    page.get_by_role("link", name="Computational models").click()
    page.get_by_role("link", name="Volkov GPU").click()
    page.get_by_role("heading", name="Volkov GPU").wait_for()
    model_id = page.url.rsplit("/", 1)[1]
    page.get_by_label("Component to test against").select_option(label="GPU · GeForce GTX 970")
    page.get_by_role("button", name="Run", exact=True).click()
    request = urllib.request.Request(
        f"{live_studio}/api/models/{model_id}/evaluate/", data=b"{}", method="POST"
    )
    try:
        urllib.request.urlopen(request, timeout=5)
        status = 200
    except urllib.error.HTTPError as error:
        status = error.code
    if status in (404, 405):
        assert (
            "not available"
            in page.get_by_role("status").filter(has_text="Test-running").inner_text()
        )
    else:
        page.locator(".result-value, .error-box").first.wait_for()
    screenshot(page, "07-model-editor")


def test_the_variables_of_listing5_survive_a_reload(page: Any) -> None:
    application = create_listing5(page, "saxpy2 (reload)")
    page.goto(f"/app/applications/{application}")
    names = [page.get_by_label(f"Variable {i + 1} name").input_value() for i in range(4)]
    assert names == [name for name, _, _ in LISTING_5_VARIABLES]
    body = page.evaluate(f"fetch('/api/applications/{application}/').then(r => r.json())")
    assert json.loads(json.dumps(body))["source"].startswith("# Listing 5 of 000")


def test_a_computational_model_without_a_name_is_refused_at_the_name(page: Any) -> None:
    page.get_by_role("link", name="Computational models").click()
    page.get_by_role("button", name="New model").click()
    page.get_by_role("button", name="Save", exact=True).click()
    assert error_at(page, "name").inner_text() == "This field may not be blank."
    page.get_by_label("Name", exact=True).fill("my kernel model")
    page.get_by_role("button", name="Save", exact=True).click()
    page.wait_for_url(re.compile(r"/app/models/\d+$"))
    page.get_by_role("heading", name="my kernel model").wait_for()


def test_a_javascript_syntax_error_is_refused_at_save_and_marked_on_its_line(page: Any) -> None:
    page.get_by_role("link", name="Computational models").click()
    page.get_by_role("button", name="New model").click()
    page.get_by_label("Name", exact=True).fill("broken kernel model")
    set_code(
        page,
        "Computational model source",
        "function computationTime(params) {\n  return (;\n}\n",
    )
    page.get_by_role("button", name="Save", exact=True).click()
    assert error_at(page, "source").inner_text() == "Line 2: SyntaxError: Unexpected token ';'"
    page.locator('.code-editor[data-error-line="2"]').wait_for()
    screenshot(page, "19-model-syntax-error")


def test_an_application_that_does_not_compile_is_refused_at_save_on_its_line(page: Any) -> None:
    page.goto("/app/applications/new")
    page.get_by_label("Name", exact=True).fill("broken application")
    set_code(page, "Application model source", "n = 1\nif n\n    n = 2\n")
    page.get_by_role("button", name="Save", exact=True).click()
    assert error_at(page, "source").inner_text() == "Line 2: SyntaxError: expected ':'"
    page.locator('.code-editor[data-error-line="2"]').wait_for()


def test_a_sweep_range_running_backwards_is_refused_at_its_stop(page: Any) -> None:
    application = create_listing5(page, "saxpy2 (bad sweep)")
    page.goto(f"/app/sweeps/new?application={application}")
    page.get_by_label("System model").select_option(label=EXAMPLE_SYSTEM)
    page.get_by_label("Sweep values of computeIntensity").fill("64:8:8")
    page.get_by_role("button", name="Launch sweep").click()
    message = error_at(page, "variables.computeIntensity.stop").inner_text()
    assert message == "The stop must not be below the start."


def test_a_sweep_takes_an_int_written_1e5_and_a_fraction_is_marked_at_its_field(
    page: Any,
) -> None:
    application = create_listing5(page, "saxpy2 (1e5 sweep)")
    page.goto(f"/app/sweeps/new?application={application}")
    page.get_by_label("System model").select_option(label=EXAMPLE_SYSTEM)
    page.get_by_label("Sweep values of N").fill("1.5e0")
    page.get_by_role("button", name="Launch sweep").click()
    expect(error_at(page, "variables.N")).to_contain_text("Expected a whole number (int)")
    # the message is beside its field; the banner above says where to look, never empty
    expect(page.locator(".error-box")).to_have_text("Please correct the highlighted fields.")
    page.get_by_label("Sweep values of N").fill("1e5")
    page.get_by_role("button", name="Launch sweep").click()
    page.wait_for_url(re.compile(r"/app/sweeps/\d+$"))
    expect(page.locator(".error-box")).to_have_count(0)


def test_importing_hardware_json_reports_a_bad_file_and_accepts_a_good_one(page: Any) -> None:
    chooser = page.get_by_label("Import hardware JSON file")
    chooser.set_input_files(
        files=[{"name": "broken.json", "mimeType": "application/json", "buffer": b"{not json"}]
    )
    assert "not valid JSON" in page.get_by_role("alert").inner_text()
    good = {
        "components": [
            {
                "type": "GPU",
                "name": "Imported e2e GPU",
                "vendor": "ImportCo",
                "attributes": [{"key": "SMs", "value": 42, "unit": "count", "source": "test"}],
            }
        ]
    }
    chooser.set_input_files(
        files=[
            {
                "name": "hw.json",
                "mimeType": "application/json",
                "buffer": json.dumps(good).encode(),
            }
        ]
    )
    page.get_by_role("link", name="Imported e2e GPU").wait_for()
    imported = page.get_by_role("row").filter(has_text="Imported e2e GPU")
    assert "SMs=42 count" in imported.inner_text()


def test_an_attribute_out_of_its_range_and_a_duplicate_key_are_refused_naming_their_rows(
    page: Any,
) -> None:
    page.get_by_role("button", name="New component").click()
    page.get_by_label("Name", exact=True).fill("Negative GPU e2e")
    page.get_by_role("button", name="Add attribute").click()
    page.get_by_label("Attribute 1 key").fill("SMs")
    page.get_by_label("Attribute 1 value").fill("-13")
    page.get_by_role("button", name="Save", exact=True).click()
    message = error_at(page, "attributes[0].value").inner_text()
    assert message == "Row 1: SMs must be greater than 0 (got -13)."
    assert page.get_by_label("Attribute 1 value").get_attribute("aria-invalid") == "true"

    page.get_by_label("Attribute 1 value").fill("13")
    page.get_by_role("button", name="Add attribute").click()
    page.get_by_label("Attribute 2 key").fill("SMs")
    page.get_by_label("Attribute 2 value").fill("14")
    page.get_by_role("button", name="Save", exact=True).click()
    message = error_at(page, "attributes[1].key").inner_text()
    assert message == "Row 2: duplicate attribute key 'SMs' (also in row 1)."


def test_a_hardware_save_reports_text_values_duplicate_keys_and_fractional_counts_at_once(
    page: Any,
) -> None:
    page.goto("/app/hardware")
    page.get_by_role("button", name="New component").click()
    page.get_by_label("Name", exact=True).fill("Half-SM GPU e2e")
    rows = [("SMs", "13.5"), ("warpSize", "lots"), ("SMs", "16")]
    for index, (key, value) in enumerate(rows, start=1):
        page.get_by_role("button", name="Add attribute").click()
        page.get_by_label(f"Attribute {index} key").fill(key)
        page.get_by_label(f"Attribute {index} value").fill(value)
    page.get_by_role("button", name="Save", exact=True).click()
    expect(error_at(page, "attributes[0].value")).to_have_text(
        "Row 1: SMs is a count: a whole number (got 13.5)."
    )
    expect(error_at(page, "attributes[1].value")).to_have_text("A valid number is required.")
    expect(error_at(page, "attributes[2].key")).to_have_text(
        "Row 3: duplicate attribute key 'SMs' (also in row 1)."
    )


def test_an_application_model_shows_every_error_of_a_save_at_once(page: Any) -> None:
    page.goto("/app/applications/new")
    page.get_by_label("Name", exact=True).fill("many errors")
    page.get_by_label("Variable 1 name").fill("tag")
    page.get_by_role("button", name="Add variable").click()
    page.get_by_label("Variable 2 name").fill("x")
    page.get_by_label("Variable 2 type").select_option("float")
    page.get_by_label("Variable 2 default").fill("1e400")
    set_code(page, "Application model source", "_a = 1\nb = 2\nc = _b\n")
    page.get_by_role("button", name="Save", exact=True).click()
    reserved = error_at(page, "variables[0].name").inner_text()
    assert reserved.startswith("'tag' is a name the application model already has")
    assert (
        error_at(page, "variables[1].default").inner_text()
        == "x: 1e400 is out of range (not a finite number)."
    )
    source = error_at(page, "source").inner_text().splitlines()
    assert [line.split(":")[0] for line in source] == ["Line 1", "Line 3"]
    page.locator('.code-editor[data-error-lines="1 3"]').wait_for()
    screenshot(page, "20-application-all-errors")
