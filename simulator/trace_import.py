"""Profiler traces read into one neutral form (issue 43 item 7; docs/traces.md).

Two sources:

- a PyTorch profiler (Kineto) trace: Chrome trace-event JSON (optionally gzip-compressed)
  whose `traceEvents` hold the GPU's work as complete events of category `kernel`,
  `gpu_memcpy` and `gpu_memset` (`ts` and `dur` in microseconds, `args` with `stream`,
  `device`, `grid`, `block`, `bytes` and, for NCCL kernels, `Collective name`, `In msg nelems`,
  `dtype` and `Group size`), the CPU operators that launched them (`cpu_op`, linked by
  `External id`, with `Input Dims` and `Input type` when shapes were recorded),
  `gpu_user_annotation` ranges on the GPU's streams, and at the top `deviceProperties` and
  `distributedInfo` (https://pytorch.org/docs/stable/profiler.html; the events follow the
  Trace Event Format);
- an Nsight Systems SQLite export (`nsys export --type sqlite`): the tables
  CUPTI_ACTIVITY_KIND_KERNEL (start, end [ns], deviceId, streamId, gridX..Z, blockX..Z,
  demangledName and shortName as ids into StringIds), CUPTI_ACTIVITY_KIND_MEMCPY (bytes,
  copyKind: CUpti_ActivityMemcpyKind, 1 HtoD, 2 DtoH, 8 DtoD, 10 PtoP),
  CUPTI_ACTIVITY_KIND_MEMSET, NVTX_EVENTS (ranges with `text` or `textId`) and, when present,
  TARGET_INFO_GPU for the GPU's name (the "SQLite Export Schema Reference" of the Nsight
  Systems documentation, https://docs.nvidia.com/nsight-systems/).

Both become a `TraceProfile`: the GPU operations (kernels, copies, memsets, collectives) with
device, stream, start and duration in microseconds, launch shape, bytes and, for a kernel whose
launching operator recorded shapes, the operator's name, input dims and types. Bad input is a
`TraceError` naming the file and the field or table at fault.
"""

from __future__ import annotations

import bisect
import gzip
import json
import re
import sqlite3
import zlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

OpKind = Literal["kernel", "memcpy", "memset", "collective"]

# The longest value (a kernel's name, a string) read from an Nsight Systems export.
MAX_SQLITE_VALUE_BYTES = 1 << 20

# Bytes per element of the NCCL/PyTorch dtypes Kineto names in a collective's `dtype`.
DTYPE_BYTES = {
    "float": 4,
    "float32": 4,
    "double": 8,
    "float64": 8,
    "half": 2,
    "float16": 2,
    "bfloat16": 2,
    "int": 4,
    "int32": 4,
    "int64": 8,
    "long": 8,
    "int8": 1,
    "uint8": 1,
    "byte": 1,
    "char": 1,
    "bool": 1,
    "float8_e4m3fn": 1,
    "float8_e5m2": 1,
}

# CUpti_ActivityMemcpyKind (CUPTI's activity API): the directions a copy record names.
MEMCPY_KINDS = {
    1: "HtoD",
    2: "DtoH",
    3: "HtoA",
    4: "AtoH",
    5: "AtoA",
    6: "AtoD",
    7: "DtoA",
    8: "DtoD",
    9: "HtoH",
    10: "PtoP",
}

# NCCL's kernels: ncclKernel_AllReduce_RING_LL_Sum_float, ncclDevKernel_AllGather_RING_LL, ...
NCCL_KERNEL = re.compile(r"^(?:void\s+)?nccl(?:Dev)?Kernel_([A-Za-z]+)", re.IGNORECASE)
MEMCPY_NAME = re.compile(r"Memcpy\s+(HtoD|DtoH|DtoD|PtoP|HtoH)", re.IGNORECASE)


class TraceError(ValueError):
    """A trace that cannot be read: the message names the file and the field at fault."""


@dataclass(frozen=True)
class GpuOp:
    """One operation the GPU ran, as the profiler recorded it."""

    kind: OpKind
    name: str
    device: int
    stream: int
    start_us: float
    dur_us: float
    grid: tuple[int, int, int] | None = None
    block: tuple[int, int, int] | None = None
    bytes: float | None = None  # a copy's or memset's bytes, a collective's message bytes
    direction: str | None = None  # a copy's: HtoD, DtoH, DtoD, PtoP
    collective: str | None = None  # allreduce, allgather, broadcast, sendrecv, ...
    group_size: int | None = None
    op_name: str | None = None  # the CPU operator that launched it (aten::mm, ...)
    input_dims: tuple[tuple[int, ...], ...] | None = None
    input_types: tuple[str, ...] | None = None
    region: str | None = None  # the innermost annotation range (NVTX, record_function)


