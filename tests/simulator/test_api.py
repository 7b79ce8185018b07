"""The `sim` API as application models see it: transfers, contention, collectives, globals.

Runs go through run_simulation with small JavaScript models whose times are round numbers:
a computation takes params.seconds, a link hop takes latency + size / bandwidth = 1 + size s.
"""

from __future__ import annotations

import subprocess
import sys
import textwrap
from typing import Any

import pytest

from simulator import runner
from simulator.errors import DeadlockError, ModelEvaluationError, UserCodeError
from simulator.models import builtin_models
from simulator.runner import run_simulation

CPU_MODEL = "function computationTime(params) { return params.get('seconds', 0); }"
LINK_MODEL = "function p2pTime(size, params) { return latency + size / bandwidth; }"
DIRECTED_LINK_MODEL = """
function p2pTime(size, params) {
  return params.get('direction') === 'HostToDevice' ? 10 + size : 20 + size;
}
"""


@pytest.fixture(autouse=True, params=["greenlets", "stackless"])
def process_kind(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    """Run every model here on greenlets, and stackless (tests/simulator/test_stackless.py)
    with every call on a borrowed greenlet where the model can be a generator."""
    calls = frozenset() if request.param == "greenlets" else None
    monkeypatch.setattr(runner, "STACKLESS_CALLS", calls)
    return str(request.param)


def host_bus_device(
    *, host_slots: int = 2, device_slots: int = 2, link_model: str = LINK_MODEL
) -> dict[str, Any]:
    """Return a host -- bus -- device system; both ends have room for several processes."""
    return {
        "name": "host-bus-device",
        "hardware": {
            "cpu": {"type": "CPU", "name": "Host", "attributes": {}},
            "bus": {
                "type": "NETWORK",
                "name": "Bus",
                "attributes": {"latency": 1.0, "bandwidth": 1.0},
            },
            "gpu": {"type": "GPU", "name": "Device", "attributes": {}},
        },
        "models": {
            "compute": {"language": "javascript", "source": CPU_MODEL},
            "link": {"language": "javascript", "source": link_model},
        },
        "nodes": [
            {"id": "host", "hardware": "cpu", "model": "compute", "labels": {"CPU": host_slots}},
            {"id": "bus", "hardware": "bus", "model": "link"},
            {"id": "dev", "hardware": "gpu", "model": "compute", "labels": {"GPU": device_slots}},
        ],
        "edges": [["host", "bus"], ["bus", "dev"]],
    }


def run(app: str, labels: dict[str, int], system: dict[str, Any] | None = None, **kw: Any) -> dict:
    return run_simulation(
        system or host_bus_device(),
        textwrap.dedent(app),
        labels=labels,
        variables=kw.pop("variables", {}),
        **kw,
    )


def trace(result: dict, kind: str) -> list[tuple]:
    """Return (process, start, end) of the timeline entries of one kind, in order."""
    return [
        (entry["process"], entry["start_s"], entry["end_s"])
        for entry in result["timeline"]
        if entry["kind"] == kind
    ]


def finish(result: dict) -> dict[str, float]:
    return {p["process"]: p["finish_s"] for p in result["processes"]}


def test_a_message_costs_the_links_p2p_time_and_receive_returns_its_size() -> None:
    result = run(
        """
        if tag == "CPU":
            sim.p2pCommunicationSend(4, "GPU")
        else:
            size = sim.p2pCommunicationReceive("CPU")
            sim.computation({"seconds": size})
        """,
        {"CPU": 1, "GPU": 1},
    )
    assert trace(result, "transfer") == [("CPU[0]", 0.0, 5.0)]
    assert trace(result, "compute") == [("GPU[0]", 5.0, 9.0)]
    assert finish(result) == {"CPU[0]": 0.0, "GPU[0]": 9.0}
    assert result["overall_time_s"] == 9.0


def test_two_transfers_in_the_same_direction_serialise_on_a_link() -> None:
    result = run(
        """
        if tag == "CPU":
            sim.p2pCommunicationSend(2, "GPU")
        else:
            sim.p2pCommunicationReceive("CPU", rank)
        """,
        {"CPU": 2, "GPU": 2},
    )
    assert trace(result, "transfer") == [("CPU[0]", 0.0, 3.0), ("CPU[1]", 3.0, 6.0)]
    assert finish(result) == {"CPU[0]": 0.0, "CPU[1]": 0.0, "GPU[0]": 3.0, "GPU[1]": 6.0}
    bus = next(c for c in result["components"] if c["node"] == "bus")
    assert bus["busy_s"] == 6.0


def test_transfers_in_opposite_directions_do_not_wait_for_each_other() -> None:
    result = run(
        """
        if tag == "CPU" and rank == 0:
            sim.p2pCommunicationSend(2, "GPU", target_rank=0)
        elif tag == "GPU" and rank == 1:
            sim.p2pCommunicationSend(2, "CPU", target_rank=1)
        else:
            sim.p2pCommunicationReceive("GPU" if tag == "CPU" else "CPU")
        """,
        {"CPU": 2, "GPU": 2},
    )
    assert sorted(trace(result, "transfer")) == [("CPU[0]", 0.0, 3.0), ("GPU[1]", 0.0, 3.0)]
    bus = next(c for c in result["components"] if c["node"] == "bus")
    assert bus["busy_s"] == 3.0


def test_the_link_sees_the_direction_given_to_send() -> None:
    result = run(
        """
        if tag == "CPU":
            sim.p2pCommunicationSend(1, "GPU", ConstVar.HostToDevice)
            sim.p2pCommunicationReceive("GPU")
        else:
            sim.p2pCommunicationReceive("CPU")
            sim.p2pCommunicationSend(1, "CPU", ConstVar.DeviceToHost)
        """,
        {"CPU": 1, "GPU": 1},
        host_bus_device(link_model=DIRECTED_LINK_MODEL),
    )
    assert trace(result, "transfer") == [("CPU[0]", 0.0, 11.0), ("GPU[0]", 11.0, 32.0)]
    directions = [e["direction"] for e in result["timeline"] if e["kind"] == "transfer"]
    assert directions == ["HostToDevice", "DeviceToHost"]


HOST_MEMORY_LINK_MODEL = """
function p2pTime(size, params) {
  return params.has('hostMemory') ? params.hostMemory.length : 0;
}
"""


def test_the_link_sees_the_host_memory_given_to_send_and_nothing_when_none_is() -> None:
    result = run(
        """
        sim.p2pCommunicationSend(1, "GPU", ConstVar.HostToDevice, hostMemory="pinned")
        sim.p2pCommunicationSend(1, "GPU", ConstVar.HostToDevice, None, "pageable")
        sim.p2pCommunicationSend(1, "GPU", ConstVar.HostToDevice)
        """,
        {"CPU": 1, "GPU": 1},
        host_bus_device(link_model=HOST_MEMORY_LINK_MODEL),
    )
    assert trace(result, "transfer") == [
        ("CPU[0]", 0.0, 6.0),
        ("CPU[0]", 6.0, 14.0),
        ("CPU[0]", 14.0, 14.0),
    ]


def _h100_host_link() -> dict[str, Any]:
    """Return host -- PCIe 5.0 x16 -- device with the built-in PCIe model and pageable rates."""
    system = host_bus_device()
    pcie = next(model for model in builtin_models() if model.name == "PCIe link")
    system["models"]["link"] = {"language": "javascript", "source": pcie.source}
    system["hardware"]["bus"]["attributes"] = {
        "bandwidth": 63e9,
        "startupHTD": 9e-6,
        "startupDth": 9e-6,
        "lambdaHTD": 54.5 / 63,
        "lambdaDth": 54.5 / 63,
        "pageableStartupHTD": 12e-6,
        "pageableBandwidthHTD": 7e9,
        "pageableStartupDth": 14e-6,
        "pageableBandwidthDth": 11.6e9,
    }
    return system


@pytest.mark.parametrize(
    ("send", "seconds"),
    [
        ("ConstVar.HostToDevice", 12e-6 + 1e9 / 7e9),
        ('ConstVar.HostToDevice, hostMemory="pageable"', 12e-6 + 1e9 / 7e9),
        ('ConstVar.HostToDevice, hostMemory="pinned"', 9e-6 + 1e9 / 54.5e9),
    ],
)
def test_a_pinned_copy_runs_at_the_links_rate_and_a_pageable_one_at_the_hosts(
    send: str, seconds: float
) -> None:
    result = run(
        f"""
        if tag == "CPU":
            sim.p2pCommunicationSend(1e9, "GPU", {send})
        else:
            sim.p2pCommunicationReceive("CPU")
        """,
        {"CPU": 1, "GPU": 1},
        _h100_host_link(),
    )
    assert result["overall_time_s"] == pytest.approx(seconds, rel=1e-12)


def test_processes_on_the_same_instance_talk_for_free() -> None:
    result = run(
        """
        if rank == 0:
            sim.computation({"seconds": 2})
            sim.p2pCommunicationSend(1000, "CPU", target_rank=1)
        else:
            sim.p2pCommunicationReceive("CPU", 0)
        """,
        {"CPU": 2},
    )
    assert trace(result, "transfer") == []
    assert finish(result) == {"CPU[0]": 2.0, "CPU[1]": 2.0}


def test_without_a_target_rank_a_send_goes_to_the_same_rank_wrapped() -> None:
    result = run(
        """
        if tag == "CPU":
            sim.p2pCommunicationSend(rank, "GPU")
        else:
            sim.p2pCommunicationReceive("CPU", 1)
        """,
        {"CPU": 2, "GPU": 1},
    )
    transfers = [(e["process"], e["to"]) for e in result["timeline"] if e["kind"] == "transfer"]
    assert transfers == [("CPU[0]", "GPU[0]"), ("CPU[1]", "GPU[0]")]
    # GPU[0] asked for CPU[1]'s message, which queued behind CPU[0]'s (1 + 0, then 1 + 1 s)
    assert finish(result)["GPU[0]"] == 3.0


def test_receive_splits_blocked_time_into_wait_and_communication() -> None:
    result = run(
        """
        if tag == "CPU":
            sim.computation({"seconds": 4})
            sim.p2pCommunicationSend(2, "GPU")
        else:
            sim.p2pCommunicationReceive("CPU")
        """,
        {"CPU": 1, "GPU": 1},
    )
    gpu = next(p for p in result["processes"] if p["label"] == "GPU")
    assert (gpu["wait_s"], gpu["comm_s"], gpu["finish_s"]) == (4.0, 3.0, 7.0)


def test_broadcast_sends_the_roots_bytes_to_every_participant() -> None:
    result = run(
        """
        sim.broadcast(2, "CPU", 0)
        """,
        {"CPU": 1, "GPU": 2},
    )
    # the root sends to GPU[0] then GPU[1] over the one bus direction: 3 s each, in a row
    assert trace(result, "transfer") == [("CPU[0]", 0.0, 3.0), ("CPU[0]", 3.0, 6.0)]
    assert finish(result) == {"CPU[0]": 0.0, "GPU[0]": 3.0, "GPU[1]": 6.0}


def test_scatter_splits_the_roots_bytes_evenly() -> None:
    result = run(
        """
        sim.scatter(9, "CPU")
        """,
        {"CPU": 1, "GPU": 2},
    )
    sizes = [e["size"] for e in result["timeline"] if e["kind"] == "transfer"]
    assert sizes == [3.0, 3.0]


def test_gather_makes_the_root_wait_for_every_participant() -> None:
    result = run(
        """
        if tag == "GPU":
            sim.computation({"seconds": 1 + rank})
        sim.gather(1, "CPU", labels=["CPU", "GPU"])
        """,
        {"CPU": 1, "GPU": 2},
    )
    assert sorted(trace(result, "transfer")) == [("GPU[0]", 1.0, 3.0), ("GPU[1]", 3.0, 5.0)]
    assert finish(result)["CPU[0]"] == 5.0


def test_a_collective_is_checked_and_kept_for_its_own_root_and_labels() -> None:
    # A process keeps each collective it checked (Sim._rooted), by its arguments: another
    # root, labels given as a list (not kept) and a repeated call are each their own.
    result = run(
        """
        for root in ("CPU", "GPU", "CPU"):
            sim.broadcast(6, root, 0, labels=["GPU", "CPU"])
            sim.scatter(6, root, 0)
        """,
        {"CPU": 1, "GPU": 1},
    )
    senders = [process for process, _, _ in trace(result, "transfer")]
    assert senders == ["CPU[0]", "CPU[0]", "GPU[0]", "GPU[0]", "CPU[0]", "CPU[0]"]
    sizes = [entry["size"] for entry in result["timeline"] if entry["kind"] == "transfer"]
    assert sizes == [6.0, 3.0] * 3


def test_a_collective_called_before_with_another_root_is_checked_as_the_first() -> None:
    app = 'sim.broadcast(1, "CPU", 0)\nsim.broadcast(1, "CPU", 0.0)\n'
    with pytest.raises(UserCodeError) as caught:
        run(app, {"CPU": 1})
    assert (caught.value.detail, caught.value.line) == (
        "sim.broadcast: label 'CPU' has 1 processes, so rank 0.0 does not exist",
        2,
    )


def test_barrier_releases_everyone_when_the_last_participant_arrives() -> None:
    result = run(
        """
        sim.computation({"seconds": rank + 1})
        sim.barrier()
        sim.computation({"seconds": 1})
        sim.barrier("CPU")
        """,
        {"CPU": 2},
    )
    assert finish(result) == {"CPU[0]": 3.0, "CPU[1]": 3.0}
    assert trace(result, "barrier") == [("CPU[0]", 1.0, 2.0)]


def test_the_globals_of_each_process_follow_its_placement() -> None:
    result = run(
        """
        assert labels == {"CPU": 2, "GPU": 1}, labels
        assert tag.equals(tag) and not tag.equals("nothing")
        assert ConstVar.HostToDevice == "HostToDevice"
        assert ConstVar.DeviceToHost == "DeviceToHost"
        params = HashMap()
        params.put("seconds", scale * (rank + 1))
        sim.computation(params, SoftwareStack.Undefined, OptimizationType.None_)
        assert sim.now() == scale * (rank + 1)
        """,
        {"CPU": 2, "GPU": 1},
        variables={"scale": 2.5},
    )
    assert finish(result) == {"CPU[0]": 2.5, "CPU[1]": 5.0, "GPU[0]": 2.5}


def test_sim_random_is_seeded_per_run() -> None:
    app = """
    sim.computation({"seconds": sim.random.random()})
    """
    first = run(app, {"CPU": 2}, seed=3)
    again = run(app, {"CPU": 2}, seed=3)
    other = run(app, {"CPU": 2}, seed=4)
    assert first["processes"] == again["processes"]
    assert first["timeline"] == again["timeline"]
    assert first["processes"] != other["processes"]


def test_a_receive_nobody_answers_is_reported_as_a_deadlock() -> None:
    with pytest.raises(DeadlockError) as caught:
        run(
            """
            if tag == "CPU":
                sim.p2pCommunicationReceive("GPU")
            else:
                sim.p2pCommunicationReceive("CPU", 0)
            """,
            {"CPU": 1, "GPU": 1},
        )
    assert caught.value.waiting == {
        "CPU[0]": "a message from GPU (any rank)",
        "GPU[0]": "a message from CPU[0]",
    }


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (
            'sim.p2pCommunicationSend(1, "DSP")',
            "sim.p2pCommunicationSend: there are no processes of label 'DSP' in this launch "
            "(labels: CPU)",
        ),
        (
            'sim.p2pCommunicationReceive("CPU", 3)',
            "sim.p2pCommunicationReceive: label 'CPU' has 1 processes, so rank 3 does not exist",
        ),
        (
            'sim.p2pCommunicationSend(-1, "CPU")',
            "sim.p2pCommunicationSend: the size must be a finite number of bytes >= 0 (got -1)",
        ),
        (
            'sim.p2pCommunicationSend(1, "CPU", hostMemory="locked")',
            "sim.p2pCommunicationSend: hostMemory must be 'pageable' or 'pinned', got 'locked'",
        ),
        (
            "sim.computation(5)",
            "sim.computation: params must be a dict (or HashMap) of names to values, got int",
        ),
    ],
)
def test_a_wrong_api_call_names_the_call_the_line_and_the_process(call: str, message: str) -> None:
    with pytest.raises(UserCodeError) as caught:
        run(f"x = 1\n{call}\n", {"CPU": 1})
    assert (caught.value.detail, caught.value.line, caught.value.process) == (message, 2, "CPU[0]")


