"""Restricted execution of application models: RestrictedPython's compiler, guards, builtins.

The first of the sandbox's two layers (simulator.sandbox): the code is compiled by
RestrictedPython and runs with restricted builtins, guarded attribute access (no `_` names,
no frame / code / generator internals, no `str.format`), guarded writes, an import
allow-list (`ALLOWED_MODULES`) and guarded `**`, `<<` and `*` that refuse integers over
MAX_INT_BITS before computing them.

`compile_user_code`, `user_globals` and `user_error_from_exception` are what the runner
(inside the child) uses; `execute_user_code` is a child entry that runs a model once.
"""

from __future__ import annotations

import ast
import builtins
import functools
import math
import operator
import re
import sys
import types
from collections.abc import Callable, Iterable, Iterator, Mapping
from typing import Any, NoReturn, cast

from RestrictedPython import compile_restricted_exec
from RestrictedPython.Guards import (
    guarded_iter_unpack_sequence,
    guarded_unpack_sequence,
    safe_builtins,
)
from RestrictedPython.transformer import INSPECT_ATTRIBUTES, RestrictingNodeTransformer

from simulator.errors import SandboxLimitError, SimulationError, UserCodeError
from simulator.sandbox import child_entry
from simulator.sandbox.wire import DEFAULT_FILENAME

__all__ = [
    "ALLOWED_MODULES",
    "DEFAULT_FILENAME",
    "MAX_INT_BITS",
    "compile_errors",
    "compile_user_code",
    "execute_user_code",
    "printed_output",
    "user_error_from_exception",
    "user_globals",
]

# `__name__` of the user's module: classes defined by the model carry it as `__module__`,
# which is how the write guard recognises the model's own objects.
USER_MODULE_NAME = "application_model"
PRINT_LIMIT_CHARS = 64 * 1024

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
MSG_ID = (
    "id() is not available in application models: an object's address differs from run to "
    "run, and so would the results; compare objects with 'is', or number them yourself"
)
MSG_BIG_INT = (
    "{op}: the integer result would exceed {limit:,} bits (about {digits:,} decimal digits), "
    "the limit for application models; use floats for such magnitudes"
)


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
    return set(bindings(tree))


def bindings(tree: ast.AST) -> Iterator[str]:
    """Yield the name of every binding or unbinding in the code (any scope), once each."""
    for node in ast.walk(tree):
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store | ast.Del):
            yield node.id
        elif isinstance(node, ast.arg):
            yield node.arg
        elif isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            yield node.name
        elif isinstance(node, ast.alias):
            yield (node.asname or node.name).split(".")[0]
        elif isinstance(node, ast.ExceptHandler | ast.MatchAs | ast.MatchStar) and node.name:
            yield node.name
        elif isinstance(node, ast.MatchMapping) and node.rest:
            yield node.rest
        elif isinstance(node, ast.Global | ast.Nonlocal):
            yield from node.names


class ModelTransformer(RestrictingNodeTransformer):
    """RestrictedPython's policy, plus `a ** b`, `a << b` and `a * b` through guards.

    Two guards are left out where they cannot matter (the sim API's hot path, issue 16):
    `*` with a numeric constant operand (`_is_safe_factor`), and reading a public attribute
    of a trusted API object (`TRUSTED_GLOBALS`: the runner's `sim`) that the code never
    rebinds, so the name can only mean the object the runner put there.
    """

    TRUSTED_GLOBALS: frozenset[str] = frozenset()

    def visit_Module(self, node: ast.Module) -> ast.AST | None:
        self._trusted = self.TRUSTED_GLOBALS - self.bound_by_model(node)
        visited = super().visit_Module(node)
        return visited if isinstance(visited, ast.AST) else None

    def bound_by_model(self, node: ast.Module) -> set[str]:
        """Return the names the model binds (a trusted name it binds is not trusted)."""
        return bound_names(node)

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
    code, errors = _compile(source, filename, trusted_sim=trusted_sim)
    if errors or code is None:
        raise errors[0] if errors else UserCodeError("cannot compile")
    return code


def compile_errors(source: str, filename: str = DEFAULT_FILENAME) -> list[UserCodeError]:
    """Return every error the restricted compiler finds in an application model, in order.

    A syntax error stops Python's parser, so it comes alone; the restricted compiler's own
    refusals (names starting with "_", say) are all found in one pass.
    """
    return _compile(source, filename, trusted_sim=False)[1]


def _compile(
    source: str, filename: str, *, trusted_sim: bool
) -> tuple[types.CodeType | None, list[UserCodeError]]:
    policy = _ApplicationTransformer if trusted_sim else ModelTransformer
    try:
        result = compile_restricted_exec(source, filename=filename, policy=policy)
    except (ValueError, SyntaxError) as error:  # e.g. NUL bytes in the source
        return None, [UserCodeError(f"cannot compile: {error}")]
    errors = [_compile_error(text) for text in result.errors]
    if result.code is None and not errors:
        errors.append(UserCodeError("cannot compile"))
    return (None if errors else result.code), errors


