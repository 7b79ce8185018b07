"""Regressions found by reviewing the REST API: private records leaking through shared
system models, NUL characters that PostgreSQL refuses, and snapshot errors keyed by path."""

from __future__ import annotations

from typing import Any

import pytest
from rest_framework.test import APIClient

from hwdb.models import Component, ComputationalModel, SystemModel
from hwdb.validation import MESSAGES, MODEL_SOURCE_MAX_LENGTH
from tests.hwdb.factories import ComputationalModelFactory, GpuFactory, one_gpu_graph

pytestmark = pytest.mark.django_db


def shared_system(api: APIClient, graph: dict[str, Any]) -> int:
    response = api.post("/api/systems/", {"name": "Mine", "graph": graph, "shared": True}, "json")
    assert response.status_code == 201, response.data
    return int(response.data["id"])


def test_unsharing_a_component_my_shared_system_uses_is_refused_and_nothing_leaks(
    api: APIClient, user: Any, other_user: Any, client_for: Any
) -> None:
    gpu = GpuFactory(owner=user, shared=True)
    system_id = shared_system(api, one_gpu_graph(gpu.pk))
    response = api.patch(
        f"/api/components/{gpu.pk}/",
        {"shared": False, "attributes": [{"key": "secret", "value": 42}]},
        format="json",
    )
    assert response.status_code == 400
    assert response.json()["shared"][0].startswith("Shared system models use this record")
    gpu.refresh_from_db()
    assert gpu.shared and list(gpu.attributes.values_list("key", flat=True)) == [
        "SMCoreClock",
        "SMs",
    ]
    snapshot = client_for(other_user).get(f"/api/systems/{system_id}/snapshot/").json()
    assert "secret" not in snapshot["hardware"][f"hw-{gpu.pk}"]["attributes"]


def test_unsharing_a_model_my_shared_system_uses_is_refused(api: APIClient, user: Any) -> None:
    gpu = GpuFactory(owner=user, shared=True)
    model = ComputationalModelFactory(owner=user, shared=True)
    shared_system(api, one_gpu_graph(gpu.pk, model.pk))
    response = api.patch(f"/api/models/{model.pk}/", {"shared": False}, format="json")
    assert response.status_code == 400 and "shared" in response.json()
    model.refresh_from_db()
    assert model.shared


def test_unsharing_a_component_only_my_private_systems_use_is_allowed(
    api: APIClient, user: Any
) -> None:
    gpu = GpuFactory(owner=user, shared=True)
    response = api.post("/api/systems/", {"name": "P", "graph": one_gpu_graph(gpu.pk)}, "json")
    assert response.status_code == 201, response.data
    response = api.patch(f"/api/components/{gpu.pk}/", {"shared": False}, format="json")
    assert response.status_code == 200 and response.data["shared"] is False


def test_a_null_character_in_a_graph_node_is_a_400_naming_the_node(api: APIClient) -> None:
    graph = one_gpu_graph(GpuFactory(owner=None, shared=True).pk)
    graph["nodes"][1]["name"] = "G\x00PU"
    response = api.post("/api/systems/", {"name": "S", "graph": graph}, format="json")
    assert response.status_code == 400
    assert response.json() == {"graph": {"nodes[1].name": [MESSAGES["null_character"]]}}
    assert not SystemModel.objects.exists()


def snapshot(**hardware_overrides: Any) -> dict[str, Any]:
    hardware = {"type": "GPU", "name": "G", "attributes": {"SMs": 13}, **hardware_overrides}
    return {
        "name": "Imported",
        "hardware": {"g": {"type": "GPU", "name": "First", "attributes": {}}, "h": hardware},
        "models": {"m": {"language": "javascript", "source": "function f() { return 1; }"}},
        "nodes": [
            {"id": "a", "hardware": "g", "model": "m", "count": 1},
            {"id": "b", "hardware": "h", "count": 1},
        ],
        "edges": [["a", "b"]],
    }


@pytest.mark.parametrize(
    ("change", "path"),
    [
        ({"name": "G\x00"}, "hardware.h.name"),
        ({"vendor": "V\x00"}, "hardware.h.vendor"),
        ({"units": {"SMs": "c\x00"}}, "hardware.h.units.SMs"),
    ],
)
def test_a_snapshot_with_a_null_character_is_refused_by_path_and_stores_nothing(
    api: APIClient, change: dict[str, Any], path: str
) -> None:
    response = api.post("/api/systems/import/", snapshot(**change), format="json")
    assert response.status_code == 400
    assert response.json() == {path: [MESSAGES["null_character"]]}
    assert not Component.objects.exists() and not SystemModel.objects.exists()
    assert not ComputationalModel.objects.exists()


def test_a_snapshot_named_with_a_null_character_stores_nothing(api: APIClient) -> None:
    data = snapshot()
    data["name"] = "S\x00"
    response = api.post("/api/systems/import/", data, format="json")
    assert response.status_code == 400 and response.json() == {"name": [MESSAGES["null_character"]]}
    assert not Component.objects.exists() and not SystemModel.objects.exists()


def test_a_too_long_model_source_in_a_snapshot_is_keyed_by_its_path(api: APIClient) -> None:
    data = snapshot()
    data["models"]["m"]["source"] = "x" * (MODEL_SOURCE_MAX_LENGTH + 1)
    response = api.post("/api/systems/import/", data, format="json")
    assert response.status_code == 400 and set(response.json()) == {"models.m.source"}
    assert not Component.objects.exists() and not ComputationalModel.objects.exists()
