"""Reads of the studio, always through the requesting user's eyes, and the queue overview.

Application models are owned records, seen under the hardware database's rule (their owner
and, when shared, everybody signed in); simulations and sweeps are listed for their owner only,
and read by their owner and by the users they are shared with (a `Share`: a sweep's covers its
runs), read-only; staff see everything. A record a user cannot see raises its model's
DoesNotExist (a 404, whether it exists or not: a grant is never told apart from no record).
"""

from __future__ import annotations

import functools
import json
import logging
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from datetime import datetime, time, timedelta
from typing import TYPE_CHECKING, Any, cast

from django.conf import settings
from django.contrib.auth import get_user_model
from django.core.exceptions import ValidationError
from django.db import connection
from django.db.models import (
    CharField,
    Count,
    Exists,
    F,
    Max,
    Min,
    OuterRef,
    Q,
    QuerySet,
    Value,
)
from django.db.models.fields.json import KeyTextTransform
from django.db.models.functions import Cast, Coalesce, Concat, NullIf
from django.utils import timezone
from django.utils.dateparse import parse_date, parse_datetime

from hwdb import sql
from hwdb.selectors import record_get, visible_record, visible_records
from simulator.pareto import (
    ObjectiveError,
    check_direction,
    check_metric,
    pareto_flags,
    parse_constraint,
)
from simulator.result_metrics import (
    COST_INTERVAL_METRICS,
    INTERVAL_METRICS,
    SUMMARY_METRICS,
    gpu_names,
    result_metrics,
)
from simulator.study import parse_constraints, parse_objectives, stored_failures, study_metrics
from webapp.celery import app
from webapp.studio.limits import queue_limits
from webapp.studio.models import (
    FINAL_STATUSES,
    ApplicationModel,
    Share,
    Simulation,
    SimulationStatus,
    Study,
    Sweep,
)
from webapp.studio.study_storage import optuna_storage
from webapp.studio.worker_life import LIFE_COMMAND

if TYPE_CHECKING:
    from django.contrib.auth.models import AbstractBaseUser, AnonymousUser

    User = AbstractBaseUser | AnonymousUser

logger = logging.getLogger(__name__)

INSPECT_TIMEOUT_S = 1.0
MAX_ID = 2**63 - 1
FILTER_MESSAGES = {
    "sample": "Expected a whole number of points from 1 to {limit}.",
    "status": "Unknown status {value!r}; expected one of {known}.",
    "queue": "Unknown queue {value!r}; known queues: {known}.",
    "sweep": 'Expected a sweep id, or "none" for runs outside any sweep.',
    "system_model": "Expected a system model id.",
    "application": "Expected an application model id.",
    "date": "Expected a date (YYYY-MM-DD) or a date and time (ISO 8601), got {value!r}.",
    "flag": "Expected true or false, got {value!r}.",
    "search": "Search for at most {limit} characters.",
    "simulation": "Expected a simulation id.",
}
# The query parameters of the runs list that `simulation_list` applies.
SIMULATION_FILTERS = (
    "status",
    "queue",
    "sweep",
    "system_model",
    "application",
    "launched_after",
    "launched_before",
    "search",
    "group_sweeps",
)
NO_SWEEP = "none"
SEARCH_MAX_LENGTH = 200
TRUE_WORDS = ("1", "true", "yes", "on")
FALSE_WORDS = ("0", "false", "no", "off")
# The owner's name, as the runs list reads it (an attribute of each run it lists;
# `webapp.studio.api.serializers.SimulationSerializer` takes it when present). The names of
# the system and application models are the run's own, frozen at launch: the records' names
# now may be other users' private ones.
LISTED_NAMES = {"listed_owner": "owner__username"}
# What the run detail leaves out of the records it joins.
RELATED_UNSHOWN = ("sweep__spec",)


def _is_staff(user: User) -> bool:
    return bool(getattr(user, "is_staff", False))


def application_model_list(*, user: User) -> QuerySet[ApplicationModel]:
    """Return the application models `user` may see: their own and shared ones."""
    return visible_records(ApplicationModel.objects.select_related("owner"), user=user)


def application_model_get(*, user: User, application_id: object) -> ApplicationModel:
    """Return the application model with this id if `user` may see it (DoesNotExist otherwise)."""
    return record_get(application_model_list(user=user), record_id=application_id)


def application_model_for_launch(*, user: User, application_id: object) -> ApplicationModel:
    """Return `application_model_get`'s record without its owner joined, in one plain query
    (`hwdb.selectors.visible_record`): a launch reads only its source and variables."""
    return visible_record(ApplicationModel, user=user, record_id=application_id)


def _id_filter(name: str, value: object) -> int:
    """Return `value` as a record id, or raise ValidationError naming the filter."""
    text = str(value)
    # ASCII digits only ("²" is a digit to str.isdigit) and within a 64-bit id.
    if not (text.isascii() and text.isdigit()) or int(text) > MAX_ID:
        raise ValidationError({name: [FILTER_MESSAGES[name]]})
    return int(text)


