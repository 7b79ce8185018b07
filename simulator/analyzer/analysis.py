"""The analyzer's Python API: SASS or CUDA source in, the GPU model's parameter set out.

    analyze_sass(text, arch="sm_52", trips={"a": 4}) -> KernelAnalysis
    analyze_cuda(path_or_source, arch="sm_90", block_size=256) -> KernelAnalysis

A KernelAnalysis holds INS_cuda, INS_issued, GMem_bytes and Lat_bound as polynomials in the
loops' trip-count symbols (000 sections 5.1-5.2), their values when the trip counts are given,
the resource usage from ptxas, the occupancy for a block size (simulator.models.occupancy), the
execution graph (graph.py) and `model_params()`: the parameters of the built-in Volkov GPU
model under the names of 000 Listing 5 (CUDACoreInstructions, issuedInstructions,
GMEMBytesTransferred, latencyBound, registersPerThread, ...), which
`simulator.models.volkov.computation_time` and the application models take unchanged.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from simulator.analyzer.compile import ResourceUsage, compile_cuda
from simulator.analyzer.counts import Counts, count
from simulator.analyzer.errors import (
    KERNEL_NOT_FOUND,
    MISSING_FILE,
    NEGATIVE_TRIP,
    NO_ARCH,
    NO_PTXAS_INFO,
    NOT_MEMORY_LINE,
    SEVERAL_KERNELS,
    UNKNOWN_TRIP,
    AnalyzerError,
)
from simulator.analyzer.graph import ExecutionGraph, build_graph
from simulator.analyzer.latency import LatencyTable, latency_table, normalise_arch
from simulator.analyzer.polynomial import MaxPolynomial, Polynomial
from simulator.analyzer.sass import Instruction, SassFunction, parse_sass
from simulator.analyzer.structure import Loop, find_loops, reachable
from simulator.analyzer.svg import render_svg
from simulator.models.occupancy import OccupancyResult, occupancy
from simulator.models.volkov import KernelProfile


@dataclass
class KernelAnalysis:
    """Everything the analyzer found out about one kernel."""

    kernel: str
    arch: str
    table: LatencyTable
    instructions: list[Instruction]
    live: set[int]
    loops: list[Loop]
    counts: Counts
    graph: ExecutionGraph
    trips: dict[str, int]
    resources: ResourceUsage | None = None
    block_size: int | None = None
    occupancy: OccupancyResult | None = None
    notes: list[str] = field(default_factory=list)

    # -- the paper's four parameters ------------------------------------------------------------
    @property
    def ins_cuda(self) -> Polynomial:
        """Return INS_cuda (4.4): CUDA-core instructions per warp."""
        return self.counts.ins_cuda

    @property
    def ins_issued(self) -> Polynomial:
        """Return INS_issued (4.4): issue slots per warp (dual pairs once, re-issues added)."""
        return self.counts.ins_issued

    @property
    def gmem_bytes(self) -> Polynomial:
        """Return GMem_bytes (4.4): global-memory bytes per warp."""
        return self.counts.gmem_bytes

    @property
    def lat_bound(self) -> MaxPolynomial:
        """Return Lat_bound (4.3): the critical path of the execution graph in cycles."""
        return self.graph.lat_bound

    @property
    def trip_symbols(self) -> list[str]:
        """Return the loops' trip-count symbols in program order."""
        return [g.symbol for g in self.graph.loops]

    @property
    def complete(self) -> bool:
        """Return whether every trip count has a value."""
        return set(self.trip_symbols) <= set(self.trips)

    def parameters(self) -> dict[str, Polynomial | MaxPolynomial]:
        """Return the parameter set as polynomials (names of 000 section 4)."""
        by_class = self.counts.by_class
        zero = Polynomial()
        return {
            "INS_cuda": self.ins_cuda,
            "INS_issued": self.ins_issued,
            "GMem_bytes": self.gmem_bytes,
            "Lat_bound": self.lat_bound,
            "INS_sfu": by_class.get("sfu", zero),
            "INS_fp64": by_class.get("fp64", zero),
            "INS_conversion": by_class.get("conversion", zero),
            "INS_tensor": by_class.get("tensor", zero),
            "INS_uniform": by_class.get("uniform", zero),
            "INS_shared": self.counts.shared_accesses,
            "INS_atomic": self.counts.atomic_accesses,
            "INS_atomic_global": self.counts.global_atomics,
            "OPS_atomic_global": self.counts.global_atomic_operations,
            "INS_barrier": self.counts.barriers,
            "INS_int": by_class.get("int", zero),
            "INS_global": self.counts.global_accesses,
            "LMem_bytes": self.counts.lmem_bytes,
            "reissues": self.counts.reissues,
            "dual_issues": self.counts.dual_issues,
        }

    def values(self, trips: Mapping[str, int] | None = None) -> dict[str, int | float]:
        """Return the parameters evaluated at `trips` (default: the analysis's trip counts)."""
        point = dict(self.trips) | dict(trips or {})
        return {name: poly.evaluate(point) for name, poly in self.parameters().items()}

    def profile(self, trips: Mapping[str, int] | None = None) -> KernelProfile:
        """Return the Volkov model's KernelProfile at `trips`."""
        values = self.values(trips)
        return KernelProfile(
            cuda_core_instructions=float(values["INS_cuda"]),
            issued_instructions=float(values["INS_issued"]),
            gmem_bytes=float(values["GMem_bytes"]),
            latency_bound=float(values["Lat_bound"]),
            fp64_instructions=float(values["INS_fp64"]),
            sfu_instructions=float(values["INS_sfu"]),
            shared_memory_instructions=float(values["INS_shared"]),
        )

    def model_params(self, trips: Mapping[str, int] | None = None) -> dict[str, Any]:
        """Return the built-in GPU models' parameters: Volkov's (000 Listing 5 names), and the
        current-architecture model's INTInstructions, tensorInstructions and tensorPrecision
        (when every tensor instruction has the same one), atomicsPerThread (OPS_atomic_global:
        every lane of a global atomic instruction one operation, a warp-aggregated one one per
        warp; other predicated-off lanes are not known here) and barrierInstructions, the last
        two where the kernel has them."""
        values = self.values(trips)
        params: dict[str, Any] = {
            "CUDACoreInstructions": values["INS_cuda"],
            "issuedInstructions": values["INS_issued"],
            "GMEMBytesTransferred": values["GMem_bytes"],
            "latencyBound": values["Lat_bound"],
            "FP64Instructions": values["INS_fp64"],
            "SFUInstructions": values["INS_sfu"],
            "sharedMemoryInstructions": values["INS_shared"],
        }
        # the current-architecture model's (C.6) inputs; Volkov's model has no such units
        params["INTInstructions"] = values["INS_int"]
        if values["INS_tensor"]:
            params["tensorInstructions"] = values["INS_tensor"]
            if len(self.counts.tensor_precisions) == 1:
                params["tensorPrecision"] = self.counts.tensor_precisions[0]
        # (C.8) and (C.9); absent, so that a kernel without them keeps its parameters
        if values["INS_atomic_global"]:
            params["atomicsPerThread"] = values["OPS_atomic_global"]
        if values["INS_barrier"]:
            params["barrierInstructions"] = values["INS_barrier"]
        if self.resources is not None:
            params["registersPerThread"] = self.resources.registers
            params["sharedMemPerBlock"] = self.resources.shared_bytes
        if self.block_size is not None:
            params["blockSize"] = self.block_size
        if self.occupancy is not None:
            params["occupancy"] = self.occupancy.active_warps_per_sm
        return params

    def svg(self) -> str:
        """Return the execution graph drawn as SVG, the critical path highlighted."""
        return render_svg(self.graph, self.instructions, kernel=self.kernel, arch=self.arch)

    def to_dict(self) -> dict[str, Any]:
        """Return the JSON parameter set (see docs/kernel-analyzer.md)."""
        result: dict[str, Any] = {
            "kernel": self.kernel,
            "arch": self.arch,
            "compute_capability": self.table.compute_capability,
            "family": self.table.family,
            "trip_counts": {
                g.symbol: {
                    "lines": [g.head_line, g.latch_line],
                    "per_iteration_cycles": str(g.per_iteration),
                    "value": self.trips.get(g.symbol),
                }
                for g in self.graph.loops
            },
            "parameters": {name: str(poly) for name, poly in self.parameters().items()},
            "lat_bound_breakdown": {k: str(v) for k, v in self.graph.breakdown.items()},
            "dual_issue_pairs": self.counts.dual_issue_pairs,
            "instructions": len(self.live),
            "instruction_classes": {k: str(v) for k, v in sorted(self.counts.by_class.items())},
            "critical_path_lines": self.critical_lines(),
        }
        if self.complete:
            result["values"] = self.values()
            result["model_params"] = self.model_params()
        if self.resources is not None:
            r = self.resources
            result["resources"] = {
                "registers_per_thread": r.registers,
                "shared_mem_per_block": r.shared_bytes,
                "constant_bytes": r.constant_bytes,
                "stack_frame_bytes": r.stack_frame_bytes,
                "spill_store_bytes": r.spill_store_bytes,
                "spill_load_bytes": r.spill_load_bytes,
                "barriers": r.barriers,
            }
        if self.occupancy is not None:
            o = self.occupancy
            result["occupancy"] = {
                "block_size": self.block_size,
                "active_blocks_per_sm": o.active_blocks_per_sm,
                "active_warps_per_sm": o.active_warps_per_sm,
                "max_warps_per_sm": o.max_warps_per_sm,
                "occupancy": o.occupancy,
                "limiting_factor": str(o.limiting_factor),
            }
        result["latency_table"] = {
            "family": self.table.family,
            "issue_latency": self.table.issue_latency,
            "branch_taken": self.table.branch_taken,
            "branch_not_taken": self.table.branch_not_taken,
            "block_replacement": self.table.block_replacement,
            "classes": self.table.classes,
            "memory": self.table.memory,
        }
        result["notes"] = list(self.notes)
        return result

    def critical_lines(self) -> list[int]:
        """Return the SASS lines of the instructions on the top-level critical path."""
        lines: list[int] = []
        for edge in self.graph.top.critical:
            if edge.target.startswith("i"):
                lines.append(self.instructions[int(edge.target[1:])].line)
        return lines

    def summary(self) -> str:
        """Return a short human-readable report."""
        parts = [
            f"kernel {self.kernel} ({self.arch}, {self.table.family})",
            f"INS_cuda   = {self.ins_cuda}",
            f"INS_issued = {self.ins_issued}",
            f"GMem_bytes = {self.gmem_bytes}",
            f"Lat_bound  = {self.lat_bound}"
            + "  ("
            + " + ".join(f"{k} {v}" for k, v in self.graph.breakdown.items() if v.terms)
            + ")",
            f"dual-issue pairs: {self.counts.dual_issue_pairs}",
        ]
        for name, value in self.parameters().items():
            if (
                name not in {"INS_cuda", "INS_issued", "GMem_bytes", "Lat_bound"}
                and str(value) != "0"
            ):
                parts.append(f"{name} = {value}")
        if self.complete and self.trips:
            given = ", ".join(f"{k}={v}" for k, v in self.trips.items())
            values = self.values()
            parts.append(
                f"at {given}: INS_cuda {values['INS_cuda']}, INS_issued {values['INS_issued']}, "
                f"GMem_bytes {values['GMem_bytes']}, Lat_bound {values['Lat_bound']}"
            )
        if self.resources is not None:
            parts.append(
                f"registers {self.resources.registers}, shared memory {self.resources.shared_bytes} B, "
                f"spills {self.resources.spill_store_bytes}/{self.resources.spill_load_bytes} B"
            )
        if self.occupancy is not None:
            parts.append(
                f"occupancy at block {self.block_size}: {self.occupancy.active_warps_per_sm} warps/SM "
                f"({self.occupancy.occupancy:.0%}, limited by {self.occupancy.limiting_factor})"
            )
        parts.extend(f"note: {n}" for n in self.notes)
        return "\n".join(parts)


