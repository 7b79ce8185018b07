"""JavaScript computational models ("shallow functions", MERPSYS) evaluated in mini-racer.

A computational model is JavaScript source defining some of the well-known functions
`computationTime(params)` -> s, `p2pTime(size, params)` -> s, `power(state, params)` -> W and
`failureRate(params)` -> 1/s. The hardware attributes of the node it is attached to are
visible as read-only globals (`SMCoreClock`, `SMs`, MERPSYS style) and as the frozen object
`hw` (`hw.SMs`, or `hw["L2 size"]` for keys that are not JavaScript identifiers). `params`
is a frozen object readable as `params.x` and `params.get('x')`.

Security: the JavaScript runs in a V8 isolate with a time limit per evaluation and a hard
heap limit, and nothing from Python is ever exposed to it (no callbacks, no host objects):
calls go in as JSON text inside one script and only a number comes back. Typed arrays,
ArrayBuffer, WebAssembly and timers are removed, because their memory lives outside the V8
heap and would escape the heap limit.

Speed: one V8 context per distinct (source, attributes, limits) is shared through a bounded
module-level cache, each call is a single evaluation, and results are memoized on
(model source, attributes, function, arguments, params) so a repeated call is a dict lookup.
V8 runs on a thread of its own that mini-racer hands each evaluation to; a process that
evaluates many models (the sandboxed simulation) calls `keep_on_one_cpu` first, so that the
hand-over is not a wake-up of another CPU (the bench_shallow table in `bench/RESULTS.md`).
The result comes back through a callback in C (simulator/_v8results.c, `_Isolate`) rather than
mini-racer's Python one, which took most of each evaluation.

Compiled models: a source in the subset `simulator.models.js_compiler` covers (functions,
helpers, `var`/`let`/`const`, conditionals, bounded loops, `Math`'s exact functions,
`params.get`, `hw`...) is compiled once to Python and bound to the attributes as a twin that
returns V8's very doubles, with the same memo and the same checks of the value; what it
declines (a division by zero, a `throw`, a value it does not decide), and every source outside
the subset, goes to V8 as above (`fallback`, `v8_reason()`: why). The shipped models are
compiled like any other source. No V8 context is made for a model the compiled twin answers
entirely. `twin=False`, or `PARASIM_JS_TWINS=0` in the environment, evaluates everything in V8
(tests, debugging).
"""

from __future__ import annotations

import contextlib
import hashlib
import itertools
import json
import os
import queue
import re
import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import TYPE_CHECKING, Any

from simulator import hotpath
from simulator.cpus import keep_on_one_cpu
from simulator.errors import MSG_NOT_NUMBER, ModelEvaluationError, model_seconds
from simulator.hotpath import COMPUTATION_TIME
from simulator.js_names import JS_IDENTIFIER, JS_RESERVED
from simulator.models.js_compiler import (
    JS_GLOBAL_NAMES,
    CompiledTwin,
    Refusal,
    compile_model,
    numeric_attributes,
)
from simulator.models.js_program import Program, program_of
from simulator.models.js_twins import Decline, JsTwin

# V8's results handed back in C (`_Isolate`) where simulator.hotpath chose the extension,
# else through mini-racer's own Python callback.
_v8results = hotpath.v8results

if TYPE_CHECKING:
    from py_mini_racer import MiniRacer

__all__ = [
    "DEFAULT_MEMORY_LIMIT_BYTES",
    "DEFAULT_TIMEOUT_S",
    "WELL_KNOWN_FUNCTIONS",
    "ShallowFunctions",
    "clear_caches",
    "keep_on_one_cpu",
]

WELL_KNOWN_FUNCTIONS = ("computationTime", "p2pTime", "power", "failureRate")
DEFAULT_TIMEOUT_S = 1.0
DEFAULT_MEMORY_LIMIT_BYTES = 128 * 1024 * 1024
MAX_CONTEXTS = 32
MAX_MEMO_ENTRIES = 200_000
# A compiled model's memo: evaluating costs about what keeping a value does, so the memo keeps
# the first values of a run (the repeating inputs a hit saves) and, once this full, keeps no
# more until COMPILED_MEMO_REFRESH times as many misses have passed, then empties and refills:
# distinct inputs stop paying for a memo they never hit, and a run whose inputs change with
# its phases still gets its new repeats kept.
COMPILED_MEMO_ENTRIES = 4096
COMPILED_MEMO_REFRESH = 8
CANCEL_GRACE_S = 5.0
# How often a call's wait looks at its isolate's heap, and how long it waits for V8 to stop
# once the heap is past its limit (`_Evaluator._wait`).
HEAP_CHECK_INTERVAL_S = 0.05
HEAP_CANCEL_GRACE_S = 0.2
# "0" evaluates every model in V8 instead of its compiled Python twin.
TWINS_ENVIRONMENT_VARIABLE = "PARASIM_JS_TWINS"


def _mini_racer() -> ModuleType:
    """Return mini-racer, imported on first use: it loads asyncio and ssl (slow), which a
    run whose models are all answered by Python twins never needs (issue 16: start-up)."""
    import py_mini_racer

    return py_mini_racer


