"""Tests of the cache tree with a MESI directory (002 sections 3.2.5-3.2.6)."""

from __future__ import annotations

import array
import json
import random

import numpy as np
import pytest

from simulator.models.cache import CacheHierarchy, CacheHierarchyConfig, CacheLevelConfig
from simulator.models.coherence import (
    ERR_ADDRESS,
    ERR_ARRAY_LENGTHS,
    ERR_CYCLE,
    ERR_DIRECTORY,
    ERR_DIRECTORY_CHILDLESS,
    ERR_DUPLICATE,
    ERR_GEOMETRY,
    ERR_LATENCY,
    ERR_LINE_BYTES,
    ERR_MEMORY_LATENCY,
    ERR_NO_CACHES,
    ERR_NOT_LEAF,
    ERR_PARENT,
    CacheSpec,
    CacheTree,
    TraceOutcome,
)

LINE = 16
L1_LATENCY, L2_LATENCY, LLC_LATENCY, MEMORY_LATENCY = 1.0, 2.0, 10.0, 100.0
A, B, C, D = 0, 8 * LINE, 16 * LINE, 24 * LINE  # four lines that share set 0 everywhere


def _mesi(
    agents: int,
    *,
    l1: tuple[int, int] = (2, 2),
    l2: tuple[int, int] = (4, 2),
    llc: tuple[int, int] = (8, 4),
) -> CacheTree:
    """Return agents x (L1[a] -> L2[a]) under a shared LLC holding the directory.

    L1[a] is cache a, L2[a] cache agents + a, the LLC cache 2 x agents.
    """
    llc_index = 2 * agents
    specs = [
        CacheSpec(f"L1[{a}]", l1[0], l1[1], LINE, L1_LATENCY, agents + a) for a in range(agents)
    ]
    specs += [
        CacheSpec(f"L2[{a}]", l2[0], l2[1], LINE, L2_LATENCY, llc_index) for a in range(agents)
    ]
    specs.append(CacheSpec("LLC", llc[0], llc[1], LINE, LLC_LATENCY, None))
    return CacheTree(specs, directory=llc_index, memory_latency_s=MEMORY_LATENCY)


def _l2(tree: CacheTree, agent: int) -> int:
    return len(tree.leaves()) + agent


def _llc(tree: CacheTree) -> int:
    return 2 * len(tree.leaves())


def _read(tree: CacheTree, agent: int, address: int) -> TraceOutcome:
    return tree.run(agent, [(address, False)])


def _write(tree: CacheTree, agent: int, address: int) -> TraceOutcome:
    return tree.run(agent, [(address, True)])


def _agent_state(tree: CacheTree, agent: int, address: int) -> str:
    """Return the agent's state, checking that its L1 and L2 copies agree with it."""
    l1, l2 = tree.state(agent, address), tree.state(_l2(tree, agent), address)
    assert l1 in (l2, "I")
    return l2


def _states(tree: CacheTree, address: int) -> list[str]:
    return [_agent_state(tree, agent, address) for agent in tree.leaves()]


# -- MESI transitions ------------------------------------------------------------------


@pytest.mark.parametrize("agents", [2, 3])
def test_a_read_nobody_holds_is_granted_exclusive_from_memory(agents: int) -> None:
    tree = _mesi(agents)
    outcome = _read(tree, 0, A)
    assert outcome.messages == {"Get": 1, "PutClnX": 1}
    assert _states(tree, A) == ["E"] + ["I"] * (agents - 1)
    assert tree.state(_llc(tree), A) == "E"
    assert tree.holders(A) == {_l2(tree, 0): "E"}
    assert outcome.memory_reads == 1
    assert outcome.line_transfers == {
        (None, _llc(tree)): 1,
        (_llc(tree), _l2(tree, 0)): 1,
        (_l2(tree, 0), 0): 1,
    }
    assert outcome.latency_s == L1_LATENCY + L2_LATENCY + LLC_LATENCY + MEMORY_LATENCY
    tree.check_invariants()


@pytest.mark.parametrize("agents", [2, 3])
def test_a_read_of_an_exclusive_line_is_forwarded_and_downgrades_the_owner(agents: int) -> None:
    tree = _mesi(agents)
    _read(tree, 0, A)
    outcome = _read(tree, 1, A)
    # E -> S at the owner, I -> S at the reader, through a three-way hop.
    assert outcome.messages == {"Get": 1, "Get_Fwd": 1, "PutS": 1, "Downgrade_Ack": 1}
    assert _states(tree, A)[:2] == ["S", "S"]
    assert outcome.line_transfers == {(_l2(tree, 0), _l2(tree, 1)): 1, (_l2(tree, 1), 1): 1}
    assert outcome.memory_reads == outcome.memory_writes == 0
    assert sum(counts.writebacks for counts in outcome.caches) == 0
    assert outcome.cache("LLC").hits == 1
    # Reader's L1 + L2, the directory, then the owner's L2 and L1 it downgrades.
    owner_probe = L2_LATENCY + L1_LATENCY
    assert outcome.latency_s == L1_LATENCY + L2_LATENCY + LLC_LATENCY + owner_probe
    tree.check_invariants()


