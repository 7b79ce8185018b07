"""Queue benchmark: sweep throughput with one worker process and with two, and the per-run
overhead of the queue path (launch -> broker -> worker -> sandbox -> database) against the CLI.

One script run measures everything on the same machine, same sweep (the MERPSYS GTX 970
example over computeIntensity), and prints the ratios. The CLI time is a whole process (start,
imports, run); the queue time runs from launch to the result stored, for runs launched one
after another (the worker still starting the next run's child as the next launch comes) and
for runs launched after the worker settled, as the CLI's runs are timed; the sandbox time (a
child started for the run, as a worker without a spare child uses) separates the queue's own
cost from the run's:

    .venv/bin/python bench/bench_queue.py [--points 48] [--single 8] [--repeat 2]

The database and broker come from DATABASE_URL and CELERY_BROKER_URL (PostgreSQL and Redis
at scale); without them a temporary embedded setup is used (SQLite, filesystem broker).
The benchmark's runs go to a queue of their own ("bench"), and its workers serve only that.
"""

from __future__ import annotations

import argparse
import atexit
import json
import os
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path

from cli_pool import private_pool, settle, settle_processes  # bench/cli_pool.py

ROOT = Path(__file__).resolve().parent.parent
EXAMPLE = ROOT / "examples" / "merpsys_gtx970"
QUEUE = "bench"
VARIABLES = {"N": 10_000_000, "blockSz": 256, "occupancy": 64}

# Everything the benchmark writes (embedded database and broker, worker logs) lives here and
# is removed at exit.
SCRATCH = Path(tempfile.mkdtemp(prefix="parasim-bench-"))
atexit.register(shutil.rmtree, SCRATCH, ignore_errors=True)
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "webapp.settings.local")
os.environ["PARASIM_QUEUES"] = QUEUE
if not os.environ.get("DATABASE_URL"):
    os.environ["PARASIM_DATA_DIR"] = str(SCRATCH / "data")
sys.path.insert(0, str(ROOT))


def start_worker(concurrency: int, log: Path) -> tuple[subprocess.Popen[bytes], str]:
    """Return a worker serving the bench queue with `concurrency` prefork processes."""
    hostname = f"bench-{uuid.uuid4().hex[:6]}@localhost"
    command = [sys.executable, "-m", "celery", "-A", "webapp", "worker", "-P", "prefork"]
    command += [f"--concurrency={concurrency}", "-Q", QUEUE, "--hostname", hostname]
    command += ["--loglevel=WARNING", "--without-gossip", "--without-mingle"]
    process = subprocess.Popen(
        command, cwd=ROOT, env=dict(os.environ), stdout=log.open("ab"), stderr=subprocess.STDOUT
    )
    from webapp.celery import app

    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if app.control.inspect(destination=[hostname], timeout=1).ping():
            return process, hostname
        if process.poll() is not None:
            break
        time.sleep(0.2)
    raise SystemExit(f"the worker did not start:\n{log.read_text()[-3000:]}")


def stop_worker(process: subprocess.Popen[bytes]) -> None:
    """Stop a worker and wait for it."""
    process.send_signal(signal.SIGTERM)
    try:
        process.wait(timeout=30)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()


def wait_done(ids: list[int], timeout: float = 900, poll_s: float = 0.05) -> float:
    """Return the moment every simulation in `ids` is final (time.perf_counter), looked at
    every `poll_s` (a single run's latency is read to 5 ms, not to the sweeps' 50)."""
    from webapp.studio.models import FINAL_STATUSES, Simulation, SimulationStatus

    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        done = Simulation.objects.filter(pk__in=ids, status__in=FINAL_STATUSES).count()
        if done == len(ids):
            moment = time.perf_counter()
            failed = Simulation.objects.filter(pk__in=ids).exclude(
                status=SimulationStatus.SUCCEEDED
            )
            if failed.exists():
                raise SystemExit(f"benchmark runs failed: {list(failed.values('pk', 'error'))[:3]}")
            return moment
        time.sleep(poll_s)
    raise SystemExit("timed out waiting for the benchmark's runs")


def sweep_spec(points: int) -> dict[str, object]:
    """Return the sweep: computeIntensity 1..points on the GTX 970 example."""
    return {
        "snapshot": json.loads((EXAMPLE / "snapshot.json").read_text()),
        "app_source": (EXAMPLE / "app.py").read_text(),
        "labels": {"CPU": 1, "GPU": 1},
        "queue": QUEUE,
        "variables": {**VARIABLES, "computeIntensity": {"start": 1, "stop": points, "step": 1}},
    }