# The script name V8 reports for the user's source (`//# sourceURL=`), so stack frames in the
# user's code can be told from frames in the prelude and in the call script.
MODEL_SCRIPT_NAME = "parasim-computational-model.js"

MSG_NOT_DEFINED = "the model does not define function {function}()"
MSG_TIMEOUT = "evaluation exceeded the time limit of {limit:g} s"
MSG_OOM = "evaluation exceeded the memory limit of {limit_mib:g} MiB"
MSG_NOT_DETAIL = (
    "returned {value}, expected an object of at most 16 numbers, booleans and strings of up to "
    "60 characters"
)
MSG_BAD_ARGUMENTS = "arguments are not JSON-serialisable: {error}"
MSG_KEEPS_STATE = (
    "tried to keep state between calls ({what}); a model must be a pure function of its parameters"
)
MSG_NOT_A_BODY = (
    "the source is not a list of declarations and statements (it closes a brace it did not open)"
)

_JS_IDENTIFIER = re.compile(JS_IDENTIFIER)
# Names a script declares: `function f`, `async function* g`, `var x`, `let y`, `const z`,
# `class C` (every occurrence; a nested one only costs that attribute its global alias).
_DECLARATION = re.compile(
    r"\b(?:function\s*\*?\s*|(?:var|let|const|class)\s+)([A-Za-z_$][A-Za-z0-9_$]*)"
)
# "parasim-computational-model.js:12: ReferenceError: ..." (the message's own location).
_HEADER_LOCATION = re.compile(r"^(?P<script>[^\n]*?):(?P<line>\d+): ", re.MULTILINE)
# "    at f (parasim-computational-model.js:3:9)" or "    at parasim-...js:3:9".
_FRAME_LOCATION = re.compile(re.escape(MODEL_SCRIPT_NAME) + r":(?P<line>\d+):\d+")

# Prefix of the description the prelude returns instead of a result that is not a number.
_BAD_RESULT = "\x00parasim-not-a-number:"
# Prefix of the message of the TypeError the prelude throws when a model adds a global.
_STATE_ERROR = re.compile(r"^\w*Error: parasim-state: ")

# Runs once per context before the user's source, as its own script: the builtins frozen, the
# clock stopped, and the functions the call scripts use (`__parasim_call`...). Read once.
_PRELUDE = (Path(__file__).parent / "shallow_prelude.js").read_text(encoding="utf-8")


def _global_names(attributes: Mapping[str, object], source: str) -> list[str]:
    """Return the attribute keys that can be JavaScript globals (identifiers, not reserved).

    A name the model's source declares itself (`function failureRate`, `var SMs`) stays
    reachable as `hw.<name>` only: a global of the same name would make the source fail.
    """
    declared = set(_DECLARATION.findall(source))
    return [
        name
        for name in attributes
        if _JS_IDENTIFIER.match(name) and name not in JS_RESERVED and name not in declared
    ]


def _factory_script(source: str) -> str:
    """Return the script that loads `source` as the body of the model's factory.

    The source starts on the script's first line, so V8's line numbers are the user's. The
    factory returns the functions the source declares by name; the prelude runs it afresh
    for every call. The caller has checked that the source is a function body on its own,
    so it cannot close the factory and declare anything outside it.
    """
    names = sorted(
        name
        for name in set(_DECLARATION.findall(source))
        if name not in JS_RESERVED and name != "__proto__"
    )
    exports = ", ".join(
        f"{name}: typeof {name} === 'function' ? {name} : undefined" for name in names
    )
    return (
        f"__parasim_model(function () {{{source}\n;return {{__proto__: null, {exports}}};}});"
        f"\n//# sourceURL={MODEL_SCRIPT_NAME}"
    )


def _line_of(message: str, *, loading: bool = False) -> int | None:
    """Return the line in the user's source that a V8 error message points at, if any.

    While the user's script itself is evaluated (`loading`), the message's own location is
    in it even when V8 has not read its `sourceURL` yet (syntax errors).
    """
    header = _HEADER_LOCATION.search(message)
    if header and (loading or header.group("script") == MODEL_SCRIPT_NAME):
        return int(header.group("line"))
    frame = _FRAME_LOCATION.search(message)
    if frame:
        return int(frame.group("line"))
    return None


def _summary(message: str) -> str:
    """Return the first meaningful line of a V8 error message, without its location prefix."""
    first = message.strip().splitlines()[0] if message.strip() else "JavaScript error"
    header = _HEADER_LOCATION.match(first)
    return first[header.end() :] if header else first


