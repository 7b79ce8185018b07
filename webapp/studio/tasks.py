"""Celery tasks of the studio, thin by design: take an id, call a service, done.

`run_simulation` is acknowledged late and rejected (requeued) when its worker process dies,
so a run is never lost with a worker; `simulation_start` makes redelivery idempotent.
"""

from __future__ import annotations

import logging
import signal
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from celery import shared_task

from simulator.analyze import ANALYZE_ENTRY
from simulator.errors import SimulationError
from simulator.evaluate import CHECK_APPLICATION_ENTRY, CHECK_ENTRY, EVALUATE_ENTRY
from simulator.sandbox import Limits, run_sandboxed
from simulator.trace_sandbox import TRACE_ENTRY
from simulator.workloads.serving_sandbox import SERVE_ENTRY
from webapp.interactive import RUN_INTERACTIVE, result_backend
from webapp.studio import dispatch, selectors
from webapp.studio.dispatch import ADVANCE_STUDY, RUN_SIMULATION
from webapp.studio.services.common import DATABASE_UNREACHABLE, RunCancelled
from webapp.studio.services.runs import simulation_reap_lost, simulation_run
from webapp.studio.services.studies import LEASE_RETRY_S, studies_to_advance, study_advance
from webapp.studio.worker_life import LIFE

logger = logging.getLogger(__name__)

DATABASE_RETRY_MAX_S = 10
# What an interactive request may run (webapp/interactive.py): a test-run, the checks of a
# save, the kernel analyzer, a trace's import, a request stream served with continuous
# batching (its answer is the request's); never a simulation of the run machinery, which
# has its own queues and limits.
INTERACTIVE_ENTRIES = frozenset(
    {EVALUATE_ENTRY, CHECK_ENTRY, CHECK_APPLICATION_ENTRY, ANALYZE_ENTRY, TRACE_ENTRY, SERVE_ENTRY}
)
MSG_NOT_INTERACTIVE = "{entry!r} is not an interactive job"


@contextmanager
def sigterm_stops_the_run() -> Iterator[None]:
    """Turn SIGTERM (a cancel's `revoke(terminate=True)`) into RunCancelled for the duration.

    Celery's pool processes die at once on SIGTERM; raising instead lets the sandbox kill
    its child process group on the way out, so a cancelled run leaves nothing behind.
    """
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def stop(signum: int, frame: object) -> None:
        raise RunCancelled("terminated")

    previous = signal.signal(signal.SIGTERM, stop)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


@shared_task(
    bind=True,
    name=RUN_SIMULATION,
    acks_late=True,
    reject_on_worker_lost=True,
    ignore_result=True,
    max_retries=None,  # retry(max_retries=None) means the task's own limit, not "no limit"
)
def run_simulation(self: Any, simulation_id: int) -> None:
    """Run one attempt of simulation `simulation_id` and store its outcome.

    While the database cannot be reached the attempt is retried under the same task id,
    every few seconds and for as long as it takes: acknowledging a failed task would leave
    the run queued (or running) with no message left to finish it.
    """
    try:
        with sigterm_stops_the_run():
            simulation_run(
                simulation_id=simulation_id,
                task_id=str(self.request.id),
                worker=str(self.request.hostname or ""),
                worker_life=LIFE,
                run=run_sandboxed,
            )
    except DATABASE_UNREACHABLE as error:
        countdown = min(2**self.request.retries, DATABASE_RETRY_MAX_S)
        raise self.retry(exc=error, countdown=countdown) from None


@shared_task(name="studio.reap_lost_simulations", ignore_result=True)
def reap_lost_simulations() -> dict[str, list[int]]:
    """Requeue or fail running simulations whose worker vanished, and send again the queued
    ones whose message never reached the broker or was lost by it (run by celery beat)."""
    alive = selectors.alive_workers()
    if alive is None:
        return {"requeued": [], "failed": [], "resent": []}
    report = simulation_reap_lost(alive_workers=alive, held_by_broker=selectors.broker_task_ids)
    if report.requeued or report.failed or report.resent or report.released:
        logger.warning(
            "lost simulations: requeued %s, failed %s, sent again %s; held runs released %s",
            report.requeued,
            report.failed,
            report.resent,
            report.released,
        )
    return {"requeued": report.requeued, "failed": report.failed, "resent": report.resent}


@shared_task(name=ADVANCE_STUDY, ignore_result=True, acks_late=True)
def advance_study_task(study_id: int) -> None:
    """Tell study `study_id` its finished trials and launch its next ones; while another
    advance of it holds its lease, try again shortly (that one may have read the trials
    before this run ended)."""
    if study_advance(study_id=study_id) is None:
        dispatch.advance_study(study_id, countdown=LEASE_RETRY_S)


@shared_task(name="studio.advance_studies", ignore_result=True)
def advance_studies() -> None:
    """Send an advance of every study that is running or has runs in flight (run by celery
    beat): after a restart of the workers, studies go on from their storage."""
    for study_id in studies_to_advance():
        dispatch.advance_study(study_id)


@shared_task(name=RUN_INTERACTIVE, ignore_result=False, acks_late=False)
def run_interactive(
    *, payload: dict[str, Any], limits: dict[str, Any], entry: str
) -> dict[str, Any]:
    """Return {"result": ...} of the sandbox entry `entry` run on `payload` within `limits`,
    or {"error": ...} with the SimulationError the child reported (`to_dict`), for the web
    request waiting on it (webapp/interactive.py).

    Acknowledged early: a job lost with its worker is not run again; its request has an
    answer (503) and the user may try again.
    """
    if entry not in INTERACTIVE_ENTRIES:
        return {"error": {"kind": "simulation", "message": MSG_NOT_INTERACTIVE.format(entry=entry)}}
    try:
        return {"result": run_sandboxed(payload, limits=Limits(**limits), _entry=entry)}
    except SimulationError as error:
        return {"error": error.to_dict()}


# Set before the worker builds the task's tracer, which keeps the backend it finds.
run_interactive.backend = result_backend()
