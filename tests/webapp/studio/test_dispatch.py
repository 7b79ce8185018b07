"""Tests of sending runs to the broker: a broker that is down loses no run."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest
from django.utils import timezone

from tests.webapp.studio.conftest import launch
from webapp.studio.models import SimulationStatus
from webapp.studio.services.runs import simulation_reap_lost

pytestmark = pytest.mark.django_db


def test_a_launch_while_the_broker_is_down_is_sent_later_by_the_lost_run_check(
    user: Any,
    settings: Any,
    monkeypatch: pytest.MonkeyPatch,
    django_capture_on_commit_callbacks: Any,
) -> None:
    from celery.canvas import Signature

    def broker_down(self: Signature, *args: Any, **kwargs: Any) -> None:
        raise OSError("Connection refused")

    monkeypatch.setattr(Signature, "apply_async", broker_down)
    with django_capture_on_commit_callbacks(execute=True):
        simulation = launch(user)  # stored; the send fails after the commit
    simulation.refresh_from_db()
    assert (simulation.status, simulation.sent) == (SimulationStatus.QUEUED, None)
    first_task = simulation.celery_task_id

    published: list[str] = []
    monkeypatch.setattr(
        Signature, "apply_async", lambda self, *a, **k: published.append(self.options["task_id"])
    )
    assert simulation_reap_lost(alive_workers=[]).resent == []  # not overdue yet
    later = timezone.now() + timedelta(seconds=settings.PARASIM_LOST_AFTER_SECONDS + 1)
    assert simulation_reap_lost(alive_workers=[], now=later).resent == [simulation.pk]
    simulation.refresh_from_db()
    assert simulation.sent is not None
    assert simulation.celery_task_id != first_task  # a late copy of the first send is stale
    assert published == [simulation.celery_task_id]
    assert simulation_reap_lost(alive_workers=[], now=later).resent == []
