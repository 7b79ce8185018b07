"""The sandbox child started ahead of its run (simulator.sandbox.launch) and its use by the sandbox,
the command line and a process that runs simulation after simulation."""

from __future__ import annotations

import fcntl
import io
import json
import os
import sys
import time
from collections.abc import Mapping
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from simulator import cli, engine, runner
from simulator.cli.common import write_json
from simulator.errors import (
    ModelEvaluationError,
    SandboxLimitError,
    SimulationError,
    UserCodeError,
)
from simulator.runner import run_simulation
from simulator.sandbox import (
    Limits,
    child,
    child_entry,
    entry_address,
    entry_for,
    parent,
    preparation,
    run_sandboxed,
)
from simulator.sandbox.child import SPARE_ISOLATES, WRITE_AT_BYTES
from simulator.sandbox.launch import (
    DEFAULT_ENTRY,
    FreshStart,
    SpareChild,
    StartedChild,
    start_child,
    start_child_for,
)
from simulator.sandbox.served import RESULT_PIPE_BYTES, ZYGOTE
from simulator.sandbox.wire import encode_json, encode_message
from simulator.snapshot import SystemSnapshot, load_snapshot
from tests.simulator.huge_pages import MALLOC_HUGE_PAGES

THIS = "tests.simulator.test_launch"
ENTRY_PID = f"{THIS}:entry_pid"
LIMITS = Limits(wall_s=20, cpu_s=10)
EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "merpsys_gtx970"


@child_entry(needs_v8=lambda payload: needs_v8(payload))
def entry_pid(**_: object) -> dict[str, Any]:
    return {"status": "finished", "pid": os.getpid(), "cwd": os.getcwd()}


ENTRY_ORPHAN = f"{THIS}:entry_orphan"


@child_entry(needs_v8=lambda payload: False)
def entry_orphan(**_: object) -> dict[str, Any]:
    """Leave a process behind in the run's group: it is killed with the group at the end."""
    left = os.fork()
    if left == 0:
        time.sleep(60)
        os._exit(0)
    return {"status": "finished", "left": left}


ENTRY_V8 = f"{THIS}:entry_v8"


@child_entry(needs_v8=lambda payload: bool(payload.get("v8", True)))
def entry_v8(**_: object) -> dict[str, Any]:
    dll = sys.modules.get("py_mini_racer._dll")
    return {"status": "finished", "v8_loaded": getattr(dll, "_dll_handle", None) is not None}


def v8_mapped(pid: int) -> bool:
    """Return whether V8's library is loaded in process `pid`."""
    return "libmini_racer" in Path(f"/proc/{pid}/maps").read_text()


def cpu_ticks(pid: int) -> int:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return int(fields[11]) + int(fields[12])


def wait_until_idle(pid: int) -> None:
    """Return once process `pid` has used no CPU for half a second (prepared, waiting)."""
    deadline = time.monotonic() + 60
    before = cpu_ticks(pid)
    while True:
        assert time.monotonic() < deadline, "the child never settled"
        time.sleep(0.5)
        now = cpu_ticks(pid)
        if now == before:
            return
        before = now


def test_a_child_started_to_wait_loads_v8_meanwhile() -> None:
    child = start_child(ENTRY_V8, load_v8_ahead=True)
    deadline = time.monotonic() + 30
    while not v8_mapped(child.process.pid):
        assert time.monotonic() < deadline, "V8 was not loaded while the child waited"
        time.sleep(0.05)

    result = run_sandboxed({"v8": False}, limits=LIMITS, child=child, _entry=ENTRY_V8)

    assert result["v8_loaded"] is True


ENTRY_SPARES = f"{THIS}:entry_spares"


@child_entry(needs_v8=lambda payload: int(payload.get("contexts", 1)))
def entry_spares(**_: object) -> dict[str, Any]:
    shallow = sys.modules.get("simulator.shallow")
    return {"status": "finished", "spares": len(getattr(shallow, "_spare_racers", []))}


@pytest.mark.parametrize("contexts", [0, 1, 5])
def test_a_child_started_to_wait_keeps_the_isolates_it_made_for_its_run(contexts: int) -> None:
    # Closing those the run will not use gave back none of the data limit (V8 keeps what it
    # mapped) and took 1 ms each of the run's start (simulator.sandbox.child `_load_v8`).
    started = start_child(ENTRY_SPARES, load_v8_ahead=True)
    wait_until_idle(started.process.pid)

    result = run_sandboxed(
        {"contexts": contexts}, limits=LIMITS, child=started, _entry=ENTRY_SPARES
    )

    assert result["spares"] == SPARE_ISOLATES