def _pick(functions: list[SassFunction], kernel: str | None) -> SassFunction:
    if kernel is None:
        if len(functions) > 1:
            raise AnalyzerError(SEVERAL_KERNELS.format(names=", ".join(f.name for f in functions)))
        return functions[0]
    for function in functions:
        if function.name == kernel or re.match(
            rf"_Z\d+{re.escape(kernel)}(?!\w*\d)", function.name
        ):
            return function
    for function in functions:
        if re.match(rf"_Z{len(kernel)}{re.escape(kernel)}", function.name):
            return function
    raise AnalyzerError(
        KERNEL_NOT_FOUND.format(kernel=kernel, names=", ".join(f.name for f in functions))
    )


def analyze_sass(
    text: str,
    arch: str | None = None,
    *,
    trips: Mapping[str, int] | None = None,
    strides: Mapping[int, int] | None = None,
    kernel: str | None = None,
    block_size: int | None = None,
    resources: ResourceUsage | None = None,
    registers: int | None = None,
    shared_mem: int = 0,
) -> KernelAnalysis:
    """Return the analysis of one kernel in SASS `text`.

    `arch` (e.g. "sm_52") selects the latency table; without it the ``code for sm_XX`` header
    is used. `trips` gives trip-count values (symbols a, b, ... in loop order), `strides` maps
    SASS lines of memory instructions to their access stride in elements (default 1).
    `registers` / `shared_mem` (or ptxas `resources`) with `block_size` give the occupancy.
    """
    listing = parse_sass(text, arch=normalise_arch(arch) if arch else None)
    chosen_arch = normalise_arch(arch) if arch else listing.arch
    if chosen_arch is None:
        raise AnalyzerError(NO_ARCH)
    table = latency_table(chosen_arch)
    function = _pick(listing.functions, kernel)
    instructions = function.instructions
    notes = list(function.notes)
    live = reachable(instructions)
    dropped = len(instructions) - len(live)
    if dropped:
        notes.append(f"{dropped} unreachable instructions (after the final EXIT) not counted")
    if not table.dual_issue and any(i.pair is not None for i in instructions):
        notes.append(f"{table.family} has no dual issue: the {{ A; B; }} pairs count as two issues")
    roots = find_loops(instructions, live)
    symbols: list[str] = []
    stack = list(roots)
    while stack:
        loop = stack.pop()
        symbols.append(loop.symbol)
        stack.extend(loop.children)
    trip_values = dict(trips or {})
    for name, value in trip_values.items():
        if name not in symbols:
            raise AnalyzerError(
                UNKNOWN_TRIP.format(name=name, names=", ".join(sorted(symbols)) or "(no loops)")
            )
        if value < 0:
            raise AnalyzerError(NEGATIVE_TRIP.format(name=name, value=value))
    stride_map = dict(strides or {})
    memory_lines = {i.line for i in instructions if i.memory is not None}
    for line in stride_map:
        if line not in memory_lines:
            raise AnalyzerError(NOT_MEMORY_LINE.format(line=line), line=line)
    counts = count(instructions, live, roots, dual_issue=table.dual_issue, strides=stride_map)
    point = {s: trip_values.get(s, 1) for s in symbols}
    graph = build_graph(instructions, live, roots, table, point)
    for loop_graph in graph.loops:
        for carried in loop_graph.carried:
            notes.append(f"loop {loop_graph.symbol}: carried dependency {carried} sets its period")
    if resources is None and registers is not None:
        resources = ResourceUsage(registers=registers, shared_bytes=shared_mem)
    occupancy_result = None
    if block_size is not None and resources is not None:
        occupancy_result = occupancy(
            compute_capability=table.compute_capability,
            block_size=block_size,
            registers_per_thread=resources.registers,
            shared_mem_per_block=resources.shared_bytes,
        )
    return KernelAnalysis(
        kernel=function.name,
        arch=chosen_arch,
        table=table,
        instructions=instructions,
        live=live,
        loops=roots,
        counts=counts,
        graph=graph,
        trips=trip_values,
        resources=resources,
        block_size=block_size,
        occupancy=occupancy_result,
        notes=notes,
    )