def test_a_read_of_a_line_others_share_is_answered_by_the_directory() -> None:
    tree = _mesi(3)
    _read(tree, 0, A)
    _read(tree, 1, A)
    outcome = _read(tree, 2, A)
    assert outcome.messages == {"Get": 1, "PutS": 1}
    assert _states(tree, A) == ["S", "S", "S"]
    assert outcome.line_transfers == {(_llc(tree), _l2(tree, 2)): 1, (_l2(tree, 2), 2): 1}
    assert outcome.latency_s == L1_LATENCY + L2_LATENCY + LLC_LATENCY
    tree.check_invariants()


def test_a_read_of_a_line_one_agent_still_shares_is_answered_by_the_directory() -> None:
    tree = _mesi(2)
    _read(tree, 0, A)
    _read(tree, 1, A)
    tree.flush(1)
    outcome = _read(tree, 1, A)
    assert outcome.messages == {"Get": 1, "PutS": 1}
    assert _states(tree, A) == ["S", "S"]


@pytest.mark.parametrize("agents", [2, 3])
def test_a_write_to_an_exclusive_line_turns_it_modified_silently(agents: int) -> None:
    tree = _mesi(agents)
    _read(tree, 0, A)
    outcome = _write(tree, 0, A)
    assert outcome.messages == {}
    assert outcome.cache("L1[0]").hits == 1
    assert outcome.latency_s == L1_LATENCY
    assert _states(tree, A)[0] == "M"
    assert tree.holders(A) == {_l2(tree, 0): "M"}
    tree.check_invariants()


@pytest.mark.parametrize("agents", [2, 3])
def test_a_write_to_a_shared_line_upgrades_and_invalidates_the_other_sharers(agents: int) -> None:
    tree = _mesi(agents)
    for agent in range(agents):
        _read(tree, agent, A)
    outcome = _write(tree, 0, A)
    others = agents - 1
    assert outcome.messages == {
        "Upgrade": 1,
        "Upgrade_Ack": 1,
        "Inval": others,
        "Inval_Ack": others,
    }
    assert _states(tree, A) == ["M"] + ["I"] * others
    for agent in range(1, agents):
        assert outcome.cache(f"L1[{agent}]").invalidations == 1
        assert outcome.cache(f"L2[{agent}]").invalidations == 1
    # The L1 tag matched: a hit in the counters; the upgrade costs the trip to D.
    assert outcome.cache("L1[0]").hits == 1
    assert outcome.cache("LLC").accesses == 0
    assert outcome.latency_s == L1_LATENCY + L2_LATENCY + LLC_LATENCY
    assert outcome.line_transfers == {}
    tree.check_invariants()


def test_a_lone_sharer_still_asks_the_directory_before_writing() -> None:
    tree = _mesi(2)
    _read(tree, 0, A)
    _read(tree, 1, A)
    tree.flush(1)
    outcome = _write(tree, 0, A)
    assert outcome.messages == {"Upgrade": 1, "Upgrade_Ack": 1}
    assert _states(tree, A) == ["M", "I"]


@pytest.mark.parametrize("agents", [2, 3])
def test_a_remote_read_of_a_modified_line_forwards_it_and_writes_it_back(agents: int) -> None:
    tree = _mesi(agents)
    first = _write(tree, 0, A)
    assert first.messages == {"GetX": 1, "PutX": 1}
    assert _states(tree, A)[0] == "M"
    outcome = _read(tree, 1, A)
    assert outcome.messages == {"Get": 1, "Get_Fwd": 1, "PutS": 1, "Downgrade_Ack": 1}
    assert _states(tree, A)[:2] == ["S", "S"]
    # The dirty L1 copy goes back to the directory (a sharing write-back) and the LLC
    # now holds the only up-to-date copy below the agents.
    assert outcome.cache("L1[0]").writebacks == 1
    assert outcome.line_transfers == {
        (0, _llc(tree)): 1,
        (_l2(tree, 0), _l2(tree, 1)): 1,
        (_l2(tree, 1), 1): 1,
    }
    assert tree.state(_llc(tree), A) == "M"
    assert outcome.memory_writes == 0
    tree.check_invariants()
    if agents == 3:
        third = _read(tree, 2, A)
        assert third.messages == {"Get": 1, "PutS": 1}
        assert _states(tree, A) == ["S", "S", "S"]


