"""Issue 38 item 18: an owner may withdraw (unshare or delete) a shared record other users'
system models use; those get copies of their own and keep working, and no answer names
another user's records."""

from __future__ import annotations

from typing import Any

import pytest
from rest_framework.test import APIClient

from hwdb.models import Component, ComputationalModel, SystemModel
from tests.hwdb.factories import ComputationalModelFactory, GpuFactory, one_gpu_graph

pytestmark = pytest.mark.django_db

SECRET = "Bob's private rig"


@pytest.fixture
def bob_api(other_user: Any, client_for: Any) -> APIClient:
    return client_for(other_user)


def bobs_system(bob_api: APIClient, gpu: int, model: int | None = None, **extra: Any) -> int:
    body = {"name": SECRET, "graph": one_gpu_graph(gpu, model), **extra}
    created = bob_api.post("/api/systems/", body, format="json")
    assert created.status_code == 201, created.data
    return int(created.data["id"])


def node(system_id: int) -> dict[str, Any]:
    return SystemModel.objects.get(pk=system_id).graph["nodes"][1]


def test_unsharing_a_component_others_use_gives_them_copies(
    api: APIClient, user: Any, bob_api: APIClient, other_user: Any
) -> None:
    gpu = GpuFactory(owner=user, shared=True, name="Ada's GPU")
    system = bobs_system(bob_api, gpu.pk)
    response = api.patch(
        f"/api/components/{gpu.pk}/",
        {"shared": False, "name": "Ada's secret GPU", "attributes": [{"key": "x", "value": 1}]},
        format="json",
    )
    assert response.status_code == 200, response.data
    copied = Component.objects.get(pk=node(system)["hardware"])
    assert copied.pk != gpu.pk
    # the record as Bob used it, not as Ada changes it
    assert (copied.owner, copied.name, copied.shared) == (other_user, "Ada's GPU", False)
    assert sorted(copied.attributes.values_list("key", flat=True)) == ["SMCoreClock", "SMs"]
    assert list(SystemModel.objects.get(pk=system).components.all()) == [copied]
    assert bob_api.get(f"/api/systems/{system}/snapshot/").status_code == 200
    assert bob_api.get(f"/api/components/{gpu.pk}/").status_code == 404


def test_deleting_a_model_others_use_gives_them_copies(
    api: APIClient, user: Any, bob_api: APIClient, other_user: Any
) -> None:
    gpu = GpuFactory(owner=None, shared=True)
    model = ComputationalModelFactory(owner=user, shared=True, name="Ada's model")
    system = bobs_system(bob_api, gpu.pk, model.pk, shared=True)
    assert api.delete(f"/api/models/{model.pk}/").status_code == 204
    copied = ComputationalModel.objects.get(pk=node(system)["model"])
    assert (copied.owner, copied.name, copied.source) == (other_user, model.name, model.source)
    assert copied.shared  # Bob's system is shared: it may reference only shared records
    assert bob_api.get(f"/api/systems/{system}/snapshot/").status_code == 200


def test_a_refused_delete_names_only_the_owners_systems_and_counts_the_others(
    api: APIClient, user: Any, bob_api: APIClient
) -> None:
    gpu = GpuFactory(owner=user, shared=True)
    mine = api.post("/api/systems/", {"name": "Mine", "graph": one_gpu_graph(gpu.pk)}, "json")
    assert mine.status_code == 201
    system = bobs_system(bob_api, gpu.pk)
    response = api.delete(f"/api/components/{gpu.pk}/")
    assert response.status_code == 409
    detail = response.json()["detail"]
    assert "'Mine'" in detail and SECRET not in detail
    assert "1 system model(s) of other users use it too" in detail
    # nothing was copied by the refused delete
    assert node(system)["hardware"] == gpu.pk
    assert Component.objects.count() == 1


def test_unsharing_refused_for_my_shared_systems_never_names_others(
    api: APIClient, user: Any, bob_api: APIClient
) -> None:
    gpu = GpuFactory(owner=user, shared=True)
    bobs_system(bob_api, gpu.pk, shared=True)
    created = api.post(
        "/api/systems/", {"name": "Mine", "graph": one_gpu_graph(gpu.pk), "shared": True}, "json"
    )
    assert created.status_code == 201
    response = api.patch(f"/api/components/{gpu.pk}/", {"shared": False}, format="json")
    assert response.status_code == 400
    (message,) = response.json()["shared"]
    assert "'Mine'" in message and SECRET not in message
    assert Component.objects.filter(owner__isnull=False).count() == 1
