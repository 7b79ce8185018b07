"""The command line's pool of started sandbox children (simulator.sandbox.pool): a daemon per
user and checkout hands a started child to each `python -m simulator run`, which supervises
it as its own; the daemon reaps it and reports how it ended."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from simulator.errors import SandboxCrashError, SandboxLimitError
from simulator.sandbox import Limits, child_entry, run_sandboxed
from simulator.sandbox import pool as pool_module
from simulator.sandbox.launch import PROJECT_ROOT
from simulator.sandbox.pool import (
    PooledChild,
    child_for,
    pool_child,
    pool_directory,
    pool_key,
    socket_path,
)

THIS = "tests.simulator.test_pool"
ENTRY_PID = f"{THIS}:entry_pid"
ENTRY_EXIT = f"{THIS}:entry_exit"
ENTRY_SLEEP = f"{THIS}:entry_sleep"
LIMITS = Limits(wall_s=20, cpu_s=10)
EXAMPLE = Path(PROJECT_ROOT) / "examples" / "merpsys_gtx970"


@child_entry(needs_v8=lambda payload: False)
def entry_pid(**_: object) -> dict[str, Any]:
    return {"status": "finished", "pid": os.getpid(), "parent": os.getppid()}


@child_entry(needs_v8=lambda payload: False)
def entry_exit(**_: object) -> dict[str, Any]:
    os._exit(7)


@child_entry(needs_v8=lambda payload: False)
def entry_sleep(**_: object) -> dict[str, Any]:
    time.sleep(60)
    return {"status": "slept"}


def wait_until(condition: Any, what: str, timeout: float = 30) -> Any:
    deadline = time.monotonic() + timeout
    while not (value := condition()):
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.05)
    return value


def alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (FileNotFoundError, IndexError):
        return False
    return state != "Z"


@pytest.fixture
def runtime(monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """Turn the pool on with a private runtime directory (short: a socket's path holds 107
    bytes); stop its daemons and remove it after the test."""
    directory = Path(tempfile.mkdtemp(prefix="pool-", dir="/tmp"))
    monkeypatch.setenv("XDG_RUNTIME_DIR", str(directory))
    monkeypatch.setenv("PARASIM_CHILD_POOL", "1")
    monkeypatch.setenv("PARASIM_POOL_IDLE_S", "30")
    yield directory
    subprocess.run(["pkill", "-TERM", "-f", f"simulator.sandbox.pool serve {directory}"])
    shutil.rmtree(directory, ignore_errors=True)


def daemon_for(entry: str) -> int:
    """Start the daemon for `entry` (as a command line does when it finds none); return its
    process id once it listens."""
    path = socket_path(entry)
    assert path is not None
    pool_module.start_daemon(path, entry)
    wait_until(lambda: os.path.exists(path), "the daemon's socket")
    found = subprocess.run(
        ["pgrep", "-f", f"simulator.sandbox.pool serve {path}"], capture_output=True, text=True
    ).stdout.split()
    assert len(found) == 1, found
    return int(found[0])


def taken(entry: str) -> PooledChild:
    """Return a child taken from the pool (its daemon started spares one ahead)."""
    return wait_until(lambda: pool_child(entry), "a child from the pool")


def test_a_pooled_child_is_the_daemons_and_runs_the_payload_it_is_given(runtime: Path) -> None:
    daemon = daemon_for(ENTRY_PID)
    child = taken(ENTRY_PID)

    result = run_sandboxed({}, limits=LIMITS, child=child, _entry=ENTRY_PID)

    assert result == {"status": "finished", "pid": child.process.pid, "parent": daemon}
    wait_until(lambda: not os.path.exists(child.workdir), "the daemon to remove the directory")
    second = taken(ENTRY_PID)  # the daemon started the next one
    assert second.process.pid != child.process.pid
    assert run_sandboxed({}, limits=LIMITS, child=second, _entry=ENTRY_PID)["parent"] == daemon


def test_how_a_pooled_child_ended_is_reported_as_for_a_child_of_ones_own(runtime: Path) -> None:
    daemon_for(ENTRY_EXIT)
    with pytest.raises(SandboxCrashError, match="exit status 7") as crash:
        run_sandboxed({}, limits=LIMITS, child=taken(ENTRY_EXIT), _entry=ENTRY_EXIT)
    assert crash.value.to_dict()["exit_status"] == 7

    daemon_for(ENTRY_SLEEP)
    child = taken(ENTRY_SLEEP)
    with pytest.raises(SandboxLimitError, match="wall-clock limit of 1 s"):
        run_sandboxed({}, limits=Limits(wall_s=1, cpu_s=10), child=child, _entry=ENTRY_SLEEP)
    assert not alive(child.process.pid)


def test_the_daemon_kills_the_child_of_a_command_line_that_went_away(runtime: Path) -> None:
    daemon_for(ENTRY_SLEEP)
    child = taken(ENTRY_SLEEP)
    child.go(json.dumps({}), Limits(wall_s=60, cpu_s=60).as_dict())
    time.sleep(0.5)
    assert alive(child.process.pid)

    child.connection.close()  # as when the command line is killed

    wait_until(lambda: not alive(child.process.pid), "the daemon to kill the child")


def test_the_command_line_uses_the_pool_from_its_second_run(runtime: Path) -> None:
    command = [sys.executable, "-m", "simulator", "run", "--system", str(EXAMPLE / "snapshot.json")]
    command += ["--app", str(EXAMPLE / "app.py"), "--labels", "CPU=1,GPU=1", "--json", "-"]
    command += ["--var", "N=1000000", "--var", "blockSz=256", "--var", "computeIntensity=1"]
    command += ["--var", "occupancy=64"]
    environment = {**os.environ}

    def run() -> dict[str, Any]:
        done = subprocess.run(command, cwd=PROJECT_ROOT, env=environment, capture_output=True)
        assert done.returncode == 0, done.stderr.decode()[-2000:]
        result = json.loads(done.stdout)
        result["stats"] = {k: v for k, v in result["stats"].items() if "_s" not in k}
        return result

    first = run()  # no daemon yet: its own child; the daemon starts as it exits
    path = socket_path()
    assert path is not None
    wait_until(lambda: os.path.exists(path), "the first run to start the daemon")
    assert run() == first


def test_the_pool_is_off_or_refused_where_it_must_be(
    runtime: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PARASIM_CHILD_POOL", "0")
    assert pool_child() is None
    assert not (runtime / "parasim").exists()  # not even the directory
    assert child_for(["run", "--no-sandbox"]) is None
    assert child_for(["analyze", "k.sass"]) is None

    monkeypatch.setenv("PARASIM_CHILD_POOL", "1")
    assert pool_directory() == str(runtime / "parasim")
    (runtime / "parasim").chmod(0o755)  # others could enter it
    assert pool_directory() is None
    assert pool_child() is None
    (runtime / "parasim").chmod(0o700)
    if os.geteuid() == 0:  # only root can give it away
        os.chown(runtime / "parasim", 12345, 12345)  # another user's
        assert pool_directory() is None


def test_a_socket_path_too_long_for_unix_sockets_means_no_pool(
    runtime: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    deep = runtime / ("d" * 100)
    deep.mkdir(mode=0o700)
    monkeypatch.setenv("XDG_RUNTIME_DIR", str(deep))

    assert socket_path() is None
    assert pool_child() is None


def test_the_key_changes_with_what_a_child_is_made_of(monkeypatch: pytest.MonkeyPatch) -> None:
    key = pool_key()
    assert pool_key() == key
    assert pool_key(ENTRY_PID) != key
    monkeypatch.setenv("PARASIM_JS_TWINS", "0")  # an operator switch the child reads
    assert pool_key() != key


def test_an_idle_daemon_exits_and_removes_its_socket(
    runtime: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PARASIM_POOL_IDLE_S", "1")
    daemon = daemon_for(ENTRY_PID)
    path = socket_path(ENTRY_PID)
    assert path is not None

    wait_until(lambda: not alive(daemon), "the idle daemon to exit")

    assert not os.path.exists(path)


def test_a_second_daemon_for_the_same_socket_leaves_the_first_one_serving(runtime: Path) -> None:
    first = daemon_for(ENTRY_PID)
    path = socket_path(ENTRY_PID)
    assert path is not None
    second = subprocess.Popen(
        [sys.executable, "-m", "simulator.sandbox.pool", "serve", path, ENTRY_PID],
        cwd=PROJECT_ROOT,
    )
    assert second.wait(timeout=30) == 0
    assert alive(first) and os.path.exists(path)
    os.kill(first, signal.SIGTERM)
    wait_until(lambda: not alive(first), "the daemon to stop")
    assert not os.path.exists(path)
