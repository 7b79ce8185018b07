"""The CPUs a simulation may use: one for the run and its V8 threads, all of them for the
detailed kernel mode's worker processes.

`keep_on_one_cpu` pins a sandboxed run to one CPU (see its docstring); it remembers the CPUs
the process was allowed before, so that `usable_cpus` can give a worker process forked for
parallel work (simulator.models.kernel_sim) the cores the run would have had without the pin.
"""

from __future__ import annotations

import contextlib
import os
import threading

_allowed_before_pin: frozenset[int] | None = None


def _current_cpu() -> int:
    """Return the CPU the calling thread runs on (Linux: field 39 of /proc/thread-self/stat).

    Read as bytes: a text file's first use in a sandbox child imports its codec, which every
    run's start would pay."""
    fd = os.open("/proc/thread-self/stat", os.O_RDONLY | os.O_CLOEXEC)
    try:
        stat = os.read(fd, 4096)
    finally:
        os.close(fd)
    return int(stat.rsplit(b")", 1)[1].split()[36])


def keep_on_one_cpu() -> int | None:
    """Pin the process's threads, and the threads they start from now on, to the CPU the
    calling thread runs on.

    Threads started before (a V8 isolate made ahead of the run) are pinned one by one. Python and
    V8 then take turns on one CPU, which they do anyway: the caller waits for every result.
    Without it each evaluation wakes V8's thread on another CPU and the result wakes the
    caller back, which on a virtual machine costs more than the evaluation itself. Returns
    the CPU, or None where affinity is not available (not Linux) or the pin is refused.
    `PARASIM_KEEP_ON_ONE_CPU=0` turns it off.
    """
    global _allowed_before_pin
    if os.environ.get("PARASIM_KEEP_ON_ONE_CPU", "1") == "0":
        return None
    try:
        allowed = os.sched_getaffinity(0)
        cpu = _current_cpu()
        if cpu not in allowed:
            cpu = min(allowed)
        os.sched_setaffinity(0, {cpu})
    except (AttributeError, OSError, ValueError, IndexError):
        return None
    for thread in _other_threads():
        with contextlib.suppress(OSError):  # ended meanwhile
            os.sched_setaffinity(thread, {cpu})
    if _allowed_before_pin is None:
        _allowed_before_pin = frozenset(allowed)
    return cpu


def _other_threads() -> list[int]:
    """Return the ids of the process's threads other than the calling one (Linux)."""
    try:
        names = os.listdir("/proc/self/task")
    except OSError:  # pragma: no cover - not Linux
        return []
    me = threading.get_native_id()
    return [int(name) for name in names if name.isdigit() and int(name) != me]


def usable_cpus() -> frozenset[int]:
    """Return the CPUs this process may use: those it had before `keep_on_one_cpu`, else its
    current affinity (every CPU where affinity is not available)."""
    if _allowed_before_pin is not None:
        return _allowed_before_pin
    try:
        return frozenset(os.sched_getaffinity(0))
    except AttributeError:  # pragma: no cover - not Linux
        return frozenset(range(os.cpu_count() or 1))


def unpin() -> None:
    """Let the calling process (a forked worker) run on every usable CPU again."""
    with contextlib.suppress(AttributeError, OSError):  # not Linux, or refused
        os.sched_setaffinity(0, usable_cpus())
