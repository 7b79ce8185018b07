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

What a child may run is registered here (`child_entry`): a function registered where it is
defined, under its address "module:function": running a simulation
(`simulator.runner:run_simulation`), checking or test-running a computational model
(`simulator.evaluate`), running an application model once
(`simulator.sandbox.restricted:execute_user_code`). The parent names the entry by its address
(`run_sandboxed(..., _entry=...)`); the child imports the module, which registers it, and
runs only what is registered (`entry_for`). The hooks tell the child what to prepare before
it drops privileges and sets its limits: the process itself (`prepare_process`, once, as it
starts), whether V8 must be loaded (`needs_v8`; without the hook, always), the address space
reserved beyond what is used (`address_space_reserved`, added to the data limit) and the
modules imported lazily (`modules_needed`).

The other names below are loaded from their modules when first used (PEP 562): `python -m
simulator run` imports `simulator.sandbox.launch` before anything else, to start its child
at once, and importing this package must not load RestrictedPython or the parent's side.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Iterable, Mapping
from typing import TYPE_CHECKING, Any, Protocol, TypeVar, overload

if TYPE_CHECKING:
    from simulator.sandbox.child import DEFAULT_FILENAME
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
    "ALLOWED_MODULES": "restricted",
    "DEFAULT_FILENAME": "child",
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


Payload = Mapping[str, Any]


class Progress(Protocol):
    """A run's progress callback: the fraction done (0..1) and, from an entry that knows it
    (the runner), the simulated time reached [s]. Never called by two threads at once."""

    def __call__(self, fraction: float, simulated_s: float | None = None, /) -> None: ...


F = TypeVar("F", bound=Callable[..., Any])

MSG_UNKNOWN_ENTRY = "{address!r} is not a registered child entry (simulator.sandbox)"


class ChildEntry:
    """A registered entry: the function the child calls with the payload's keywords (and
    `progress`), and its preparation hooks (None: the default each method names)."""

    __slots__ = (
        "address",
        "address_space_reserved",
        "function",
        "modules_needed",
        "needs_v8",
        "prepare",
    )

    def __init__(
        self,
        address: str,
        function: Callable[..., Any],
        *,
        prepare: Callable[[], object] | None = None,
        needs_v8: Callable[[Payload], bool] | None = None,
        address_space_reserved: Callable[[Payload], int] | None = None,
        modules_needed: Callable[[Payload], Iterable[str]] | None = None,
    ) -> None:
        self.address = address
        self.function = function
        self.prepare = prepare
        self.needs_v8 = needs_v8
        self.address_space_reserved = address_space_reserved
        self.modules_needed = modules_needed

    def prepare_process(self) -> None:
        """Prepare the child for this entry's runs, before its run is known (nothing
        without a hook)."""
        if self.prepare is not None:
            self.prepare()

    def wants_v8(self, payload: Payload) -> bool:
        """Return whether the child loads V8 before the run (always, without a hook)."""
        return self.needs_v8 is None or self.needs_v8(payload)

    def reserved_bytes(self, payload: Payload) -> int:
        """Return the address space the run reserves without using it (0 without a hook)."""
        hook = self.address_space_reserved
        return int(hook(payload)) if hook is not None else 0

    def modules(self, payload: Payload) -> tuple[str, ...]:
        """Return the modules to import before the privilege drop (none without a hook)."""
        return tuple(self.modules_needed(payload)) if self.modules_needed is not None else ()


ENTRIES: dict[str, ChildEntry] = {}


def entry_address(function: Callable[..., Any]) -> str:
    """Return the address "module:function" of a function."""
    return f"{function.__module__}:{function.__name__}"


@overload
def child_entry(function: F, /) -> F: ...


@overload
def child_entry(
    *,
    prepare: Callable[[], object] | None = None,
    needs_v8: Callable[[Payload], bool] | None = None,
    address_space_reserved: Callable[[Payload], int] | None = None,
    modules_needed: Callable[[Payload], Iterable[str]] | None = None,
) -> Callable[[F], F]: ...


def child_entry(
    function: Callable[..., Any] | None = None,
    /,
    *,
    prepare: Callable[[], object] | None = None,
    needs_v8: Callable[[Payload], bool] | None = None,
    address_space_reserved: Callable[[Payload], int] | None = None,
    modules_needed: Callable[[Payload], Iterable[str]] | None = None,
) -> Any:
    """Register `function` as a child entry under its address; return it unchanged."""

    def register(function: F) -> F:
        address = entry_address(function)
        ENTRIES[address] = ChildEntry(
            address,
            function,
            prepare=prepare,
            needs_v8=needs_v8,
            address_space_reserved=address_space_reserved,
            modules_needed=modules_needed,
        )
        return function

    return register(function) if function is not None else register


def entry_for(address: str) -> ChildEntry:
    """Return the entry registered at `address`, importing its module (KeyError: none)."""
    if address not in ENTRIES:
        importlib.import_module(address.partition(":")[0])
    try:
        return ENTRIES[address]
    except KeyError:
        raise KeyError(MSG_UNKNOWN_ENTRY.format(address=address)) from None


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