def _launch_bound(name: str, value: object) -> datetime:
    """Return the instant a `launched_after` / `launched_before` filter names.

    A date (YYYY-MM-DD, in the server's time zone) covers its whole day: after it means from
    its start, before it means up to its end. A date and time (ISO 8601) is taken as given,
    in the server's time zone when it names none.
    """
    text = str(value).strip()
    try:
        # A date first: Python reads "2024-05-10" as a date and time (its midnight) too.
        day = parse_date(text)
        moment = None if day is not None else parse_datetime(text)
    except ValueError:
        moment = day = None
    if moment is None and day is None:
        raise ValidationError({name: [FILTER_MESSAGES["date"].format(value=text)]})
    if moment is None:
        assert day is not None
        if name == "launched_before":
            day += timedelta(days=1)
        moment = datetime.combine(day, time.min)
    if timezone.is_naive(moment):
        moment = timezone.make_aware(moment)
    return moment


def _flag(name: str, value: object) -> bool:
    text = str(value).strip().lower()
    if text in TRUE_WORDS:
        return True
    if text in FALSE_WORDS:
        return False
    raise ValidationError({name: [FILTER_MESSAGES["flag"].format(value=value)]})


def simulation_queue_positions(*, simulations: Iterable[Simulation]) -> list[Simulation]:
    """Return `simulations` as a list, each with `queue_position` set: for a queued run its
    place among the queued runs of its queue in launch order (1: next to start), for the
    others None (`queue_positions`)."""
    simulations = list(simulations)
    positions = queue_positions(
        queued=[
            (run.pk, run.queue, run.created)
            for run in simulations
            if run.status == SimulationStatus.QUEUED
        ]
    )
    for run in simulations:
        run.queue_position = positions.get(run.pk)
    return simulations


def queue_positions(*, queued: Iterable[tuple[int, str, datetime]]) -> dict[int, int]:
    """Return the place of each queued run (id, queue, launch time) among the queued runs of
    its queue in launch order, by id (1: next to start); a run no longer queued is left out.

    Every user's runs count: they share the queue. One query numbers the queued runs of the
    queues involved, launched up to the last of these, and none is made for no runs (a page
    of finished runs). It replaced a count per listed run, which read the queue ahead of each
    run again. The broker's fair priorities (`dispatch.fair_priority`) may still let another
    user's first run overtake a long backlog.
    """
    queued = list(queued)
    if not queued:
        return {}
    if len(queued) == 1:  # a launch's answer, a run's detail: count the queue up to it
        [(pk, queue, created)] = queued
        with connection.cursor() as cursor:
            when = connection.ops.adapt_datetimefield_value(created)
            status = SimulationStatus.QUEUED.value
            cursor.execute(_queue_position_sql(), [pk, status, status, queue, when, when, pk])
            [(count,)] = cursor.fetchall()
            return {pk: count} if count else {}
    queues = sorted({queue for _, queue, _ in queued})
    ids = [pk for pk, _, _ in queued]
    last = max(created for _, _, created in queued)
    with connection.cursor() as cursor:
        cursor.execute(
            _queue_positions_sql(len(queues), len(ids)),
            [
                SimulationStatus.QUEUED.value,
                *queues,
                connection.ops.adapt_datetimefield_value(last),
                *ids,
            ],
        )
        return dict(cursor.fetchall())


@functools.cache
def _queue_position_sql() -> str:
    """Return the SQL of one run's place in its queue (`queue_positions`), given its id, the
    status queued twice, its queue, its launch time twice and its id: how many queued runs of
    the queue were launched up to it (the queue's index bounds what is read), 0 when it is
    not queued any more."""
    pk, queue, created, status = (
        sql.column(Simulation, name) for name in ("pk", "queue", "created", "status")
    )
    table = sql.table(Simulation)
    return (
        f"SELECT CASE WHEN EXISTS (SELECT 1 FROM {table} WHERE {pk} = %s AND {status} = %s)"
        f" THEN (SELECT COUNT(*) FROM {table} WHERE {status} = %s AND {queue} = %s"
        f" AND ({created} < %s OR ({created} = %s AND {pk} <= %s))) ELSE 0 END"
    )


def _queue_positions_sql(queues: int, runs: int) -> str:
    """Return the SQL of `queue_positions` for this many queues and runs."""
    pk, queue, created, status = (
        sql.column(Simulation, name) for name in ("pk", "queue", "created", "status")
    )
    return (
        f"SELECT {pk}, position FROM (SELECT {pk}, ROW_NUMBER() OVER"
        f" (PARTITION BY {queue} ORDER BY {created}, {pk}) AS position"
        f" FROM {sql.table(Simulation)} WHERE {status} = %s"
        f" AND {queue} IN ({', '.join(['%s'] * queues)}) AND {created} <= %s) ranked"
        f" WHERE {pk} IN ({', '.join(['%s'] * runs)})"
    )


