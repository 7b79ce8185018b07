"""Collectives benchmark: a ring allreduce and a pairwise alltoall over P ranks whose every
message crosses one shared flow link (CM02), the whole `python -m simulator run`
command against SimGrid's Python bindings running the same schedule on the same platform
(bench/simgrid_scenarios.py "collective": one SHARED link, CM02), taken in turns,
best of `--repeat` each; and the 1,024-GPU ring allreduce on examples/dgx_h100_cluster_128.

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

    .venv/bin/python bench/bench_collectives.py [--ranks 256] [--repeat 2] [--cluster-gpus 0]
        [--baseline /tmp/before] [--no-simgrid] [--symmetry]
"""

from __future__ import annotations

import argparse
import json
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
    "ring": "sim.allreduce(SIZE, algorithm='ring', chunk=0)\n",
    "pairwise": "sim.alltoall(SIZE, algorithm='pairwise', chunk=0)\n",
}


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
        subprocess.run(command, check=True, cwd=root, capture_output=True)
        wall, cpu = time.perf_counter() - started, child_cpu() - cpu
        return wall, float(json.loads(out.read_text())["overall_time_s"]), cpu


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


def simgrid(kind: str, ranks: int, size: float) -> Figures:
    """Return the figures of one SimGrid run (wall: its own timing)."""
    args = {"ranks": ranks, "size": size, "kind": kind, "bandwidth": BANDWIDTH}
    cpu = child_cpu()
    child = subprocess.run(
        ["/usr/bin/python3", str(HERE / "simgrid_scenarios.py"), "collective", json.dumps(args)],
        capture_output=True,
        text=True,
        check=True,
        cwd=HERE,
    )
    figures = json.loads(child.stdout.strip().splitlines()[-1])
    return float(figures["wall_s"]), float(figures["simulated_s"]), child_cpu() - cpu


def main() -> int:
    """Run both in turns per scenario; print the best wall times and the simulated times."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--ranks", type=int, default=256)
    parser.add_argument("--size", type=float, default=256e6, help="bytes per rank")
    parser.add_argument("--repeat", type=int, default=2)
    parser.add_argument("--kinds", default="ring,pairwise")
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
    ranks, size, status = arguments.ranks, arguments.size, 0
    roots = [ROOT] + ([arguments.baseline.resolve()] if arguments.baseline else [])
    names = ["ParaSim CLI", "baseline CLI"]
    print(f"load average at the start: {os.getloadavg()}")
    with tempfile.TemporaryDirectory(prefix="parasim-bench-") as directory:
        system = Path(directory) / "star.json"
        system.write_text(json.dumps(snapshot(ranks)))
        for kind in [kind for kind in arguments.kinds.split(",") if kind]:
            variables = [f"SIZE={size}"]
            theirs: list[Figures] = []

            def run(
                root: Path,
                kind: str = kind,
                variables: list[str] = variables,
                theirs: list[Figures] = theirs,
            ) -> Figures:
                figures = parasim_cli(system, APPS[kind], f"r={ranks}", variables, root)
                if root == roots[-1] and not arguments.no_simgrid:  # once a round, at its end
                    theirs.append(simgrid(kind, ranks, size))
                return figures

            ours = in_turns(roots, arguments.repeat, run)
            steps = 2 * (ranks - 1) if kind == "ring" else ranks - 1
            print(f"{kind} over {ranks} ranks, {size:g} B: {steps * ranks} messages")
            for name, figures in zip(names, ours, strict=False):
                best = min(figures)
                median = statistics.median(wall for wall, _, _ in figures)
                cpus = ", ".join(f"{cpu:.2f}" for _, _, cpu in figures)
                print(
                    f"  {name}: best {best[0]:.3f} s, median {median:.3f} s wall, "
                    f"CPU {cpus} s, simulated {best[1]!r} s"
                )
                expected = min(theirs)[1] if theirs else ours[0][0][1]
                if abs(best[1] - expected) > AGREE * expected:
                    print("  simulated times differ")
                    status = 1
            if not theirs:
                continue
            best_theirs = min(theirs)
            median = statistics.median(wall for wall, _, _ in theirs)
            cpu = statistics.median(cpu for _, _, cpu in theirs)
            print(
                f"  SimGrid (CM02): best {best_theirs[0]:.3f} s, median {median:.3f} s wall, "
                f"median {cpu:.3f} s CPU (process), simulated {best_theirs[1]!r} s"
            )
            print(f"  ratio SimGrid / ParaSim (bests): {best_theirs[0] / min(ours[0])[0]:.2f}")
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
