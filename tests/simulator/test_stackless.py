"""Stackless processes: an application model compiled into a generator function
(simulator/sandbox/stackless.py) runs without a greenlet per process
(simulator/engine.py StacklessProcess) and gives exactly the result it gives on greenlets.

A run picks stackless processes for a model whose waiting calls are all memoizable
computations (`runner.STACKLESS_CALLS`); the tests here also force them for every call a
model makes (None), so that the borrowed-greenlet path of messages, collectives, memory calls
and first evaluations gives the greenlet result too.
"""

from __future__ import annotations

import json
import textwrap
from collections.abc import Generator, Iterator, Mapping
from typing import Any

import pytest

from simulator import engine as engine_module
from simulator import runner
from simulator.errors import DeadlockError, UserCodeError
from simulator.runner import run_simulation
from simulator.sandbox.stackless import (
    changes_globals,
    guard_parameters,
    parameters,
    process_function,
    referenced_names,
    refusal,
)
from tests.simulator.test_api import host_bus_device
from tests.simulator.test_hot_path import (
    APP,
    CPUS_AND_A_GPU,
    KERNEL_APP,
    KERNEL_LABELS,
    LABELS,
    TWO_HOSTS_AND_A_SWITCH,
    comparable,
)

pytestmark = pytest.mark.skipif(
    engine_module.speedups is None, reason="stackless processes need the C core"
)

FILENAME = "<application model>"


@pytest.fixture
def spawned(monkeypatch: pytest.MonkeyPatch) -> Iterator[dict[str, int]]:
    """Count the processes each kind of spawn made."""
    counts = {"greenlet": 0, "stackless": 0}
    spawn, spawn_stackless = engine_module.Engine.spawn, engine_module.Engine.spawn_stackless

    def counting_spawn(self: Any, *args: Any) -> Any:
        counts["greenlet"] += 1
        return spawn(self, *args)

    def counting_spawn_stackless(self: Any, *args: Any) -> Any:
        counts["stackless"] += 1
        return spawn_stackless(self, *args)

    monkeypatch.setattr(engine_module.Engine, "spawn", counting_spawn)
    monkeypatch.setattr(engine_module.Engine, "spawn_stackless", counting_spawn_stackless)
    yield counts


def run_both(
    app: str,
    labels: Mapping[str, int],
    system: Mapping[str, Any] | None = None,
    **kw: Any,
) -> tuple[Any, Any]:
    """Return the outcome of `app` on greenlets and stackless (every call): the result, or
    the error raised, as comparable text."""

    def outcome(calls: frozenset[str] | None) -> Any:
        old = runner.STACKLESS_CALLS
        runner.STACKLESS_CALLS = calls
        try:
            result = run_simulation(
                system or host_bus_device(),
                textwrap.dedent(app),
                labels=dict(labels),
                variables=kw.get("variables", {}),
                timeline_limit=kw.get("timeline_limit", 10_000),
            )
        except (UserCodeError, DeadlockError) as error:
            return f"{type(error).__name__}: {error}", getattr(error, "waiting", None)
        finally:
            runner.STACKLESS_CALLS = old
        return comparable(result)

    return outcome(frozenset()), outcome(None)


