"""Running untrusted application models: restricted compilation and a limited child process.

Two layers, so that a hole in one is caught by the other:

1. The code is compiled by RestrictedPython and runs with restricted builtins, guarded
   attribute access (no `_` names, no frame / code / generator internals, no
   `str.format`), guarded writes, an import allow-list (`ALLOWED_MODULES`) and guarded
   `**`, `<<` and `*` that refuse integers over MAX_INT_BITS before computing them.
2. The whole simulation runs in a child process (`simulator._child`) with CPU-time, data,
   file-size, process-count and core-file limits, an empty environment, a fresh temporary
   directory, a wall-clock timeout enforced here, capped output and a capped result, and,
   when started as root, a dynamic unprivileged user id of its own.

Every way the child can end becomes a SimulationError that says what the user can do
(`_Run.outcome`): the child's faulthandler dump names the model's line for a crash (C stack
exhausted) and for the CPU-time and wall-clock limits. docs/sandbox.md, "Application
models: containment", lists each runaway and its test.

`run_sandboxed` is what the web side calls; `compile_user_code`, `user_globals` and
`user_error_from_exception` are what the runner (inside the child) uses.
"""

from __future__ import annotations

import ast
import atexit
import builtins
import contextlib
import functools
import json
import math
import operator
import os
import re
import selectors
import signal
import subprocess
import time
import types
from collections.abc import Callable, Iterable, Mapping
from dataclasses import asdict, dataclass
from typing import Any, NoReturn

from RestrictedPython import compile_restricted_exec
from RestrictedPython.Guards import (
    guarded_iter_unpack_sequence,
    guarded_unpack_sequence,
    safe_builtins,
)
from RestrictedPython.transformer import INSPECT_ATTRIBUTES, RestrictingNodeTransformer

from simulator._child import WALL_DUMP_SIGNAL, decode_message
from simulator.errors import (
    SandboxCrashError,
    SandboxLimitError,
    SimulationError,
    UserCodeError,
    error_from_dict,
)
from simulator.launch import DEFAULT_ENTRY, SpareChild, StartedChild, start_child

__all__ = [
    "ALLOWED_MODULES",
    "DEFAULT_FILENAME",
    "MAX_INT_BITS",
    "Limits",
    "compile_user_code",
    "execute_user_code",
    "printed_output",
    "run_sandboxed",
    "user_error_from_exception",
    "user_globals",
]

DEFAULT_FILENAME = "<application model>"
# `__name__` of the user's module: classes defined by the model carry it as `__module__`,
# which is how the write guard recognises the model's own objects.
USER_MODULE_NAME = "application_model"
PRINT_LIMIT_CHARS = 64 * 1024
MESSAGE_LIMIT_CHARS = 1000

# Modules an application model may import, each with the names it exposes (None: every
# public name). functools is cut down: update_wrapper / wraps copy arbitrary attributes.
ALLOWED_MODULES: dict[str, tuple[str, ...] | None] = {
    "math": None,
    "itertools": None,
    "statistics": (
        "NormalDist",
        "StatisticsError",
        "correlation",
        "covariance",
        "fmean",
        "geometric_mean",
        "harmonic_mean",
        "linear_regression",
        "mean",
        "median",
        "median_grouped",
        "median_high",
        "median_low",
        "mode",
        "multimode",
        "pstdev",
        "pvariance",
        "quantiles",
        "stdev",
        "variance",
    ),
    "functools": ("cache", "cmp_to_key", "lru_cache", "partial", "reduce", "total_ordering"),
}

