"""Errors of the kernel analyzer: one exception class, every message built here.

Tests assert on these constants; the CLI prints `str(error)`, which carries the line number of
the SASS text (1-based) when the error concerns one line.
"""

from __future__ import annotations

UNKNOWN_OPCODE = "unknown opcode {opcode!r} on line {line}: {text}"
UNBALANCED_BRACE = "unbalanced dual-issue brace '{brace}' on line {line}"
PAIR_SIZE = "a dual-issue group must hold exactly two instructions; line {line} holds {count}"
BAD_TARGET = "branch target {target} on line {line} is not an address or a known label"
NO_INSTRUCTIONS = "no SASS instructions found in the input"
NO_ARCH = "no architecture given and none found in the SASS ('code for sm_XX'): use --arch"
UNSUPPORTED_ARCH = "unsupported architecture {arch!r}: latency tables exist for {known}"
BAD_ARCH = "architecture {arch!r} is not of the form sm_XX"
KERNEL_NOT_FOUND = "kernel {kernel!r} not found; the input holds {names}"
SEVERAL_KERNELS = "the input holds several kernels ({names}); choose one with kernel= / --kernel"
OVERLAPPING_LOOPS = (
    "loops {first} and {second} overlap without nesting (lines {lines}); "
    "only structured loops are supported"
)
BAD_TRIP = "trip count {text!r} must look like NAME=INTEGER (e.g. a=4)"
UNKNOWN_TRIP = "trip count given for {name!r}, but the kernel's loops are named {names}"
NEGATIVE_TRIP = "trip count {name}={value} must be at least 0"
BAD_STRIDE = "stride {text!r} must look like LINE=INTEGER (the SASS line of a memory access)"
NOT_MEMORY_LINE = "line {line} holds no memory access to apply a stride to"
NVCC_MISSING = "nvcc was not found (PATH, $CUDA_HOME/bin, /usr/local/cuda/bin); paste SASS instead"
CUOBJDUMP_MISSING = (
    "cuobjdump was not found (PATH or the nvidia-cuda-cuobjdump package); paste SASS instead"
)
COMPILER_FAILED = "nvcc failed for {arch} (exit {code}):\n{output}"
DISASSEMBLER_FAILED = "cuobjdump failed (exit {code}):\n{output}"
NO_PTXAS_INFO = "ptxas reported no resource usage for kernel {kernel!r}"
UNDEFINED_SYMBOL = "polynomial {poly} needs a value for {names}"
MISSING_FILE = "file not found: {path}"


class AnalyzerError(Exception):
    """Raised for every problem the analyzer reports; `line` is the SASS line when known."""

    def __init__(self, message: str, *, line: int | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.line = line

    def __str__(self) -> str:
        """Return the message (it names the line itself where there is one)."""
        return self.message
