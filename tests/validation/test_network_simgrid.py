"""The flow-level network model (simulator.flows) against SimGrid 3.32 on identical platforms.

SimGrid's completion times were computed by validation/network/simgrid_flows.py (its command
and SimGrid's version are in the JSON) and are kept as test vectors; SimGrid is not needed
here. Each scenario runs through `run_simulation` (validation/network/parasim_flows.py):
within 0.1 % of SimGrid's CM02 and within 1 % of its LV08, flow by flow.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

from tests.simulator.fresh_python import run_code
from validation.network.parasim_flows import by_name, run, run_on_switch
from validation.network.report import report

VECTORS = json.loads(
    (
        Path(__file__).resolve().parents[2] / "validation" / "network" / "simgrid_flows.json"
    ).read_text()
)
TOLERANCE = {"CM02": 1e-3, "LV08": 1e-2}
CASES = [(model, name) for model, table in VECTORS["completion_s"].items() for name in table]


def test_the_vectors_cover_every_scenario_under_both_models() -> None:
    names = set(by_name())
    assert VECTORS["simgrid"].startswith("3.")
    assert len(names) >= 30
    for model in TOLERANCE:
        assert set(VECTORS["completion_s"][model]) == names


@pytest.mark.parametrize(("model", "name"), CASES)
def test_completion_times_equal_simgrids(model: str, name: str) -> None:
    scenario = by_name()[name]
    expected = VECTORS["completion_s"][model][name]

    got, _ = run(scenario, model)

    assert len(got) == len(expected) == len(scenario["flows"])
    for flow, (mine, theirs) in enumerate(zip(got, expected, strict=True)):
        assert mine == pytest.approx(theirs, rel=TOLERANCE[model]), (name, flow)


SWITCH_CASES = [
    (model, name, kind)
    for model, name in CASES
    if name.startswith("switch-")
    for kind in ("switch", "nvswitch")
]


@pytest.mark.parametrize(("model", "name", "kind"), SWITCH_CASES)
def test_a_topology_template_s_switch_is_simgrid_s_star_of_one_link_per_port(
    model: str, name: str, kind: str
) -> None:
    # SimGrid draws a non-blocking switch as a star: a link per host, up and down. ParaSim's
    # switch of a template (simulator/topology.py SWITCH_ROLES) has a port per endpoint,
    # entered and left by each flow: the same constraints, so the same completion times.
    expected = VECTORS["completion_s"][model][name]
    got = run_on_switch(by_name()[name], model, kind)
    assert len(got) == len(expected)
    for flow, (mine, theirs) in enumerate(zip(got, expected, strict=True)):
        assert mine == pytest.approx(theirs, rel=TOLERANCE[model]), (name, flow)


def test_the_switch_scenarios_share_ports() -> None:
    """A host's seven sends share its port: the fan-out's last flow ends after all seven
    flows' bytes crossed one 2 GB/s port, not after its own alone."""
    scenario = by_name()["switch-fan-out-7"]
    total = sum(f["size"] for f in scenario["flows"])
    assert max(VECTORS["completion_s"]["CM02"]["switch-fan-out-7"]) == pytest.approx(
        6e-6 + total / 2e9, rel=1e-9
    )
    assert len(SWITCH_CASES) == 5 * 2 * 2


def test_sharing_matters_in_the_vectors() -> None:
    """The scenarios are not all answered by a lone flow's time: in the 64-flow dumbbell the
    last flow ends far later than its size over the bottleneck alone would take."""
    scenario = by_name()["dumbbell-64"]
    alone = 20e-6 + max(f["size"] for f in scenario["flows"]) / 1e9
    assert max(VECTORS["completion_s"]["CM02"]["dumbbell-64"]) > 10 * alone


def test_the_link_figures_add_up() -> None:
    """Per link: the bytes that crossed it, its peak and mean utilisation and the time it was
    saturated, in the run's result."""
    scenario = by_name()["dumbbell-2"]
    times, result = run(scenario, "CM02")
    links = {link["link"]: link for link in result["links"]}
    bottleneck = links["bottleneck[0] R1->R2"]

    assert bottleneck["bytes"] == pytest.approx(sum(f["size"] for f in scenario["flows"]))
    assert bottleneck["peak_utilisation"] == pytest.approx(1.0)
    # saturated from the end of the latency until the last byte
    assert bottleneck["saturated_s"] == pytest.approx(max(times) - 20e-6)
    overall = result["overall_time_s"]
    assert bottleneck["mean_utilisation"] == pytest.approx((max(times) - 20e-6) / overall)
    access = links["la0[0] a0->R1"]
    assert access["bytes"] == scenario["flows"][0]["size"]
    # 0.5 GB/s of 10 GB/s: both flows start together, so no instant sees one alone
    assert access["peak_utilisation"] == pytest.approx(0.05)
    assert access["saturated_s"] == 0.0
    assert "R2->R1" not in " ".join(links)  # no flow went back


def test_the_python_references_give_the_same_times() -> None:
    """With PARASIM_PURE_PYTHON=1 (no C core) the times are the C core run's, bit for bit."""
    name = "fattree-4x4-arrivals"
    code = (
        "import json; from validation.network.parasim_flows import by_name, run; "
        f"print(json.dumps(run(by_name()[{name!r}], 'LV08')[0]))"
    )
    child = run_code(code, PARASIM_PURE_PYTHON="1")
    assert child.returncode == 0, child.stderr
    assert json.loads(child.stdout) == run(by_name()[name], "LV08")[0]
    assert not any(math.isnan(t) for t in json.loads(child.stdout))


def test_the_committed_report_is_the_reports_program_output() -> None:
    committed = Path(__file__).resolve().parents[2] / "docs" / "validation" / "network.md"
    assert committed.read_text() == report()
