"""The three benchmark scenarios written for SimGrid's Python bindings (run by the system Python).

Debian's `python3-simgrid` installs the bindings for /usr/bin/python3 only, so
`bench_engine.py` runs this file as a subprocess, once per scenario (a SimGrid engine can be
created only once per process), and reads one JSON line from its stdout:
`{"events": ..., "wall_s": ..., "cpu_s": ..., "simulated_s": ..., "simgrid": "3.32.0"}`
(`cpu_s`: CPU time of the whole process, all of SimGrid's actor threads included).

The platform is an XML file generated into a temporary directory that is removed afterwards.
`wall_s` is measured inside this process, from creating the actors to the end of
`Engine.run()` (loading the platform is not timed, as building the world is not timed for
the other engines either). An event is one finished activity: a computation (`execute`) or a
delivered message; every engine in the benchmark counts the same ones.

    /usr/bin/python3 bench/simgrid_scenarios.py compute '{"processes": 100, "steps": 10, "distinct": true}'
"""

from __future__ import annotations

import json
import os
import sys
import tempfile
import time
from collections.abc import Callable
from typing import Any

import simgrid  # system Python only (Debian python3-simgrid)
from simgrid import Actor, Engine, Host, Mailbox, this_actor
from workload import step_duration, unique_duration  # bench/ is this script's directory

HOST_SPEED_FLOPS = 1e9
"""Every host computes 1 Gflop/s, so a computation of d seconds is d * 1e9 flops."""

PLATFORM_HEADER = (
    '<?xml version="1.0"?>\n'
    '<!DOCTYPE platform SYSTEM "https://simgrid.org/simgrid.dtd">\n'
    '<platform version="4.1">\n'
)


def compute_platform(processes: int) -> str:
    """Return a platform of one host per process (no network is used)."""
    return (
        PLATFORM_HEADER
        + '<zone id="world" routing="None">\n'
        + "".join(f'<host id="h{i}" speed="1Gf"/>\n' for i in range(processes))
        + "</zone>\n</platform>\n"
    )


def pairs_platform(pairs: int, bandwidth: float) -> str:
    """Return 2 x `pairs` hosts whose every route crosses one split-duplex link, the switch."""
    hosts = "".join(
        f'<host id="a{i}" speed="1Gf"/><host id="b{i}" speed="1Gf"/>\n' for i in range(pairs)
    )
    routes = "".join(
        f'<route src="a{i}" dst="b{i}" symmetrical="NO"><link_ctn id="switch" direction="UP"/></route>'
        f'<route src="b{i}" dst="a{i}" symmetrical="NO"><link_ctn id="switch" direction="DOWN"/></route>\n'
        for i in range(pairs)
    )
    link = f'<link id="switch" bandwidth="{bandwidth}Bps" latency="0s" sharing_policy="SPLITDUPLEX"/>\n'
    return (
        PLATFORM_HEADER
        + '<zone id="world" routing="Full">\n'
        + hosts
        + link
        + routes
        + "</zone>\n</platform>\n"
    )


def cluster_platform(hosts: int, bandwidth: float, latency: float) -> str:
    """Return a homogeneous cluster of `hosts` hosts (private links and a backbone)."""
    return (
        PLATFORM_HEADER
        + f'<cluster id="cluster" prefix="node-" suffix="" radical="0-{hosts - 1}" speed="1Gf" '
        f'bw="{bandwidth}Bps" lat="{latency}s" bb_bw="{bandwidth * 10}Bps" bb_lat="{latency}s"/>\n'
        + "</platform>\n"
    )


def scenario_compute(engine: Engine, args: dict[str, Any], counter: list[int]) -> None:
    """(a) P actors, each on its own host, each doing K computations one after the other."""
    processes, steps = args["processes"], args["steps"]
    sleep, distinct = args.get("sleep", False), args["distinct"]
    unique = args.get("workload") == "unique"  # every computation its own duration

    def duration(process: int, step: int) -> float:
        if unique:
            return unique_duration(process, step, steps)
        return step_duration(process, step, distinct)

    def body(process: int) -> None:
        for step in range(steps):
            if sleep:
                this_actor.sleep_for(duration(process, step))
            else:
                this_actor.execute(duration(process, step) * HOST_SPEED_FLOPS)
            counter[0] += 1

    for i in range(processes):
        Actor.create(f"p{i}", Host.by_name(f"h{i}"), body, i)


def scenario_pairs(engine: Engine, args: dict[str, Any], counter: list[int]) -> None:
    """(b) Pairs playing ping-pong: every message of every pair crosses the one switch."""
    pairs, rounds, size = args["pairs"], args["rounds"], int(args["message_bytes"])

    def ping(i: int) -> None:
        mine, theirs = Mailbox.by_name(f"a{i}"), Mailbox.by_name(f"b{i}")
        for _ in range(rounds):
            theirs.put(i, size)
            mine.get()
            counter[0] += 1

    def pong(i: int) -> None:
        mine, theirs = Mailbox.by_name(f"b{i}"), Mailbox.by_name(f"a{i}")
        for _ in range(rounds):
            mine.get()
            counter[0] += 1
            theirs.put(i, size)

    for i in range(pairs):
        Actor.create(f"a{i}", Host.by_name(f"a{i}"), ping, i)
        Actor.create(f"b{i}", Host.by_name(f"b{i}"), pong, i)


