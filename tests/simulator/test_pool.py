"""The command line's pool of started sandbox children (simulator.sandbox.pool): a daemon per
user and checkout hands a started child to each `python -m simulator run`, which supervises
it as its own; the daemon reaps it and reports how it ended."""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from simulator.engine import ARENA_REGION_BYTES
from simulator.errors import SandboxCrashError, SandboxLimitError
from simulator.sandbox import Limits, child_entry, run_sandboxed
from simulator.sandbox import pool as pool_module
from simulator.sandbox import served as served_module
from simulator.sandbox.launch import DEFAULT_ENTRY, PROJECT_ROOT
from simulator.sandbox.pool import PooledChild, child_for, pool_child
from simulator.sandbox.served import (
    ZYGOTE,
    decode_request,
    encode_request,
    pool_directory,
    pool_key,
    served_run,
    served_socket,
    socket_path,
)
from tests.simulator.huge_pages import MALLOC_HUGE_PAGES

THIS = "tests.simulator.test_pool"
ENTRY_PID = f"{THIS}:entry_pid"
ENTRY_EXIT = f"{THIS}:entry_exit"
ENTRY_SLEEP = f"{THIS}:entry_sleep"
ENTRY_RANDOM = f"{THIS}:entry_random"
ENTRY_ORPHAN = f"{THIS}:entry_orphan"
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


@child_entry(needs_v8=lambda payload: False)
def entry_random(**_: object) -> dict[str, Any]:
    import random

    return {"status": "finished", "draw": random.random()}


@child_entry(needs_v8=lambda payload: False)
def entry_orphan(**_: object) -> dict[str, Any]:
    """Leave a process behind: its parent (the run's child) ends, the run's group is killed."""
    if os.fork() == 0:
        time.sleep(60)
        os._exit(0)
    return {"status": "finished"}


def wait_until(condition: Any, what: str, timeout: float = 30) -> Any:
    deadline = time.monotonic() + timeout
    while not (value := condition()):
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.05)
    return value


def alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (FileNotFoundError, ProcessLookupError, IndexError):  # gone while read
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
    # its copies (forked, the same command line) may be there already: the daemon is the one
    # whose parent is none of them
    daemons = [pid for pid in found if _parent(int(pid)) not in {int(other) for other in found}]
    assert len(daemons) == 1, found
    return int(daemons[0])


def _parent(pid: int) -> int:
    try:
        return int(Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[1])
    except (FileNotFoundError, ProcessLookupError, IndexError):  # gone while read
        return 0


def taken(entry: str) -> PooledChild:
    """Return a child taken from the pool (its daemon started spares one ahead)."""
    return wait_until(lambda: pool_child(entry), "a child from the pool")


def test_a_copy_warms_up_buffers_as_large_as_those_it_reads_a_result_into() -> None:
    from simulator.sandbox import parent
    from simulator.sandbox.served import RESULT_PIPE_BYTES

    # `_warm_up_reads` makes buffers of RESULT_PIPE_BYTES: the size the copy's reads ask for
    assert parent._READ_CHUNK == RESULT_PIPE_BYTES
    pool_module._warm_up_reads()  # and the warm-up itself raises nothing


def test_the_words_a_copy_warms_up_with_are_a_sandboxed_run_as_the_command_line_parses_it() -> None:
    from simulator.cli import parser_for

    args = parser_for("run").parse_args(pool_module.WARM_UP_ARGV)

    assert (args.command, args.json, args.labels, args.no_sandbox) == ("run", "-", "P=1", True)
    pool_module._warm_up_parse()  # and the warm-up itself raises nothing


def test_a_pooled_child_is_the_daemons_and_runs_the_payload_it_is_given(runtime: Path) -> None:
    daemon = daemon_for(ENTRY_PID)
    child = taken(ENTRY_PID)

    result = run_sandboxed({}, limits=LIMITS, child=child, _entry=ENTRY_PID)

    assert result == {"status": "finished", "pid": child.process.pid, "parent": daemon}
    wait_until(lambda: not os.path.exists(child.workdir), "the daemon to remove the directory")
    second = taken(ENTRY_PID)  # the daemon started the next one
    assert second.process.pid != child.process.pid
    assert run_sandboxed({}, limits=LIMITS, child=second, _entry=ENTRY_PID)["parent"] == daemon