@dataclass
class TraceProfile:
    """A trace's GPU work and what it says about where it ran."""

    source: Literal["kineto", "nsys"]
    gpu_name: str | None
    sms: int | None
    rank: int
    world_size: int
    ops: list[GpuOp] = field(default_factory=list)
    annotations: int = 0  # annotation ranges read (NVTX or gpu_user_annotation)

    @property
    def span_us(self) -> float:
        """Return the time from the first operation's start to the last one's end."""
        if not self.ops:
            return 0.0
        return max(op.start_us + op.dur_us for op in self.ops) - min(op.start_us for op in self.ops)

    def streams(self) -> list[tuple[int, int]]:
        """Return the (device, stream) pairs in the order of their first operation."""
        seen: dict[tuple[int, int], None] = {}
        for op in sorted(self.ops, key=lambda op: op.start_us):
            seen.setdefault((op.device, op.stream), None)
        return list(seen)


def read_trace(path: str | Path, *, max_json_bytes: int | None = None) -> TraceProfile:
    """Return the profile of the trace at `path`: an Nsight Systems SQLite export (by its
    SQLite header) or a Kineto JSON trace (gzip-compressed or not). With `max_json_bytes`, a
    JSON trace larger than that, once decompressed, is refused before it is read whole (a
    small gzip file can hold gigabytes)."""
    path = Path(path)
    try:
        head = path.open("rb").read(16)
    except OSError as error:
        raise TraceError(f"cannot read {path}: {error.strerror or error}") from error
    if head.startswith(b"SQLite format 3"):
        return read_nsys_sqlite(path)
    try:
        if head.startswith(b"\x1f\x8b"):
            with gzip.open(path, "rb") as file:
                raw = file.read() if max_json_bytes is None else file.read(max_json_bytes + 1)
        else:
            raw = path.read_bytes()
        if max_json_bytes is not None and len(raw) > max_json_bytes:
            raise TraceError(f"{path} holds more than {max_json_bytes} bytes of JSON")
        data = json.loads(raw)
    except (OSError, EOFError, zlib.error) as error:
        raise TraceError(f"cannot read {path}: {error}") from error
    except (UnicodeDecodeError, json.JSONDecodeError) as error:
        raise TraceError(
            f"{path} is neither an Nsight Systems SQLite export nor JSON: {error}"
        ) from error
    return read_kineto(data, name=str(path))


def _int(value: object, default: int = 0) -> int:
    try:
        return int(value)  # type: ignore[call-overload]
    except (TypeError, ValueError):
        return default


def _dim3(value: object, where: str) -> tuple[int, int, int] | None:
    if value is None:
        return None
    if (
        not isinstance(value, Sequence)
        or isinstance(value, str)
        or not 1 <= len(value) <= 3
        or not all(isinstance(v, int) and v >= 0 for v in value)
    ):
        raise TraceError(f"{where} must be a list of up to 3 whole numbers, got {value!r}")
    padded = [*value, 1, 1][:3]
    return (padded[0], padded[1], padded[2])


def _dims(value: object) -> tuple[tuple[int, ...], ...] | None:
    if not isinstance(value, list):
        return None
    dims: list[tuple[int, ...]] = []
    for item in value:
        if isinstance(item, list) and all(isinstance(v, int) for v in item):
            dims.append(tuple(item))
        else:
            dims.append(())
    return tuple(dims)


def collective_of(name: str) -> str | None:
    """Return the collective an NCCL kernel's name names (lower case), else None."""
    match = NCCL_KERNEL.match(name)
    return match.group(1).lower() if match else None


