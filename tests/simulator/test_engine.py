"""The discrete-event kernel: ordering, KnightSim primitives, mailboxes, FIFO, deadlock."""

from __future__ import annotations

import collections
import gc
import json
import os
import random
import subprocess
import sys
import weakref
from pathlib import Path

import pytest

from simulator import runner
from simulator.engine import (
    NOT_IN_PROCESS,
    Engine,
    EventCount,
    Mailbox,
    PythonEngine,
    Resource,
    _PythonMailboxCore,
    _PythonResourceCore,
    install_allocator_hook,
    speedups,
)
from simulator.errors import DeadlockError
from simulator.sandbox import entry_for
from simulator.sandbox.served import DEFAULT_ENTRY
from tests.simulator.huge_pages import KERNEL_HUGE_PAGES

# Every test runs on both cores: the pure-Python reference and the C core when it is built.
CORES = [pytest.param(PythonEngine, id="python-core")]
if speedups is not None:
    CORES.append(pytest.param(Engine, id="c-core"))


@pytest.fixture(params=CORES)
def engine_class(request: pytest.FixtureRequest) -> type[Engine]:
    return request.param  # type: ignore[no-any-return]


@pytest.fixture
def engine(engine_class: type[Engine]) -> Engine:
    return engine_class(seed=1)


@pytest.fixture
def log() -> list[tuple[float, str]]:
    return []


def test_it_resumes_paused_processes_in_time_order(engine: Engine, log: list) -> None:
    def worker(name: str, step: float) -> None:
        for _ in range(3):
            engine.pause(step)
            log.append((engine.now, name))

    engine.spawn("a", worker, "a", 1.0)
    engine.spawn("b", worker, "b", 1.5)
    assert engine.run() == 4.5
    assert log == [
        (1.0, "a"),
        (1.5, "b"),
        (2.0, "a"),
        (3.0, "b"),
        (3.0, "a"),
        (4.5, "b"),
    ]


def test_it_runs_equal_time_events_in_the_order_they_were_scheduled(
    engine: Engine, log: list
) -> None:
    def worker(name: str) -> None:
        log.append((engine.now, f"{name} start"))
        engine.pause(2.0)
        log.append((engine.now, f"{name} end"))

    for name in ("x", "y", "z"):
        engine.spawn(name, worker, name)
    engine.run()
    assert [entry for _, entry in log] == [
        "x start",
        "y start",
        "z start",
        "x end",
        "y end",
        "z end",
    ]


def equal_time_storm(engine: Engine, seed: int) -> list[tuple[float, int]]:
    """Schedule thousands of callbacks at a few shared times and at hundreds of distinct ones
    (more than the C core's 256 cached chains), some of which schedule more at now, at a
    time already queued or at a new one; return (time, sequence) in the order they ran, the
    sequence counting schedule calls."""
    rng = random.Random(seed)
    ran: list[tuple[float, int]] = []
    scheduled = [0]

    def schedule(delay: float) -> None:
        engine.schedule(delay, event, scheduled[0])
        scheduled[0] += 1

    def event(sequence: int) -> None:
        ran.append((engine.now, sequence))
        roll = rng.random()
        if roll < 0.2:
            schedule(0.0)
        elif roll < 0.4:
            schedule(rng.choice((0.5, 1.0, 2.5)))
        elif roll < 0.45:
            schedule(rng.random() * 10)

    for _ in range(3000):
        schedule(rng.choice((1.0, 2.0, 3.0, 4.0)))
    for _ in range(600):
        schedule(rng.random() * 5)
    assert engine.pending == 3600
    engine.run(until=2.5)
    assert engine.pending == scheduled[0] - len(ran) > 1000  # those at 3.0 and 4.0 among them
    engine.run()
    assert engine.pending == 0
    assert len(ran) == scheduled[0]  # every scheduled event ran once
    return ran


def test_events_at_one_time_run_in_schedule_order_however_many_share_it(
    engine: Engine,
) -> None:
    ran = equal_time_storm(engine, seed=7)

    assert ran == sorted(ran)  # by time, then by when they were scheduled


