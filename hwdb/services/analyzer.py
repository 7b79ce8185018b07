"""The kernel analyzer for the browser: pasted SASS or CUDA to the GPU model's inputs
(INS_cuda, INS_issued, GMem_bytes, Lat_bound and the execution graph), analysed in the
sandbox's child (simulator.analyze) with its limits."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from django.core.exceptions import ValidationError

from hwdb.sandbox import sandbox_runner
from simulator.analyze import KernelAnalysisError, analyze_in_sandbox

# The request field an analyzer message is about, by how the message starts
# (simulator/analyzer/errors.py); any other concerns the pasted source.
FIELD_OF_MESSAGE = (
    ("trip count", "trips"),
    ("architecture", "arch"),
    ("unsupported architecture", "arch"),
    ("no architecture", "arch"),
    ("give the architecture", "arch"),
    ("kernel ", "kernel"),
    ("the input holds several kernels", "kernel"),
    ("stride", "source"),
)


def message_field(message: str) -> str:
    """Return the request field `message` names: trips, arch, kernel or source."""
    return next((field for start, field in FIELD_OF_MESSAGE if message.startswith(start)), "source")


def kernel_analyze(
    *,
    language: str,
    source: str,
    arch: str | None = None,
    trips: Mapping[str, int] | None = None,
    kernel: str | None = None,
    block_size: int | None = None,
    registers: int | None = None,
    shared_mem: int = 0,
    user_id: int | None = None,
) -> dict[str, Any]:
    """Return the analysis of the kernel in `source` ({"analysis", "summary", "svg"});
    ValidationError naming the field when the analyzer refuses the input (the SASS line in
    the message where it has one). Analysed on the interactive worker as one of `user_id`'s
    interactive jobs (webapp/interactive.py)."""
    try:
        return analyze_in_sandbox(
            language=language,
            source=source,
            arch=arch,
            trips=trips,
            kernel=kernel,
            block_size=block_size,
            registers=registers,
            shared_mem=shared_mem,
            run=sandbox_runner(user_id=user_id),
        )
    except KernelAnalysisError as error:
        raise ValidationError({message_field(error.message): [error.message]}) from None