def cli_seconds(runs: int) -> float:
    """Return the median wall time of `python -m simulator run` on the example (whole
    process), its sandbox child taken from the command line's pool (bench/cli_pool.py)."""
    command = [sys.executable, "-m", "simulator", "run", "--system", str(EXAMPLE / "snapshot.json")]
    command += ["--app", str(EXAMPLE / "app.py"), "--labels", "CPU=1,GPU=1", "--json", "-"]
    for name, value in {**VARIABLES, "computeIntensity": 1}.items():
        command += ["--var", f"{name}={value}"]
    times = []
    with private_pool(command):  # as for a user who ran the command line before
        for _ in range(runs):
            start = time.perf_counter()
            subprocess.run(command, cwd=ROOT, check=True, capture_output=True)
            times.append(time.perf_counter() - start)
            settle()  # the pool's next child is started, as between a user's runs
    return statistics.median(times)


def sandbox_seconds(runs: int) -> float:
    """Return the median wall time of the same run through `run_sandboxed`, called directly."""
    from simulator.sandbox import run_sandboxed

    spec = sweep_spec(1)
    payload = {
        "snapshot": spec["snapshot"],
        "app_source": spec["app_source"],
        "labels": spec["labels"],
        "variables": {**VARIABLES, "computeIntensity": 1},
    }
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        run_sandboxed(payload)
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--points", type=int, default=48, help="sweep size (default 48)")
    parser.add_argument("--single", type=int, default=8, help="single runs timed (default 8)")
    parser.add_argument(
        "--repeat", type=int, default=2, help="sweeps per worker size, best kept (default 2)"
    )
    args = parser.parse_args()

    import django

    django.setup()
    from django.contrib.auth import get_user_model
    from django.core.management import call_command
    from django.db import connection

    from webapp.studio.services.launch import simulation_launch
    from webapp.studio.services.sweeps import sweep_launch

    call_command("migrate", "--noinput", verbosity=0)
    user, _ = get_user_model().objects.get_or_create(username="bench-queue")
    log = SCRATCH / "workers.log"
    print(
        f"database {connection.vendor}, broker {os.environ.get('CELERY_BROKER_URL', 'filesystem')}"
    )
    print(f"sweep: MERPSYS GTX 970 example, computeIntensity 1..{args.points} ({args.points} runs)")

    # Each size runs `repeat` times, alternating, and keeps its best: on a shared machine the
    # best sweep is the one least disturbed by other load.
    throughput: dict[int, float] = {1: 0.0, 2: 0.0}
    single_latency: list[float] = []
    idle_latency: list[float] = []
    for repetition, concurrency in [(r, c) for r in range(args.repeat) for c in (1, 2)]:
        worker, _ = start_worker(concurrency, log)
        try:
            if concurrency == 1 and repetition == 0:
                # Single runs: first one after another (each launched as the last is stored,
                # while the worker starts its next run's child), then each after the worker
                # has settled, as between a user's runs (and as cli_seconds times the CLI).
                for index in range(2 * args.single + 1):
                    idle = index > args.single
                    if idle:
                        settle_processes([worker.pid])
                    start = time.perf_counter()
                    run = simulation_launch(
                        user=user,
                        **{k: v for k, v in sweep_spec(1).items() if k != "variables"},
                        variables={**VARIABLES, "computeIntensity": 1},
                    )
                    end = wait_done([run.pk], poll_s=0.005)
                    if index:  # the first run warms the worker up
                        (idle_latency if idle else single_latency).append(end - start)
            start = time.perf_counter()
            sweep = sweep_launch(user=user, name="bench", spec=sweep_spec(args.points))
            ids = list(sweep.simulations.values_list("pk", flat=True))
            end = wait_done(ids)
            rate = len(ids) / (end - start)
            throughput[concurrency] = max(throughput[concurrency], rate)
            print(
                f"  {concurrency} worker process{'es' if concurrency > 1 else ''}: "
                f"{len(ids)} runs in {end - start:.2f} s = {rate:.2f} runs/s"
            )
        finally:
            stop_worker(worker)

    cli = cli_seconds(args.single)
    sandbox = sandbox_seconds(args.single)
    queue = statistics.median(single_latency)
    queue_idle = statistics.median(idle_latency)
    ratio = throughput[2] / throughput[1]
    print(
        f"throughput ratio, 2 processes / 1 (best of {args.repeat}): {ratio:.2f}x (target >= 1.8x)"
    )
    print(f"one run through the CLI (process start to exit), median: {cli * 1e3:.0f} ms")
    print(
        f"one run through the queue (launch to result stored), one after another, median: "
        f"{queue * 1e3:.0f} ms"
    )
    print(
        f"one run through the queue, the worker settled before it (as between a user's runs), "
        f"median: {queue_idle * 1e3:.0f} ms ({(queue_idle - cli) * 1e3:+.0f} ms against the CLI, "
        f"{queue_idle / cli:.2f}x)"
    )
    print(f"the same run in the sandbox, called directly, median: {sandbox * 1e3:.0f} ms")
    print(f"queue path against the CLI: {(queue - cli) * 1e3:+.0f} ms per run ({queue / cli:.2f}x)")
    print(f"queue path overhead over the sandboxed run itself: {(queue - sandbox) * 1e3:+.0f} ms")


if __name__ == "__main__":
    main()
