"""Entry point of the sandboxed simulation process started by `simulator.sandbox`.

Runs as: `python -s -P -c BOOTSTRAP ROOT ENTRY RESULT_FD [v8-ahead]` (simulator.sandbox.launch),
possibly before its run is known; ENTRY is the address of a registered child entry
(simulator.sandbox). In order: import the entry's module and let the entry prepare the
process (a simulation installs the engine's allocator hook: this process runs it and
nothing else), import everything runs need (after dropping privileges the interpreter's own
files may be unreadable), load V8 if told to and the run has not come yet (`_load_v8_while_idle`),
wait for one line on stdin naming the payload's file and the limits (exit quietly at end of file: no run), set the
resource limits, read the payload, import what this payload needs, drop root privileges to a
user id of its own, cut itself off the network (simulator.sandbox.network), call the entry
with the payload, and write newline-delimited JSON
messages to RESULT_FD: `{"progress": f}` (with `"simulated_s"` where the entry reports the
simulated time reached), then one `{"result": ...}` or `{"error": ...}`.
Everything before the entry is called is trusted code; the entry runs user code.

A zygote (`python -s -P -c BOOTSTRAP ROOT ENTRY CONTROL_FD zygote`, started by the command
line's pool daemon or a process that keeps a spare child: simulator.sandbox.zygote) prepares
as above once, then forks a child per
request on its control socket (`_fork_on_request`); each forked child goes on from the
preparation exactly as a child started on its own: V8 ahead if asked, its run, its limits.
"""

from __future__ import annotations

import contextlib
import ctypes
import errno
import faulthandler
import fcntl
import gc
import importlib
import json
import mmap
import os
import resource
import select
import signal
import socket
import struct
import sys
import threading
import time
import traceback
from typing import IO, Any

from simulator.cpus import keep_on_one_cpu
from simulator.errors import SandboxLimitError, SimulationError, UserCodeError
from simulator.sandbox import ChildEntry, entry_for
from simulator.sandbox.entries import Payload
from simulator.sandbox.network import MSG_NO_NETWORK, cut_off_network
from simulator.sandbox.served import LOAD_V8_AHEAD, RESULT_PIPE_BYTES, ZYGOTE
from simulator.sandbox.wire import (
    ABANDONED,
    FORK_REPLY,
    WALL_DUMP_SIGNAL,
    encode_message,
    result_message_pieces,
)

