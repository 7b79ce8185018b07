"""The flow network's settings through the REST API: a stored system model keeps its
`networkModel` and each network node's `sharing` through import, edit and export, and a bad
value is refused with the simulator's own message under the field's path."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from rest_framework.test import APIClient

from simulator.errors import SnapshotError
from simulator.snapshot import load_snapshot

pytestmark = pytest.mark.django_db
ROOT = Path(__file__).resolve().parents[2]


def cluster() -> dict[str, Any]:
    path = ROOT / "examples" / "dgx_h100_cluster_4" / "snapshot.json"
    return json.loads(path.read_text(encoding="utf-8"))


def sharing(nodes: list[dict[str, Any]]) -> dict[str, str]:
    return {node["id"]: node.get("sharing", "fifo") for node in nodes}


def test_network_model_and_sharing_survive_import_edit_and_export(api: APIClient) -> None:
    snapshot = {**cluster(), "networkModel": "LV08"}
    response = api.post("/api/systems/import/", snapshot, format="json")
    assert response.status_code == 201, response.data
    graph = response.data["graph"]
    assert graph["networkModel"] == "LV08"
    assert sharing(graph["nodes"])["nic"] == "full-duplex"
    graph["networkModel"] = "CM02"
    graph["nodes"][2]["sharing"] = "shared"  # the NIC
    edited = api.patch(f"/api/systems/{response.data['id']}/", {"graph": graph}, format="json")
    assert edited.status_code == 200, edited.data
    exported = api.get(f"/api/systems/{response.data['id']}/snapshot/").json()
    assert exported["networkModel"] == "CM02"
    assert sharing(exported["nodes"]) == {
        "gpu": "fifo",
        "nvswitch": "full-duplex",
        "nic": "shared",
        "leaf": "full-duplex",
        "spine": "full-duplex",
    }
    system = load_snapshot(exported)
    assert system.network_model == "CM02"


def test_a_system_without_a_network_model_exports_none(api: APIClient) -> None:
    response = api.post("/api/systems/import/", cluster(), format="json")
    assert "networkModel" not in response.data["graph"]
    exported = api.get(f"/api/systems/{response.data['id']}/snapshot/").json()
    assert "networkModel" not in exported


@pytest.mark.parametrize(
    ("change", "path"),
    [
        (lambda g: g.update(networkModel="Reno"), "networkModel"),
        (lambda g: g["nodes"][2].update(sharing="half"), "nodes[2].sharing"),
        (lambda g: g["nodes"][0].update(sharing="shared"), "nodes[0].sharing"),
    ],
)
def test_a_bad_setting_gets_the_simulators_message_under_its_field(
    api: APIClient, change: Any, path: str
) -> None:
    snapshot = cluster()
    change(snapshot)
    with pytest.raises(SnapshotError) as caught:
        load_snapshot(snapshot)
    system_id = api.post("/api/systems/import/", cluster(), format="json").data["id"]
    graph = api.get(f"/api/systems/{system_id}/").data["graph"]
    change(graph)
    response = api.patch(f"/api/systems/{system_id}/", {"graph": graph}, format="json")
    assert response.status_code == 400
    assert response.json()["graph"][path] == caught.value.errors[path]
