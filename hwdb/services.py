"""Writes to the hardware database. Each validates everything first and then writes inside
one transaction, so a rejected write leaves the stored records exactly as they were.

Errors are Django `ValidationError`s keyed by field path ("name", "attributes[1].value",
"graph.nodes[2].count", "components[0].type", "hardware.hw-3.attributes.SMs"), which the REST
layer returns as 400 responses. Deleting a record that system models still use raises
`RecordInUseError`.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, cast

from django.core.exceptions import ValidationError
from django.db import transaction
from django.db.models import QuerySet

from hwdb.graphs import graph_errors, graph_references
from hwdb.models import (
    Attribute,
    Component,
    ComputationalModel,
    ModelLanguage,
    OwnedRecord,
    SystemModel,
)
from hwdb.selectors import (
    can_change,
    component_attributes,
    visible_components,
    visible_computational_models,
)
from hwdb.validation import (
    MESSAGES,
    MODEL_SOURCE_MAX_LENGTH,
    NAME_MAX_LENGTH,
    duplicate_key_errors,
    null_character_paths,
    validate_attribute_key,
)
from simulator import memory_spec

if TYPE_CHECKING:
    from django.contrib.auth.models import User

Errors = dict[str, list[str]]
AttributeData = Mapping[str, Any]

COMPONENT_FIELDS = ("type", "name", "vendor", "comment", "source_url", "shared")
COMPUTATIONAL_MODEL_FIELDS = ("name", "language", "source", "description", "shared")
SYSTEM_MODEL_FIELDS = ("name", "description", "shared", "graph")
ATTRIBUTE_FIELDS = ("key", "value", "unit", "source")
COPY_SUFFIX = " (copy)"


class RecordInUseError(Exception):
    """A component or computational model cannot be deleted: system models reference it."""


def _merge(errors: Errors, prefix: str, more: Mapping[str, Sequence[str]]) -> None:
    for path, messages in more.items():
        key = prefix if path == "__all__" else f"{prefix}.{path}" if prefix else path
        errors.setdefault(key, []).extend(messages)


def _raise_if(errors: Errors) -> None:
    if errors:
        raise ValidationError(errors)


def _field_errors(record: OwnedRecord | Attribute, exclude: Sequence[str]) -> Errors:
    errors: Errors = {}
    try:
        record.full_clean(exclude=list(exclude), validate_unique=False, validate_constraints=False)
    except ValidationError as error:
        errors = {field: list(messages) for field, messages in error.message_dict.items()}
    # Model fields, unlike form and serializer fields, let NUL through; PostgreSQL refuses it.
    for field in record._meta.concrete_fields:
        value = getattr(record, field.attname, None)
        if field.name not in exclude and isinstance(value, str) and "\x00" in value:
            errors.setdefault(field.name, []).append(MESSAGES["null_character"])
    return errors


def _copy_name(name: str) -> str:
    return name[: NAME_MAX_LENGTH - len(COPY_SUFFIX)] + COPY_SUFFIX


def _names(system_models: Iterable[SystemModel]) -> str:
    return ", ".join(repr(s.name) for s in list(system_models)[:5])


def _unshare_errors(users: QuerySet[SystemModel], owner_id: int | None) -> Errors:
    """Return errors when a record about to become private is still used by system models
    other users own (they would break) or by shared ones (they would expose it to everyone)."""
    others = users.exclude(owner_id=owner_id)
    if others.exists():
        return {"shared": [MESSAGES["unshare_in_use"].format(names=_names(others))]}
    shared = users.filter(shared=True)
    if shared.exists():
        return {"shared": [MESSAGES["unshare_in_shared"].format(names=_names(shared))]}
    return {}


# --- components --------------------------------------------------------------------------


def _attribute_records(attributes: Sequence[AttributeData]) -> tuple[list[Attribute], Errors]:
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
        field_errors = _field_errors(record, exclude=["component"])
        if isinstance(data.get("value"), bool):
            field_errors["value"] = [MESSAGES["not_a_number"]]
        _merge(errors, path, field_errors)
        records.append(record)
    if not errors:
        for index, message in duplicate_key_errors(attributes).items():
            errors.setdefault(f"attributes[{index}].key", []).append(message)
    return records, errors


def _component_errors(
    component: Component, attributes: Sequence[AttributeData] | None
) -> tuple[list[Attribute] | None, Errors]:
    errors = _field_errors(component, exclude=["owner"])
    records = None
    if attributes is not None:
        records, attribute_errors = _attribute_records(attributes)
        errors.update(attribute_errors)
    if component.type in memory_spec.MEMORY_TYPES and not errors:
        _merge(errors, "", _memory_attribute_errors(component, records))
    return records, errors


def _memory_attribute_errors(component: Component, records: list[Attribute] | None) -> Errors:
    """Return the errors of a cache's or fabric's attributes (simulator.memory_spec), keyed
    by the attribute's path ("attributes[2].value") or "attributes" when one is missing."""
    if records is None:
        records = list(component.attributes.all()) if component.pk else []
    index_of = {record.key: index for index, record in enumerate(records)}
    values = {record.key: float(record.value) for record in records}
    errors: Errors = {}
    for key, messages in memory_spec.attribute_errors(component.type, values).items():
        path = f"attributes[{index_of[key]}].value" if key in index_of else "attributes"
        errors.setdefault(path, []).extend(messages)
    return errors


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
        shared=shared,
    )
    records, errors = _component_errors(component, attributes)
    _raise_if(errors)
    component.save()
    _store_attributes(component, records or [])
    return component