MSG_IMPORT_FORBIDDEN = "import of {name!r} is not allowed (allowed: {allowed})"
MSG_IMPORT_NAME = "cannot import name {name!r} from {module!r}"
MSG_RELATIVE_IMPORT = "relative imports are not allowed"
MSG_PRIVATE_ATTRIBUTE = '"{name}" is an invalid attribute name because it starts with "_"'
MSG_RESTRICTED_ATTRIBUTE = '"{name}" is a restricted name, forbidden in application models'
MSG_FORMAT = "the format() methods of str are not allowed in application models"
MSG_WRITE = "cannot modify attributes or items of a {type} object"
MSG_WALL = "the run exceeded the wall-clock limit of {limit:g} s"
MSG_CPU = "the run exceeded the CPU-time limit of {limit:g} s"
MSG_MEMORY = "the run exceeded the memory limit of {limit_mb:g} MB"
MSG_OUTPUT = "the run wrote more than {limit_kb:g} KB to stdout/stderr"
MSG_RESULT = "the result exceeds the size limit of {limit_mb:g} MB"
MSG_CRASH = "the simulation process ended without a result ({how}){where}: {advice}{stderr}"
MSG_STACK_EXHAUSTED = (
    "RecursionError: the interpreter's C stack was exhausted (the process was killed by "
    "SIGSEGV), e.g. by hashing, comparing or iterating a very deeply nested data structure "
    "(a tuple in a tuple in a tuple...); flatten it"
)
MSG_KILLED = (
    "the run was killed by SIGKILL, most likely by the system's out-of-memory killer (the "
    "run's own memory limit is {limit_mb:g} MB){where}; reduce the memory the model uses"
)
MSG_FILE_SIZE = "the run exceeded the file-size limit"
MSG_GARBLED = "the simulation process sent a garbled result; please report it with the model"
MSG_TRUNCATED = " after an incomplete result ({size} bytes)"
# What the user can do when a signal ends the child (MSG_CRASH's "advice").
SIGNAL_ADVICE: dict[int, str] = {
    signal.SIGSEGV: (
        "the application model exhausted the interpreter's C stack, e.g. with a deeply nested "
        "data structure (a tuple in a tuple in a tuple...); flatten it"
    ),
    signal.SIGABRT: (
        "the interpreter or a library it uses aborted, as happens when memory runs out inside "
        "it; reduce the memory the model uses, and report it if it persists"
    ),
}
SIGNAL_ADVICE[signal.SIGBUS] = SIGNAL_ADVICE[signal.SIGSEGV]
ADVICE_REPORT = "the simulator crashed; please report it with the model"
ADVICE_EXIT = "the simulator failed before it could report; please report it with the model"
MSG_BIG_INT = (
    "{op}: the integer result would exceed {limit:,} bits (about {digits:,} decimal digits), "
    "the limit for application models; use floats for such magnitudes"
)
MSG_PRIVILEGES = "cannot drop root privileges for the simulation process: {error}"


# --------------------------------------------------------------------------------------
# Restricted compilation


# RestrictedPython prefixes "Line N: ", or "Line None: " when Python gave no line (NUL bytes).
_ERROR_LINE = re.compile(r"^Line (\d+|None): (.*)$", re.DOTALL)


# Binary operators whose integer results can outgrow memory and time from small operands:
# compiled into calls of guards in the model's globals (`user_globals`).
_GUARDED_OPERATORS: dict[type[ast.operator], str] = {
    ast.Pow: "_pow_",
    ast.LShift: "_lshift_",
    ast.Mult: "_mul_",
}


# An operand that is one of these constants cannot make `*` produce a huge integer: a float
# makes the product a float, a small integer adds at most its bits to the other operand's
# (which `*`, `**` and `<<` guards already bound), so such products skip the guard.
_SAFE_FACTOR_BITS = 64


def _is_safe_factor(node: ast.expr) -> bool:
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub | ast.UAdd):
        node = node.operand
    if not isinstance(node, ast.Constant) or isinstance(node.value, bool):
        return False
    value = node.value
    return isinstance(value, float) or (
        isinstance(value, int) and value.bit_length() <= _SAFE_FACTOR_BITS
    )


def bound_names(tree: ast.AST) -> set[str]:
    """Return every name the code binds or unbinds anywhere (any scope)."""
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store | ast.Del):
            names.add(node.id)
        elif isinstance(node, ast.arg):
            names.add(node.arg)
        elif isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            names.add(node.name)
        elif isinstance(node, ast.alias):
            names.add((node.asname or node.name).split(".")[0])
        elif isinstance(node, ast.ExceptHandler | ast.MatchAs | ast.MatchStar) and node.name:
            names.add(node.name)
        elif isinstance(node, ast.MatchMapping) and node.rest:
            names.add(node.rest)
        elif isinstance(node, ast.Global | ast.Nonlocal):
            names.update(node.names)
    return names


class ModelTransformer(RestrictingNodeTransformer):
    """RestrictedPython's policy, plus `a ** b`, `a << b` and `a * b` through guards.

    Two guards are left out where they cannot matter (the sim API's hot path, issue 16):
    `*` with a numeric constant operand (`_is_safe_factor`), and reading a public attribute
    of a trusted API object (`TRUSTED_GLOBALS`: the runner's `sim`) that the code never
    rebinds, so the name can only mean the object the runner put there.
    """

    TRUSTED_GLOBALS: frozenset[str] = frozenset()

    def visit_Module(self, node: ast.Module) -> ast.AST | None:
        self._trusted = self.TRUSTED_GLOBALS - bound_names(node)
        visited = super().visit_Module(node)
        return visited if isinstance(visited, ast.AST) else None

    def visit_Attribute(self, node: ast.Attribute) -> ast.AST | None:
        value = node.value
        if (
            isinstance(node.ctx, ast.Load)
            and isinstance(value, ast.Name)
            and value.id in getattr(self, "_trusted", ())
            and not node.attr.startswith("_")
            and not node.attr.endswith("__roles__")
            and node.attr not in INSPECT_ATTRIBUTES
        ):
            return node  # `sim.computation`: a plain attribute read of the trusted object
        visited = super().visit_Attribute(node)
        return visited if isinstance(visited, ast.AST) else None

    def visit_BinOp(self, node: ast.BinOp) -> ast.AST | None:
        visited = super().visit_BinOp(node)
        guard = _GUARDED_OPERATORS.get(type(node.op))
        if guard is None or not isinstance(visited, ast.BinOp):
            return visited if isinstance(visited, ast.AST) else None
        if isinstance(node.op, ast.Mult) and (
            _is_safe_factor(visited.left) or _is_safe_factor(visited.right)
        ):
            return visited
        call = ast.Call(
            func=ast.copy_location(ast.Name(guard, ast.Load()), node),
            args=[visited.left, visited.right],
            keywords=[],
        )
        return ast.copy_location(call, node)


