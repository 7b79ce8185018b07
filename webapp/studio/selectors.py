"""Reads of the studio, always through the requesting user's eyes, and the queue overview.

Application models are owned records, seen under the hardware database's rule (their owner
and, when shared, everybody signed in); simulations and sweeps are seen by their owner only;
staff see everything. A record a user cannot see raises its model's DoesNotExist (a 404).
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any

from django.conf import settings
from django.core.exceptions import ValidationError
from django.db.models import Count, Q, QuerySet

from hwdb.selectors import record_get, visible_records
from webapp.celery import app
from webapp.studio.limits import queue_limits
from webapp.studio.models import (
    FINAL_STATUSES,
    ApplicationModel,
    Simulation,
    SimulationStatus,
    Sweep,
)

if TYPE_CHECKING:
    from django.contrib.auth.models import AbstractBaseUser, AnonymousUser

    User = AbstractBaseUser | AnonymousUser

logger = logging.getLogger(__name__)

INSPECT_TIMEOUT_S = 1.0
MAX_ID = 2**63 - 1
FILTER_MESSAGES = {
    "status": "Unknown status {value!r}; expected one of {known}.",
    "queue": "Unknown queue {value!r}; known queues: {known}.",
    "sweep": "Expected a sweep id.",
}


def _is_staff(user: User) -> bool:
    return bool(getattr(user, "is_staff", False))


def application_model_list(*, user: User) -> QuerySet[ApplicationModel]:
    """Return the application models `user` may see: their own and shared ones."""
    return visible_records(ApplicationModel.objects.select_related("owner"), user=user)


def application_model_get(*, user: User, application_id: object) -> ApplicationModel:
    """Return the application model with this id if `user` may see it (DoesNotExist otherwise)."""
    return record_get(application_model_list(user=user), record_id=application_id)


def simulation_list(
    *, user: User, filters: Mapping[str, Any] | None = None
) -> QuerySet[Simulation]:
    """Return `user`'s simulations, newest first, filtered by status, queue and sweep.

    Raise ValidationError naming the filter for an unknown status or queue.
    """
    # The list shows neither the result nor what the run froze; it shows the owner's name.
    queryset = Simulation.objects.defer("result", "snapshot", "app_source").select_related("owner")
    if not _is_staff(user):
        queryset = queryset.filter(owner_id=user.pk)
    filters = filters or {}
    status = filters.get("status")
    if status:
        if status not in SimulationStatus.values:
            known = ", ".join(SimulationStatus.values)
            raise ValidationError(
                {"status": [FILTER_MESSAGES["status"].format(value=status, known=known)]}
            )
        queryset = queryset.filter(status=status)
    queue = filters.get("queue")
    if queue:
        if queue not in settings.PARASIM_QUEUES:
            known = ", ".join(settings.PARASIM_QUEUES)
            raise ValidationError(
                {"queue": [FILTER_MESSAGES["queue"].format(value=queue, known=known)]}
            )
        queryset = queryset.filter(queue=queue)
    sweep = filters.get("sweep")
    if sweep:
        text = str(sweep)
        # ASCII digits only ("²" is a digit to str.isdigit) and within a 64-bit id.
        if not (text.isascii() and text.isdigit()) or int(text) > MAX_ID:
            raise ValidationError({"sweep": [FILTER_MESSAGES["sweep"]]})
        queryset = queryset.filter(sweep_id=int(sweep))
    return queryset


def simulation_get(*, user: User, simulation_id: object) -> Simulation:
    """Return `user`'s simulation with this id (Simulation.DoesNotExist otherwise)."""
    queryset = Simulation.objects.all()
    if not _is_staff(user):
        queryset = queryset.filter(owner_id=user.pk)
    return record_get(queryset, record_id=simulation_id)


def sweep_list(*, user: User) -> QuerySet[Sweep]:
    """Return `user`'s sweeps, newest first, their owners joined."""
    queryset = Sweep.objects.select_related("owner")
    return queryset if _is_staff(user) else queryset.filter(owner_id=user.pk)


def sweep_get(*, user: User, sweep_id: object) -> Sweep:
    """Return `user`'s sweep with this id (Sweep.DoesNotExist otherwise)."""
    return record_get(sweep_list(user=user), record_id=sweep_id)


