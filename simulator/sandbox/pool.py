"""A pool of sandbox children started ahead, one per user and checkout, for the command line
(issue 16, start-up: "reuse a pre-started child").

`python -m simulator run` spends most of a short run starting its sandbox child: the
interpreter, the simulator's imports and V8, every time.
A queue worker keeps a spare child started (simulator.sandbox.launch.SpareChild); a command
line lives for one run, so a small daemon keeps the spare for it instead:

- the daemon (`python -m simulator.sandbox.pool serve PATH ENTRY`) keeps one child started,
  forked by its zygote (simulator.sandbox.zygote: a process started as a child is and
  prepared once), or else with `launch.start_child`, exactly as a command line would start
  it: the same flags, the same environment, the same preparation, and, once its run comes,
  the same limits, CPU pin, privilege drop and V8 load (simulator.sandbox.child). It never
  runs user code itself;
- a command line connects to its Unix socket and receives the child's pipes (SCM_RIGHTS:
  stdin, stdout, stderr and the result pipe), its process id and its working directory
  (`pool_child`); it hands the child its run and supervises it as its own (simulator.sandbox.
  parent), killing and signalling it by process group. Only the daemon can wait for the
  child: it sends the exit status and CPU time over the connection (`PooledChild.wait`), and
  kills the child if the command line goes away first. It then starts the next spare;
- the first command line finds no daemon: it uses a child of its own, as before, and starts
  the daemon as it exits, for the next one. The daemon exits after PARASIM_POOL_IDLE_S
  (300) seconds without a connection.

A sandboxed `run` goes further when the daemon answers: the command line is served
(`served_run`). The daemon has the command line's modules imported (argparse, the run's
options, the sandbox's parent side: otherwise part of every run's start);
`python -m simulator run` imports only this module, connects to the daemon's second socket
(`served_socket`) and sends its arguments, working directory, environment, umask and standard
streams (SCM_RIGHTS). A copy of the daemon forked ahead, waiting on that socket while nothing
runs (`_arm`), takes it; one that comes while another is served gets a copy forked for it. The
copy (`_serve_command_line`) takes the user's working directory, environment, umask and
streams, takes a started child from the daemon as any command line does, runs
`simulator.cli.main` and sends back the exit status; what the command prints goes straight to
the user's streams. The copy ends when the command line goes away (Ctrl-C), and with it the
run (its child is killed by the daemon, as for any command line that went away). A copy that
cannot take the user's working directory declines before it prints anything, and the command
line runs itself.

The socket lives in a directory only its user can enter (`$XDG_RUNTIME_DIR/parasim`, else
`/tmp/parasim-UID`, mode 0700, checked on every use), and the daemon accepts only peers of
its own user id (SO_PEERCRED). Its name carries a digest of everything a child is made of
(`pool_key`): the interpreter, the checkout, the entry, the child's environment, the
simulator's files and the installed packages; a changed checkout gets a new daemon, and the
old one idles out. `PARASIM_CHILD_POOL=0` turns the pool off (every run starts its own
child). docs/sandbox.md, "The command line's pool of started children".

Light on purpose, like launch.py: `python -m simulator run` imports it first.
"""

from __future__ import annotations

import _socket
import atexit
import contextlib
import os
import struct
import sys

from simulator.sandbox.launch import (
    StartedChild,
    start_child,
    start_child_for,
)
from simulator.sandbox.served import (
    CONNECT_TIMEOUT_S,
    DECLINED,
    DEFAULT_ENTRY,
    PROJECT_ROOT,
    REQUEST_HEADER_BYTES,
    REQUEST_STREAMS,
    RESULT_PIPE_BYTES,
    asks_for_a_child,
    decode_request,
    pool_enabled,
    read_request_header,
    served_socket,
    socket_path,
    with_huge_pages,
)

TYPE_CHECKING = False
if TYPE_CHECKING:
    import socket
    from collections.abc import Callable, Mapping, Sequence

    from simulator.sandbox.zygote import Zygote

