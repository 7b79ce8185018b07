"""REST load benchmark: latency and throughput of the API under N concurrent clients, served by
the production server configuration (gunicorn, webapp.settings.production, PostgreSQL, Redis).

    .venv/bin/python bench/bench_rest.py                         # 1 and 50 clients, a few minutes
    .venv/bin/python bench/bench_rest.py --clients 1,10,50 --requests 40 --json
    .venv/bin/python bench/bench_rest.py --only GET --think-ms 500  # users who pause 0.5 s
    .venv/bin/python bench/bench_rest.py --gunicorn-args "--workers 3 --access-logfile -"
    .venv/bin/python bench/bench_rest.py --url http://127.0.0.1:8000 --username U --password P

By default it creates a throwaway PostgreSQL database (`--database-url`, default
postgres://postgres@127.0.0.1:5432/parasim_bench_rest, dropped at exit unless `--keep`) and uses
a spare Redis database (`--broker-url`, default redis://127.0.0.1:6379/13, emptied before and
after) and another for the web processes' shared cache (`--cache-url`, default
redis://127.0.0.1:6379/14, emptied likewise, as docker-compose.yml's PARASIM_CACHE_URL;
`--cache-url ''`: each process its own), migrates and seeds it as docker-compose.yml's web
service does (`seed_hardware`), adds one user with an API token per client, each with 50
finished runs so that a page of the runs list is full, and starts gunicorn on 127.0.0.1 with the configuration docs/deployment.md
describes (`gunicorn webapp.wsgi -c webapp/gunicorn.conf.py`, or `--gunicorn-args`).
Requests carry `X-Forwarded-Proto: https`, as the TLS proxy in front of a deployment sets it.

Each client is a thread with one keep-alive HTTP connection (reopened whenever the server
closes it, as gunicorn's sync workers do after every response) and its own user. First every
client sends one untimed request to each endpoint, all at once, so that each server process has
paid its first-request costs (imports, the broker connection). Then, per endpoint and client
count, all clients start together, send one untimed request each, and `--requests` timed
requests one after another (`--single-requests` for a single client). Without `--think-ms`
this is a closed loop without think time: at 50 clients the server is saturated and latency is
mostly time spent waiting for a worker. `--think-ms T` makes each client pause T ms after each
response, like a person or a polling page. Endpoints, in this order (`--only GET,POST`: only
those whose name holds one of the words):

- `GET /api/components/?type=GPU`: the seeded GPUs with their attributes, nested;
- `GET /api/simulations/`: the client's runs, one page of 50;
- `POST /api/simulations/`: a launch of the MERPSYS GTX 970 example system model with the
  shared application model of its Listing 5, queued on `default`. No worker is started: a
  launch only has to be stored and sent to the broker, or held back once its user has
  PARASIM_MAX_RUNNING_PER_USER runs in flight (the production default, 4), and the script
  checks afterwards that every launched run is still queued and was sent or held.

It prints one Markdown table row per endpoint and client count: requests, errors, median, p95
(nearest rank) and maximum latency in ms, requests per second over the timed part, and the CPU
time gunicorn's processes used per request (user + system, from /proc; steadier than latency
on a shared machine, and what bounds throughput once the cores are busy) and the time all of
the machine's PostgreSQL processes used per request; `--json` gives the same as JSON, with the
load generator's own CPU time per request beside it. The load generator
runs on the same machine as the server and the databases, so the figures are those of the whole
machine; quote them with its core count and load. In a closed loop, p95 at N clients is about
N / throughput once the server is saturated.
With `--url` (plain HTTP) the script only drives an existing server, as the user `--username`,
every client with the same token; the launch phase then needs the ids of a system model
(`--system-model`) and of an application model declaring N, blockSz, occupancy and
computeIntensity (`--application`) that user may use, and is skipped without them; the
server's per-user launch rate (PARASIM_LAUNCH_RATE) applies.
"""

from __future__ import annotations

import argparse
import atexit
import http.client
import io
import json
import math
import os
import secrets
import shlex
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from results_block import run_line, write_block  # bench/results_block.py

