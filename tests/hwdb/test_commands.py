"""Management commands: seed_hardware (built-in records, idempotent) and ensure_demo_user."""

from __future__ import annotations

import io
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from django.conf import settings
from django.contrib.auth import get_user_model
from django.core.management import call_command
from rest_framework.authtoken.models import Token

import simulator.models
from examples.topologies.build import EXAMPLE_PREFIX
from hwdb.management.commands.ensure_demo_user import DEMO_PASSWORD, DEMO_USERNAME
from hwdb.models import Component, ComputationalModel, SystemModel
from hwdb.selectors import component_attribute_data, system_model_export_snapshot
from hwdb.services.components import component_create, component_update
from simulator.shallow import ShallowFunctions
from simulator.snapshot import load_snapshot

pytestmark = pytest.mark.django_db

GTX_970 = {
    "powerConsumptionLoad": 168,
    "warpSize": 32,
    "GMEMThroughput": 13.78,
    "SMs": 13,
    "SMCoreClock": 1253,
    "CUDACores": 128,
    "schedulers": 4,
}
PCIE_3_16X = {
    "startupDth": 5.1569e-6,
    "lambdaHTD": 0.689,
    "lambdaDth": 0.653,
    "bandwidth": 1.58e10,
    "startupHTD": 3.9687e-6,
}


def seed() -> str:
    out = io.StringIO()
    call_command("seed_hardware", stdout=out, stderr=io.StringIO())
    return out.getvalue()


def builtin_attributes(type: str, name: str) -> dict[str, float]:
    component = Component.objects.filter(owner=None, type=type, name=name).order_by("id").first()
    assert component is not None, name
    return {a["key"]: a["value"] for a in component_attribute_data(component)}


def test_the_seeded_gtx_970_carries_fig_5_2_to_the_digit() -> None:
    seed()
    stored = builtin_attributes("GPU", "GeForce GTX 970")
    assert {key: stored[key] for key in GTX_970} == GTX_970


def test_the_seeded_pcie_3_16x_carries_exactly_fig_5_2() -> None:
    seed()
    # besides issue 45's power states: 0 W of its own, counted in its endpoints
    values = dict(builtin_attributes("NETWORK", "PCIe 3.0 16x"))
    assert (values.pop("powerIdle"), values.pop("powerConsumptionLoad")) == (0.0, 0.0)
    assert values == PCIE_3_16X


def test_the_counts_it_prints_are_what_a_new_users_lists_show(client_for: Any, user: Any) -> None:
    printed = seed().strip().splitlines()[-1]
    client = client_for(user)
    listed = {
        path: client.get(f"/api/{path}/").data["count"]
        for path in ("components", "models", "systems")
    }
    assert printed == (
        f"Built-in records: {listed['components']} components, {listed['models']} "
        f"computational models, {listed['systems']} example system models."
    )


def test_seeded_records_are_built_in_shared_and_visible_to_every_user(
    client_for: Any, user: Any
) -> None:
    seed()
    assert not Component.objects.filter(owner__isnull=False).exists()
    assert not Component.objects.filter(shared=False).exists()
    response = client_for(user).get("/api/components/", {"type": "GPU", "attr": "SMs__gte:80"})
    names = {c["name"] for c in response.data["results"]}
    assert "H100 SXM5 80GB" in names and "GeForce GTX 970" not in names


def test_seeding_twice_changes_nothing() -> None:
    seed()

    def state() -> list[tuple[Any, ...]]:
        return sorted(
            (c.pk, c.updated, tuple(a.value for a in c.attributes.all()))
            for c in Component.objects.prefetch_related("attributes")
        ) + sorted(SystemModel.objects.values_list("pk", "updated", "name"))

    before = state()
    seed()
    assert state() == before


def test_seeding_restores_an_edited_built_in_record() -> None:
    seed()
    gtx = Component.objects.filter(owner=None, name="GeForce GTX 970").order_by("id").first()
    assert gtx is not None
    component_update(component=gtx, fields={}, attributes=[{"key": "SMs", "value": 1}])
    seed()
    assert builtin_attributes("GPU", "GeForce GTX 970")["SMs"] == 13


def test_the_example_systems_are_seeded_and_export_as_loadable_snapshots() -> None:
    seed()
    examples = SystemModel.objects.filter(owner=None)
    assert examples.exists()
    for system in examples:
        assert system.shared
        load_snapshot(system_model_export_snapshot(system_model=system))


@dataclass
class FakeBuiltin:
    name: str
    description: str
    source: str
    validated_architectures: tuple[str, ...] = ()


