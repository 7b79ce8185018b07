"""The kernel analyzer in the sandbox's child (simulator/analyze.py)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from simulator.analyze import ANALYZE_LIMITS, KernelAnalysisError, analyze_in_sandbox

ROOT = Path(__file__).resolve().parents[2]
LISTING3 = (ROOT / "examples" / "kernels" / "listing3.sass").read_text()


def test_listing3_in_the_child_gives_23_plus_4a_and_384_bytes() -> None:
    result = analyze_in_sandbox(language="sass", source=LISTING3, arch="sm_52", trips={"a": 2})
    analysis = result["analysis"]
    assert analysis["parameters"]["INS_cuda"] == "23 + 4a"
    assert analysis["parameters"]["GMem_bytes"] == "384"
    assert analysis["parameters"]["Lat_bound"] == "942 + 24a"
    assert analysis["values"]["Lat_bound"] == 942 + 48
    assert result["svg"].lstrip().startswith("<svg")


def test_an_analyzer_error_comes_back_with_its_line() -> None:
    with pytest.raises(KernelAnalysisError) as caught:
        analyze_in_sandbox(language="sass", source="MOV R1, R2;\nFOO R1;", arch="sm_52")
    assert caught.value.line == 2
    assert caught.value.message.startswith("unknown opcode 'FOO' on line 2")


def test_cuda_without_an_architecture_is_refused() -> None:
    with pytest.raises(KernelAnalysisError, match="architecture to compile for"):
        analyze_in_sandbox(language="cuda", source="__global__ void k() {}")


def test_the_childs_limits_stop_a_runaway_analysis() -> None:
    tight = ANALYZE_LIMITS.replace(wall_s=0.001)
    with pytest.raises(KernelAnalysisError, match="the analyzer stopped"):
        analyze_in_sandbox(language="sass", source=LISTING3, arch="sm_52", limits=tight)


def test_the_parent_side_loads_neither_the_analyzer_nor_numpy() -> None:
    code = (
        "import sys, simulator.analyze; "
        "print(any(m.startswith(('numpy', 'simulator.analyzer')) for m in sys.modules))"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "False"
