"""Traces in (issue 43 item 7): a Kineto trace and an Nsight Systems SQLite export, both made
here, read into a profile, mapped to the kernel models and written as an application model
that replays them (simulator.trace_import, simulator.trace_model, `import-trace`)."""

from __future__ import annotations

import gzip
import io
import json
import sqlite3
import tokenize
from pathlib import Path
from typing import Any

import pytest

from simulator.cli import main
from simulator.models.gemm import computation_estimate
from simulator.runner import run_simulation
from simulator.trace_import import GpuOp, TraceError, TraceProfile, read_kineto, read_trace
from simulator.trace_model import (
    dram_bandwidth,
    gemm_shape,
    gpu_record,
    import_trace,
    map_ops,
    match_gpu,
    short_name,
)

GEMM_NAME = (
    "sm80_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x128x32_stage3_warpsize2x2x1_"
    "tensor16x8x16_kernel"
)
ELEMENTWISE = (
    "void at::native::vectorized_elementwise_kernel<4, at::native::CUDAFunctor_add<float>, "
    "at::detail::Array<char*, 3> >(int, at::native::CUDAFunctor_add<float>, "
    "at::detail::Array<char*, 3>)"
)
NCCL = "ncclKernel_AllReduce_RING_LL_Sum_float(ncclDevComm*, unsigned long, ncclWork*)"


def kineto_trace() -> dict[str, Any]:
    """A small Kineto trace: a copy in, a BF16 GEMM whose aten::mm recorded its shapes, an
    elementwise kernel and a memset on stream 7 inside a "forward" annotation, and an NCCL
    all-reduce of 1 Mi floats on stream 20."""

    def gpu(cat: str, name: str, ts: float, dur: float, stream: int, **args: Any) -> dict[str, Any]:
        return {
            "ph": "X",
            "cat": cat,
            "name": name,
            "pid": 0,
            "tid": stream,
            "ts": ts,
            "dur": dur,
            "args": {"device": 0, "stream": stream, **args},
        }

    return {
        "schemaVersion": 1,
        "deviceProperties": [{"id": 0, "name": "NVIDIA A100-SXM4-40GB", "numSms": 108}],
        "distributedInfo": {"backend": "nccl", "rank": 0, "world_size": 2},
        "traceEvents": [
            {"ph": "M", "name": "process_name", "pid": 0, "args": {"name": "GPU 0"}},
            {
                "ph": "X",
                "cat": "cpu_op",
                "name": "aten::mm",
                "pid": 1,
                "tid": 1,
                "ts": 95,
                "dur": 20,
                "args": {
                    "External id": 11,
                    "Input Dims": [[4096, 2048], [2048, 8192]],
                    "Input type": ["c10::BFloat16", "c10::BFloat16"],
                },
            },
            gpu("gpu_user_annotation", "forward", 90, 700, 7),
            gpu("gpu_memcpy", "Memcpy HtoD (Pageable -> Device)", 0, 40, 7, bytes=1 << 20),
            gpu(
                "kernel",
                GEMM_NAME,
                100,
                500,
                7,
                grid=[64, 32, 1],
                block=[128, 1, 1],
                **{"External id": 11},
            ),
            gpu("kernel", ELEMENTWISE, 700, 50, 7, grid=[4096, 1, 1], block=[128, 1, 1]),
            gpu("gpu_memset", "Memset (Device)", 760, 4, 7, bytes=4096),
            gpu(
                "kernel",
                NCCL,
                800,
                300,
                20,
                grid=[8, 1, 1],
                block=[544, 1, 1],
                **{
                    "Collective name": "allreduce",
                    "In msg nelems": 1 << 20,
                    "dtype": "Float",
                    "Group size": 2,
                },
            ),
        ],
    }


def test_a_kineto_trace_reads_kernels_copies_and_collectives_with_their_launchers() -> None:
    profile = read_kineto(kineto_trace())
    assert (profile.gpu_name, profile.sms, profile.rank, profile.world_size) == (
        "NVIDIA A100-SXM4-40GB",
        108,
        0,
        2,
    )
    kinds = [op.kind for op in profile.ops]
    assert kinds == ["memcpy", "kernel", "kernel", "memset", "collective"]
    copy, gemm, elementwise, memset, nccl = profile.ops
    assert (copy.direction, copy.bytes, copy.region) == ("HtoD", 1 << 20, None)
    assert gemm.op_name == "aten::mm" and gemm.input_dims == ((4096, 2048), (2048, 8192))
    assert (gemm.grid, gemm.block, gemm.region) == ((64, 32, 1), (128, 1, 1), "forward")
    assert elementwise.op_name is None and memset.bytes == 4096
    assert (nccl.collective, nccl.bytes, nccl.group_size) == ("allreduce", 4 << 20, 2)
    assert profile.span_us == 1100
    assert profile.streams() == [(0, 7), (0, 20)]


