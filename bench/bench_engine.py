"""Engine benchmark: ParaSim's kernel against SimPy and SimGrid's Python bindings, one run.

Each scenario is written three times (ParaSim, SimPy, SimGrid) with the same workload:

(a) compute        P processes, each doing K computations (pauses) one after another;
(b) pairs          pairs playing ping-pong, every message crossing one network node that
                   serves one transfer per direction at a time (FIFO);
(c) master-worker  one master hands tasks round-robin to the 999 other hosts of a
                   1000-host cluster through one switch; a worker receives a task, computes,
                   sends the result back (sends never block).

An *event* is one finished activity the model asked for: a computation or a delivered
message. Every engine counts the same ones, at the application level (a (a) run has P x K
events, a (b) run 2 x pairs x rounds, a (c) run 3 x tasks), so events per second compare
the same work; the kernels' own queue entries differ (ParaSim's `Engine.events` also counts
process starts and link callbacks, SimPy counts its Timeout / Request / Process events,
SimGrid has no counter). Scenario (c) is also run through `run_simulation` with a system
snapshot, JavaScript computational models and an application model, as a user would.

SimGrid runs as a subprocess of the system Python (`bench/simgrid_scenarios.py`, Debian's
`python3-simgrid`), timed inside that process, best of `--simgrid-repeat` runs; ParaSim and
SimPy figures are the best of `--repeat` runs taken in turns. Also measured, in child
processes: the peak RSS of 100,000 simultaneous processes. Exit status 1 when ParaSim and
SimPy disagree on a scenario's events or end time.

    .venv/bin/python bench/bench_engine.py [--quick] [--repeat N] [--simgrid-repeat N]
        [--no-memory] [--write-results]
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import resource
import subprocess
import sys
import time
from collections.abc import Callable, Generator
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Any

# NumPy (imported by the result code) must not start idle BLAS threads that compete with the
# measured, single-threaded engines for this machine's two cores.
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

BENCH_DIR = Path(__file__).resolve().parent
REPO_ROOT = BENCH_DIR.parent
if str(REPO_ROOT) not in sys.path:  # `python bench/bench_engine.py` from anywhere
    sys.path.insert(0, str(REPO_ROOT))

import simpy  # noqa: E402
from results_block import run_line, write_block  # noqa: E402  # bench/results_block.py
from workload import step_duration  # noqa: E402  # bench/workload.py, shared with SimGrid

from simulator.engine import (  # noqa: E402
    Engine,
    Mailbox,
    PythonEngine,
    Resource,
    install_allocator_hook,
    speedups,
)
from simulator.runner import run_simulation  # noqa: E402

install_allocator_hook()  # as the sandbox child does: a benchmark process runs simulations only

SYSTEM_PYTHON = "/usr/bin/python3"
SIMGRID_SCRIPT = BENCH_DIR / "simgrid_scenarios.py"
RESULTS_FILE = BENCH_DIR / "RESULTS.md"
MEMORY_PROCESSES = 100_000
MEMORY_LIMIT_MIB = 2048

Figures = tuple[int, float]
"""(events, simulated seconds) of one run."""


# -- workloads: the same numbers for every engine ----------------------------------------------
@dataclass(frozen=True)
class Workload:
    """Sizes of the three scenarios."""

    processes: int = 1000
    steps: int = 50
    pairs: int = 100
    rounds: int = 50
    message_bytes: float = 1e6
    switch_bandwidth: float = 1e9
    hosts: int = 1000
    tasks: int = 5000
    task_bytes: float = 1e6
    result_bytes: float = 1e3
    cluster_bandwidth: float = 1.25e8
    cluster_latency: float = 5e-5
    task_seconds: tuple[float, ...] = (0.5, 0.7, 1.1)

    def transfer_s(self, size: float) -> float:
        """Return the time one cluster message holds the switch: latency + size / bandwidth."""
        return self.cluster_latency + size / self.cluster_bandwidth


QUICK = Workload(processes=200, steps=10, pairs=20, rounds=20, tasks=2000)


# -- (a) compute ---------------------------------------------------------------------------------
def parasim_compute(w: Workload, distinct: bool, engine_class: type[Engine] = Engine) -> Figures:
    """Return (events, simulated s) of scenario (a) on ParaSim's engine API."""
    engine = engine_class()
    done = [0]

    def body(process: int) -> None:
        pause = engine.pause
        for step in range(w.steps):
            pause(step_duration(process, step, distinct))
            done[0] += 1

    for process in range(w.processes):
        engine.spawn(f"p{process}", body, process)
    engine.run()
    return done[0], engine.now


