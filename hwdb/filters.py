"""Query-string filters for the list selectors: type, vendor, search, attribute ranges, ordering.

Attribute ranges are written `attr=KEY__OP:VALUE` and may repeat (all must hold), e.g.
`?attr=SMs__gte:80&attr=SMCoreClock__lt:1500`; OP is one of gt, gte, lt, lte, exact and
`attr=KEY:VALUE` means exact.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any

import django_filters
from django import forms
from django.db.models import Exists, OuterRef, Q, QuerySet

from hwdb.models import Attribute, Component, ComponentType, ComputationalModel, SystemModel
from hwdb.validation import IDENTIFIER

if TYPE_CHECKING:
    from django.contrib.auth.models import AbstractBaseUser, AnonymousUser

ATTRIBUTE_OPERATORS = ("gt", "gte", "lt", "lte", "exact")
ATTRIBUTE_FILTER_HELP = (
    "Attribute condition KEY__OP:VALUE, repeatable (all must hold); OP is one of "
    + ", ".join(ATTRIBUTE_OPERATORS)
    + "; KEY:VALUE means exact. Example: attr=SMs__gte:80"
)
ATTRIBUTE_FILTER_ERROR = "Invalid attribute condition {item!r}. " + ATTRIBUTE_FILTER_HELP + "."

AttributeCondition = tuple[str, str, float]

# The words a true/false query parameter takes (any case); anything else is a 400 naming it.
TRUE_WORDS = ("true", "1")
FALSE_WORDS = ("false", "0")
MSG_NOT_BOOLEAN = "Expected true or false, got {value!r}."


class StrictBooleanField(forms.Field):
    """A true/false query parameter: "true"/"1", "false"/"0" or absent; anything else is an
    error (Django's NullBooleanField takes "null", or any other word, for absent)."""

    def to_python(self, value: Any) -> bool | None:
        if value is None or value == "":
            return None
        word = str(value).strip().lower()
        if word in TRUE_WORDS:
            return True
        if word in FALSE_WORDS:
            return False
        raise forms.ValidationError(MSG_NOT_BOOLEAN.format(value=value), code="invalid")


class StrictBooleanFilter(django_filters.BooleanFilter):
    """`BooleanFilter` with `StrictBooleanField`."""

    field_class = StrictBooleanField


def parse_attribute_condition(item: str) -> AttributeCondition:
    """Return (key, operator, value) for `KEY__OP:VALUE`; raise ValidationError when malformed."""
    left, colon, raw_value = item.partition(":")
    key, operator = left, "exact"
    if "__" in left:
        head, _, tail = left.rpartition("__")
        if tail in ATTRIBUTE_OPERATORS:
            key, operator = head, tail
    try:
        value = float(raw_value)
    except ValueError:
        value = math.nan
    if not colon or not IDENTIFIER.match(key) or not math.isfinite(value):
        raise forms.ValidationError(ATTRIBUTE_FILTER_ERROR.format(item=item), code="invalid")
    return key, operator, value


class AttributeConditionsField(forms.Field):
    """A form field holding every `attr` value of the query string, parsed."""

    widget = forms.MultipleHiddenInput

    def to_python(self, value: Any) -> list[AttributeCondition]:
        if not value:
            return []
        items = value if isinstance(value, list | tuple) else [value]
        return [parse_attribute_condition(str(item)) for item in items]


class AttributeConditionsFilter(django_filters.Filter):
    """Keep the components that satisfy every attribute condition."""

    field_class = AttributeConditionsField

    def filter(self, qs: QuerySet[Any], value: list[AttributeCondition]) -> QuerySet[Any]:
        for key, operator, number in value or []:
            matching = Attribute.objects.filter(
                component=OuterRef("pk"), key=key, **{f"value__{operator}": number}
            )
            qs = qs.filter(Exists(matching))
        return qs


class OwnedFilterSet(django_filters.FilterSet):
    """Filters every record kind has: free-text search, `mine`, ordering."""

    search = django_filters.CharFilter(method="filter_search", help_text="Text in the name.")
    mine = StrictBooleanFilter(
        method="filter_mine", help_text="true: only my records; false: only others' records."
    )
    search_fields: tuple[str, ...] = ("name",)

    def __init__(
        self, data: Any = None, queryset: Any = None, *, user: AbstractBaseUser | AnonymousUser
    ) -> None:
        super().__init__(data=data, queryset=queryset)
        self.user = user

    def filter_search(self, qs: QuerySet[Any], name: str, value: str) -> QuerySet[Any]:
        condition = Q()
        for field in self.search_fields:
            condition |= Q(**{f"{field}__icontains": value})
        return qs.filter(condition)

    def filter_mine(self, qs: QuerySet[Any], name: str, value: bool | None) -> QuerySet[Any]:
        if value is None:
            return qs
        owner_id = getattr(self.user, "pk", None)
        return qs.filter(owner_id=owner_id) if value else qs.exclude(owner_id=owner_id)


class ComponentFilter(OwnedFilterSet):
    """Filters of the component list."""

    type = django_filters.ChoiceFilter(choices=ComponentType.choices)
    vendor = django_filters.CharFilter(lookup_expr="iexact", help_text="Vendor (exact, any case).")
    attr = AttributeConditionsFilter(help_text=ATTRIBUTE_FILTER_HELP)
    ordering = django_filters.OrderingFilter(
        fields=("name", "type", "vendor", "created", "updated", "id")
    )
    search_fields = ("name", "vendor")

    class Meta:
        model = Component
        fields = ["type", "vendor"]


class ComputationalModelFilter(OwnedFilterSet):
    """Filters of the computational model list."""

    builtin = StrictBooleanFilter()
    ordering = django_filters.OrderingFilter(fields=("name", "created", "updated", "id"))

    class Meta:
        model = ComputationalModel
        fields = ["builtin"]


class SystemModelFilter(OwnedFilterSet):
    """Filters of the system model list."""

    ordering = django_filters.OrderingFilter(fields=("name", "created", "updated", "id"))

    class Meta:
        model = SystemModel
        fields: list[str] = []
