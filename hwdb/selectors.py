"""Reads of the hardware database, always through the requesting user's eyes.

A user sees their own records, shared records and built-in records; staff see everything.
Anything else does not exist for them: its model's DoesNotExist (a 404, never a 403, so
private records do not leak). `visible_records` and `can_change` are the one rule of every
owned record, the studio's application models included.
"""

from __future__ import annotations

import functools
from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any, TypeVar

from django.core.exceptions import ObjectDoesNotExist, ValidationError
from django.db import connection
from django.db.models import Case, Model, Q, QuerySet, When

from hwdb import sql
from hwdb.filters import (
    ComponentFilter,
    ComputationalModelFilter,
    OwnedFilterSet,
    SystemModelFilter,
)
from hwdb.models import (
    Attribute,
    Component,
    ComponentType,
    ComputationalModel,
    OwnedRecord,
    SystemModel,
)
from hwdb.snapshot_codec import graph_references, system_snapshot
from simulator.gpu_catalogue import GpuCatalogue

if TYPE_CHECKING:
    from django.contrib.auth.models import AbstractBaseUser, AnonymousUser

    User = AbstractBaseUser | AnonymousUser

RecordT = TypeVar("RecordT", bound=Model)
OwnedT = TypeVar("OwnedT", bound=OwnedRecord)
ATTRIBUTE_FIELDS = ("key", "value", "unit", "source")
NOT_FOUND = "No {what} with id {pk!r}."


def visible_records(queryset: QuerySet[OwnedT], *, user: User | None) -> QuerySet[OwnedT]:
    """Return the owned records of `queryset` that `user` may see: their own and shared ones
    (built-in records are shared); staff see all. `None` stands for built-in records'
    (absent) owner: it sees what is shared."""
    if user is None or not user.is_authenticated:
        return queryset.filter(shared=True)
    if getattr(user, "is_staff", False):
        return queryset
    return queryset.filter(Q(owner_id=user.pk) | Q(shared=True))


def visible_condition(model: type[OwnedRecord], *, user: User | None) -> tuple[str, list[Any]]:
    """Return `visible_records`' rule for `model` as an SQL condition on its table's columns
    and the condition's parameters, for the hot reads written as plain SQL."""
    if user is None or not user.is_authenticated:
        return sql.column(model, "shared"), []
    if getattr(user, "is_staff", False):
        return "1 = 1", []
    return f"({sql.column(model, 'shared')} OR {sql.column(model, 'owner')} = %s)", [user.pk]


def visible_record(model: type[OwnedT], *, user: User | None, record_id: object) -> OwnedT:
    """Return `record_get(visible_records(model.objects.all(), user=user), record_id=...)`,
    read with one plain query when the id is an integer (the ORM's query took longer to build
    than to run: a launch reads its application this way)."""
    if isinstance(record_id, bool) or not isinstance(record_id, int):
        return record_get(
            visible_records(model._default_manager.all(), user=user), record_id=record_id
        )
    row = None
    if -(2**63) <= record_id < 2**63:
        condition, params = visible_condition(model, user=user)
        query = (
            f"SELECT {sql.columns(model)} FROM {sql.table(model)}"
            f" WHERE {sql.column(model, 'pk')} = %s AND {condition}"
        )
        with connection.cursor() as cursor:
            cursor.execute(query, [record_id, *params])
            row = cursor.fetchone()
    if row is None:
        raise model.DoesNotExist(NOT_FOUND.format(what=model._meta.verbose_name, pk=record_id))
    return sql.from_row(model, row)


def _filtered(
    queryset: QuerySet[RecordT],
    filterset_class: type[OwnedFilterSet],
    filters: Mapping[str, Any] | None,
    user: User,
) -> QuerySet[RecordT]:
    if not filters:
        return queryset
    filterset = filterset_class(data=filters, queryset=queryset, user=user)
    if not filterset.is_valid():
        raise ValidationError(dict(filterset.errors))
    return filterset.qs


def record_get(queryset: QuerySet[RecordT], *, record_id: object) -> RecordT:
    """Return the record of `queryset` with this id; raise the model's DoesNotExist naming
    the id otherwise (an id that is no number included)."""
    try:
        return queryset.get(pk=record_id)
    except (ObjectDoesNotExist, ValueError, TypeError) as error:
        model: Any = queryset.model
        raise model.DoesNotExist(
            NOT_FOUND.format(what=model._meta.verbose_name, pk=record_id)
        ) from error


