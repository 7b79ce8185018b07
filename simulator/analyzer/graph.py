"""The kernel execution graph and its critical path: Lat_bound by 000 section 5.1.

Nodes: one per instruction, plus *start* and *end*. Edges, labelled in cycles from the
architecture's latency table (latency.py):

* ILP edges between consecutive instructions: the issue latency (Table 4.1's ILP latency, 3 on
  Maxwell), 0 inside a ``{ A; B; }`` dual-issue pair, and after a branch the branch latency:
  *not taken* for a predicated branch that falls through (the path the analysis follows), *taken*
  for an unconditional one;
* register-dependency edges from the last earlier writer of each source register (general,
  predicate and uniform registers; 64-bit operands as register pairs) labelled with the writer's
  latency, or the latency of the memory space for loads (global memory 350 on Maxwell);
* the edge into *end* labelled with the terminated-block replacement latency.

Loops (structure.py) are collapsed: a loop becomes a node pair *loop in* -> *loop out* whose
edge is ``trip x per-iteration latency``. The per-iteration latency is the longest path through
one iteration of the body, from the iteration's start to the back-edge branch, plus the
*taken* branch latency back to the head (the paper's "critical path of the loop multiplied by
the number of loop iterations"); loop-carried register dependencies longer than that raise it.
Every dependency into the loop waits at *loop in* (the loop starts when all of its inputs are
ready), results leave from *loop out* with their producer's latency, and the instruction after
the loop follows it by the *not taken* branch latency (the final, falling-through back edge).

Conventions that the paper leaves open, chosen so that 000 Listing 3 gives exactly
Lat_bound = 92 + 700 + 150 + 24a = 942 + 24a (docs/kernel-analyzer.md shows the path):

* the start edge is 0; a predicated EXIT is followed by the plain ILP latency (Table 4.1 lists
  no EXIT latency); S2R has the *mov* latency (Table 4.1 lists no S2R);
* the implicit carry flag of ``IADD R2.CC`` / ``IADD.X`` is not a dependency (the paper reads
  register operands only); tracking it would add 3 cycles (945 + 24a);
* the loop's inputs all wait at loop entry (the LDG result feeds the loop's FADD, 3 issue slots
  in; honouring that offset would give 936 + 24a);
* each iteration pays the taken-branch latency and the loop exit pays the not-taken one again.

With symbolic trip counts the critical path can differ between trip values, so node times are
maxima of polynomials (polynomial.py); the path reported and drawn is the one that is longest at
the given trip counts (1 for symbols without a value).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from simulator.analyzer import isa
from simulator.analyzer.latency import LatencyTable
from simulator.analyzer.polynomial import MaxPolynomial, Number, Polynomial
from simulator.analyzer.sass import Instruction
from simulator.analyzer.structure import Loop

Item = int | Loop  # an instruction index or a collapsed loop


@dataclass(frozen=True)
class Node:
    """A node of the execution graph."""

    id: str
    kind: str  # start, end, instruction, loop_in, loop_out, iteration_start, iteration_next
    label: str
    instruction: int | None = None
    loop: str | None = None


@dataclass(frozen=True)
class Edge:
    """A labelled edge; kind is start, ilp, dual, branch, dependency, memory, loop or replacement."""

    source: str
    target: str
    label: MaxPolynomial
    kind: str
    register: str | None = None


@dataclass
class Region:
    """The graph of the top level or of one loop iteration, with its longest path."""

    nodes: list[Node]
    edges: list[Edge]
    times: dict[str, MaxPolynomial]
    sink: str
    critical: list[Edge] = field(default_factory=list)

    @property
    def length(self) -> MaxPolynomial:
        """Return the longest path from the region's source to its sink."""
        return self.times[self.sink]


@dataclass
class LoopGraph:
    """One loop's iteration graph and its per-iteration latency."""

    symbol: str
    head_line: int
    latch_line: int
    region: Region
    per_iteration: MaxPolynomial
    multiplier: Polynomial  # product of the trip symbols of this loop and its enclosing loops
    carried: list[str] = field(default_factory=list)  # loop-carried dependencies that bind


@dataclass
class ExecutionGraph:
    """The whole kernel's graph: the top level, the loops, Lat_bound and its breakdown."""

    top: Region
    loops: list[LoopGraph]
    lat_bound: MaxPolynomial
    breakdown: dict[str, Polynomial]


def _instruction_label(instruction: Instruction) -> str:
    return instruction.text


