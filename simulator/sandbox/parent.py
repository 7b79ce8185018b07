"""The parent's side of a sandboxed run: start (or take) a child, hand it the payload,
supervise it, and turn however it ended into a result or a SimulationError.

The second of the sandbox's two layers (simulator.sandbox): the whole run happens in a child
process (simulator.sandbox.child) with CPU-time, data, file-size, process-count and
core-file limits, an empty environment, a fresh temporary directory, a wall-clock timeout
enforced here, capped output and a capped result, and, when started as root, a dynamic
unprivileged user id of its own.

Every way the child can end becomes a SimulationError that says what the user can do
(`_Run.outcome`): the child's faulthandler dump names the model's line for a crash (C stack
exhausted) and for the CPU-time and wall-clock limits. docs/sandbox.md, "Application
models: containment", lists each runaway and its test.
"""

from __future__ import annotations

import atexit
import contextlib
import json
import os
import re
import selectors
import signal
import time
from collections.abc import Mapping  # loaded already, by json

from simulator.errors import (
    SandboxCrashError,
    SandboxLimitError,
    SimulationError,
    UserCodeError,
    error_from_dict,
)
from simulator.sandbox.launch import (
    DEFAULT_ENTRY,
    ChildSource,
    FreshStart,
    SpareChild,
    StartedChild,
)
from simulator.sandbox.served import RESULT_PIPE_BYTES
from simulator.sandbox.wire import (
    ABANDONED,
    DEFAULT_FILENAME,
    WALL_DUMP_SIGNAL,
    decode_message,
)

# Neither `typing` nor `dataclasses` (which loads `inspect`) at run time: this module is
# on the command line's path to a sandboxed run (issue 16, start-up).
TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping as _Mapping
    from typing import Any, Literal, NoReturn, Protocol, overload

    from simulator.sandbox import Progress

    class EntryRunner(Protocol):
        """Runs one registered child entry on a payload within limits and returns its result
        (`run_sandboxed` here; the web side's runs the child on a worker,
        webapp/interactive.py); raises the SimulationError the child reported."""

        def __call__(
            self, payload: _Mapping[str, Any], *, limits: Limits, _entry: str
        ) -> dict[str, Any]: ...


__all__ = ["Limits", "RawResult", "crash_line", "run_sandboxed"]

MSG_WALL = "the run exceeded the wall-clock limit of {limit:g} s"
MSG_CPU = "the run exceeded the CPU-time limit of {limit:g} s"
MSG_MEMORY = "the run exceeded the memory limit of {limit_mb:g} MB"
MSG_OUTPUT = "the run wrote more than {limit_kb:g} KB to stdout/stderr"
MSG_RESULT = "the result exceeds the size limit of {limit_mb:g} MB"
MSG_CRASH = "the simulation process ended without a result ({how}){where}: {advice}{stderr}"
MSG_STACK_EXHAUSTED = (
    "RecursionError: the interpreter's C stack was exhausted (the process was killed by "
    "SIGSEGV), e.g. by hashing, comparing or iterating a very deeply nested data structure "
    "(a tuple in a tuple in a tuple...); flatten it"
)
MSG_KILLED = (
    "the run was killed by SIGKILL, most likely by the system's out-of-memory killer (the "
    "run's own memory limit is {limit_mb:g} MB){where}; reduce the memory the model uses"
)
MSG_FILE_SIZE = "the run exceeded the file-size limit"
MSG_GARBLED = "the simulation process sent a garbled result; please report it with the model"
MSG_TRUNCATED = " after an incomplete result ({size} bytes)"
# What the user can do when a signal ends the child (MSG_CRASH's "advice").
SIGNAL_ADVICE: dict[int, str] = {
    signal.SIGSEGV: (
        "the application model exhausted the interpreter's C stack, e.g. with a deeply nested "
        "data structure (a tuple in a tuple in a tuple...); flatten it"
    ),
    signal.SIGABRT: (
        "the interpreter or a library it uses aborted, as happens when memory runs out inside "
        "it; reduce the memory the model uses, and report it if it persists"
    ),
}
SIGNAL_ADVICE[signal.SIGBUS] = SIGNAL_ADVICE[signal.SIGSEGV]
ADVICE_REPORT = "the simulator crashed; please report it with the model"
ADVICE_EXIT = "the simulator failed before it could report; please report it with the model"
# How the child's result message begins (simulator.sandbox.wire.encode_json).
RESULT_PREFIX = b'{"result":'


