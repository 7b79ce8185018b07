"""What the studio's services share: their error messages, building a field error, the
name and source checks, and telling a database outage from a refused value."""

from __future__ import annotations

from datetime import datetime

from django.core.exceptions import ValidationError
from django.db import InterfaceError, OperationalError, connection
from django.utils import timezone

from simulator.sweep import AXIS_MESSAGES as SWEEP_MESSAGES
from webapp.studio.models import NAME_MAX_LENGTH
from webapp.studio.validation import reject_nul

MAX_SOURCE_LENGTH = 1_000_000

MESSAGES = {
    "required": "This field is required.",
    "one_of": "Give either {a} or {b}, not both.",
    "not_visible": "No {what} with id {pk!r} that you can see.",
    "not_owner": "Only the owner may change this {what}.",
    "unknown_queue": "Unknown queue {queue!r}; known queues: {known}.",
    "run_limit": (
        "{field} ({what}): expected a whole number of seconds from 1 to {max}, the maximum of "
        "queue {queue!r}."
    ),
    "seed": "Expected a whole number.",
    "timeline_limit": (
        "Expected a whole number of timeline entries from 0 to {limit:,} (the server's "
        "maximum, PARASIM_MAX_TIMELINE_LIMIT)."
    ),
    "name": f"Expected a string of at most {NAME_MAX_LENGTH} characters.",
    "blank": "This field may not be blank.",
    "source": f"Expected Python source of at most {MAX_SOURCE_LENGTH} characters.",
    "sweep_too_large": SWEEP_MESSAGES["too_many"],  # simulator.sweep.size_error: the CLI's too
    "sweep_repeated": "Axis {name!r} is given in both spec.variables and spec.axes.",
    "too_many_processes": (
        "The labels ask for {total:,} processes; this server runs at most {limit:,} in one run "
        "(PARASIM_MAX_PROCESSES)."
    ),
    "too_many_active": (
        "You have {active:,} runs queued or running and this launch adds {adding:,}; this "
        "server holds at most {limit:,} per user (PARASIM_MAX_ACTIVE_RUNS). Wait for some to "
        "finish or cancel them."
    ),
    "sweep_node": "The system has no hardware node {node!r} (nodes: {known}).",
    "sweep_component": "No component {ref!r} of type {type} that you can see.",
    "sweep_ambiguous": "{count} components are named {ref!r}; give the id instead.",
    "sweep_components": "Expected a non-empty list of component ids or names.",
    "sweep_object": "Expected an object.",
    "sweep_model": 'Expected "recommended" (run each GPU\'s recommended model where the '
    "node's model was not validated on it) or \"keep\" (the node's model on every GPU).",
    "not_cancellable": "A {status} simulation cannot be cancelled.",
    "lost": "The worker {worker!r} running this simulation stopped answering; "
    "attempt {attempt} of {limit}.",
    "lost_final": "The worker running this simulation was lost {attempts} times "
    "(last: {worker!r}); giving up after PARASIM_MAX_ATTEMPTS={limit} attempts.",
    "overdue": "The simulation ran past its time limit of {limit} s plus {margin} s and was stopped.",
    "soft_limit": "The simulation hit its time limit of {limit} s.",
    "internal": "Internal error while running the simulation: {error}",
}


class RunCancelled(Exception):
    """Raised inside a running task's progress callback once its run is no longer running."""


# The database could not be reached (rather than refusing a value). Nothing is wrong with the
# run: the heartbeat skips a beat, storing an outcome waits STORE_RETRY_DELAYS_S out, and the
# task retries the attempt after that (tests/webapp/studio/test_faults.py).
DATABASE_UNREACHABLE = (OperationalError, InterfaceError)


STORE_RETRY_DELAYS_S = (0.5, 1.0, 2.0, 4.0, 8.0)


def drop_broken_connection() -> None:
    """Close this thread's database connection so that the next query opens a new one."""
    if not connection.in_atomic_block:
        connection.close()


def field_error(field: str, message: str) -> ValidationError:
    """Return the ValidationError naming `field` with one message."""
    return ValidationError({field: [message]})


def current_time() -> datetime:
    """Return the current time (one place for tests to see)."""
    return timezone.now()


def check_name(name: object, field: str = "name") -> str:
    if isinstance(name, str) and not name.strip():
        raise field_error(field, MESSAGES["blank"])
    if not isinstance(name, str) or not name.strip() or len(name) > NAME_MAX_LENGTH:
        raise field_error(field, MESSAGES["name"])
    reject_nul(name, field=field)
    return name.strip()


def check_source(source: object, field: str = "source") -> str:
    if isinstance(source, str) and not source.strip():
        raise field_error(field, MESSAGES["blank"])
    if not isinstance(source, str) or not source.strip() or len(source) > MAX_SOURCE_LENGTH:
        raise field_error(field, MESSAGES["source"])
    reject_nul(source, field=field)
    return source
