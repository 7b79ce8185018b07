"""Collectives benchmark: a ring allreduce, a pairwise alltoall and ping-pong pairs over P
ranks whose every message crosses one shared flow link (CM02), the whole `python -m simulator
run` command against SimGrid's Python bindings running the same schedule on the same platform
(bench/simgrid_scenarios.py "collective": one SHARED link, CM02), taken in turns,
`--repeat` rounds each; and the 1,024-GPU ring allreduce on examples/dgx_h100_cluster_128.

`--kinds` lists scenarios as KIND[:RANKS[:CALLS]] (RANKS and CALLS default to `--ranks` and
`--calls`): `ring` and `pairwise` run the collective CALLS times; `pairs` has rank 2k and
2k + 1 exchange CALLS ping-pongs of one block (`--size` / RANKS bytes). Issue 40's three
workloads of 100,000 messages and more:

    --kinds pairs:1000:100,pairwise:256:2,ring:1024:1 --simgrid-timeout 900

A SimGrid run past `--simgrid-timeout` seconds of wall time is killed and shown with its
figures as lower bounds ("> S s" wall, "> C s" the CPU it had used).

ParaSim's time is the whole CLI command (interpreter start, snapshot checked, models
compiled, processes run), `--no-sandbox`; SimGrid's is measured inside its process from the
actors' creation to the end of `Engine.run()` (its platform's loading is not counted).
Both must reach the same simulated time (within `AGREE`): exit status 1 otherwise.
The collectives are unpipelined (`chunk=0`), as the SimGrid side sends each step's block
whole.

`--baseline CHECKOUT` also runs another checkout's CLI (its own .venv/bin/python, else this
one, from its own directory) in the same rounds, the order of the two turning each round, and
`--cluster-gpus` takes several counts (comma separated), each run `--repeat` times in turns.
`--no-simgrid` leaves SimGrid out (a machine without its bindings): the checkouts alone,
their simulated times checked against each other. `--symmetry` also runs the cluster's ring
with `run --symmetry` (simulator.symmetry) in the same rounds, its simulated time checked
against the full runs'.

    .venv/bin/python bench/bench_collectives.py [--ranks 256] [--calls 1] [--repeat 2]
        [--kinds ring,pairwise] [--simgrid-timeout 600] [--cluster-gpus 0]
        [--baseline /tmp/before] [--no-simgrid] [--symmetry]
"""

from __future__ import annotations

import argparse
import json
import math
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
PYTHON = ROOT / ".venv" / "bin" / "python"
LINK_JS = (ROOT / "simulator" / "models" / "js" / "latency_bandwidth_link.js").read_text()
BANDWIDTH = 1e9
AGREE = 1e-6
"""Largest relative difference of the simulated times the two may show."""

APPS = {
    "ring": "for call in range(CALLS):\n    sim.allreduce(SIZE, algorithm='ring', chunk=0)\n",
    "pairwise": "for call in range(CALLS):\n    sim.alltoall(SIZE, algorithm='pairwise', chunk=0)\n",
    "pairs": (
        "peer = rank + 1 - 2 * (rank % 2)\n"
        "for call in range(CALLS):\n"
        "    if rank % 2 == 0:\n"
        "        sim.p2pCommunicationSend(BLOCK, 'r', None, peer)\n"
        "        sim.p2pCommunicationReceive('r', peer)\n"
        "    else:\n"
        "        sim.p2pCommunicationReceive('r', peer)\n"
        "        sim.p2pCommunicationSend(BLOCK, 'r', None, peer)\n"
    ),
}


def messages(kind: str, ranks: int, calls: int) -> int:
    """Return how many messages the scenario sends."""
    per_rank = {"ring": 2 * (ranks - 1), "pairwise": ranks - 1, "pairs": 1}[kind]
    return per_rank * ranks * calls


