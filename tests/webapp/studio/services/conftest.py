"""Helpers of the studio service tests: counting snapshot parses, running an attempt with a
fake sandbox, a sweep's spec."""

from __future__ import annotations

from typing import Any

import pytest

import simulator.snapshot
from tests.webapp.studio.factories import TINY_APP, tiny_snapshot
from webapp.studio.models import Simulation
from webapp.studio.services.runs import sandbox_payload, simulation_run


def count_parses(monkeypatch: pytest.MonkeyPatch) -> list[object]:
    """Return a list that grows by one each time a snapshot is parsed (`load_snapshot`
    validates a snapshot's graph once per parse; an already parsed one is returned as is)."""
    parses: list[object] = []
    validate_graph = simulator.snapshot.validate_graph

    def counting(*args: Any, **kwargs: Any) -> Any:
        parses.append(args[0])
        return validate_graph(*args, **kwargs)

    monkeypatch.setattr(simulator.snapshot, "validate_graph", counting)
    return parses


def run_with(simulation: Simulation, outcome: Any) -> Simulation:
    """Return `simulation` after one attempt whose sandbox (a fake runner) gives `outcome`."""

    def fake_run_sandboxed(
        payload: Any, *, limits: Any = None, progress: Any = None, keep_spare: bool = False
    ) -> Any:
        assert payload == sandbox_payload(simulation)
        if isinstance(outcome, Exception):
            raise outcome
        return outcome

    simulation_run(
        simulation_id=simulation.pk,
        task_id=simulation.celery_task_id,
        worker="w@h",
        run=fake_run_sandboxed,
    )
    simulation.refresh_from_db()
    return simulation


def sweep_spec(**overrides: Any) -> dict[str, Any]:
    """Return a sweep of the tiny system and application over six points, with `overrides`."""
    spec: dict[str, Any] = {
        "snapshot": tiny_snapshot(),
        "app_source": TINY_APP,
        "labels": {"CPU": 1},
        "variables": {"steps": [1, 2], "ops": {"start": 1e9, "stop": 3e9, "step": 1e9}},
    }
    spec.update(overrides)
    return spec
