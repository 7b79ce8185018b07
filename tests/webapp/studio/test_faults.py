"""Faults of the broker, the database and the workers lose no run and run none twice.

Each test starts its own throwaway Redis and PostgreSQL on free ports (never the shared
servers, which other tests use), real Celery workers pointed at them, launches a burst of
runs through `faultctl` (Django code in a subprocess, on the throwaway database), breaks
something mid-burst, and checks that every run ends succeeded exactly once: stored with its
result, started once (twice only for a run its worker was killed under), none left queued
or running. Like test_integration.py they are skipped without DATABASE_URL=postgres://...
and CELERY_BROKER_URL=redis://... (which they do not use) unless PARASIM_REQUIRE_SERVICES=1,
and also need `redis-server` and PostgreSQL's `initdb` and `pg_ctl`.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass
from glob import glob
from pathlib import Path
from typing import Any

import psycopg
import pytest

from tests.webapp.studio.live import ROOT, SERVICES_MISSING, Worker, require_services, wait_for

pytestmark = [pytest.mark.integration, pytest.mark.slow]

FINAL = {"succeeded", "failed", "cancelled"}
SERVERS_MISSING = "the fault tests need redis-server and PostgreSQL's initdb and pg_ctl"


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def postgres_bin(name: str) -> str | None:
    found = sorted(glob(f"/usr/lib/postgresql/*/bin/{name}"))
    return found[-1] if found else shutil.which(name)


@pytest.fixture(scope="module", autouse=True)
def real_services() -> None:
    """Skip (or, when services are required, fail) without the services or the servers."""
    require_services()
    if shutil.which("redis-server") and postgres_bin("initdb") and postgres_bin("pg_ctl"):
        return
    if os.environ.get("PARASIM_REQUIRE_SERVICES") == "1":
        pytest.fail(SERVERS_MISSING)
    pytest.skip(f"{SERVERS_MISSING} ({SERVICES_MISSING})")


class Redis:
    """A throwaway redis-server persisting to an append-only file, as deployed."""

    def __init__(self, directory: Path) -> None:
        self.directory = directory
        self.port = free_port()
        self.url = f"redis://127.0.0.1:{self.port}/0"
        self.process: subprocess.Popen[bytes] | None = None

    def start(self) -> None:
        # appendonly as in docker-compose.yml: a restarted broker keeps its queues.
        command = ["redis-server", "--port", str(self.port), "--bind", "127.0.0.1"]
        command += ["--save", "", "--appendonly", "yes", "--appendfsync", "always"]
        command += ["--dir", str(self.directory)]
        log = (self.directory / "redis.log").open("ab")
        self.process = subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT)
        wait_for(self.answers, timeout=20, what="the throwaway Redis to start")

    def answers(self) -> bool:
        import redis

        try:
            return bool(redis.Redis.from_url(self.url, socket_timeout=1).ping())
        except redis.RedisError:
            return False

    def stop(self) -> None:
        """Shut Redis down as `docker compose restart` would (SIGTERM: the file is flushed)."""
        if self.process is not None and self.process.poll() is None:
            self.process.terminate()
            self.process.wait(timeout=20)


class Postgres:
    """A throwaway PostgreSQL cluster in a temporary directory (run as `postgres` by root):
    a new one, or a copy of the stopped cluster `template` (its files, owners kept)."""

    def __init__(self, template: Postgres | None = None) -> None:
        self.directory = Path(tempfile.mkdtemp(prefix="parasim-faults-pg-"))
        self.port = free_port()
        self.url = f"postgres://postgres@127.0.0.1:{self.port}/parasim_faults"
        self.as_owner: list[str] = []
        if os.geteuid() == 0:  # PostgreSQL refuses to run as root
            shutil.chown(self.directory, user="postgres")
            self.as_owner = ["runuser", "-u", "postgres", "--"]
        data = str(self.directory / "data")
        if template is None:
            initdb = ["-D", data, "-U", "postgres", "-A", "trust", "-E", "UTF8", "--no-sync"]
            self.run("initdb", *initdb)
        else:
            subprocess.run(["cp", "-a", template.data, data], check=True, capture_output=True)
        self.data = data

    def run(self, program: str, *arguments: str) -> None:
        command = [*self.as_owner, str(postgres_bin(program)), *arguments]
        subprocess.run(command, check=True, capture_output=True, cwd=self.directory)

    def start(self) -> None:
        options = f"-p {self.port} -k {self.directory} -c listen_addresses=127.0.0.1"
        options += " -c fsync=off -c max_connections=60"
        log = str(self.directory / "postgres.log")
        self.run("pg_ctl", "-D", self.data, "-o", options, "-l", log, "-w", "start")

    def stop(self, mode: str = "fast") -> None:
        """Stop the server; `fast` ends every connection at once, like a crash does."""
        self.run("pg_ctl", "-D", self.data, "-m", mode, "-w", "stop")

    def create_database(self) -> None:
        admin = f"postgres://postgres@127.0.0.1:{self.port}/postgres"
        with psycopg.connect(admin, autocommit=True) as connection:
            connection.execute("CREATE DATABASE parasim_faults")

    def destroy(self) -> None:
        with contextlib.suppress(subprocess.CalledProcessError):  # already stopped
            self.stop("immediate")
        shutil.rmtree(self.directory, ignore_errors=True)


@dataclass
class Servers:
    redis: Redis
    postgres: Postgres
    directory: Path

    @property
    def env(self) -> dict[str, str]:
        """Return the environment pointing Django and Celery at the throwaway servers."""
        return {"DATABASE_URL": self.postgres.url, "CELERY_BROKER_URL": self.redis.url}

    def faultctl(self, *arguments: str, **env: str) -> Any:
        """Return the JSON printed by `python -m tests.webapp.studio.faultctl ARGUMENTS`,
        run with `env` added to its environment."""
        environment = {**os.environ, "DJANGO_SETTINGS_MODULE": "webapp.settings.test", **self.env}
        environment.update(env)
        command = [sys.executable, "-m", "tests.webapp.studio.faultctl", *arguments]
        done = subprocess.run(command, cwd=ROOT, env=environment, capture_output=True, text=True)
        assert done.returncode == 0, done.stderr[-3000:]
        return json.loads(done.stdout.strip().splitlines()[-1])

    def worker(
        self,
        name: str,
        *,
        queues: list[str] | None = None,
        beat: bool = False,
        hostname: str | None = None,
        **env: str,
    ) -> Worker:
        """Return a started worker on the throwaway servers, with `env` added."""
        log = self.directory / f"{name}.log"
        environment = {**self.env, **env}
        worker = Worker(
            self.postgres.url, log, queues, env=environment, beat=beat, hostname=hostname
        )
        wait_for(
            lambda: worker.process.poll() is not None or b" ready." in log.read_bytes(),
            timeout=60,
            what=f"worker {name} to be ready",
        )
        if worker.process.poll() is not None:
            pytest.fail(f"worker {name} exited:\n{log.read_text()[-3000:]}")
        return worker

    def runs(self, ids: list[int]) -> dict[int, dict[str, Any]] | None:
        """Return the runs by id, or None while the database cannot be reached."""
        query = (
            "SELECT id, status, attempts, worker, error, result IS NOT NULL AS stored,"
            " overall_time_s FROM studio_simulation WHERE id = ANY(%s)"
        )
        try:
            with psycopg.connect(self.postgres.url, connect_timeout=2) as connection:
                cursor = connection.cursor(row_factory=psycopg.rows.dict_row)
                return {row["id"]: row for row in cursor.execute(query, (ids,))}
        except psycopg.OperationalError:
            return None

    def finished(self, ids: list[int]) -> int:
        runs = self.runs(ids) or {}
        return sum(run["status"] in FINAL for run in runs.values())

    def in_progress(self, ids: list[int], worker: Worker) -> bool:
        """Whether a sandbox of the worker is busy and the database then says one of the runs
        is running: a busy sandbox alone may be the spare child warming up after the last run
        while no run is in progress. The database is asked last, as close to a kill as can
        be, since the sandbox's look takes a while and its run may end meanwhile."""
        if not worker.busy_pool_process():
            return False
        runs = (self.runs(ids) or {}).values()
        return any(run["status"] == "running" for run in runs)

    def all_final(self, ids: list[int], *, timeout: float, workers: list[Worker]) -> dict:
        """Return the runs once all are final; fail with the stragglers and the logs."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            runs = self.runs(ids)
            if runs is not None and all(run["status"] in FINAL for run in runs.values()):
                return runs
            time.sleep(0.5)
        runs = self.runs(ids) or {}
        stragglers = {pk: run["status"] for pk, run in runs.items() if run["status"] not in FINAL}
        logs = "\n".join(f"--- {w.log.name}\n{_problems(w.log.read_text())}" for w in workers)
        pytest.fail(f"after {timeout} s, not final: {stragglers}\n{logs}")


@pytest.fixture(scope="module")
def migrated(real_services: None, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Postgres]:
    """Return a stopped PostgreSQL cluster whose database is migrated, with the runs' owner:
    made once, copied by each test (`servers`)."""
    postgres = Postgres()
    redis = Redis(tmp_path_factory.mktemp("template-redis"))
    try:
        postgres.start()
        postgres.create_database()
        redis.start()
        Servers(redis=redis, postgres=postgres, directory=redis.directory).faultctl("migrate")
        redis.stop()
        postgres.stop()
        yield postgres
    finally:
        redis.stop()
        postgres.destroy()


@pytest.fixture
def servers(tmp_path: Path, migrated: Postgres) -> Iterator[Servers]:
    """Start a throwaway Redis and PostgreSQL (a copy of `migrated`); remove them after."""
    postgres = Postgres(template=migrated)
    redis = Redis(tmp_path)
    try:
        postgres.start()
        redis.start()
        yield Servers(redis=redis, postgres=postgres, directory=tmp_path)
    finally:
        redis.stop()
        postgres.destroy()


def assert_each_ran_once(runs: dict[int, dict[str, Any]], ids: list[int]) -> None:
    """Every run succeeded with its own result, started exactly once."""
    assert sorted(runs) == sorted(ids), "runs went missing"
    failed = {pk: run["error"] for pk, run in runs.items() if run["status"] != "succeeded"}
    assert not failed
    assert all(run["stored"] for run in runs.values())
    assert {pk: run["attempts"] for pk, run in runs.items() if run["attempts"] != 1} == {}
    times = [runs[pk]["overall_time_s"] for pk in ids]
    assert times == pytest.approx([(i + 1) / 1e9 for i in range(len(ids))])


def test_a_broker_restart_mid_burst_loses_and_repeats_no_run(servers: Servers) -> None:
    # A message the worker had taken but not started is put back after the visibility
    # timeout; one it had popped but not yet recorded is lost by the broker, and the lost-run
    # check (beat) sends its run again. Both are rare: most restarts need neither.
    worker = servers.worker(
        "worker",
        beat=True,
        PARASIM_VISIBILITY_TIMEOUT="30",
        PARASIM_REAP_EVERY_SECONDS="1",
        PARASIM_LOST_AFTER_SECONDS="5",
    )
    try:
        ids = servers.faultctl("launch", "50")
        wait_for(lambda: servers.finished(ids) >= 10, timeout=30, what="10 runs to finish")
        servers.redis.stop()
        time.sleep(2)
        servers.redis.start()
        # A message put back waits out the 30 s visibility timeout before it runs again, and
        # the rest of the burst runs after it: on a loaded two-core machine that passed 75 s.
        runs = servers.all_final(ids, timeout=150, workers=[worker])
    finally:
        worker.stop()
    assert_each_ran_once(runs, ids)


def _problems(log: str) -> str:
    """Return a worker log's warnings and errors (first lines of each), then its tail."""
    lines = [line for line in log.splitlines() if "WARNING/" in line or "ERROR/" in line]
    return "\n".join([*lines[:40], "...", log[-1500:]])


