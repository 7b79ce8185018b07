"""Starting the sandbox's child process ahead of its run (issue 16: start-up).

A sandboxed run's child (simulator.sandbox.child) spends most of a short run's wall time starting:
the interpreter, the simulator's imports and V8. `start_child` starts one before its run is
known; it prepares itself and waits for the word to go (`StartedChild.go`: the payload's
file and the run's limits, on its stdin).

A run gets its child one way: from a `ChildSource`, whose strategies are a fresh start
(`FreshStart`), this process's spare (`SpareChild`, forked by its zygote where it can be) and,
for the command line, the pool's daemon (simulator.sandbox.pool, which may serve the whole
command line from a forked copy of itself). `simulator.sandbox.run_sandboxed` takes a child
from its source when it is given none; docs/sandbox.md, "How a run gets its child", says which
strategy is used when, and why. The command line starts one at once, before importing
anything heavy, so that the child's start-up runs beside the command line's own.

Light on purpose: `python -m simulator run` imports this module before anything else (the
package's `__init__` imports nothing of its own).
"""

from __future__ import annotations

import _thread
import contextlib
import os
import sys

from simulator.sandbox.served import (
    DEFAULT_ENTRY,
    LOAD_V8_AHEAD,
    PROJECT_ROOT,
    asks_for_a_child,
    child_environment,
)

# `typing.TYPE_CHECKING` without importing `typing`, `pathlib` or `json` (their import would
# delay the child's start; mypy reads the name alone). `subprocess`, `tempfile`, `shutil` and
# `threading` are imported where a child is started or cleaned up: a command line handed a
# started child by the pool (simulator.sandbox.pool) needs none.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence
    from typing import IO

    from simulator.sandbox.zygote import Zygote

# `-s -P` and an environment holding only PYTHONHASHSEED and glibc's malloc tunable
# (CHILD_ENVIRONMENT, which simulator.sandbox.served keeps with the pool's name that depends on
# it): what `-I` does (no user site-packages, no script directory on sys.path, no other
# PYTHON* variable), except that the hash seed is fixed, so iterating a set of strings in an
# application model visits them in the same order on every run (a run is deterministic). The
# child removes the variables at start; the project root comes as argv[1].
CHILD_FLAGS = ("-s", "-P")
BOOTSTRAP = (
    "import sys; sys.path.insert(0, sys.argv[1]); "
    "from simulator.sandbox.child import main; main(sys.argv[2:])"
)
PAYLOAD_FILE = "payload.json"


def child_command(entry: str, fd: int, *options: str) -> list[str]:
    """Return the command line of a child (or zygote) for `entry`: the interpreter with
    CHILD_FLAGS, the bootstrap, the project root, the entry, the descriptor it writes its
    messages to (a zygote: its control socket) and its options."""
    return [sys.executable, *CHILD_FLAGS, "-c", BOOTSTRAP, PROJECT_ROOT, entry, str(fd), *options]