def test_kernels_map_to_the_tiled_model_or_scale_by_the_documented_rule() -> None:
    a100, h100 = gpu_record("A100 SXM4 40GB"), gpu_record("H100 SXM5 80GB")
    assert match_gpu("NVIDIA A100-SXM4-40GB") == a100
    imported = import_trace(read_kineto(kineto_trace()), measured=a100, target=h100)
    report = imported.report
    assert report["rules"] == {"link": 1, "gemm": 1, "bandwidth": 2, "network": 1}
    shape = {"kind": "gemm", "M": 4096, "N": 8192, "K": 2048, "tileM": 128, "tileN": 128,
             "tileK": 32, "precision": "bf16"}  # fmt: skip
    gemm_us = computation_estimate(h100.attributes, shape).time_s * 1e6
    ratio = dram_bandwidth(a100.attributes) / dram_bandwidth(h100.attributes)  # type: ignore[operator]
    assert 0.3 < ratio < 1  # an H100's HBM3 is faster than an A100's HBM2
    app = imported.app_source
    assert f"{gemm_us:.6g}, 'gemm')  # gemm M=4096 N=8192 K=2048" in app
    assert f"kernel('at::native::vectorized_elementwise_kernel', (4096, 1, 1), (128, 1, 1), 50, {50 * ratio:.6g}, 'bandwidth')" in app  # fmt: skip
    # the all-reduce's kernel name says RING: the simulator's ring, over the network
    assert "collective('allreduce', 4194304, 2, 300, 'ring')" in app
    assert "    # forward\n" in app
    assert report["predicted_busy_us"] == pytest.approx(gemm_us + (50 + 4) * ratio)
    assert [row["name"] for row in report["unmapped"]] == [
        "at::native::vectorized_elementwise_kernel",
        "Memset",
    ]
    # the tiled model on the measured GPU against the measured 500 us
    model_a100 = computation_estimate(a100.attributes, shape).time_s * 1e6
    assert report["tiled_model_on_measured_gpu"]["median_ratio"] == pytest.approx(model_a100 / 500)


def test_the_imported_model_replays_the_measured_durations_on_its_snapshot() -> None:
    profile = read_kineto(kineto_trace())
    a100 = gpu_record("A100 SXM4 40GB")
    imported = import_trace(profile, measured=a100, ranks=2)
    assert imported.labels == {"S7": 2, "H7": 2, "S20": 2, "H20": 2}
    compile(imported.app_source, "app.py", "exec")

    def run(source: str) -> dict[str, Any]:
        result = run_simulation(imported.snapshot, source, labels=imported.labels, variables={})
        return {
            "overall": result["overall_time_s"],
            **{r["process"]: r for r in result["processes"]},
        }

    # launched when the trace shows them starting, each operation runs when it ran: the
    # replay spans the trace
    rows = run(imported.app_source)
    assert rows["overall"] == pytest.approx(profile.span_us * 1e-6, abs=1e-12)
    for rank in (0, 1):
        s7 = rows[f"S7[{rank}]"]
        # the copy, the kernels and the memset take their measured time
        assert s7["compute_s"] == pytest.approx((40 + 500 + 50 + 4) * 1e-6, abs=1e-12)
        assert s7["finish_s"] == pytest.approx(764e-6, abs=1e-12)
        assert rows[f"S20[{rank}]"]["compute_s"] == pytest.approx(300e-6, abs=1e-12)
    # without the gaps, one after another: the busiest stream's busy time
    rows = run(imported.app_source.replace("GAPS = True", "GAPS = False"))
    assert rows["overall"] == pytest.approx(594e-6, abs=1e-12)
    assert rows["S7[1]"]["finish_s"] == pytest.approx(594e-6, abs=1e-12)