IDLE_SWITCH = "PARASIM_POOL_IDLE_S"
DEFAULT_IDLE_S = 300.0
# How long a command line waits for the daemon's word on a child that ended (the daemon
# reaps it at once, on SIGCHLD).
STATUS_TIMEOUT_S = 10.0
_FDS = 4  # the child's stdin, stdout, stderr and result pipe, in this order
_SO_PEERCRED = getattr(_socket, "SO_PEERCRED", 17)
_TAKEN = struct.Struct("i")  # the waiting copy's word that it took a command line: its pid
# Waiting copies that may end in a row without taking a command line (killed, or failing as
# they start) before the daemon stops forking them: a copy that cannot wait must not make
# the daemon fork one after another.
MAX_WAITING_DEATHS = 3
# The words of a typical served command line (`python -m simulator run`), parsed once in the
# daemon and once in each copy forked ahead while it waits (`_warm_up_parse`): argparse
# compiles the regular expressions it matches words with on a parser's first use (kept in
# `re`'s cache, which the copies then inherit), and a copy's first parse writes to the
# parser's pages, which a forked copy copies one by one on first write.
WARM_UP_ARGV = (
    "run",
    "--system",
    "system.json",
    "--app",
    "app.py",
    "--labels",
    "P=1",
    "--var",
    "steps=1",
    "--json",
    "-",
    "--no-sandbox",
)


class _PooledProcess:
    """What the parent uses of a child's process when the daemon is its real parent."""

    def __init__(self, pid: int, fds: list[int]) -> None:
        self.pid = pid
        self.stdin = os.fdopen(fds[0], "wb", buffering=0)
        self.stdout = os.fdopen(fds[1], "rb", buffering=0)
        self.stderr = os.fdopen(fds[2], "rb", buffering=0)
        self.returncode: int | None = None

    def poll(self) -> int | None:
        return self.returncode


class PooledChild(StartedChild):
    """A started child taken from the pool: handed its run and supervised like a
    `StartedChild`, reaped by the daemon, which reports how it ended on the connection
    (`wait`)."""

    reaped_elsewhere = True

    def __init__(
        self, connection: socket.socket, pid: int, workdir: str, fds: list[int], entry: str
    ) -> None:
        self.entry = entry
        self.workdir = workdir
        self.connection = connection
        self.process = _PooledProcess(pid, fds)  # type: ignore[assignment]
        self.result_fd = fds[3]
        self.sent = False
        self.discarded = False
        self._status = b""
        self._cpu_s = 0.0

    def wait(self, *, block: bool) -> tuple[int, float] | None:
        """Return (exit status, CPU seconds) once the daemon reports the child ended, None
        while it runs. A daemon gone without a word reports nothing: (0, 0.0), read as an
        end without a result."""
        if self.process.returncode is not None:
            return self.process.returncode, self._cpu_s
        self.connection.settimeout(STATUS_TIMEOUT_S if block else 0.0)
        try:
            while not self._status.endswith(b"\n"):
                data = self.connection.recv(64)
                if not data:
                    break
                self._status += data
        except (BlockingIOError, TimeoutError):
            return None
        except OSError:
            pass
        try:
            code, cpu = self._status.decode("ascii").split()
            status, self._cpu_s = int(code), float(cpu)
        except ValueError:
            status, self._cpu_s = 0, 0.0
        self.process.returncode = status
        return status, self._cpu_s

    def discard(self, *, wait: bool = True) -> None:
        """End the child (kill its process group, wait for the daemon's word unless not
        `wait`), close its pipes and the connection. The daemon reaps it and removes its
        working directory."""
        if self.discarded:
            return
        self.discarded = True
        self.kill()
        if wait:
            with contextlib.suppress(OSError):
                self.wait(block=True)
        process: _PooledProcess = self.process  # type: ignore[assignment]
        for stream in (process.stdin, process.stdout, process.stderr):
            with contextlib.suppress(OSError):
                stream.close()
        self._close_result_fd()
        self.connection.close()


def pool_child(entry: str = DEFAULT_ENTRY) -> PooledChild | None:
    """Return a started child from this user's daemon, or None: the pool is off, there is no
    private directory, or no daemon answers (one is then started as this process exits, for
    the next command line). Never raises: without the pool a run starts its own child."""
    if not pool_enabled():
        return None
    try:
        path = socket_path(entry)
        return None if path is None else _take_child(path, entry)
    except Exception:  # the pool is an optimisation: a run must not fail for it
        return None


