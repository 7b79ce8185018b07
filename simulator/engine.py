"""Discrete-event kernel: simulated processes run ordinary sequential Python on greenlets.

(Or as generators: an application model the runner can compile into a generator function
runs its processes stackless, `StacklessProcess`, each one a generator frame instead of a
greenlet's saved stack; its semantics are the greenlets'.)

KnightSim (002, chapter 2) runs every simulated element as a context with its own stack that
`pause`s for a latency, `await`s an event count and `advance`s one; here a context is a
greenlet, so an application model is plain Python without `yield`. One event queue ordered
by (time, sequence) drives everything: an entry is `(time, seq, callback, argument)`, where
the callback is either a process's `switch` (resume it) or a plain function run in the
scheduler (link transfers, deliveries). The sequence number makes equal-time events run in
the order they were scheduled, so a run is deterministic; `Engine.random` is the run's only
random source. When the queue empties while processes are still blocked, `Engine.run`
raises `DeadlockError` naming each blocked process and what it waits for.

Primitives: `Engine.pause`, `EventCount` (await / advance), `Mailbox` (put / blocking get
with a filter) and `Resource` (FIFO server with a capacity, for callbacks or processes).
"""

from __future__ import annotations

import contextlib
import math
import random
from collections import deque
from collections.abc import Callable, Generator
from heapq import heappop, heappush
from typing import TYPE_CHECKING, Any

from greenlet import GreenletExit, getcurrent, greenlet

from simulator import hotpath
from simulator.errors import DeadlockError

NOT_IN_PROCESS = "{primitive} can only be called from inside a simulated process"
NEGATIVE_DELAY = "a delay cannot be negative or NaN (got {delay!r})"
CLOSE_ATTEMPTS = 8  # GreenletExits `Engine.close` throws into a process that keeps blocking

Callback = Callable[[Any], object]

speedups = hotpath.speedups
"""`simulator._speedups` (the C core and the chunk cache) when in use, else None (the choice
is simulator.hotpath's)."""


class Process(greenlet):
    """A simulated process: a greenlet running `body(*args)` to completion.

    `waiting` describes what a blocked process waits for (None while it runs or pauses);
    `data` is free for the layer above (the sim API keeps its per-process record there).
    """

    __slots__ = ("args", "body", "data", "engine", "finish_time", "finished", "name", "waiting")

    def __init__(
        self, engine: Engine, name: str, body: Callable[..., object], args: tuple[object, ...]
    ) -> None:
        super().__init__()
        self.engine = engine
        self.name = name
        self.body = body
        self.args = args
        self.waiting: str | None = None
        self.finished = False
        self.finish_time: float | None = None
        self.data: Any = None

    def run(self, _start: object = None) -> None:  # greenlet entry point
        """Run the body; an exception propagates to the scheduler and ends the run."""
        self.body(*self.args)
        engine = self.engine
        self.finished = True
        self.finish_time = engine.now
        engine._live -= 1
        if engine.on_process_end is not None:
            engine.on_process_end(self)

    def __repr__(self) -> str:
        return f"<Process {self.name}>"


class _PythonStacklessCore:
    """What the C core's StacklessCore holds and does (its stand-in when the C core is not
    built; the pure-Python core runs no stackless process, so one is never made)."""

    __slots__ = (
        "_sim",
        "carrier",
        "data",
        "engine",
        "finish_time",
        "finished",
        "generator",
        "name",
        "on_error",
        "waiting",
    )

    def __init__(
        self,
        engine: Engine,
        name: str,
        generator: Generator[object, object, None],
        sim: object = None,
    ) -> None:
        raise RuntimeError("stackless processes need the C core (simulator._speedups)")

    def _resume(self, value: object) -> None:
        raise RuntimeError("stackless processes need the C core (simulator._speedups)")

    _throw = _resume


if TYPE_CHECKING:
    _StacklessCore = _PythonStacklessCore
