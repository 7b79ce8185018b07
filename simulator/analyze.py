"""The kernel analyzer for pasted input, run in the sandbox's child process.

The web side's analyzer (POST /api/analyze/) takes SASS or CUDA from the browser; parsing it,
and compiling CUDA with nvcc, must not run in the web process. `analyze_in_sandbox` starts a
sandbox child with `simulator.analyzer.sandboxed:analyze_kernel` as the entry and the limits
of `ANALYZE_LIMITS`, and returns the parameter set (`KernelAnalysis.to_dict`), the summary and
the execution graph as SVG, or raises KernelAnalysisError with the analyzer's message (and the
SASS line where it names one) or the limit the child ran into. This module loads neither the
analyzer nor NumPy: the child does.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from simulator.errors import SimulationError
from simulator.sandbox.parent import Limits, run_sandboxed

if TYPE_CHECKING:
    from simulator.sandbox.parent import EntryRunner

__all__ = [
    "ANALYZE_ENTRY",
    "ANALYZE_LIMITS",
    "LANGUAGES",
    "KernelAnalysisError",
    "analyze_in_sandbox",
]

ANALYZE_ENTRY = "simulator.analyzer.sandboxed:analyze_kernel"
LANGUAGES = ("sass", "cuda")
STOPPED = "the analyzer stopped: {message}"
# nvcc runs cicc and ptxas as children and writes its intermediate files: room for both.
ANALYZE_LIMITS = Limits(
    wall_s=60.0,
    cpu_s=40,
    data_bytes=2 * 1024**3,
    fsize_bytes=64 * 1024**2,
    nproc=64,
    output_bytes=64 * 1024,
    result_bytes=8 * 1024**2,
)
# Where the CUDA tools are (simulator.analyzer.compile.find_tool reads these), handed to the
# child, whose environment starts empty.
TOOL_VARIABLES = ("PATH", "CUDA_HOME", "CUDA_PATH", "PARASIM_NVCC", "PARASIM_CUOBJDUMP")


class KernelAnalysisError(Exception):
    """The analyzer's message for the input (`line`: the SASS line it names, if any)."""

    def __init__(self, message: str, *, line: int | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.line = line


def analyze_in_sandbox(
    *,
    language: str,
    source: str,
    arch: str | None = None,
    trips: Mapping[str, int] | None = None,
    kernel: str | None = None,
    block_size: int | None = None,
    registers: int | None = None,
    shared_mem: int = 0,
    limits: Limits = ANALYZE_LIMITS,
    run: EntryRunner | None = None,
) -> dict[str, Any]:
    """Return {"analysis", "summary", "svg"} for the kernel in `source` ("sass" or "cuda"),
    analysed in a limited child (started by `run`, by default `run_sandboxed` here); raise
    KernelAnalysisError."""
    payload = {
        "language": language,
        "source": source,
        "arch": arch,
        "trips": dict(trips or {}),
        "kernel": kernel,
        "block_size": block_size,
        "registers": registers,
        "shared_mem": shared_mem,
        "tool_environment": (
            {name: os.environ[name] for name in TOOL_VARIABLES if name in os.environ}
            if language == "cuda"
            else {}
        ),
    }
    try:
        result = (run or run_sandboxed)(payload, limits=limits, _entry=ANALYZE_ENTRY)
    except SimulationError as error:
        raise KernelAnalysisError(STOPPED.format(message=error.message)) from error
    if "error" in result:
        raise KernelAnalysisError(str(result["error"]), line=result.get("line"))
    return dict(result)
