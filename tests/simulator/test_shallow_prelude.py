"""The JavaScript prelude of every model context (simulator/shallow_prelude.js) is a file of
its own: packaged with the simulator and linted with the front end's ESLint configuration."""

from __future__ import annotations

import os
import shutil
import subprocess
import tomllib
from fnmatch import fnmatch
from pathlib import Path

import pytest

from simulator import shallow

ROOT = Path(__file__).resolve().parents[2]
PRELUDE = ROOT / "simulator" / "shallow_prelude.js"
ESLINT = ROOT / "frontend" / "node_modules" / ".bin" / "eslint"


def test_the_prelude_is_read_from_its_file() -> None:
    assert PRELUDE.read_text(encoding="utf-8") == shallow._PRELUDE
    assert "__parasim_bind" in shallow._PRELUDE


def test_the_prelude_is_package_data_of_the_simulator() -> None:
    config = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    patterns = config["tool"]["setuptools"]["package-data"]["simulator"]

    assert any(fnmatch(PRELUDE.name, pattern) for pattern in patterns)


@pytest.mark.skipif(
    not ESLINT.exists() or shutil.which("node") is None, reason="the front end is not installed"
)
def test_the_prelude_passes_the_front_ends_eslint_rules() -> None:
    completed = subprocess.run(
        [str(ESLINT), "--config", "frontend/eslint.config.js", "--max-warnings=0", str(PRELUDE)],
        cwd=ROOT,
        # react's version is detected from frontend/node_modules, which the root does not see
        env={**os.environ, "NODE_PATH": str(ROOT / "frontend" / "node_modules")},
        capture_output=True,
        text=True,
        timeout=120,
    )

    assert completed.returncode == 0, completed.stdout + completed.stderr