def _take_child(path: str, entry: str) -> PooledChild | None:
    """Return a started child from the daemon at `path`, or None (see `pool_child`)."""
    import socket  # here: it imports enum and selectors, which a served command line skips

    try:
        connection = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        connection.settimeout(CONNECT_TIMEOUT_S)
        try:
            connection.connect(path)
            header, fds, _, _ = socket.recv_fds(connection, 4096, _FDS)
        except OSError:
            connection.close()
            atexit.register(start_daemon, path, entry)
            return None
        if len(fds) != _FDS:  # the daemon could not start a child
            for fd in fds:
                os.close(fd)
            connection.close()
            return None
        pid, workdir = header.decode("utf-8").split("\0", 1)
        return PooledChild(connection, int(pid), workdir, list(fds), entry)
    except Exception:  # the pool is an optimisation: a run must not fail for it
        return None


def child_for(argv: Sequence[str]) -> StartedChild | None:
    """Return the child for the command line `argv` when it asks for a sandboxed `run`: one
    from the pool, else one started now (launch.start_child_for), else None."""
    if not asks_for_a_child(argv):
        return None
    return pool_child() or start_child_for(argv)


def start_daemon(path: str, entry: str = DEFAULT_ENTRY) -> None:
    """Start the daemon for `entry` at socket `path`, detached (its own session, no
    terminal), with this process's environment (which the children's derives from), glibc's
    malloc on huge pages (`with_huge_pages`)."""
    import subprocess  # here: a command line handed a pooled child never needs it

    environment = {
        **os.environ,
        "GLIBC_TUNABLES": with_huge_pages(os.environ.get("GLIBC_TUNABLES")),
    }
    with contextlib.suppress(OSError):
        subprocess.Popen(
            [sys.executable, "-m", "simulator.sandbox.pool", "serve", path, entry],
            cwd=PROJECT_ROOT,
            env=environment,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            start_new_session=True,
        )


# -- the daemon ------------------------------------------------------------------------------


def _peer_uid(connection: socket.socket) -> int:
    return _peer(connection)[1]


def _peer(connection: socket.socket) -> tuple[int, int]:
    """Return the process id and the user id of the process at the other end."""
    credentials = connection.getsockopt(_socket.SOL_SOCKET, _SO_PEERCRED, struct.calcsize("3i"))
    pid, uid, _ = struct.unpack("3i", credentials)
    return int(pid), int(uid)


def _listen(path: str) -> socket.socket | None:
    """Return the listening socket at `path`, or None when another daemon already listens."""
    import socket

    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        listener.bind(path)
    except OSError:
        probe = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            probe.connect(path)
        except OSError:  # a socket file left by a daemon that is gone
            with contextlib.suppress(FileNotFoundError):
                os.unlink(path)
            listener.bind(path)
        else:
            probe.close()
            listener.close()
            return None
    listener.listen(16)
    return listener