# A dynamic user id per run (base + pid), like systemd's DynamicUser: concurrent runs do
# not share a process count (RLIMIT_NPROC is per user) and cannot signal each other.
DYNAMIC_UID_BASE = 200_000
FALLBACK_USER_ID = 65534  # nobody
PROGRESS_INTERVAL_S = 0.1
MSG_PRIVILEGES = "cannot drop root privileges for the simulation process: {error}"
# CAP_CHOWN (0), CAP_SETGID (6), CAP_SETUID (7): what `_drop_privileges` uses.
SWITCH_USER_CAPABILITIES = (1 << 0) | (1 << 6) | (1 << 7)
# Imported before privileges are dropped, because the entry may import them lazily.
PRELOAD_MODULES = (
    "collections",
    "ctypes",
    "dataclasses",
    "decimal",
    "hashlib",
    "encodings.idna",
    "fractions",
    "functools",
    "heapq",
    "itertools",
    "linecache",
    "math",
    "random",
    "statistics",
    "traceback",
    "simulator.errors",
    "simulator.sandbox.restricted",
    "orjson",  # the result's encoder (simulator.sandbox.wire)
    "simulator.shallow",
    # mini-racer's modules and what loading V8 imports (`_load_v8`), so that V8 can still be
    # loaded after the privilege drop
    "importlib.readers",
    "importlib.resources",
    "importlib.resources.readers",
    "importlib.util",
    "zipfile",
    "py_mini_racer",
)
# Operator switches read after the environment is cleared (the application cannot read the
# environment): PARASIM_JS_TWINS=0 evaluates shipped models in V8 (simulator.shallow),
# PARASIM_KEEP_ON_ONE_CPU=0 leaves the run's CPU to the kernel (simulator.cpus).
KEPT_SWITCHES = ("PARASIM_JS_TWINS", "PARASIM_KEEP_ON_ONE_CPU")
PR_SET_PDEATHSIG = 1
SINGLE_THREADED = {"OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"}
EXIT_OK = 0
EXIT_ERROR = 3
# Isolates a child started ahead makes while it waits (`_load_v8_while_idle`): a run's node
# model and network model each take one (bench/bench_userpath.py's scenarios).
SPARE_ISOLATES = 2
REPORT_RESERVE_BYTES = 16 * 1024**2
"""Memory the child holds while the run runs and lets go when it fails, so that a run that
ran out of memory (the data limit) leaves room to report it."""
_reserve: list[mmap.mmap] = []  # REPORT_RESERVE_BYTES while the run runs (`_hold_reserve`)
# The main thread's stack grows on demand up to the soft RLIMIT_STACK, read at each fault, so
# raising it here takes effect (up to the 128 MB gap Linux leaves below the stack at exec).
STACK_BYTES = 64 * 1024**2
# Python's default recursion limit, lowered where the stack cannot take it: C stack per unit
# of recursion depth allowed. The worst guarded path measured (Python 3.11, recursion through
# sorted(key=...)) takes about 1.4 KB a unit: 8 KB leaves a 6-fold margin at 8 MB, 45-fold at
# 64 MB. Paths CPython does not guard (hashing nested tuples, nested iterators) overflow the
# stack whatever its size; faulthandler then names the user's line (WALL_DUMP_SIGNAL below).
RECURSION_LIMIT = 1000
STACK_BYTES_PER_LEVEL = 8 * 1024
# A result is written to its pipe in parts of at least this size (its pipe's buffer).
WRITE_AT_BYTES = 64 * 1024
# The most pieces one `os.writev` is given: within every Linux kernel's IOV_MAX (1,024,
# uio.h UIO_MAXIOV), which a write of many small pieces would pass.
WRITEV_PIECES = 512
PEER_CREDENTIALS = struct.Struct("3i")  # SO_PEERCRED: the daemon's pid, uid, gid
# How long a forked child waits for the first fork's exit to make it the daemon's child.
REPARENT_TIMEOUT_S = 5.0


class _Channel:
    """Newline-delimited JSON messages to the parent over an inherited pipe."""

    def __init__(self, fd: int) -> None:
        self.fd = fd
        self.last_progress = 0.0
        # The runner reports progress from a helper thread too: one message at a time.
        self.lock = threading.Lock()

    def send(self, message: dict[str, Any]) -> None:
        with self.lock:
            self._write(encode_message(message))

    def send_result(self, result: object) -> None:
        """Send `{"result": result}` as `send` would; a dict with string keys (a run's
        result) is written as it is encoded, a part as soon as WRITE_AT_BYTES are ready
        (wire.result_message_pieces). Should a part fail to encode after others went, the
        line is ended as ABANDONED, which the parent skips, and the error raised."""
        if not isinstance(result, dict) or not all(type(key) is str for key in result):
            self.send({"result": result})
            return
        with self.lock:
            # grown for this result only: a pipe's buffer counts against its user's quota
            # (/proc/sys/fs/pipe-user-pages-soft), and the pipe closes as the child exits
            with contextlib.suppress(OSError):
                fcntl.fcntl(self.fd, fcntl.F_SETPIPE_SZ, RESULT_PIPE_BYTES)
            ready: list[bytes | memoryview] = []
            size = 0
            sent = False
            try:
                for piece in result_message_pieces(result):
                    ready.append(piece)
                    size += len(piece)
                    if size >= WRITE_AT_BYTES:
                        sent = True
                        self._write_pieces(ready)
                        ready, size = [], 0
                self._write_pieces(ready)
            except BaseException:
                if sent:
                    with contextlib.suppress(OSError):
                        self._write(ABANDONED)
                raise

    def _write(self, data: bytes) -> None:
        view = memoryview(data)
        while view:
            written = os.write(self.fd, view)
            view = view[written:]

    def _write_pieces(self, pieces: list[bytes | memoryview]) -> None:
        """Write `pieces` in order, gathered by the kernel (`os.writev`) rather than joined
        into one buffer first: a joined buffer is a copy of the result, and its pages are
        new memory the child faults in."""
        start = 0
        while start < len(pieces):
            batch = pieces[start : start + WRITEV_PIECES]
            written = os.writev(self.fd, batch)
            for piece in batch:  # a pipe may take part of a batch: go on from there
                if written < len(piece):
                    pieces[start] = memoryview(piece)[written:]
                    break
                written -= len(piece)
                start += 1

    def progress(self, fraction: float, simulated_s: float | None = None, /) -> None:
        now = time.monotonic()
        if fraction >= 1.0 or now - self.last_progress >= PROGRESS_INTERVAL_S:
            self.last_progress = now
            message: dict[str, Any] = {"progress": float(fraction)}
            if simulated_s is not None:
                message["simulated_s"] = float(simulated_s)
            self.send(message)


