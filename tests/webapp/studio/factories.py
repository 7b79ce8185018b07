"""factory_boy factories and small fixtures' data for the studio tests.

TINY_SNAPSHOT is one CPU node holding two processes whose computational model takes
ops / speed seconds per computation; TINY_APP computes `steps` times, so a run lasts
steps x ops / speed simulated seconds and finishes in well under a second of wall time.
"""

from __future__ import annotations

import copy
from typing import Any

import factory

import simulator
from tests.hwdb.factories import UserFactory
from webapp.studio.models import ApplicationModel, Simulation

TINY_SNAPSHOT: dict[str, Any] = {
    "name": "tiny",
    "hardware": {"cpu": {"type": "CPU", "name": "Test CPU", "attributes": {"speed": 1e9}}},
    "models": {
        "m": {
            "language": "javascript",
            "source": "function computationTime(params) { return params.ops / hw.speed; }",
        }
    },
    "nodes": [
        {
            "id": "cpu0",
            "name": "CPU",
            "hardware": "cpu",
            "model": "m",
            "count": 1,
            "labels": {"CPU": 2},
        }
    ],
    "edges": [],
}
TINY_APP = "for i in range(steps):\n    sim.computation({'ops': ops})\n"
TINY_VARIABLES = [
    {"name": "steps", "type": "int", "default": 3},
    {"name": "ops", "type": "float", "default": 1e9},
]


def tiny_snapshot() -> dict[str, Any]:
    """Return a fresh copy of the tiny snapshot."""
    return copy.deepcopy(TINY_SNAPSHOT)


class ApplicationModelFactory(factory.django.DjangoModelFactory):
    name = factory.Sequence(lambda n: f"Application {n}")
    source = TINY_APP
    variables = factory.LazyFunction(lambda: copy.deepcopy(TINY_VARIABLES))
    owner = factory.SubFactory(UserFactory)
    shared = False

    class Meta:
        model = ApplicationModel


class SimulationFactory(factory.django.DjangoModelFactory):
    owner = factory.SubFactory(UserFactory)
    name = factory.Sequence(lambda n: f"Run {n}")
    system_model = None
    application = None
    # The names at launch, as `services.launch.new_simulation` stores them.
    system_name = factory.LazyAttribute(
        lambda run: run.system_model.name if run.system_model else ""
    )
    application_name = factory.LazyAttribute(
        lambda run: run.application.name if run.application else ""
    )
    snapshot = factory.LazyFunction(tiny_snapshot)
    app_source = TINY_APP
    variables = factory.LazyFunction(lambda: {"steps": 3, "ops": 1e9})
    labels = factory.LazyFunction(lambda: {"CPU": 2})
    queue = "default"
    time_limit_s = 60
    engine_version = simulator.ENGINE_VERSION
    celery_task_id = factory.Faker("uuid4")

    class Meta:
        model = Simulation