SEND_CHECK = "sim.p2pCommunicationSend: "
SIZE_CHECK = "the size must be a finite number of bytes >= 0 (got {})"


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        ("size=1, target_rank=0.0", "label 'CPU' has 1 processes, so rank 0.0 does not exist"),
        ("size=1, target_rank=True", "label 'CPU' has 1 processes, so rank True does not exist"),
        ("size=float('nan'), target_rank=0", SIZE_CHECK.format("nan")),
        ("size=True, target_rank=0", SIZE_CHECK.format("True")),
        ("size=-0.5, target_rank=0", SIZE_CHECK.format("-0.5")),
    ],
)
def test_a_send_to_a_target_sent_to_before_is_checked_as_the_first(
    arguments: str, message: str
) -> None:
    # The second send finds its target kept by the first (rank 0.0 or True is not rank 0).
    app = (
        "sim.p2pCommunicationSend(size=1, target_label='CPU', target_rank=0)\n"
        f"sim.p2pCommunicationSend(target_label='CPU', {arguments})\n"
    )
    with pytest.raises(UserCodeError) as caught:
        run(app, {"CPU": 1})
    assert (caught.value.detail, caught.value.line) == (SEND_CHECK + message, 2)


def test_a_receive_from_a_source_received_from_before_is_checked_as_the_first() -> None:
    app = (
        "sim.p2pCommunicationSend(1, 'CPU', target_rank=0)\n"
        "sim.p2pCommunicationReceive('CPU', 0)\n"
        "sim.p2pCommunicationReceive('CPU', 0.0)\n"
    )
    with pytest.raises(UserCodeError) as caught:
        run(app, {"CPU": 1})
    assert (caught.value.detail, caught.value.line) == (
        "sim.p2pCommunicationReceive: label 'CPU' has 1 processes, so rank 0.0 does not exist",
        3,
    )