else:
    _StacklessCore = hotpath.choose(_PythonStacklessCore, "StacklessCore")


class StacklessProcess(_StacklessCore):
    """A simulated process without a greenlet of its own: a generator the loop resumes.

    A greenlet keeps its saved C stack and a 16 KiB frame-stack chunk for as long as it
    waits; a generator keeps only its frame. The application model is
    compiled into a generator function (simulator.sandbox.stackless) whose `sim` calls yield:
    a call that can wait without a greenlet (a computation, a receive, a collective: see
    api.StacklessSim) arranges the process's wake-up (an event, a mailbox's or an event
    count's waiter) and yields `WAIT`; at that event the loop resumes the generator
    (StacklessCore, in C) with what `sim._resumed` gives back (the computation's end, or what
    the call's continuation makes of the value). Any other call runs on a greenlet borrowed
    for the call (`call`), which the process gives back when the call returns. Only the C
    core runs stackless processes: it hands them to the loop's greenlet (`Core.hand_over`),
    the only one that resumes them, so none runs on another's stack.

    `on_error(error, name)` gives the error to report for what the model raised (None: the
    error itself).
    """

    __slots__ = ()

    if TYPE_CHECKING:  # StacklessCore's fields (made by its constructor, in C)
        engine: Engine
        name: str
        generator: Generator[object, object, None]
        _sim: object
        finished: bool
        finish_time: float | None
        data: Any
        carrier: _Carrier | None  # the greenlet of a call that blocked
        on_error: Callable[[BaseException, str], BaseException | None] | None
        waiting: str | None  # what it waits for in a mailbox or an event count

    def waits_for(self) -> str | None:
        """What the process waits for: in a mailbox or an event count, or in a borrowed
        greenlet's call."""
        carrier = self.carrier
        return self.waiting if carrier is None else carrier.waiting

    def fail(self, error: BaseException) -> None:
        """Resume the process by raising `error` where it waits (its borrowed call failed)."""
        self._throw(error)

    def _failed(self, error: BaseException) -> None:
        """Raise what to report for `error`, which the model raised (StacklessCore's call)."""
        reported = None if self.on_error is None else self.on_error(error, self.name)
        if reported is None:
            raise error
        raise reported from None

    def call(self, function: Callable[..., object], *args: object, **kwargs: object) -> object:
        """Return `function(*args, **kwargs)`, a call that may block, for this process; WAIT
        when it blocked: it then ran on a greenlet borrowed for it, which resumes the
        process with its value (or its exception) when the call returns."""
        if isinstance(getcurrent(), Process):  # already on a greenlet: block as it does
            return function(*args, **kwargs)
        carrier = _Carrier(self, function, args, kwargs)
        result = carrier.switch()
        if carrier.dead:  # it returned without blocking, or after, before the loop ran on
            return result
        carrier.inline = False
        self.carrier = carrier
        return WAIT

    def close(self) -> None:
        """End the process where it waits (Engine.close): its call's greenlet, its frame."""
        carrier = self.carrier
        if carrier is not None:
            for _ in range(CLOSE_ATTEMPTS):
                if not carrier or carrier.dead:
                    break
                with contextlib.suppress(Exception):
                    carrier.throw()
            self.carrier = None
        with contextlib.suppress(Exception):  # RuntimeError when a `finally` waits again
            self.generator.close()

    def __repr__(self) -> str:
        return f"<StacklessProcess {self.name}>"


class _Carrier(Process):
    """The greenlet a stackless process borrows for a call that may block (`call`)."""

    __slots__ = ("inline", "kwargs", "owner")

    def __init__(
        self,
        owner: StacklessProcess,
        function: Callable[..., object],
        args: tuple[object, ...],
        kwargs: dict[str, object],
    ) -> None:
        super().__init__(owner.engine, owner.name, function, args)
        self.owner = owner
        self.kwargs = kwargs
        self.data = owner.data
        self.inline = True  # the process still waits for the value at its call

    def run(self, _start: object = None) -> Any:
        """Make the call; once the process has moved on (it yielded WAIT), hand it the value
        through the loop, before any other event."""
        try:
            result = self.body(*self.args, **self.kwargs)
        except GreenletExit:
            raise
        except BaseException as error:
            if self.inline:
                raise
            self.owner.carrier = None
            self.engine.hand_over(self.owner.fail, error)
            return None
        if self.inline:
            return result
        self.owner.carrier = None
        self.engine.hand_over(self.owner, result)
        return None


