"""POST /api/models/{id}/evaluate/: test-running a model function in the sandbox's child."""

from __future__ import annotations

import io
import math
from typing import Any

import pytest
from django.core.management import call_command

from hwdb.api.serializers import MSG_NO_COMPONENT, MSG_NOT_IDENTIFIER
from hwdb.models import Component, ComputationalModel
from simulator.evaluate import EVALUATE_TIMEOUT_S
from simulator.shallow import MSG_TIMEOUT
from tests.hwdb.factories import ComputationalModelFactory, GpuFactory

pytestmark = pytest.mark.django_db

# The MERPSYS matrix-multiplication kernel on the GTX 970 (the frontend's default sample).
KERNEL = {
    "gridSize": 39063,
    "blockSize": 256,
    "CUDACoreInstructions": 27,
    "issuedInstructions": 27,
    "GMEMBytesTransferred": 384,
    "latencyBound": 966,
    "occupancy": 64,
    "kernelExecutionLambda": 0.703787,
}


def volkov_gtx_970_seconds() -> float:
    """Return T_k of eqs 4.1-4.5 for KERNEL on the GTX 970 of Fig. 5.2, by hand."""
    warps_launched = KERNEL["gridSize"] * math.ceil(KERNEL["blockSize"] / 32)  # (4.2)
    throughput_bound = 1 / max(  # (4.4), warps per cycle per SM
        32 * KERNEL["CUDACoreInstructions"] / 128,
        KERNEL["issuedInstructions"] / 4,
        KERNEL["GMEMBytesTransferred"] / 13.78,
    )
    warp_throughput = min(KERNEL["occupancy"] / KERNEL["latencyBound"], throughput_bound)
    cycles = warps_launched / (warp_throughput * 13 * KERNEL["kernelExecutionLambda"])  # (4.1)
    return cycles / 1253e6


def evaluate(api: Any, model_id: int, **body: Any) -> Any:
    body.setdefault("function", "computationTime")
    body.setdefault("args", [])
    body.setdefault("params", {})
    return api.post(f"/api/models/{model_id}/evaluate/", body, format="json")


@pytest.fixture
def gpu(user: Any) -> Component:
    """Return a private GPU of `user` with SMs = 13."""
    return GpuFactory(owner=user)


def test_it_evaluates_the_built_in_volkov_model_on_the_seeded_gtx_970(api: Any) -> None:
    call_command("seed_hardware", stdout=io.StringIO())
    model = ComputationalModel.objects.get(builtin=True, name="Volkov GPU")
    gtx = Component.objects.get(owner=None, type="GPU", name="GeForce GTX 970")
    response = evaluate(api, model.pk, component=gtx.pk, params=KERNEL)
    assert response.status_code == 200, response.data
    assert response.data["value"] == pytest.approx(volkov_gtx_970_seconds(), rel=1e-12)


def test_it_passes_args_and_params_to_the_function(api: Any, user: Any, gpu: Component) -> None:
    source = "function p2pTime(size, params) { return size * params.scale / SMs; }"
    model = ComputationalModelFactory(owner=user, source=source)
    response = evaluate(
        api, model.pk, component=gpu.pk, function="p2pTime", args=[26], params={"scale": 3}
    )
    assert response.status_code == 200, response.data
    assert response.data == {"value": 6.0}


def test_a_javascript_error_answers_400_with_its_line(api: Any, user: Any, gpu: Component) -> None:
    source = "// helper\nfunction computationTime(params) {\n  return missing.value;\n}\n"
    model = ComputationalModelFactory(owner=user, source=source, name="Broken")
    response = evaluate(api, model.pk, component=gpu.pk)
    assert response.status_code == 400
    assert response.data == {
        "detail": "ReferenceError: missing is not defined",
        "line": 3,
        "function": "computationTime",
        "model": "Broken",
    }


def test_an_undefined_function_answers_400(api: Any, user: Any, gpu: Component) -> None:
    model = ComputationalModelFactory(owner=user)
    response = evaluate(api, model.pk, component=gpu.pk, function="power", args=["idle"])
    assert response.status_code == 400
    assert response.data["detail"] == "the model does not define function power()"


def test_an_infinite_loop_is_stopped_with_a_clear_error(
    api: Any, user: Any, gpu: Component
) -> None:
    source = "function computationTime(params) {\n  while (true) {}\n}\n"
    model = ComputationalModelFactory(owner=user, source=source)
    response = evaluate(api, model.pk, component=gpu.pk)
    assert response.status_code == 400
    assert response.data["detail"] == MSG_TIMEOUT.format(limit=EVALUATE_TIMEOUT_S)
    assert response.data["function"] == "computationTime"


def test_the_javascript_does_not_run_in_the_web_process(
    api: Any, user: Any, gpu: Component
) -> None:
    import simulator.shallow

    model = ComputationalModelFactory(
        owner=user, source="function computationTime(p) { return 1; }"
    )
    simulator.shallow.clear_caches()
    assert evaluate(api, model.pk, component=gpu.pk).data == {"value": 1.0}
    assert not simulator.shallow._contexts


def test_another_users_private_model_answers_404(
    client_for: Any, other_user: Any, gpu: Component
) -> None:
    model = ComputationalModelFactory()  # private to its own owner
    response = evaluate(client_for(other_user), model.pk, component=gpu.pk)
    assert response.status_code == 404


def test_another_users_private_component_is_refused_on_the_component_field(
    client_for: Any, other_user: Any, gpu: Component
) -> None:
    model = ComputationalModelFactory(owner=other_user)
    response = evaluate(client_for(other_user), model.pk, component=gpu.pk)
    assert response.status_code == 400
    assert response.data == {"component": [MSG_NO_COMPONENT.format(id=gpu.pk)]}


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("component", "gpu"),
        ("function", "computationTime(); while(1)"),
        ("function", ""),
        ("args", 5),
        ("args", [{"size": 1}]),
        ("args", [True]),
        ("params", [1, 2]),
        ("params", "gridSize=1"),
    ],
)
def test_bad_input_answers_400_naming_the_field(
    api: Any, user: Any, gpu: Component, field: str, value: Any
) -> None:
    model = ComputationalModelFactory(owner=user)
    body = {"component": gpu.pk, field: value}
    response = evaluate(api, model.pk, **body)
    assert response.status_code == 400
    assert list(response.data) == [field]


def test_a_function_name_that_is_not_an_identifier_says_so(
    api: Any, user: Any, gpu: Component
) -> None:
    model = ComputationalModelFactory(owner=user)
    response = evaluate(api, model.pk, component=gpu.pk, function="a-b")
    assert response.data == {"function": [MSG_NOT_IDENTIFIER]}


def test_non_finite_params_are_refused(api: Any, user: Any, gpu: Component) -> None:
    model = ComputationalModelFactory(owner=user)
    response = api.post(
        f"/api/models/{model.pk}/evaluate/",
        f'{{"component": {gpu.pk}, "function": "computationTime", "params": {{"N": NaN}}}}',
        content_type="application/json",
    )
    assert response.status_code == 400
    assert list(response.data) == ["params"]


def test_the_schema_documents_the_evaluate_endpoint(api: Any) -> None:
    schema = api.get("/api/schema/", {"format": "json"}).json()
    operation = schema["paths"]["/api/models/{id}/evaluate/"]["post"]
    assert set(operation["responses"]) >= {"200", "400"}
    body = operation["requestBody"]["content"]["application/json"]["schema"]["$ref"]
    assert body.endswith("/EvaluateRequest")
