"""Inhibitor Petri nets with maximal-concurrent steps, and the SM model of paper 004.

The core (`PetriNet`) is a place/transition net with arc weights and inhibitor arcs
(004, section 3, Definition 1). It runs under the maximal concurrent semantics of the
same section: in every marking M one maximal enabled step is executed, a set of
transitions A with sum of pre-sets <= M whose inhibitor places are all empty in M. The step
is chosen as 004 section 4 describes: a uniformly random permutation of the enabled
transitions (seeded, `random.Random`) is walked in order and each transition still
enabled by the tokens left is taken, so of two conflicting transitions the earlier one
wins. Tokens produced by a step become usable in the next step only; a transition fires at
most once per step. The run ends at the dead marking (no transition enabled).

`build_sm_net` and `simulate_sm` build and run the GPU streaming multiprocessor model of
004 section 4 (see `build_sm_net` for the structure and the choices the paper leaves open);
`radix_sort_warps` derives per-warp instruction counts for the radix-sort kernels of
004 section 5.
"""

from __future__ import annotations

import math
import random
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

ERR_DUPLICATE_PLACE = "place {name!r} already exists"
ERR_DUPLICATE_TRANSITION = "transition {name!r} already exists"
ERR_UNKNOWN_PLACE = "unknown place {name!r}"
ERR_TOKENS = "place {name!r}: tokens must be a non-negative integer, got {value!r}"
ERR_WEIGHT = "transition {name!r}: arc weight for {place!r} must be a positive integer"
ERR_MAX_STEPS = "no dead marking within {max_steps} steps (the net may not terminate)"
ERR_SCHEDULERS = "schedulers must be a positive integer, got {value!r}"
ERR_LATENCY = "{name} must be a positive integer, got {value!r}"
ERR_COUNTS = "instruction counts must be non-negative integers, got {counts!r}"
ERR_NO_WARPS = "the SM model needs at least one warp"
ERR_MIX = "instruction mix probabilities must be non-negative and sum to 1, got {mix!r}"
ERR_RADIX = (
    "threads ({threads}) must be a positive multiple of the warp size dividing {elements} elements"
)
ERR_IMPLEMENTATION = "radix sort implementation must be 1, 2 or 3, got {value!r}"

ArcSpec = Mapping[str, int] | Iterable[str]


@dataclass(frozen=True)
class Transition:
    """A transition: pre-set and post-set as (place index, weight), inhibitor place indices."""

    name: str
    pre: tuple[tuple[int, int], ...]
    post: tuple[tuple[int, int], ...]
    inhibitors: tuple[int, ...]


@dataclass(frozen=True)
class NetRun:
    """The outcome of a run: steps executed, firings per transition, the final marking.

    dead: whether the run stopped at a dead marking (always true unless `max_steps` was
    reached with `raise_on_limit=False`). trace: the transitions of every step, in firing
    order, when recorded.
    """

    steps: int
    firings: dict[str, int]
    marking: dict[str, int]
    dead: bool
    trace: tuple[tuple[str, ...], ...] | None = None