class _PythonCore:
    """The event queue, the clock and the scheduler, in Python (the C core's reference).

    Events are kept as KnightSim keeps contexts (002, section 2.2.1): in batches, one per
    distinct time, each a flat list `[target, argument, target, argument, ...]` in the
    order they were scheduled, with a heap of the distinct times. That is exactly the
    (time, sequence) order, and a batch of many processes waking at the same time costs one
    heap operation. A target is a Process to resume or start, or a callback to call.

    As in KnightSim, a process that pauses or blocks runs the scheduler itself: it takes the
    next events and jumps straight to the next process to run (one greenlet switch, none when
    it is the next to run itself) instead of going through a central loop. The loop in
    `_run_loop` takes over only when a process finishes, a new one starts or the queue runs
    dry. `simulator/_speedups.c` implements the same core with a (time, sequence) heap whose
    entries each head a chain of the events queued behind them at their time, found through
    a small cache of times (a time it forgot gets a second heap entry: the order is the same).
    """

    __slots__ = (
        "_batch",
        "_batches",
        "_failure",
        "_index",
        "_live",
        "_loop",
        "_start",
        "_times",
        "_until",
        "events",
        "now",
    )

    def __init__(self) -> None:
        self.now = 0.0
        self.events = 0
        self._batch: list[Any] = []  # the batch at `now`, run from `_index` on
        self._index = 0
        self._batches: dict[float, list[Any]] = {}  # later batches by time
        self._times: list[float] = []  # heap of the keys of `_batches`
        self._loop: greenlet | None = None
        self._live = 0
        self._until = math.inf
        self._failure: BaseException | None = None
        self._start: Process | None = None

    def _push(self, when: float, target: object, arg: object) -> None:
        if when == self.now:
            batch = self._batch
        else:
            batch = self._batches.get(when)  # type: ignore[assignment]
            if batch is None:
                batch = self._batches[when] = []
                heappush(self._times, when)
        batch.append(target)
        batch.append(arg)

    def spawn_stackless(
        self, name: str, generator: Generator[object, object, None], sim: object = None
    ) -> StacklessProcess:
        """Return a new stackless process that starts running `generator` at the current
        time (the C core only: `stackless`; this core's raises); `sim`, the model's sim
        object, ends its computations as it resumes (api.StacklessSim). The C core's makes
        the process without its class's call."""
        # made only on the C core (StacklessCore's constructor refuses another engine)
        proc = StacklessProcess(self, name, generator, sim)  # type: ignore[arg-type]
        self.processes.append(proc)  # type: ignore[attr-defined]
        self._live += 1
        self._push(self.now, proc, None)
        return proc

    @property
    def pending(self) -> int:
        """Return how many events are scheduled and not yet run."""
        waiting = sum(len(batch) for batch in self._batches.values())
        return (len(self._batch) - self._index + waiting) // 2

    def schedule(self, delay: float, callback: Callback, arg: object = None) -> None:
        """Run `callback(arg)` `delay` seconds from now; it must not block."""
        if not delay >= 0.0:
            raise ValueError(NEGATIVE_DELAY.format(delay=delay))
        self._push(self.now + delay, callback, arg)

    def wake(self, proc: Process, value: object = None) -> None:
        """Resume the blocked process `proc` at the current time; `suspend` returns `value`."""
        proc.waiting = None
        self._batch.append(proc)
        self._batch.append(value)

    def pause(self, duration: float) -> None:
        """Let simulated time pass for the calling process (KnightSim `pause`)."""
        if not duration >= 0.0:
            raise ValueError(NEGATIVE_DELAY.format(delay=duration))
        current = getcurrent()
        if current.__class__ is not Process:
            raise RuntimeError(NOT_IN_PROCESS.format(primitive="pause"))
        when = self.now + duration
        # `_push`, inlined: this is the hottest path of a run (one call per computation).
        if when == self.now:
            batch = self._batch
        else:
            batch = self._batches.get(when)  # type: ignore[assignment]
            if batch is None:
                batch = self._batches[when] = []
                heappush(self._times, when)
        batch.append(current)
        batch.append(None)
        self._dispatch(current)

    def suspend(self, waiting: str) -> Any:
        """Block the calling process until someone `wake`s it; return the value it is woken with.

        `waiting` is what the process waits for, reported if the run deadlocks.
        """
        current = getcurrent()
        if current.__class__ is not Process:
            raise RuntimeError(NOT_IN_PROCESS.format(primitive="a blocking call"))
        current.waiting = waiting
        return self._dispatch(current)

    def _dispatch(self, current: Process) -> Any:
        """Run events from inside `current` until it is resumed; return what it is resumed with."""
        while True:
            batch = self._batch
            index = self._index
            if index < len(batch):
                if self.now > self._until:  # `close` ends a run in the middle of a batch
                    break
                self._index = index + 2
            else:
                times = self._times
                if not times or times[0] > self._until:
                    break
                when = heappop(times)
                batch = self._batch = self._batches.pop(when)
                index = 0
                self._index = 2
                self.now = when
            target = batch[index]
            self.events += 1
            if target is current:
                return batch[index + 1]
            if target.__class__ is Process:
                if target:  # started: jump straight to it
                    return target.switch(batch[index + 1])
                # a new greenlet inherits the stack depth of whoever starts it, so starts
                # go through the loop, whose stack is shallow
                self._start = target
                break
            try:
                target(batch[index + 1])
            except BaseException as error:  # a callback failed: the run ends in `run`
                self._failure = error
                break
        if self._loop is None:
            raise RuntimeError("the engine is not running (call Engine.run)")
        return self._loop.switch()

    def _run_loop(self) -> bool:
        """Run events until the queue runs dry (return True) or lies past `_until` (False)."""
        while True:
            batch = self._batch
            index = self._index
            if index < len(batch):
                if self.now > self._until:
                    return False
                self._index = index + 2
            else:
                times = self._times
                if not times:
                    return True
                if times[0] > self._until:
                    self.now = self._until
                    return False
                when = heappop(times)
                batch = self._batch = self._batches.pop(when)
                index = 0
                self._index = 2
                self.now = when
            target = batch[index]
            self.events += 1
            if target.__class__ is Process:
                target.switch(batch[index + 1])  # back when a process ends, starts or runs dry
            else:
                target(batch[index + 1])
            while self._start is not None:
                start, self._start = self._start, None
                start.switch(None)
            if self._failure is not None:
                failure, self._failure = self._failure, None
                raise failure


