"""The C core's `states_made` and `sims_made` (simulator/_speedups_spawn.c) against their
Python references (simulator.runner `_python_states_made`, `_python_sims_made`): the same
records and sim objects, slot by slot, and NotImplemented wherever a class or a slot is not as
the reference makes it (a subclass with its own __init__, a slot that is not a Slot)."""

from __future__ import annotations

import dataclasses
import json
import random
import textwrap
from typing import Any

import pytest

from simulator import runner
from simulator.api import Sim, StacklessSim
from simulator.engine import Engine, speedups
from simulator.placement import Slot
from simulator.platform import ProcessState
from simulator.results import ProcessFigures

needs_c = pytest.mark.skipif(speedups is None, reason="the C core is not built")

MODEL = "function computationTime(params) { return params.get('seconds'); }"
APP = """
sim.computation({"seconds": 1 + rank})
if tag == "P" and rank == 0:
    sim.p2pCommunicationSend(1000, "Q", None, 1)
if tag == "Q" and rank == 1:
    sim.p2pCommunicationReceive("P")
sim.computation({"seconds": 0.5})
"""


def system() -> dict[str, Any]:
    """Two nodes of two instances each: P on one, Q on the other, an edge between them."""
    return {
        "name": "two nodes",
        "hardware": {
            "cpu": {"type": "CPU", "name": "CPU", "attributes": {"powerIdle": 1.0}},
            "net": {"type": "NETWORK", "name": "NET", "attributes": {"bandwidth": 1e9}},
        },
        "models": {"m": {"language": "javascript", "source": MODEL}},
        "nodes": [
            {"id": "a", "hardware": "cpu", "model": "m", "labels": {"P": 1}, "count": 2},
            {"id": "b", "hardware": "cpu", "model": "m", "labels": {"Q": 1}, "count": 2},
            {"id": "n", "hardware": "net", "labels": {}},
        ],
        "edges": [["a", "n"], ["n", "b"]],
    }


def run(**kw: Any) -> dict[str, Any]:
    return runner.run_simulation(
        system(), textwrap.dedent(APP), labels={"P": 2, "Q": 2}, variables={}, seed=3, **kw
    )


def states(slots: list[Any], engine: object = None, **classes: Any) -> object:
    """`states_made` of the C core with the runner's classes, or those given."""
    made = {
        "state": ProcessState,
        "figures": ProcessFigures,
        "slot": Slot,
        **classes,
    }
    return speedups.states_made(
        engine,
        slots,
        made["state"],
        ProcessState.__init__,
        made["figures"],
        ProcessFigures.__init__,
        made["slot"],
        runner._FIGURE_DEFAULT,
    )


def same_state(made: ProcessState, reference: ProcessState) -> None:
    assert type(made) is type(reference)
    assert made.engine is reference.engine
    assert made.slot is reference.slot
    assert made.name == reference.name
    assert type(made.name) is str
    # the slots by name (test_name_contract's renamed copy shares, and renames, the
    # dataclass's Field objects)
    for name in ProcessFigures.__slots__:
        value, expected = getattr(made.figures, name), getattr(reference.figures, name)
        assert value == expected, name
        assert type(value) is type(expected), name
    for lazy in ("mailbox", "collectives"):  # made at first use, on both
        assert type(getattr(made, lazy)) is type(getattr(reference, lazy))


@needs_c
@pytest.mark.parametrize("seed", range(5))
def test_the_c_records_are_the_python_ones_for_random_slots(seed: int) -> None:
    draw = random.Random(seed)
    engine = Engine()
    labels = ["P", "GPU", "é", "a b", "x" * 40, ""]
    ranks = [0, 1, 7, 10**30, -3, draw.randrange(10**6)]
    slots = [
        Slot(draw.choice(labels), draw.choice(ranks), draw.choice(["a", "b"]), draw.randrange(9))
        for _ in range(40)
    ]
    made = states(slots, engine)
    assert isinstance(made, list)
    reference = runner._python_states_made(engine, slots)
    assert len(made) == len(reference)
    for one, other in zip(made, reference, strict=True):
        same_state(one, other)


