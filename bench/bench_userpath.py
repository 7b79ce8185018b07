"""User-path benchmark: `python -m simulator run`, sandboxed and not, beside SimPy and SimGrid.

What a user feels is the whole command, so every figure here is the wall time of a
subprocess, interpreter start-up included, measured from outside (`time.perf_counter`
around the process, which is reaped with `os.wait4`):

- ParaSim CLI, sandboxed:  `python -m simulator run --system S --app A --labels L --json -`
                            (the default: the run goes to a limited child process);
- ParaSim CLI, no sandbox: the same with `--no-sandbox`;
- summary (compute only):  the same without `--json` (the summary alone, the README's
                            command), and with `--json FILE` (the summary and a file);
- SimPy script:            `python bench/userpath/simpy_models.py NAME ARGS`, a lean script
                            that imports nothing but SimPy and three standard modules;
- SimGrid script:          `/usr/bin/python3 bench/simgrid_scenarios.py NAME ARGS` (Debian's
                            python3-simgrid), or this file's `--simgrid-collectives` mode.

Each engine also times itself inside its process ("in-process"): ParaSim's `stats.wall_s`
(run_simulation, from loading the snapshot to the assembled result, inside the sandbox
child), SimPy from building the model to the end of `env.run()`, SimGrid from creating the
actors to the end of `Engine.run()`. The headline ratio compares the commands' wall times;
the in-process ratio leaves out start-up, imports and handing the result back.

Scenarios (the ParaSim inputs are a system snapshot, an application model and JavaScript
computational models generated into a temporary directory):

- compute        P processes (100, 1,000, 10,000), each K `sim.computation` calls; the model
                 returns `params.t`, ten durations repeat (bench/workload.py, lockstep), so
                 the JavaScript calls are memoized (the repeating workload);
- compute-distinct  the same with every computation of the run a duration of its own
                 (bench/workload.py unique_duration), so the model is evaluated at every
                 call, at the same sizes and at 1,000,000 computations (--distinct-events);
- compute-edited the distinct workload with the pause model as a user edits it (a comment, a
                 helper function, a conditional: EDITED_MODEL);
- pairs          ping-pong pairs across one switch (bench_engine.py's (b));
- master-worker  bench_engine.py's (c), its snapshot and application model;
- collectives    rounds of broadcast, scatter, computation, gather and barrier over a switch;
- merpsys        examples/merpsys_gtx970 scaled to N CPU-GPU pairs, N varied per process so
                 that the JavaScript models see distinct inputs (no memo hits across pairs);
                 judged by engine events per second and against a SimPy script with the
                 example's two models written in Python;
- merpsys-edited the same with a comment line added to each of the example's models;
- startup        one computation: the fixed cost of a run;
- memory         100,000 and 1,000,000 simultaneous processes through the sandboxed CLI:
                 peak RSS of the sandbox child (RUSAGE_CHILDREN of the CLI process, read by a
                 wrapper that runs the CLI's own `__main__`);
- large-result   a run whose result JSON is about 60 MB (a long timeline): its cost against
                 the same run with `--timeline-limit 0`, and sandboxed against not.

An event is a finished computation or a delivered message, the same count for every engine
(`bench_engine.py`); ParaSim's kernel counter (`stats.events`, process starts and link
callbacks included) is reported apart. Rounds are interleaved (ParaSim sandboxed, ParaSim no
sandbox, SimPy, SimGrid, again...); each cell gives the best and the median of the rounds and
their spread (min-max). Exit status 1 when ParaSim and SimPy disagree on the simulated end
time or the events, or the sandboxed and unsandboxed runs disagree.

    .venv/bin/python bench/bench_userpath.py [--quick] [--repeat N] [--scenario NAME]...
        [--simgrid-max-processes N] [--json]
"""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import json
import os
import platform
import re
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from cli_pool import private_pool, settle  # bench/cli_pool.py
from results_block import run_line, write_block  # bench/results_block.py

BENCH_DIR = Path(__file__).resolve().parent
REPO_ROOT = BENCH_DIR.parent
SYSTEM_PYTHON = "/usr/bin/python3"
SIMPY_SCRIPT = BENCH_DIR / "userpath" / "simpy_models.py"
SIMGRID_SCRIPT = BENCH_DIR / "simgrid_scenarios.py"
MERPSYS_DIR = REPO_ROOT / "examples" / "merpsys_gtx970"

SANDBOXED, NO_SANDBOX = "ParaSim CLI, sandboxed", "ParaSim CLI, --no-sandbox"
# The command line's first run, or any run with the pool off: it starts its own child.
FIRST_RUN = "ParaSim CLI, sandboxed, no pool (a first run)"
IN_A_ROW = 5  # the startup scenario's runs one right after another (a shell loop)
ROW = f"ParaSim CLI, sandboxed, {IN_A_ROW} in a row (per run)"
NO_POOL = {"PARASIM_CHILD_POOL": "0"}
# The command as the README shows it: the readable summary on stdout and nothing else (the
# run returns its summary alone), and with the result JSON in a file besides.
SUMMARY_ALONE = "ParaSim CLI, sandboxed, summary alone (no --json: the default)"
SUMMARY = "ParaSim CLI, sandboxed, summary printed (--json FILE)"
SIMPY, SIMGRID = "SimPy script", "SimGrid script"
SIMGRID_MISSING = (
    f"SimGrid is skipped: `import simgrid` fails in {SYSTEM_PYTHON} "
    "(apt-get install python3-simgrid)"
)

# Targets of issue 16, item 6.
TARGET_SIMPY_RATIO = 2.0
TARGET_SIMGRID_RATIO = 50.0
TARGET_MERPSYS_EVENTS_PER_S = 200_000
TARGET_STARTUP_S = 0.150
TARGET_MEMORY_BYTES = {100_000: 0.6e9, 1_000_000: 4e9}
TARGET_RESULT_BYTES, TARGET_RESULT_S = 60e6, 1.0

SCENARIO_NAMES = (
    "compute",
    "compute-distinct",
    "compute-edited",
    "pairs",
    "master-worker",
    "collectives",
    "merpsys",
    "merpsys-edited",
    "startup",
    "memory",
    "large-result",
)


@dataclass(frozen=True)
class Sizes:
    """Sizes of the scenarios (the full run; QUICK is the smoke test)."""

    compute_processes: tuple[int, ...] = (100, 1000, 10_000)
    compute_steps: int = 20
    # the distinct-inputs workloads: these sizes x compute_steps, and runs of these many
    # computations (10,000 processes each)
    distinct_processes: tuple[int, ...] = (100, 1000, 10_000)
    distinct_events: tuple[int, ...] = (1_000_000,)
    pairs: int = 100
    pair_rounds: int = 50
    hosts: int = 1000
    tasks: int = 5000
    collective_processes: int = 1000
    collective_rounds: int = 10
    merpsys_pairs: int = 1000
    startup_runs: int = 10
    memory_processes: tuple[int, ...] = (100_000, 1_000_000)
    large_result_processes: int = 1000
    large_result_steps: int = 850
    large_result_rounds: int = 3