def simpy_compute(w: Workload, distinct: bool) -> Figures:
    """Return (events, simulated s) of scenario (a) on SimPy."""
    env = simpy.Environment()
    done = [0]

    def body(process: int) -> Generator[simpy.Event, Any, None]:
        timeout = env.timeout
        for step in range(w.steps):
            yield timeout(step_duration(process, step, distinct))
            done[0] += 1

    for process in range(w.processes):
        env.process(body(process))
    env.run()
    return done[0], float(env.now)


# -- (b) pairs through one network node ----------------------------------------------------------
def parasim_pairs(w: Workload) -> Figures:
    """Return (events, simulated s) of scenario (b) on ParaSim's engine API."""
    engine = Engine()
    up, down = Resource(engine, "switch a->b"), Resource(engine, "switch b->a")
    hold = w.message_bytes / w.switch_bandwidth
    done = [0]

    def send(link: Resource, box: Mailbox, message: int) -> None:
        link.acquire()
        engine.pause(hold)
        link.release()
        box.put(message)

    def ping(pair: int, mine: Mailbox, theirs: Mailbox) -> None:
        for _ in range(w.rounds):
            send(up, theirs, pair)
            mine.get()
            done[0] += 1

    def pong(pair: int, mine: Mailbox, theirs: Mailbox) -> None:
        for _ in range(w.rounds):
            mine.get()
            done[0] += 1
            send(down, theirs, pair)

    for pair in range(w.pairs):
        box_a, box_b = Mailbox(engine, f"a{pair}"), Mailbox(engine, f"b{pair}")
        engine.spawn(f"a{pair}", ping, pair, box_a, box_b)
        engine.spawn(f"b{pair}", pong, pair, box_b, box_a)
    engine.run()
    return done[0], engine.now


def simpy_pairs(w: Workload) -> Figures:
    """Return (events, simulated s) of scenario (b) on SimPy."""
    env = simpy.Environment()
    up, down = simpy.Resource(env, 1), simpy.Resource(env, 1)
    hold = w.message_bytes / w.switch_bandwidth
    done = [0]

    def send(
        link: simpy.Resource, box: simpy.Store, message: int
    ) -> Generator[simpy.Event, Any, None]:
        with link.request() as request:
            yield request
            yield env.timeout(hold)
        yield box.put(message)

    def ping(
        pair: int, mine: simpy.Store, theirs: simpy.Store
    ) -> Generator[simpy.Event, Any, None]:
        for _ in range(w.rounds):
            yield from send(up, theirs, pair)
            yield mine.get()
            done[0] += 1

    def pong(
        pair: int, mine: simpy.Store, theirs: simpy.Store
    ) -> Generator[simpy.Event, Any, None]:
        for _ in range(w.rounds):
            yield mine.get()
            done[0] += 1
            yield from send(down, theirs, pair)

    for pair in range(w.pairs):
        box_a, box_b = simpy.Store(env), simpy.Store(env)
        env.process(ping(pair, box_a, box_b))
        env.process(pong(pair, box_b, box_a))
    env.run()
    return done[0], float(env.now)


# -- (c) master-worker on a 1000-host cluster ----------------------------------------------------
def worker_tasks(w: Workload, worker: int) -> range:
    """Return the tasks the master hands to `worker` (round-robin)."""
    return range(worker, w.tasks, w.hosts - 1)


