"""Names for the few reads written as plain SQL, taken from the models themselves.

A hot read whose ORM query took longer to build than to run (the token's user, the
catalogue's version, the runs list's version and queue places: bench/bench_rest.py) is
written once per process as SQL; its table and column names come from here, quoted for the
database in use, so a renamed field or table cannot leave the SQL behind.
"""

from __future__ import annotations

from django.db import connection, models


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