class _Isolate:
    """A V8 isolate and context of mini-racer's library whose results come back through
    simulator._v8results (C): V8's thread leaves each result in this isolate's slot and posts
    its semaphore, which the caller waits on with the GIL released.

    mini-racer's own `MiniRacer` makes its context with a Python callback (V8's thread takes
    the GIL, makes a thread state, puts the result in a queue whose condition wakes the
    caller: most of an evaluation) and starts an asyncio loop thread for its own
    evaluations, which this never needs. What it offers besides (memory limits, the values'
    conversion) is the same library's, through the same `Context`. Made by `_new_isolate` where the C extension is built.
    """

    def __init__(self) -> None:
        from py_mini_racer import _context, _dll, _objects

        assert _v8results is not None
        dll = _dll.init_mini_racer(ignore_duplicate_init=True)
        self.slot: Any = _v8results.ResultSlot()
        raw = dll.mr_init_context(_dll.MR_CALLBACK(_v8results.HAND_BACK))
        # No event loop: no task of this context is ever one of mini-racer's own.
        self._ctx: Any = _context.Context(
            dll,
            raw,
            None,  # type: ignore[arg-type]
            _objects.ObjectFactoryImpl(),
            itertools.count(1),
        )
        self.abandoned: bool = False  # a task of it never ended (its slot must live on)

    def set_soft_memory_limit(self, limit: int) -> None:
        self._ctx.set_soft_memory_limit(limit)

    def set_hard_memory_limit(self, limit: int) -> None:
        self._ctx.set_hard_memory_limit(limit)

    def was_hard_memory_limit_reached(self) -> bool:
        return bool(self._ctx.was_hard_memory_limit_reached())

    def close(self) -> None:
        """Free the isolate (once). One whose task never ended is left as it is, with its
        slot, for the process's life: freeing it waits for the task, and a builtin looping
        in C++ ignores the order to stop (a sandboxed run's process ends soon after)."""
        ctx, self._ctx = self._ctx, None
        if ctx is None:
            return
        if self.abandoned:
            _abandoned_slots.append(self.slot)
            _abandoned_contexts.append(ctx)
            return
        ctx._dll.mr_free_context(ctx._ctx)

    def __del__(self) -> None:
        with contextlib.suppress(Exception):
            self.close()


# The slots and contexts of isolates whose task never ended: V8's thread may still use them.
_abandoned_slots: list[Any] = []
_abandoned_contexts: list[Any] = []


def _new_isolate() -> MiniRacer | _Isolate:
    """Return a new V8 isolate: an `_Isolate` where simulator._v8results is built, else
    mini-racer's `MiniRacer`."""
    if _v8results is not None:
        return _Isolate()
    return _mini_racer().MiniRacer()


# Evaluated after a model's call: it runs once the call's promise jobs have run.
_DRAIN = "0"