def parasim_master_worker(w: Workload) -> Figures:
    """Return (events, simulated s) of scenario (c) on ParaSim's engine API."""
    engine = Engine()
    to_workers, to_master = Resource(engine, "switch out"), Resource(engine, "switch in")
    results = Mailbox(engine, "master")
    inboxes = [Mailbox(engine, f"w{worker}") for worker in range(w.hosts - 1)]
    done = [0]

    def send(link: Resource, box: Mailbox, message: int, hold: float) -> None:
        """Start a transfer that never blocks the sender: FIFO on `link`, then delivery."""

        def deliver(_: object) -> None:
            link.release()
            box.put(message)

        link.request(lambda _: engine.schedule(hold, deliver))

    task_hold, result_hold = w.transfer_s(w.task_bytes), w.transfer_s(w.result_bytes)

    def master() -> None:
        workers = w.hosts - 1
        for task in range(w.tasks):
            send(to_workers, inboxes[task % workers], task, task_hold)
        for _ in range(w.tasks):
            results.get()
            done[0] += 1

    def worker(index: int) -> None:
        inbox = inboxes[index]
        seconds = w.task_seconds
        for _ in worker_tasks(w, index):
            task = inbox.get()
            done[0] += 1
            engine.pause(seconds[task % len(seconds)])
            done[0] += 1
            send(to_master, results, task, result_hold)

    engine.spawn("master", master)
    for index in range(w.hosts - 1):
        engine.spawn(f"worker{index}", worker, index)
    engine.run()
    return done[0], engine.now


def simpy_master_worker(w: Workload) -> Figures:
    """Return (events, simulated s) of scenario (c) on SimPy."""
    env = simpy.Environment()
    to_workers, to_master = simpy.Resource(env, 1), simpy.Resource(env, 1)
    results = simpy.Store(env)
    inboxes = [simpy.Store(env) for _ in range(w.hosts - 1)]
    done = [0]

    def transfer(
        link: simpy.Resource, box: simpy.Store, message: int, hold: float
    ) -> Generator[simpy.Event, Any, None]:
        with link.request() as request:
            yield request
            yield env.timeout(hold)
        yield box.put(message)

    task_hold, result_hold = w.transfer_s(w.task_bytes), w.transfer_s(w.result_bytes)

    def master() -> Generator[simpy.Event, Any, None]:
        workers = w.hosts - 1
        for task in range(w.tasks):
            env.process(transfer(to_workers, inboxes[task % workers], task, task_hold))
        for _ in range(w.tasks):
            yield results.get()
            done[0] += 1

    def worker(index: int) -> Generator[simpy.Event, Any, None]:
        inbox = inboxes[index]
        seconds = w.task_seconds
        for _ in worker_tasks(w, index):
            task = yield inbox.get()
            done[0] += 1
            yield env.timeout(seconds[task % len(seconds)])
            done[0] += 1
            env.process(transfer(to_master, results, task, result_hold))

    env.process(master())
    for index in range(w.hosts - 1):
        env.process(worker(index))
    env.run()
    return done[0], float(env.now)


MASTER_WORKER_APP = """\
# Master-worker: the master hands `tasks` tasks round-robin to the workers and collects them.
workers = labels["Worker"]
if tag.equals("Master"):
    for task in range(tasks):
        sim.p2pCommunicationSend(taskBytes, "Worker", None, task % workers)
    for task in range(tasks):
        sim.p2pCommunicationReceive("Worker")
else:
    for task in range(rank, tasks, workers):
        sim.p2pCommunicationReceive("Master", 0)
        sim.computation({"task": task % 3})
        sim.p2pCommunicationSend(resultBytes, "Master", None, 0)
"""


