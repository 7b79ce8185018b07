"""Instruction and traffic counts per warp as polynomials in the trip counts (000 section 5.2).

Each reachable instruction counts once per execution: 1 outside loops, ``a`` inside loop ``a``,
``ab`` inside loop ``b`` nested in ``a``.

* INS_cuda: the CUDA-core classes of isa.py (FP32, FP16, INT32, logic, moves, S2R, and the
  control instructions the paper counts with them); SFU, FP64, conversions, tensor, uniform-
  datapath, memory, barrier and NOP instructions are counted separately.
* INS_issued: every instruction once, a dual-issued pair ``{ A; B; }`` once per execution,
  plus the re-issues of memory instructions: global accesses by the access-pattern model
  (`simulator.models.memory.warp_access`: stride 2 -> one re-issue, stride 4 -> three),
  shared accesses by its bank-conflict model (`shared_access`). Strides default to 1 (the
  coalesced case of 000) and are set per SASS line.
* GMem_bytes: bytes moved per warp by global loads, stores and atomics (element size from the
  opcode modifiers, .64 -> 8 B, .128 -> 16 B, default 4 B) through `warp_access`; saxpy2 gives
  3 x 128 = 384. Local-memory (spill) traffic is reported separately as LMem_bytes.
* INS_atomic: atomic and reduction instructions (ATOM, ATOMG, ATOMS, RED, REDG, surface ones),
  INS_atomic_global the global ones (resolved in L2), INS_barrier the block barriers (BAR.SYNC:
  __syncthreads); the tensor instructions' precisions (`isa.tensor_precision`) are collected
  beside INS_tensor.
* OPS_atomic_global: the global atomic operations per lane, i.e. INS_atomic_global with every
  lane counted, except a warp-aggregated atomic (`leader_only`), which is one operation per
  warp. ptxas aggregates a warp's 32-bit integer atomics on an address it can prove uniform
  (a kernel parameter, an address from blockIdx): the warp's lanes vote (VOTEU.ANY), the lowest
  active lane is elected (UFLO, compared with SR_LANEID), the values are combined (POPC of the
  vote for a constant, REDUX.SUM/MIN/MAX for a varying one) and the leader alone issues the
  REDG/ATOMG. Float and 64-bit atomics and addresses it cannot prove uniform (data-dependent,
  masked by a runtime value) keep one operation per lane (docs/kernel-analyzer.md, "Atomics").

INS_issued of 000 Listing 3 is ``24 + 3a`` here, not the paper's ``23 + 4a``: the paper subtracts
all three dual issues from the once-executed part although one pair (FADD with the loop's BRA)
sits in the loop. Both agree at a = 1; for saxpy2 on Maxwell INS_cuda / 4 >= INS_issued / 4
either way, so the throughput bound and the kernel time do not change (docs/kernel-analyzer.md).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from simulator.analyzer import isa
from simulator.analyzer.polynomial import Polynomial
from simulator.analyzer.sass import Instruction
from simulator.analyzer.structure import Loop
from simulator.models.memory import shared_access, warp_access


@dataclass(frozen=True)
class Counts:
    """The per-warp counts, each a polynomial in the trip-count symbols."""

    by_class: dict[str, Polynomial]
    ins_cuda: Polynomial
    ins_issued: Polynomial
    gmem_bytes: Polynomial
    lmem_bytes: Polynomial
    reissues: Polynomial
    dual_issues: Polynomial  # executions of dual-issued pairs
    dual_issue_pairs: int  # pairs in the listing
    global_accesses: Polynomial
    shared_accesses: Polynomial
    atomic_accesses: Polynomial = field(default_factory=Polynomial)  # INS_atomic
    global_atomics: Polynomial = field(default_factory=Polynomial)  # INS_atomic_global
    # OPS_atomic_global: operations per lane (a warp-aggregated atomic is one per warp)
    global_atomic_operations: Polynomial = field(default_factory=Polynomial)
    barriers: Polynomial = field(default_factory=Polynomial)  # INS_barrier
    # the precisions of the live tensor instructions (isa.tensor_precision), sorted
    tensor_precisions: tuple[str, ...] = ()


def all_loops(roots: list[Loop]) -> list[Loop]:
    """Return every loop, outer before inner."""
    result: list[Loop] = []
    stack = list(reversed(roots))
    while stack:
        loop = stack.pop()
        result.append(loop)
        stack.extend(reversed(loop.children))
    return result


def multiplier(index: int, loops: list[Loop]) -> Polynomial:
    """Return how many times instruction `index` executes: the product of its loops' symbols."""
    result = Polynomial.constant(1)
    for loop in loops:
        if loop.contains(index):
            result = result * Polynomial.symbol(loop.symbol)
    return result