class RawResult:
    """A run's result as the child sent it: its JSON text (UTF-8 bytes, compact, as
    `simulator.sandbox.wire.encode_json` writes it), not parsed. A command that only writes
    the result out (`python -m simulator run --json -`) saves parsing it and writing it again:
    for a 60 MB result, seconds (issue 16).

    The text is held in `pieces`, the chunks it was read in (views of them: nothing copied),
    which the command line writes one after another (simulator.cli.common `write_json`):
    joining them made a buffer as large as the result, whose fresh pages the command line's
    process faulted in before writing a byte (a few milliseconds for the MERPSYS example's
    3.2 MB). `json` joins them for whoever wants the text in one piece."""

    __slots__ = ("pieces",)

    def __init__(self, json: bytes | memoryview, *more: bytes | memoryview) -> None:
        self.pieces = (json, *more)

    @property
    def json(self) -> bytes | memoryview:
        """Return the result's JSON text in one piece."""
        return self.pieces[0] if len(self.pieces) == 1 else b"".join(self.pieces)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, RawResult) and other.json == self.json

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"RawResult({sum(map(len, self.pieces))} bytes)"

    def parsed(self) -> dict[str, Any]:
        """Return the result as data (ValueError: not JSON)."""
        result: dict[str, Any] = decode_message(self.json)
        return result


_LIMIT_NAMES = (
    "wall_s",
    "cpu_s",
    "data_bytes",
    "fsize_bytes",
    "nproc",
    "output_bytes",
    "result_bytes",
)


class Limits:
    """Resource limits of one sandboxed run (keyword arguments, each with its default);
    immutable, compared by value.

    What a frozen dataclass would be, written out: `dataclasses` loads `inspect`, which the
    command line's start-up does without (tests/simulator/test_launch.py checks its imports).
    """

    __slots__ = _LIMIT_NAMES
    wall_s: float  # wall clock, enforced by the parent
    cpu_s: int  # RLIMIT_CPU
    # RLIMIT_DATA, not RLIMIT_AS: V8 reserves large virtual ranges and aborts under AS.
    data_bytes: int
    fsize_bytes: int  # RLIMIT_FSIZE
    nproc: int  # RLIMIT_NPROC (threads count too); applied when started as root
    output_bytes: int  # the child's own stdout + stderr
    result_bytes: int  # the JSON messages on the result pipe (see grown_with_run)

    def __init__(
        self,
        *,
        wall_s: float = 300.0,
        cpu_s: int = 300,
        data_bytes: int = 2 * 1024**3,
        fsize_bytes: int = 16 * 1024**2,
        nproc: int = 128,
        output_bytes: int = 1024**2,
        result_bytes: int = 64 * 1024**2,
    ) -> None:
        values = (wall_s, cpu_s, data_bytes, fsize_bytes, nproc, output_bytes, result_bytes)
        for name, value in zip(_LIMIT_NAMES, values, strict=True):
            object.__setattr__(self, name, value)

    def __setattr__(self, name: str, value: object) -> None:
        raise AttributeError(f"Limits are immutable: cannot set {name}")

    def __delattr__(self, name: str) -> None:
        raise AttributeError(f"Limits are immutable: cannot delete {name}")

    def replace(self, **changes: float) -> Limits:
        """Return these limits with `changes` (limits by name) instead."""
        return Limits(**{**self.as_dict(), **changes})  # type: ignore[arg-type]

    def as_dict(self) -> dict[str, float]:
        """Return the limits by name, as the child takes them."""
        return {name: getattr(self, name) for name in _LIMIT_NAMES}

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Limits) and other.as_dict() == self.as_dict()

    def __hash__(self) -> int:
        return hash(tuple(self.as_dict().values()))

    def __reduce__(self) -> tuple[object, tuple[dict[str, float]]]:
        return _limits, (self.as_dict(),)  # pickle and copy: built again, never set

    def __repr__(self) -> str:
        return "Limits(" + ", ".join(f"{k}={v!r}" for k, v in self.as_dict().items()) + ")"


def _limits(values: dict[str, float]) -> Limits:
    """Return the Limits of these values by name (Limits.__reduce__)."""
    return Limits(**values)  # type: ignore[arg-type]


