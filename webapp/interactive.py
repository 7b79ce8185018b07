"""Sandbox children of interactive requests run on a Celery worker, never in the web process.

A model's test-run (POST /api/models/{id}/evaluate/), the syntax check of a computational or
application model's save and the kernel analyzer each run user input in a sandbox child, as
do a trace's import and a request stream served with continuous batching (their answers are
the request's).
Started by a web process, those children took the web server's CPU from every other user's
requests, unthrottled. `sandbox_runner` gives the simulator's `*_in_sandbox` functions a
runner that sends the child's entry to the interactive queue (PARASIM_INTERACTIVE_QUEUE),
which a worker of its own serves with its own slots (`./studio run`, docker-compose.yml's
worker-interactive, docs/deployment.md), and waits for its answer: the request keeps its
synchronous response while the CPU work is the worker's.

A user may have PARASIM_MAX_INTERACTIVE_PER_USER such jobs in flight at once; one more is
answered 429 (`InteractiveBusy`). The count lives in the default cache: one count over every
web process where that cache is shared (PARASIM_CACHE_URL), each process its own otherwise.
A job the worker does not answer in time is answered 503 (`InteractiveUnavailable`).

The test settings run the task in the calling process (PARASIM_INTERACTIVE_EAGER), through the
same task and the same transport of errors.
"""

from __future__ import annotations

import functools
import logging
from collections.abc import Iterator, Mapping
from contextlib import contextmanager, suppress
from typing import TYPE_CHECKING, Any

from celery.exceptions import TimeoutError as CeleryTimeoutError
from django.conf import settings
from django.core.cache import cache
from rest_framework.exceptions import APIException, ErrorDetail, Throttled

from simulator.errors import error_from_dict

if TYPE_CHECKING:
    from simulator.sandbox.parent import EntryRunner, Limits

logger = logging.getLogger(__name__)

RUN_INTERACTIVE = "studio.run_interactive"

MESSAGES = {
    "busy": (
        "You have {limit} test-runs, model checks, analyses, trace imports or serving runs in "
        "progress, the most one user may have at once; try again when one has finished."
    ),
    "unavailable": (
        "No worker answered within {timeout:g} s (the interactive queue '{queue}' is busy or "
        "not served); try again in a moment."
    ),
}

# How long a user's count outlives its last increment: a web process killed in the middle of
# a job leaves its share of the count behind no longer than this.
COUNT_TTL_S = 600
# How long the answer may take beyond the child's own wall-clock limit: waiting for a free
# slot of the interactive worker, starting the child, the round trip through the broker.
ANSWER_MARGIN_S = 15.0
RETRY_AFTER_S = 5


class InteractiveBusy(Throttled):
    """The user has PARASIM_MAX_INTERACTIVE_PER_USER interactive jobs in flight (429)."""

    def __init__(self, limit: int) -> None:
        message = MESSAGES["busy"].format(limit=limit)
        super().__init__(wait=RETRY_AFTER_S)
        # Throttled appends "Expected available in N seconds." to a detail; this one is whole.
        self.detail = ErrorDetail(message, code=self.default_code)


class InteractiveUnavailable(APIException):
    """No interactive worker answered in time (503)."""

    status_code = 503
    default_code = "interactive_unavailable"


def sandbox_runner(*, user_id: int | None) -> EntryRunner:
    """Return a runner of sandbox entries for `user_id`'s request: each call takes one of the
    user's interactive slots and runs the entry on the interactive worker."""

    def run(payload: Mapping[str, Any], *, limits: Limits, _entry: str) -> dict[str, Any]:
        with interactive_slot(user_id=user_id):
            return run_on_worker(payload, limits=limits, entry=_entry)

    return run


@contextmanager
def interactive_slot(*, user_id: int | None) -> Iterator[None]:
    """Hold one of the user's interactive slots for the duration; raise InteractiveBusy when
    the user already holds PARASIM_MAX_INTERACTIVE_PER_USER (0: no limit)."""
    limit = int(settings.PARASIM_MAX_INTERACTIVE_PER_USER)
    key = f"interactive-jobs:{user_id}"
    try:
        cache.add(key, 0, timeout=COUNT_TTL_S)
        try:
            held = cache.incr(key)
        except ValueError:  # expired between add and incr
            cache.add(key, 1, timeout=COUNT_TTL_S)
            held = 1
    except Exception:  # the shared cache is down: the job is not refused for it
        logger.warning("could not count the interactive jobs of user %s", user_id, exc_info=True)
        yield
        return
    try:
        if limit and held > limit:
            raise InteractiveBusy(limit)
        yield
    finally:
        # ValueError: the count expired meanwhile, nothing left to give back.
        with suppress(Exception):
            cache.decr(key)


@functools.cache
def result_backend() -> Any:
    """Return the result backend of interactive jobs (PARASIM_INTERACTIVE_RESULT_BACKEND),
    the task's alone: the app has none."""
    from celery.app.backends import by_url

    from webapp.celery import app

    backend_class, url = by_url(settings.PARASIM_INTERACTIVE_RESULT_BACKEND, app.loader)
    return backend_class(app=app, url=url)


def run_on_worker(payload: Mapping[str, Any], *, limits: Limits, entry: str) -> dict[str, Any]:
    """Return the result of the sandbox entry `entry` run by the interactive worker; raise
    the SimulationError the child reported, or InteractiveUnavailable without an answer."""
    from webapp.celery import app

    arguments = {"payload": dict(payload), "limits": limits.as_dict(), "entry": entry}
    if settings.PARASIM_INTERACTIVE_EAGER:
        from webapp.studio.tasks import run_interactive

        reply = run_interactive.apply(kwargs=arguments).get()
    else:
        timeout = float(limits.wall_s) + ANSWER_MARGIN_S
        queue = settings.PARASIM_INTERACTIVE_QUEUE
        # `expires`: a job still queued when its request has given up is dropped unrun.
        sent = app.send_task(RUN_INTERACTIVE, kwargs=arguments, queue=queue, expires=timeout)
        result = app.AsyncResult(sent.id, backend=result_backend())
        try:
            reply = result.get(timeout=timeout, interval=0.05)
        except CeleryTimeoutError:
            raise InteractiveUnavailable(
                MESSAGES["unavailable"].format(timeout=timeout, queue=queue)
            ) from None
        finally:
            result.forget()
    if "error" in reply:
        raise error_from_dict(reply["error"])
    return dict(reply["result"])
