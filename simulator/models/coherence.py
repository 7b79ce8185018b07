"""A functional simulator of a tree of caches with an optional MESI directory.

`simulator.models.cache` simulates one chain of caches; a CPU-GPU system has many agents
(CPU cores, GPU compute units) whose private caches feed shared ones, kept coherent by a
directory at the shared last-level cache, as in M2S-CGM (002, sections 3.2.5 and 3.2.6).
`CacheTree` simulates that: every cache names its parent (the next cache outwards, None for
main memory), accesses enter at the leaves, and a `TraceOutcome` counts what one call did
per cache, the lines moved between caches, the coherence messages and the summed latency.
There is no time and no contention here: the runtime turns the counts into both.

Tree rules (those of `simulator.models.cache`, generalised):

* LRU within a set; a hit makes the line most recently used in that cache only.
* Write-allocate: a write miss fetches the line like a read, then the leaf's copy is
  written. A write-back cache marks its copy dirty; a write-through cache
  (`CacheSpec.write_back=False`) never holds a dirty line and passes every write it
  receives to its parent at once (counted as one write-back of that cache and one line
  transfer; a write reaching memory is a memory write). Passing a write on costs no latency.
* Inclusive: a miss goes to the parent; the line is installed in every cache on the path,
  outermost first, so an outer eviction never removes the line being installed. Evicting a
  line from a cache back-invalidates its copies in every descendant; a dirty copy there is
  merged into the outgoing line and counted as a write-back of that descendant (one line
  transfer descendant -> evicting cache). A dirty eviction is written back into the parent,
  which holds the line by inclusion, without changing the parent's LRU order, or to memory.
* Every write-back is one line transfer from the cache that sent it to the receiver, so
  `writebacks` of a cache equals the transfers leaving it outwards.
* An access touches the one line holding its address (callers split accesses crossing a
  line boundary); one line size serves the whole tree.

Without a directory (``directory=None``) nothing is coherent: subtrees hold independent
copies, a write does not invalidate other subtrees, and `CacheTree.flush` is how software
makes its data visible. Shared caches still serve whoever misses into them. A chain without
a directory behaves exactly like `cache.CacheHierarchy` (a test holds them equal).

With a directory at cache D the coherent agents are the subtrees rooted at D's children
(an agent's "top" cache). The directory records, per line, which agents hold it and in
which MESI state; the caches inside an agent follow the state of their top cache, and
inside an agent caches obey the plain tree rules (two GPU L1s under one GPU L2 agent are
not coherent with each other, as GPU L1s are not). D and the caches outwards of it are
plain inclusive caches. Because inclusion holds, an agent holds a line exactly when its top
cache does, and D holds every line an agent holds. Leaves outside D's subtree are not
coherent. The protocol is the directory MESI with request forwarding ("three-way hop") of
002 section 3.2.6; message names are those of Tables 3.2-3.5 and the text beside them:

====================  ===============================================================
message               when (generic MESI name)
====================  ===============================================================
Get / GetX            load / store miss in the whole agent, agent -> D (GetS / GetM)
Upgrade, Upgrade_Ack  store to a line the agent holds in S; D answers at once (Table 3.5)
PutClnX               D's data reply to a Get when no other agent holds the line: E
PutS                  shared data: D's reply to a Get when others hold it in S, or the
                      owner's reply to the requester after a Get_Fwd
PutX                  data with write permission: D's reply to a GetX nobody else holds,
                      or the owner's reply to the requester after a GetX_Fwd
PutX_N                D's reply to a GetX while other agents hold S (Table 3.5, S row)
Get_Fwd               D -> owner (E or M elsewhere) on a Get: the owner downgrades to S
Downgrade_Ack         owner -> D after a Get_Fwd; it carries the line when dirty (the
                      "sharing write-back" of 3.2.6.3)
GetX_Fwd              D -> owner on a GetX: the owner invalidates and forwards the line
GetX_Fwd_Ack          owner -> D after a GetX_Fwd (no data: the requester now owns it)
Inval, Inval_Ack      one each per other holder invalidated by a GetX or an Upgrade,
                      and per holder back-invalidated when D (or a cache outwards of D)
                      evicts the line; an M holder's Inval_Ack carries its dirty line
Write_Back            an agent's top cache evicts a line whose data is dirty (PutM)
Clean_Write_Back      an agent's top cache evicts a clean line, E or S (PutE / PutS)
====================  ===============================================================

Choices where 002 leaves room or where a functional model differs:

* Loads: an agent missing a line nobody else holds gets it in E (PutClnX), also when D's
  copy is dirty; Table 3.4 would answer PutX and hand the dirty data to the core. The
  message count is the same; only who writes the line back later differs.
* A store to an E line turns it M silently; a store to an S line is an upgrade "miss" in
  the protocol but a hit in the counters (the tag matched): `hits`/`misses` count tag
  look-ups of data requests, and an Upgrade appears in `messages` only, not as an access
  of the caches between the hit and D or of D.
* The directory knows silent E -> M changes (a functional model sees everything); this
  changes no message, since D forwards to an E or an M owner alike (E_Held and M_Held).
* Evictions notify the directory for every state. In 002 a holder may drop a block the
  directory still lists, and a later forward is NACKed (3.2.6.3); M2S-CGM's source sends a
  write-back for E and M victims and drops S ones silently. Keeping the directory exact
  avoids modelling NACKs and stale sharers. Inner caches of an agent evicting a line do not
  talk to D: the agent still holds it in its top cache.
* A dirty line forwarded by GetX_Fwd is not written back: it moves to the requester and
  is installed dirty in the requester's top cache. A Get_Fwd to a dirty owner writes the
  line back into D (each dirty copy in the owner counts a write-back, transfer copy -> D)
  and the owner's copies become clean S.
* Messages are those between an agent's top cache and D or between agents; requests
  inside an agent and between plain caches are accesses, not messages. Memory traffic is
  `memory_reads` / `memory_writes`, not messages.

Latency (seconds; every cache has its own, since caches run at different clocks), summed
over accesses: an access costs the hit latencies of the caches probed from the leaf
outwards to the one that served it, plus the memory latency when it went to memory. In a
coherent agent a miss in the whole agent probes the agent's caches, then D; when D
forwards to an owner the access adds the owner's probe latency, the latencies from the
owner's top cache down to its deepest cache holding the line (the owner answers after its
inner copies are downgraded or invalidated, as 002's L2 waits for its L1). A GetX that
invalidates sharers adds the slowest sharer's probe latency (the requester waits for the
Inval_Acks, 3.2.6.3); an Upgrade costs the caches from the leaf to the agent's top and D
only (D acknowledges at once and invalidates in parallel). Write-backs, write-throughs and
evictions are off the critical path and cost nothing.

`flush(leaf)` empties the leaf's private path (from the leaf outwards up to, not including,
the first cache under which another leaf sits, and never past D's child): every copy there
is invalidated (counted in `invalidations`), every dirty line is written back through the
outer caches (whose copies become clean) to memory, counted as a write-back of each cache
it leaves and one memory write, and costs the latencies of the caches from the outermost
private one to memory plus the memory latency; clean lines are dropped at no cost. When
the private path includes the agent's top cache the directory is told (Write_Back or
Clean_Write_Back). A flush is not an access: its `accesses` stay 0.

Two cores hold the state and apply these rules: `_PythonTreeCore` here, the reference, and
`simulator/_cachesim.c`'s `Tree`, which `CacheTree` runs on when it is built (`python -m
simulator.build_speedups`, run by `./studio setup`) and PARASIM_PURE_PYTHON is not set, as
`simulator.models.cache` chooses; `PythonCacheTree` always runs the reference. They give the
same counters, line transfers, messages, contents (LRU order included) and directory after any
sequence of calls, and bit-identical latencies: the C core adds the same floats in the same
order (tests/simulator/models/test_coherence_speedups.py holds them equal). The C core takes
addresses whose line number fits in 64 bits (beyond, OverflowError) and trees of at most
`tree_core_max_caches` caches (larger ones run on the reference). `CacheTree.run_arrays` over
buffers of native integers (`array('Q')`, NumPy arrays, `bytes` of write flags) makes no
Python object per access on the C core; lists cost one look-up per item.
"""