class PetriNet:
    """A place/transition net with weighted and inhibitor arcs, run in maximal steps."""

    def __init__(self) -> None:
        self.place_names: list[str] = []
        self.initial_marking: list[int] = []
        self.transitions: list[Transition] = []
        self._place_index: dict[str, int] = {}
        self._transition_names: set[str] = set()

    def add_place(self, name: str, tokens: int = 0) -> int:
        """Add a place holding `tokens` initially; return its index."""
        if name in self._place_index:
            raise ValueError(ERR_DUPLICATE_PLACE.format(name=name))
        if isinstance(tokens, bool) or not isinstance(tokens, int) or tokens < 0:
            raise ValueError(ERR_TOKENS.format(name=name, value=tokens))
        self._place_index[name] = len(self.place_names)
        self.place_names.append(name)
        self.initial_marking.append(tokens)
        return self._place_index[name]

    def place(self, name: str) -> int:
        """Return the index of the place called `name`."""
        try:
            return self._place_index[name]
        except KeyError:
            raise ValueError(ERR_UNKNOWN_PLACE.format(name=name)) from None

    def set_tokens(self, name: str, tokens: int) -> None:
        """Change the initial marking of one place."""
        if isinstance(tokens, bool) or not isinstance(tokens, int) or tokens < 0:
            raise ValueError(ERR_TOKENS.format(name=name, value=tokens))
        self.initial_marking[self.place(name)] = tokens

    def _arcs(self, transition: str, spec: ArcSpec) -> tuple[tuple[int, int], ...]:
        weights = spec.items() if isinstance(spec, Mapping) else ((name, 1) for name in spec)
        arcs: dict[int, int] = {}
        for place_name, weight in weights:
            if isinstance(weight, bool) or not isinstance(weight, int) or weight <= 0:
                raise ValueError(ERR_WEIGHT.format(name=transition, place=place_name))
            index = self.place(place_name)
            arcs[index] = arcs.get(index, 0) + weight
        return tuple(arcs.items())

    def add_transition(
        self,
        name: str,
        *,
        pre: ArcSpec = (),
        post: ArcSpec = (),
        inhibitors: Iterable[str] = (),
    ) -> int:
        """Add a transition; arcs are place names (weight 1) or {place: weight}. Return its index.

        A place in both `pre` and `post` is a loop: the transition needs and keeps its token,
        but the token is taken for the step, so two loops on one token conflict.
        """
        if name in self._transition_names:
            raise ValueError(ERR_DUPLICATE_TRANSITION.format(name=name))
        transition = Transition(
            name=name,
            pre=self._arcs(name, pre),
            post=self._arcs(name, post),
            inhibitors=tuple(dict.fromkeys(self.place(place) for place in inhibitors)),
        )
        self._transition_names.add(name)
        self.transitions.append(transition)
        return len(self.transitions) - 1

    def enabled(self, marking: Sequence[int]) -> list[int]:
        """Return the indices of the transitions enabled at `marking` (004, section 3)."""
        return [
            index
            for index, transition in enumerate(self.transitions)
            if _is_enabled(transition, marking)
        ]

    def run(
        self,
        *,
        seed: int,
        max_steps: int = 10_000_000,
        record: bool = False,
        raise_on_limit: bool = True,
    ) -> NetRun:
        """Run maximal concurrent steps from the initial marking to the dead marking.

        Each step shuffles the enabled transitions (in index order first, so a seed always
        gives the same run) and fires, in that order, every one whose pre-set still fits
        the tokens not yet taken in this step (004, section 4). Enabledness is maintained
        incrementally: after a step only the transitions with a place that crossed its arc
        weight (or zero, for an inhibitor) are re-checked, so a step costs about the number
        of enabled transitions.
        """
        marking = list(self.initial_marking)
        transitions = self.transitions
        # Who reads each place: (transition, weight) for pre-set arcs, transitions for
        # inhibitor arcs. A transition's enabledness can only change when one of its places
        # crosses its arc weight (pre) or zero (inhibitor), so only those are re-checked.
        pre_readers: list[list[tuple[int, int]]] = [[] for _ in self.place_names]
        inhibitor_readers: list[list[int]] = [[] for _ in self.place_names]
        for index, transition in enumerate(transitions):
            for place, weight in transition.pre:
                pre_readers[place].append((index, weight))
            for place in transition.inhibitors:
                inhibitor_readers[place].append(index)
        enabled = {
            index
            for index, transition in enumerate(transitions)
            if _is_enabled(transition, marking)
        }
        rng = random.Random(seed)
        firings = [0] * len(transitions)
        trace: list[tuple[str, ...]] | None = [] if record else None
        steps = 0
        while enabled:
            if steps >= max_steps:
                if raise_on_limit:
                    raise RuntimeError(ERR_MAX_STEPS.format(max_steps=max_steps))
                break
            order = sorted(enabled)
            rng.shuffle(order)
            fired: list[int] = []
            before: dict[int, int] = {}
            # Inhibitors were checked against the step's marking M when `enabled` was
            # built; consuming in place leaves M minus the tokens already taken.
            for index in order:
                pre = transitions[index].pre
                for place, weight in pre:
                    if marking[place] < weight:
                        break
                else:
                    for place, weight in pre:
                        if place not in before:
                            before[place] = marking[place]
                        marking[place] -= weight
                    fired.append(index)
            for index in fired:
                firings[index] += 1
                for place, weight in transitions[index].post:
                    if place not in before:
                        before[place] = marking[place]
                    marking[place] += weight
            recheck: set[int] = set()
            for place, old in before.items():
                new = marking[place]
                if old == new:
                    continue
                for index, weight in pre_readers[place]:
                    if (old >= weight) != (new >= weight):
                        recheck.add(index)
                if (old == 0) != (new == 0):
                    recheck.update(inhibitor_readers[place])
            for index in recheck:
                if _is_enabled(transitions[index], marking):
                    enabled.add(index)
                else:
                    enabled.discard(index)
            if trace is not None:
                trace.append(tuple(transitions[index].name for index in fired))
            steps += 1
        return NetRun(
            steps=steps,
            firings={t.name: count for t, count in zip(transitions, firings, strict=True)},
            marking={
                name: tokens
                for name, tokens in zip(self.place_names, marking, strict=True)
                if tokens
            },
            dead=not enabled,
            trace=tuple(trace) if trace is not None else None,
        )


