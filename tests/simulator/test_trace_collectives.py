"""NCCL calls of an imported trace become the simulator's collectives (issue 43 item 7):
kind, size and algorithm from the kernel's name and PyTorch's record_param_comms, replayed
over the snapshot's network; what cannot be mapped keeps its measured time and is reported."""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

import pytest

from simulator.cli import main
from simulator.errors import UserCodeError
from simulator.runner import run_simulation
from simulator.trace_import import collective_kind, nccl_name_parts, read_kineto
from simulator.trace_model import (
    MSG_NO_CALL,
    MSG_NO_SIZE,
    MSG_NVLS_FALLBACK,
    collective_algorithm,
    gpu_record,
    import_trace,
)

ALLGATHER = "ncclDevKernel_AllGather_RING_LL(ncclDevComm*, unsigned long, ncclWork*)"
REDUCE_SCATTER = "ncclDevKernel_ReduceScatter_Sum_bf16_RING_LL(ncclDevComm*, unsigned long)"
ALLREDUCE_TREE = "ncclKernel_AllReduce_TREE_LL_Sum_float(ncclDevComm*, unsigned long, ncclWork*)"
ALLREDUCE_RING = "ncclDevKernel_AllReduce_Sum_f32_RING_LL(ncclDevComm*, unsigned long, ncclWork*)"
SENDRECV = "ncclDevKernel_SendRecv(ncclDevComm*, unsigned long, ncclWork*)"


def event(cat: str, name: str, ts: float, dur: float, **args: Any) -> dict[str, Any]:
    pid, tid = (0, 20) if cat == "kernel" else (1, 1)
    if cat == "kernel":
        args = {"device": 0, "stream": 20, **args}
    return {"ph": "X", "cat": cat, "name": name, "pid": pid, "tid": tid, "ts": ts, "dur": dur,
            "args": args}  # fmt: skip


def comms(name: str, nelems_in: int, nelems_out: int, dtype: str, **args: Any) -> dict[str, Any]:
    return {"Collective name": name, "In msg nelems": nelems_in, "Out msg nelems": nelems_out,
            "dtype": dtype, "Group size": 2, **args}  # fmt: skip


def nccl_trace() -> dict[str, Any]:
    """Six NCCL calls on stream 20 of rank 0 of 2, their sizes where PyTorch recorded them:
    on the kernel's own args, on the record_param_comms with the kernel's External id, on
    the one around the kernel's launch; a TREE all-reduce; a send; a barrier; an all-reduce
    with no size."""
    return {
        "deviceProperties": [{"name": "NVIDIA A100-SXM4-40GB", "numSms": 108}],
        "distributedInfo": {"rank": 0, "world_size": 2},
        "traceEvents": [
            # an all-gather of 1 Ki BF16 per rank: 4 KiB out, its sizes by External id
            event("cpu_op", "record_param_comms", 0, 5,
                  **comms("_allgather_base", 1024, 2048, "BFloat16", **{"External id": 7})),
            event("kernel", ALLGATHER, 10, 40, **{"External id": 7}),
            # a reduce-scatter: its record_param_comms holds the launch (correlation 9)
            event("cpu_op", "record_param_comms", 60, 10,
                  **comms("reduce_scatter_tensor", 1 << 20, 1 << 19, "BFloat16")),
            event("cuda_runtime", "cudaLaunchKernel", 62, 2, correlation=9),
            event("kernel", REDUCE_SCATTER, 80, 50, correlation=9),
            # the kernel's own args (as PyTorch 2 writes them)
            event("kernel", ALLREDUCE_TREE, 140, 60, **comms("allreduce", 1 << 18, 1 << 18, "Float")),
            event("kernel", SENDRECV, 210, 30, **comms("send", 4096, 4096, "Float")),
            event("kernel", ALLREDUCE_RING, 250, 20, **comms("barrier", 1, 1, "Float")),
            event("kernel", ALLREDUCE_RING, 280, 70),  # no record of its size
        ],
    }  # fmt: skip