def read_kineto(data: object, *, name: str = "trace") -> TraceProfile:
    """Return the profile of a Kineto trace (the decoded JSON object)."""
    if not isinstance(data, Mapping):
        raise TraceError(f"{name}: a Kineto trace is a JSON object with 'traceEvents'")
    events = data.get("traceEvents")
    if not isinstance(events, list):
        raise TraceError(f"{name}: 'traceEvents' must be a list of events")
    devices = data.get("deviceProperties")
    gpu_name: str | None = None
    sms: int | None = None
    if isinstance(devices, list) and devices and isinstance(devices[0], Mapping):
        gpu_name = str(devices[0].get("name")) if devices[0].get("name") else None
        sms = _int(devices[0].get("numSms"), 0) or None
    info = data.get("distributedInfo")
    info = info if isinstance(info, Mapping) else {}
    profile = TraceProfile(
        source="kineto",
        gpu_name=gpu_name,
        sms=sms,
        rank=_int(info.get("rank"), 0),
        world_size=max(1, _int(info.get("world_size"), 1)),
    )

    # A kernel's launching operator: the CPU operator with the kernel's External id, or (in
    # traces whose kernels carry the launch's correlation there instead) the innermost
    # operator with recorded shapes around the runtime call that launched it.
    launched_by: dict[int, tuple[str, Any, Any]] = {}
    shaped_ops: dict[tuple[object, object], list[tuple[float, float, tuple[str, Any, Any]]]] = {}
    launches: dict[int, tuple[object, object, float]] = {}
    annotations: dict[int, list[tuple[float, float, str]]] = {}
    gpu_events: list[tuple[int, Mapping[str, Any]]] = []
    for index, event in enumerate(events):
        if not isinstance(event, Mapping) or event.get("ph") != "X":
            continue
        category = event.get("cat")
        args = event.get("args") if isinstance(event.get("args"), Mapping) else {}
        assert isinstance(args, Mapping)
        if category == "cpu_op" and "Input Dims" in args:
            start, dur = _times(event, index, name)
            shaped = (str(event.get("name")), args.get("Input Dims"), args.get("Input type"))
            if "External id" in args:
                launched_by[_int(args["External id"], -1)] = shaped
            thread = (event.get("pid"), event.get("tid"))
            shaped_ops.setdefault(thread, []).append((start, start + dur, shaped))
        elif category == "cuda_runtime" and "correlation" in args:
            start, _ = _times(event, index, name)
            launches[_int(args["correlation"], -1)] = (event.get("pid"), event.get("tid"), start)
        elif category == "gpu_user_annotation":
            stream = _int(args.get("stream", event.get("tid")), -1)
            start, dur = _times(event, index, name)
            annotations.setdefault(stream, []).append((start, start + dur, str(event.get("name"))))
        elif category in ("kernel", "gpu_memcpy", "gpu_memset"):
            gpu_events.append((index, event))
    profile.annotations = sum(len(ranges) for ranges in annotations.values())
    for thread_ops in shaped_ops.values():
        thread_ops.sort(key=lambda item: item[0])

    for index, event in gpu_events:
        where = f"{name}: traceEvents[{index}]"
        args = event.get("args") if isinstance(event.get("args"), Mapping) else {}
        assert isinstance(args, Mapping)
        start, dur = _times(event, index, name)
        stream = _int(args.get("stream", event.get("tid")), 0)
        device = _int(args.get("device", event.get("pid")), 0)
        event_name = str(event.get("name", ""))
        region = _innermost(annotations.get(stream, ()), start, start + dur)
        category = event["cat"]
        if category == "kernel":
            launcher = launched_by.get(_int(args.get("External id"), -1))
            if launcher is None:
                launcher = _enclosing(shaped_ops, launches.get(_int(args.get("correlation"), -1)))
            op_name, dims, types = launcher or (None, None, None)
            collective = args.get("Collective name") or collective_of(event_name)
            message: float | None = None
            if collective:
                nelems = args.get("In msg nelems")
                dtype = str(args.get("dtype", "")).lower()
                if isinstance(nelems, (int, float)) and dtype in DTYPE_BYTES:
                    message = float(nelems) * DTYPE_BYTES[dtype]
            profile.ops.append(
                GpuOp(
                    kind="collective" if collective else "kernel",
                    name=event_name,
                    device=device,
                    stream=stream,
                    start_us=start,
                    dur_us=dur,
                    grid=_dim3(args.get("grid"), f"{where}.args.grid"),
                    block=_dim3(args.get("block"), f"{where}.args.block"),
                    bytes=message,
                    collective=str(collective).lower() if collective else None,
                    group_size=_int(args.get("Group size"), 0) or None,
                    op_name=op_name,
                    input_dims=_dims(dims),
                    input_types=tuple(str(t) for t in types) if isinstance(types, list) else None,
                    region=region,
                )
            )
        else:
            size = args.get("bytes")
            match = MEMCPY_NAME.search(event_name)
            profile.ops.append(
                GpuOp(
                    kind="memcpy" if category == "gpu_memcpy" else "memset",
                    name=event_name,
                    device=device,
                    stream=stream,
                    start_us=start,
                    dur_us=dur,
                    bytes=float(size) if isinstance(size, (int, float)) else None,
                    direction=match.group(1).upper().replace("TO", "to") if match else None,
                    region=region,
                )
            )
    profile.ops.sort(key=lambda op: (op.start_us, op.stream))
    return profile


