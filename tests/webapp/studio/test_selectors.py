"""Tests of the studio's reads: the runs list's filters, search and sweep grouping, and the
queue position of a queued run."""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any

import pytest
from django.core.exceptions import ValidationError
from django.utils import timezone

from tests.hwdb.factories import SystemModelFactory
from tests.webapp.studio.factories import ApplicationModelFactory, SimulationFactory
from webapp.studio import selectors
from webapp.studio.models import Simulation, SimulationStatus, Sweep
from webapp.studio.selectors import (
    FILTER_MESSAGES,
    queue_positions,
    simulation_get,
    simulation_list,
    simulation_queue_positions,
)

pytestmark = pytest.mark.django_db


def ids(user: Any, **filters: Any) -> list[int]:
    """Return the ids `simulation_list` gives `user` under `filters`, in its order."""
    return [run.pk for run in simulation_list(user=user, filters=filters)]


def launched_at(run: Simulation, moment: datetime) -> Simulation:
    """Return `run` as if it had been launched at `moment` (`created` is set on insert)."""
    Simulation.objects.filter(pk=run.pk).update(created=moment)
    run.refresh_from_db()
    return run


def test_runs_are_filtered_by_system_model_application_status_and_sweep(user: Any) -> None:
    system, other_system = SystemModelFactory(owner=user), SystemModelFactory(owner=user)
    application = ApplicationModelFactory(owner=user)
    sweep = Sweep.objects.create(owner=user, name="grid", spec={})
    on_system = SimulationFactory(owner=user, system_model=system)
    on_other = SimulationFactory(
        owner=user, system_model=other_system, application=application, sweep=sweep
    )
    failed = SimulationFactory(owner=user, status=SimulationStatus.FAILED, sweep=sweep)

    assert ids(user, system_model=str(system.pk)) == [on_system.pk]
    assert ids(user, application=application.pk) == [on_other.pk]
    assert ids(user, status="failed") == [failed.pk]
    assert ids(user, sweep=str(sweep.pk)) == [failed.pk, on_other.pk]
    assert ids(user, sweep="none") == [on_system.pk]
    assert ids(user, sweep=sweep.pk, status="failed") == [failed.pk]
    # an empty value filters nothing, as an empty form field sends it
    assert ids(user, system_model="", status="", search="  ") == [
        failed.pk,
        on_other.pk,
        on_system.pk,
    ]


def test_search_finds_the_run_system_or_application_name_or_a_run_id(
    user: Any, other_user: Any
) -> None:
    system = SystemModelFactory(owner=user, name="GTX 970 testbed")
    application = ApplicationModelFactory(owner=user, name="saxpy2")
    named = SimulationFactory(owner=user, name="Warm-up of the Cluster")
    on_system = SimulationFactory(owner=user, name="a", system_model=system)
    of_application = SimulationFactory(owner=user, name="b", application=application)
    SimulationFactory(owner=other_user, name="cluster of someone else")

    assert ids(user, search="cluster") == [named.pk]
    assert ids(user, search="gtx 970") == [on_system.pk]
    assert ids(user, search="SAXPY") == [of_application.pk]
    assert ids(user, search=str(of_application.pk)) == [of_application.pk]
    assert ids(user, search="nothing like it") == []


def test_search_finds_a_run_by_the_words_of_its_row_and_by_its_id(user: Any) -> None:
    # The list shows a run without a name as "Simulation <id> #<id>".
    unnamed = SimulationFactory(owner=user, name="")
    neighbours = [SimulationFactory(owner=user, name="") for _ in range(10)]
    named = SimulationFactory(owner=user, name="Warm-up")
    label = f"Simulation {unnamed.pk}"

    assert unnamed.pk in ids(user, search=label)
    assert ids(user, search=f"{label} #{unnamed.pk}") == [unnamed.pk]
    assert ids(user, search=f"simulation {unnamed.pk} #{unnamed.pk}") == [unnamed.pk]
    # an id, bare or as the list writes it, is that run, not every id holding its digits
    assert ids(user, search=f"#{unnamed.pk}") == [unnamed.pk]
    assert ids(user, search=f"# {neighbours[-1].pk}") == [neighbours[-1].pk]
    assert ids(user, search=str(unnamed.pk)) == [unnamed.pk]
    # a named run is found by its name and its id, not by the default label
    assert ids(user, search=f"Warm-up #{named.pk}") == [named.pk]
    assert named.pk not in ids(user, search=f"Simulation {named.pk}")


