"""The sweep table (selectors.sweep_points, sweep_columns) and its CSV: every metric of a
point, the GPU each point ran on, and the power attributes its energy lacked."""

from __future__ import annotations

import csv
import io
from typing import Any

import pytest
from rest_framework.test import APIClient

from simulator.runner import run_simulation
from tests.hwdb.factories import AttributeFactory, GpuFactory
from tests.webapp.studio.services.conftest import run_with
from webapp.studio.models import Simulation, Sweep
from webapp.studio.selectors import sweep_columns, sweep_points
from webapp.studio.services.runs import sandbox_payload
from webapp.studio.services.sweeps import sweep_launch

GTX = "GeForce GTX 970"
H100 = "H100 SXM5 80GB"
# The host sends N bytes to the GPU, which computes and sends them back.
OFFLOAD_APP = """\
if tag.equals("CPU"):
    sim.p2pCommunicationSend(N, "GPU", ConstVar.HostToDevice)
    sim.p2pCommunicationReceive("GPU")
else:
    sim.p2pCommunicationReceive("CPU")
    sim.computation({"N": N})
    sim.p2pCommunicationSend(N, "CPU", ConstVar.DeviceToHost)
"""


def offload_snapshot() -> dict[str, Any]:
    """Return host CPU -- link -- GPU, the GPU node named after its hardware (the editor's
    default), the host with both power attributes, the link with none."""
    power = {"powerIdle": 20.0, "powerConsumptionLoad": 80.0}
    return {
        "name": "offload",
        "hardware": {
            "cpu": {"type": "CPU", "name": "Host CPU", "attributes": power},
            "link": {"type": "NETWORK", "name": "Test link", "attributes": {}},
            "gpu": {"type": "GPU", "name": GTX, "attributes": {"SMs": 13}},
        },
        "models": {
            "kernel": {
                "language": "javascript",
                "source": "function computationTime(params) { return params.N / (SMs * 1e6); }",
            },
            "wire": {
                "language": "javascript",
                "source": "function p2pTime(size, params) { return size / 1e9; }",
            },
        },
        "nodes": [
            {"id": "cpu0", "name": "CPU", "hardware": "cpu", "labels": {"CPU": 1}},
            {"id": "bus0", "name": "Test link", "hardware": "link", "model": "wire"},
            {"id": "gpu0", "name": GTX, "hardware": "gpu", "model": "kernel", "labels": {"GPU": 1}},
        ],
        "edges": [["cpu0", "bus0"], ["bus0", "gpu0"]],
    }


@pytest.fixture
def finished_sweep(user: Any, sent: list[list[int]]) -> Sweep:
    """Return an N x {GTX 970, H100} sweep whose points ran (in process) and succeeded."""
    gtx = GpuFactory(owner=user, name=GTX, sms=13)
    AttributeFactory(component=gtx, key="powerConsumptionLoad", value=168.0, unit="W")
    h100 = GpuFactory(owner=user, name=H100, sms=132)
    AttributeFactory(component=h100, key="powerIdle", value=70.0, unit="W")
    AttributeFactory(component=h100, key="powerConsumptionLoad", value=700.0, unit="W")
    spec = {
        "snapshot": offload_snapshot(),
        "app_source": OFFLOAD_APP,
        "labels": {"CPU": 1, "GPU": 1},
        "variables": {"N": [1e6, 1e8]},
        "hardware": {"node": "gpu0", "components": [gtx.pk, h100.pk]},
    }
    sweep = sweep_launch(user=user, name="offload", spec=spec)
    for child in sweep.simulations.order_by("pk"):
        run_with(child, run_simulation(**sandbox_payload(child)))
    return sweep


def test_each_point_names_the_gpu_it_ran_on_and_a_swapped_node_its_new_gpu(
    finished_sweep: Sweep,
) -> None:
    _, rows = sweep_points(sweep=finished_sweep)

    assert [(row["gpu"], row["N"], row["status"]) for row in rows] == [
        (GTX, 1e6, "succeeded"),
        (GTX, 1e8, "succeeded"),
        (H100, 1e6, "succeeded"),
        (H100, 1e8, "succeeded"),
    ]
    h100_run = Simulation.objects.get(pk=rows[2]["simulation"])
    (gpu_row,) = [c for c in h100_run.result["components"] if c["node"] == "gpu0"]
    assert (gpu_row["name"], gpu_row["hardware"]) == (H100, H100)