class _Daemon:
    """The pool's server: one spare child started ahead, the children handed out, and the
    connections of the command lines that took them; the copies of itself serving command
    lines (`_serve_command_line`)."""

    def __init__(self, path: str, entry: str, idle_s: float) -> None:
        import selectors  # the daemon's alone: a command line imports this module first

        self.path, self.entry, self.idle_s = path, entry, idle_s
        self.selector = selectors.DefaultSelector()
        self.spare: StartedChild | None = None
        self.handed: dict[int, tuple[socket.socket, StartedChild]] = {}
        self.served: set[int] = set()  # the process ids of the copies serving command lines
        self.listeners: list[socket.socket] = []
        self.wakeup: tuple[int, int] = (-1, -1)
        self.zygote: Zygote | None = None
        self.groups: set[int] = set()  # the process groups of ended forked children
        # The copy forked ahead that waits for the next command line on the serving socket
        # (`_arm`), the pipe on which it says it took one, and the pipe whose end of file
        # tells it the daemon is gone (the daemon holds its write end and never writes).
        self.serving: socket.socket | None = None
        self.accepting = False  # whether the daemon accepts on the serving socket itself
        self.waiting: int | None = None
        self.reserved: int | None = None  # the child the waiting copy took for its command line
        # Waiting copies that ended before taking a command line, in a row: from
        # MAX_WAITING_DEATHS on, none is forked (the daemon accepts and forks for each).
        self.waiting_deaths = 0
        self.taken: tuple[int, int] = (-1, -1)
        self.alive: tuple[int, int] = (-1, -1)

    def serve(self) -> None:
        import selectors
        import signal
        import time

        listener = _listen(self.path)
        if listener is None:
            return
        bound = os.stat(self.path).st_ino  # removed at exit unless another daemon replaced it
        self.listeners.append(listener)
        serving = None
        if self.entry == DEFAULT_ENTRY:
            # Prepared before its socket exists: whoever sees the socket finds the daemon
            # ready (its imports made, the allocator hook installed).
            _prepare_to_serve()
            serving = _listen(served_socket(self.path))
        served_bound = -1
        if serving is not None:
            served_bound = os.stat(served_socket(self.path)).st_ino
            self.listeners.append(serving)
        wakeup_read, wakeup_write = self.wakeup = os.pipe()
        os.set_blocking(wakeup_read, False)
        os.set_blocking(wakeup_write, False)
        signal.set_wakeup_fd(wakeup_write)
        signal.signal(signal.SIGCHLD, lambda *_: None)
        signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
        self.selector.register(listener, selectors.EVENT_READ, "listener")
        self.selector.register(wakeup_read, selectors.EVENT_READ, "wakeup")
        if serving is not None:
            self.serving = serving
            self.taken, self.alive = os.pipe(), os.pipe()
            os.set_blocking(self.taken[0], False)
            self.selector.register(self.taken[0], selectors.EVENT_READ, "taken")
            self._accept_here(True)
        last_seen = time.monotonic()
        try:
            from simulator.sandbox.zygote import start_zygote  # the daemon's alone

            self.zygote = start_zygote(self.entry)
            self._refill()
            self._arm()
            while True:
                busy = self._busy()
                idle_left = self.idle_s - (time.monotonic() - last_seen)
                if not busy and idle_left <= 0:
                    return
                ready = self.selector.select(None if busy else idle_left)
                for key, _ in ready:
                    if key.data == "listener":
                        last_seen = time.monotonic()
                        self._hand_out(listener)
                    elif key.data == "serving":
                        last_seen = time.monotonic()
                        assert serving is not None
                        self._serve(serving)
                    elif key.data == "wakeup":
                        with contextlib.suppress(BlockingIOError):
                            os.read(wakeup_read, 4096)
                    elif key.data == "taken":
                        last_seen = time.monotonic()
                        self._on_taken()
                    else:  # a command line closed its connection (or wrote, which it never does)
                        self._on_connection(key.data)
                self._reap()
                if not self._busy():
                    if self.reserved is None:
                        self._refill()
                    self._arm()
                else:
                    last_seen = time.monotonic()
        finally:
            for socket_file, inode in (
                (self.path, bound),
                (served_socket(self.path), served_bound),
            ):
                with contextlib.suppress(OSError):
                    if os.stat(socket_file).st_ino == inode:
                        os.unlink(socket_file)
            for open_listener in self.listeners:
                open_listener.close()
            if self.spare is not None:
                self.spare.discard()
            for connection, child in self.handed.values():
                child.kill()
                connection.close()
            if self.zygote is not None:
                self.zygote.close()
            if self.waiting is not None:  # it exits on the alive pipe's end of file anyway
                with contextlib.suppress(OSError):
                    os.kill(self.waiting, signal.SIGKILL)
                    os.waitpid(self.waiting, 0)

    def _refill(self) -> None:
        """Have a spare child started and waiting (a new one if the last one died): forked by
        the zygote, or started on its own where there is none (or it failed)."""
        if self.spare is not None and self.spare.process.poll() is not None:
            self.spare.discard()
            self.spare = None
        if self.spare is None and self.zygote is not None:
            try:
                self.spare = self.zygote.fork_child(load_v8_ahead=True)
            except OSError:
                self.zygote.close()
                self.zygote = None
        if self.spare is None:
            try:
                self.spare = start_child(self.entry, load_v8_ahead=True)
            except OSError:
                self.spare = None

    def _hand_out(self, listener: socket.socket) -> None:
        """Give the spare child to the command line connecting now, if it is this user's."""
        import selectors
        import socket

        connection, _ = listener.accept()
        peer, uid = _peer(connection)
        if uid != os.geteuid():
            connection.close()
            return
        self._refill()
        child, self.spare = self.spare, None
        if child is None:
            connection.close()
            return
        process = child.process
        assert process.stdin is not None and process.stdout is not None
        assert process.stderr is not None
        fds = [process.stdin.fileno(), process.stdout.fileno(), process.stderr.fileno()]
        header = f"{process.pid}\0{child.workdir}".encode()
        try:
            socket.send_fds(connection, [header], [*fds, child.result_fd])
        except OSError:
            connection.close()
            child.discard()
            return
        # The command line holds the pipes now: the daemon keeps none of them, so the child
        # sees end of file on stdin and its parent's side closes when that command line does.
        for stream in (process.stdin, process.stdout, process.stderr):
            stream.close()
        child._close_result_fd()
        self.handed[process.pid] = (connection, child)
        self.selector.register(connection, selectors.EVENT_READ, connection)
        if peer == self.waiting:
            self.reserved = process.pid

    def _serve(self, listener: socket.socket) -> None:
        """Fork a copy of the daemon to serve the command line connecting now, if it is this
        user's: the copy has the command line's modules imported already."""
        connection, _ = listener.accept()
        if _peer_uid(connection) != os.geteuid():
            connection.close()
            return
        try:
            pid = os.fork()
        except OSError:  # no process to spare: the command line runs itself
            with contextlib.suppress(OSError):
                connection.sendall(DECLINED)
            connection.close()
            return
        if pid == 0:  # the copy: never returns
            status = 1
            try:
                self._let_go()
                status = _serve_command_line(connection, self.path, self.entry)
            except BaseException:  # on the command line's stderr once the copy has it
                import traceback

                traceback.print_exc()
            finally:
                os._exit(status)
        connection.close()
        self.served.add(pid)

    def _busy(self) -> bool:
        """Return whether a command line is served or a child runs (the child the waiting
        copy holds for its next command line does not count)."""
        return bool(self.served) or any(pid != self.reserved for pid in self.handed)

    def _accept_here(self, on: bool) -> None:
        """Have the daemon accept command lines on the serving socket itself (and fork a copy
        for each, `_serve`), or leave them to the copy waiting there (`_arm`)."""
        import selectors

        if self.serving is None or on == self.accepting:
            return
        if on:
            self.selector.register(self.serving, selectors.EVENT_READ, "serving")
        else:
            self.selector.unregister(self.serving)
        self.accepting = on

    def _arm(self) -> None:
        """Fork the copy that waits for the next command line, while nothing runs: the
        command line then finds a copy of the daemon ready (`_wait_for_command_line`), not
        one forked for it (the fork, the copy's letting go of the daemon's descriptors and
        its watcher thread, otherwise paid by each served run). The daemon stops accepting on the
        serving socket first, so that the copy alone takes the next connection."""
        if (
            self.serving is None
            or self.waiting is not None
            or self.waiting_deaths >= MAX_WAITING_DEATHS
        ):
            return
        self._accept_here(False)
        try:
            pid = os.fork()
        except OSError:  # no process to spare: the daemon accepts and forks as before
            self._accept_here(True)
            return
        if pid == 0:  # the copy: never returns
            status = 1
            try:
                status = self._wait_for_command_line()
            except BaseException:  # on the command line's stderr once the copy has it
                import traceback

                traceback.print_exc()
            finally:
                os._exit(status)
        self.waiting = pid

    def _on_taken(self) -> None:
        """The waiting copy took a command line: it serves it now, and the daemon accepts
        any other that comes meanwhile itself, until nothing runs and it forks the next."""
        data = b""
        with contextlib.suppress(BlockingIOError):
            data = os.read(self.taken[0], 64 * _TAKEN.size)
        for (pid,) in _TAKEN.iter_unpack(data[: len(data) - len(data) % _TAKEN.size]):
            if pid == self.waiting:  # not one that ended before its word was read
                self.served.add(pid)
                self.waiting = self.reserved = None
                self.waiting_deaths = 0
                self._accept_here(True)

    def _wait_for_command_line(self) -> int:
        """In the copy forked ahead (`_arm`): wait for a command line of this user's on the
        serving socket, or for the daemon's end; tell the daemon it took one, then serve it
        (`_serve_command_line`); return the copy's exit status."""
        import select

        serving = self.serving
        assert serving is not None
        taken, alive = self.taken[1], self.alive[0]
        self._let_go(keep=(serving.fileno(), taken, alive))
        serving.setblocking(False)
        watch = _watcher()
        child = _take_child(self.path, self.entry)
        if not select.select([serving.fileno()], [], [], 0)[0]:  # no command line yet
            _warm_up_parse()
            _warm_up_reads()
        while True:
            ready, _, _ = select.select([serving.fileno(), alive], [], [])
            if alive in ready:  # the daemon is gone
                return 0
            try:
                connection, _ = serving.accept()
            except OSError:  # gone meanwhile (the daemon accepted it before this copy was)
                continue
            if _peer_uid(connection) == os.geteuid():
                break
            connection.close()
        connection.setblocking(True)
        os.write(taken, _TAKEN.pack(os.getpid()))
        for fd in (taken, alive):
            os.close(fd)
        serving.close()
        return _serve_command_line(connection, self.path, self.entry, watch, child)

    def _let_go(self, keep: tuple[int, ...] = ()) -> None:
        """In a copy serving a command line: close what is the daemon's (its sockets, its
        wake-up pipe, its spare child's pipes, the connections of the command lines it
        serves), so that the copy holds none of it, except the descriptors in `keep`; the
        spare child and the handed ones stay the daemon's."""
        import signal

        signal.set_wakeup_fd(-1)
        for number in (signal.SIGCHLD, signal.SIGTERM):
            signal.signal(number, signal.SIG_DFL)
        self.selector.close()
        for listener in self.listeners:
            if listener.fileno() not in keep:
                listener.close()
        for fd in (*self.wakeup, *self.taken, *self.alive):
            if fd >= 0 and fd not in keep:
                os.close(fd)
        if self.spare is not None:
            process = self.spare.process
            for stream in (process.stdin, process.stdout, process.stderr):
                if stream is not None:
                    stream.close()
            self.spare._close_result_fd()
        for connection, _ in self.handed.values():
            connection.close()
        if self.zygote is not None:
            self.zygote.close_in_copy()

    def _on_connection(self, connection: socket.socket) -> None:
        """A command line went away before its child ended: kill the child's group."""
        with contextlib.suppress(OSError):
            if connection.recv(1, _socket.MSG_PEEK):
                return
        for pid, (held, child) in self.handed.items():
            if held is connection:
                if pid == self.reserved:
                    # the waiting copy went away: its end is its own, counted as it is reaped,
                    # not its child's (whose end `_reap` might see first, the copy still exiting)
                    self.reserved = None
                child.kill()
                self.selector.unregister(connection)
                return

    def _reap(self) -> None:
        """Tell each command line whose child ended how it ended, and clean up after it;
        reap the copies that served command lines."""
        import shutil  # the daemon's alone: see start_daemon
        import signal

        if self.waiting is not None:
            # A copy says it took a command line before it does anything with it: read that
            # first, so that its child ending meanwhile (a command line it refused) is not
            # taken for the death of a waiting copy's child, which kills the copy below.
            self._on_taken()
        for pid in list(self.served):
            if _ended(pid):
                self.served.discard(pid)
        if self.waiting is not None and _ended(self.waiting):
            self.waiting = None  # it died waiting: the daemon accepts until it forks another
            # and the child it took is no longer a waiting copy's (its connection closed:
            # `_on_connection` kills it); else its end would kill the next copy for nothing
            self.reserved = None
            self.waiting_deaths += 1
            self._accept_here(True)
        for pid, (connection, child) in list(self.handed.items()):
            try:
                found, status, usage = os.wait4(pid, os.WNOHANG)
            except ChildProcessError:
                found, status, usage = pid, 0, None
            if found == 0:
                continue
            code = os.waitstatus_to_exitcode(status)
            child.process.returncode = code
            cpu_s = usage.ru_utime + usage.ru_stime if usage is not None else 0.0
            with contextlib.suppress(OSError):
                connection.sendall(f"{code} {cpu_s!r}\n".encode("ascii"))
            with contextlib.suppress(KeyError, ValueError):
                self.selector.unregister(connection)
            connection.close()
            shutil.rmtree(child.workdir, ignore_errors=True)
            del self.handed[pid]
            if getattr(child, "forked", False):  # what its run left in its group is ours
                self.groups.add(pid)
            if pid == self.reserved:  # the waiting copy's child died: so must the copy
                self.reserved = None
                if self.waiting is not None:
                    with contextlib.suppress(OSError):
                        os.kill(self.waiting, signal.SIGKILL)
                    self.waiting_deaths -= 1  # not the copy's doing: not counted below
        if self.zygote is not None and self.zygote.process.poll() is not None:
            self.zygote.close()  # it died: children are started on their own from now on
            self.zygote = None
        if self.groups:
            from simulator.sandbox.zygote import reap_groups  # loaded with the zygote

            reap_groups(self.groups)


