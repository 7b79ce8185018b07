"""Services of the hardware database: validation, atomic writes, clones, import and export."""

from __future__ import annotations

import math
from typing import Any

import pytest
from django.core.exceptions import ValidationError

from hwdb.models import Attribute, Component, ComputationalModel, SystemModel
from hwdb.selectors import component_attribute_data, components_export, system_model_export_snapshot
from hwdb.services.common import RecordInUseError
from hwdb.services.components import (
    component_clone,
    component_create,
    component_delete,
    component_update,
    components_import,
)
from hwdb.services.computational_models import (
    computational_model_clone,
    computational_model_create,
    computational_model_delete,
)
from hwdb.services.system_models import system_model_create, system_model_import_snapshot
from hwdb.validation import MESSAGES
from tests.hwdb.factories import (
    ComponentFactory,
    ComputationalModelFactory,
    GpuFactory,
    SystemModelFactory,
    UserFactory,
    one_gpu_graph,
)

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


def errors_of(excinfo: pytest.ExceptionInfo[ValidationError]) -> dict[str, list[str]]:
    return excinfo.value.message_dict


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


@pytest.mark.parametrize(
    ("key", "value", "message"),
    [
        ("SMs", -13, "Row 2: SMs must be greater than 0 (got -13)."),
        ("bandwidth", 0, "Row 2: bandwidth must be greater than 0 (got 0)."),
        ("startupHTD", -1e-6, "Row 2: startupHTD must be 0 or more (got -1e-06)."),
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


def test_a_component_used_by_other_users_cannot_be_made_private() -> None:
    component = GpuFactory(shared=True)
    SystemModelFactory(graph=one_gpu_graph(component.pk), owner=UserFactory()).components.set(
        [component]
    )
    with pytest.raises(ValidationError) as excinfo:
        component_update(component=component, fields={"shared": False})
    assert list(errors_of(excinfo)) == ["shared"]
    assert Component.objects.get(pk=component.pk).shared is True


def test_a_system_model_links_the_records_its_graph_references() -> None:
    owner = UserFactory()
    gpu = GpuFactory(owner=owner)
    model = ComputationalModelFactory(owner=owner)
    system = system_model_create(owner=owner, name="S", graph=one_gpu_graph(gpu.pk, model.pk))
    assert list(system.components.all()) == [gpu]
    assert list(system.computational_models.all()) == [model]


def test_a_system_model_cannot_reference_someone_elses_private_hardware() -> None:
    private = GpuFactory()
    with pytest.raises(ValidationError) as excinfo:
        system_model_create(owner=UserFactory(), name="S", graph=one_gpu_graph(private.pk))
    assert errors_of(excinfo) == {
        "graph.nodes[1].hardware": [MESSAGES["hardware_missing"].format(ref=private.pk)]
    }


def test_a_shared_system_model_references_only_shared_records() -> None:
    owner = UserFactory()
    gpu = GpuFactory(owner=owner)
    with pytest.raises(ValidationError) as excinfo:
        system_model_create(owner=owner, name="S", graph=one_gpu_graph(gpu.pk), shared=True)
    assert errors_of(excinfo) == {
        "graph.nodes[1].hardware": [MESSAGES["shared_needs_shared_hardware"].format(ref=gpu.pk)]
    }


def test_the_graph_rules_of_the_simulator_apply() -> None:
    owner = UserFactory()
    graph = one_gpu_graph(GpuFactory(owner=owner).pk)
    graph["nodes"][1]["count"] = 0
    graph["edges"] = [["gpu0", "nowhere"]]
    with pytest.raises(ValidationError) as excinfo:
        system_model_create(owner=owner, name="S", graph=graph)
    assert set(errors_of(excinfo)) == {"graph.nodes[1].count", "graph.edges[0][1]"}


def test_a_snapshot_inlines_hardware_and_models_and_imports_back() -> None:
    owner = UserFactory()
    gpu = GpuFactory(owner=owner)
    model = ComputationalModelFactory(owner=owner)
    system = system_model_create(owner=owner, name="Testbed", graph=one_gpu_graph(gpu.pk, model.pk))
    snapshot = system_model_export_snapshot(system_model=system)
    key = f"hw-{gpu.pk}"
    assert snapshot["hardware"][key]["attributes"] == {"SMs": 13.0, "SMCoreClock": 1253.0}
    assert snapshot["models"][f"model-{model.pk}"]["source"] == model.source
    assert snapshot["nodes"][1]["hardware"] == key

    importer = UserFactory()
    imported = system_model_import_snapshot(snapshot=snapshot, owner=importer)
    copy = imported.components.get()
    assert copy.owner == importer and copy.pk != gpu.pk and copy.shared is False
    again = system_model_export_snapshot(system_model=imported)
    assert list(again["hardware"].values()) == list(snapshot["hardware"].values())
    assert again["edges"] == snapshot["edges"]


def test_an_import_reuses_an_identical_component_the_user_can_see() -> None:
    shared_gpu = GpuFactory(owner=None, shared=True)
    system = SystemModelFactory(graph=one_gpu_graph(shared_gpu.pk), owner=None, shared=True)
    snapshot = system_model_export_snapshot(system_model=system)
    imported = system_model_import_snapshot(snapshot=snapshot, owner=UserFactory())
    assert imported.components.get() == shared_gpu


def test_a_rejected_import_stores_nothing() -> None:
    owner = UserFactory()
    snapshot = system_model_export_snapshot(system_model=SystemModelFactory(owner=owner))
    snapshot["nodes"][1]["labels"] = {"not an identifier": 1}
    counts = (Component.objects.count(), SystemModel.objects.count())
    with pytest.raises(ValidationError) as excinfo:
        system_model_import_snapshot(snapshot=snapshot, owner=UserFactory())
    assert list(errors_of(excinfo)) == ["nodes[1].labels"]
    assert (Component.objects.count(), SystemModel.objects.count()) == counts


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


def test_a_computational_model_clone_is_editable_even_from_a_builtin() -> None:
    builtin = computational_model_create(
        owner=None, name="Volkov", source="function f(){}", builtin=True, shared=True
    )
    clone = computational_model_clone(model=builtin, owner=UserFactory())
    assert (clone.builtin, clone.shared, clone.source) == (False, False, builtin.source)


def test_a_computational_model_in_use_cannot_be_deleted() -> None:
    owner = UserFactory()
    model = ComputationalModelFactory(owner=owner)
    system_model_create(
        owner=owner, name="S", graph=one_gpu_graph(GpuFactory(owner=owner).pk, model.pk)
    )
    with pytest.raises(RecordInUseError):
        computational_model_delete(model=model)
    assert ComputationalModel.objects.filter(pk=model.pk).exists()


def test_components_of_other_kinds_need_no_attributes() -> None:
    component = ComponentFactory(type="STORAGE")
    assert component_attribute_data(component) == []