def master_worker_snapshot(w: Workload) -> dict[str, Any]:
    """Return the 1000-host cluster as a system snapshot: master, workers, one switch."""
    seconds = ", ".join(repr(s) for s in w.task_seconds)
    cpu_model = f"function computationTime(params) {{ return [{seconds}][params.task]; }}\n"
    switch_model = "function p2pTime(size, params) { return latency + size / bandwidth; }\n"
    return {
        "name": "bench: 1000-host cluster behind one switch",
        "hardware": {
            "host": {"type": "CPU", "name": "cluster host", "attributes": {}},
            "switch": {
                "type": "NETWORK",
                "name": "cluster switch",
                "attributes": {
                    "latency": w.cluster_latency,
                    "bandwidth": w.cluster_bandwidth,
                },
            },
        },
        "models": {
            "task_time": {"language": "javascript", "source": cpu_model},
            "switch_time": {"language": "javascript", "source": switch_model},
        },
        "nodes": [
            {
                "id": "master",
                "name": "master",
                "hardware": "host",
                "model": "task_time",
                "count": 1,
                "labels": {"Master": 1},
            },
            {
                "id": "workers",
                "name": "workers",
                "hardware": "host",
                "model": "task_time",
                "count": w.hosts - 1,
                "labels": {"Worker": 1},
            },
            {
                "id": "switch",
                "name": "switch",
                "hardware": "switch",
                "model": "switch_time",
                "count": 1,
                "labels": {},
            },
        ],
        "edges": [["master", "switch"], ["workers", "switch"]],
    }


def parasim_run_simulation(w: Workload) -> Figures:
    """Return (events, simulated s) of scenario (c) through run_simulation, as a user runs it."""
    result = run_simulation(
        master_worker_snapshot(w),
        MASTER_WORKER_APP,
        labels={"Master": 1, "Worker": w.hosts - 1},
        variables={"tasks": w.tasks, "taskBytes": w.task_bytes, "resultBytes": w.result_bytes},
        timeline_limit=1000,
    )
    return 3 * w.tasks, float(result["overall_time_s"])


# -- SimGrid (system Python, subprocess) ---------------------------------------------------------
def simgrid_run(scenario: str, args: dict[str, Any]) -> tuple[Figures, float, float]:
    """Return ((events, simulated s), wall s, CPU s) of one SimGrid run, timed in the child."""
    completed = subprocess.run(
        [SYSTEM_PYTHON, str(SIMGRID_SCRIPT), scenario, json.dumps(args)],
        capture_output=True,
        text=True,
        check=False,
    )
    if completed.returncode != 0:
        raise RuntimeError(f"SimGrid {scenario} failed:\n{completed.stderr[-2000:]}")
    figures = json.loads(completed.stdout.strip().splitlines()[-1])
    return (
        (int(figures["events"]), float(figures["simulated_s"])),
        float(figures["wall_s"]),
        float(figures["cpu_s"]),
    )


def simgrid_args(
    w: Workload, scenario: str, *, distinct: bool = True, sleep: bool = False
) -> dict[str, Any]:
    """Return the JSON arguments of `simgrid_scenarios.py` for `scenario`."""
    if scenario == "compute":
        return {"processes": w.processes, "steps": w.steps, "distinct": distinct, "sleep": sleep}
    if scenario == "pairs":
        return {
            "pairs": w.pairs,
            "rounds": w.rounds,
            "message_bytes": w.message_bytes,
            "bandwidth": w.switch_bandwidth,
        }
    return {
        "hosts": w.hosts,
        "tasks": w.tasks,
        "task_bytes": w.task_bytes,
        "result_bytes": w.result_bytes,
        "bandwidth": w.cluster_bandwidth,
        "latency": w.cluster_latency,
        "task_seconds": list(w.task_seconds),
    }


SIMGRID_MISSING = (
    f"missing: SimGrid is skipped (apt-get install python3-simgrid for {SYSTEM_PYTHON})"
)


def simgrid_version() -> str:
    """Return SimGrid's version as the system Python sees it, or SIMGRID_MISSING."""
    try:
        completed = subprocess.run(
            [SYSTEM_PYTHON, "-c", "import simgrid; print(simgrid.simgrid_version)"],
            capture_output=True,
            text=True,
            check=False,
        )
    except OSError:  # no system Python
        return SIMGRID_MISSING
    return completed.stdout.strip() if completed.returncode == 0 else SIMGRID_MISSING


