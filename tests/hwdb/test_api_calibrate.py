"""POST /api/components/{id}/calibrate/: t_s and lambda_c (4.6), lambda_k (4.1), E_b and P_s (003)."""

from __future__ import annotations

import math
from typing import Any

import pytest

from hwdb.models import Component, ComponentType
from hwdb.services.calibration import CALIBRATION_MESSAGES
from simulator.calibrate import CALIBRATE_ERRORS
from simulator.models.transfer import GTX970_PCIE_ATTRIBUTES, transfer_time
from tests.hwdb.factories import AttributeFactory, ComponentFactory, GpuFactory

pytestmark = pytest.mark.django_db

FIG_5_2 = GTX970_PCIE_ATTRIBUTES  # the GTX 970 testbed's bus as stored in MERPSYS (000 Fig. 5.2)
SIZES = [0, 4_096, 1_048_576, 16_777_216, 400_000_000]
LAMBDA_K = 0.703787  # saxpy2 on the GTX 970 (000 section 5)

# 003 Fig. 3 (vectorAdd, block 1024, M2075): P_s = 29.4 W, P_r = 153.65 W, 14 SMs.
M2075_IDLE_W = 29.4
M2075_ROUND_W = 153.65
M2075_SMS = 14
ROUND_S = 2.0e-3  # T_r, chosen
LAUNCH_S = 7.0e-6  # b of (1): the launch overhead, chosen


def gtx970_bus(owner: Any, **kwargs: Any) -> Component:
    """Return a NETWORK record with the GTX 970 bus's bandwidth (1.58e10 B/s) only."""
    bus = ComponentFactory(owner=owner, type=ComponentType.NETWORK, name="PCIe 3.1 x16", **kwargs)
    AttributeFactory(component=bus, key="bandwidth", value=FIG_5_2["bandwidth"], unit="B/s")
    return bus


def transfer_points() -> list[dict[str, Any]]:
    """Return (4.6) times of the Fig. 5.2 bus for SIZES in both directions."""
    points = []
    for direction, startup, utilisation in (
        ("HostToDevice", "startupHTD", "lambdaHTD"),
        ("DeviceToHost", "startupDth", "lambdaDth"),
    ):
        for size in SIZES:
            seconds = transfer_time(
                size,
                startup_s=FIG_5_2[startup],
                bandwidth=FIG_5_2["bandwidth"],
                lambda_c=FIG_5_2[utilisation],
            )
            points.append({"bytes": size, "seconds": seconds, "direction": direction})
    return points


def m2075_points() -> tuple[list[dict[str, Any]], float]:
    """Return 003-like (NB, T, E) points from (1) and (3) and the E_b they were made with."""
    slope = ROUND_S / M2075_SMS  # a = T_r / nbSMs (5)
    block_energy = (M2075_ROUND_W - M2075_IDLE_W) * ROUND_S / M2075_SMS  # from (7), E_r = P_r T_r
    points = []
    for blocks in (14, 28, 448):  # two small NB and one medium, as 003 advises
        seconds = slope * blocks + LAUNCH_S  # (1)
        joules = block_energy * blocks + M2075_IDLE_W * seconds  # (3)
        points.append({"blocks": blocks, "seconds": seconds, "joules": joules})
    return points, block_energy


def calibrate(api: Any, component: Component, **body: Any) -> Any:
    return api.post(f"/api/components/{component.pk}/calibrate/", body, format="json")


def attributes_of(api: Any, component: Component) -> dict[str, dict[str, Any]]:
    response = api.get(f"/api/components/{component.pk}/")
    assert response.status_code == 200
    return {a["key"]: a for a in response.json()["attributes"]}