QUICK = Sizes(
    compute_processes=(100, 1000),
    compute_steps=5,
    distinct_processes=(100, 1000),
    distinct_events=(),
    pairs=20,
    pair_rounds=10,
    hosts=100,
    tasks=500,
    collective_processes=100,
    collective_rounds=3,
    merpsys_pairs=100,
    startup_runs=3,
    memory_processes=(10_000,),
    large_result_processes=100,
    large_result_steps=100,
    large_result_rounds=1,
)

# Collectives: the switch of bench_engine.py's cluster, and the sizes of one round.
COLLECTIVE_LATENCY = 5e-5
COLLECTIVE_BANDWIDTH = 1.25e8
BROADCAST_BYTES, SCATTER_BYTES, GATHER_BYTES = 1e5, 1e6, 1e3


# -- the ParaSim inputs -------------------------------------------------------------------------
PAUSE_MODEL = "function computationTime(params) { return params.t; }\n"
SWITCH_MODEL = "function p2pTime(size, params) { return latency + size / bandwidth; }\n"

COMPUTE_APP = """\
# Compute: `steps` computations of ten repeating durations (bench/workload.py, lockstep).
for step in range(steps):
    sim.computation({"t": 1.0 + ((rank * 7 + step) % 10) * 0.1})
"""
DISTINCT_APP = """\
# Compute: `steps` computations, every one of the run a duration of its own
# (bench/workload.py unique_duration): the model is evaluated at every call.
for step in range(steps):
    sim.computation({"t": 0.5 + ((rank * steps + step) * 7919 % 100000007) / 100000007})
"""
# The pause model as a user edits it: a comment, a helper function, a conditional, params.get;
# it returns params.t for every input the workloads give (t in [0.5, 1.5)).
EDITED_MODEL = """\
// The pause model, edited: a helper keeps a time within bounds.
function bounded(t, low, high) {
  return t < low ? low : (t > high ? high : t);
}

function computationTime(params) {
  var t = params.get('t');
  if (t > 1e9) {
    return 1e9; // no computation lasts longer
  }
  return bounded(t, 0, 1e9);
}
"""
# The line a user adds to each of the MERPSYS example's models (merpsys-edited): any edit
# makes a model other than the shipped one.
MERPSYS_EDIT = "// edited: the testbed of my own lab\n"

PAIRS_APP = """\
# Ping-pong: A[i] and B[i] exchange `rounds` messages; every message crosses the switch.
if tag.equals("A"):
    for step in range(rounds):
        sim.p2pCommunicationSend(messageBytes, "B")
        sim.p2pCommunicationReceive("B", rank)
else:
    for step in range(rounds):
        sim.p2pCommunicationReceive("A", rank)
        sim.p2pCommunicationSend(messageBytes, "A")
"""

COLLECTIVES_APP = """\
# Collectives: each round the root broadcasts and scatters, everyone computes, the root
# gathers, and everyone meets at a barrier.
for step in range(rounds):
    sim.broadcast(broadcastBytes, "Root", 0)
    sim.scatter(scatterBytes, "Root", 0)
    sim.computation({"t": 0.001 * (1 + (rank + step) % 10)})
    sim.gather(gatherBytes, "Root", 0)
    sim.barrier()
"""

MERPSYS_DISTINCT = (
    "# bench_userpath.py: each process its own N, so the models see distinct inputs.\n"
    "N = N + 4096 * rank\n"
)
MERPSYS_VARIABLES = {"N": 10_000_000, "blockSz": 256, "computeIntensity": 1, "occupancy": 64}

MEMORY_APP = "sim.computation({'t': 1.0})\nsim.computation({'t': 1.0 + (rank % 10) * 0.1})\n"


def host(node_id: str, count: int, labels: dict[str, int], model: str = "pause") -> dict[str, Any]:
    """Return a snapshot node of `count` hosts carrying `labels`."""
    return {
        "id": node_id,
        "name": node_id,
        "hardware": "host",
        "model": model,
        "count": count,
        "labels": labels,
    }


def cluster_snapshot(
    name: str,
    nodes: list[dict[str, Any]],
    *,
    latency: float = 0.0,
    bandwidth: float = 1e9,
    pause_model: str = PAUSE_MODEL,
) -> dict[str, Any]:
    """Return a snapshot of `nodes` (hosts with the pause model, or `pause_model` in its
    place), joined by one switch when there are several."""
    snapshot: dict[str, Any] = {
        "name": f"bench_userpath: {name}",
        "hardware": {
            "host": {"type": "CPU", "name": "host", "attributes": {}},
            "switch": {
                "type": "NETWORK",
                "name": "switch",
                "attributes": {"latency": latency, "bandwidth": bandwidth},
            },
        },
        "models": {
            "pause": {"language": "javascript", "source": pause_model},
            "switch_time": {"language": "javascript", "source": SWITCH_MODEL},
        },
        "nodes": list(nodes),
        "edges": [],
    }
    if len(nodes) > 1:
        switch = {
            "id": "switch",
            "name": "switch",
            "hardware": "switch",
            "model": "switch_time",
            "count": 1,
            "labels": {},
        }
        snapshot["nodes"].append(switch)
        snapshot["edges"] = [[node["id"], "switch"] for node in nodes]
    return snapshot


def merpsys_snapshot(pairs: int, *, edited: bool = False) -> dict[str, Any]:
    """Return examples/merpsys_gtx970's snapshot with `pairs` CPUs, PCIe links and GPUs;
    `edited`: each model with MERPSYS_EDIT as its first line."""
    snapshot: dict[str, Any] = json.loads((MERPSYS_DIR / "snapshot.json").read_text())
    for node in snapshot["nodes"]:
        if not node.get("group"):
            node["count"] = pairs  # CPU i talks to GPU i over PCIe link i
    if edited:
        for model in snapshot["models"].values():
            model["source"] = MERPSYS_EDIT + model["source"]
    return snapshot


# -- one scenario instance ----------------------------------------------------------------------
@dataclass
class ParaSimInputs:
    """What `python -m simulator run` gets."""

    snapshot: dict[str, Any]
    app: str
    labels: dict[str, int]
    variables: Mapping[str, object] = field(default_factory=dict)
    timeline_limit: int | None = None  # None: the CLI's default


@dataclass
class Case:
    """One scenario at one size, run on every engine that has it."""

    scenario: str
    title: str
    events: int  # finished computations + delivered messages, the same for every engine
    parasim: ParaSimInputs
    simpy: tuple[str, dict[str, Any]] | None = None
    simgrid: list[str] | None = None  # the command after the system Python
    simgrid_note: str = ""


@dataclass
class Run:
    """One timed command."""

    wall_s: float
    cpu_s: float  # the command and every descendant it waited for
    in_process_s: float
    events: int
    simulated_s: float
    engine_events: int | None = None  # ParaSim's kernel counter
    result_bytes: int | None = None  # ParaSim's result, compact JSON
    output_bytes: int = 0  # what the command printed


