"""Topology templates through the REST API: a ready cluster imports and exports with its
templates, and a bad template is refused with the simulator's own message and field path."""

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


def test_a_cluster_with_templates_imports_and_exports_them(api: APIClient) -> None:
    response = api.post("/api/systems/import/", cluster(), format="json")
    assert response.status_code == 201, response.data
    assert response.data["graph"]["topologies"] == cluster()["topologies"]
    exported = api.get(f"/api/systems/{response.data['id']}/snapshot/").json()
    system = load_snapshot(exported)
    assert [t.kind for t in system.topologies] == ["nvswitch", "fatTree"]
    assert system.topologies[1].sizes == {"leaf": 4, "spine": 8}


def test_a_bad_template_gets_the_same_message_from_rest_and_the_simulator(
    api: APIClient,
) -> None:
    snapshot = cluster()
    snapshot["topologies"][1]["down"] = [8, 3]
    with pytest.raises(SnapshotError) as caught:
        load_snapshot(snapshot)
    graph_id = api.post("/api/systems/import/", cluster(), format="json").data["id"]
    stored = api.get(f"/api/systems/{graph_id}/").data["graph"]
    stored["topologies"][1]["down"] = [8, 3]
    response = api.patch(f"/api/systems/{graph_id}/", {"graph": stored}, format="json")
    assert response.status_code == 400
    path = "topologies[1].down"
    assert response.json()["graph"][path] == caught.value.errors[path]
    assert "8 x 3 = 24" in caught.value.errors[path][0]