def can_change(*, user: User, record: OwnedRecord) -> bool:
    """Return True when `user` may change or delete `record`: its owner or staff."""
    if not user.is_authenticated:
        return False
    return bool(getattr(user, "is_staff", False)) or (
        record.owner_id is not None and record.owner_id == user.pk
    )


def component_list(*, user: User, filters: Mapping[str, Any] | None = None) -> QuerySet[Component]:
    """Return the components `user` may see, filtered (see hwdb.filters.ComponentFilter).

    Owners are joined; attributes are not loaded: `component_attributes` reads them for the
    components actually shown (a page) in one query.
    """
    queryset = visible_records(Component.objects.select_related("owner"), user=user)
    return _filtered(queryset, ComponentFilter, filters, user)


def component_list_version(*, user: User) -> tuple[object, ...]:
    """Return a value that changes whenever the component list `user` sees may change, for
    the list's response cache (`restapi.cache`), in one aggregate query.

    Every write of a component goes through `Component.save` (its `updated` time moves on;
    the services save the component when they replace its attributes) or deletes it (the count
    and the sum of ids change; ids are never reused): the count, the sum of ids and the latest
    `updated` of all components tell each state from the one before. The first part says
    whose eyes: every user who is not staff and owns no component sees the same list (the
    shared records, none of them editable), so they share one entry; anyone else has their own.
    """
    with connection.cursor() as cursor:
        cursor.execute(_component_totals_sql(), [user.pk])
        count, ids, latest, mine = cursor.fetchone()
    staff = bool(getattr(user, "is_staff", False))
    viewer: object = user.pk if staff or mine else "shared"
    return (viewer, staff, count, ids, latest)


@functools.cache
def _component_totals_sql() -> str:
    """Return the SQL of `component_list_version`'s totals, given the user's id: written once
    per process (the ORM's aggregate took longer to build than the query took to run)."""
    pk, owner = sql.column(Component, "pk"), sql.column(Component, "owner")
    return (
        f"SELECT COUNT({pk}), SUM({pk}), MAX({sql.column(Component, 'updated')}),"
        f" SUM(CASE WHEN {owner} = %s THEN 1 ELSE 0 END) FROM {sql.table(Component)}"
    )


def system_model_snapshot_version(
    *, user: User, system_model_id: object
) -> tuple[object, ...] | None:
    """Return a value that changes whenever `system_model_export_snapshot` of this system
    model may change, or None when `user` may not see it (or it does not exist, or the id is
    no number), in one query: the record's `updated` and the totals of all components and of
    all computational models, as `component_list_version` keeps them (count, sum of ids,
    latest `updated`). A launch keeps the exported and parsed snapshot under it
    (`webapp.studio.services.launch`)."""
    if isinstance(system_model_id, bool) or not isinstance(system_model_id, int):
        return None
    if not -(2**63) <= system_model_id < 2**63:
        return None
    condition, params = visible_condition(SystemModel, user=user)
    with connection.cursor() as cursor:
        cursor.execute(_snapshot_version_sql() + condition, [system_model_id, *params])
        row = cursor.fetchone()
    return None if row is None else (system_model_id, *row)


@functools.cache
def _snapshot_version_sql() -> str:
    """Return the SQL of `system_model_snapshot_version` up to the visibility condition, given
    the id: written once per process."""

    def totals(model: type[Model]) -> str:
        pk, updated = sql.column(model, "pk"), sql.column(model, "updated")
        return f"(SELECT COUNT({pk}), SUM({pk}), MAX({updated}) FROM {sql.table(model)}) AS"

    system = sql.table(SystemModel)
    pk, updated = sql.column(SystemModel, "pk"), sql.column(SystemModel, "updated")
    return (
        f"SELECT {system}.{updated}, c.*, m.* FROM {system},"
        f" {totals(Component)} c, {totals(ComputationalModel)} m"
        f" WHERE {system}.{pk} = %s AND "
    )


def component_attributes(*, components: Iterable[Component]) -> list[Component]:
    """Return `components` as a list, each with `attribute_rows` set: its attributes as plain
    dicts (key, value, unit, source) ordered by key, read in one query.

    Plain rows rather than prefetched Attribute records: a page of GPUs holds some 500
    attributes, and building a model instance for each took longer than the rest of the list
    request.
    """
    components = list(components)
    rows: dict[int, list[dict[str, Any]]] = {component.pk: [] for component in components}
    attributes = Attribute.objects.filter(component_id__in=list(rows)).order_by("key")
    for component_id, *values in attributes.values_list("component_id", *ATTRIBUTE_FIELDS):
        rows[component_id].append(dict(zip(ATTRIBUTE_FIELDS, values, strict=True)))
    for component in components:
        component.attribute_rows = rows[component.pk]
    return components


