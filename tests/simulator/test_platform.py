"""The platform of a run (simulator.platform): nodes and their link models."""

from __future__ import annotations

from typing import Any

from simulator.engine import Engine
from simulator.platform import NodeRuntime


class CountingModel:
    """A computational model that counts its evaluations (ModelFunctions)."""

    def __init__(self) -> None:
        self.calls: list[tuple[object, ...]] = []

    def has(self, function: str) -> bool:
        return function == "p2pTime"

    def call(self, function: str, *args: object, params: Any) -> float:
        self.calls.append((function, *args, dict(params)))
        return 1e-6 * float(args[0]) if args else 0.0  # type: ignore[arg-type]

    evaluate = call  # the node keeps its own memo of transfer times

    def call_detail(self, function: str, *, params: Any) -> dict[str, object]:
        raise AssertionError("not used")


def test_a_link_evaluates_its_model_once_per_distinct_transfer() -> None:
    model = CountingModel()
    node = NodeRuntime(
        Engine(), "bus", count=1, capacity=1, is_network=True, model_key="m", functions=model
    )

    times = [
        node.transfer_time(1000.0, "HostToDevice", "pinned"),
        node.transfer_time(1000.0, "HostToDevice", "pinned"),
        node.transfer_time(1000.0, "DeviceToHost", None),
        node.transfer_time(2000.0, "HostToDevice", "pinned"),
    ]

    assert times == [1e-3, 1e-3, 1e-3, 2e-3]
    assert model.calls == [
        ("p2pTime", 1000.0, {"direction": "HostToDevice", "hostMemory": "pinned"}),
        ("p2pTime", 1000.0, {"direction": "DeviceToHost"}),
        ("p2pTime", 2000.0, {"direction": "HostToDevice", "hostMemory": "pinned"}),
    ]