class _Evaluator:
    """Evaluate scripts in one V8 context: one call at a time, with a timeout.

    An `_Isolate`'s results come back through its C slot. For a `MiniRacer`: its public
    `eval` hops through an asyncio loop thread (two thread switches a call); the pinned
    version (0.14.1) also offers the task API used below, which waits on the result queue
    directly. If its internals change, the public API is used.
    """

    def __init__(self, racer: MiniRacer | _Isolate, timeout_s: float) -> None:
        self.racer = racer
        self.timeout_s = timeout_s
        self.lock = threading.Lock()
        self.broken = False
        self.slot: Any = racer.slot if isinstance(racer, _Isolate) else None
        ctx: Any = getattr(racer, "_ctx", None)
        try:
            from ctypes import cast

            from py_mini_racer import _context, _dll

            self._cast = cast
            self._task_id = _context._UNCANCELABLE_TASK_CALLBACK_ID
            self._dll = ctx._dll
            self._raw_ctx = ctx._ctx
            self._results: queue.Queue[Any] = ctx._non_cancelable_mr_task_results_queue
            self._to_handle = ctx._python_to_value_handle
            self._to_python = ctx._value_handle_to_python
            self._wrap = ctx._wrap_raw_handle
            self._handle_type = _dll.RawValueHandle
            self.fast = True
        except (AttributeError, ImportError):  # pragma: no cover - other mini-racer versions
            self.fast = False

    def eval(self, code: str, *, drained: bool = False) -> object:
        """Return the value of `code`; raise mini-racer's exceptions (JSTimeoutException...).

        `drained`: also run the promise jobs `code` queued, within the same time limit. V8
        runs them after the task that queued them has handed its result back (mini-racer's
        explicit microtask checkpoint), so they would otherwise run during, and be charged to,
        the next evaluation; a trivial evaluation after `code` waits for them.
        """
        with self.lock:
            if not drained:
                return self._eval_once(code, self.timeout_s)
            deadline = time.monotonic() + self.timeout_s
            racer = _mini_racer()
            try:
                value = self._eval_once(code, self.timeout_s)
            except (racer.JSTimeoutException, racer.JSOOMException):
                raise  # V8 was stopped: its context is not used again for a call
            except racer.JSEvalException:
                if not self.racer.was_hard_memory_limit_reached():
                    self._drain(deadline)  # the jobs queued before it threw
                raise
            self._drain(deadline)
            return value

    def _drain(self, deadline: float) -> None:
        """Wait for the promise jobs of the last evaluation until `deadline` (with a tenth of
        the limit's grace: the trivial evaluation itself must get a chance to run)."""
        if self.broken:
            return
        remaining = max(deadline - time.monotonic(), self.timeout_s / 10)
        self._eval_once(_DRAIN, remaining)

    def _eval_once(self, code: str, timeout_s: float) -> object:
        """Return the value of `code`, evaluated within `timeout_s` and the heap limit.

        V8 is told to stop at the hard heap limit (mini-racer checks it after each garbage
        collection), but a builtin that loops in C++ (`new Array(1e7).fill(1.5)`) does not
        look until it returns: a result that comes back past the limit is refused too.
        """
        value = self._eval_unchecked(code, timeout_s)
        if self.racer.was_hard_memory_limit_reached():
            raise _mini_racer().JSOOMException()
        return value

    def _eval_unchecked(self, code: str, timeout_s: float) -> object:
        """Return the value of `code`, evaluated within `timeout_s`."""
        if self.slot is not None:
            return self._eval_handed_back(code, timeout_s)
        if not self.fast:  # pragma: no cover - other mini-racer versions
            assert not isinstance(self.racer, _Isolate)
            return self.racer.eval(code, timeout_sec=timeout_s)
        handle = self._to_handle(code)
        task = self._dll.mr_eval(self._raw_ctx, handle.raw, self._task_id)
        try:
            result = self._results.get(timeout=timeout_s)
        except queue.Empty:
            self._dll.mr_cancel_task(self._raw_ctx, task)
            try:
                self._to_python_quietly(self._results.get(timeout=CANCEL_GRACE_S))
            except queue.Empty:
                self.broken = True  # V8 did not stop: the context must not be reused
            raise _mini_racer().JSTimeoutException() from None
        return self._to_python(result)

    def _eval_handed_back(self, code: str, timeout_s: float) -> object:
        """`eval` on an `_Isolate`: the task's callback id is its slot's address."""
        slot = self.slot
        assert slot is not None
        if self.broken:  # a task of its own may still post to the slot
            raise _mini_racer().JSTimeoutException()
        handle = self._to_handle(code)
        task = self._dll.mr_eval(self._raw_ctx, handle.raw, slot.address)
        try:
            raw, over_heap = self._wait(slot, timeout_s)
            timed_out = raw is None
            if timed_out:
                self._dll.mr_cancel_task(self._raw_ctx, task)
                # past the heap limit, every moment of waiting is memory the process loses
                raw = slot.wait(HEAP_CANCEL_GRACE_S if over_heap else CANCEL_GRACE_S)
        except BaseException:  # a signal handler's exception: the result is left unread
            self._dll.mr_cancel_task(self._raw_ctx, task)
            self._abandon()
            raise
        stopped = _mini_racer().JSOOMException if over_heap else _mini_racer().JSTimeoutException
        if raw is None:  # V8 did not stop
            self._abandon()
            raise stopped()
        value = self._wrap(self._cast(raw, self._handle_type))
        if timed_out:
            self._to_python_quietly(value)
            raise stopped()
        return self._to_python(value)

    def _wait(self, slot: Any, timeout_s: float) -> tuple[Any, bool]:
        """Return (the raw result, or None when there is none within `timeout_s` or once the
        isolate is past its hard heap limit; whether it is past it). A builtin that loops in
        C++ ignores V8's order to stop at the limit and could grow to the process's memory
        limit meanwhile: it is cancelled at the limit rather than at the time limit."""
        deadline = time.monotonic() + timeout_s
        while True:
            remaining = deadline - time.monotonic()
            raw = slot.wait(min(remaining, HEAP_CHECK_INTERVAL_S)) if remaining > 0 else None
            if raw is not None:
                return raw, False
            if self.racer.was_hard_memory_limit_reached():
                return None, True
            if remaining <= HEAP_CHECK_INTERVAL_S:
                return None, False

    def _abandon(self) -> None:
        """Mark the context unusable: a task of it may still post to its isolate's slot."""
        self.broken = True
        if isinstance(self.racer, _Isolate):
            self.racer.abandoned = True

    def _to_python_quietly(self, handle: object) -> None:
        with contextlib.suppress(_mini_racer().JSEvalException):
            self._to_python(handle)


@dataclass
class _ModelContext:
    """A V8 context holding one model's source bound to one attribute set, and the names of
    the functions the source defines (told by V8 as it loaded the source)."""

    evaluator: _Evaluator
    functions: frozenset[str] = frozenset()
    closed: bool = False

    def close(self) -> None:
        """Release the V8 isolate; instances holding this context will make a new one."""
        self.closed = True
        self.evaluator.racer.close()


# The dicts a memo's index may make (one per params' count, name and value prefix): about
# 25 MB at most, where params of eight items that are all distinct could otherwise make
# fifteen dicts a memo entry.
MEMO_INDEX_DICTS = 100_000


class Memo(dict[object, float]):
    """A model's memo of checked values, keyed by `hotpath.memo_key`, with `index`: the same
    `computationTime(params)` values by params' items in turn, which the C core's hot path
    (simulator/_speedups.c `index_lookup`) reads without building the memo's key. The C core
    fills it from the memo (params looked up a second time), so it holds only what the memo
    holds, empties with it, and makes at most `index_room` more dicts. `program`: the model's
    computationTime as a program of doubles (simulator.models.js_program) when it is one,
    which the hot path runs before it looks anything up (its value needs no key), else None."""

    __slots__ = ("index", "index_room", "program")

    def __init__(self) -> None:
        super().__init__()
        self.index: dict[object, object] = {}
        self.index_room = MEMO_INDEX_DICTS
        self.program: Program | None = None

    def clear(self) -> None:
        """Empty the memo and its index."""
        super().clear()
        self.index.clear()
        self.index_room = MEMO_INDEX_DICTS


