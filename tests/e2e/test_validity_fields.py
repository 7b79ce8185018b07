"""The hardware and computational-model editors show the fields of docs/model-validity.md: a
GPU's recommended model (a built-in one, chosen from a list) and the architectures a model was
validated on, with the server's refusal of a wrong one beside its field."""

from __future__ import annotations

import re
from typing import Any

import pytest
from playwright.sync_api import expect

pytestmark = pytest.mark.e2e


def error_at(page: Any, path: str) -> Any:
    """Return the error message element shown for the API field `path`."""
    return page.locator(f"[data-error-path='{path}']")


def test_a_gpu_record_recommends_a_built_in_model_chosen_from_the_list(page: Any) -> None:
    page.goto("/app/hardware/new")
    page.get_by_label("Name").fill("My H100 (recommends)")
    choice = page.get_by_label("Recommended model")
    expect(choice.locator("option", has_text="Volkov GPU")).to_have_count(1)
    choice.select_option(label="GPU kernel (current architectures)")
    page.get_by_role("button", name="Save", exact=True).click()
    page.wait_for_url(re.compile(r"/app/hardware/\d+$"))
    page.reload()
    expect(page.get_by_label("Recommended model")).to_have_value(
        "GPU kernel (current architectures)"
    )


def test_a_model_declares_its_validated_architectures_and_a_wrong_one_is_named_beside_it(
    page: Any,
) -> None:
    page.goto("/app/models/new")
    page.get_by_label("Name").fill("My kernel model (validated)")
    field = page.get_by_label("Validated architectures")
    field.fill("Hopper, hopper")
    page.get_by_role("button", name="Save", exact=True).click()
    expect(error_at(page, "validated_architectures")).to_contain_text("hopper")
    expect(field).to_have_attribute("aria-invalid", "true")

    field.fill("Hopper, Blackwell")
    page.get_by_role("button", name="Save", exact=True).click()
    page.wait_for_url(re.compile(r"/app/models/\d+$"))
    page.reload()
    expect(page.get_by_label("Validated architectures")).to_have_value("Hopper, Blackwell")
