"""Writes of system models: create, update, clone, delete, and import from a snapshot.

A snapshot's records and keys are read and written by `hwdb.snapshot_codec`; the export,
a read, is `hwdb.selectors.system_model_export_snapshot`.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from django.core.exceptions import ValidationError
from django.db import transaction

from hwdb.graphs import graph_errors
from hwdb.models import Component, ComputationalModel, ModelLanguage, SystemModel
from hwdb.selectors import builtin_component_for, visible_components, visible_computational_models
from hwdb.services.common import (
    Errors,
    check_version,
    copy_name,
    merge_errors,
    note_changes,
    raise_if,
    record_field_errors,
)
from hwdb.services.components import component_create
from hwdb.services.computational_models import (
    computational_model_create,
    computational_model_update,
)
from hwdb.snapshot_codec import (
    graph_references,
    record_attribute_data,
    record_attributes,
    system_graph,
)
from hwdb.validation import (
    MESSAGES,
    MODEL_SOURCE_MAX_LENGTH,
    NAME_MAX_LENGTH,
    null_character_paths,
    validate_attribute_key,
)
from simulator.errors import SnapshotError
from simulator.models.architectures import family_named
from simulator.snapshot import load_snapshot

if TYPE_CHECKING:
    from django.contrib.auth.models import User

SYSTEM_MODEL_FIELDS = ("name", "description", "shared", "graph")


def _system_model_errors(system_model: SystemModel) -> Errors:
    errors = record_field_errors(system_model, exclude=["owner", "graph", "components"])
    merge_errors(
        errors,
        "graph",
        graph_errors(system_model.graph, owner=system_model.owner, shared=system_model.shared),
    )
    return errors


def _link_references(system_model: SystemModel) -> None:
    system_model.components.set(graph_references(system_model.graph, "hardware"))
    system_model.computational_models.set(graph_references(system_model.graph, "model"))


@transaction.atomic
def system_model_create(
    *,
    owner: User | None,
    name: str,
    graph: object,
    description: str = "",
    shared: bool = False,
) -> SystemModel:
    """Return a new system model after checking its graph and every reference in it."""
    system_model = SystemModel(
        owner=owner, name=name, graph=graph, description=description, shared=shared
    )
    raise_if(_system_model_errors(system_model))
    system_model.save()
    _link_references(system_model)
    return system_model


@transaction.atomic
def system_model_update(
    *,
    system_model: SystemModel,
    fields: Mapping[str, Any],
    expected_version: int | None = None,
) -> SystemModel:
    """Return the updated system model; the graph is checked again as a whole. With
    `expected_version`, raise RecordVersionError (and write nothing) when the stored one is
    another version."""
    unknown = sorted(set(fields) - set(SYSTEM_MODEL_FIELDS))
    if unknown:
        raise ValidationError({key: ["This field cannot be changed."] for key in unknown})
    stored = SystemModel.objects.select_for_update().get(pk=system_model.pk)
    check_version(stored, expected_version)
    before = {field: getattr(stored, field) for field in SYSTEM_MODEL_FIELDS}
    for key, value in fields.items():
        setattr(stored, key, value)
    raise_if(_system_model_errors(stored))
    note_changes(stored, before, {field: getattr(stored, field) for field in SYSTEM_MODEL_FIELDS})
    stored.save()
    _link_references(stored)
    return stored


@transaction.atomic
def system_model_clone(
    *, system_model: SystemModel, owner: User, name: str | None = None
) -> SystemModel:
    """Return a private copy of `system_model` owned by `owner`, referencing the same records."""
    return system_model_create(
        owner=owner,
        name=name if name is not None else copy_name(system_model.name),
        graph=system_model.graph,
        description=system_model.description,
    )


@transaction.atomic
def system_model_delete(*, system_model: SystemModel) -> None:
    """Delete `system_model` (simulations keep their own frozen snapshots)."""
    system_model.delete()


def _snapshot_record_errors(snapshot: Mapping[str, Any]) -> Errors:
    """Return errors the simulator's loader does not look for: attribute keys and units."""
    errors: Errors = {}
    hardware = snapshot.get("hardware")
    for key, record in (hardware or {}).items() if isinstance(hardware, dict) else ():
        if not isinstance(record, dict):
            continue
        attributes = record.get("attributes", {})
        for name in attributes if isinstance(attributes, dict) else ():
            try:
                validate_attribute_key(name)
            except ValidationError as error:
                errors[f"hardware.{key}.attributes.{name}"] = list(error.messages)
        units = record.get("units", {})
        if not isinstance(units, dict) or not all(
            isinstance(u, str) and len(u) <= 50 for u in units.values()
        ):
            errors[f"hardware.{key}.units"] = ["Expected an object of unit strings."]
        vendor = record.get("vendor", "")
        if not isinstance(vendor, str) or len(vendor) > 100:
            errors[f"hardware.{key}.vendor"] = ["Expected a string of at most 100 characters."]
    models = snapshot.get("models")
    for key, record in (models or {}).items() if isinstance(models, dict) else ():
        if isinstance(record, dict):
            name = record.get("name", key)
            if not isinstance(name, str) or not name.strip() or len(name) > NAME_MAX_LENGTH:
                errors[f"models.{key}.name"] = [
                    f"Expected a non-empty string of at most {NAME_MAX_LENGTH} characters."
                ]
            source = record.get("source")
            if isinstance(source, str) and len(source) > MODEL_SOURCE_MAX_LENGTH:
                errors[f"models.{key}.source"] = [
                    f"Ensure this field has no more than {MODEL_SOURCE_MAX_LENGTH} characters."
                ]
    for path in null_character_paths(snapshot):
        errors.setdefault(path or "snapshot", []).append(MESSAGES["null_character"])
    return errors