@pytest.mark.parametrize("agents", [2, 3])
def test_a_remote_write_to_a_modified_line_moves_it_without_a_write_back(agents: int) -> None:
    tree = _mesi(agents)
    _write(tree, 0, A)
    outcome = _write(tree, 1, A)
    assert outcome.messages == {"GetX": 1, "GetX_Fwd": 1, "PutX": 1, "GetX_Fwd_Ack": 1}
    assert _states(tree, A)[:2] == ["I", "M"]
    assert outcome.cache("L1[0]").invalidations == outcome.cache("L2[0]").invalidations == 1
    assert sum(counts.writebacks for counts in outcome.caches) == 0
    assert tree.state(_llc(tree), A) == "E"  # memory's copy is stale; agent 1 owns the data
    assert outcome.line_transfers == {(_l2(tree, 0), _l2(tree, 1)): 1, (_l2(tree, 1), 1): 1}
    tree.check_invariants()
    # The forwarded dirty data is not lost: flushing agent 1 writes it to memory.
    flushed = tree.flush(1)
    assert flushed.messages == {"Write_Back": 1}
    assert flushed.memory_writes == 1


@pytest.mark.parametrize("agents", [2, 3])
def test_a_remote_write_to_an_exclusive_line_invalidates_the_owner(agents: int) -> None:
    tree = _mesi(agents)
    _read(tree, 0, A)
    outcome = _write(tree, 1, A)
    assert outcome.messages == {"GetX": 1, "GetX_Fwd": 1, "PutX": 1, "GetX_Fwd_Ack": 1}
    assert _states(tree, A)[:2] == ["I", "M"]
    # A clean line forwarded stays clean in the requester's L2; its L1 holds the write.
    assert tree.flush(1).memory_writes == 1
    tree.check_invariants()


@pytest.mark.parametrize("agents", [2, 3])
def test_a_remote_write_miss_invalidates_every_sharer(agents: int) -> None:
    tree = _mesi(agents)
    writer = agents - 1
    for agent in range(agents):
        _read(tree, agent, A)
    tree.flush(writer)
    sharers = agents - 1
    outcome = _write(tree, writer, A)
    assert outcome.messages == {
        "GetX": 1,
        "PutX_N": 1,
        "Inval": sharers,
        "Inval_Ack": sharers,
    }
    assert _states(tree, A) == ["I"] * sharers + ["M"]
    assert outcome.line_transfers == {
        (_llc(tree), _l2(tree, writer)): 1,
        (_l2(tree, writer), writer): 1,
    }
    # The requester waits for the slowest sharer's acknowledgement (its L2, then L1).
    sharer_probe = L2_LATENCY + L1_LATENCY
    assert outcome.latency_s == L1_LATENCY + L2_LATENCY + LLC_LATENCY + sharer_probe
    tree.check_invariants()


@pytest.mark.parametrize(
    ("prepare", "message", "llc_state"),
    [
        ("write", "Write_Back", "M"),
        ("read", "Clean_Write_Back", "E"),
        ("share", "Clean_Write_Back", "E"),
    ],
)
def test_an_agent_eviction_tells_the_directory(prepare: str, message: str, llc_state: str) -> None:
    tree = _mesi(2, l1=(1, 1), l2=(1, 1))
    if prepare == "write":
        _write(tree, 0, A)
    else:
        _read(tree, 0, A)
    if prepare == "share":
        _read(tree, 1, A)
    before = _agent_state(tree, 0, A)
    outcome = _read(tree, 0, B)  # the one-line L2 evicts A
    assert before == {"write": "M", "read": "E", "share": "S"}[prepare]
    assert outcome.messages == {"Get": 1, "PutClnX": 1, message: 1}
    assert _agent_state(tree, 0, A) == "I"
    assert outcome.cache("L2[0]").evictions == 1
    assert outcome.cache("L1[0]").invalidations == 1  # back-invalidated by its L2
    assert tree.state(_llc(tree), A) == llc_state
    assert _l2(tree, 0) not in tree.holders(A)
    if prepare == "write":
        assert outcome.cache("L1[0]").writebacks == outcome.cache("L2[0]").writebacks == 1
        assert outcome.line_transfers[(0, _l2(tree, 0))] == 1
        assert outcome.line_transfers[(_l2(tree, 0), _llc(tree))] == 1
    else:
        assert sum(counts.writebacks for counts in outcome.caches) == 0
    tree.check_invariants()


