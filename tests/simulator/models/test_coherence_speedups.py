"""The cache tree's C core (simulator/_cachesim.c `Tree`) against its Python reference.

`CacheTree` runs on the C core when it is built; `PythonCacheTree` always runs the pure-Python
reference. Seeded random multi-agent workloads on tiny caches, where evictions,
back-invalidations, forwards, upgrades and directory evictions happen all the time, must give
both the same outcome for every call (every field, the latency bit for bit), the same
cumulative stats, the same contents of every cache in LRU order and the same directory. The
C-against-Python tests skip when the C core is not in use, except under
PARASIM_REQUIRE_SPEEDUPS=1 (CI), where its absence fails them.
"""

from __future__ import annotations

import os
import random
import subprocess
import sys
from array import array
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

from simulator.models.coherence import (
    ERR_ADDRESS,
    CacheSpec,
    CacheTree,
    PythonCacheTree,
    TraceOutcome,
    tree_core,
)

LINE = 16


def _latency(rng: random.Random) -> float:
    """Return an awkward latency, so that adding floats in another order shows."""
    return rng.uniform(0.1, 3.0) * 1e-9


def _agent(
    specs: list[CacheSpec],
    rng: random.Random,
    name: str,
    parent: int,
    levels: int,
    inner_leaves: int = 1,
    write_through: bool = False,
) -> None:
    """Append an agent of `levels` private levels under `parent`: a top cache, caches
    below it, and `inner_leaves` leaves under the innermost shared one (GPU-like L1s)."""
    top = len(specs)
    specs.append(
        CacheSpec(
            f"{name} L{levels}",
            rng.choice([1, 2, 3]),
            rng.choice([2, 3, 4]),
            LINE,
            _latency(rng),
            parent,
            write_back=not (write_through and levels == 1),
        )
    )
    above = top
    for level in range(levels - 1, 1, -1):
        specs.append(
            CacheSpec(f"{name} L{level}", rng.choice([1, 2]), 2, LINE, _latency(rng), above)
        )
        above = len(specs) - 1
    if levels == 1:
        return
    for leaf in range(inner_leaves):
        specs.append(
            CacheSpec(
                f"{name} L1[{leaf}]",
                rng.choice([1, 2]),
                rng.choice([1, 2]),
                LINE,
                _latency(rng),
                above,
                write_back=not write_through,
            )
        )


def _coherent(agents: int, seed: int, *, outer: bool = False) -> tuple[list[CacheSpec], int]:
    """Return `agents` agents of 1-3 private levels under a small LLC holding the directory;
    with `outer`, an L4 above the LLC that also serves a non-coherent leaf."""
    rng = random.Random(seed)
    specs: list[CacheSpec] = []
    if outer:
        specs.append(CacheSpec("L4", 2, 6, LINE, _latency(rng), None))
        specs.append(CacheSpec("stray L1", 1, 2, LINE, _latency(rng), 0))
    llc = len(specs)
    specs.append(CacheSpec("LLC", 2, 4, LINE, _latency(rng), 0 if outer else None))
    for agent in range(agents):
        _agent(
            specs,
            rng,
            f"A{agent}",
            llc,
            levels=1 + agent % 3,
            inner_leaves=1 + (agent % 4 == 2),
            write_through=agent % 5 == 4,
        )
    return specs, llc


def _plain(seed: int) -> list[CacheSpec]:
    """Return a tree without coherence: two leaves share an L2, a third has its own, a
    write-through L1 among them, under a small L3."""
    rng = random.Random(seed)
    return [
        CacheSpec("L3", 2, 4, LINE, _latency(rng), None),
        CacheSpec("L2 shared", 2, 2, LINE, _latency(rng), 0),
        CacheSpec("L2 own", 1, 3, LINE, _latency(rng), 0),
        CacheSpec("L1 a", 1, 2, LINE, _latency(rng), 1),
        CacheSpec("L1 b", 2, 1, LINE, _latency(rng), 1, write_back=False),
        CacheSpec("L1 c", 1, 2, LINE, _latency(rng), 2),
    ]


def _chain(seed: int) -> list[CacheSpec]:
    """Return a chain (every cache one child at most, all writing back, no directory): the
    C core walks it by position (`chain_access` in simulator/_cachesim_tree.c), the shape on
    which `CacheHierarchy` runs."""
    rng = random.Random(seed)
    return [
        CacheSpec("L3", 2, 4, LINE, _latency(rng), None),
        CacheSpec("L2", 2, 2, LINE, _latency(rng), 0),
        CacheSpec("L1", 1, 2, LINE, _latency(rng), 1),
    ]


