"""A run's Chrome trace (simulator.trace_export, issue 43 item 6), checked against the Trace
Event Format and against what Perfetto's JSON importer requires.

The schema below is written from the format's specification, "Trace Event Format" (Duncan,
Google; https://docs.google.com/document/d/1CvAClvFfyA5R-PhYUmn5OOQtYMH4h6I0nSsKchNAySU/):
the JSON Object Format holds `traceEvents`, an array of events, and optionally
`displayTimeUnit` ("ms" or "ns") and `otherData`; every event has `name`, `ph`, `ts`
(microseconds), `pid` and `tid`; a Complete Event (ph "X") adds `dur` in microseconds; a
Counter Event (ph "C") carries its series as numeric `args`; a Metadata Event (ph "M") is one
of process_name, process_sort_index, thread_name, thread_sort_index with its value in `args`
(`name` or `sort_index`). Perfetto's importer (perfetto.dev/docs/getting-started/other-formats,
"JSON trace format" and its json_trace_parser) reads `pid`/`tid` as integers and drops
complete events with a negative duration; both are required here too.
"""

from __future__ import annotations

import io
import json
import math
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from simulator.cli import main
from simulator.runner import run_simulation
from simulator.trace_export import chrome_trace

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "examples" / "merpsys_gtx970"

NUMBER = {"type": "number"}
INTEGER = {"type": "integer"}
EVENT_BASE = {
    "type": "object",
    "required": ["name", "ph", "ts", "pid", "tid"],
    "properties": {"name": {"type": "string"}, "ts": NUMBER, "pid": INTEGER, "tid": INTEGER},
}
TRACE_EVENT_SCHEMA: dict[str, Any] = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "type": "object",
    "required": ["traceEvents"],
    "properties": {
        "displayTimeUnit": {"enum": ["ms", "ns"]},
        "otherData": {"type": "object"},
        "traceEvents": {
            "type": "array",
            "items": {
                "allOf": [EVENT_BASE],
                "oneOf": [
                    {
                        "properties": {
                            "ph": {"const": "X"},
                            "dur": {"type": "number", "minimum": 0},
                            "cat": {"type": "string"},
                            "args": {"type": "object"},
                        },
                        "required": ["dur"],
                    },
                    {
                        "properties": {
                            "ph": {"const": "C"},
                            "args": {
                                "type": "object",
                                "minProperties": 1,
                                "additionalProperties": NUMBER,
                            },
                        },
                        "required": ["args"],
                    },
                    {
                        "properties": {
                            "ph": {"const": "M"},
                            "name": {
                                "enum": [
                                    "process_name",
                                    "process_sort_index",
                                    "thread_name",
                                    "thread_sort_index",
                                ]
                            },
                            "args": {
                                "type": "object",
                                "oneOf": [
                                    {
                                        "required": ["name"],
                                        "properties": {"name": {"type": "string"}},
                                    },
                                    {
                                        "required": ["sort_index"],
                                        "properties": {"sort_index": INTEGER},
                                    },
                                ],
                            },
                        },
                        "required": ["args"],
                    },
                ],
            },
        },
    },
}


def check_trace(trace: dict[str, Any]) -> None:
    """Fail unless `trace` is a valid Chrome trace that Perfetto imports with every event."""
    jsonschema.validate(trace, TRACE_EVENT_SCHEMA)
    json.loads(json.dumps(trace, allow_nan=False))  # plain JSON: no NaN or infinity
    named_processes = {e["pid"] for e in trace["traceEvents"] if e["name"] == "process_name"}
    named_threads = {
        (e["pid"], e["tid"]) for e in trace["traceEvents"] if e["name"] == "thread_name"
    }
    for event in trace["traceEvents"]:
        assert event["pid"] in named_processes, event
        assert math.isfinite(event["ts"]) and event["ts"] >= 0, event
        if event["ph"] == "X" and event["tid"] != 0:
            assert (event["pid"], event["tid"]) in named_threads, event


def saxpy_result() -> dict[str, Any]:
    snapshot = json.loads((EXAMPLE / "snapshot.json").read_text())
    return dict(
        run_simulation(
            snapshot,
            (EXAMPLE / "app.py").read_text(),
            labels={"CPU": 1, "GPU": 1},
            variables={"N": 1_000_000, "blockSz": 256, "computeIntensity": 1, "occupancy": 64},
        )
    )