_contexts: OrderedDict[tuple[str, str, float, int], _ModelContext] = OrderedDict()
# keyed on (source hash, attributes, whether a Python twin answers): V8's and a twin's results
# are equal, but a test comparing them must not read one from the other's memo
_memos: dict[tuple[str, str, bool], Memo] = {}
_cache_lock = threading.Lock()


_spare_racers: list[MiniRacer | _Isolate] = []  # made ahead, the prelude run (`start_spare_racer`)


def start_spare_racer() -> None:
    """Make one V8 isolate ahead of its use and run the prelude in it, for a context a run
    makes: a sandbox child waiting for its run (simulator.sandbox.child) calls this while
    nobody waits, which takes the making of an isolate and the prelude freezing every builtin
    off the run's first context (the start-up row of bench/bench_userpath.py's table in
    bench/RESULTS.md). The isolate's threads
    exist from now on: a run that pins itself to a CPU pins every thread (`keep_on_one_cpu`)."""
    racer = _new_isolate()
    try:
        _Evaluator(racer, DEFAULT_TIMEOUT_S).eval(_PRELUDE)
    except BaseException:
        racer.close()
        raise
    with _cache_lock:
        _spare_racers.append(racer)


def drop_spare_racers(keep: int = 0) -> None:
    """Close the isolates `start_spare_racer` made beyond `keep` (`clear_caches`: tests,
    long-lived workers). A sandbox child keeps its spares for its run: closing them gives
    back none of the data limit (simulator.sandbox.child `_load_v8`)."""
    with _cache_lock:
        spares = _spare_racers[keep:]
        del _spare_racers[keep:]
    for racer in spares:
        racer.close()


def _new_racer() -> tuple[MiniRacer | _Isolate, bool]:
    """Return (an isolate, whether the prelude ran in it): a spare one once, else a new one."""
    with _cache_lock:
        if _spare_racers:
            return _spare_racers.pop(0), True
    return _new_isolate(), False


def clear_caches() -> None:
    """Drop every cached V8 context and memoized result (tests, long-lived workers)."""
    with _cache_lock:
        contexts = list(_contexts.values())
        _contexts.clear()
        _memos.clear()
    for context in contexts:
        context.close()
    drop_spare_racers()


# Read at import too: a sandboxed run's child imports this module before it clears its
# environment, so the switch holds there when the parent passes it through.
_TWINS_AT_IMPORT = os.environ.get(TWINS_ENVIRONMENT_VARIABLE, "1") != "0"


def _twins_enabled() -> bool:
    """Return whether Python twins may answer (`PARASIM_JS_TWINS` is not "0")."""
    value = os.environ.get(TWINS_ENVIRONMENT_VARIABLE)
    return _TWINS_AT_IMPORT if value is None else value != "0"


def twin_compiles(source: str, attributes: Mapping[str, object]) -> bool:
    """Return whether compiled Python answers the model `source` bound to a hardware record's
    `attributes` (when twins are on): its source is in the subset simulator.models.js_compiler
    covers, compiled as a run compiles it (`ShallowFunctions`), which then finds it compiled."""
    if not _twins_enabled():
        return False
    arguments = _twin_arguments(source, attributes)
    return arguments is not None and not isinstance(compile_model(source, *arguments), Refusal)


def _twin_arguments(
    source: str, attributes: Mapping[str, object]
) -> tuple[frozenset[str], frozenset[str]] | None:
    """Return what the model `source` is compiled with for a record's `attributes`: the
    attribute globals `__parasim_bind` defines (not a builtin's name) and the attributes
    whose values are numbers; None for a record whose model V8 evaluates whatever it is.

    An attribute named like the prelude's own globals (`__parasim_call`) would break V8's
    context, so such a record keeps V8's behaviour (its error) rather than a twin's answer.
    """
    if any(key.startswith("__parasim") for key in attributes):
        return None
    names = frozenset(
        name for name in _global_names(attributes, source) if name not in JS_GLOBAL_NAMES
    )
    return names, numeric_attributes(attributes)