# -- what runs stackless --------------------------------------------------------------------
def test_a_model_that_computes_talks_and_meets_runs_stackless(
    spawned: dict[str, int],
) -> None:
    computing = "for step in range(3):\n    sim.computation({'seconds': 1})\n"
    run_simulation(host_bus_device(), computing, labels={"CPU": 2, "GPU": 1}, variables={})
    assert spawned == {"greenlet": 0, "stackless": 3}

    talking = (
        "if tag.equals('CPU'):\n    sim.p2pCommunicationSend(1, 'GPU', 0)\n"
        "else:\n    sim.p2pCommunicationReceive('CPU', 0)\n"
    )
    run_simulation(host_bus_device(), talking, labels={"CPU": 1, "GPU": 1}, variables={})
    assert spawned == {"greenlet": 0, "stackless": 5}

    meeting = talking + "sim.barrier()\nsim.gather(1, 'CPU', 0)\n"
    run_simulation(host_bus_device(), meeting, labels={"CPU": 1, "GPU": 1}, variables={})
    assert spawned == {"greenlet": 0, "stackless": 7}

    # a function of the model that waits, called by name: a generator too
    helper = "def meet():\n    sim.barrier()\nmeet()\n"
    run_simulation(host_bus_device(), helper, labels={"CPU": 1, "GPU": 1}, variables={})
    assert spawned == {"greenlet": 0, "stackless": 9}

    # ... but one passed around as a value cannot yield: its processes run on greenlets
    passed = "def meet():\n    sim.barrier()\nrun = meet\nrun()\n"
    run_simulation(host_bus_device(), passed, labels={"CPU": 1, "GPU": 1}, variables={})
    assert spawned == {"greenlet": 2, "stackless": 9}


@pytest.mark.parametrize(
    ("source", "reason"),
    [
        ("def f():\n    g = lambda: sim.computation({})\nf()\n", "line 2: sim.computation inside"),
        ("def f():\n    sim.computation({})\ng = f\n", "line 3: f, which waits, used other than"),
        ("def f():\n    sim.computation({})\n[f() for _ in range(2)]\n", "line 3: f, which waits,"),
        ("def f():\n    sim.barrier()\ndef f():\n    pass\n", "line 1: f waits and is bound again"),
        ("def f():\n    yield 1\n    sim.barrier()\nf()\n", "line 1: f waits and is a generator"),
        ("f = lambda: sim.computation({})\nf()\n", "line 1: sim.computation inside a nested"),
        ("[sim.computation({}) for _ in range(2)]\n", "line 1: sim.computation inside a nested"),
        ("s = sim\ns.computation({})\n", "line 1: `sim` used other than as sim.<call>(...)"),
        ("sim = 1\nsim.computation({})\n", "line 1: `sim` used other than as sim.<call>(...)"),
        ("sim.computation({})\nprint(sim)\n", "line 2: `sim` used other than as sim.<call>"),
        ("x = 1\nglobal x\nsim.computation({})\n", "line 2: a global statement"),
        ("sim.memoryFlush()\n", "line 1: sim.memoryFlush waits on a greenlet"),
        ("sim.computation({}, memory={})\n", "line 1: sim.computation with memory waits"),
        ("x = sim.now()\n", "no sim call waits"),
        ("sim.computation({}\n", "'(' was never closed"),
        ("sim.computation({})\nreturn\n", "line 2: outside a function"),
        ("sim.computation({})\nx = yield 1\n", "line 2: outside a function"),
        ("sim.computation({})\nyield from range(2)\n", "line 2: outside a function"),
    ],
)
def test_a_model_that_would_change_meaning_as_a_generator_is_refused(
    source: str, reason: str
) -> None:
    assert process_function(source, FILENAME) is None
    assert refusal(source, FILENAME).startswith(reason)


@pytest.mark.parametrize("statement", ["return", "yield 1", "x = yield"])
def test_a_return_or_yield_at_the_top_level_is_the_compilers_error_though_it_would_run_stackless(
    statement: str,
) -> None:
    # the run compiles the model's module code only when it runs on greenlets: the process
    # function, where a return or yield would be valid, must not take the model instead
    app = f"sim.computation({{'seconds': 1.0}})\n{statement}\n"
    with pytest.raises(UserCodeError) as caught:
        run_simulation(TWO_HOSTS_AND_A_SWITCH, app, labels=LABELS, variables={})
    assert "outside function (<application model>, line 2)" in str(caught.value)


def test_sim_random_now_and_nested_code_without_sim_are_allowed() -> None:
    source = (
        "def twice(x):\n    return 2 * x\n"
        "t = sim.now() + sim.random.random()\n"
        "sim.computation({'seconds': twice(1)})\n"
        "squares = [i * i for i in range(3)]\n"
    )
    assert refusal(source, FILENAME) == ""
    code = process_function(source, FILENAME)
    assert code is not None and code.co_flags & 0x20  # CO_GENERATOR


