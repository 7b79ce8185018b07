"""Component services: validation, atomic updates, clones, deletes, bulk import and export."""

from __future__ import annotations

import math
from typing import Any

import pytest
from django.core.exceptions import ValidationError

from hwdb.models import Attribute, Component
from hwdb.selectors import component_attribute_data, components_export
from hwdb.services.common import RecordInUseError
from hwdb.services.components import (
    component_clone,
    component_create,
    component_delete,
    component_update,
    components_import,
)
from hwdb.validation import MESSAGES
from tests.hwdb.factories import GpuFactory, SystemModelFactory, UserFactory, one_gpu_graph
from tests.hwdb.services.conftest import errors_of

pytestmark = pytest.mark.django_db


def gpu_fields(**overrides: Any) -> dict[str, Any]:
    fields: dict[str, Any] = {
        "type": "GPU",
        "name": "My GPU",
        "vendor": "NVIDIA",
        "attributes": [
            {"key": "SMs", "value": 80, "unit": "count", "source": "spec"},
            {"key": "SMCoreClock", "value": 1530, "unit": "MHz"},
        ],
    }
    fields.update(overrides)
    return fields


def test_it_creates_a_component_with_its_attributes() -> None:
    owner = UserFactory()
    component = component_create(owner=owner, **gpu_fields())
    stored = {a.key: (a.value, a.unit) for a in Attribute.objects.filter(component=component)}
    assert stored == {"SMs": (80.0, "count"), "SMCoreClock": (1530.0, "MHz")}
    assert component.owner == owner and component.shared is False


@pytest.mark.parametrize(
    ("value", "message"),
    [
        (math.nan, MESSAGES["not_finite"]),
        (math.inf, MESSAGES["not_finite"]),
        (-math.inf, MESSAGES["not_finite"]),
        ("NaN", MESSAGES["not_finite"]),
        (True, MESSAGES["not_a_number"]),
    ],
)
def test_it_rejects_attribute_values_that_are_not_finite_numbers(
    value: object, message: str
) -> None:
    attributes = [{"key": "SMs", "value": 1}, {"key": "bad", "value": value}]
    with pytest.raises(ValidationError) as excinfo:
        component_create(owner=UserFactory(), **gpu_fields(attributes=attributes))
    assert errors_of(excinfo) == {"attributes[1].value": [message]}
    assert not Component.objects.exists()


def test_it_rejects_a_non_numeric_attribute_value() -> None:
    with pytest.raises(ValidationError) as excinfo:
        component_create(
            owner=UserFactory(), **gpu_fields(attributes=[{"key": "SMs", "value": "many"}])
        )
    assert list(errors_of(excinfo)) == ["attributes[0].value"]


def test_it_rejects_duplicate_attribute_keys_naming_both_places() -> None:
    attributes = [{"key": "SMs", "value": 1}, {"key": "x", "value": 2}, {"key": "SMs", "value": 3}]
    with pytest.raises(ValidationError) as excinfo:
        component_create(owner=UserFactory(), **gpu_fields(attributes=attributes))
    assert errors_of(excinfo) == {
        "attributes[2].key": ["Row 3: duplicate attribute key 'SMs' (also in row 1)."]
    }


def test_it_reports_text_values_duplicate_keys_and_ranges_together() -> None:
    attributes = [
        {"key": "SMs", "value": "many"},
        {"key": "SMs", "value": 13.5},
        {"key": "bandwidth", "value": 0},
    ]
    with pytest.raises(ValidationError) as excinfo:
        component_create(owner=UserFactory(), **gpu_fields(attributes=attributes))
    assert errors_of(excinfo) == {
        "attributes[0].value": [errors_of(excinfo)["attributes[0].value"][0]],
        "attributes[1].key": ["Row 2: duplicate attribute key 'SMs' (also in row 1)."],
        "attributes[1].value": ["Row 2: SMs is a count: a whole number (got 13.5)."],
        "attributes[2].value": ["Row 3: bandwidth must be greater than 0 (got 0)."],
    }


@pytest.mark.parametrize(
    ("key", "value", "message"),
    [
        ("SMs", -13, "Row 2: SMs must be greater than 0 (got -13)."),
        ("SMs", 13.5, "Row 2: SMs is a count: a whole number (got 13.5)."),
        ("bandwidth", 0, "Row 2: bandwidth must be greater than 0 (got 0)."),
        ("startupHTD", -1e-6, "Row 2: startupHTD must be 0 or more (got -1e-06)."),
        # the cost attributes (simulator.cost, docs/cost.md)
        ("purchasePrice", -1, "Row 2: purchasePrice must be 0 or more (got -1)."),
        ("powerPrice", -0.1, "Row 2: powerPrice must be 0 or more (got -0.1)."),
        ("hourlyRental", -2, "Row 2: hourlyRental must be 0 or more (got -2)."),
        ("lifetime", 0, "Row 2: lifetime must be greater than 0 (got 0)."),
    ],
)
def test_it_rejects_attribute_values_the_models_cannot_count_or_divide_with(
    key: str, value: float, message: str
) -> None:
    attributes = [{"key": "warpSize", "value": 32}, {"key": key, "value": value}]
    with pytest.raises(ValidationError) as excinfo:
        component_create(owner=UserFactory(), **gpu_fields(attributes=attributes))
    assert errors_of(excinfo) == {"attributes[1].value": [message]}


