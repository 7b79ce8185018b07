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
import math
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

# A launch dimension's bound: CUDA's largest grid.x is 2^31 - 1.
MAX_LAUNCH_DIM = 1 << 31

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

# NCCL's kernels, older and newer names: ncclKernel_AllReduce_RING_LL_Sum_float,
# ncclDevKernel_AllReduce_Sum_f32_RING_LL, ncclDevKernel_SendRecv, ncclKernel_Broadcast_...
NCCL_KERNEL = re.compile(r"^(?:void\s+)?nccl(?:Dev)?Kernel_([A-Za-z]+)", re.IGNORECASE)
# The parts of an NCCL kernel's name after the collective: its algorithm (src/include/
# device.h's NCCL_ALGO names), protocol (LL, LL128, SIMPLE) and element type.
NCCL_ALGORITHM = re.compile(
    r"_(RING|TREE|COLLNET_DIRECT|COLLNET_CHAIN|COLLNET|NVLS_TREE|NVLS|PAT)(?=_|\(|$)", re.I
)
NCCL_PROTOCOL = re.compile(r"_(LL128|LL|SIMPLE)(?=_|\(|$)", re.I)
NCCL_TYPE = re.compile(
    r"_(f8e4m3|f8e5m2|bf16|f16|f32|f64|i8|u8|i32|u32|i64|u64|"
    r"float|half|double|int8_t|uint8_t|int32_t|uint32_t|int64_t|uint64_t|__nv_bfloat16)"
    r"(?=_|\(|$)"
)
# Bytes per element of the types an NCCL kernel's name gives.
NAME_TYPE_BYTES = {
    "f8e4m3": 1, "f8e5m2": 1, "i8": 1, "u8": 1, "int8_t": 1, "uint8_t": 1,
    "bf16": 2, "f16": 2, "half": 2, "__nv_bfloat16": 2,
    "f32": 4, "float": 4, "i32": 4, "u32": 4, "int32_t": 4, "uint32_t": 4,
    "f64": 8, "double": 8, "i64": 8, "u64": 8, "int64_t": 8, "uint64_t": 8,
}  # fmt: skip
# The collectives a kernel's name or PyTorch's `Collective name` gives (record_param_comms:
# allreduce, _allgather_base, reduce_scatter_tensor_coalesced, all_to_all, send, ...), by the
# name's letters less the suffixes PyTorch adds, as the simulator calls them
# (simulator.collectives.KINDS, sim.broadcast, a send and receive for sendrecv).
COLLECTIVE_KINDS = {
    "allreduce": "allreduce",
    "allgather": "allgather",
    "reducescatter": "reduceScatter",
    "reduce": "reduce",
    "broadcast": "broadcast",
    "bcast": "broadcast",
    "alltoall": "alltoall",
    "alltoallv": "alltoall",
    "sendrecv": "sendrecv",
    "send": "sendrecv",
    "recv": "sendrecv",
    "gather": "gather",
    "scatter": "scatter",
    "barrier": "barrier",
}
_COLLECTIVE_AFFIXES = re.compile(r"^(?:nccl)|(?:base|coalesced|intotensor|tensor)+$")
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
    collective: str | None = None  # allreduce, allgather, reduceScatter, broadcast, sendrecv
    group_size: int | None = None
    algorithm: str | None = None  # a collective's, as its kernel's name gives it: RING, TREE
    protocol: str | None = None  # a collective's: LL, LL128, SIMPLE
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
    except RecursionError:
        raise TraceError(f"{path}: its JSON nests deeper than it can be read") from None
    except ValueError as error:  # JSONDecodeError, UnicodeDecodeError, a number's digits
        raise TraceError(
            f"{path} is neither an Nsight Systems SQLite export nor JSON: {error}"
        ) from error
    return read_kineto(data, name=str(path))


def _int(value: object, default: int = 0) -> int:
    """Return a whole number a trace gives (an id, a stream, a group's size), else `default`:
    also for one past 64 bits, which no profiler writes."""
    try:
        number = int(value)  # type: ignore[call-overload]
    except (TypeError, ValueError, OverflowError):
        return default
    return number if -(1 << 63) <= number < 1 << 63 else default


def _dim3(value: object, where: str) -> tuple[int, int, int] | None:
    if value is None:
        return None
    if (
        not isinstance(value, Sequence)
        or isinstance(value, str)
        or not 1 <= len(value) <= 3
        or not all(isinstance(v, int) and 0 <= v < MAX_LAUNCH_DIM for v in value)
    ):
        raise TraceError(
            f"{where} must be a list of up to 3 whole numbers below {MAX_LAUNCH_DIM}, "
            f"got {_short(value)}"
        )
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


def collective_kind(text: str) -> str | None:
    """Return the collective a PyTorch `Collective name` or an `nccl:` range names, as the
    simulator calls it (COLLECTIVE_KINDS), else None: `_allgather_base` and `all_gather` read
    allgather, `reduce_scatter_tensor_coalesced` reduceScatter."""
    letters = re.sub(r"[^a-z]", "", text.lower().removeprefix("nccl:"))
    return COLLECTIVE_KINDS.get(_COLLECTIVE_AFFIXES.sub("", letters))


def collective_of(name: str) -> str | None:
    """Return the collective an NCCL kernel's name names (COLLECTIVE_KINDS; the name's own
    word in lower case when it is none of them), else None."""
    match = NCCL_KERNEL.match(name)
    if match is None:
        return None
    return collective_kind(match.group(1)) or match.group(1).lower()