RESULT_ROW_BYTES = 512
"""What `grown_with_run` lets a simulation's result take beyond `Limits.result_bytes` per
row its size asks for: one per process and one per component instance (`processes` and
`components`: about 170 and 225 bytes each as JSON), one per timeline entry it keeps (about
70)."""
PROCESS_DATA_BYTES = 4 * 1024
"""What `grown_with_run` adds to `Limits.data_bytes` per process a simulation run asks for:
a stackless process takes about 2.5 KB (its frame, sim object, globals and figures) and its
share of the result (bench/RESULTS.md: the memory rows of bench_userpath.py's table)."""


def grown_with_run(limits: Limits, payload: Mapping[str, Any]) -> Limits:
    """Return `limits` grown with the size of the simulation run of `payload`: the result
    cap by RESULT_ROW_BYTES per row (result_rows), the data limit by PROCESS_DATA_BYTES per
    process, so that the limits bound what a run takes beyond its size, not how large a run
    may be: a million processes on a million hosts run and return their result (about
    355 MB) instead of failing at 64 MiB of result or 2 GB of memory.

    For a caller whose user asked for the run's size on their own machine and keeps its
    result whole (the command line, which writes it to a file); the web side keeps its fixed
    limits, the bound of what a worker takes and stores.
    """
    labels = payload.get("labels")
    counts = labels.values() if isinstance(labels, Mapping) else ()
    processes = sum(count for count in counts if type(count) is int and count > 0)
    return limits.replace(
        result_bytes=limits.result_bytes + RESULT_ROW_BYTES * result_rows(payload),
        data_bytes=limits.data_bytes + PROCESS_DATA_BYTES * processes,
    )


def result_rows(payload: Mapping[str, Any]) -> int:
    """Return the rows the result of a simulation run of `payload` may have: its processes
    (the labels' counts), its component instances (the snapshot nodes' counts) and the
    timeline entries it keeps. Read from the raw payload, before any check: a malformed
    field counts none (the run reports it)."""
    labels = payload.get("labels")
    counts = list(labels.values()) if isinstance(labels, Mapping) else []
    snapshot = payload.get("snapshot")
    nodes = snapshot.get("nodes") if isinstance(snapshot, Mapping) else None
    for node in nodes if isinstance(nodes, list) else ():
        if isinstance(node, Mapping):
            counts.append(node.get("count", 1))
    counts.append(payload.get("timeline_limit", 0))
    return sum(count for count in counts if type(count) is int and count > 0)


_READ_CHUNK = RESULT_PIPE_BYTES
_STDERR_TAIL_CHARS = 2000
# The child's output kept for the error message: the last bytes, enough for a whole
# faulthandler dump (at most 100 frames).
_OUTPUT_TAIL_BYTES = 32 * 1024
# How long the child gets to write its stack at the wall-clock limit before it is killed.
_WALL_DUMP_WAIT_S = 0.5

# A faulthandler dump starts with one of these lines; its frames follow, innermost first.
_DUMP_START = re.compile(
    r"^(?:Fatal Python error: .*|Stack \(most recent call first\):"
    r"|(?:Current thread|Thread) 0x[0-9a-f]+ \(most recent call first\):)$",
    re.MULTILINE,
)
_DUMP_HEADER = re.compile(
    r"^(?:Stack|(?:Current thread|Thread) 0x[0-9a-f]+) \(most recent call first\):$",
    re.MULTILINE,
)


def crash_line(stderr: str, filename: str = DEFAULT_FILENAME) -> tuple[int | None, str]:
    """Return (the model's innermost line in the last faulthandler dump, stderr without dumps).

    The child's faulthandler writes the Python stack to stderr when it crashes or reaches a
    time limit (`child._report_crashes`); the dump itself, with the simulator's own paths,
    is not shown to the user.
    """
    start = _DUMP_START.search(stderr)
    if start is None:
        return None, stderr
    headers = list(_DUMP_HEADER.finditer(stderr, start.start()))
    frames = stderr[headers[-1].end() :] if headers else ""
    user_frame = re.search(
        r'^  File "' + re.escape(filename) + r'", line (\d+) in ', frames, re.MULTILINE
    )
    return (int(user_frame.group(1)) if user_frame else None), stderr[: start.start()]