def test_nccl_names_give_the_kind_algorithm_protocol_and_type() -> None:
    assert nccl_name_parts(ALLREDUCE_RING) == ("RING", "LL", 4)
    assert nccl_name_parts(REDUCE_SCATTER) == ("RING", "LL", 2)
    assert nccl_name_parts(ALLREDUCE_TREE) == ("TREE", "LL", 4)
    assert nccl_name_parts(SENDRECV) == (None, None, None)
    assert [collective_kind(n) for n in ("_allgather_base", "reduce_scatter_tensor_coalesced",
            "all_to_all", "recv", "nccl:all_reduce", "allreduce_coalesced", "spam")] == [
        "allgather", "reduceScatter", "alltoall", "sendrecv", "allreduce", "allreduce", None]  # fmt: skip
    assert collective_algorithm("allreduce", "TREE") == "double_binary_tree"
    assert collective_algorithm("allgather", "RING") == "ring"
    assert collective_algorithm("allgather", "NVLS") == "auto"  # NVLS's allgather: not modelled
    assert collective_algorithm("allreduce", "NVLS") == "nvls"
    assert collective_algorithm("allreduce", "NVLS_TREE") == "auto"  # NVLS over nodes: neither


def test_each_call_gets_its_kind_size_and_algorithm_from_the_kernel_or_its_operator() -> None:
    ops = read_kineto(nccl_trace()).ops
    assert [(op.kind, op.collective, op.bytes, op.algorithm, op.protocol) for op in ops] == [
        ("collective", "allgather", 2048 * 2, "RING", "LL"),
        ("collective", "reduceScatter", (1 << 20) * 2, "RING", "LL"),
        ("collective", "allreduce", (1 << 18) * 4, "TREE", "LL"),
        ("collective", "sendrecv", 4096 * 4, None, None),
        ("collective", "barrier", 4, "RING", "LL"),
        ("collective", "allreduce", None, "RING", "LL"),
    ]
    assert {op.group_size for op in ops[:5]} == {2}


def test_the_model_calls_the_collectives_and_reports_what_it_could_not_map() -> None:
    a100, h100 = gpu_record("A100 SXM4 40GB"), gpu_record("H100 SXM5 80GB")
    imported = import_trace(read_kineto(nccl_trace()), measured=a100, target=h100, ranks=2)
    app = imported.app_source
    assert "collective('allgather', 4096, 2, 40, 'ring')" in app
    assert "collective('reduceScatter', 2097152, 2, 50, 'ring')" in app
    assert "collective('allreduce', 1048576, 2, 60, 'double_binary_tree')" in app
    assert "collective('sendrecv', 16384, 2, 30, 'auto')" in app
    report = imported.report["collectives"]
    assert report["network"] == {
        "allgather ring": 1,
        "reduceScatter ring": 1,
        "allreduce double_binary_tree": 1,
        "sendrecv auto": 1,
    }
    assert report["unmapped"] == [
        {"name": "ncclDevKernel_AllReduce_Sum_f32_RING_LL", "reason": MSG_NO_SIZE,
         "count": 1, "measured_us": 70.0},
        {"name": "ncclDevKernel_AllReduce_Sum_f32_RING_LL",
         "reason": MSG_NO_CALL.format(kind="barrier"), "count": 1, "measured_us": 20.0},
    ]  # fmt: skip
    assert report["fabric"] == "dgx-h100" and "group_mismatch" not in report
    # one more rank than the trace's groups: said so
    four = import_trace(read_kineto(nccl_trace()), measured=a100, target=h100, ranks=4)
    assert four.report["collectives"]["group_mismatch"]["trace_groups"] == {"2": 5}


def allreduce_only() -> dict[str, Any]:
    return {
        "deviceProperties": [{"name": "NVIDIA A100-SXM4-40GB"}],
        "traceEvents": [
            event("kernel", ALLREDUCE_RING, 0, 300, **comms("allreduce", 1 << 24, 1 << 24, "Float"))
        ],
    }


def comm_time(system: str, source: str | None = None) -> float:
    a100, h100 = gpu_record("A100 SXM4 40GB"), gpu_record("H100 SXM5 80GB")
    imported = import_trace(
        read_kineto(allreduce_only()), measured=a100, target=h100, ranks=2, system=system
    )
    result = run_simulation(
        imported.snapshot, source or imported.app_source, labels=imported.labels, variables={}
    )
    rows = {row["process"]: row for row in result["processes"]}
    return float(rows["S20[0]"]["finish_s"])


