"""Reads of the hardware database, always through the requesting user's eyes.

A user sees their own records, shared records and built-in records; staff see everything.
Anything else does not exist for them: its model's DoesNotExist (a 404, never a 403, so
private records do not leak). `visible_records` and `can_change` are the one rule of every
owned record, the studio's application models included.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any, TypeVar

from django.core.exceptions import ObjectDoesNotExist, ValidationError
from django.db.models import Model, Q, QuerySet

from hwdb.filters import (
    ComponentFilter,
    ComputationalModelFilter,
    OwnedFilterSet,
    SystemModelFilter,
)
from hwdb.models import Attribute, Component, ComputationalModel, OwnedRecord, SystemModel

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


def component_attributes(*, components: Iterable[Component]) -> list[Component]:
    """Return `components` as a list, each with `attribute_rows` set: its attributes as plain
    dicts (key, value, unit, source) ordered by key, read in one query.

    Plain rows rather than prefetched Attribute records: a page of GPUs holds some 500
    attributes, and building a model instance for each took longer than the rest of the list
    request (`bench/bench_rest.py`).
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
