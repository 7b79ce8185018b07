"""Writes of components and their attributes: create, update, clone, delete, bulk import.

Attributes are checked as a whole (keys unique, values numbers, a cache's or fabric's
attributes those `simulator.memory_spec` asks for) before anything is stored.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, cast

from django.core.exceptions import ValidationError
from django.db import transaction

from hwdb.models import Attribute, Component
from hwdb.selectors import component_attribute_data
from hwdb.services.common import (
    AttributeData,
    Errors,
    RecordInUseError,
    check_version,
    copy_name,
    in_use_message,
    merge_errors,
    note_changes,
    others_keep_copies,
    raise_if,
    record_field_errors,
    unshare_errors,
)
from hwdb.validation import MESSAGES, attribute_row_errors, memory_attribute_errors

if TYPE_CHECKING:
    from django.contrib.auth.models import User

COMPONENT_FIELDS = (
    "type",
    "name",
    "vendor",
    "comment",
    "source_url",
    "recommended_model",
    "shared",
)
ATTRIBUTE_FIELDS = ("key", "value", "unit", "source")


def attribute_records(attributes: Sequence[AttributeData]) -> tuple[list[Attribute], Errors]:
    records: list[Attribute] = []
    errors: Errors = {}
    if isinstance(attributes, str | bytes) or not isinstance(attributes, Sequence):
        return records, {"attributes": ["Expected a list of attributes."]}
    for index, data in enumerate(attributes):
        path = f"attributes[{index}]"
        if not isinstance(data, Mapping):
            errors[path] = ["Expected an object with key, value, unit and source."]
            continue
        unknown = sorted(set(data) - set(ATTRIBUTE_FIELDS))
        if unknown:
            errors[path] = [f"Unknown attribute fields: {', '.join(map(str, unknown))}."]
        record = Attribute(
            key=data.get("key", ""),
            value=cast(Any, data.get("value")),
            unit=data.get("unit", ""),
            source=data.get("source", ""),
        )
        field_errors = record_field_errors(record, exclude=["component"])
        if isinstance(data.get("value"), bool):
            field_errors["value"] = [MESSAGES["not_a_number"]]
        merge_errors(errors, path, field_errors)
        records.append(record)
    # The rules across rows and the ranges, reported with the rows' own errors at once.
    for index, field, message in attribute_row_errors(attributes):
        path = f"attributes[{index}].{field}"
        if path not in errors:
            errors[path] = [message]
    return records, errors


def _component_errors(
    component: Component, attributes: Sequence[AttributeData] | None
) -> tuple[list[Attribute] | None, Errors]:
    errors = record_field_errors(component, exclude=["owner"])
    records = None
    if attributes is not None:
        records, attribute_errors = attribute_records(attributes)
        errors.update(attribute_errors)
    if "attributes" not in errors:
        merge_errors(errors, "", _memory_attribute_errors(component, attributes, errors))
    return records, errors


def _memory_attribute_errors(
    component: Component, attributes: Sequence[AttributeData] | None, errors: Errors
) -> Errors:
    """Return the errors of a cache's or fabric's attributes (simulator.memory_spec), keyed
    by the attribute's path ("attributes[2].value") or "attributes" when one is missing; rows
    with `errors` of their own are left out of them (hwdb.validation.memory_attribute_errors)."""
    if attributes is None:
        stored = component.attributes.all() if component.pk else []
        attributes = [{"key": record.key, "value": record.value} for record in stored]
    unread = {
        index
        for index in range(len(attributes))
        if any(p == f"attributes[{index}]" or p.startswith(f"attributes[{index}].") for p in errors)
    }
    by_row, missing = memory_attribute_errors(component.type, attributes, unread)
    found: Errors = {f"attributes[{index}].value": messages for index, messages in by_row.items()}
    if missing:
        found["attributes"] = missing
    return found


def _tracked_values(component: Component, records: list[Attribute] | None) -> dict[str, Any]:
    """Return what a save may change: the fields, and the attributes (`records`, else the
    stored ones) in key order."""
    values: dict[str, Any] = {field: getattr(component, field) for field in COMPONENT_FIELDS}
    if records is None:
        records = list(component.attributes.all())
    values["attributes"] = sorted(
        (str(r.key), float(r.value), str(r.unit), str(r.source)) for r in records
    )
    return values


def _store_attributes(component: Component, records: list[Attribute]) -> None:
    component.attributes.all().delete()
    for record in records:
        record.component = component
    Attribute.objects.bulk_create(records)


@transaction.atomic
def component_create(
    *,
    owner: User | None,
    type: str,
    name: str,
    vendor: str = "",
    comment: str = "",
    source_url: str = "",
    recommended_model: str = "",
    shared: bool = False,
    attributes: Sequence[AttributeData] = (),
) -> Component:
    """Return a new component with its attributes; owner None makes a built-in record."""
    component = Component(
        owner=owner,
        type=type,
        name=name,
        vendor=vendor,
        comment=comment,
        source_url=source_url,
        recommended_model=recommended_model,
        shared=shared,
    )
    records, errors = _component_errors(component, attributes)
    raise_if(errors)
    component.save()
    _store_attributes(component, records or [])
    return component


@transaction.atomic
def component_update(
    *,
    component: Component,
    fields: Mapping[str, Any],
    attributes: Sequence[AttributeData] | None = None,
    expected_version: int | None = None,
) -> Component:
    """Return the updated component; `attributes`, when given, replace all of them at once.

    With `expected_version`, raise RecordVersionError when the stored component is another
    version (someone saved it since); nothing is written then.
    """
    unknown = sorted(set(fields) - set(COMPONENT_FIELDS))
    if unknown:
        raise ValidationError({key: ["This field cannot be changed."] for key in unknown})
    stored = Component.objects.select_for_update().get(pk=component.pk)
    check_version(stored, expected_version)
    before = _tracked_values(stored, None)
    was_shared = stored.shared
    for key, value in fields.items():
        setattr(stored, key, value)
    records, errors = _component_errors(stored, attributes)
    withdrawn = was_shared and not stored.shared
    if withdrawn:
        merge_errors(errors, "", unshare_errors(stored.system_models.all(), stored.owner_id))
    raise_if(errors)
    if withdrawn:
        others_keep_copies(
            record=stored, users=stored.system_models.all(), key="hardware", copy=_copier(stored)
        )
    after = _tracked_values(stored, records)
    note_changes(stored, before, after)
    stored.save()
    if records is not None:
        _store_attributes(stored, records)
    return stored


@transaction.atomic
def component_clone(*, component: Component, owner: User, name: str | None = None) -> Component:
    """Return a private copy of `component` (attributes included) owned by `owner`."""
    return component_create(
        owner=owner,
        type=component.type,
        name=name if name is not None else copy_name(component.name),
        vendor=component.vendor,
        comment=component.comment,
        source_url=component.source_url,
        recommended_model=component.recommended_model,
        shared=False,
        attributes=component_attribute_data(component),
    )


@transaction.atomic
def component_delete(*, component: Component) -> None:
    """Delete `component`; raise RecordInUseError while its owner's system models reference
    it. Other users' system models that do get copies of their own."""
    users = component.system_models.all()
    refused = in_use_message(MESSAGES["component_in_use"], users, component.owner_id)
    if refused is not None:
        raise RecordInUseError(refused)
    others_keep_copies(record=component, users=users, key="hardware", copy=_copier(component))
    component.delete()