def test_a_point_holds_kernel_transfer_wait_and_per_node_figures(finished_sweep: Sweep) -> None:
    _, rows = sweep_points(sweep=finished_sweep)
    gtx_small, gtx_large, h100_small, _ = rows

    # kernel N / (SMs x 1e6) s; each way N / 1e9 s on the link
    assert gtx_large["kernel_s"] == pytest.approx(1e8 / 13e6)
    assert h100_small["kernel_s"] == pytest.approx(1e6 / 132e6)
    assert gtx_small["transfer_s"] == pytest.approx(2 * 1e6 / 1e9)
    assert gtx_small["cpu_compute_s"] == 0.0
    # the host waits out the GPU's receive and kernel before the answer is sent
    assert gtx_small["wait_s"] == pytest.approx(1e6 / 1e9 + 1e6 / 13e6)
    assert gtx_small["overall_time_s"] == pytest.approx(2e-3 + 1e6 / 13e6)
    assert gtx_small["busy_s.bus0"] == pytest.approx(2e-3)
    assert gtx_small["link_busy_s"] == pytest.approx(2e-3)
    assert gtx_small["energy_j.cpu0"] == pytest.approx(20.0 * gtx_small["overall_time_s"])
    assert gtx_small["energy_j"] == pytest.approx(
        sum(gtx_small[f"energy_j.{node}"] for node in ("cpu0", "bus0", "gpu0"))
    )


def test_the_power_warning_names_each_node_and_the_attributes_it_lacked(
    finished_sweep: Sweep,
) -> None:
    _, rows = sweep_points(sweep=finished_sweep)

    assert rows[0]["power_missing"] == (
        "Test link (bus0): powerIdle, powerConsumptionLoad; GeForce GTX 970 (gpu0): powerIdle"
    )
    assert rows[2]["power_missing"] == "Test link (bus0): powerIdle, powerConsumptionLoad"


def test_the_sweep_csv_has_every_metric_of_every_point(
    client: APIClient, finished_sweep: Sweep
) -> None:
    response = client.get(f"/api/sweeps/{finished_sweep.pk}/results.csv")
    text = response.content.decode()
    table = list(csv.DictReader(io.StringIO(text)))

    assert text.splitlines()[0].split(",") == [
        "simulation",
        "status",
        "hardware",
        "model",
        "model_swapped",
        "gpu",
        "N",
        "overall_time_s",
        "kernel_s",
        "cpu_compute_s",
        "compute_s",
        "transfer_s",
        "wait_s",
        "memory_s",
        "link_busy_s",
        "energy_j",
        "p_success",
        "events",
        "wall_s",
        "cost_usd",
        "energy_cost_usd",
        "hardware_cost_usd",
        "cost_per_step_usd",
        "cost_per_token_usd",
        "power_w",
        "gpu_power_w",
        "energy_j.cpu0",
        "busy_s.cpu0",
        "energy_j.bus0",
        "busy_s.bus0",
        "energy_j.gpu0",
        "busy_s.gpu0",
        "power_missing",
        "model_warnings",
        "energy_accounting",
        "energy_estimated",
        "error",
        "feasible",
        "pareto",
    ]
    assert {row["energy_accounting"] for row in table} == {"whole_run"}
    assert [row["gpu"] for row in table] == [GTX, GTX, H100, H100]
    assert float(table[1]["kernel_s"]) == pytest.approx(1e8 / 13e6)
    assert table[0]["power_missing"].endswith("GeForce GTX 970 (gpu0): powerIdle")


def test_a_point_not_yet_run_has_its_gpu_and_empty_figures(user: Any, sent: Any) -> None:
    spec = {
        "snapshot": offload_snapshot(),
        "app_source": OFFLOAD_APP,
        "labels": {"CPU": 1, "GPU": 1},
        "variables": {"N": [1e6]},
    }
    sweep = sweep_launch(user=user, name="queued", spec=spec)
    axes, rows = sweep_points(sweep=sweep)

    (row,) = rows
    assert (row["gpu"], row["status"], row["kernel_s"], row["power_missing"]) == (
        GTX,
        "queued",
        None,
        "",
    )
    assert "energy_j.gpu0" not in sweep_columns(axes, rows)