from __future__ import annotations

import math
import operator
from collections import OrderedDict, defaultdict
from collections.abc import Iterable, Sequence
from contextlib import ExitStack
from dataclasses import dataclass, fields
from typing import Any

from simulator.models.cache import cachesim

ERR_GEOMETRY = "cache {name!r}: sets, ways and line_bytes must be positive integers"
ERR_LATENCY = "cache {name!r}: latency_s must be a non-negative finite number, got {value!r}"
ERR_NO_CACHES = "a cache tree needs at least one cache"
ERR_DUPLICATE = "cache names must be unique, {name!r} appears twice"
ERR_LINE_BYTES = "cache {name!r}: line_bytes {value} differs from the tree's {expected}"
ERR_PARENT = "cache {name!r}: parent {parent!r} is not the index of another cache"
ERR_CYCLE = "cache {name!r}: its parent chain loops back to it"
ERR_DIRECTORY = "directory {directory!r} is not the index of a cache"
ERR_DIRECTORY_CHILDLESS = "directory cache {name!r} has no child cache to keep coherent"
ERR_MEMORY_LATENCY = "memory_latency_s must be a non-negative finite number, got {value!r}"
ERR_NOT_LEAF = "cache {leaf!r} is not a leaf of the tree; accesses enter at {leaves}"
ERR_CACHE_INDEX = "cache {cache!r} is not the index of a cache"
ERR_ADDRESS = "addresses must be non-negative integers, got {value!r}"
ERR_ARRAY_LENGTHS = "addresses and writes differ in length: {addresses} vs {writes}"

STATES = ("M", "E", "S", "I")

# Coherence messages, in the order of the module docstring's table.
MESSAGES = (
    "Get",
    "GetX",
    "Upgrade",
    "Upgrade_Ack",
    "PutClnX",
    "PutS",
    "PutX",
    "PutX_N",
    "Get_Fwd",
    "Downgrade_Ack",
    "GetX_Fwd",
    "GetX_Fwd_Ack",
    "Inval",
    "Inval_Ack",
    "Write_Back",
    "Clean_Write_Back",
)
(
    _GET,
    _GETX,
    _UPGRADE,
    _UPGRADE_ACK,
    _PUTCLNX,
    _PUTS,
    _PUTX,
    _PUTX_N,
    _GET_FWD,
    _DOWNGRADE_ACK,
    _GETX_FWD,
    _GETX_FWD_ACK,
    _INVAL,
    _INVAL_ACK,
    _WRITE_BACK,
    _CLEAN_WRITE_BACK,
) = range(len(MESSAGES))

# Roles of a cache under a directory; without one every cache is _PLAIN.
_PLAIN = 0  # no coherence duty: inside an agent, or outside D's subtree
_AGENT_TOP = 1  # a child of D: the agent's top cache, whose evictions notify D
_DIRECTORY_SIDE = 2  # D or a cache outwards of it: losing a line invalidates the agents

tree_core: Any = getattr(cachesim, "Tree", None)
"""`simulator._cachesim.Tree` (the C core of `CacheTree`) when in use, else None: chosen as
`cache.cachesim` is (built, and PARASIM_PURE_PYTHON unset)."""
tree_core_max_caches: int = getattr(cachesim, "TREE_MAX_CACHES", 0)
"""The most caches a tree on the C core may have (its link matrix grows with the square)."""

_LINE_LIMIT = 1 << 64  # the C core's line numbers are 64-bit
# Item formats `run_arrays` passes to the core as buffers (native integers; bool for writes).
_ADDRESS_FORMATS = frozenset("bBhHiIlLqQnN")
_WRITE_FORMATS = _ADDRESS_FORMATS | {"?"}


@dataclass(frozen=True)
class CacheSpec:
    """One cache of the tree: geometry, hit latency, parent index, write policy."""

    name: str
    sets: int
    ways: int
    line_bytes: int
    latency_s: float
    parent: int | None
    write_back: bool = True

    def __post_init__(self) -> None:
        for value in (self.sets, self.ways, self.line_bytes):
            if isinstance(value, bool) or not isinstance(value, int) or value <= 0:
                raise ValueError(ERR_GEOMETRY.format(name=self.name))
        if not _non_negative(self.latency_s):
            raise ValueError(ERR_LATENCY.format(name=self.name, value=self.latency_s))

    @property
    def size_bytes(self) -> int:
        """Return the capacity, sets x ways x line_bytes."""
        return self.sets * self.ways * self.line_bytes

    @classmethod
    def from_size(
        cls,
        name: str,
        *,
        size_bytes: int,
        ways: int,
        line_bytes: int,
        latency_s: float,
        parent: int | None,
        write_back: bool = True,
    ) -> CacheSpec:
        """Return the cache of the given capacity and associativity (sets derived)."""
        if ways <= 0 or line_bytes <= 0 or size_bytes % (ways * line_bytes) != 0:
            raise ValueError(ERR_GEOMETRY.format(name=name))
        sets = size_bytes // (ways * line_bytes)
        return cls(name, sets, ways, line_bytes, latency_s, parent, write_back)