def simulation_list(
    *, user: User, filters: Mapping[str, Any] | None = None
) -> QuerySet[Simulation]:
    """Return `user`'s simulations, newest first, filtered as `filters` (SIMULATION_FILTERS,
    the list's query parameters) say; an empty or missing value filters nothing.

    `search` finds words of the run's row as the list shows it ("Simulation 12 #12" for a
    run without a name), its system model's or its application model's name, or a run id
    ("12", "#12"); `group_sweeps` keeps one row per sweep, its first run that passes the
    other filters. Raise ValidationError naming the filter for a value it cannot take.
    """
    # The list shows neither the result, nor the error (only its kind: an error's message is
    # the run page's), nor what the run froze; it shows the owner's, the
    # system model's, the application model's and the sweep's names: joined as columns
    # (LISTED_NAMES), not as records (a page of 50 runs built 150 of them), but the sweep,
    # whose size is read from its aggregate.
    queryset = (
        Simulation.objects.defer("result", "snapshot", "app_source", "error")
        .select_related("sweep")
        .defer("sweep__spec")
        .annotate(**{name: F(path) for name, path in LISTED_NAMES.items()})
        .annotate(listed_error_kind=KeyTextTransform("kind", "error"))
    )
    if not _is_staff(user):
        queryset = queryset.filter(owner_id=user.pk)
    filters = {key: value for key, value in (filters or {}).items() if value not in (None, "")}
    status = filters.get("status")
    if status is not None:
        if status not in SimulationStatus.values:
            known = ", ".join(SimulationStatus.values)
            raise ValidationError(
                {"status": [FILTER_MESSAGES["status"].format(value=status, known=known)]}
            )
        queryset = queryset.filter(status=status)
    queue = filters.get("queue")
    if queue is not None:
        if queue not in settings.PARASIM_QUEUES:
            known = ", ".join(settings.PARASIM_QUEUES)
            raise ValidationError(
                {"queue": [FILTER_MESSAGES["queue"].format(value=queue, known=known)]}
            )
        queryset = queryset.filter(queue=queue)
    sweep = filters.get("sweep")
    if sweep is not None:
        if str(sweep).strip().lower() == NO_SWEEP:
            queryset = queryset.filter(sweep__isnull=True)
        else:
            queryset = queryset.filter(sweep_id=_id_filter("sweep", sweep))
    if "system_model" in filters:
        queryset = queryset.filter(
            system_model_id=_id_filter("system_model", filters["system_model"])
        )
    if "application" in filters:
        queryset = queryset.filter(application_id=_id_filter("application", filters["application"]))
    if "launched_after" in filters:
        queryset = queryset.filter(
            created__gte=_launch_bound("launched_after", filters["launched_after"])
        )
    if "launched_before" in filters:
        queryset = queryset.filter(
            created__lt=_launch_bound("launched_before", filters["launched_before"])
        )
    search = str(filters.get("search", "")).strip()
    if search:
        if len(search) > SEARCH_MAX_LENGTH:
            raise ValidationError(
                {"search": [FILTER_MESSAGES["search"].format(limit=SEARCH_MAX_LENGTH)]}
            )
        queryset = queryset.alias(listed_row=_listed_row()).filter(_search_condition(search))
    if "group_sweeps" in filters and _flag("group_sweeps", filters["group_sweeps"]):
        firsts = (
            queryset.filter(sweep__isnull=False)
            .order_by()
            .values("sweep_id")
            .annotate(first=Min("pk"))
            .values("first")
        )
        queryset = queryset.filter(Q(sweep__isnull=True) | Q(pk__in=firsts))
    return queryset


# A run id as the list shows it ("#12") or typed bare ("12").
RUN_ID_SEARCH = re.compile(r"#?\s*(\d+)", re.ASCII)


def _search_condition(search: str) -> Q:
    """Return the condition of the runs list's `search`: the words of a row as the list shows
    them ("Simulation 12 #12" for a run without a name: its name or that default, then its id),
    its system model's or its application model's name; a run id ("12" or "#12") finds that
    run, not every id holding its digits."""
    # The names the run was launched with, never the records' current (private) ones.
    names = Q(system_name__icontains=search) | Q(application_name__icontains=search)
    by_id = RUN_ID_SEARCH.fullmatch(search)
    if by_id is not None:
        found = names | Q(name__icontains=search)
        number = int(by_id.group(1))
        return found | Q(pk=number) if number <= MAX_ID else found
    return names | Q(listed_row__icontains=search)


def _listed_row() -> Concat:
    """Return the words of a run's row as the list shows them, for the alias `listed_row`
    that `_search_condition` reads: the front end's label (the run's name, else
    "Simulation <id>"), then "#<id>"."""
    run_id = Cast("pk", output_field=CharField())
    label = Coalesce(NullIf(F("name"), Value("")), Concat(Value("Simulation "), run_id))
    return Concat(label, Value(" #"), run_id, output_field=CharField())


def simulation_list_version(*, user: User) -> tuple[object, ...] | None:
    """Return a value that changes whenever a page of `user`'s runs list may change, for the
    list's cache (`restapi.cache`), or None where it cannot be read cheaply (any database
    but PostgreSQL: the list is then built on every request) or not safely (inside a
    transaction).

    PostgreSQL stamps every row version it writes with the writing transaction's id (the
    `xmin` system column), whatever wrote it: a service, a worker's progress, the admin. The
    number and the sum of those ids over the user's runs (staff: everybody's) and sweeps change
    with every committed insert, update or delete of one of them, so no write path can be
    missed. Each transaction has its own id, which is why a reader inside a transaction gets
    None: two writes of that one transaction would leave the same stamps. Not covered: the
    queue places, which depend on other users' runs and are read on every request
    (`simulation_queue_positions`); the names of the records a run was launched from are the
    run's own.
    """
    if connection.vendor != "postgresql" or connection.in_atomic_block:
        # Inside a transaction its own writes all carry one id: they would not move it.
        return None
    staff = _is_staff(user)
    with connection.cursor() as cursor:
        cursor.execute(_list_version_sql(staff=staff), [] if staff else [user.pk, user.pk])
        runs, run_stamps, sweeps, sweep_stamps = cursor.fetchone()
    return (user.pk, staff, runs, run_stamps, sweeps, sweep_stamps)


