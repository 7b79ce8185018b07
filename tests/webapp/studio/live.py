"""Helpers of the tests on live services: a `celery worker` subprocess, polling, skipping.

Shared by test_integration.py (the shared PostgreSQL and Redis) and test_faults.py
(throwaway servers it stops and restarts).
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
import uuid
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import pytest
from django.conf import settings

ROOT = Path(__file__).resolve().parents[3]
SERVICES_MISSING = (
    "integration tests need DATABASE_URL=postgres://... and CELERY_BROKER_URL=redis://... "
    "(set PARASIM_REQUIRE_SERVICES=1 to make their absence an error)"
)


def services_configured() -> bool:
    database = os.environ.get("DATABASE_URL", "")
    broker = os.environ.get("CELERY_BROKER_URL", "")
    return database.startswith(("postgres://", "postgresql://")) and broker.startswith("redis://")


def require_services() -> None:
    """Skip (or, when services are required, fail) without PostgreSQL and Redis."""
    if services_configured():
        return
    if os.environ.get("PARASIM_REQUIRE_SERVICES") == "1":
        pytest.fail(SERVICES_MISSING)
    pytest.skip(SERVICES_MISSING)


def broker_prefix() -> str:
    """Return the key prefix of this test process's broker messages (empty unless parallel)."""
    return str(settings.CELERY_BROKER_TRANSPORT_OPTIONS.get("global_keyprefix", ""))


def flush_broker(broker: Any) -> None:
    """Delete this test process's keys from the broker's Redis database (all of them when the
    run is not parallel); a parallel worker's keys are left to it."""
    prefix = broker_prefix()
    if not prefix:
        broker.flushdb()
        return
    for key in broker.scan_iter(match=f"{prefix}*"):
        broker.delete(key)


def wait_for(condition: Callable[[], Any], *, timeout: float, what: str) -> Any:
    """Return the first truthy value of `condition`, polling; fail after `timeout` seconds."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = condition()
        if value:
            return value
        time.sleep(0.1)
    pytest.fail(f"timed out after {timeout} s waiting for {what}")


def children(pid: int) -> list[int]:
    """Return the ids of the direct child processes of `pid` (Linux /proc)."""
    found: list[int] = []
    for task in Path(f"/proc/{pid}/task").glob("*"):
        try:
            found += [int(c) for c in (task / "children").read_text().split()]
        except (FileNotFoundError, ProcessLookupError):
            continue
    return found


def cpu_ticks(pid: int) -> int:
    """Return the CPU time (user + system, clock ticks) process `pid` used; 0 once gone."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except (FileNotFoundError, ProcessLookupError):
        return 0
    return int(fields[11]) + int(fields[12])  # utime, stime: fields 14 and 15 of stat


class Worker:
    """A `celery worker` subprocess serving every configured queue (or `queues`).

    `env` adds to (or overrides) the worker's environment, e.g. CELERY_BROKER_URL or the
    lost-run settings; `beat` embeds celery beat (`-B`) for the periodic lost-run check;
    `hostname` names it (by default a new name), as docker-compose names a restarted worker
    as before.
    """

    def __init__(
        self,
        database_url: str,
        log: Path,
        queues: list[str] | None = None,
        *,
        env: Mapping[str, str] | None = None,
        beat: bool = False,
        hostname: str | None = None,
    ) -> None:
        self.hostname = hostname or f"itest-{uuid.uuid4().hex[:8]}@localhost"
        environment = {
            **os.environ,
            "DATABASE_URL": database_url,
            "DJANGO_SETTINGS_MODULE": "webapp.settings.test",
            "PARASIM_QUEUES": ",".join(settings.PARASIM_QUEUES),
            "PARASIM_VISIBILITY_TIMEOUT": "60",
            "CELERY_TASK_ALWAYS_EAGER": "0",
            **(env or {}),
        }
        command = [sys.executable, "-m", "celery", "-A", "webapp", "worker", "-P", "prefork"]
        command += ["--concurrency=2", "-Q", ",".join(queues or settings.PARASIM_QUEUES)]
        command += ["--hostname", self.hostname, "--loglevel=INFO", "--without-gossip"]
        command += ["--without-mingle", "--without-heartbeat"]
        if beat:
            command += ["-B", "--schedule", str(log.with_suffix(".beat-schedule"))]
        self.log = log
        self.process = subprocess.Popen(
            command, cwd=ROOT, env=environment, stdout=log.open("wb"), stderr=subprocess.STDOUT
        )

    def pool(self) -> list[int]:
        """Return the pool processes' ids."""
        return children(self.process.pid)

    def busy_pool_process(self) -> int | None:
        """Return a pool process whose sandbox child is running a model, if any.

        Every pool process that has run a simulation keeps a spare child waiting for the next
        run (simulator.launch.SpareChild); a waiting child uses no CPU, a running one does.
        """
        busy = self.busy_sandboxes()
        return next((pid for pid, kids in busy.items() if kids), None)

    def busy_sandboxes(self) -> dict[int, list[int]]:
        """Return, per pool process, its sandbox children that use CPU (running a model)."""
        kids = {pid: children(pid) for pid in self.pool()}
        before = {kid: cpu_ticks(kid) for pids in kids.values() for kid in pids}
        time.sleep(0.2)
        return {
            pid: [kid for kid in pids if cpu_ticks(kid) > before[kid]] for pid, pids in kids.items()
        }

    def kill(self) -> None:
        """Kill the whole worker at once (`kill -9`): main process, pool and sandboxes."""
        pool = self.pool()
        sandboxes = [child for pid in pool for child in children(pid)]
        for pid in [self.process.pid, *pool, *sandboxes]:
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                continue
        self.process.wait()

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(timeout=20)
            except subprocess.TimeoutExpired:
                os.kill(self.process.pid, signal.SIGKILL)
                self.process.wait()
        for pid in self.pool():  # a pool process left behind would hold the test database
            os.kill(pid, signal.SIGKILL)