def test_the_restricted_compiler_still_guards_a_stackless_model() -> None:
    # the function body goes through the same restricted compiler: a "_" name is refused
    assert process_function("_x = 1\nsim.computation({})\n", FILENAME) is None


# -- the same results ---------------------------------------------------------------------------
@pytest.mark.parametrize("timeline_limit", [0, 25, 10_000])
def test_the_hot_paths_model_gives_the_greenlet_result_stackless(timeline_limit: int) -> None:
    greenlets, stackless = run_both(
        APP,
        LABELS,
        TWO_HOSTS_AND_A_SWITCH,
        variables={"rounds": 4},
        timeline_limit=timeline_limit,
    )
    assert stackless == greenlets


def test_kernels_and_details_give_the_greenlet_timeline_stackless() -> None:
    greenlets, stackless = run_both(
        KERNEL_APP, KERNEL_LABELS, CPUS_AND_A_GPU, variables={"rounds": 4}
    )
    assert stackless == greenlets
    assert json.loads(stackless)["timeline"]  # the entries, in the same order


MODELS = {
    "top-level names are the process's globals": """
        N = N + 4096 * rank
        def seconds():
            return N / 4096
        total = 0
        for step in range(3):
            total += sim.computation({"seconds": seconds() + step})
        sim.computation({"seconds": total})
        """,
    "a function's global statement keeps the name global": """
        count = 0
        def bump():
            global count
            count += 1
        for step in range(3):
            bump()
            sim.computation({"seconds": count + rank})
        """,
    "a shadowed builtin, a launch variable and rank read as locals": """
        total = sum([1, 2]) + len(HashMap())
        sum = 5
        HashMap = dict
        for i in range(N // 4096):
            sim.computation({"seconds": total + sum + rank + i})
        """,
    "functions of the model that wait, one recursive": """
        def exchange(peer):
            if tag.equals("CPU"):
                sim.p2pCommunicationSend(2, "GPU", peer)
                return sim.p2pCommunicationReceive("GPU", peer)
            got = sim.p2pCommunicationReceive("CPU", peer)
            sim.p2pCommunicationSend(got, "CPU", peer)
            return got
        def countdown(n, total=0):
            if n == 0:
                return total
            spent = sim.computation({"seconds": n + rank})
            return countdown(n - 1, total + spent)
        def when():
            return sim.now()
        total = countdown(3) + exchange(rank)
        sim.barrier()
        sim.computation({"seconds": total + when()})
        """,
    "a name read before it is bound": """
        sim.computation({"seconds": 1})
        if rank == 0:
            later = 1
        sim.computation({"seconds": later})
        """,
    "a value flows back from every kind of call": """
        if tag.equals("CPU"):
            sim.p2pCommunicationSend(3, "GPU", rank)
            got = sim.p2pCommunicationReceive("GPU", rank)
            sim.computation({"seconds": got + sim.now()})
        else:
            got = sim.p2pCommunicationReceive("CPU", rank)
            sim.computation({"seconds": got})
            sim.p2pCommunicationSend(got + 1, "CPU", rank)
        sim.barrier()
        print("done", rank)
        """,
    "a failed call after a wait is caught where it was made": """
        if tag.equals("CPU"):
            sim.p2pCommunicationReceive("GPU", rank)
            try:
                sim.p2pCommunicationSend(1, "DSP")
            except Exception as error:
                sim.computation({"seconds": len(str(error))})
        else:
            sim.computation({"seconds": 2})
            sim.p2pCommunicationSend(1, "CPU", rank)
        """,
    "an error names the process and the line": """
        sim.computation({"seconds": rank})
        if rank == 1:
            sim.computation({"seconds": 1 / 0})
        """,
    "an error in a borrowed call": """
        sim.computation({"seconds": 1})
        sim.p2pCommunicationSend(-1, "GPU")
        """,
    "a deadlock names what each process waits for": """
        try:
            sim.computation({"seconds": 1})
            sim.p2pCommunicationReceive("GPU" if tag.equals("CPU") else "CPU", rank)
        finally:
            sim.computation({"seconds": 1})
        """,
}