def _is_enabled(transition: Transition, marking: Sequence[int]) -> bool:
    for place, weight in transition.pre:
        if marking[place] < weight:
            return False
    return all(not marking[place] for place in transition.inhibitors)


# ---------------------------------------------------------------------------------------
# The streaming multiprocessor model of 004, section 4.
# ---------------------------------------------------------------------------------------

SM_PLACE = "p0"
WAITING_TRANSITION = "t0"
WARPS_ALIVE_PLACE = "alive"
PLACES_PER_WARP = 18
TRANSITIONS_PER_WARP = 17
DEFAULT_GLOBAL_LATENCY = 20  # l1, 004 section 4
DEFAULT_SHARED_LATENCY = 2  # l2, 004 section 4


@dataclass(frozen=True)
class InstructionCounts:
    """Instructions one warp executes: the initial marking of p5, p7 and p9 (004, section 4)."""

    arithmetic: int
    shared: int
    global_: int

    def __post_init__(self) -> None:
        for value in (self.arithmetic, self.shared, self.global_):
            if isinstance(value, bool) or not isinstance(value, int) or value < 0:
                raise ValueError(ERR_COUNTS.format(counts=self))

    @property
    def total(self) -> int:
        """Return the number of instructions of the warp."""
        return self.arithmetic + self.shared + self.global_

    @classmethod
    def from_mix(
        cls, instructions: int, *, arithmetic: float, shared: float, global_: float
    ) -> InstructionCounts:
        """Return `instructions` split by mix probabilities (largest-remainder rounding)."""
        mix = (arithmetic, shared, global_)
        if min(mix) < 0 or not math.isclose(sum(mix), 1.0, abs_tol=1e-9):
            raise ValueError(ERR_MIX.format(mix=mix))
        if isinstance(instructions, bool) or not isinstance(instructions, int) or instructions < 0:
            raise ValueError(ERR_COUNTS.format(counts=instructions))
        exact = [instructions * share for share in mix]
        counts = [math.floor(value) for value in exact]
        by_remainder = sorted(range(3), key=lambda i: (counts[i] - exact[i], i))
        for i in by_remainder[: instructions - sum(counts)]:
            counts[i] += 1
        return cls(counts[0], counts[1], counts[2])


def _warp_name(kind: str, number: int, warp: int) -> str:
    return f"{kind}{number}.w{warp}"


