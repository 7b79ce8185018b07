"""Snapshot validation: every mistake is reported with its field path, all at once."""

from __future__ import annotations

import copy
import math

import pytest

from simulator.errors import SnapshotError
from simulator.snapshot import MESSAGES, load_snapshot

VALID = {
    "name": "testbed",
    "hardware": {
        "gtx970": {"type": "GPU", "name": "GeForce GTX 970", "attributes": {"SMs": 13}},
        "pcie": {"type": "NETWORK", "name": "PCIe 3.0 16x", "attributes": {"bandwidth": 1.58e10}},
        "cpu": {"type": "CPU", "name": "Core i7", "attributes": {}},
    },
    "models": {"gpu": {"language": "javascript", "source": "function computationTime(p) {}"}},
    "nodes": [
        {"id": "host", "name": "Host", "group": True},
        {"id": "cpu0", "hardware": "cpu", "labels": {"CPU": 1}, "parent": "host"},
        {"id": "bus0", "hardware": "pcie", "parent": "host"},
        {"id": "gpu0", "hardware": "gtx970", "model": "gpu", "count": 2, "labels": {"GPU": 1}},
    ],
    "edges": [["cpu0", "bus0"], ["bus0", "gpu0"]],
}


def errors_of(data: object) -> dict[str, list[str]]:
    with pytest.raises(SnapshotError) as info:
        load_snapshot(data)
    return info.value.errors


def broken(**changes: object) -> dict:
    data = copy.deepcopy(VALID)
    data.update(changes)
    return data


def test_it_loads_a_valid_snapshot_into_frozen_records():
    snapshot = load_snapshot(VALID)
    assert list(snapshot.nodes) == ["host", "cpu0", "bus0", "gpu0"]
    assert snapshot.nodes["gpu0"].capacity("GPU") == 2
    assert snapshot.nodes["cpu0"].name == "cpu0"
    assert snapshot.hardware["gtx970"].attributes["SMs"] == 13
    assert snapshot.edges == (("cpu0", "bus0"), ("bus0", "gpu0"))


def test_it_round_trips_through_to_dict():
    snapshot = load_snapshot(VALID)
    assert load_snapshot(snapshot.to_dict()) == snapshot


def test_it_names_unknown_hardware_and_models_by_node():
    data = copy.deepcopy(VALID)
    data["nodes"][3]["hardware"] = "h100"
    data["nodes"][3]["model"] = "missing"
    errors = errors_of(data)
    assert errors["nodes[3].hardware"] == [MESSAGES["unknown_hardware"].format(ref="h100")]
    assert errors["nodes[3].model"] == [MESSAGES["unknown_model"].format(ref="missing")]


def test_it_rejects_counts_and_multiplicities_below_one():
    data = copy.deepcopy(VALID)
    data["nodes"][3]["count"] = 0
    data["nodes"][1]["labels"] = {"CPU": 0}
    errors = errors_of(data)
    assert errors["nodes[3].count"] == [MESSAGES["min_one"]]
    assert errors["nodes[1].labels.CPU"] == [MESSAGES["min_one"]]


def test_it_rejects_label_names_that_are_not_identifiers():
    data = copy.deepcopy(VALID)
    data["nodes"][3]["labels"] = {"2GPU": 1}
    assert errors_of(data)["nodes[3].labels"] == [MESSAGES["label_name"].format(label="2GPU")]


def test_it_rejects_edges_to_unknown_nodes_and_groups():
    errors = errors_of(broken(edges=[["cpu0", "nowhere"], ["host", "cpu0"], ["gpu0", "gpu0"]]))
    assert errors["edges[0][1]"] == [MESSAGES["unknown_node"].format(ref="nowhere")]
    assert errors["edges[1][0]"] == [MESSAGES["edge_group"].format(ref="Host")]
    assert errors["edges[2]"] == [MESSAGES["self_loop"]]


def test_it_rejects_duplicate_edges_in_either_direction():
    errors = errors_of(broken(edges=[["cpu0", "bus0"], ["bus0", "cpu0"]]))
    assert errors["edges[1]"] == [MESSAGES["duplicate_edge"].format(a="bus0", b="cpu0")]


def test_it_reports_cycles_in_group_nesting():
    data = copy.deepcopy(VALID)
    data["nodes"][0]["parent"] = "rack"
    data["nodes"].append({"id": "rack", "group": True, "parent": "host"})
    errors = errors_of(data)
    assert any("cycle" in message for message in errors["nodes[0].parent"])


def test_it_rejects_a_parent_that_is_not_a_group():
    data = copy.deepcopy(VALID)
    data["nodes"][1]["parent"] = "gpu0"
    assert errors_of(data)["nodes[1].parent"] == [MESSAGES["parent_not_group"].format(ref="gpu0")]


