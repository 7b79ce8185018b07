"""A profiler trace turned into an application model and a system to replay it on (issue 43
item 7; docs/traces.md).

`import_trace(profile, measured=..., target=...)` maps every GPU operation of a
`simulator.trace_import.TraceProfile` to the model that times it on the target GPU, by these
rules, in order (each operation's rule is in the report):

1. `gemm`, `attention`: a tensor-core GEMM or flash-attention kernel whose launching operator
   recorded its shapes (aten::mm, addmm, bmm, baddbmm, linear, matmul, _scaled_mm; the scaled
   dot-product and flash attention operators) and whose precision the target has a tensor rate
   for is timed by the tiled-kernel model (simulator.models.gemm) on the target's attributes,
   with the tile the kernel's name gives (`..._128x128_32x5_...`, `tilesize128x128x32`),
   else 128 x 128 x 32; an unbatched GEMM launched with at least twice as many blocks as
   output tiles is taken as split-K over blocks / tiles slices (`splitK`, gemm-model.md
   G.8), a heuristic;
2. `fp32-peak`: an FP32 GEMM on CUDA cores (sgemm, no tensor cores) scales its measured time by
   the ratio of FP32 peaks, SMs x CUDACores x SMCoreClock, measured GPU over target;
3. `bandwidth`: every other kernel, memset and device-local copy scales its measured time by the
   ratio of DRAM bandwidths (memoryEfficiency x eq. 4.5, else GMEMThroughput), measured GPU
   over target: most of what a training step runs besides its GEMMs (elementwise, norms,
   reductions, copies) is bandwidth-bound. These are the kernels the models could not map, and
   the report lists them;
4. `network`: an NCCL call whose kind the simulator has a call for (allreduce, allgather,
   reduceScatter, reduce, alltoall: simulator.collectives; broadcast; SendRecv as a send to
   the next rank and a receive from the previous) and whose size the trace gives (PyTorch's
   `In msg nelems`, `Out msg nelems`, `dtype`, on the kernel or on the record_param_comms
   that launched it) runs as that call among its stream's processes, with the algorithm its
   kernel's name gives (RING: ring; TREE: double binary tree; an allreduce's NVLS: nvls
   where the replay's NVSwitch supports NVLink SHARP and the ranks are on one node, else the
   simulator's choice, with a note), timed by the snapshot's network (`map_collective`);
5. `measured`: any other NCCL call (no size recorded, a barrier, one rank), and any scaled
   operation when the measured GPU has no record, keeps its measured time; the report lists
   the calls and why;
6. `link`: copies between host and device become transfers that the host link's model times
   (with TIMES "measured" they take their measured time on the GPU's process instead, so that
   a replay on the measured GPU gives back every measured duration).

The generated application is readable Python like a user's: each GPU stream is a process
(label `S<stream>`) that runs its kernels in the order they ran, each with its name, grid,
block and duration. A host process of its own (label `H<stream>`) launches each operation at
the time the trace shows it starting (`GAPS`, on by default: the stream idles as it did) and
answers its host copies (predicted times only). With COLLECTIVES "network" (the default with
a target GPU and more than one rank) a mapped collective is the simulator's call among its
stream's processes (one per rank); with "measured" it takes its measured time. The system
snapshot holds, per rank, the GPU's record with a replay model (`computationTime` returns
the duration the application passes; `reduceTime` a collective's reduction at the GPU's DRAM
bandwidth), a PCIe link and a host CPU; the ranks' GPUs sit on the NVSwitch of a node of a
cluster template (simulator.workloads.cluster, `system`), the nodes joined by its
InfiniBand. GPU records are looked up in a `simulator.gpu_catalogue.GpuCatalogue`: the seed
for the command line, the records a user may see for the web side.
"""

from __future__ import annotations

import json
import math
import re
from collections import Counter, defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from simulator import collectives
from simulator.gpu_catalogue import (
    GpuCatalogue,
    GpuNotFound,
    GpuRecord,
    record_attributes,
    seed_catalogue,
)
from simulator.models import builtin_models
from simulator.models.gemm import TENSOR_PRECISIONS, computation_estimate
from simulator.models.gpu_current import CurrentGpu
from simulator.models.volkov import GpuHardware
from simulator.trace_import import GpuOp, TraceProfile
from simulator.workloads.cluster import LINK_MODEL, TEMPLATES, ClusterTemplate

# The replay model of the generated snapshot's GPU: the application gives each kernel's time.
REPLAY_MODEL = """\
// Trace replay (docs/traces.md): a kernel takes the time the application passes in
// params.durationS [s], measured on the trace's GPU or predicted for another by
// `python -m simulator import-trace`. One arithmetic expression, so that the simulator
// answers it without V8 (simulator.models.js_compiler): a trace has thousands of kernels.
function computationTime(params) { return params.durationS; }
"""
# The GPU's reduction of a collective's received piece: its operands through DRAM (the
# snapshot's GPU record gets reduceBandwidth, its DRAM bandwidth, as the workloads' does).
REDUCE_FUNCTION = (
    "function reduceTime(size, params) { return params.get('bytes') / reduceBandwidth; }\n"
)

