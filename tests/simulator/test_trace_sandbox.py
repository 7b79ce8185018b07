"""An uploaded trace is read and mapped in the sandbox's child (simulator.trace_sandbox), never
in the process that asks: hostile traces (deep nesting, gigantic numbers, an SQLite export of
a few megabytes that expands into hundreds of thousands of operations, a JSON whose reading
takes long) are refused within the limits, naming the field; a good one comes back as the
command line would write it."""

from __future__ import annotations

import gzip
import io
import json
import os
import sqlite3
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest

import simulator.trace_import
import simulator.trace_sandbox
from simulator.cli import main
from simulator.gpu_catalogue import GpuCatalogue, seed_catalogue
from simulator.sandbox import child_entry
from simulator.sandbox.parent import Limits, run_sandboxed
from simulator.trace_import import read_kineto
from simulator.trace_model import gpu_record, import_trace
from simulator.trace_sandbox import (
    MSG_LIMIT,
    TRACE_LIMITS,
    TraceSandboxError,
    import_trace_file,
    import_trace_in_sandbox,
)
from tests.simulator.test_trace_import import kineto_trace

THIS = "tests.simulator.test_trace_sandbox"
ENTRY_PID = f"{THIS}:import_reporting_pid"
# Tight limits: the hostile traces must be refused within them.
TIGHT = TRACE_LIMITS.replace(wall_s=6.0, cpu_s=6)
# A refusal arrives within the wall limit and the child's start and end.
MARGIN_S = 10.0


@child_entry(needs_v8=lambda payload: False)
def import_reporting_pid(**payload: Any) -> dict[str, Any]:
    """The product's entry, with the pid of the process that ran it."""
    return {**import_trace_file(**payload), "pid": os.getpid()}


def run_reporting_pid(payload: Mapping[str, Any], *, limits: Limits, _entry: str) -> dict[str, Any]:
    return run_sandboxed(payload, limits=limits, _entry=ENTRY_PID)


@pytest.fixture
def no_parsing_here(monkeypatch: pytest.MonkeyPatch) -> None:
    """Make any reading of a trace in this process fail the test."""

    def refuse(*args: object, **kwargs: object) -> None:
        raise AssertionError("a trace was read in the calling process")

    for name in ("read_trace", "read_kineto", "read_nsys_sqlite"):
        monkeypatch.setattr(simulator.trace_import, name, refuse)
    monkeypatch.setattr(simulator.trace_sandbox, "read_trace", refuse)


def refused(data: bytes, name: str = "trace.json", limits: Limits = TIGHT) -> TraceSandboxError:
    started = time.monotonic()
    with pytest.raises(TraceSandboxError) as caught:
        import_trace_in_sandbox(data=data, filename=name, catalogue=seed_catalogue(), limits=limits)
    assert time.monotonic() - started < limits.wall_s + MARGIN_S
    return caught.value


def test_a_trace_is_imported_in_another_process_as_the_command_line_would(
    no_parsing_here: None,
) -> None:
    body = json.dumps(kineto_trace()).encode()
    answer = import_trace_in_sandbox(
        data=body,
        filename="step.json",
        catalogue=seed_catalogue(),
        target_gpu="H100 SXM5 80GB",
        ranks=2,
        run=run_reporting_pid,
    )
    assert answer.pop("pid") != os.getpid()
    assert answer["labels"] == {"S7": 2, "H7": 2, "S20": 2, "H20": 2}
    assert answer["report"]["measured_record"] == "A100 SXM4 40GB"
    assert set(answer) == {"app_source", "snapshot", "labels", "report"}


def test_the_child_s_answer_equals_the_import_in_this_process() -> None:
    body = json.dumps(kineto_trace()).encode()
    answer = import_trace_in_sandbox(
        data=body, filename="step.json", catalogue=seed_catalogue(), target_gpu="H100 SXM5 80GB"
    )
    here = import_trace(
        read_kineto(kineto_trace()),
        measured=gpu_record("A100 SXM4 40GB"),
        target=gpu_record("H100 SXM5 80GB"),
        source_name="step.json",
    )
    assert answer["app_source"] == here.app_source
    assert answer["labels"] == here.labels
    assert answer["report"]["rules"] == here.report["rules"]


def test_gpu_names_are_looked_up_in_the_catalogue_sent_and_nowhere_else(tmp_path: Path) -> None:
    body = json.dumps(kineto_trace()).encode()
    only_h100 = GpuCatalogue([seed_catalogue().get("H100 SXM5 80GB")], where="your records")
    with pytest.raises(TraceSandboxError) as caught:
        import_trace_in_sandbox(
            data=body, filename="t.json", catalogue=only_h100, target_gpu="A100 SXM4 40GB"
        )
    assert caught.value.field == "target_gpu"
    assert "no GPU record 'A100 SXM4 40GB' in your records" in caught.value.message
    # a path is a name like any other: no file is read for it
    record = tmp_path / "gpu.json"
    record.write_text(json.dumps({"name": "Mine", "attributes": {"SMs": 1}}))
    with pytest.raises(TraceSandboxError) as caught:
        import_trace_in_sandbox(
            data=body, filename="t.json", catalogue=only_h100, target_gpu=str(record)
        )
    assert caught.value.field == "target_gpu"


def test_deep_nesting_is_refused_naming_the_trace(no_parsing_here: None) -> None:
    error = refused(b"[" * 1_000_000 + b"]" * 1_000_000)
    assert error.field == "trace"
    assert "trace.json" in error.message