@dataclass
class Cell:
    """The runs of one engine on one case."""

    path: str
    note: str = ""
    runs: list[Run] = field(default_factory=list)

    @property
    def best(self) -> float:
        """Return the shortest wall time."""
        return min(run.wall_s for run in self.runs)

    @property
    def median(self) -> float:
        """Return the median wall time."""
        return statistics.median(run.wall_s for run in self.runs)

    @property
    def in_process(self) -> float:
        """Return the median in-process time."""
        return statistics.median(run.in_process_s for run in self.runs)

    @property
    def outside(self) -> float:
        """Return the median time outside the in-process figure (start-up, result, output)."""
        return statistics.median(run.wall_s - run.in_process_s for run in self.runs)

    @property
    def spread(self) -> tuple[float, float]:
        """Return the (shortest, longest) wall time."""
        walls = [run.wall_s for run in self.runs]
        return min(walls), max(walls)

    def summary(self) -> dict[str, Any]:
        """Return the cell as JSON-ready figures."""
        return {
            "path": self.path,
            "note": self.note,
            "best_wall_s": self.best,
            "median_wall_s": self.median,
            "min_max_wall_s": list(self.spread),
            "median_in_process_s": self.in_process,
            "runs": [asdict(run) for run in self.runs],
        }


@dataclass
class CaseResult:
    """Every engine's cell of one case."""

    case: Case
    cells: list[Cell]

    def cell(self, path: str) -> Cell | None:
        """Return the cell of `path`, or None when the case has none."""
        return next((cell for cell in self.cells if cell.path == path), None)


# -- running commands ---------------------------------------------------------------------------
class CommandFailed(RuntimeError):
    """A benchmarked command ended with a non-zero exit status."""


def timed(
    argv: Sequence[str], stdout_path: Path, env: Mapping[str, str] | None = None
) -> tuple[float, float]:
    """Run `argv` from the repository root with stdout to `stdout_path` and `env` added to
    the environment; return (wall s, CPU s of it and its waited-for descendants: a pooled
    sandbox child is the pool daemon's, its CPU is not counted). Raise CommandFailed on a
    non-zero status."""
    with (
        open(stdout_path, "wb") as out,
        tempfile.TemporaryFile() as err,
    ):
        started = time.perf_counter()
        process = subprocess.Popen(
            list(argv),
            stdin=subprocess.DEVNULL,
            stdout=out,
            stderr=err,
            cwd=REPO_ROOT,
            env={**os.environ, **(env or {})},
        )
        _, status, usage = os.wait4(process.pid, 0)
        wall_s = time.perf_counter() - started
        process.returncode = os.waitstatus_to_exitcode(status)
        if process.returncode != 0:
            err.seek(0)
            tail = err.read().decode("utf-8", "replace")[-2000:]
            raise CommandFailed(
                f"{' '.join(argv[:6])}... exited with {process.returncode}:\n{tail}"
            )
    return wall_s, usage.ru_utime + usage.ru_stime


def cli_argv(
    files: dict[str, Path], inputs: ParaSimInputs, *, sandbox: bool, json_to: str | None = "-"
) -> list[str]:
    """Return the `python -m simulator run` command of `inputs`: the result JSON on stdout,
    or in the file `json_to` with the summary on stdout, or (None) the summary alone."""
    labels = ",".join(f"{label}={count}" for label, count in inputs.labels.items())
    argv = [sys.executable, "-m", "simulator", "run", "--system", str(files["system"])]
    argv += ["--app", str(files["app"]), "--labels", labels]
    if json_to is not None:
        argv += ["--json", json_to]
    for name, value in inputs.variables.items():
        argv += ["--var", f"{name}={value!r}" if isinstance(value, float) else f"{name}={value}"]
    if inputs.timeline_limit is not None:
        argv += ["--timeline-limit", str(inputs.timeline_limit)]
    if not sandbox:
        argv.append("--no-sandbox")
    return argv


def write_inputs(directory: Path, inputs: ParaSimInputs) -> dict[str, Path]:
    """Write the snapshot and the application model into `directory`; return their paths."""
    files = {"system": directory / "system.json", "app": directory / "app.py"}
    files["system"].write_text(json.dumps(inputs.snapshot), encoding="utf-8")
    files["app"].write_text(inputs.app, encoding="utf-8")
    return files


def run_parasim(
    argv: list[str],
    out: Path,
    events: int,
    env: Mapping[str, str] | None = None,
    *,
    result_file: Path | None = None,
) -> Run:
    """Return one timed CLI run; its figures come from the result JSON it printed, or wrote
    to `result_file`."""
    wall_s, cpu_s = timed(argv, out, env)
    printed = out.read_bytes()
    result = json.loads(printed if result_file is None else result_file.read_bytes())
    stats = result["stats"]
    return Run(
        wall_s=wall_s,
        cpu_s=cpu_s,
        in_process_s=float(stats["wall_s"]),
        events=events,
        simulated_s=float(result["overall_time_s"]),
        engine_events=int(stats["events"]),
        result_bytes=len(json.dumps(result, separators=(",", ":")).encode("utf-8")),
        output_bytes=len(printed),
    )


def summary_figures(printed: str) -> tuple[float, int, float]:
    """Return the overall simulated time (9 significant digits), the engine's events and its
    time (`stats.wall_s`, 3 digits) that a run's printed summary gives (ValueError: none)."""
    overall = re.search(r"^Overall time: (\S+) s$", printed, re.MULTILINE)
    engine = re.search(r"^Engine: (\d+) events in (\S+) s ", printed, re.MULTILINE)
    if overall is None or engine is None:
        raise ValueError(f"no summary in what the command printed:\n{printed[-2000:]}")
    return float(overall[1]), int(engine[1]), float(engine[2])


def run_parasim_summary(argv: list[str], out: Path, events: int) -> Run:
    """Return one timed CLI run that printed its summary alone; its figures come from the
    summary's text (`summary_figures`)."""
    wall_s, cpu_s = timed(argv, out)
    printed = out.read_text(encoding="utf-8")
    try:
        simulated_s, engine_events, in_process_s = summary_figures(printed)
    except ValueError as error:
        raise CommandFailed(f"{' '.join(argv[:6])}... {error}") from None
    return Run(
        wall_s=wall_s,
        cpu_s=cpu_s,
        in_process_s=in_process_s,
        events=events,
        simulated_s=simulated_s,
        engine_events=engine_events,
        output_bytes=len(printed),
    )


def run_script(argv: list[str], out: Path, time_key: str) -> Run:
    """Return one timed SimPy or SimGrid script run (figures from its last JSON line)."""
    wall_s, cpu_s = timed(argv, out)
    figures = json.loads(out.read_text(encoding="utf-8").strip().splitlines()[-1])
    return Run(
        wall_s=wall_s,
        cpu_s=cpu_s,
        in_process_s=float(figures[time_key]),
        events=int(figures["events"]),
        simulated_s=float(figures["simulated_s"]),
    )


def progress(message: str) -> None:
    """Show what runs now (stderr, so that --json output stays clean)."""
    print(message, file=sys.stderr, flush=True)


Runner = tuple[Cell, Callable[[], Run]]
"""The cell a command's runs go to, and one timed run of the command."""