# -- measuring -----------------------------------------------------------------------------------
@dataclass
class Measurement:
    """The best of several runs of one engine on one scenario."""

    engine: str
    events: int
    simulated_s: float
    wall_s: float
    cpu_s: float
    note: str = ""

    @property
    def rate(self) -> float:
        """Return events per second of wall time."""
        return self.events / self.wall_s


@dataclass
class ScenarioResult:
    """All engines' measurements of one scenario."""

    key: str
    title: str
    rows: list[Measurement] = field(default_factory=list)

    def rate_of(self, engine: str) -> float:
        """Return the events per second of the row named `engine`."""
        return next(row.rate for row in self.rows if row.engine == engine)


Run = tuple[str, Callable[[], Figures], str]
"""(engine, a run of the scenario returning its figures, note)."""


def best_interleaved(runs: list[Run], repeat: int) -> list[Measurement]:
    """Return the fastest of `repeat` timed runs of each of `runs`, taken in turns.

    Taking the engines in turns (A, B, A, B...) rather than one after the other keeps a
    change in the machine's load from favouring one of them.
    """
    best: list[Measurement | None] = [None] * len(runs)
    for _ in range(repeat):
        for index, (engine, run, note) in enumerate(runs):
            started, cpu_started = time.perf_counter(), time.process_time()
            events, simulated_s = run()
            wall_s, cpu_s = time.perf_counter() - started, time.process_time() - cpu_started
            current = best[index]
            if current is None or wall_s < current.wall_s:
                best[index] = Measurement(engine, events, simulated_s, wall_s, cpu_s, note)
    return [measurement for measurement in best if measurement is not None]


def best_simgrid(
    engine: str, scenario: str, args: dict[str, Any], repeat: int, note: str
) -> Measurement:
    """Return the fastest of `repeat` SimGrid runs (each a fresh system-Python process)."""
    best: Measurement | None = None
    for _ in range(repeat):
        (events, simulated_s), wall_s, cpu_s = simgrid_run(scenario, args)
        if best is None or wall_s < best.wall_s:
            best = Measurement(engine, events, simulated_s, wall_s, cpu_s, note)
    assert best is not None
    return best


PARASIM, PARASIM_FULL, SIMPY = "ParaSim engine", "ParaSim run_simulation", "SimPy"
PARASIM_PYTHON = "ParaSim engine, pure-Python core"
SIMGRID, SIMGRID_EXECUTE = "SimGrid", "SimGrid execute"


def python_core_runs(run: Callable[[], Figures]) -> list[Run]:
    """Return a run of the pure-Python core too, when the C core is what `Engine` uses."""
    return [] if speedups is None else [(PARASIM_PYTHON, run, "the fallback")]


def core_description() -> str:
    """Return which scheduling core `Engine` runs on."""
    if speedups is None:
        return "ParaSim core: pure Python (simulator/_speedups.c not built or turned off)"
    stats = speedups.chunk_cache_stats()
    return (
        "ParaSim core: C (simulator/_speedups.c), frame-stack chunk cache "
        f"{'on' if stats['installed'] else 'off'} (up to {stats['capacity']} chunks)"
    )


