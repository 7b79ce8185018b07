"""Draw the execution graph as SVG, like 000 Fig. 5.1, with the critical path highlighted.

Instructions run top to bottom in program order between *start* and *end*; loop bodies are drawn
as ellipses (as the paper draws the computational loop) between a *loop* and an *end loop*
marker. Edges between consecutive nodes (ILP, dual issue, branch) are solid and straight;
register dependencies are dotted arcs on the right, labelled with their latency; the loop's
``trip x per-iteration`` edge is an arc on the left. Critical-path edges are blue and thick, in
the top level and inside every loop. Plain SVG 1.1, no external dependency.
"""

from __future__ import annotations

from collections.abc import Sequence
from xml.sax.saxutils import escape

from simulator.analyzer.graph import Edge, ExecutionGraph, Node, Region
from simulator.analyzer.sass import Instruction

ROW = 34
NODE_W = 330
NODE_H = 22
CENTER = 330
TOP = 60
BLUE = "#1f5fd6"
GREY = "#6b6b6b"


def _order(graph: ExecutionGraph) -> tuple[list[Node], dict[str, str]]:
    """Return the nodes to draw in order and an alias map (iteration start/next -> loop in/out)."""
    by_symbol = {g.symbol: g.region for g in graph.loops}
    alias: dict[str, str] = {}
    ordered: list[Node] = []

    def walk(region: Region) -> None:
        for node in region.nodes:
            if node.kind in {"iteration_start", "iteration_next"}:
                continue
            ordered.append(node)
            if node.kind == "loop_in" and node.loop in by_symbol:
                inner = by_symbol[node.loop]
                alias[f"L{node.loop}.head"] = f"L{node.loop}.in"
                alias[f"L{node.loop}.next"] = f"L{node.loop}.out"
                walk(inner)

    walk(graph.top)
    return ordered, alias


def render_svg(
    graph: ExecutionGraph, instructions: Sequence[Instruction], *, kernel: str, arch: str
) -> str:
    """Return the SVG document of `kernel`'s execution graph on `arch` (the analysis's graph
    and instructions, simulator.analyzer.analysis.KernelAnalysis.svg)."""
    nodes, alias = _order(graph)
    y = {node.id: TOP + row * ROW for row, node in enumerate(nodes)}
    loop_depth: dict[str, int] = {}
    depth = 0
    for node in nodes:
        if node.kind == "loop_out":
            depth -= 1
        loop_depth[node.id] = depth
        if node.kind == "loop_in":
            depth += 1
    regions: list[Region] = [graph.top] + [g.region for g in graph.loops]
    height = TOP + len(nodes) * ROW + 40
    width = CENTER + NODE_W // 2 + 260
    out: list[str] = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
        f'viewBox="0 0 {width} {height}" font-family="monospace" font-size="11">',
        "<title>Execution graph</title>",
        f'<text x="10" y="20" font-size="13" font-weight="bold">{escape(kernel)} '
        f"({arch}): Lat_bound = {escape(str(graph.lat_bound))} cycles</text>",
        f'<text x="10" y="38" fill="{BLUE}">critical path in blue; dotted: register '
        "dependencies; ellipses: loop bodies</text>",
        '<defs><marker id="arrow" markerWidth="8" markerHeight="8" refX="7" refY="4" '
        'orient="auto"><path d="M0,0 L8,4 L0,8 z" fill="context-stroke"/></marker></defs>',
    ]

    def edge_svg(edge: Edge, critical: bool) -> str:
        source = alias.get(edge.source, edge.source)
        target = alias.get(edge.target, edge.target)
        if source not in y or target not in y:
            return ""
        colour = BLUE if critical else GREY
        stroke = 2.6 if critical else 1.0
        label = escape(str(edge.label))
        y1, y2 = y[source] + NODE_H / 2, y[target] - NODE_H / 2
        if edge.kind == "loop":
            x = CENTER - NODE_W / 2 - 8
            bulge = x - 60
            return (
                f'<path d="M{x},{y[source]} C{bulge},{y[source]} {bulge},{y[target]} {x},{y[target]}" '
                f'fill="none" stroke="{colour}" stroke-width="{stroke}" marker-end="url(#arrow)"/>'
                f'<text x="{bulge - 4}" y="{(y[source] + y[target]) / 2}" text-anchor="end" '
                f'fill="{colour}">{label}</text>'
            )
        consecutive = edge.kind in {"start", "ilp", "dual", "branch", "replacement"}
        if consecutive and y[target] >= y[source]:
            x = CENTER - 40
            return (
                f'<line x1="{x}" y1="{y1}" x2="{x}" y2="{y2}" stroke="{colour}" '
                f'stroke-width="{stroke}" marker-end="url(#arrow)"/>'
                f'<text x="{x - 6}" y="{(y1 + y2) / 2 + 4}" text-anchor="end" '
                f'fill="{colour}">{label}</text>'
            )
        x = CENTER + NODE_W / 2 + 4
        bulge = x + 18 + min(200, 9 * abs(y[target] - y[source]) / ROW)
        dash = "" if consecutive else ' stroke-dasharray="3,3"'
        return (
            f'<path d="M{x},{y[source]} C{bulge},{y[source]} {bulge},{y[target]} {x},{y[target]}" '
            f'fill="none" stroke="{colour}" stroke-width="{stroke}"{dash} marker-end="url(#arrow)"/>'
            f'<text x="{bulge - 10}" y="{(y[source] + y[target]) / 2 + 4}" '
            f'fill="{colour}">{label}</text>'
        )

    for region in regions:
        critical_ids = {id(e) for e in region.critical}
        for edge in sorted(region.edges, key=lambda e: id(e) in critical_ids):
            out.append(edge_svg(edge, id(edge) in critical_ids))
    on_path: set[str] = set()
    for region in regions:
        for edge in region.critical:
            on_path.add(alias.get(edge.source, edge.source))
            on_path.add(alias.get(edge.target, edge.target))
    for node in nodes:
        cy = y[node.id]
        colour = BLUE if node.id in on_path else "#333333"
        text = escape(
            node.label
            if node.instruction is None
            else f"{instructions[node.instruction].line:>3}: {node.label}"
        )
        if node.kind == "instruction" and loop_depth[node.id] > 0:
            shape = (
                f'<ellipse cx="{CENTER}" cy="{cy}" rx="{NODE_W / 2}" ry="{NODE_H / 2 + 2}" '
                f'fill="#f3f6ff" stroke="{colour}"/>'
            )
        elif node.kind in {"start", "end"}:
            shape = (
                f'<rect x="{CENTER - 40}" y="{cy - NODE_H / 2}" width="80" height="{NODE_H}" '
                f'rx="11" fill="#eeeeee" stroke="{colour}"/>'
            )
        else:
            fill = "#fff8e6" if node.kind in {"loop_in", "loop_out"} else "#ffffff"
            shape = (
                f'<rect x="{CENTER - NODE_W / 2}" y="{cy - NODE_H / 2}" width="{NODE_W}" '
                f'height="{NODE_H}" fill="{fill}" stroke="{colour}"/>'
            )
        out.append(shape)
        out.append(f'<text x="{CENTER}" y="{cy + 4}" text-anchor="middle">{text}</text>')
    out.append("</svg>")
    return "\n".join(part for part in out if part) + "\n"