@pytest.mark.parametrize("app", MODELS.values(), ids=MODELS.keys())
def test_a_model_gives_the_same_outcome_stackless_and_on_greenlets(app: str) -> None:
    greenlets, stackless = run_both(
        app, {"CPU": 2, "GPU": 2}, host_bus_device(), variables={"N": 8192}
    )
    assert refusal(textwrap.dedent(app), FILENAME, calls=None) == ""
    assert stackless == greenlets


def test_a_name_read_before_it_is_bound_is_the_modules_name_error() -> None:
    _, stackless = run_both(MODELS["a name read before it is bound"], {"CPU": 2})
    assert stackless == (
        "UserCodeError: application model, line 5: NameError: name 'later' is not defined "
        "(process CPU[1])",
        None,
    )


def test_the_top_levels_names_are_fast_locals_unless_something_else_sees_them() -> None:
    source = (
        "total = 0\n"
        "def seconds():\n    return rank + 1\n"
        "for step in range(steps):\n"
        "    total += sim.computation({'seconds': seconds()})\n"
        "len = total\n"
        "HashMap = len\n"
    )
    code = process_function(
        source,
        FILENAME,
        arguments=frozenset({"sim", "rank", "steps"}),
        shared=frozenset({"HashMap"}),
    )
    assert code is not None
    # rank is read in a function: it stays in the globals, not an argument
    assert parameters(code) == ("sim", "steps")
    assert {"step", "total"} <= set(code.co_varnames)
    # `seconds` is named by a function (its own), `len` and `HashMap` shadow builtins (the
    # run's, for HashMap): all global
    assert {"seconds", "len", "HashMap"} <= set(code.co_names)
    # `sim`, a parameter the run binds, is still read without the attribute guard
    assert "_getattr_" not in code.co_names


def test_a_stackless_error_reports_the_process_and_the_line() -> None:
    _, stackless = run_both(MODELS["an error names the process and the line"], {"CPU": 2})
    assert stackless == (
        "UserCodeError: application model, line 4: ZeroDivisionError: division by zero "
        "(process CPU[1])",
        None,
    )


def test_a_stackless_deadlock_reports_the_borrowed_calls_wait() -> None:
    _, (message, waiting) = run_both(
        MODELS["a deadlock names what each process waits for"], {"CPU": 1, "GPU": 1}
    )
    assert message.startswith("DeadlockError")
    assert waiting == {"CPU[0]": "a message from GPU[0]", "GPU[0]": "a message from CPU[0]"}


def test_a_million_processes_worth_of_memory_is_not_kept_per_waiting_process() -> None:
    """A waiting stackless process holds no greenlet: while 2,000 of them wait in their
    computations (each its own params: the model is evaluated for every one), the run has
    no greenlet of a process alive."""
    import gc

    from greenlet import greenlet

    def greenlets() -> int:
        # type(), not isinstance(): a dead weak proxy among the objects raises on the latter
        return sum(issubclass(type(o), greenlet) for o in gc.get_objects())

    seen: list[int] = []
    real_init = engine_module.Engine.__init__

    def counting_end(process: Any) -> None:
        if not seen:  # the first process to end: every other one is waiting
            seen.append(greenlets() - before)

    def counting_engine(self: Any, *args: Any) -> None:
        real_init(self, *args)
        self.on_process_end = counting_end  # the run reports no progress: it keeps this one

    app = "sim.computation({'seconds': 1})\nsim.computation({'seconds': 1 + rank / 1000})\n"
    system = host_bus_device(host_slots=2_000)
    gc.collect()
    before = greenlets()
    try:
        engine_module.Engine.__init__ = counting_engine  # type: ignore[method-assign,assignment]
        result = run_simulation(system, app, labels={"CPU": 2_000}, variables={})
    finally:
        engine_module.Engine.__init__ = real_init  # type: ignore[method-assign]
    assert result["overall_time_s"] == pytest.approx(3.999)
    assert seen and seen[0] < 10  # none of a process (on greenlets: 2,000)