def runners(case: Case, with_simgrid: bool, workdir: Path) -> list[Runner]:
    """Return the commands of `case`: the CLI sandboxed and not, SimPy and SimGrid if any."""
    directory = Path(tempfile.mkdtemp(prefix=f"{case.scenario}-", dir=workdir))
    files = write_inputs(directory, case.parasim)
    out = directory / "stdout.json"

    def sandboxed() -> Run:
        run = run_parasim(cli_argv(files, case.parasim, sandbox=True), out, case.events)
        settle()
        return run

    commands: list[Runner] = [
        (Cell(SANDBOXED), sandboxed),
        (
            Cell(NO_SANDBOX),
            lambda: run_parasim(cli_argv(files, case.parasim, sandbox=False), out, case.events),
        ),
    ]
    if case.scenario == "compute":
        result_file = directory / "result.json"
        summary_argv = cli_argv(files, case.parasim, sandbox=True, json_to=str(result_file))

        def summary() -> Run:
            run = run_parasim(summary_argv, out, case.events, result_file=result_file)
            settle()
            return run

        commands.append((Cell(SUMMARY), summary))
        alone_argv = cli_argv(files, case.parasim, sandbox=True, json_to=None)

        def summary_alone() -> Run:
            run = run_parasim_summary(alone_argv, out, case.events)
            settle()
            return run

        commands.append((Cell(SUMMARY_ALONE), summary_alone))
    if case.scenario == "startup":
        commands.append(
            (
                Cell(FIRST_RUN),
                lambda: run_parasim(
                    cli_argv(files, case.parasim, sandbox=True), out, case.events, NO_POOL
                ),
            )
        )
        commands.append((Cell(ROW), lambda: in_a_row(files, case, out)))
    if case.simpy is not None:
        name, args = case.simpy
        simpy_argv = [sys.executable, str(SIMPY_SCRIPT), name, json.dumps(args)]
        commands.append((Cell(SIMPY), lambda: run_script(simpy_argv, out, "in_process_s")))
    if case.simgrid is not None and with_simgrid:
        simgrid_argv = [SYSTEM_PYTHON, *case.simgrid]
        cell = Cell(SIMGRID, case.simgrid_note)
        commands.append((cell, lambda: run_script(simgrid_argv, out, "wall_s")))
    return commands


def in_a_row(files: dict[str, Path], case: Case, out: Path) -> Run:
    """Return IN_A_ROW sandboxed runs started one right after another, as one run: their
    mean. The pool prepares its next child after each run, while the next command line
    starts (a user's shell loop over parameters); nothing waits for it to settle between."""
    argv = cli_argv(files, case.parasim, sandbox=True)
    runs = [run_parasim(argv, out, case.events) for _ in range(IN_A_ROW)]
    settle()
    return Run(
        wall_s=statistics.fmean(run.wall_s for run in runs),
        cpu_s=statistics.fmean(run.cpu_s for run in runs),
        in_process_s=statistics.fmean(run.in_process_s for run in runs),
        events=case.events,
        simulated_s=runs[-1].simulated_s,
        engine_events=runs[-1].engine_events,
        result_bytes=runs[-1].result_bytes,
        output_bytes=runs[-1].output_bytes,
    )


def run_interleaved(
    cases: Sequence[Case], rounds: int, with_simgrid: bool, workdir: Path
) -> list[CaseResult]:
    """Return every engine's runs of `cases`: each round runs every command of every case
    once, in turns, so that a change in the machine's load does not favour one of them."""
    commands = [runners(case, with_simgrid, workdir) for case in cases]
    title = " + ".join(case.title for case in cases)
    for number in range(rounds):
        progress(f"{title}: round {number + 1} of {rounds}")
        for case_commands in commands:
            for cell, run in case_commands:
                cell.runs.append(run())
    return [
        CaseResult(case, [cell for cell, _ in case_commands])
        for case, case_commands in zip(cases, commands, strict=True)
    ]


# -- the cases ----------------------------------------------------------------------------------
# The compute workloads, by scenario: what the table calls them, the application model, the
# pause model's source, SimPy's and SimGrid's scenario and SimGrid's workload.
COMPUTE_WORKLOADS: dict[str, tuple[str, str, str, str, str]] = {
    "compute": ("repeating inputs", COMPUTE_APP, PAUSE_MODEL, "compute", "repeating"),
    "compute-distinct": (
        "distinct inputs, arithmetic model",
        DISTINCT_APP,
        PAUSE_MODEL,
        "compute-distinct",
        "unique",
    ),
    "compute-edited": (
        "distinct inputs, user-edited model",
        DISTINCT_APP,
        EDITED_MODEL,
        "compute-distinct",
        "unique",
    ),
}


def compute_case(
    processes: int, steps: int, simgrid_max: int, *, title: str = "", scenario: str = "compute"
) -> Case:
    """Return scenario `scenario` (a COMPUTE_WORKLOADS key) with `processes` x `steps`
    computations."""
    workload, app, model, simpy_name, simgrid_workload = COMPUTE_WORKLOADS[scenario]
    snapshot = cluster_snapshot("compute", [host("hosts", processes, {"P": 1})], pause_model=model)
    simgrid = None
    if processes <= simgrid_max:
        args = {
            "processes": processes,
            "steps": steps,
            "distinct": False,
            "sleep": True,
            "workload": simgrid_workload,
        }
        simgrid = [str(SIMGRID_SCRIPT), "compute", json.dumps(args)]
    return Case(
        scenario="startup" if title else scenario,
        title=title or f"{scenario} {processes:,} x {steps} ({workload})",
        events=processes * steps,
        parasim=ParaSimInputs(snapshot, app, {"P": processes}, {"steps": steps}),
        simpy=(simpy_name, {"processes": processes, "steps": steps}),
        simgrid=simgrid,
        simgrid_note="sleep_for",
    )


def engine_workload(sizes: Sizes) -> Any:
    """Return bench_engine.py's Workload of these sizes (its pairs and master-worker)."""
    # bench_engine needs the venv (SimPy, the simulator); this file must also load in the
    # system Python for --simgrid-collectives, hence the late import.
    from bench_engine import Workload

    return Workload(
        pairs=sizes.pairs, rounds=sizes.pair_rounds, hosts=sizes.hosts, tasks=sizes.tasks
    )


def pairs_case(sizes: Sizes, simgrid_max: int) -> Case:
    """Return scenario `pairs`: bench_engine.py's (b) through the CLI."""
    from bench_engine import simgrid_args

    w = engine_workload(sizes)
    snapshot = cluster_snapshot(
        "pairs",
        [host("a", w.pairs, {"A": 1}), host("b", w.pairs, {"B": 1})],
        bandwidth=w.switch_bandwidth,
    )
    variables = {"rounds": w.rounds, "messageBytes": w.message_bytes}
    simpy_args = {
        "pairs": w.pairs,
        "rounds": w.rounds,
        "message_bytes": w.message_bytes,
        "bandwidth": w.switch_bandwidth,
    }
    simgrid = None
    if 2 * w.pairs <= simgrid_max:
        simgrid = [str(SIMGRID_SCRIPT), "pairs", json.dumps(simgrid_args(w, "pairs"))]
    return Case(
        scenario="pairs",
        title=f"pairs {w.pairs} x {w.rounds} ping-pongs",
        events=2 * w.pairs * w.rounds,
        parasim=ParaSimInputs(snapshot, PAIRS_APP, {"A": w.pairs, "B": w.pairs}, variables),
        simpy=("pairs", simpy_args),
        simgrid=simgrid,
        simgrid_note="bandwidth sharing, not FIFO",
    )