def test_a_failing_link_model_ends_the_run_with_a_model_error() -> None:
    failing = "function p2pTime(size, params) {\n  throw new Error('no direction');\n}"
    with pytest.raises(ModelEvaluationError) as caught:
        run(
            """
            if tag == "CPU":
                sim.p2pCommunicationSend(1, "GPU")
            else:
                sim.p2pCommunicationReceive("CPU")
            """,
            {"CPU": 1, "GPU": 1},
            host_bus_device(link_model=failing),
        )
    assert (caught.value.model, caught.value.function, caught.value.line) == ("link", "p2pTime", 2)
    assert "no direction" in caught.value.detail


def test_the_sim_api_imports_without_numpy():
    # a sandboxed run imports simulator.api and simulator.platform; NumPy would cost it
    # about 125 ms (issue 16)
    code = "import sys, simulator.api, simulator.platform; print('numpy' in sys.modules)"
    completed = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert completed.stdout.strip() == "False", completed.stderr


def test_a_receive_from_an_unknown_source_fails_every_time_not_only_the_first() -> None:
    app = textwrap.dedent(
        """
        for attempt in range(2):
            try:
                sim.p2pCommunicationReceive("Nobody")
            except Exception as error:
                print(attempt, error)
        """
    )
    # were the bad source remembered like a good one, the second receive would wait for a
    # message that never comes: a DeadlockError
    result = run_simulation(
        host_bus_device(), app, labels={"CPU": 1, "GPU": 1}, variables={}, timeline_limit=0
    )

    assert result["status"] == "finished"