class _Run:
    """The parent's side of one child process: pipes, limits, messages."""

    def __init__(
        self,
        child: StartedChild,
        limits: Limits,
        *,
        raw_result: bool = False,
    ) -> None:
        self.child = child
        self.process = child.process
        self.raw_result = raw_result
        self.final_raw: tuple[bytes | memoryview, ...] | None = None  # RawResult's pieces
        self.limits = limits
        self.result_fd = child.result_fd
        self.pending: list[bytes] = []  # the chunks of a message whose newline has not come
        self.result_size = 0
        self.output = b""
        self.output_size = 0
        self.final: dict[str, Any] | None = None
        self.status: int | None = None
        self.cpu_s = 0.0

    @property
    def decided(self) -> bool:
        """Whether the run's end is known without the child's exit: its result or error came."""
        return self.final is not None or self.final_raw is not None

    @property
    def done_without_exit(self) -> bool:
        """Whether the run is over before the child's exit: decided, and the child is
        another process's to reap (a pooled child: its daemon's). Its exit (V8's threads and
        mappings torn down) then happens after the result is returned."""
        return self.decided and self.child.reaped_elsewhere

    def kill(self) -> None:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(self.process.pid, signal.SIGKILL)

    def reap(self, *, block: bool) -> bool:
        """Return whether the child has exited, recording its status and CPU time."""
        if self.status is not None:
            return True
        ended = self.child.wait(block=block)
        if ended is None:
            return False
        self.status, self.cpu_s = ended
        return True

    def on_result_bytes(self, data: bytes, progress: Progress | None) -> None:
        self.result_size += len(data)
        if self.result_size > self.limits.result_bytes:
            self.fail("result", MSG_RESULT.format(limit_mb=self.limits.result_bytes / 1e6))
        # A message is one line; a large result arrives in many chunks, which are kept in a
        # list and joined once its newline came (linear in the result's size: joining the
        # pending bytes on every chunk was quadratic). The lines are read through a view of
        # the joined bytes, which a large result would otherwise be copied from.
        end = data.find(b"\n")
        if end < 0:
            self.pending.append(data)
            return
        if self.raw_result and self.pending and self.take_raw_result(data, end):
            data = data[end + 1 :]  # what follows the result's line (as a rule, nothing)
            if data.find(b"\n") < 0:
                self.pending = [data] if data else []
                return
        joined = b"".join([*self.pending, data])
        view = memoryview(joined)
        start = 0
        while (end := joined.find(b"\n", start)) >= 0:
            line, start = view[start:end], end + 1
            if line[-1:] == ABANDONED[:1]:  # a message the child could not finish
                continue
            if (
                self.raw_result
                and line[: len(RESULT_PREFIX)] == RESULT_PREFIX
                and line[-1:] == b"}"
            ):
                # The result's own bytes: not parsed here (RawResult); every other message is.
                self.final_raw = (line[len(RESULT_PREFIX) : -1],)  # a view: no copy of it
                continue
            try:
                message = decode_message(line)
            except ValueError:
                self.kill()
                raise SandboxCrashError(MSG_GARBLED) from None
            if "progress" in message:
                if progress is not None:
                    fraction = min(1.0, max(0.0, float(message["progress"])))
                    simulated_s = message.get("simulated_s")
                    if isinstance(simulated_s, int | float) and not isinstance(simulated_s, bool):
                        progress(fraction, float(simulated_s))
                    else:
                        progress(fraction)
            else:
                self.final = message
        self.pending = [joined[start:]] if start < len(joined) else []

    def take_raw_result(self, data: bytes, end: int) -> bool:
        """Keep the result's line, made of the pending chunks and `data` up to its newline at
        `end`, as the pieces it came in (`RawResult`), when it is the result's message (what
        `on_result_bytes` would take from the joined line, without the join); return whether
        it was. The pending chunks are then taken."""
        first = self.pending[0]
        if first[: len(RESULT_PREFIX)] != RESULT_PREFIX or data[end - 1 : end] != b"}":
            return False  # not the result, or its closing brace in an earlier chunk: joined
        first_view, last_view = memoryview(first), memoryview(data)
        self.final_raw = (
            first_view[len(RESULT_PREFIX) :],
            *self.pending[1:],
            last_view[: end - 1],
        )
        self.pending = []
        return True

    def on_output_bytes(self, data: bytes) -> None:
        self.output_size += len(data)
        self.output = (self.output + data)[-_OUTPUT_TAIL_BYTES:]
        if self.output_size > self.limits.output_bytes:
            self.fail("output", MSG_OUTPUT.format(limit_kb=self.limits.output_bytes / 1e3))

    def fail(self, limit: str, message: str) -> NoReturn:
        self.kill()
        raise SandboxLimitError(limit, message)

    def where(self) -> str:
        """Return " (application model, line N)" from the child's last stack dump, or ""."""
        line, _ = crash_line(self.output.decode("utf-8", "replace"))
        return f" (application model, line {line})" if line is not None else ""

    def dump_stack(self, selector: selectors.BaseSelector) -> None:
        """Ask the child for its Python stack (WALL_DUMP_SIGNAL) and collect it from stderr."""
        try:
            os.kill(self.process.pid, WALL_DUMP_SIGNAL)
        except (ProcessLookupError, PermissionError):
            return
        deadline = time.monotonic() + _WALL_DUMP_WAIT_S
        seen = self.output_size
        while (now := time.monotonic()) < deadline:
            # The dump is one burst of writes: done once output came and then paused.
            ready = selector.select(timeout=min(0.05, deadline - now))
            if not ready and self.output_size > seen:
                return
            for key, _ in ready:
                if key.data == "output":
                    data = os.read(key.fd, _READ_CHUNK)
                    if not data:
                        selector.unregister(key.fd)
                    else:
                        self.on_output_bytes(data)
                elif not os.read(key.fd, _READ_CHUNK):  # a result now comes too late
                    selector.unregister(key.fd)

    def outcome(self) -> dict[str, Any] | RawResult:
        """Return the result, or raise the error the child's messages or exit imply.

        Every end without a result is a SimulationError that says what the user can do: a
        limit (SandboxLimitError), a crash at a line of the model (UserCodeError), or a
        crash of the simulator (SandboxCrashError).
        """
        if self.final_raw is not None:
            return RawResult(*self.final_raw)
        if self.final is not None:
            if "error" in self.final:
                raise error_from_dict(dict(self.final["error"]))
            result: dict[str, Any] = self.final["result"]
            return result
        status = self.status if self.status is not None else 0
        line, stderr = crash_line(self.output.decode("utf-8", "replace"))
        where = f" (application model, line {line})" if line is not None else ""
        if status == -signal.SIGXCPU or (
            status == -signal.SIGKILL and self.cpu_s >= self.limits.cpu_s
        ):
            raise SandboxLimitError("cpu", MSG_CPU.format(limit=self.limits.cpu_s) + where)
        if "out of memory" in stderr.lower() or "MemoryError" in stderr:
            raise SandboxLimitError(
                "memory", MSG_MEMORY.format(limit_mb=self.limits.data_bytes / 1e6)
            )
        if status == -signal.SIGKILL:
            limit_mb = self.limits.data_bytes / 1e6
            raise SandboxLimitError("memory", MSG_KILLED.format(limit_mb=limit_mb, where=where))
        if status == -signal.SIGXFSZ:
            raise SandboxLimitError("file size", MSG_FILE_SIZE)
        if status in (-signal.SIGSEGV, -signal.SIGBUS) and line is not None:
            raise UserCodeError(MSG_STACK_EXHAUSTED, line=line)
        tail = stderr[-_STDERR_TAIL_CHARS:].strip()
        details = {"where": where, "stderr": f":\n{tail}" if tail else ""}
        pending = sum(map(len, self.pending))
        truncated = MSG_TRUNCATED.format(size=pending) if pending else ""
        if status < 0:
            name = _signal_name(-status)
            advice = SIGNAL_ADVICE.get(-status, ADVICE_REPORT)
            how = f"killed by {name}{truncated}"
            message = MSG_CRASH.format(how=how, advice=advice, **details)
            raise SandboxCrashError(message, signal=name)
        how = f"exit status {status}{truncated}"
        message = MSG_CRASH.format(how=how, advice=ADVICE_EXIT, **details)
        raise SandboxCrashError(message, exit_status=status)


