"""JS_RESERVED (simulator.js_names): readable by hwdb without loading V8."""

from __future__ import annotations

import subprocess
import sys

from simulator import shallow
from simulator.js_names import JS_RESERVED


def test_importing_the_reserved_names_does_not_import_mini_racer() -> None:
    code = "import sys, simulator.js_names; print('py_mini_racer' in sys.modules)"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "False"


def test_the_shallow_runtime_refuses_the_same_names() -> None:
    assert shallow.JS_RESERVED is JS_RESERVED
    assert {"this", "hw", "params", "globalThis"} <= JS_RESERVED