GEMM_OPS = {
    "aten::mm",
    "aten::addmm",
    "aten::bmm",
    "aten::baddbmm",
    "aten::linear",
    "aten::matmul",
    "aten::_scaled_mm",
}
ATTENTION_OPS = {
    "aten::_scaled_dot_product_flash_attention": "bhsd",
    "aten::_scaled_dot_product_efficient_attention": "bhsd",
    "aten::_scaled_dot_product_cudnn_attention": "bhsd",
    "aten::_flash_attention_forward": "bshd",
    "aten::_efficient_attention_forward": "bshd",
}
# Names of tensor-core GEMM kernels: CUTLASS's tensorop, cuBLAS's s/h 884, 1688 and 16816
# (the MMA shape), xmma and hmma, TF32 kernels, Hopper's wgmma/gmma and later architectures'.
TENSOR_CORE_NAME = re.compile(
    r"tensorop|[sh](?:884|1688|16816)|xmma|hmma|tf32|wgmma|_gmma|sm90|sm100|cublasLt", re.I
)
GEMM_NAME = re.compile(r"gemm|gemv|matmul|cublas", re.I)
ATTENTION_NAME = re.compile(r"flash_fwd|fmha.*fwd|flash_attn|attention.*fwd|fwd.*attention", re.I)
TILE_PATTERNS = (
    re.compile(r"tilesize(\d+)x(\d+)x(\d+)"),
    re.compile(r"_(\d+)x(\d+)_(\d+)x\d+_"),
    re.compile(r"_(\d+)x(\d+)_"),
)
# Template arguments that say only the element type: a short name leaves them out.
BUILTIN_TYPES = frozenset(
    [
        "bool",
        "char",
        "short",
        "int",
        "long",
        "float",
        "double",
        "half",
        "unsigned",
        "signed",
        "void",
        "size_t",
    ]
)
TYPE_PRECISION = {
    "c10::half": "fp16",
    "half": "fp16",
    "c10::bfloat16": "bf16",
    "bfloat16": "bf16",
    "c10::float8_e4m3fn": "fp8",
    "c10::float8_e5m2": "fp8",
    "double": "fp64",
    "signed char": "int8",
    "int8": "int8",
}


# The collectives the replay calls the simulator for (docs/collectives.md; sim.broadcast; a
# send to the next rank and a receive from the previous one for NCCL's SendRecv).
NETWORK_COLLECTIVES = (*collectives.KINDS, "broadcast", "sendrecv")
MSG_NO_CALL = "no simulator call for the collective {kind!r}: its measured time is kept"
MSG_NO_SIZE = "the trace gives no message size (In msg nelems and dtype): its measured time is kept"
MSG_ALGORITHM = (
    "NCCL's {algorithm} algorithm has no counterpart for {kind}: the simulator picks one"
)
MSG_NVLS_FALLBACK = (
    "NCCL's NVLS ran on the traced system, but the replay's {why}: the simulator picks one"
)


class TraceImportError(ValueError):
    """A GPU record that cannot be found or read: the message names it."""


@dataclass
class MappedOp:
    """One GPU operation with the rule that times it on the target and its times [us]."""

    op: GpuOp
    rule: str
    predicted_us: float | None = None
    model_on_measured_us: float | None = None  # rules 1: the model on the measured GPU
    shape: dict[str, Any] = field(default_factory=dict)


@dataclass
class ImportedTrace:
    """What an import gives: the application's source, the snapshot, the report."""

    app_source: str
    snapshot: dict[str, Any]
    labels: dict[str, int]
    report: dict[str, Any]


# -- hardware records ------------------------------------------------------------------------------
def catalogue_gpus(catalogue: GpuCatalogue | None = None) -> list[GpuRecord]:
    """Return the GPU records of `catalogue`, by default the project's hardware seed."""
    return list((catalogue or seed_catalogue()).records)


def gpu_record(spec: str, catalogue: GpuCatalogue | None = None) -> GpuRecord:
    """Return the GPU record `spec` names: a JSON file holding one (name, attributes; the
    command line only), or the name of a GPU in `catalogue` (simulator.gpu_catalogue; by
    default the hardware seed), case and spacing ignored."""
    path = Path(spec)
    if catalogue is None and path.suffix == ".json" and path.exists():
        try:
            record = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, json.JSONDecodeError) as error:
            raise TraceImportError(f"cannot read the GPU record {spec}: {error}") from error
        if not isinstance(record, Mapping) or "name" not in record:
            raise TraceImportError(f"{spec}: a GPU record is an object with name and attributes")
        try:
            return GpuRecord(str(record["name"]), record_attributes(record, spec))
        except GpuNotFound as error:
            raise TraceImportError(str(error)) from error
    try:
        return (catalogue or seed_catalogue()).get(spec)
    except GpuNotFound as error:
        raise TraceImportError(str(error)) from error


def match_gpu(trace_name: str | None, catalogue: GpuCatalogue | None = None) -> GpuRecord | None:
    """Return `catalogue`'s record (by default the seed's) for a GPU a trace names
    (GpuCatalogue.match), None when none has its model number."""
    return (catalogue or seed_catalogue()).match(trace_name)


def dram_bandwidth(attributes: Mapping[str, float | str]) -> float | None:
    """Return a GPU's DRAM bandwidth [B/s] as the current-architecture model reads it, else
    None when the record lacks what it needs."""
    try:
        gpu = CurrentGpu.from_attributes(attributes)
        per_sm_cycle, _ = gpu.memory_bandwidth_per_sm(l2_resident=False, footprint_bytes=None)
        return per_sm_cycle * gpu.base.sms * gpu.base.sm_clock_hz
    except (ValueError, KeyError, TypeError):
        try:
            hw = GpuHardware.from_attributes(attributes)
            return hw.gmem_bandwidth * hw.sms * hw.sm_clock_hz
        except (ValueError, KeyError, TypeError):
            return None


