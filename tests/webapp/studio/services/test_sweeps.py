"""Tests of sweeps: the product of the axes, the hardware swap, the limits, failed points."""

from __future__ import annotations

from typing import Any

import pytest
from django.core.exceptions import ValidationError

from hwdb.services.computational_models import computational_model_create
from simulator.errors import UserCodeError
from simulator.models import builtin_models
from tests.hwdb.factories import AttributeFactory, GpuFactory
from tests.webapp.studio.factories import tiny_snapshot
from tests.webapp.studio.services.conftest import count_parses, run_with, sweep_spec
from webapp.studio.models import Simulation, SweepStatus
from webapp.studio.services.common import MESSAGES
from webapp.studio.services.sweeps import sweep_launch

pytestmark = pytest.mark.django_db


def test_a_sweep_parses_its_snapshot_once_and_each_substituted_one_once(
    user: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    parses = count_parses(monkeypatch)
    sweep_launch(user=user, name="grid", spec=sweep_spec())
    assert len(parses) == 1  # six points, one system
    fast = GpuFactory(owner=user, name="Fast GPU", type="CPU")
    slow = GpuFactory(owner=user, name="Slow GPU", type="CPU")
    parses.clear()
    spec = sweep_spec(hardware={"node": "cpu0", "components": [fast.pk, slow.pk]})
    sweep_launch(user=user, name="hw", spec=spec)
    assert len(parses) == 3  # the launch's system, then each GPU's


def test_a_sweep_expands_the_product_of_its_axes_into_one_queued_group(
    user: Any, sent: list[list[int]], django_capture_on_commit_callbacks: Any
) -> None:
    with django_capture_on_commit_callbacks(execute=True):
        sweep = sweep_launch(user=user, name="grid", spec=sweep_spec())
    children = list(sweep.simulations.order_by("pk"))
    assert [c.variables for c in children] == [
        {"steps": s, "ops": o} for s in (1, 2) for o in (1e9, 2e9, 3e9)
    ]
    assert sent == [[c.pk for c in children]]
    assert sweep.aggregate["total"] == 6 and sweep.aggregate["queued"] == 6


def test_a_sweep_swaps_one_nodes_hardware_for_each_component_named(user: Any) -> None:
    fast = GpuFactory(owner=user, name="Fast GPU", type="CPU")
    slow = GpuFactory(owner=user, name="Slow GPU", type="CPU")
    spec = sweep_spec(
        variables={"steps": 1, "ops": 1e9},
        hardware={"node": "cpu0", "components": [fast.pk, "slow gpu"]},
    )
    sweep = sweep_launch(user=user, name="hw", spec=spec)
    children = list(sweep.simulations.order_by("pk"))
    assert [c.snapshot["nodes"][0]["hardware"] for c in children] == [
        f"hw-{fast.pk}",
        f"hw-{slow.pk}",
    ]
    assert children[1].snapshot["hardware"][f"hw-{slow.pk}"]["name"] == "Slow GPU"
    assert children[1].sweep_point["hardware"] == {
        "node": "cpu0",
        "id": slow.pk,
        "name": "Slow GPU",
        "model": "m",  # the tiny model has no name: its key
        "model_swapped": False,
    }


def _gpu(user: Any, name: str, cc: float, recommended: str = "") -> Any:
    gpu = GpuFactory(owner=user, name=name, recommended_model=recommended)
    AttributeFactory(component=gpu, key="computeCapability", value=cc)
    return gpu


def test_a_gpu_swap_runs_the_gpus_recommended_model_where_the_nodes_was_not_validated(
    user: Any,
) -> None:
    volkov, current = (
        next(m for m in builtin_models() if m.name == name)
        for name in ("Volkov GPU", "GPU kernel (current architectures)")
    )
    installed = computational_model_create(
        owner=None,
        name=current.name,
        source=current.source,
        shared=True,
        builtin=True,
        validated_architectures=current.validated_architectures,
    )
    snapshot = tiny_snapshot()
    snapshot["hardware"]["cpu"]["type"] = "GPU"
    snapshot["models"]["m"] = {
        "name": volkov.name,
        "language": "javascript",
        "source": volkov.source,
        "validatedArchitectures": list(volkov.validated_architectures),
    }
    gpus = [
        _gpu(user, "My H100", 9.0, current.name),  # Hopper: Volkov's model gives way
        _gpu(user, "My GTX 1070", 6.1, volkov.name),  # Pascal: Volkov's model was validated
        _gpu(user, "My B200", 10.0),  # recommends nothing: the model stays, the run warns
    ]
    hardware = {"node": "cpu0", "components": [gpu.pk for gpu in gpus]}
    spec = sweep_spec(snapshot=snapshot, variables={"steps": 1, "ops": 1e9}, hardware=hardware)

    children = list(sweep_launch(user=user, name="gpus", spec=spec).simulations.order_by("pk"))

    points = [c.sweep_point["hardware"] for c in children]
    assert [(p["model"], p["model_swapped"]) for p in points] == [
        (current.name, True),
        (volkov.name, False),
        (volkov.name, False),
    ]
    h100 = children[0].snapshot
    key = f"model-{installed.pk}"
    assert h100["nodes"][0]["model"] == key
    assert h100["models"][key]["source"] == current.source
    assert h100["models"][key]["validatedArchitectures"] == ["Hopper"]
    assert [c.snapshot["nodes"][0]["model"] for c in children[1:]] == ["m", "m"]

    # "keep": the node's model on every GPU, as the user built it
    kept = sweep_launch(
        user=user, name="kept", spec={**spec, "hardware": {**hardware, "model": "keep"}}
    )
    assert [
        (c.snapshot["nodes"][0]["model"], c.sweep_point["hardware"]["model_swapped"])
        for c in kept.simulations.order_by("pk")
    ] == [("m", False)] * 3

    with pytest.raises(ValidationError) as error:
        sweep_launch(user=user, name="bad", spec={**spec, "hardware": {**hardware, "model": 1}})
    assert error.value.message_dict == {"spec.hardware.model": [MESSAGES["sweep_model"]]}


def test_it_refuses_an_over_large_sweep_with_its_size_and_the_limit(
    user: Any, settings: Any
) -> None:
    settings.PARASIM_MAX_SWEEP = 10
    spec = sweep_spec(variables={"steps": {"start": 1, "stop": 11, "step": 1}})
    with pytest.raises(ValidationError) as error:
        sweep_launch(user=user, name="big", spec=spec)
    assert error.value.message_dict == {
        "spec": [MESSAGES["sweep_too_large"].format(size=11, limit=10)]
    }
    assert not Simulation.objects.exists()


def test_it_names_the_bad_field_of_a_sweep(user: Any) -> None:
    with pytest.raises(ValidationError) as error:
        sweep_launch(user=user, name="s", spec=sweep_spec(labels={"CPU": 9}))
    assert list(error.value.message_dict) == ["spec.labels.CPU"]
    with pytest.raises(ValidationError) as error:
        sweep_launch(
            user=user, name="s", spec=sweep_spec(hardware={"node": "gpu9", "components": [1]})
        )
    assert error.value.message_dict == {
        "spec.hardware.node": [
            MESSAGES["sweep_node"].format(node="gpu9", known="'CPU' (id 'cpu0')")
        ]
    }


def test_a_failed_point_is_reported_without_sinking_the_rest(user: Any) -> None:
    sweep = sweep_launch(
        user=user, name="s", spec=sweep_spec(variables={"steps": [1, 2, 3], "ops": 1e9})
    )
    children = list(sweep.simulations.order_by("pk"))
    outcomes = [
        {"overall_time_s": 1.0, "energy_j": {"total": 1.0}},
        UserCodeError("division by zero", line=1),
        {"overall_time_s": 3.0, "energy_j": {"total": 3.0}},
    ]
    for child, outcome in zip(children, outcomes, strict=True):
        run_with(child, outcome)
        if child is children[0]:
            sweep.refresh_from_db()
            assert sweep.status == SweepStatus.RUNNING
            assert sweep.aggregate["succeeded"] == 1 and sweep.aggregate["done"] == 1
    sweep.refresh_from_db()
    assert sweep.status == SweepStatus.FINISHED
    assert (sweep.aggregate["succeeded"], sweep.aggregate["failed"]) == (2, 1)
    assert sweep.aggregate["best"]["simulation"] == children[0].pk


def test_a_sweep_varies_a_hardware_attribute_and_a_label_count_per_point(
    user: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    parses = count_parses(monkeypatch)
    spec = sweep_spec(
        variables={"steps": [1, 2]},
        axes={"cpu0.speed": [1e9, 4e9], "labels.CPU": [1, 5]},
    )
    sweep = sweep_launch(user=user, name="scale", spec=spec)
    children = list(sweep.simulations.order_by("pk"))
    assert len(children) == 8
    seen = [
        (
            c.variables["steps"],
            c.snapshot["hardware"]["cpu"]["attributes"]["speed"],
            c.labels,
            c.snapshot["nodes"][0]["count"],
            c.sweep_point["axes"],
        )
        for c in children[:4]
    ]
    # the node holds 2 processes of CPU per instance: 5 processes need 3 instances
    assert seen == [
        (1, 1e9, {"CPU": 1}, 1, {"cpu0.speed": 1e9, "labels.CPU": 1}),
        (1, 1e9, {"CPU": 5}, 3, {"cpu0.speed": 1e9, "labels.CPU": 5}),
        (1, 4e9, {"CPU": 1}, 1, {"cpu0.speed": 4e9, "labels.CPU": 1}),
        (1, 4e9, {"CPU": 5}, 3, {"cpu0.speed": 4e9, "labels.CPU": 5}),
    ]
    assert len(parses) == 1 + 4  # the launch's, then one per distinct (speed, count)


@pytest.mark.parametrize(
    ("axes", "field", "words"),
    [
        ({"cpu0.clock": [1]}, "spec.axes.cpu0.clock", "has no attribute 'clock'"),
        ({"CPU.speed": [1, "x"]}, "spec.axes.CPU.speed[1]", "Expected a finite number"),
        ({"labels.GPU": [1]}, "spec.axes.labels.GPU", "No node of the system carries"),
        ({"nope": [1]}, "spec.axes.nope", "Unknown variable 'nope'"),
        ({"steps": [1]}, "spec.axes.steps", "both spec.variables and spec.axes"),
        ({"cpu0.speed": []}, "spec.axes.cpu0.speed", "at least one value"),
    ],
)
def test_a_bad_axis_is_refused_naming_its_field_and_nothing_is_stored(
    user: Any, axes: dict[str, Any], field: str, words: str
) -> None:
    from webapp.studio.services.applications import application_model_create

    application = application_model_create(
        owner=user,
        name="tiny",
        source="for i in range(steps):\n    sim.computation({'ops': ops})\n",
        variables=[
            {"name": "steps", "type": "int", "default": 3},
            {"name": "ops", "type": "float", "default": 1e9},
        ],
    )
    spec = sweep_spec(variables={"steps": [1]}, axes=axes, application=application.pk)
    del spec["app_source"]
    with pytest.raises(ValidationError) as error:
        sweep_launch(user=user, name="bad", spec=spec)
    assert list(error.value.message_dict) == [field]
    assert words in error.value.message_dict[field][0]
    assert not Simulation.objects.exists()


def test_the_point_cap_counts_every_kind_of_axis(user: Any, settings: Any) -> None:
    settings.PARASIM_MAX_SWEEP = 10
    spec = sweep_spec(variables={"steps": [1, 2]}, axes={"labels.CPU": [1, 2, 3, 4, 5, 6]})
    with pytest.raises(ValidationError) as error:
        sweep_launch(user=user, name="big", spec=spec)
    assert error.value.message_dict == {
        "spec": ["The sweep has 12 points; at most 10 are allowed."]
    }


def test_an_attribute_axis_is_checked_on_every_record_swapped_in(user: Any) -> None:
    fast = GpuFactory(owner=user, name="Fast GPU", type="CPU")
    AttributeFactory(component=fast, key="speed", value=2e9)
    bare = GpuFactory(owner=user, name="Bare GPU", type="CPU")  # no speed
    spec = sweep_spec(
        variables={"steps": 1, "ops": 1e9},
        hardware={"node": "cpu0", "components": [fast.pk, bare.pk]},
        axes={"CPU.speed": [1e9, 3e9]},
    )
    with pytest.raises(ValidationError) as error:
        sweep_launch(user=user, name="hw", spec=spec)
    (message,) = error.value.message_dict["spec.axes.CPU.speed"]
    assert message.startswith("'Bare GPU' (node 'cpu0') has no attribute 'speed'")
    assert not Simulation.objects.exists()

    spec["hardware"]["components"] = [fast.pk]
    children = list(sweep_launch(user=user, name="hw", spec=spec).simulations.order_by("pk"))
    speeds = [
        c.snapshot["hardware"][c.snapshot["nodes"][0]["hardware"]]["attributes"]["speed"]
        for c in children
    ]
    assert speeds == [1e9, 3e9]


def _cluster_spec(axes: dict[str, Any]) -> dict[str, Any]:
    import json
    from pathlib import Path

    path = Path(__file__).resolve().parents[4] / "examples/dgx_h100_cluster_4/snapshot.json"
    return sweep_spec(
        snapshot=json.loads(path.read_text()),
        app_source="sim.allreduce(size, algorithm='ring', chunk=0)\n",
        labels={"GPU": 16},
        variables={"size": [1e8]},
        axes=axes,
    )


def test_a_sweep_varies_a_topology_parameter_by_the_cli_s_rule(user: Any) -> None:
    spec = _cluster_spec({"topology.nvlink.domainSize": [8, 16], "topology.ndr.up[1]": [4, 8]})
    sweep = sweep_launch(user=user, name="fabric", spec=spec)
    seen = [
        (
            c.sweep_point["axes"],
            {n["id"]: n["count"] for n in c.snapshot["nodes"]}["nvswitch"],
            {n["id"]: n["count"] for n in c.snapshot["nodes"]}["spine"],
        )
        for c in sweep.simulations.order_by("pk")
    ]
    assert seen == [
        ({"topology.nvlink.domainSize": 8, "topology.ndr.up[1]": 4}, 4, 4),
        ({"topology.nvlink.domainSize": 8, "topology.ndr.up[1]": 8}, 4, 8),
        ({"topology.nvlink.domainSize": 16, "topology.ndr.up[1]": 4}, 2, 4),
        ({"topology.nvlink.domainSize": 16, "topology.ndr.up[1]": 8}, 2, 8),
    ]


@pytest.mark.parametrize(
    ("axes", "field", "words"),
    [
        (
            {"topology.ndr.down": [[8, 8]]},
            "spec.axes.topology.ndr.down[0]",
            "down: The product of down (8 x 8 = 64)",
        ),
        (
            {"topology.ndr.endpoints": [16, 32], "topology.ndr.down[1]": [2]},
            "spec.axes.topology.ndr.down[1]",
            "At topology.ndr.endpoints=32, topology.ndr.down[1]=2: down: The product",
        ),
        (
            {"topology.fabric.domainSize": [8]},
            "spec.axes.topology.fabric.domainSize",
            "ndr, nvlink",
        ),
    ],
)
def test_a_bad_topology_axis_is_refused_naming_its_field_and_nothing_is_stored(
    user: Any, axes: dict[str, Any], field: str, words: str
) -> None:
    with pytest.raises(ValidationError) as error:
        sweep_launch(user=user, name="bad", spec=_cluster_spec(axes))
    assert list(error.value.message_dict) == [field]
    assert words in error.value.message_dict[field][0]
    assert not Simulation.objects.exists()


def test_the_point_cap_counts_topology_axes(user: Any, settings: Any) -> None:
    settings.PARASIM_MAX_SWEEP = 3
    spec = _cluster_spec({"topology.nvlink.domainSize": [8, 16], "topology.ndr.up[1]": [4, 8]})
    with pytest.raises(ValidationError) as error:
        sweep_launch(user=user, name="big", spec=spec)
    assert error.value.message_dict == {"spec": ["The sweep has 4 points; at most 3 are allowed."]}