def test_an_eviction_inside_an_agent_does_not_reach_the_directory() -> None:
    tree = _mesi(2, l1=(1, 1), l2=(1, 2))
    _write(tree, 0, A)
    outcome = _read(tree, 0, B)  # L1 evicts A into its L2, which keeps it
    assert outcome.messages == {"Get": 1, "PutClnX": 1}
    assert outcome.cache("L1[0]").writebacks == 1
    assert tree.state(0, A) == "I"
    assert tree.state(_l2(tree, 0), A) == "M"
    assert tree.holders(A) == {_l2(tree, 0): "M"}
    tree.check_invariants()


@pytest.mark.parametrize("agents", [2, 3])
def test_a_directory_eviction_back_invalidates_every_holder(agents: int) -> None:
    tree = _mesi(agents, l1=(1, 2), l2=(1, 4), llc=(1, 2))
    for agent in range(agents):
        _read(tree, agent, A)
    _read(tree, 0, B)
    outcome = _read(tree, 0, C)  # the two-line LLC evicts A, its least recently used
    assert outcome.messages == {"Get": 1, "PutClnX": 1, "Inval": agents, "Inval_Ack": agents}
    assert _states(tree, A) == ["I"] * agents
    assert tree.state(_llc(tree), A) == "I"
    assert tree.holders(A) == {}
    for agent in range(agents):
        assert outcome.cache(f"L2[{agent}]").invalidations == 1
    assert outcome.memory_writes == 0
    tree.check_invariants()


def test_a_directory_eviction_of_a_modified_line_collects_and_writes_back_the_data() -> None:
    tree = _mesi(2, l1=(1, 2), l2=(1, 4), llc=(1, 2))
    _write(tree, 0, A)
    _read(tree, 1, B)
    outcome = _read(tree, 1, C)
    assert outcome.messages == {"Get": 1, "PutClnX": 1, "Inval": 1, "Inval_Ack": 1}
    assert _states(tree, A) == ["I", "I"]
    assert outcome.cache("L1[0]").writebacks == 1
    assert outcome.cache("LLC").writebacks == 1
    assert outcome.line_transfers[(0, _llc(tree))] == 1
    assert outcome.line_transfers[(_llc(tree), None)] == 1
    assert outcome.memory_writes == 1
    tree.check_invariants()


def test_an_eviction_outwards_of_the_directory_back_invalidates_the_agents() -> None:
    specs = [
        CacheSpec("L1[0]", 1, 2, LINE, L1_LATENCY, 2),
        CacheSpec("L1[1]", 1, 2, LINE, L1_LATENCY, 3),
        CacheSpec("L2[0]", 1, 2, LINE, L2_LATENCY, 4),
        CacheSpec("L2[1]", 1, 2, LINE, L2_LATENCY, 4),
        CacheSpec("LLC", 1, 4, LINE, LLC_LATENCY, 5),
        CacheSpec("memory-side cache", 1, 1, LINE, 20.0, None),
    ]
    tree = CacheTree(specs, directory=4, memory_latency_s=MEMORY_LATENCY)
    assert tree.agents() == [2, 3]
    assert tree.path(0) == (0, 2, 4, 5)
    _write(tree, 0, A)
    outcome = _read(tree, 1, B)  # the one-line memory-side cache evicts A
    assert outcome.messages == {"Get": 1, "PutClnX": 1, "Inval": 1, "Inval_Ack": 1}
    assert [tree.state(cache, A) for cache in (0, 2, 4, 5)] == ["I"] * 4
    assert outcome.cache("LLC").invalidations == 1
    assert outcome.memory_writes == 1
    assert outcome.latency_s == L1_LATENCY + L2_LATENCY + LLC_LATENCY + 20.0 + MEMORY_LATENCY
    tree.check_invariants()


def test_every_request_gets_one_reply_and_every_invalidation_one_acknowledgement() -> None:
    tree = _mesi(3, l1=(2, 2), l2=(2, 2), llc=(4, 2))
    rng = random.Random(7)
    for _ in range(400):
        agent = rng.randrange(3)
        batch = [(rng.randrange(40) * LINE, rng.random() < 0.4) for _ in range(rng.randrange(1, 9))]
        tree.run(agent, batch)
        if rng.random() < 0.05:
            tree.flush(rng.randrange(3))
        tree.check_invariants()
    messages = tree.stats().messages
    replies = sum(messages.get(name, 0) for name in ("PutClnX", "PutS", "PutX", "PutX_N"))
    assert messages["Get"] + messages["GetX"] == replies
    assert messages["Upgrade"] == messages["Upgrade_Ack"]
    assert messages["Inval"] == messages["Inval_Ack"]
    assert messages["Get_Fwd"] == messages["Downgrade_Ack"]
    assert messages["GetX_Fwd"] == messages["GetX_Fwd_Ack"]
    assert messages["Get_Fwd"] > 0 and messages["GetX_Fwd"] > 0 and messages["PutX_N"] > 0