def test_a_replayed_all_reduce_is_the_simulator_s_ring_over_the_chosen_system() -> None:
    # the same call written by hand on the same snapshot takes the same time
    by_hand = "if tag == 'S20':\n    sim.allreduce(67108864, 'S20', 'ring')\n"
    for system in ("dgx-a100", "dgx-h100"):
        assert comm_time(system) == pytest.approx(comm_time(system, by_hand), rel=1e-9)
    # 64 MiB over NVLink, not the 300 us the A100 pair took: at least its two ring steps'
    # 32 MiB over the link, and the faster the system's NVLink (DGX A100's 300 GB/s a
    # direction, DGX H100's 450, DGX B200's 900), the sooner
    a100, h100, b200 = comm_time("dgx-a100"), comm_time("dgx-h100"), comm_time("dgx-b200")
    assert a100 > h100 > b200 > 2 * 32 * 2**20 / 900e9
    assert h100 != pytest.approx(300e-6, rel=0.05)


def test_measured_collectives_and_a_single_rank_keep_the_measured_time() -> None:
    a100 = gpu_record("A100 SXM4 40GB")
    imported = import_trace(read_kineto(allreduce_only()), measured=a100, ranks=2)
    assert 'COLLECTIVES = "measured"' in imported.app_source
    result = run_simulation(
        imported.snapshot, imported.app_source, labels=imported.labels, variables={}
    )
    assert result["overall_time_s"] == pytest.approx(300e-6, rel=1e-9)
    one = import_trace(read_kineto(allreduce_only()), measured=a100, target=a100, ranks=1)
    assert "one rank" in one.report["collectives"]["note"]


def test_the_command_line_takes_the_system_and_reports_the_calls(tmp_path: Path) -> None:
    source = tmp_path / "nccl.json"
    source.write_text(json.dumps(nccl_trace()))
    snapshot = tmp_path / "system.json"
    out, err = io.StringIO(), io.StringIO()
    argv = ["import-trace", str(source), "-o", str(tmp_path / "app.py"), "--ranks", "2",
            "--target-gpu", "H100 SXM5 80GB", "--snapshot", str(snapshot)]  # fmt: skip
    assert main([*argv, "--system", "dgx-b200"], stdout=out, stderr=err) == 0, err.getvalue()
    text = out.getvalue()
    assert "NCCL calls: 6; as collectives over dgx-b200: allgather ring 1," in text
    assert f"kept measured: 1 x ncclDevKernel_AllReduce_Sum_f32_RING_LL: {MSG_NO_SIZE}" in text
    system = json.loads(snapshot.read_text())
    assert system["hardware"]["nvswitch"]["attributes"]["bandwidth"] == 900e9
    assert main([*argv, "--system", "dgx-z"], stdout=out, stderr=err) == 2
    assert "no cluster template 'dgx-z'" in err.getvalue()


ALLREDUCE_NVLS = "ncclDevKernel_AllReduce_Sum_bf16_NVLS(ncclDevComm*, unsigned long, ncclWork*)"
ALLREDUCE_NVLS_TREE = "ncclDevKernel_AllReduce_Sum_bf16_NVLS_TREE(ncclDevComm*, unsigned long)"


def nvls_trace() -> dict[str, Any]:
    """An H100 rank's two all-reduces of 8 MiB BF16: one by NCCL's NVLS, one by NVLS_TREE."""
    return {
        "deviceProperties": [{"name": "NVIDIA H100 80GB HBM3"}],
        "traceEvents": [
            event("kernel", ALLREDUCE_NVLS, 0, 40, **comms("allreduce", 1 << 22, 1 << 22, "BFloat16")),
            event("kernel", ALLREDUCE_NVLS_TREE, 50, 40,
                  **comms("allreduce", 1 << 22, 1 << 22, "BFloat16")),
        ],
    }  # fmt: skip


