"""Importing a profiler trace over REST (issue 43 item 7): the uploaded Kineto JSON or Nsight
Systems SQLite export becomes an application model, a replay snapshot and a report
(simulator.trace_model, the same as `python -m simulator import-trace`), optionally saved as
one of the user's application models.

The upload is anyone's file: it is read and mapped in a sandbox child on the interactive
worker (simulator.trace_sandbox through webapp.interactive), never in the web process, as
one of the user's interactive jobs. The GPUs it names are looked up among the hardware
records the user may see (hwdb.selectors.gpu_catalogue), which travel with the job.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from hwdb.selectors import gpu_catalogue
from simulator.trace_sandbox import (
    MAX_JSON_BYTES,
    MAX_TRACE_BYTES,
    TRACE_LIMITS,
    TraceSandboxError,
    import_trace_in_sandbox,
)
from webapp.interactive import sandbox_runner
from webapp.studio.services.applications import application_model_create
from webapp.studio.services.common import field_error

if TYPE_CHECKING:
    from django.contrib.auth.models import User
    from django.core.files.uploadedfile import UploadedFile

__all__ = ["MAX_JSON_BYTES", "MAX_RANKS", "MAX_TRACE_BYTES", "MESSAGES", "trace_import"]

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
    system: str = "",
) -> dict[str, Any]:
    """Return the imported trace's `app_source`, `snapshot`, `labels` and `report`, and the
    saved application model's id as `application` when `name` is given. Bad input raises a
    ValidationError naming its field; nothing is saved then."""
    if upload is None:
        raise field_error("trace", "This field is required.")
    if upload.size is not None and upload.size > MAX_TRACE_BYTES:
        raise field_error("trace", MESSAGES["too_large"])
    if isinstance(ranks, str) and ranks.strip().isdigit():
        ranks = int(ranks)
    if not isinstance(ranks, int) or isinstance(ranks, bool) or not 1 <= ranks <= MAX_RANKS:
        raise field_error("ranks", MESSAGES["ranks"])
    data = b"".join(upload.chunks())
    if len(data) > MAX_TRACE_BYTES:
        raise field_error("trace", MESSAGES["too_large"])
    try:
        imported = import_trace_in_sandbox(
            data=data,
            filename=upload.name or "trace",
            catalogue=gpu_catalogue(user=user),
            measured_gpu=measured_gpu,
            target_gpu=target_gpu,
            ranks=ranks,
            system=system.strip() or None,
            max_json_bytes=MAX_JSON_BYTES,
            limits=TRACE_LIMITS,
            run=sandbox_runner(user_id=user.pk),
        )
    except TraceSandboxError as error:
        raise field_error(error.field, error.message) from error
    answer: dict[str, Any] = {
        key: imported[key] for key in ("app_source", "snapshot", "labels", "report")
    }
    if name:
        application = application_model_create(
            owner=user,
            name=name,
            source=imported["app_source"],
            description=f"Imported from {upload.name or 'a trace'}",
        )
        answer["application"] = application.pk
    return answer
