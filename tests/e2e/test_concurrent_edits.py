"""Two tabs editing one record: the later save is refused naming what the first changed, and
the editor offers to reload theirs or overwrite it; neither save is lost without a word."""

from __future__ import annotations

from typing import Any

import pytest
from playwright.sync_api import expect

from tests.e2e.conftest import DEMO_USER, signed_in_page
from tests.e2e.helpers import create_listing5

pytestmark = pytest.mark.e2e


def test_two_pages_editing_one_application_see_the_conflict(
    page: Any, browser: Any, live_studio: str
) -> None:
    application = create_listing5(page, "two tabs")
    other = signed_in_page(browser, live_studio, *DEMO_USER)
    try:
        other.goto(f"/app/applications/{application}")
        page.goto(f"/app/applications/{application}")
        other.get_by_label("Description", exact=True).fill("written in the other tab")
        page.get_by_label("Name", exact=True).fill("two tabs, renamed")
        other.get_by_role("button", name="Save", exact=True).click()
        expect(other.get_by_text("Saved.")).to_be_visible()

        page.get_by_role("button", name="Save", exact=True).click()

        conflict = page.get_by_role("alert").filter(has_text="Not saved")
        expect(conflict).to_contain_text("someone else saved this record")
        expect(conflict).to_contain_text("They changed: Description.")
        expect(page.get_by_text("Saved.")).to_have_count(0)
        expect(page.get_by_label("Name", exact=True)).to_have_value("two tabs, renamed")

        conflict.get_by_role("button", name="Reload").click()
        expect(conflict).to_have_count(0)
        expect(page.get_by_label("Description", exact=True)).to_have_value(
            "written in the other tab"
        )
        expect(page.get_by_label("Name", exact=True)).to_have_value("two tabs")

        # The other tab is now behind: its next save is refused, and overwriting saves it.
        page.get_by_label("Name", exact=True).fill("renamed after reload")
        page.get_by_role("button", name="Save", exact=True).click()
        expect(page.get_by_text("Saved.").last).to_be_visible()
        other.get_by_label("Description", exact=True).fill("the other tab insists")
        other.get_by_role("button", name="Save", exact=True).click()
        refused = other.get_by_role("alert").filter(has_text="Not saved")
        expect(refused).to_contain_text("They changed: Name.")
        refused.get_by_role("button", name="Overwrite").click()
        expect(refused).to_have_count(0)
        expect(other.get_by_text("Saved.").last).to_be_visible()
        stored = other.evaluate(
            "async (id) => (await fetch(`/api/applications/${id}/`)).json()", application
        )
        # Overwrite saves that tab's whole record: its name too, over the rename.
        assert (stored["description"], stored["name"]) == ("the other tab insists", "two tabs")
        assert stored["version"] == 4
    finally:
        other.context.close()