def test_predicted_times_send_the_copies_over_the_link_and_run_the_predicted_kernels() -> None:
    profile = read_kineto(kineto_trace())
    a100, h100 = gpu_record("A100 SXM4 40GB"), gpu_record("H100 SXM5 80GB")
    imported = import_trace(profile, measured=a100, target=h100)
    ratio = dram_bandwidth(a100.attributes) / dram_bandwidth(h100.attributes)  # type: ignore[operator]

    def run(source: str) -> dict[str, Any]:
        result = run_simulation(imported.snapshot, source, labels=imported.labels, variables={})
        return {
            "overall": result["overall_time_s"],
            **{r["process"]: r for r in result["processes"]},
        }

    rows = run(imported.app_source.replace("GAPS = True", "GAPS = False"))
    predicted = imported.report["predicted_busy_us"]
    assert rows["S7[0]"]["compute_s"] == pytest.approx(predicted * 1e-6, rel=1e-5)
    # 1 MiB host to device over the snapshot's PCIe 4.0 x16: t_s + n / bw (eq. 4.6)
    link_s = 3.97e-6 + (1 << 20) / 31.5e9
    assert rows["S7[0]"]["comm_s"] + rows["S7[0]"]["wait_s"] == pytest.approx(link_s, rel=1e-9)
    assert rows["H7[0]"]["finish_s"] == pytest.approx(link_s, rel=1e-9)
    # with the gaps the faster GPU waits for the host's launches: the memset, launched at
    # 760 us, ends the stream
    rows = run(imported.app_source)
    # (the source carries 6 significant digits of each predicted time)
    assert rows["S7[0]"]["finish_s"] == pytest.approx((760 + 4 * ratio) * 1e-6, rel=1e-6)
    assert rows["overall"] == pytest.approx(1100e-6, rel=1e-9)
    assert imported.snapshot["hardware"]["gpu"]["name"] == "H100 SXM5 80GB"


def test_an_nsight_systems_export_reads_its_tables(tmp_path: Path) -> None:
    path = tmp_path / "report.sqlite"
    db = sqlite3.connect(path)
    db.executescript(
        """
        CREATE TABLE StringIds (id INTEGER PRIMARY KEY, value TEXT NOT NULL);
        CREATE TABLE TARGET_INFO_GPU (id INTEGER, name TEXT, smCount INTEGER);
        CREATE TABLE CUPTI_ACTIVITY_KIND_KERNEL (start INT, end INT, deviceId INT, contextId INT,
            streamId INT, correlationId INT, globalPid INT, demangledName INT, shortName INT,
            gridX INT, gridY INT, gridZ INT, blockX INT, blockY INT, blockZ INT);
        CREATE TABLE CUPTI_ACTIVITY_KIND_MEMCPY (start INT, end INT, deviceId INT, contextId INT,
            streamId INT, correlationId INT, globalPid INT, bytes INT, copyKind INT,
            srcKind INT, dstKind INT);
        CREATE TABLE CUPTI_ACTIVITY_KIND_RUNTIME (start INT, end INT, eventClass INT,
            globalTid INT, correlationId INT, nameId INT, returnValue INT);
        CREATE TABLE NVTX_EVENTS (start INT, end INT, eventType INT, rangeId INT, category INT,
            color INT, text TEXT, globalTid INT, endGlobalTid INT, textId INT, domainId INT);
        INSERT INTO StringIds VALUES (1, 'ampere_bf16_s16816gemm_bf16_256x128_ldg8_f2f_nn'),
            (2, 'ampere_bf16_s16816gemm'), (3, 'ncclDevKernel_AllGather_RING_LL(ncclDevComm*)'),
            (4, 'ncclDevKernel_AllGather_RING_LL'), (5, 'step 3');
        INSERT INTO TARGET_INFO_GPU VALUES (0, 'NVIDIA H100 80GB HBM3', 132);
        INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL VALUES
            (2000000, 2250000, 0, 1, 7, 101, 1, 1, 2, 120, 2, 1, 256, 1, 1),
            (2300000, 2400500, 0, 1, 13, 102, 1, 3, 4, 16, 1, 1, 512, 1, 1);
        INSERT INTO CUPTI_ACTIVITY_KIND_MEMCPY VALUES
            (1000000, 1100000, 0, 1, 7, 100, 1, 8388608, 1, 0, 1),
            (2500000, 2510000, 0, 1, 7, 103, 1, 65536, 2, 1, 0);
        INSERT INTO CUPTI_ACTIVITY_KIND_RUNTIME VALUES (1900000, 1900100, 0, 42, 101, 0, 0);
        INSERT INTO NVTX_EVENTS VALUES (1800000, 1950000, 59, 0, 0, 0, NULL, 42, 42, 5, 0);
        """
    )
    db.commit()
    db.close()
    profile = read_trace(path)
    assert (profile.source, profile.gpu_name, profile.sms) == ("nsys", "NVIDIA H100 80GB HBM3", 132)
    copy_in, gemm, nccl, copy_out = profile.ops
    assert (copy_in.direction, copy_in.bytes, copy_in.start_us, copy_in.dur_us) == (
        "HtoD",
        8388608,
        1000.0,
        100.0,
    )
    assert (gemm.kind, gemm.grid, gemm.block, gemm.dur_us) == (
        "kernel",
        (120, 2, 1),
        (256, 1, 1),
        250.0,
    )
    assert gemm.region == "step 3"  # the NVTX range around its launch on the launching thread
    assert (nccl.kind, nccl.collective, nccl.stream, nccl.dur_us) == (
        "collective",
        "allgather",
        13,
        100.5,
    )
    assert copy_out.direction == "DtoH" and copy_out.region is None
    imported = import_trace(profile)
    assert imported.report["rules"] == {"link": 2, "bandwidth": 1, "measured": 1}
    # a GEMM without its operator's shapes is reported as not mapped, with its measured time
    assert imported.report["unmapped"] == [
        {
            "name": "ampere_bf16_s16816gemm_bf16_256x128_ldg8_f2f_nn",
            "count": 1,
            "measured_us": 250.0,
        }
    ]


