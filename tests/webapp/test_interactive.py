"""Interactive sandbox jobs (webapp/interactive.py): a test-run, a save's check, the kernel
analyzer, a trace's import and a served request stream run their child on the interactive
worker, never in the web process, and a user's jobs in flight at once are capped."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

import pytest
from celery.exceptions import TimeoutError as CeleryTimeoutError
from django.core.cache import cache
from django.core.files.uploadedfile import SimpleUploadedFile
from rest_framework.test import APIClient

from simulator.analyze import ANALYZE_ENTRY
from simulator.evaluate import CHECK_APPLICATION_ENTRY, CHECK_ENTRY, EVALUATE_ENTRY
from simulator.workloads.serving_sandbox import SERVE_ENTRY
from tests.hwdb.factories import ComputationalModelFactory, GpuFactory, UserFactory, seeded_gpu
from tests.simulator.test_trace_import import kineto_trace
from tests.webapp.studio.factories import TINY_APP
from tests.webapp.studio.live import Worker, require_services
from webapp.interactive import MESSAGES, RUN_INTERACTIVE, interactive_slot

pytestmark = pytest.mark.django_db

CONSTANT_MODEL = "function computationTime(params) { return 1.5; }"
# a short stream on one GPU: a served stream is an interactive job
STREAM = {"model": "llama3-8b", "system": "dgx-h100", "requests": 4, "output_len": 4}
# the modules whose `run_sandboxed` would start a child in the calling process
SANDBOX_CALLERS = (
    "simulator.sandbox.parent",
    "simulator.evaluate",
    "simulator.analyze",
    "simulator.trace_sandbox",
    "simulator.workloads.serving_sandbox",
)


def client_of(user: Any) -> APIClient:
    client = APIClient()
    client.force_authenticate(user)
    return client


def evaluate(client: APIClient, model_id: int, component_id: int) -> Any:
    body = {"function": "computationTime", "args": [], "params": {}, "component": component_id}
    return client.post(f"/api/models/{model_id}/evaluate/", body, format="json")


@pytest.fixture(autouse=True)
def no_counts_left() -> None:
    cache.clear()


def test_a_users_jobs_past_the_limit_are_answered_429_and_others_are_not(settings: Any) -> None:
    settings.PARASIM_MAX_INTERACTIVE_PER_USER = 2
    busy, other = UserFactory(), UserFactory()
    model = ComputationalModelFactory(owner=busy, shared=True, source=CONSTANT_MODEL)
    gpu = GpuFactory(owner=busy, shared=True)
    # Two of the busy user's jobs in flight (their `while(true){}` test-runs, say).
    with interactive_slot(user_id=busy.pk), interactive_slot(user_id=busy.pk):
        refused = evaluate(client_of(busy), model.pk, gpu.pk)
        served = evaluate(client_of(other), model.pk, gpu.pk)
    assert refused.status_code == 429
    assert refused.json() == {"detail": MESSAGES["busy"].format(limit=2)}
    assert refused["Retry-After"]
    assert served.status_code == 200, served.json()
    assert served.json() == {"value": 1.5}
    # The slots are given back, a refused request's too.
    assert evaluate(client_of(busy), model.pk, gpu.pk).status_code == 200
    assert cache.get(f"interactive-jobs:{busy.pk}") == 0


def test_a_save_that_checks_a_source_counts_as_a_job(settings: Any) -> None:
    settings.PARASIM_MAX_INTERACTIVE_PER_USER = 1
    user = UserFactory()
    body = {"name": "App", "source": TINY_APP, "variables": []}
    with interactive_slot(user_id=user.pk):
        refused = client_of(user).post("/api/applications/", body, format="json")
    assert refused.status_code == 429
    assert client_of(user).post("/api/applications/", body, format="json").status_code == 201


def test_a_served_stream_counts_as_a_job(settings: Any) -> None:
    settings.PARASIM_MAX_INTERACTIVE_PER_USER = 1
    user = UserFactory()
    with interactive_slot(user_id=user.pk):
        refused = client_of(user).post("/api/workloads/serve/", STREAM, format="json")
    assert refused.status_code == 429
    assert refused.json() == {"detail": MESSAGES["busy"].format(limit=1)}


def test_a_cache_that_fails_refuses_no_job(monkeypatch: pytest.MonkeyPatch) -> None:
    def down(*arguments: Any, **options: Any) -> Any:
        raise ConnectionError("the shared cache is down")

    monkeypatch.setattr("webapp.interactive.cache.add", down)
    user = UserFactory()
    model = ComputationalModelFactory(owner=user, source=CONSTANT_MODEL)
    answered = evaluate(client_of(user), model.pk, GpuFactory(owner=user).pk)
    assert answered.status_code == 200, answered.json()


class FakeResult:
    """What `send_task` and `AsyncResult` return, answering `reply` (or timing out when it is
    None)."""

    def __init__(self, reply: dict[str, Any] | None) -> None:
        self.reply = reply
        self.id = "job"

    def get(self, timeout: float, interval: float) -> dict[str, Any]:
        if self.reply is None:
            raise CeleryTimeoutError("no answer")
        return self.reply

    def forget(self) -> None:
        pass


@dataclass
class Broker:
    """The interactive jobs sent, and the worker's reply to each by entry (None: no reply)."""

    sent: list[dict[str, Any]] = field(default_factory=list)
    replies: dict[str, dict[str, Any] | None] = field(default_factory=dict)


