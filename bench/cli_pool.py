"""The command line's pool of started sandbox children (simulator.sandbox.pool) in a benchmark.

A user who has run `python -m simulator run` before has a daemon with a child started for the
next run. A benchmark of the command line has one too, private to it (its own
`XDG_RUNTIME_DIR`), warmed up by one run, and stopped at the end (`private_pool`). After each
pooled run, `settle` waits until the daemon has prepared its next child, so that the
preparation never runs beside another command being timed (bench_userpath: SimPy's script
measured 118 ms beside it instead of 73).
"""

from __future__ import annotations

import contextlib
import os
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator, Sequence
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parent.parent


def _cpu_ticks(pid: int) -> int:
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except (FileNotFoundError, ProcessLookupError, IndexError):  # gone while read
        return 0
    return int(fields[11]) + int(fields[12])


def _descendants(pid: int) -> list[int]:
    found: list[int] = []
    for task in Path(f"/proc/{pid}/task").glob("*"):
        with contextlib.suppress(FileNotFoundError):
            for child in (task / "children").read_text().split():
                found += [int(child), *_descendants(int(child))]
    return found


def settle(timeout_s: float = 5.0) -> None:
    """Wait until this benchmark's pool daemon and its children use no CPU for 0.1 s."""
    runtime = os.environ.get("XDG_RUNTIME_DIR", "")
    daemons = subprocess.run(
        ["pgrep", "-f", f"simulator.sandbox.pool serve {runtime}"], capture_output=True, text=True
    ).stdout.split()
    settle_processes([int(pid) for pid in daemons], timeout_s)


def settle_processes(roots: Sequence[int], timeout_s: float = 5.0) -> None:
    """Wait until the processes `roots` and their descendants use no CPU for 0.1 s (a queue
    worker that has started its next run's child, bench_queue.py)."""
    pids = [*roots, *(child for pid in roots for child in _descendants(pid))]
    deadline = time.monotonic() + timeout_s
    before = sum(map(_cpu_ticks, pids))
    while time.monotonic() < deadline:
        time.sleep(0.1)
        now = sum(map(_cpu_ticks, pids))
        if now == before:
            return
        before = now


@contextlib.contextmanager
def private_pool(warm_up: Sequence[str]) -> Iterator[None]:
    """Have a pool private to this benchmark running (the environment's XDG_RUNTIME_DIR and
    PARASIM_CHILD_POOL set for every command it starts), started by running `warm_up` (a
    sandboxed `python -m simulator run`) once; stop it and restore the environment after."""
    if str(REPO_ROOT) not in sys.path:
        sys.path.insert(0, str(REPO_ROOT))
    from simulator.sandbox import served

    runtime = Path(tempfile.mkdtemp(prefix="pool-", dir="/tmp"))  # a socket path is short
    saved = {name: os.environ.get(name) for name in ("XDG_RUNTIME_DIR", served.POOL_SWITCH)}
    os.environ.update({"XDG_RUNTIME_DIR": str(runtime), served.POOL_SWITCH: "1"})
    try:
        path = served.socket_path()
        if path is not None:
            subprocess.run(list(warm_up), cwd=REPO_ROOT, check=True, capture_output=True)
            deadline = time.monotonic() + 30
            while not os.path.exists(path) and time.monotonic() < deadline:
                time.sleep(0.1)
            settle()
        yield
    finally:
        subprocess.run(["pkill", "-TERM", "-f", f"simulator.sandbox.pool serve {runtime}"])
        shutil.rmtree(runtime, ignore_errors=True)
        for name, value in saved.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value