def _set_limits(limits: dict[str, int], *, processes: bool) -> None:
    """Apply the resource limits (soft = hard, so the run cannot raise them again)."""
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    cpu = int(limits["cpu_s"])
    # SIGXCPU at the soft limit, SIGKILL one second later if it is ignored.
    resource.setrlimit(resource.RLIMIT_CPU, (cpu, cpu + 1))
    resource.setrlimit(resource.RLIMIT_DATA, (limits["data_bytes"], limits["data_bytes"]))
    resource.setrlimit(resource.RLIMIT_FSIZE, (limits["fsize_bytes"], limits["fsize_bytes"]))
    if processes:
        resource.setrlimit(resource.RLIMIT_NPROC, (limits["nproc"], limits["nproc"]))
    _set_stack()


def _set_stack() -> None:
    """Raise the soft stack limit to STACK_BYTES where allowed; fit the recursion limit to it."""
    soft, hard = resource.getrlimit(resource.RLIMIT_STACK)
    stack = soft
    if soft != resource.RLIM_INFINITY and soft < STACK_BYTES:
        stack = STACK_BYTES if hard == resource.RLIM_INFINITY else min(STACK_BYTES, hard)
        resource.setrlimit(resource.RLIMIT_STACK, (stack, hard))
    levels = RECURSION_LIMIT
    if stack != resource.RLIM_INFINITY:
        levels = min(RECURSION_LIMIT, stack // STACK_BYTES_PER_LEVEL)
    sys.setrecursionlimit(max(levels, 100))


def _report_crashes() -> None:
    """Write the Python stack to stderr when the run crashes or hits a time limit.

    Fatal signals (SIGSEGV when the C stack overflows, SIGABRT...) and SIGXCPU (the CPU-time
    limit) end the process after the dump; WALL_DUMP_SIGNAL does not. The parent reads the
    user's line from the dump (`sandbox.crash_line`). Installed after V8 has started, so that
    faulthandler comes first and chains to any handler V8 installed.
    """
    faulthandler.enable(file=sys.stderr, all_threads=False)
    faulthandler.register(signal.SIGXCPU, file=sys.stderr, all_threads=False, chain=True)
    faulthandler.register(WALL_DUMP_SIGNAL, file=sys.stderr, all_threads=False, chain=False)


def _can_switch_user() -> bool:
    """Return whether this process can give its run a user id of its own: as root, or with
    the capabilities the switch uses (CAP_CHOWN, CAP_SETGID, CAP_SETUID) without being root.
    Else (the Docker image's `parasim` user) the run keeps the worker's user id."""
    if os.geteuid() == 0:
        return True
    try:
        with open("/proc/self/status", encoding="ascii") as status:
            for line in status:
                if line.startswith("CapEff:"):
                    effective = int(line.split()[1], 16)
                    return effective & SWITCH_USER_CAPABILITIES == SWITCH_USER_CAPABILITIES
    except (OSError, ValueError):
        pass
    return False


def _drop_privileges() -> None:
    """Switch to an unprivileged user id of the run's own, or raise OSError."""
    candidates = [DYNAMIC_UID_BASE + os.getpid(), FALLBACK_USER_ID]
    error: OSError | None = None
    for uid in candidates:
        try:
            os.chown(".", uid, uid)  # the fresh working directory becomes the run's own
            os.setgroups([])
            os.setresgid(uid, uid, uid)
            os.setresuid(uid, uid, uid)
        except OSError as failure:
            error = failure
            continue
        break
    if os.getuid() == 0 or os.geteuid() == 0:
        raise error or OSError("still root")
    try:
        os.setuid(0)
    except PermissionError:
        return
    raise OSError("privileges could be regained")


def _die_with_parent(parent: int) -> None:
    """Ask Linux to SIGKILL this process if the parent dies (it enforces the wall clock).

    Set after the privilege drop, which clears the setting.
    """
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
    except (OSError, AttributeError):  # pragma: no cover - not Linux
        return
    if os.getppid() != parent:  # the parent died before the request took effect
        os._exit(EXIT_ERROR)


def _preload_common() -> None:
    """Import what every run needs while the interpreter's files are readable, mini-racer's
    Python modules included, before the run is known."""
    for name in PRELOAD_MODULES:
        importlib.import_module(name)


def _init_v8_in_zygote(entry: ChildEntry) -> None:
    """Load and initialize V8 (its library, ICU data and platform) once in the zygote, when
    a run of its entry may use it, so that every child it forks has it: a child forked for a
    command line right after the last one ended otherwise made its next run wait for that
    start (a run that comes while the child loads V8 waits for it). Initializing starts no
    thread (V8 runs `--single-threaded`; each isolate later starts its own), so the fork
    copies no lock held by another thread. A child that never uses V8 maps its library
    (shared pages) and about 12 MB of V8's data more."""
    if not entry.may_want_v8():
        return
    import py_mini_racer

    py_mini_racer.init_mini_racer(ignore_duplicate_init=True)


def _load_v8_while_idle(entry: ChildEntry, stdin: IO[str]) -> None:
    """Load V8 before the run is known, for a child started to wait (LOAD_V8_AHEAD: the
    command line's pool, simulator.sandbox.pool) when its run has not come yet and a run of
    its entry may use V8. V8's start then happens while nobody waits. A child
    whose run is already waiting leaves it to `_load_v8`, which loads V8 only if the run
    needs it.
    The run's first isolates are made too while the run still has not come
    (`start_spare_racer`, SPARE_ISOLATES); the run's CPU pin, taken after `go`, covers the
    threads they started (keep_on_one_cpu)."""
    if not entry.may_want_v8() or select.select([stdin], [], [], 0)[0]:
        return
    import py_mini_racer

    py_mini_racer.init_mini_racer(ignore_duplicate_init=True)
    # The run's first isolates too (each runs the prelude, as dear as V8's start): their threads
    # start now, and `go` pins them with the rest (keep_on_one_cpu); they drop privileges with
    # the process. One at a time, as long as the run has not come.
    for _ in range(SPARE_ISOLATES):
        if select.select([stdin], [], [], 0)[0]:
            return
        from simulator.shallow import start_spare_racer

        start_spare_racer()


def _warm_up_while_idle(entry: ChildEntry, stdin: IO[str]) -> None:
    """Warm the child up (`ChildEntry.warm`) when its run has not come yet: a child forked
    by the zygote copies each page it writes to on first write, and a run's first compile
    of its application model did so for the compiler's pages, on the run's clock. The warm-up
    only saves time: one that fails is left there, and the run goes on as without it."""
    if not select.select([stdin], [], [], 0)[0]:
        with contextlib.suppress(Exception):
            entry.warm()


def _load_v8(entry: ChildEntry, payload: Payload) -> None:
    """Load V8 (shared library and ICU data) when the payload will use it: unless
    the entry says (`needs_v8`) that Python twins answer all its models. A twin that declines
    an odd input later loads V8 then, from mini-racer's own files, which stay readable after
    the privilege drop (site-packages are world-readable).

    The isolates made while the child waited stay, those the run will not use included (a
    twin that declines an input takes one): closing one would delay the run's start and
    give back none of the data limit (the process's VmData is the same after they close: V8
    keeps what it mapped), only its two threads."""
    if entry.v8_contexts(payload) != 0:
        import py_mini_racer

        py_mini_racer.init_mini_racer(ignore_duplicate_init=True)


def _preload_for(entry: ChildEntry, payload: Payload) -> None:
    """Import the modules the entry names for this payload (`modules_needed`), before
    privileges are dropped."""
    for name in entry.modules(payload):
        importlib.import_module(name)


def _hold_reserve() -> None:
    """Hold REPORT_RESERVE_BYTES of the data limit: a private writable mapping, which the
    limit counts whole (RLIMIT_DATA) without its pages being touched. A zero-filled bytearray
    would touch every one of its pages in every run."""
    _reserve.append(mmap.mmap(-1, REPORT_RESERVE_BYTES, flags=mmap.MAP_PRIVATE))


def _let_the_run_go(error: BaseException) -> None:
    """Free what the failed run holds before reporting `error`: its objects live on in the
    frames of the error's traceback (and its context's), and a run that ran out of memory
    leaves none for the report. The frames keep their line numbers."""
    seen: set[int] = set()
    while error is not None and id(error) not in seen:
        seen.add(id(error))
        with contextlib.suppress(BaseException):
            traceback.clear_frames(error.__traceback__)
        error = error.__cause__ or error.__context__  # type: ignore[assignment]
    with contextlib.suppress(BaseException):
        gc.collect()


def _error_dict(error: BaseException) -> dict[str, Any]:
    """Return the JSON form of the error that ended the run."""
    if isinstance(error, SimulationError):
        return error.to_dict()
    if isinstance(error, MemoryError):
        return SandboxLimitError("memory", "the run ran out of memory").to_dict()
    if isinstance(error, OSError) and error.errno == errno.EFBIG:
        return SandboxLimitError("file size", "the run exceeded the file-size limit").to_dict()
    if isinstance(error, RecursionError):
        return UserCodeError(f"RecursionError: {error}").to_dict()
    message = f"internal error in the simulator: {type(error).__name__}: {error}"
    return SimulationError(message).to_dict()


def _fork_on_request(control_fd: int) -> tuple[int, list[str]]:
    """Serve as a zygote (ZYGOTE): prepared already, fork a child for each request on the
    control socket, a Unix datagram-like socket (SOCK_SEQPACKET) to the pool's daemon; return
    only in a forked child, as (its result pipe's descriptor, its options). Exit when the
    daemon closes the socket.

    A request is JSON ({"workdir": ..., "v8": bool}) with four descriptors: the child's stdin,
    stdout, stderr and result pipe. The child is forked twice (the first fork exits at once),
    so that it becomes the daemon's own child (the daemon is a subreaper): the daemon reaps it
    and has its CPU time, as for a child it started itself. The answer (`FORK_REPLY`) is the
    child's process id, sent by the child once it is the daemon's, or -1 from whichever fork
    failed."""
    gc.collect()
    gc.freeze()  # the forked children share the prepared objects' pages without copying them
    control = socket.socket(fileno=control_fd)
    while True:
        try:
            message, fds, _, _ = socket.recv_fds(control, 65536, 4)
        except OSError:
            os._exit(EXIT_OK)
        if not message:  # the daemon went away
            os._exit(EXIT_OK)
        if len(fds) != 4:
            for fd in fds:
                os.close(fd)
            control.send(FORK_REPLY.pack(-1))
            continue
        request = json.loads(message)
        try:
            intermediate = os.fork()
        except OSError:
            intermediate = -1
        if intermediate == 0:  # the first fork: fork the child, answer, exit
            first = os.getpid()
            try:
                child = os.fork()
            except OSError:
                child = -1
            if child == 0:
                return _become_forked_child(control, fds, request, first)
            if child < 0:
                with contextlib.suppress(OSError):
                    control.send(FORK_REPLY.pack(-1))
            os._exit(EXIT_OK)
        for fd in fds:
            os.close(fd)
        if intermediate < 0:
            control.send(FORK_REPLY.pack(-1))
        else:
            os.waitpid(intermediate, 0)


def _become_forked_child(
    control: socket.socket, fds: list[int], request: dict[str, Any], intermediate: int
) -> tuple[int, list[str]]:
    """In a child forked by the zygote: wait to be the daemon's child (the first fork,
    `intermediate`, exits at once), take a session of its own, the streams sent with the
    request and its working directory, then say so with its process id and let go of the
    zygote's socket; return (result pipe, options). Answer -1 and exit instead if it was not
    adopted by the one who asked (a daemon that is no subreaper would have no say over it) or
    could not take what it was sent."""
    asking = control.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, PEER_CREDENTIALS.size)
    daemon = PEER_CREDENTIALS.unpack(asking)[0]
    deadline = time.monotonic() + REPARENT_TIMEOUT_S
    while os.getppid() == intermediate and time.monotonic() < deadline:
        time.sleep(0.0002)
    try:
        if os.getppid() != daemon:
            raise OSError("not adopted by the daemon")
        # before the daemon hears of it: from then on its process group can be killed
        os.setsid()
        for target, fd in enumerate(fds[:3]):
            os.dup2(fd, target)
            os.close(fd)
        os.chdir(request["workdir"])
    except (OSError, KeyError, TypeError):
        with contextlib.suppress(OSError):
            control.send(FORK_REPLY.pack(-1))
        os._exit(EXIT_ERROR)
    with contextlib.suppress(OSError):
        control.send(FORK_REPLY.pack(os.getpid()))
    control.close()
    # `random` reseeds itself in a forked child (os.register_at_fork); the run's own random
    # source is seeded by the run (simulator.engine)
    return fds[3], [LOAD_V8_AHEAD] if request.get("v8") else []


