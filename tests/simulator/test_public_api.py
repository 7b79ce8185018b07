"""The simulator's public API (simulator/__init__.py) and the Result shape it returns."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any, get_type_hints

import pytest

import simulator
from simulator.results import EngineStats, ProcessRow, Result

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "merpsys_gtx970"
VARIABLES = {"N": 1_000_000, "blockSz": 256, "computeIntensity": 1, "occupancy": 64}


@pytest.mark.parametrize("name", simulator.__all__)
def test_every_exported_name_imports(name: str) -> None:
    namespace: dict[str, Any] = {}
    exec(f"from simulator import {name}", namespace)
    assert namespace[name] is getattr(simulator, name)


def test_the_docstring_example_runs() -> None:
    app_source = (EXAMPLE / "app.py").read_text()
    labels = {"CPU": 1, "GPU": 1}

    snapshot = simulator.load_snapshot(json.loads((EXAMPLE / "snapshot.json").read_text()))
    result = simulator.run_simulation(snapshot, app_source, labels=labels, variables=VARIABLES)

    assert result["status"] == "finished"
    assert "simulator.run_simulation(snapshot, app_source" in (simulator.__doc__ or "")


def test_importing_the_package_loads_none_of_its_modules() -> None:
    code = (
        "import sys, simulator; print(sorted(m for m in sys.modules if m.startswith('simulator')))"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "['simulator']"


def test_a_real_runs_result_has_exactly_the_keys_of_the_result_type() -> None:
    snapshot = json.loads((EXAMPLE / "snapshot.json").read_text())
    app_source = (EXAMPLE / "app.py").read_text()

    result = simulator.run_simulation(
        snapshot, app_source, labels={"CPU": 1, "GPU": 1}, variables=VARIABLES
    )

    # memory: only with a memory hierarchy; cost: every run's since issue 44, optional for
    # the results stored before; failure_injection, uncertainty: only a run asking for it;
    # links: only a run with flow links; collectives: only a run with sim.allreduce & co;
    # symmetry: only a run that asked for symmetric collectives
    optional = Result.__optional_keys__
    assert set(result) == set(Result.__required_keys__) | {"cost"}
    assert optional == {
        "memory",
        "cost",
        "failure_injection",
        "uncertainty",
        "links",
        "collectives",
        "symmetry",
    }
    assert set(get_type_hints(Result)) == Result.__required_keys__ | optional
    for process in result["processes"]:
        assert set(process) == set(get_type_hints(ProcessRow))
    assert set(result["stats"]) == set(get_type_hints(EngineStats))
    hints = get_type_hints(Result)
    component_keys = set(get_type_hints(hints["components"].__args__[0]))
    for component in result["components"]:
        assert set(component) == component_keys
    timeline_keys = set(get_type_hints(hints["timeline"].__args__[0]))
    for entry in result["timeline"]:
        assert timeline_keys <= set(entry)
    for key in ("kernels", "rooflines", "power"):
        row_keys = set(get_type_hints(hints[key].__args__[0]))
        assert result[key] and all(set(row) == row_keys for row in result[key])
    assert set(result["energy_j"]) == set(get_type_hints(hints["energy_j"]))
    assert set(result["reliability"]) == set(get_type_hints(hints["reliability"]))