class _ApplicationTransformer(ModelTransformer):
    TRUSTED_GLOBALS = frozenset({"sim"})


def compile_user_code(
    source: str, filename: str = DEFAULT_FILENAME, *, trusted_sim: bool = False
) -> types.CodeType:
    """Return the restricted code object of an application model; raise UserCodeError.

    `trusted_sim`: the globals' `sim` is the runner's sim API object (simulator.api.Sim),
    whose public attributes the code may then read without the attribute guard.
    """
    policy = _ApplicationTransformer if trusted_sim else ModelTransformer
    try:
        result = compile_restricted_exec(source, filename=filename, policy=policy)
    except (ValueError, SyntaxError) as error:  # e.g. NUL bytes in the source
        raise UserCodeError(f"cannot compile: {error}") from None
    if result.errors or result.code is None:
        first = result.errors[0] if result.errors else "cannot compile"
        match = _ERROR_LINE.match(first)
        if match:
            line = int(match.group(1)) if match.group(1).isdigit() else None
            message = match.group(2)
        else:
            line, message = None, first
        # RestrictedPython appends the whole statement; the line number already locates it.
        message = message.split(" at statement:", 1)[0].strip()
        raise UserCodeError(message, line=line)
    return result.code


def user_error_from_exception(
    exc: BaseException, filename: str = DEFAULT_FILENAME
) -> SimulationError:
    """Return the error to report for an exception raised while running user code.

    The line is the innermost traceback frame in the user's file. Our own errors pass
    through (a UserCodeError gains the line if it had none); MemoryError is a limit.
    """
    line = None
    tb = exc.__traceback__
    while tb is not None:
        if tb.tb_frame.f_code.co_filename == filename:
            line = tb.tb_lineno
        tb = tb.tb_next
    if isinstance(exc, UserCodeError):
        if exc.line is None and line is not None:
            return UserCodeError(exc.detail, line=line, process=exc.process)
        return exc
    if isinstance(exc, SimulationError):
        return exc
    if isinstance(exc, MemoryError):
        where = f" (application model, line {line})" if line is not None else ""
        return SandboxLimitError("memory", f"the run ran out of memory{where}")
    try:
        text = str(exc)
    except Exception:  # a broken __str__ of an exception class the model defined
        text = ""
    if len(text) > MESSAGE_LIMIT_CHARS:
        text = text[:MESSAGE_LIMIT_CHARS] + " [...]"
    message = f"{type(exc).__name__}: {text}" if text else type(exc).__name__
    return UserCodeError(message, line=line)


# --------------------------------------------------------------------------------------
# Restricted globals


_RAISE = object()
_BLOCKED_TYPES = (types.FrameType, types.CodeType, types.TracebackType)


def guarded_getattr(obj: object, name: str, default: object = _RAISE) -> Any:
    """Return `obj.name` unless the name is private, an inspection hook or str.format."""
    if type(name) is not str:
        raise TypeError("attribute name must be a string")
    if name.startswith("_"):
        raise AttributeError(MSG_PRIVATE_ATTRIBUTE.format(name=name))
    if name in INSPECT_ATTRIBUTES or isinstance(obj, _BLOCKED_TYPES):
        raise AttributeError(MSG_RESTRICTED_ATTRIBUTE.format(name=name))
    if name in ("format", "format_map") and (
        isinstance(obj, str) or (isinstance(obj, type) and issubclass(obj, str))
    ):
        raise AttributeError(MSG_FORMAT)
    if default is _RAISE:
        return getattr(obj, name)
    return getattr(obj, name, default)


def guarded_hasattr(obj: object, name: str) -> bool:
    """Return whether `obj.name` exists and may be read."""
    try:
        guarded_getattr(obj, name)
    except AttributeError:
        return False
    return True


_WRITABLE_TYPES = (dict, list, set)