# How many operators before a launch to look through for one that encloses it: operators
# nest, so the innermost enclosing one is the nearest that has not ended; siblings that ended
# before the launch are skipped, up to this many.
_ENCLOSING_LOOKBACK = 256


def _enclosing(
    shaped_ops: Mapping[tuple[object, object], list[tuple[float, float, tuple[str, Any, Any]]]],
    launch: tuple[object, object, float] | None,
) -> tuple[str, Any, Any] | None:
    """Return the innermost operator with shapes around a launch (pid, tid, ts), else None."""
    if launch is None:
        return None
    pid, tid, at = launch
    ops = shaped_ops.get((pid, tid))
    if not ops:
        return None
    index = bisect.bisect_right(ops, at, key=lambda item: item[0])
    for start, end, launcher in reversed(ops[max(0, index - _ENCLOSING_LOOKBACK) : index]):
        if start <= at <= end:
            return launcher
    return None


def _times(event: Mapping[str, Any], index: int, name: str) -> tuple[float, float]:
    ts, dur = event.get("ts"), event.get("dur", 0)
    if not isinstance(ts, (int, float)) or isinstance(ts, bool):
        raise TraceError(f"{name}: traceEvents[{index}].ts must be a number, got {ts!r}")
    if not isinstance(dur, (int, float)) or isinstance(dur, bool) or dur < 0:
        raise TraceError(f"{name}: traceEvents[{index}].dur must be a number >= 0, got {dur!r}")
    return float(ts), float(dur)


def _innermost(ranges: Sequence[tuple[float, float, str]], start: float, end: float) -> str | None:
    """Return the text of the shortest range that holds [start, end], else None."""
    best: tuple[float, str] | None = None
    for low, high, text in ranges:
        if low <= start and end <= high and (best is None or high - low < best[0]):
            best = (high - low, text)
    return best[1] if best else None


# -- Nsight Systems ------------------------------------------------------------------------------
def read_nsys_sqlite(path: str | Path) -> TraceProfile:
    """Return the profile of an Nsight Systems SQLite export."""
    try:
        connection = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    except sqlite3.Error as error:
        raise TraceError(f"cannot open {path} as SQLite: {error}") from error
    try:
        # An export may come from anyone (an upload over REST): SQLite's own advice for an
        # untrusted database file. Its schema's expressions (a generated column) run without
        # the functions that are not innocuous, and no value read may grow past the limit.
        connection.setlimit(sqlite3.SQLITE_LIMIT_LENGTH, MAX_SQLITE_VALUE_BYTES)
        connection.execute("PRAGMA trusted_schema = OFF")
        connection.execute("PRAGMA cell_size_check = ON")
        return _read_nsys(connection, str(path))
    except sqlite3.Error as error:
        raise TraceError(f"{path}: not an Nsight Systems export as expected: {error}") from error
    finally:
        connection.close()