def test_a_run_asks_for_one_v8_context_per_node_model_and_hardware_no_twin_answers() -> None:
    snapshot = json.loads((EXAMPLE / "snapshot.json").read_text())
    payload = {"snapshot": snapshot}
    assert preparation.needs_v8(payload) == 0  # both of the example's models have Python twins

    models = {node["model"] for node in snapshot["nodes"] if node.get("model") is not None}
    for model in models:  # an edit the compiler covers: still answered in Python
        snapshot["models"][model]["source"] += "\n// edited: a comment\n"
    assert preparation.needs_v8(payload) == 0

    for model in models:  # an arrow function: outside the compiled subset, so V8's
        snapshot["models"][model]["source"] += "var edited = () => 0;\n"
    pairs = {(n["model"], n["hardware"]) for n in snapshot["nodes"] if n.get("model") is not None}

    assert preparation.needs_v8(payload) == len(pairs) > 0
    assert preparation.needs_v8({"snapshot": {"models": {}}}) == 1  # a snapshot the run refuses


def test_the_childs_preparation_compiles_only_the_nodes_models_and_as_their_run_does() -> None:
    from simulator.models import js_compiler

    snapshot = json.loads(json.dumps(runner.WARM_UP_SNAPSHOT))
    unused = "function computationTime(params) { return params.t * 3; } // no node's\n"
    snapshot["models"]["unused"] = {"language": "javascript", "source": unused}
    app = "for step in range(steps):\n    sim.computation({'t': 0.5 + rank + step, 'flops': 1e9})\n"
    js_compiler.clear_compiled_models()
    payload = preparation.parse_payload({"snapshot": snapshot})

    assert preparation.needs_v8(payload) == 0
    prepared = js_compiler._compiled.cache_info()
    assert prepared.currsize == 2  # the hosts' model and the network's, not the unused one
    result = run_simulation(payload["snapshot"], app, labels={"P": 2}, variables={"steps": 3})

    assert result["status"] == "finished" and not result["warnings"]  # the twins answered
    assert js_compiler._compiled.cache_info().misses == prepared.misses  # nothing compiled again


def test_a_runs_child_parses_its_snapshot_once_and_prepares_from_the_parsed_one() -> None:
    entry = entry_for(entry_address(run_simulation))
    snapshot = json.loads((EXAMPLE / "snapshot.json").read_text())
    next(node for node in snapshot["nodes"] if node["id"] == "gpu0")["kernelMode"] = "petri"
    payload = {"snapshot": snapshot, "app_source": "sim.computation({'t': 1})\n"}
    payload |= {"labels": {"CPU": 1, "GPU": 1}, "variables": {}}

    parsed = entry.parsed(payload)

    assert isinstance(parsed["snapshot"], SystemSnapshot)  # what the run gets: parsed already
    assert parsed["snapshot"] == load_snapshot(snapshot)
    assert {key: value for key, value in parsed.items() if key != "snapshot"} == {
        key: value for key, value in payload.items() if key != "snapshot"
    }
    assert entry.v8_contexts(parsed) == entry.v8_contexts(payload)
    assert entry.reserved_bytes(parsed) == entry.reserved_bytes(payload)
    assert entry.modules(parsed) == entry.modules(payload) == ("simulator.models.gpu_modes",)
    # A snapshot that does not parse reaches the run as it came: the run reports its errors.
    refused = {**payload, "snapshot": {"models": {}}}
    assert entry.parsed(refused) is refused
    assert entry.v8_contexts(refused) == 1 and entry.modules(refused) == ()


def test_a_spare_child_of_a_worker_leaves_v8_to_the_runs_that_need_it() -> None:
    # a worker's next run often comes while its spare would still be loading V8
    child = start_child(ENTRY_V8)
    wait_until_idle(child.process.pid)

    assert not v8_mapped(child.process.pid)
    result = run_sandboxed({"v8": False}, limits=LIMITS, child=child, _entry=ENTRY_V8)
    assert result["v8_loaded"] is False


def test_a_child_whose_run_is_already_waiting_loads_v8_only_if_the_run_needs_it() -> None:
    # the order goes out at once, long before the child is through its imports
    result = run_sandboxed(
        {"v8": False},
        limits=LIMITS,
        child=start_child(ENTRY_V8, load_v8_ahead=True),
        _entry=ENTRY_V8,
    )
    assert result["v8_loaded"] is False
    result = run_sandboxed(
        {"v8": True}, limits=LIMITS, child=start_child(ENTRY_V8), _entry=ENTRY_V8
    )
    assert result["v8_loaded"] is True


def test_an_entry_that_never_uses_v8_is_not_given_it_ahead() -> None:
    assert entry_for(ENTRY_V8).may_want_v8()
    assert entry_for(DEFAULT_ENTRY).may_want_v8()  # a run's models are not known yet
    assert not entry_for("simulator.analyzer.sandboxed:analyze_kernel").may_want_v8()