def test_bad_traces_are_refused_with_the_field_at_fault(tmp_path: Path) -> None:
    trace = kineto_trace()
    trace["traceEvents"][3]["dur"] = -1
    with pytest.raises(TraceError, match=r"traceEvents\[3\]\.dur must be a number >= 0"):
        read_kineto(trace, name="t.json")
    with pytest.raises(TraceError, match="'traceEvents' must be a list"):
        read_kineto({"traceEvents": {}})
    bad = tmp_path / "bad.json"
    bad.write_text("{not json")
    with pytest.raises(TraceError, match="neither an Nsight Systems SQLite export nor JSON"):
        read_trace(bad)
    empty = tmp_path / "empty.sqlite"
    sqlite3.connect(empty).execute("CREATE TABLE x (a INT)").connection.commit()
    with pytest.raises(TraceError, match="no table CUPTI_ACTIVITY_KIND_KERNEL"):
        read_trace(empty)


def test_kernel_names_read_short() -> None:
    assert short_name(ELEMENTWISE) == "at::native::vectorized_elementwise_kernel"
    assert (
        short_name("void at::native::(anonymous namespace)::cat_kernel<float>(float*)")
        == "at::native::cat_kernel"
    )
    assert short_name(GEMM_NAME) == GEMM_NAME


def test_import_trace_writes_the_model_snapshot_and_report_and_they_run(tmp_path: Path) -> None:
    source = tmp_path / "trace.json.gz"
    source.write_bytes(gzip.compress(json.dumps(kineto_trace()).encode()))
    app, snapshot, report = tmp_path / "app.py", tmp_path / "system.json", tmp_path / "r.json"
    out, err = io.StringIO(), io.StringIO()
    status = main(
        [
            "import-trace",
            str(source),
            "-o",
            str(app),
            "--snapshot",
            str(snapshot),
            "--report",
            str(report),
            "--target-gpu",
            "H100 SXM5 80GB",
        ],
        stdout=out,
        stderr=err,
    )
    assert status == 0, err.getvalue()
    assert "Not mapped to a kernel model (2 names" in out.getvalue()
    assert "Labels:     S7=1,H7=1,S20=1,H20=1" in out.getvalue()
    assert json.loads(report.read_text())["measured_record"] == "A100 SXM4 40GB"
    labels = ",".join(f"{k}={v}" for k, v in json.loads(report.read_text())["labels"].items())
    status = main(
        ["run", "--system", str(snapshot), "--app", str(app), "--labels", labels, "--no-sandbox"],
        stdout=out,
        stderr=err,
    )
    assert status == 0, err.getvalue()

    missing_target = tmp_path / "other.py"
    status = main(
        ["import-trace", str(source), "-o", str(missing_target), "--target-gpu", "Z9000"],
        stdout=out,
        stderr=err,
    )
    assert status == 2 and "no GPU record 'Z9000'" in err.getvalue()
    assert not missing_target.exists()  # nothing half-written