@dataclass(frozen=True)
class CacheCounts:
    """What one cache saw.

    accesses: data requests that looked it up (hits + misses). writebacks: dirty lines it
    sent outwards (evictions, merges into an outer eviction, sharing write-backs, flushes,
    write-through writes). invalidations: copies removed by coherence, back-invalidation or
    a flush.
    """

    name: str
    accesses: int
    hits: int
    misses: int
    evictions: int
    writebacks: int
    invalidations: int

    @property
    def hit_ratio(self) -> float:
        """Return hits / accesses (the local hit ratio), 0 when nothing looked it up."""
        return self.hits / self.accesses if self.accesses else 0.0

    def to_dict(self) -> dict[str, Any]:
        """Return the counts as a JSON-ready dict."""
        return {field.name: getattr(self, field.name) for field in fields(self)}


@dataclass(frozen=True)
class _TreeCounts:
    """Counters of a tree: per cache (indexed like the specs), memory, links, messages."""

    caches: tuple[CacheCounts, ...]
    accesses: int
    memory_reads: int
    memory_writes: int
    line_transfers: dict[tuple[int | None, int | None], int]
    messages: dict[str, int]
    latency_s: float

    @property
    def mean_latency_s(self) -> float:
        """Return the average access latency, 0 when there were no accesses."""
        return self.latency_s / self.accesses if self.accesses else 0.0

    def cache(self, name: str) -> CacheCounts:
        """Return the counts of the cache called `name`."""
        for counts in self.caches:
            if counts.name == name:
                return counts
        raise KeyError(name)

    def to_dict(self) -> dict[str, Any]:
        """Return a JSON-ready dict; line transfers become a list of from/to/lines rows."""
        return {
            "caches": [counts.to_dict() for counts in self.caches],
            "accesses": self.accesses,
            "memory_reads": self.memory_reads,
            "memory_writes": self.memory_writes,
            "line_transfers": [
                {"from": source, "to": target, "lines": lines}
                for (source, target), lines in sorted(
                    self.line_transfers.items(), key=lambda item: _link_order(item[0])
                )
            ],
            "messages": dict(sorted(self.messages.items())),
            "latency_s": self.latency_s,
        }


@dataclass(frozen=True)
class TraceOutcome(_TreeCounts):
    """What one `CacheTree.run`, `run_arrays` or `flush` call did."""


@dataclass(frozen=True)
class TreeStats(_TreeCounts):
    """The same counters cumulated since the tree was built."""


