"""REST API of system models: graph validation, permissions, clone, snapshot export/import."""

from __future__ import annotations

from typing import Any

import pytest
from rest_framework.test import APIClient

from hwdb.models import Component, ComputationalModel, SystemModel
from hwdb.validation import MESSAGES, MODEL_SOURCE_MAX_LENGTH
from simulator.snapshot import MESSAGES as GRAPH_MESSAGES
from simulator.snapshot import load_snapshot
from tests.hwdb.factories import (
    ComponentFactory,
    ComputationalModelFactory,
    GpuFactory,
    SystemModelFactory,
    one_gpu_graph,
)

pytestmark = pytest.mark.django_db
URL = "/api/systems/"


def create(api: APIClient, graph: Any, **extra: Any) -> Any:
    return api.post(URL, {"name": "Testbed", "graph": graph, **extra}, format="json")


def test_it_creates_a_system_model_from_my_hardware(api: APIClient, user: Any) -> None:
    gpu, model = GpuFactory(owner=user), ComputationalModelFactory(owner=user)
    response = create(api, one_gpu_graph(gpu.pk, model.pk))
    assert response.status_code == 201, response.data
    assert response.data["graph"]["nodes"][1]["hardware"] == gpu.pk


def test_graph_errors_are_reported_by_path_under_graph(api: APIClient, user: Any) -> None:
    graph = one_gpu_graph(GpuFactory(owner=user).pk)
    graph["nodes"][1]["count"] = 0
    graph["nodes"][1]["labels"] = {"GPU": 1, "not-an-id": 1}
    graph["edges"] = [["gpu0", "ghost"]]
    response = create(api, graph)
    assert response.status_code == 400
    assert response.json() == {
        "graph": {
            "nodes[1].count": [GRAPH_MESSAGES["min_one"]],
            "nodes[1].labels": [GRAPH_MESSAGES["label_name"].format(label="not-an-id")],
            "edges[0][1]": [GRAPH_MESSAGES["unknown_node"].format(ref="ghost")],
        }
    }


def test_a_group_nesting_cycle_is_rejected(api: APIClient, user: Any) -> None:
    graph = one_gpu_graph(GpuFactory(owner=user).pk)
    graph["nodes"].append({"id": "rack", "group": True, "parent": "host"})
    graph["nodes"][0]["parent"] = "rack"
    response = create(api, graph)
    assert response.status_code == 400
    assert any("cycle" in m for ms in response.json()["graph"].values() for m in ms)


def test_missing_and_invisible_hardware_is_rejected(api: APIClient, other_user: Any) -> None:
    private = GpuFactory(owner=other_user)
    response = create(api, one_gpu_graph(private.pk))
    assert response.json() == {
        "graph": {"nodes[1].hardware": [MESSAGES["hardware_missing"].format(ref=private.pk)]}
    }
    response = create(api, one_gpu_graph(10**12))
    assert response.status_code == 400


def test_a_graph_that_is_not_an_object_is_rejected(api: APIClient) -> None:
    for graph in ([], {"edges": []}, {"nodes": [], "layout": {}}):
        response = create(api, graph)
        assert response.status_code == 400 and "graph" in response.json()


def test_sharing_a_system_model_needs_shared_hardware(api: APIClient, user: Any) -> None:
    system = SystemModelFactory(owner=user)
    response = api.patch(f"{URL}{system.pk}/", {"shared": True}, format="json")
    assert response.status_code == 400
    assert list(response.json()["graph"]) == ["nodes[1].hardware"]
    assert SystemModel.objects.get(pk=system.pk).shared is False


def test_a_rejected_update_leaves_the_system_model_as_it_was(api: APIClient, user: Any) -> None:
    system = SystemModelFactory(owner=user)
    before = api.get(f"{URL}{system.pk}/").data
    bad = {**system.graph, "edges": [["gpu0", "gpu0"]]}
    assert (
        api.put(f"{URL}{system.pk}/", {"name": "New", "graph": bad}, format="json").status_code
        == 400
    )
    assert api.get(f"{URL}{system.pk}/").data == before