def master_worker_case(sizes: Sizes, simgrid_max: int) -> Case:
    """Return scenario `master-worker`: bench_engine.py's (c), its snapshot and model."""
    from bench_engine import MASTER_WORKER_APP, master_worker_snapshot, simgrid_args

    w = engine_workload(sizes)
    variables = {"tasks": w.tasks, "taskBytes": w.task_bytes, "resultBytes": w.result_bytes}
    labels = {"Master": 1, "Worker": w.hosts - 1}
    simgrid = None
    if w.hosts <= simgrid_max:
        args = simgrid_args(w, "master_worker")
        simgrid = [str(SIMGRID_SCRIPT), "master_worker", json.dumps(args)]
    return Case(
        scenario="master-worker",
        title=f"master-worker {w.hosts:,} hosts, {w.tasks:,} tasks",
        events=3 * w.tasks,
        parasim=ParaSimInputs(master_worker_snapshot(w), MASTER_WORKER_APP, labels, variables),
        simpy=("master-worker", simgrid_args(w, "master_worker")),
        simgrid=simgrid,
        simgrid_note="<cluster>, bandwidth sharing",
    )


def collectives_args(sizes: Sizes) -> dict[str, Any]:
    """Return the collectives scenario's numbers (SimPy and SimGrid arguments)."""
    return {
        "processes": sizes.collective_processes,
        "rounds": sizes.collective_rounds,
        "latency": COLLECTIVE_LATENCY,
        "bandwidth": COLLECTIVE_BANDWIDTH,
        "broadcast_bytes": BROADCAST_BYTES,
        "scatter_bytes": SCATTER_BYTES,
        "gather_bytes": GATHER_BYTES,
    }


def collectives_case(sizes: Sizes, simgrid_max: int) -> Case:
    """Return scenario `collectives`: a root and P - 1 workers behind one switch."""
    processes, rounds = sizes.collective_processes, sizes.collective_rounds
    snapshot = cluster_snapshot(
        "collectives",
        [host("root", 1, {"Root": 1}), host("workers", processes - 1, {"Worker": 1})],
        latency=COLLECTIVE_LATENCY,
        bandwidth=COLLECTIVE_BANDWIDTH,
    )
    variables = {
        "rounds": rounds,
        "broadcastBytes": BROADCAST_BYTES,
        "scatterBytes": SCATTER_BYTES,
        "gatherBytes": GATHER_BYTES,
    }
    args = collectives_args(sizes)
    simgrid = None
    if processes <= simgrid_max:
        simgrid = [str(Path(__file__).resolve()), "--simgrid-collectives", json.dumps(args)]
    labels = {"Root": 1, "Worker": processes - 1}
    return Case(
        scenario="collectives",
        title=f"collectives {processes:,} processes x {rounds} rounds",
        # per round: 3 messages to or from each worker, a computation on every process
        events=rounds * (3 * (processes - 1) + processes),
        parasim=ParaSimInputs(snapshot, COLLECTIVES_APP, labels, variables),
        simpy=("collectives", args),
        simgrid=simgrid,
        simgrid_note="<cluster>, bandwidth sharing, barrier",
    )


def merpsys_case(sizes: Sizes, *, edited: bool = False) -> Case:
    """Return scenario `merpsys` (`edited`: `merpsys-edited`, the example's models each with
    a comment line added): the GPU example scaled, distinct model inputs per process."""
    pairs = sizes.merpsys_pairs
    app = MERPSYS_DISTINCT + (MERPSYS_DIR / "app.py").read_text(encoding="utf-8")
    snapshot = merpsys_snapshot(pairs, edited=edited)
    hardware = snapshot["hardware"]
    simpy_args = {
        **MERPSYS_VARIABLES,
        "pairs": pairs,
        "gpu": hardware["gtx970"]["attributes"],
        "pcie": hardware["pcie3_x16"]["attributes"],
    }
    models = "edited models" if edited else "shipped models"
    return Case(
        scenario="merpsys-edited" if edited else "merpsys",
        title=f"merpsys_gtx970 x {pairs:,} CPU-GPU pairs (distinct inputs, {models})",
        events=5 * pairs,  # 4 messages and 1 kernel per pair
        parasim=ParaSimInputs(snapshot, app, {"CPU": pairs, "GPU": pairs}, MERPSYS_VARIABLES),
        simpy=("merpsys", simpy_args),
    )


def large_result_case(sizes: Sizes) -> Case:
    """Return scenario `large-result`: compute with every computation on the timeline."""
    processes, steps = sizes.large_result_processes, sizes.large_result_steps
    snapshot = cluster_snapshot("large result", [host("hosts", processes, {"P": 1})])
    return Case(
        scenario="large-result",
        title=f"large result: {processes:,} x {steps} computations, all on the timeline",
        events=processes * steps,
        parasim=ParaSimInputs(
            snapshot,
            COMPUTE_APP,
            {"P": processes},
            {"steps": steps},
            timeline_limit=processes * steps,
        ),
    )


# -- memory: peak RSS of the sandbox child ------------------------------------------------------
# Runs the CLI's own __main__ (as `python -m simulator` does), then reports RUSAGE_CHILDREN:
# the CLI reaps the sandbox child with os.wait4, so its children's peak RSS is the child's.
# The CLI's own peak is its VmHWM, not RUSAGE_SELF: Linux carries the peak of the process that
# started it across fork and exec into ru_maxrss, which made this benchmark's own 0.55 GB (after
# parsing the large result) read as the CLI's.
CLI_RUSAGE_WRAPPER = """\
import json, resource, runpy, sys
report, sys.argv = sys.argv[1], ["python -m simulator", *sys.argv[2:]]
status = 0
try:
    runpy.run_module("simulator", run_name="__main__", alter_sys=True)
except SystemExit as end:
    status = end.code
with open("/proc/self/status") as status_file:
    hwm = [line.split()[1] for line in status_file if line.startswith("VmHWM:")]
with open(report, "w") as handle:
    json.dump({"status": status,
               "child_kib": resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss,
               "cli_kib": int(hwm[0])}, handle)
sys.exit(status)
"""


@dataclass
class MemoryFigures:
    """One run of many simultaneous processes through the sandboxed CLI."""

    processes: int
    wall_s: float
    child_peak_bytes: int
    cli_peak_bytes: int
    status: int
    error: str = ""
    simulated_s: float | None = None


