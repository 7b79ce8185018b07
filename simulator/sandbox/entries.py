"""The registry of what a sandbox child may run (simulator.sandbox, "What a child may run").

A function is registered where it is defined (`child_entry`), under its address
"module:function"; the child imports the entry's module and runs only what is registered
(`entry_for`). Kept out of the package's `__init__` so that `python -m simulator run`, which
imports `simulator.sandbox.launch` before anything else, does not load `typing` first.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Iterable, Mapping
from typing import Any, Protocol, TypeVar, overload

__all__ = [
    "ENTRIES",
    "ChildEntry",
    "Payload",
    "Progress",
    "child_entry",
    "entry_address",
    "entry_for",
]

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
        "parse",
        "prepare",
        "warm_up",
    )

    def __init__(
        self,
        address: str,
        function: Callable[..., Any],
        *,
        prepare: Callable[[], object] | None = None,
        parse: Callable[[Payload], Payload] | None = None,
        needs_v8: Callable[[Payload], int] | None = None,
        address_space_reserved: Callable[[Payload], int] | None = None,
        modules_needed: Callable[[Payload], Iterable[str]] | None = None,
        warm_up: Callable[[], object] | None = None,
    ) -> None:
        self.address = address
        self.function = function
        self.prepare = prepare
        self.parse = parse
        self.needs_v8 = needs_v8
        self.address_space_reserved = address_space_reserved
        self.modules_needed = modules_needed
        self.warm_up = warm_up

    def prepare_process(self) -> None:
        """Prepare the child for this entry's runs, before its run is known (nothing
        without a hook)."""
        if self.prepare is not None:
            self.prepare()

    def parsed(self, payload: Payload) -> Payload:
        """Return the payload as the hooks below and the function read it: parsed once by the
        entry's hook, before the privilege drop (the payload as it came, without a hook)."""
        return self.parse(payload) if self.parse is not None else payload

    def warm(self) -> None:
        """Do the entry's warm-up in a child waiting for its run (nothing without a hook):
        work whose result a run cannot observe, done so that the memory it touches is the
        child's own before the run comes (a forked child copies each page of its zygote's
        that it writes to, on first write)."""
        if self.warm_up is not None:
            self.warm_up()

    def v8_contexts(self, payload: Payload) -> int | None:
        """Return how many V8 contexts a run of `payload` makes at most: the hook's answer
        (0 or False: none, True: one), None without a hook (any number)."""
        return None if self.needs_v8 is None else int(self.needs_v8(payload))

    def wants_v8(self, payload: Payload) -> bool:
        """Return whether the child loads V8 before the run (always, without a hook)."""
        return self.v8_contexts(payload) != 0

    def may_want_v8(self) -> bool:
        """Return whether a run of this entry may load V8, before its payload is known: the
        hook asked about an empty payload (runs that cannot be told apart yet)."""
        return self.needs_v8 is None or bool(self.needs_v8({}))

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
    parse: Callable[[Payload], Payload] | None = None,
    needs_v8: Callable[[Payload], int] | None = None,
    address_space_reserved: Callable[[Payload], int] | None = None,
    modules_needed: Callable[[Payload], Iterable[str]] | None = None,
    warm_up: Callable[[], object] | None = None,
) -> Callable[[F], F]: ...


def child_entry(
    function: Callable[..., Any] | None = None,
    /,
    *,
    prepare: Callable[[], object] | None = None,
    parse: Callable[[Payload], Payload] | None = None,
    needs_v8: Callable[[Payload], int] | None = None,
    address_space_reserved: Callable[[Payload], int] | None = None,
    modules_needed: Callable[[Payload], Iterable[str]] | None = None,
    warm_up: Callable[[], object] | None = None,
) -> Any:
    """Register `function` as a child entry under its address; return it unchanged."""

    def register(function: F) -> F:
        address = entry_address(function)
        ENTRIES[address] = ChildEntry(
            address,
            function,
            prepare=prepare,
            parse=parse,
            needs_v8=needs_v8,
            address_space_reserved=address_space_reserved,
            modules_needed=modules_needed,
            warm_up=warm_up,
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