def test_others_may_read_a_shared_system_but_not_change_it(
    api: APIClient, other_user: Any, client_for: Any
) -> None:
    shared = SystemModelFactory(owner=other_user, shared=True)
    private = SystemModelFactory(owner=other_user)
    assert api.get(f"{URL}{shared.pk}/").status_code == 200
    assert api.patch(f"{URL}{shared.pk}/", {"name": "x"}, format="json").status_code == 403
    assert api.delete(f"{URL}{shared.pk}/").status_code == 403
    assert api.get(f"{URL}{private.pk}/").status_code == 404
    assert api.get(f"{URL}{private.pk}/snapshot/").status_code == 404
    assert client_for(other_user).delete(f"{URL}{private.pk}/").status_code == 204


def test_clone_copies_a_shared_system_model_for_me(
    api: APIClient, other_user: Any, user: Any
) -> None:
    shared = SystemModelFactory(owner=other_user, shared=True)
    response = api.post(f"{URL}{shared.pk}/clone/", {"name": "Mine"}, format="json")
    assert response.status_code == 201
    assert (response.data["owner"], response.data["graph"]) == (user.username, shared.graph)


def test_the_snapshot_is_self_contained_and_loads_in_the_simulator(
    api: APIClient, user: Any
) -> None:
    gpu, model = GpuFactory(owner=user), ComputationalModelFactory(owner=user)
    system_id = create(api, one_gpu_graph(gpu.pk, model.pk)).data["id"]
    snapshot = api.get(f"{URL}{system_id}/snapshot/").json()
    loaded = load_snapshot(snapshot)
    assert loaded.hardware[f"hw-{gpu.pk}"].attributes == {"SMs": 13.0, "SMCoreClock": 1253.0}
    assert loaded.models[f"model-{model.pk}"].source == model.source
    assert loaded.nodes["gpu0"].model == f"model-{model.pk}"


def test_a_snapshot_imports_as_my_private_copy(
    api: APIClient, other_user: Any, client_for: Any, user: Any
) -> None:
    theirs = SystemModelFactory(owner=other_user)
    snapshot = client_for(other_user).get(f"{URL}{theirs.pk}/snapshot/").json()
    response = api.post(f"{URL}import/", snapshot, format="json")
    assert response.status_code == 201, response.data
    assert (response.data["owner"], response.data["shared"]) == (user.username, False)
    copy = Component.objects.get(pk=response.data["graph"]["nodes"][1]["hardware"])
    assert copy.owner == user and copy.pk != theirs.components.get().pk


def test_a_bad_snapshot_is_rejected_by_path_and_stores_nothing(api: APIClient) -> None:
    snapshot = {
        "name": "Bad",
        "hardware": {"g": {"type": "GPU", "name": "G", "attributes": {"SMs": "many"}}},
        "nodes": [{"id": "gpu0", "hardware": "g", "count": 1}, {"id": "x", "hardware": "nope"}],
        "edges": [],
    }
    response = api.post(f"{URL}import/", snapshot, format="json")
    assert response.status_code == 400
    assert set(response.json()) == {"hardware.g.attributes.SMs", "nodes[1].hardware"}
    assert not Component.objects.exists() and not SystemModel.objects.exists()
    assert api.post(f"{URL}import/", [1, 2], format="json").status_code == 400


def test_a_null_character_in_a_graph_node_is_a_400_naming_the_node(api: APIClient) -> None:
    graph = one_gpu_graph(GpuFactory(owner=None, shared=True).pk)
    graph["nodes"][1]["name"] = "G\x00PU"
    response = api.post("/api/systems/", {"name": "S", "graph": graph}, format="json")
    assert response.status_code == 400
    assert response.json() == {"graph": {"nodes[1].name": [MESSAGES["null_character"]]}}
    assert not SystemModel.objects.exists()