def _find_or_create_component(record: Mapping[str, Any], owner: User | None) -> Component:
    attributes = record_attributes(record)
    if owner is None:
        builtin = builtin_component_for(
            type=record["type"], name=record["name"], attributes=attributes
        )
        if builtin is not None:
            return builtin
    candidates = (
        visible_components(user=owner)
        .filter(type=record["type"], name=record["name"])
        .prefetch_related("attributes")
    )
    for candidate in candidates if owner is not None else ():
        if {a.key: a.value for a in candidate.attributes.all()} == attributes:
            return candidate
    return component_create(
        owner=owner,
        type=record["type"],
        name=record["name"],
        vendor=record.get("vendor", ""),
        recommended_model=record.get("recommendedModel") or "",
        shared=owner is None,
        attributes=record_attribute_data(record),
    )


def _find_or_create_model(
    key: str, record: Mapping[str, Any], owner: User | None
) -> ComputationalModel:
    language = record.get("language", ModelLanguage.JAVASCRIPT)
    name = record.get("name", key)
    # load_snapshot has checked the families; the record is stored under their canonical names
    families = (family_named(name) for name in record.get("validatedArchitectures", []))
    validated = list(dict.fromkeys(f for f in families if f is not None))
    if owner is None:
        # Built-in imports (seeded examples) reuse a built-in model with the same code,
        # whatever its name, and never a user's shared record.
        builtin = (
            ComputationalModel.objects.filter(
                owner=None, language=language, source=record["source"]
            )
            .order_by("-builtin", "id")
            .first()
        )
        if builtin is not None:
            if validated and builtin.validated_architectures != validated:
                # the example's record is where a shipped model's claim is kept
                return computational_model_update(
                    model=builtin, fields={"validated_architectures": validated}
                )
            return builtin
        return computational_model_create(
            owner=None,
            name=name,
            source=record["source"],
            language=language,
            shared=True,
            builtin=True,
            validated_architectures=validated,
        )
    found = (
        visible_computational_models(user=owner)
        .filter(language=language, source=record["source"], name=name)
        .filter(validated_architectures=validated)
        .first()
    )
    if found is not None:
        return found
    return computational_model_create(
        owner=owner,
        name=name,
        source=record["source"],
        language=language,
        shared=owner is None,
        validated_architectures=validated,
    )


@transaction.atomic
def system_model_import_snapshot(
    *,
    snapshot: object,
    owner: User | None,
    shared: bool = False,
    replace: SystemModel | None = None,
) -> SystemModel:
    """Return the system model built from a snapshot, with the owner's own copies of its records.

    A component visible to the owner with the same type, name and attributes is reused, and
    likewise a computational model with the same name, language and source; everything else
    is created private to the owner. With owner None (built-in examples) only built-in records
    are reused: a component of the same type and name carrying the snapshot's attributes
    (`builtin_component_for`) and a model with the same source; new ones are shared. `replace` updates
    an existing system model instead of creating one. All or nothing.
    """
    if not isinstance(snapshot, dict):
        raise ValidationError({"snapshot": [MESSAGES["snapshot_object"]]})
    errors: Errors = {}
    try:
        load_snapshot(snapshot)
    except SnapshotError as error:
        errors.update(error.errors)
    description = snapshot.get("description", "")
    if not isinstance(description, str):
        errors["description"] = ["Expected a string."]
    for path, messages in _snapshot_record_errors(snapshot).items():
        errors.setdefault(path, []).extend(messages)
    raise_if(errors)
    hardware_ids = {
        key: _find_or_create_component(record, owner).pk
        for key, record in snapshot["hardware"].items()
    }
    model_ids = {
        key: _find_or_create_model(key, record, owner).pk
        for key, record in (snapshot.get("models") or {}).items()
    }
    graph = system_graph(snapshot, hardware_ids=hardware_ids, model_ids=model_ids)
    if replace is not None:
        unchanged = (replace.name, replace.description, replace.graph) == (
            snapshot["name"],
            description,
            graph,
        )
        if unchanged:
            return replace
        return system_model_update(
            system_model=replace,
            fields={"name": snapshot["name"], "description": description, "graph": graph},
        )
    return system_model_create(
        owner=owner, name=snapshot["name"], description=description, graph=graph, shared=shared
    )
