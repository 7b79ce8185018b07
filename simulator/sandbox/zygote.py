"""A zygote: sandbox children forked from one prepared process instead of each starting an
interpreter (issue 16, start-up: "a zygote or fork server that
forks a clean child per run with the same limits and isolation").

A child started on its own spends most of a short run's time on its interpreter and imports
before it can wait for a run, and the pool's daemon starts the next one only when the last run
is over, not to take a core from it: a command line that comes right after another one (a shell
loop over parameters) waited for that start. The zygote is that child's start done once: it is
started exactly as
a child is (`launch.StartedChild`: the same interpreter flags, environment and bootstrap, with
ZYGOTE as its option), imports what a run needs, then forks a child per request
(simulator.sandbox.child, `_fork_on_request`). A forked child takes its own streams, session
and working directory (and, as Python does in any forked child, a fresh seed for `random`) and
goes on as a started child does: V8 loaded while it waits, then its run with the run's limits,
CPU pin and privilege drop (a queue worker's child loads V8 only when its run needs it). It
never holds the zygote's socket.

The zygote's owner is a subreaper (PR_SET_CHILD_SUBREAPER) and the zygote forks twice, so
each child becomes the owner's own: it reaps the child, has its CPU time and kills its
process group as before, and adopts what the run leaves in that group. The owners: the
command line's pool daemon (simulator.sandbox.pool) and any process that keeps a spare
child (`launch.SpareChild`: a queue worker, a command-line sweep). Without a zygote (not
Linux, PARASIM_ZYGOTE=0, a zygote that died or failed to fork) children are started on
their own as before.
"""

from __future__ import annotations

import contextlib
import ctypes
import json
import os
import shutil
import signal
import socket
import subprocess
import tempfile
import threading
import time

from simulator.sandbox.launch import StartedChild, child_command, child_environment
from simulator.sandbox.served import ZYGOTE
from simulator.sandbox.wire import FORK_REPLY

ZYGOTE_SWITCH = "PARASIM_ZYGOTE"  # "0": children are started on their own
PR_SET_CHILD_SUBREAPER = 36
# How long the daemon waits for a forked child's process id before it gives the zygote up
# (a fork takes a few milliseconds; the zygote may still be importing on the first request).
FORK_TIMEOUT_S = 10.0


def start_zygote(entry: str) -> Zygote | None:
    """Return a zygote for `entry`, this process made a subreaper for its children; None
    where that cannot be done (PARASIM_ZYGOTE=0, not Linux, the process cannot start)."""
    if os.environ.get(ZYGOTE_SWITCH) == "0" or not become_subreaper():
        return None
    try:
        return Zygote(entry)
    except OSError:
        return None


def reap_groups(groups: set[int]) -> None:
    """Reap what this process adopted of `groups`, the process groups of ended forked
    children (killed with them), and forget each group once none of it is left. A group's id
    cannot be another process's while any of it is left, so nothing else is reaped."""
    for group in list(groups):
        try:
            while os.waitpid(-group, os.WNOHANG)[0]:
                pass
        except ChildProcessError:
            groups.discard(group)


def become_subreaper() -> bool:
    """Make this process adopt its descendants' orphans (Linux); return whether it did."""
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        return bool(libc.prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) == 0)
    except (OSError, AttributeError):
        return False