@functools.cache
def _list_version_sql(*, staff: bool) -> str:
    """Return the SQL of `simulation_list_version` (PostgreSQL), given the owner's id twice
    unless `staff`."""

    def totals(model: type[Simulation | Sweep]) -> str:
        where = "" if staff else f" WHERE {sql.column(model, 'owner')} = %s"
        return (
            f"SELECT COUNT(*) AS rows, COALESCE(SUM(xmin::text::bigint), 0) AS stamps"
            f" FROM {sql.table(model)}{where}"
        )

    return (
        f"SELECT runs.rows, runs.stamps, sweeps.rows, sweeps.stamps"
        f" FROM ({totals(Simulation)}) runs, ({totals(Sweep)}) sweeps"
    )


# How the reader of a run or sweep came to see it (its `access`): the pages show the owner's
# controls (cancel, share, edit the records) only for "owner" and "staff".
ACCESS_OWNER, ACCESS_STAFF, ACCESS_SHARED = "owner", "staff", "shared"


def _access(user: User, owner_id: int) -> str:
    if owner_id == user.pk:
        return ACCESS_OWNER
    return ACCESS_STAFF if _is_staff(user) else ACCESS_SHARED


def _granted(user: User, **target: Any) -> Exists:
    """Return the condition that a share with `user` covers the outer row (`target`: the
    share's fields matched against the outer query's columns, any one enough)."""
    condition = Q()
    for field, column in target.items():
        condition |= Q(**{field: OuterRef(column)})
    return Exists(Share.objects.filter(condition, user_id=cast("int", user.pk)))


def simulation_get(*, user: User, simulation_id: object) -> Simulation:
    """Return the simulation with this id if `user` may read it: theirs, shared with them
    (itself or its sweep) or any for staff (Simulation.DoesNotExist otherwise); with its
    `queue_position` (`simulation_queue_positions`) and `access` (ACCESS_*)."""
    queryset = Simulation.objects.select_related("owner", "sweep").defer(*RELATED_UNSHOWN)
    if not _is_staff(user):
        queryset = queryset.filter(
            Q(owner_id=user.pk) | _granted(user, simulation_id="pk", sweep_id="sweep_id")
        )
    simulation = record_get(queryset, record_id=simulation_id)
    simulation.access = _access(user, simulation.owner_id)
    if simulation.access == ACCESS_SHARED and simulation.sweep_id is not None:
        # A run shared alone does not show the owner's sweep it belongs to.
        simulation.sweep_hidden = not Share.objects.filter(
            sweep_id=simulation.sweep_id, user_id=cast("int", user.pk)
        ).exists()
    return simulation_queue_positions(simulations=[simulation])[0]


def simulation_get_owned(*, user: User, simulation_id: object) -> Simulation:
    """Return `user`'s own simulation with this id, any for staff (Simulation.DoesNotExist
    otherwise, a shared one included): what a change (cancel, share) acts on."""
    queryset = Simulation.objects.select_related("owner", "sweep").defer(*RELATED_UNSHOWN)
    if not _is_staff(user):
        queryset = queryset.filter(owner_id=user.pk)
    simulation = record_get(queryset, record_id=simulation_id)
    simulation.access = _access(user, simulation.owner_id)
    return simulation


def sweep_list(*, user: User) -> QuerySet[Sweep]:
    """Return `user`'s sweeps, newest first, their owners joined."""
    queryset = Sweep.objects.select_related("owner")
    return queryset if _is_staff(user) else queryset.filter(owner_id=user.pk)


def sweep_get(*, user: User, sweep_id: object) -> Sweep:
    """Return the sweep with this id if `user` may read it: theirs, shared with them or any
    for staff (Sweep.DoesNotExist otherwise); with its `access` (ACCESS_*)."""
    queryset = Sweep.objects.select_related("owner")
    if not _is_staff(user):
        queryset = queryset.filter(Q(owner_id=user.pk) | _granted(user, sweep_id="pk"))
    sweep = record_get(queryset, record_id=sweep_id)
    sweep.access = _access(user, sweep.owner_id)
    return sweep


def sweep_get_owned(*, user: User, sweep_id: object) -> Sweep:
    """Return `user`'s own sweep with this id, any for staff (Sweep.DoesNotExist otherwise,
    a shared one included): what a change (cancel, share) acts on."""
    sweep = record_get(sweep_list(user=user), record_id=sweep_id)
    sweep.access = _access(user, sweep.owner_id)
    return sweep


def study_list(*, user: User) -> QuerySet[Study]:
    """Return `user`'s studies (any for staff), newest first, their owners and sweeps joined."""
    queryset = Study.objects.select_related("owner", "sweep").defer("frozen", "sweep__spec")
    return queryset if _is_staff(user) else queryset.filter(owner_id=user.pk)


def study_get(*, user: User, study_id: object) -> Study:
    """Return the study with this id if `user` may read it: theirs, any for staff, or one
    whose sweep (its runs) is shared with them (Study.DoesNotExist otherwise)."""
    queryset = Study.objects.select_related("owner", "sweep")
    if not _is_staff(user):
        queryset = queryset.filter(Q(owner_id=user.pk) | _granted(user, sweep_id="sweep_id"))
    study = record_get(queryset, record_id=study_id)
    study.access = _access(user, study.owner_id)
    return study


def study_get_owned(*, user: User, study_id: object) -> Study:
    """Return `user`'s own study with this id, any for staff (a shared one is
    Study.DoesNotExist): what stop and resume act on."""
    study = record_get(study_list(user=user), record_id=study_id)
    study.access = _access(user, study.owner_id)
    return study