def _ended(pid: int) -> bool:
    """Reap child `pid` if it ended; return whether it did (or is no child of this one)."""
    try:
        return os.waitpid(pid, os.WNOHANG)[0] != 0
    except ChildProcessError:
        return True


def _prepare_to_serve() -> None:
    """Import what serving a command line uses, once in the daemon, so that every copy it
    forks starts with it (`_serve_command_line`): the command line and its `run` parser
    (`parser_for`: built once, not by each copy, and used once: `_warm_up_parse`), the
    sandbox's parent side, threading, and
    orjson, which reads a result of 64 KiB or more for the summary a `run` prints without
    `--json -` (`decode_message`; its import brings uuid, dataclasses, inspect and
    platform). The objects are then left out of the collector's
    scans (`gc.freeze`): a copy's collections would otherwise touch, and so copy, every page
    of them. The allocator hook goes in first (`install_allocator_hook`): a copy reading a
    result makes its objects in arenas on huge pages, which it then reads and summarises
    with fewer page faults."""
    import gc
    import threading  # noqa: F401 - imported for the copies (`_serve_command_line`)

    from simulator.engine import install_allocator_hook

    install_allocator_hook()
    import orjson  # noqa: F401 - imported for the copies (`decode_message`)

    _warm_up_parse()
    gc.freeze()


