"""Importing a profiler trace over REST (issue 43 item 7): the uploaded Kineto JSON or Nsight
Systems SQLite export becomes an application model, a replay snapshot and a report
(simulator.trace_model, the same as `python -m simulator import-trace`), optionally saved as
one of the user's application models."""

from __future__ import annotations

import os
import tempfile
from typing import TYPE_CHECKING, Any

from simulator.trace_import import TraceError, read_trace
from webapp.studio.services.applications import application_model_create
from webapp.studio.services.common import field_error

if TYPE_CHECKING:
    from django.contrib.auth.models import User
    from django.core.files.uploadedfile import UploadedFile

# The largest trace accepted: a few hundred thousand GPU operations.
MAX_TRACE_BYTES = 256 * 1024 * 1024
# The most JSON a Kineto trace may hold once decompressed: a gzip upload under the limit above
# could otherwise expand into more memory than the web process has.
MAX_JSON_BYTES = MAX_TRACE_BYTES
MAX_RANKS = 4096

MESSAGES = {
    "too_large": f"The trace is larger than {MAX_TRACE_BYTES // (1024 * 1024)} MiB.",
    "ranks": f"Expected a whole number of ranks from 1 to {MAX_RANKS}.",
}


def trace_import(
    *,
    user: User,
    upload: UploadedFile | None,
    target_gpu: str = "",
    measured_gpu: str = "",
    ranks: object = 1,
    name: str = "",
) -> dict[str, Any]:
    """Return the imported trace's `app_source`, `snapshot`, `labels` and `report`, and the
    saved application model's id as `application` when `name` is given. Bad input raises a
    ValidationError naming its field; nothing is saved then."""
    # Imported here: the kernel models load NumPy, which a web process needs only for this.
    from simulator.trace_model import TraceImportError, gpu_record, import_trace, match_gpu

    if upload is None:
        raise field_error("trace", "This field is required.")
    if upload.size is not None and upload.size > MAX_TRACE_BYTES:
        raise field_error("trace", MESSAGES["too_large"])
    if isinstance(ranks, str) and ranks.strip().isdigit():
        ranks = int(ranks)
    if not isinstance(ranks, int) or isinstance(ranks, bool) or not 1 <= ranks <= MAX_RANKS:
        raise field_error("ranks", MESSAGES["ranks"])
    records = {}
    for field, spec in (("measured_gpu", measured_gpu), ("target_gpu", target_gpu)):
        if spec and spec.strip():
            if spec.strip().endswith(".json"):  # a catalogue name, never a server path
                raise field_error(field, "Give the name of a GPU of the hardware catalogue.")
            try:
                records[field] = gpu_record(spec.strip())
            except TraceImportError as error:
                raise field_error(field, str(error)) from error
    handle, path = tempfile.mkstemp(prefix="parasim-trace-")
    try:
        with os.fdopen(handle, "wb") as file:
            for chunk in upload.chunks():
                file.write(chunk)
        try:
            profile = read_trace(path, max_json_bytes=MAX_JSON_BYTES)
        except TraceError as error:
            raise field_error("trace", str(error).replace(path, upload.name or "trace")) from error
    finally:
        os.unlink(path)
    measured = records.get("measured_gpu") or match_gpu(profile.gpu_name)
    try:
        imported = import_trace(
            profile,
            measured=measured,
            target=records.get("target_gpu"),
            ranks=ranks,
            source_name=upload.name or "trace",
        )
    except TraceImportError as error:
        raise field_error("trace", str(error)) from error
    answer: dict[str, Any] = {
        "app_source": imported.app_source,
        "snapshot": imported.snapshot,
        "labels": imported.labels,
        "report": imported.report,
    }
    if name:
        application = application_model_create(
            owner=user,
            name=name,
            source=imported.app_source,
            description=f"Imported from {upload.name or 'a trace'}",
        )
        answer["application"] = application.pk
    return answer