def test_a_kernel_without_its_operator_s_id_finds_the_operator_around_its_launch() -> None:
    # Older Kineto traces give a kernel the launch's correlation as its External id: the
    # operator is the innermost one with shapes around the runtime call of that correlation.
    trace = kineto_trace()
    outer: dict[str, Any] = {"ph": "X", "cat": "cpu_op", "name": "aten::linear", "pid": 1, "tid": 2, "ts": 2000,
             "dur": 100, "args": {"External id": 90, "Input Dims": [[256, 512], [1024, 512], [1024]],
                                  "Input type": ["float", "float", "float"]}}  # fmt: skip
    inner: dict[str, Any] = {**outer, "name": "aten::addmm", "ts": 2010, "dur": 50,
             "args": {"External id": 91, "Input Dims": [[1024], [256, 512], [512, 1024], [], []],
                      "Input type": ["float", "float", "float", "Scalar", "Scalar"]}}  # fmt: skip
    sibling = {**inner, "ts": 2065, "dur": 10, "args": {**inner["args"], "External id": 92}}
    launch = {"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1, "tid": 2,
              "ts": 2030, "dur": 5, "args": {"External id": 7777, "correlation": 7777}}  # fmt: skip
    kernel = {"ph": "X", "cat": "kernel", "pid": 0, "tid": 7, "ts": 2100, "dur": 30,
              "name": "void cutlass::Kernel<cutlass_80_tensorop_s1688gemm_64x64_16x6_nt_align4>()",
              "args": {"External id": 7777, "correlation": 7777, "stream": 7, "device": 0,
                       "grid": [4, 16, 1], "block": [128, 1, 1]}}  # fmt: skip
    trace["traceEvents"] += [outer, inner, sibling, launch, kernel]
    profile = read_kineto(trace)
    gemm = next(op for op in profile.ops if op.start_us == 2100)
    assert gemm.op_name == "aten::addmm" and gemm.input_dims == (
        (1024,),
        (256, 512),
        (512, 1024),
        (),
        (),
    )
    mapped = import_trace(profile, measured=gpu_record("A100 SXM4 40GB")).app_source
    name = "cutlass::Kernel<cutlass_80_tensorop_s1688gemm_64x64_16x6_nt_align4>"
    assert f"kernel('{name}', (4, 16, 1), (128, 1, 1), 30)  # gemm M=256 N=1024 K=512 tileM=64 tileN=64 tileK=16 precision=tf32" in mapped  # fmt: skip


def test_split_k_launches_and_a_gemm_operator_s_other_kernels() -> None:
    def op(name: str, grid: tuple[int, int, int], dims: Any) -> GpuOp:
        return GpuOp("kernel", name, 0, 7, 0.0, 10.0, grid=grid, block=(128, 1, 1),
                     op_name="aten::mm", input_dims=dims, input_types=("float", "float"))  # fmt: skip

    # 216 blocks for one output tile: K is split in 216 slices
    name = "void cutlass::Kernel<cutlass_80_tensorop_s1688gemm_128x64_16x6_nt_align4>(P)"
    split = op(name, (1, 1, 216), ((15, 327680), (327680, 72)))
    shape = gemm_shape(split)
    assert shape is not None and shape["splitK"] == 216
    # the tiled model splits K (gemm-model.md G.8): 216 slices of each output tile
    record = gpu_record("A100 SXM4 40GB").attributes
    sliced = computation_estimate(record, {**shape, "precision": "tf32"})
    whole_k = computation_estimate(record, {**shape, "precision": "tf32", "splitK": 1})
    assert sliced.tiles == 216 * whole_k.tiles
    assert sliced.flops == pytest.approx(whole_k.flops, rel=0.01)
    assert sliced.tensor_s < whole_k.tensor_s / 50  # 432 tiles in 4 waves on 108 SMs
    # as many blocks as tiles: no split
    whole = gemm_shape(op(name, (64, 2, 1), ((8192, 1024), (1024, 128))))
    assert whole is not None and "splitK" not in whole
    # cuBLASLt's epilogue, launched by the same operator, is not a GEMM for its parameters' types
    epilogue = op("void epilogue::impl::globalKernel<float>(int, cublasLtEpilogue_t)", (5, 1, 1),
                  ((2048, 32), (32, 160)))  # fmt: skip
    profile = TraceProfile("kineto", None, None, 0, 1, [split, epilogue])
    rules = [entry.rule for entry in map_ops(profile, gpu_record("A100 SXM4 40GB"), None)]
    assert rules == ["gemm", "bandwidth"]