@pytest.mark.skipif(speedups is None, reason="the C core is not built")
@pytest.mark.parametrize("seed", [1, 2, 3])
def test_the_c_core_runs_events_in_the_python_cores_order(seed: int) -> None:
    c_order = equal_time_storm(Engine(seed=1), seed)
    python_order = equal_time_storm(PythonEngine(seed=1), seed)

    assert c_order == python_order


def test_it_counts_the_events_it_processed(engine: Engine) -> None:
    def worker() -> None:
        for _ in range(10):
            engine.pause(1.0)

    for index in range(5):
        engine.spawn(f"p{index}", worker)
    engine.run()
    # one start plus ten resumptions per process
    assert engine.events == 5 * 11


def test_an_event_count_wakes_awaiting_processes_when_advanced(engine: Engine, log: list) -> None:
    ready = EventCount(engine, "ready")

    def consumer(name: str, value: int) -> None:
        ready.await_(value)
        log.append((engine.now, name))

    def producer() -> None:
        for _ in range(2):
            engine.pause(5.0)
            ready.advance()

    engine.spawn("second", consumer, "second", 2)
    engine.spawn("first", consumer, "first", 1)
    engine.spawn("producer", producer)
    engine.run()
    assert log == [(5.0, "first"), (10.0, "second")]


def test_await_returns_at_once_when_the_count_is_already_reached(engine: Engine, log: list) -> None:
    ready = EventCount(engine)
    ready.advance()

    def consumer() -> None:
        ready.await_(1)
        log.append((engine.now, "passed"))

    engine.spawn("c", consumer)
    engine.run()
    assert log == [(0.0, "passed")]


def test_a_mailbox_get_blocks_until_a_matching_message_arrives(engine: Engine, log: list) -> None:
    box = Mailbox(engine, "box")

    def reader() -> None:
        item = box.get(lambda message: message.startswith("b"))
        log.append((engine.now, item))
        log.append((engine.now, box.get()))

    def writer() -> None:
        engine.pause(1.0)
        box.put("a1")
        engine.pause(1.0)
        box.put("b1")

    engine.spawn("reader", reader)
    engine.spawn("writer", writer)
    engine.run()
    assert log == [(2.0, "b1"), (2.0, "a1")]


def test_a_resource_serves_processes_first_come_first_served(engine: Engine, log: list) -> None:
    lock = Resource(engine, "lock")

    def user(name: str, arrive: float) -> None:
        engine.pause(arrive)
        lock.acquire()
        log.append((engine.now, f"{name} in"))
        engine.pause(10.0)
        lock.release()

    engine.spawn("late", user, "late", 2.0)
    engine.spawn("early", user, "early", 1.0)
    engine.spawn("middle", user, "middle", 1.5)
    engine.run()
    assert log == [(1.0, "early in"), (11.0, "middle in"), (21.0, "late in")]


def test_a_resource_grants_callbacks_in_request_order(engine: Engine) -> None:
    link = Resource(engine, "link", capacity=2)
    granted: list[str] = []
    for name in "abc":
        link.request(granted.append, name)
    assert granted == ["a", "b"]
    assert link.queued == 1
    link.release()
    assert granted == ["a", "b", "c"]


# A FIFO server's and a mailbox's hot methods, each in Python and in C (the C core's types
# are the bases of Resource and Mailbox when it is built).
RESOURCE_CORES = [pytest.param(_PythonResourceCore, id="python-resource")]
MAILBOX_CORES = [pytest.param(_PythonMailboxCore, id="python-mailbox")]
if speedups is not None:
    RESOURCE_CORES.append(pytest.param(speedups.ResourceCore, id="c-resource"))
    MAILBOX_CORES.append(pytest.param(speedups.MailboxCore, id="c-mailbox"))


