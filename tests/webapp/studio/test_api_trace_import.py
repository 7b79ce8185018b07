"""POST /api/trace-imports/: an uploaded Kineto trace becomes an application model, a replay
snapshot and a report (issue 43 item 7), saved as an application model when named; it is read
in a sandbox child, never in the web process, and the GPUs it names are the hardware records
the user may see."""

from __future__ import annotations

import gzip
import json
from typing import Any

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from rest_framework.test import APIClient

import simulator.trace_import
import simulator.trace_sandbox
from tests.hwdb.factories import seeded_gpu
from tests.simulator.test_trace_import import kineto_trace
from webapp.api.throttling import LaunchRateThrottle
from webapp.studio.models import ApplicationModel
from webapp.studio.services import traces

SEEDED = ("A100 SXM4 40GB", "H100 SXM5 80GB")


@pytest.fixture(autouse=True)
def built_in_gpus(db: None, monkeypatch: pytest.MonkeyPatch) -> None:
    """The built-in records the trace names, as a seeded database holds them; and a web
    process that fails the test if it reads a trace itself."""
    for name in SEEDED:
        seeded_gpu(name)

    def refuse(*args: object, **kwargs: object) -> None:
        raise AssertionError("the web process read a trace")

    for name in ("read_trace", "read_kineto", "read_nsys_sqlite"):
        monkeypatch.setattr(simulator.trace_import, name, refuse)
    monkeypatch.setattr(simulator.trace_sandbox, "read_trace", refuse)


def upload(content: bytes, name: str = "trace.json") -> SimpleUploadedFile:
    return SimpleUploadedFile(name, content, content_type="application/octet-stream")


def test_an_uploaded_trace_comes_back_as_a_model_snapshot_and_report(
    client: APIClient, user: Any
) -> None:
    body = json.dumps(kineto_trace()).encode()
    response = client.post(
        "/api/trace-imports/",
        {"trace": upload(body), "target_gpu": "H100 SXM5 80GB", "ranks": "2"},
        format="multipart",
    )
    assert response.status_code == 200, response.content
    answer = response.json()
    assert answer["labels"] == {"S7": 2, "H7": 2, "S20": 2, "H20": 2}
    assert answer["report"]["measured_record"] == "A100 SXM4 40GB"
    assert answer["report"]["rules"]["gemm"] == 1
    assert answer["snapshot"]["hardware"]["gpu"]["name"] == "H100 SXM5 80GB"
    assert "collective('allreduce', 4194304, 2, 300, 'ring')" in answer["app_source"]
    assert answer["report"]["collectives"]["fabric"] == "dgx-h100"
    assert "application" not in answer and not ApplicationModel.objects.exists()

    saved = client.post(
        "/api/trace-imports/", {"trace": upload(body), "name": "Imported step"}, format="multipart"
    )
    assert saved.status_code == 201, saved.content
    model = ApplicationModel.objects.get(pk=saved.json()["application"])
    assert (model.owner, model.name) == (user, "Imported step")
    assert model.source == saved.json()["app_source"]


def test_bad_uploads_name_their_field_and_save_nothing(client: APIClient) -> None:
    response = client.post(
        "/api/trace-imports/", {"trace": upload(b"{oops"), "name": "x"}, format="multipart"
    )
    assert response.status_code == 400
    (message,) = response.json()["trace"]
    assert "trace.json is neither an Nsight Systems SQLite export nor JSON" in message
    assert "/tmp" not in message  # the server's temporary path is not shown
    body = json.dumps(kineto_trace()).encode()
    response = client.post(
        "/api/trace-imports/",
        {"trace": upload(body), "target_gpu": "Z9000", "name": "x"},
        format="multipart",
    )
    assert (
        response.status_code == 400 and "no GPU record 'Z9000'" in response.json()["target_gpu"][0]
    )
    response = client.post(
        "/api/trace-imports/", {"trace": upload(body), "ranks": "0"}, format="multipart"
    )
    assert response.status_code == 400 and "ranks" in response.json()
    assert client.post("/api/trace-imports/", {}, format="multipart").status_code == 400
    assert not ApplicationModel.objects.exists()


def test_only_a_signed_in_user_imports_a_trace() -> None:
    body = json.dumps(kineto_trace()).encode()
    response = APIClient().post("/api/trace-imports/", {"trace": upload(body)}, format="multipart")
    assert response.status_code in (401, 403)


def test_the_schema_documents_the_trace_endpoints(client: APIClient) -> None:
    paths = client.get("/api/schema/", {"format": "json"}).json()["paths"]
    upload_body = paths["/api/trace-imports/"]["post"]["requestBody"]["content"]
    assert upload_body["multipart/form-data"]["schema"]["required"] == ["trace"]
    assert "/api/simulations/{id}/trace.json" in paths


def test_a_gzip_upload_that_expands_past_the_limit_is_refused(
    client: APIClient, monkeypatch: Any
) -> None:
    monkeypatch.setattr(traces, "MAX_JSON_BYTES", 1 << 20)
    body = gzip.compress(json.dumps(kineto_trace()).encode() + b" " * (4 << 20))
    response = client.post(
        "/api/trace-imports/", {"trace": upload(body, "t.json.gz"), "name": "x"}, format="multipart"
    )
    assert response.status_code == 400
    assert "t.json.gz holds more than 1048576 bytes of JSON" in response.json()["trace"][0]
    assert not ApplicationModel.objects.exists()


def test_an_import_counts_against_the_launch_rate(client: APIClient, monkeypatch: Any) -> None:
    monkeypatch.setattr(LaunchRateThrottle, "THROTTLE_RATES", {"launch": "0/min"})
    body = json.dumps(kineto_trace()).encode()
    response = client.post("/api/trace-imports/", {"trace": upload(body)}, format="multipart")
    assert response.status_code == 429
    assert "Launches are limited to 0 a minute" in response.json()["detail"]


def test_a_private_gpu_record_is_its_owner_s_target_and_no_one_else_s(
    client_for: Any, user: Any, other_user: Any
) -> None:
    seeded_gpu("H100 SXM5 80GB", owner=user, as_name="My H100 at 1.2 GHz")
    body = json.dumps(kineto_trace()).encode()
    fields = {"target_gpu": "My H100 at 1.2 GHz"}
    mine = client_for(user).post(
        "/api/trace-imports/", {"trace": upload(body), **fields}, format="multipart"
    )
    assert mine.status_code == 200, mine.content
    assert mine.json()["report"]["target_record"] == "My H100 at 1.2 GHz"
    assert mine.json()["snapshot"]["hardware"]["gpu"]["name"] == "My H100 at 1.2 GHz"
    theirs = client_for(other_user).post(
        "/api/trace-imports/", {"trace": upload(body), **fields}, format="multipart"
    )
    assert theirs.status_code == 400
    (message,) = theirs.json()["target_gpu"]
    assert (
        "no GPU record 'My H100 at 1.2 GHz'" in message
        and "My H100" not in message.split("give one of:")[1]
    )
