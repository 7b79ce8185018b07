"""A GPU model evaluated outside the architectures it was validated on says so in the run's
result (issue 38): Volkov's model (validated on Maxwell and Pascal) on an H100 or a B200."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path
from typing import Any

import pytest

from simulator.errors import SnapshotError
from simulator.models import builtin_models
from simulator.runner import run_simulation
from simulator.snapshot import load_snapshot
from validation.analyze import load_record

ROOT = Path(__file__).resolve().parents[2]
VOLKOV = next(m for m in builtin_models() if m.name == "Volkov GPU")
CURRENT = next(m for m in builtin_models() if m.name == "GPU kernel (current architectures)")
# saxpy2 of 000 with N = 1e5 (the tour's kernel at a small size)
APP = """
sim.computation({"CUDACoreInstructions": 27, "issuedInstructions": 27,
                 "GMEMBytesTransferred": 384, "latencyBound": 966,
                 "gridSize": 391, "blockSize": 256, "occupancy": 64})
"""


def one_gpu(
    gpu: str, model: Any = VOLKOV, *, recommended: str = "", kernel_mode: str = "analytic"
) -> dict[str, Any]:
    """Return a system of one seeded GPU (by name) running `model` (a built-in)."""
    hardware: dict[str, Any] = {"type": "GPU", "name": gpu, "attributes": load_record(gpu)}
    if recommended:
        hardware["recommendedModel"] = recommended
    node = {"id": "gpu0", "name": "GPU", "hardware": "gpu", "model": "m", "labels": {"G": 1}}
    if kernel_mode != "analytic":
        node["kernelMode"] = kernel_mode
    return {
        "name": "one GPU",
        "hardware": {"gpu": hardware},
        "models": {
            "m": {
                "name": model.name,
                "language": "javascript",
                "source": model.source,
                "validatedArchitectures": list(model.validated_architectures),
            }
        },
        "nodes": [node],
        "edges": [],
    }


def run(system: dict[str, Any]) -> dict[str, Any]:
    return run_simulation(system, textwrap.dedent(APP), labels={"G": 1}, variables={})


def test_the_builtin_gpu_models_declare_where_they_were_validated() -> None:
    assert VOLKOV.validated_architectures == ("Maxwell", "Pascal")
    assert CURRENT.validated_architectures == ("Hopper",)
    # a model that computes no kernel times claims nothing
    assert next(m for m in builtin_models() if m.name == "PCIe link").validated_architectures == ()


@pytest.mark.parametrize(
    ("gpu", "family", "cc"),
    [("H100 SXM5 80GB", "Hopper", 9.0), ("B200 SXM 180GB", "Blackwell", 10.0)],
)
def test_volkov_on_hopper_or_blackwell_warns(gpu: str, family: str, cc: float) -> None:
    result = run(one_gpu(gpu, recommended=CURRENT.name))
    (warning,) = result["warnings"]
    assert warning["code"] == "architecture"
    assert (warning["node"], warning["hardware"], warning["model"]) == ("gpu0", gpu, "Volkov GPU")
    assert (warning["architecture"], warning["compute_capability"]) == (family, cc)
    assert warning["validated"] == ["Maxwell", "Pascal"]
    assert warning["recommended"] == CURRENT.name
    assert warning["message"] == (
        f"'Volkov GPU' was validated on Maxwell and Pascal GPUs; {gpu!r} is {family} "
        f"(compute capability {cc:.1f}), so its times there are an extrapolation. "
        f"The GPU record recommends {CURRENT.name!r}."
    )
    # the model still runs: the figures are there to be read with the warning
    assert result["overall_time_s"] > 0


@pytest.mark.parametrize(
    "gpu", ["GeForce GTX 970", "GeForce GTX TITAN X (Maxwell)", "GeForce GTX 1070"]
)
def test_volkov_on_the_gpus_of_its_paper_does_not_warn(gpu: str) -> None:
    assert run(one_gpu(gpu))["warnings"] == []


def test_the_current_model_warns_off_hopper_and_not_on_it() -> None:
    # (a model V8 evaluates says so in a warning of its own, code "javascript")
    def architecture(result: dict[str, Any]) -> list[dict[str, Any]]:
        return [w for w in result["warnings"] if w["code"] == "architecture"]

    assert architecture(run(one_gpu("H200 SXM 141GB", CURRENT))) == []
    (warning,) = architecture(run(one_gpu("B200 SXM 180GB", CURRENT)))
    assert warning["architecture"] == "Blackwell" and warning["validated"] == ["Hopper"]


def test_a_gpu_of_no_known_architecture_warns_and_one_without_a_cc_cannot_be_judged() -> None:
    system = one_gpu("GeForce GTX 970")
    system["hardware"]["gpu"]["attributes"]["computeCapability"] = 11.0
    (warning,) = run(system)["warnings"]
    assert warning["architecture"] is None and warning["compute_capability"] == 11.0
    assert "has compute capability 11.0, of no known architecture" in warning["message"]
    # the paper's own GTX 970 record (Fig. 5.2) has no computeCapability: nothing to judge
    del system["hardware"]["gpu"]["attributes"]["computeCapability"]
    assert run(system)["warnings"] == []


def test_a_model_that_claims_nothing_or_a_kernel_mode_does_not_warn() -> None:
    system = one_gpu("H100 SXM5 80GB")
    del system["models"]["m"]["validatedArchitectures"]
    assert run(system)["warnings"] == []
    # the waves mode times the kernels itself: the node's model is not what is extrapolated
    assert run(one_gpu("H100 SXM5 80GB", kernel_mode="waves"))["warnings"] == []


def test_a_snapshot_names_validated_architectures_by_known_family() -> None:
    system = one_gpu("GeForce GTX 970")
    system["models"]["m"]["validatedArchitectures"] = ["ada lovelace", "Hopper", "Ada"]
    assert load_snapshot(system).models["m"].validated_architectures == ("Ada", "Hopper")
    system["models"]["m"]["validatedArchitectures"] = ["Maxwell", "Rubin"]
    with pytest.raises(SnapshotError) as caught:
        load_snapshot(system)
    (message,) = caught.value.errors["models.m.validatedArchitectures[1]"]
    assert message.startswith("Unknown GPU architecture family 'Rubin'; expected one of Fermi")
    system["models"]["m"]["validatedArchitectures"] = "Maxwell"
    with pytest.raises(SnapshotError) as caught:
        load_snapshot(system)
    assert "models.m.validatedArchitectures" in caught.value.errors


def test_the_papers_listing_4_model_declares_maxwell_and_pascal() -> None:
    snapshot = json.loads((ROOT / "examples/merpsys_gtx970/snapshot.json").read_text("utf-8"))
    system = load_snapshot(snapshot)
    assert system.models["volkov_gtx970"].validated_architectures == ("Maxwell", "Pascal")
    assert system.hardware["gtx970"].recommended_model == "Volkov GPU"
    # Fig. 5.2's record as printed (no computeCapability): the paper's run carries no warning
    app = (ROOT / "examples/merpsys_gtx970/app.py").read_text("utf-8")
    variables = {"N": 10**7, "blockSz": 256, "computeIntensity": 1, "occupancy": 64}
    result = run_simulation(snapshot, app, labels={"CPU": 1, "GPU": 1}, variables=variables)
    assert result["warnings"] == []
    assert round(result["overall_time_s"] * 1e3, 3) == 11.998
