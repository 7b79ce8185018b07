"""The simulation serializers write their fields out (for the speed of the runs list); they must
render exactly what DRF's field-by-field walk over Meta.fields renders."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import pytest
from rest_framework import serializers

from tests.hwdb.factories import SystemModelFactory
from tests.webapp.studio.factories import ApplicationModelFactory, SimulationFactory
from webapp.studio import selectors
from webapp.studio.api.serializers import SimulationDetailSerializer, SimulationSerializer
from webapp.studio.models import Simulation, SimulationStatus, Sweep

pytestmark = pytest.mark.django_db


def runs(user: Any) -> list[Simulation]:
    """Return runs of `user` in every state the list shows, with null and set fields."""
    moment = datetime(2026, 3, 4, 5, 6, 7, 891011, tzinfo=UTC)
    sweep = Sweep.objects.create(owner=user, name="sweep", spec={"variables": {"n": [1, 2]}})
    made = [
        SimulationFactory(owner=user),
        SimulationFactory(
            owner=user,
            system_model=SystemModelFactory(owner=user),
            application=ApplicationModelFactory(owner=user),
            status=SimulationStatus.SUCCEEDED,
            progress=1,
            overall_time_s=1.25e-3,
            energy_j=7,
            attempts=1,
            worker="worker@host",
            started=moment,
            finished=moment,
            heartbeat=moment,
            seed=-(2**62),
            result={"status": "succeeded"},
        ),
        SimulationFactory(
            owner=user,
            status=SimulationStatus.FAILED,
            error={"kind": "user_code", "message": "boom", "line": 3},
            sweep=sweep,
            sweep_point={"variables": {"n": 1}, "hardware": None},
        ),
    ]
    # as the list reads them (deferred columns, owner joined), and fresh from Python
    listed = selectors.simulation_queue_positions(
        simulations=selectors.simulation_list(user=user).order_by("pk")
    )
    made[0].status = SimulationStatus.CANCELLED  # an enum member, not yet saved
    return [*listed, *made]


@pytest.mark.parametrize("serializer_class", [SimulationSerializer, SimulationDetailSerializer])
def test_the_written_out_fields_equal_the_field_by_field_walk(
    user: Any, serializer_class: type[serializers.ModelSerializer]
) -> None:
    for run in runs(user):
        serializer = serializer_class(run)
        walked = serializers.ModelSerializer.to_representation(serializer, run)
        written = serializer.to_representation(run)
        assert list(written) == list(walked) == list(serializer_class.Meta.fields)
        assert written == walked
        assert [type(value) for value in written.values()] == [
            type(value) for value in walked.values()
        ]


def test_run_paths_equal_what_django_reverses_for_every_id() -> None:
    from django.urls import reverse

    from webapp.studio.api.serializers import run_path

    for name in ("simulation-result", "simulation-memory", "simulation-detail"):
        for pk in (0, 7, 10, 123456789012345678):
            assert run_path(name, pk) == reverse(name, kwargs={"pk": pk})