def two_node_snapshot(**hardware_overrides: Any) -> dict[str, Any]:
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
    response = api.post("/api/systems/import/", two_node_snapshot(**change), format="json")
    assert response.status_code == 400
    assert response.json() == {path: [MESSAGES["null_character"]]}
    assert not Component.objects.exists() and not SystemModel.objects.exists()
    assert not ComputationalModel.objects.exists()


def test_a_snapshot_named_with_a_null_character_stores_nothing(api: APIClient) -> None:
    data = two_node_snapshot()
    data["name"] = "S\x00"
    response = api.post("/api/systems/import/", data, format="json")
    assert response.status_code == 400 and response.json() == {"name": [MESSAGES["null_character"]]}
    assert not Component.objects.exists() and not SystemModel.objects.exists()


def test_a_too_long_model_source_in_a_snapshot_is_keyed_by_its_path(api: APIClient) -> None:
    data = two_node_snapshot()
    data["models"]["m"]["source"] = "x" * (MODEL_SOURCE_MAX_LENGTH + 1)
    response = api.post("/api/systems/import/", data, format="json")
    assert response.status_code == 400 and set(response.json()) == {"models.m.source"}
    assert not Component.objects.exists() and not ComputationalModel.objects.exists()


def test_a_gpu_node_saves_in_the_detailed_kernel_mode(api: APIClient, user: Any) -> None:
    graph = one_gpu_graph(GpuFactory(owner=user).pk)
    graph["nodes"][1].update(kernelMode="detailed", kernelWorkers=4)
    response = create(api, graph)
    assert response.status_code == 201, response.data
    snapshot = api.get(f"{URL}{response.data['id']}/snapshot/").json()
    node = load_snapshot(snapshot).nodes["gpu0"]
    assert (node.kernel_mode, node.kernel_workers) == ("detailed", 4)


@pytest.mark.parametrize("mode", ["petri", "waves"])
def test_a_gpu_node_saves_in_the_petri_and_waves_kernel_modes(
    api: APIClient, user: Any, mode: str
) -> None:
    graph = one_gpu_graph(GpuFactory(owner=user).pk)
    graph["nodes"][1].update(kernelMode=mode)
    response = create(api, graph)
    assert response.status_code == 201, response.data
    snapshot = api.get(f"{URL}{response.data['id']}/snapshot/").json()
    assert load_snapshot(snapshot).nodes["gpu0"].kernel_mode == mode


@pytest.mark.parametrize("mode", ["petri", "waves"])
def test_only_a_gpu_node_may_take_the_petri_and_waves_kernel_modes(
    api: APIClient, user: Any, mode: str
) -> None:
    graph = one_gpu_graph(ComponentFactory(owner=user, type="CPU").pk)
    graph["nodes"][1].update(kernelMode=mode)
    response = create(api, graph)
    assert response.status_code == 400
    assert response.json() == {
        "graph": {
            "nodes[1].kernelMode": [GRAPH_MESSAGES["kernel_mode_gpu"].format(mode=mode, ref="GPU")]
        }
    }


def test_only_a_gpu_node_may_simulate_kernels_block_by_block(api: APIClient, user: Any) -> None:
    cpu = ComponentFactory(owner=user, type="CPU")
    graph = one_gpu_graph(cpu.pk)
    graph["nodes"][1].update(kernelMode="detailed", kernelWorkers=0)
    response = create(api, graph)
    assert response.status_code == 400
    assert response.json() == {
        "graph": {
            "nodes[1].kernelMode": [
                GRAPH_MESSAGES["kernel_mode_gpu"].format(mode="detailed", ref="GPU")
            ],
            "nodes[1].kernelWorkers": [GRAPH_MESSAGES["kernel_workers"]],
        }
    }