def build_sm_net(
    warps: Sequence[InstructionCounts],
    *,
    schedulers: int = 2,
    global_latency: int = DEFAULT_GLOBAL_LATENCY,
    shared_latency: int = DEFAULT_SHARED_LATENCY,
) -> PetriNet:
    """Return the Petri net of one SM running `warps` (004, section 4, Fig. 2 and Table 1).

    Constant part: place p0 (SM) with one token per warp scheduler and the waiting
    transition t0, a loop on p0 with an inhibitor arc from every warp's p2, so t0 fires in
    a step exactly when a scheduler is free and no warp is ready (the idle steps).

    Per warp w (names "p5.w3", "t1.w3", ...), 18 places and 17 transitions:

    * p1 active warp, p2 previous instruction finished, p3 check the next instruction,
      p4 next instruction ready; p5 / p7 / p9 hold the warp's arithmetic / shared /
      global instruction counts, p6 / p8 / p10 the type of the selected instruction.
    * Frame I, selection: t2 = p3 + p5 -> p4 + p6, t3 = p3 + p7 -> p4 + p8,
      t4 = p3 + p9 -> p4 + p10. They compete for the one token of p3, so the random
      permutation picks the type uniformly among the non-empty counters.
    * t1, the warp executed on the SM: p0 + p1 + p2 + p4 -> p1 + p11 (p1 is a loop:
      only active warps run). p11 (ours): the warp holds a scheduler.
    * Frame II, arithmetic: t7 = p11 + p6 -> p12, t15 = p12 -> p0 + p2 + p3.
    * Frame III, shared memory (scheduler kept until t14, as in the paper):
      t6 = p11 + p8 -> p13; t17 = p13 -> p13 + p14 inhibited by p15 (one step of
      waiting, p14 counts them); t12 = l2 p14 -> p15 (the access, after l2 executions of
      t17); t13 = p15 + p14 -> p15 clears the counter; t14 = p13 + p15 -> p0 + p2 + p3
      inhibited by p14 (access finished).
    * Frame IV, global memory: t5 = p11 + p10 -> p0 + p16 returns the scheduler token at
      issue, so the SM serves other warps during the latency; t8, t9, t10, t11 mirror
      t17, t12, t13, t14 with p16, p17, p18 and l1, and t11 = p16 + p18 -> p2 + p3.
    * t16, termination: p1 + p2 + p3 -> alive, inhibited by p5, p7 and p9.

    Choices where the text leaves Fig. 2 open (the figure is not in our copy; Table 1
    names t1-t9, t11, t12, t14-t17 and p0-p10):

    * Latency counters: t8 (t17) fires once per step while the warp waits, t9 (t12)
      consumes l1 (l2) of its tokens; in that same step t8 fires once more, and the
      unnamed t10 (t13) removes that extra token before t11 (t14) may fire, so a counter is
      empty for the next access and every access takes a fixed number of steps. A warp's
      global instruction takes l1 + 6 steps from selection to the next selection and holds
      a scheduler for 2 of them; a shared one l2 + 6 steps holding it for l2 + 4; an
      arithmetic one 4 steps holding it for 3.
    * t16 also consumes p3, so it cannot take p2 from the t1 of the warp's last selected
      instruction (p3 is empty between selection and completion).
    * One place outside the 18 per warp, "alive" (warps not yet terminated), is a loop on
      t0 and is consumed by every t16: without it t0 stays enabled once all warps end and
      the dead marking the paper reaches "only when all places p1 become empty" would not
      exist.
    """
    if not warps:
        raise ValueError(ERR_NO_WARPS)
    if isinstance(schedulers, bool) or not isinstance(schedulers, int) or schedulers <= 0:
        raise ValueError(ERR_SCHEDULERS.format(value=schedulers))
    for name, value in (("global_latency", global_latency), ("shared_latency", shared_latency)):
        if isinstance(value, bool) or not isinstance(value, int) or value <= 0:
            raise ValueError(ERR_LATENCY.format(name=name, value=value))
    net = PetriNet()
    net.add_place(SM_PLACE, schedulers)
    net.add_place(WARPS_ALIVE_PLACE, len(warps))
    for warp, counts in enumerate(warps):
        _add_warp(net, warp, counts, global_latency=global_latency, shared_latency=shared_latency)
    net.add_transition(
        WAITING_TRANSITION,
        pre=[SM_PLACE, WARPS_ALIVE_PLACE],
        post=[SM_PLACE, WARPS_ALIVE_PLACE],
        inhibitors=[_warp_name("p", 2, w) for w in range(len(warps))],
    )
    return net


def _add_warp(
    net: PetriNet,
    warp: int,
    counts: InstructionCounts,
    *,
    global_latency: int,
    shared_latency: int,
) -> None:
    """Add the 18 places and 17 transitions of one warp (WPNM, 004 section 4, Fig. 2)."""
    initial = {1: 1, 2: 1, 3: 1, 5: counts.arithmetic, 7: counts.shared, 9: counts.global_}
    for number in range(1, PLACES_PER_WARP + 1):
        net.add_place(_warp_name("p", number, warp), initial.get(number, 0))

    def p(number: int) -> str:
        return _warp_name("p", number, warp)

    def add(number: int, pre: ArcSpec, post: ArcSpec, inhibitors: Iterable[str] = ()) -> None:
        net.add_transition(_warp_name("t", number, warp), pre=pre, post=post, inhibitors=inhibitors)

    add(1, [SM_PLACE, p(1), p(2), p(4)], [p(1), p(11)])
    add(2, [p(3), p(5)], [p(4), p(6)])
    add(3, [p(3), p(7)], [p(4), p(8)])
    add(4, [p(3), p(9)], [p(4), p(10)])
    add(5, [p(11), p(10)], [SM_PLACE, p(16)])
    add(6, [p(11), p(8)], [p(13)])
    add(7, [p(11), p(6)], [p(12)])
    add(8, [p(16)], [p(16), p(17)], inhibitors=[p(18)])
    add(9, {p(17): global_latency}, [p(18)])
    add(10, [p(18), p(17)], [p(18)])
    add(11, [p(16), p(18)], [p(2), p(3)], inhibitors=[p(17)])
    add(12, {p(14): shared_latency}, [p(15)])
    add(13, [p(15), p(14)], [p(15)])
    add(14, [p(13), p(15)], [SM_PLACE, p(2), p(3)], inhibitors=[p(14)])
    add(15, [p(12)], [SM_PLACE, p(2), p(3)])
    add(16, [p(1), p(2), p(3), WARPS_ALIVE_PLACE], [], inhibitors=[p(5), p(7), p(9)])
    add(17, [p(13)], [p(13), p(14)], inhibitors=[p(15)])


