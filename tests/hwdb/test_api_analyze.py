"""POST /api/analyze/: the kernel analyzer over REST, run in the sandbox's child."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from rest_framework.test import APIClient

from hwdb.services.analyzer import message_field
from simulator.analyzer.compile import nvcc_available

ROOT = Path(__file__).resolve().parents[2]
LISTING3 = (ROOT / "examples" / "kernels" / "listing3.sass").read_text()
SAXPY2_CU = (ROOT / "examples" / "kernels" / "saxpy2.cu").read_text()


def analyze(api: APIClient, **body: Any) -> Any:
    return api.post("/api/analyze/", body, format="json")


@pytest.mark.django_db
def test_listing3_gives_the_papers_parameter_set_and_its_execution_graph(api: APIClient) -> None:
    response = analyze(api, language="sass", source=LISTING3, arch="sm_52", trips={"a": 1})
    assert response.status_code == 200, response.json()
    body = response.json()
    parameters = body["analysis"]["parameters"]
    assert parameters["INS_cuda"] == "23 + 4a"
    assert parameters["GMem_bytes"] == "384"
    assert parameters["Lat_bound"] == "942 + 24a"
    assert body["analysis"]["values"]["INS_cuda"] == 27
    assert body["svg"].lstrip().startswith("<svg")
    assert "INS_cuda   = 23 + 4a" in body["summary"]


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("body", "field", "message"),
    [
        ({"language": "sass", "source": "FOO R1;", "arch": "sm_52"}, "source", "line 1"),
        ({"language": "sass", "source": LISTING3, "arch": "sm_1"}, "arch", "sm_52"),
        ({"language": "sass", "source": LISTING3, "arch": "sm_11"}, "arch", "unsupported"),
        (
            {"language": "sass", "source": LISTING3, "arch": "sm_52", "trips": {"b": 2}},
            "trips",
            "a",
        ),
        ({"language": "sass", "source": LISTING3, "trips": {"loop": 2}}, "trips", "named a, b"),
        ({"language": "basic", "source": LISTING3}, "language", "valid choice"),
        ({"language": "sass", "source": ""}, "source", "blank"),
        ({"language": "cuda", "source": SAXPY2_CU}, "arch", "architecture"),
        ({"language": "sass", "source": LISTING3, "block_size": 2048}, "block_size", "1024"),
    ],
)
def test_a_refused_input_names_its_field(
    api: APIClient, body: dict[str, Any], field: str, message: str
) -> None:
    response = analyze(api, **body)
    assert response.status_code == 400
    errors = response.json()
    assert field in errors, errors
    assert message in " ".join(errors[field])


def test_analyzer_messages_map_to_the_fields_they_concern() -> None:
    assert message_field("trip count given for 'b', but the kernel's loops are named ['a']") == (
        "trips"
    )
    assert message_field("unsupported architecture 'sm_11': latency tables exist for ...") == "arch"
    assert message_field("kernel 'x' not found; the input holds ['y']") == "kernel"
    assert message_field("unknown opcode 'FOO' on line 1: FOO R1") == "source"


@pytest.mark.django_db
def test_the_analyzer_needs_a_signed_in_user() -> None:
    response = APIClient().post("/api/analyze/", {"language": "sass", "source": LISTING3})
    assert response.status_code in (401, 403)


@pytest.mark.django_db
@pytest.mark.skipif(not nvcc_available(), reason="nvcc and cuobjdump are not installed")
def test_cuda_source_is_compiled_in_the_child_and_analysed(api: APIClient) -> None:
    response = analyze(api, language="cuda", source=SAXPY2_CU, arch="sm_80", block_size=256)
    assert response.status_code == 200, response.json()
    analysis = response.json()["analysis"]
    assert analysis["parameters"]["GMem_bytes"] == "384"
    assert analysis["resources"]["registers_per_thread"] > 0
