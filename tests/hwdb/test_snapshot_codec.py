"""Tests of hwdb.snapshot_codec: records and graphs to the system snapshot and back, no
database (the records are unsaved model instances with their attribute rows set)."""

from __future__ import annotations

import copy

import pytest

from hwdb.models import Component, ComputationalModel
from hwdb.snapshot_codec import (
    graph_references,
    hardware_record,
    record_attribute_data,
    system_graph,
    system_snapshot,
    with_hardware,
)
from simulator.snapshot import load_snapshot


def gpu(pk: int, name: str, sms: float) -> Component:
    component = Component(pk=pk, type="GPU", name=name, vendor="NVIDIA")
    component.attribute_rows = [
        {"key": "SMs", "value": sms, "unit": "", "source": ""},
        {"key": "clockRate", "value": 1.2e9, "unit": "Hz", "source": ""},
    ]
    return component


MODEL = ComputationalModel(
    pk=4, name="constant", language="javascript", source="function computationTime(p) { return 1; }"
)
GRAPH = {
    "nodes": [
        {"id": "gpu0", "name": "GPU", "hardware": 7, "model": 4, "count": 1, "labels": {"GPU": 1}}
    ],
    "edges": [],
}


def test_a_system_snapshot_inlines_its_records_under_their_keys_and_loads() -> None:
    snapshot = system_snapshot(
        name="one GPU",
        description="",
        graph=GRAPH,
        components=[gpu(7, "GTX 970", 13)],
        models=[MODEL],
    )
    assert snapshot["nodes"][0]["hardware"] == "hw-7"
    assert snapshot["nodes"][0]["model"] == "model-4"
    assert snapshot["hardware"]["hw-7"]["attributes"] == {"SMs": 13, "clockRate": 1.2e9}
    assert snapshot["hardware"]["hw-7"]["units"] == {"clockRate": "Hz"}
    assert load_snapshot(snapshot).name == "one GPU"


def test_the_graph_comes_back_from_the_snapshot_under_the_stored_ids() -> None:
    snapshot = system_snapshot(
        name="s", description="", graph=GRAPH, components=[gpu(7, "GTX 970", 13)], models=[MODEL]
    )
    graph = system_graph(snapshot, hardware_ids={"hw-7": 70}, model_ids={"model-4": 40})
    assert graph["nodes"][0]["hardware"] == 70
    assert graph["nodes"][0]["model"] == 40
    assert graph_references(graph, "hardware") == {70}
    assert graph_references({"nodes": [{"hardware": "x"}, "junk"]}, "hardware") == set()


def test_a_record_gives_back_the_attribute_data_a_component_is_created_from() -> None:
    record = hardware_record(gpu(7, "GTX 970", 13))
    assert record_attribute_data(record) == [
        {"key": "SMs", "value": 13.0, "unit": ""},
        {"key": "clockRate", "value": 1.2e9, "unit": "Hz"},
    ]


def test_a_component_without_its_attribute_rows_is_refused() -> None:
    with pytest.raises(ValueError, match="no attribute rows loaded"):
        hardware_record(Component(pk=3, type="GPU", name="bare"))


def test_a_hardware_swap_changes_a_copy_and_keys_the_new_record_by_its_id() -> None:
    snapshot = system_snapshot(
        name="s", description="", graph=GRAPH, components=[gpu(7, "GTX 970", 13)], models=[MODEL]
    )
    before = copy.deepcopy(snapshot)
    variant = with_hardware(snapshot, node_id="gpu0", component=gpu(9, "H100", 132))
    assert snapshot == before
    assert variant["nodes"][0]["hardware"] == "hw-9"
    assert variant["hardware"]["hw-9"]["name"] == "H100"
