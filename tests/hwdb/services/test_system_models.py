"""System model services: the graph's references and rules, snapshot import (and export back)."""

from __future__ import annotations

import pytest
from django.core.exceptions import ValidationError

from hwdb.models import Component, SystemModel
from hwdb.selectors import system_model_export_snapshot
from hwdb.services.system_models import system_model_create, system_model_import_snapshot
from hwdb.validation import MESSAGES
from tests.hwdb.factories import (
    ComputationalModelFactory,
    GpuFactory,
    SystemModelFactory,
    UserFactory,
    one_gpu_graph,
)
from tests.hwdb.services.conftest import errors_of

pytestmark = pytest.mark.django_db


def test_a_system_model_links_the_records_its_graph_references() -> None:
    owner = UserFactory()
    gpu = GpuFactory(owner=owner)
    model = ComputationalModelFactory(owner=owner)
    system = system_model_create(owner=owner, name="S", graph=one_gpu_graph(gpu.pk, model.pk))
    assert list(system.components.all()) == [gpu]
    assert list(system.computational_models.all()) == [model]


def test_a_system_model_cannot_reference_someone_elses_private_hardware() -> None:
    private = GpuFactory()
    with pytest.raises(ValidationError) as excinfo:
        system_model_create(owner=UserFactory(), name="S", graph=one_gpu_graph(private.pk))
    assert errors_of(excinfo) == {
        "graph.nodes[1].hardware": [MESSAGES["hardware_missing"].format(ref=private.pk)]
    }


def test_a_shared_system_model_references_only_shared_records() -> None:
    owner = UserFactory()
    gpu = GpuFactory(owner=owner)
    with pytest.raises(ValidationError) as excinfo:
        system_model_create(owner=owner, name="S", graph=one_gpu_graph(gpu.pk), shared=True)
    assert errors_of(excinfo) == {
        "graph.nodes[1].hardware": [
            f"A shared system model can reference only shared components; component {gpu.name!r} "
            "is private."
        ]
    }


def test_the_graph_rules_of_the_simulator_apply() -> None:
    owner = UserFactory()
    graph = one_gpu_graph(GpuFactory(owner=owner).pk)
    graph["nodes"][1]["count"] = 0
    graph["edges"] = [["gpu0", "nowhere"]]
    with pytest.raises(ValidationError) as excinfo:
        system_model_create(owner=owner, name="S", graph=graph)
    assert set(errors_of(excinfo)) == {"graph.nodes[1].count", "graph.edges[0][1]"}


def test_a_snapshot_inlines_hardware_and_models_and_imports_back() -> None:
    owner = UserFactory()
    gpu = GpuFactory(owner=owner)
    model = ComputationalModelFactory(owner=owner)
    system = system_model_create(owner=owner, name="Testbed", graph=one_gpu_graph(gpu.pk, model.pk))
    snapshot = system_model_export_snapshot(system_model=system)
    key = f"hw-{gpu.pk}"
    assert snapshot["hardware"][key]["attributes"] == {"SMs": 13.0, "SMCoreClock": 1253.0}
    assert snapshot["models"][f"model-{model.pk}"]["source"] == model.source
    assert snapshot["nodes"][1]["hardware"] == key

    importer = UserFactory()
    imported = system_model_import_snapshot(snapshot=snapshot, owner=importer)
    copy = imported.components.get()
    assert copy.owner == importer and copy.pk != gpu.pk and copy.shared is False
    again = system_model_export_snapshot(system_model=imported)
    assert list(again["hardware"].values()) == list(snapshot["hardware"].values())
    assert again["edges"] == snapshot["edges"]


def test_an_import_reuses_an_identical_component_the_user_can_see() -> None:
    shared_gpu = GpuFactory(owner=None, shared=True)
    system = SystemModelFactory(graph=one_gpu_graph(shared_gpu.pk), owner=None, shared=True)
    snapshot = system_model_export_snapshot(system_model=system)
    imported = system_model_import_snapshot(snapshot=snapshot, owner=UserFactory())
    assert imported.components.get() == shared_gpu


def test_a_rejected_import_stores_nothing() -> None:
    owner = UserFactory()
    snapshot = system_model_export_snapshot(system_model=SystemModelFactory(owner=owner))
    snapshot["nodes"][1]["labels"] = {"not an identifier": 1}
    counts = (Component.objects.count(), SystemModel.objects.count())
    with pytest.raises(ValidationError) as excinfo:
        system_model_import_snapshot(snapshot=snapshot, owner=UserFactory())
    assert list(errors_of(excinfo)) == ["nodes[1].labels"]
    assert (Component.objects.count(), SystemModel.objects.count()) == counts