# -- the engine's side: a call on a borrowed greenlet ------------------------------------------
def test_a_borrowed_call_gives_its_value_or_raises_where_it_was_made() -> None:
    engine = engine_module.Engine()
    seen: list[tuple[float, object]] = []

    def pause_then(value: object) -> object:
        engine.pause(1.0)
        if isinstance(value, BaseException):
            raise value
        return value

    def body() -> Iterator[object]:
        value = yield proc.call(lambda: "at once")  # never blocks
        seen.append((engine.now, value))
        value = yield proc.call(pause_then, 42)
        seen.append((engine.now, value))
        try:
            yield proc.call(pause_then, ValueError("after a wait"))
        except ValueError as error:
            seen.append((engine.now, str(error)))

    proc = engine.spawn_stackless("p", body())
    assert engine.run() == 2.0
    assert seen == [(0.0, "at once"), (1.0, 42), (2.0, "after a wait")]
    assert proc.finished and proc.finish_time == 2.0 and proc.carrier is None


def test_a_borrowed_call_resumes_its_process_in_the_order_greenlets_do() -> None:
    def orders(stackless: bool) -> list[str]:
        engine = engine_module.Engine()
        order: list[str] = []

        def schedule_then_pause() -> None:
            engine.schedule(1.0, lambda _: order.append("callback"))
            engine.pause(1.0)

        def a() -> Iterator[object]:
            yield procs[0].call(engine.pause, 1.0)
            order.append("a resumed")

        def b() -> Iterator[object]:
            yield procs[1].call(schedule_then_pause)
            order.append("b resumed")

        def greenlet_body(name: str, call: Any, *args: Any) -> None:
            call(*args)
            order.append(f"{name} resumed")

        if stackless:
            procs = [engine.spawn_stackless("a", a()), engine.spawn_stackless("b", b())]
        else:
            engine.spawn("a", greenlet_body, "a", engine.pause, 1.0)
            engine.spawn("b", greenlet_body, "b", schedule_then_pause)
        engine.run()
        return order

    # a's wake-up, the callback, b's wake-up, all at t=1: each process runs on at its own
    assert (
        orders(stackless=True)
        == orders(stackless=False)
        == [
            "a resumed",
            "callback",
            "b resumed",
        ]
    )


def test_close_ends_a_stackless_process_waiting_in_a_borrowed_call() -> None:
    engine = engine_module.Engine()
    box = engine_module.Mailbox(engine, "box")
    unwound: list[str] = []

    def body() -> Iterator[object]:
        try:
            yield proc.call(box.get)
        finally:
            unwound.append("finally")

    proc = engine.spawn_stackless("p", body())
    with pytest.raises(DeadlockError):
        engine.run()
    assert proc.waits_for() == "a message in box"
    engine.close()
    assert unwound == ["finally"]
    assert proc.carrier is None


def test_close_ends_a_stackless_process_waiting_in_its_mailbox() -> None:
    engine = engine_module.Engine()
    box = engine_module.Mailbox(engine, "box")
    unwound: list[str] = []

    def body() -> Iterator[object]:
        try:
            box.wait(proc, lambda _item: True, "a letter")
            yield engine_module.WAIT
        finally:
            unwound.append("finally")

    proc = engine.spawn_stackless("p", body())
    with pytest.raises(DeadlockError) as caught:
        engine.run()
    assert caught.value.waiting == {"p": "a letter"}
    engine.close()
    assert unwound == ["finally"]