def test_a_run_s_trace_holds_its_tracks_kernels_transfers_and_counters() -> None:
    result = saxpy_result()
    trace = chrome_trace(result)
    check_trace(trace)
    events = trace["traceEvents"]
    names = {e["args"]["name"] for e in events if e["name"] == "thread_name"}
    assert names == {"CPU[0]", "GPU[0]"}
    complete = [e for e in events if e["ph"] == "X" and e["cat"] != "resource"]
    assert len(complete) == len(result["timeline"])
    kernel = next(e for e in complete if e["cat"] == "kernel")
    entry = next(e for e in result["timeline"] if e["kind"] == "compute")
    assert kernel["ts"] == pytest.approx(entry["start_s"] * 1e6)
    assert kernel["dur"] == pytest.approx((entry["end_s"] - entry["start_s"]) * 1e6)
    assert kernel["args"]["kernel"]["gridSize"] == entry["kernel"]["gridSize"]
    transfers = [e for e in complete if e["cat"] == "transfer" and e["args"]["size"] > 0]
    assert [t["args"]["direction"] for t in transfers] == [
        "HostToDevice",
        "HostToDevice",
        "DeviceToHost",
    ]
    # The link's busy counter: 1 while the resource timeline holds it busy, 0 after.
    busy = [e for e in events if e["ph"] == "C" and e["name"] == "busy"]
    assert busy and busy[-1]["args"]["busy"] == 0
    last_end = max(b["end_s"] for b in result["resource_timeline"]) * 1e6
    assert max(e["ts"] for e in busy) == pytest.approx(last_end)
    power = [e for e in events if e["ph"] == "C" and e["name"] == "power"]
    assert max(e["args"]["W"] for e in power) == 168.0  # the GTX 970's powerConsumptionLoad


def test_back_to_back_busy_intervals_read_as_one_stretch_and_zero_durations_stay() -> None:
    result = {
        "processes": [
            {"process": "GPU[0]", "node": "gpu0", "instance": 0},
            {"process": "GPU[1]", "node": "gpu0", "instance": 0},
        ],
        "components": [{"node": "gpu0", "name": "GPU", "hardware": "H100", "instance": 0}],
        "timeline": [
            {"process": "GPU[0]", "kind": "compute", "start_s": 0.0, "end_s": 1e-6},
            {"process": "GPU[1]", "kind": "barrier", "start_s": 1e-6, "end_s": 1e-6},
        ],
        "resource_timeline": [
            {"node": "gpu0", "instance": 0, "start_s": 1e-6, "end_s": 2e-6},
            {"node": "gpu0", "instance": 0, "start_s": 0.0, "end_s": 1e-6},
        ],
    }
    trace = chrome_trace(result)
    check_trace(trace)
    counters = [(e["ts"], e["args"]["busy"]) for e in trace["traceEvents"] if e["ph"] == "C"]
    assert counters == [(0.0, 1), (2.0, 0)]
    barrier = next(e for e in trace["traceEvents"] if e.get("cat") == "collective")
    assert barrier["dur"] == 0
    # both simulated processes share their GPU's track, one thread each
    threads = [e for e in trace["traceEvents"] if e["name"] == "thread_name"]
    assert {e["pid"] for e in threads} == {1} and len({e["tid"] for e in threads}) == 2


def test_the_validator_refuses_what_perfetto_would_drop() -> None:
    trace = chrome_trace(saxpy_result())
    broken = json.loads(json.dumps(trace))
    complete = next(e for e in broken["traceEvents"] if e["ph"] == "X")
    complete["dur"] = -1.0
    with pytest.raises(jsonschema.ValidationError):
        check_trace(broken)
    broken = json.loads(json.dumps(trace))
    broken["traceEvents"][0]["pid"] = "1"
    with pytest.raises(jsonschema.ValidationError):
        check_trace(broken)


def test_run_writes_the_trace_with_trace_file(tmp_path: Path) -> None:
    target = tmp_path / "run.trace.json"
    out, err = io.StringIO(), io.StringIO()
    status = main(
        [
            "run",
            "--system",
            str(EXAMPLE / "snapshot.json"),
            "--app",
            str(EXAMPLE / "app.py"),
            "--labels",
            "CPU=1,GPU=1",
            "--var",
            "N=1000000",
            "--var",
            "blockSz=256",
            "--var",
            "occupancy=64",
            "--var",
            "computeIntensity=1",
            "--no-sandbox",
            "--trace",
            str(target),
        ],
        stdout=out,
        stderr=err,
    )
    assert status == 0, err.getvalue()
    assert "Overall time:" in out.getvalue()  # the summary is printed as without --trace
    trace = json.loads(target.read_text())
    check_trace(trace)
    assert any(e.get("cat") == "kernel" for e in trace["traceEvents"])