def _compile_error(text: str) -> UserCodeError:
    """Return the error of one of RestrictedPython's messages ("Line 3: ...")."""
    match = _ERROR_LINE.match(text)
    if match:
        line = int(match.group(1)) if match.group(1).isdigit() else None
        message = match.group(2)
    else:
        line, message = None, text
    # RestrictedPython appends the whole statement; the line number already locates it.
    return UserCodeError(message.split(" at statement:", 1)[0].strip(), line=line)


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
# model's need, and small enough that computing such a result stays quick.
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


def unavailable_id(value: object, /) -> NoReturn:
    """The `id` builtin of application models: refused, since addresses make runs differ."""
    raise UserCodeError(MSG_ID)


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


def _attribute_guard() -> Callable[..., Any]:
    """Return `guarded_getattr`, or the C core's copy of it when the core is in use: the
    reads the guard lets through answered in C (a model's `params.put`, `tag.equals`: a
    model makes them on every call), every other call passed to this module's
    `guarded_getattr`, so its rules and messages stay here."""
    # Imported here: a run's builtins need the engine's C core, a web process's checks of a
    # model (compile_errors) do not.
    from simulator.hotpath import attribute_guard

    return cast(Callable[..., Any], attribute_guard(guarded_getattr, frozenset(INSPECT_ATTRIBUTES)))


def _multiply_guard() -> Callable[..., Any]:
    """Return `guarded_mul`, or the C core's copy of it when the core is in use: the products
    of ints and floats the guard lets through made in C (a model's `rank * steps`, on every
    call), every other call passed to this module's `guarded_mul`, so its rules and messages
    stay here."""
    from simulator.hotpath import multiply_guard  # imported here: see _attribute_guard

    return cast(Callable[..., Any], multiply_guard(guarded_mul, MAX_INT_BITS))


@functools.cache
def _builtins() -> dict[str, object]:
    """Return the builtins an application model sees: one table, shared by every process.

    Sharing is safe because user code cannot reach it: `__builtins__` and every other name
    starting with "_" is refused by the restricted compiler. One table instead of one per
    process keeps a process's memory to what is its own.
    """
    table = {k: v for k, v in safe_builtins.items() if k not in _REMOVED_BUILTINS}
    table.update(_EXTRA_BUILTINS)
    attribute_guard = _attribute_guard()
    table.update(
        getattr=attribute_guard,
        hasattr=guarded_hasattr,
        setattr=guarded_setattr,
        delattr=guarded_delattr,
        pow=guarded_pow_builtin,
        id=unavailable_id,
        __import__=_restricted_import,
    )
    # The guards the restricted compiler calls, found here when the globals lack them (the
    # code looks names up in its globals, then in its builtins): one table for every process
    # instead of one copy each.
    table.update(
        __metaclass__=type,
        _print_=_print_collector,
        _getattr_=attribute_guard,
        _getitem_=_getitem,
        _getiter_=iter,
        _write_=guarded_write,
        _inplacevar_=inplace_var,
        _pow_=guarded_pow,
        _lshift_=guarded_lshift,
        _mul_=_multiply_guard(),
        _apply_=_apply,
        _unpack_sequence_=guarded_unpack_sequence,
        _iter_unpack_sequence_=guarded_iter_unpack_sequence,
    )
    return table


_PRINT_BUFFER_KEY = "__parasim_print_buffer__"


def _print_collector(_getattr: object = None) -> _PrintCollector:
    """RestrictedPython's `_print_`, one for every process (in `_builtins`): the bounded
    buffer lives in the globals of the code that prints, made at its first print, so a
    process that never prints carries none."""
    caller = sys._getframe(1).f_globals
    buffer = caller.get(_PRINT_BUFFER_KEY)
    if not isinstance(buffer, _PrintBuffer):
        buffer = caller[_PRINT_BUFFER_KEY] = _PrintBuffer()
    return _PrintCollector(buffer)


def shared_builtins(extra: Mapping[str, object]) -> dict[str, object]:
    """Return `_builtins` with `extra`, the names every process of a run sees alike (the
    API's classes): one table for the run's processes instead of the names in each one's
    globals. Names starting with "_" are reserved for the guards and are rejected."""
    _check_reserved(extra)
    table = dict(_builtins())
    table.update(extra)
    return table


def user_globals(
    extra: Mapping[str, object],
    builtins: dict[str, object] | None = None,
    *,
    names_checked: bool = False,
) -> dict[str, object]:
    """Return globals for running restricted user code: `extra`, with `builtins` (default
    `_builtins`: safe builtins, guards and the print collector, shared).

    `extra` supplies the model's API (`sim`, `tag`, `rank`, variables...); names starting
    with "_" are reserved for the guards and are rejected, unless `names_checked` (the
    caller had the same names checked by an earlier call: a run's processes).
    """
    if not names_checked:
        _check_reserved(extra)
    return {
        **extra,
        "__builtins__": _builtins() if builtins is None else builtins,
        "__name__": USER_MODULE_NAME,
    }


def _check_reserved(names: Iterable[str]) -> None:
    reserved = [name for name in names if name.startswith("_")]
    if reserved:
        raise ValueError(f"names starting with '_' are reserved: {reserved}")


def printed_output(globals_: Mapping[str, object]) -> str:
    """Return what the user code printed (bounded) in globals made by `user_globals`."""
    buffer = globals_.get(_PRINT_BUFFER_KEY)
    return buffer.text() if isinstance(buffer, _PrintBuffer) else ""


@child_entry
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