def guarded_write(obj: Any) -> Any:
    """Return `obj` when the model may write its items or attributes, else raise TypeError.

    Allowed: plain dicts, lists and sets, instances of classes the model defined, and
    objects of trusted classes that declare `_guarded_writes = True` (RestrictedPython's
    convention; the model cannot set `_` attributes, so it cannot forge it).
    """
    cls = type(obj)
    if cls in _WRITABLE_TYPES or getattr(cls, "_guarded_writes", False) is True:
        return obj
    if (
        not isinstance(obj, type | types.ModuleType | types.FunctionType)
        and getattr(cls, "__module__", None) == USER_MODULE_NAME
    ):
        return obj
    raise TypeError(MSG_WRITE.format(type=cls.__name__))


def guarded_setattr(obj: object, name: str, value: object) -> None:
    """Set `obj.name` under the write guard and the attribute-name rules."""
    if type(name) is not str or name.startswith("_"):
        raise AttributeError(MSG_PRIVATE_ATTRIBUTE.format(name=name))
    setattr(guarded_write(obj), name, value)


def guarded_delattr(obj: object, name: str) -> None:
    """Delete `obj.name` under the write guard and the attribute-name rules."""
    if type(name) is not str or name.startswith("_"):
        raise AttributeError(MSG_PRIVATE_ATTRIBUTE.format(name=name))
    delattr(guarded_write(obj), name)


# The largest integer result of `**`, `<<` and `*` in an application model: far above any
# model's need, and computed in milliseconds (a power this size takes about 10 ms).
MAX_INT_BITS = 1_000_000


def _refuse_big_int(op: str) -> NoReturn:
    digits = int(MAX_INT_BITS * math.log10(2))
    raise UserCodeError(MSG_BIG_INT.format(op=op, limit=MAX_INT_BITS, digits=digits))


def _check_power(base: Any, exponent: Any, op: str) -> None:
    """Refuse an integer power whose result would exceed MAX_INT_BITS, before computing it."""
    if isinstance(base, int) and isinstance(exponent, int) and exponent > 0:
        size = abs(base)
        if size > 1 and (exponent > MAX_INT_BITS or exponent * math.log2(size) > MAX_INT_BITS):
            _refuse_big_int(op)


def _check_lshift(value: Any, shift: Any, op: str) -> None:
    if (
        isinstance(value, int)
        and isinstance(shift, int)
        and value
        and shift > 0
        and value.bit_length() + shift > MAX_INT_BITS
    ):
        _refuse_big_int(op)


def _check_mul(left: Any, right: Any, op: str) -> None:
    if (
        isinstance(left, int)
        and isinstance(right, int)
        and left.bit_length() + right.bit_length() > MAX_INT_BITS
    ):
        _refuse_big_int(op)


def guarded_pow(base: Any, exponent: Any) -> Any:
    """Return `base ** exponent`, refusing integer results over MAX_INT_BITS."""
    _check_power(base, exponent, "**")
    return base**exponent


def guarded_lshift(value: Any, shift: Any) -> Any:
    """Return `value << shift`, refusing integer results over MAX_INT_BITS."""
    _check_lshift(value, shift, "<<")
    return value << shift


def guarded_mul(left: Any, right: Any) -> Any:
    """Return `left * right`, refusing integer results over MAX_INT_BITS.

    Sequence repetition ("x" * 10**12) is left to the memory limit: it fails at once.
    """
    # Inlined (not _check_mul): this runs for every `*` of the model.
    if (
        isinstance(left, int)
        and isinstance(right, int)
        and left.bit_length() + right.bit_length() > MAX_INT_BITS
    ):
        _refuse_big_int("*")
    return left * right


def guarded_pow_builtin(base: Any, exponent: Any, mod: Any = None) -> Any:
    """The `pow` builtin, refusing integer results over MAX_INT_BITS (modular powers pass)."""
    if mod is None:
        _check_power(base, exponent, "pow()")
    return pow(base, exponent, mod)


def _guarded_inplace(
    check: Callable[[Any, Any, str], None], apply: Callable[[Any, Any], Any], op: str
) -> Callable[[Any, Any], Any]:
    def inplace(target: Any, value: Any) -> Any:
        check(target, value, op)
        return apply(target, value)

    return inplace


_INPLACE_OPERATORS: dict[str, Callable[[Any, Any], Any]] = {
    "+=": operator.iadd,
    "-=": operator.isub,
    "*=": _guarded_inplace(_check_mul, operator.imul, "*="),
    "/=": operator.itruediv,
    "//=": operator.ifloordiv,
    "%=": operator.imod,
    "**=": _guarded_inplace(_check_power, operator.ipow, "**="),
    "<<=": _guarded_inplace(_check_lshift, operator.ilshift, "<<="),
    ">>=": operator.irshift,
    "&=": operator.iand,
    "|=": operator.ior,
    "^=": operator.ixor,
    "@=": operator.imatmul,
}


def inplace_var(op: str, target: Any, value: Any) -> Any:
    """Return the result of `target op value` for an augmented assignment (`x += 1`)."""
    return _INPLACE_OPERATORS[op](target, value)