hotpath.hand_types(process=Process, stackless=StacklessProcess, carrier=_Carrier)

WAIT: object = hotpath.choose(object(), "WAIT")
"""What a stackless process's call gives when the process must wait (it yields it)."""
STACKLESS_CORE = speedups is not None
"""Whether `Engine` runs stackless processes (its core is the C core)."""
ARENA_REGION_BYTES: int = hotpath.choose(0, "ARENA_REGION_BYTES")
"""How much address space the allocator hook maps at a time for object arenas (C core): the
last region's unused part counts in the data limit (`install_allocator_hook`)."""


def install_allocator_hook() -> bool:
    """Make CPython keep freed frame-stack chunks for the next greenlet and take its object
    arenas from regions advised for huge pages (the C core's chunk cache, installed as the
    object-arena allocator); return whether it is installed.

    It changes an allocator hook of the whole process, so only a process that exists to run
    simulations or read their results installs it: the sandbox child
    (simulator.sandbox.child), `--no-sandbox` runs of the command line, the pool's daemon
    whose copies read results (simulator.sandbox.pool), the benchmarks. Importing this module
    leaves it alone.
    Without the C core there is nothing to install. Idempotent.
    """
    if speedups is None:
        return False
    speedups.install_chunk_cache()
    return True


def prefault_arenas(count: int) -> int:
    """Fault in up to `count` object arenas ahead, from the region the allocator hook has
    mapped, and keep them for the next objects (the C core's `prefault_arenas`); return how
    many freed or prefaulted arenas are kept. Nothing without the hook (`install_allocator_hook`)
    or the C core: CPython's own allocator maps arenas as objects need them."""
    if speedups is None:
        return 0
    return int(speedups.prefault_arenas(count))