def run_scenarios(w: Workload, repeat: int, simgrid_repeat: int) -> list[ScenarioResult]:
    """Return the measurements of the scenarios on every engine (no SimGrid when 0 repeats)."""
    compute = f"{w.processes} processes x {w.steps} computations"
    a = ScenarioResult("a", f"(a) compute, distinct times: {compute}")
    a_lockstep = ScenarioResult("a'", f"(a') compute, lockstep (10 durations): {compute}")
    b = ScenarioResult("b", f"(b) pairs: {w.pairs} pairs x {w.rounds} ping-pongs, one switch")
    c = ScenarioResult("c", f"(c) master-worker: {w.hosts} hosts, {w.tasks} tasks, one switch")
    for scenario, distinct in ((a, True), (a_lockstep, False)):
        scenario.rows += best_interleaved(
            [
                (PARASIM, partial(parasim_compute, w, distinct), ""),
                (SIMPY, partial(simpy_compute, w, distinct), ""),
                *python_core_runs(partial(parasim_compute, w, distinct, PythonEngine)),
            ],
            repeat,
        )
    b.rows += best_interleaved(
        [(PARASIM, partial(parasim_pairs, w), ""), (SIMPY, partial(simpy_pairs, w), "")], repeat
    )
    c.rows += best_interleaved(
        [
            (PARASIM, partial(parasim_master_worker, w), ""),
            (PARASIM_FULL, partial(parasim_run_simulation, w), "snapshot + JS models"),
            (SIMPY, partial(simpy_master_worker, w), ""),
        ],
        repeat,
    )
    if simgrid_repeat:
        for scenario, distinct in ((a, True), (a_lockstep, False)):
            args = simgrid_args(w, "compute", distinct=distinct, sleep=True)
            scenario.rows.append(
                best_simgrid(SIMGRID, "compute", args, simgrid_repeat, "sleep_for")
            )
        args = simgrid_args(w, "compute", distinct=True)
        note = "execute, a host each"
        a.rows.append(best_simgrid(SIMGRID_EXECUTE, "compute", args, simgrid_repeat, note))
        args = simgrid_args(w, "pairs")
        note = "bandwidth sharing, not FIFO"
        b.rows.append(best_simgrid(SIMGRID, "pairs", args, simgrid_repeat, note))
        args = simgrid_args(w, "master_worker")
        note = "<cluster>, bandwidth sharing"
        c.rows.append(best_simgrid(SIMGRID, "master_worker", args, simgrid_repeat, note))
    return [a, a_lockstep, b, c]


def check_agreement(scenarios: list[ScenarioResult]) -> list[str]:
    """Return a line per scenario whose ParaSim and SimPy runs disagree on events or end time."""
    problems = []
    for scenario in scenarios:
        ours = [row for row in scenario.rows if row.engine.startswith("ParaSim")]
        reference = next(row for row in scenario.rows if row.engine == SIMPY)
        for row in scenario.rows:
            if row.events != reference.events:
                problems.append(f"{scenario.title}: {row.engine} counted {row.events} events")
        for row in ours:
            if abs(row.simulated_s - reference.simulated_s) > 1e-9 * max(
                1.0, reference.simulated_s
            ):
                problems.append(
                    f"{scenario.title}: {row.engine} ended at {row.simulated_s!r} s, "
                    f"SimPy at {reference.simulated_s!r} s"
                )
    return problems


# -- memory: 100,000 simultaneous processes ------------------------------------------------------
def peak_rss_kib() -> int:
    """Return this process's peak RSS in KiB: its VmHWM where /proc has it. Not ru_maxrss
    alone, which Linux carries from the process that started this one across fork and exec
    (a benchmark's own peak would read as the child's baseline)."""
    try:
        with open("/proc/self/status", encoding="ascii") as status:
            for line in status:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1])
    except OSError:
        pass
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss


