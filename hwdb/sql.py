"""Names for the few reads written as plain SQL, taken from the models themselves.

A hot read whose ORM query took longer to build than to run (the token's user, the
catalogue's version, the runs list's version and queue places) is
written once per process as SQL; its table and column names come from here, quoted for the
database in use, so a renamed field or table cannot leave the SQL behind.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from typing import Any, TypeVar

from django.db import connection, connections, models

ModelT = TypeVar("ModelT", bound=models.Model)


def table(model: type[models.Model]) -> str:
    """Return the model's table name, quoted."""
    return connection.ops.quote_name(model._meta.db_table)


def column(model: type[models.Model], field: str) -> str:
    """Return the column of the model's concrete `field` (a name, or "pk"), quoted."""
    meta = model._meta
    found = meta.pk if field == "pk" else meta.get_field(field)
    name = getattr(found, "column", None)
    if not isinstance(name, str):
        raise ValueError(f"{meta.label}.{field} has no column")
    return connection.ops.quote_name(name)


def columns(model: type[models.Model], alias: str = "") -> str:
    """Return the model's concrete columns in field order, quoted, each prefixed by the table
    `alias` and a dot when one is given: what `from_row` reads."""
    prefix = f"{alias}." if alias else ""
    return ", ".join(prefix + column(model, field.name) for field in model._meta.concrete_fields)


@functools.cache
def _converters(
    model: type[models.Model], database: str
) -> tuple[tuple[int, Any, tuple[Any, ...]], ...]:
    """Return, per concrete column of `model` that needs it, its index, its expression and
    the converters the ORM applies to it (SQLite's dates and booleans; none on PostgreSQL)."""
    wrapper = connections[database]
    found = []
    for index, field in enumerate(model._meta.concrete_fields):
        expression = field.get_col(model._meta.db_table)
        converters = wrapper.ops.get_db_converters(expression) + field.get_db_converters(wrapper)
        if converters:
            found.append((index, expression, tuple(converters)))
    return tuple(found)


def from_row(model: type[ModelT], row: Sequence[Any]) -> ModelT:
    """Return the record of a row of `columns(model)` built as the ORM builds it
    (`Model.from_db`, the fields' converters applied), at a fraction of `Manager.raw`'s cost
    (its query set and column mapping took a fifth of a cached list request)."""
    values = list(row)
    for index, expression, converters in _converters(model, connection.alias):
        for converter in converters:
            values[index] = converter(values[index], expression, connection)
    names = [field.attname for field in model._meta.concrete_fields]
    return model.from_db(connection.alias, names, values)