class ShallowFunctions:
    """One computational model bound to one hardware record's attributes.

    `twin`: whether the model compiled to Python may answer (None: unless
    `PARASIM_JS_TWINS=0`); False evaluates everything in V8.
    """

    def __init__(
        self,
        *,
        model_key: str,
        source: str,
        attributes: Mapping[str, object],
        timeout_s: float = DEFAULT_TIMEOUT_S,
        memory_limit_bytes: int = DEFAULT_MEMORY_LIMIT_BYTES,
        twin: bool | None = None,
    ) -> None:
        self.model_key = model_key
        self.source = source
        self.attributes = dict(attributes)
        self.timeout_s = timeout_s
        self.memory_limit_bytes = memory_limit_bytes
        source_hash = hashlib.sha256(source.encode("utf-8")).hexdigest()
        try:
            self._attributes_json = json.dumps(self.attributes, sort_keys=True)
        except (TypeError, ValueError) as error:
            raise ModelEvaluationError(
                f"hardware attributes are not JSON-serialisable: {error}",
                model=model_key,
                function="(attributes)",
            ) from error
        self._context_key = (source_hash, self._attributes_json, timeout_s, memory_limit_bytes)
        # why V8 evaluates every call of this model (None: compiled, or twins switched off)
        self.fallback: str | None = None
        use_twin = _twins_enabled() if twin is None else twin
        self._twin = self._bound_twin(source_hash) if use_twin else None
        with _cache_lock:
            self._memo = _memos.setdefault(
                (source_hash, self._attributes_json, self._twin is not None), Memo()
            )
        if isinstance(self._twin, CompiledTwin):
            # the same source and attributes give the same program (the memo's key)
            self._memo.program = program_of(source, self.attributes, self._twin_globals)
        self._cached_context: _ModelContext | None = None
        self._details: dict[object, dict[str, object]] = {}
        # what the hot path calls on a memo miss (`computation_missed`): where a bound twin
        # answers computationTime, its `missed_caller` (the compiled model, the check of its
        # value and the memo in one frame), V8 taking what it declines
        missed = (
            self._twin.missed_caller(
                COMPUTATION_TIME,
                self._memo,
                COMPILED_MEMO_ENTRIES,
                COMPILED_MEMO_ENTRIES * COMPILED_MEMO_REFRESH,
                self._missed_in_v8,
            )
            if isinstance(self._twin, CompiledTwin)
            else None
        )
        self.computation_missed: Callable[..., float] = (
            self._missed_general if missed is None else missed
        )

    def _bound_twin(self, source_hash: str) -> JsTwin | None:
        """Return the model compiled to Python (simulator.models.js_compiler) and bound to the
        attributes, else None (V8 evaluates every call; `fallback` says why: `_twin_arguments`).
        """
        del source_hash
        arguments = _twin_arguments(self.source, self.attributes)
        if arguments is None:
            self.fallback = "an attribute is named like the sandbox's own globals"
            return None
        self._twin_globals = arguments[0]
        model = compile_model(self.source, *arguments)
        if isinstance(model, Refusal):
            self.fallback = str(model)
            return None
        try:
            return model.bind(self.attributes)
        except (Decline, ArithmeticError):
            self.fallback = "an attribute's value is not one the compiled model reads"
            return None

    def v8_reason(self) -> str | None:
        """Return why V8 evaluated some of this model's calls (None: none, or twins are off):
        what the compiler does not cover, or how many calls the compiled model left to V8."""
        if self.fallback is not None:
            return self.fallback
        declines = getattr(self._twin, "declines", 0)
        if declines:
            return (
                f"{declines} call(s) left to V8 (a value, an error or a limit the compiled "
                "model does not decide)"
            )
        return None

    @property
    def twinned(self) -> bool:
        """Return whether a Python twin answers this model's calls (those it does not decline)."""
        return self._twin is not None

    @property
    def computation_memo(self) -> dict[object, float]:
        """The memo of checked `computationTime(params)` values, keyed by
        `hotpath.memo_key("computationTime", (), params)`: the sim API's hot path reads it directly."""
        return self._memo

    @property
    def detail_memo(self) -> dict[object, dict[str, object]]:
        """The memo of `computationDetail(params)` objects (and any other `call_detail`),
        keyed by `hotpath.detail_key`: the sim API's hot path reads it."""
        return self._details

    def has(self, function: str) -> bool:
        """Return whether the model defines `function` (e.g. "p2pTime")."""
        if self._twin is not None:
            return function in self._twin.defines
        return function in self._context(function).functions

    def call(self, function: str, *args: object, params: Mapping[str, object]) -> float:
        """Return `function(*args, params)` as a float, memoized; raise ModelEvaluationError."""
        memo = self._memo
        try:
            key: object = hotpath.memo_key(function, args, params)
            value = memo.get(key)
        except TypeError:  # unhashable argument or parameter (a list, a dict)
            key = (function, json.dumps([args, params], sort_keys=True, default=repr))
            value = memo.get(key)
        if value is not None:
            return value
        return self._kept(key, self._call_uncached(function, args, params))

    # `computation_missed(key, params, plain_params=False)` (set in __init__):
    # `call("computationTime", params=params)` for params whose memo key (`hotpath.memo_key`'s)
    # the caller built and did not find in `computation_memo`: the hot path's memo miss
    # (simulator.api), its key built once.
    def _missed_general(
        self, key: object, params: Mapping[str, object], plain_params: bool = False
    ) -> float:
        """`computation_missed` for a model V8 or a per-call twin answers (`plain_params`,
        what the caller knows of params, is the compiled model's: see
        CompiledTwin.missed_caller)."""
        del plain_params
        return self._kept(key, self._call_uncached(COMPUTATION_TIME, (), params))

    def _missed_in_v8(
        self, key: object, params: Mapping[str, object], plain_params: bool = False
    ) -> float:
        """`computation_missed` for what the compiled model declines: V8's value, kept in the
        memo whatever it holds (V8's answers are dear), or V8's error."""
        del plain_params
        return self._kept(key, self._evaluate_call(COMPUTATION_TIME, (), params))

    def _kept(self, key: object, value: float) -> float:
        """Keep `value` in the memo under `key` (emptied when full); return it."""
        memo = self._memo
        if len(memo) >= MAX_MEMO_ENTRIES:
            memo.clear()
        memo[key] = value
        return value

    def evaluate(self, function: str, *args: object, params: Mapping[str, object]) -> float:
        """Return `call(function, *args, params=params)` for a caller that keeps its own memo
        of the values (a node's transfer times per run): a Python twin's answer without the
        memo (recomputing it costs about what keying and keeping it would), any other
        through `call` (V8's answers are dear, worth keeping)."""
        value = self._twin_answer(function, args, params)
        return self.call(function, *args, params=params) if value is None else value

    def evaluator(
        self, function: str
    ) -> Callable[[tuple[object, ...], Mapping[str, object]], float]:
        """Return `(args, params) -> evaluate(function, *args, params=params)`: where a
        compiled model answers, its `answer_caller` (its value checked in the same frame,
        whatever it declines left to `evaluate`), else `evaluate` itself."""

        def general(args: tuple[object, ...], params: Mapping[str, object]) -> float:
            return self.evaluate(function, *args, params=params)

        if isinstance(self._twin, CompiledTwin):
            answer = self._twin.answer_caller(function, general)
            if answer is not None:
                return answer
        return general

    def _call_uncached(
        self, function: str, args: tuple[object, ...], params: Mapping[str, object]
    ) -> float:
        """Return the validated value of one evaluation, without the memo: the Python twin's
        when it answers, else V8's (with V8's errors)."""
        value = self._twin_answer(function, args, params)
        return self._evaluate_call(function, args, params) if value is None else value

    def _twin_answer(
        self, function: str, args: tuple[object, ...], params: Mapping[str, object]
    ) -> float | None:
        """Return the Python twin's value of one evaluation when the one rule of a model's
        times (simulator.errors.model_seconds) accepts it, else None: V8 answers, and its
        error names what the model returned."""
        twin = self._twin
        if twin is None:
            return None
        try:
            return model_seconds(twin.call(function, args, params))
        except (Decline, ArithmeticError, ValueError):
            return None

    def _evaluate_call(
        self, function: str, args: tuple[object, ...], params: Mapping[str, object]
    ) -> float:
        """Return the validated value of one evaluation in V8."""
        if not _JS_IDENTIFIER.match(function):
            raise self._error(function, MSG_NOT_DEFINED.format(function=function))
        try:
            arguments = json.dumps([function, list(args), dict(params)])
        except (TypeError, ValueError) as error:
            raise self._error(function, MSG_BAD_ARGUMENTS.format(error=error)) from error
        context = self._context(function)
        if not self.has(function):
            raise self._error(function, MSG_NOT_DEFINED.format(function=function))
        value = self._evaluate(context, function, f"__parasim_call({arguments[1:-1]})")
        return self._checked(function, value)

    def call_detail(self, function: str, *, params: Mapping[str, object]) -> dict[str, object]:
        """Return `function(params)`'s flat object of numbers, booleans and short strings
        (e.g. `computationDetail`: what bounds a kernel), memoized; ModelEvaluationError when
        it is anything else."""
        memo = self._details
        try:
            key: object = hotpath.detail_key(function, params)
            value = memo.get(key)
        except TypeError:
            key = (function, json.dumps(params, sort_keys=True, default=repr))
            value = memo.get(key)
        if value is not None:
            return dict(value)
        detail: dict[str, object] | None = None
        if self._twin is not None:
            with contextlib.suppress(Decline, ArithmeticError):
                detail = self._twin.detail(function, params)
        if detail is None:
            detail = self._evaluate_detail(function, params)
        if len(memo) >= MAX_MEMO_ENTRIES:
            memo.clear()
        memo[key] = detail
        return dict(detail)

    def _evaluate_detail(self, function: str, params: Mapping[str, object]) -> dict[str, object]:
        """Return `function(params)`'s flat object evaluated in V8 (see `call_detail`)."""
        if not _JS_IDENTIFIER.match(function) or not self.has(function):
            raise self._error(function, MSG_NOT_DEFINED.format(function=function))
        try:
            arguments = json.dumps([function, dict(params)])
        except (TypeError, ValueError) as error:
            raise self._error(function, MSG_BAD_ARGUMENTS.format(error=error)) from error
        context = self._context(function)
        text = self._evaluate(context, function, f"__parasim_detail({arguments[1:-1]})")
        if not isinstance(text, str) or text.startswith(_BAD_RESULT):
            shown = str(text)[len(_BAD_RESULT) :] if isinstance(text, str) else repr(text)
            raise self._error(function, MSG_NOT_DETAIL.format(value=shown))
        detail: dict[str, object] = json.loads(text)
        return detail

    def _checked(self, function: str, value: object) -> float:
        """Return V8's `value` as seconds (simulator.errors.model_seconds, the one rule),
        else this model's error at `function`'s line; a value V8 could not hand back as a
        number comes described after _BAD_RESULT."""
        if isinstance(value, str) and value.startswith(_BAD_RESULT):
            raise self._error(function, MSG_NOT_NUMBER.format(value=value[len(_BAD_RESULT) :]))
        try:
            return model_seconds(value)
        except ValueError as error:
            raise self._error(function, str(error)) from None

    def _error(self, function: str, message: str, line: int | None = None) -> ModelEvaluationError:
        """Return the error for `function`, located at `line` or else at its definition."""
        if line is None:
            line = self._definition_line(function)
        return ModelEvaluationError(message, model=self.model_key, function=function, line=line)

    def _definition_line(self, function: str) -> int | None:
        """Return the line where the source defines `function`, if it can be found."""
        pattern = re.compile(
            rf"(?:\bfunction\s+{re.escape(function)}\s*\(|"
            rf"\b(?:var|let|const)\s+{re.escape(function)}\s*=|"
            rf"^\s*{re.escape(function)}\s*=)",
            re.MULTILINE,
        )
        match = pattern.search(self.source)
        return self.source.count("\n", 0, match.start()) + 1 if match else None

    def _context(self, function: str) -> _ModelContext:
        """Return the shared V8 context for this model, creating it on first use."""
        cached = self._cached_context
        if cached is not None and not cached.closed:
            return cached
        self._cached_context = context = self._shared_context(function)
        return context

    def _shared_context(self, function: str) -> _ModelContext:
        """Return the context from the module-level cache, or a new one put there."""
        key = self._context_key
        with _cache_lock:
            context = _contexts.get(key)
            if context is not None:
                _contexts.move_to_end(key)
                return context
        context = self._new_context(function)
        with _cache_lock:
            _contexts[key] = context
            while len(_contexts) > MAX_CONTEXTS:
                _, evicted = _contexts.popitem(last=False)
                evicted.close()
        return context

    def _new_context(self, function: str) -> _ModelContext:
        """Return a fresh context with the prelude and the user's source loaded."""
        racer, prepared = _new_racer()
        racer.set_soft_memory_limit(self.memory_limit_bytes // 2)
        racer.set_hard_memory_limit(self.memory_limit_bytes)
        context = _ModelContext(_Evaluator(racer, self.timeout_s))
        names = json.dumps(_global_names(self.attributes, self.source))
        bind = f"__parasim_bind({self._attributes_json}, {names})"
        body = f"__parasim_is_body({json.dumps(self.source)})"
        try:
            if not prepared:
                context.evaluator.eval(_PRELUDE)
            if context.evaluator.eval(f"{bind}; {body};") is not True:
                self._refuse_source(context, function)
            loaded = self._evaluate(context, function, _factory_script(self.source), loading=True)
            context.functions = frozenset(json.loads(str(loaded)))
        except BaseException:
            racer.close()
            raise
        return context

    def _refuse_source(self, context: _ModelContext, function: str) -> None:
        """Raise the error of a source that is not a function body: its syntax error at its
        line when it has one, else MSG_NOT_A_BODY (it would close the factory around it).

        `throw null;` on the source's first line stops the script before any of it runs.
        """
        code = f"throw null;{self.source}\n//# sourceURL={MODEL_SCRIPT_NAME}"
        racer = _mini_racer()
        try:
            context.evaluator.eval(code)
        except racer.JSParseException as error:
            text = str(error)
            raise self._error(function, _summary(text), _line_of(text, loading=True)) from None
        except racer.JSEvalException as error:
            if "SyntaxError" in str(error).split("\n", 1)[0]:
                text = str(error)
                raise self._error(function, _summary(text), _line_of(text, loading=True)) from None
        raise self._error(function, MSG_NOT_A_BODY, 1)

    def _evaluate(
        self, context: _ModelContext, function: str, code: str, *, loading: bool = False
    ) -> object:
        """Return the value of `code` in `context`, turning every failure into our error."""
        evaluator = context.evaluator
        racer = _mini_racer()
        try:
            return evaluator.eval(code, drained=True)
        except racer.JSTimeoutException:
            if evaluator.broken:
                self._discard(context)
            message, line = MSG_TIMEOUT.format(limit=self.timeout_s), None
        except racer.JSOOMException:
            self._discard(context)
            limit_mib = self.memory_limit_bytes / (1024 * 1024)
            message, line = MSG_OOM.format(limit_mib=limit_mib), None
        except (racer.JSParseException, racer.JSEvalException) as error:
            if evaluator.racer.was_hard_memory_limit_reached():
                self._discard(context)
                limit_mib = self.memory_limit_bytes / (1024 * 1024)
                message, line = MSG_OOM.format(limit_mib=limit_mib), None
            else:
                text = str(error)
                message, line = _summary(text), _line_of(text, loading=loading)
                state = _STATE_ERROR.match(message)
                if state:
                    message = MSG_KEEPS_STATE.format(what=message[state.end() :])
        raise self._error(function, message, line)

    def _discard(self, context: _ModelContext) -> None:
        """Forget a context V8 cannot use any more (after the heap limit was hit)."""
        with _cache_lock:
            for key, cached in list(_contexts.items()):
                if cached is context:
                    del _contexts[key]
        context.close()