def test_it_recovers_the_gtx_970_buses_t_s_and_lambda_c_per_direction(api: Any, user: Any) -> None:
    bus = gtx970_bus(user)
    response = calibrate(api, bus, kind="transfer", measurements=transfer_points())
    assert response.status_code == 200, response.json()
    body = response.json()
    assert body["stored"] is False and body["component"] == bus.pk
    directions = body["fit"]["directions"]
    htd, dth = directions["HostToDevice"], directions["DeviceToHost"]
    assert htd["startup_s"] == pytest.approx(FIG_5_2["startupHTD"], rel=1e-9)
    assert htd["lambda_c"] == pytest.approx(FIG_5_2["lambdaHTD"], rel=1e-9)
    assert dth["startup_s"] == pytest.approx(FIG_5_2["startupDth"], rel=1e-9)
    assert dth["lambda_c"] == pytest.approx(FIG_5_2["lambdaDth"], rel=1e-9)
    assert htd["count"] == len(SIZES) and htd["r2"] == pytest.approx(1.0, abs=1e-12)
    assert max(abs(r) for r in htd["residuals_s"]) < 1e-15
    assert [a["key"] for a in body["attributes"]] == [
        "startupHTD",
        "lambdaHTD",
        "startupDth",
        "lambdaDth",
    ]
    assert "startupHTD" not in attributes_of(api, bus)  # nothing stored without `store`


def test_storing_a_transfer_fit_writes_the_fig_5_2_attributes(api: Any, user: Any) -> None:
    bus = gtx970_bus(user)
    response = calibrate(api, bus, kind="transfer", measurements=transfer_points(), store=True)
    assert response.status_code == 200, response.json()
    assert response.json()["stored"] is True
    stored = attributes_of(api, bus)
    assert stored["startupHTD"]["value"] == pytest.approx(FIG_5_2["startupHTD"], rel=1e-9)
    assert stored["startupHTD"]["unit"] == "s"
    assert stored["lambdaDth"]["value"] == pytest.approx(FIG_5_2["lambdaDth"], rel=1e-9)
    assert stored["lambdaDth"]["unit"] == ""
    source = stored["lambdaHTD"]["source"]
    assert source.startswith(f"calibrated from {len(SIZES)} measurements on ")
    assert source.endswith(f" by {user.username}")
    assert stored["bandwidth"]["value"] == FIG_5_2["bandwidth"]  # the other attributes stay


def test_storing_one_direction_replaces_only_its_attributes(api: Any, user: Any) -> None:
    bus = gtx970_bus(user)
    AttributeFactory(component=bus, key="lambdaHTD", value=0.5, unit="")
    AttributeFactory(component=bus, key="lambdaDth", value=0.4, unit="")
    htd = [p for p in transfer_points() if p["direction"] == "HostToDevice"]
    response = calibrate(api, bus, kind="transfer", measurements=htd, store=True)
    assert response.status_code == 200, response.json()
    stored = attributes_of(api, bus)
    assert stored["lambdaHTD"]["value"] == pytest.approx(FIG_5_2["lambdaHTD"], rel=1e-9)
    assert stored["lambdaDth"]["value"] == 0.4
    assert "startupDth" not in stored


def test_it_fits_and_stores_lambda_k_from_estimated_and_measured_kernel_times(
    api: Any, user: Any
) -> None:
    gpu = GpuFactory(owner=user)
    estimated = [3.8e-4, 7.6e-4, 3.04e-3]  # T_k (4.1) with lambda_k = 1
    measurements = [{"estimated_s": t, "measured_s": t / LAMBDA_K} for t in estimated]
    response = calibrate(api, gpu, kind="kernel", measurements=measurements, store=True)
    assert response.status_code == 200, response.json()
    assert response.json()["fit"]["lambda_k"] == pytest.approx(LAMBDA_K, rel=1e-12)
    stored = attributes_of(api, gpu)["kernelExecutionLambda"]
    assert stored["value"] == pytest.approx(LAMBDA_K, rel=1e-12) and stored["unit"] == ""
    assert stored["source"].startswith("calibrated from 3 measurements on ")


