"""Importing an uploaded profiler trace in the sandbox's child process (issue 43 item 7).

A trace uploaded over REST is anyone's file: its JSON may nest a million deep, hold numbers
of thousands of digits or expand from a small gzip into gigabytes, and an SQLite export may
hold millions of rows in a few megabytes. Reading it (simulator.trace_import) and mapping it
to the kernel models (simulator.trace_model) must not happen in a web or worker process:
`import_trace_in_sandbox` hands the file's bytes to a sandbox child with
`import_trace_file` as the entry and the limits of `TRACE_LIMITS` (wall clock, CPU, memory,
file size, result size), as the kernel analyzer does (simulator.analyze), and returns the
imported model, snapshot, labels and report, or raises TraceSandboxError naming the field at
fault (the trace or a GPU) with the reader's message, or the limit the child ran into.

This module loads neither the kernel models nor NumPy: the child does. The GPU records a name is
looked up in come with the payload (simulator.gpu_catalogue): the web side sends the ones
its user may see, so the child needs no database.
"""

from __future__ import annotations

import base64
import os
import tempfile
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

from simulator.errors import SandboxLimitError, SimulationError
from simulator.gpu_catalogue import GpuCatalogue
from simulator.sandbox import child_entry
from simulator.sandbox.parent import Limits, run_sandboxed
from simulator.trace_import import TraceError, read_trace

if TYPE_CHECKING:
    from simulator.sandbox.parent import EntryRunner

__all__ = [
    "MAX_JSON_BYTES",
    "MAX_TRACE_BYTES",
    "TRACE_ENTRY",
    "TRACE_LIMITS",
    "TraceSandboxError",
    "import_trace_file",
    "import_trace_in_sandbox",
]

TRACE_ENTRY = "simulator.trace_sandbox:import_trace_file"
# The most JSON a Kineto trace may hold once decompressed: Python's objects for it take
# several times its bytes, which must fit the child's memory limit below.
MAX_JSON_BYTES = 128 * 1024**2
MAX_TRACE_BYTES = 64 * 1024**2
"""The largest file sent to the child: it travels base64-encoded in the job's payload."""
TRACE_LIMITS = Limits(
    wall_s=60.0,
    cpu_s=60,
    data_bytes=2 * 1024**3,
    # the trace is written to the child's own temporary directory before it is read
    fsize_bytes=MAX_TRACE_BYTES + 1024**2,
    nproc=64,
    output_bytes=64 * 1024,
    result_bytes=64 * 1024**2,
)
MSG_LIMIT = "The trace could not be imported within the sandbox's limits: {detail}"
MSG_FAILED = "The trace could not be imported: {detail}"
FIELDS = ("trace", "measured_gpu", "target_gpu", "system", "ranks")


class TraceSandboxError(Exception):
    """A trace import refused: `field` is the request's field at fault (FIELDS)."""

    def __init__(self, field: str, message: str) -> None:
        super().__init__(message)
        self.field = field
        self.message = message


def _no_v8(payload: Mapping[str, Any]) -> bool:
    return False


def _modules(payload: Mapping[str, Any]) -> tuple[str, ...]:
    return ("simulator.trace_import", "simulator.trace_model")


@child_entry(needs_v8=_no_v8, modules_needed=_modules)
def import_trace_file(
    *,
    trace_base64: str,
    filename: str,
    catalogue: Mapping[str, Any],
    measured_gpu: str = "",
    target_gpu: str = "",
    ranks: int = 1,
    system: str | None = None,
    max_json_bytes: int = MAX_JSON_BYTES,
    progress: Callable[[float], None] | None = None,
) -> dict[str, Any]:
    """Return {"app_source", "snapshot", "labels", "report"} of the trace, or {"error":
    {"field", "message"}} (the child's entry: keyword arguments are the JSON payload)."""
    # Lazy: the kernel models load NumPy, which only the child needs.
    from simulator.trace_model import TraceImportError, gpu_record, import_trace, match_gpu

    records = GpuCatalogue.from_data(catalogue)
    found = {}
    for field, spec in (("measured_gpu", measured_gpu), ("target_gpu", target_gpu)):
        if spec.strip():
            try:
                found[field] = gpu_record(spec.strip(), records)
            except TraceImportError as error:
                return {"error": {"field": field, "message": str(error)}}
    directory = tempfile.mkdtemp(prefix="trace-")
    path = os.path.join(directory, "upload")
    try:
        with open(path, "wb") as file:
            file.write(base64.b64decode(trace_base64, validate=True))
        try:
            profile = read_trace(path, max_json_bytes=max_json_bytes)
        except TraceError as error:
            return {"error": {"field": "trace", "message": str(error).replace(path, filename)}}
    finally:
        if os.path.exists(path):
            os.unlink(path)
        os.rmdir(directory)
    if progress is not None:
        progress(0.5)
    try:
        imported = import_trace(
            profile,
            measured=found.get("measured_gpu") or match_gpu(profile.gpu_name, records),
            target=found.get("target_gpu"),
            ranks=ranks,
            source_name=filename,
            system=system,
        )
    except TraceImportError as error:
        field = "system" if str(error).startswith("no cluster template") else "trace"
        return {"error": {"field": field, "message": str(error)}}
    return {
        "app_source": imported.app_source,
        "snapshot": imported.snapshot,
        "labels": imported.labels,
        "report": imported.report,
    }


def import_trace_in_sandbox(
    *,
    data: bytes,
    filename: str,
    catalogue: GpuCatalogue,
    measured_gpu: str = "",
    target_gpu: str = "",
    ranks: int = 1,
    system: str | None = None,
    max_json_bytes: int = MAX_JSON_BYTES,
    limits: Limits = TRACE_LIMITS,
    run: EntryRunner | None = None,
) -> dict[str, Any]:
    """Return the import of the trace `data` (named `filename` in messages), read and mapped
    in a limited child started by `run` (by default `run_sandboxed` here), the GPUs looked up
    in `catalogue`; raise TraceSandboxError."""
    if len(data) > MAX_TRACE_BYTES:
        raise TraceSandboxError(
            "trace", f"The trace is larger than {MAX_TRACE_BYTES // 1024**2} MiB."
        )
    payload = {
        "trace_base64": base64.b64encode(data).decode("ascii"),
        "filename": filename,
        "catalogue": catalogue.to_data(),
        "measured_gpu": measured_gpu,
        "target_gpu": target_gpu,
        "ranks": ranks,
        "system": system,
        "max_json_bytes": max_json_bytes,
    }
    try:
        result = (run or run_sandboxed)(payload, limits=limits, _entry=TRACE_ENTRY)
    except SandboxLimitError as error:
        raise TraceSandboxError("trace", MSG_LIMIT.format(detail=error.detail)) from error
    except SimulationError as error:
        raise TraceSandboxError("trace", MSG_FAILED.format(detail=error.message)) from error
    if "error" in result:
        error_data = result["error"]
        field = str(error_data.get("field", "trace"))
        raise TraceSandboxError(field if field in FIELDS else "trace", str(error_data["message"]))
    return dict(result)