def test_a_database_outage_mid_burst_loses_and_fails_no_run(servers: Servers) -> None:
    from webapp.studio.services.common import STORE_RETRY_DELAYS_S

    worker = servers.worker("worker")
    try:
        ids = servers.faultctl("launch", "50")
        wait_for(lambda: servers.finished(ids) >= 10, timeout=30, what="10 runs to finish")
        servers.postgres.stop()
        # Longer than a finishing run waits for the database: its task retries the attempt,
        # and so do the tasks that could not start meanwhile.
        time.sleep(sum(STORE_RETRY_DELAYS_S) + 3)
        servers.postgres.start()
        runs = servers.all_final(ids, timeout=75, workers=[worker])
    finally:
        worker.stop()
    assert b"retry: Retry in" in worker.log.read_bytes()
    # A run cut off while storing its result is run again: at most one per pool process.
    again = {pk for pk, run in runs.items() if run["attempts"] == 2}
    assert len(again) <= 2, again
    assert_each_ran_once({pk: {**run, "attempts": 1} for pk, run in runs.items()}, ids)
    assert {run["attempts"] for run in runs.values()} <= {1, 2}


def test_a_worker_killed_mid_burst_leaves_its_runs_to_another(servers: Servers) -> None:
    doomed = servers.worker("doomed", queues=["gajgerqueue"])
    rescuer = None
    try:
        # Each run busy for about 0.3 s, so that the kill lands in the middle of one (a run
        # of the tiny model ends in a few ms, between two looks at its sandbox).
        # 80 runs: what the rescuer finishes after the kill (about 0.4 s each with the
        # queue's own cost) fits all_final's 90 s on a loaded 2-core CI machine; 200 did not.
        ids = servers.faultctl("launch", "80", "--queue", "gajgerqueue", "--busy", "2000000")
        wait_for(
            lambda: servers.finished(ids) >= 20 and servers.in_progress(ids, doomed),
            timeout=60,
            what="20 runs to finish and another to be in progress",
        )
        doomed.kill()
        before = servers.runs(ids) or {}
        interrupted = {pk for pk, run in before.items() if run["status"] == "running"}
        # The lost-run check (celery beat in the rescuer) requeues what the dead worker held.
        rescuer = servers.worker(
            "rescuer", beat=True, PARASIM_REAP_EVERY_SECONDS="1", PARASIM_LOST_AFTER_SECONDS="2"
        )
        runs = servers.all_final(ids, timeout=90, workers=[doomed, rescuer])
    finally:
        doomed.stop()
        if rescuer is not None:
            rescuer.stop()
    assert interrupted, "no run was in progress when the worker was killed"
    assert {pk for pk, run in runs.items() if run["attempts"] == 2} == interrupted
    assert {runs[pk]["worker"] for pk in interrupted} == {rescuer.hostname}
    assert_each_ran_once({pk: {**run, "attempts": 1} for pk, run in runs.items()}, ids)


