"""Django's PostgreSQL backend with a health check that costs no round trip when the
connection is plainly alive.

With persistent connections (production settings) Django checks each connection before the
first query of a request or task (`CONN_HEALTH_CHECKS`) with a `SELECT 1`: one more round
trip on every request, a noticeable part of a cached list's time in gunicorn (py-spy).
A connection that is idle between requests and has nothing to read is alive as far as a
round trip could tell: a server that restarts or ends the backend (`pg_terminate_backend`,
an idle timeout) sends an error and closes the socket, which makes it readable. Only then,
or when the connection is not idle, the check asks the server with `SELECT 1` as before.
"""

from __future__ import annotations

import select

from django.db.backends.postgresql import base
from psycopg import pq


def _readable(fileno: int) -> bool:
    readable, _, _ = select.select([fileno], [], [], 0)
    return bool(readable)


class DatabaseWrapper(base.DatabaseWrapper):
    def is_usable(self) -> bool:
        connection = self.connection
        if connection is None or connection.closed or connection.broken:
            return False
        idle = connection.info.transaction_status == pq.TransactionStatus.IDLE
        if idle and not _readable(connection.fileno()):
            return True
        return bool(super().is_usable())