if TYPE_CHECKING:
    _Core = _PythonCore
    _API = _PythonCore
else:
    _Core = hotpath.choose(_PythonCore, "Core")
    _API = object


class _EngineAPI(_API):
    """What an engine adds to its core: processes, the random source and `run`."""

    __slots__ = ()
    if TYPE_CHECKING:  # slots of the concrete engines, set by their __init__
        random: random.Random
        processes: list[Process]
        on_process_end: Callable[[Process], None] | None

        def hand_over(self, target: object, arg: object) -> None:
            """The C core's: have the loop call `target(arg)` before any other event."""

    def spawn(self, name: str, body: Callable[..., object], *args: object) -> Process:
        """Return a new process that starts running `body(*args)` at the current time."""
        proc = Process(self, name, body, args)  # type: ignore[arg-type]
        if self._loop is not None:
            proc.parent = self._loop
        self.processes.append(proc)
        self._live += 1
        self._push(self.now, proc, None)
        return proc

    @property
    def stackless(self) -> bool:
        """Whether this engine runs stackless processes (its core is the C core)."""
        return hotpath.core_of(self) is not None

    @property
    def current(self) -> Process:
        """Return the process that is running now."""
        current = getcurrent()
        if not isinstance(current, Process):
            raise RuntimeError(NOT_IN_PROCESS.format(primitive="Engine.current"))
        return current

    def run(self, until: float | None = None) -> float:
        """Run events until the queue is empty (or past `until`); return the final time.

        Raise DeadlockError when the queue runs dry while processes are still blocked; an
        exception raised by a process or a callback propagates out of here.
        """
        if until is not None and not until >= self.now:
            raise ValueError(f"run(until={until!r}) lies before the current time {self.now!r}")
        loop = getcurrent()
        self._loop = loop
        for proc in self.processes:
            if isinstance(proc, Process) and not proc and not proc.dead and proc.parent is not loop:
                proc.parent = loop
        self._until = math.inf if until is None else float(until)
        if not self._run_loop():
            return self.now
        if until is not None and self._live:
            self.now = max(self.now, float(until))
            return self.now
        if self._live:
            blocked = {
                p.name: (p.waits_for() if isinstance(p, StacklessProcess) else p.waiting)
                or "nothing"
                for p in self.processes
                if not p.finished
            }
            raise DeadlockError(blocked, self.now)
        return self.now

    def close(self) -> None:
        """End every process still suspended (after a deadlock, a failure or `run(until=...)`).

        greenlet unwinds each one's stack with GreenletExit, so its `finally` blocks run and
        nothing of the run stays alive: a suspended greenlet in a reference cycle is never
        collected, and a worker running many simulations would keep every blocked stack.
        """
        self._until = -math.inf  # a process that catches GreenletExit cannot run on
        for proc in self.processes:
            if isinstance(proc, StacklessProcess):
                if not proc.finished:
                    proc.close()
                continue
            # a `finally` that blocks again (a pause, a receive) suspends the process anew:
            # throw again, a few times, rather than leave it alive
            for _ in range(CLOSE_ATTEMPTS):
                if not proc or proc.dead:  # never started, or finished
                    break
                # the run is over and its outcome known: what a model's own `finally` raises
                # while unwinding must not replace it
                with contextlib.suppress(Exception):
                    proc.throw()