def _apply(function: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
    return function(*args, **kwargs)


def _getitem(obj: Any, key: Any) -> Any:
    return obj[key]


class _PrintBuffer:
    """Keep the first PRINT_LIMIT_CHARS characters the model prints, drop the rest."""

    def __init__(self) -> None:
        self.parts: list[str] = []
        self.size = 0
        self.dropped = 0

    def write(self, text: str) -> None:
        room = PRINT_LIMIT_CHARS - self.size
        if room <= 0:
            self.dropped += len(text)
            return
        self.parts.append(text[:room])
        self.size += min(len(text), room)
        self.dropped += max(0, len(text) - room)

    def text(self) -> str:
        suffix = f"\n[... {self.dropped} characters dropped]" if self.dropped else ""
        return "".join(self.parts) + suffix


class _PrintCollector:
    """RestrictedPython's `_print_` protocol, writing to a shared bounded buffer."""

    def __init__(self, buffer: _PrintBuffer) -> None:
        self.buffer = buffer

    def __call__(self) -> str:
        return self.buffer.text()

    def _call_print(
        self,
        *objects: object,
        sep: str | None = " ",
        end: str | None = "\n",
        file: object = None,
        flush: bool = False,
    ) -> None:
        sep = " " if sep is None else str(sep)
        end = "\n" if end is None else str(end)
        self.buffer.write(sep.join(str(obj) for obj in objects) + end)


_module_proxies: dict[str, types.ModuleType] = {}


def _module_proxy(name: str) -> types.ModuleType:
    """Return a module holding only the allowed, non-module names of module `name`.

    Proxies are shared between runs and processes: the write guard refuses modules, so
    user code cannot change them.
    """
    proxy = _module_proxies.get(name)
    if proxy is None:
        proxy = _module_proxies[name] = _new_module_proxy(name)
    return proxy


def _new_module_proxy(name: str) -> types.ModuleType:
    real = __import__(name)
    allowed = ALLOWED_MODULES[name]
    names: Iterable[str] = (
        allowed if allowed is not None else (n for n in dir(real) if not n.startswith("_"))
    )
    proxy = types.ModuleType(name)
    for attribute in names:
        value = getattr(real, attribute)
        if not isinstance(value, types.ModuleType):
            setattr(proxy, attribute, value)
    return proxy


def _restricted_import(
    name: str,
    globals: Mapping[str, object] | None = None,
    locals: Mapping[str, object] | None = None,
    fromlist: Iterable[str] | None = (),
    level: int = 0,
) -> types.ModuleType:
    """Return an allowed module (as a restricted proxy); raise UserCodeError otherwise."""
    if level != 0:
        raise UserCodeError(MSG_RELATIVE_IMPORT)
    if name not in ALLOWED_MODULES:
        allowed = ", ".join(sorted(ALLOWED_MODULES))
        raise UserCodeError(MSG_IMPORT_FORBIDDEN.format(name=name, allowed=allowed))
    proxy = _module_proxy(name)
    for item in fromlist or ():
        if not hasattr(proxy, item):
            raise UserCodeError(MSG_IMPORT_NAME.format(name=item, module=name))
    return proxy


_EXTRA_BUILTINS: dict[str, object] = {
    name: getattr(builtins, name)
    for name in (
        "all",
        "any",
        "dict",
        "enumerate",
        "filter",
        "frozenset",
        "iter",
        "list",
        "map",
        "max",
        "min",
        "next",
        "reversed",
        "set",
        "sorted",
        "sum",
        "tuple",
        "zip",
    )
}
_REMOVED_BUILTINS = frozenset({"setattr", "delattr", "_getattr_"})


@functools.cache
def _builtins() -> dict[str, object]:
    """Return the builtins an application model sees: one table, shared by every process.

    Sharing is safe because user code cannot reach it: `__builtins__` and every other name
    starting with "_" is refused by the restricted compiler. One table instead of one per
    process saves 3.3 KB a process (bench/RESULTS.md, memory of 100,000 processes).
    """
    table = {k: v for k, v in safe_builtins.items() if k not in _REMOVED_BUILTINS}
    table.update(_EXTRA_BUILTINS)
    table.update(
        getattr=guarded_getattr,
        hasattr=guarded_hasattr,
        setattr=guarded_setattr,
        delattr=guarded_delattr,
        pow=guarded_pow_builtin,
        __import__=_restricted_import,
    )
    # The guards the restricted compiler calls, found here when the globals lack them (the
    # code looks names up in its globals, then in its builtins): one table for every process
    # instead of one copy each.
    table.update(
        _getattr_=guarded_getattr,
        _getitem_=_getitem,
        _getiter_=iter,
        _write_=guarded_write,
        _inplacevar_=inplace_var,
        _pow_=guarded_pow,
        _lshift_=guarded_lshift,
        _mul_=guarded_mul,
        _apply_=_apply,
        _unpack_sequence_=guarded_unpack_sequence,
        _iter_unpack_sequence_=guarded_iter_unpack_sequence,
    )
    return table


_PRINT_BUFFER_KEY = "__parasim_print_buffer__"


def user_globals(extra: Mapping[str, object]) -> dict[str, object]:
    """Return globals for running restricted user code: safe builtins and guards (shared,
    `_builtins`), the print collector, `extra`.

    `extra` supplies the model's API (`sim`, `tag`, `rank`, variables...); names starting
    with "_" are reserved for the guards and are rejected.
    """
    reserved = [name for name in extra if name.startswith("_")]
    if reserved:
        raise ValueError(f"names starting with '_' are reserved: {reserved}")
    buffer = _PrintBuffer()
    table: dict[str, object] = dict(extra)
    table.update(
        {
            "__builtins__": _builtins(),
            "__name__": USER_MODULE_NAME,
            "__metaclass__": type,
            "_print_": lambda _getattr=None: _PrintCollector(buffer),
            _PRINT_BUFFER_KEY: buffer,
        }
    )
    return table


def printed_output(globals_: Mapping[str, object]) -> str:
    """Return what the user code printed (bounded) in globals made by `user_globals`."""
    buffer = globals_.get(_PRINT_BUFFER_KEY)
    return buffer.text() if isinstance(buffer, _PrintBuffer) else ""


def execute_user_code(
    app_source: str,
    *,
    variables: Mapping[str, object] | None = None,
    filename: str = DEFAULT_FILENAME,
    progress: Callable[[float], None] | None = None,
    **_ignored: object,
) -> dict[str, object]:
    """Return the JSON-able globals and output of running `app_source` once, restricted.

    A minimal stand-in for the runner (same payload keywords), used to test the sandbox
    and to check a model's code without a system.
    """
    code = compile_user_code(app_source, filename)
    table = user_globals(dict(variables or {}))
    try:
        exec(code, table)
    except BaseException as error:  # user code may raise anything, SystemExit included
        raise user_error_from_exception(error, filename) from None
    if progress is not None:
        progress(1.0)
    result: dict[str, object] = {"status": "ok", "printed": printed_output(table)}
    result["globals"] = {
        name: value
        for name, value in table.items()
        if not name.startswith("_") and isinstance(value, int | float | str | bool | None)
    }
    return result


# --------------------------------------------------------------------------------------
# The child process


@dataclass(frozen=True)
class Limits:
    """Resource limits of one sandboxed run."""

    wall_s: float = 300.0  # wall clock, enforced by the parent
    cpu_s: int = 300  # RLIMIT_CPU
    # RLIMIT_DATA, not RLIMIT_AS: V8 reserves large virtual ranges and aborts under AS.
    data_bytes: int = 2 * 1024**3
    fsize_bytes: int = 16 * 1024**2  # RLIMIT_FSIZE
    nproc: int = 128  # RLIMIT_NPROC (threads count too); applied when started as root
    output_bytes: int = 1024**2  # the child's own stdout + stderr
    result_bytes: int = 64 * 1024**2  # the JSON messages on the result pipe


_READ_CHUNK = 65536
_STDERR_TAIL_CHARS = 2000
# The child's output kept for the error message: the last bytes, enough for a whole
# faulthandler dump (at most 100 frames).
_OUTPUT_TAIL_BYTES = 32 * 1024
# How long the child gets to write its stack at the wall-clock limit before it is killed.
_WALL_DUMP_WAIT_S = 0.5

# A faulthandler dump starts with one of these lines; its frames follow, innermost first.
_DUMP_START = re.compile(
    r"^(?:Fatal Python error: .*|Stack \(most recent call first\):"
    r"|(?:Current thread|Thread) 0x[0-9a-f]+ \(most recent call first\):)$",
    re.MULTILINE,
)
_DUMP_HEADER = re.compile(
    r"^(?:Stack|(?:Current thread|Thread) 0x[0-9a-f]+) \(most recent call first\):$",
    re.MULTILINE,
)


def crash_line(stderr: str, filename: str = DEFAULT_FILENAME) -> tuple[int | None, str]:
    """Return (the model's innermost line in the last faulthandler dump, stderr without dumps).

    The child's faulthandler writes the Python stack to stderr when it crashes or reaches a
    time limit (`_child._report_crashes`); the dump itself, with the simulator's own paths,
    is not shown to the user.
    """
    start = _DUMP_START.search(stderr)
    if start is None:
        return None, stderr
    headers = list(_DUMP_HEADER.finditer(stderr, start.start()))
    frames = stderr[headers[-1].end() :] if headers else ""
    user_frame = re.search(
        r'^  File "' + re.escape(filename) + r'", line (\d+) in ', frames, re.MULTILINE
    )
    return (int(user_frame.group(1)) if user_frame else None), stderr[: start.start()]


class _Run:
    """The parent's side of one child process: pipes, limits, messages."""

    def __init__(self, process: subprocess.Popen[bytes], result_fd: int, limits: Limits) -> None:
        self.process = process
        self.limits = limits
        self.result_fd = result_fd
        self.pending: list[bytes] = []  # the chunks of a message whose newline has not come
        self.result_size = 0
        self.output = b""
        self.output_size = 0
        self.final: dict[str, Any] | None = None
        self.status: int | None = None
        self.cpu_s = 0.0

    def kill(self) -> None:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(self.process.pid, signal.SIGKILL)

    def reap(self, *, block: bool) -> bool:
        """Return whether the child has exited, recording its status and CPU time."""
        if self.status is not None:
            return True
        try:
            pid, status, usage = os.wait4(self.process.pid, 0 if block else os.WNOHANG)
        except ChildProcessError:
            pid, status, usage = self.process.pid, 0, None
        if pid == 0:
            return False
        self.status = os.waitstatus_to_exitcode(status)
        self.process.returncode = self.status
        if usage is not None:
            self.cpu_s = usage.ru_utime + usage.ru_stime
        return True

    def on_result_bytes(self, data: bytes, progress: Callable[[float], None] | None) -> None:
        self.result_size += len(data)
        if self.result_size > self.limits.result_bytes:
            self.fail("result", MSG_RESULT.format(limit_mb=self.limits.result_bytes / 1e6))
        # A message is one line; a large result arrives in many chunks, which are kept in a
        # list and joined once its newline came (linear in the result's size: joining the
        # pending bytes on every chunk was quadratic, 24 s for 60 MB).
        end = data.find(b"\n")
        if end < 0:
            self.pending.append(data)
            return
        lines = b"".join([*self.pending, data]).split(b"\n")
        rest = lines.pop()
        self.pending = [rest] if rest else []
        for line in lines:
            try:
                message = decode_message(line)
            except ValueError:
                self.kill()
                raise SandboxCrashError(MSG_GARBLED) from None
            if "progress" in message:
                if progress is not None:
                    progress(min(1.0, max(0.0, float(message["progress"]))))
            else:
                self.final = message

    def on_output_bytes(self, data: bytes) -> None:
        self.output_size += len(data)
        self.output = (self.output + data)[-_OUTPUT_TAIL_BYTES:]
        if self.output_size > self.limits.output_bytes:
            self.fail("output", MSG_OUTPUT.format(limit_kb=self.limits.output_bytes / 1e3))

    def fail(self, limit: str, message: str) -> NoReturn:
        self.kill()
        raise SandboxLimitError(limit, message)

    def where(self) -> str:
        """Return " (application model, line N)" from the child's last stack dump, or ""."""
        line, _ = crash_line(self.output.decode("utf-8", "replace"))
        return f" (application model, line {line})" if line is not None else ""

    def dump_stack(self, selector: selectors.BaseSelector) -> None:
        """Ask the child for its Python stack (WALL_DUMP_SIGNAL) and collect it from stderr."""
        try:
            os.kill(self.process.pid, WALL_DUMP_SIGNAL)
        except (ProcessLookupError, PermissionError):
            return
        deadline = time.monotonic() + _WALL_DUMP_WAIT_S
        seen = self.output_size
        while (now := time.monotonic()) < deadline:
            # The dump is one burst of writes: done once output came and then paused.
            ready = selector.select(timeout=min(0.05, deadline - now))
            if not ready and self.output_size > seen:
                return
            for key, _ in ready:
                if key.data == "output":
                    data = os.read(key.fd, _READ_CHUNK)
                    if not data:
                        selector.unregister(key.fd)
                    else:
                        self.on_output_bytes(data)
                elif not os.read(key.fd, _READ_CHUNK):  # a result now comes too late
                    selector.unregister(key.fd)

    def outcome(self) -> dict[str, Any]:
        """Return the result, or raise the error the child's messages or exit imply.

        Every end without a result is a SimulationError that says what the user can do: a
        limit (SandboxLimitError), a crash at a line of the model (UserCodeError), or a
        crash of the simulator (SandboxCrashError).
        """
        if self.final is not None:
            if "error" in self.final:
                raise error_from_dict(dict(self.final["error"]))
            result: dict[str, Any] = self.final["result"]
            return result
        status = self.status if self.status is not None else 0
        line, stderr = crash_line(self.output.decode("utf-8", "replace"))
        where = f" (application model, line {line})" if line is not None else ""
        if status == -signal.SIGXCPU or (
            status == -signal.SIGKILL and self.cpu_s >= self.limits.cpu_s
        ):
            raise SandboxLimitError("cpu", MSG_CPU.format(limit=self.limits.cpu_s) + where)
        if "out of memory" in stderr.lower() or "MemoryError" in stderr:
            raise SandboxLimitError(
                "memory", MSG_MEMORY.format(limit_mb=self.limits.data_bytes / 1e6)
            )
        if status == -signal.SIGKILL:
            limit_mb = self.limits.data_bytes / 1e6
            raise SandboxLimitError("memory", MSG_KILLED.format(limit_mb=limit_mb, where=where))
        if status == -signal.SIGXFSZ:
            raise SandboxLimitError("file size", MSG_FILE_SIZE)
        if status in (-signal.SIGSEGV, -signal.SIGBUS) and line is not None:
            raise UserCodeError(MSG_STACK_EXHAUSTED, line=line)
        tail = stderr[-_STDERR_TAIL_CHARS:].strip()
        details = {"where": where, "stderr": f":\n{tail}" if tail else ""}
        pending = sum(map(len, self.pending))
        truncated = MSG_TRUNCATED.format(size=pending) if pending else ""
        if status < 0:
            name = _signal_name(-status)
            advice = SIGNAL_ADVICE.get(-status, ADVICE_REPORT)
            how = f"killed by {name}{truncated}"
            message = MSG_CRASH.format(how=how, advice=advice, **details)
            raise SandboxCrashError(message, signal=name)
        how = f"exit status {status}{truncated}"
        message = MSG_CRASH.format(how=how, advice=ADVICE_EXIT, **details)
        raise SandboxCrashError(message, exit_status=status)


def _signal_name(number: int) -> str:
    try:
        return signal.Signals(number).name
    except ValueError:
        return f"signal {number}"


def run_sandboxed(
    payload: Mapping[str, Any],
    *,
    limits: Limits | None = None,
    progress: Callable[[float], None] | None = None,
    child: StartedChild | None = None,
    keep_spare: bool = False,
    _entry: str = DEFAULT_ENTRY,
) -> dict[str, Any]:
    """Return `run_simulation(**payload)` computed in a limited child process.

    `payload` holds run_simulation's keyword arguments, JSON-serialisable (the snapshot as
    a dict). `child`: a child started ahead for this run (simulator.launch.start_child,
    same entry), which the run then uses up; without it one is started here, or, with
    `keep_spare` (a process that runs simulation after simulation: a queue worker, a sweep),
    this process's spare child is used and the next one started once the run is over. Raise
    SandboxLimitError for a limit, UserCodeError for the model's code, and the runner's own
    SimulationError otherwise. `_entry` ("module:function") replaces the runner in tests.
    """
    limits = limits or Limits()
    try:
        payload_json = json.dumps(dict(payload))
    except (TypeError, ValueError) as error:
        if child is not None:
            child.discard()
        raise SimulationError(f"the run's parameters are not JSON-serialisable: {error}") from None
    if child is None:
        child = _SPARE.take() if keep_spare and _entry == _SPARE.entry else start_child(_entry)
    elif child.entry != _entry or child.sent:
        child.discard()
        raise ValueError("the started child is for another entry or was used already")
    run: _Run | None = None
    try:
        child.go(payload_json, asdict(limits))
        run = _Run(child.process, child.result_fd, limits)
        _supervise(run, progress)
        return run.outcome()
    finally:
        if run is not None:
            run.kill()
            run.reap(block=True)
        child.discard()
        if keep_spare:
            _SPARE.prepare()


_SPARE = SpareChild()
atexit.register(_SPARE.close)


def _supervise(run: _Run, progress: Callable[[float], None] | None) -> None:
    """Pump the child's pipes until it exits, enforcing the wall clock and size caps."""
    process = run.process
    assert process.stdout is not None and process.stderr is not None
    deadline = time.monotonic() + run.limits.wall_s
    selector = selectors.DefaultSelector()
    selector.register(run.result_fd, selectors.EVENT_READ, "result")
    selector.register(process.stdout.fileno(), selectors.EVENT_READ, "output")
    selector.register(process.stderr.fileno(), selectors.EVENT_READ, "output")
    exited_at: float | None = None
    try:
        while selector.get_map():
            now = time.monotonic()
            if now >= deadline:
                run.dump_stack(selector)
                run.fail("wall", MSG_WALL.format(limit=run.limits.wall_s) + run.where())
            if exited_at is None and run.reap(block=False):
                # Whatever the child left behind (forked processes) goes with it; the
                # pipes are then drained of what was already written.
                exited_at = now
                run.kill()
            if exited_at is not None and now - exited_at > 1.0:
                break
            for key, _ in selector.select(timeout=min(0.2, deadline - now)):
                fd = key.fd
                data = os.read(fd, _READ_CHUNK)
                if not data:
                    selector.unregister(fd)
                elif key.data == "result":
                    run.on_result_bytes(data, progress)
                else:
                    run.on_output_bytes(data)
    finally:
        selector.close()
    run.reap(block=True)