# The most trials a study's detail shows (its chart's points and its table): the best ones,
# then an evenly spaced sample of the others; the full list is paged (`study_trials`).
STUDY_TRIALS_SHOWN = 500
# A study's hardware dimension (webapp.studio.services.studies.HARDWARE_AXIS).
STUDY_HARDWARE_AXIS = "hardware"


def _hardware_choices(options: list[Mapping[str, Any]]) -> dict[object, str]:
    """Return each swapped-in component's id -> its value in the study's hardware dimension
    (as services.studies._hardware_choices names them)."""
    names = [str(option["hardware"]["name"]) for option in options]
    return {
        option["hardware"]["id"]: name
        if names.count(name) == 1
        else f"{name} (id {option['hardware']['id']})"
        for name, option in zip(names, options, strict=True)
    }


def study_trials(*, study: Study) -> list[dict[str, Any]]:
    """Return every trial of the study by number (`study_trials_counted`)."""
    return study_trials_counted(study=study)[1]


# The figures a workload study may optimise or constrain: its runs' (the run is one step:
# `overall_time_s` is the step's time, `cost_per_step_usd` its cost) and their interval's
# where the spec asks for one (time and cost, from the same samples).
WORKLOAD_METRICS = (*SUMMARY_METRICS, *INTERVAL_METRICS, *COST_INTERVAL_METRICS)


def known_metrics(frozen: Mapping[str, Any]) -> list[str]:
    """Return the metrics a stored study may optimise or constrain (its `frozen`)."""
    if frozen.get("workload"):
        return list(WORKLOAD_METRICS)
    return study_metrics(frozen["snapshot"])


def study_trials_counted(*, study: Study) -> tuple[int, list[dict[str, Any]]]:
    """Return the optimiser's count of the study's trials and every trial by number: its number, state ("running", "complete",
    "fail"), point, metrics, error, run (`simulation` id and `simulation_status`) and flags
    `feasible` and `best` (the Pareto front of the feasible trials by simulator.pareto's
    rule; one objective: the best value).

    The trials are read from the study's runs with one query (the result's parts the metrics
    need, through JSON key transforms: no timeline is loaded), a trial's state being its
    run's (a run that ended is its trial's outcome before an advance tells the optimiser);
    only the trials that failed without a run (a point refused, a run lost) are read from
    the optimiser's storage, with its count of trials.
    """
    known = known_metrics(study.frozen)
    objectives = parse_objectives(study.objectives, known)
    constraints = parse_constraints(study.constraints, known)
    choices = _hardware_choices(study.frozen.get("hardware_options") or [])
    children = study.sweep.simulations.values(
        "pk", "status", "sweep_point", "error", *(f"result__{part}" for part in RESULT_PARTS)
    )
    by_number: dict[int, dict[str, Any]] = {}
    for child in children:
        place = child["sweep_point"]
        number = place.get("trial") if isinstance(place, Mapping) else None
        if not isinstance(number, int):
            continue
        point: dict[str, object] = {**(place.get("variables") or {}), **(place.get("axes") or {})}
        hardware = place.get("hardware")
        if choices and isinstance(hardware, Mapping):
            point[STUDY_HARDWARE_AXIS] = choices.get(hardware.get("id"), hardware.get("name"))
        status = child["status"]
        succeeded = status == SimulationStatus.SUCCEEDED
        in_flight = status in (SimulationStatus.QUEUED, SimulationStatus.RUNNING)
        error = child["error"] or {}
        by_number[number] = {
            "number": number,
            "state": "complete" if succeeded else "running" if in_flight else "fail",
            "point": point,
            "metrics": (
                result_metrics({part: child[f"result__{part}"] for part in RESULT_PARTS})
                if succeeded
                else {}
            ),
            "error": None if succeeded or in_flight else error.get("message"),
            "simulation": child["pk"],
            "simulation_status": status,
        }
    held, failed = stored_failures(optuna_storage(), study.optuna_name)
    for row in failed:
        if row["number"] not in by_number:  # no run to show it
            by_number[row["number"]] = {**row, "simulation": None, "simulation_status": None}
    trials = [by_number[number] for number in sorted(by_number)]
    flags = pareto_flags(
        [t["metrics"] for t in trials], [(o.metric, o.direction) for o in objectives], constraints
    )
    for trial, (feasible, best) in zip(trials, flags, strict=True):
        trial["feasible"] = feasible and trial["state"] == "complete"
        trial["best"] = best
    return held, trials


# The most points a sweep's detail may be asked to sample (`sweep_sample`).
SWEEP_SAMPLE_MAX = 5000


def sweep_sample(value: object) -> int | None:
    """Return the number of points a sweep's detail shows (`sample`; None: every point);
    raise ValidationError naming `sample` for anything but a whole number in range."""
    if value in (None, ""):
        return None
    text = str(value)
    if not text.isdigit() or not 1 <= int(text) <= SWEEP_SAMPLE_MAX:
        raise ValidationError(
            {"sample": [FILTER_MESSAGES["sample"].format(limit=SWEEP_SAMPLE_MAX)]}
        )
    return int(text)


def rows_shown(
    rows: list[dict[str, Any]], *, best: str, limit: int, order: str
) -> list[dict[str, Any]]:
    """Return at most `limit` of the rows, by `order`: those flagged `best` (all of them, the
    front being what a reader looks for), then the others evenly spaced over the rows (the
    first and the last included where two fit)."""
    front = [row for row in rows if row.get(best)]
    rest = [row for row in rows if not row.get(best)]
    room = max(0, limit - len(front))
    if len(rest) > room:
        step = (len(rest) - 1) / (room - 1) if room > 1 else 0.0
        rest = [rest[round(i * step)] for i in range(room)] if room else []
    return sorted([*front, *rest], key=lambda row: row[order])