TREES: dict[str, Callable[[], tuple[list[CacheSpec], int | None]]] = {
    "plain": lambda: (_plain(1), None),
    "chain": lambda: (_chain(5), None),
    "mesi-2": lambda: _coherent(2, 2),
    "mesi-3": lambda: _coherent(3, 3),
    "mesi-9": lambda: _coherent(9, 9),
    "mesi-3-under-l4": lambda: _coherent(3, 4, outer=True),
    "mesi-70": lambda: _coherent(70, 70),  # more agents than one 64-bit word of holders
}
WRITE_FRACTIONS = [0.0, 0.3, 1.0]


@pytest.fixture
def c_tree() -> type[CacheTree]:
    """Return CacheTree when it runs on the C core; skip (or fail where required)."""
    if os.environ.get("PARASIM_PURE_PYTHON"):
        pytest.skip("PARASIM_PURE_PYTHON is set: CacheTree runs the Python core")
    if tree_core is None:
        if os.environ.get("PARASIM_REQUIRE_SPEEDUPS") == "1":
            pytest.fail("simulator/_cachesim.c is not built: python -m simulator.build_speedups")
        pytest.skip("the C cache core is not built (python -m simulator.build_speedups)")
    return CacheTree


def _pair(
    specs: list[CacheSpec], directory: int | None, tree: type[CacheTree]
) -> tuple[CacheTree, PythonCacheTree]:
    c = tree(specs, directory=directory, memory_latency_s=51.3e-9)
    python = PythonCacheTree(specs, directory=directory, memory_latency_s=51.3e-9)
    assert c.core == "C"
    assert python.core == "Python"
    return c, python


def _assert_same_state(c: CacheTree, python: PythonCacheTree, touched: set[int]) -> None:
    assert c.stats() == python.stats()
    for cache in range(len(c.specs)):
        assert c.contents(cache) == python.contents(cache), c.specs[cache].name
    assert c.directory_entries() == python.directory_entries()
    for line in touched:
        address = line * LINE
        assert c.holders(address) == python.holders(address)
        for cache in range(len(c.specs)):
            assert c.state(cache, address) == python.state(cache, address)


def _call(
    tree: CacheTree, how: str, leaf: int, addresses: list[int], writes: list[bool]
) -> TraceOutcome:
    """Run one call through one of the entry points (the same accesses either way)."""
    if how == "run":
        return tree.run(leaf, list(zip(addresses, writes, strict=True)))
    if how == "generator":
        return tree.run(leaf, ((a, w) for a, w in zip(addresses, writes, strict=True)))
    if how == "array":
        return tree.run_arrays(leaf, array("Q", addresses), bytes(writes))
    if how == "numpy":
        return tree.run_arrays(
            leaf, np.array(addresses, dtype=np.int64), np.array(writes, dtype=bool)
        )
    if how == "numpy-reads":
        return tree.run_arrays(leaf, np.array(addresses, dtype=np.uint64))
    if how == "numpy-items":  # NumPy scalars in a list: the slow path of every access
        return tree.run_arrays(leaf, [np.int64(a) for a in addresses], writes)
    return tree.run_arrays(leaf, addresses, writes)


HOWS = ["run", "generator", "array", "numpy", "numpy-reads", "numpy-items", "lists"]


@pytest.mark.parametrize("write_fraction", WRITE_FRACTIONS)
@pytest.mark.parametrize("seed", [1, 2, 3])
@pytest.mark.parametrize("name", list(TREES))
def test_the_c_core_matches_the_python_core_call_by_call(
    c_tree: type[CacheTree], name: str, seed: int, write_fraction: float
) -> None:
    specs, directory = TREES[name]()
    c, python = _pair(specs, directory, c_tree)
    rng = random.Random(seed * 1000 + int(write_fraction * 10))
    leaves = c.leaves()
    capacity = sum(spec.sets * spec.ways for spec in specs)
    pool = [rng.randrange(3 * capacity) for _ in range(max(8, capacity))]
    touched: set[int] = set()
    for call in range(120):
        leaf = rng.choice(leaves)
        if rng.random() < 0.08:
            assert c.flush(leaf) == python.flush(leaf), f"flush {call}"
            continue
        how = HOWS[call % len(HOWS)]
        hot = rng.sample(pool, 4)
        lines = [
            rng.choice(hot) if rng.random() < 0.6 else rng.choice(pool)
            for _ in range(rng.randrange(1, 80))
        ]
        touched.update(lines)
        addresses = [line * LINE + rng.randrange(LINE) for line in lines]
        writes = [rng.random() < write_fraction for _ in lines]
        if how == "numpy-reads":
            writes = [False] * len(lines)
        outcome = _call(c, how, leaf, addresses, writes)
        assert outcome == _call(python, how, leaf, addresses, writes), f"call {call} ({how})"
        if call % 40 == 39:
            c.check_invariants()
            python.check_invariants()
            _assert_same_state(c, python, touched)
    _assert_same_state(c, python, touched)
    c.check_invariants()