def stat_fields(pid: int) -> list[str]:
    """Return /proc/PID/stat's fields after the command's name (state, ppid, pgrp, session...)."""
    return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()


def test_the_daemons_children_are_forked_by_its_zygote_and_hold_none_of_it(runtime: Path) -> None:
    daemon = daemon_for(ENTRY_PID)
    child = taken(ENTRY_PID)
    pid = child.process.pid

    # started as the zygote was (its command line), then its own: the daemon's child, in
    # its own session, in its own directory, holding its four pipes and nothing else
    assert Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")[-2] == ZYGOTE.encode()
    parent, group, session = stat_fields(pid)[1:4]
    assert int(parent) == daemon and int(group) == pid and int(session) == pid
    assert os.readlink(f"/proc/{pid}/cwd") == child.workdir
    # once it waits for its run: a file it reads while it prepares is open a moment only
    wait_until(lambda: len(os.listdir(f"/proc/{pid}/fd")) == 4, "the child to hold 4 fds", 5)
    assert sorted(os.listdir(f"/proc/{pid}/fd"), key=int)[:3] == ["0", "1", "2"]
    zygotes = [p for p in _children(daemon) if p != pid]
    assert len(zygotes) == 1 and Path(f"/proc/{zygotes[0]}/cwd").resolve() == Path("/")

    assert run_sandboxed({}, limits=LIMITS, child=child, _entry=ENTRY_PID) == {
        "status": "finished",
        "pid": pid,
        "parent": daemon,
    }


def test_children_forked_by_one_zygote_draw_different_random_numbers(runtime: Path) -> None:
    daemon_for(ENTRY_RANDOM)
    draws = set()
    for _ in range(3):
        result = run_sandboxed({}, limits=LIMITS, child=taken(ENTRY_RANDOM), _entry=ENTRY_RANDOM)
        draws.add(result["draw"])
    assert len(draws) == 3


def test_the_daemon_reaps_what_a_forked_childs_run_left_behind(runtime: Path) -> None:
    daemon = daemon_for(ENTRY_ORPHAN)
    assert run_sandboxed({}, limits=LIMITS, child=taken(ENTRY_ORPHAN), _entry=ENTRY_ORPHAN) == {
        "status": "finished"
    }

    # the left process was killed with the run's group and, adopted by the daemon (a
    # subreaper), reaped by it: no zombie stays behind
    def zombies() -> list[int]:
        children = Path(f"/proc/{daemon}/task/{daemon}/children").read_text().split()
        return [int(p) for p in children if stat_fields(int(p))[0] == "Z"]

    time.sleep(0.5)
    wait_until(lambda: not zombies(), "the daemon to reap the orphan", timeout=10)
    assert alive(daemon)  # reaped by the daemon, not by init once the daemon idled out