def measure_memory(processes: int, workdir: Path) -> MemoryFigures:
    """Return the sandbox child's and the CLI's peak RSS for `processes` processes, each
    suspended at once in its first computation."""
    directory = Path(tempfile.mkdtemp(prefix="memory-", dir=workdir))
    snapshot = cluster_snapshot("many processes", [host("hosts", processes, {"P": 1})])
    inputs = ParaSimInputs(snapshot, MEMORY_APP, {"P": processes}, timeline_limit=100)
    files = write_inputs(directory, inputs)
    report, out = directory / "rusage.json", directory / "stdout.json"
    cli = cli_argv(files, inputs, sandbox=True)
    argv = [sys.executable, "-c", CLI_RUSAGE_WRAPPER, str(report), *cli[3:]]
    progress(f"memory: {processes:,} simultaneous processes")
    with open(out, "wb") as stdout, tempfile.TemporaryFile() as stderr:
        started = time.perf_counter()
        completed = subprocess.run(
            argv,
            stdout=stdout,
            stderr=stderr,
            cwd=REPO_ROOT,
            check=False,
            env={**os.environ, **NO_POOL},  # the child must be the CLI's: RUSAGE_CHILDREN
        )
        wall_s = time.perf_counter() - started
        stderr.seek(0)
        error = stderr.read().decode("utf-8", "replace").strip()[-500:]
    figures = json.loads(report.read_text()) if report.exists() else {}
    simulated_s = None
    if completed.returncode == 0:
        simulated_s = float(json.loads(out.read_bytes())["overall_time_s"])
    return MemoryFigures(
        processes=processes,
        wall_s=wall_s,
        child_peak_bytes=int(figures.get("child_kib", 0)) * 1024,
        cli_peak_bytes=int(figures.get("cli_kib", 0)) * 1024,
        status=completed.returncode,
        error=error if completed.returncode else "",
        simulated_s=simulated_s,
    )


# -- SimGrid: the collectives (run by the system Python) ----------------------------------------
def simgrid_collectives(args: dict[str, Any]) -> dict[str, Any]:
    """Return the figures of the collectives scenario on SimGrid (Debian's python3-simgrid).

    The root sends every broadcast and scatter message at once (`put_async`), computes, then
    receives every gather message; workers receive twice, compute, send their gather message
    without waiting (`put_init().detach()`) and meet at a `Barrier`. Timed as
    `simgrid_scenarios.py` times: from creating the actors to the end of `Engine.run()`.
    """
    import simgrid
    from simgrid import Actor, Barrier, Engine, Host, Mailbox, this_actor
    from simgrid_scenarios import HOST_SPEED_FLOPS, cluster_platform

    processes, rounds = args["processes"], args["rounds"]
    workers = processes - 1
    broadcast, gather = int(args["broadcast_bytes"]), int(args["gather_bytes"])
    share = int(args["scatter_bytes"] / processes)
    with tempfile.TemporaryDirectory(prefix="parasim-simgrid-") as directory:
        path = os.path.join(directory, "platform.xml")
        with open(path, "w", encoding="utf-8") as handle:
            handle.write(cluster_platform(processes, args["bandwidth"], args["latency"]))
        engine = Engine(["bench", "--log=root.thres:critical", "--cfg=network/model:CM02"])
        engine.load_platform(path)
    done = [0]
    barrier = Barrier(processes)

    def compute_seconds(rank: int, step: int) -> float:
        return 0.001 * (1 + (rank + step) % 10)

    def root() -> None:
        inboxes = [Mailbox.by_name(f"w{rank}") for rank in range(workers)]
        results = Mailbox.by_name("root")
        for step in range(rounds):
            comms = [box.put_async(step, broadcast) for box in inboxes]
            comms += [box.put_async(step, share) for box in inboxes]
            this_actor.execute(compute_seconds(0, step) * HOST_SPEED_FLOPS)
            done[0] += 1
            for _ in range(workers):
                results.get()
                done[0] += 1
            for comm in comms:
                comm.wait()
            barrier.wait()

    def worker(rank: int) -> None:
        inbox, results = Mailbox.by_name(f"w{rank}"), Mailbox.by_name("root")
        for step in range(rounds):
            inbox.get()
            inbox.get()
            done[0] += 2
            this_actor.execute(compute_seconds(rank, step) * HOST_SPEED_FLOPS)
            done[0] += 1
            results.put_init(rank, gather).detach()
            barrier.wait()

    started, cpu_started = time.perf_counter(), time.process_time()
    Actor.create("root", Host.by_name("node-0"), root)
    for rank in range(workers):
        Actor.create(f"worker{rank}", Host.by_name(f"node-{rank + 1}"), worker, rank)
    engine.run()
    return {
        "events": done[0],
        "wall_s": time.perf_counter() - started,
        "cpu_s": time.process_time() - cpu_started,
        "simulated_s": engine.clock,
        "simgrid": simgrid.simgrid_version,
    }


def simgrid_version() -> str | None:
    """Return SimGrid's version in the system Python, or None when it cannot be imported."""
    try:
        completed = subprocess.run(
            [SYSTEM_PYTHON, "-c", "import simgrid; print(simgrid.simgrid_version)"],
            capture_output=True,
            text=True,
            check=False,
        )
    except OSError:
        return None
    return completed.stdout.strip() if completed.returncode == 0 else None


# -- checks and report --------------------------------------------------------------------------
def check(result: CaseResult) -> list[str]:
    """Return the disagreements of a case: ParaSim paths with each other and with SimPy,
    and any engine's events with the count the scenario implies."""
    case, problems = result.case, []
    sandboxed, reference = result.cell(SANDBOXED), result.cell(SIMPY)
    assert sandboxed is not None
    ours = sandboxed.runs[0]
    for cell in result.cells:
        for run in cell.runs:
            if run.events != case.events:
                problems.append(f"{case.title}: {cell.path} counted {run.events} events")
            simulated_s = ours.simulated_s
            if cell.path == SUMMARY_ALONE:  # read from the summary's text
                simulated_s = float(f"{simulated_s:.9g}")
            if cell.path in (SANDBOXED, NO_SANDBOX, SUMMARY, SUMMARY_ALONE) and (
                run.simulated_s != simulated_s or run.engine_events != ours.engine_events
            ):
                problems.append(
                    f"{case.title}: {cell.path} ended at {run.simulated_s!r} s after "
                    f"{run.engine_events} kernel events, the first sandboxed run at "
                    f"{ours.simulated_s!r} s after {ours.engine_events}"
                )
    if reference is not None:
        expected = reference.runs[0].simulated_s
        if abs(ours.simulated_s - expected) > 1e-9 * max(1.0, expected):
            problems.append(
                f"{case.title}: ParaSim ended at {ours.simulated_s!r} s, SimPy at {expected!r} s"
            )
    return problems


def ratio(value: float) -> str:
    """Return a ratio as text, e.g. '2.41x'."""
    return f"{value:.2f}x"


