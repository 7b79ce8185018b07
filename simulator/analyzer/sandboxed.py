"""The kernel analyzer's child entry: pasted SASS or CUDA analysed in the sandbox's child.

The parent side is `simulator.analyze` (`analyze_in_sandbox`), which the web side calls
without loading the analyzer (and NumPy) itself; this module runs only in the child.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from typing import Any

from simulator.analyzer.analysis import analyze_cuda, analyze_sass
from simulator.analyzer.errors import AnalyzerError
from simulator.sandbox import child_entry

__all__ = ["NO_CUDA_ARCH", "analyze_kernel"]

NO_CUDA_ARCH = "give the architecture to compile for (e.g. sm_80)"


def _no_v8(payload: Mapping[str, Any]) -> bool:
    return False


@child_entry(needs_v8=_no_v8)
def analyze_kernel(
    *,
    language: str,
    source: str,
    arch: str | None = None,
    trips: Mapping[str, int] | None = None,
    kernel: str | None = None,
    block_size: int | None = None,
    registers: int | None = None,
    shared_mem: int = 0,
    tool_environment: Mapping[str, str] | None = None,
    progress: Callable[[float], None] | None = None,
) -> dict[str, Any]:
    """Return {"analysis", "summary", "svg"} of the kernel in `source`, or {"error", "line"}
    with the analyzer's message (the child's entry: keyword arguments are the JSON payload).

    `tool_environment`: where the parent's CUDA tools are (PATH, CUDA_HOME, PARASIM_NVCC...):
    the child starts with an empty environment, and nvcc runs the host compiler by the
    search path.
    """
    os.environ.update(tool_environment or {})
    try:
        if language == "cuda":
            if not arch:
                return {"error": NO_CUDA_ARCH, "line": None}
            analysis = analyze_cuda(source, arch, trips=trips, kernel=kernel, block_size=block_size)
        else:
            analysis = analyze_sass(
                source,
                arch,
                trips=trips,
                kernel=kernel,
                block_size=block_size,
                registers=registers,
                shared_mem=shared_mem,
            )
    except AnalyzerError as error:
        return {"error": error.message, "line": error.line}
    if progress is not None:
        progress(1.0)
    return {"analysis": analysis.to_dict(), "summary": analysis.summary(), "svg": analysis.svg()}