def snapshot(ranks: int) -> dict[str, object]:
    """Return `ranks` hosts joined by one switch, a shared flow link (CM02): every route
    crosses its one constraint. The switch is one node joined by an edge to each host, not
    a topology template: a template's switch has a port per neighbour (simulator.topology),
    which would give each rank a link of its own, unlike SimGrid's one SHARED link."""
    hosts = [f"H{i}" for i in range(ranks)]
    return {
        "name": "ranks through one switch",
        "networkModel": "CM02",
        "hardware": {
            "host": {"type": "CPU", "name": "host", "attributes": {}},
            "switch": {
                "type": "NETWORK",
                "name": "switch",
                "attributes": {"bandwidth": BANDWIDTH, "latency": 0.0},
            },
        },
        "models": {"link": {"language": "javascript", "source": LINK_JS}},
        "nodes": [{"id": host, "hardware": "host", "labels": {"r": 1}} for host in hosts]
        + [{"id": "switch", "hardware": "switch", "model": "link", "sharing": "shared"}],
        "edges": [[host, "switch"] for host in hosts],
    }


CHILD_ENV = {name: value for name, value in os.environ.items() if name != "PYTHONDONTWRITEBYTECODE"}
"""The CLI's environment: its modules' bytecode cached as an installed checkout has it (with
PYTHONDONTWRITEBYTECODE set, every run would compile the modules changed since the last
cache was written); `warm_up` writes it before the timed rounds."""

Figures = tuple[float, float, float]
"""A run's wall seconds, simulated seconds and CPU seconds of its process (SimGrid's CPU
includes its platform's loading, which its wall time leaves out)."""


def child_cpu() -> float:
    """Return the CPU seconds of this process's finished children so far."""
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def parasim_cli(
    system: Path,
    app: str,
    labels: str,
    variables: list[str],
    root: Path = ROOT,
    options: tuple[str, ...] = (),
) -> Figures:
    """Return the figures of one `python -m simulator run` of the checkout at `root`, with
    the command's `options` (e.g. "--symmetry")."""
    python = root / ".venv" / "bin" / "python"
    with tempfile.TemporaryDirectory(prefix="parasim-bench-") as directory:
        app_path, out = Path(directory) / "app.py", Path(directory) / "out.json"
        app_path.write_text(app)
        command = [str(python if python.exists() else PYTHON), "-m", "simulator", "run"]
        command += ["--no-sandbox", "--system", str(system), "--app", str(app_path)]
        command += ["--labels", labels, "--json", str(out), *options]
        for variable in variables:
            command += ["--var", variable]
        started, cpu = time.perf_counter(), child_cpu()
        subprocess.run(command, check=True, cwd=root, capture_output=True, env=CHILD_ENV)
        wall, cpu = time.perf_counter() - started, child_cpu() - cpu
        return wall, float(json.loads(out.read_text())["overall_time_s"]), cpu


def warm_up(roots: list[Path], directory: Path) -> None:
    """Run each checkout's CLI once, untimed, on a small star: its bytecode cache written."""
    system = directory / "warm.json"
    system.write_text(json.dumps(snapshot(4)))
    for root in roots:
        parasim_cli(system, APPS["ring"], "r=4", ["SIZE=1e6", "CALLS=1"], root)


def in_turns(roots: list[Any], repeat: int, run: Callable[[Any], Figures]) -> list[list[Figures]]:
    """Return `run(root)` `repeat` times per root, the roots' order turning each round."""
    results: list[list[Figures]] = [[] for _ in roots]
    for round_ in range(repeat):
        order = list(range(len(roots)))
        if round_ % 2:
            order.reverse()
        for index in order:
            results[index].append(run(roots[index]))
    return results


def simgrid(kind: str, ranks: int, size: float, calls: int, timeout: float) -> Figures:
    """Return the figures of one SimGrid run (wall and CPU: its own timing, from the actors'
    creation to the end of `Engine.run()`). A run past `timeout` seconds of wall time is
    killed: simulated NaN, wall `timeout` and the CPU its process had used, lower bounds."""
    args = {"ranks": ranks, "size": size, "kind": kind, "bandwidth": BANDWIDTH, "calls": calls}
    cpu = child_cpu()
    try:
        child = subprocess.run(
            [
                "/usr/bin/python3",
                str(HERE / "simgrid_scenarios.py"),
                "collective",
                json.dumps(args),
            ],
            capture_output=True,
            text=True,
            check=True,
            cwd=HERE,
            timeout=timeout,
        )
    except subprocess.TimeoutExpired:  # killed and waited for: its CPU is counted
        return timeout, math.nan, child_cpu() - cpu
    figures = json.loads(child.stdout.strip().splitlines()[-1])
    return float(figures["wall_s"]), float(figures["simulated_s"]), float(figures["cpu_s"])