def test_the_launch_date_range_takes_whole_days_or_exact_instants(user: Any) -> None:
    day = datetime(2024, 5, 10, tzinfo=timezone.get_current_timezone())
    before = launched_at(SimulationFactory(owner=user), day - timedelta(seconds=1))
    morning = launched_at(SimulationFactory(owner=user), day + timedelta(hours=8))
    night = launched_at(SimulationFactory(owner=user), day + timedelta(hours=23, minutes=59))
    after = launched_at(SimulationFactory(owner=user), day + timedelta(days=1))

    assert ids(user, launched_after="2024-05-10", launched_before="2024-05-10") == [
        night.pk,
        morning.pk,
    ]
    assert ids(user, launched_after="2024-05-10") == [after.pk, night.pk, morning.pk]
    assert ids(user, launched_before="2024-05-09") == [before.pk]
    # a date and time is an instant: after includes it, before excludes it
    assert ids(user, launched_after="2024-05-10T08:00:00+00:00") == [
        after.pk,
        night.pk,
        morning.pk,
    ]
    assert ids(user, launched_before="2024-05-10T08:00:00Z") == [before.pk]


@pytest.mark.parametrize(
    ("filters", "field", "message"),
    [
        ({"system_model": "GTX"}, "system_model", FILTER_MESSAGES["system_model"]),
        ({"application": "-2"}, "application", FILTER_MESSAGES["application"]),
        ({"sweep": "some"}, "sweep", FILTER_MESSAGES["sweep"]),
        (
            {"launched_after": "yesterday"},
            "launched_after",
            FILTER_MESSAGES["date"].format(value="yesterday"),
        ),
        (
            {"launched_before": "2024-02-30"},
            "launched_before",
            FILTER_MESSAGES["date"].format(value="2024-02-30"),
        ),
        ({"group_sweeps": "maybe"}, "group_sweeps", FILTER_MESSAGES["flag"].format(value="maybe")),
        (
            {"search": "x" * 201},
            "search",
            FILTER_MESSAGES["search"].format(limit=selectors.SEARCH_MAX_LENGTH),
        ),
    ],
)
def test_a_filter_value_it_cannot_take_is_an_error_naming_the_filter(
    user: Any, filters: dict[str, str], field: str, message: str
) -> None:
    with pytest.raises(ValidationError) as caught:
        ids(user, **filters)
    assert caught.value.message_dict == {field: [message]}


def test_grouping_keeps_one_row_per_sweep_its_first_run_passing_the_filters(user: Any) -> None:
    sweep = Sweep.objects.create(owner=user, name="grid", spec={})
    other_sweep = Sweep.objects.create(owner=user, name="other", spec={})
    alone = SimulationFactory(owner=user)
    first, second = SimulationFactory.create_batch(2, owner=user, sweep=sweep)
    failed = SimulationFactory(owner=user, sweep=sweep, status=SimulationStatus.FAILED)
    only = SimulationFactory(owner=user, sweep=other_sweep)

    assert ids(user, group_sweeps="true") == [only.pk, first.pk, alone.pk]
    assert ids(user, group_sweeps="false") == [only.pk, failed.pk, second.pk, first.pk, alone.pk]
    assert ids(user, group_sweeps="1", status="failed") == [failed.pk]
    assert len(ids(user, sweep=sweep.pk)) == 3  # the expanded sweep lists every run


def test_a_queued_run_knows_its_place_among_the_queued_runs_of_its_queue(
    user: Any, other_user: Any
) -> None:
    start = timezone.now() - timedelta(minutes=10)
    running = launched_at(
        SimulationFactory(owner=user, status=SimulationStatus.RUNNING), start - timedelta(hours=1)
    )
    others = launched_at(SimulationFactory(owner=other_user), start)
    mine = [
        launched_at(SimulationFactory(owner=user), start + timedelta(minutes=n)) for n in (1, 2)
    ]
    elsewhere = launched_at(SimulationFactory(owner=user, queue="gajgerqueue"), start)
    done = SimulationFactory(owner=user, status=SimulationStatus.SUCCEEDED)

    listed = simulation_queue_positions(simulations=simulation_list(user=user))
    positions = {run.pk: run.queue_position for run in listed}
    # another user's run ahead in the same queue counts: they share its worker
    assert positions == {
        running.pk: None,
        mine[0].pk: 2,
        mine[1].pk: 3,
        elsewhere.pk: 1,
        done.pk: None,
    }
    assert simulation_get(user=other_user, simulation_id=others.pk).queue_position == 1
    Simulation.objects.filter(pk=others.pk).update(status=SimulationStatus.RUNNING)
    assert simulation_get(user=user, simulation_id=mine[1].pk).queue_position == 2
    # a run that started since it was read has no place, alone or among others
    for runs in ([others], [others, mine[0]]):
        places = queue_positions(queued=[(run.pk, run.queue, run.created) for run in runs])
        assert others.pk not in places


def test_runs_launched_at_the_same_instant_queue_in_launch_order(user: Any) -> None:
    moment = timezone.now()
    runs = [launched_at(SimulationFactory(owner=user), moment) for _ in range(3)]
    positions = [simulation_get(user=user, simulation_id=run.pk).queue_position for run in runs]
    assert positions == [1, 2, 3]