def memory_child(kind: str, processes: int) -> None:
    """Run `processes` simultaneous processes and print peak RSS (MiB) and events as JSON."""
    baseline_kib = peak_rss_kib()
    started = time.perf_counter()
    if kind == "engine":
        engine = Engine()

        def body(process: int) -> None:
            engine.pause(1.0)  # every process is suspended at once here
            engine.pause(step_duration(process, 1, True))

        for process in range(processes):
            engine.spawn(f"p{process}", body, process)
        engine.run()
        events = 2 * processes
    else:
        snapshot = {
            "name": "bench: many processes",
            "hardware": {"host": {"type": "CPU", "name": "host", "attributes": {}}},
            "models": {
                "pause": {
                    "language": "javascript",
                    "source": "function computationTime(params) { return params.s; }",
                }
            },
            "nodes": [
                {
                    "id": "hosts",
                    "name": "hosts",
                    "hardware": "host",
                    "model": "pause",
                    "count": processes,
                    "labels": {"P": 1},
                }
            ],
            "edges": [],
        }
        app = "sim.computation({'s': 1.0})\nsim.computation({'s': 1.0 + (rank % 10) * 0.1})\n"
        run_simulation(snapshot, app, labels={"P": processes}, variables={}, timeline_limit=100)
        events = 2 * processes
    wall_s = time.perf_counter() - started
    peak_kib = peak_rss_kib()
    print(
        json.dumps(
            {
                "peak_mib": peak_kib / 1024,
                "baseline_mib": baseline_kib / 1024,
                "events": events,
                "wall_s": wall_s,
            }
        )
    )


def measure_memory(kind: str, processes: int) -> dict[str, float]:
    """Return the child's figures for `processes` simultaneous processes of `kind`."""
    completed = subprocess.run(
        [sys.executable, str(Path(__file__).resolve()), "--memory-child", kind, str(processes)],
        capture_output=True,
        text=True,
        check=False,
        cwd=REPO_ROOT,
    )
    if completed.returncode != 0:
        raise RuntimeError(f"memory child failed:\n{completed.stderr[-2000:]}")
    figures: dict[str, float] = json.loads(completed.stdout.strip().splitlines()[-1])
    return figures


# -- where the time goes: process lifetime and steady-state event cost --------------------------
def kernel_costs(repeat: int) -> dict[str, tuple[float, float]]:
    """Return {engine: (us per process start + finish, us per event between few processes)}.

    The steady-state cost is scenario (a) with 10 processes x 20,000 computations; the process
    cost is what 5,000 processes x 1 computation take beyond 5,000 steady-state events.
    """
    steady, many = Workload(processes=10, steps=20_000), Workload(processes=5_000, steps=1)
    engines: list[tuple[str, Callable[[Workload, bool], Figures]]] = [
        (PARASIM, parasim_compute),
        (SIMPY, simpy_compute),
    ]
    if speedups is not None:
        engines.append((PARASIM_PYTHON, partial(parasim_compute, engine_class=PythonEngine)))
    steady_runs = best_interleaved(
        [(engine, partial(run, steady, True), "") for engine, run in engines], repeat
    )
    many_runs = best_interleaved(
        [(engine, partial(run, many, True), "") for engine, run in engines], repeat
    )
    costs = {}
    for steady_run, many_run in zip(steady_runs, many_runs, strict=True):
        event_s = steady_run.wall_s / 200_000
        process_s = many_run.wall_s / 5_000 - event_s
        costs[steady_run.engine] = (process_s * 1e6, event_s * 1e6)
    return costs


# -- report --------------------------------------------------------------------------------------
def machine_description(simgrid: str) -> list[str]:
    """Return lines describing the machine, the Pythons and the engines' versions."""
    cpu = "unknown CPU"
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    load = ", ".join(f"{value:.2f}" for value in os.getloadavg())
    return [
        f"machine: {os.cpu_count()} CPUs ({cpu}), load average {load}",
        f"python: {platform.python_version()} ({sys.executable}); SimPy {simpy.__version__}; "
        f"SimGrid {simgrid}" + ("" if simgrid == SIMGRID_MISSING else f" on {SYSTEM_PYTHON}"),
        core_description(),
    ]


def ratio(value: float) -> str:
    """Return a ratio as text, e.g. '2.41x'."""
    return f"{value:.2f}x"


