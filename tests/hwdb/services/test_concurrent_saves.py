"""Two saves of one record made from the same version at the same moment, on PostgreSQL: the
row lock of the save's transaction makes the second see the first's version and be refused,
where reading without the lock would let both through and lose the first."""

from __future__ import annotations

import threading
import time
from typing import Any

import pytest
from django.db import connection, connections

from hwdb.models import ComputationalModel
from hwdb.services import computational_models
from hwdb.services.common import RecordVersionError
from tests.hwdb.factories import ComputationalModelFactory

pytestmark = [
    pytest.mark.django_db(transaction=True),
    pytest.mark.skipif(connection.vendor != "postgresql", reason="needs PostgreSQL row locks"),
]


def test_of_two_simultaneous_saves_from_one_version_the_second_is_refused(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    model: Any = ComputationalModelFactory()
    first_inside = threading.Event()
    original = computational_models.note_changes

    def slow_note_changes(*args: Any, **kwargs: Any) -> None:
        # The first save holds its lock a while after its version check.
        if not first_inside.is_set():
            first_inside.set()
            time.sleep(0.5)
        original(*args, **kwargs)

    monkeypatch.setattr(computational_models, "note_changes", slow_note_changes)
    outcomes: dict[str, object] = {}

    def save(tab: str) -> None:
        try:
            computational_models.computational_model_update(
                model=model, fields={"description": tab}, expected_version=1
            )
            outcomes[tab] = "saved"
        except RecordVersionError as error:
            outcomes[tab] = error
        finally:
            connections.close_all()

    first = threading.Thread(target=save, args=("first tab",))
    first.start()
    assert first_inside.wait(5)
    second = threading.Thread(target=save, args=("second tab",))
    second.start()
    first.join(10)
    second.join(10)

    assert outcomes["first tab"] == "saved"
    refused = outcomes["second tab"]
    assert isinstance(refused, RecordVersionError)
    assert refused.changed == ["description"] and refused.record.version == 2
    stored = ComputationalModel.objects.get(pk=model.pk)
    assert (stored.description, stored.version) == ("first tab", 2)
