"""A run's limits: each queue's defaults and maxima, the sandbox limits of one attempt, and
the value of the limit that stopped a run.

The queues' limits are settings (`PARASIM_QUEUE_LIMITS`, [default, maximum] per field); a
launch may ask for any whole number of seconds up to its queue's maximum
(`services.launch.check_run_limits`). A run stopped by a limit stores its error with the
limit's kind (the sandbox's `SandboxLimitError.limit`: "wall", "cpu", "memory", "output",
"result", "file size") and, added here, the limit's `value` and `unit`, so that the run page
can say which limit stopped the run and what it was.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from django.conf import settings

from simulator.sandbox import Limits

# The REST fields of a launch's limits, as the queue list names them too.
LIMIT_FIELDS = ("time_limit_s", "cpu_limit_s")
LIMIT_NAMES = {"time_limit_s": "wall clock", "cpu_limit_s": "CPU time"}


def queue_limits(queue: str) -> dict[str, dict[str, int]]:
    """Return `queue`'s limits {field: {"default": s, "max": s}}; a queue the settings do not
    name has the interactive limits."""
    entry = settings.PARASIM_QUEUE_LIMITS.get(queue) or settings.INTERACTIVE_LIMITS
    return {
        field: {"default": int(entry[field][0]), "max": int(entry[field][1])}
        for field in LIMIT_FIELDS
    }


def legacy_cpu_limit_s(time_limit_s: int) -> int:
    """Return the CPU-time limit of a run stored before runs had their own: twice the wall
    clock plus slack, as every run had then."""
    return 2 * int(time_limit_s) + 10


def sandbox_limits(*, time_limit_s: int, cpu_limit_s: int | None) -> Limits:
    """Return the sandbox limits of one attempt: the run's wall clock and CPU time.

    The CPU bound also ends a child whose supervising worker process was killed.
    """
    cpu_s = legacy_cpu_limit_s(time_limit_s) if cpu_limit_s is None else int(cpu_limit_s)
    return Limits(wall_s=float(time_limit_s), cpu_s=cpu_s)


def with_limit_value(error: Mapping[str, Any], limits: Limits) -> dict[str, Any]:
    """Return a run's error with the value and unit of the limit that stopped it added
    (`value`, `unit`: "s" or "bytes"); any other error unchanged."""
    stored = dict(error)
    if stored.get("kind") != "limit":
        return stored
    values: dict[str, tuple[float, str]] = {
        "wall": (limits.wall_s, "s"),
        "cpu": (limits.cpu_s, "s"),
        "memory": (limits.data_bytes, "bytes"),
        "output": (limits.output_bytes, "bytes"),
        "result": (limits.result_bytes, "bytes"),
        "file size": (limits.fsize_bytes, "bytes"),
    }
    found = values.get(str(stored.get("limit")))
    if found is not None:
        stored["value"], stored["unit"] = found
    return stored