def test_built_in_computational_models_are_seeded_and_kept_up_to_date(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    models = [FakeBuiltin("Latency-bandwidth link", "t_s + size / B", "function p2pTime(s) {}")]
    monkeypatch.setattr(simulator.models, "builtin_models", lambda: models, raising=False)
    seed()
    seed()
    model = ComputationalModel.objects.get(builtin=True, name="Latency-bandwidth link")
    assert (model.owner, model.shared, model.source) == (None, True, models[0].source)
    models[0].source = "function p2pTime(s) { return 1; }"
    seed()
    model.refresh_from_db()
    assert model.source == models[0].source
    library = (
        ComputationalModel.objects.filter(builtin=True)
        .exclude(name__startswith="MERPSYS")
        .exclude(name__startswith=EXAMPLE_PREFIX)
    )
    assert library.count() == 1


def test_the_example_models_are_seeded_as_named_built_ins() -> None:
    seed()
    names = set(
        ComputationalModel.objects.filter(builtin=True, name__startswith="MERPSYS").values_list(
            "name", flat=True
        )
    )
    assert names == {
        "MERPSYS Listing 4: Volkov kernel model (GTX 970 example)",
        "MERPSYS eq. 4.6: PCIe transfers (GTX 970 example)",
    }


def test_ensure_demo_user_creates_the_account_once_and_prints_a_working_token(
    api_client: Any,
) -> None:
    out = io.StringIO()
    call_command("ensure_demo_user", stdout=out)
    call_command("ensure_demo_user", stdout=out)
    user = get_user_model().objects.get(username=DEMO_USERNAME)
    assert user.check_password(DEMO_PASSWORD)
    token = Token.objects.get(user=user).key
    assert out.getvalue().count(token) == 4 and DEMO_PASSWORD in out.getvalue()
    api_client.credentials(HTTP_AUTHORIZATION=f"Token {token}")
    assert api_client.get("/api/components/").status_code == 200


def test_the_real_built_in_models_are_seeded() -> None:
    seed()
    names = set(ComputationalModel.objects.filter(builtin=True).values_list("name", flat=True))
    assert {"Volkov GPU", "PCIe link", "Latency-bandwidth link", "Power states"} <= names


EXAMPLE_SNAPSHOT = Path(settings.BASE_DIR) / "examples" / "merpsys_gtx970" / "snapshot.json"
KERNEL_PARAMS = {
    "gridSize": 39063,
    "blockSize": 256,
    "CUDACoreInstructions": 27,
    "issuedInstructions": 27,
    "GMEMBytesTransferred": 384,
    "latencyBound": 966,
    "occupancy": 64,
    "kernelExecutionLambda": 0.703787,
}


def example_system() -> SystemModel:
    name = json.loads(EXAMPLE_SNAPSHOT.read_text(encoding="utf-8"))["name"]
    return SystemModel.objects.get(owner=None, name=name)


def test_the_example_reuses_the_seeded_gtx_970_and_pcie_link_instead_of_copying_them() -> None:
    seed()
    seed()
    gtx = Component.objects.get(owner=None, type="GPU", name="GeForce GTX 970")
    pcie = Component.objects.get(owner=None, type="NETWORK", name="PCIe 3.0 16x")
    used = {n["hardware"] for n in example_system().graph["nodes"] if "hardware" in n}
    assert {gtx.pk, pcie.pk} <= used
    assert set(example_system().components.values_list("pk", flat=True)) == used


def test_the_example_models_compute_the_same_on_the_seeded_records_as_on_the_snapshot() -> None:
    seed()
    snapshot = json.loads(EXAMPLE_SNAPSHOT.read_text(encoding="utf-8"))
    exported = system_model_export_snapshot(system_model=example_system())
    calls = {
        "gpu0": ("computationTime", (), KERNEL_PARAMS),
        "bus0": ("p2pTime", (4e7,), {"direction": "HostToDevice"}),
    }
    for node_id, (function, args, params) in calls.items():
        values = []
        for system in (snapshot, exported):
            node = next(n for n in system["nodes"] if n["id"] == node_id)
            shallow = ShallowFunctions(
                model_key=node["model"],
                source=system["models"][node["model"]]["source"],
                attributes=system["hardware"][node["hardware"]]["attributes"],
            )
            values.append(shallow.call(function, *args, params=params))
        assert values[0] == values[1] > 0, node_id


def test_seeding_removes_unused_duplicates_of_built_in_hardware() -> None:
    seed()
    duplicate = component_create(
        owner=None,
        shared=True,
        type="GPU",
        name="GeForce GTX 970",
        attributes=[{"key": key, "value": value} for key, value in GTX_970.items()],
    )
    seed()
    assert not Component.objects.filter(pk=duplicate.pk).exists()
    assert Component.objects.filter(owner=None, name="GeForce GTX 970").count() == 1


def test_the_seed_names_each_gpus_model_and_each_gpu_models_validated_architectures() -> None:
    seed()
    builtin = dict(
        ComputationalModel.objects.filter(builtin=True).values_list(
            "name", "validated_architectures"
        )
    )
    assert builtin["Volkov GPU"] == ["Maxwell", "Pascal"]
    assert builtin["GPU kernel (current architectures)"] == ["Hopper"]
    assert builtin["PCIe link"] == []
    # the paper's Listing 4 (the example's own model) is Volkov's model as published
    assert builtin["MERPSYS Listing 4: Volkov kernel model (GTX 970 example)"] == [
        "Maxwell",
        "Pascal",
    ]
    recommended = dict(
        Component.objects.filter(owner=None, type="GPU").values_list("name", "recommended_model")
    )
    assert recommended["GeForce GTX 970"] == "Volkov GPU"
    assert recommended["H100 SXM5 80GB"] == "GPU kernel (current architectures)"
    assert recommended["B200 SXM 180GB"] == "GPU kernel (current architectures)"
    # the example's snapshot carries both, so a run of it knows where its model holds
    snapshot = system_model_export_snapshot(system_model=example_system())
    (gpu,) = [h for h in snapshot["hardware"].values() if h["type"] == "GPU"]
    assert gpu["recommendedModel"] == "Volkov GPU"
    assert {tuple(m.get("validatedArchitectures", ())) for m in snapshot["models"].values()} == {
        ("Maxwell", "Pascal"),
        (),
    }