class StartedChild:
    """A sandbox child started in a fresh working directory, waiting for its run.

    Its stdout and stderr are pipes (the parent keeps their tail for error messages), its
    messages come on `result_fd`. It exits quietly when its stdin closes without a run.
    """

    reaped_elsewhere = False  # this process reaps it (a pooled child: its daemon)

    def __init__(self, entry: str = DEFAULT_ENTRY, *, load_v8_ahead: bool = False) -> None:
        import shutil
        import subprocess
        import tempfile

        self.entry = entry
        self.workdir = tempfile.mkdtemp(prefix="parasim-run-")
        self.result_fd = -1
        write_fd = -1
        try:
            self.result_fd, write_fd = os.pipe()
            options = [LOAD_V8_AHEAD] if load_v8_ahead else []
            self.process = subprocess.Popen(
                child_command(entry, write_fd, *options),
                cwd=self.workdir,
                env=child_environment(),
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                pass_fds=(write_fd,),
                start_new_session=True,
            )
        except BaseException:
            self._close_result_fd()
            shutil.rmtree(self.workdir, ignore_errors=True)
            raise
        finally:
            if write_fd >= 0:
                os.close(write_fd)
        self.sent = False
        self.discarded = False

    def go(self, payload_json: str, limits: Mapping[str, object]) -> None:
        """Hand the child its run: the payload (JSON text, written to its directory) and
        the limits. A child that already died is not an error here: the parent's
        supervision reports how it ended."""
        path = os.path.join(self.workdir, PAYLOAD_FILE)
        with open(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600), "w") as handle:
            handle.write(payload_json)
        self.sent = True
        import json  # here, not at start (see TYPE_CHECKING above)

        stdin: IO[bytes] | None = self.process.stdin
        assert stdin is not None
        line = json.dumps({"payload": path, "limits": dict(limits)}) + "\n"
        with contextlib.suppress(BrokenPipeError):
            stdin.write(line.encode("utf-8"))
            stdin.flush()
        with contextlib.suppress(BrokenPipeError):
            stdin.close()

    def wait(self, *, block: bool) -> tuple[int, float] | None:
        """Return (exit status, CPU seconds) once the child has ended (reaping it), None
        while it runs. The status is `os.waitstatus_to_exitcode`'s: -N for signal N."""
        try:
            pid, status, usage = os.wait4(self.process.pid, 0 if block else os.WNOHANG)
        except ChildProcessError:  # reaped already
            return (self.process.returncode or 0), 0.0
        if pid == 0:
            return None
        self.process.returncode = os.waitstatus_to_exitcode(status)
        return self.process.returncode, usage.ru_utime + usage.ru_stime

    def kill(self) -> None:
        """Kill the child and whatever it started (its own process group)."""
        import signal  # here: it imports enum, which a served command line never needs

        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(self.process.pid, signal.SIGKILL)

    def discard(self, *, wait: bool = True) -> None:
        """End a child that will not run (or has run): kill, reap, close, remove its files.

        Idempotent: only the first call acts (a reaped child's process id may be reused).
        `wait` matters only for a child another process reaps (`reaped_elsewhere`).
        """
        if self.discarded:
            return
        self.discarded = True
        self.kill()
        with contextlib.suppress(ChildProcessError):
            self.process.wait()
        for stream in (self.process.stdin, self.process.stdout, self.process.stderr):
            if stream is not None:
                with contextlib.suppress(OSError):
                    stream.close()
        self._close_result_fd()
        import shutil

        shutil.rmtree(self.workdir, ignore_errors=True)

    def _close_result_fd(self) -> None:
        if self.result_fd >= 0:
            os.close(self.result_fd)
            self.result_fd = -1


def start_child(entry: str = DEFAULT_ENTRY, *, load_v8_ahead: bool = False) -> StartedChild:
    """Return a child started for the registered entry at `entry` ("module:function"),
    waiting for its run. `load_v8_ahead`: it loads V8 while it waits, if its run has not
    come by the time it is prepared (for a child that usually waits long: the command
    line's pool; a queue worker's spare would often still be loading V8 when its next run
    comes, whose models a Python twin may answer: bench_queue.py measures the difference)."""
    return StartedChild(entry, load_v8_ahead=load_v8_ahead)


class ChildSource:
    """Where a run gets its child: the one way a child is obtained, whose strategies are
    `FreshStart` (a child started for the run), `SpareChild` (one started ahead in this
    process, forked by its zygote where it can be) and the pool's daemon
    (simulator.sandbox.pool `pool_child`, for the command line). docs/sandbox.md, "How a run
    gets its child", says which is used when, and why.

    `take` returns a started child waiting for its run; `done_with` is told once the run is
    over and its child reaped (what the source does then: nothing, unless it says)."""

    entry = DEFAULT_ENTRY

    def take(self) -> StartedChild:
        raise NotImplementedError

    def done_with(self, child: StartedChild) -> None:
        """Nothing to do once the run is over."""


class FreshStart(ChildSource):
    """A child started for the run, as it comes (`start_child`): what a process that runs
    once uses (the web's interactive jobs, the model checks), and what every other strategy
    falls back on."""

    def __init__(self, entry: str = DEFAULT_ENTRY) -> None:
        self.entry = entry

    def take(self) -> StartedChild:
        return start_child(self.entry)