@pytest.fixture
def worker_only(settings: Any, monkeypatch: pytest.MonkeyPatch) -> Broker:
    """Make starting a sandbox child in this (the web) process fail the test, and return the
    jobs sent to the broker, answered by their replies."""
    settings.PARASIM_INTERACTIVE_EAGER = False

    def no_child_here(*arguments: Any, **options: Any) -> Any:
        raise AssertionError("the web process started a sandbox child")

    for module in SANDBOX_CALLERS:
        monkeypatch.setattr(f"{module}.run_sandboxed", no_child_here)
    broker = Broker()

    def send_task(name: str, *, kwargs: dict[str, Any], queue: str, expires: float) -> Any:
        broker.sent.append({"name": name, "queue": queue, **kwargs})
        return FakeResult(None)

    def async_result(task_id: str, *, backend: Any) -> Any:
        return FakeResult(broker.replies[broker.sent[-1]["entry"]])

    monkeypatch.setattr("webapp.celery.app.send_task", send_task)
    monkeypatch.setattr("webapp.celery.app.AsyncResult", async_result)
    return broker


REQUESTS: dict[str, tuple[str, Callable[[Any], tuple[str, dict[str, Any]]], dict[str, Any]]] = {
    "evaluate": (
        EVALUATE_ENTRY,
        lambda user: (
            f"/api/models/{ComputationalModelFactory(owner=user).pk}/evaluate/",
            {"function": "computationTime", "args": [], "params": {}},
        ),
        {"value": 2.5},
    ),
    "model save": (
        CHECK_ENTRY,
        lambda user: ("/api/models/", {"name": "M", "source": "function f() { return 1; }"}),
        {"ok": True},
    ),
    "application save": (
        CHECK_APPLICATION_ENTRY,
        lambda user: ("/api/applications/", {"name": "A", "source": TINY_APP, "variables": []}),
        {"errors": []},
    ),
    "analyzer": (
        ANALYZE_ENTRY,
        lambda user: ("/api/analyze/", {"language": "sass", "source": "EXIT;", "arch": "sm_52"}),
        {"analysis": {}, "summary": "", "svg": "<svg/>"},
    ),
    "serve": (
        SERVE_ENTRY,
        lambda user: ("/api/workloads/serve/", dict(STREAM)),
        {"requests_per_s": 3.5},
    ),
}


@pytest.mark.parametrize("request_name", list(REQUESTS))
def test_the_web_process_does_not_start_the_child(
    request_name: str, worker_only: Broker, settings: Any
) -> None:
    entry, make_request, result = REQUESTS[request_name]
    worker_only.replies[entry] = {"result": result}
    user = UserFactory()
    path, body = make_request(user)
    if request_name == "evaluate":
        body["component"] = GpuFactory(owner=user).pk
    response = client_of(user).post(path, body, format="json")
    assert response.status_code in (200, 201), response.json()
    assert [(job["name"], job["queue"], job["entry"]) for job in worker_only.sent] == [
        (RUN_INTERACTIVE, settings.PARASIM_INTERACTIVE_QUEUE, entry)
    ]
    if request_name in ("evaluate", "serve"):
        assert response.json() == result