def _cpu_gpu_tree(*, gpu_l2_write_back: bool = True) -> CacheTree:
    """Two CPU agents (L1 -> L2) and one GPU agent (two write-through L1s -> L2), LLC D."""
    specs = [
        CacheSpec("CPU L1[0]", 2, 2, LINE, 1.0, 4),
        CacheSpec("CPU L1[1]", 2, 2, LINE, 1.0, 5),
        CacheSpec("GPU L1[0]", 2, 2, LINE, 3.0, 6, write_back=False),
        CacheSpec("GPU L1[1]", 2, 2, LINE, 3.0, 6, write_back=False),
        CacheSpec("CPU L2[0]", 4, 2, LINE, 2.0, 7),
        CacheSpec("CPU L2[1]", 4, 2, LINE, 2.0, 7),
        CacheSpec("GPU L2", 4, 4, LINE, 5.0, 7, write_back=gpu_l2_write_back),
        CacheSpec("LLC", 8, 4, LINE, 10.0, None),
    ]
    return CacheTree(specs, directory=7, memory_latency_s=100.0)


def test_caches_inside_one_agent_follow_its_state_and_are_not_coherent_with_each_other() -> None:
    tree = _cpu_gpu_tree()
    tree.run(2, [(A, False)])
    tree.run(3, [(A, True)])  # E -> M silently: the sibling GPU L1 keeps a (stale) copy
    assert [tree.state(cache, A) for cache in (2, 3, 6)] == ["M", "M", "M"]
    # Write-through: the GPU L1s stay clean, the write lands in the GPU L2.
    assert tree.stats().cache("GPU L1[1]").writebacks == 1
    outcome = tree.run(0, [(A, False)])
    assert outcome.messages == {"Get": 1, "Get_Fwd": 1, "PutS": 1, "Downgrade_Ack": 1}
    assert outcome.cache("GPU L2").writebacks == 1
    # Owner probe: GPU L2 then one GPU L1 holding the line.
    assert outcome.latency_s == 1.0 + 2.0 + 10.0 + 5.0 + 3.0
    assert [tree.state(cache, A) for cache in (0, 2, 3, 6)] == ["S"] * 4
    tree.check_invariants()


@pytest.mark.parametrize("gpu_l2_write_back", [True, False])
def test_random_traffic_keeps_inclusion_and_the_directory_exact(gpu_l2_write_back: bool) -> None:
    tree = _cpu_gpu_tree(gpu_l2_write_back=gpu_l2_write_back)
    rng = random.Random(11)
    for _ in range(600):
        leaf = rng.choice(tree.leaves())
        batch = [
            (rng.randrange(48) * LINE, rng.random() < 0.3) for _ in range(rng.randrange(1, 12))
        ]
        tree.run(leaf, batch)
        if rng.random() < 0.05:
            tree.flush(rng.choice(tree.leaves()))
        tree.check_invariants()


# -- tree rules without a directory ----------------------------------------------------


def _shared_l2(*, l1: tuple[int, int] = (2, 2), l2: tuple[int, int] = (4, 2)) -> CacheTree:
    """Two leaves (caches 0 and 1) sharing an L2 (cache 2), no coherence."""
    specs = [
        CacheSpec("L1[0]", l1[0], l1[1], LINE, L1_LATENCY, 2),
        CacheSpec("L1[1]", l1[0], l1[1], LINE, L1_LATENCY, 2),
        CacheSpec("L2", l2[0], l2[1], LINE, L2_LATENCY, None),
    ]
    return CacheTree(specs, memory_latency_s=MEMORY_LATENCY)


def test_a_shared_cache_serves_a_line_another_leaf_brought_in() -> None:
    tree = _shared_l2()
    assert tree.leaves() == [0, 1]
    first = _read(tree, 0, A)
    second = _read(tree, 1, A)
    assert first.memory_reads == 1 and second.memory_reads == 0
    assert second.cache("L2").hits == 1
    assert second.line_transfers == {(2, 1): 1}
    assert second.latency_s == L1_LATENCY + L2_LATENCY
    assert second.messages == {}


