"""REST API of computational models: CRUD, built-in records, clone, permissions, bad input."""

from __future__ import annotations

from typing import Any

import pytest
from rest_framework.test import APIClient

from hwdb.models import ComputationalModel
from tests.hwdb.factories import (
    GPU_MODEL_SOURCE,
    ComputationalModelFactory,
    GpuFactory,
    one_gpu_graph,
)

pytestmark = pytest.mark.django_db
URL = "/api/models/"


def test_it_creates_lists_and_retrieves_a_model(api: APIClient, user: Any) -> None:
    created = api.post(URL, {"name": "Mine", "source": GPU_MODEL_SOURCE}, format="json")
    assert created.status_code == 201, created.data
    assert (created.data["language"], created.data["builtin"]) == ("javascript", False)
    assert api.get(f"{URL}{created.data['id']}/").data == created.data
    assert [m["id"] for m in api.get(URL).data["results"]] == [created.data["id"]]


def test_it_rejects_unknown_languages_and_missing_source(api: APIClient) -> None:
    response = api.post(URL, {"name": "x", "language": "python"}, format="json")
    assert response.status_code == 400
    assert set(response.json()) == {"language", "source"}


def test_builtin_flag_cannot_be_set_by_users(api: APIClient) -> None:
    response = api.post(URL, {"name": "x", "source": "1", "builtin": True}, format="json")
    assert response.status_code == 201 and response.data["builtin"] is False


def test_builtin_models_are_listed_read_only_and_clonable(api: APIClient, user: Any) -> None:
    builtin = ComputationalModelFactory(owner=None, shared=True, builtin=True, name="Volkov")
    assert [m["id"] for m in api.get(URL, {"builtin": "true"}).data["results"]] == [builtin.pk]
    assert (
        api.put(f"{URL}{builtin.pk}/", {"name": "x", "source": "1"}, format="json").status_code
        == 403
    )
    clone = api.post(f"{URL}{builtin.pk}/clone/", {}, format="json")
    assert clone.status_code == 201
    assert (clone.data["name"], clone.data["owner"], clone.data["builtin"]) == (
        "Volkov (copy)",
        user.username,
        False,
    )


def test_private_models_of_others_are_invisible(api: APIClient, other_user: Any) -> None:
    private = ComputationalModelFactory(owner=other_user)
    assert api.get(f"{URL}{private.pk}/").status_code == 404
    assert api.delete(f"{URL}{private.pk}/").status_code == 404


def test_a_rejected_update_leaves_the_model_as_it_was(api: APIClient, user: Any) -> None:
    model = ComputationalModelFactory(owner=user)
    before = api.get(f"{URL}{model.pk}/").data
    response = api.patch(f"{URL}{model.pk}/", {"name": "", "source": "2"}, format="json")
    assert response.status_code == 400 and list(response.json()) == ["name"]
    assert api.get(f"{URL}{model.pk}/").data == before


def test_a_model_in_use_cannot_be_deleted_but_an_unused_one_can(api: APIClient, user: Any) -> None:
    used, unused = ComputationalModelFactory(owner=user), ComputationalModelFactory(owner=user)
    graph = one_gpu_graph(GpuFactory(owner=user).pk, used.pk)
    assert (
        api.post("/api/systems/", {"name": "S", "graph": graph}, format="json").status_code == 201
    )
    assert api.delete(f"{URL}{used.pk}/").status_code == 409
    assert api.delete(f"{URL}{unused.pk}/").status_code == 204
    assert list(ComputationalModel.objects.values_list("pk", flat=True)) == [used.pk]


def test_unsharing_a_model_my_shared_system_uses_is_refused(api: APIClient, user: Any) -> None:
    gpu = GpuFactory(owner=user, shared=True)
    model = ComputationalModelFactory(owner=user, shared=True)
    graph = one_gpu_graph(gpu.pk, model.pk)
    created = api.post("/api/systems/", {"name": "Mine", "graph": graph, "shared": True}, "json")
    assert created.status_code == 201, created.data
    response = api.patch(f"/api/models/{model.pk}/", {"shared": False}, format="json")
    assert response.status_code == 400 and "shared" in response.json()
    model.refresh_from_db()
    assert model.shared


def test_a_javascript_syntax_error_is_refused_at_save_with_its_line(api: APIClient) -> None:
    source = "function computationTime(params) {\n  return (;\n}\n"
    response = api.post(URL, {"name": "Broken", "source": source}, format="json")
    assert response.status_code == 400
    assert response.json() == {"source": ["Line 2: SyntaxError: Unexpected token ';'"]}
    assert not ComputationalModel.objects.filter(name="Broken").exists()


def test_a_rejected_source_edit_leaves_the_model_as_it_was(api: APIClient, user: Any) -> None:
    model = ComputationalModelFactory(owner=user)
    response = api.patch(f"{URL}{model.pk}/", {"source": "function f( {"}, format="json")
    assert response.status_code == 400
    assert response.json()["source"][0].startswith("Line 1: SyntaxError")
    model.refresh_from_db()
    assert model.source == GPU_MODEL_SOURCE


def test_top_level_code_that_needs_hardware_attributes_is_not_a_save_error(
    api: APIClient,
) -> None:
    source = "var clockHz = SMCoreClock * 1e6;\nfunction computationTime(p) { return 1 / clockHz; }"
    response = api.post(URL, {"name": "Uses attributes", "source": source}, format="json")
    assert response.status_code == 201, response.data


def test_a_model_declares_its_validated_architectures_by_known_family(
    api: APIClient, user: Any
) -> None:
    fields = {"name": "Mine", "source": GPU_MODEL_SOURCE}
    created = api.post(URL, {**fields, "validated_architectures": ["Hopper"]}, format="json")
    assert created.status_code == 201 and created.data["validated_architectures"] == ["Hopper"]
    # a copy is the same model: it keeps the claim until its owner drops it
    clone = api.post(f"{URL}{created.data['id']}/clone/", {}, format="json")
    assert clone.data["validated_architectures"] == ["Hopper"]
    refused = api.post(URL, {**fields, "validated_architectures": ["Rubin"]}, format="json")
    assert refused.status_code == 400
    (message,) = refused.json()["validated_architectures"]
    assert message.startswith("Unknown GPU architecture family 'Rubin'; expected one of Fermi")
    assert api.post(URL, fields, format="json").data["validated_architectures"] == []