def component_get(*, user: User, component_id: object) -> Component:
    """Return the component with this id if `user` may see it; raise DoesNotExist otherwise."""
    queryset = visible_records(Component.objects.prefetch_related("attributes"), user=user)
    return record_get(queryset, record_id=component_id)


def computational_model_list(
    *, user: User, filters: Mapping[str, Any] | None = None
) -> QuerySet[ComputationalModel]:
    """Return the computational models `user` may see, filtered."""
    queryset = visible_records(ComputationalModel.objects.select_related("owner"), user=user)
    return _filtered(queryset, ComputationalModelFilter, filters, user)


def computational_model_get(*, user: User, model_id: object) -> ComputationalModel:
    """Return the computational model with this id if `user` may see it; raise DoesNotExist."""
    queryset = visible_records(ComputationalModel.objects.all(), user=user)
    return record_get(queryset, record_id=model_id)


def system_model_list(
    *, user: User, filters: Mapping[str, Any] | None = None
) -> QuerySet[SystemModel]:
    """Return the system models `user` may see, filtered."""
    queryset = visible_records(SystemModel.objects.select_related("owner"), user=user)
    return _filtered(queryset, SystemModelFilter, filters, user)


def system_model_get(*, user: User, system_model_id: object) -> SystemModel:
    """Return the system model with this id if `user` may see it; raise DoesNotExist."""
    queryset = visible_records(SystemModel.objects.all(), user=user)
    return record_get(queryset, record_id=system_model_id)


def visible_components(*, user: User | None) -> QuerySet[Component]:
    """Return every component `user` may see (None: only shared and built-in ones)."""
    return visible_records(Component.objects.all(), user=user)


def visible_computational_models(*, user: User | None) -> QuerySet[ComputationalModel]:
    """Return every computational model `user` may see (None: only shared and built-in ones)."""
    return visible_records(ComputationalModel.objects.all(), user=user)


# --- reads that build export and snapshot data (hwdb.snapshot_codec) ----------------------


def component_attribute_data(component: Component) -> list[dict[str, Any]]:
    """Return the component's attributes as plain dicts (key, value, unit, source), from the
    rows `component_attributes` loaded when it did."""
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
        "recommended_model": component.recommended_model,
        "attributes": component_attribute_data(component),
    }


def components_export(*, components: Iterable[Component]) -> dict[str, Any]:
    """Return {"components": [...]} in the format `components_import` and the seed files use."""
    return {"components": [component_export_data(c) for c in components]}


def system_model_export_snapshot(*, system_model: SystemModel) -> dict[str, Any]:
    """Return the self-contained snapshot of docs/contracts.md (records inlined)."""
    graph = system_model.graph if isinstance(system_model.graph, dict) else {}
    # Every launch of a system model exports it: attributes as plain rows, not records.
    components = component_attributes(
        components=Component.objects.filter(pk__in=graph_references(graph, "hardware")).only(
            "type", "name", "vendor", "recommended_model"
        )
    )
    models = ComputationalModel.objects.filter(pk__in=graph_references(graph, "model")).only(
        "name", "language", "source", "validated_architectures"
    )
    return system_snapshot(
        name=system_model.name,
        description=system_model.description,
        graph=graph,
        components=components,
        models=models,
    )


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


def component_matches(*, user: User | None, type: str, ref: int | str) -> list[Component]:
    """Return the components of `type` that `user` may see with id `ref` (an int) or named
    `ref` (a string, case-insensitive), each with its attribute rows loaded."""
    visible = visible_components(user=user).filter(type=type)
    found = visible.filter(pk=ref) if isinstance(ref, int) else visible.filter(name__iexact=ref)
    return component_attributes(components=found)


def gpu_catalogue(*, user: User | None) -> GpuCatalogue:
    """Return the GPU records `user` may see as the simulator's catalogue
    (simulator.gpu_catalogue), which a GPU named by the user is looked up in: the user's own
    records first (a private copy of a built-in GPU wins over it), then shared and built-in
    ones, oldest first."""
    visible = visible_components(user=user).filter(type=ComponentType.GPU)
    own_first = visible.annotate(
        theirs=Case(When(owner_id=getattr(user, "pk", None), then=0), default=1)
    ).order_by("theirs", "id")
    components = component_attributes(components=own_first.only("type", "name", "owner_id"))
    return GpuCatalogue.from_components(
        (
            {"name": c.name, "type": c.type, "attributes": component_attribute_data(c)}
            for c in components
        ),
        where="the GPU records you may see",
    )