class CacheTree:
    """Inclusive LRU caches arranged as a tree, optionally kept coherent by a MESI directory.

    Runs on the C core (`simulator._cachesim.Tree`) when it is built and wanted (see
    `tree_core`), else on `_PythonTreeCore`; `PythonCacheTree` always runs the latter. Both
    give the same outcomes, contents and directory after any sequence of calls.
    """

    def __init__(
        self,
        caches: Sequence[CacheSpec],
        *,
        directory: int | None = None,
        memory_latency_s: float = 0.0,
    ) -> None:
        specs = tuple(caches)
        _validate(specs, directory)
        if not _non_negative(memory_latency_s):
            raise ValueError(ERR_MEMORY_LATENCY.format(value=memory_latency_s))
        count = len(specs)
        self._specs = specs
        self._directory = directory
        self._line_bytes = specs[0].line_bytes
        self._parent = [spec.parent for spec in specs]
        self._ways = [spec.ways for spec in specs]
        self._write_back = [spec.write_back for spec in specs]
        self._latency = [float(spec.latency_s) for spec in specs]
        children: list[list[int]] = [[] for _ in specs]
        for index, spec in enumerate(specs):
            if spec.parent is not None:
                children[spec.parent].append(index)
        self._children = [tuple(kids) for kids in children]
        self._leaves = [index for index in range(count) if not children[index]]
        self._paths = {leaf: tuple(self._chain(leaf)) for leaf in self._leaves}
        roles, self._agent_of, top_depth = self._coherence_layout()
        top_position = {
            leaf: (path.index(self._agent_of[leaf]) if self._agent_of[leaf] >= 0 else -1)
            for leaf, path in self._paths.items()
        }
        leaves_under = [0] * count
        for path in self._paths.values():
            for cache in path:
                leaves_under[cache] += 1
        self._private = {
            leaf: self._private_path(leaf, leaves_under, roles) for leaf in self._leaves
        }
        evict_duty = [
            bool(self._children[cache]) or roles[cache] != _PLAIN for cache in range(count)
        ]
        layout = (
            [
                (
                    spec.sets,
                    spec.ways,
                    float(spec.latency_s),
                    -1 if spec.parent is None else spec.parent,
                    spec.write_back,
                    roles[index],
                    self._agent_of[index],
                    top_depth[index],
                    evict_duty[index],
                )
                for index, spec in enumerate(specs)
            ],
            [
                (leaf, self._paths[leaf], top_position[leaf], self._private[leaf])
                for leaf in self._leaves
            ],
            -1 if directory is None else directory,
            float(memory_latency_s),
            self._line_bytes,
        )
        self._core: _PythonTreeCore = self._core_type(count)(*layout)

    @staticmethod
    def _core_type(caches: int) -> type[_PythonTreeCore]:
        """Return the core class for a tree of `caches` caches: C when it can run it."""
        if tree_core is not None and caches <= tree_core_max_caches:
            core: type[_PythonTreeCore] = tree_core  # the same methods, in C
            return core
        return _PythonTreeCore

    # -- structure ---------------------------------------------------------------------

    @property
    def specs(self) -> tuple[CacheSpec, ...]:
        """Return the caches as given, in index order."""
        return self._specs

    @property
    def directory(self) -> int | None:
        """Return the index of the cache holding the directory, None without coherence."""
        return self._directory

    @property
    def core(self) -> str:
        """Return "C" or "Python": the core this tree runs on."""
        return "Python" if isinstance(self._core, _PythonTreeCore) else "C"

    def leaves(self) -> list[int]:
        """Return the caches nobody has as parent: where accesses enter."""
        return list(self._leaves)

    def agents(self) -> list[int]:
        """Return the top caches of the coherent agents (D's children), [] without one."""
        if self._directory is None:
            return []
        return list(self._children[self._directory])

    def path(self, leaf: int) -> tuple[int, ...]:
        """Return the caches an access entering at `leaf` probes, leaf first."""
        self._check_leaf(leaf)
        return self._paths[leaf]

    def private_path(self, leaf: int) -> tuple[int, ...]:
        """Return the caches `flush(leaf)` empties, leaf first."""
        self._check_leaf(leaf)
        return self._private[leaf]

    def _chain(self, cache: int) -> list[int]:
        chain = []
        current: int | None = cache
        while current is not None:
            chain.append(current)
            current = self._parent[current]
        return chain

    def _coherence_layout(self) -> tuple[list[int], list[int], list[float]]:
        """Return each cache's role, its agent's top cache (-1 if none) and the latency
        from that top cache down to it, inclusive (a forward's probe cost)."""
        count = len(self._specs)
        roles = [_PLAIN] * count
        agent_of = [-1] * count
        top_depth = [0.0] * count
        directory = self._directory
        if directory is None:
            return roles, agent_of, top_depth
        for cache in self._chain(directory):
            roles[cache] = _DIRECTORY_SIDE
        for top in self._children[directory]:
            roles[top] = _AGENT_TOP
            stack = [(top, 0.0)]
            while stack:
                cache, above = stack.pop()
                agent_of[cache] = top
                top_depth[cache] = above + self._latency[cache]
                stack.extend((child, top_depth[cache]) for child in self._children[cache])
        return roles, agent_of, top_depth

    def _private_path(
        self, leaf: int, leaves_under: list[int], roles: list[int]
    ) -> tuple[int, ...]:
        """Return the caches from `leaf` outwards that no other leaf uses, stopping at the
        agent's top cache."""
        private = []
        for cache in self._paths[leaf]:
            if leaves_under[cache] > 1 or roles[cache] == _DIRECTORY_SIDE:
                break
            private.append(cache)
            if roles[cache] == _AGENT_TOP:
                break
        return tuple(private)

    # -- inspection --------------------------------------------------------------------

    def state(self, cache: int, address: int) -> str:
        """Return "M", "E", "S" or "I" for `cache`'s copy of the line holding `address`.

        Inside a coherent agent this is the agent's directory state. Caches with no
        coherence duty (all of them without a directory, D and the caches outwards of it)
        report "M" for a dirty copy and "E" for a clean one: a plain cache writes a clean
        line without asking anyone, which is what E means.
        """
        self._check_cache(cache)
        line = self._line_of(address)
        if line >= _LINE_LIMIT:
            return "I"  # the C core holds 64-bit line numbers only
        return self._core.state(cache, line)

    def holders(self, address: int) -> dict[int, str]:
        """Return the directory entry of the line of `address`: {agent top cache: state}."""
        line = self._line_of(address)
        if line >= _LINE_LIMIT:
            return {}
        return self._core.holders(line)

    def contains(self, cache: int, address: int) -> bool:
        """Return whether `cache` holds the line of `address`."""
        return self.state(cache, address) != "I"

    def stats(self) -> TreeStats:
        """Return the counters cumulated since construction."""
        (
            accesses,
            hits,
            misses,
            evictions,
            writebacks,
            invalidations,
            transfers,
            messages,
            memory_reads,
            memory_writes,
            latency,
            access_count,
        ) = self._snapshot()
        return TreeStats(
            caches=tuple(
                CacheCounts(
                    name=spec.name,
                    accesses=accesses[index],
                    hits=hits[index],
                    misses=misses[index],
                    evictions=evictions[index],
                    writebacks=writebacks[index],
                    invalidations=invalidations[index],
                )
                for index, spec in enumerate(self._specs)
            ),
            accesses=access_count,
            memory_reads=memory_reads,
            memory_writes=memory_writes,
            line_transfers=transfers,
            messages=messages,
            latency_s=latency,
        )

    def contents(self, cache: int) -> list[list[tuple[int, bool]]]:
        """Return, per set of `cache`, its (line number, dirty) pairs, least recently used
        first (what both cores must agree on; tests compare them)."""
        self._check_cache(cache)
        return self._core.contents(cache)

    def directory_entries(self) -> dict[int, dict[int, str]]:
        """Return the whole directory: {line number: {agent top cache: state}}."""
        return self._core.directory_entries()

    def check_invariants(self) -> None:
        """Raise AssertionError unless inclusion and the directory agree with the caches.

        Every line a cache holds is held by its parent; no set holds more than its ways;
        write-through caches hold no dirty line; with a directory, an agent is listed for
        a line exactly when its top cache holds it, an E or M holder is the only one, and
        only M agents hold dirty copies.
        """
        contents = [self._core.contents(cache) for cache in range(len(self._specs))]
        held = [{line for cache_set in sets for line, _ in cache_set} for sets in contents]
        entries = self._core.directory_entries()
        for cache, sets in enumerate(contents):
            parent = self._parent[cache]
            name = self._specs[cache].name
            for cache_set in sets:
                assert len(cache_set) <= self._ways[cache], name
                for line, dirty in cache_set:
                    assert not dirty or self._write_back[cache], name
                    if parent is not None:
                        assert line in held[parent], (name, line)
                    top = self._agent_of[cache]
                    if top >= 0:
                        state = entries.get(line, {}).get(top)
                        assert state in ("M", "E", "S"), (name, line)
                        assert not dirty or state == "M", (name, line)
        for line, holders in entries.items():
            assert holders, line
            states = sorted(holders.values())
            assert states == ["S"] * len(states) or len(states) == 1, (line, holders)
            for top in holders:
                assert line in held[top], (self._specs[top].name, line)

    # -- running -----------------------------------------------------------------------

    def run(self, leaf: int, accesses: Iterable[tuple[int, bool]]) -> TraceOutcome:
        """Feed `(address, is_write)` accesses entering at `leaf`; return what they did."""
        self._check_leaf(leaf)
        before = self._snapshot()
        self._core.run_pairs(leaf, accesses)
        return self._outcome_since(before)

    def run_arrays(self, leaf: int, addresses: Any, writes: Any = None) -> TraceOutcome:
        """Run accesses given as two equally long sequences or buffers (NumPy arrays,
        `array.array`, memoryviews, lists): addresses and write flags (None: all reads,
        as `cache.CacheHierarchy.run_arrays`).

        One-dimensional buffers of native integers (`array('Q')`, NumPy integer arrays;
        writes also `bytes` or NumPy bool arrays) are the fast path: the C core makes no
        Python object per access. Anything else runs as lists, as through `run`.
        """
        self._check_leaf(leaf)
        with ExitStack() as stack:
            address_view = _buffer(stack, addresses, _ADDRESS_FORMATS)
            write_view = None if writes is None else _buffer(stack, writes, _WRITE_FORMATS)
            if address_view is not None and (writes is None or write_view is not None):
                if write_view is not None and len(write_view) != len(address_view):
                    raise ValueError(
                        ERR_ARRAY_LENGTHS.format(
                            addresses=len(address_view), writes=len(write_view)
                        )
                    )
                before = self._snapshot()
                self._core.run_buffers(leaf, address_view, write_view)
                return self._outcome_since(before)
        address_list = _as_list(addresses)
        write_list = None if writes is None else _as_list(writes)
        if write_list is not None and len(address_list) != len(write_list):
            raise ValueError(
                ERR_ARRAY_LENGTHS.format(addresses=len(address_list), writes=len(write_list))
            )
        before = self._snapshot()
        self._core.run_lists(leaf, address_list, write_list)
        return self._outcome_since(before)

    def flush(self, leaf: int) -> TraceOutcome:
        """Write back and invalidate every line of `leaf`'s private path (module docstring)."""
        self._check_leaf(leaf)
        before = self._snapshot()
        self._core.flush(leaf)
        return self._outcome_since(before)

    # -- bookkeeping -------------------------------------------------------------------

    def _snapshot(self) -> tuple[Any, ...]:
        (
            accesses,
            hits,
            misses,
            evictions,
            writebacks,
            invalidations,
            transfers,
            message_counts,
            memory_reads,
            memory_writes,
            latency,
            access_count,
        ) = self._core.counters()
        messages = {
            name: count for name, count in zip(MESSAGES, message_counts, strict=True) if count
        }
        return (
            accesses,
            hits,
            misses,
            evictions,
            writebacks,
            invalidations,
            transfers,
            messages,
            memory_reads,
            memory_writes,
            latency,
            access_count,
        )

    def _outcome_since(self, before: tuple[Any, ...]) -> TraceOutcome:
        after = self._snapshot()
        (
            accesses,
            hits,
            misses,
            evictions,
            writebacks,
            invalidations,
            transfers,
            messages,
            memory_reads,
            memory_writes,
            latency,
            access_count,
        ) = before
        caches = tuple(
            CacheCounts(
                name=spec.name,
                accesses=after[0][index] - accesses[index],
                hits=after[1][index] - hits[index],
                misses=after[2][index] - misses[index],
                evictions=after[3][index] - evictions[index],
                writebacks=after[4][index] - writebacks[index],
                invalidations=after[5][index] - invalidations[index],
            )
            for index, spec in enumerate(self._specs)
        )
        return TraceOutcome(
            caches=caches,
            accesses=after[11] - access_count,
            memory_reads=after[8] - memory_reads,
            memory_writes=after[9] - memory_writes,
            line_transfers=_difference(after[6], transfers),
            messages=_difference(after[7], messages),
            latency_s=after[10] - latency,
        )

    def _check_leaf(self, leaf: int) -> None:
        if leaf not in self._paths:
            raise ValueError(ERR_NOT_LEAF.format(leaf=leaf, leaves=self._leaves))

    def _check_cache(self, cache: int) -> None:
        if isinstance(cache, bool) or not isinstance(cache, int):
            raise ValueError(ERR_CACHE_INDEX.format(cache=cache))
        if not 0 <= cache < len(self._specs):
            raise ValueError(ERR_CACHE_INDEX.format(cache=cache))

    def _line_of(self, address: Any) -> int:
        return _line_of(address, self._line_bytes)