def test_a_started_child_runs_the_payload_it_is_given_later() -> None:
    child = start_child(ENTRY_PID)

    result = run_sandboxed({}, limits=LIMITS, child=child, _entry=ENTRY_PID)

    assert result["pid"] == child.process.pid
    assert result["cwd"] == os.path.realpath(child.workdir)
    assert not os.path.exists(child.workdir)  # removed with the run


def test_a_child_runs_once_and_only_the_entry_it_was_started_for() -> None:
    child = start_child(ENTRY_PID)
    run_sandboxed({}, limits=LIMITS, child=child, _entry=ENTRY_PID)

    with pytest.raises(ValueError, match="used already"):
        run_sandboxed({}, limits=LIMITS, child=child, _entry=ENTRY_PID)
    other = start_child()
    with pytest.raises(ValueError, match="another entry"):
        run_sandboxed({}, limits=LIMITS, child=other, _entry=ENTRY_PID)
    assert other.process.poll() is not None  # discarded, not left waiting


def test_a_child_not_needed_exits_when_its_parent_lets_go_and_leaves_no_directory() -> None:
    child = start_child(ENTRY_PID)
    assert child.process.stdin is not None

    child.process.stdin.close()

    assert child.process.wait(timeout=20) == 0
    assert not os.path.exists(child.workdir)
    child.discard()
    child.discard()  # idempotent


def test_a_spare_child_is_used_by_the_next_run_and_replaced() -> None:
    spare = SpareChild(ENTRY_PID)
    spare.prepare()
    first = spare.take()
    spare.prepare()
    second = spare.take()
    try:
        assert isinstance(first, StartedChild) and isinstance(second, StartedChild)
        assert first is not second
        assert run_sandboxed({}, limits=LIMITS, child=first, _entry=ENTRY_PID)["pid"] == (
            first.process.pid
        )
    finally:
        second.discard()
        spare.close()


def test_a_run_gets_its_child_from_a_source_a_fresh_start_or_a_spare_restarted_after() -> None:
    fresh = FreshStart(ENTRY_PID).take()
    try:
        assert isinstance(fresh, StartedChild) and fresh.entry == ENTRY_PID
        result = run_sandboxed({}, limits=LIMITS, child=fresh, _entry=ENTRY_PID)
        assert result["pid"] == fresh.process.pid
    finally:
        fresh.discard()
    spare = SpareChild(ENTRY_PID)
    try:
        first = spare.take()  # none started yet: one is started for the run
        assert run_sandboxed({}, limits=LIMITS, child=first, _entry=ENTRY_PID)["pid"] == (
            first.process.pid
        )
        spare.done_with(first)  # the run is over: the next run's child starts now
        assert spare._child is not None and spare._child is not first
        assert spare._child.process.poll() is None
    finally:
        spare.close()


def test_a_spare_child_is_forked_by_this_processs_zygote() -> None:
    spare = SpareChild(ENTRY_PID)
    spare.prepare()
    child = spare.take()
    try:
        pid = child.process.pid
        assert getattr(child, "forked", False)
        assert Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")[-2] == ZYGOTE.encode()
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        assert int(fields[1]) == os.getpid() and int(fields[3]) == pid  # ours, its own session
        result = run_sandboxed({}, limits=LIMITS, child=child, _entry=ENTRY_PID)
        assert result == {"status": "finished", "pid": pid, "cwd": child.workdir}
    finally:
        spare.close()
    assert spare._zygote is None


@pytest.mark.parametrize(("entry", "initialized"), [(ENTRY_V8, True), (ENTRY_ORPHAN, False)])
def test_a_zygote_initializes_v8_once_when_its_entrys_runs_may_use_it(
    entry: str, initialized: bool
) -> None:
    spare = SpareChild(entry)
    spare.prepare()
    child = spare.take()
    try:
        zygote = spare._zygote
        assert zygote is not None and getattr(child, "forked", False)
        # with no thread of V8's in it: the fork copied no lock another thread held
        assert v8_mapped(zygote.process.pid) is initialized
        assert len(os.listdir(f"/proc/{zygote.process.pid}/task")) == 1
        if initialized:
            assert v8_mapped(child.process.pid)  # before its run is known
        result = run_sandboxed({"v8": True}, limits=LIMITS, child=child, _entry=entry)
        assert result["status"] == "finished"
    finally:
        spare.close()


ENTRY_WARMED = f"{THIS}:entry_warmed"
WARMED_IN: list[int] = []  # the processes whose warm-up ran