ROOT = Path(__file__).resolve().parent.parent
EXAMPLE = ROOT / "examples" / "merpsys_gtx970"
EXAMPLE_VARIABLES = {"N": 10_000_000, "blockSz": 256, "occupancy": 64, "computeIntensity": 32}
DEFAULT_DATABASE_URL = "postgres://postgres@127.0.0.1:5432/parasim_bench_rest"
DEFAULT_BROKER_URL = "redis://127.0.0.1:6379/13"
DEFAULT_CACHE_URL = "redis://127.0.0.1:6379/14"
DEFAULT_GUNICORN_ARGS = "-c webapp/gunicorn.conf.py"
RUNS_PER_USER = 50
LAUNCH_NAME = "bench launch"
SCRATCH = Path(tempfile.mkdtemp(prefix="parasim-bench-rest-"))
atexit.register(shutil.rmtree, SCRATCH, ignore_errors=True)


@dataclass
class Endpoint:
    """One request the clients repeat: method, path, and a body per client (or none)."""

    name: str
    method: str
    path: str
    expect: int
    body: Callable[[int], bytes | None] = lambda _client: None


@dataclass
class Phase:
    """The latencies (s) of one endpoint at one client count, and what went wrong."""

    endpoint: str
    clients: int
    latencies: list[float] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    wall_s: float = 0.0
    server_cpu_s: float | None = None
    client_cpu_s: float = 0.0
    database_cpu_s: float = 0.0

    def summary(self) -> dict[str, Any]:
        """Return count, errors, median, p95, max (ms) and requests per second."""
        ordered = sorted(self.latencies)
        count = len(ordered)

        def ms(value: float) -> float:
            return round(value * 1e3, 1)

        return {
            "endpoint": self.endpoint,
            "clients": self.clients,
            "requests": count,
            "errors": len(self.errors),
            "median_ms": ms(statistics.median(ordered)) if ordered else None,
            "p95_ms": ms(ordered[max(math.ceil(0.95 * count) - 1, 0)]) if ordered else None,
            "max_ms": ms(ordered[-1]) if ordered else None,
            "requests_per_s": round(count / self.wall_s, 1) if self.wall_s else None,
            "server_cpu_ms": (
                round(self.server_cpu_s / count * 1e3, 2)
                if self.server_cpu_s is not None and count
                else None
            ),
            "client_cpu_ms": round(self.client_cpu_s / count * 1e3, 2) if count else None,
            "database_cpu_ms": round(self.database_cpu_s / count * 1e3, 2) if count else None,
        }


class Client:
    """One simulated user: a keep-alive connection, a token, and its own request bodies."""

    def __init__(self, url: str, token: str, index: int) -> None:
        parts = urlsplit(url)
        self.host, self.port = parts.hostname or "127.0.0.1", parts.port or 80
        self.index = index
        self.headers = {
            "Authorization": f"Token {token}",
            "Accept": "application/json",
            "Content-Type": "application/json",
            "X-Forwarded-Proto": "https",
        }
        self.connection = http.client.HTTPConnection(self.host, self.port, timeout=60)

    def request(self, endpoint: Endpoint) -> tuple[float, str | None]:
        """Return the latency of one request (s) and an error description, or None."""
        body = endpoint.body(self.index)
        start = time.perf_counter()
        try:
            self.connection.request(endpoint.method, endpoint.path, body, self.headers)
            response = self.connection.getresponse()
            payload = response.read()
        except (OSError, http.client.HTTPException) as error:
            self.connection.close()  # the next request opens a new connection
            return time.perf_counter() - start, f"{type(error).__name__}: {error}"
        elapsed = time.perf_counter() - start
        if response.status != endpoint.expect:
            return elapsed, f"HTTP {response.status}: {payload[:300]!r}"
        return elapsed, None