def test_without_a_zygote_the_daemon_starts_each_child_itself(
    runtime: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PARASIM_ZYGOTE", "0")
    daemon = daemon_for(ENTRY_PID)
    child = taken(ENTRY_PID)
    assert ZYGOTE.encode() not in Path(f"/proc/{child.process.pid}/cmdline").read_bytes()
    assert run_sandboxed({}, limits=LIMITS, child=child, _entry=ENTRY_PID)["parent"] == daemon


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


# -- a command line served by the daemon ------------------------------------------------------
SERVED = (
    "import sys\n"
    "from simulator.sandbox.served import served_run\n"
    "status = served_run(sys.argv[1:])\n"
    "sys.exit(99 if status is None else status)  # 99: not served\n"
)
NOT_SERVED = 99
USER_UMASK = 0o022  # the commands' own (the daemon's is 077), whatever the test runner's is
EXAMPLE_ARGS = ["--labels", "CPU=1,GPU=1", "--var", "N=1000000", "--var", "blockSz=256"]
EXAMPLE_ARGS += ["--var", "computeIntensity=1", "--var", "occupancy=64"]


def serving_daemon() -> int:
    """Start the daemon for the simulation entry; return its process id once it serves."""
    daemon = daemon_for(DEFAULT_ENTRY)
    path = socket_path()
    assert path is not None
    wait_until(lambda: os.path.exists(served_socket(path)), "the daemon to serve command lines")
    return daemon


def command(code_or_module: list[str], argv: list[str], cwd: Path, **env: str) -> Any:
    environment = {**os.environ, "PYTHONPATH": PROJECT_ROOT, **env}
    return subprocess.run(
        [sys.executable, *code_or_module, *argv],
        cwd=cwd,
        env=environment,
        capture_output=True,
        umask=USER_UMASK,
    )


def without_timings(printed: bytes) -> dict[str, Any]:
    result = json.loads(printed)
    result["stats"] = {k: v for k, v in result["stats"].items() if "_s" not in k}
    return result


def test_a_sandboxed_run_is_served_as_the_command_line_would_run_it(
    runtime: Path, tmp_path: Path
) -> None:
    serving_daemon()
    for name in ("snapshot.json", "app.py"):
        shutil.copy(EXAMPLE / name, tmp_path / name)
    argv = ["run", "--system", "snapshot.json", "--app", "app.py", *EXAMPLE_ARGS]
    argv += ["--json", "out/result.json"]
    (tmp_path / "out").mkdir()

    served = command(["-c", SERVED], argv, tmp_path)  # relative paths: the user's directory
    written = (tmp_path / "out" / "result.json").read_bytes()
    mode = (tmp_path / "out" / "result.json").stat().st_mode & 0o777
    (tmp_path / "out" / "result.json").unlink()
    itself = command(["-m", "simulator"], argv, tmp_path, PARASIM_CHILD_POOL="0")

    assert served.returncode == 0, served.stderr.decode()[-2000:]
    assert itself.returncode == 0, itself.stderr.decode()[-2000:]

    def summary(printed: bytes) -> list[bytes]:
        return [line for line in printed.splitlines() if not line.startswith(b"Engine:")]

    assert summary(served.stdout) == summary(itself.stdout)
    assert b"Overall time:" in served.stdout
    assert without_timings(written) == without_timings(
        (tmp_path / "out" / "result.json").read_bytes()
    )
    assert mode == 0o666 & ~USER_UMASK  # the command line's umask, not the daemon's 077


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (["--labels", "CPU=x"], b"error: "),  # the run's own message
        (["--seed", "one"], b"error: argument --seed: invalid int value"),  # argparse's
    ],
)
def test_a_served_run_ends_with_the_status_and_message_the_command_line_gives(
    runtime: Path, extra: list[str], message: bytes
) -> None:
    serving_daemon()
    argv = ["run", "--system", str(EXAMPLE / "snapshot.json"), "--app", str(EXAMPLE / "app.py")]
    argv += [*EXAMPLE_ARGS, *extra]

    served = command(["-c", SERVED], argv, Path(PROJECT_ROOT))
    itself = command(["-m", "simulator"], argv, Path(PROJECT_ROOT), PARASIM_CHILD_POOL="0")

    assert served.returncode == itself.returncode == 2
    assert message in served.stderr
    assert served.stderr == itself.stderr and served.stdout == itself.stdout == b""


def test_a_command_line_that_goes_away_ends_its_served_copy_and_its_run(
    runtime: Path, tmp_path: Path
) -> None:
    daemon = serving_daemon()
    (tmp_path / "app.py").write_text("while True:\n    pass\n")
    argv = ["run", "--system", str(EXAMPLE / "snapshot.json"), "--app", str(tmp_path / "app.py")]
    argv += EXAMPLE_ARGS
    wait_until(
        lambda: len(_children(daemon)) == 3,
        "the daemon's zygote, spare child and copy waiting for a command line",
    )
    # the copy that will serve it and the spare it will run on (the zygote lives on with the
    # daemon; the next spare and copy wait for the run's end)
    before = set(_children(daemon)) - {_zygote(daemon)}
    environment = {**os.environ, "PYTHONPATH": PROJECT_ROOT}
    client = subprocess.Popen([sys.executable, "-c", SERVED, *argv], env=environment)
    wait_until(lambda: max(map(cpu_seconds, before)) > 0.3, "the run to run")
    assert client.poll() is None
    assert set(_children(daemon)) - {_zygote(daemon)} == before

    client.kill()
    client.wait()

    for pid in before:
        wait_until(lambda pid=pid: not alive(pid), f"process {pid} to end")


def cpu_seconds(pid: int) -> float:
    """Return the CPU time process `pid` used (0 when it is gone)."""
    try:
        fields = stat_fields(pid)
    except (FileNotFoundError, ProcessLookupError):
        return 0.0
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _zygote(daemon: int) -> int:
    """Return the daemon's zygote: its child that stays in "/" (a forked child moves to its
    own directory)."""
    found = []
    for pid in _children(daemon):
        with contextlib.suppress(FileNotFoundError, ProcessLookupError):  # ended meanwhile
            if os.readlink(f"/proc/{pid}/cwd") == "/":
                found.append(pid)
    [zygote] = found
    return zygote