def test_without_a_directory_a_write_leaves_stale_copies_elsewhere() -> None:
    tree = _shared_l2()
    _read(tree, 0, A)
    _read(tree, 1, A)
    outcome = _write(tree, 0, A)
    assert outcome.messages == {}
    assert (tree.state(0, A), tree.state(1, A), tree.state(2, A)) == ("M", "E", "E")
    assert sum(counts.invalidations for counts in outcome.caches) == 0


def test_an_eviction_back_invalidates_the_line_in_every_descendant() -> None:
    tree = _shared_l2(l2=(1, 2))
    _read(tree, 0, A)
    _write(tree, 1, A)
    _read(tree, 0, B)
    outcome = _read(tree, 0, C)  # the two-line L2 evicts A from both leaves
    assert outcome.cache("L2").evictions == 1
    assert outcome.cache("L1[0]").invalidations == outcome.cache("L1[1]").invalidations == 1
    assert outcome.cache("L1[1]").writebacks == 1  # the dirty copy is merged
    assert outcome.cache("L2").writebacks == 1
    assert outcome.line_transfers[(1, 2)] == 1
    assert outcome.line_transfers[(2, None)] == 1
    assert outcome.memory_writes == 1
    assert (tree.state(0, A), tree.state(1, A)) == ("I", "I")
    tree.check_invariants()


def test_a_write_through_cache_passes_every_write_outwards() -> None:
    specs = [
        CacheSpec("L1", 2, 2, LINE, L1_LATENCY, 1, write_back=False),
        CacheSpec("L2", 4, 2, LINE, L2_LATENCY, 2),
        CacheSpec("L3", 4, 2, LINE, 4.0, None, write_back=False),
    ]
    tree = CacheTree(specs, memory_latency_s=MEMORY_LATENCY)
    outcome = tree.run(0, [(A, True), (A, True)])
    assert (tree.state(0, A), tree.state(1, A), tree.state(2, A)) == ("E", "M", "E")
    assert outcome.cache("L1").writebacks == 2
    assert outcome.line_transfers[(0, 1)] == 2
    assert outcome.memory_writes == 0
    # A single chain is all private: the flush empties it, L2's dirty line going through
    # the write-through L3 to memory.
    flushed = tree.flush(0)
    assert flushed.memory_writes == 1
    assert flushed.cache("L3").writebacks == 1
    assert [tree.state(cache, A) for cache in (0, 1, 2)] == ["I", "I", "I"]
    tree.check_invariants()


def test_a_write_through_root_sends_each_write_to_memory() -> None:
    tree = CacheTree([CacheSpec("L1", 2, 2, LINE, L1_LATENCY, None, write_back=False)])
    outcome = tree.run(0, [(A, True), (A, False), (A, True)])
    assert outcome.memory_writes == 2
    assert outcome.memory_reads == 1
    assert tree.state(0, A) == "E"


@pytest.mark.parametrize("seed", [1, 2, 3, 4])
@pytest.mark.parametrize(
    "geometry",
    [((4, 2), (8, 2), (8, 4)), ((1, 1), (2, 2), (4, 2)), ((2, 4), (2, 8), (16, 4))],
)
def test_a_chain_without_a_directory_equals_the_cache_hierarchy(
    seed: int, geometry: tuple[tuple[int, int], ...]
) -> None:
    latencies = (1.0, 3.0, 7.0)
    levels = tuple(
        CacheLevelConfig(f"L{index + 1}", sets, ways, LINE, latencies[index])
        for index, (sets, ways) in enumerate(geometry)
    )
    reference = CacheHierarchy(CacheHierarchyConfig(levels, memory_latency_cycles=50.0))
    specs = [
        CacheSpec(
            level.name,
            level.sets,
            level.ways,
            LINE,
            level.latency_cycles,
            index + 1 if index + 1 < len(levels) else None,
        )
        for index, level in enumerate(levels)
    ]
    tree = CacheTree(specs, memory_latency_s=50.0)
    rng = random.Random(seed)
    stream = [(rng.randrange(256) * 4, rng.random() < 0.3) for _ in range(5000)]
    expected = reference.run(stream)
    outcome = tree.run(0, stream)
    for level, counts in zip(expected.levels, outcome.caches, strict=True):
        assert (counts.accesses, counts.hits, counts.misses) == (
            level.accesses,
            level.hits,
            level.misses,
        )
        assert (counts.evictions, counts.writebacks, counts.invalidations) == (
            level.evictions,
            level.writebacks,
            level.back_invalidations,
        )
    assert (outcome.memory_reads, outcome.memory_writes) == (
        expected.memory_reads,
        expected.memory_writes,
    )
    assert outcome.latency_s == pytest.approx(expected.total_latency_cycles)
    assert outcome.accesses == expected.accesses
    tree.check_invariants()