@transaction.atomic
def component_update(
    *,
    component: Component,
    fields: Mapping[str, Any],
    attributes: Sequence[AttributeData] | None = None,
) -> Component:
    """Return the updated component; `attributes`, when given, replace all of them at once."""
    unknown = sorted(set(fields) - set(COMPONENT_FIELDS))
    if unknown:
        raise ValidationError({key: ["This field cannot be changed."] for key in unknown})
    stored = Component.objects.select_for_update().get(pk=component.pk)
    was_shared = stored.shared
    for key, value in fields.items():
        setattr(stored, key, value)
    records, errors = _component_errors(stored, attributes)
    if was_shared and not stored.shared:
        _merge(errors, "", _unshare_errors(stored.system_models.all(), stored.owner_id))
    _raise_if(errors)
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
        name=name if name is not None else _copy_name(component.name),
        vendor=component.vendor,
        comment=component.comment,
        source_url=component.source_url,
        shared=False,
        attributes=component_attribute_data(component),
    )


@transaction.atomic
def component_delete(*, component: Component) -> None:
    """Delete `component`; raise RecordInUseError while system models reference it."""
    users = component.system_models.all()
    if users.exists():
        raise RecordInUseError(MESSAGES["component_in_use"].format(names=_names(users)))
    component.delete()


def component_attribute_data(component: Component) -> list[dict[str, Any]]:
    """Return the component's attributes as plain dicts (key, value, unit, source), from the
    rows `hwdb.selectors.component_attributes` loaded when it did."""
    if component.attribute_rows is not None:
        return [dict(row) for row in component.attribute_rows]
    return [
        {"key": a.key, "value": a.value, "unit": a.unit, "source": a.source}
        for a in component.attributes.all()
    ]


def component_export_data(component: Component) -> dict[str, Any]:
    """Return one component in the bulk import/export (and seed) format."""
    return {
        "name": component.name,
        "type": component.type,
        "vendor": component.vendor,
        "comment": component.comment,
        "source_url": component.source_url,
        "attributes": component_attribute_data(component),
    }


def components_export(*, components: Iterable[Component]) -> dict[str, Any]:
    """Return {"components": [...]} in the format `components_import` and the seed files use."""
    return {"components": [component_export_data(c) for c in components]}


@transaction.atomic
def components_import(*, data: object, owner: User | None, shared: bool = False) -> list[Component]:
    """Return the components created from `{"components": [...]}`; all or none are stored."""
    items = data.get("components") if isinstance(data, Mapping) else None
    if not isinstance(items, list):
        raise ValidationError({"components": ['Expected {"components": [ ... ]}.']})
    errors: Errors = {}
    prepared: list[tuple[Component, list[Attribute]]] = []
    allowed = {"name", "type", "vendor", "comment", "source_url", "attributes"}
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
            **{k: item.get(k, "") for k in ("name", "type", "vendor", "comment", "source_url")},
        )
        records, component_errors = _component_errors(component, item.get("attributes", []))
        _merge(errors, path, component_errors)
        prepared.append((component, records or []))
    _raise_if(errors)
    for component, records in prepared:
        component.save()
        _store_attributes(component, records)
    return [component for component, _ in prepared]


