"""Optimistic concurrency of every editable record: a save sent with the version it was made
from is refused with a 409 once someone else saved the record, naming the fields they changed
and carrying the stored record; nothing of the stale save is written."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import pytest
from rest_framework.test import APIClient

from hwdb.validation import MESSAGES
from tests.hwdb.factories import (
    ComputationalModelFactory,
    GpuFactory,
    SystemModelFactory,
    UserFactory,
)
from tests.webapp.studio.factories import ApplicationModelFactory
from webapp.api.exceptions import VERSION_CONFLICT

pytestmark = pytest.mark.django_db


@dataclass(frozen=True)
class Kind:
    """One kind of editable record: its collection, factory and two fields a save may change."""

    url: str
    factory: Callable[..., Any]
    first: str
    second: str


KINDS = {
    "component": Kind("/api/components/", GpuFactory, "comment", "vendor"),
    "computational model": Kind("/api/models/", ComputationalModelFactory, "description", "name"),
    "system model": Kind("/api/systems/", SystemModelFactory, "description", "name"),
    "application model": Kind("/api/applications/", ApplicationModelFactory, "description", "name"),
}


@pytest.fixture(params=list(KINDS), ids=list(KINDS))
def kind(request: pytest.FixtureRequest) -> Kind:
    return KINDS[request.param]


@pytest.fixture
def owner() -> Any:
    return UserFactory()


@pytest.fixture
def api(owner: Any) -> APIClient:
    client = APIClient()
    client.force_authenticate(user=owner)
    return client


def test_a_record_is_read_at_version_1_and_each_changing_save_raises_it(
    kind: Kind, owner: Any, api: APIClient
) -> None:
    record = kind.factory(owner=owner)
    url = f"{kind.url}{record.pk}/"
    assert api.get(url).data["version"] == 1
    saved = api.patch(url, {kind.first: "first tab", "version": 1}, format="json")
    assert saved.status_code == 200, saved.data
    assert saved.data["version"] == 2
    unchanged = api.patch(url, {kind.first: "first tab", "version": 2}, format="json")
    assert unchanged.status_code == 200 and unchanged.data["version"] == 2


def test_a_stale_save_is_refused_naming_what_changed_and_writes_nothing(
    kind: Kind, owner: Any, api: APIClient
) -> None:
    record = kind.factory(owner=owner)
    url = f"{kind.url}{record.pk}/"
    loaded = api.get(url).data
    first = api.patch(url, {kind.first: "first tab", "version": loaded["version"]}, format="json")
    assert first.status_code == 200, first.data

    stale = api.patch(url, {kind.second: "second tab", "version": loaded["version"]}, format="json")

    assert stale.status_code == 409, stale.data
    body = stale.json()
    assert body["code"] == VERSION_CONFLICT
    assert body["changed"] == [kind.first]
    assert (body["expected_version"], body["version"]) == (1, 2)
    assert body["current"][kind.first] == "first tab"
    assert body["current"]["version"] == 2
    assert body["detail"] == MESSAGES["version_conflict"].format(
        expected=1, version=2, fields=kind.first
    )
    record.refresh_from_db()
    assert getattr(record, kind.first) == "first tab"
    assert getattr(record, kind.second) == loaded[kind.second]
    assert record.version == 2


def test_overwriting_with_the_current_version_saves(kind: Kind, owner: Any, api: APIClient) -> None:
    record = kind.factory(owner=owner)
    url = f"{kind.url}{record.pk}/"
    api.patch(url, {kind.first: "first tab", "version": 1}, format="json")
    refused = api.patch(url, {kind.second: "second tab", "version": 1}, format="json")
    overwrite = api.patch(
        url, {kind.second: "second tab", "version": refused.json()["version"]}, format="json"
    )
    assert overwrite.status_code == 200, overwrite.data
    assert overwrite.data["version"] == 3
    record.refresh_from_db()
    assert getattr(record, kind.second) == "second tab"
    assert record.field_versions == {kind.first: 2, kind.second: 3}


def test_a_save_without_a_version_is_not_checked(kind: Kind, owner: Any, api: APIClient) -> None:
    record = kind.factory(owner=owner)
    url = f"{kind.url}{record.pk}/"
    api.patch(url, {kind.first: "first tab", "version": 1}, format="json")
    response = api.patch(url, {kind.second: "second tab"}, format="json")
    assert response.status_code == 200 and response.data["version"] == 3


def test_only_changes_since_the_edited_version_are_named(owner: Any, api: APIClient) -> None:
    gpu: Any = GpuFactory(owner=owner)
    url = f"/api/components/{gpu.pk}/"
    api.patch(url, {"comment": "v2", "version": 1}, format="json")
    attributes = [{"key": "SMs", "value": 16, "unit": "count", "source": "lab"}]
    api.patch(url, {"attributes": attributes, "version": 2}, format="json")
    stale = api.patch(url, {"vendor": "Other", "version": 2}, format="json")
    assert stale.status_code == 409
    assert stale.json()["changed"] == ["attributes"]
    assert [a["value"] for a in stale.json()["current"]["attributes"]] == [16.0]


def test_a_calibration_stored_on_a_component_is_a_new_version(owner: Any, api: APIClient) -> None:
    gpu: Any = GpuFactory(owner=owner)
    url = f"/api/components/{gpu.pk}/"
    measurements = [
        {"estimated_s": 1.0, "measured_s": 2.0},
        {"estimated_s": 2.0, "measured_s": 4.0},
    ]
    calibrated = api.post(
        f"{url}calibrate/",
        {"kind": "kernel", "measurements": measurements, "store": True},
        format="json",
    )
    assert calibrated.status_code == 200, calibrated.data
    stale = api.patch(url, {"comment": "mine", "version": 1}, format="json")
    assert stale.status_code == 409 and stale.json()["changed"] == ["attributes"]


def test_a_version_below_1_is_refused_naming_the_field(owner: Any, api: APIClient) -> None:
    gpu: Any = GpuFactory(owner=owner)
    response = api.patch(f"/api/components/{gpu.pk}/", {"version": 0}, format="json")
    assert response.status_code == 400 and "version" in response.json()