@dataclass(frozen=True)
class SMRun:
    """The SM model's answer: steps to the dead marking and idle (t0) steps (004, section 4)."""

    steps: int
    idle_steps: int
    instructions: int
    warps: int

    @property
    def steps_per_instruction(self) -> float:
        """Return steps divided by all instructions of all warps."""
        return self.steps / self.instructions if self.instructions else 0.0


def simulate_sm(
    warps: Sequence[InstructionCounts],
    *,
    schedulers: int = 2,
    global_latency: int = DEFAULT_GLOBAL_LATENCY,
    shared_latency: int = DEFAULT_SHARED_LATENCY,
    seed: int = 0,
    max_steps: int = 10_000_000,
) -> SMRun:
    """Return the steps and idle steps of one seeded run of the SM net of `build_sm_net`."""
    net = build_sm_net(
        warps,
        schedulers=schedulers,
        global_latency=global_latency,
        shared_latency=shared_latency,
    )
    run = net.run(seed=seed, max_steps=max_steps)
    return SMRun(
        steps=run.steps,
        idle_steps=run.firings[WAITING_TRANSITION],
        instructions=sum(counts.total for counts in warps),
        warps=len(warps),
    )


def mean_sm_steps(
    warps: Sequence[InstructionCounts], *, runs: int = 10, seed: int = 0, **options: int
) -> float:
    """Return the mean steps over `runs` seeds (004 section 5 averages ten computations)."""
    total = 0
    for offset in range(runs):
        total += simulate_sm(warps, seed=seed + offset, **options).steps
    return total / runs


def radix_sort_warps(
    *, threads: int, elements: int = 65536, implementation: int = 1, warp_size: int = 32
) -> list[InstructionCounts]:
    """Return per-warp instruction counts of one bit-run of the radix sorts of 004 section 5.

    One block of `threads` threads sorts `elements` integers, memsize = elements / threads
    per thread; each run has three phases. Counting follows the paper's rules (every
    assignment, arithmetic, relational or logical operation and register array subscript
    is one arithmetic operation, every global or shared read or write one memory
    operation); the per-element constants are ours, from a straightforward CUDA version:

    * Phase 1, per thread: memsize global reads into registers and 3 arithmetic per
      element (loop test and increment, bit test, counter update), then 2 writes of
      zeros[j] and ones[j] (global in implementations 1 and 2, shared in 3).
    * Phase 2: implementation 1, thread 0 alone (so warp 0) sums all m = threads
      counters serially: 2 reads, 2 additions and 2 loop operations per node, plus 2
      position writes per node. Implementations 2 and 3: r + 1 parallel cycles
      (m = 2^r, r = ceil(log2 m)), each thread reads two pairs of partial sums and writes
      one pair per cycle with 4 arithmetic operations (global in 2, shared in 3).
    * Phase 3, per thread: 2 reads of its positions, then per element a register read
      (1 arithmetic), a bit test and position update (3 arithmetic) and one global write.

    SIMT: a warp executes each instruction once for its 32 threads, so a warp's counts are
    its threads' counts.
    """
    if implementation not in (1, 2, 3):
        raise ValueError(ERR_IMPLEMENTATION.format(value=implementation))
    if threads <= 0 or threads % warp_size or elements % threads:
        raise ValueError(ERR_RADIX.format(threads=threads, elements=elements))
    memsize = elements // threads
    cycles = math.ceil(math.log2(threads)) + 1
    per_thread_shared = 0
    per_thread_global = memsize + memsize  # phase 1 reads, phase 3 writes
    per_thread_arith = 3 * memsize + 4 * memsize
    counters_global = implementation in (1, 2)
    # Phase 1 counter writes and phase 3 position reads: 2 + 2 accesses.
    if counters_global:
        per_thread_global += 4
    else:
        per_thread_shared += 4
    if implementation == 2:
        per_thread_global += 3 * 2 * cycles
        per_thread_arith += 4 * cycles
    elif implementation == 3:
        per_thread_shared += 3 * 2 * cycles
        per_thread_arith += 4 * cycles
    warps = [
        InstructionCounts(per_thread_arith, per_thread_shared, per_thread_global)
        for _ in range(threads // warp_size)
    ]
    if implementation == 1:
        first = warps[0]
        warps[0] = InstructionCounts(
            first.arithmetic + 4 * threads, first.shared, first.global_ + 4 * threads
        )
    return warps
