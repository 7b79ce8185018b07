"""Block-level GPU kernel simulation and its work-group parallel form (001; docs/models.md 7).

The analytic model (volkov.py, (4.1)-(4.4)) treats a kernel as one stream of warps at the
rate W_Th = min(occupancy / Lat_bound, Th_bound) per SM. The detailed mode simulates what
that formula averages over:

* a **block scheduler** hands blocks to SMs: the first wave round robin (block i to SM
  i mod SMs), then each block to the SM slot that frees first, ties to the lower SM index
  and slot; an SM holds `resident_blocks` blocks at once (the occupancy calculator's limit);
* each **SM** runs its resident warps. A warp's work is cut into `segments` equal segments;
  a segment occupies the SM's busiest resource (the largest term of (4.4): CUDA cores,
  schedulers, the SM's share of global memory bandwidth (4.5), ...) for d / segments cycles,
  first come first served, and the warp's next segment can start Lat / segments cycles after
  this one started (the dependent latency of the warp's own chain). A block ends when its
  last warp does, and frees its slot for the next block.

In steady state a deterministic closed loop of n warps through one server and a delay runs
at exactly min(n / Lat, 1 / d) warps per cycle, which is (4.3); the detailed mode therefore
agrees with (4.1) where Volkov's assumptions hold (many full waves, identical blocks), and
departs from it where they do not: the last, partial wave (the tail), blocks of unequal work
(`block_work`), a warp's wait for its block's slowest sibling, block launch cycles.
Global memory is the per-SM partition of (4.5), as in the analytic model, so SMs share no
resource between block boundaries; the shared component is the block scheduler.

**Work-group parallel simulation (001, section III-B).** The SMs are the parallel
components; they are split over worker processes (forked, so the hot loop runs outside the
GIL: Python threads would serialise it). An SM runs freely until one of its blocks ends,
the work-group boundary of 001, and only there meets the scheduler. 001 lets threads run
ahead and accepts a cycle error (0.05-5.78 %); here the scheduler uses a conservative
lookahead instead, so the parallel result is identical to the sequential one: in each round
it serves the waiting SMs in (time, SM) order while their times are below the earliest time
any SM it already served could ask again (that SM's resident blocks cannot end before each
warp's pending start plus its remaining segments' latency; a new block not before its
launch plus its segments' latency). The sequential run is the same algorithm with one
in-process worker, so both give the same floats, and a test checks them against a plain
global-event-list simulation.
"""

from __future__ import annotations

import contextlib
import heapq
import math
import os
import random
import signal
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from multiprocessing.connection import Connection, Pipe
from typing import Any

from simulator.cpus import unpin, usable_cpus

KERNEL_SIM_ERRORS: dict[str, str] = {
    "positive_int": "{name} must be a positive whole number, got {value!r}",
    "non_negative": "{name} must be a non-negative number, got {value!r}",
    "positive": "{name} must be a positive number, got {value!r}",
    "block_work": "blockWork must be a non-empty list of positive numbers (at most {limit})",
    "spread": "blockWorkSpread must be a number in [0, 1), got {value!r}",
    "worker_failed": "a kernel-simulation worker process ended unexpectedly ({reason})",
}

MAX_BLOCK_WORK = 1_000_000
MAX_SEGMENTS = 10_000
DEFAULT_SEGMENTS = 16

# A stop of one SM: the time it waits at, the slots that freed there, and the earliest time
# its resident blocks could end after it (math.inf when none is resident).
Stop = tuple[float, list[int], float]
# Blocks handed to one SM at one time, and the time before which it starts identical blocks
# on its own: (SM, time, [(block, work, slot), ...], horizon).
Service = tuple[int, float, list[tuple[int, float, int]], float]