def _warm_up_parse() -> None:
    """Parse WARM_UP_ARGV with the `run` parser a copy serves command lines with; the parse
    has no effect beyond its caches and the pages it writes to (a failed one is let go)."""
    from simulator.cli import parser_for

    with contextlib.suppress(Exception, SystemExit):
        parser_for("run").parse_args(WARM_UP_ARGV)


def _warm_up_reads() -> None:
    """Make and free, while the copy waits, buffers as large as those it reads a result into
    (`os.read` of a result pipe's size, simulator.sandbox.parent): the allocator then gives
    the reads memory this copy has written already. Else that memory, the daemon's heap
    shared with the copy since the fork or fresh pages, is faulted in a page at a time while
    the result arrives, on the command's path (a result of two pipe buffers: about 385 minor
    faults a run, 118 with this; bench/RESULTS.md)."""
    # bytearray: its bytes are written (zeroed) as it is made, as a read writes its buffer
    buffers = [bytearray(RESULT_PIPE_BYTES) for _ in range(2)]
    del buffers


def _take_request(
    connection: socket.socket,
) -> tuple[list[int], int, tuple[str, list[tuple[str, str, bool]], list[str], dict[str, str]]]:
    """Return a served command line's streams (descriptors), umask and request
    (`decode_request`); ValueError when it sent less, OSError when the connection failed."""
    import socket

    connection.settimeout(CONNECT_TIMEOUT_S)
    header, fds, _, _ = socket.recv_fds(connection, REQUEST_HEADER_BYTES, REQUEST_STREAMS)
    if len(fds) != REQUEST_STREAMS or len(header) != REQUEST_HEADER_BYTES:
        for fd in fds:
            os.close(fd)
        raise ValueError("an incomplete request")
    length, umask = read_request_header(header)
    body = bytearray()
    while len(body) < length:
        data = connection.recv(min(length - len(body), 1 << 20))
        if not data:
            raise ValueError("an incomplete request")
        body += data
    return list(fds), umask, decode_request(bytes(body))


