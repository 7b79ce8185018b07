"""Parallel simulation through the user's path: the detailed kernel mode over worker
processes (work-group parallel simulation, 001) and `sweep --jobs N`.

Both scenarios run `python -m simulator` as a user does (sandboxed), in turns, and report
the best and the median wall time of `--repeat` rounds with the speed-up over one process:

* kernel: the MERPSYS saxpy2 application (examples/merpsys_gtx970) on the seeded H100 SXM5
  record, its GPU node in the detailed mode with kernelWorkers = 1, 2, ...; every run must
  print the same overall time (the parallel simulation is exact);
* sweep: the same example swept over 32 compute intensities (analytic kernels) with
  `--jobs 1, 2, ...`; every sweep must print the same table.

    .venv/bin/python bench/bench_parallel.py [--workers 1,2] [--repeat 3] [--write-results]

`--write-results` replaces this machine's block of bench/RESULTS.md (between markers
naming the core count) with the run's table.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from results_block import run_line, write_block  # bench/results_block.py

ROOT = Path(__file__).resolve().parents[1]
EXAMPLE = ROOT / "examples" / "merpsys_gtx970"
SEED = ROOT / "hwdb" / "seed" / "hardware.json"
PUBLISHED = (
    "001 (GPGPU-sim, 8-core host): up to 4.15x (MersenneTwister), 3.39x on average with 6 threads"
)


def h100_snapshot(workers: int) -> dict[str, object]:
    """Return the example snapshot with the seeded H100 SXM5 as its GPU, in the detailed mode."""
    snapshot = json.loads((EXAMPLE / "snapshot.json").read_text())
    seed = json.loads(SEED.read_text())
    records = seed if isinstance(seed, list) else seed["components"]
    h100 = next(c for c in records if c["name"] == "H100 SXM5 80GB")
    snapshot["hardware"]["gtx970"] = {
        "type": "GPU",
        "name": h100["name"],
        "attributes": {a["key"]: a["value"] for a in h100["attributes"]},
    }
    for node in snapshot["nodes"]:
        if node["id"] == "gpu0":
            node.update(kernelMode="detailed", kernelWorkers=workers)
    return snapshot


def timed(command: list[str]) -> tuple[float, str]:
    start = time.perf_counter()
    done = subprocess.run(command, capture_output=True, text=True, cwd=ROOT, check=False)
    wall = time.perf_counter() - start
    if done.returncode != 0:
        raise SystemExit(f"{' '.join(command)} failed: {done.stderr.strip()}")
    return wall, done.stdout


def kernel_command(snapshot_path: Path, n: int) -> list[str]:
    return [
        sys.executable, "-m", "simulator", "run", "--system", str(snapshot_path),
        "--app", str(EXAMPLE / "app.py"), "--labels", "CPU=1,GPU=1",
        "--var", f"N={n}", "--var", "blockSz=256", "--var", "computeIntensity=1",
        "--var", "occupancy=64", "--json", "-",
    ]  # fmt: skip


def sweep_command(jobs: int) -> list[str]:
    return [
        sys.executable, "-m", "simulator", "sweep", "--system", str(EXAMPLE / "snapshot.json"),
        "--app", str(EXAMPLE / "app.py"), "--labels", "CPU=1,GPU=1",
        "--var", "N=10000000", "--var", "blockSz=256", "--var", "occupancy=64",
        "--var", "computeIntensity=1:32:1", "--jobs", str(jobs),
    ]  # fmt: skip


def measure(workers: list[int], repeat: int, n: int) -> tuple[list[str], dict[str, object]]:
    """Return the table rows and the raw figures."""
    walls: dict[tuple[str, int], list[float]] = {}
    answers: dict[str, set[str]] = {"kernel": set(), "sweep": set()}
    detail: dict[str, object] = {}
    with tempfile.TemporaryDirectory() as folder:
        paths = {}
        for count in workers:
            paths[count] = Path(folder) / f"h100-{count}.json"
            paths[count].write_text(json.dumps(h100_snapshot(count)))
        for _ in range(repeat):
            for count in workers:  # interleaved: every configuration once per round
                wall, out = timed(kernel_command(paths[count], n))
                result = json.loads(out)
                walls.setdefault(("kernel", count), []).append(wall)
                answers["kernel"].add(repr(result["overall_time_s"]))
                kernel = next(e for e in result["timeline"] if e["kind"] == "compute")["detail"]
                detail = {
                    k: kernel[k] for k in ("waves", "blocksPerWave", "rounds", "kernelCycles")
                }
                wall, out = timed(sweep_command(count))
                walls.setdefault(("sweep", count), []).append(wall)
                answers["sweep"].add(out)
    for scenario, seen in answers.items():
        if len(seen) != 1:
            raise SystemExit(f"{scenario}: the parallel runs did not reproduce the serial result")
    rows = [
        "| scenario | processes | best wall s | median wall s | spread (max-min) s | speed-up (best) | speed-up (median) |",
        "|---|---:|---:|---:|---:|---:|---:|",
    ]
    for scenario, label in (
        ("kernel", f"detailed kernel, H100 SXM5, saxpy2 N = {n:.0e} (kernelWorkers)"),
        ("sweep", "sweep of 32 points, GTX 970 example (--jobs)"),
    ):
        base = walls[(scenario, workers[0])]
        for count in workers:
            times = walls[(scenario, count)]
            rows.append(
                f"| {label} | {count} | {min(times):.2f} | {statistics.median(times):.2f} | "
                f"{max(times) - min(times):.2f} | {min(base) / min(times):.2f}x | "
                f"{statistics.median(base) / statistics.median(times):.2f}x |"
            )
    return rows, {"kernel": detail, "same_result": True}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    cores = len(os.sched_getaffinity(0))
    parser.add_argument("--workers", default=",".join(str(c) for c in sorted({1, cores})))
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--n", type=int, default=20_000_000, help="saxpy2 elements")
    parser.add_argument("--write-results", action="store_true")
    args = parser.parse_args()
    workers = [int(w) for w in args.workers.split(",")]
    rows, figures = measure(workers, args.repeat, args.n)
    cpu = next(
        (
            line.split(":", 1)[1].strip()
            for line in Path("/proc/cpuinfo").read_text().splitlines()
            if line.startswith("model name")
        ),
        platform.processor(),
    )
    block = [
        run_line(
            "bench_parallel.py",
            None,
            f"best and median of {args.repeat} interleaved rounds",
            python=sys.executable,
        ),
        "",
        f"- machine: {cores} CPUs ({cpu}), load average {', '.join(f'{x:.2f}' for x in os.getloadavg())}",
        f"- python: {platform.python_version()}; every run through `python -m simulator` (sandboxed)",
        f"- kernel: {figures['kernel']}; every configuration printed the same overall time",
        f"- published: {PUBLISHED}",
        "",
        *rows,
    ]
    text = "\n".join(block)
    print(text)
    if args.write_results:
        write_block(block, "bench_parallel.py", f"{cores} cores")


if __name__ == "__main__":
    main()