class PythonCacheTree(CacheTree):
    """The same tree on the pure-Python core (`_PythonTreeCore`), whether or not the C
    core is built: the reference the C core is tested against."""

    @staticmethod
    def _core_type(caches: int) -> type[_PythonTreeCore]:
        return _PythonTreeCore


class _PythonTreeCore:
    """The reference core: the tree's state and every rule of the module docstring.

    Each set is an OrderedDict from line number to its dirty flag, least recently used
    first; the directory is a dict from line number to {agent top cache: state}. Built
    from the layout `CacheTree` computes (the same arguments as `_cachesim.Tree`): per
    cache (sets, ways, latency_s, parent or -1, write_back, role, agent top or -1,
    top_depth, evict_duty), per leaf (leaf, path, top position or -1, private path).
    """

    def __init__(
        self,
        caches: Sequence[tuple[int, int, float, int, bool, int, int, float, bool]],
        leaves: Sequence[tuple[int, tuple[int, ...], int, tuple[int, ...]]],
        directory: int,
        memory_latency_s: float,
        line_bytes: int,
    ) -> None:
        count = len(caches)
        self._directory = directory
        self._memory_latency = memory_latency_s
        self._line_bytes = line_bytes
        self._sets: list[list[OrderedDict[int, bool]]] = [
            [OrderedDict() for _ in range(cache[0])] for cache in caches
        ]
        self._set_count = [cache[0] for cache in caches]
        self._ways = [cache[1] for cache in caches]
        self._latency = [cache[2] for cache in caches]
        self._parent_slot = [cache[3] for cache in caches]
        self._write_back = [cache[4] for cache in caches]
        self._roles = [cache[5] for cache in caches]
        self._agent_of = [cache[6] for cache in caches]
        self._top_depth = [cache[7] for cache in caches]
        self._evict_duty = [cache[8] for cache in caches]
        children: list[list[int]] = [[] for _ in caches]
        for index, parent in enumerate(self._parent_slot):
            if parent >= 0:
                children[parent].append(index)
        self._children = [tuple(kids) for kids in children]
        self._paths = {leaf: path for leaf, path, _, _ in leaves}
        self._top_position = {leaf: position for leaf, _, position, _ in leaves}
        self._private = {leaf: private for leaf, _, _, private in leaves}
        self._lines: dict[int, dict[int, str]] = {}
        self._accesses = [0] * count
        self._hits = [0] * count
        self._misses = [0] * count
        self._evictions = [0] * count
        self._writebacks = [0] * count
        self._invalidations = [0] * count
        # Lines moved between caches, keyed (from, to) with -1 standing for memory.
        self._links: defaultdict[tuple[int, int], int] = defaultdict(int)
        self._message_counts = [0] * len(MESSAGES)
        self._memory_reads = 0
        self._memory_writes = 0
        self._latency_sum = 0.0
        self._access_count = 0

    # -- inspection --------------------------------------------------------------------

    def state(self, cache: int, line: int) -> str:
        """Return the state of `cache`'s copy of line number `line` (CacheTree.state)."""
        cache_set = self._sets[cache][line % self._set_count[cache]]
        if line not in cache_set:
            return "I"
        top = self._agent_of[cache]
        if top >= 0:
            return self._lines[line][top]
        return "M" if cache_set[line] else "E"

    def holders(self, line: int) -> dict[int, str]:
        """Return the directory entry of line number `line`."""
        return dict(self._lines.get(line, {}))

    def contents(self, cache: int) -> list[list[tuple[int, bool]]]:
        """Return per set of `cache` its (line, dirty) pairs, least recently used first."""
        return [list(cache_set.items()) for cache_set in self._sets[cache]]

    def directory_entries(self) -> dict[int, dict[int, str]]:
        """Return {line: {agent top cache: state}}."""
        return {line: dict(holders) for line, holders in self._lines.items()}

    def counters(self) -> tuple[Any, ...]:
        """Return the raw counters, as `_cachesim.Tree.counters` does."""
        return (
            list(self._accesses),
            list(self._hits),
            list(self._misses),
            list(self._evictions),
            list(self._writebacks),
            list(self._invalidations),
            {
                (None if source < 0 else source, None if target < 0 else target): lines
                for (source, target), lines in self._links.items()
            },
            list(self._message_counts),
            self._memory_reads,
            self._memory_writes,
            self._latency_sum,
            self._access_count,
        )

    # -- running -----------------------------------------------------------------------

    def run_pairs(self, leaf: int, accesses: Iterable[tuple[Any, Any]]) -> None:
        """Feed `(address, is_write)` accesses entering at `leaf`."""
        line_bytes = self._line_bytes
        leaf_sets = self._sets[leaf]
        set_count = self._set_count[leaf]
        writes_in_place = self._write_back[leaf]
        agent = self._agent_of[leaf]
        lines = self._lines if agent >= 0 else None
        access = self._access
        fast_hits = 0
        try:
            for address, is_write in accesses:
                # Fast path: a leaf hit that needs no coherence action touches one set.
                if type(address) is int and address >= 0:
                    line = address // line_bytes
                    cache_set = leaf_sets[line % set_count]
                    if line in cache_set:
                        if not is_write:
                            cache_set.move_to_end(line)
                            fast_hits += 1
                            continue
                        if writes_in_place:
                            if lines is None:
                                cache_set.move_to_end(line)
                                cache_set[line] = True
                                fast_hits += 1
                                continue
                            holders = lines[line]
                            state = holders[agent]
                            if state != "S":
                                if state == "E":
                                    holders[agent] = "M"
                                cache_set.move_to_end(line)
                                cache_set[line] = True
                                fast_hits += 1
                                continue
                    access(leaf, line, bool(is_write))
                else:
                    access(leaf, _line_of(address, line_bytes), bool(is_write))
        finally:
            # The fast hits count after the other accesses, errors or not (the C core adds
            # the latencies in this order too).
            self._accesses[leaf] += fast_hits
            self._hits[leaf] += fast_hits
            self._latency_sum += fast_hits * self._latency[leaf]
            self._access_count += fast_hits

    def run_lists(self, leaf: int, addresses: list[Any], writes: list[Any] | None) -> None:
        """Feed the accesses of two lists (writes None: all reads)."""
        flags = [False] * len(addresses) if writes is None else writes
        self.run_pairs(leaf, zip(addresses, flags, strict=True))

    def run_buffers(self, leaf: int, addresses: memoryview, writes: memoryview | None) -> None:
        """Feed the accesses of two integer buffers (writes None: all reads)."""
        self.run_lists(leaf, addresses.tolist(), None if writes is None else writes.tolist())

    def flush(self, leaf: int) -> None:
        """Write back and invalidate every line of `leaf`'s private path."""
        private = self._private[leaf]
        outermost = private[-1]
        for cache_set in self._sets[outermost]:
            for line in list(cache_set):
                self._flush_line(private, line)

    # -- the access path ---------------------------------------------------------------

    def _access(self, leaf: int, line: int, is_write: bool) -> None:
        """Perform one access entering at `leaf` (everything but the fast-path hits)."""
        self._access_count += 1
        path = self._paths[leaf]
        top_position = self._top_position[leaf]
        sets = self._sets
        set_count = self._set_count
        latencies = self._latency
        accesses = self._accesses
        hits = self._hits
        misses = self._misses
        coherent = top_position >= 0
        limit = top_position + 1 if coherent else len(path)
        latency = 0.0
        served = limit
        for position in range(limit):
            cache = path[position]
            accesses[cache] += 1
            latency += latencies[cache]
            cache_set = sets[cache][line % set_count[cache]]
            if line in cache_set:
                cache_set.move_to_end(line)
                hits[cache] += 1
                served = position
                break
            misses[cache] += 1

        if not coherent:
            if served == limit:
                latency += self._memory_latency
                self._memory_reads += 1
                self._install_down(path, served - 1, 0, -1, line, False)
            elif served:
                self._install_down(path, served - 1, 0, path[served], line, False)
        elif served < limit:
            agent = path[top_position]
            if is_write:
                holders = self._lines[line]
                if holders[agent] == "S":
                    latency += self._upgrade(path, served, top_position, line, holders)
                else:
                    holders[agent] = "M"
            if served:
                self._install_down(path, served - 1, 0, path[served], line, False)
        else:
            latency += self._agent_miss(path, top_position, line, is_write)
        if is_write:
            self._receive(path[0], line)
        self._latency_sum += latency

    def _upgrade(
        self,
        path: tuple[int, ...],
        served: int,
        top_position: int,
        line: int,
        holders: dict[int, str],
    ) -> float:
        """Upgrade the agent's S copy to M, invalidating the other sharers; return the
        latency beyond the probes: the caches up to the agent's top, then D."""
        agent = path[top_position]
        counts = self._message_counts
        counts[_UPGRADE] += 1
        counts[_UPGRADE_ACK] += 1
        for other in [holder for holder in holders if holder != agent]:
            self._invalidate_sharer(other, line)
        self._lines[line] = {agent: "M"}
        latencies = self._latency
        # An explicit loop, not sum(): Python 3.12's sum() compensates float rounding,
        # and the C core must add the same floats in the same order on every version.
        extra = 0.0
        for position in range(served + 1, top_position + 1):
            extra += latencies[path[position]]
        return extra + latencies[path[top_position + 1]]

    def _agent_miss(
        self, path: tuple[int, ...], top_position: int, line: int, is_write: bool
    ) -> float:
        """Serve a line the whole agent lacks through the directory; return the latency
        from D on (D, the caches outwards of it or the owner's probe)."""
        directory = path[top_position + 1]
        agent = path[top_position]
        counts = self._message_counts
        self._accesses[directory] += 1
        latency = self._latency[directory]
        directory_set = self._sets[directory][line % self._set_count[directory]]
        holders = self._lines.get(line)
        if line in directory_set:
            directory_set.move_to_end(line)
            self._hits[directory] += 1
        else:
            # Inclusion: a line D lacks is held by no agent; D fetches it like a plain cache.
            self._misses[directory] += 1
            latency += self._fetch_outwards(path, top_position + 1, line)
        source = directory
        forwarded_dirty = False
        counts[_GETX if is_write else _GET] += 1
        if not holders:
            reply = _PUTX if is_write else _PUTCLNX
            state = "M" if is_write else "E"
        elif not is_write:
            owner, owner_state = next(iter(holders.items()))
            state = "S"
            reply = _PUTS
            if owner_state != "S":
                counts[_GET_FWD] += 1
                counts[_DOWNGRADE_ACK] += 1
                dirty, probe = self._agent_copies(owner, line, invalidate=False, into=directory)
                if dirty:
                    self._receive(directory, line)
                holders[owner] = "S"
                latency += probe
                source = owner
        else:
            owner, owner_state = next(iter(holders.items()))
            state = "M"
            if owner_state != "S":
                counts[_GETX_FWD] += 1
                counts[_GETX_FWD_ACK] += 1
                reply = _PUTX
                forwarded_dirty, probe = self._agent_copies(owner, line, invalidate=True)
                latency += probe
                source = owner
            else:
                reply = _PUTX_N
                latency += max(self._invalidate_sharer(other, line) for other in list(holders))
            self._lines.pop(line, None)
        counts[reply] += 1
        top_writes_back = self._write_back[agent]
        self._install_down(path, top_position, 0, source, line, forwarded_dirty and top_writes_back)
        if forwarded_dirty and not top_writes_back:
            self._receive(agent, line)  # a write-through top passes the dirty line to D
        self._lines.setdefault(line, {})[agent] = state
        return latency

    def _fetch_outwards(self, path: tuple[int, ...], start: int, line: int) -> float:
        """Bring `line` into path[start] (D) from the caches outwards of it or memory;
        return the latency of the caches probed beyond D plus memory's."""
        sets = self._sets
        set_count = self._set_count
        latency = 0.0
        served = len(path)
        for position in range(start + 1, len(path)):
            cache = path[position]
            self._accesses[cache] += 1
            latency += self._latency[cache]
            cache_set = sets[cache][line % set_count[cache]]
            if line in cache_set:
                cache_set.move_to_end(line)
                self._hits[cache] += 1
                served = position
                break
            self._misses[cache] += 1
        if served == len(path):
            latency += self._memory_latency
            self._memory_reads += 1
            source = -1
        else:
            source = path[served]
        self._install_down(path, served - 1, start, source, line, False)
        return latency

    def _invalidate_sharer(self, top: int, line: int) -> float:
        """Invalidate an agent's S copies of `line` (Inval + Inval_Ack); return its probe."""
        counts = self._message_counts
        counts[_INVAL] += 1
        counts[_INVAL_ACK] += 1
        directory = self._parent_slot[top]
        dirty, probe = self._agent_copies(top, line, invalidate=True, into=directory)
        if dirty:
            self._receive(directory, line)
        holders = self._lines.get(line)
        if holders is not None:
            holders.pop(top, None)
            if not holders:
                del self._lines[line]
        return probe

    def _agent_copies(
        self, top: int, line: int, *, invalidate: bool, into: int | None = None
    ) -> tuple[bool, float]:
        """Invalidate (or clean) every copy of `line` in the agent under `top`.

        A dirty copy counts a write-back to cache `into`, unless `into` is None (the data
        is forwarded instead). Return whether any copy was dirty and the owner's probe
        latency.
        """
        sets = self._sets
        set_count = self._set_count
        top_depth = self._top_depth
        children = self._children
        invalidations = self._invalidations
        dirty = False
        probe = 0.0
        stack = [top]
        while stack:
            cache = stack.pop()
            cache_set = sets[cache][line % set_count[cache]]
            if line not in cache_set:
                continue
            probe = max(probe, top_depth[cache])
            if invalidate:
                invalidations[cache] += 1
                was_dirty = cache_set.pop(line)
            else:
                was_dirty = cache_set[line]
                if was_dirty:
                    cache_set[line] = False
            if was_dirty:
                dirty = True
                if into is not None:
                    self._writebacks[cache] += 1
                    self._links[(cache, into)] += 1
            stack.extend(children[cache])
        return dirty, probe

    def _install_down(
        self,
        path: tuple[int, ...],
        start: int,
        stop: int,
        source: int,
        line: int,
        dirty_first: bool,
    ) -> None:
        """Install `line` in path[start], path[start - 1], ..., path[stop], outermost first,
        the first from `source` (a cache, or -1 for memory), each next from the one above."""
        links = self._links
        sets = self._sets
        set_count = self._set_count
        ways = self._ways
        evictions = self._evictions
        evict_duty = self._evict_duty
        dirty = dirty_first
        for position in range(start, stop - 1, -1):
            cache = path[position]
            links[(source, cache)] += 1
            cache_set = sets[cache][line % set_count[cache]]
            if len(cache_set) >= ways[cache]:
                victim, victim_dirty = cache_set.popitem(last=False)
                evictions[cache] += 1
                # A clean victim of a childless plain cache needs nothing more.
                if victim_dirty or evict_duty[cache]:
                    self._evict(cache, victim, victim_dirty)
            cache_set[line] = dirty
            dirty = False
            source = cache

    def _evict(self, cache: int, victim: int, dirty: bool) -> None:
        """Send a line `cache` dropped outwards: tell the directory, back-invalidate the
        descendants' copies (merging dirty ones) and write it back if dirty."""
        role = self._roles[cache]
        counts = self._message_counts
        children = self._children[cache]
        if role == _AGENT_TOP:
            holders = self._lines[victim]
            del holders[cache]
            if not holders:
                del self._lines[victim]
        elif role == _DIRECTORY_SIDE:
            lost = self._lines.pop(victim, None)
            if lost:
                counts[_INVAL] += len(lost)
                counts[_INVAL_ACK] += len(lost)
            if cache == self._directory:
                # The directory is exact: only the agents it lists hold copies.
                children = tuple(lost) if lost else ()
        if children:
            sets = self._sets
            set_count = self._set_count
            all_children = self._children
            links = self._links
            stack = list(children)
            while stack:
                inner = stack.pop()
                inner_set = sets[inner][victim % set_count[inner]]
                if victim in inner_set:
                    self._invalidations[inner] += 1
                    if inner_set.pop(victim):
                        self._writebacks[inner] += 1
                        links[(inner, cache)] += 1
                        dirty = True
                    stack.extend(all_children[inner])
        if role == _AGENT_TOP:
            counts[_WRITE_BACK if dirty else _CLEAN_WRITE_BACK] += 1
        if dirty:
            self._writebacks[cache] += 1
            parent = self._parent_slot[cache]
            self._links[(cache, parent)] += 1
            if parent < 0:
                self._memory_writes += 1
            else:
                self._receive(parent, victim)

    def _receive(self, cache: int, line: int) -> None:
        """Write `line` into `cache`, which holds it: a write-back cache marks it dirty
        (LRU order unchanged), a write-through one passes it on outwards."""
        write_back = self._write_back
        parent_slot = self._parent_slot
        current = cache
        while current >= 0:
            if write_back[current]:
                self._sets[current][line % self._set_count[current]][line] = True
                return
            self._writebacks[current] += 1
            parent = parent_slot[current]
            self._links[(current, parent)] += 1
            current = parent
        self._memory_writes += 1

    def _flush_line(self, private: tuple[int, ...], line: int) -> None:
        outermost = private[-1]
        dirty = False
        for cache in private:
            cache_set = self._sets[cache][line % self._set_count[cache]]
            if line in cache_set:
                self._invalidations[cache] += 1
                if cache_set.pop(line):
                    dirty = True
                    # The outermost private copy's write-back is counted on its way out.
                    if cache != outermost:
                        self._writebacks[cache] += 1
                        self._links[(cache, outermost)] += 1
        if self._roles[outermost] == _AGENT_TOP:
            holders = self._lines[line]
            del holders[outermost]
            if not holders:
                del self._lines[line]
            self._message_counts[_WRITE_BACK if dirty else _CLEAN_WRITE_BACK] += 1
        if not dirty:
            return
        latency = self._memory_latency
        current = outermost
        while current >= 0:
            if current != outermost:
                outer_set = self._sets[current][line % self._set_count[current]]
                if line in outer_set:
                    outer_set[line] = False
            latency += self._latency[current]
            self._writebacks[current] += 1
            parent = self._parent_slot[current]
            self._links[(current, parent)] += 1
            current = parent
        self._memory_writes += 1
        self._latency_sum += latency