# -- flush -----------------------------------------------------------------------------


def test_a_flush_writes_back_the_private_path_and_keeps_shared_caches() -> None:
    tree = _shared_l2()
    lines = [A, LINE, 3 * LINE]  # sets 0, 1, 1 of the L1: nothing is evicted
    tree.run(0, [(lines[0], True), (lines[1], False), (lines[2], True)])
    assert tree.private_path(0) == (0,)
    outcome = tree.flush(0)
    assert outcome.accesses == 0
    assert outcome.cache("L1[0]").invalidations == 3  # the middle line is clean
    assert outcome.cache("L1[0]").writebacks == outcome.cache("L2").writebacks == 2
    assert outcome.memory_writes == 2
    assert outcome.line_transfers == {(0, 2): 2, (2, None): 2}
    assert outcome.latency_s == 2 * (L1_LATENCY + L2_LATENCY + MEMORY_LATENCY)
    assert [tree.state(0, address) for address in lines] == ["I", "I", "I"]
    assert [tree.state(2, address) for address in lines] == ["E", "E", "E"]
    assert tree.flush(0).memory_writes == 0
    tree.check_invariants()


def test_a_flush_in_a_coherent_agent_gives_its_lines_back_to_the_directory() -> None:
    tree = _mesi(2)
    _write(tree, 0, A)
    _read(tree, 0, B)
    assert tree.private_path(0) == (0, _l2(tree, 0))
    outcome = tree.flush(0)
    assert outcome.messages == {"Write_Back": 1, "Clean_Write_Back": 1}
    assert outcome.memory_writes == 1
    assert outcome.cache("L1[0]").writebacks == 1
    assert outcome.cache("L2[0]").writebacks == outcome.cache("LLC").writebacks == 1
    assert outcome.latency_s == L2_LATENCY + LLC_LATENCY + MEMORY_LATENCY
    assert tree.holders(A) == tree.holders(B) == {}
    assert tree.state(_llc(tree), A) == "E"
    tree.check_invariants()


def test_a_flush_below_a_shared_agent_cache_keeps_the_agent_holding_the_line() -> None:
    tree = _cpu_gpu_tree()
    tree.run(2, [(A, False)])
    assert tree.private_path(2) == (2,)
    outcome = tree.flush(2)
    assert outcome.messages == {}
    assert tree.state(2, A) == "I"
    assert tree.state(6, A) == "E"


# -- outcomes, inputs and validation -----------------------------------------------------


def test_outcomes_add_up_to_the_cumulative_stats_and_serialise() -> None:
    tree = _mesi(2)
    outcomes = [
        tree.run(0, [(A, True), (B, False)]),
        tree.run(1, [(A, False), (B, True), (C, False)]),
        tree.flush(0),
    ]
    stats = tree.stats()
    assert stats.accesses == sum(outcome.accesses for outcome in outcomes) == 5
    assert stats.latency_s == pytest.approx(sum(outcome.latency_s for outcome in outcomes))
    for index, counts in enumerate(stats.caches):
        assert counts.hits == sum(outcome.caches[index].hits for outcome in outcomes)
        assert counts.writebacks == sum(outcome.caches[index].writebacks for outcome in outcomes)
    total: dict[str, int] = {}
    for outcome in outcomes:
        for name, count in outcome.messages.items():
            total[name] = total.get(name, 0) + count
    assert stats.messages == total
    encoded = json.loads(json.dumps(stats.to_dict()))
    assert encoded["caches"][0]["name"] == "L1[0]"
    assert {"from": None, "to": _llc(tree), "lines": stats.line_transfers[(None, _llc(tree))]} in (
        encoded["line_transfers"]
    )
    assert json.dumps(outcomes[0].to_dict())


def test_run_arrays_accepts_numpy_arrays_buffers_and_lists() -> None:
    rng = random.Random(5)
    addresses = [rng.randrange(64) * LINE for _ in range(300)]
    writes = [rng.random() < 0.3 for _ in range(300)]
    expected = _mesi(2).run(0, zip(addresses, writes, strict=True))
    inputs = [
        (np.array(addresses, dtype=np.int64), np.array(writes)),
        (array.array("q", addresses), memoryview(bytes(writes))),
        (addresses, writes),
    ]
    for given_addresses, given_writes in inputs:
        assert _mesi(2).run_arrays(0, given_addresses, given_writes) == expected
    reads = _mesi(2).run_arrays(0, np.array(addresses))
    assert reads == _mesi(2).run(0, [(address, False) for address in addresses])
    with pytest.raises(ValueError, match=ERR_ARRAY_LENGTHS.format(addresses=2, writes=1)):
        _mesi(2).run_arrays(0, [0, 16], [True])


