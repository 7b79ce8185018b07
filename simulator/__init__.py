"""ParaSim Studio's simulator: a discrete-event engine for MERPSYS-style application models.

Plain Python, no Django. The web side hands it a self-contained system snapshot; the CLI
(`python -m simulator`) runs the same code. What a user of the library needs::

    import simulator
    snapshot = simulator.load_snapshot(json.load(open("snapshot.json")))
    result = simulator.run_simulation(snapshot, app_source, labels={"CPU": 1}, variables={})

`run_simulation` runs trusted code in this process; `run_sandboxed` runs an untrusted model
in a limited child process (its payload: run_simulation's keywords, the snapshot as JSON
data) and `Limits` bounds it. Both return a `Result`; every failure is a `SimulationError`.
`sweep_points`, `axis_values` and `swap_hardware` expand a sweep as the CLI and the web side
do.

The names are loaded from their modules when first used (PEP 562): importing one module of
the package (the sandbox's launcher, the JavaScript names) must not load the rest.
"""

from __future__ import annotations

import importlib

# `typing.TYPE_CHECKING`, without importing `typing` (mypy reads the name alone): `python -m
# simulator run` imports this package before it starts its sandbox child (issue 16, start-up).
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from simulator.errors import (
        DeadlockError,
        LaunchError,
        ModelEvaluationError,
        SandboxCrashError,
        SandboxLimitError,
        SimulationError,
        SnapshotError,
        UserCodeError,
    )
    from simulator.results import Result
    from simulator.runner import run_simulation
    from simulator.sandbox.parent import Limits, run_sandboxed
    from simulator.snapshot import SystemSnapshot, load_snapshot
    from simulator.sweep import axis_values, swap_hardware, sweep_points

__version__ = "0.1.0"
ENGINE_VERSION = __version__

__all__ = [
    "ENGINE_VERSION",
    "DeadlockError",
    "LaunchError",
    "Limits",
    "ModelEvaluationError",
    "Result",
    "SandboxCrashError",
    "SandboxLimitError",
    "SimulationError",
    "SnapshotError",
    "SystemSnapshot",
    "UserCodeError",
    "__version__",
    "axis_values",
    "load_snapshot",
    "run_sandboxed",
    "run_simulation",
    "swap_hardware",
    "sweep_points",
]

_MODULE_OF = {
    "DeadlockError": "simulator.errors",
    "LaunchError": "simulator.errors",
    "ModelEvaluationError": "simulator.errors",
    "SandboxCrashError": "simulator.errors",
    "SandboxLimitError": "simulator.errors",
    "SimulationError": "simulator.errors",
    "SnapshotError": "simulator.errors",
    "UserCodeError": "simulator.errors",
    "Result": "simulator.results",
    "run_simulation": "simulator.runner",
    "Limits": "simulator.sandbox.parent",
    "run_sandboxed": "simulator.sandbox.parent",
    "SystemSnapshot": "simulator.snapshot",
    "load_snapshot": "simulator.snapshot",
    "axis_values": "simulator.sweep",
    "swap_hardware": "simulator.sweep",
    "sweep_points": "simulator.sweep",
}


def __getattr__(name: str) -> Any:
    """Return an exported name, importing its module on first use."""
    module = _MODULE_OF.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted([*globals(), *__all__])
