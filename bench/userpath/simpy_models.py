"""SimPy versions of `bench_userpath.py`'s scenarios, run as a lean subprocess.

`bench_userpath.py` times this script as a whole (interpreter start-up, `import simpy`, the
model, the run) against `python -m simulator run`, so it imports nothing but SimPy and four
standard modules: what a SimPy user's own script would. It prints one JSON line:
`{"events": ..., "simulated_s": ..., "in_process_s": ...}`, `in_process_s` being the time
from building the model to the end of `env.run()` (no start-up, no imports).

Each model is the ParaSim application model of the same name in `bench_userpath.py`, with
ParaSim's semantics spelled out (simulator/api.py): a send never blocks, every message
crosses a network node that serves one transfer per direction at a time, first come first
served, and takes `latency + size / bandwidth` there. An event is a finished computation or
a delivered message, counted in the model code as in `bench_engine.py`.

    .venv/bin/python bench/userpath/simpy_models.py compute '{"processes": 100, "steps": 10}'
"""

from __future__ import annotations

import json
import math
import sys
import time

import simpy


def compute(env: simpy.Environment, args: dict, done: list[int]) -> None:
    """P processes, each doing K computations of ten repeating durations (lockstep)."""
    steps = args["steps"]

    def body(process: int):
        timeout = env.timeout
        for step in range(steps):
            # bench/workload.py's step_duration(process, step, distinct=False)
            yield timeout(1.0 + ((process * 7 + step) % 10) * 0.1)
            done[0] += 1

    for process in range(args["processes"]):
        env.process(body(process))


def compute_distinct(env: simpy.Environment, args: dict, done: list[int]) -> None:
    """P processes, each doing K computations, every one of the run a duration of its own."""
    steps = args["steps"]

    def body(process: int):
        timeout = env.timeout
        for step in range(steps):
            # bench/workload.py's unique_duration(process, step, steps)
            yield timeout(0.5 + ((process * steps + step) * 7919 % 100000007) / 100000007)
            done[0] += 1

    for process in range(args["processes"]):
        env.process(body(process))


def _transfer(env: simpy.Environment, link: simpy.Resource, box: simpy.Store, item, hold: float):
    """One message: wait for the link direction (FIFO), hold it, then deliver."""
    with link.request() as request:
        yield request
        yield env.timeout(hold)
    yield box.put(item)


def pairs(env: simpy.Environment, args: dict, done: list[int]) -> None:
    """Pairs playing ping-pong; every message crosses the switch (one FIFO per direction)."""
    rounds = args["rounds"]
    hold = args["message_bytes"] / args["bandwidth"]
    up, down = simpy.Resource(env, 1), simpy.Resource(env, 1)

    def ping(pair: int, mine: simpy.Store, theirs: simpy.Store):
        for _ in range(rounds):
            env.process(_transfer(env, up, theirs, pair, hold))
            yield mine.get()
            done[0] += 1

    def pong(pair: int, mine: simpy.Store, theirs: simpy.Store):
        for _ in range(rounds):
            yield mine.get()
            done[0] += 1
            env.process(_transfer(env, down, theirs, pair, hold))

    for pair in range(args["pairs"]):
        box_a, box_b = simpy.Store(env), simpy.Store(env)
        env.process(ping(pair, box_a, box_b))
        env.process(pong(pair, box_b, box_a))


def master_worker(env: simpy.Environment, args: dict, done: list[int]) -> None:
    """The master hands tasks round-robin to the other hosts and collects the results."""
    hosts, tasks, seconds = args["hosts"], args["tasks"], args["task_seconds"]
    workers = hosts - 1
    to_workers, to_master = simpy.Resource(env, 1), simpy.Resource(env, 1)
    results = simpy.Store(env)
    inboxes = [simpy.Store(env) for _ in range(workers)]
    task_hold = args["latency"] + args["task_bytes"] / args["bandwidth"]
    result_hold = args["latency"] + args["result_bytes"] / args["bandwidth"]

    def master():
        for task in range(tasks):
            env.process(_transfer(env, to_workers, inboxes[task % workers], task, task_hold))
        for _ in range(tasks):
            yield results.get()
            done[0] += 1

    def worker(index: int):
        inbox = inboxes[index]
        for _ in range(index, tasks, workers):
            task = yield inbox.get()
            done[0] += 1
            yield env.timeout(seconds[task % len(seconds)])
            done[0] += 1
            env.process(_transfer(env, to_master, results, task, result_hold))

    env.process(master())
    for index in range(workers):
        env.process(worker(index))


class Barrier:
    """ParaSim's `sim.barrier`: the `count`-th arrival releases everyone; it costs no time."""

    def __init__(self, env: simpy.Environment, count: int) -> None:
        self.env, self.count, self.arrived = env, count, 0
        self.event = env.event()

    def wait(self) -> simpy.Event:
        """Return the event that fires when every participant has arrived."""
        self.arrived += 1
        event = self.event
        if self.arrived == self.count:
            self.arrived, self.event = 0, self.env.event()
            event.succeed()
        return event


