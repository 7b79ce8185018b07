"""Control flow of one kernel: reachable instructions, basic blocks and loops (back edges).

Blocks start at branch targets and after jumps and terminators. An unconditional jump or EXIT
has no fall-through, so the ``BRA`` to itself and the NOP padding after the final EXIT are
unreachable and left out of every count (000 Listing 3 omits the NOPs for that reason). A
branch whose target does not come after it is a back edge; the instructions from its target to
it form a loop (the structured loops compilers emit); loops with the same head merge, nested
ranges nest, and partially overlapping ranges are rejected. Loops get trip-count symbols a, b,
c, ... in the order of their heads.
"""

from __future__ import annotations

import string
from dataclasses import dataclass, field

from simulator.analyzer import isa
from simulator.analyzer.errors import OVERLAPPING_LOOPS, AnalyzerError
from simulator.analyzer.sass import Instruction


@dataclass
class Loop:
    """A loop: instructions head..latch (indices, inclusive), latch holds the back edge."""

    head: int
    latch: int
    symbol: str = ""
    parent: Loop | None = None
    children: list[Loop] = field(default_factory=list)

    def contains(self, index: int) -> bool:
        """Return whether instruction `index` lies in the loop."""
        return self.head <= index <= self.latch


@dataclass
class BasicBlock:
    """A maximal straight-line run of instructions (indices first..last, inclusive)."""

    first: int
    last: int
    successors: list[int] = field(default_factory=list)  # first indices of successor blocks


def _falls_through(instruction: Instruction) -> bool:
    if instruction.never:
        return True
    if instruction.base in isa.TERMINATORS or (
        instruction.is_jump and instruction.base not in isa.INDIRECT_JUMPS
    ):
        return not instruction.always
    return True


def basic_blocks(instructions: list[Instruction]) -> list[BasicBlock]:
    """Return the basic blocks in program order."""
    if not instructions:
        return []
    leaders = {0}
    for instruction in instructions:
        ends_block = instruction.is_jump or instruction.base in isa.TERMINATORS
        if instruction.target is not None:
            leaders.add(instruction.target)
        if ends_block and instruction.index + 1 < len(instructions):
            partner = instruction.pair
            after = max(instruction.index, partner or 0) + 1
            if after < len(instructions):
                leaders.add(after)
    starts = sorted(leaders)
    blocks: list[BasicBlock] = []
    for position, first in enumerate(starts):
        last = (starts[position + 1] - 1) if position + 1 < len(starts) else len(instructions) - 1
        block = BasicBlock(first=first, last=last)
        for index in range(first, last + 1):
            instruction = instructions[index]
            if instruction.target is not None and not instruction.never:
                block.successors.append(instruction.target)
            if instruction.base in isa.INDIRECT_JUMPS:
                block.successors.extend(range(index + 1, len(instructions)))
        tail = instructions[last]
        tail_falls = _falls_through(tail) and all(
            _falls_through(instructions[i]) for i in range(first, last + 1)
        )
        if tail_falls and last + 1 < len(instructions):
            block.successors.append(last + 1)
        blocks.append(block)
    return blocks


def reachable(instructions: list[Instruction]) -> set[int]:
    """Return the indices of the instructions reachable from the kernel's entry."""
    blocks = {b.first: b for b in basic_blocks(instructions)}
    starts = sorted(blocks)
    seen: set[int] = set()
    stack = [0] if instructions else []
    while stack:
        first = stack.pop()
        if first in seen:
            continue
        seen.add(first)
        # a successor may point inside a block only at a leader, so it is a block start
        found = blocks.get(first)
        block = found if found is not None else blocks[max(s for s in starts if s <= first)]
        stack.extend(block.successors)
    result: set[int] = set()
    for first in seen:
        seen_block = blocks.get(first)
        if seen_block is not None:
            result.update(range(seen_block.first, seen_block.last + 1))
    return result


def find_loops(instructions: list[Instruction], live: set[int]) -> list[Loop]:
    """Return the outermost loops (children nested inside), symbols assigned a, b, c, ..."""
    spans: dict[int, int] = {}
    for instruction in instructions:
        target = instruction.target
        if instruction.index in live and target is not None and target <= instruction.index:
            latch = max(instruction.index, instruction.pair or instruction.index)
            spans[target] = max(spans.get(target, latch), latch)
    loops = [Loop(head=h, latch=t) for h, t in sorted(spans.items())]
    for position, loop in enumerate(loops):
        for other in loops[position + 1 :]:
            if loop.head < other.head <= loop.latch < other.latch:
                lines = f"{instructions[loop.head].line}-{instructions[other.latch].line}"
                raise AnalyzerError(
                    OVERLAPPING_LOOPS.format(
                        first=f"{instructions[loop.head].address:#x}",
                        second=f"{instructions[other.head].address:#x}",
                        lines=lines,
                    ),
                    line=instructions[other.head].line,
                )
    roots: list[Loop] = []
    for loop in loops:  # sorted by head, outer loops first for equal heads are merged already
        parents = [
            c
            for c in loops
            if c is not loop
            and c.head <= loop.head
            and loop.latch <= c.latch
            and (c.head, -c.latch) < (loop.head, -loop.latch)
        ]
        if parents:
            parent = min(parents, key=lambda c: c.latch - c.head)
            loop.parent = parent
            parent.children.append(loop)
        else:
            roots.append(loop)
    names = iter(string.ascii_lowercase)
    for loop in loops:
        loop.symbol = next(names, f"t{loop.head}")
    return roots