def study_trials_shown(trials: list[dict[str, Any]], limit: int) -> list[dict[str, Any]]:
    """Return at most `limit` of the trials, by number: the best ones, then a sample."""
    return rows_shown(trials, best="best", limit=limit, order="number")


def runs_version(*, sweep: Sweep) -> tuple[object, ...]:
    """Return one aggregate over the sweep's runs, read in one query, that changes whenever
    one of them is added, starts or ends: how many, how many ended, the last end, the last
    start and the last id."""
    runs = sweep.simulations.aggregate(
        count=Count("pk"),
        ended=Count("pk", filter=Q(finished__isnull=False)),
        last_end=Max("finished"),
        last_start=Max("started"),
        last_id=Max("pk"),
    )
    return tuple(sorted(runs.items()))


def sweep_version(*, sweep: Sweep) -> tuple[object, ...]:
    """Return a value that changes whenever the sweep's detail may change, for its cache
    (restapi.cache): its state and `runs_version`."""
    return (sweep.pk, sweep.access, sweep.status, sweep.finished, runs_version(sweep=sweep))


def study_progress(*, study: Study, limit: int = STUDY_TRIALS_SHOWN) -> dict[str, Any]:
    """Return the study's progress: counts of trials (`asked`, `done`: complete or failed,
    `running`, `failed`, `budget`), `best`, the numbers of the best trials, and `trials`, at
    most `limit` of them (`study_trials_shown`; `shown` counts them, `asked` all)."""
    held, trials = study_trials_counted(study=study)
    states = [t["state"] for t in trials]
    shown = study_trials_shown(trials, limit)
    return {
        "trials": shown,
        "shown": len(shown),
        # Trials asked for whose run is not stored yet (an advance under way) count too.
        "asked": max(held, len(trials)),
        "done": sum(state in ("complete", "fail") for state in states),
        "running": states.count("running"),
        "failed": states.count("fail"),
        "budget": study.max_runs,
        "best": [t["number"] for t in trials if t["best"]],
    }


def study_version(*, study: Study) -> tuple[object, ...]:
    """Return a value that changes whenever the study's detail may change, for its cache
    (restapi.cache): its state, and one aggregate over its runs (how many, how many ended,
    the last end and the last start) read in one query; the optimiser's count of trials is
    read with the failed ones when the detail is built (a trial refused without a run leaves
    the runs as they were: the cache entries' expiry bounds how long it goes unseen)."""
    return (
        study.pk,
        study.access,
        study.status,
        study.finished,
        study.sweep.status,
        runs_version(sweep=study.sweep),
    )


def share_list(
    *, user: User, simulation_id: object = None, sweep_id: object = None, received: object = None
) -> QuerySet[Share]:
    """Return the shares `user` gave (of their runs and sweeps) and those given to them,
    oldest first; with `simulation_id` or `sweep_id`, only the shares of that run or sweep
    (its owner's view: the Share control); with `received` true, only those given to them
    (the "Shared with you" list)."""
    queryset = Share.objects.select_related(
        "user", "simulation__owner", "sweep__owner", "via"
    ).defer("simulation__snapshot", "simulation__app_source", "simulation__result", "sweep__spec")
    queryset = queryset.filter(
        Q(simulation__owner_id=user.pk) | Q(sweep__owner_id=user.pk) | Q(user_id=user.pk)
    )
    if simulation_id not in (None, ""):
        queryset = queryset.filter(simulation_id=_id_filter("simulation", simulation_id))
    if sweep_id not in (None, ""):
        queryset = queryset.filter(sweep_id=_id_filter("sweep", sweep_id))
    if received not in (None, "") and _flag("received", received):
        queryset = queryset.filter(user_id=cast("int", user.pk))
    return queryset


def share_get_given(*, user: User, share_id: object) -> Share:
    """Return the share with this id of one of `user`'s runs or sweeps (Share.DoesNotExist
    otherwise: a share given to `user` is not theirs to revoke)."""
    queryset = Share.objects.filter(Q(simulation__owner_id=user.pk) | Q(sweep__owner_id=user.pk))
    return record_get(queryset, record_id=share_id)


# The parts of a child's result the sweep table reads, through JSON key transforms (a
# result's timeline, its largest part, is never loaded), and of its snapshot.
RESULT_PARTS = (
    "overall_time_s",
    "processes",
    "components",
    "energy_j",
    "reliability",
    "stats",
    "power_missing",
    "warnings",
    "energy_accounting",
    "cost",
    "uncertainty",
)
SNAPSHOT_PARTS = ("nodes", "hardware")