@pytest.mark.parametrize("core", RESOURCE_CORES)
def test_each_resource_core_serves_in_order_and_refuses_a_release_too_many(
    core: type, engine: Engine
) -> None:
    class Server(core):  # type: ignore[misc, valid-type]
        __slots__ = ("name",)

    server = Server()
    server.engine, server.name, server.capacity, server.users = engine, "link x", 1, 0
    server._queue = collections.deque()
    granted: list[str] = []
    for name in "abc":
        server.request(granted.append, name)
    assert granted == ["a"] and server.users == 1
    server.release()
    server.release()
    assert granted == ["a", "b", "c"]
    server.release()
    assert server.users == 0
    with pytest.raises(RuntimeError, match=r"^link x released more often than acquired$"):
        server.release()


@pytest.mark.parametrize("core", MAILBOX_CORES)
def test_each_mailbox_core_hands_a_message_to_the_first_getter_that_takes_it(
    core: type, engine: Engine
) -> None:
    class Waiter:
        waiting = "a message"

    class Box(core):  # type: ignore[misc, valid-type]
        __slots__ = ()

    box = Box()
    box.engine, box._items = engine, []
    first, second, third = Waiter(), Waiter(), Waiter()
    box._getters = [[first, lambda m: m > 10], [second, lambda m: m > 1], [third, None]]
    box.put(5)  # the second takes it, the first does not
    assert [getter[0] for getter in box._getters] == [first, third]
    assert second.waiting is None and first.waiting == "a message"
    box.put(50)
    box.put(0)
    assert box._getters == [] and box._items == []
    assert engine.pending == 3  # each getter woken with its message
    box.put(7)
    assert box._items == [7]


def test_it_reports_a_deadlock_naming_each_blocked_process(engine: Engine) -> None:
    box_a = Mailbox(engine, "box of A")
    box_b = Mailbox(engine, "box of B")
    engine.spawn("A", lambda: box_a.get(waiting="a message from B"))
    engine.spawn("B", lambda: box_b.get())
    engine.spawn("C", lambda: engine.pause(3.0))
    with pytest.raises(DeadlockError) as caught:
        engine.run()
    assert caught.value.waiting == {"A": "a message from B", "B": "a message in box of B"}
    assert caught.value.now == 3.0
    assert str(caught.value) == (
        "deadlock at t=3 s: every remaining process is blocked:\n"
        "  A waits for a message from B\n"
        "  B waits for a message in box of B"
    )


def test_an_exception_in_a_process_ends_the_run(engine: Engine) -> None:
    def broken() -> None:
        engine.pause(1.0)
        raise ZeroDivisionError("boom")

    engine.spawn("broken", broken)
    with pytest.raises(ZeroDivisionError, match="boom"):
        engine.run()


def test_the_random_source_is_seeded(engine_class: type[Engine]) -> None:
    draws = [engine_class(seed=7).random.random() for _ in range(2)]
    assert draws[0] == draws[1]
    assert engine_class(seed=8).random.random() != draws[0]


def test_pause_rejects_negative_and_nan_durations(engine: Engine) -> None:
    errors: list[str] = []

    def worker() -> None:
        for bad in (-1.0, float("nan")):
            try:
                engine.pause(bad)
            except ValueError as error:
                errors.append(str(error))

    engine.spawn("w", worker)
    engine.run()
    assert errors == [
        "a delay cannot be negative or NaN (got -1.0)",
        "a delay cannot be negative or NaN (got nan)",
    ]


def test_blocking_calls_outside_a_process_are_refused(engine: Engine) -> None:
    engine.run()
    with pytest.raises(RuntimeError) as caught:
        engine.pause(1.0)
    assert str(caught.value) == NOT_IN_PROCESS.format(primitive="pause")


def test_run_until_stops_at_the_horizon_and_resumes_later(engine: Engine, log: list) -> None:
    def worker() -> None:
        for _ in range(3):
            engine.pause(2.0)
            log.append((engine.now, "tick"))

    engine.spawn("w", worker)
    assert engine.run(until=3.0) == 3.0
    assert log == [(2.0, "tick")]
    engine.run()
    assert log == [(2.0, "tick"), (4.0, "tick"), (6.0, "tick")]