def scenario_master_worker(engine: Engine, args: dict[str, Any], counter: list[int]) -> None:
    """(c) One master hands `tasks` tasks round-robin to the other hosts and collects results."""
    hosts, tasks = args["hosts"], args["tasks"]
    task_bytes, result_bytes = int(args["task_bytes"]), int(args["result_bytes"])
    workers = hosts - 1

    def master() -> None:
        results = Mailbox.by_name("master")
        comms = [
            Mailbox.by_name(f"w{task % workers}").put_async(task, task_bytes)
            for task in range(tasks)
        ]
        for _ in range(tasks):
            results.get()
            counter[0] += 1
        for comm in comms:
            comm.wait()

    def worker(index: int) -> None:
        inbox, results = Mailbox.by_name(f"w{index}"), Mailbox.by_name("master")
        for _ in range(len(range(index, tasks, workers))):
            task = inbox.get()
            counter[0] += 1
            this_actor.execute(
                args["task_seconds"][task % len(args["task_seconds"])] * HOST_SPEED_FLOPS
            )
            counter[0] += 1
            results.put(task, result_bytes)

    Actor.create("master", Host.by_name("node-0"), master)
    for index in range(workers):
        Actor.create(f"worker{index}", Host.by_name(f"node-{index + 1}"), worker, index)


def star_platform(hosts: int, bandwidth: float, kind: str = "pairwise") -> str:
    """Return `hosts` hosts whose every route crosses one shared link, the switch; only the
    routes `kind` uses are declared (a ring's to the next rank, pairs' within a pair), so a
    ring over 1,024 ranks does not load a million routes."""
    names = "".join(f'<host id="h{i}" speed="1Gf"/>\n' for i in range(hosts))
    routes = "".join(
        f'<route src="h{i}" dst="h{j}" symmetrical="NO"><link_ctn id="switch"/></route>\n'
        for i, j in collective_routes(hosts, kind)
    )
    link = f'<link id="switch" bandwidth="{bandwidth}Bps" latency="0s" sharing_policy="SHARED"/>\n'
    return (
        PLATFORM_HEADER
        + '<zone id="world" routing="Full">\n'
        + names
        + link
        + routes
        + "</zone>\n</platform>\n"
    )


def collective_routes(hosts: int, kind: str) -> list[tuple[int, int]]:
    """Return the (source, destination) routes the scenario `kind` sends over."""
    if kind == "ring":
        return [(i, (i + 1) % hosts) for i in range(hosts)]
    if kind == "pairs":
        return [(i, i ^ 1) for i in range(hosts)]
    return [(i, j) for i in range(hosts) for j in range(hosts) if i != j]


def scenario_collective(engine: Engine, args: dict[str, Any], counter: list[int]) -> None:
    """A ring allreduce (2(p-1) steps to the next rank) or a pairwise alltoall (p-1 steps,
    step s to rank + s) of `size` bytes over `ranks` actors, unpipelined: in each step a rank
    sends its block and receives its predecessor's, as simulator.collectives schedules it;
    `calls` times over. Or `pairs`: rank 2k and 2k + 1 play ping-pong `calls` times with
    messages of a block (`size / ranks` bytes), the even one sending first."""
    ranks, size, kind = args["ranks"], float(args["size"]), args["kind"]
    calls = int(args.get("calls", 1))
    steps = [1] * (2 * (ranks - 1)) if kind == "ring" else list(range(1, ranks))
    block = int(size / ranks)

    def rank(i: int) -> None:
        for _ in range(calls):
            for shift in steps:
                target, source = (i + shift) % ranks, (i - shift) % ranks
                comm = Mailbox.by_name(f"{i}-{target}").put_async(i, block)
                Mailbox.by_name(f"{source}-{i}").get()
                counter[0] += 1
                comm.wait()

    def pair(i: int) -> None:
        peer = i ^ 1
        mine, theirs = Mailbox.by_name(f"{peer}-{i}"), Mailbox.by_name(f"{i}-{peer}")
        for _ in range(calls):
            if i % 2 == 0:
                theirs.put(i, block)
                mine.get()
            else:
                mine.get()
                theirs.put(i, block)
            counter[0] += 1

    for i in range(ranks):
        Actor.create(f"r{i}", Host.by_name(f"h{i}"), pair if kind == "pairs" else rank, i)


SCENARIOS: dict[str, tuple[Callable[[dict[str, Any]], str], Callable[..., None]]] = {
    "compute": (lambda a: compute_platform(a["processes"]), scenario_compute),
    "pairs": (lambda a: pairs_platform(a["pairs"], a["bandwidth"]), scenario_pairs),
    "master_worker": (
        lambda a: cluster_platform(a["hosts"], a["bandwidth"], a["latency"]),
        scenario_master_worker,
    ),
    "collective": (
        lambda a: star_platform(a["ranks"], a["bandwidth"], a["kind"]),
        scenario_collective,
    ),
}


def main(argv: list[str]) -> int:
    """Run one scenario and print its figures as one JSON line; return the exit status."""
    name, args = argv[1], json.loads(argv[2])
    make_platform, build = SCENARIOS[name]
    with tempfile.TemporaryDirectory(prefix="parasim-simgrid-") as directory:
        platform = os.path.join(directory, "platform.xml")
        with open(platform, "w", encoding="utf-8") as handle:
            handle.write(make_platform(args))
        # CM02: a transfer takes latency + size / bandwidth, without SimGrid's TCP factors.
        options = ["bench", "--log=root.thres:critical", "--cfg=network/model:CM02"]
        if name == "collective":  # the shared link carries the data alone, no ACK flows
            options.append("--cfg=network/crosstraffic:0")
        engine = Engine(options)
        engine.load_platform(platform)
    counter = [0]
    started, cpu_started = time.perf_counter(), time.process_time()
    build(engine, args, counter)
    engine.run()
    wall_s, cpu_s = time.perf_counter() - started, time.process_time() - cpu_started
    print(
        json.dumps(
            {
                "events": counter[0],
                "wall_s": wall_s,
                "cpu_s": cpu_s,
                "simulated_s": engine.clock,
                "simgrid": simgrid.simgrid_version,
            }
        )
    )
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
