"""Which life of a Celery worker holds a run.

A worker's hostname names a place, not a process: docker-compose restarts a killed worker
under the same `--hostname=worker@%h`, and the new process answers to the old name while the
runs the old one held are gone with it. Each worker process start draws a new `LIFE`; a run
records the life of the worker that took it (`Simulation.worker_life`), and the lost-run check
asks every worker for its current life (`selectors.alive_workers`, through the `parasim_life`
command registered here) and treats a run whose life is no longer answering as lost.

`webapp.celery` imports this module, so the worker's main process draws `LIFE` at start-up,
before it forks its pool: every pool process of one life shares it.
"""

from __future__ import annotations

import uuid
from typing import Any

from celery.worker.control import inspect_command

LIFE_COMMAND = "parasim_life"

LIFE = uuid.uuid4().hex


@inspect_command(name=LIFE_COMMAND)
def parasim_life(state: Any) -> dict[str, str]:
    """Return this worker process's life (drawn at its start)."""
    return {"life": LIFE}