def nccl_name_parts(name: str) -> tuple[str | None, str | None, int | None]:
    """Return the algorithm, protocol and bytes per element an NCCL kernel's name gives
    (`ncclDevKernel_AllReduce_Sum_f32_RING_LL`: RING, LL, 4), each None where it gives none.
    The name stops at its parameters' parenthesis."""
    text = name.split("(", 1)[0]
    algorithm = NCCL_ALGORITHM.search(text)
    protocol = NCCL_PROTOCOL.search(text)
    element = NCCL_TYPE.search(text)
    return (
        algorithm.group(1).upper() if algorithm else None,
        protocol.group(1).upper() if protocol else None,
        NAME_TYPE_BYTES[element.group(1)] if element else None,
    )


def message_bytes(kind: str, args: Mapping[str, Any], element_bytes: int | None) -> float | None:
    """Return a collective's size as simulator.collectives takes it (nccl-tests' size: an
    allreduce's, reduce's or broadcast's buffer, an allgather's output, a reduce-scatter's
    input, an alltoall's send buffer, a send's message) from PyTorch's `In msg nelems`,
    `Out msg nelems`, `Group size` and `dtype` (else the kernel name's element type), or
    None when they do not give it."""
    dtype = str(args.get("dtype", "")).lower()
    size = DTYPE_BYTES.get(dtype, element_bytes)
    if size is None:
        return None

    def count(key: str) -> float | None:
        value = args.get(key)
        if not isinstance(value, (int, float)) or isinstance(value, bool):
            return None
        try:
            number = float(value)
        except OverflowError:  # a whole number past a double's range
            return None
        return number if math.isfinite(number) and number >= 0 else None

    elements_in, elements_out = count("In msg nelems"), count("Out msg nelems")
    group = _int(args.get("Group size"), 0)
    elements: float | None
    if kind == "allgather":
        if elements_out is not None:
            elements = elements_out
        elif elements_in is not None and group > 0:
            elements = elements_in * group
        else:
            return None
    elif kind == "reduceScatter" and elements_in is None and elements_out is not None:
        if group <= 0:
            return None
        elements = elements_out * group
    else:
        elements = elements_in if elements_in is not None else elements_out
        if elements is None:
            return None
    return elements * size


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
    comms_by_id: dict[int, Mapping[str, Any]] = {}
    comm_ops: dict[tuple[object, object], list[tuple[float, float, Any]]] = {}
    for index, event in enumerate(events):
        if not isinstance(event, Mapping) or event.get("ph") != "X":
            continue
        category = event.get("cat")
        args = event.get("args") if isinstance(event.get("args"), Mapping) else {}
        assert isinstance(args, Mapping)
        if category == "cpu_op" and "Collective name" in args:
            # record_param_comms: the collective's name, sizes, type and group, for the NCCL
            # kernel it launches when the kernel's own args do not repeat them
            start, dur = _times(event, index, name)
            if "External id" in args:
                comms_by_id[_int(args["External id"], -1)] = args
            thread = (event.get("pid"), event.get("tid"))
            comm_ops.setdefault(thread, []).append((start, start + dur, args))
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
    for thread_ops in [*shaped_ops.values(), *comm_ops.values()]:
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
            collective = collective_of(event_name)
            comm: Mapping[str, Any] = {}
            if "Collective name" in args or "In msg nelems" in args:
                comm = args
            elif collective:
                correlation = launches.get(_int(args.get("correlation"), -1))
                comm = (
                    comms_by_id.get(_int(args.get("External id"), -1))
                    or _enclosing(comm_ops, correlation)
                    or {}
                )
            if "Collective name" in comm:
                named = str(comm["Collective name"])
                collective = collective_kind(named) or named.lower()
            message: float | None = None
            algorithm = protocol = None
            if collective:
                algorithm, protocol, element_bytes = nccl_name_parts(event_name)
                message = message_bytes(collective, comm, element_bytes)
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
                    collective=collective,
                    group_size=_int(comm.get("Group size"), 0) or None,
                    algorithm=algorithm,
                    protocol=protocol,
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
    shaped_ops: Mapping[tuple[object, object], list[tuple[float, float, Any]]],
    launch: tuple[object, object, float] | None,
) -> Any:
    """Return what the innermost operator around a launch (pid, tid, ts) recorded (its name
    and shapes, its collective's args), else None."""
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
    start, length = _finite(ts), _finite(dur)
    if start is None:
        raise TraceError(f"{name}: traceEvents[{index}].ts must be a number, got {_short(ts)}")
    if length is None or length < 0:
        raise TraceError(
            f"{name}: traceEvents[{index}].dur must be a number >= 0, got {_short(dur)}"
        )
    return start, length


def _finite(value: object) -> float | None:
    """Return a JSON number as a finite float, else None (not a number, NaN, infinite, or a
    whole number past a double's range)."""
    if not isinstance(value, (int, float)) or isinstance(value, bool):
        return None
    try:
        number = float(value)
    except OverflowError:
        return None
    return number if math.isfinite(number) else None


def _short(value: object) -> str:
    """Return a value for a message, cut short: a trace's numbers may have thousands of
    digits."""
    text = repr(value)
    return text if len(text) <= 40 else text[:37] + "..."


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
        algorithm, protocol, _ = nccl_name_parts(kernel_name) if collective else (None, None, 0)
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
                algorithm=algorithm,
                protocol=protocol,
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