def test_an_error_the_worker_reports_is_answered_as_before(
    worker_only: Broker,
) -> None:
    error = {"kind": "model", "detail": "SyntaxError: x", "model": "M", "function": "", "line": 1}
    worker_only.replies[CHECK_ENTRY] = {"error": error}
    user = UserFactory()
    body = {"name": "M", "source": "function ("}
    response = client_of(user).post("/api/models/", body, format="json")
    assert response.status_code == 400
    assert response.json() == {"source": ["Line 1: SyntaxError: x"]}


def test_a_job_no_worker_answers_is_answered_503(worker_only: Broker) -> None:
    worker_only.replies[EVALUATE_ENTRY] = None
    user = UserFactory()
    model, gpu = ComputationalModelFactory(owner=user), GpuFactory(owner=user)
    response = evaluate(client_of(user), model.pk, gpu.pk)
    assert response.status_code == 503
    assert "No worker answered within" in response.json()["detail"]
    assert cache.get(f"interactive-jobs:{user.pk}") == 0


def test_the_task_runs_only_interactive_entries() -> None:
    from webapp.studio.tasks import run_interactive

    reply = run_interactive(payload={}, limits={}, entry="simulator.runner:run_simulation")
    assert (
        reply["error"]["message"] == "'simulator.runner:run_simulation' is not an interactive job"
    )


@pytest.fixture(scope="module")
def interactive_worker(
    django_db_setup: None, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Worker]:
    """Start a real worker serving only the interactive queue (shared Redis); stop it after."""
    from django.conf import settings

    from tests.webapp.studio.test_integration import database_url, start

    require_services()
    worker = Worker(
        database_url(),
        tmp_path_factory.mktemp("interactive") / "worker.log",
        [settings.PARASIM_INTERACTIVE_QUEUE],
    )
    try:
        yield start(worker)
    finally:
        worker.stop()


@pytest.mark.integration
def test_a_real_worker_answers_the_web_requests_jobs(
    interactive_worker: Worker, settings: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    settings.PARASIM_INTERACTIVE_EAGER = False

    def no_child_here(*arguments: Any, **options: Any) -> Any:
        raise AssertionError("the web process started a sandbox child")

    for module in SANDBOX_CALLERS:
        monkeypatch.setattr(f"{module}.run_sandboxed", no_child_here)
    user = UserFactory()
    model = ComputationalModelFactory(owner=user, source=CONSTANT_MODEL)
    gpu = GpuFactory(owner=user)
    answered = evaluate(client_of(user), model.pk, gpu.pk)
    assert answered.status_code == 200, answered.json()
    assert answered.json() == {"value": 1.5}
    body = {"name": "Broken", "source": "function computationTime( {"}
    refused = client_of(user).post("/api/models/", body, format="json")
    assert refused.status_code == 400
    assert refused.json()["source"][0].startswith("Line 1: SyntaxError")
    # a trace's import: its bytes and the user's GPU records travel with the job
    seeded_gpu("A100 SXM4 40GB")
    trace = SimpleUploadedFile("step.json", json.dumps(kineto_trace()).encode())
    imported = client_of(user).post("/api/trace-imports/", {"trace": trace}, format="multipart")
    assert imported.status_code == 200, imported.json()
    assert imported.json()["report"]["measured_record"] == "A100 SXM4 40GB"
    # a served stream: the plan and the user's GPU records travel with the job
    seeded_gpu("H100 SXM5 80GB")
    served = client_of(user).post("/api/workloads/serve/", STREAM, format="json")
    assert served.status_code == 200, served.json()
    assert served.json()["kv_cache"]["gpu_memory_bytes"] == 80 * 2**30
    assert served.json()["plan"]["requests"] == 4
    assert cache.get(f"interactive-jobs:{user.pk}") == 0