def sweep_points(*, sweep: Sweep) -> tuple[list[str], list[dict[str, Any]]]:
    """Return the sweep's table: its variable names and one row per child simulation.

    Rows hold simulation id, status, `hardware` (the component swapped in, if any), `model`
    (the model its node ran, when the sweep swapped hardware), `model_swapped` (whether that
    is the GPU's recommended model in place of the system's), `gpu`
    (the GPUs the point runs on, from its snapshot: " + " between several), each swept
    variable, every figure of `simulator.result_metrics` (None until the point succeeded;
    per-node ones as `energy_j.<node>` and `busy_s.<node>`) and the error message of a
    failed point, in launch order.
    """
    axes = [*(sweep.spec.get("variables") or {}), *(sweep.spec.get("axes") or {})]
    rows = []
    children = sweep.simulations.order_by("pk").values(
        "pk",
        "status",
        "sweep_point",
        "error",
        *(f"result__{part}" for part in RESULT_PARTS),
        *(f"snapshot__{part}" for part in SNAPSHOT_PARTS),
    )
    for child in children:
        point = child["sweep_point"] or {}
        hardware = point.get("hardware") or {}
        error = child["error"] or {}
        succeeded = child["status"] == SimulationStatus.SUCCEEDED
        row: dict[str, Any] = {
            "simulation": child["pk"],
            "status": child["status"],
            "hardware": hardware.get("name", ""),
            # the model the swapped node ran: its recommended one where the sweep picked it
            "model": hardware.get("model") or "",
            "model_swapped": bool(hardware.get("model_swapped")),
            "gpu": " + ".join(
                gpu_names({part: child[f"snapshot__{part}"] for part in SNAPSHOT_PARTS})
            ),
        }
        values = {**(point.get("variables") or {}), **(point.get("axes") or {})}
        for name in axes:
            row[name] = values.get(name)
        if succeeded:
            row.update(result_metrics({part: child[f"result__{part}"] for part in RESULT_PARTS}))
        else:
            row.update(
                dict.fromkeys(SUMMARY_METRICS),
                power_missing="",
                model_warnings="",
                energy_accounting="",
                energy_estimated="",
            )
        row["error"] = "" if succeeded else error.get("message", "")
        rows.append(row)
    return axes, rows


def sweep_columns(axes: Iterable[str], rows: Iterable[Mapping[str, Any]]) -> list[str]:
    """Return the sweep table's columns: identity, variables, the run-wide figures, then the
    per-node figures any row has (in first-seen order), the prediction interval's figures (time, energy and
    cost) when any row has them (simulator.uncertainty), the power warning, the energy's
    accounting and estimated states (issue 45) and the error."""
    fixed = [
        "simulation",
        "status",
        "hardware",
        "model",
        "model_swapped",
        "gpu",
        *axes,
        *SUMMARY_METRICS,
    ]
    per_node: dict[str, None] = {}
    for row in rows:
        per_node.update(dict.fromkeys(key for key in row if key.startswith(PER_NODE_PREFIXES)))
    energy = ["energy_accounting", "energy_estimated"]
    flags = [key for key in ("feasible", "pareto") if any(key in row for row in rows)]
    interval = [
        key
        for key in (
            *INTERVAL_METRICS,
            *COST_INTERVAL_METRICS,
            "interval_unmeasured",
            "interval_from_spec",
        )
        if any(key in row for row in rows)
    ]
    return [
        *fixed,
        *per_node,
        *interval,
        "power_missing",
        "model_warnings",
        *energy,
        "error",
        *flags,
    ]


PER_NODE_PREFIXES = ("energy_j.", "busy_s.")
# The sweep table's columns that are no metric to plot, optimise or constrain.
NOT_METRICS = frozenset(
    (
        "simulation",
        "status",
        "hardware",
        "model",
        "model_swapped",
        "gpu",
        "power_missing",
        "model_warnings",
        "interval_unmeasured",
        "interval_from_spec",
        "error",
        "feasible",
        "pareto",
    )
)
DEFAULT_OBJECTIVES = ("overall_time_s", "energy_j")


def sweep_objectives(
    axes: Iterable[str],
    rows: list[dict[str, Any]],
    *,
    x: object = None,
    y: object = None,
    x_direction: object = None,
    y_direction: object = None,
    constraints: Iterable[object] = (),
) -> dict[str, Any]:
    """Flag each row `feasible` (every constraint holds) and `pareto` (on the front of the
    feasible rows for the objectives x and y), by simulator.pareto's rule; return what was
    applied: {"objectives": [{"metric", "direction"}], "constraints": [text]}.

    x and y are metrics of the table (default: overall time and energy), each minimised
    unless its direction says "max" (p_success: maximised by default); a constraint is
    "<metric> <op> <number>". Raise ValidationError naming the field at fault (x, y,
    x_direction, y_direction, constraint[i]).
    """
    rows_list = list(rows)
    columns = sweep_columns(axes, rows_list)
    known = [c for c in columns if c not in NOT_METRICS]
    objectives: list[tuple[str, str]] = []
    for field, metric, direction, default in (
        ("x", x, x_direction, DEFAULT_OBJECTIVES[0]),
        ("y", y, y_direction, DEFAULT_OBJECTIVES[1]),
    ):
        try:
            name = check_metric(default if metric in (None, "") else metric, known)
        except ObjectiveError as error:
            raise ValidationError({field: [error.message]}) from error
        try:
            objectives.append((name, check_direction(direction, name)))
        except ObjectiveError as error:
            raise ValidationError({f"{field}_direction": [error.message]}) from error
    rules = []
    for index, text in enumerate(constraints):
        try:
            rules.append(parse_constraint(text, known))
        except ObjectiveError as error:
            raise ValidationError({f"constraint[{index}]": [error.message]}) from error
    flags = pareto_flags(rows_list, objectives, rules)
    for row, (feasible, front) in zip(rows_list, flags, strict=True):
        row["feasible"] = feasible
        row["pareto"] = front
    return {
        "objectives": [{"metric": m, "direction": d} for m, d in objectives],
        "constraints": [str(rule) for rule in rules],
    }


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