def _read_nsys(db: sqlite3.Connection, name: str) -> TraceProfile:
    tables = {row[0] for row in db.execute("SELECT name FROM sqlite_master WHERE type='table'")}
    if "CUPTI_ACTIVITY_KIND_KERNEL" not in tables:
        raise TraceError(
            f"{name}: no table CUPTI_ACTIVITY_KIND_KERNEL (was the report taken with CUDA "
            "tracing, `nsys profile -t cuda`, and exported with `nsys export --type sqlite`?)"
        )
    if "StringIds" not in tables:
        raise TraceError(f"{name}: no table StringIds, which names the kernels")
    strings = dict(db.execute("SELECT id, value FROM StringIds"))
    gpu_name: str | None = None
    sms: int | None = None
    if "TARGET_INFO_GPU" in tables:
        columns = _columns(db, "TARGET_INFO_GPU")
        if "name" in columns:
            row = db.execute("SELECT * FROM TARGET_INFO_GPU LIMIT 1").fetchone()
            if row is not None:
                record = dict(zip(columns, row, strict=True))
                gpu_name = str(record["name"])
                sms = _int(record.get("smCount"), 0) or None
    profile = TraceProfile(source="nsys", gpu_name=gpu_name, sms=sms, rank=0, world_size=1)

    # NVTX ranges (push/pop and start/end) as annotations of the kernels launched inside them:
    # a range holds a kernel when it holds the kernel's launch call on the same thread.
    ranges: dict[int, list[tuple[float, float, str]]] = {}
    if "NVTX_EVENTS" in tables:
        columns = _columns(db, "NVTX_EVENTS")
        text_id = "textId" if "textId" in columns else "NULL"
        for start, end, text, tid, global_tid in db.execute(
            f"SELECT start, end, text, {text_id}, globalTid FROM NVTX_EVENTS "
            "WHERE end IS NOT NULL AND end >= start"
        ):
            label = text if text is not None else strings.get(tid)
            if label:
                ranges.setdefault(_int(global_tid), []).append((start, end, str(label)))
    profile.annotations = sum(len(r) for r in ranges.values())
    launches: dict[int, tuple[int, float]] = {}
    if ranges and "CUPTI_ACTIVITY_KIND_RUNTIME" in tables:
        for correlation, global_tid, start in db.execute(
            "SELECT correlationId, globalTid, start FROM CUPTI_ACTIVITY_KIND_RUNTIME"
        ):
            launches[_int(correlation)] = (_int(global_tid), float(start))

    def region(correlation: object) -> str | None:
        launch = launches.get(_int(correlation, -1))
        if launch is None:
            return None
        tid, at = launch
        return _innermost(ranges.get(tid, ()), at, at)

    columns = _columns(db, "CUPTI_ACTIVITY_KIND_KERNEL")
    name_column = "demangledName" if "demangledName" in columns else "shortName"
    for row in db.execute(
        f"SELECT start, end, deviceId, streamId, gridX, gridY, gridZ, blockX, blockY, blockZ, "
        f"{name_column}, correlationId FROM CUPTI_ACTIVITY_KIND_KERNEL ORDER BY start"
    ):
        start, end, device, stream, gx, gy, gz, bx, by, bz, name_id, correlation = row
        kernel_name = strings.get(name_id)
        if kernel_name is None:
            raise TraceError(
                f"{name}: CUPTI_ACTIVITY_KIND_KERNEL row at start {start}: {name_column} "
                f"{name_id} is not in StringIds"
            )
        if end < start:
            raise TraceError(f"{name}: CUPTI_ACTIVITY_KIND_KERNEL row at start {start} ends before")
        collective = collective_of(kernel_name)
        profile.ops.append(
            GpuOp(
                kind="collective" if collective else "kernel",
                name=kernel_name,
                device=_int(device),
                stream=_int(stream),
                start_us=start / 1e3,
                dur_us=(end - start) / 1e3,
                grid=(_int(gx, 1), _int(gy, 1), _int(gz, 1)),
                block=(_int(bx, 1), _int(by, 1), _int(bz, 1)),
                collective=collective,
                region=region(correlation),
            )
        )
    for table, kind in (
        ("CUPTI_ACTIVITY_KIND_MEMCPY", "memcpy"),
        ("CUPTI_ACTIVITY_KIND_MEMSET", "memset"),
    ):
        if table not in tables:
            continue
        copy_kind = "copyKind" if kind == "memcpy" else "NULL"
        for start, end, device, stream, size, direction, correlation in db.execute(
            f"SELECT start, end, deviceId, streamId, bytes, {copy_kind}, correlationId "
            f"FROM {table} ORDER BY start"
        ):
            way = MEMCPY_KINDS.get(_int(direction, 0)) if kind == "memcpy" else None
            profile.ops.append(
                GpuOp(
                    kind=kind,  # type: ignore[arg-type]
                    name=f"Memcpy {way}" if kind == "memcpy" else "Memset",
                    device=_int(device),
                    stream=_int(stream),
                    start_us=start / 1e3,
                    dur_us=max(0, end - start) / 1e3,
                    bytes=float(size),
                    direction=way,
                    region=region(correlation),
                )
            )
    profile.ops.sort(key=lambda op: (op.start_us, op.stream))
    return profile


def _columns(db: sqlite3.Connection, table: str) -> list[str]:
    return [row[1] for row in db.execute(f"PRAGMA table_info({table})")]