def _signal_name(number: int) -> str:
    try:
        return signal.Signals(number).name
    except ValueError:
        return f"signal {number}"


if TYPE_CHECKING:  # the result's type by `raw_result`, for the type checker

    @overload
    def run_sandboxed(
        payload: Mapping[str, Any],
        *,
        limits: Limits | None = None,
        progress: Progress | None = None,
        child: StartedChild | None = None,
        keep_spare: bool = False,
        raw_result: Literal[False] = False,
        _entry: str = DEFAULT_ENTRY,
    ) -> dict[str, Any]: ...

    @overload
    def run_sandboxed(
        payload: Mapping[str, Any],
        *,
        limits: Limits | None = None,
        progress: Progress | None = None,
        child: StartedChild | None = None,
        keep_spare: bool = False,
        raw_result: Literal[True],
        _entry: str = DEFAULT_ENTRY,
    ) -> dict[str, Any] | RawResult: ...


def run_sandboxed(
    payload: Mapping[str, Any],
    *,
    limits: Limits | None = None,
    progress: Progress | None = None,
    child: StartedChild | None = None,
    keep_spare: bool = False,
    raw_result: bool = False,
    _entry: str = DEFAULT_ENTRY,
) -> dict[str, Any] | RawResult:
    """Return `run_simulation(**payload)` computed in a limited child process.

    `payload` holds run_simulation's keyword arguments, JSON-serialisable (the snapshot as
    a dict). `child`: a child started ahead for this run (simulator.sandbox.launch.start_child,
    same entry), which the run then uses up; without it one is started here, or, with
    `keep_spare` (a process that runs simulation after simulation: a queue worker, a sweep),
    this process's spare child is used and the next one started once the run is over. Raise
    SandboxLimitError for a limit, UserCodeError for the model's code, and the runner's own
    SimulationError otherwise. `raw_result`: return the result as the child sent it,
    unparsed (RawResult; still a dict where the child's message does not have the result's
    form). `_entry`: the address of another registered child entry
    (registered with simulator.sandbox.child_entry) to run instead of the runner (the model checks, tests).
    """
    limits = limits or Limits()
    try:
        payload_json = json.dumps(dict(payload))
    except (TypeError, ValueError) as error:
        if child is not None:
            child.discard()
        raise SimulationError(f"the run's parameters are not JSON-serialisable: {error}") from None
    # The one way a run gets its child (launch.ChildSource; docs/sandbox.md, "How a run gets
    # its child"): the one started ahead for it, else this process's spare, else a fresh start.
    source: ChildSource = _SPARE if keep_spare and _entry == _SPARE.entry else FreshStart(_entry)
    if child is None:
        child = source.take()
    elif child.entry != _entry or child.sent:
        child.discard()
        raise ValueError("the started child is for another entry or was used already")
    run: _Run | None = None
    try:
        child.go(payload_json, limits.as_dict())
        run = _Run(child, limits, raw_result=raw_result)
        _supervise(run, progress)
        return run.outcome()
    finally:
        over = run is not None and run.done_without_exit
        if run is not None:
            run.kill()
            if not over:
                run.reap(block=True)
        child.discard(wait=not over)
        source.done_with(child)  # the spare: the next run's child starts now