def _serve_command_line(
    connection: socket.socket,
    path: str,
    entry: str,
    watch: Callable[[socket.socket], None] | None = None,
    child: PooledChild | None = None,
) -> int:
    """Serve one command line in a copy of the daemon (`served_run` is its other side): take
    its request, its standard streams, working directory, environment and umask, run it with
    a child from the daemon at `path`, send its exit status; return the copy's exit status.

    A copy that cannot take the request or the working directory declines, before it has
    touched the user's streams (the command line then runs itself). The copy exits as soon as
    the command line goes away (Ctrl-C): the daemon then kills the child it handed, as for any
    command line that went away. A thread watches the connection for that: `watch` hands it
    the connection (one started ahead: `_watcher`), else one is started now. `child`: one
    taken ahead (a copy forked ahead takes it while it waits), else one is taken now."""
    import threading

    try:
        fds, umask, (cwd, streams, argv, environment) = _take_request(connection)
        os.chdir(cwd)
    except (OSError, ValueError, IndexError):
        with contextlib.suppress(OSError):
            connection.sendall(DECLINED)
        return 0
    for target, fd in enumerate(fds):
        os.dup2(fd, target)
        os.close(fd)
    os.umask(umask)
    _take_environment(environment)
    sys.stdin, sys.stdout, sys.stderr = (
        open(  # noqa: SIM115 - the copy's standard streams, on the command line's descriptors
            fd,
            "r" if fd == 0 else "w",
            encoding=encoding,
            errors=errors,
            buffering=1 if fd and line_buffered else -1,  # 1: line buffered
            closefd=False,
        )
        for fd, (encoding, errors, line_buffered) in enumerate(streams)
    )
    connection.settimeout(None)
    if watch is None:
        threading.Thread(target=_end_when_gone, args=(connection,), daemon=True).start()
    else:
        watch(connection)
    from simulator.cli import main

    try:
        status = main(argv, child=child or _take_child(path, entry))
    except SystemExit as stop:  # argparse's --help and usage errors
        code = stop.code
        if code is not None and not isinstance(code, int):
            sys.stderr.write(f"{code}\n")
        status = code if isinstance(code, int) else (0 if code is None else 1)
    except BaseException:  # as Python reports an uncaught exception
        import traceback

        traceback.print_exc()
        status = 1
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(OSError, ValueError):
            stream.flush()
    connection.sendall(f"{status}\n".encode("ascii"))
    return 0