class _ForkedProcess:
    """What a started child's users take from its process (`subprocess.Popen`'s part of it)
    for a child the zygote forked: this process is its parent, not its starter."""

    def __init__(self, pid: int, stdin: int, stdout: int, stderr: int) -> None:
        self.pid = pid
        self.stdin = os.fdopen(stdin, "wb")
        self.stdout = os.fdopen(stdout, "rb")
        self.stderr = os.fdopen(stderr, "rb")
        self.returncode: int | None = None

    def poll(self) -> int | None:
        """Return the exit status once the child has ended (reaping it), else None."""
        return self._wait(os.WNOHANG)

    def wait(self, timeout: float | None = None) -> int | None:
        """Return the exit status, waiting for the child to end (`subprocess.TimeoutExpired`
        after `timeout` seconds, as `Popen.wait`)."""
        if timeout is None:
            return self._wait(0)
        deadline = time.monotonic() + timeout
        while (code := self._wait(os.WNOHANG)) is None:
            if time.monotonic() >= deadline:
                raise subprocess.TimeoutExpired(f"process {self.pid}", timeout)
            time.sleep(0.005)
        return code

    def _wait(self, options: int) -> int | None:
        if self.returncode is None:
            try:
                pid, status = os.waitpid(self.pid, options)
            except ChildProcessError:  # reaped already (StartedChild.wait)
                self.returncode = 0
            else:
                if pid:
                    self.returncode = os.waitstatus_to_exitcode(status)
        return self.returncode


class ForkedChild(StartedChild):
    """A started child forked by the zygote: used, handed out and discarded as one started
    on its own. Its run may leave processes in its group, which its zygote's owner adopts."""

    forked = True

    def __init__(self, entry: str, workdir: str, pid: int, fds: tuple[int, int, int, int]) -> None:
        self.entry = entry
        self.workdir = workdir
        self.process = _ForkedProcess(pid, *fds[:3])  # type: ignore[assignment]
        self.result_fd = fds[3]
        self.sent = False
        self.discarded = False


class Zygote:
    """The zygote process for `entry` and the daemon's end of its control socket."""

    def __init__(self, entry: str) -> None:
        self.entry = entry
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        try:
            self.process = subprocess.Popen(
                child_command(entry, theirs.fileno(), ZYGOTE),
                cwd="/",
                env=child_environment(),
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
                pass_fds=(theirs.fileno(),),
                start_new_session=True,
            )
        except BaseException:
            ours.close()
            raise
        finally:
            theirs.close()
        self.control = ours
        self._lock = threading.Lock()  # one request at a time (a sweep's threads share it)

    def fork_child(self, *, load_v8_ahead: bool) -> ForkedChild:
        """Return a child forked for `self.entry`, waiting for its run; raise OSError when the
        zygote does not answer with one (the daemon then starts its children itself)."""
        workdir = tempfile.mkdtemp(prefix="parasim-run-")
        stdin_r, stdin_w = os.pipe()
        stdout_r, stdout_w = os.pipe()
        stderr_r, stderr_w = os.pipe()
        result_r, result_w = os.pipe()
        ours = (stdin_w, stdout_r, stderr_r, result_r)
        request = json.dumps({"workdir": workdir, "v8": load_v8_ahead}).encode("utf-8")
        try:
            try:
                with self._lock:
                    fds = [stdin_r, stdout_w, stderr_w, result_w]
                    socket.send_fds(self.control, [request], fds)
                    self.control.settimeout(FORK_TIMEOUT_S)
                    reply = self.control.recv(FORK_REPLY.size)
            finally:
                for fd in (stdin_r, stdout_w, stderr_w, result_w):
                    os.close(fd)
            if len(reply) != FORK_REPLY.size:
                raise OSError("the zygote went away")
            (pid,) = FORK_REPLY.unpack(reply)
            if pid <= 0:
                raise OSError("the zygote could not fork")
        except BaseException:
            for fd in ours:
                os.close(fd)
            shutil.rmtree(workdir, ignore_errors=True)
            raise
        return ForkedChild(self.entry, workdir, pid, ours)

    def close_in_copy(self) -> None:
        """In a copy of the daemon (one serving a command line): let go of the socket."""
        self.control.close()

    def close(self) -> None:
        """End the zygote: it exits when its socket closes; kill it if it does not."""
        self.control.close()
        try:
            self.process.wait(timeout=1.0)
        except subprocess.TimeoutExpired:
            with contextlib.suppress(OSError):
                os.killpg(self.process.pid, signal.SIGKILL)
            self.process.wait()