def table(results: list[CaseResult]) -> list[str]:
    """Return the timed cases as a Markdown table."""
    lines = [
        "| scenario | engine/path | events | simulated s | best wall s | median wall s "
        "| spread (min-max) | events/s (best) | in-process s (median) "
        "| sandboxed CLI vs this (best / median) | in-process: sandboxed vs this |",
        "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for result in results:
        ours = result.cell(SANDBOXED)
        assert ours is not None
        for cell in result.cells:
            low, high = cell.spread
            rounds = len(cell.runs)
            spread = f"{low:.3f}-{high:.3f} ({(high - low) / cell.median:.0%}, n={rounds})"
            versus = versus_in = ""
            if cell is not ours:
                versus = f"{ratio(cell.best / ours.best)} / {ratio(cell.median / ours.median)}"
                versus_in = ratio(cell.in_process / ours.in_process)
            path = f"{cell.path} ({cell.note})" if cell.note else cell.path
            run = cell.runs[0]
            lines.append(
                f"| {result.case.title} | {path} | {run.events:,} | {run.simulated_s:.6g} | "
                f"{cell.best:.3f} | {cell.median:.3f} | {spread} | "
                f"{run.events / cell.best:,.0f} | {cell.in_process:.3f} | {versus} | {versus_in} |"
            )
    return lines


def verdict(met: bool) -> str:
    """Return 'met' or 'MISSED'."""
    return "met" if met else "MISSED"


def ratio_targets(results: list[CaseResult]) -> list[str]:
    """Return a line per case with a ratio target: the sandboxed CLI against SimPy and
    SimGrid, whole commands, judged on the medians (best in brackets)."""
    lines = []
    for result in results:
        ours = result.cell(SANDBOXED)
        assert ours is not None
        checks = [(SIMPY, TARGET_SIMPY_RATIO)]
        if not result.case.scenario.startswith("compute"):
            checks.append((SIMGRID, TARGET_SIMGRID_RATIO))
        for path, target in checks:
            cell = result.cell(path)
            if cell is None:
                if path == SIMGRID:
                    lines.append(f"{result.case.title} vs SimGrid: not measured (skipped)")
                continue
            median, best = cell.median / ours.median, cell.best / ours.best
            lines.append(
                f"{result.case.title}: sandboxed CLI is {ratio(median)} {path} on medians "
                f"({ratio(best)} on bests; in-process {ratio(cell.in_process / ours.in_process)}); "
                f"target >= {target:g}x: {verdict(median >= target)}"
            )
        simpy = result.cell(SIMPY)
        for path in (SUMMARY_ALONE, SUMMARY):
            summary = result.cell(path)
            if summary is not None and simpy is not None:
                lines.append(
                    f"{result.case.title}: {path} is {ratio(simpy.median / summary.median)} "
                    f"{SIMPY} on medians ({ratio(simpy.best / summary.best)} on bests)"
                )
    return lines


def merpsys_lines(result: CaseResult) -> list[str]:
    """Return the MERPSYS case's engine events per second against the target."""
    lines = []
    for path in (SANDBOXED, NO_SANDBOX):
        cell = result.cell(path)
        assert cell is not None
        rates = [run.engine_events / run.in_process_s for run in cell.runs if run.engine_events]
        rate = statistics.median(rates)
        met = verdict(rate >= TARGET_MERPSYS_EVENTS_PER_S)
        engine_events = cell.runs[0].engine_events or 0
        lines.append(
            f"{result.case.title}, {path}: {engine_events:,} kernel events, median "
            f"{rate:,.0f} events/s in run_simulation (best {max(rates):,.0f}), "
            f"{engine_events / cell.median:,.0f} per second of the whole command; "
            f"target >= {TARGET_MERPSYS_EVENTS_PER_S:,}/s: {met}"
        )
    ours, simpy = result.cell(SANDBOXED), result.cell(SIMPY)
    if ours is not None and simpy is not None:
        median = simpy.median / ours.median
        lines.append(
            f"{result.case.title}: sandboxed CLI is {ratio(median)} {SIMPY} on medians "
            f"({ratio(simpy.best / ours.best)} on bests; in-process "
            f"{ratio(simpy.in_process / ours.in_process)}); target >= "
            f"{TARGET_SIMPY_RATIO:g}x: {verdict(median >= TARGET_SIMPY_RATIO)}"
        )
    return lines


def startup_lines(result: CaseResult) -> list[str]:
    """Return the one-computation run's wall times against the target."""
    cell = result.cell(SANDBOXED)
    assert cell is not None
    lines = [
        f"one computation, sandboxed CLI: best {cell.best * 1e3:.0f} ms, median "
        f"{cell.median * 1e3:.0f} ms (n={len(cell.runs)}); "
        f"target <= {TARGET_STARTUP_S * 1e3:.0f} ms: {verdict(cell.median <= TARGET_STARTUP_S)}"
    ]
    for path in (ROW, FIRST_RUN, NO_SANDBOX, SIMPY, SIMGRID):
        other = result.cell(path)
        if other is not None:
            lines.append(
                f"one computation, {path}: best {other.best * 1e3:.0f} ms, median "
                f"{other.median * 1e3:.0f} ms"
            )
    return lines


def memory_lines(figures: list[MemoryFigures]) -> list[str]:
    """Return the memory runs against their targets."""
    lines = []
    for item in figures:
        target = TARGET_MEMORY_BYTES.get(item.processes)
        head = (
            f"{item.processes:,} simultaneous processes, sandboxed CLI: sandbox child peak RSS "
            f"{item.child_peak_bytes / 1e9:.3f} GB ({item.child_peak_bytes / 2**20:,.0f} MiB), "
            f"CLI process {item.cli_peak_bytes / 1e9:.3f} GB, {item.wall_s:.1f} s"
        )
        if item.status != 0:
            lines.append(f"{head}; FAILED (exit {item.status}): {item.error}")
            continue
        if target is not None:
            head += f"; target <= {target / 1e9:g} GB: {verdict(item.child_peak_bytes <= target)}"
        lines.append(head)
    return lines


def large_result_lines(result: CaseResult, baseline: CaseResult) -> list[str]:
    """Return the large result's cost: the time outside run_simulation (start-up, handing
    the result back, printing it) against the same run without a timeline, and the
    sandbox's share of it (sandboxed against not)."""
    big, small = result.cell(SANDBOXED), baseline.cell(SANDBOXED)
    unsandboxed = result.cell(NO_SANDBOX)
    assert big is not None and small is not None and unsandboxed is not None
    first = big.runs[0]
    size, printed = first.result_bytes or 0, first.output_bytes
    cost = big.outside - small.outside
    judged = (
        verdict(cost < TARGET_RESULT_S)
        if size >= 0.9 * TARGET_RESULT_BYTES
        else "not judged (the result is smaller than the target's)"
    )
    return [
        f"large result: {size / 1e6:.1f} MB of result JSON (compact, as the sandbox sends it; "
        f"the CLI prints {printed / 1e6:.1f} MB); time outside run_simulation "
        f"(median of wall - stats.wall_s) {big.outside:.2f} s against {small.outside:.2f} s "
        f"with --timeline-limit 0: returning and printing the result costs {cost:.2f} s; "
        f"target < {TARGET_RESULT_S:g} s for {TARGET_RESULT_BYTES / 1e6:g} MB: {judged}",
        f"large result: of which the sandbox's hand-back (serialise, pipe, parse: outside "
        f"time sandboxed minus --no-sandbox) {big.outside - unsandboxed.outside:.2f} s; "
        f"keeping the timeline in the run (stats.wall_s, medians) "
        f"{big.in_process - small.in_process:+.2f} s",
    ]


def machine_lines(simgrid: str | None) -> list[str]:
    """Return lines describing the machine and the engines."""
    import simpy  # the venv's, for its version only

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
        + (f"SimGrid {simgrid} on {SYSTEM_PYTHON}" if simgrid else SIMGRID_MISSING),
        "wall s: the whole command from outside (interpreter start-up, imports, run, result "
        "output); in-process s: ParaSim's stats.wall_s (run_simulation), SimPy's model + "
        "env.run(), SimGrid's actors + Engine.run(); ratios above 1 mean ParaSim is faster",
    ]


