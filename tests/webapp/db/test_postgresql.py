"""The PostgreSQL backend's health check: no round trip while the connection is plainly alive,
and a connection the server ended is found unusable and replaced."""

from __future__ import annotations

import time

import pytest
from django.db import connection, connections
from django.db.backends.postgresql import base as django_base

pytestmark = [
    pytest.mark.django_db(transaction=True),
    pytest.mark.skipif(connection.vendor != "postgresql", reason="needs PostgreSQL"),
]


def asks_server(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """Count the checks that go to the server (Django's SELECT 1)."""
    asked: list[int] = []
    original = django_base.DatabaseWrapper.is_usable

    def counted(self: django_base.DatabaseWrapper) -> bool:
        asked.append(1)
        return bool(original(self))

    monkeypatch.setattr(django_base.DatabaseWrapper, "is_usable", counted)
    return asked


def test_an_idle_live_connection_is_usable_without_a_round_trip(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    assert connection.settings_dict["ENGINE"] == "webapp.db.postgresql"
    connection.ensure_connection()
    asked = asks_server(monkeypatch)
    assert connection.is_usable()
    assert asked == []


def test_a_connection_inside_a_transaction_is_checked_by_the_server(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    connection.ensure_connection()
    asked = asks_server(monkeypatch)
    connection.set_autocommit(False)
    try:
        with connection.cursor() as cursor:
            cursor.execute("SELECT 1")
        assert connection.is_usable()
    finally:
        connection.rollback()
        connection.set_autocommit(True)
    assert asked == [1]


def test_a_connection_the_server_ended_is_unusable_and_replaced() -> None:
    connection.ensure_connection()
    backend_pid = connection.connection.info.backend_pid
    other = connections.create_connection("default")
    try:
        with other.cursor() as cursor:
            cursor.execute("SELECT pg_terminate_backend(%s)", [backend_pid])
    finally:
        other.close()
    deadline = time.monotonic() + 5
    while connection.is_usable() and time.monotonic() < deadline:
        time.sleep(0.01)
    assert not connection.is_usable()

    connection.health_check_enabled, connection.health_check_done = True, False
    with connection.cursor() as cursor:  # the health check replaces the connection
        cursor.execute("SELECT pg_backend_pid()")
        assert cursor.fetchone()[0] != backend_pid


def test_a_transactional_tests_flush_deletes_the_rows_referencing_ones_first_or_not() -> None:
    """The flush after a transactional test deletes (conftest.py's `_flush_by_delete`): a
    table is emptied before the one whose rows point at it, in one transaction, and neither
    keeps a row; a flush that resets sequences still truncates."""
    from django.contrib.auth import get_user_model
    from django.core.management.color import no_style

    from tests.webapp.studio.factories import SimulationFactory
    from webapp.studio.models import Simulation

    users = get_user_model()
    SimulationFactory.create_batch(2)
    tables = [users._meta.db_table, Simulation._meta.db_table]  # the referenced one first
    statements = connection.ops.sql_flush(no_style(), tables)
    assert [s.split()[:2] for s in statements] == [["DELETE", "FROM"]] * 2
    connection.ops.execute_sql_flush(statements)
    assert (users.objects.count(), Simulation.objects.count()) == (0, 0)
    resetting = connection.ops.sql_flush(no_style(), tables, reset_sequences=True)
    assert resetting[0].startswith("TRUNCATE")