def start_child_for(argv: Sequence[str]) -> StartedChild | None:
    """Return a child started for the command line `argv` when it asks for a sandboxed
    `run` (a guess from the words alone, made before the command line is even imported;
    a child that turns out not to be needed is discarded), else None."""
    if not asks_for_a_child(argv):
        return None
    try:
        return start_child()
    except OSError:  # the run starts its own child, and reports what fails then
        return None


class SpareChild(ChildSource):
    """One child kept started ahead in this process, for a process that runs simulation
    after simulation (a queue worker, a sweep): `take` hands it over for a run (starting one
    if there is none), `prepare` starts the next one once a run is over, so the next run does
    not wait for its child's start-up.

    The children are forked by this process's zygote (simulator.sandbox.zygote: a fork instead
    of an interpreter and its imports), made the first time one is needed,
    this process then a subreaper; where that cannot be done (not Linux, PARASIM_ZYGOTE=0, a
    zygote that died) they are started on their own. A forked child's run may leave processes
    in its group, which this process adopts: `done_with` has them reaped."""

    def __init__(self, entry: str = DEFAULT_ENTRY) -> None:
        self.entry = entry
        self._child: StartedChild | None = None
        self._pid = os.getpid()
        # threading.Lock itself, without importing `threading` (a module-level spare is made
        # as the command line starts: simulator.sandbox.parent).
        self._lock = _thread.allocate_lock()  # a sweep's threads share the spare
        self._zygote: Zygote | None = None
        self._zygote_pid = 0  # the process that tried to make it (0: not tried)
        self._groups: set[int] = set()  # the process groups of ended forked children

    def take(self) -> StartedChild:
        """Return a started child that is still waiting (a fresh one when the spare died)."""
        with self._lock:
            child, self._child = self._child, None
            forked = self._pid != os.getpid()
            self._pid = os.getpid()
        if child is not None and (forked or child.process.poll() is not None):
            if not forked:
                child.discard()
            child = None  # a spare of the process this one was forked from is not ours
        return child if child is not None else self._start()

    def prepare(self) -> None:
        """Start the spare child if there is none (errors wait for `take` to report them);
        reap what ended forked children left behind."""
        self._reap_groups()
        with self._lock:
            if self._child is not None and self._pid == os.getpid():
                return
            self._pid = os.getpid()
        try:
            child: StartedChild | None = self._start()
        except OSError:
            return
        with self._lock:
            if self._child is None:
                self._child, child = child, None
        if child is not None:  # another thread prepared one meanwhile
            child.discard()

    def done_with(self, child: StartedChild) -> None:
        """Start the next spare (`prepare`) now that `child`'s run is over. `child` (ended and
        reaped) may have left processes in its group: a forked child's are this process's to
        reap (`prepare` does)."""
        if getattr(child, "forked", False):
            with self._lock:
                self._groups.add(child.process.pid)
        self.prepare()

    def _start(self) -> StartedChild:
        """Return a child forked by this process's zygote, or else one started on its own."""
        zygote = self._own_zygote()
        if zygote is not None:
            try:
                return zygote.fork_child(load_v8_ahead=False)
            except OSError:
                with self._lock:
                    self._zygote = None
                zygote.close()
        return start_child(self.entry)

    def _own_zygote(self) -> Zygote | None:
        """Return this process's zygote, made on first use (None where it cannot be)."""
        with self._lock:
            if self._zygote_pid != os.getpid():  # not tried here (a copy's is its parent's)
                if self._zygote is not None:
                    self._zygote.close_in_copy()
                self._zygote, self._zygote_pid = None, os.getpid()
                self._groups.clear()
                from simulator.sandbox.zygote import start_zygote

                self._zygote = start_zygote(self.entry)
            return self._zygote

    def _reap_groups(self) -> None:
        """Reap the adopted processes of the noted groups (killed with their run's child)."""
        with self._lock:
            if self._groups:
                from simulator.sandbox.zygote import reap_groups  # loaded with the zygote

                reap_groups(self._groups)

    def close(self) -> None:
        """Discard the spare child, if any, and end this process's zygote."""
        with self._lock:
            child, self._child = self._child, None
            zygote, self._zygote = self._zygote, None
        if child is not None and self._pid == os.getpid():
            child.discard()
        if zygote is not None and self._zygote_pid == os.getpid():
            zygote.close()