def test_a_process_name_the_model_never_mentions_is_not_made() -> None:
    # `tag` and `labels` cost a Label and a dict per process: made only for a model that
    # names them, at its top level (an argument) or in a function of its own (a global)
    plain = "for step in range(2):\n    sim.computation({'t': 1.0})\n"
    nested = textwrap.dedent(
        """\
        def mine():
            return labels["P"] if tag.equals("P") else 0
        for step in range(mine()):
            sim.computation({'t': 1.0})
        """
    )
    names = ["sim", "rank", "tag", "labels"]
    code = process_function(plain, FILENAME, arguments=frozenset(names), shared=frozenset())
    assert code is not None and parameters(code) == ("sim",)
    assert {"tag", "labels"}.isdisjoint(referenced_names(code))
    code = process_function(nested, FILENAME, arguments=frozenset(names), shared=frozenset())
    assert code is not None and {"tag", "labels"} <= referenced_names(code)
    for app in (plain, nested):
        greenlets, stackless = run_both(app, {"P": 3}, TWO_HOSTS_AND_A_SWITCH_P)
        assert stackless == greenlets


TWO_HOSTS_AND_A_SWITCH_P: dict[str, Any] = {
    **TWO_HOSTS_AND_A_SWITCH,
    "nodes": [{"id": "h", "hardware": "host", "model": "pause", "count": 3, "labels": {"P": 1}}],
    "edges": [],
}


def test_the_guards_are_the_functions_parameters_and_still_refuse() -> None:
    # `rank * steps` and the helper's `x * rank` go through the multiplication guard, the
    # loop through the iteration guard: keyword-only parameters the run binds, not global
    # reads; the guard still refuses the product over MAX_INT_BITS, as on greenlets
    app = (
        "def scaled(x):\n    return x * rank\n"
        "big = 1 << 600000\n"
        "for step in range(rank * steps):\n"
        "    sim.computation({'t': scaled(step + 1) / 7})\n"
        "    if step == 2:\n        big = big * big\n"
    )
    code = process_function(app, FILENAME, arguments=frozenset({"sim", "rank", "steps"}))
    assert code is not None
    assert {"_mul_", "_getiter_"} <= set(guard_parameters(code))
    assert not any(name.startswith("_") for name in code.co_names)
    assert not any(name.startswith("_") for name in parameters(code))
    greenlets, stackless = run_both(app, {"CPU": 2}, variables={"steps": 3})
    assert stackless == greenlets
    assert stackless[0].startswith("UserCodeError: application model, line 7: *: the integer")
    # the same model without the refused product runs alike on both
    fine = app.replace("big = big * big", "big = big + 1")
    greenlets, stackless = run_both(fine, {"CPU": 2}, variables={"steps": 3})
    assert stackless == greenlets
    assert "UserCodeError" not in str(stackless)


# -- one globals table for a run's processes ----------------------------------------------------
@pytest.mark.parametrize(
    ("app", "changes"),
    [
        ("for step in range(steps):\n    sim.computation({'t': rank + step})\n", False),
        ("n = 0\nfor step in range(steps):\n    n += 1\n    sim.computation({'t': n})\n", False),
        ("f = lambda x: x * 2\nsim.computation({'t': f(rank)})\n", False),
        ("sim.computation({'t': sum([x for x in range(rank)])})\n", False),
        # a top-level name a function reads is a global the top level binds
        ("def f(x):\n    return x * 2\nsim.computation({'t': f(rank)})\n", True),
        ("n = 1\ng = lambda: n\nsim.computation({'t': g()})\n", True),
        ("def f():\n    global n\n    n = 2\nf()\nsim.computation({'t': 1.0})\n", True),
        ("def f():\n    global n\n    del n\nsim.computation({'t': 1.0})\n", True),
        ("class C:\n    x = 1\nsim.computation({'t': C.x})\n", True),
        ("import math\nsim.computation({'t': math.pi})\n", True),
        ("print(rank)\nsim.computation({'t': 1.0})\n", True),
        ("def f():\n    print(rank)\nsim.computation({'t': 1.0})\n", True),
    ],
)
def test_what_may_change_a_processs_globals(app: str, changes: bool) -> None:
    code = process_function(
        app, FILENAME, arguments=frozenset({"sim", "rank", "steps"}), shared=frozenset()
    )
    assert code is not None
    assert changes_globals(code) is changes