def process_cpu_s(root: int) -> float:
    """Return the CPU time (user + system, s) of process `root` and its children so far."""
    total = 0.0
    pending = [root]
    while pending:
        pid = pending.pop()
        try:
            fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
            children = Path(f"/proc/{pid}/task/{pid}/children").read_text().split()
        except OSError:  # gone meanwhile
            continue
        total += (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
        pending.extend(int(child) for child in children)
    return total


def named_processes_cpu_s(name: str) -> float:
    """Return the CPU time (user + system, s) so far of every process of this machine whose
    command name is `name` ("postgres": the database's server processes; the web processes
    keep their connections, so their backends live through a phase)."""
    total = 0
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            head, _, rest = (entry / "stat").read_text().rpartition(")")
        except OSError:  # gone meanwhile
            continue
        if head.partition("(")[2] == name:
            fields = rest.split()
            total += int(fields[11]) + int(fields[12])
    return total / os.sysconf("SC_CLK_TCK")


def run_phase(
    clients: list[Client],
    endpoint: Endpoint,
    requests: int,
    server_pid: int | None = None,
    think_s: float = 0.0,
) -> Phase:
    """Return the timed latencies of `requests` requests per client, all clients at once, and
    the CPU time the server (process `server_pid` and its children) used meanwhile."""
    phase = Phase(endpoint.name, len(clients))
    barrier = threading.Barrier(len(clients) + 1)
    lock = threading.Lock()
    finished: list[float] = []

    def work(client: Client) -> None:
        client.request(endpoint)  # warm-up: connection, worker caches; not counted
        barrier.wait()
        mine: list[float] = []
        problems: list[str] = []
        for index in range(requests):
            if think_s and index:
                time.sleep(think_s)
            elapsed, error = client.request(endpoint)
            mine.append(elapsed)
            if error:
                problems.append(error)
        end = time.perf_counter()
        with lock:
            phase.latencies.extend(mine)
            phase.errors.extend(problems)
            finished.append(end)

    threads = [threading.Thread(target=work, args=(client,), daemon=True) for client in clients]
    for thread in threads:
        thread.start()
    barrier.wait()
    start = time.perf_counter()
    cpu_before = process_cpu_s(server_pid) if server_pid else 0.0
    client_before = time.process_time()
    database_before = named_processes_cpu_s("postgres")
    for thread in threads:
        thread.join()
    phase.wall_s = max(finished) - start if requests else 0.0
    phase.client_cpu_s = time.process_time() - client_before
    phase.database_cpu_s = named_processes_cpu_s("postgres") - database_before
    if server_pid:
        phase.server_cpu_s = process_cpu_s(server_pid) - cpu_before
    return phase


def markdown(rows: list[dict[str, Any]]) -> str:
    """Return the summaries as a Markdown table."""
    lines = [
        "| endpoint | clients | requests | errors | median ms | p95 ms | max ms | req/s "
        "| server CPU ms/req | PostgreSQL CPU ms/req |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for row in rows:
        lines.append(
            f"| `{row['endpoint']}` | {row['clients']} | {row['requests']} | {row['errors']} "
            f"| {row['median_ms']} | {row['p95_ms']} | {row['max_ms']} | {row['requests_per_s']} "
            f"| {row['server_cpu_ms'] if row['server_cpu_ms'] is not None else '-'} "
            f"| {row['database_cpu_ms']} |"
        )
    return "\n".join(lines)


# --- the throwaway deployment ----------------------------------------------------------------


def free_port() -> int:
    """Return a TCP port nobody listens on now."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def recreate_database(database_url: str, *, drop_at_exit: bool) -> None:
    """Create the database of `database_url` afresh (dropping any earlier one)."""
    import psycopg

    parts = urlsplit(database_url)
    name = parts.path.lstrip("/")
    if not name.replace("_", "").isalnum():
        raise SystemExit(f"refusing an unusual database name: {name!r}")
    admin = parts._replace(path="/postgres").geturl().replace("postgres://", "postgresql://", 1)

    def run(statement: str) -> None:
        with psycopg.connect(admin, autocommit=True) as connection:
            connection.execute(statement)

    run(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
    run(f'CREATE DATABASE "{name}"')
    if drop_at_exit:
        atexit.register(run, f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


def empty_redis(url: str) -> None:
    """Empty one of the bench's Redis databases (its queued launches, its shared cache)."""
    import redis

    redis.Redis.from_url(url).flushdb()


def server_environment(args: argparse.Namespace) -> dict[str, str]:
    """Return the environment of the production settings, as docker-compose.yml sets it."""
    env = dict(os.environ)
    env.update(
        DJANGO_SETTINGS_MODULE="webapp.settings.production",
        DATABASE_URL=args.database_url,
        CELERY_BROKER_URL=args.broker_url,
        PARASIM_CACHE_URL=args.cache_url,
        SECRET_KEY=secrets.token_urlsafe(64),
        ALLOWED_HOSTS="localhost,127.0.0.1",
        DEBUG="0",
        PARASIM_QUEUES="default,gajgerqueue",
        # The per-user launch limit (120/min) is a policy, not a cost: the timed launches
        # would hit it. The throttle still runs on every launch.
        PARASIM_LAUNCH_RATE="1000000/min",
        PARASIM_DATA_DIR=str(SCRATCH / "data"),
        LOG_LEVEL="WARNING",
    )
    env.pop("DJANGO_ALLOW_ASYNC_UNSAFE", None)
    return env


def prepare_data(clients: int) -> dict[str, Any]:
    """Return the users' tokens and the launch's ids after seeding the database."""
    import django

    django.setup()
    from django.contrib.auth import get_user_model
    from django.core.management import call_command
    from django.db import connections
    from rest_framework.authtoken.models import Token

    import simulator
    from hwdb.models import SystemModel
    from hwdb.selectors import system_model_export_snapshot
    from webapp.studio.models import Simulation, SimulationStatus
    from webapp.studio.services.applications import application_model_create

    call_command("migrate", "--noinput", verbosity=0)
    call_command("seed_hardware", verbosity=0, stdout=io.StringIO())  # keep stdout for --json
    example = json.loads((EXAMPLE / "snapshot.json").read_text())
    system_model = SystemModel.objects.get(owner=None, name=example["name"])
    snapshot = system_model_export_snapshot(system_model=system_model)
    users = [
        get_user_model().objects.create_user(f"bench{index}", password=secrets.token_hex(8))
        for index in range(clients)
    ]
    application = application_model_create(
        owner=users[0],
        name="MERPSYS Listing 5 (bench)",
        source=(EXAMPLE / "app.py").read_text(),
        variables=[
            {"name": name, "type": "int", "default": value}
            for name, value in EXAMPLE_VARIABLES.items()
        ],
        shared=True,
    )
    overall_time_s, energy_j = 0.00123, 0.5
    finished = {"status": "succeeded", "overall_time_s": overall_time_s, "energy_j": energy_j}
    Simulation.objects.bulk_create(
        Simulation(
            owner=user,
            name=f"bench run {index}",
            system_model=system_model,
            snapshot=snapshot,
            application=application,
            app_source=application.source,
            variables=EXAMPLE_VARIABLES,
            labels={"CPU": 1, "GPU": 1},
            queue="default",
            time_limit_s=600,
            status=SimulationStatus.SUCCEEDED,
            progress=1.0,
            result=finished,
            overall_time_s=overall_time_s,
            energy_j=energy_j,
            attempts=1,
            engine_version=simulator.ENGINE_VERSION,
            celery_task_id=secrets.token_hex(16),
        )
        for user in users
        for index in range(RUNS_PER_USER)
    )
    tokens = [Token.objects.create(user=user).key for user in users]
    connections.close_all()
    return {
        "tokens": tokens,
        "system_model": system_model.pk,
        "application": application.pk,
        "usernames": [user.username for user in users],
    }


def start_server(
    args: argparse.Namespace, env: dict[str, str]
) -> tuple[subprocess.Popen[bytes], str]:
    """Return gunicorn serving webapp.wsgi on a free port of 127.0.0.1, and its URL."""
    port = free_port()
    command = [sys.executable, "-m", "gunicorn", "webapp.wsgi", *shlex.split(args.gunicorn_args)]
    command += ["--bind", f"127.0.0.1:{port}"]
    log = (SCRATCH / "gunicorn.log").open("wb")
    print(f"server: {shlex.join(['gunicorn', *command[3:]])}", file=sys.stderr)
    server = subprocess.Popen(
        command, cwd=ROOT, env=env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True
    )
    atexit.register(stop_server, server)
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if server.poll() is not None:
            break
        try:
            connection = http.client.HTTPConnection("127.0.0.1", port, timeout=2)
            connection.request("GET", "/healthz")
            if connection.getresponse().status == 200:
                return server, url
        except OSError:
            pass
        time.sleep(0.2)
    raise SystemExit(f"gunicorn did not start:\n{(SCRATCH / 'gunicorn.log').read_text()[-3000:]}")


def server_messages(limit: int = 20) -> str:
    """Return the last lines of gunicorn's log that are not access-log lines."""
    path = SCRATCH / "gunicorn.log"
    if not path.exists():
        return ""
    lines = [
        line
        for line in path.read_text(errors="replace").splitlines()
        if '"GET ' not in line and '"POST ' not in line
    ]
    return "\n".join(lines[-limit:])


def stop_server(server: subprocess.Popen[bytes]) -> None:
    """Stop gunicorn (its whole process group) and wait for it."""
    if server.poll() is not None:
        return
    os.killpg(server.pid, signal.SIGTERM)
    try:
        server.wait(timeout=30)
    except subprocess.TimeoutExpired:
        os.killpg(server.pid, signal.SIGKILL)
        server.wait()


def check_launched_runs_queued(usernames: list[str]) -> str:
    """Return a line saying whether every run launched by the bench is queued and was either
    sent or held back (its owner had PARASIM_MAX_RUNNING_PER_USER runs in flight already: no
    worker runs them here, so each client's first few are sent and the rest held)."""
    from django.db import connections

    from webapp.studio.models import Simulation, SimulationStatus

    launched = Simulation.objects.filter(owner__username__in=usernames, name=LAUNCH_NAME)
    statuses: dict[str, int] = {}
    held = lost = 0
    for status, sent, is_held in launched.values_list("status", "sent", "held"):
        statuses[status] = statuses.get(status, 0) + 1
        held += is_held
        lost += sent is None and not is_held
    connections.close_all()
    ok = set(statuses) <= {SimulationStatus.QUEUED} and not lost
    verdict = "ok" if ok else "UNEXPECTED"
    return (
        f"launched runs by status: {statuses}, held: {held}, neither sent nor held: {lost} "
        f"({verdict})"
    )


def token_for(url: str, username: str, password: str) -> str:
    """Return the API token of a user of an existing server."""
    parts = urlsplit(url)
    connection = http.client.HTTPConnection(parts.hostname or "127.0.0.1", parts.port or 80)
    body = json.dumps({"username": username, "password": password})
    headers = {"Content-Type": "application/json", "X-Forwarded-Proto": "https"}
    connection.request("POST", "/api/auth/token/", body, headers)
    response = connection.getresponse()
    payload = response.read()
    if response.status != 200:
        raise SystemExit(f"could not get a token: HTTP {response.status} {payload[:300]!r}")
    return str(json.loads(payload)["token"])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--clients", default="1,50", help="comma-separated client counts (default 1,50)"
    )
    parser.add_argument(
        "--requests", type=int, default=20, help="timed requests per client (default 20)"
    )
    parser.add_argument(
        "--single-requests",
        type=int,
        default=200,
        help="timed requests of the single client when --clients has 1 (default 200)",
    )
    parser.add_argument(
        "--think-ms", type=float, default=0.0, help="pause of each client between requests"
    )
    parser.add_argument("--json", action="store_true", help="print JSON instead of a table")
    parser.add_argument(
        "--write-results",
        action="store_true",
        help="record the run in RESULTS.md (between its bench_rest.py markers)",
    )
    parser.add_argument("--gunicorn-args", default=DEFAULT_GUNICORN_ARGS)
    parser.add_argument("--database-url", default=DEFAULT_DATABASE_URL)
    parser.add_argument("--broker-url", default=DEFAULT_BROKER_URL)
    parser.add_argument(
        "--cache-url",
        default=DEFAULT_CACHE_URL,
        help="the web processes' shared cache (PARASIM_CACHE_URL); '' for one per process",
    )
    parser.add_argument("--keep", action="store_true", help="keep the database at exit")
    parser.add_argument("--url", help="drive this server instead of starting one")
    parser.add_argument("--username", help="with --url: the user the clients sign in as")
    parser.add_argument("--password", help="with --url: that user's password")
    parser.add_argument("--system-model", type=int, help="with --url: system model to launch")
    parser.add_argument("--application", type=int, help="with --url: application to launch")
    parser.add_argument(
        "--only",
        default="",
        help="comma-separated words; run only the endpoints whose name holds one (e.g. POST)",
    )
    args = parser.parse_args()
    counts = [int(item) for item in args.clients.split(",") if item.strip()]
    most = max(counts)

    usernames: list[str] = []
    server_pid: int | None = None
    if args.url:
        if not (args.username and args.password):
            raise SystemExit("--url needs --username and --password")
        url = args.url.rstrip("/")
        tokens = [token_for(url, args.username, args.password)] * most
        launch_ids = (
            {"system_model": args.system_model, "application": args.application}
            if args.system_model and args.application
            else None
        )
    else:
        env = server_environment(args)
        os.environ.update(env)
        sys.path.insert(0, str(ROOT))
        recreate_database(args.database_url, drop_at_exit=not args.keep)
        for spare in filter(None, (args.broker_url, args.cache_url)):
            empty_redis(spare)
            atexit.register(empty_redis, spare)
        data = prepare_data(most)
        tokens, usernames = data["tokens"], data["usernames"]
        launch_ids = {"system_model": data["system_model"], "application": data["application"]}
        process, url = start_server(args, env)
        server_pid = process.pid

    endpoints = [
        Endpoint("GET /api/components/?type=GPU", "GET", "/api/components/?type=GPU", 200),
        Endpoint("GET /api/simulations/", "GET", "/api/simulations/", 200),
    ]
    if launch_ids:
        launch = json.dumps(
            {
                **launch_ids,
                "name": LAUNCH_NAME,
                "labels": {"CPU": 1, "GPU": 1},
                "variables": EXAMPLE_VARIABLES,
                "queue": "default",
            }
        ).encode()
        endpoints.append(
            Endpoint("POST /api/simulations/", "POST", "/api/simulations/", 201, lambda _: launch)
        )
    wanted = [word.strip() for word in args.only.split(",") if word.strip()]
    if wanted:
        endpoints = [e for e in endpoints if any(word in e.name for word in wanted)]

    # Every client once per endpoint, all at once and untimed: each server process has then
    # served each endpoint (first-request costs: imports, the broker connection) before the
    # one-client phases, whose requests may reach any of them.
    warm = [Client(url, tokens[index], index) for index in range(most)]
    for endpoint in endpoints:
        run_phase(warm, endpoint, 0)
    for client in warm:
        client.connection.close()
    rows = []
    for endpoint in endpoints:
        for count in counts:
            clients = [Client(url, tokens[index], index) for index in range(count)]
            requests = args.single_requests if count == 1 else args.requests
            phase = run_phase(clients, endpoint, requests, server_pid, args.think_ms / 1e3)
            for client in clients:
                client.connection.close()
            summary = phase.summary()
            rows.append(summary)
            if phase.errors:
                kinds: dict[str, int] = {}
                for error in phase.errors:
                    kinds[error[:60]] = kinds.get(error[:60], 0) + 1
                print(f"{endpoint.name} x{count}: errors: {kinds}", file=sys.stderr)
                print(server_messages(), file=sys.stderr)
            print(
                f"{endpoint.name:32} {count:3} clients: median {summary['median_ms']} ms, "
                f"p95 {summary['p95_ms']} ms, {summary['requests_per_s']} req/s, CPU ms/req: "
                f"server {summary['server_cpu_ms']}, load generator {summary['client_cpu_ms']}, "
                f"PostgreSQL {summary['database_cpu_ms']}",
                file=sys.stderr,
            )
    note = ""
    if usernames and launch_ids:
        note = check_launched_runs_queued(usernames)
        print(note, file=sys.stderr)
    server = args.url or f"gunicorn webapp.wsgi {args.gunicorn_args}"
    if not args.url:
        server += f", shared cache {args.cache_url}" if args.cache_url else ", a cache per process"
    context = {
        "cores": os.cpu_count(),
        "load_average": [round(value, 2) for value in os.getloadavg()],
        "server": server,
        "think_ms": args.think_ms,
    }
    if args.json:
        print(json.dumps({**context, "results": rows, "check": note}, indent=2))
    else:
        load = ", ".join(str(value) for value in context["load_average"])
        print(f"\n{context['cores']} cores, load average {load} at the end; server: {server}")
        if args.think_ms:
            print(f"clients pause {args.think_ms:g} ms between requests")
        print()
        print(markdown(rows))
    if args.write_results:
        load = ", ".join(str(value) for value in context["load_average"])
        block = [
            run_line("bench_rest.py", None),
            "",
            f"- machine: {context['cores']} CPUs, load average {load} at the end",
            f"- server: {server}",
            f"- clients pause {args.think_ms:g} ms between requests",
            f"- check: {note}",
            "",
            markdown(rows),
        ]
        print(f"wrote {write_block(block, 'bench_rest.py')}")


if __name__ == "__main__":
    main()