def test_a_worker_killed_and_restarted_under_its_hostname_reruns_its_runs(
    servers: Servers,
) -> None:
    # docker-compose restarts a killed worker (`restart: unless-stopped`) under the same
    # `--hostname=worker@%h`: the name answers again, but the runs the killed process held
    # must be rerun, not left running until they are failed as past their time limit.
    # The runs are queued before the worker starts, so that the look below has the whole
    # burst (30 runs of about 0.3 s each) to catch one in progress: launched into a running
    # worker, a loaded machine could finish ten of them before `launch` had returned.
    ids = servers.faultctl("launch", "30", "--queue", "gajgerqueue", "--busy", "2000000")
    doomed = servers.worker("doomed", queues=["gajgerqueue"])
    reborn = None
    try:
        wait_for(
            lambda: servers.in_progress(ids, doomed), timeout=60, what="a run to be in progress"
        )
        doomed.kill()
        before = servers.runs(ids) or {}
        interrupted = {pk for pk, run in before.items() if run["status"] == "running"}
        reborn = servers.worker("reborn", queues=["gajgerqueue"], hostname=doomed.hostname)
        # The check runs once the restarted worker answers (as a separate beat's would), past
        # the interrupted runs' heartbeat grace.
        time.sleep(3)
        report = servers.faultctl("reap", PARASIM_LOST_AFTER_SECONDS="2")
        runs = servers.all_final(ids, timeout=90, workers=[doomed, reborn])
    finally:
        doomed.stop()
        if reborn is not None:
            reborn.stop()
    assert interrupted, "no run was in progress when the worker was killed"
    assert sorted(report["requeued"]) == sorted(interrupted)
    assert {pk for pk, run in runs.items() if run["attempts"] == 2} == interrupted
    assert {runs[pk]["worker"] for pk in interrupted} == {doomed.hostname}
    assert_each_ran_once({pk: {**run, "attempts": 1} for pk, run in runs.items()}, ids)