def _validate(specs: tuple[CacheSpec, ...], directory: int | None) -> None:
    if not specs:
        raise ValueError(ERR_NO_CACHES)
    names: set[str] = set()
    line_bytes = specs[0].line_bytes
    for index, spec in enumerate(specs):
        if spec.name in names:
            raise ValueError(ERR_DUPLICATE.format(name=spec.name))
        names.add(spec.name)
        if spec.line_bytes != line_bytes:
            raise ValueError(
                ERR_LINE_BYTES.format(name=spec.name, value=spec.line_bytes, expected=line_bytes)
            )
        parent = spec.parent
        if parent is not None and (
            isinstance(parent, bool)
            or not isinstance(parent, int)
            or not 0 <= parent < len(specs)
            or parent == index
        ):
            raise ValueError(ERR_PARENT.format(name=spec.name, parent=parent))
    for index, spec in enumerate(specs):
        seen = {index}
        current = spec.parent
        while current is not None:
            if current in seen:
                raise ValueError(ERR_CYCLE.format(name=specs[current].name))
            seen.add(current)
            current = specs[current].parent
    if directory is not None:
        if (
            isinstance(directory, bool)
            or not isinstance(directory, int)
            or not 0 <= directory < len(specs)
        ):
            raise ValueError(ERR_DIRECTORY.format(directory=directory))
        if not any(spec.parent == directory for spec in specs):
            raise ValueError(ERR_DIRECTORY_CHILDLESS.format(name=specs[directory].name))


