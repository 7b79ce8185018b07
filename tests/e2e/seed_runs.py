"""Many finished runs of the demo user, written straight into a live server's database.

Run in the server's environment (`python -m tests.e2e.seed_runs COUNT`): the results are
genuine (the tiny system and application of the studio tests, run in this process at one,
two and three steps), stored as a finished launch stores them, so that the run history, the
run page and the comparison read them as they read any run.
"""

from __future__ import annotations

import sys
from datetime import timedelta

import django

RUN_NAME = "History run {number:03d}"


def steps_of(number: int) -> int:
    """Return the steps of run `number` (1, 2, 3, 1, ...): run n computes n-ish seconds."""
    return (number - 1) % 3 + 1


def seed(count: int, *, username: str = "demo") -> list[int]:
    """Store `count` succeeded runs named RUN_NAME, numbered from 1 (the oldest); return
    their ids in that order."""
    # Imported here: Django's models load only after `django.setup()` in this process.
    from django.contrib.auth import get_user_model
    from django.utils import timezone

    import simulator
    from simulator.runner import run_simulation
    from tests.webapp.studio.factories import TINY_APP, tiny_snapshot
    from webapp.studio.models import Simulation, SimulationStatus
    from webapp.studio.services.runs import headline_figures

    owner = get_user_model().objects.get(username=username)
    results = {
        steps: run_simulation(
            tiny_snapshot(), TINY_APP, labels={"CPU": 2}, variables={"steps": steps, "ops": 1e9}
        )
        for steps in (1, 2, 3)
    }
    now = timezone.now()
    runs = []
    for number in range(1, count + 1):
        steps = steps_of(number)
        result = results[steps]
        runs.append(
            Simulation(
                owner=owner,
                name=RUN_NAME.format(number=number),
                snapshot=tiny_snapshot(),
                app_source=TINY_APP,
                variables={"steps": steps, "ops": 1e9},
                labels={"CPU": 2},
                queue="default",
                seed=number,
                time_limit_s=60,
                status=SimulationStatus.SUCCEEDED,
                progress=1.0,
                result=result,
                simulated_time_s=result["overall_time_s"],
                attempts=1,
                worker="seeded@e2e",
                started=now,
                finished=now + timedelta(seconds=0.5),
                heartbeat=now,
                engine_version=simulator.ENGINE_VERSION,
                **headline_figures(result),
            )
        )
    # One insert, in number order: ids rise with the number, so run 1 lists last.
    return [run.pk for run in Simulation.objects.bulk_create(runs)]


if __name__ == "__main__":
    django.setup()
    print(" ".join(map(str, seed(int(sys.argv[1])))))
