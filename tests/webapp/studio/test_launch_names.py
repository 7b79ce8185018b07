"""Issue 38 item 18: a run keeps the names of the system and application models it was
launched from; their owner's later renames (of records since made private) neither show in
the run nor answer its owner's search."""

from __future__ import annotations

from typing import Any

import pytest
from rest_framework.test import APIClient

from tests.hwdb.factories import SystemModelFactory
from tests.webapp.studio.factories import ApplicationModelFactory
from webapp.studio.models import Simulation

pytestmark = pytest.mark.django_db


def test_a_run_keeps_the_names_it_was_launched_with(
    user: Any,
    other_user: Any,
    client_for: Any,
    sent: list[list[int]],
    django_capture_on_commit_callbacks: Any,
) -> None:
    ada, bob = client_for(other_user), client_for(user)
    system = SystemModelFactory(owner=other_user, shared=True, name="Shared rig")
    application = ApplicationModelFactory(owner=other_user, shared=True, name="Shared app")
    body = {
        "system_model": system.pk,
        "application": application.pk,
        "labels": {"GPU": 1},
        "variables": {"steps": 1, "ops": 1.0},
    }
    with django_capture_on_commit_callbacks(execute=True):
        launched = bob.post("/api/simulations/", body, format="json")
    assert launched.status_code == 201, launched.json()
    run = launched.json()["id"]

    # Ada renames both and makes them private.
    assert (
        ada.patch(
            f"/api/systems/{system.pk}/", {"name": "Secret rig", "shared": False}, format="json"
        ).status_code
        == 200
    )
    assert (
        ada.patch(
            f"/api/applications/{application.pk}/",
            {"name": "Secret app", "shared": False},
            format="json",
        ).status_code
        == 200
    )

    names = ("Shared rig", "Shared app")
    detail = bob.get(f"/api/simulations/{run}/").json()
    assert (detail["system_name"], detail["application_name"]) == names
    (row,) = bob.get("/api/simulations/").json()["results"]
    assert (row["system_name"], row["application_name"]) == names
    assert bob.get("/api/simulations/", {"search": "Secret"}).json()["count"] == 0
    assert bob.get("/api/simulations/", {"search": "Shared rig"}).json()["count"] == 1
    assert bob.get("/api/simulations/", {"search": "Shared app"}).json()["count"] == 1

    # Ada deletes them: the run still runs on what it froze and keeps its names.
    assert ada.delete(f"/api/systems/{system.pk}/").status_code == 204
    assert ada.delete(f"/api/applications/{application.pk}/").status_code == 204
    detail = bob.get(f"/api/simulations/{run}/").json()
    assert (detail["system_name"], detail["application_name"]) == names
    stored = Simulation.objects.get(pk=run)
    assert (stored.system_model_id, stored.application_id) == (None, None)
    assert stored.snapshot and stored.app_source


def test_a_run_from_a_bare_snapshot_and_source_names_none(
    client: APIClient, sent: list[list[int]]
) -> None:
    from tests.webapp.studio.factories import TINY_APP, tiny_snapshot

    body = {"snapshot": tiny_snapshot(), "app_source": TINY_APP, "labels": {"CPU": 1}}
    body["variables"] = {"steps": 1, "ops": 1.0}
    launched = client.post("/api/simulations/", body, format="json").json()
    assert (launched["system_name"], launched["application_name"]) == (None, None)


def test_the_migration_gives_existing_runs_their_records_names(user: Any) -> None:
    from importlib import import_module

    from django.apps import apps

    from tests.webapp.studio.factories import SimulationFactory

    migration = import_module("webapp.studio.migrations.0006_simulation_launch_names")
    system = SystemModelFactory(owner=user, name="Rig")
    application = ApplicationModelFactory(owner=user, name="App")
    old = SimulationFactory(
        owner=user,
        system_model=system,
        application=application,
        system_name="",
        application_name="",
    )
    bare = SimulationFactory(owner=user)
    migration.names_at_migration(apps, None)
    old.refresh_from_db()
    bare.refresh_from_db()
    assert (old.system_name, old.application_name) == ("Rig", "App")
    assert (bare.system_name, bare.application_name) == ("", "")