class Engine(_EngineAPI, _Core):
    """The event queue, the clock and the scheduler (the C core when built, see `speedups`).

    Events run in (time, sequence) order: equal-time events in the order they were
    scheduled, so a run is deterministic; `random` is the run's only random source.
    """

    __slots__ = ("on_process_end", "processes", "random")

    def __init__(self, seed: int = 0) -> None:
        super().__init__()
        self.random = random.Random(seed)
        self.processes = []
        self.on_process_end = None


class PythonEngine(_EngineAPI, _PythonCore):
    """The same engine on the pure-Python core, whether or not the C core is built."""

    __slots__ = ("on_process_end", "processes", "random")

    def __init__(self, seed: int = 0) -> None:
        super().__init__()
        self.random = random.Random(seed)
        self.processes = []
        self.on_process_end = None


class EventCount:
    """A KnightSim event count: processes `await_` a value, others `advance` the count."""

    __slots__ = ("_waiters", "count", "engine", "name")

    def __init__(self, engine: Engine, name: str = "event count") -> None:
        self.engine = engine
        self.name = name
        self.count = 0
        # [value, process] lists, not tuples: the garbage collector untracks a tuple whose items
        # look untrackable, as a suspended greenlet does, and would then never see the cycle
        # engine -> process -> engine once the run is over
        self._waiters: list[list[Any]] = []

    def await_(self, value: int) -> None:
        """Block the calling process until the count reaches `value` (return at once if it has)."""
        if self.count >= value:
            return
        self._waiters.append([value, self.engine.current])
        self.engine.suspend(self._waiting(value))

    def wait(self, proc: StacklessProcess, value: int) -> bool:
        """Have stackless process `proc` wait until the count reaches `value` (`advance`
        wakes it as it does an `await_`); False when it has already."""
        if self.count >= value:
            return False
        proc.waiting = self._waiting(value)
        self._waiters.append([value, proc])
        return True

    def _waiting(self, value: int) -> str:
        return f"{self.name} to reach {value} (now {self.count})"

    def advance(self) -> None:
        """Increment the count and wake every process whose awaited value is now reached."""
        self.count += 1
        if not self._waiters:
            return
        reached = self.count
        still: list[list[Any]] = []
        wake = self.engine.wake
        for waiter in self._waiters:
            if waiter[0] <= reached:
                wake(waiter[1])
            else:
                still.append(waiter)
        self._waiters = still


class _PythonMailboxCore:
    """A mailbox's delivery in Python: the C core's `MailboxCore` (simulator/_speedups.c)
    does the same in C (a message per call)."""

    __slots__ = ("_getters", "_items", "engine")
    if TYPE_CHECKING:
        engine: Engine
        _items: list[Any]
        _getters: list[list[Any]]

    def put(self, item: Any) -> None:
        """Deliver `item`: hand it to the first waiting getter that accepts it, or keep it."""
        getters = self._getters
        for index, (proc, accept) in enumerate(getters):
            if accept is None or accept(item):
                del getters[index]
                self.engine.wake(proc, item)
                return
        self._items.append(item)


if TYPE_CHECKING:
    _MailboxCore = _PythonMailboxCore
else:
    _MailboxCore = hotpath.choose(_PythonMailboxCore, "MailboxCore")