def sweep_points(*, sweep: Sweep) -> tuple[list[str], list[dict[str, Any]]]:
    """Return the sweep's table: its variable names and one row per child simulation.

    Rows hold simulation id, status, hardware name, each swept variable, overall time,
    energy and the error message of a failed point, in launch order.
    """
    axes = list((sweep.spec.get("variables") or {}).keys())
    rows = []
    children = sweep.simulations.order_by("pk").values(
        "pk", "status", "sweep_point", "overall_time_s", "energy_j", "error"
    )
    for child in children:
        point = child["sweep_point"] or {}
        hardware = point.get("hardware") or {}
        error = child["error"] or {}
        row: dict[str, Any] = {
            "simulation": child["pk"],
            "status": child["status"],
            "hardware": hardware.get("name", ""),
        }
        for name in axes:
            row[name] = (point.get("variables") or {}).get(name)
        row.update(
            overall_time_s=child["overall_time_s"],
            energy_j=child["energy_j"],
            error=error.get("message", "") if child["status"] != SimulationStatus.SUCCEEDED else "",
        )
        rows.append(row)
    return axes, rows


def queue_list(*, timeout: float = INSPECT_TIMEOUT_S) -> list[dict[str, Any]]:
    """Return the configured queues, each with the workers serving it now and its limits
    (`limits`: {"time_limit_s", "cpu_limit_s"} each {"default", "max"} in seconds).

    Workers are found with Celery's inspection API (`active_queues`); a broker that cannot be
    reached or no worker answering gives empty worker lists, never an error.
    """
    try:
        replies = app.control.inspect(timeout=timeout).active_queues() or {}
    except Exception:
        logger.warning("could not inspect the Celery workers", exc_info=True)
        replies = {}
    serving: dict[str, list[str]] = {}
    for worker, queues in replies.items():
        for queue in queues or []:
            serving.setdefault(queue.get("name", ""), []).append(worker)
    return [
        {
            "name": name,
            "description": description,
            "workers": sorted(serving.get(name, [])),
            "limits": queue_limits(name),
        }
        for name, description in settings.PARASIM_QUEUES.items()
    ]


def alive_workers(*, timeout: float = INSPECT_TIMEOUT_S) -> set[str] | None:
    """Return the hostnames of the workers answering a ping; None when the broker failed."""
    try:
        replies = app.control.inspect(timeout=timeout).ping() or {}
    except Exception:
        logger.warning("could not ping the Celery workers", exc_info=True)
        return None
    return set(replies)


def active_run_count(*, owner_id: int, excluding: Iterable[int] = ()) -> int:
    """Return how many of the owner's runs are queued or running, leaving out `excluding`."""
    queryset = Simulation.objects.filter(
        owner_id=owner_id, status__in=(SimulationStatus.QUEUED, SimulationStatus.RUNNING)
    )
    excluded = list(excluding)
    return (queryset.exclude(pk__in=excluded) if excluded else queryset).count()


def in_flight_run_count(*, owner_id: int, excluding: Iterable[int] = ()) -> int:
    """Return how many of the owner's runs are running or queued and not held back (sent to
    the broker, or to be sent), leaving out `excluding`."""
    queryset = Simulation.objects.filter(owner_id=owner_id).filter(
        Q(status=SimulationStatus.RUNNING) | Q(status=SimulationStatus.QUEUED, held=False)
    )
    excluded = list(excluding)
    return (queryset.exclude(pk__in=excluded) if excluded else queryset).count()


def sweep_aggregate(*, sweep: Sweep) -> dict[str, Any]:
    """Return the sweep's counts of children by status, `total`, `done` (final ones) and the
    `best` succeeded point (shortest overall time), or None while there is none."""
    counts = sweep.simulations.aggregate(
        total=Count("pk"),
        **{status: Count("pk", filter=Q(status=status)) for status in SimulationStatus.values},
    )
    best = (
        sweep.simulations.filter(status=SimulationStatus.SUCCEEDED, overall_time_s__isnull=False)
        .order_by("overall_time_s", "pk")
        .values("pk", "overall_time_s", "sweep_point")
        .first()
    )
    counts["done"] = sum(counts[s] for s in FINAL_STATUSES)
    counts["best"] = (
        {
            "simulation": best["pk"],
            "overall_time_s": best["overall_time_s"],
            "point": best["sweep_point"],
        }
        if best
        else None
    )
    return counts