@pytest.fixture
def generators(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[Any]]:
    """The globals of the stackless processes a run spawns, in order (their generators'
    frames are gone once they end)."""
    made: list[Any] = []
    spawn_stackless = engine_module.Engine.spawn_stackless

    def keeping(self: Any, name: str, generator: Any, sim: Any = None) -> Any:
        made.append(generator.gi_frame.f_globals)
        return spawn_stackless(self, name, generator, sim)

    monkeypatch.setattr(engine_module.Engine, "spawn_stackless", keeping)
    yield made


def _globals_of(generators: list[Any]) -> set[int]:
    return {id(table) for table in generators}


def _run(app: str, processes: int, variables: Mapping[str, object] | None = None) -> Any:
    return run_simulation(
        {
            **TWO_HOSTS_AND_A_SWITCH_P,
            "nodes": [{**TWO_HOSTS_AND_A_SWITCH_P["nodes"][0], "count": processes}],
        },
        textwrap.dedent(app),
        labels={"P": processes},
        variables=dict(variables or {}),
    )


def test_a_model_that_cannot_change_its_globals_shares_one_table(
    generators: list[Any],
) -> None:
    # set up once for the run: one function, one globals table (the launch variables the
    # function does not take, the run's builtins); each process its own arguments
    app = "for step in range(steps):\n    sim.computation({'t': (rank + 1) * scale})\n"
    result = _run(app, 3, {"steps": 2, "scale": 0.5, "unused": 7})
    assert len(generators) == 3
    assert len(_globals_of(generators)) == 1
    table = generators[0]
    assert table["unused"] == 7 and "sim" not in table and "rank" not in table
    ends = sorted(process["finish_s"] for process in result["processes"])
    assert ends == [1.0, 2.0, 3.0]
    greenlets, stackless = run_both(
        app, {"P": 3}, TWO_HOSTS_AND_A_SWITCH_P, variables={"steps": 2, "scale": 0.5}
    )
    assert stackless == greenlets


@pytest.mark.parametrize(
    "app",
    [
        # a list bound at the top level that a helper appends to: a global of the process
        """\
        seen = []
        def note(x):
            seen.append(x)
            return len(seen)
        for step in range(steps):
            sim.computation({'t': float(note(rank))})
        """,
        # a counter a function rebinds with `global`
        """\
        count = 0
        def bump():
            global count
            count += 1
            return count
        for step in range(steps):
            sim.computation({'t': float(bump())})
        """,
        # a name a process binds only when its rank says so, read by a helper
        """\
        def mine():
            return flag if rank == 0 else 0
        if rank == 0:
            flag = 5
        for step in range(steps):
            sim.computation({'t': float(step + 1 + mine())})
        """,
    ],
)
def test_a_model_that_changes_its_globals_keeps_them_per_process(
    app: str, generators: list[Any]
) -> None:
    result = _run(app, 3, {"steps": 3})
    assert len(_globals_of(generators)) == 3  # every process its own table, as on greenlets
    greenlets, stackless = run_both(app, {"P": 3}, TWO_HOSTS_AND_A_SWITCH_P, variables={"steps": 3})
    assert stackless == greenlets
    if "flag" not in app:  # each process counts its own calls: 1 + 2 + 3 seconds each
        assert [process["finish_s"] for process in result["processes"]] == [6.0, 6.0, 6.0]


def test_printed_output_stays_the_processs_own() -> None:
    # `print` keeps its buffer in the printing code's globals: a model that prints has a
    # table per process, and `printed` is the process's own output only
    app = "print(rank)\nsim.computation({'t': float(len(printed))})\n"
    result = _run(app, 3)
    assert sorted(process["finish_s"] for process in result["processes"]) == [2.0, 2.0, 2.0]


