"""`./studio run` leaves no worker behind: the script runs in a copy of the project whose
virtual environment's `python` and `celery` are stand-ins (the server and the workers
sleep, writing their process ids), so that its own start and stop logic is what runs."""

from __future__ import annotations

import hashlib
import os
import shutil
import signal
import subprocess
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

PYTHON = """#!/bin/bash
case "$*" in
    *runserver*) echo $$ > "$PARASIM_DATA_DIR/server.pid"; exec sleep 600 ;;
    -c*) echo default ;;
    *) exit 0 ;;
esac
"""
CELERY = """#!/bin/bash
echo $$ >> "$PARASIM_DATA_DIR/workers.pid"
exec sleep 600
"""


def alive(pid: int) -> bool:
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except (FileNotFoundError, ProcessLookupError):
        return False
    # A zombie (exited, not yet reaped by its parent) is not running either.
    return stat.rsplit(")", 1)[1].split()[0] != "Z"


def wait_until(condition: object, timeout: float = 20) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if condition():  # type: ignore[operator]
            return True
        time.sleep(0.05)
    return False


def _default_sigint() -> None:
    signal.signal(signal.SIGINT, signal.SIG_DFL)


class Run:
    """`./studio run` in a stand-in project under `directory`."""

    def __init__(self, directory: Path) -> None:
        shutil.copy(ROOT / "studio", directory / "studio")
        (directory / "requirements").mkdir()
        (directory / "requirements" / "dev.txt").write_text("django\n")
        venv = directory / ".venv"
        (venv / "bin").mkdir(parents=True)
        wanted = hashlib.sha256(b"django\n").hexdigest()
        (venv / ".requirements.sha").write_text(wanted + "\n")  # no pip install
        for name, text in (("python", PYTHON), ("celery", CELERY)):
            (venv / "bin" / name).write_text(text)
            (venv / "bin" / name).chmod(0o755)
        self.data = directory / "data"
        environment = {**os.environ, "PARASIM_DATA_DIR": str(self.data), "PORT": "1"}
        self.errors = directory / "stderr.txt"
        self.process = subprocess.Popen(
            ["bash", str(directory / "studio"), "run"],
            cwd=directory,
            env=environment,
            stderr=self.errors.open("w"),
            # Ctrl-C as in a terminal: a shell started with SIGINT ignored (pytest itself run
            # in the background by a script) may not trap it, and the script would never see it.
            preexec_fn=_default_sigint,
        )
        started = wait_until(
            lambda: (self.data / "server.pid").exists() or self.process.poll() is not None
        )
        time.sleep(0.5)  # the workers, started before the server, have written their ids
        assert started and self.process.poll() is None, self.stop()
        (self.server,) = self.pids("server.pid")
        self.workers = self.pids("workers.pid")

    def pids(self, name: str) -> list[int]:
        path = self.data / name
        return [int(line) for line in path.read_text().split()] if path.exists() else []

    def stop(self) -> str:
        """Return the script's standard error once it has exited (killed if it has not)."""
        try:
            self.process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
        for pid in self.pids("workers.pid") + self.pids("server.pid"):
            if alive(pid):
                os.kill(pid, signal.SIGKILL)
        return self.errors.read_text()


@pytest.mark.skipif(shutil.which("bash") is None, reason="needs bash")
@pytest.mark.parametrize("how", ["the server killed", "the script terminated", "Ctrl-C"])
def test_stopping_studio_run_stops_its_workers(tmp_path: Path, how: str) -> None:
    run = Run(tmp_path)
    try:
        if how == "the server killed":
            os.kill(run.server, signal.SIGKILL)
        elif how == "the script terminated":
            os.kill(run.process.pid, signal.SIGTERM)
        else:
            os.kill(run.process.pid, signal.SIGINT)
        assert run.process.wait(timeout=20) != 0
        gone = wait_until(lambda: not any(alive(pid) for pid in [run.server, *run.workers]))
    finally:
        errors = run.stop()
    assert len(run.workers) == 2  # the simulation worker and the interactive one
    assert "unbound variable" not in errors
    assert gone, "a process of `./studio run` outlived it"
