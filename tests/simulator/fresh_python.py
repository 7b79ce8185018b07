"""Python code run in a fresh interpreter at the project's root, for tests of process-wide
state (CPU affinity, resource limits, V8 isolates) that must not change the test process."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

PROJECT_ROOT = Path(__file__).resolve().parents[2]


def run_code(code: str, **environment: str) -> subprocess.CompletedProcess[str]:
    """Return the finished `python -c code`, with `environment` added to this one's."""
    return subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        cwd=PROJECT_ROOT,
        env={**os.environ, **environment},
        check=False,
    )