def test_it_rejects_duplicate_node_ids():
    data = copy.deepcopy(VALID)
    data["nodes"][2]["id"] = "cpu0"
    assert errors_of(data)["nodes[2].id"] == ["Node id 'cpu0' is already used by node 'cpu0'."]


def test_its_messages_name_nodes_by_their_names_and_keep_ids_in_the_paths():
    data = copy.deepcopy(VALID)
    names = {"cpu0": "Xeon", "bus0": "PCIe bus", "gpu0": "Tesla"}
    for node in data["nodes"]:
        node["name"] = names.get(node["id"], node.get("name"))
    data["nodes"][1]["parent"] = "gpu0"
    data["edges"] = [["cpu0", "gpu0"], ["gpu0", "cpu0"], ["host", "cpu0"]]
    errors = errors_of(data)
    assert errors["nodes[1].parent"] == ["Parent 'Tesla' is not a group."]
    assert errors["edges[1]"] == ["Duplicate edge between 'Tesla' and 'Xeon'."]
    assert errors["edges[2][0]"] == ["Node 'Host' is a group; edges connect hardware nodes."]


def test_a_duplicate_id_names_the_node_that_holds_it_first():
    data = copy.deepcopy(VALID)
    data["nodes"][1]["name"] = "Xeon"
    data["nodes"][2]["id"] = "cpu0"
    assert errors_of(data)["nodes[2].id"] == ["Node id 'cpu0' is already used by node 'Xeon'."]


def test_a_group_nesting_cycle_is_told_by_the_groups_names():
    data = copy.deepcopy(VALID)
    data["nodes"][0]["parent"] = "rack"
    data["nodes"].append({"id": "rack", "name": "Rack 7", "group": True, "parent": "host"})
    assert errors_of(data)["nodes[0].parent"] == [
        "Group nesting forms a cycle: Host -> Rack 7 -> Host."
    ]


@pytest.mark.parametrize("value", [math.nan, math.inf, "fast", True])
def test_it_rejects_attribute_values_that_are_not_finite_numbers(value):
    data = copy.deepcopy(VALID)
    data["hardware"]["gtx970"]["attributes"]["SMs"] = value
    assert errors_of(data)["hardware.gtx970.attributes.SMs"] == [MESSAGES["number"]]


def test_it_rejects_unknown_component_types_and_long_names():
    data = copy.deepcopy(VALID)
    data["hardware"]["cpu"]["type"] = "FPGA"
    data["name"] = "x" * 201
    errors = errors_of(data)
    assert errors["hardware.cpu.type"] == [MESSAGES["unknown_type"].format(value="FPGA")]
    assert errors["name"] == [MESSAGES["too_long"]]


def test_a_group_carries_no_hardware_and_no_count():
    data = copy.deepcopy(VALID)
    data["nodes"][0].update(hardware="cpu", count=4)
    errors = errors_of(data)
    assert errors["nodes[0].hardware"] == [MESSAGES["group_hardware"]]
    assert errors["nodes[0].count"] == [MESSAGES["group_count"]]


def test_it_reports_every_problem_at_once():
    data = copy.deepcopy(VALID)
    data["nodes"][3]["count"] = -1
    data["edges"].append(["cpu0", "ghost"])
    assert set(errors_of(data)) == {"nodes[3].count", "edges[2][1]"}


@pytest.mark.parametrize("data", [None, [], "snapshot", 3])
def test_it_rejects_a_snapshot_that_is_not_an_object(data):
    assert errors_of(data) == {"snapshot": [MESSAGES["object"]]}


def test_a_node_with_a_bad_id_and_a_parent_reports_the_id_only():
    data = copy.deepcopy(VALID)
    data["nodes"][1]["id"] = ""
    errors = errors_of(data)
    assert errors["nodes[1].id"] == [MESSAGES["node_id"]]
    assert "nodes[1].parent" not in errors


@pytest.mark.parametrize("value", [0.5, 2, -1])
def test_a_flag_attribute_is_0_or_1_and_named_when_not(value):
    # `nvls` is read as yes or no (the NVSwitch's NVLink SHARP): 0.5 must not pass as true
    data = copy.deepcopy(VALID)
    data["hardware"]["gtx970"]["attributes"]["nvls"] = value
    message = errors_of(data)["hardware.gtx970.attributes.nvls"][0]
    assert message.startswith("Expected 0 or 1") and "NVLink SHARP" in message


@pytest.mark.parametrize("value", [0, 1, 1.0])
def test_a_flag_attribute_of_0_or_1_is_kept(value):
    data = copy.deepcopy(VALID)
    data["hardware"]["gtx970"]["attributes"]["nvls"] = value
    assert load_snapshot(data).hardware["gtx970"].attributes["nvls"] == value