@child_entry(needs_v8=lambda payload: False, warm_up=lambda: WARMED_IN.append(os.getpid()))
def entry_warmed(**_: object) -> dict[str, Any]:
    return {"status": "finished", "warmed": os.getpid() in WARMED_IN}


def test_a_child_started_to_wait_warms_up_before_its_run_comes() -> None:
    started = start_child(ENTRY_WARMED)
    wait_until_idle(started.process.pid)

    result = run_sandboxed({}, limits=LIMITS, child=started, _entry=ENTRY_WARMED)

    assert result == {"status": "finished", "warmed": True}


def test_a_child_whose_run_has_come_skips_the_warm_up() -> None:
    from simulator.sandbox import child as child_module

    read, write = os.pipe()
    os.write(write, b"{}\n")
    warmed: list[bool] = []
    entry = entry_for(ENTRY_WARMED)
    with open(read, encoding="utf-8") as order, open(write, "wb"):
        hook, entry.warm_up = entry.warm_up, lambda: warmed.append(True)
        try:
            child_module._warm_up_while_idle(entry, order)
            assert warmed == []
            order.readline()
            child_module._warm_up_while_idle(entry, order)
            assert warmed == [True]
        finally:
            entry.warm_up = hook


def test_a_warm_up_that_fails_is_left_there() -> None:
    from simulator.sandbox import child as child_module

    def failing() -> None:
        raise RuntimeError("no warm-up today")

    read, write = os.pipe()
    entry = entry_for(ENTRY_WARMED)
    with open(read, encoding="utf-8") as order, open(write, "wb"):
        hook, entry.warm_up = entry.warm_up, failing
        try:
            child_module._warm_up_while_idle(entry, order)  # no order yet: it warms up
        finally:
            entry.warm_up = hook


def test_the_runners_warm_up_compiles_a_model_and_leaves_no_compiled_function_cached() -> None:
    from simulator.sandbox.stackless import process_function

    assert runner._stackless_function(runner.WARM_UP_APP, ("steps",)) is not None
    process_function.cache_clear()

    entry_for(DEFAULT_ENTRY).warm()

    assert process_function.cache_info().currsize == 0


def test_the_runners_warm_up_prepares_a_run_the_compiled_models_answer_and_keeps_none() -> None:
    from simulator.models import js_compiler
    from simulator.sandbox import preparation
    from simulator.snapshot import SystemSnapshot

    payload = preparation.parse_payload(
        {"snapshot": runner.WARM_UP_SNAPSHOT, "labels": {"P": 2}, "variables": {}}
    )
    # a snapshot that does not parse would be left as it came, warming nothing up
    assert isinstance(payload["snapshot"], SystemSnapshot)
    # both models compile (no V8): the warm-up goes through the whole JavaScript compiler
    assert preparation.needs_v8(payload) == 0
    assert js_compiler._compiled.cache_info().currsize > 0

    entry_for(DEFAULT_ENTRY).warm()

    assert js_compiler._parsed.cache_info().currsize == 0
    assert js_compiler._compiled.cache_info().currsize == 0