CALIBRATION_MESSAGES = {
    "builtin": (
        "Built-in records cannot be calibrated in place; clone this component "
        "(POST /api/components/{id}/clone/) and store the calibration on your copy."
    ),
    "not_owner": (
        "Only the owner or staff may store a calibration on this component; clone it "
        "(POST /api/components/{id}/clone/) and store the calibration on your copy."
    ),
}


class CalibrationPermissionError(Exception):
    """The user may not store a calibration on this component (403); the message says why."""


def component_calibrate(
    *,
    component: Component,
    user: User,
    kind: str,
    measurements: object,
    store: bool = False,
    idle_power_w: float | None = None,
) -> dict[str, Any]:
    """Return the fit of `measurements` (simulator.calibrate: t_s and lambda_c per direction,
    lambda_k, or E_b and P_s) with the attributes that store it; with `store`, write those
    attributes on `component` in one transaction (added, or replacing the same keys).

    A transfer fit reads the link's bandwidth from the `bandwidth` attribute [B/s]. Bad
    measurements raise ValidationError keyed by field path ("measurements[2].seconds");
    storing on a built-in record, or on someone else's without being staff, raises
    CalibrationPermissionError.
    """
    # Imported here like the other simulator imports: hwdb uses the simulator, never the reverse.
    from django.utils import timezone

    from simulator.calibrate import CalibrationInputError, calibrate

    if store:
        if component.is_builtin:
            raise CalibrationPermissionError(
                CALIBRATION_MESSAGES["builtin"].format(id=component.pk)
            )
        if not can_change(user=user, record=component):
            raise CalibrationPermissionError(
                CALIBRATION_MESSAGES["not_owner"].format(id=component.pk)
            )
    bandwidth = next((a.value for a in component.attributes.all() if a.key == "bandwidth"), None)
    try:
        result = calibrate(
            kind,
            measurements,
            bandwidth=bandwidth,
            idle_power_w=idle_power_w,
            date=timezone.now().date().isoformat(),
            user=user.get_username(),
        )
    except CalibrationInputError as error:
        raise ValidationError(error.errors) from None
    if store:
        _store_calibration(component, result.attributes)
    return {**result.to_dict(), "component": component.pk, "stored": store}


@transaction.atomic
def _store_calibration(component: Component, attributes: Sequence[AttributeData]) -> None:
    stored = Component.objects.select_for_update().get(pk=component.pk)
    records, errors = _attribute_records(attributes)
    _raise_if(errors)
    for record in records:
        Attribute.objects.update_or_create(
            component=stored,
            key=record.key,
            defaults={"value": record.value, "unit": record.unit, "source": record.source},
        )
    stored.save(update_fields=["updated"])


# --- computational models ---------------------------------------------------------------------


def _model_errors(model: ComputationalModel, *, check_syntax: bool = False) -> Errors:
    errors = _field_errors(model, exclude=["owner"])
    if isinstance(model.source, str) and len(model.source) > MODEL_SOURCE_MAX_LENGTH:
        errors.setdefault("source", []).append(
            f"Ensure this field has no more than {MODEL_SOURCE_MAX_LENGTH} characters."
        )
    if check_syntax and not errors:
        _merge(errors, "", _syntax_errors(model))
    return errors


def _syntax_errors(model: ComputationalModel) -> Errors:
    """Return {"source": ["Line N: SyntaxError: ..."]} when the JavaScript does not parse.

    The check runs in the sandbox's child process (never in this one); a user's model is
    checked when it is saved, a built-in one is trusted.
    """
    from simulator.errors import ModelEvaluationError
    from simulator.evaluate import check_in_sandbox

    try:
        check_in_sandbox(model_key=model.name, source=model.source)
    except ModelEvaluationError as error:
        last_line = model.source.count("\n") + 1
        line = min(error.line, last_line) if error.line is not None else None
        where = f"Line {line}: " if line is not None else ""
        return {"source": [where + error.detail]}
    return {}