def test_it_rejects_bad_addresses_and_non_leaves() -> None:
    tree = _mesi(2)
    for bad in (-1, 1.5, True, "16"):
        with pytest.raises(ValueError, match=ERR_ADDRESS.format(value=bad).replace(".", r"\.")):
            tree.run(0, [(bad, False)])  # type: ignore[list-item]
    with pytest.raises(ValueError) as raised:
        tree.run(_llc(tree), [(A, False)])
    assert str(raised.value) == ERR_NOT_LEAF.format(leaf=_llc(tree), leaves=[0, 1])
    with pytest.raises(ValueError):
        tree.flush(_l2(tree, 0))


def _spec(name: str, parent: int | None, **changes: object) -> CacheSpec:
    fields: dict[str, object] = {
        "name": name,
        "sets": 2,
        "ways": 2,
        "line_bytes": LINE,
        "latency_s": 1.0,
        "parent": parent,
    }
    fields.update(changes)
    return CacheSpec(**fields)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("build", "message"),
    [
        (lambda: CacheTree([]), ERR_NO_CACHES),
        (
            lambda: CacheTree([_spec("L1", 1), _spec("L1", None)]),
            ERR_DUPLICATE.format(name="L1"),
        ),
        (
            lambda: CacheTree([_spec("L1", 1), _spec("L2", None, line_bytes=32)]),
            ERR_LINE_BYTES.format(name="L2", value=32, expected=LINE),
        ),
        (
            lambda: CacheTree([_spec("L1", 5)]),
            ERR_PARENT.format(name="L1", parent=5),
        ),
        (
            lambda: CacheTree([_spec("L1", 0)]),
            ERR_PARENT.format(name="L1", parent=0),
        ),
        (
            lambda: CacheTree([_spec("L1", 1), _spec("L2", 2), _spec("L3", 1)]),
            ERR_CYCLE.format(name="L2"),
        ),
        (
            lambda: CacheTree([_spec("L1", None)], directory=3),
            ERR_DIRECTORY.format(directory=3),
        ),
        (
            lambda: CacheTree([_spec("L1", 1), _spec("L2", None)], directory=0),
            ERR_DIRECTORY_CHILDLESS.format(name="L1"),
        ),
        (
            lambda: CacheTree([_spec("L1", None)], memory_latency_s=-1.0),
            ERR_MEMORY_LATENCY.format(value=-1.0),
        ),
        (lambda: _spec("L1", None, ways=0), ERR_GEOMETRY.format(name="L1")),
        (
            lambda: _spec("L1", None, latency_s=float("nan")),
            ERR_LATENCY.format(name="L1", value=float("nan")),
        ),
    ],
)
def test_it_rejects_malformed_trees_with_a_message_naming_the_cache(
    build: object, message: str
) -> None:
    with pytest.raises(ValueError) as raised:
        build()  # type: ignore[operator]
    assert str(raised.value) == message


def test_from_size_derives_the_sets_of_table_4_1_caches() -> None:
    llc = CacheSpec.from_size(
        "L3", size_bytes=2 * 1024 * 1024, ways=16, line_bytes=64, latency_s=1e-9, parent=None
    )
    assert (llc.sets, llc.size_bytes) == (2048, 2 * 1024 * 1024)
    with pytest.raises(ValueError, match="positive integers"):
        CacheSpec.from_size("L1", size_bytes=1000, ways=2, line_bytes=64, latency_s=0, parent=None)


def test_a_write_through_agent_passes_a_forwarded_dirty_line_to_the_directory() -> None:
    tree = _cpu_gpu_tree(gpu_l2_write_back=False)
    tree.run(0, [(A, True)])
    outcome = tree.run(2, [(A, True)])
    assert outcome.messages == {"GetX": 1, "GetX_Fwd": 1, "PutX": 1, "GetX_Fwd_Ack": 1}
    assert [tree.state(cache, A) for cache in (0, 4, 2, 6)] == ["I", "I", "M", "M"]
    # The CPU's dirty data and the GPU's write both go through the GPU L2 into the LLC.
    assert outcome.cache("GPU L2").writebacks == 2
    assert tree.state(7, A) == "M"
    tree.check_invariants()