@contextlib.contextmanager
def command_line_pool(workdir: Path) -> Iterator[None]:
    """Have the CLI's pool private to this benchmark (bench/cli_pool.py), warmed up by one
    sandboxed one-computation run. A first run, without the pool, is the startup scenario's
    FIRST_RUN cell."""
    case = compute_case(1, 1, 0, title="warm-up")
    files = write_inputs(workdir, case.parasim)
    with private_pool(cli_argv(files, case.parasim, sandbox=True)):
        yield


def run_scenarios(
    scenarios: Sequence[str], sizes: Sizes, repeat: int, simgrid_max: int, *, with_simgrid: bool
) -> tuple[list[CaseResult], list[CaseResult], list[MemoryFigures], list[str]]:
    """Return (the cases with ratio targets, the other cases, the memory runs, the report
    lines of the latter two). Raise CommandFailed when a command fails."""
    cases: list[Case] = []
    if "compute" in scenarios:
        cases += [
            compute_case(p, sizes.compute_steps, simgrid_max) for p in sizes.compute_processes
        ]
    for scenario in ("compute-distinct", "compute-edited"):
        if scenario in scenarios:
            cases += [
                compute_case(p, sizes.compute_steps, simgrid_max, scenario=scenario)
                for p in sizes.distinct_processes
            ]
            cases += [
                compute_case(10_000, events // 10_000, simgrid_max, scenario=scenario)
                for events in sizes.distinct_events
            ]
    if "pairs" in scenarios:
        cases.append(pairs_case(sizes, simgrid_max))
    if "master-worker" in scenarios:
        cases.append(master_worker_case(sizes, simgrid_max))
    if "collectives" in scenarios:
        cases.append(collectives_case(sizes, simgrid_max))
    results: list[CaseResult] = []
    others: list[CaseResult] = []
    report: list[str] = []
    memory: list[MemoryFigures] = []
    with (
        tempfile.TemporaryDirectory(prefix="parasim-bench-userpath-") as name,
        command_line_pool(Path(name)),
    ):
        workdir = Path(name)
        for case in cases:
            results += run_interleaved([case], repeat, with_simgrid, workdir)
        for edited in (False, True):
            if ("merpsys-edited" if edited else "merpsys") in scenarios:
                case = merpsys_case(sizes, edited=edited)
                [merpsys] = run_interleaved([case], repeat, False, workdir)
                others.append(merpsys)
                report += merpsys_lines(merpsys)
        if "startup" in scenarios:
            case = compute_case(1, 1, simgrid_max, title="startup: one computation")
            rounds = max(sizes.startup_runs, repeat)
            [startup] = run_interleaved([case], rounds, with_simgrid, workdir)
            others.append(startup)
            report += startup_lines(startup)
        if "large-result" in scenarios:
            big, small = large_result_case(sizes), large_result_case(sizes)
            small.title += " (--timeline-limit 0)"
            small.parasim.timeline_limit = 0
            rounds = min(repeat, sizes.large_result_rounds)
            big_result, small_result = run_interleaved([big, small], rounds, False, workdir)
            others += [big_result, small_result]
            report += large_result_lines(big_result, small_result)
        if "memory" in scenarios:
            memory = [measure_memory(p, workdir) for p in sizes.memory_processes]
            report += memory_lines(memory)
    return results, others, memory, report


def main(argv: list[str] | None = None) -> int:
    """Run the benchmark and print the tables; return the exit status."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="small sizes, 1 round (smoke test)")
    parser.add_argument("--repeat", type=int, help="rounds per case (default 5; --quick: 1)")
    parser.add_argument(
        "--scenario",
        action="append",
        choices=SCENARIO_NAMES,
        help="run only this scenario; repeatable (default: all)",
    )
    parser.add_argument(
        "--simgrid-max-processes",
        type=int,
        default=1000,
        help="skip SimGrid above this many actors (10,000 take it about a minute; default 1000)",
    )
    parser.add_argument(
        "--distinct-processes",
        type=int,
        action="append",
        metavar="P",
        help="compute-distinct and compute-edited: P processes x 20 computations; repeatable "
        "(default 100, 1,000 and 10,000)",
    )
    parser.add_argument(
        "--distinct-events",
        type=int,
        action="append",
        metavar="N",
        help="compute-distinct and compute-edited: a run of N computations (10,000 processes); "
        "repeatable; 0: none (default 1,000,000; --quick: none)",
    )
    parser.add_argument("--json", action="store_true", help="print the figures as JSON instead")
    parser.add_argument(
        "--write-results",
        action="store_true",
        help="record the run in RESULTS.md (between its bench_userpath.py markers)",
    )
    parser.add_argument("--simgrid-collectives", metavar="ARGS", help=argparse.SUPPRESS)
    options = parser.parse_args(argv)
    if options.simgrid_collectives:  # the system Python, as a child of a benchmark run
        print(json.dumps(simgrid_collectives(json.loads(options.simgrid_collectives))))
        return 0

    sizes = QUICK if options.quick else Sizes()
    if options.distinct_processes is not None:
        processes = tuple(options.distinct_processes)
        sizes = dataclasses.replace(sizes, distinct_processes=processes)
    if options.distinct_events is not None:
        events = tuple(count for count in options.distinct_events if count > 0)
        sizes = dataclasses.replace(sizes, distinct_events=events)
    repeat = max(1, options.repeat or (1 if options.quick else 5))
    scenarios = options.scenario or list(SCENARIO_NAMES)
    version = simgrid_version()
    simgrid_max = options.simgrid_max_processes
    header = machine_lines(version)
    if not options.json:
        print("\n".join(header), flush=True)

    try:
        results, extra_results, memory, report = run_scenarios(
            scenarios, sizes, repeat, simgrid_max, with_simgrid=version is not None
        )
    except CommandFailed as error:
        print(f"error: {error}", file=sys.stderr)
        return 1
    problems: list[str] = []
    document: dict[str, Any] = {"header": header, "cases": []}
    for result in results + extra_results:
        problems += check(result)
        document["cases"].append(
            {
                "scenario": result.case.scenario,
                "title": result.case.title,
                "events": result.case.events,
                "cells": [cell.summary() for cell in result.cells],
            }
        )
    report = ratio_targets(results) + report
    document["memory"] = [asdict(item) for item in memory]
    document["targets"] = report
    document["disagreements"] = problems
    if options.json:
        print(json.dumps(document, indent=2))
    else:
        print("\n".join(table(results + extra_results)))
        print()
        print("\n".join(f"- {line}" for line in report))
        for problem in problems:
            print(f"DISAGREEMENT: {problem}")
    if options.write_results:
        block = [
            run_line(
                "bench_userpath.py",
                argv,
                f"best and median of {repeat} interleaved rounds, whole commands",
            ),
            "",
            *(f"- {line}" for line in header),
            "",
            *table(results + extra_results),
            "",
            *(f"- {line}" for line in report),
            *(f"- DISAGREEMENT: {problem}" for problem in problems),
        ]
        written = write_block(block, "bench_userpath.py")
        print(f"wrote {written}")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