def table(scenarios: list[ScenarioResult]) -> list[str]:
    """Return the results as a Markdown table (also readable as plain text)."""
    lines = [
        "| scenario | engine | events | simulated s | wall s | CPU s | events/s "
        "| ParaSim engine vs this |",
        "|---|---|---:|---:|---:|---:|---:|---:|",
    ]
    for scenario in scenarios:
        ours = scenario.rate_of(PARASIM)
        for row in scenario.rows:
            versus = "" if row.engine == PARASIM else ratio(ours / row.rate)
            engine = f"{row.engine} ({row.note})" if row.note else row.engine
            lines.append(
                f"| {scenario.title} | {engine} | {row.events} | {row.simulated_s:.6g} | "
                f"{row.wall_s:.4f} | {row.cpu_s:.4f} | {row.rate:,.0f} | {versus} |"
            )
    return lines


def main(argv: list[str] | None = None) -> int:
    """Run the benchmark and print (and, on request, record) the results; return exit status."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="smaller workloads (smoke test)")
    parser.add_argument(
        "--repeat", type=int, default=5, help="runs per ParaSim / SimPy figure (best is kept)"
    )
    parser.add_argument(
        "--simgrid-repeat", type=int, default=1, help="runs per SimGrid figure (0: skip SimGrid)"
    )
    parser.add_argument("--no-memory", action="store_true", help="skip the 100,000-process run")
    parser.add_argument(
        "--write-results",
        action="store_true",
        help=f"record the run in {RESULTS_FILE.name} (between its markers)",
    )
    parser.add_argument("--memory-child", nargs=2, metavar=("KIND", "N"), help=argparse.SUPPRESS)
    options = parser.parse_args(argv)
    if options.memory_child:
        memory_child(options.memory_child[0], int(options.memory_child[1]))
        return 0

    workload = QUICK if options.quick else Workload()
    version = simgrid_version()
    simgrid_repeat = options.simgrid_repeat if version != SIMGRID_MISSING else 0
    with_simgrid = simgrid_repeat > 0
    header = machine_description(version)
    print("\n".join(header))
    scenarios = run_scenarios(workload, max(1, options.repeat), simgrid_repeat)
    lines = table(scenarios)
    print("\n".join(lines))
    summary = []
    for scenario in scenarios:
        ours = scenario.rate_of(PARASIM)
        parts = [f"{scenario.key}: ParaSim/SimPy {ratio(ours / scenario.rate_of(SIMPY))}"]
        if with_simgrid:
            parts.append(f"ParaSim/SimGrid {ratio(ours / scenario.rate_of(SIMGRID))}")
        summary.append(", ".join(parts))
    print("ratios (events per second): " + "; ".join(summary))
    problems = check_agreement(scenarios)
    for problem in problems:
        print(f"DISAGREEMENT: {problem}")
    cost_lines = [
        f"{engine}: {process_us:.2f} us per process (start + finish), "
        f"{event_us:.2f} us per event (10 processes x 20,000 computations)"
        for engine, (process_us, event_us) in kernel_costs(max(1, options.repeat)).items()
    ]
    print("\n".join(cost_lines))

    memory_lines: list[str] = []
    if not options.no_memory:
        processes = 10_000 if options.quick else MEMORY_PROCESSES
        for kind, label in (("engine", "engine API"), ("run_simulation", "run_simulation")):
            figures = measure_memory(kind, processes)
            verdict = "within" if figures["peak_mib"] <= MEMORY_LIMIT_MIB else "OVER"
            memory_lines.append(
                f"{processes:,} simultaneous processes ({label}): peak RSS "
                f"{figures['peak_mib']:.0f} MiB ({verdict} {MEMORY_LIMIT_MIB} MiB; interpreter "
                f"alone {figures['baseline_mib']:.0f} MiB), {figures['wall_s']:.2f} s"
            )
        print("\n".join(memory_lines))

    if options.write_results:
        block = [
            run_line(
                "bench_engine.py",
                argv,
                f"ParaSim and SimPy best of {options.repeat}, SimGrid best of {simgrid_repeat}",
            ),
            "",
            *(f"- {line}" for line in header),
            "",
            *lines,
            "",
            *(f"- {line}" for line in summary + cost_lines + memory_lines),
        ]
        written = write_block(block, "bench_engine.py")
        print(f"wrote {written.relative_to(REPO_ROOT)}")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