def _open_files(pid: int) -> set[str]:
    """Return what the descriptors of process `pid` point to ("pipe:[N]", paths...)."""
    found = set()
    for fd in Path(f"/proc/{pid}/fd").iterdir():
        with contextlib.suppress(OSError):  # closed meanwhile
            found.add(os.readlink(fd))
    return found


def _taken_by(copy: int, daemon: int) -> list[int]:
    """Return the daemon's children whose stdin the waiting `copy` writes to and the daemon no
    longer does: the child the daemon handed to the copy (its spare, before that, is the
    daemon's; the copy drops the daemon's descriptors as it starts)."""
    with contextlib.suppress(FileNotFoundError, ProcessLookupError):  # ended meanwhile
        held, daemons = _open_files(copy), _open_files(daemon)
        taken = []
        for pid in _children(daemon):
            with contextlib.suppress(FileNotFoundError, ProcessLookupError):
                stdin = os.readlink(f"/proc/{pid}/fd/0")
                if stdin.startswith("pipe:") and stdin in held and stdin not in daemons:
                    taken.append(pid)
        return taken
    return []


def _children(pid: int) -> list[int]:
    found: list[int] = []
    for task in Path(f"/proc/{pid}/task").glob("*"):
        with contextlib.suppress(FileNotFoundError, ProcessLookupError):
            found += [int(child) for child in (task / "children").read_text().split()]
    return [child for child in found if alive(child)]