@transaction.atomic
def computational_model_create(
    *,
    owner: User | None,
    name: str,
    source: str,
    description: str = "",
    language: str = ModelLanguage.JAVASCRIPT,
    shared: bool = False,
    builtin: bool = False,
) -> ComputationalModel:
    """Return a new computational model; built-in ones have no owner and are shared."""
    model = ComputationalModel(
        owner=owner,
        name=name,
        source=source,
        description=description,
        language=language,
        shared=shared,
        builtin=builtin,
    )
    _raise_if(_model_errors(model, check_syntax=owner is not None))
    model.save()
    return model


@transaction.atomic
def computational_model_update(
    *, model: ComputationalModel, fields: Mapping[str, Any]
) -> ComputationalModel:
    """Return the updated computational model."""
    unknown = sorted(set(fields) - set(COMPUTATIONAL_MODEL_FIELDS))
    if unknown:
        raise ValidationError({key: ["This field cannot be changed."] for key in unknown})
    stored = ComputationalModel.objects.select_for_update().get(pk=model.pk)
    was_shared = stored.shared
    source_changed = "source" in fields and fields["source"] != stored.source
    for key, value in fields.items():
        setattr(stored, key, value)
    errors = _model_errors(stored, check_syntax=source_changed and stored.owner_id is not None)
    if was_shared and not stored.shared:
        _merge(errors, "", _unshare_errors(stored.system_models.all(), stored.owner_id))
    _raise_if(errors)
    stored.save()
    return stored


@transaction.atomic
def computational_model_clone(
    *, model: ComputationalModel, owner: User, name: str | None = None
) -> ComputationalModel:
    """Return a private, editable copy of `model` (built-in or not) owned by `owner`."""
    return computational_model_create(
        owner=owner,
        name=name if name is not None else _copy_name(model.name),
        source=model.source,
        description=model.description,
        language=model.language,
    )


def computational_model_evaluate(
    *,
    model: ComputationalModel,
    component: Component,
    function: str,
    args: Sequence[object],
    params: Mapping[str, object],
) -> float:
    """Return `function(*args, params)` of `model` bound to `component`'s attributes.

    The JavaScript runs in the sandbox's limited child process, never in this one; raise
    simulator.errors.ModelEvaluationError (with the model's line where known) on failure.
    """
    # Imported here like the snapshot import: hwdb uses the simulator, never the reverse.
    from simulator.evaluate import evaluate_in_sandbox

    return evaluate_in_sandbox(
        model_key=model.name,
        source=model.source,
        attributes={a.key: a.value for a in component.attributes.all()},
        function=function,
        args=args,
        params=params,
    )


@transaction.atomic
def computational_model_delete(*, model: ComputationalModel) -> None:
    """Delete `model`; raise RecordInUseError while system models reference it."""
    users = model.system_models.all()
    if users.exists():
        raise RecordInUseError(MESSAGES["model_in_use"].format(names=_names(users)))
    model.delete()


# --- system models ----------------------------------------------------------------------------


def _system_model_errors(system_model: SystemModel) -> Errors:
    errors = _field_errors(system_model, exclude=["owner", "graph", "components"])
    _merge(
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
    _raise_if(_system_model_errors(system_model))
    system_model.save()
    _link_references(system_model)
    return system_model


@transaction.atomic
def system_model_update(*, system_model: SystemModel, fields: Mapping[str, Any]) -> SystemModel:
    """Return the updated system model; the graph is checked again as a whole."""
    unknown = sorted(set(fields) - set(SYSTEM_MODEL_FIELDS))
    if unknown:
        raise ValidationError({key: ["This field cannot be changed."] for key in unknown})
    stored = SystemModel.objects.select_for_update().get(pk=system_model.pk)
    for key, value in fields.items():
        setattr(stored, key, value)
    _raise_if(_system_model_errors(stored))
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
        name=name if name is not None else _copy_name(system_model.name),
        graph=system_model.graph,
        description=system_model.description,
    )


@transaction.atomic
def system_model_delete(*, system_model: SystemModel) -> None:
    """Delete `system_model` (simulations keep their own frozen snapshots)."""
    system_model.delete()


def _hardware_key(component_id: int) -> str:
    return f"hw-{component_id}"


def _model_key(model_id: int) -> str:
    return f"model-{model_id}"