def test_a_point_whose_model_ran_off_its_validated_architectures_warns_in_rest_and_table(
    user: Any, sent: list[list[int]], client: APIClient
) -> None:
    snapshot = offload_snapshot()
    snapshot["models"]["kernel"]["name"] = "Kernel (Maxwell)"
    snapshot["models"]["kernel"]["validatedArchitectures"] = ["Maxwell"]
    gtx = GpuFactory(owner=user, name=GTX, sms=13)
    AttributeFactory(component=gtx, key="computeCapability", value=5.2)
    h100 = GpuFactory(owner=user, name=H100, sms=132)
    AttributeFactory(component=h100, key="computeCapability", value=9.0)
    spec = {
        "snapshot": snapshot,
        "app_source": OFFLOAD_APP,
        "labels": {"CPU": 1, "GPU": 1},
        "variables": {"N": [1e6]},
        "hardware": {"node": "gpu0", "components": [gtx.pk, h100.pk], "model": "keep"},
    }
    sweep = sweep_launch(user=user, name="off", spec=spec)
    for child in sweep.simulations.order_by("pk"):
        run_with(child, run_simulation(**sandbox_payload(child)))
    gtx_run, h100_run = sweep.simulations.order_by("pk")

    # the run page reads the result from its download
    assert client.get(f"/api/simulations/{gtx_run.pk}/result.json").json()["warnings"] == []
    (warning,) = client.get(f"/api/simulations/{h100_run.pk}/result.json").json()["warnings"]
    assert (warning["code"], warning["node"], warning["model"]) == (
        "architecture",
        "gpu0",
        "Kernel (Maxwell)",
    )
    assert (warning["architecture"], warning["validated"]) == ("Hopper", ["Maxwell"])
    assert warning["message"].startswith("'Kernel (Maxwell)' was validated on Maxwell GPUs;")

    points = client.get(f"/api/sweeps/{sweep.pk}/").json()["points"]
    assert [(p["model"], p["model_warnings"]) for p in points] == [
        ("Kernel (Maxwell)", ""),
        (
            "Kernel (Maxwell)",
            "Kernel (Maxwell) on H100 SXM5 80GB (gpu0, Hopper): validated on Maxwell",
        ),
    ]


def test_the_rest_view_and_the_csv_flag_the_same_pareto_front_and_feasible_points(
    client: APIClient, finished_sweep: Sweep
) -> None:
    query = "?x=overall_time_s&y=gpu_power_w&constraint=gpu_power_w%20%3C%3D%20500"
    body = client.get(f"/api/sweeps/{finished_sweep.pk}/{query}").json()
    points = body["points"]
    # the H100 draws 700 W loaded: at N = 1e8 its kernel keeps it loaded most of the run
    powers = [p["gpu_power_w"] for p in points]
    assert [p["feasible"] for p in points] == [w <= 500 for w in powers]
    assert body["objectives"] == [
        {"metric": "overall_time_s", "direction": "min"},
        {"metric": "gpu_power_w", "direction": "min"},
    ]
    assert body["constraints"] == ["gpu_power_w <= 500"]
    feasible = [p for p in points if p["feasible"]]
    for point in points:
        beaten = any(
            o["overall_time_s"] <= point["overall_time_s"]
            and o["gpu_power_w"] <= point["gpu_power_w"]
            and (o["overall_time_s"], o["gpu_power_w"])
            != (point["overall_time_s"], point["gpu_power_w"])
            for o in feasible
        )
        assert point["pareto"] == (point["feasible"] and not beaten)
    assert any(p["pareto"] for p in points)

    response = client.get(f"/api/sweeps/{finished_sweep.pk}/results.csv{query}")
    table = list(csv.DictReader(io.StringIO(response.content.decode())))
    assert [(row["feasible"], row["pareto"]) for row in table] == [
        (str(p["feasible"]), str(p["pareto"])) for p in points
    ]


def test_by_default_the_front_minimises_time_and_energy(
    client: APIClient, finished_sweep: Sweep
) -> None:
    body = client.get(f"/api/sweeps/{finished_sweep.pk}/").json()
    assert [o["metric"] for o in body["objectives"]] == ["overall_time_s", "energy_j"]
    assert all(p["feasible"] for p in body["points"])
    # the GTX 970 at N = 1e8 is slower than the H100 and draws more energy over its long run
    gtx_large = body["points"][1]
    assert not gtx_large["pareto"]


@pytest.mark.parametrize(
    ("query", "field", "words"),
    [
        ("?x=speed", "x", "Unknown metric 'speed'; the sweep has: N, overall_time_s"),
        ("?y_direction=down", "y_direction", "Expected a direction, min or max"),
        ("?constraint=power%20~%20700", "constraint[0]", "Expected"),
        ("?constraint=N%3C3&constraint=wall%3C1", "constraint[1]", "Unknown metric 'wall'"),
    ],
)
def test_a_bad_objective_or_constraint_is_a_400_naming_its_field(
    client: APIClient, finished_sweep: Sweep, query: str, field: str, words: str
) -> None:
    for path in (
        f"/api/sweeps/{finished_sweep.pk}/",
        f"/api/sweeps/{finished_sweep.pk}/results.csv",
    ):
        response = client.get(path + query, HTTP_ACCEPT="application/json")
        assert response.status_code == 400
        assert words in str(response.json())
        assert field in str(response.json())
