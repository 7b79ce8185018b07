"""A database outage answers 503 with Retry-After, not 500.

While PostgreSQL cannot be reached (stopped, restarting, failed over), every request that
reads the database raises Django's OperationalError or InterfaceError. That is not the
request's fault nor a bug: the answer says the service is unavailable for now and when to
try again (PARASIM_DATABASE_RETRY_AFTER_S), so that clients and load balancers retry
instead of reporting an error. API requests get the API's JSON error body; pages a line of
text. Exceptions raised by a view, DRF's included (the API's exception handler leaves them
unhandled), reach `process_exception` here.
"""

from __future__ import annotations

import logging
from collections.abc import Callable

from django.conf import settings
from django.db import InterfaceError, OperationalError
from django.http import HttpRequest, HttpResponse, JsonResponse

logger = logging.getLogger(__name__)

DATABASE_UNAVAILABLE = "The database is unavailable; try again in a few seconds."
API_PREFIX = "/api/"


def database_unavailable_response(request: HttpRequest) -> HttpResponse:
    """Return the 503 answer to `request` during a database outage."""
    response: HttpResponse
    if request.path.startswith(API_PREFIX):
        response = JsonResponse({"detail": DATABASE_UNAVAILABLE}, status=503)
    else:
        response = HttpResponse(
            DATABASE_UNAVAILABLE, status=503, content_type="text/plain; charset=utf-8"
        )
    response["Retry-After"] = str(int(settings.PARASIM_DATABASE_RETRY_AFTER_S))
    return response


class DatabaseUnavailableMiddleware:
    """Turn a view's database-unreachable error into 503 with Retry-After."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        return self.get_response(request)

    def process_exception(self, request: HttpRequest, exception: Exception) -> HttpResponse | None:
        if not isinstance(exception, OperationalError | InterfaceError):
            return None
        logger.warning("database unavailable: %s %s: %s", request.method, request.path, exception)
        return database_unavailable_response(request)
