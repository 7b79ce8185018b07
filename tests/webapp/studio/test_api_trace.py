"""GET /api/simulations/<id>/trace.json: a run's Chrome trace (issue 43 item 6), its owner's
only, 409 while the run has no result."""

from __future__ import annotations

from typing import Any

from rest_framework.test import APIClient

from simulator.trace_export import chrome_trace
from tests.simulator.test_trace_export import check_trace
from tests.webapp.studio.factories import SimulationFactory
from webapp.studio.models import SimulationStatus

RESULT = {
    "status": "finished",
    "overall_time_s": 3e-6,
    "processes": [{"process": "GPU[0]", "node": "gpu0", "instance": 0}],
    "components": [{"node": "gpu0", "name": "GPU", "hardware": "H100", "instance": 0}],
    "timeline": [
        {"process": "GPU[0]", "kind": "compute", "start_s": 1e-6, "end_s": 3e-6, "kernel": {}}
    ],
    "resource_timeline": [{"node": "gpu0", "instance": 0, "start_s": 1e-6, "end_s": 3e-6}],
}


def test_a_run_s_trace_downloads_as_the_chrome_trace_of_its_result(
    client: APIClient, user: Any
) -> None:
    done: Any = SimulationFactory(owner=user, status=SimulationStatus.SUCCEEDED, result=RESULT)
    detail = client.get(f"/api/simulations/{done.pk}/")
    assert detail.json()["trace_url"] == f"/api/simulations/{done.pk}/trace.json"
    response = client.get(f"/api/simulations/{done.pk}/trace.json")
    assert response.status_code == 200, response.content
    assert response["Content-Type"] == "application/json"
    assert f'filename="simulation-{done.pk}.trace.json"' in response["Content-Disposition"]
    trace = response.json()
    check_trace(trace)
    assert trace == chrome_trace(RESULT)
    (kernel,) = (e for e in trace["traceEvents"] if e.get("cat") == "kernel")
    assert (kernel["ts"], kernel["dur"]) == (1.0, 2.0)


def test_the_trace_is_409_without_a_result_and_404_for_others_runs(
    client: APIClient, user: Any, other_user: Any
) -> None:
    failed: Any = SimulationFactory(owner=user, status=SimulationStatus.FAILED)
    response = client.get(f"/api/simulations/{failed.pk}/trace.json")
    assert response.status_code == 409
    assert response.json()["detail"] == f"Simulation {failed.pk} has no result: it is failed."
    theirs: Any = SimulationFactory(
        owner=other_user, status=SimulationStatus.SUCCEEDED, result=RESULT
    )
    assert client.get(f"/api/simulations/{theirs.pk}/trace.json").status_code == 404


def test_an_http_trace_request_is_refused_not_taken_for_the_trace_download(
    client: APIClient, user: Any
) -> None:
    done: Any = SimulationFactory(owner=user, status=SimulationStatus.SUCCEEDED, result=RESULT)
    assert client.generic("TRACE", "/api/simulations/").status_code == 405
    assert client.generic("TRACE", f"/api/simulations/{done.pk}/").status_code == 405
    assert client.get(f"/api/simulations/{done.pk}/trace.json").status_code == 200