def test_one_kernel_launch_gives_lambda_k_as_estimated_over_measured(api: Any, user: Any) -> None:
    gpu = GpuFactory(owner=user)
    response = calibrate(
        api, gpu, kind="kernel", measurements=[{"estimated_s": 3.0, "measured_s": 4.0}]
    )
    assert response.json()["fit"]["lambda_k"] == pytest.approx(0.75, rel=1e-15)


def test_it_recovers_e_b_and_p_s_from_003_like_block_measurements(api: Any, user: Any) -> None:
    gpu = GpuFactory(owner=user)
    points, block_energy = m2075_points()
    response = calibrate(api, gpu, kind="energy", measurements=points, store=True)
    assert response.status_code == 200, response.json()
    fit = response.json()["fit"]
    assert fit["block_energy_j"] == pytest.approx(block_energy, rel=1e-9)
    assert fit["static_power_w"] == pytest.approx(M2075_IDLE_W, rel=1e-9)
    assert fit["time_slope_s"] == pytest.approx(ROUND_S / M2075_SMS, rel=1e-9)
    assert fit["time_intercept_s"] == pytest.approx(LAUNCH_S, rel=1e-6)
    stored = attributes_of(api, gpu)
    assert stored["blockEnergy"]["value"] == pytest.approx(block_energy, rel=1e-9)
    assert stored["blockEnergy"]["unit"] == "J"
    assert stored["powerIdle"]["value"] == pytest.approx(M2075_IDLE_W, rel=1e-9)
    assert stored["powerIdle"]["unit"] == "W"


def test_a_known_idle_power_fits_e_b_alone_from_whole_rounds(api: Any, user: Any) -> None:
    """003's own method on step data, (4) and (6): P_s measured apart, E_b by regression."""
    gpu = GpuFactory(owner=user)
    AttributeFactory(component=gpu, key="powerIdle", value=M2075_IDLE_W, unit="W")
    block_energy = (M2075_ROUND_W - M2075_IDLE_W) * ROUND_S / M2075_SMS
    round_energy = M2075_ROUND_W * ROUND_S  # E_r (7)
    points = [
        {
            "blocks": blocks,
            "seconds": ROUND_S * math.ceil(blocks / M2075_SMS),
            "joules": round_energy * math.ceil(blocks / M2075_SMS),
        }
        for blocks in (14, 28, 448)
    ]
    response = calibrate(
        api, gpu, kind="energy", measurements=points, idle_power_w=M2075_IDLE_W, store=True
    )
    assert response.status_code == 200, response.json()
    assert response.json()["fit"]["block_energy_j"] == pytest.approx(block_energy, rel=1e-9)
    assert [a["key"] for a in response.json()["attributes"]] == ["blockEnergy"]


@pytest.mark.parametrize(
    ("kind", "measurements", "field", "fragment"),
    [
        (
            "energy",
            [{"blocks": 1, "seconds": 1.0, "joules": 1.0}] * 2,
            "measurements",
            "at least 3",
        ),
        (
            "transfer",
            [{"bytes": 1, "seconds": 1e-3, "direction": "HostToDevice"}],
            "measurements",
            "at least 2",
        ),
        (
            "energy",
            [
                {"blocks": 1, "seconds": 1.0, "joules": 1.0},
                {"blocks": 2, "seconds": 2.0, "joules": 2.0},
                {"blocks": 3, "seconds": -3.0, "joules": 3.0},
            ],
            "measurements[2].seconds",
            "positive",
        ),
        ("kernel", [{"estimated_s": 1.0}], "measurements[0].measured_s", "required"),
        (
            "kernel",
            [{"estimated_s": "x", "measured_s": 1}],
            "measurements[0].estimated_s",
            "number",
        ),
        (
            "kernel",
            [{"estimated_s": True, "measured_s": 1}],
            "measurements[0].estimated_s",
            "number",
        ),
        (
            "transfer",
            [{"bytes": 1, "seconds": 1.0, "direction": "up"}],
            "measurements[0].direction",
            "HostToDevice",
        ),
        ("kernel", [3.0], "measurements[0]", "Expected an object"),
        (
            "transfer",
            [
                {"bytes": 1000, "seconds": 2e-3, "direction": "HostToDevice"},
                {"bytes": 2000, "seconds": 1e-3, "direction": "HostToDevice"},
            ],
            "measurements",
            "negative inverse bandwidth",
        ),
        ("kernel", [], "measurements", "at least 1"),
        ("kernel", [{"estimated_s": 1, "measured_s": 2, "extra": 3}], "measurements[0]", "extra"),
    ],
)
def test_bad_measurements_answer_400_naming_the_field(
    api: Any, user: Any, kind: str, measurements: Any, field: str, fragment: str
) -> None:
    bus = gtx970_bus(user)
    response = calibrate(api, bus, kind=kind, measurements=measurements, store=True)
    assert response.status_code == 400
    body = response.json()
    assert field in body, body
    assert fragment in " ".join(body[field])
    assert "startupHTD" not in attributes_of(api, bus)