def test_a_copy_that_cannot_take_the_users_directory_declines_and_nothing_is_printed(
    runtime: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    serving_daemon()
    monkeypatch.setattr(os, "getcwd", lambda: "/nonexistent/directory")

    assert served_run(["run", "--system", "s.json", "--app", "a.py", "--labels", "A=1"]) is None


def test_a_request_carries_arguments_and_environment_byte_for_byte(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("PARASIM_TEST_VALUE", "a=b=c")
    odd = os.fsdecode(b"caf\xe9.json")  # not UTF-8: passed as the bytes it was
    argv = ["run", "--system", odd, "--var", "name=two words", ""]

    cwd, streams, decoded, environment = decode_request(encode_request(argv))

    assert cwd == str(tmp_path)
    assert decoded == argv and os.fsencode(decoded[2]) == b"caf\xe9.json"
    assert environment == dict(os.environ)
    assert streams[1][0] == sys.stdout.encoding and streams[2][1] == sys.stderr.errors


def test_a_request_without_its_streams_is_declined_and_the_daemon_serves_on(runtime: Path) -> None:
    serving_daemon()
    path = socket_path()
    assert path is not None
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as connection:
        connection.settimeout(10)
        connection.connect(served_socket(path))
        connection.sendall(served_module.request_header(5, 0o022))  # no descriptors
        reply = connection.recv(64)

    assert reply == served_module.DECLINED
    argv = ["run", "--system", str(EXAMPLE / "snapshot.json"), "--app", str(EXAMPLE / "app.py")]
    served = command(["-c", SERVED], [*argv, *EXAMPLE_ARGS], Path(PROJECT_ROOT))
    assert served.returncode == 0, served.stderr.decode()[-2000:]


def test_the_daemon_imports_what_its_copies_print_a_summary_with() -> None:
    # A copy that printed a run's summary imported orjson to read its result (64 KiB or
    # more): about 10 ms of every such run until the daemon imported it once for them.
    code = (
        "import sys; from simulator.sandbox import pool; pool._prepare_to_serve(); "
        "print(sorted({'orjson', 'simulator.cli.run', 'threading'} - set(sys.modules)))"
    )
    completed = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, cwd=PROJECT_ROOT, check=False
    )

    assert completed.returncode == 0, completed.stderr
    assert completed.stdout.strip() == "[]"


def test_a_copy_takes_the_command_lines_environment_exactly(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("PARASIM_TEST_KEPT", "same")
    monkeypatch.setenv("PARASIM_TEST_CHANGED", "old")
    monkeypatch.setenv("PARASIM_TEST_GONE", "x")
    wanted = {**os.environ, "PARASIM_TEST_CHANGED": "new", "PARASIM_TEST_ADDED": "1"}
    del wanted["PARASIM_TEST_GONE"]
    saved = dict(os.environ)
    try:
        pool_module._take_environment(wanted)
        seen = dict(os.environ)
        # what a process started from here inherits (putenv and unsetenv were called)
        printed = subprocess.run(["env"], capture_output=True, text=True, check=True).stdout
    finally:
        pool_module._take_environment(saved)

    assert seen == wanted
    inherited = dict(line.split("=", 1) for line in printed.splitlines() if "=" in line)
    assert {name: inherited.get(name) for name in wanted if name.startswith("PARASIM_TEST")} == {
        "PARASIM_TEST_KEPT": "same",
        "PARASIM_TEST_CHANGED": "new",
        "PARASIM_TEST_ADDED": "1",
    }
    assert "PARASIM_TEST_GONE" not in inherited


def copies_waiting(daemon: int) -> list[int]:
    """Return the daemon's copies waiting for a command line: its children that run its
    command (the zygote and the children it forks run the sandbox child's) in its directory
    (a copy serving a command line moves to the command line's: the tests' run elsewhere),
    with the thread that will watch the command line started (`pool._watcher`): a child the
    daemon forks to start the zygote has its command line and directory too until it execs."""
    command_line = Path(f"/proc/{daemon}/cmdline").read_bytes()
    directory = os.readlink(f"/proc/{daemon}/cwd")
    found = []
    for pid in _children(daemon):
        with contextlib.suppress(FileNotFoundError, ProcessLookupError):  # ended meanwhile
            if (
                Path(f"/proc/{pid}/cmdline").read_bytes() == command_line
                and os.readlink(f"/proc/{pid}/cwd") == directory
                and len(os.listdir(f"/proc/{pid}/task")) > 1
            ):
                found.append(pid)
    return found


def example_command(tmp_path: Path, app: str | None = None) -> list[str]:
    """Return `run`'s arguments for the example, with application model `app` if given."""
    app_path = EXAMPLE / "app.py"
    if app is not None:
        app_path = tmp_path / f"app-{len(list(tmp_path.iterdir()))}.py"
        app_path.write_text(app)
    return [
        "run",
        "--system",
        str(EXAMPLE / "snapshot.json"),
        "--app",
        str(app_path),
        *EXAMPLE_ARGS,
    ]


def test_a_command_line_is_served_by_the_copy_forked_ahead_and_the_next_by_a_new_one(
    runtime: Path, tmp_path: Path
) -> None:
    daemon = serving_daemon()
    [first] = wait_until(lambda: copies_waiting(daemon), "a copy waiting for a command line")

    served = command(["-c", SERVED], example_command(tmp_path), tmp_path)

    assert served.returncode == 0, served.stderr.decode()[-2000:]
    wait_until(lambda: not alive(first), "the copy that served it to end")
    [second] = wait_until(lambda: copies_waiting(daemon), "the next copy")
    assert second != first


def test_command_lines_at_once_are_each_served_while_the_other_runs(
    runtime: Path, tmp_path: Path
) -> None:
    daemon = serving_daemon()
    wait_until(lambda: copies_waiting(daemon), "a copy waiting for a command line")
    long_app = "for step in range(400000000):  # some seconds\n    pass\n"
    environment = {**os.environ, "PYTHONPATH": PROJECT_ROOT}
    long_run = subprocess.Popen(
        [sys.executable, "-c", SERVED, *example_command(tmp_path, long_app)],
        env=environment,
        cwd=tmp_path,
    )
    try:
        # the waiting copy took the long run: the daemon accepts the next one itself
        wait_until(lambda: not copies_waiting(daemon), "the long run to be taken")
        short = command(["-c", SERVED], example_command(tmp_path), tmp_path)

        assert short.returncode == 0, short.stderr.decode()[-2000:]
        assert long_run.poll() is None  # served while the long run still runs
    finally:
        long_run.kill()
        long_run.wait()


def test_the_copy_waiting_for_a_command_line_ends_with_an_idle_daemon(
    runtime: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PARASIM_POOL_IDLE_S", "2")
    daemon = serving_daemon()
    [waiting] = wait_until(lambda: copies_waiting(daemon), "a copy waiting for a command line")

    wait_until(lambda: not alive(daemon), "the idle daemon to exit")

    wait_until(lambda: not alive(waiting), "the waiting copy to end", 5)


def test_a_daemon_whose_waiting_copy_died_serves_the_next_command_line(
    runtime: Path, tmp_path: Path
) -> None:
    daemon = serving_daemon()
    [waiting] = wait_until(lambda: copies_waiting(daemon), "a copy waiting for a command line")
    os.kill(waiting, signal.SIGKILL)
    wait_until(lambda: not alive(waiting), "the waiting copy to die")

    served = command(["-c", SERVED], example_command(tmp_path), tmp_path)

    assert served.returncode == 0, served.stderr.decode()[-2000:]
    wait_until(lambda: copies_waiting(daemon), "a new copy waiting")


def test_a_waiting_copy_whose_child_died_is_replaced_before_the_next_command_line(
    runtime: Path, tmp_path: Path
) -> None:
    daemon = serving_daemon()
    [waiting] = wait_until(lambda: copies_waiting(daemon), "a copy waiting for a command line")
    # the child it took for its command line (not the daemon's spare before the copy has it)
    [held] = wait_until(lambda: _taken_by(waiting, daemon), "the copy's child")
    os.kill(held, signal.SIGKILL)

    wait_until(lambda: not alive(waiting), "the copy holding a dead child to end")
    [replaced] = wait_until(lambda: copies_waiting(daemon), "a new copy waiting")
    served = command(["-c", SERVED], example_command(tmp_path), tmp_path)

    assert replaced != waiting
    assert served.returncode == 0, served.stderr.decode()[-2000:]


def test_a_daemon_stops_forking_copies_that_end_before_a_command_line_and_serves_on(
    runtime: Path, tmp_path: Path
) -> None:
    daemon = serving_daemon()
    for _ in range(pool_module.MAX_WAITING_DEATHS):
        [waiting] = wait_until(lambda: copies_waiting(daemon), "a copy waiting")
        os.kill(waiting, signal.SIGKILL)
        wait_until(lambda waiting=waiting: not alive(waiting), "the waiting copy to die")

    time.sleep(1.0)  # time enough to fork another, which it must not
    assert copies_waiting(daemon) == []
    served = command(["-c", SERVED], example_command(tmp_path), tmp_path)
    assert served.returncode == 0, served.stderr.decode()[-2000:]


def test_glibc_tunables_get_mallocs_huge_pages_and_keep_the_others() -> None:
    assert served_module.with_huge_pages(None) == "glibc.malloc.hugetlb=1"
    assert (
        served_module.with_huge_pages("glibc.malloc.hugetlb=0:glibc.malloc.arena_max=2")
        == "glibc.malloc.arena_max=2:glibc.malloc.hugetlb=1"
    )


@pytest.mark.skipif(
    not MALLOC_HUGE_PAGES,
    reason="glibc's malloc advises huge pages from 2.35, on a kernel with them",
)
def test_the_daemon_reads_results_into_memory_advised_for_huge_pages(runtime: Path) -> None:
    daemon = serving_daemon()

    environment = Path(f"/proc/{daemon}/environ").read_bytes().split(b"\0")
    assert b"GLIBC_TUNABLES=glibc.malloc.hugetlb=1" in environment
    advised = []  # (start, size, name) of each mapping advised for huge pages
    for line in Path(f"/proc/{daemon}/smaps").read_text().splitlines():
        fields = line.split()
        if "-" in fields[0] and not fields[0].endswith(":"):
            low, high = (int(part, 16) for part in fields[0].split("-"))
            mapping = (low, high - low, fields[5] if len(fields) > 5 else "")
        elif fields[0] == "VmFlags:" and "hg" in fields:
            advised.append(mapping)
    assert any(name == "[heap]" for _, _, name in advised)  # glibc's, by the tunable
    # A region of object arenas (the allocator hook): 2 MiB-aligned and ARENA_REGION_BYTES long.
    # The kernel merges it with an adjacent anonymous mapping of the same flags (glibc's own
    # mmap'd chunks are advised too under the tunable), so look for a mapping that holds one.
    huge = 2 * 1024**2

    def holds_a_region(start: int, size: int) -> bool:
        aligned = -(-start // huge) * huge
        return aligned + ARENA_REGION_BYTES <= start + size

    assert any(not name and holds_a_region(start, size) for start, size, name in advised), [
        (hex(start), size, name) for start, size, name in advised
    ]