def collectives(env: simpy.Environment, args: dict, done: list[int]) -> None:
    """Rounds of broadcast, scatter, a computation, gather and barrier, as ParaSim runs them.

    The root (ParaSim's `Root[0]`) sends to the workers in rank order over the switch's
    outbound FIFO; a scatter share is `size / participants`, the root included; the root
    computes, then waits for every gather message (inbound FIFO); the barrier releases
    everyone when the last participant reaches it and costs no time.
    """
    workers, rounds = args["processes"] - 1, args["rounds"]
    latency, bandwidth = args["latency"], args["bandwidth"]
    broadcast_hold = latency + args["broadcast_bytes"] / args["bandwidth"]
    scatter_hold = latency + args["scatter_bytes"] / (workers + 1) / bandwidth
    gather_hold = latency + args["gather_bytes"] / bandwidth
    outbound, inbound = simpy.Resource(env, 1), simpy.Resource(env, 1)
    root_box = simpy.Store(env)
    inboxes = [simpy.Store(env) for _ in range(workers)]
    barrier = Barrier(env, workers + 1)

    def compute_time(rank: int, step: int) -> float:
        return 0.001 * (1 + (rank + step) % 10)

    def root():
        for step in range(rounds):
            for box in inboxes:
                env.process(_transfer(env, outbound, box, step, broadcast_hold))
            for box in inboxes:
                env.process(_transfer(env, outbound, box, step, scatter_hold))
            yield env.timeout(compute_time(0, step))
            done[0] += 1
            for _ in range(workers):
                yield root_box.get()
                done[0] += 1
            yield barrier.wait()

    def worker(rank: int):
        inbox = inboxes[rank]
        for step in range(rounds):
            yield inbox.get()  # the broadcast
            done[0] += 1
            yield inbox.get()  # the scatter share
            done[0] += 1
            yield env.timeout(compute_time(rank, step))
            done[0] += 1
            env.process(_transfer(env, inbound, root_box, rank, gather_hold))
            yield barrier.wait()

    env.process(root())
    for rank in range(workers):
        env.process(worker(rank))


def merpsys(env: simpy.Environment, args: dict, done: list[int]) -> None:
    """examples/merpsys_gtx970 with `pairs` CPU-GPU pairs, each over its own PCIe link (one
    FIFO per direction), N varied per pair as bench_userpath.py's application model varies
    it: the app's messages and kernel, with the example's two models written in Python
    (the Volkov kernel model and eq. 4.6's PCIe transfers, the same double operations)."""
    hw, bus = args["gpu"], args["pcie"]
    block, intensity, occupancy = args["blockSz"], args["computeIntensity"], args["occupancy"]
    cuda_instructions = issued = 23 + 4 * intensity
    gmem_bytes, latency_bound, kernel_lambda = 384, 942 + 24 * intensity, 0.703787

    def kernel_seconds(grid: int) -> float:
        warps = grid * math.ceil(block / hw["warpSize"])
        bound = 1 / max(
            hw["warpSize"] * cuda_instructions / hw["CUDACores"],
            issued / hw["schedulers"],
            gmem_bytes / hw["GMEMThroughput"],
        )
        throughput = min(occupancy / latency_bound, bound)
        cycles = warps / (throughput * hw["SMs"] * kernel_lambda)
        return cycles / (hw["SMCoreClock"] * math.pow(10, 6))

    def transfer_seconds(size: float, direction: str | None) -> float:
        if size == 0 and not direction:
            return 0
        if direction == "HostToDevice":
            return bus["startupHTD"] + size / (bus["bandwidth"] * bus["lambdaHTD"])
        return bus["startupDth"] + size / (bus["bandwidth"] * bus["lambdaDth"])

    def send(link: simpy.Resource, box: simpy.Store, size: float, direction: str | None):
        env.process(_transfer(env, link, box, size, transfer_seconds(size, direction)))

    def cpu(n: int, up: simpy.Resource, to_gpu: simpy.Store, mine: simpy.Store):
        send(up, to_gpu, 4 * float(n), "HostToDevice")
        yield mine.get()
        done[0] += 1
        send(up, to_gpu, 4 * float(n), "HostToDevice")
        yield mine.get()
        done[0] += 1

    def gpu(n: int, down: simpy.Resource, to_cpu: simpy.Store, mine: simpy.Store):
        yield mine.get()
        done[0] += 1
        send(down, to_cpu, 0, None)
        yield mine.get()
        done[0] += 1
        yield env.timeout(kernel_seconds((n + block - 1) // block))
        done[0] += 1
        send(down, to_cpu, 4 * float(n), "DeviceToHost")

    for rank in range(args["pairs"]):
        n = args["N"] + 4096 * rank  # bench_userpath.py's MERPSYS_DISTINCT
        up, down = simpy.Resource(env, 1), simpy.Resource(env, 1)
        box_cpu, box_gpu = simpy.Store(env), simpy.Store(env)
        env.process(cpu(n, up, box_gpu, box_cpu))
        env.process(gpu(n, down, box_cpu, box_gpu))


SCENARIOS = {
    "compute": compute,
    "compute-distinct": compute_distinct,
    "merpsys": merpsys,
    "pairs": pairs,
    "master-worker": master_worker,
    "collectives": collectives,
}


def main(argv: list[str]) -> int:
    """Run one scenario and print its figures as one JSON line; return the exit status."""
    name, args = argv[1], json.loads(argv[2])
    started = time.perf_counter()
    env = simpy.Environment()
    done = [0]
    SCENARIOS[name](env, args, done)
    env.run()
    in_process_s = time.perf_counter() - started
    print(
        json.dumps({"events": done[0], "simulated_s": float(env.now), "in_process_s": in_process_s})
    )
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