class Mailbox(_MailboxCore):
    """Messages for one process: `put` never blocks, `get` blocks until a matching one arrives.

    Waiting getters are served first come, first served; a message no getter accepts is kept
    in arrival order. `put` is `_MailboxCore`'s (the C core's when it is in use).
    """

    __slots__ = ("name",)

    def __init__(self, engine: Engine, name: str = "mailbox") -> None:
        self.engine = engine
        self.name = name
        # A list, not a deque: a mailbox rarely holds more than a few messages, and an empty
        # deque is several times an empty list's size, for every process.
        self._items = []
        self._getters = []  # [process, accept]: lists, see EventCount

    def __len__(self) -> int:
        return len(self._items)

    def get(self, accept: Callable[[Any], bool] | None = None, waiting: str | None = None) -> Any:
        """Return the oldest message `accept` takes (any when None), blocking until one arrives."""
        items = self._items
        if accept is None:
            if items:
                return items.pop(0)
        else:
            for index, item in enumerate(items):
                if accept(item):
                    del items[index]
                    return item
        current = getcurrent()  # Engine.current's check, inline (a receive per message)
        if current.__class__ is not Process and current.__class__ is not _Carrier:
            raise RuntimeError(NOT_IN_PROCESS.format(primitive="Mailbox.get"))
        self._getters.append([current, accept])
        return self.engine.suspend(waiting or f"a message in {self.name}")

    def take(self, accept: Callable[[Any], bool]) -> Any:
        """Return the oldest message `accept` takes, None when there is none (no waiting)."""
        items = self._items
        for index, item in enumerate(items):
            if accept(item):
                del items[index]
                return item
        return None

    def wait(self, proc: StacklessProcess, accept: Callable[[Any], bool], waiting: str) -> None:
        """Have stackless process `proc` wait for the next message `accept` takes: `put` wakes
        it with the message, as it does a blocked `get`."""
        proc.waiting = waiting
        self._getters.append([proc, accept])


class _PythonResourceCore:
    """A FIFO server's `request` and `release` in Python: the C core's `ResourceCore`
    (simulator/_speedups.c) does the same in C (a message's hop per call)."""

    __slots__ = ("_queue", "capacity", "engine", "users")
    if TYPE_CHECKING:
        engine: Engine
        capacity: int
        users: int
        _queue: deque[tuple[Callback, object]]
        name: str

    def request(self, grant: Callback, arg: object = None) -> None:
        """Call `grant(arg)` once a slot is this requester's (requests are served FIFO)."""
        if self.users < self.capacity:
            self.users += 1
            grant(arg)
        else:
            self._queue.append((grant, arg))

    def release(self) -> None:
        """Give a slot back; the oldest waiting request gets it."""
        if self._queue:
            grant, arg = self._queue.popleft()
            grant(arg)
        elif self.users > 0:
            self.users -= 1
        else:
            raise RuntimeError(f"{self.name} released more often than acquired")


if TYPE_CHECKING:
    _ResourceCore = _PythonResourceCore
else:
    _ResourceCore = hotpath.choose(_PythonResourceCore, "ResourceCore")


class Resource(_ResourceCore):
    """A server with `capacity` slots and a FIFO queue (a link direction, a lock).

    `request(grant, arg)` calls `grant(arg)` when a slot is free (at once if one is);
    `acquire()` is the blocking form for processes. Whoever holds a slot calls `release()`.
    `request` and `release` are `_ResourceCore`'s (the C core's when it is in use).
    """

    __slots__ = ("name",)

    def __init__(self, engine: Engine, name: str = "resource", capacity: int = 1) -> None:
        if capacity < 1:
            raise ValueError("a resource needs a capacity of at least 1")
        self.engine = engine
        self.name = name
        self.capacity = capacity
        self.users = 0
        self._queue = deque()

    @property
    def queued(self) -> int:
        """Return how many requests wait for a slot."""
        return len(self._queue)

    def acquire(self) -> None:
        """Block the calling process until it holds a slot."""
        if self.users < self.capacity:
            self.users += 1
            return
        proc = self.engine.current
        self._queue.append((self.engine.wake, proc))
        self.engine.suspend(f"{self.name} (FIFO, {len(self._queue)} queued)")


# A node's FIFOs are made by the C core's route (simulator/_speedups_transfer.c `new_link`) as
# NodeRuntime.link makes them: it needs the class
hotpath.hand_types(resource=Resource)
