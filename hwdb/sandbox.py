"""How hwdb's services run a user's code: with the runner of sandbox entries the project
names in `settings.PARASIM_SANDBOX_RUNNER` (the interactive worker's, webapp/interactive.py),
so that this app depends on no module of the project."""

from __future__ import annotations

from typing import TYPE_CHECKING

from django.conf import settings
from django.utils.module_loading import import_string

if TYPE_CHECKING:
    from simulator.sandbox.parent import EntryRunner


def sandbox_runner(*, user_id: int | None) -> EntryRunner:
    """Return the project's runner of sandbox entries for `user_id`'s request."""
    runner = import_string(settings.PARASIM_SANDBOX_RUNNER)
    return runner(user_id=user_id)