def test_without_a_zygote_a_spare_child_is_started_on_its_own(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("PARASIM_ZYGOTE", "0")
    spare = SpareChild(ENTRY_PID)
    child = spare.take()
    try:
        assert not getattr(child, "forked", False)
        assert ZYGOTE.encode() not in Path(f"/proc/{child.process.pid}/cmdline").read_bytes()
        assert run_sandboxed({}, limits=LIMITS, child=child, _entry=ENTRY_PID)["pid"] == (
            child.process.pid
        )
    finally:
        spare.close()


def test_what_a_forked_childs_run_left_behind_is_reaped_by_this_process(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    spare = SpareChild(ENTRY_ORPHAN)
    monkeypatch.setattr(parent, "_SPARE", spare)
    try:
        left = run_sandboxed({}, limits=LIMITS, keep_spare=True, _entry=ENTRY_ORPHAN)["left"]
        # killed with the run's group, adopted by this process (a subreaper): a zombie until
        # the spare's next preparation reaps it
        deadline = time.monotonic() + 10
        while Path(f"/proc/{left}").exists():
            assert time.monotonic() < deadline, "the left process was not reaped"
            spare.prepare()
            time.sleep(0.05)
    finally:
        spare.close()


def test_a_spare_that_died_is_replaced_by_a_fresh_child() -> None:
    spare = SpareChild(ENTRY_PID)
    spare.prepare()
    dead = spare.take()
    dead.kill()
    dead.process.wait(timeout=20)
    spare._child = dead  # as if it had died while waiting

    fresh = spare.take()

    try:
        assert fresh is not dead and fresh.process.poll() is None
    finally:
        fresh.discard()


def test_keep_spare_starts_the_next_runs_child_as_a_run_ends(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    spare = SpareChild(ENTRY_PID)
    monkeypatch.setattr(parent, "_SPARE", spare)
    try:
        first = run_sandboxed({}, limits=LIMITS, keep_spare=True, _entry=ENTRY_PID)
        waiting = spare._child
        assert waiting is not None and waiting.process.poll() is None

        second = run_sandboxed({}, limits=LIMITS, keep_spare=True, _entry=ENTRY_PID)

        assert second["pid"] == waiting.process.pid != first["pid"]
    finally:
        spare.close()


@pytest.mark.parametrize(
    ("argv", "started"),
    [
        (["run", "--system", "s.json", "--app", "a.py", "--labels", "CPU=1"], True),
        (["run", "--no-sandbox", "--system", "s.json"], False),
        (["run", "--help"], False),
        (["sweep", "--system", "s.json"], False),
        (["analyze", "k.cu"], False),
        ([], False),
    ],
)
def test_the_command_line_starts_a_child_only_for_a_sandboxed_run(
    argv: list[str], started: bool
) -> None:
    child = start_child_for(argv)
    try:
        assert (child is not None) is started
    finally:
        if child is not None:
            child.discard()


def test_the_command_line_runs_on_the_child_started_for_it() -> None:
    child = start_child()
    out = io.StringIO()
    argv = ["run", "--system", str(EXAMPLE / "snapshot.json"), "--app", str(EXAMPLE / "app.py")]
    argv += ["--labels", "CPU=1,GPU=1", "--json", "-"]
    argv += ["--var", "N=20000000", "--var", "blockSz=256", "--var", "computeIntensity=1"]
    argv += ["--var", "occupancy=64"]

    status = cli.main(argv, stdout=out, stderr=io.StringIO(), child=child)

    assert status == 0, out.getvalue()
    assert json.loads(out.getvalue())["status"] == "finished"
    assert child.sent and child.discarded and child.process.poll() is not None


def test_the_command_line_discards_its_child_when_the_inputs_are_bad(tmp_path: Path) -> None:
    child = start_child()
    err = io.StringIO()
    argv = ["run", "--system", str(tmp_path / "missing.json"), "--app", "a.py"]
    argv += ["--labels", "CPU=1"]

    status = cli.main(argv, stdout=io.StringIO(), stderr=err, child=child)

    assert status == cli.EXIT_ERROR
    assert "cannot read" in err.getvalue()
    assert not child.sent and child.discarded
    assert child.process.poll() is not None
    assert not os.path.exists(child.workdir)


def test_a_twinned_run_loads_v8_only_when_a_twin_declines_and_still_gets_v8s_answer() -> None:
    snapshot = json.loads((EXAMPLE / "snapshot.json").read_text())
    odd = (
        "if tag.equals('GPU'):\n"
        "    sim.computation({'gridSize': 'many', 'blockSize': 256, 'CUDACoreInstructions': 27,\n"
        "        'issuedInstructions': 27, 'GMEMBytesTransferred': 384, 'latencyBound': 966,\n"
        "        'occupancy': 64, 'kernelExecutionLambda': 0.7})\n"
    )
    payload = {"snapshot": snapshot, "app_source": odd, "labels": {"CPU": 1, "GPU": 1}}
    payload["variables"] = {}
    assert not preparation.needs_v8(payload)  # both of the example's models have Python twins

    with pytest.raises(ModelEvaluationError) as in_process:
        run_simulation(snapshot, odd, labels={"CPU": 1, "GPU": 1}, variables={})
    with pytest.raises(ModelEvaluationError) as sandboxed:  # V8 loaded after the privilege drop
        run_sandboxed(payload, limits=LIMITS)

    assert sandboxed.value.to_dict() == in_process.value.to_dict()


def needs_v8(payload: Mapping[str, Any]) -> bool:  # the child asks it for these entries
    return bool(payload.get("v8"))


@child_entry(needs_v8=lambda payload: needs_v8(payload))
def entry_v8_loaded(**_: object) -> dict[str, Any]:
    maps = Path("/proc/self/maps").read_text()
    return {"status": "finished", "v8": "libmini_racer" in maps}


@pytest.mark.parametrize("v8", [True, False])
def test_the_child_loads_v8_only_for_a_payload_that_needs_it(v8: bool) -> None:
    entry = f"{THIS}:entry_v8_loaded"

    result = run_sandboxed({"v8": v8}, limits=LIMITS, _entry=entry)

    assert result["v8"] is v8


def entry_allocator_hook(**_: object) -> dict[str, Any]:
    import gc

    stats = engine.speedups.chunk_cache_stats() if engine.speedups is not None else None
    installed = None if stats is None else stats["installed"]
    return {"status": "finished", "installed": installed, "threshold": gc.get_threshold()[0]}


child_entry(prepare=runner.prepare_simulation_process)(entry_allocator_hook)


def entry_heap_flags(**_: object) -> dict[str, Any]:
    grown = [bytearray(3000) for _ in range(3000)]  # glibc's heap, not a mapping of its own
    smaps = Path("/proc/self/smaps").read_text()
    del grown
    heap = smaps.split("[heap]", 1)[1] if "[heap]" in smaps else ""
    flags = heap.split("VmFlags:", 1)[1].splitlines()[0] if "VmFlags:" in heap else ""
    return {"status": "finished", "flags": flags.split()}


child_entry(entry_heap_flags)


@pytest.mark.skipif(
    not MALLOC_HUGE_PAGES,
    reason="glibc's malloc advises huge pages from 2.35, on a kernel with them",
)
def test_a_childs_malloc_heap_is_advised_for_huge_pages() -> None:
    result = run_sandboxed({}, limits=LIMITS, _entry=f"{THIS}:entry_heap_flags")

    assert "hg" in result["flags"]


def test_a_simulation_child_installs_the_allocator_hook_and_batches_young_collections() -> None:
    # A child runs one simulation and exits: no young collection when its run ends.
    assert entry_for(DEFAULT_ENTRY).prepare is runner.prepare_simulation_process
    entry = f"{THIS}:entry_allocator_hook"

    result = run_sandboxed({}, limits=LIMITS, _entry=entry)

    assert result["installed"] is (True if engine.speedups is not None else None)
    assert result["threshold"] == runner.RUN_GC_YOUNG_THRESHOLD


# -- the result handed back unparsed (issue 16: a large result) ---------------------------------
def entry_result(progress: object = None, **payload: object) -> dict[str, Any]:
    return {"status": "finished", **payload}


child_entry(entry_result)


def test_a_raw_result_is_the_bytes_the_child_encoded_and_parses_to_the_result() -> None:
    entry = f"{THIS}:entry_result"
    payload = {"name": 'é\n"quoted"', "values": [1, 0.1, 1e-05, 2**63, None], "nested": {}}

    raw = run_sandboxed(payload, limits=LIMITS, raw_result=True, _entry=entry)
    parsed = run_sandboxed(payload, limits=LIMITS, _entry=entry)

    assert isinstance(raw, parent.RawResult)
    assert raw.json == encode_json(parsed)
    assert raw.parsed() == parsed == {"status": "finished", **payload}


def test_a_result_written_in_pieces_reads_back_as_one_message_raw_or_parsed() -> None:
    """A result larger than a pipe's buffer, its timeline in many slices: the child writes it
    as it encodes it (wire.result_message_pieces), the parent reads the same bytes."""
    entry = f"{THIS}:entry_result"
    rows = [{"process": f"P[{i}]", "start_s": i / 7, "end_s": -0.0} for i in range(3 * 1000 + 1)]
    payload = {"timeline": rows, "after": "é", "empty": [], "count": len(rows)}

    raw = run_sandboxed(payload, limits=LIMITS, raw_result=True, _entry=entry)
    parsed = run_sandboxed(payload, limits=LIMITS, _entry=entry)

    assert isinstance(raw, parent.RawResult) and len(raw.json) > 2 * WRITE_AT_BYTES
    assert raw.json == encode_json(parsed)
    assert raw.parsed() == parsed == {"status": "finished", **payload}


def test_a_result_written_a_few_bytes_at_a_time_reads_back_whole(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The child gathers the result's pieces into each write (`os.writev`); a pipe that
    takes part of a write (as a signal can make it) gets the rest next, in order, whichever
    piece the write ended in."""
    result = {
        "status": "finished",
        "timeline": [{"process": f"P[{i}]", "start_s": i / 7} for i in range(2500)],
        "empty": [],
    }
    real_writev = os.writev
    counts = iter([1, 0, 7, 3, 100_000] * 1000)

    def writev_partly(fd: int, buffers: list[bytes | memoryview]) -> int:
        # a part of the first few buffers, cut anywhere (at a piece's end too)
        whole = b"".join(buffers)
        return real_writev(fd, [whole[: max(1, next(counts))]])

    monkeypatch.setattr(os, "writev", writev_partly)
    read, write = os.pipe()
    try:
        with ThreadPoolExecutor(1) as pool:
            reader = pool.submit(_read_all, read)
            try:
                child._Channel(write).send_result(result)
            finally:
                os.close(write)  # the reader's end of file
            line = reader.result(timeout=30)
    finally:
        os.close(read)
    assert line == encode_message({"result": result})


def _read_all(fd: int) -> bytes:
    chunks = []
    while chunk := os.read(fd, 1 << 16):
        chunks.append(chunk)
    return b"".join(chunks)


def test_a_result_is_written_into_its_pipe_grown_to_a_mebibyte_where_the_kernel_allows() -> None:
    read, write = os.pipe()
    try:
        assert fcntl.fcntl(write, fcntl.F_GETPIPE_SZ) < RESULT_PIPE_BYTES
        child._Channel(write).send_result({"status": "finished", "rows": [0.5] * 10})
        line = os.read(read, RESULT_PIPE_BYTES)
        grown = fcntl.fcntl(read, fcntl.F_GETPIPE_SZ)
    finally:
        os.close(read)
        os.close(write)
    assert line == encode_message({"result": {"status": "finished", "rows": [0.5] * 10}})
    maximum = int(Path("/proc/sys/fs/pipe-max-size").read_text())
    assert grown == RESULT_PIPE_BYTES or maximum < RESULT_PIPE_BYTES


def entry_unencodable(progress: object = None, *, first: int = 0) -> dict[str, Any]:
    """A result whose last value no encoder takes, after `first` items of a list."""
    return {"rows": list(range(first)), "last": {1, 2}}


child_entry(entry_unencodable)


def test_a_result_that_fails_to_encode_part_way_is_reported_as_at_once() -> None:
    """The child has written part of the result when its last part fails to encode: it ends
    the line as abandoned (wire.ABANDONED), and the parent reports the child's error, as it
    does when nothing was written yet, not a garbled message."""
    entry = f"{THIS}:entry_unencodable"
    reports = []
    for first in (0, 50_000):  # nothing written before the failure, then over 64 KiB
        for raw_result in (False, True):
            with pytest.raises(SimulationError) as caught:
                run_sandboxed({"first": first}, limits=LIMITS, raw_result=raw_result, _entry=entry)
            reports.append((type(caught.value), str(caught.value)))

    assert len(set(reports)) == 1, reports
    assert "TypeError" in reports[0][1] and "set" in reports[0][1]


def test_a_raw_result_keeps_the_size_limit_and_the_run_s_errors() -> None:
    entry = f"{THIS}:entry_result"
    small = Limits(wall_s=20, cpu_s=10, result_bytes=1000)
    with pytest.raises(SandboxLimitError, match="size limit"):
        run_sandboxed({"text": "x" * 2000}, limits=small, raw_result=True, _entry=entry)
    with pytest.raises(UserCodeError, match="ZeroDivisionError"):
        run_sandboxed({**RUN, "app_source": "x = 1 / 0\n"}, limits=LIMITS, raw_result=True)


RUN = {
    "snapshot": json.loads((EXAMPLE / "snapshot.json").read_text()),
    "app_source": (EXAMPLE / "app.py").read_text(),
    "labels": {"CPU": 1, "GPU": 1},
    "variables": {"N": 1000000, "blockSz": 256, "computeIntensity": 1, "occupancy": 64},
}


def test_grown_with_run_lets_a_result_grow_with_the_rows_its_run_asks_for() -> None:
    size = len(encode_json(run_simulation(**{**RUN, "timeline_limit": 100})))
    rows = parent.result_rows(RUN)
    assert rows == 2 + sum(node.get("count", 1) for node in RUN["snapshot"]["nodes"])
    small = Limits(wall_s=20, cpu_s=10, result_bytes=512)
    allowed = 512 + parent.RESULT_ROW_BYTES * rows
    assert allowed < size  # too little for the whole result
    grown = parent.grown_with_run(small, RUN)
    assert grown == small.replace(
        result_bytes=allowed, data_bytes=small.data_bytes + 2 * parent.PROCESS_DATA_BYTES
    )
    with pytest.raises(SandboxLimitError) as caught:
        run_sandboxed(RUN, limits=grown, raw_result=True)
    assert str(caught.value) == f"the result exceeds the size limit of {allowed / 1e6:g} MB"

    # The same run keeping 100 timeline entries may take 100 rows more, and fits; without
    # grown_with_run (the web side) the cap stays fixed.
    payload = {**RUN, "timeline_limit": 100}
    result = run_sandboxed(payload, limits=parent.grown_with_run(small, payload))
    assert result["status"] == "finished"
    with pytest.raises(SandboxLimitError, match=r"size limit of 0\.000512 MB"):
        run_sandboxed(payload, limits=small)


def test_result_rows_reads_the_raw_payload_and_counts_nothing_malformed() -> None:
    snapshot = {"nodes": [{"id": "a", "count": 3}, {"id": "b"}, {"id": "c", "count": "x"}, 7]}
    payload = {"labels": {"P": 5, "Q": -1, "R": True}, "snapshot": snapshot, "timeline_limit": 10}
    assert parent.result_rows(payload) == 5 + 3 + 1 + 10
    assert parent.result_rows({"labels": [1], "snapshot": {"nodes": "x"}}) == 0
    assert parent.result_rows({}) == 0


def test_run_json_writes_the_sandboxed_result_as_the_child_sent_it() -> None:
    out = io.StringIO()
    argv = ["run", "--system", str(EXAMPLE / "snapshot.json"), "--app", str(EXAMPLE / "app.py")]
    argv += ["--labels", "CPU=1,GPU=1", "--json", "-"]
    argv += [f"--var={name}={value}" for name, value in RUN["variables"].items()]

    assert cli.main(argv, stdout=out, stderr=io.StringIO()) == 0

    text = out.getvalue()
    result = json.loads(text)
    # Byte for byte what the parsed path (and --no-sandbox) writes for the same data.
    written = io.StringIO()
    write_json(result, "-", written)
    assert written.getvalue() == text
    in_process = run_simulation(RUN["snapshot"], RUN["app_source"], **_keywords(RUN))
    assert _without_timing(result) == _without_timing(json.loads(encode_json(in_process)))


def _keywords(run: Mapping[str, Any]) -> dict[str, Any]:
    return {"labels": run["labels"], "variables": run["variables"]}


def _without_timing(result: dict[str, Any]) -> dict[str, Any]:
    stats = {k: v for k, v in result["stats"].items() if k not in ("wall_s", "events_per_s")}
    return {**result, "stats": stats}


def test_the_launcher_starts_without_typing_pathlib_or_json() -> None:
    # `python -m simulator run` imports it before it starts its child: what it loads delays
    # the child's start (issue 16, start-up).
    import subprocess
    import sys

    # A command line the pool's daemon serves (`served_run`) loads nothing more: not even the
    # socket module (enum, selectors), argparse or the command line.
    unwanted = "{'typing', 'pathlib', 'json', 'simulator.sandbox.entries', 'socket', 'enum', "
    unwanted += "'selectors', 'signal', 'argparse', 'simulator.cli'}"
    code = (
        "import sys; import simulator.sandbox.launch, simulator.sandbox.pool; "
        f"print(sorted({unwanted} & set(sys.modules)))"
    )
    root = Path(__file__).resolve().parents[2]
    loaded = subprocess.run(
        [sys.executable, "-c", code], cwd=root, capture_output=True, text=True, check=True
    ).stdout

    assert loaded.strip() == "[]"


def test_the_command_lines_side_of_a_sandboxed_run_loads_no_orjson_runner_or_child() -> None:
    # what the parent imports before handing over the run is on a short run's critical path:
    # a pooled child needs no process started (subprocess, tempfile), and the child checks
    # the snapshot; typing and dataclasses (with inspect) cost 20 ms on their own
    import subprocess
    import sys

    heavy = {
        "orjson",
        "simulator.sandbox.child",
        "simulator.runner",
        "simulator.engine",
        "simulator.snapshot",
        "simulator.sandbox.entries",
        "typing",
        "dataclasses",
        "inspect",
        "pathlib",
        "subprocess",
        "tempfile",
        "threading",
    }
    code = (
        "import sys; import simulator.cli.run, simulator.sandbox.parent, simulator.sandbox.pool; "
        f"print(sorted(set({sorted(heavy)!r}) & set(sys.modules)))"
    )
    root = Path(__file__).resolve().parents[2]
    loaded = subprocess.run(
        [sys.executable, "-c", code], cwd=root, capture_output=True, text=True, check=True
    ).stdout

    assert loaded.strip() == "[]"


def test_a_raw_result_read_in_any_chunks_is_its_bytes_joined_or_not() -> None:
    """However the pipe cuts the messages (the result's line whole in one read, or across
    reads kept as pieces without a join, its prefix or its closing brace cut), the raw result
    is the bytes the child encoded, and the messages around it are read as before."""
    result = {"status": "finished", "name": 'é\n"q"', "values": [1, 0.5, None]}
    stream = encode_message({"progress": 0.5}) + encode_message({"result": result})
    stream += encode_message({"progress": 1.0})
    child: Any = SimpleNamespace(process=None, result_fd=-1)  # what the reading needs of one
    for first in range(1, len(stream)):
        for second in range(first, len(stream)):
            run = parent._Run(child, LIMITS, raw_result=True)
            seen: list[float] = []
            progress = seen.append
            for chunk in (stream[:first], stream[first:second], stream[second:]):
                if chunk:
                    run.on_result_bytes(chunk, lambda fraction, *_, add=progress: add(fraction))
            raw = run.outcome()

            assert isinstance(raw, parent.RawResult)
            assert raw.json == encode_json(result) and raw.parsed() == result
            assert seen == [0.5, 1.0] and run.pending == []
