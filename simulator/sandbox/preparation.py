"""What a simulation's sandbox child prepares before its run, read from the parsed snapshot.

The runner registers these as the hooks of its child entry (simulator.sandbox.entries): the
child parses the payload's snapshot once (`parse_payload`), asks how much address space the
run reserves beyond what it uses (`address_space_reserved`, added to the data limit), which
modules it imports lazily (`modules_needed`) and how many V8 contexts it makes
(`needs_v8`), all before it sets its limits and drops its privileges
(simulator.sandbox.child), then hands the parsed snapshot to the run, which does not parse
it again. A snapshot that does not parse is left as it came: the run reports its errors
after the privilege drop, as for any run.

Each hook also accepts a raw snapshot (a run in the caller's process, the tests), which it
parses itself; one that does not parse counts as a snapshot the run will refuse.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from typing import Any

from simulator.engine import ARENA_REGION_BYTES, STACKLESS_CORE
from simulator.shallow import MAX_CONTEXTS, twin_compiles
from simulator.snapshot import SystemSnapshot, load_snapshot

__all__ = [
    "DETAILED_MODE_MODULES",
    "KERNEL_MODE_MODULES",
    "MEMORY_TYPES",
    "PROCESS_RESERVED_BYTES",
    "V8_CODE_RANGE_BYTES",
    "V8_CONTEXT_BYTES",
    "address_space_reserved",
    "has_memory_nodes",
    "modules_needed",
    "needs_v8",
    "parse_payload",
]

DETAILED_MODE_MODULES = (
    "multiprocessing.connection",
    "multiprocessing.context",
    "multiprocessing.popen_fork",
    "multiprocessing.reduction",
    "pickle",
    "simulator.models.gpu_detailed",
)
KERNEL_MODE_MODULES: dict[str, tuple[str, ...]] = {
    "detailed": DETAILED_MODE_MODULES,
    "petri": ("simulator.models.gpu_modes",),
    "waves": ("simulator.models.gpu_modes",),
}

MEMORY_TYPES = frozenset({"CACHE", "MEMORY", "FABRIC"})

# Address space a run reserves without using it, which RLIMIT_DATA counts whole: V8's code
# range (one per process, made writable and executable up front), each V8 context's
# reservations, and per simulated process on a greenlet a 16 KiB frame-stack chunk of which a
# short model touches one page, with the greenlet's bookkeeping (a stackless process reserves
# nothing it does not use); and the unused part of the object-arena region the allocator hook
# mapped last (ARENA_REGION_BYTES).
V8_CODE_RANGE_BYTES = 512 * 1024**2
V8_CONTEXT_BYTES = 20 * 1024**2
PROCESS_RESERVED_BYTES = 24 * 1024

RunsStackless = Callable[[str, Iterable[object]], bool]
"""Whether an application model (source, launch variable names) runs its processes
stackless: the runner's answer (simulator.runner), which compiles the model."""


def parse_payload(payload: Mapping[str, Any]) -> Mapping[str, Any]:
    """Return `payload` with its snapshot parsed (`load_snapshot`), or `payload` itself when
    its snapshot is missing or does not parse (the run reports why)."""
    raw = payload.get("snapshot")
    if raw is None or isinstance(raw, SystemSnapshot):
        return payload
    system = _parsed(raw)
    return payload if system is None else {**payload, "snapshot": system}


def _parsed(raw: object) -> SystemSnapshot | None:
    """Return the snapshot `raw` describes, None when there is none or it does not parse."""
    if raw is None:
        return None
    try:
        return load_snapshot(raw)
    except Exception:  # reported by the run, which parses it again, after the privilege drop
        return None


def has_memory_nodes(system: SystemSnapshot) -> bool:
    """Return whether the system has a memory-hierarchy node or a memory path."""
    return any(
        node.next is not None
        or (node.hardware is not None and system.hardware[node.hardware].type in MEMORY_TYPES)
        for node in system.nodes.values()
    )


def _contexts(system: SystemSnapshot) -> set[tuple[str, str | None]]:
    """Return the (model, hardware) pairs of the nodes that have a model: the runner makes
    one V8 context, at most, for each."""
    return {(node.model, node.hardware) for node in system.nodes.values() if node.model is not None}


def address_space_reserved(
    payload: Mapping[str, Any], *, runs_stackless: RunsStackless | None = None
) -> int:
    """Return the address space a run of `payload` reserves beyond what it uses (the sandbox
    child raises the data limit by it): V8's, its processes' (none when `runs_stackless`
    says the model's processes run stackless), and the object arenas' last region."""
    labels = payload.get("labels")
    processes = 0
    if isinstance(labels, Mapping):
        processes = sum(count for count in labels.values() if isinstance(count, int) and count > 0)
    system = _parsed(payload.get("snapshot"))
    contexts = _contexts(system) if system is not None else set()
    v8 = (
        V8_CODE_RANGE_BYTES + V8_CONTEXT_BYTES * min(len(contexts), MAX_CONTEXTS) if contexts else 0
    ) + ARENA_REGION_BYTES
    app, variables = payload.get("app_source"), payload.get("variables")
    names = variables if isinstance(variables, Mapping) else {}
    if (
        STACKLESS_CORE
        and runs_stackless is not None
        and isinstance(app, str)
        and runs_stackless(app, names)
    ):
        return v8
    return v8 + PROCESS_RESERVED_BYTES * processes


def needs_v8(payload: Mapping[str, Any]) -> int:
    """Return how many V8 contexts a run of `payload` makes at most (0: it evaluates no
    JavaScript in V8): one for each node model and hardware record that no Python twin
    answers (the runner makes one per pair; a model no node uses is never evaluated). The
    sandbox child loads V8 before it drops privileges when this is not 0, and keeps as many
    of the isolates it made ahead (simulator.sandbox.child). A twin that declines an input
    later makes its context then. Each pair's model is compiled as the run compiles it for
    that record (`twin_compiles`), and only the models a node uses: the run then finds them
    compiled."""
    system = _parsed(payload.get("snapshot"))
    if system is None:
        return 1  # a snapshot the run will refuse
    untwinned = sum(
        1
        for model, hardware in _contexts(system)
        if not twin_compiles(
            system.models[model].source,
            system.hardware[hardware].attributes if hardware is not None else {},
        )
    )
    return min(untwinned, MAX_CONTEXTS)


# What simulator.failure_injection's draws import when first called: NumPy's generator,
# whose seeding reads the standard library's `secrets`.
FAILURE_INJECTION_MODULES = ("numpy", "numpy.random", "secrets")


def modules_needed(payload: Mapping[str, Any]) -> tuple[str, ...]:
    """Return the modules a sandboxed run of `payload` imports lazily (the sandbox child
    imports them while it still can, simulator.sandbox.child): its nodes' kernel modes', and
    the memory hierarchy's when it has memory nodes (`has_memory_nodes`, the runner's test)."""
    system = _parsed(payload.get("snapshot"))
    if system is None:
        return ()
    modes = {node.kernel_mode for node in system.nodes.values()}
    needed = [
        module
        for mode, modules in KERNEL_MODE_MODULES.items()
        if mode in modes
        for module in modules
    ]
    if has_memory_nodes(system):
        needed.append("simulator.memsys")
    if payload.get("failures") is not None:  # Monte Carlo failure injection draws with NumPy
        needed.extend(FAILURE_INJECTION_MODULES)
    return tuple(dict.fromkeys(needed))
