"""The kit's CUDA programs compile with the nvcc on PATH (skipped where there is none)."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

VALIDATION = Path(__file__).resolve().parents[2] / "validation"


@pytest.mark.slow
@pytest.mark.parametrize("program", ["saxpy2", "gpuprofile"])
def test_the_kit_compiles_with_nvcc(tmp_path: Path, program: str) -> None:
    if shutil.which("nvcc") is None:
        pytest.skip("nvcc is not on PATH: the CUDA harness cannot be compiled here")
    newest = subprocess.run(["nvcc", "--list-gpu-code"], capture_output=True, text=True, check=True)
    archs = [line.removeprefix("sm_") for line in newest.stdout.split() if line.startswith("sm_")]
    wanted = [a for a in ("52", "61", "70", "75", "80", "86", "89", "90") if a in archs]
    assert wanted, "this nvcc supports none of the architectures the kit targets"
    binary = tmp_path / program
    # One architecture keeps the test short; build.sh builds them all.
    result = subprocess.run(
        [str(VALIDATION / "build.sh"), str(binary), str(VALIDATION / f"{program}.cu")],
        capture_output=True,
        text=True,
        env={"PATH": shutil.os.environ["PATH"], "ARCHS": wanted[-1]},
        check=False,
        timeout=240,
    )
    assert result.returncode == 0, result.stderr
    assert binary.is_file()
    assert "Used" in result.stderr and "registers" in result.stderr  # -Xptxas -v output