def fp32_peak(attributes: Mapping[str, float | str]) -> float | None:
    """Return a GPU's FP32 lane-cycles per second (SMs x CUDACores x SMCoreClock), else None."""
    try:
        hw = GpuHardware.from_attributes(attributes)
    except (ValueError, KeyError, TypeError):
        return None
    return hw.sms * hw.cuda_cores * hw.sm_clock_hz


# -- shapes ------------------------------------------------------------------------------------
def gemm_shape(op: GpuOp) -> dict[str, Any] | None:
    """Return M, N, K and precision of a GEMM kernel from its launching operator's input dims
    (a batch is folded into M), else None."""
    dims = op.input_dims
    name = op.op_name
    if not dims or name not in GEMM_OPS:
        return None
    try:
        if name in ("aten::mm", "aten::_scaled_mm"):
            (m, k), (_, n) = dims[0], dims[1]
        elif name == "aten::addmm":
            (m, k), (_, n) = dims[1], dims[2]
        elif name == "aten::bmm":
            (b, m, k), (_, _, n) = dims[0], dims[1]
            m *= b
        elif name == "aten::baddbmm":
            (b, m, k), (_, _, n) = dims[1], dims[2]
            m *= b
        elif name == "aten::linear":
            k = dims[0][-1]
            m = math.prod(dims[0][:-1])
            n = dims[1][0]
        else:  # aten::matmul
            k = dims[0][-1]
            m = math.prod(dims[0][:-1])
            n = dims[1][-1]
    except (ValueError, IndexError, TypeError):
        return None
    if min(m, n, k) <= 0:
        return None
    shape: dict[str, Any] = {"kind": "gemm", "M": m, "N": n, "K": k}
    shape.update(_tile(op.name))
    if op.grid and name not in ("aten::bmm", "aten::baddbmm"):
        # A launch with at least twice the blocks of output tiles (either orientation: a
        # kernel may compute the transpose) splits K: the extra blocks are K slices.
        bm, bn = shape.get("tileM", 128), shape.get("tileN", 128)
        tiles = min(math.ceil(m / bm) * math.ceil(n / bn), math.ceil(n / bm) * math.ceil(m / bn))
        blocks = op.grid[0] * op.grid[1] * op.grid[2]
        splits = min(blocks // tiles, math.ceil(k / shape.get("tileK", 32)))
        if splits >= 2:
            shape["splitK"] = splits
    return shape


def attention_shape(op: GpuOp) -> dict[str, Any] | None:
    """Return the attention forward's heads, lengths and head dimension from its operator's
    query and key dims, else None."""
    layout = ATTENTION_OPS.get(op.op_name or "")
    dims = op.input_dims
    if layout is None or not dims or len(dims) < 2 or len(dims[0]) != 4 or len(dims[1]) != 4:
        return None
    if layout == "bhsd":
        (b, h, sq, d), sk = dims[0], dims[1][2]
    else:
        (b, sq, h, d), sk = dims[0], dims[1][1]
    return {"kind": "attention", "batchHeads": b * h, "seqQ": sq, "seqK": sk, "headDim": d}


def _tile(name: str) -> dict[str, int]:
    for pattern in TILE_PATTERNS:
        match = pattern.search(name)
        if match:
            values = [int(v) for v in match.groups()]
            tile = {"tileM": values[0], "tileN": values[1]}
            if len(values) > 2:
                tile["tileK"] = values[2]
            return tile
    return {}


def precision_of(op: GpuOp) -> str | None:
    """Return the tensor precision a GEMM or attention kernel runs in, or None for FP32 on
    CUDA cores (an FP32 input on a kernel whose name shows no tensor cores)."""
    types = [t.lower() for t in op.input_types or () if t]
    for text in types:
        if text in TYPE_PRECISION:
            return TYPE_PRECISION[text]
    if any(t == "float" for t in types) or not types:
        return "tf32" if TENSOR_CORE_NAME.search(op.name) else None
    return None


def short_name(name: str) -> str:
    """Return a kernel's name without return type, namespaces' templates and parameters:
    `void at::native::vectorized_elementwise_kernel<4, ...>(int, ...)` reads
    `at::native::vectorized_elementwise_kernel`."""
    text = re.sub(r"^void\s+", "", name.strip()).replace("(anonymous namespace)::", "")
    depth = 0
    out: list[str] = []
    argument: list[str] = []
    for char in text:
        if char == "<":
            depth += 1
            if depth == 1:
                argument = []
                continue
        elif char == ">":
            depth = max(0, depth - 1)
            if depth == 0:
                # a template that is one name (cutlass::Kernel<cutlass_80_tensorop_...>) is
                # what tells the kernel apart: it stays
                word = "".join(argument).strip()
                if re.fullmatch(r"[A-Za-z_]\w*", word) and word not in BUILTIN_TYPES:
                    out.append(f"<{word}>")
                continue
        elif char == "(" and depth == 0:
            break
        if depth == 0:
            out.append(char)
        elif depth == 1:
            argument.append(char)
    result = "".join(out).strip()
    return result[:120] or name[:120]


# -- mapping -------------------------------------------------------------------------------------
def map_ops(
    profile: TraceProfile,
    measured: GpuRecord | None,
    target: GpuRecord | None,
    nvls: str | None = None,
) -> list[MappedOp]:
    """Return each operation of `profile` with its rule and, given a target, its predicted
    time (module docstring, rules 1-5). `nvls`: why the replay cannot run NCCL's NVLS
    (`nvls_refusal`), None where it can."""
    bandwidth_ratio = fp32_ratio = None
    if measured is not None and target is not None:
        ours, theirs = dram_bandwidth(measured.attributes), dram_bandwidth(target.attributes)
        if ours and theirs:
            bandwidth_ratio = ours / theirs
        ours, theirs = fp32_peak(measured.attributes), fp32_peak(target.attributes)
        if ours and theirs:
            fp32_ratio = ours / theirs
    mapped: list[MappedOp] = []
    for op in profile.ops:
        if op.kind == "collective":
            mapped.append(map_collective(op, target, nvls))
            continue
        if op.kind == "memcpy" and op.direction in ("HtoD", "DtoH"):
            mapped.append(MappedOp(op, "link"))
            continue
        shape = None
        if op.kind == "kernel":
            # by the kernel's own name, not its parameters' types (cublasLtEpilogue_t) nor its
            # operator (a GEMM operator launches epilogue and reduction kernels too)
            if GEMM_NAME.search(short_name(op.name)):
                shape = gemm_shape(op)
            elif ATTENTION_NAME.search(op.name):
                shape = attention_shape(op)
        precision = precision_of(op) if shape else None
        if shape and precision:
            shape["precision"] = precision
            entry = MappedOp(op, shape["kind"], shape=shape)
            if target is not None:
                entry.predicted_us = _tiled_us(target.attributes, shape)
            if measured is not None:
                entry.model_on_measured_us = _tiled_us(measured.attributes, shape)
            if target is None or entry.predicted_us is not None:
                mapped.append(entry)
                continue
        simt_gemm = (
            op.kind == "kernel"
            and bool(GEMM_NAME.search(short_name(op.name)))
            and precision is None
        )
        if simt_gemm and not TENSOR_CORE_NAME.search(op.name):
            rule, ratio = "fp32-peak", fp32_ratio
        else:
            rule, ratio = "bandwidth", bandwidth_ratio
        if target is not None and ratio is None:
            rule = "measured"
        predicted = None if target is None else op.dur_us * (ratio if ratio else 1.0)
        mapped.append(MappedOp(op, rule, predicted, shape=shape or {}))
    return mapped


def map_collective(op: GpuOp, target: GpuRecord | None, nvls: str | None = None) -> MappedOp:
    """Return a collective with its rule: `network` (the replay calls the simulator's
    collective of that kind, sized and with the algorithm the kernel's name gives, which the
    snapshot's network times) where the kind has a call and the trace gives the message's
    size, else `measured`, with the reason in the shape's `unmapped`. An NVLS allreduce
    where the replay cannot run NVLS (`nvls`: why) is the simulator's choice, with a note:
    NCCL itself runs another algorithm where NVLS is not available, and a trace replayed on
    another system should run there, not stop at its first NVLS call."""
    kind = op.collective or ""
    if kind not in NETWORK_COLLECTIVES:
        reason = MSG_NO_CALL.format(kind=kind or "?")
    elif op.bytes is None:
        reason = MSG_NO_SIZE
    else:
        algorithm = collective_algorithm(kind, op.algorithm)
        shape: dict[str, Any] = {"kind": "collective", "algorithm": algorithm}
        if algorithm == "nvls" and nvls is not None:
            shape["algorithm"] = "auto"
            shape["note"] = MSG_NVLS_FALLBACK.format(why=nvls)
        elif op.algorithm and algorithm == "auto" and kind in collectives.ALGORITHMS:
            shape["note"] = MSG_ALGORITHM.format(algorithm=op.algorithm, kind=kind)
        return MappedOp(op, "network", shape=shape)
    return MappedOp(op, "measured", op.dur_us if target else None, shape={"unmapped": reason})


def collective_algorithm(kind: str, nccl_algorithm: str | None) -> str:
    """Return the simulator's algorithm (simulator.collectives.ALGORITHMS) for NCCL's, as
    its kernel names it: RING is the ring; TREE is NCCL's double binary tree (for the
    collectives that have one, else the tree); NVLS is the allreduce's "nvls" (NCCL's NVLS
    on one NVSwitch); others, and a broadcast or a send, "auto": NVLS_TREE (NVLS in each
    node, a tree across nodes) is not modelled, nor NVLS's allgather and reduce-scatter,
    CollNet or PAT."""
    known = collectives.ALGORITHMS.get(kind, ())
    if nccl_algorithm == "RING" and "ring" in known:
        return "ring"
    if nccl_algorithm == "NVLS" and "nvls" in known:
        return "nvls"
    if nccl_algorithm == "TREE":
        for name in ("double_binary_tree", "tree"):
            if name in known:
                return name
    return "auto"


def _tiled_us(attributes: Mapping[str, float | str], shape: Mapping[str, Any]) -> float | None:
    """Return the tiled model's time [us], or None when the GPU lacks what it needs (no
    tensor rate of the precision, say)."""
    name, _ = TENSOR_PRECISIONS.get(shape["precision"], (None, 0))
    if name is None or name not in attributes:
        return None
    try:
        return computation_estimate(attributes, shape).time_s * 1e6
    except (ValueError, KeyError, TypeError, ZeroDivisionError):
        return None


# -- the application, the snapshot, the report ----------------------------------------------------
def stream_label(device: int, stream: int, devices: int) -> str:
    return f"S{stream}" if devices == 1 else f"D{device}S{stream}"


def host_label(stream: str) -> str:
    """Return the label of the host process that launches a stream's work (H7 for S7)."""
    return "H" + stream[1:] if stream.startswith("S") else "H" + stream


def import_trace(
    profile: TraceProfile,
    *,
    measured: GpuRecord | None = None,
    target: GpuRecord | None = None,
    ranks: int = 1,
    source_name: str = "trace",
    system: str | None = None,
) -> ImportedTrace:
    """Return the application model, snapshot and report of a trace (module docstring).
    `system`: the cluster template (simulator.workloads.cluster.TEMPLATES) whose NVLink
    and InfiniBand join the ranks' GPUs; by default the one of the target's (else the
    measured) GPU, else dgx-h100."""
    if ranks < 1:
        raise TraceImportError(f"ranks must be a whole number >= 1, got {ranks}")
    if not profile.ops:
        raise TraceImportError(f"{source_name}: the trace holds no GPU kernel, copy or memset")
    fabric = _fabric(system, target or measured)
    mapped = map_ops(profile, measured, target, nvls_refusal(fabric, ranks))
    devices = len({op.device for op in profile.ops})
    by_stream: dict[str, list[MappedOp]] = defaultdict(list)
    for entry in mapped:
        by_stream[stream_label(entry.op.device, entry.op.stream, devices)].append(entry)
    order = [stream_label(d, s, devices) for d, s in profile.streams()]
    labels: dict[str, int] = {}
    for label in order:
        labels[label] = ranks
        labels[host_label(label)] = ranks
    app = _app_source(profile, by_stream, order, measured, target, source_name, devices, ranks)
    snapshot = _snapshot(profile, measured, target, order, ranks, fabric)
    report = _report(profile, mapped, measured, target, labels, ranks, fabric)
    return ImportedTrace(app, snapshot, labels, report)


def nvls_refusal(fabric: ClusterTemplate, ranks: int) -> str | None:
    """Return why a replay over `ranks` ranks of `fabric` cannot run NCCL's NVLS (as
    simulator.api refuses `algorithm="nvls"`), None where it can: the template's NVSwitch
    supports NVLink SHARP (`ClusterTemplate.nvls`, the snapshot's `nvls` attribute) and the
    ranks fit on one of its nodes."""
    if not fabric.nvls:
        return f"{fabric.name} NVSwitch has no NVLink SHARP ('nvls')"
    if ranks > fabric.gpus_per_node:
        nodes = -(-ranks // fabric.gpus_per_node)
        return f"{ranks} ranks are on {nodes} {fabric.name} nodes (NVLS over several nodes is not modelled)"
    return None


def _fmt(us: float, digits: int = 10) -> str:
    """Return a time in microseconds as the source writes it: measured times and launch
    offsets keep the trace's nanoseconds (10 significant digits hold 10^4 s of them),
    predictions 6 digits."""
    return f"{us:.{digits}g}"


def _app_source(
    profile: TraceProfile,
    by_stream: Mapping[str, list[MappedOp]],
    order: Sequence[str],
    measured: GpuRecord | None,
    target: GpuRecord | None,
    source_name: str,
    devices: int,
    ranks: int,
) -> str:
    counts = Counter(op.kind for op in profile.ops)
    if profile.source == "kineto":
        kind = "a PyTorch profiler (Kineto) trace"
    else:
        kind = "an Nsight Systems SQLite export"
    lines = [
        f"# Application model imported from {kind}",
        f"# ({_comment(source_name)}) by `python -m simulator import-trace` (docs/traces.md).",
        "# Each GPU stream is a process (label S<stream>) that runs its kernels in the order",
        "# they ran; a copy between host and GPU is a transfer to the stream's host process",
        "# (label H<stream>), which answers it; an NCCL collective is the simulator's",
        "# collective of its kind among its stream's processes (one per rank), timed by the",
        "# snapshot's network, or takes its measured time (COLLECTIVES).",
        f"# Measured on: {_comment(profile.gpu_name or 'a GPU the trace does not name')}"
        + (f" ({profile.sms} SMs)" if profile.sms else "")
        + f", rank {profile.rank} of {profile.world_size}"
        + (f"; hardware record {measured.name!r}" if measured else ""),
        f"# Trace: {counts['kernel']} kernels, {counts['memcpy']} copies, {counts['memset']} "
        f"memsets, {counts['collective']} collectives on {len(order)} streams; "
        f"span {profile.span_us / 1e3:.6g} ms",
    ]
    if target is not None:
        lines += [
            f"# Predicted for: {target.name!r}. TIMES picks the durations the kernels take:",
            '# "predicted" (the kernel models, or the measured time scaled by the rule each',
            '# line names) or "measured" (the trace\'s own).',
            'TIMES = "predicted"',
        ]
    else:
        lines += ['TIMES = "measured"  # the trace\'s own durations']
    collective_mode = "network" if target is not None and ranks > 1 else "measured"
    lines += [
        "GAPS = True  # False: each stream's operations run back to back",
        '# COLLECTIVES: "network" runs each mapped NCCL call as the simulator\'s collective',
        '# over the snapshot\'s network; "measured" gives each the time it took',
        f'COLLECTIVES = "{collective_mode}"',
        f"RANKS = {ranks}  # the processes of each label, one per rank",
        "",
        "",
        "def launched():",
        "    # wait for the host to launch the next operation (GAPS): the stream idles as the",
        "    # trace shows it idling (the CPU's launches, data loading) when its work is done early",
        "    if GAPS:",
        "        sim.p2pCommunicationReceive(host, rank)",
        "",
        "",
        'def kernel(name, grid, block, measured_us, predicted_us=None, rule="measured"):',
        "    launched()",
        '    us = predicted_us if TIMES == "predicted" and predicted_us is not None else measured_us',
        "    sim.computation({",
        '        "kernelName": name,',
        '        "gridSize": grid[0] * grid[1] * grid[2],',
        '        "blockSize": block[0] * block[1] * block[2],',
        '        "durationS": us * 1e-6,',
        '        "rule": rule,',
        "    })",
        "",
        "",
        "def copy(direction, size, measured_us):",
        "    launched()",
        '    if TIMES == "measured":',
        "        # as it took on the traced machine (its link, pinned or pageable host memory)",
        '        sim.computation({"kernelName": "Memcpy " + direction,',
        '                         "durationS": measured_us * 1e-6, "rule": "measured"})',
        "        return",
        "    # host <-> device: the link's model times it; the host process answers when done",
        '    way = ConstVar.HostToDevice if direction == "HtoD" else ConstVar.DeviceToHost',
        "    sim.p2pCommunicationSend(size, host, way, rank)",
        "    sim.p2pCommunicationReceive(host, rank)",
        "",
        "",
        "def collective(name, size, group, measured_us, algorithm=None):",
        "    # An NCCL call among this stream's processes (one per rank), `size` bytes as",
        "    # docs/collectives.md counts them; without `algorithm` it could not be mapped",
        "    # (its line says why) and takes its measured time, as every call does with one rank",
        "    launched()",
        '    if COLLECTIVES == "measured" or algorithm is None or RANKS == 1:',
        '        sim.computation({"kernelName": "nccl " + name, "durationS": measured_us * 1e-6,',
        '                         "messageBytes": size, "groupSize": group, "rule": "measured"})',
        '    elif name == "allreduce":',
        "        sim.allreduce(size, tag, algorithm)",
        '    elif name == "allgather":',
        "        sim.allgather(size, tag, algorithm)",
        '    elif name == "reduceScatter":',
        "        sim.reduceScatter(size, tag, algorithm)",
        '    elif name == "alltoall":',
        "        sim.alltoall(size, tag, algorithm)",
        '    elif name == "reduce":',
        "        sim.reduce(size, tag, 0, tag, algorithm)",
        '    elif name == "broadcast":',
        "        sim.broadcast(size, tag, 0, tag)",
        '    elif name == "sendrecv":',
        "        # a pipeline's exchange: to the next rank, from the previous one",
        "        sim.p2pCommunicationSend(size, tag, None, (rank + 1) % RANKS)",
        "        sim.p2pCommunicationReceive(tag, (rank - 1) % RANKS)",
        "",
        "",
        "def host_side(stream, launches):",
        "    # The host of one stream: it launches each operation at the time the trace shows",
        "    # it starting (GAPS) and answers the operation's copy to or from the host",
        "    for at_us, is_copy in launches:",
        "        if GAPS:",
        '            sim.computation({"durationS": max(0.0, at_us * 1e-6 - sim.now())})',
        "            sim.p2pCommunicationSend(0, stream, None, rank)",
        '        if is_copy and TIMES == "predicted":',
        "            sim.p2pCommunicationReceive(stream, rank)",
        "            sim.p2pCommunicationSend(0, stream, None, rank)",
        "",
        "",
    ]
    origin = min(op.start_us for op in profile.ops)
    first = True
    for label in order:
        entries = by_stream[label]
        lines.append(f"{'if' if first else 'elif'} tag == {label!r}:")
        lines.append(f"    host = {host_label(label)!r}")
        first = False
        region = None
        for entry in entries:
            op = entry.op
            if op.region != region and op.region:
                lines.append(f"    # {_comment(op.region)}")
            region = op.region
            lines.append("    " + _call(entry))
    for label in order:
        launches = ", ".join(
            f"({_fmt(entry.op.start_us - origin)}, {int(entry.rule == 'link')})"
            for entry in by_stream[label]
        )
        lines += [
            f"elif tag == {host_label(label)!r}:",
            f"    host_side({label!r}, [{launches}])",
        ]
    return "\n".join(lines) + "\n"


def _comment(text: str) -> str:
    """Return `text` fit for a comment of the generated model: a trace's names (its GPU,
    its annotation ranges) and the file's name are untrusted, and a line break in one would
    end the comment and make the rest code, so every character that is not printable is
    written escaped."""
    return "".join(ch if ch.isprintable() else ascii(ch)[1:-1] for ch in text)


def _call(entry: MappedOp) -> str:
    op = entry.op
    if entry.rule == "link":
        return f"copy({op.direction!r}, {int(op.bytes or 0)}, {_fmt(op.dur_us)})"
    if op.kind == "collective":
        size = int(op.bytes) if op.bytes is not None else 0
        args = f"{op.collective!r}, {size}, {op.group_size or 0}, {_fmt(op.dur_us)}"
        if entry.rule == "network":
            note = entry.shape.get("note")
            comment = f"  # {_comment(note)}" if note else ""
            return f"collective({args}, {entry.shape['algorithm']!r}){comment}"
        return f"collective({args})  # {_comment(str(entry.shape.get('unmapped', '')))}"
    name = short_name(op.name) if op.kind == "kernel" else op.name.split(" (")[0]
    grid = op.grid or (1, 1, 1)
    block = op.block or (1, 1, 1)
    args = f"{name!r}, {grid}, {block}, {_fmt(op.dur_us)}"
    if entry.predicted_us is not None:
        args += f", {_fmt(entry.predicted_us, 6)}, {entry.rule!r}"
    comment = ""
    if entry.shape:
        dims = " ".join(f"{k}={v}" for k, v in entry.shape.items() if k != "kind")
        comment = f"  # {_comment(str(entry.shape.get('kind', 'gemm')))} {_comment(dims)}"
    elif op.bytes:
        comment = f"  # {int(op.bytes)} bytes"
    return f"kernel({args}){comment}"


def _fabric(system: str | None, gpu: GpuRecord | None) -> ClusterTemplate:
    """Return the cluster template whose network joins the ranks (import_trace's `system`)."""
    if system is not None:
        if system not in TEMPLATES:
            raise TraceImportError(
                f"no cluster template {system!r}: give one of {', '.join(TEMPLATES)}"
            )
        return TEMPLATES[system]
    if gpu is not None:
        for template in TEMPLATES.values():
            if _same_name(template.gpu, gpu.name):
                return template
    return TEMPLATES["dgx-h100"]


def _same_name(a: str, b: str) -> bool:
    return re.sub(r"[^a-z0-9]", "", a.lower()) == re.sub(r"[^a-z0-9]", "", b.lower())


def _snapshot(
    profile: TraceProfile,
    measured: GpuRecord | None,
    target: GpuRecord | None,
    streams: Sequence[str],
    ranks: int,
    fabric: ClusterTemplate,
) -> dict[str, Any]:
    """Return the replay's system: per rank a GPU (its streams' processes), a host (their
    hosts') and a PCIe link between them; the GPUs of a node (the template's GPUs per node)
    on its NVSwitch, the nodes joined by InfiniBand, as simulator.workloads.cluster builds
    them, so that a collective's messages cross the template's links."""
    gpu = target or measured
    gpu_name = gpu.name if gpu else (profile.gpu_name or "GPU of the trace")
    link = next(m for m in builtin_models() if m.name == "PCIe link")
    attributes: dict[str, float | str] = dict(gpu.attributes) if gpu else {}
    reduce_bandwidth = dram_bandwidth(attributes) if gpu else None
    gpu_model = REPLAY_MODEL
    if reduce_bandwidth:
        # a collective's reduction of a received piece streams its operands through DRAM
        attributes["reduceBandwidth"] = reduce_bandwidth
        gpu_model += REDUCE_FUNCTION
    per_node = fabric.gpus_per_node
    node_count = (ranks + per_node - 1) // per_node
    nodes: list[dict[str, Any]] = []
    edges: list[list[str]] = []
    if node_count > 1:
        nodes.append({"id": "ib", "name": "InfiniBand fabric", "hardware": "ib", "model": "link"})
    for node in range(node_count):
        nodes.append({"id": f"node{node}", "name": f"Node {node}", "group": True})
        nodes.append(
            {
                "id": f"nvs{node}",
                "name": f"NVSwitch {node}",
                "hardware": "nvswitch",
                "model": "link",
                "parent": f"node{node}",
            }
        )
    for rank in range(ranks):
        parent = f"node{rank // per_node}"
        suffix = "" if ranks == 1 else str(rank)
        gpu_id, host_id, pcie_id = f"gpu{rank}", f"host{rank}", f"pcie{rank}"
        nodes += [
            {
                "id": gpu_id,
                "name": f"GPU{suffix}",
                "hardware": "gpu",
                "model": "replay_gpu",
                "count": 1,
                "labels": {label: 1 for label in streams},
                "parent": parent,
            },
            {
                "id": pcie_id,
                "name": f"PCIe{suffix}",
                "hardware": "pcie",
                "model": "pcie",
                "count": 1,
                "parent": parent,
            },
            {
                "id": host_id,
                "name": f"Host{suffix}",
                "hardware": "host",
                "model": "replay",
                "count": 1,
                "labels": {host_label(label): 1 for label in streams},
                "parent": parent,
            },
        ]
        # the NVSwitch edge first: routes break ties by edge order (GPUs of a node talk
        # over NVLink); a GPU reaches its host through its PCIe link only
        edges += [[gpu_id, f"nvs{rank // per_node}"], [gpu_id, pcie_id], [host_id, pcie_id]]
        if node_count > 1:
            edges.append([gpu_id, "ib"])
    return {
        "name": f"Trace replay on {gpu_name}"
        + (f" x {ranks} ({fabric.name})" if ranks > 1 else ""),
        "hardware": {
            "gpu": {"type": "GPU", "name": gpu_name, "attributes": attributes},
            # PCIe 4.0 x16 at its nominal rate, as the catalogue's record of it
            "pcie": {
                "type": "NETWORK",
                "name": "PCIe 4.0 x16",
                "attributes": {
                    "bandwidth": 31.5e9,
                    "startupHTD": 3.97e-6,
                    "startupDth": 5.16e-6,
                    "lambdaHTD": 1,
                    "lambdaDth": 1,
                },
            },
            "host": {"type": "CPU", "name": "Host CPU", "attributes": {}},
            "nvswitch": {
                "type": "NETWORK",
                "name": f"NVSwitch ({fabric.name})",
                "attributes": {
                    "latency": fabric.nvlink_latency_s,
                    "bandwidth": fabric.nvlink_bytes_per_s,
                    **({"nvls": 1} if fabric.nvls else {}),
                },
            },
            "ib": {
                "type": "NETWORK",
                "name": f"InfiniBand ({fabric.name})",
                "attributes": {
                    "latency": fabric.network_latency_s,
                    "bandwidth": fabric.network_bytes_per_s,
                },
            },
        },
        "models": {
            "replay": {"language": "javascript", "source": REPLAY_MODEL},
            "replay_gpu": {"language": "javascript", "source": gpu_model},
            "pcie": {"language": "javascript", "source": link.source},
            "link": {"language": "javascript", "source": LINK_MODEL},
        },
        "nodes": nodes,
        "edges": edges,
    }


def _collectives_report(
    mapped: Sequence[MappedOp], ranks: int, fabric: ClusterTemplate
) -> dict[str, Any]:
    """Return how the trace's NCCL calls were mapped: by kind and algorithm, the ones that
    could not be (name, count, measured time, reason), and the groups the trace gives that
    the replay's `ranks` processes do not match."""
    calls = [entry for entry in mapped if entry.op.kind == "collective"]
    mapped_calls: Counter[str] = Counter()
    notes: Counter[str] = Counter()  # why a call runs another algorithm than the trace's
    unmapped: dict[tuple[str, str], list[float]] = defaultdict(lambda: [0, 0.0])
    groups: Counter[int] = Counter()
    for entry in calls:
        op = entry.op
        if entry.rule == "network":
            mapped_calls[f"{op.collective} {entry.shape['algorithm']}"] += 1
            if entry.shape.get("note"):
                notes[str(entry.shape["note"])] += 1
        else:
            row = unmapped[(short_name(op.name), str(entry.shape.get("unmapped", "")))]
            row[0] += 1
            row[1] += op.dur_us
        if op.group_size and op.group_size != ranks:
            groups[op.group_size] += 1
    report: dict[str, Any] = {
        "count": len(calls),
        "network": dict(mapped_calls),
        "unmapped": [
            {"name": name, "reason": reason, "count": int(c), "measured_us": t}
            for (name, reason), (c, t) in sorted(unmapped.items(), key=lambda kv: -kv[1][1])
        ],
        "fabric": fabric.name if ranks > 1 else None,
    }
    if notes:
        report["notes"] = dict(notes)
    if ranks == 1 and mapped_calls:
        report["note"] = (
            "one rank: every collective takes its measured time (give --ranks to run them "
            "over the network)"
        )
    if groups:
        report["group_mismatch"] = {
            "ranks": ranks,
            "trace_groups": {str(size): n for size, n in sorted(groups.items())},
            "note": "the trace's calls ran in groups of these sizes; the replay runs each "
            "among all its ranks",
        }
    return report


def _report(
    profile: TraceProfile,
    mapped: Sequence[MappedOp],
    measured: GpuRecord | None,
    target: GpuRecord | None,
    labels: Mapping[str, int],
    ranks: int,
    fabric: ClusterTemplate,
) -> dict[str, Any]:
    counts = Counter(op.kind for op in profile.ops)
    rules = Counter(entry.rule for entry in mapped)
    unmapped: dict[str, list[float]] = defaultdict(lambda: [0, 0.0])
    for entry in mapped:
        if entry.rule in ("bandwidth", "fp32-peak") or (
            entry.rule == "measured" and entry.op.kind != "collective"
        ):
            row = unmapped[short_name(entry.op.name)]
            row[0] += 1
            row[1] += entry.op.dur_us
    per_stream: dict[str, float] = defaultdict(float)
    for op in profile.ops:
        per_stream[str(op.stream)] += op.dur_us
    model_errors = [
        entry.model_on_measured_us / entry.op.dur_us
        for entry in mapped
        if entry.model_on_measured_us is not None and entry.op.dur_us > 0
    ]
    report: dict[str, Any] = {
        "source": profile.source,
        "gpu": profile.gpu_name,
        "measured_record": measured.name if measured else None,
        "target_record": target.name if target else None,
        "rank": profile.rank,
        "world_size": profile.world_size,
        "counts": dict(counts),
        "streams": sum(1 for label in labels if not label.startswith("H")),
        "annotations": profile.annotations,
        "span_us": profile.span_us,
        "busy_us_per_stream": dict(per_stream),
        "rules": dict(rules),
        "unmapped": sorted(
            (
                {"name": name, "count": int(c), "measured_us": t}
                for name, (c, t) in unmapped.items()
            ),
            key=lambda row: -row["measured_us"],
        ),
        "labels": dict(labels),
    }
    report["collectives"] = _collectives_report(mapped, ranks, fabric)
    if model_errors:
        model_errors.sort()
        report["tiled_model_on_measured_gpu"] = {
            "kernels": len(model_errors),
            "median_ratio": model_errors[len(model_errors) // 2],
            "min_ratio": model_errors[0],
            "max_ratio": model_errors[-1],
        }
    if target is not None:
        report["predicted_busy_us"] = sum(e.predicted_us or 0.0 for e in mapped)
        report["measured_busy_us"] = sum(e.op.dur_us for e in mapped if e.rule != "link")
    return report
