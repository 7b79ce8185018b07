"""The discrete-event kernel: ordering, KnightSim primitives, mailboxes, FIFO, deadlock."""

from __future__ import annotations

import pytest

from simulator.engine import NOT_IN_PROCESS, Engine, EventCount, Mailbox, Resource
from simulator.errors import DeadlockError


@pytest.fixture
def engine() -> Engine:
    return Engine(seed=1)


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


def test_the_random_source_is_seeded(engine: Engine) -> None:
    draws = [Engine(seed=7).random.random() for _ in range(2)]
    assert draws[0] == draws[1]
    assert Engine(seed=8).random.random() != draws[0]


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
