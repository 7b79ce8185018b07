"""Kernel analyzer: CUDA source or SASS to the GPU model's inputs (issue 7; 000 sections 4-5).

    from simulator.analyzer import analyze_sass, analyze_cuda
    result = analyze_sass(text, arch="sm_52", trips={"a": 4})
    result.ins_cuda, result.ins_issued, result.gmem_bytes, result.lat_bound, result.to_dict()

Modules: sass (parser), isa (opcode classes), structure (blocks, loops), latency (tables in
data/), counts (INS_cuda, INS_issued, GMem_bytes), graph (execution graph, Lat_bound), compile
(nvcc, ptxas, cuobjdump), analysis (API), svg (drawing), cli (`python -m simulator analyze`).
"""

from __future__ import annotations

from simulator.analyzer.analysis import KernelAnalysis, analyze_cuda, analyze_sass
from simulator.analyzer.errors import AnalyzerError
from simulator.analyzer.polynomial import MaxPolynomial, Polynomial

__all__ = [
    "AnalyzerError",
    "KernelAnalysis",
    "MaxPolynomial",
    "Polynomial",
    "analyze_cuda",
    "analyze_sass",
]