def _non_negative(value: object) -> bool:
    return (
        isinstance(value, int | float)
        and not isinstance(value, bool)
        and math.isfinite(value)
        and value >= 0
    )


def _line_of(address: Any, line_bytes: int) -> int:
    """Return the line number of an access's address, a non-negative int that is not a
    bool (else ERR_ADDRESS)."""
    if isinstance(address, bool):
        raise ValueError(ERR_ADDRESS.format(value=address))
    try:
        value = operator.index(address)
    except TypeError:
        raise ValueError(ERR_ADDRESS.format(value=address)) from None
    if value < 0:
        raise ValueError(ERR_ADDRESS.format(value=address))
    return value // line_bytes


def _buffer(stack: ExitStack, values: Any, formats: frozenset[str]) -> memoryview | None:
    """Return a one-dimensional view of a buffer of native integers (released with
    `stack`), or None when `values` is no such buffer (then it runs as a list)."""
    try:
        view = memoryview(values)
    except TypeError:
        return None
    stack.enter_context(view)
    if view.ndim != 1 or view.format.removeprefix("@") not in formats:
        return None
    return view


def _as_list(values: Any) -> list[Any]:
    tolist = getattr(values, "tolist", None)
    if callable(tolist):
        result = tolist()
        return result if isinstance(result, list) else [result]
    return list(values)


def _difference(after: dict[Any, int], before: dict[Any, int]) -> dict[Any, int]:
    return {
        key: value - before.get(key, 0)
        for key, value in after.items()
        if value != before.get(key, 0)
    }


def _link_order(link: tuple[int | None, int | None]) -> tuple[int, int]:
    source, target = link
    return (-1 if source is None else source, -1 if target is None else target)