def test_processes_can_spawn_processes_while_running(engine: Engine, log: list) -> None:
    def child() -> None:
        engine.pause(1.0)
        log.append((engine.now, "child"))

    def parent() -> None:
        engine.pause(1.0)
        engine.spawn("child", child)
        log.append((engine.now, "parent"))

    engine.spawn("parent", parent)
    engine.run()
    assert log == [(1.0, "parent"), (2.0, "child")]
    assert all(process.finished for process in engine.processes)


def test_pending_counts_the_scheduled_events(engine: Engine) -> None:
    engine.schedule(2.0, lambda _: None)
    engine.schedule(1.0, lambda _: None)
    engine.spawn("w", lambda: engine.pause(1.0))
    assert engine.pending == 3
    engine.run()
    assert engine.pending == 0


def test_schedule_rejects_negative_delays(engine: Engine) -> None:
    with pytest.raises(ValueError, match=r"a delay cannot be negative or NaN \(got -0.5\)"):
        engine.schedule(-0.5, lambda _: None)


def test_a_failing_callback_ends_the_run_with_its_own_error(engine: Engine) -> None:
    def explode(_: object) -> None:
        raise KeyError("link 7")

    def worker() -> None:
        engine.schedule(1.0, explode)
        engine.pause(5.0)

    engine.spawn("w", worker)
    with pytest.raises(KeyError, match="link 7") as caught:
        engine.run()
    assert "explode" in {entry.name for entry in caught.traceback}


def test_close_unwinds_the_processes_a_deadlock_left_suspended(
    engine_class: type[Engine],
) -> None:
    finished: list[str] = []

    def blocked() -> None:
        try:
            Mailbox(engine, "never").get()
        finally:
            finished.append("unwound")

    engine = engine_class()
    for index in range(3):
        engine.spawn(f"p{index}", blocked)
    with pytest.raises(DeadlockError):
        engine.run()
    assert finished == []
    engine.close()
    assert finished == ["unwound"] * 3  # greenlet unwinds each one with GreenletExit
    assert not any(process for process in engine.processes)
    engine.close()  # a second close has nothing left to do


def random_workload(engine: Engine, seed: int) -> list[tuple[float, str]]:
    """Run a seeded mix of every primitive and return the trace of what happened when."""
    draw = random.Random(seed)
    trace: list[tuple[float, str]] = []
    link = Resource(engine, "link", capacity=2)
    boxes = [Mailbox(engine, f"box {i}") for i in range(4)]
    count = EventCount(engine, "barrier")
    durations = [draw.choice([0.0, 0.5, 1.0, 1.5, draw.random()]) for _ in range(400)]

    def worker(index: int) -> None:
        for step in range(12):
            choice = (index * 7 + step * 3 + seed) % 5
            duration = durations[(index * 12 + step) % len(durations)]
            if choice == 0:
                engine.pause(duration)
            elif choice == 1:
                link.acquire()
                engine.pause(duration)
                link.release()
            elif choice == 2:
                boxes[(index + 1) % 4].put((index, step))
                engine.schedule(
                    duration, lambda arg: trace.append((engine.now, f"cb {arg}")), index
                )
            elif choice == 3 and len(boxes[index % 4]):
                trace.append((engine.now, f"{index} got {boxes[index % 4].get()}"))
            else:
                count.advance()
                count.await_(count.count)
            trace.append((engine.now, f"{index}.{step}"))

    for index in range(16):
        engine.spawn(f"w{index}", worker, index)
    engine.run()
    trace.append((engine.now, f"events {engine.events}"))
    return trace


@pytest.mark.skipif(speedups is None, reason="the C core is not built")
@pytest.mark.parametrize("seed", range(8))
def test_the_c_core_runs_events_exactly_as_the_python_core(seed: int) -> None:
    assert random_workload(Engine(), seed) == random_workload(PythonEngine(), seed)