def _definition(instructions: list[Instruction], before: int, register: str) -> Instruction | None:
    """Return the last instruction before index `before` that writes `register` (straight-line
    order: ptxas emits the aggregation sequence in one block)."""
    for instruction in reversed(instructions[:before]):
        if register in instruction.dests:
            return instruction
    return None


def leader_only(instructions: list[Instruction], position: int) -> bool:
    """Return whether the global atomic at list position `position` is issued by one elected
    lane: guarded (not negated) by a predicate set by ISETP.EQ from SR_LANEID and the (U)FLO
    of a warp vote, the sequence ptxas emits for a warp-aggregated atomic."""
    atomic = instructions[position]
    if atomic.guard is None or atomic.guard_negated:
        return False
    test = _definition(instructions, position, atomic.guard)
    if test is None or not test.opcode.startswith("ISETP.EQ"):
        return False
    place = instructions.index(test)
    sources = {
        register: _definition(instructions, place, register)
        for register in test.srcs
        if register not in ("PT", "UPT")
    }
    lane = any(
        d is not None and d.base == "S2R" and "SR_LANEID" in d.operands for d in sources.values()
    )
    elected = any(d is not None and d.base in ("FLO", "UFLO") for d in sources.values())
    return lane and elected


def count(
    instructions: list[Instruction],
    live: set[int],
    roots: list[Loop],
    *,
    dual_issue: bool,
    strides: Mapping[int, int],
    warp_size: int = 32,
) -> Counts:
    """Return the counts; `strides` maps a SASS line to the access stride in elements."""
    loops = all_loops(roots)
    by_class: dict[str, Polynomial] = {}
    issued = Polynomial()
    gmem = Polynomial()
    lmem = Polynomial()
    reissues = Polynomial()
    dual = Polynomial()
    pairs = 0
    global_accesses = Polynomial()
    shared_accesses = Polynomial()
    atomic_accesses = Polynomial()
    global_atomics = Polynomial()
    global_atomic_operations = Polynomial()
    barriers = Polynomial()
    precisions: set[str] = set()
    for position, instruction in enumerate(instructions):
        if instruction.index not in live:
            continue
        times = multiplier(instruction.index, loops)
        klass = instruction.klass
        by_class[klass] = by_class.get(klass, Polynomial()) + times
        if klass == "tensor" and (precision := isa.tensor_precision(instruction.opcode)):
            precisions.add(precision)
        if instruction.base in isa.ATOMICS:
            atomic_accesses = atomic_accesses + times
        if instruction.base in isa.GLOBAL_ATOMICS:
            global_atomics = global_atomics + times
            leader = leader_only(instructions, position)
            global_atomic_operations = global_atomic_operations + (
                times * (1.0 / warp_size) if leader else times
            )
        if isa.is_block_barrier(instruction.opcode):
            barriers = barriers + times
        issued = issued + times
        partner = instruction.pair
        if dual_issue and partner is not None and partner > instruction.index and partner in live:
            issued = issued - times
            dual = dual + times
            pairs += 1
        memory = instruction.memory
        if memory is None:
            continue
        space, kind = memory
        stride = strides.get(instruction.line, 1)
        if space == "global" and kind != "bulk":
            access = warp_access(
                element_bytes=instruction.element_bytes, stride=stride, warp_size=warp_size
            )
            gmem = gmem + times * access.bytes_moved
            reissues = reissues + times * access.reissues
            global_accesses = global_accesses + times
        elif space == "local":
            access = warp_access(
                element_bytes=instruction.element_bytes, stride=1, warp_size=warp_size
            )
            lmem = lmem + times * access.bytes_moved
            reissues = reissues + times * access.reissues
        elif space == "shared":
            shared = shared_access(
                element_bytes=instruction.element_bytes, stride=stride, warp_size=warp_size
            )
            reissues = reissues + times * shared.reissues
            shared_accesses = shared_accesses + times
    ins_cuda = Polynomial()
    for klass in isa.CUDA_CORE_CLASSES:
        ins_cuda = ins_cuda + by_class.get(klass, Polynomial())
    return Counts(
        by_class=by_class,
        ins_cuda=ins_cuda,
        ins_issued=issued + reissues,
        gmem_bytes=gmem,
        lmem_bytes=lmem,
        reissues=reissues,
        dual_issues=dual,
        dual_issue_pairs=pairs,
        global_accesses=global_accesses,
        shared_accesses=shared_accesses,
        atomic_accesses=atomic_accesses,
        global_atomics=global_atomics,
        global_atomic_operations=global_atomic_operations,
        barriers=barriers,
        tensor_precisions=tuple(sorted(precisions)),
    )