class _Builder:
    def __init__(
        self,
        instructions: list[Instruction],
        live: set[int],
        table: LatencyTable,
        point: Mapping[str, Number],
    ) -> None:
        self.instructions = instructions
        self.live = live
        self.table = table
        self.point = dict(point)
        self.loops: list[LoopGraph] = []

    # -- items -------------------------------------------------------------------------------
    def items(self, first: int, last: int, children: Sequence[Loop]) -> list[Item]:
        result: list[Item] = []
        index = first
        by_head = {c.head: c for c in children}
        while index <= last:
            if index in by_head:
                loop = by_head[index]
                if any(i in self.live for i in range(loop.head, loop.latch + 1)):
                    result.append(loop)
                index = loop.latch + 1
                continue
            if index in self.live:
                result.append(index)
            index += 1
        return result

    def body_items(self, loop: Loop) -> list[Item]:
        return self.items(loop.head, loop.latch, loop.children)

    def reads_writes(self, item: Item) -> tuple[list[str], dict[str, Instruction]]:
        """Return the upward-exposed reads and the last writer of each register of `item`."""
        if isinstance(item, int):
            instruction = self.instructions[item]
            return list(instruction.srcs), {r: instruction for r in instruction.dests}
        reads: list[str] = []
        writes: dict[str, Instruction] = {}
        for inner in self.body_items(item):
            inner_reads, inner_writes = self.reads_writes(inner)
            reads.extend(r for r in inner_reads if r not in writes and r not in reads)
            writes.update(inner_writes)
        return reads, writes

    # -- nodes -------------------------------------------------------------------------------
    @staticmethod
    def entry(item: Item) -> str:
        return f"i{item}" if isinstance(item, int) else f"L{item.symbol}.in"

    @staticmethod
    def exit(item: Item) -> str:
        return f"i{item}" if isinstance(item, int) else f"L{item.symbol}.out"

    def ilp_edge(self, previous: Item, item: Item) -> tuple[int, str]:
        table = self.table
        if isinstance(previous, Loop):
            return table.branch_not_taken, "branch"
        before = self.instructions[previous]
        if isinstance(item, int) and before.pair == item and table.dual_issue:
            return table.dual_issue_latency, "dual"
        if before.is_jump and before.base not in isa.INDIRECT_JUMPS:
            return (table.branch_taken if before.always else table.branch_not_taken), "branch"
        return table.issue_latency, "ilp"

    def region(
        self,
        items: list[Item],
        *,
        source: Node,
        sink: Node,
        sink_label: int,
        sink_kind: str,
        multiplier: Polynomial,
    ) -> Region:
        nodes: list[Node] = [source]
        edges: list[Edge] = []
        writers: dict[str, tuple[Item, Instruction]] = {}
        previous: Item | None = None
        for item in items:
            if isinstance(item, int):
                instruction = self.instructions[item]
                nodes.append(Node(f"i{item}", "instruction", _instruction_label(instruction), item))
            else:
                loop_graph = self.loop(item, multiplier * Polynomial.symbol(item.symbol))
                nodes.append(
                    Node(
                        self.entry(item),
                        "loop_in",
                        f"loop {item.symbol} (lines {loop_graph.head_line}-{loop_graph.latch_line}): "
                        f"{loop_graph.per_iteration} cycles x {item.symbol}",
                        loop=item.symbol,
                    )
                )
                nodes.append(
                    Node(self.exit(item), "loop_out", f"end loop {item.symbol}", loop=item.symbol)
                )
                weight = loop_graph.per_iteration * Polynomial.symbol(item.symbol)
                edges.append(Edge(self.entry(item), self.exit(item), weight, "loop"))
            if previous is None:
                edges.append(Edge(source.id, self.entry(item), MaxPolynomial.coerce(0), "start"))
            else:
                label, kind = self.ilp_edge(previous, item)
                edges.append(
                    Edge(self.exit(previous), self.entry(item), MaxPolynomial.coerce(label), kind)
                )
            reads, writes = self.reads_writes(item)
            best: dict[tuple[str, str], Edge] = {}
            for register in reads:
                if register not in writers:
                    continue
                writer_item, writer = writers[register]
                latency = self.table.result_latency(writer)
                memory = writer.memory is not None
                edge = Edge(
                    self.exit(writer_item),
                    self.entry(item),
                    MaxPolynomial.coerce(latency),
                    "memory" if memory else "dependency",
                    register,
                )
                key = (edge.source, edge.kind)
                if key not in best or best[key].label.evaluate(self.point) < latency:
                    best[key] = edge
            edges.extend(best.values())
            for register, writer in writes.items():
                writers[register] = (item, writer)
            previous = item
        nodes.append(sink)
        if previous is not None:
            edges.append(
                Edge(self.exit(previous), sink.id, MaxPolynomial.coerce(sink_label), sink_kind)
            )
        else:
            edges.append(Edge(source.id, sink.id, MaxPolynomial.coerce(0), sink_kind))
        return self.longest(nodes, edges, source.id, sink.id)

    def longest(self, nodes: list[Node], edges: list[Edge], source: str, sink: str) -> Region:
        incoming: dict[str, list[Edge]] = {n.id: [] for n in nodes}
        for edge in edges:
            incoming[edge.target].append(edge)
        times: dict[str, MaxPolynomial] = {}
        values: dict[str, float] = {}
        chosen: dict[str, Edge] = {}
        for node in nodes:  # nodes are in topological (program) order
            if node.id == source:
                times[node.id], values[node.id] = MaxPolynomial.coerce(0), 0.0
                continue
            candidates = [e for e in incoming[node.id] if e.source in times]
            times[node.id] = MaxPolynomial.of(times[e.source] + e.label for e in candidates)
            best = max(candidates, key=lambda e: values[e.source] + e.label.evaluate(self.point))
            values[node.id] = values[best.source] + best.label.evaluate(self.point)
            chosen[node.id] = best
        critical: list[Edge] = []
        cursor = sink
        while cursor in chosen:
            critical.append(chosen[cursor])
            cursor = chosen[cursor].source
        critical.reverse()
        return Region(nodes=nodes, edges=edges, times=times, sink=sink, critical=critical)

    def loop(self, loop: Loop, multiplier: Polynomial) -> LoopGraph:
        symbol = loop.symbol
        items = self.body_items(loop)
        region = self.region(
            items,
            source=Node(
                f"L{symbol}.head", "iteration_start", f"iteration of {symbol}", loop=symbol
            ),
            sink=Node(
                f"L{symbol}.next", "iteration_next", f"next iteration of {symbol}", loop=symbol
            ),
            sink_label=self.table.branch_taken,
            sink_kind="branch",
            multiplier=multiplier,
        )
        per_iteration = region.length
        carried: list[str] = []
        writers: dict[str, tuple[Item, Instruction]] = {}
        for item in items:
            writers.update({r: (item, w) for r, w in self.reads_writes(item)[1].items()})
        first_reader: dict[str, Item] = {}
        for item in items:
            for register in self.reads_writes(item)[0]:
                first_reader.setdefault(register, item)
        extra: list[MaxPolynomial] = []
        for register, reader in first_reader.items():
            if register not in writers:
                continue
            writer_item, writer = writers[register]
            start = region.times[self.entry(reader)].leading(self.point)
            span = region.times[self.exit(writer_item)] + (
                self.table.result_latency(writer) - start
            )
            if span.evaluate(self.point) > per_iteration.evaluate(self.point):
                carried.append(f"{register}: line {writer.line} -> line {self._line(reader)}")
            extra.append(span)
        per_iteration = MaxPolynomial.of([per_iteration, *extra])
        graph = LoopGraph(
            symbol=symbol,
            head_line=self.instructions[loop.head].line,
            latch_line=self.instructions[loop.latch].line,
            region=region,
            per_iteration=per_iteration,
            multiplier=multiplier,
            carried=carried,
        )
        self.loops.append(graph)
        return graph

    def _line(self, item: Item) -> int:
        return (
            self.instructions[item].line
            if isinstance(item, int)
            else self.instructions[item.head].line
        )


def build_graph(
    instructions: list[Instruction],
    live: set[int],
    roots: list[Loop],
    table: LatencyTable,
    point: Mapping[str, Number],
) -> ExecutionGraph:
    """Return the execution graph, Lat_bound and the breakdown of its critical path.

    `point` gives the trip-count values at which the critical path is chosen.
    """
    builder = _Builder(instructions, live, table, point)
    items = builder.items(0, len(instructions) - 1, roots)
    top = builder.region(
        items,
        source=Node("start", "start", "start"),
        sink=Node("end", "end", "end"),
        sink_label=table.block_replacement,
        sink_kind="replacement",
        multiplier=Polynomial.constant(1),
    )
    breakdown = {
        "instructions": Polynomial(),
        "memory": Polynomial(),
        "block_replacement": Polynomial(),
        "loops": Polynomial(),
    }
    category = {"memory": "memory", "replacement": "block_replacement", "loop": "loops"}
    for edge in top.critical:
        key = category.get(edge.kind, "instructions")
        breakdown[key] = breakdown[key] + edge.label.leading(point)
    builder.loops.sort(key=lambda g: g.head_line)
    return ExecutionGraph(top=top, loops=builder.loops, lat_bound=top.length, breakdown=breakdown)