@pytest.mark.parametrize(
    "app",
    [
        # a default list made once... per process: the lambda is made by each process
        "box = (lambda kept=[]: kept)()\nbox.append(rank)\n"
        "sim.computation({'t': float(len(box))})\n",
        # the `labels` dict a process is handed: its own, written or not
        "labels['P'] = labels['P'] + 10\nsim.computation({'t': labels['P'] - 12.0})\n",
        # a launch variable is immutable: rebinding it is the process's own local
        "scale = scale + 1\nsim.computation({'t': float(scale) - 1})\n",
        # the run's builtins are shared by every process as before: the guards refuse writes
        "try:\n    HashMap.kept = rank\nexcept Exception:\n    pass\nsim.computation({'t': 1.0})\n",
    ],
)
def test_attack_a_model_sharing_the_table_cannot_keep_state_between_processes(
    app: str, generators: list[Any]
) -> None:
    result = _run(app, 3, {"scale": 1})
    assert len(_globals_of(generators)) == 1  # the shared table...
    # ...and still every process's computation lasts one second: none saw another's state
    assert [process["finish_s"] for process in result["processes"]] == [1.0, 1.0, 1.0]


def test_a_nodes_memos_are_found_once_for_all_its_processes(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # every process's sim reads its node's memos: the node keeps what the first one found
    # (the same model, the same memos for all its processes)
    from simulator import api

    asked: list[object] = []
    found = api._node_memos

    def counting(node: Any) -> Any:
        asked.append(node)
        return found(node)

    monkeypatch.setattr(api, "_node_memos", counting)
    app = "for step in range(2):\n    sim.computation({'t': 0.5 + rank})\n"
    result = _run(app, 3)
    assert len(asked) == 1
    assert [process["finish_s"] for process in result["processes"]] == [1.0, 3.0, 5.0]


# -- a process's making and end in C -----------------------------------------------------------
def test_the_c_cores_spawn_makes_what_the_class_makes_and_ends_it_as_a_greenlets_end() -> None:
    """`Engine.spawn_stackless` (the C core's, which makes the process without its class's
    call) gives what the Python reference's steps give (the class's constructor, the
    engine's processes, one more alive, an event now), and the process's end in C records
    what a greenlet process's end records (Process.run): finished, its finish time, one
    alive less, `on_process_end(process)`."""

    def body() -> Generator[object, object, None]:
        yield None  # a value straight back: no wait

    ended: dict[str, list[tuple[str, float | None]]] = {"c": [], "reference": []}
    for kind in ("c", "reference"):
        engine = engine_module.Engine()
        engine.on_process_end = lambda p, kind=kind: ended[kind].append((p.name, p.finish_time))
        engine.schedule(1.5, lambda _: None, None)
        engine.run()  # the clock at 1.5: the processes below start and end then
        if kind == "c":
            proc = engine.spawn_stackless("p", body(), None)
        else:  # _PythonCore.spawn_stackless's steps
            proc = engine_module.StacklessProcess(engine, "p", body(), None)
            engine.processes.append(proc)  # type: ignore[arg-type]
            engine._live += 1
            engine._push(engine.now, proc, None)
        assert type(proc) is engine_module.StacklessProcess
        assert (proc.engine, proc.name, proc.data, proc.on_error) == (engine, "p", None, None)
        assert (proc.finished, proc.finish_time, proc.carrier, proc.waiting) == (
            False,
            None,
            None,
            None,
        )
        assert engine.processes == [proc] and engine._live == 1 and engine.pending == 1
        engine.run()
        assert (proc.finished, proc.finish_time, engine._live) == (True, 1.5, 0)
    assert ended["c"] == ended["reference"] == [("p", 1.5)]
    with pytest.raises(RuntimeError, match="need the C core"):
        engine_module.PythonEngine().spawn_stackless("p", body())
    with pytest.raises(RuntimeError, match="need the C core"):
        engine_module.StacklessProcess(engine_module.PythonEngine(), "p", body())  # type: ignore[arg-type]