def test_zero_is_accepted_where_it_means_nothing_and_unknown_keys_take_any_number() -> None:
    attributes = [
        {"key": "startupHTD", "value": 0},
        {"key": "powerIdle", "value": 0},
        {"key": "myOffset", "value": -5},
    ]
    component = component_create(owner=UserFactory(), **gpu_fields(attributes=attributes))
    assert component.attributes.count() == 3


@pytest.mark.parametrize("key", ["2fast", "with space", "a-b", "", "function", "params", "hw"])
def test_it_rejects_attribute_keys_that_cannot_be_javascript_globals(key: str) -> None:
    with pytest.raises(ValidationError) as excinfo:
        component_create(owner=UserFactory(), **gpu_fields(attributes=[{"key": key, "value": 1}]))
    assert list(errors_of(excinfo)) == ["attributes[0].key"]


def test_it_rejects_unknown_types_and_over_long_names_together() -> None:
    with pytest.raises(ValidationError) as excinfo:
        component_create(owner=UserFactory(), **gpu_fields(type="TPU", name="x" * 201))
    assert set(errors_of(excinfo)) == {"type", "name"}


def test_a_rejected_update_leaves_the_component_exactly_as_it_was() -> None:
    component = component_create(owner=UserFactory(), **gpu_fields())
    before = (component.name, component_attribute_data(component))
    with pytest.raises(ValidationError):
        component_update(
            component=component,
            fields={"name": "Renamed"},
            attributes=[{"key": "SMs", "value": 1}, {"key": "bad", "value": math.nan}],
        )
    reread = Component.objects.get(pk=component.pk)
    assert (reread.name, component_attribute_data(reread)) == before


def test_an_update_replaces_all_attributes_at_once() -> None:
    component = component_create(owner=UserFactory(), **gpu_fields())
    component_update(
        component=component, fields={"vendor": "AMD"}, attributes=[{"key": "CUs", "value": 304}]
    )
    reread = Component.objects.get(pk=component.pk)
    assert reread.vendor == "AMD"
    assert [(a["key"], a["value"]) for a in component_attribute_data(reread)] == [("CUs", 304.0)]


def test_an_update_without_attributes_keeps_them() -> None:
    component = component_create(owner=UserFactory(), **gpu_fields())
    component_update(component=component, fields={"comment": "checked"})
    assert Attribute.objects.filter(component=component).count() == 2


def test_a_clone_is_a_private_copy_owned_by_the_cloner() -> None:
    original = component_create(owner=None, shared=True, **gpu_fields())
    cloner = UserFactory()
    clone = component_clone(component=original, owner=cloner)
    assert (clone.owner, clone.shared, clone.name) == (cloner, False, "My GPU (copy)")
    assert component_attribute_data(clone) == component_attribute_data(original)


def test_a_clone_of_a_name_at_the_length_limit_still_fits() -> None:
    original = component_create(owner=None, **gpu_fields(name="n" * 200))
    clone = component_clone(component=original, owner=UserFactory())
    assert len(clone.name) == 200 and clone.name.endswith(" (copy)")


def test_a_component_used_by_a_system_model_cannot_be_deleted() -> None:
    system = SystemModelFactory()
    component = system.components.get()
    with pytest.raises(RecordInUseError, match=system.name):
        component_delete(component=component)
    assert Component.objects.filter(pk=component.pk).exists()


def test_a_component_used_by_other_users_is_made_private_and_they_keep_a_copy() -> None:
    component = GpuFactory(shared=True)
    theirs = SystemModelFactory(graph=one_gpu_graph(component.pk), owner=UserFactory())
    theirs.components.set([component])
    component_update(component=component, fields={"shared": False})
    assert Component.objects.get(pk=component.pk).shared is False
    theirs.refresh_from_db()
    (copied,) = theirs.components.all()
    assert (copied.owner_id, copied.name) == (theirs.owner_id, component.name)
    assert theirs.graph["nodes"][1]["hardware"] == copied.pk


def test_components_export_and_import_round_trip() -> None:
    original = component_create(owner=UserFactory(), **gpu_fields())
    exported = components_export(components=[original])
    copies = components_import(data=exported, owner=UserFactory())
    assert components_export(components=copies) == exported


def test_a_bulk_import_with_one_bad_record_stores_none() -> None:
    data = {
        "components": [
            gpu_fields(name="fine"),
            gpu_fields(attributes=[{"key": "SMs", "value": math.inf}]),
        ]
    }
    with pytest.raises(ValidationError) as excinfo:
        components_import(data=data, owner=UserFactory())
    assert errors_of(excinfo) == {"components[1].attributes[0].value": [MESSAGES["not_finite"]]}
    assert not Component.objects.exists()


def test_a_caches_geometry_is_reported_with_its_row_errors_not_after() -> None:
    attributes = [
        {"key": "size", "value": 32768},
        {"key": "ways", "value": 3},
        {"key": "lineSize", "value": 64},
        {"key": "latencyCycles", "value": 1},
        {"key": "clock", "value": "fast"},
        {"key": "ways", "value": 2},
    ]
    with pytest.raises(ValidationError) as excinfo:
        component_create(owner=UserFactory(), type="CACHE", name="L1", attributes=attributes)
    errors = errors_of(excinfo)
    assert set(errors) == {"attributes[1].value", "attributes[4].value", "attributes[5].key"}
    (geometry,) = errors["attributes[1].value"]
    assert "whole number of sets" in geometry
    # the clock's row says what is wrong with it; the clock is not also called missing
    assert "'clock'" not in str(errors)
    assert not Component.objects.exists()