@pytest.mark.parametrize("name", list(TREES))
def test_the_workloads_exercise_every_protocol_path(c_tree: type[CacheTree], name: str) -> None:
    """The differential test above is only as good as what its workloads do."""
    specs, directory = TREES[name]()
    tree = c_tree(specs, directory=directory)
    rng = random.Random(7)
    capacity = sum(spec.sets * spec.ways for spec in specs)
    pool = [rng.randrange(3 * capacity) for _ in range(max(8, capacity))]
    for _ in range(300):
        hot = rng.sample(pool, 4)
        lines = [rng.choice(hot) if rng.random() < 0.6 else rng.choice(pool) for _ in range(20)]
        tree.run_arrays(
            rng.choice(tree.leaves()),
            [line * LINE for line in lines],
            [rng.random() < 0.3 for _ in lines],
        )
    stats = tree.stats()
    # Caches larger than what back-invalidation leaves them may never fill up.
    if directory is None:
        assert all(counts.evictions for counts in stats.caches)
    else:
        assert stats.caches[directory].evictions
        assert sum(1 for top in tree.agents() if stats.caches[top].evictions) >= 2
    assert sum(counts.invalidations for counts in stats.caches) > 0
    if directory is not None:
        for message in ("Get_Fwd", "GetX_Fwd", "Upgrade", "PutX_N", "Inval", "Write_Back"):
            assert stats.messages.get(message, 0) > 0, message


@pytest.mark.parametrize("bad", [-1, 1.5, True, "16"])
def test_an_error_mid_run_leaves_both_cores_alike(c_tree: type[CacheTree], bad: Any) -> None:
    specs, directory = _coherent(3, 5)
    c, python = _pair(specs, directory, c_tree)
    leaf = c.leaves()[0]
    addresses = [0, 16, 0, 32, 0, bad, 48]
    writes = [False, True, False, False, True, False, True]
    for tree in (c, python):
        with pytest.raises(ValueError, match=ERR_ADDRESS.format(value=bad).replace(".", r"\.")):
            tree.run_arrays(leaf, addresses, writes)
    _assert_same_state(c, python, {0, 1, 2, 3})
    for tree in (c, python):
        with pytest.raises(ValueError, match=ERR_ADDRESS.format(value=-3)):
            tree.run_arrays(leaf, np.array([0, 64, -3, 0], dtype=np.int64))
    _assert_same_state(c, python, {0, 1, 2, 3, 4})


def test_the_c_core_takes_no_line_beyond_64_bits(c_tree: type[CacheTree]) -> None:
    tree = c_tree([CacheSpec("L1", 2, 2, 1, 1.0, None)])
    with pytest.raises(OverflowError, match="64-bit line numbers"):
        tree.run(0, [(1 << 64, False)])
    assert tree.state(0, 1 << 70) == "I"
    assert tree.holders(1 << 70) == {}


def test_the_c_core_is_built_where_required() -> None:
    if os.environ.get("PARASIM_REQUIRE_SPEEDUPS") != "1":
        pytest.skip("PARASIM_REQUIRE_SPEEDUPS is not set (CI sets it)")
    if os.environ.get("PARASIM_PURE_PYTHON"):
        pytest.skip("PARASIM_PURE_PYTHON is set: CacheTree runs the Python core")
    assert tree_core is not None, "simulator/_cachesim.c is not built (or has no Tree)"
    assert CacheTree([CacheSpec("L1", 1, 1, LINE, 1.0, None)]).core == "C"


def test_parasim_pure_python_turns_the_c_core_off() -> None:
    code = (
        "from simulator.models import coherence as c; "
        "print(c.tree_core is None, c.CacheTree([c.CacheSpec('L1', 1, 1, 16, 1.0, None)]).core)"
    )
    env = {**os.environ, "PARASIM_PURE_PYTHON": "1"}
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=env, check=True
    )
    assert done.stdout.split() == ["True", "Python"]