@dataclass(frozen=True)
class DetailedKernel:
    """One kernel launch as the detailed mode sees it (cycles are SM cycles)."""

    sms: int
    resident_blocks: int
    warps_per_block: int
    blocks: int
    service_cycles: float  # d: the busiest resource's cycles per warp, 1 / Th_bound (4.4)
    latency_cycles: float  # Lat_bound: one warp's dependent latency alone
    segments: int = DEFAULT_SEGMENTS
    block_launch_cycles: float = 0.0
    block_work: tuple[float, ...] = ()  # per-block work multipliers, cycled; () = all 1

    def __post_init__(self) -> None:
        for name in ("sms", "resident_blocks", "warps_per_block", "segments"):
            value = getattr(self, name)
            if not isinstance(value, int) or isinstance(value, bool) or value < 1:
                raise ValueError(KERNEL_SIM_ERRORS["positive_int"].format(name=name, value=value))
        if not isinstance(self.blocks, int) or self.blocks < 0:
            raise ValueError(
                KERNEL_SIM_ERRORS["non_negative"].format(name="blocks", value=self.blocks)
            )
        if self.segments > MAX_SEGMENTS:
            raise ValueError(
                KERNEL_SIM_ERRORS["positive_int"].format(name="segments", value=self.segments)
                + f" (at most {MAX_SEGMENTS})"
            )
        for name in ("service_cycles", "block_launch_cycles"):
            value = getattr(self, name)
            if not math.isfinite(value) or value < 0:
                raise ValueError(KERNEL_SIM_ERRORS["non_negative"].format(name=name, value=value))
        if not math.isfinite(self.latency_cycles) or self.latency_cycles <= 0:
            raise ValueError(
                KERNEL_SIM_ERRORS["positive"].format(
                    name="latency_cycles", value=self.latency_cycles
                )
            )
        if len(self.block_work) > MAX_BLOCK_WORK or any(
            not math.isfinite(w) or w <= 0 for w in self.block_work
        ):
            raise ValueError(KERNEL_SIM_ERRORS["block_work"].format(limit=MAX_BLOCK_WORK))

    @property
    def blocks_per_wave(self) -> int:
        """Return the blocks resident on the whole GPU at once (SMs x resident blocks)."""
        return self.sms * self.resident_blocks

    @property
    def waves(self) -> int:
        """Return ceil(blocks / blocks per wave)."""
        return -(-self.blocks // self.blocks_per_wave)

    def work(self, block: int) -> float:
        """Return block `block`'s work multiplier."""
        return self.block_work[block % len(self.block_work)] if self.block_work else 1.0

    @property
    def segment_service(self) -> float:
        """Return one segment's cycles on the busiest resource at work 1."""
        return self.service_cycles / self.segments

    @property
    def segment_cycle(self) -> float:
        """Return the cycles from one segment's start to the next's at work 1 (a warp alone)."""
        return max(self.latency_cycles, self.service_cycles) / self.segments

    def min_block_cycles(self) -> float:
        """Return a lower bound on any block's duration from its launch: its segments' latency."""
        least = min(self.block_work) if self.block_work else 1.0
        return self.segments * self.segment_cycle * least


@dataclass(frozen=True)
class SmFigures:
    """What one SM did: busy cycles of its busiest resource, blocks run, when it ended."""

    busy_cycles: float
    blocks: int
    end_cycles: float


@dataclass(frozen=True)
class BlockRun:
    """Where and when one block ran (cycles)."""

    block: int
    sm: int
    slot: int
    start: float
    end: float


@dataclass(frozen=True)
class DetailedRun:
    """The detailed simulation's answer for one kernel launch."""

    cycles: float
    sms: tuple[SmFigures, ...]
    rounds: int
    workers: int
    placements: tuple[BlockRun, ...] | None = field(default=None, repr=False)

    @property
    def busy_fractions(self) -> tuple[float, ...]:
        """Return each SM's busy cycles over the kernel's cycles."""
        if self.cycles <= 0:
            return tuple(0.0 for _ in self.sms)
        return tuple(sm.busy_cycles / self.cycles for sm in self.sms)


class _Sm:
    """One SM: its resident warps in a first-come-first-served queue for the busiest resource.

    Warps wait in `arrivals` as (time, sequence, warp) with warp = [block record, segments
    left, service per segment, cycle per segment]; ended blocks wait in `ends` as (time, slot,
    record) until `advance` hands their slots back. A block record is [block, slot, start,
    warps left, end]; its block is -1 until the scheduler numbers it (identical blocks).
    """

    __slots__ = (
        "arrivals",
        "blocks",
        "busy",
        "end",
        "ends",
        "free",
        "index",
        "placements",
        "sequence",
    )

    def __init__(self, index: int, record: bool) -> None:
        self.index = index
        self.arrivals: list[tuple[float, int, list[Any]]] = []
        self.ends: list[tuple[float, int, list[Any]]] = []
        self.free = 0.0
        self.busy = 0.0
        self.sequence = 0
        self.blocks = 0
        self.end = 0.0
        self.placements: list[BlockRun] | None = [] if record else None

    def add_block(
        self, kernel: DetailedKernel, block: int, work: float, slot: int, now: float
    ) -> None:
        """Start `block` in `slot` at `now`: its warps arrive after the block launch cycles."""
        service = kernel.segment_service * work
        cycle = kernel.segment_cycle * work
        start = now + kernel.block_launch_cycles
        record: list[Any] = [block, slot, now, kernel.warps_per_block, start]
        self.blocks += 1
        for _ in range(kernel.warps_per_block):
            self.sequence += 1
            heapq.heappush(
                self.arrivals, (start, self.sequence, [record, kernel.segments, service, cycle])
            )

    def advance(self, kernel: DetailedKernel, horizon: float) -> tuple[Stop | None, int]:
        """Run to the next block end at or after `horizon`, starting a new identical block in
        every slot that frees before it; return (the stop or None when idle, blocks started)."""
        arrivals = self.arrivals
        ends = self.ends
        pop = heapq.heappop
        push = heapq.heappush
        started = 0
        while True:
            free = self.free
            busy = self.busy
            sequence = self.sequence
            while arrivals:
                if ends and ends[0][0] <= arrivals[0][0]:
                    break
                arrival, _, warp = pop(arrivals)
                start = arrival if arrival > free else free
                service = warp[2]
                free = start + service
                busy += service
                following = start + warp[3]
                left = warp[1] - 1
                if left:
                    warp[1] = left
                    sequence += 1
                    push(arrivals, (following, sequence, warp))
                    continue
                record = warp[0]
                if following > record[4]:
                    record[4] = following
                record[3] -= 1
                if not record[3]:
                    push(ends, (record[4], record[1], record))
            self.free = free
            self.busy = busy
            self.sequence = sequence
            if not ends:
                return None, started
            time = ends[0][0]
            self.end = time
            freed = []
            while ends and ends[0][0] == time:
                _, slot, record = pop(ends)
                freed.append(slot)
                if self.placements is not None:
                    self.placements.append(
                        BlockRun(
                            block=record[0], sm=self.index, slot=slot, start=record[2], end=time
                        )
                    )
            if time >= horizon:
                return (time, freed, self._earliest_end()), started
            for slot in freed:
                self.add_block(kernel, -1, 1.0, slot, time)
            started += len(freed)

    def _earliest_end(self) -> float:
        """Return a lower bound on the next block end: a block ends no sooner than each of its
        warps' pending start plus the latency of its remaining segments."""
        bound = self.ends[0][0] if self.ends else math.inf
        by_block: dict[int, float] = {}
        for arrival, _, warp in self.arrivals:
            record = warp[0]
            key = id(record)
            by_block[key] = max(by_block.get(key, record[4]), arrival + warp[1] * warp[3])
        return min(bound, *by_block.values()) if by_block else bound

    def figures(self) -> SmFigures:
        """Return this SM's figures."""
        return SmFigures(busy_cycles=self.busy, blocks=self.blocks, end_cycles=self.end)


# What a group answers for one SM: (SM, its stop or None when idle, blocks it started itself).
Answer = tuple[int, "Stop | None", int]


class _SmGroup:
    """The SMs one worker simulates (all of them in a sequential run)."""

    def __init__(self, kernel: DetailedKernel, indices: Sequence[int], record: bool) -> None:
        self.kernel = kernel
        self.sms = {index: _Sm(index, record) for index in indices}

    def serve(self, services: Sequence[Service]) -> list[Answer]:
        """Give each SM its blocks, run it on (see `_Sm.advance`), return what it did."""
        answers: list[Answer] = []
        for index, now, blocks, horizon in services:
            sm = self.sms[index]
            for block, work, slot in blocks:
                sm.add_block(self.kernel, block, work, slot, now)
            stop, started = sm.advance(self.kernel, horizon)
            answers.append((index, stop, started))
        return answers

    def finish(self) -> dict[int, tuple[SmFigures, list[BlockRun] | None]]:
        """Return each SM's figures and block placements."""
        return {index: (sm.figures(), sm.placements) for index, sm in self.sms.items()}


class _WorkersUnavailable(Exception):
    """A forked worker did not report ready in time; the run goes on in this process."""


# How long a forked worker may take to report ready. Forking a process that has other
# threads (V8's, a test runner's) can leave a lock held for ever in the child; a worker
# that does not answer is killed and the run is simulated here, with the same result.
READY_TIMEOUT_S = 20.0


class _Workers:
    """SM groups in forked worker processes, spoken to over pipes.

    The workers are plain `os.fork` children, not `multiprocessing.Process`es: a forked
    child runs only `_worker_main` and leaves with `os._exit`, so none of multiprocessing's
    start-up and exit work (closing stdin, flushing streams, atexit, logging) can meet a
    lock another thread of this process held at the fork.
    """

    def __init__(
        self, kernel: DetailedKernel, groups: Sequence[Sequence[int]], record: bool
    ) -> None:
        self.connections: list[Connection] = []
        self.pids: list[int] = []
        self.exit_codes: dict[int, int] = {}
        self.owner: dict[int, int] = {}
        for number, indices in enumerate(groups):
            parent, child = Pipe()
            pid = os.fork()
            if pid == 0:  # the worker
                code = 0
                try:
                    parent.close()
                    for earlier in self.connections:  # so that their workers see EOF
                        earlier.close()
                    _worker_main(child, kernel, list(indices), record)
                except BaseException:
                    code = 1
                finally:
                    os._exit(code)
            child.close()
            self.connections.append(parent)
            self.pids.append(pid)
            for index in indices:
                self.owner[index] = number
        for connection in self.connections:
            ready = False
            with contextlib.suppress(EOFError, OSError):
                ready = connection.poll(READY_TIMEOUT_S) and connection.recv() == ("ready", None)
            if not ready:
                self.close()
                raise _WorkersUnavailable

    def serve(self, services: Sequence[Service]) -> list[Answer]:
        """Send each worker its SMs' services at once, then gather every answer."""
        batches: list[list[Service]] = [[] for _ in self.connections]
        for service in services:
            batches[self.owner[service[0]]].append(service)
        busy = [n for n, batch in enumerate(batches) if batch]
        for number in busy:
            self.connections[number].send(("serve", batches[number]))
        answers: list[Answer] = []
        for number in busy:
            answers.extend(self._receive(number))
        return answers

    def finish(self) -> dict[int, tuple[SmFigures, list[BlockRun] | None]]:
        """Collect every worker's figures and end the workers."""
        for connection in self.connections:
            connection.send(("finish", None))
        merged: dict[int, tuple[SmFigures, list[BlockRun] | None]] = {}
        for number in range(len(self.connections)):
            merged.update(self._receive(number))
        self.close()
        return merged

    def _receive(self, number: int) -> Any:
        try:
            kind, payload = self.connections[number].recv()
        except (EOFError, OSError) as error:
            self.close()
            code = self.exit_codes.get(self.pids[number])
            reason = str(error) or f"exit code {code}"
            raise RuntimeError(KERNEL_SIM_ERRORS["worker_failed"].format(reason=reason)) from None
        if kind == "error":
            self.close()
            raise RuntimeError(KERNEL_SIM_ERRORS["worker_failed"].format(reason=payload))
        return payload

    def close(self) -> None:
        """End every worker: each leaves on EOF; one still there after a second is killed."""
        for connection in self.connections:
            connection.close()
        deadline = time.monotonic() + 1.0
        for pid in self.pids:
            if pid in self.exit_codes:
                continue
            while True:
                done, status = os.waitpid(pid, os.WNOHANG)
                if done:
                    break
                if time.monotonic() > deadline:
                    with contextlib.suppress(ProcessLookupError):
                        os.kill(pid, signal.SIGKILL)
                    _, status = os.waitpid(pid, 0)
                    break
                time.sleep(0.005)
            self.exit_codes[pid] = os.waitstatus_to_exitcode(status)


def _worker_main(
    connection: Connection, kernel: DetailedKernel, indices: list[int], record: bool
) -> None:
    """Serve one SM group over `connection` until told to finish (runs in a forked process)."""
    connection.send(("ready", None))
    unpin()
    group = _SmGroup(kernel, indices, record)
    try:
        while True:
            command, payload = connection.recv()
            if command == "serve":
                connection.send(("ok", group.serve(payload)))
            else:
                connection.send(("ok", group.finish()))
                return
    except EOFError:
        return
    except Exception as error:  # pragma: no cover - reported to the scheduler, never expected
        connection.send(("error", f"{type(error).__name__}: {error}"))
    finally:
        connection.close()
        os._exit(0)


def available_cores() -> int:
    """Return the cores worker processes may run on (those of the run before it was pinned
    to one CPU for V8, simulator.cpus)."""
    return len(usable_cpus())


def _groups(sms: int, workers: int) -> list[list[int]]:
    """Split SM indices round robin over `workers` groups (neighbouring SMs apart, so each
    group gets its share of the first wave and of the tail)."""
    return [list(range(number, sms, workers)) for number in range(workers)]


def simulate_kernel(
    kernel: DetailedKernel,
    *,
    workers: int = 1,
    record_placements: bool = False,
    progress: Callable[[float], None] | None = None,
) -> DetailedRun:
    """Return the block-level simulation of `kernel`, over `workers` processes (1: here).

    The result does not depend on `workers` (see the module docstring); `workers` is capped
    at the number of SMs.
    """
    if not isinstance(workers, int) or isinstance(workers, bool) or workers < 1:
        raise ValueError(KERNEL_SIM_ERRORS["positive_int"].format(name="workers", value=workers))
    workers = min(workers, kernel.sms)
    groups = _groups(kernel.sms, workers)
    pool: _SmGroup | _Workers
    if workers == 1:
        pool = _SmGroup(kernel, groups[0], record_placements)
    else:
        try:
            pool = _Workers(kernel, groups, record_placements)
        except _WorkersUnavailable:
            workers = 1
            pool = _SmGroup(kernel, range(kernel.sms), record_placements)
    try:
        rounds = _schedule(kernel, pool, progress)
        figures = pool.finish()
    finally:
        if isinstance(pool, _Workers):
            pool.close()
    sms = tuple(figures[index][0] for index in range(kernel.sms))
    placements = None
    if record_placements:
        merged = [run for index in range(kernel.sms) for run in figures[index][1] or ()]
        if not kernel.block_work:
            merged = _numbered(merged)
        placements = tuple(sorted(merged, key=lambda run: run.block))
    cycles = max((sm.end_cycles for sm in sms), default=0.0)
    return DetailedRun(
        cycles=cycles, sms=sms, rounds=rounds, workers=workers, placements=placements
    )


def _schedule(
    kernel: DetailedKernel,
    pool: _SmGroup | _Workers,
    progress: Callable[[float], None] | None,
) -> int:
    """Run the block scheduler (001's work distributor) to the end; return the rounds used.

    Each round serves waiting SMs in (time, SM) order. With blocks of unequal work every
    block is handed out here, and a round stops before the first SM whose time is not below
    the earliest time a served SM could ask again (the conservative lookahead). With
    identical blocks only the count matters while enough remain: every slot that frees
    before the horizon H is sure to get a block in any order, so the SMs start blocks on
    their own until H, with H chosen so that even slots freeing as fast as a block can run
    could not ask for more blocks than remain; the blocks are numbered afterwards in the
    order the scheduler would have handed them out.
    """
    identical = not kernel.block_work
    per_wave = kernel.blocks_per_wave
    first = min(kernel.blocks, per_wave)
    initial: dict[int, list[tuple[int, float, int]]] = {}
    for block in range(first):
        initial.setdefault(block % kernel.sms, []).append(
            (block, kernel.work(block), block // kernel.sms)
        )
    assigned = first
    new_block_bound = kernel.block_launch_cycles + kernel.min_block_cycles()
    pending: dict[int, Stop] = {}
    services: list[Service] = [
        (index, 0.0, blocks, 0.0) for index, blocks in sorted(initial.items())
    ]
    rounds = 0
    while services:
        rounds += 1
        for index, stop, started in pool.serve(services):
            assigned += started
            if stop is not None:
                pending[index] = stop
        if progress is not None and kernel.blocks:
            progress(assigned / kernel.blocks)
        order = sorted(pending, key=lambda sm: (pending[sm][0], sm))
        services = []
        waiting = sum(len(pending[index][1]) for index in order)
        slack = kernel.blocks - assigned - waiting
        if identical and order and slack >= 2 * per_wave:
            horizon = pending[order[0]][0] + new_block_bound * (slack / per_wave - 1)
            for index in order:
                now, freed, _ = pending[index]
                if now >= horizon:
                    break
                services.append((index, now, [(-1, 1.0, slot) for slot in freed], horizon))
                assigned += len(freed)
                del pending[index]
            continue
        horizon = math.inf
        for index in order:
            now, freed, earliest = pending[index]
            if now >= horizon:
                break
            given = []
            for slot in freed:
                if assigned >= kernel.blocks:
                    break
                given.append((assigned if not identical else -1, kernel.work(assigned), slot))
                assigned += 1
            if given:
                earliest = min(earliest, now + new_block_bound)
            horizon = min(horizon, earliest)
            services.append((index, now, given, 0.0))
            del pending[index]
    return rounds


def _numbered(placements: list[BlockRun]) -> list[BlockRun]:
    """Return identical blocks' placements numbered as the scheduler hands blocks out: the
    first wave round robin (slot-major), then by (time, SM, slot)."""

    def order(run: BlockRun) -> tuple[float, int, int]:
        return (run.start, run.slot, run.sm) if run.start == 0.0 else (run.start, run.sm, run.slot)

    ordered = sorted(placements, key=order)
    return [
        BlockRun(block=number, sm=run.sm, slot=run.slot, start=run.start, end=run.end)
        for number, run in enumerate(ordered)
    ]


def spread_work(blocks: int, spread: float, seed: int) -> tuple[float, ...]:
    """Return per-block work multipliers 1 + spread * u, u uniform in [-1, 1), seeded."""
    if not (isinstance(spread, int | float) and 0 <= spread < 1):
        raise ValueError(KERNEL_SIM_ERRORS["spread"].format(value=spread))
    rng = random.Random(seed)
    return tuple(1.0 + spread * (2.0 * rng.random() - 1.0) for _ in range(blocks))
