"""The one switch between the simulator's C cores and their Python references.

Every hot loop of the simulator exists twice: a Python reference, which states the rules and
runs everywhere, and a C copy that gives the same results faster where it is built
(`python -m simulator.build_speedups`, which `./studio setup` runs):

    C module                   what it serves                      Python reference
    simulator._speedups        the engine's core, mailboxes,       simulator.engine, api,
                               FIFOs, sim calls, messages, usage,  platform, results,
                               the attribute guard                 sandbox.restricted
    simulator._cachesim        the cache chain and tree            simulator.models.cache,
                                                                   models.coherence
    simulator._v8results       V8's results handed back            simulator.shallow

This module alone decides which runs, as markupsafe and msgpack do: it reads
PARASIM_PURE_PYTHON once (set: the Python references everywhere) and imports each C module
that is built and usable. A module with a C core names its Python reference and asks
`choose` (or `choose_in`) for what to build on; none reads the variable or tests whether a C
module exists. Each C part names its Python reference and its differential test at its top.
"""

from __future__ import annotations

import os
from types import ModuleType
from typing import Any, TypeVar

__all__ = [
    "PURE_PYTHON",
    "attribute_guard",
    "cachesim",
    "choose",
    "choose_in",
    "speedups",
    "v8results",
]

PURE_PYTHON = bool(os.environ.get("PARASIM_PURE_PYTHON"))
"""Whether PARASIM_PURE_PYTHON asks for the Python references everywhere (read here only)."""

_T = TypeVar("_T")


# Each C module that is built (an ImportError: it is not).
try:
    from simulator import _speedups as _built_speedups
except ImportError:
    _built_speedups = None
try:
    from simulator import _cachesim as _built_cachesim
except ImportError:
    _built_cachesim = None
try:
    from simulator import _v8results as _built_v8results
except ImportError:
    _built_v8results = None

speedups: Any = None
"""`simulator._speedups` (the engine's core, the sim calls, messages, usage, the attribute
guard and the chunk cache) when in use, else None."""
cachesim: Any = None
"""`simulator._cachesim` (the cores of `CacheHierarchy` and `CacheTree`) when in use, else None."""
v8results: Any = None
"""`simulator._v8results` (V8's results handed back in C) when in use, else None."""

if not PURE_PYTHON:
    # the engine's core serves the main interpreter only (its allocator hook and its types are
    # the process's): a subinterpreter runs the Python references
    if _built_speedups is not None and _built_speedups.in_main_interpreter():
        speedups = _built_speedups
    cachesim = _built_cachesim
    v8results = _built_v8results


def choose(reference: _T, name: str) -> _T:
    """Return the engine's C core's `name` when it is in use, else the Python `reference`."""
    return choose_in(speedups, reference, name)


def choose_in(module: ModuleType | None, reference: _T, name: str) -> _T:
    """Return `module`'s `name` when `module` (one of this module's C modules) is in use,
    else the Python `reference`."""
    if module is None:
        return reference
    chosen: _T = getattr(module, name)
    return chosen


def attribute_guard(reference: Any, inspect_attributes: frozenset[str]) -> Any:
    """Return the attribute guard of application models: the C core's copy of `reference`
    when the core is in use (it answers the reads the guard lets through and passes every
    other call to `reference`, whose rules and messages stay in one place), else
    `reference`."""
    if speedups is None:
        return reference
    speedups.set_attribute_guard(reference, inspect_attributes)
    return speedups.guarded_getattr