@needs_c
def test_the_c_records_are_refused_where_a_class_or_slot_is_not_the_reference_s() -> None:
    class Named(str):
        pass

    class Other(ProcessState):
        __slots__ = ()

        def __init__(self, engine: Engine, slot: Slot) -> None:
            super().__init__(engine, slot)

    good = Slot("P", 0, "a", 0)
    assert isinstance(states([good]), list)
    assert states([Slot(Named("P"), 0, "a", 0)]) is NotImplemented  # its __format__
    assert states([Slot("P", True, "a", 0)]) is NotImplemented  # f"{True}" is "True"
    assert states([("P", 0, "a", 0)]) is NotImplemented  # no Slot
    assert states([good], state=Other) is NotImplemented


SIM_SLOTS = (
    "_world", "_state", "_labels", "_receivers", "_targets", "_collectives", "_missed",
    "random", "_engine", "_usage", "_memo", "_details", "_figures", "_process", "_timeline",
)  # fmt: skip


@needs_c
@pytest.mark.parametrize("stackless", [True, False])
def test_the_c_sims_are_the_python_ones_in_a_run(
    stackless: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Within a run of two nodes, each sim the C core makes holds what Sim.__init__ gives,
    the same objects; the run's result equals the references' (apart from its stats)."""
    compared: list[int] = []
    made_in_c = runner._sims_made

    def both(sim_class: type[Sim], *arguments: Any) -> object:
        made = made_in_c(sim_class, *arguments)
        assert isinstance(made, list)
        reference = runner._python_sims_made(sim_class, *arguments)
        for one, other in zip(made, reference, strict=True):
            assert type(one) is type(other) is sim_class
            for name in SIM_SLOTS:
                assert getattr(one, name) is getattr(other, name), name
            for unset in ("_stackless", "_continuation"):  # set later, or never
                assert getattr(one, unset) is getattr(other, unset) is None, unset
            compared.append(1)
        return made

    if not stackless:  # the processes on greenlets: Sim, not StacklessSim
        monkeypatch.setattr(runner, "_stackless_function", lambda *_: None)
    monkeypatch.setattr(runner, "_sims_made", both)
    result = run()
    assert len(compared) == 4
    monkeypatch.setattr(runner, "_sims_made", runner._python_sims_made)
    monkeypatch.setattr(runner, "_states_made", runner._python_states_made)
    reference = run()
    for one in (result, reference):
        one.pop("stats")
    assert json.dumps(result, sort_keys=True) == json.dumps(reference, sort_keys=True)


@needs_c
def test_the_c_sims_are_refused_for_a_sim_class_of_its_own_init() -> None:
    class Own(StacklessSim):
        __slots__ = ()

        def __init__(self, *arguments: Any) -> None:
            super().__init__(*arguments)

    engine = Engine()
    made = speedups.sims_made(
        Own, Sim.__init__, None, [], {}, ProcessState, Slot, None, engine, {}, {}, {}, None, None
    )
    assert made is NotImplemented
    made = speedups.sims_made(
        Sim, Sim.__init__, None, [], {}, ProcessState, Slot, None, engine, {}, {}, {}, None, None
    )
    assert made == []


@needs_c
@pytest.mark.parametrize("seed", range(3))
def test_the_c_process_rows_are_the_python_ones(seed: int, monkeypatch: pytest.MonkeyPatch) -> None:
    """assemble_result's process rows from the C core's `process_rows_of` equal its own loop's
    for random figures (their keys in the same order, the same objects); a record that is
    not a plain ProcessFigures gets NotImplemented."""
    from simulator import results

    draw = random.Random(seed)
    figures = []
    for rank in range(30):
        one = ProcessFigures("P", rank, draw.choice(["a", "b"]), draw.randrange(4), f"P[{rank}]")
        one.compute_s, one.comm_s = draw.random(), draw.choice([0.0, -0.0, draw.random()])
        one.wait_s, one.finish_s, one.memory_s = draw.random(), draw.random(), 1e300
        figures.append(one)
    made = speedups.process_rows_of(
        figures, results._PROCESS_ROW, ProcessFigures, results._PROCESS_ROW_FIELDS
    )
    monkeypatch.setattr(results, "_process_rows_of", results._python_process_rows_of)
    reference = results.assemble_result(
        overall_time_s=1.0,
        processes=figures,
        components=[],
        timeline=results.Timeline(0),
        events=0,
        wall_start=0.0,
        seed=0,
    )["processes"]
    assert [list(row.items()) for row in made] == [list(row.items()) for row in reference]
    for row, other in zip(made, reference, strict=True):
        assert all(a is b for a, b in zip(row.values(), other.values(), strict=True))

    @dataclasses.dataclass(slots=True)
    class Other(ProcessFigures):
        pass

    odd = [*figures[:2], Other("P", 9, "a", 0, "P[9]")]
    assert (
        speedups.process_rows_of(
            odd, results._PROCESS_ROW, ProcessFigures, results._PROCESS_ROW_FIELDS
        )
        is NotImplemented
    )


LABELS_APP = """
sim.computation({"seconds": 1 + rank + labels["Q"] + len(tag)})
if tag == "P" and rank == 0:
    sim.p2pCommunicationSend(1000, "Q", None, 1)
if tag == "Q" and rank == 1:
    sim.p2pCommunicationReceive("P")
"""


@needs_c
@pytest.mark.parametrize("app", [APP, LABELS_APP])
def test_the_c_spawned_processes_are_the_python_ones(
    app: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The C core's `stackless_spawned` spawns what the runner's loop does: the same
    processes (names, data, on_error, their sims') and the same result (apart from its
    stats); an engine whose spawn_stackless is its own gets NotImplemented."""
    seen: list[object] = []
    spawned_in_c = runner._stackless_spawned

    def recorded(engine: Engine, states: list[ProcessState], sims: list[Sim], *rest: Any) -> object:
        answer = spawned_in_c(engine, states, sims, *rest)
        seen.append(answer)
        for process, state, sim in zip(engine.processes, states, sims, strict=True):
            assert process.name == state.name
            assert process.data is state
            assert process.on_error is runner._reported
            assert sim._stackless is process  # type: ignore[attr-defined]
        return answer

    monkeypatch.setattr(runner, "_stackless_spawned", recorded)

    def result() -> dict[str, Any]:
        made: dict[str, Any] = dict(
            runner.run_simulation(
                system(), textwrap.dedent(app), labels={"P": 2, "Q": 2}, variables={}, seed=3
            )
        )
        made.pop("stats")
        return made

    in_c = result()
    assert seen == [None]
    monkeypatch.setattr(runner, "_stackless_spawned", runner._python_stackless_spawned)
    assert json.dumps(in_c, sort_keys=True) == json.dumps(result(), sort_keys=True)

    class Own(Engine):
        def spawn_stackless(self, *arguments: Any) -> Any:
            return super().spawn_stackless(*arguments)

    assert spawned_in_c(Own(), [], [], None, [], (-1, -1, -1, -1), {}, None, str) is NotImplemented


def test_an_initialiser_or_slot_name_replaced_since_import_is_honoured(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # the C core makes its records as the initialisers the runner found at import; one replaced
    # since (a wrapper, a test double) must run, as it runs under the Python references
    calls = {"state": 0, "figures": 0, "sim": 0}
    state_init, figures_init, sim_init = (
        ProcessState.__init__,
        ProcessFigures.__init__,
        Sim.__init__,
    )

    def state(self: Any, *args: Any) -> None:
        calls["state"] += 1
        state_init(self, *args)

    def figures(self: Any, *args: Any) -> None:
        calls["figures"] += 1
        figures_init(self, *args)

    def sim(self: Any, *args: Any) -> None:
        calls["sim"] += 1
        sim_init(self, *args)

    monkeypatch.setattr(ProcessState, "__init__", state)
    monkeypatch.setattr(ProcessFigures, "__init__", figures)
    monkeypatch.setattr(Sim, "__init__", sim)
    result = run()
    assert len(result["processes"]) == 4
    assert calls == {"state": 4, "figures": 4, "sim": 4}
    monkeypatch.undo()
    monkeypatch.setattr(Slot, "name", property(lambda s: f"{s.label}#{s.rank}"))
    slots = [Slot("GPU", 0, "a", 0)]
    assert runner._made_states(Engine(), slots)[0].name == "GPU#0"


@needs_c
def test_the_c_records_refuse_a_slot_class_that_is_no_tuple_and_a_foreign_member() -> None:
    with pytest.raises(TypeError, match="slot_type: a tuple class"):
        states([b"abcd"], slot=bytes)

    class Other:
        __slots__ = ("engine", "figures", "name", "slot")

    class State:  # ProcessState's __init__, but its slots are Other's descriptors
        __slots__ = ("engine_", "figures_", "name_", "slot_")
        __init__ = ProcessState.__init__
        engine = Other.engine  # type: ignore[attr-defined]
        slot = Other.slot  # type: ignore[attr-defined]
        name = Other.name  # type: ignore[attr-defined]
        figures = Other.figures  # type: ignore[attr-defined]

    assert states([Slot("GPU", 0, "a", 0)], state=State) is NotImplemented