@pytest.mark.skipif(speedups is None, reason="the C core is not built")
def test_the_chunk_cache_reuses_frame_stacks_of_finished_processes() -> None:
    assert speedups is not None
    assert install_allocator_hook()
    engine = Engine()
    for index in range(50):
        engine.spawn(f"p{index}", engine.pause, 1.0)
    engine.run()
    before = speedups.chunk_cache_stats()
    engine = Engine()
    for index in range(50):
        engine.spawn(f"p{index}", engine.pause, 1.0)
    engine.run()
    after = speedups.chunk_cache_stats()
    assert after["installed"] is True
    assert after["hits"] - before["hits"] >= 50
    assert after["cached"] <= after["capacity"]


def _mapping_of(address: int, smaps: str) -> tuple[int, str]:
    """Return (start, VmFlags) of the mapping of /proc/PID/smaps text `smaps` holding `address`."""
    start = 0
    for line in smaps.splitlines():
        head = line.split(maxsplit=1)[0]
        if "-" in head and not head.endswith(":"):
            low, high = (int(part, 16) for part in head.split("-"))
            start = low if low <= address < high else 0
        elif head == "VmFlags:" and start:
            return start, line
    raise LookupError(hex(address))


@pytest.mark.skipif(speedups is None, reason="the C core is not built")
@pytest.mark.skipif(not KERNEL_HUGE_PAGES, reason="the kernel has no transparent huge pages")
def test_object_arenas_come_from_regions_advised_for_huge_pages() -> None:
    code = (
        "import json\n"
        "from simulator import engine\n"
        "engine.install_allocator_hook()\n"
        "before = engine.speedups.chunk_cache_stats()\n"
        "objects = [(index, str(index)) for index in range(400_000)]\n"  # some 40 arenas
        "grown = engine.speedups.chunk_cache_stats()\n"
        "smaps = open('/proc/self/smaps').read()\n"
        "address = id(objects[-1])\n"
        "del objects\n"
        "after = engine.speedups.chunk_cache_stats()\n"
        "print(json.dumps([before, grown, after, address, smaps]))\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    before, grown, after, address, smaps = json.loads(done.stdout)

    assert grown["arenas_carved"] - before["arenas_carved"] >= 20
    start, flags = _mapping_of(address, smaps)
    assert start % (2 * 1024**2) == 0
    assert " hg" in flags
    assert after["arenas_kept"] > 0  # freed arenas wait for the next objects


@pytest.mark.skipif(speedups is None, reason="the C core is not built")
def test_prefaulted_arenas_come_from_the_mapped_region_and_go_to_the_next_objects() -> None:
    code = (
        "import json\n"
        "from simulator import engine\n"
        "unhooked = engine.prefault_arenas(4)\n"  # CPython's own allocator: nothing made
        "engine.install_allocator_hook()\n"
        "before = engine.speedups.chunk_cache_stats()\n"
        "kept = engine.prefault_arenas(4)\n"
        "prefaulted = engine.speedups.chunk_cache_stats()\n"
        "all_of_it = engine.prefault_arenas(1000)\n"  # no further region is mapped for it
        "rest = engine.speedups.chunk_cache_stats()\n"
        "objects = [(index, str(index)) for index in range(100_000)]\n"
        "after = engine.speedups.chunk_cache_stats()\n"
        "print(json.dumps([unhooked, before, kept, prefaulted, all_of_it, rest, after]))\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    unhooked, before, kept, prefaulted, all_of_it, rest, after = json.loads(done.stdout)

    assert unhooked == 0 and before["arenas_kept"] == 0
    assert kept == prefaulted["arenas_kept"] == 4
    assert prefaulted["arenas_carved"] == before["arenas_carved"] + 4
    assert prefaulted["arena_regions"] == rest["arena_regions"] == before["arena_regions"]
    assert (
        all_of_it == rest["arenas_kept"] == 4 + rest["arenas_carved"] - prefaulted["arenas_carved"]
    )
    assert after["arenas_kept"] < rest["arenas_kept"]  # the objects took kept arenas first


def test_a_waiting_child_warms_up_the_compilers_then_its_arenas(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    calls: list[object] = []
    monkeypatch.setattr(runner, "warm_up_compiler", lambda: calls.append("compilers"))
    monkeypatch.setattr(runner, "prefault_arenas", calls.append)

    entry_for(DEFAULT_ENTRY).warm()  # what a sandbox child waiting for its run calls

    assert calls == ["compilers", runner.PREFAULT_ARENAS]


def test_the_c_core_is_built_where_required() -> None:
    if os.environ.get("PARASIM_REQUIRE_SPEEDUPS") != "1":
        pytest.skip("PARASIM_REQUIRE_SPEEDUPS is not set (CI sets it)")
    assert speedups is not None, (
        "simulator/_speedups.c is not built: python -m simulator.build_speedups"
    )
    assert Engine.__mro__[2] is speedups.Core


@pytest.mark.skipif(speedups is None, reason="the C core is not built")
def test_importing_the_engine_leaves_the_allocator_hook_alone() -> None:
    code = (
        "from simulator import engine, runner\n"
        "before = engine.speedups.chunk_cache_stats()['installed']\n"
        "engine.install_allocator_hook()\n"
        "print(before, engine.speedups.chunk_cache_stats()['installed'])"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.split() == ["False", "True"]


def test_parasim_pure_python_turns_the_c_core_off() -> None:
    code = "from simulator import engine; print(engine.speedups is None, engine.Engine.__mro__[2].__name__)"
    env = {**os.environ, "PARASIM_PURE_PYTHON": "1"}
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=env, check=True
    )
    assert done.stdout.split() == ["True", "_PythonCore"]


def test_a_closed_engine_is_collected_even_if_the_collector_ran_mid_run(
    engine_class: type[Engine],
) -> None:
    engine = engine_class()
    box, barrier = Mailbox(engine, "box"), EventCount(engine, "barrier")
    engine.spawn("receiver", box.get)
    engine.spawn("waiter", barrier.await_, 5)
    engine.schedule(1.0, lambda _: gc.collect())  # while both processes are suspended
    with pytest.raises(DeadlockError):
        engine.run()
    engine.close()
    process = weakref.ref(engine.processes[0])
    del engine, box, barrier
    gc.collect()
    assert process() is None


def test_close_ends_a_process_whose_finally_blocks_again(engine_class: type[Engine]) -> None:
    engine = engine_class()
    unwound: list[str] = []

    def stubborn() -> None:
        try:
            Mailbox(engine, "never").get()
        finally:
            engine.pause(0.0)  # blocks while unwinding
            unwound.append("done")

    engine.spawn("stubborn", stubborn)
    with pytest.raises(DeadlockError):
        engine.run()
    engine.close()
    assert engine.processes[0].dead
    assert unwound == []  # the second GreenletExit ended it inside its own `finally`


def test_run_until_keeps_the_clock_a_float_and_refuses_to_go_back(engine: Engine) -> None:
    engine.spawn("w", engine.pause, 10.0)
    assert repr(engine.run(until=5)) == "5.0"
    with pytest.raises(ValueError, match=r"run\(until=3\) lies before the current time 5.0"):
        engine.run(until=3)


def test_schedule_names_the_delay_as_given(engine: Engine) -> None:
    with pytest.raises(ValueError, match=r"\(got -1\)$"):
        engine.schedule(-1, lambda _: None)


def test_a_subinterpreter_gets_the_python_core_and_leaves_the_main_one_working() -> None:
    interpreters = pytest.importorskip("_xxsubinterpreters")
    root = str(Path(__file__).resolve().parents[2])
    code = (
        f"import sys; sys.path.insert(0, {root!r}); from simulator import engine\n"
        "assert engine.speedups is None, 'the C core in a subinterpreter'\n"
    )
    interpreter = interpreters.create()
    try:
        interpreters.run_string(interpreter, code)
    finally:
        interpreters.destroy(interpreter)
    engine = Engine()
    engine.spawn("after", engine.pause, 1.0)
    assert engine.run() == 1.0