def replay(system: str, ranks: int = 2) -> tuple[Any, dict[str, Any]]:
    h100 = gpu_record("H100 SXM5 80GB")
    imported = import_trace(
        read_kineto(nvls_trace()), measured=h100, target=h100, ranks=ranks, system=system
    )
    result = run_simulation(
        imported.snapshot, imported.app_source, labels=imported.labels, variables={}
    )
    return imported, dict(result)


def test_an_nvls_all_reduce_replays_as_nvls_where_the_switch_supports_it() -> None:
    assert nccl_name_parts(ALLREDUCE_NVLS) == ("NVLS", None, 2)
    assert nccl_name_parts(ALLREDUCE_NVLS_TREE)[0] == "NVLS_TREE"
    for system in ("dgx-h100", "dgx-b200"):
        imported, result = replay(system)
        assert "collective('allreduce', 8388608, 2, 40, 'nvls')" in imported.app_source
        assert imported.snapshot["hardware"]["nvswitch"]["attributes"]["nvls"] == 1
        # NVLS_TREE (multi-node NVLS) is not modelled: the simulator picks, and says why
        assert "collective('allreduce', 8388608, 2, 40, 'auto')  # NCCL's NVLS_TREE" in (
            imported.app_source
        )
        report = imported.report["collectives"]
        assert report["network"] == {"allreduce nvls": 1, "allreduce auto": 1}
        assert not any("NVLS ran" in note for note in report["notes"])
        # the replay runs NCCL's NVLS, and the simulator's choice (ideal: the ring) for the other
        algorithms = [call["algorithm"] for call in result["collectives"]]
        assert algorithms == ["nvls", "ring"]


def test_an_nvls_all_reduce_on_a_switch_without_nvls_falls_back_with_a_note() -> None:
    # replayed on a DGX A100 (no NVLink SHARP) or over two nodes: it runs, as NCCL would run
    # another algorithm there, and the model's line and the report say why
    a100, result = replay("dgx-a100")
    assert "nvls" not in a100.snapshot["hardware"]["nvswitch"]["attributes"]
    note = MSG_NVLS_FALLBACK.format(why="dgx-a100 NVSwitch has no NVLink SHARP ('nvls')")
    assert f"collective('allreduce', 8388608, 2, 40, 'auto')  # {note}" in a100.app_source
    assert a100.report["collectives"]["notes"][note] == 1
    assert [call["algorithm"] for call in result["collectives"]] == ["ring", "ring"]
    over_two, result = replay("dgx-h100", 16)
    assert "16 ranks are on 2 dgx-h100 nodes" in next(iter(over_two.report["collectives"]["notes"]))
    assert all(call["algorithm"] != "nvls" for call in result["collectives"])


def test_a_model_made_for_an_nvls_switch_is_refused_on_a_switch_without_it() -> None:
    h100 = gpu_record("H100 SXM5 80GB")
    imported = import_trace(read_kineto(nvls_trace()), measured=h100, target=h100, ranks=2)
    snapshot = imported.snapshot
    del snapshot["hardware"]["nvswitch"]["attributes"]["nvls"]
    with pytest.raises(UserCodeError) as error:
        run_simulation(snapshot, imported.app_source, labels=imported.labels, variables={})
    assert "algorithm 'nvls' needs every participant on one switch" in str(error.value)
    assert "(attribute 'nvls' = 1)" in str(error.value)


def test_the_command_line_prints_why_an_nvls_call_falls_back(tmp_path: Path) -> None:
    source = tmp_path / "nvls.json"
    source.write_text(json.dumps(nvls_trace()))
    out, err = io.StringIO(), io.StringIO()
    argv = ["import-trace", str(source), "-o", str(tmp_path / "app.py"), "--ranks", "2",
            "--target-gpu", "H100 SXM5 80GB", "--system", "dgx-a100"]  # fmt: skip
    assert main(argv, stdout=out, stderr=err) == 0, err.getvalue()
    note = MSG_NVLS_FALLBACK.format(why="dgx-a100 NVSwitch has no NVLink SHARP ('nvls')")
    assert f"  note: 1 x {note}" in out.getvalue()