def analyze_cuda(
    source: str | Path,
    arch: str,
    *,
    trips: Mapping[str, int] | None = None,
    strides: Mapping[int, int] | None = None,
    kernel: str | None = None,
    block_size: int | None = None,
) -> KernelAnalysis:
    """Return the analysis of a kernel compiled from CUDA `source` (a path or the text).

    Compiles with nvcc for `arch`, reads registers/shared memory/spills from ptxas and the SASS
    from cuobjdump; compiler errors are raised verbatim as AnalyzerError.
    """
    name = "kernel.cu"
    if isinstance(source, Path) or (
        isinstance(source, str) and "\n" not in source and source.endswith(".cu")
    ):
        path = Path(source)
        if not path.is_file():
            raise AnalyzerError(MISSING_FILE.format(path=path))
        text, name = path.read_text(), path.name
    else:
        text = str(source)
    target = normalise_arch(arch)
    latency_table(target)  # unsupported architectures fail before compiling
    compiled = compile_cuda(text, target, filename=name)
    listing = parse_sass(compiled.sass, arch=target)
    function = _pick(listing.functions, kernel)
    usage = compiled.resources.get(function.name)
    if usage is None:
        raise AnalyzerError(NO_PTXAS_INFO.format(kernel=function.name))
    analysis = analyze_sass(
        compiled.sass,
        target,
        trips=trips,
        strides=strides,
        kernel=function.name,
        block_size=block_size,
        resources=usage,
    )
    return analysis
