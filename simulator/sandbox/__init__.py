"""Running untrusted application models: restricted compilation and a limited child process.

Two layers, so that a hole in one is caught by the other:

1. `restricted`: the code is compiled by RestrictedPython and runs with restricted builtins,
   guarded attribute access, guarded writes, an import allow-list and guarded integer
   operators.
2. `parent` and `child`: the whole simulation runs in a child process with CPU-time, data,
   file-size, process-count and core-file limits, an empty environment, a fresh temporary
   directory, a wall-clock timeout, capped output and result, and, when started as root, a
   user id of its own. `launch` starts children ahead of their runs (and a spare per
   worker).

`run_sandboxed` and `Limits` are what the web side and the CLI call; `compile_user_code`,
`user_globals` and `user_error_from_exception` are what the runner (inside the child) uses.

What a child may run is registered in `entries` (`child_entry`): a function registered where it is
defined, under its address "module:function": running a simulation
(`simulator.runner:run_simulation`), checking or test-running a computational model
(`simulator.evaluate`), running an application model once
(`simulator.sandbox.restricted:execute_user_code`). The parent names the entry by its address
(`run_sandboxed(..., _entry=...)`); the child imports the module, which registers it, and
runs only what is registered (`entry_for`). The hooks tell the child what to prepare before
it drops privileges and sets its limits: the process itself (`prepare_process`, once, as it
starts), the payload as the other hooks and the run read it (`parse`: the runner's snapshot
parsed once, simulator.sandbox.preparation), whether V8 must be loaded and for how many contexts (`needs_v8`; without the hook, always,
for any number), the address space
reserved beyond what is used (`address_space_reserved`, added to the data limit), the
modules imported lazily (`modules_needed`), and what a child waiting for its run may do ahead
of it (`warm_up`: the runner compiles a sample model).

Every name below is loaded from its module when first used (PEP 562): `python -m simulator
run` imports `simulator.sandbox.served` before anything else (to be served by its pool's
daemon), then, when none serves it, `simulator.sandbox.launch`, to start its child at once;
importing this package must load nothing (not even `typing`: issue 16, start-up); the
registry lives in `simulator.sandbox.entries`.
"""

from __future__ import annotations

import importlib

# `typing.TYPE_CHECKING`, without importing `typing` (mypy reads the name alone).
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from simulator.sandbox.entries import (
        ENTRIES,
        ChildEntry,
        Progress,
        child_entry,
        entry_address,
        entry_for,
    )
    from simulator.sandbox.launch import SpareChild, StartedChild, start_child
    from simulator.sandbox.parent import MSG_WALL, Limits, crash_line, run_sandboxed
    from simulator.sandbox.restricted import (
        ALLOWED_MODULES,
        MAX_INT_BITS,
        compile_user_code,
        execute_user_code,
        printed_output,
        user_error_from_exception,
        user_globals,
    )
    from simulator.sandbox.wire import DEFAULT_FILENAME

__all__ = [
    "ALLOWED_MODULES",
    "DEFAULT_FILENAME",
    "ENTRIES",
    "MAX_INT_BITS",
    "MSG_WALL",
    "ChildEntry",
    "Limits",
    "Progress",
    "SpareChild",
    "StartedChild",
    "child_entry",
    "compile_user_code",
    "crash_line",
    "entry_address",
    "entry_for",
    "execute_user_code",
    "printed_output",
    "run_sandboxed",
    "start_child",
    "user_error_from_exception",
    "user_globals",
]

_MODULE_OF = {
    "ENTRIES": "entries",
    "ChildEntry": "entries",
    "Progress": "entries",
    "child_entry": "entries",
    "entry_address": "entries",
    "entry_for": "entries",
    "ALLOWED_MODULES": "restricted",
    "DEFAULT_FILENAME": "wire",
    "MAX_INT_BITS": "restricted",
    "MSG_WALL": "parent",
    "Limits": "parent",
    "SpareChild": "launch",
    "StartedChild": "launch",
    "compile_user_code": "restricted",
    "crash_line": "parent",
    "execute_user_code": "restricted",
    "printed_output": "restricted",
    "run_sandboxed": "parent",
    "start_child": "launch",
    "user_error_from_exception": "restricted",
    "user_globals": "restricted",
}


def __getattr__(name: str) -> Any:
    """Return an exported name, importing its module on first use."""
    module = _MODULE_OF.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f"{__name__}.{module}"), name)
    globals()[name] = value  # later lookups (and monkeypatching) see a plain attribute
    return value


def __dir__() -> list[str]:
    return sorted([*globals(), *__all__])
