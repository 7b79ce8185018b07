"""Writes of the studio, one module per entity: application models (`applications`),
launching (`launch`), running, cancelling and recovering runs (`runs`), sweeps (`sweeps`).

The services queue and revoke tasks through `webapp.studio.dispatch`, by task name, and never
import `webapp.studio.tasks` (the tasks import the services). This package exports what the
API views, the tasks and the benchmarks call; new code imports from the modules themselves.
"""

from __future__ import annotations

from webapp.studio.services.applications import (
    application_model_create,
    application_model_delete,
    application_model_update,
)
from webapp.studio.services.common import (
    DATABASE_UNREACHABLE,
    MESSAGES,
    STORE_RETRY_DELAYS_S,
    RunCancelled,
)
from webapp.studio.services.launch import LaunchPlan, launch_plan, simulation_launch
from webapp.studio.services.runs import (
    ReapReport,
    progress_recorder,
    sandbox_payload,
    simulation_cancel,
    simulation_finish,
    simulation_reap_lost,
    simulation_run,
    simulation_start,
    sweep_refresh_aggregate,
)
from webapp.studio.services.sweeps import sweep_cancel, sweep_launch, sweep_size

__all__ = [
    "DATABASE_UNREACHABLE",
    "MESSAGES",
    "STORE_RETRY_DELAYS_S",
    "LaunchPlan",
    "ReapReport",
    "RunCancelled",
    "application_model_create",
    "application_model_delete",
    "application_model_update",
    "launch_plan",
    "progress_recorder",
    "sandbox_payload",
    "simulation_cancel",
    "simulation_finish",
    "simulation_launch",
    "simulation_reap_lost",
    "simulation_run",
    "simulation_start",
    "sweep_cancel",
    "sweep_launch",
    "sweep_refresh_aggregate",
    "sweep_size",
]