def _wait_for_run(stdin: IO[str]) -> tuple[str, dict[str, int]] | None:
    """Return (the payload's path, the limits) the parent sends when the run starts, or
    None when the parent closed the pipe without a run (a started child not needed)."""
    line = stdin.readline()
    if not line:
        return None
    order = json.loads(line)
    return str(order["payload"]), dict(order["limits"])


def main(argv: list[str]) -> None:
    """Run one sandboxed simulation; never returns (exits the process)."""
    entry_name, fd_text, *options = argv
    # The parent sets only PYTHONHASHSEED and GLIBC_TUNABLES (read at start-up); the run sees
    # an environment holding nothing but the thread counts of the numerical libraries: one run
    # is one thread, so a worker's concurrency is what decides how many cores it uses.
    switches = {name: os.environ[name] for name in KEPT_SWITCHES if name in os.environ}
    os.environ.clear()
    os.environ.update(SINGLE_THREADED)
    os.environ.update(switches)
    result_fd = int(fd_text)
    prepared = False
    if ZYGOTE in options:  # prepared once here; returns in each forked child
        entry = entry_for(entry_name)
        entry.prepare_process()
        _preload_common()
        _init_v8_in_zygote(entry)
        result_fd, options = _fork_on_request(result_fd)
        prepared = True
    channel = _Channel(result_fd)
    parent = os.getppid()
    status = EXIT_ERROR
    try:
        # Started ahead of its run (simulator.sandbox.launch): prepare, then wait for the run.
        entry = entry_for(entry_name)
        if not prepared:
            entry.prepare_process()  # e.g. the engine's allocator hook (simulator.runner)
            _preload_common()
        if LOAD_V8_AHEAD in options:
            _load_v8_while_idle(entry, sys.stdin)
        _warm_up_while_idle(entry, sys.stdin)
        order = _wait_for_run(sys.stdin)
        if order is None:  # not needed: its fresh working directory goes with it
            with contextlib.suppress(OSError):
                os.rmdir(os.getcwd())
            status = EXIT_OK
            return
        payload_path, limits = order
        # Now, not at start: a child started ahead would keep the CPU it started on, which
        # another worker's run may be using by now; woken for its run, it is on a free one.
        # Before any V8 thread exists: the run and V8's threads share that CPU.
        keep_on_one_cpu()
        with open(payload_path, encoding="utf-8") as handle:
            payload = json.load(handle)
        os.unlink(payload_path)
        payload = entry.parsed(payload)  # e.g. the snapshot, read by the hooks and the run
        own_user = _can_switch_user()
        # RLIMIT_DATA counts reservations whole: the limit grows by them to mean memory used.
        limits["data_bytes"] = int(limits["data_bytes"]) + entry.reserved_bytes(payload)
        _set_limits(limits, processes=own_user)
        _preload_for(entry, payload)
        _load_v8(entry, payload)
        if own_user:
            try:
                _drop_privileges()
            except OSError as error:
                raise SimulationError(MSG_PRIVILEGES.format(error=error)) from None
        try:
            cut_off_network()  # every thread, V8's included
        except OSError as error:
            raise SimulationError(MSG_NO_NETWORK.format(error=error)) from None
        _die_with_parent(parent)
        _report_crashes()
        _hold_reserve()
        result = entry.function(**payload, progress=channel.progress)
        channel.send_result(result)
        status = EXIT_OK
    except BaseException as error:  # the parent must get an answer, whatever happened
        _reserve.clear()
        _let_the_run_go(error)
        with contextlib.suppress(BaseException):
            channel.send({"error": _error_dict(error)})
    finally:
        sys.stdout.flush()
        sys.stderr.flush()
        # Skip interpreter shutdown: V8 threads or user objects must not delay the exit.
        os._exit(status)


if __name__ == "__main__":  # pragma: no cover - started through launch.BOOTSTRAP
    main(sys.argv[1:])