def test_a_transfer_fit_without_a_bandwidth_attribute_answers_400(api: Any, user: Any) -> None:
    bus = ComponentFactory(owner=user, type=ComponentType.NETWORK)
    response = calibrate(api, bus, kind="transfer", measurements=transfer_points())
    assert response.status_code == 400
    assert response.json()["bandwidth"] == [CALIBRATE_ERRORS["bandwidth"].format(value=None)]


def test_an_unknown_kind_and_a_non_list_answer_400(api: Any, user: Any) -> None:
    bus = gtx970_bus(user)
    assert "kind" in calibrate(api, bus, kind="power", measurements=[]).json()
    assert "measurements" in calibrate(api, bus, kind="kernel", measurements={"a": 1}).json()


def test_anyone_who_sees_a_shared_record_may_fit_but_not_store(
    client_for: Any, user: Any, other_user: Any
) -> None:
    bus = gtx970_bus(user, shared=True)
    other = client_for(other_user)
    assert calibrate(other, bus, kind="transfer", measurements=transfer_points()).status_code == 200
    response = calibrate(other, bus, kind="transfer", measurements=transfer_points(), store=True)
    assert response.status_code == 403
    assert response.json()["detail"] == CALIBRATION_MESSAGES["not_owner"].format(id=bus.pk)
    assert "startupHTD" not in attributes_of(other, bus)


def test_staff_may_store_on_someone_elses_record(client_for: Any, user: Any, staff: Any) -> None:
    bus = gtx970_bus(user)
    response = calibrate(
        client_for(staff), bus, kind="transfer", measurements=transfer_points(), store=True
    )
    assert response.status_code == 200
    assert "lambdaHTD" in attributes_of(client_for(user), bus)


def test_a_built_in_record_answers_403_suggesting_a_clone(
    api: Any, client_for: Any, staff: Any
) -> None:
    bus = gtx970_bus(None, shared=True)
    assert calibrate(api, bus, kind="transfer", measurements=transfer_points()).status_code == 200
    for client in (api, client_for(staff)):
        response = calibrate(
            client, bus, kind="transfer", measurements=transfer_points(), store=True
        )
        assert response.status_code == 403
        assert "clone" in response.json()["detail"]
    assert "startupHTD" not in attributes_of(api, bus)


def test_a_record_i_cannot_see_answers_404(client_for: Any, user: Any, other_user: Any) -> None:
    bus = gtx970_bus(user)
    response = calibrate(client_for(other_user), bus, kind="kernel", measurements=[])
    assert response.status_code == 404


def test_anonymous_requests_are_refused(user: Any) -> None:
    from rest_framework.test import APIClient

    bus = gtx970_bus(user)
    response = calibrate(APIClient(), bus, kind="kernel", measurements=[])
    assert response.status_code in (401, 403)