def _copier(component: Component) -> Callable[[User | None, bool], Component]:
    """Return a function making a copy of `component` as stored now (before the change
    under way) for another owner: the same name, fields and attributes."""
    original = Component.objects.get(pk=component.pk)
    attributes = component_attribute_data(original)

    def copy(owner: User | None, shared: bool) -> Component:
        return component_create(
            owner=owner,
            type=original.type,
            name=original.name,
            vendor=original.vendor,
            comment=original.comment,
            source_url=original.source_url,
            shared=shared,
            attributes=attributes,
        )

    return copy


@transaction.atomic
def components_import(*, data: object, owner: User | None, shared: bool = False) -> list[Component]:
    """Return the components created from `{"components": [...]}`; all or none are stored."""
    items = data.get("components") if isinstance(data, Mapping) else None
    if not isinstance(items, list):
        raise ValidationError({"components": ['Expected {"components": [ ... ]}.']})
    errors: Errors = {}
    prepared: list[tuple[Component, list[Attribute]]] = []
    plain = ("name", "type", "vendor", "comment", "source_url", "recommended_model")
    allowed = {*plain, "attributes"}
    for index, item in enumerate(items):
        path = f"components[{index}]"
        if not isinstance(item, Mapping):
            errors[path] = ["Expected an object."]
            continue
        unknown = sorted(set(item) - allowed)
        if unknown:
            errors[path] = [f"Unknown fields: {', '.join(map(str, unknown))}."]
        component = Component(
            owner=owner,
            shared=shared,
            **{k: item.get(k, "") for k in plain},
        )
        records, component_errors = _component_errors(component, item.get("attributes", []))
        merge_errors(errors, path, component_errors)
        prepared.append((component, records or []))
    raise_if(errors)
    for component, records in prepared:
        component.save()
        _store_attributes(component, records)
    return [component for component, _ in prepared]