def _end_when_gone(connection: socket.socket) -> None:
    """End this copy as soon as its command line goes away (its connection's end of file)."""
    with contextlib.suppress(OSError):
        while connection.recv(64):
            pass
    os._exit(1)


def _watcher() -> Callable[[socket.socket], None]:
    """Start the thread that will watch a copy's command line (`_end_when_gone`) before the
    command line comes: return what hands it the connection. A thread started for the
    command line would make it wait for the thread to start."""
    import threading

    given: list[socket.socket] = []
    handed = threading.Event()

    def watch_once_given() -> None:
        handed.wait()
        _end_when_gone(given[0])

    threading.Thread(target=watch_once_given, daemon=True).start()

    def hand(connection: socket.socket) -> None:
        given.append(connection)
        handed.set()

    return hand


def _take_environment(environment: Mapping[str, str]) -> None:
    """Make this process's environment `environment`, changing only what differs: each
    variable set or unset is a C call (putenv) and an encoding, and a command line's
    environment is mostly the one the daemon started with."""
    current = os.environ
    for name in [name for name in current if name not in environment]:
        del current[name]
    for name, value in environment.items():
        if current.get(name) != value:
            current[name] = value


def serve(path: str, entry: str, *, environment: Mapping[str, str] | None = None) -> None:
    """Run the daemon for `entry` at socket `path` until it has been idle long enough."""
    env = os.environ if environment is None else environment
    idle_s = float(env.get(IDLE_SWITCH, DEFAULT_IDLE_S))
    os.umask(0o077)
    _Daemon(path, entry, idle_s).serve()


if __name__ == "__main__":  # pragma: no cover - started by start_daemon
    if len(sys.argv) == 4 and sys.argv[1] == "serve":
        serve(sys.argv[2], sys.argv[3])