def alive_workers(*, timeout: float = INSPECT_TIMEOUT_S) -> dict[str, str] | None:
    """Return the answering workers' hostnames, each with its current life
    (`webapp.studio.worker_life`; "" from a worker that does not know the command); None
    when the broker failed."""
    try:
        replies = app.control.broadcast(LIFE_COMMAND, reply=True, timeout=timeout) or []
    except Exception:
        logger.warning("could not ask the Celery workers for their lives", exc_info=True)
        return None
    alive: dict[str, str] = {}
    for reply in replies:
        for hostname, answer in reply.items():
            life = answer.get("life") if isinstance(answer, dict) else None
            alive[hostname] = life if isinstance(life, str) else ""
    return alive


def broker_task_ids(queues: Iterable[str] = ()) -> set[str] | None:
    """Return the task ids of the run messages the broker holds: waiting in one of the
    configured queues or of `queues` (at any priority; a queue dropped from PARASIM_QUEUES may
    still hold runs), or delivered to a worker and not yet acknowledged.

    None when the broker cannot be read, or cannot say: only the Redis transport keeps
    delivered messages where they can be listed (its unacknowledged hash); the embedded
    filesystem transport does not. The queues and the hash are read in one MULTI/EXEC, so a
    message moved between them meanwhile (restored after its visibility timeout) is seen.
    A message popped by a worker that had not yet recorded it as delivered is not seen:
    at worst such a run is sent again, and its first message is skipped as stale.
    """
    try:
        with app.connection_for_read() as connection:
            if connection.transport.driver_type != "redis":
                return None
            channel: Any = connection.default_channel
            lists = {
                channel._q_for_pri(queue, priority)
                for queue in {*settings.PARASIM_QUEUES, *queues}
                for priority in channel.priority_steps
            }
            # kombu prefixes the keys of the commands it sends itself, not LRANGE and HVALS
            prefix = getattr(channel, "global_keyprefix", "")
            pipe = channel.client.pipeline(transaction=True)
            for key in sorted(lists):
                pipe.lrange(prefix + key, 0, -1)
            pipe.hvals(prefix + channel.unacked_key)
            *waiting, delivered = pipe.execute()
        ids = {json.loads(raw)["headers"]["id"] for queue in waiting for raw in queue}
        # each delivered one as [message, exchange, routing key]
        return ids | {json.loads(raw)[0]["headers"]["id"] for raw in delivered}
    except Exception:  # unreachable, or a message of a shape this check does not know
        logger.warning("could not read the task ids in the broker", exc_info=True)
        return None


def active_run_count(*, owner_id: int, excluding: Iterable[int] = ()) -> int:
    """Return how many of the owner's runs are queued or running, leaving out `excluding`."""
    return owner_runs(owner_id=owner_id, excluding=excluding).active


def in_flight_run_count(*, owner_id: int, excluding: Iterable[int] = ()) -> int:
    """Return how many of the owner's runs are running or queued and not held back (sent to
    the broker, or to be sent), leaving out `excluding`."""
    return owner_runs(owner_id=owner_id, excluding=excluding).in_flight


@dataclass(frozen=True)
class OwnerRuns:
    """The counts of an owner's runs that a launch decides on."""

    active: int  # queued or running
    in_flight: int  # running, or queued and not held back
    held: int  # queued and held back


def owner_runs(*, owner_id: int, lock: bool = False, excluding: Iterable[int] = ()) -> OwnerRuns:
    """Return the counts of the owner's runs, leaving out `excluding`, in one query: the one
    place these rules are written. With `lock`, first lock the owner's row until the
    surrounding transaction ends, so that the counts stay true for what the transaction then
    decides (a launch, `dispatch._take_slots`)."""
    queued, running = SimulationStatus.QUEUED.value, SimulationStatus.RUNNING.value
    query = _owner_runs_sql()
    params: list[Any] = [running, queued, owner_id, queued, running]
    excluded = list(excluding)
    if excluded:
        query += f" AND {sql.column(Simulation, 'pk')} NOT IN ({', '.join(['%s'] * len(excluded))})"
        params += excluded
    with connection.cursor() as cursor:
        if lock:
            cursor.execute(_owner_lock_sql(connection.features.has_select_for_update), [owner_id])
        cursor.execute(query, params)
        active, in_flight, held = cursor.fetchone()
    return OwnerRuns(active=active, in_flight=int(in_flight or 0), held=int(held or 0))


@functools.cache
def _owner_lock_sql(for_update: bool) -> str:
    user = get_user_model()
    pk = sql.column(user, "pk")
    return f"SELECT {pk} FROM {sql.table(user)} WHERE {pk} = %s" + (
        " FOR UPDATE" if for_update else ""
    )


@functools.cache
def _owner_runs_sql() -> str:
    """Return the SQL of `owner_runs`' counts, given the statuses running and queued, the
    owner's id and the statuses queued and running: written once per process."""
    status, held = sql.column(Simulation, "status"), sql.column(Simulation, "held")
    return (
        f"SELECT COUNT(*),"
        f" SUM(CASE WHEN {status} = %s OR NOT {held} THEN 1 ELSE 0 END),"
        f" SUM(CASE WHEN {status} = %s AND {held} THEN 1 ELSE 0 END)"
        f" FROM {sql.table(Simulation)}"
        f" WHERE {sql.column(Simulation, 'owner')} = %s AND {status} IN (%s, %s)"
    )


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