DETAILED_MODEL = """
function computationTime(params) { return params.n * 1e-3; }
function computationDetail(params) { return {bound: params.n > 2 ? "memory" : "issue", n: params.n}; }
"""


def one_node_system(source: str) -> dict[str, Any]:
    return {
        "name": "one node",
        "hardware": {"gpu": {"type": "GPU", "name": "G", "attributes": {}}},
        "models": {"m": {"language": "javascript", "source": source}},
        "nodes": [{"id": "g", "name": "g", "hardware": "gpu", "model": "m", "labels": {"P": 2}}],
        "edges": [],
    }


def test_repeated_computations_keep_their_detail_on_the_timeline() -> None:
    app = "for n in [1, 3, 1, 3, 1]:\n    sim.computation({'n': n})\n"

    result = run_simulation(
        one_node_system(DETAILED_MODEL), app, labels={"P": 2}, variables={}, timeline_limit=7
    )

    entries = [entry for entry in result["timeline"] if entry["process"] == "P[0]"]
    assert [entry["detail"] for entry in entries][:4] == [
        {"bound": "issue", "n": 1},
        {"bound": "memory", "n": 3},
        {"bound": "issue", "n": 1},
        {"bound": "memory", "n": 3},
    ]
    assert result["timeline_dropped"] == 3
    assert result["processes"][0]["compute_s"] == pytest.approx(9e-3)


def test_a_detail_that_fails_fails_the_run_even_when_its_time_was_known() -> None:
    model = (
        "function computationTime(params) { return 1e-3; }\n"
        "function computationDetail(params) { if (params.n > 1) throw new Error('no'); "
        "return {n: params.n}; }\n"
    )
    app = "sim.computation({'n': 1})\nsim.computation({'n': 2})\n"

    # the second run finds n = 2's time in the memo the runs share, but not its detail
    for _ in range(2):
        with pytest.raises(ModelEvaluationError, match="no"):
            run_simulation(one_node_system(model), app, labels={"P": 1}, variables={})