@pytest.mark.parametrize(
    ("trace_name", "record"),
    [
        ("NVIDIA A100-SXM4-80GB", "A100 SXM4 80GB"),
        ("NVIDIA A100-PG509-200", "A100 SXM4 40GB"),  # no memory, no form: the first SXM
        ("Tesla V100-SXM2-32GB", "Tesla V100 SXM2 16GB"),  # the catalogue's only V100
        ("NVIDIA H100 80GB HBM3", "H100 SXM5 80GB"),
        ("NVIDIA H100 PCIe", "H100 PCIe 80GB"),
        ("NVIDIA GeForce RTX 4090", "GeForce RTX 4090"),
        ("NVIDIA Z9", None),
        (None, None),
    ],
)
def test_a_trace_s_gpu_name_matches_its_catalogue_record(
    trace_name: str | None, record: str | None
) -> None:
    matched = match_gpu(trace_name)
    assert (matched.name if matched else None) == record


def test_a_trace_s_names_stay_comments_in_the_generated_model() -> None:
    """A GPU name, an annotation range or a file name holding a line break cannot end its
    comment and put code into the model: they are untrusted text from the trace."""
    trace = kineto_trace()
    trace["deviceProperties"][0]["name"] = "A100\nimport os  # INJECTED"
    for event in trace["traceEvents"]:
        if event.get("cat") == "gpu_user_annotation":
            event["name"] = "forward\r\nimport sys  # INJECTED"
    profile = read_kineto(trace, name="t.json")
    source = import_trace(profile, source_name="t\nprint('INJECTED')").app_source
    compile(source, "model.py", "exec")
    tokens = tokenize.generate_tokens(io.StringIO(source).readline)
    outside = [t.string for t in tokens if t.type != tokenize.COMMENT and "INJECTED" in t.string]
    assert outside == []
    assert source.count("INJECTED") == 3
    assert "# Measured on: A100\\nimport os  # INJECTED" in source


def test_a_compressed_trace_is_refused_past_its_limit_before_it_is_read_whole(
    tmp_path: Path,
) -> None:
    body = json.dumps(kineto_trace()).encode()
    path = tmp_path / "bomb.json.gz"
    path.write_bytes(gzip.compress(body + b" " * (4 << 20)))
    assert path.stat().st_size < 64 << 10
    with pytest.raises(TraceError, match=r"bomb\.json\.gz holds more than 1048576 bytes of JSON"):
        read_trace(path, max_json_bytes=1 << 20)
    assert read_trace(path).gpu_name == "NVIDIA A100-SXM4-40GB"  # no limit: read as before
    small = tmp_path / "small.json.gz"
    small.write_bytes(gzip.compress(body))
    assert read_trace(small, max_json_bytes=len(body)).gpu_name == "NVIDIA A100-SXM4-40GB"
    raw = tmp_path / "raw.json"
    raw.write_bytes(body)
    with pytest.raises(TraceError, match=r"raw\.json holds more than"):
        read_trace(raw, max_json_bytes=len(body) - 1)


def test_an_export_s_schema_cannot_make_values_past_the_limit(tmp_path: Path) -> None:
    """A generated column can compute a value of any size on each read: an uploaded export is
    untrusted, so values are read under a length limit."""
    path = tmp_path / "bomb.sqlite"
    db = sqlite3.connect(path)
    db.executescript(
        """
        CREATE TABLE StringIds (id INTEGER PRIMARY KEY,
            value TEXT GENERATED ALWAYS AS (printf('%.*c', 32000000, 'x')) VIRTUAL);
        CREATE TABLE CUPTI_ACTIVITY_KIND_KERNEL (start INT, end INT, deviceId INT,
            streamId INT, correlationId INT, demangledName INT,
            gridX INT, gridY INT, gridZ INT, blockX INT, blockY INT, blockZ INT);
        INSERT INTO StringIds (id) VALUES (1);
        INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL VALUES (0, 10, 0, 7, 1, 1, 1, 1, 1, 1, 1, 1);
        """
    )
    db.commit()
    db.close()
    with pytest.raises(TraceError, match="demangledName 1 is not in StringIds"):
        read_trace(path)
