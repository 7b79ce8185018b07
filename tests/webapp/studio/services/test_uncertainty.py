"""A run or a sweep asks for a prediction interval (simulator.uncertainty): stored with the
run, passed to the sandbox, refused naming the field, shown in the sweep's table."""

from __future__ import annotations

from typing import Any

import pytest
from django.core.exceptions import ValidationError

from simulator.result_metrics import INTERVAL_METRICS
from simulator.runner import run_simulation
from simulator.uncertainty import MAX_SAMPLES
from tests.hwdb.factories import AttributeFactory, GpuFactory
from tests.webapp.studio.conftest import launch
from tests.webapp.studio.services.conftest import run_with, sweep_spec
from tests.webapp.studio.test_selectors_sweep_table import H100, OFFLOAD_APP, offload_snapshot
from webapp.studio.models import Simulation
from webapp.studio.selectors import sweep_columns, sweep_points
from webapp.studio.services.runs import sandbox_payload
from webapp.studio.services.sweeps import sweep_launch


def test_a_run_asks_for_an_interval_and_its_payload_carries_it(user: Any) -> None:
    asked = launch(user, uncertainty={"samples": 4, "seed": 2})
    assert asked.uncertainty == {"samples": 4, "seed": 2, "scale": 1.0}
    payload = sandbox_payload(asked)
    assert payload["uncertainty"] == asked.uncertainty
    result = run_simulation(**payload)
    # the tiny system's records are in no table: nothing is perturbed, the interval is the run
    interval = result["uncertainty"]
    assert interval["perturbed"] == []
    assert interval["overall_time_s"]["low"] == interval["overall_time_s"]["high"]
    assert interval["overall_time_s"]["median"] == result["overall_time_s"]
    assert "uncertainty" not in sandbox_payload(launch(user))


@pytest.mark.parametrize(
    ("uncertainty", "field"),
    [
        ("often", "uncertainty"),
        ({"samples": MAX_SAMPLES + 1}, "uncertainty.samples"),
        ({"samples": 10, "seed": "x"}, "uncertainty.seed"),
        ({"samples": 10, "scale": -1}, "uncertainty.scale"),
    ],
)
def test_a_bad_interval_is_refused_naming_its_field(
    user: Any, uncertainty: object, field: str
) -> None:
    with pytest.raises(ValidationError) as error:
        launch(user, uncertainty=uncertainty)
    assert list(error.value.message_dict) == [field]
    assert not Simulation.objects.exists()


def test_a_sweep_refuses_a_bad_interval_under_its_spec(user: Any) -> None:
    with pytest.raises(ValidationError) as error:
        sweep_launch(user=user, name="bad", spec=sweep_spec(uncertainty={"samples": 0}))
    assert list(error.value.message_dict) == ["spec.uncertainty.samples"]


def test_a_sweeps_table_carries_each_points_interval(user: Any, sent: list[list[int]]) -> None:
    h100: Any = GpuFactory(owner=user, name=H100, sms=132)
    AttributeFactory(component=h100, key="powerIdle", value=70.0, unit="W")
    AttributeFactory(component=h100, key="powerConsumptionLoad", value=700.0, unit="W")
    spec = {
        "snapshot": offload_snapshot(),
        "app_source": OFFLOAD_APP,
        "labels": {"CPU": 1, "GPU": 1},
        "variables": {"N": [1e6, 1e8]},
        "hardware": {"node": "gpu0", "components": [h100.pk]},
        "uncertainty": {"samples": 20, "seed": 1},
    }
    sweep = sweep_launch(user=user, name="interval", spec=spec)
    for child in sweep.simulations.order_by("pk"):
        assert child.uncertainty == {"samples": 20, "seed": 1, "scale": 1.0}
        run_with(child, run_simulation(**sandbox_payload(child)))
    axes, rows = sweep_points(sweep=sweep)
    assert set(INTERVAL_METRICS) <= set(sweep_columns(axes, rows))
    for row in rows:
        # the H100's idle power has a spread in the table: the energy has a band
        assert row["energy_j_low"] < row["energy_j"] < row["energy_j_high"]
        assert row["overall_time_s_low"] == row["overall_time_s"] == row["overall_time_s_high"]