_SPARE = SpareChild()
atexit.register(_SPARE.close)


def _supervise(run: _Run, progress: Progress | None) -> None:
    """Pump the child's pipes until it exits, enforcing the wall clock and size caps."""
    process = run.process
    assert process.stdout is not None and process.stderr is not None
    deadline = time.monotonic() + run.limits.wall_s
    selector = selectors.DefaultSelector()
    selector.register(run.result_fd, selectors.EVENT_READ, "result")
    selector.register(process.stdout.fileno(), selectors.EVENT_READ, "output")
    selector.register(process.stderr.fileno(), selectors.EVENT_READ, "output")
    exited_at: float | None = None
    try:
        while selector.get_map():
            now = time.monotonic()
            if now >= deadline:
                run.dump_stack(selector)
                run.fail("wall", MSG_WALL.format(limit=run.limits.wall_s) + run.where())
            if exited_at is None and run.reap(block=False):
                # Whatever the child left behind (forked processes) goes with it; the
                # pipes are then drained of what was already written.
                exited_at = now
                run.kill()
            if exited_at is not None and now - exited_at > 1.0:
                break
            for key, _ in selector.select(timeout=min(0.2, deadline - now)):
                fd = key.fd
                data = os.read(fd, _READ_CHUNK)
                if not data:
                    selector.unregister(fd)
                elif key.data == "result":
                    run.on_result_bytes(data, progress)
                    if run.done_without_exit:
                        return
                else:
                    run.on_output_bytes(data)
    finally:
        selector.close()
    run.reap(block=True)