def shown(value: float, cut: bool) -> str:
    """Return a figure, marked as a lower bound ("> ") when its run was cut."""
    return f"> {value:.2f}" if cut else f"{value:.2f}"


def median_of(figures: list[Figures], index: int) -> float:
    """Return the median of one column (0 wall, 2 CPU) of `figures`."""
    return statistics.median(row[index] for row in figures)


def scenario(spec: str, ranks: int, calls: int) -> tuple[str, int, int]:
    """Return (kind, ranks, calls) of a `--kinds` entry KIND[:RANKS[:CALLS]]."""
    parts = spec.split(":")
    if parts[0] not in APPS or len(parts) > 3:
        raise SystemExit(
            f"unknown scenario {spec!r}: KIND[:RANKS[:CALLS]], KIND one of {list(APPS)}"
        )
    if len(parts) > 1:
        ranks = int(parts[1])
    if len(parts) > 2:
        calls = int(parts[2])
    return parts[0], ranks, calls


def main() -> int:
    """Run ParaSim and SimGrid in turns per scenario; print each run's wall and CPU times,
    their medians and the ratios of the medians."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--ranks", type=int, default=256)
    parser.add_argument("--calls", type=int, default=1, help="collective calls (pairs: ping-pongs)")
    parser.add_argument("--size", type=float, default=256e6, help="bytes per rank")
    parser.add_argument("--repeat", type=int, default=2)
    parser.add_argument("--kinds", default="ring,pairwise", help="KIND[:RANKS[:CALLS]],...")
    parser.add_argument(
        "--simgrid-timeout", type=float, default=600.0, help="seconds before a SimGrid run is cut"
    )
    parser.add_argument(
        "--cluster-gpus", default="", help="also the ring on the 128-node cluster (e.g. 128,256)"
    )
    parser.add_argument("--baseline", type=Path, help="another checkout run in the same rounds")
    parser.add_argument(
        "--no-simgrid",
        action="store_true",
        help="leave SimGrid out (its Python bindings not installed): ParaSim's checkouts only",
    )
    parser.add_argument(
        "--symmetry",
        action="store_true",
        help="the cluster's ring also with `--symmetry` (simulator.symmetry), in the same "
        "rounds; the simulated times must agree",
    )
    arguments = parser.parse_args()
    size, status, timeout = arguments.size, 0, arguments.simgrid_timeout
    roots = [ROOT] + ([arguments.baseline.resolve()] if arguments.baseline else [])
    names = ["ParaSim CLI", "baseline CLI"]
    print(f"load average at the start: {os.getloadavg()}")
    specs = [
        scenario(spec, arguments.ranks, arguments.calls)
        for spec in arguments.kinds.split(",")
        if spec
    ]
    with tempfile.TemporaryDirectory(prefix="parasim-bench-") as directory:
        warm_up(roots, Path(directory))
        for kind, ranks, calls in specs:
            system = Path(directory) / f"star{ranks}.json"
            if not system.exists():
                system.write_text(json.dumps(snapshot(ranks)))
            variables = [f"SIZE={size}", f"CALLS={calls}", f"BLOCK={int(size / ranks)}"]
            theirs: list[Figures] = []

            def run(
                root: Path,
                kind: str = kind,
                ranks: int = ranks,
                calls: int = calls,
                system: Path = system,
                variables: list[str] = variables,
                theirs: list[Figures] = theirs,
            ) -> Figures:
                figures = parasim_cli(system, APPS[kind], f"r={ranks}", variables, root)
                if root == roots[-1] and not arguments.no_simgrid:  # once a round, at its end
                    theirs.append(simgrid(kind, ranks, size, calls, timeout))
                    print(f"    SimGrid round: {theirs[-1]}, load {os.getloadavg()[0]:.2f}")
                return figures

            print(
                f"{kind} over {ranks} ranks x {calls}, {size:g} B: "
                f"{messages(kind, ranks, calls):,} messages (load {os.getloadavg()[0]:.2f})"
            )
            ours = in_turns(roots, arguments.repeat, run)
            finished = [figures for figures in theirs if not math.isnan(figures[1])]
            for name, figures in zip(names, ours, strict=False):
                walls = ", ".join(f"{wall:.2f}" for wall, _, _ in figures)
                cpus = ", ".join(f"{cpu:.2f}" for _, _, cpu in figures)
                print(
                    f"  {name}: wall {walls} s (median {median_of(figures, 0):.3f}), "
                    f"CPU {cpus} s (median {median_of(figures, 2):.3f}), "
                    f"simulated {figures[0][1]!r} s"
                )
                expected = finished[0][1] if finished else ours[0][0][1]
                if any(abs(row[1] - expected) > AGREE * expected for row in figures):
                    print("  simulated times differ")
                    status = 1
            if arguments.no_simgrid:
                continue
            # a cut run's figures are lower bounds, so the median is one when any run was cut
            cut = len(finished) < len(theirs)
            walls = ", ".join(shown(row[0], math.isnan(row[1])) for row in theirs)
            cpus = ", ".join(shown(row[2], math.isnan(row[1])) for row in theirs)
            print(f"  SimGrid (CM02): wall {walls} s, CPU {cpus} s (its run, platform not loaded)")
            ours_wall, ours_cpu = median_of(ours[0], 0), median_of(ours[0], 2)
            theirs_wall, theirs_cpu = median_of(theirs, 0), median_of(theirs, 2)
            bound = "> " if cut else ""
            print(
                f"  SimGrid median: wall {bound}{theirs_wall:.3f} s, CPU {bound}{theirs_cpu:.3f} s"
                + (f", simulated {finished[0][1]!r} s" if finished else "")
            )
            print(
                f"  ratio SimGrid / ParaSim (medians): {bound}{theirs_wall / ours_wall:.2f} wall, "
                f"{bound}{theirs_cpu / ours_cpu:.2f} CPU"
            )
    # (checkout, its name, options): the symmetric run first, of this checkout
    variants = [(root, name, ()) for root, name in zip(roots, names, strict=False)]
    if arguments.symmetry:
        variants.insert(0, (ROOT, "ParaSim CLI --symmetry", ("--symmetry",)))
    for gpus in [int(count) for count in arguments.cluster_gpus.split(",") if count]:
        app = "sim.allreduce(2**30, algorithm='ring')\n"

        def cluster_run(number: int, gpus: int = gpus, app: str = app) -> Figures:
            root, _, options = variants[number]
            cluster = root / "examples" / "dgx_h100_cluster_128" / "snapshot.json"
            return parasim_cli(cluster, app, f"GPU={gpus}", [], root, options)

        print(f"ring allreduce 1 GiB over {gpus} GPUs (dgx_h100_cluster_128):")
        numbers = list(range(len(variants)))
        results = in_turns(numbers, arguments.repeat, cluster_run)
        for (_, name, _), figures in zip(variants, results, strict=True):
            walls = ", ".join(f"{wall:.2f}" for wall, _, _ in figures)
            cpus = ", ".join(f"{cpu:.2f}" for _, _, cpu in figures)
            print(f"  {name}: {walls} s wall, {cpus} s CPU, simulated {figures[0][1]!r} s")
        simulated = {figures[0][1] for figures in results}
        if len(simulated) > 1 and max(simulated) - min(simulated) > AGREE * max(simulated):
            print("  simulated times differ")
            status = 1
    print(f"load average at the end: {os.getloadavg()}")
    return status


if __name__ == "__main__":
    sys.exit(main())