def test_gigantic_numbers_are_refused_naming_the_field(no_parsing_here: None) -> None:
    trace = kineto_trace()
    digits = json.dumps(trace).replace('"ts": 700', '"ts": 7' + "0" * 100_000, 1)
    error = refused(digits.encode())
    assert error.field == "trace" and "trace.json" in error.message
    trace["traceEvents"][5]["dur"] = 1e300
    text = json.dumps(trace).replace("1e+300", "1e999")  # inf once read
    error = refused(text.encode())
    assert "traceEvents[5].dur must be a number >= 0, got inf" in error.message
    trace = kineto_trace()
    trace["traceEvents"][5]["args"]["grid"] = [2**70, 1, 1]
    error = refused(json.dumps(trace).encode())
    assert "traceEvents[5].args.grid must be a list of up to 3 whole numbers" in error.message


def sqlite_bomb(path: Path, rows: int) -> bytes:
    """An Nsight Systems export of `rows` kernels, some 30 bytes each on disk, each an
    object of the reader's and a line of the model's once read."""
    db = sqlite3.connect(path)
    db.executescript(
        "CREATE TABLE StringIds (id INTEGER PRIMARY KEY, value TEXT);"
        "INSERT INTO StringIds VALUES (1, 'k');"
        "CREATE TABLE CUPTI_ACTIVITY_KIND_KERNEL (start INT, end INT, deviceId INT, "
        "streamId INT, gridX INT, gridY INT, gridZ INT, blockX INT, blockY INT, blockZ INT, "
        "shortName INT, correlationId INT);"
    )
    db.execute(
        "INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL WITH RECURSIVE c(x) AS (SELECT 0 UNION ALL "
        f"SELECT x + 1 FROM c LIMIT {rows}) SELECT x * 1000, x * 1000 + 500, 0, x % 64, "
        "1, 1, 1, 1, 1, 1, 1, x FROM c"
    )
    db.commit()
    db.close()
    return path.read_bytes()


def test_an_sqlite_export_that_expands_is_refused_within_the_limits(
    tmp_path: Path, no_parsing_here: None
) -> None:
    data = sqlite_bomb(tmp_path / "bomb.sqlite", 400_000)
    assert len(data) < 16 * 1024**2
    error = refused(data, "bomb.sqlite", TIGHT.replace(data_bytes=256 * 1024**2))
    assert error.field == "trace"
    assert error.message.startswith(MSG_LIMIT.split("{")[0])


def test_a_json_that_takes_long_to_map_is_refused_at_the_wall_limit(
    no_parsing_here: None,
) -> None:
    # every kernel inside its own annotation range on one stream: finding each kernel's
    # innermost range looks through every range
    count = 20_000
    events = []
    for i in range(count):
        events.append({"ph": "X", "cat": "gpu_user_annotation", "name": f"r{i}", "ts": 10 * i,
                       "dur": 5, "args": {"stream": 7}})  # fmt: skip
        events.append({"ph": "X", "cat": "kernel", "name": "k", "ts": 10 * i + 1, "dur": 1,
                       "args": {"stream": 7}})  # fmt: skip
    error = refused(gzip.compress(json.dumps({"traceEvents": events}).encode()), "slow.json.gz")
    assert error.message.startswith(MSG_LIMIT.split("{")[0])
    assert "wall" in error.message or "CPU" in error.message, error.message


def test_a_trace_past_the_size_limit_is_not_sent() -> None:
    with pytest.raises(TraceSandboxError, match="larger than"):
        import_trace_in_sandbox(
            data=b" " * (64 * 1024**2 + 1), filename="t.json", catalogue=seed_catalogue()
        )


def test_the_command_line_reads_the_trace_in_the_sandbox_too(
    tmp_path: Path, no_parsing_here: None
) -> None:
    """`python -m simulator import-trace` goes through import_trace_in_sandbox like the web:
    nothing of the trace is parsed here, and a hostile one is refused with its name."""
    hostile = tmp_path / "deep.json"
    hostile.write_bytes(b"[" * 1_000_000 + b"]" * 1_000_000)
    app = tmp_path / "app.py"
    out, err = io.StringIO(), io.StringIO()
    status = main(["import-trace", str(hostile), "-o", str(app)], stdout=out, stderr=err)
    assert status == 2
    message = err.getvalue()
    assert "deep.json: its JSON nests deeper than it can be read" in message, message
    assert not app.exists()
    # a good trace, the target GPU a record file of the user's: read here, looked up there
    good = tmp_path / "step.json"
    good.write_text(json.dumps(kineto_trace()))
    mine = tmp_path / "mine.json"
    h100 = seed_catalogue().get("H100 SXM5 80GB")
    mine.write_text(json.dumps({"name": "My H100", "attributes": dict(h100.attributes)}))
    report = tmp_path / "report.json"
    argv = ["import-trace", str(good), "-o", str(app), "--report", str(report),
            "--target-gpu", str(mine)]  # fmt: skip
    assert main(argv, stdout=out, stderr=err) == 0, err.getvalue()
    assert json.loads(report.read_text())["target_record"] == "My H100"
    assert "sim." in app.read_text()
    # a name the catalogue lacks is refused naming the option
    argv = ["import-trace", str(good), "-o", str(tmp_path / "other.py"), "--measured-gpu", "Z9"]
    assert main(argv, stdout=out, stderr=err) == 2
    assert "--measured-gpu: no GPU record 'Z9'" in err.getvalue()