def system_model_export_snapshot(*, system_model: SystemModel) -> dict[str, Any]:
    """Return the self-contained snapshot of DESIGN.md "Contracts" (records inlined)."""
    graph = system_model.graph if isinstance(system_model.graph, dict) else {}
    # Every launch of a system model exports it: attributes as plain rows, not records.
    components = component_attributes(
        components=Component.objects.filter(pk__in=graph_references(graph, "hardware")).only(
            "type", "name", "vendor"
        )
    )
    models = ComputationalModel.objects.filter(pk__in=graph_references(graph, "model")).only(
        "name", "language", "source"
    )
    hardware = {
        _hardware_key(c.pk): {
            "type": c.type,
            "name": c.name,
            "vendor": c.vendor,
            "attributes": {a["key"]: a["value"] for a in c.attribute_rows or []},
            "units": {a["key"]: a["unit"] for a in c.attribute_rows or [] if a["unit"]},
        }
        for c in components
    }
    inlined_models = {
        _model_key(m.pk): {"name": m.name, "language": m.language, "source": m.source}
        for m in models
    }
    nodes = []
    for node in graph.get("nodes", []):
        node = dict(node)
        if node.get("hardware") is not None:
            node["hardware"] = _hardware_key(node["hardware"])
        if node.get("model") is not None:
            node["model"] = _model_key(node["model"])
        nodes.append(node)
    return {
        "name": system_model.name,
        "description": system_model.description,
        "hardware": hardware,
        "models": inlined_models,
        "nodes": nodes,
        "edges": [list(edge) for edge in graph.get("edges", [])],
    }


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


def builtin_component_for(
    *, type: str, name: str, attributes: Mapping[str, float]
) -> Component | None:
    """Return the oldest built-in component of this type and name that carries every one of
    `attributes` with the same value (it may carry more), or None.

    A computational model reading only those attributes computes the same on either record,
    so an example snapshot's hardware maps onto the seeded record instead of duplicating it.
    """
    candidates = (
        Component.objects.filter(owner=None, type=type, name=name)
        .order_by("id")
        .prefetch_related("attributes")
    )
    for candidate in candidates:
        stored = {a.key: a.value for a in candidate.attributes.all()}
        if all(key in stored and stored[key] == value for key, value in attributes.items()):
            return candidate
    return None


def _find_or_create_component(record: Mapping[str, Any], owner: User | None) -> Component:
    attributes = {str(k): float(v) for k, v in record.get("attributes", {}).items()}
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
    units = record.get("units", {})
    return component_create(
        owner=owner,
        type=record["type"],
        name=record["name"],
        vendor=record.get("vendor", ""),
        shared=owner is None,
        attributes=[
            {"key": k, "value": v, "unit": units.get(k, "")} for k, v in attributes.items()
        ],
    )


def _find_or_create_model(
    key: str, record: Mapping[str, Any], owner: User | None
) -> ComputationalModel:
    language = record.get("language", ModelLanguage.JAVASCRIPT)
    name = record.get("name", key)
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
            return builtin
        return computational_model_create(
            owner=None,
            name=name,
            source=record["source"],
            language=language,
            shared=True,
            builtin=True,
        )
    found = (
        visible_computational_models(user=owner)
        .filter(language=language, source=record["source"], name=name)
        .first()
    )
    if found is not None:
        return found
    return computational_model_create(
        owner=owner, name=name, source=record["source"], language=language, shared=owner is None
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
    # Imported here: the simulator is only needed for imports, and it must stay Django-free.
    from simulator.errors import SnapshotError
    from simulator.snapshot import load_snapshot

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
    _raise_if(errors)
    hardware_ids = {
        key: _find_or_create_component(record, owner).pk
        for key, record in snapshot["hardware"].items()
    }
    model_ids = {
        key: _find_or_create_model(key, record, owner).pk
        for key, record in (snapshot.get("models") or {}).items()
    }
    nodes = []
    for node in snapshot["nodes"]:
        node = dict(node)
        if node.get("hardware") is not None:
            node["hardware"] = hardware_ids[node["hardware"]]
        if node.get("model") is not None:
            node["model"] = model_ids[node["model"]]
        nodes.append(node)
    graph = {"nodes": nodes, "edges": [list(edge) for edge in snapshot.get("edges", [])]}
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
