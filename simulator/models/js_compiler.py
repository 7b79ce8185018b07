"""JavaScript computational models compiled to Python: uncached calls in microseconds.

`compile_model(source)` reads a model written in the subset below and returns a
`CompiledModel` (its generated Python, compiled once), or a `Refusal` saying what it does not
cover; `CompiledModel.bind(attributes, global_names)` gives a `JsTwin` that
`simulator.shallow.ShallowFunctions` uses as it used the hand-written twins. A refused model,
and every call the compiled one declines (`Decline`), is evaluated in V8 as before, with V8's
errors and messages.

The subset: function declarations (at a body's top level, helper functions included) and
function expressions outside loops; `var`, `let`, `const`; `if`/`else`, `for`, `while`,
`do`/`while`, `break`, `continue`, `return`, `throw` (the call is left to V8, which throws
it); the ternary; `+ - * / % **`, unary `- + !`, `typeof`, `< > <= >= == != === !==`,
`&& || ??`, `in`; assignments (`= += -= *= /= %=`, to a member too) and `++`/`--`; numbers, strings, booleans,
`null`, `undefined`, `NaN`, `Infinity`; array and object literals and their members
(`length`, `push`, `indexOf`, `includes`, `join`, `filter`, `forEach`, `map`);
`Object.prototype.hasOwnProperty.call(obj, key)` and `Object.keys(obj)` on plain objects; a
number's `toFixed`; a string's `trim` and (ASCII) `toLowerCase`; `params.get(name[, fallback])`, `params.has(name)`,
`params.name`; `hw.name`, `hw[name]` and the attribute globals; `String(x)`, `isNaN(x)`,
`isFinite(x)`; the `Math` functions whose double result IEEE-754 fixes (`abs floor ceil round trunc sign sqrt min max`,
the constants), `Math.exp` (V8's fdlibm, transcribed in `simulator.models.fdlibm`) and
`Math.pow`/`**` (V8's: the C library's `pow` after ECMAScript's special cases, `js_pow`).

Why the values are V8's: a JavaScript number is an IEEE-754 double, and Python's float is
the same double with the same correctly rounded `+ - * /` and `sqrt`; `%` is C's `fmod`
(exact); the coercions (ToNumber, ToString of a number, `==`, truthiness with NaN, `+` of
strings) are written out below as ECMAScript defines them. What Python would raise for
(a division by zero, `fmod`'s domain, a value of a kind the helpers do not read, a name
read before its `let`) declines the call rather than guessing. The other transcendental
functions (`Math.log`, `sin`...) are refused: V8 computes them with its own code (fdlibm's
or LLVM libc's), which differs from the platform's libm in the last bit for some arguments. `tests/simulator/models/test_js_compiler.py` compares the compiled models with V8
on random inputs (hypothesis) for every construct, bit for bit.

The sandbox's guarantees: a call runs the model's top level afresh (a fresh scope: nothing a
call assigns is seen by the next) unless the top level holds nothing a call could change
(functions and constants of primitive values only); a step budget counts loop iterations and
function calls, and a call past it is declined, so V8 runs it under its own time limit and
reports V8's error; strings past a length cap are declined likewise (V8's heap limit).
"""

from __future__ import annotations

import functools
import math
import re
import sys
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from decimal import ROUND_HALF_UP, Context, Decimal
from typing import Any, ClassVar

from simulator.models import fdlibm
from simulator.models.js_twins import Decline, JsTwin, js_params, json_number

__all__ = [
    "JS_GLOBAL_NAMES",
    "CompiledModel",
    "CompiledTwin",
    "Refusal",
    "clear_compiled_models",
    "compile_model",
    "referenced_names",
]

# The names the model's global object has before the attributes are bound, with those of its
# prototypes (`name in globalThis`: an attribute of such a name is no global, and a bare
# identifier of such a name is a builtin): V8's, as simulator.shallow's prelude leaves them.
# The tests check that V8 has no other (a newer V8 may add one: add it here).
JS_GLOBAL_NAMES = frozenset(
    {
        "AggregateError",
        "Array",
        "AsyncDisposableStack",
        "BigInt",
        "Boolean",
        "Date",
        "DisposableStack",
        "Error",
        "EvalError",
        "Function",
        "Infinity",
        "Intl",
        "Iterator",
        "JSON",
        "Map",
        "Math",
        "NaN",
        "Number",
        "Object",
        "Promise",
        "Proxy",
        "RangeError",
        "ReferenceError",
        "Reflect",
        "RegExp",
        "Set",
        "String",
        "SuppressedError",
        "Symbol",
        "SyntaxError",
        "TypeError",
        "URIError",
        "WeakMap",
        "WeakSet",
        "__defineGetter__",
        "__defineSetter__",
        "__lookupGetter__",
        "__lookupSetter__",
        "__parasim_bind",
        "__parasim_call",
        "__parasim_detail",
        "__parasim_is_body",
        "__parasim_model",
        "__proto__",
        "console",
        "constructor",
        "decodeURI",
        "decodeURIComponent",
        "encodeURI",
        "encodeURIComponent",
        "escape",
        "eval",
        "globalThis",
        "hasOwnProperty",
        "hw",
        "isFinite",
        "isNaN",
        "isPrototypeOf",
        "parseFloat",
        "parseInt",
        "propertyIsEnumerable",
        "toLocaleString",
        "toString",
        "undefined",
        "unescape",
        "valueOf",
        "arguments",
    }
)

STEP_BUDGET = 200_000  # loop iterations and function calls in one call before V8 takes it
MAX_STRING = 1 << 20  # characters; a longer string is left to V8 (and its heap limit)
_MAX_SOURCE_CHARS = 100_000
_MAX_DEPTH = 150  # nesting of the parse; deeper goes to V8


class Refusal(Exception):
    """The source uses something the compiler does not cover; the message says what."""

    def __init__(self, reason: str, line: int | None = None) -> None:
        super().__init__(f"line {line}: {reason}" if line else reason)
        self.reason = reason
        self.line = line


# --- Values ------------------------------------------------------------------------------------
# number: float; string: str; boolean: bool; null: None; undefined: UNDEF; array: JSArray;
# object: JSObject; hw: JSNullObject; params: JSParams; function: a Python function.


class _Undefined:
    """JavaScript's undefined (equal to itself only; Python's order and arithmetic refuse it,
    which declines the call)."""

    __slots__ = ()

    def __bool__(self) -> bool:
        return False

    def __repr__(self) -> str:
        return "undefined"


UNDEF: Any = _Undefined()


class JSArray(list):
    """An array; `frozen` for the attributes' (V8 freezes them: changing one throws)."""

    __slots__ = ("frozen",)

    def __init__(self, items: Any = (), frozen: bool = False) -> None:
        super().__init__(items)
        self.frozen = frozen

    def __bool__(self) -> bool:
        return True

    __hash__ = object.__hash__  # type: ignore[assignment]

    def __eq__(self, other: Any) -> bool:
        return self is other

    def __ne__(self, other: Any) -> bool:
        return self is not other


class JSObject(dict):
    """A plain object (Object.prototype's properties are not its own: reading one declines)."""

    __slots__ = ("frozen",)

    def __init__(self, items: Any = (), frozen: bool = False) -> None:
        super().__init__(items)
        self.frozen = frozen

    def __bool__(self) -> bool:
        return True

    __hash__ = object.__hash__  # type: ignore[assignment]

    def __eq__(self, other: Any) -> bool:
        return self is other

    def __ne__(self, other: Any) -> bool:
        return self is not other


class JSNullObject(JSObject):
    """`hw`: an object without a prototype (Object.create(null)), frozen."""

    __slots__ = ()


class JSParams(dict):
    """The params object: a copy of the values as the JavaScript reads them (its own
    properties but `get` and `has`); its prototype holds `get` and `has` over Object.prototype.
    `read` is `params.get`; `converted` keeps the arrays and objects read, one per name."""

    # no __init__ of its own: made by dict's (every call makes one)
    converted: dict[str, object] | None = None

    def read(self, name: Any, fallback: Any = UNDEF) -> Any:
        values = self
        if type(name) is not str:
            name = _to_key(name)
        if name == "__proto__":
            raise Decline  # the JSON's "__proto__" is no own property in V8
        if name not in values:
            return fallback
        value = values[name]
        kind = type(value)
        if kind is float or kind is str or kind is bool or value is None:
            return value
        if kind is int:
            return float(value)
        # an array or object is one object for the call: `get` twice gives the same one
        converted = self.converted
        if converted is None:
            converted = self.converted = {}
        if name not in converted:
            converted[name] = js_value(value)
        return converted[name]


# Object.prototype's properties: reading one from an object that lacks it is not undefined.
_OBJECT_PROTO = frozenset(
    {
        "constructor",
        "hasOwnProperty",
        "isPrototypeOf",
        "propertyIsEnumerable",
        "toLocaleString",
        "toString",
        "valueOf",
        "__proto__",
        "__defineGetter__",
        "__defineSetter__",
        "__lookupGetter__",
        "__lookupSetter__",
    }
)


_PLAIN_TYPES = frozenset({float, int, str, bool, type(None)})


def call_params(params: Mapping[str, object]) -> JSParams:
    """The params object of a call: the values as the JavaScript reads them from the JSON it is
    handed (`js_twins.js_params` where they are not plain numbers, strings and booleans)."""
    if "__proto__" in params:
        raise Decline  # the JSON's "__proto__" sets the object's prototype in V8
    if type(params) is dict:
        plain = _PLAIN_TYPES
        for key, value in params.items():
            if type(key) is not str or type(value) not in plain:
                return JSParams(js_params(params))
        return JSParams(params)
    return JSParams(js_params(params))


def js_value(value: Any, frozen: bool = False) -> Any:
    """Return the compiled code's value of a JSON value (an int is the double nearest it)."""
    kind = type(value)
    if kind is float or kind is str or kind is bool or value is None:
        return value
    if kind is int:
        return float(value)
    if kind is list or kind is tuple:
        return JSArray([js_value(item, frozen) for item in value], frozen)
    if kind is dict:
        items = value.items()
        if not all(type(key) is str and key != "__proto__" for key, _ in items):
            raise Decline
        return JSObject({key: js_value(item, frozen) for key, item in items}, frozen)
    raise Decline


# --- ECMAScript's operations -------------------------------------------------------------------

_NUMERIC_STRING = re.compile(r"[+-]?(?:Infinity|(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?)")
_RADIX_STRING = re.compile(r"0(?:[xX][0-9a-fA-F]+|[oO][0-7]+|[bB][01]+)")
_JS_SPACE = " \t\n\r\v\f"


def _string_to_number(text: str) -> float:
    """ToNumber of a string (ASCII ones; others are left to V8)."""
    if not text.isascii():
        raise Decline
    body = text.strip(_JS_SPACE)
    if body == "":
        return 0.0
    if _NUMERIC_STRING.fullmatch(body):
        if body.endswith("Infinity"):
            return -math.inf if body[0] == "-" else math.inf
        return float(body)
    if _RADIX_STRING.fullmatch(body):
        base = {"x": 16, "o": 8, "b": 2}[body[1].lower()]
        return float(int(body[2:], base))
    if any(ord(char) < 32 and char not in _JS_SPACE for char in body):
        raise Decline  # a control character: leave it to V8's reading
    return math.nan


def to_number(value: Any) -> float:
    """ToNumber of a primitive; an object (ToPrimitive may call the model) declines."""
    kind = type(value)
    if kind is float:
        return value
    if value is True:
        return 1.0
    if value is False or value is None:
        return 0.0
    if value is UNDEF:
        return math.nan
    if kind is str:
        return _string_to_number(value)
    raise Decline


_N = to_number


def number_to_string(x: float) -> str:
    """Number::toString(x): the shortest digits that read back as x (Python's repr finds the
    same digits), laid out as ECMAScript says."""
    if x != x:
        return "NaN"
    if x == 0:
        return "0"
    if x in (math.inf, -math.inf):
        return "Infinity" if x > 0 else "-Infinity"
    sign = "-" if x < 0 else ""
    _, digit_tuple, exponent = Decimal(repr(abs(x))).as_tuple()
    raw = "".join(map(str, digit_tuple)).lstrip("0")
    digits = raw.rstrip("0")
    point = len(raw) + int(exponent)
    k, n = len(digits), point
    if k <= n <= 21:
        return sign + digits + "0" * (n - k)
    if 0 < n <= 21:
        return sign + digits[:n] + "." + digits[n:]
    if -6 < n <= 0:
        return sign + "0." + "0" * (-n) + digits
    e = n - 1
    exp = ("+" if e >= 0 else "-") + str(abs(e))
    if k == 1:
        return sign + digits + "e" + exp
    return sign + digits[0] + "." + digits[1:] + "e" + exp


def to_string(value: Any) -> str:
    """ToString of a primitive or an array; other objects decline."""
    kind = type(value)
    if kind is str:
        return value
    if kind is float:
        return number_to_string(value)
    if value is True:
        return "true"
    if value is False:
        return "false"
    if value is None:
        return "null"
    if value is UNDEF:
        return "undefined"
    if kind is JSArray:
        return _join(value, ",")
    raise Decline


def _to_key(value: Any) -> str:
    """ToPropertyKey of a primitive."""
    return to_string(value)


def truthy(value: Any) -> bool:
    """ToBoolean."""
    if value is True:
        return True
    if value is False or value is None or value is UNDEF:
        return False
    kind = type(value)
    if kind is float:
        return value == value and value != 0.0
    if kind is str:
        return value != ""
    return True


def _primitive(value: Any) -> Any:
    """ToPrimitive (default hint) of what the compiled code holds."""
    if type(value) is JSArray:
        return _join(value, ",")
    if isinstance(value, (dict, JSParams)) or callable(value):
        raise Decline  # its toString/valueOf may be the model's own
    return value


def add(a: Any, b: Any) -> Any:
    """The `+` operator."""
    if type(a) is float and type(b) is float:
        return a + b
    a, b = _primitive(a), _primitive(b)
    if type(a) is str or type(b) is str:
        text = to_string(a) + to_string(b)
        if len(text) > MAX_STRING:
            raise Decline
        return text
    return to_number(a) + to_number(b)


def _code_units_comparable(a: str, b: str) -> bool:
    """Whether Python's order of a and b is JavaScript's (UTF-16 code units)."""
    return (a.isascii() or max(a) < "\ud800") and (b.isascii() or max(b) < "\ud800")


def less(a: Any, b: Any) -> bool | None:
    """IsLessThan(a, b): None for undefined (a NaN was compared)."""
    a, b = _primitive(a), _primitive(b)
    if type(a) is str and type(b) is str:
        if not _code_units_comparable(a, b):
            raise Decline
        return a < b
    x, y = to_number(a), to_number(b)
    if x != x or y != y:
        return None
    return x < y


def lt(a: Any, b: Any) -> bool:
    if type(a) is float and type(b) is float:
        return a < b
    return less(a, b) is True


def gt(a: Any, b: Any) -> bool:
    if type(a) is float and type(b) is float:
        return a > b
    return less(b, a) is True


def le(a: Any, b: Any) -> bool:
    if type(a) is float and type(b) is float:
        return a <= b
    return less(b, a) is False


def ge(a: Any, b: Any) -> bool:
    if type(a) is float and type(b) is float:
        return a >= b
    return less(a, b) is False


def strict_equal(a: Any, b: Any) -> bool:
    """`===`."""
    kind = type(a)
    if kind is not type(b):
        return False
    if kind is float or kind is str or kind is bool:
        return a == b
    return a is b


def loose_equal(a: Any, b: Any) -> bool:
    """`==` (IsLooselyEqual)."""
    ka, kb = type(a), type(b)
    if ka is kb:
        return strict_equal(a, b)
    if (a is None or a is UNDEF) and (b is None or b is UNDEF):
        return True
    if a is None or a is UNDEF or b is None or b is UNDEF:
        return False
    if ka is bool:
        return loose_equal(to_number(a), b)
    if kb is bool:
        return loose_equal(a, to_number(b))
    if ka is float and kb is str:
        return a == to_number(b)
    if ka is str and kb is float:
        return to_number(a) == b
    primitive = (float, str)
    if ka in primitive and kb not in primitive:
        return loose_equal(a, _primitive(b))
    if kb in primitive and ka not in primitive:
        return loose_equal(_primitive(a), b)
    return False


def typeof(value: Any) -> str:
    kind = type(value)
    if kind is float:
        return "number"
    if kind is str:
        return "string"
    if kind is bool:
        return "boolean"
    if value is UNDEF:
        return "undefined"
    if callable(value):
        return "function"
    return "object"


def remainder(a: float, b: float) -> float:
    """`%` of two numbers: fmod (its domain errors decline)."""
    return math.fmod(a, b)


def _index(key: Any) -> int | None:
    """The array index a key names, if any."""
    if type(key) is float:
        if key.is_integer() and 0 <= key < 4294967295:
            return int(key)
        return None
    if type(key) is str and key.isdigit() and key.isascii() and (key == "0" or key[0] != "0"):
        number = int(key)
        return number if number < 4294967295 else None
    return None


# The names `get` never reads from the params object's dict: its prototype's methods, and
# "__proto__" (the JSON's is no own property in V8).
_PARAMS_OWN_NAMES = frozenset({"get", "has", "__proto__"})


def get(obj: Any, key: Any) -> Any:
    """`obj[key]` and `obj.key`."""
    kind = type(obj)
    if kind is JSObject or kind is JSNullObject:
        if type(key) is not str:
            key = _to_key(key)
        value = obj.get(key, _MISSING)
        if value is _MISSING:
            if kind is JSObject and key in _OBJECT_PROTO:
                raise Decline
            return UNDEF
        return value
    if kind is JSArray:
        index = _index(key)
        if index is not None:
            return obj[index] if index < len(obj) else UNDEF
        if key == "length":
            return float(len(obj))
        raise Decline
    if kind is JSParams:
        if type(key) is not str:
            key = _to_key(key)
        if key in _PARAMS_OWN_NAMES or (key not in obj and key in _OBJECT_PROTO):
            raise Decline
        return obj.read(key)
    if kind is str:
        if not obj.isascii():
            raise Decline  # JavaScript counts UTF-16 code units
        if key == "length":
            return float(len(obj))
        index = _index(key)
        if index is not None:
            return obj[index] if index < len(obj) else UNDEF
    raise Decline


_MISSING = object()


def put(obj: Any, key: Any, value: Any) -> Any:
    """`obj[key] = value`."""
    kind = type(obj)
    if kind is JSObject and not obj.frozen:
        if type(key) is not str:
            key = _to_key(key)
        if key in _OBJECT_PROTO:
            raise Decline
        obj[key] = value
        return value
    if kind is JSArray and not obj.frozen:
        index = _index(key)
        if index is not None and index < len(obj):
            obj[index] = value
            return value
        if index is not None and index == len(obj):
            obj.append(value)
            return value
    raise Decline


def contains(key: Any, obj: Any) -> bool:
    """`key in obj`."""
    kind = type(obj)
    if kind is JSNullObject or kind is JSObject:
        if type(key) is not str:
            key = _to_key(key)
        return key in obj or (kind is JSObject and key in _OBJECT_PROTO)
    if kind is JSArray:
        index = _index(key if type(key) is float else _to_key(key))
        if index is not None:
            return index < len(obj)
    raise Decline


def has_own(obj: Any = UNDEF, key: Any = UNDEF, *_: Any) -> bool:
    """`Object.prototype.hasOwnProperty.call(obj, key)` on a plain object or `hw`: its own keys
    only (Object.prototype's are not). Anything else (an array, the params object, a
    primitive, undefined) is left to V8."""
    kind = type(obj)
    if kind is JSNullObject or kind is JSObject:
        if type(key) is not str:
            key = _to_key(key)
        return key in obj
    raise Decline


def object_keys(obj: Any = UNDEF, *_: Any) -> JSArray:
    """`Object.keys(obj)` of a plain object or `hw`: its own keys in insertion order. A key
    that is an array index (which JavaScript lists first, in numeric order) is left to V8."""
    kind = type(obj)
    if kind is JSNullObject or kind is JSObject:
        keys = list(obj)
        if any(_index(key) is not None for key in keys):
            raise Decline
        return JSArray(keys)
    raise Decline


def _join(array: Any, separator: Any) -> str:
    sep = "," if separator is UNDEF else to_string(separator)
    parts: list[str] = []
    total = 0
    for item in array:
        text = "" if item is None or item is UNDEF else to_string(item)
        total += len(text) + len(sep)
        if total > MAX_STRING:
            raise Decline
        parts.append(text)
    return sep.join(parts)


def method(obj: Any, name: str, *args: Any) -> Any:
    """`obj.name(args)` for the methods the subset covers."""
    kind = type(obj)
    if kind is JSParams:
        if name == "get":
            return obj.read(args[0] if args else UNDEF, args[1] if len(args) > 1 else UNDEF)
        if name == "has":
            key = args[0] if args else UNDEF
            return dict.__contains__(obj, key if type(key) is str else _to_key(key))
        raise Decline
    if kind is JSArray:
        if name == "push":
            if obj.frozen:
                raise Decline
            obj.extend(args)
            return float(len(obj))
        if name == "indexOf" or name == "includes":
            if len(args) > 1:
                raise Decline
            target = args[0] if args else UNDEF
            for position, item in enumerate(obj):
                if (
                    strict_equal(item, target)
                    if name == "indexOf"
                    else _same_value_zero(item, target)
                ):
                    return float(position) if name == "indexOf" else True
            return -1.0 if name == "indexOf" else False
        if name == "join":
            return _join(obj, args[0] if args else UNDEF)
        if name in ("filter", "forEach", "map"):
            callback = args[0] if args else UNDEF
            if not callable(callback) or len(args) > 1:
                raise Decline
            results: list[object] = []
            for position in range(len(obj)):
                if position >= len(obj):
                    break
                item = obj[position]
                value = callback(item, float(position), obj)
                if name == "map":
                    results.append(value)
                elif name == "filter" and truthy(value):
                    results.append(item)
            return UNDEF if name == "forEach" else JSArray(results)
        raise Decline
    if kind is float and name == "toFixed":
        return _to_fixed(obj, args[0] if args else 0.0)
    if kind is str and name == "toLowerCase" and obj.isascii():
        # ASCII's upper case letters only: Unicode's case mapping is left to V8
        return obj.lower()
    if kind is str and name == "trim" and obj.isascii():
        # JavaScript's white space and line terminators, of which ASCII has these six;
        # a string with other characters is left to V8
        return obj.strip(" \t\n\v\f\r")
    raise Decline


# The kinds of a params object's values that `get` answers as they are (JSParams.read), and
# with undefined: what a compiled `params.get(name)` and `params.name` read from the dict.
_READ_AS_IS = (float, str, bool, type(None))
_READ_OR_UNDEFINED = (*_READ_AS_IS, _Undefined)


def params_get(obj: Any, name: Any = UNDEF, fallback: Any = UNDEF, *_: Any) -> Any:
    """`obj.get(name, fallback)`: the params object's (`JSParams.read`) without a dispatch."""
    if type(obj) is JSParams:
        return obj.read(name, fallback)
    return method(obj, "get", name, fallback)


def _same_value_zero(a: Any, b: Any) -> bool:
    if type(a) is float and type(b) is float and a != a and b != b:
        return True
    return strict_equal(a, b)


_WIDE = Context(prec=500)  # enough digits for any double below 1e21 with 100 places


def _to_fixed(x: float, digits: Any) -> str:
    """Number.prototype.toFixed: the exact binary value rounded half away from zero (the
    larger n of a tie, on the magnitude), "-" only below zero."""
    places = to_number(digits)
    if places != places:
        places = 0.0
    places = float(math.trunc(places))
    if not 0 <= places <= 100:
        raise Decline  # RangeError: V8 says so
    if x != x:
        return "NaN"
    if not -1e21 < x < 1e21:
        raise Decline  # written as String(x)
    quantum = Decimal(1).scaleb(-int(places))
    exact = Decimal(abs(x))  # the binary value, every digit of it
    text = format(exact.quantize(quantum, rounding=ROUND_HALF_UP, context=_WIDE), "f")
    return "-" + text if x < 0 else text


def js_string(value: Any) -> str:
    """`String(value)`."""
    return to_string(value)


def js_is_nan(value: Any) -> bool:
    number = to_number(value)
    return number != number


def js_is_finite(value: Any) -> bool:
    return math.isfinite(to_number(value))


# --- Math ----------------------------------------------------------------------------------------


def _math_min(*args: Any) -> float:
    numbers = [to_number(arg) for arg in args]
    result = math.inf
    for x in numbers:
        if x != x:
            return math.nan
        if x < result or (x == 0 and result == 0 and math.copysign(1.0, x) < 0):
            result = x
    return result


def _math_max(*args: Any) -> float:
    numbers = [to_number(arg) for arg in args]
    result = -math.inf
    for x in numbers:
        if x != x:
            return math.nan
        if x > result or (x == 0 and result == 0 and math.copysign(1.0, x) > 0):
            result = x
    return result


def _unary_math(function: Callable[[float], float]) -> Callable[..., float]:
    def applied(x: Any = UNDEF, *_: Any) -> float:
        return function(to_number(x))

    return applied


def _floor(x: float) -> float:
    if not math.isfinite(x):
        return x
    result = float(math.floor(x))
    return result if result else math.copysign(0.0, x)


def _ceil(x: float) -> float:
    if not math.isfinite(x):
        return x
    result = float(math.ceil(x))
    return result if result else math.copysign(0.0, x)


def _trunc(x: float) -> float:
    if not math.isfinite(x):
        return x
    result = float(math.trunc(x))
    return result if result else math.copysign(0.0, x)


def _round(x: float) -> float:
    """Math.round: the nearest integer, a tie toward +infinity; -0 for [-0.5, -0]. `x - floor`
    is exact for every double (Sterbenz for |x| >= 1, a multiple of x's unit below 1 where
    it matters), so the comparison with 0.5 is."""
    if not math.isfinite(x):
        return x
    whole = math.floor(x)
    result = float(whole + 1) if x - whole >= 0.5 else float(whole)
    if result == 0 and (x < 0 or math.copysign(1.0, x) < 0):
        return -0.0
    return result


def _sign(x: float) -> float:
    if x != x or x == 0:
        return x
    return 1.0 if x > 0 else -1.0


def _sqrt(x: float) -> float:
    if x != x or x < 0:
        return math.nan
    return math.sqrt(x)


def js_pow(base: Any, exponent: Any) -> float:
    """`**` and Math.pow as V8 computes them (`math::pow`, src/numbers/ieee754.cc, with
    `--use-std-math-pow`, V8's default): ECMAScript's NaN cases, `x * x` for 2 and
    `sqrt(x + 0)` for 0.5, otherwise the C library's `pow`, which Python's `math.pow` calls
    too (the same libm in the same process: the property tests compare them with V8's on
    random doubles). Python raises where C returns an infinity or NaN: those are C's values
    here."""
    x, y = to_number(base), to_number(exponent)
    if y != y:
        return math.nan
    if y == 2.0:
        return x * x
    if y == 0.5:
        if x == math.inf or x == -math.inf:
            return math.inf
        return math.sqrt(x + 0.0) if x >= 0.0 else math.nan  # +0 for -0; NaN below
    if (y == math.inf or y == -math.inf) and (x == 1.0 or x == -1.0):
        return math.nan
    try:
        return math.pow(x, y)
    except OverflowError:  # a finite x and y whose power overflows
        return -math.inf if x < 0 and _odd_integer(y) else math.inf
    except ValueError:
        if x == 0.0 and y < 0:  # a pole: 1 / (+-0)
            return -math.inf if math.copysign(1.0, x) < 0 and _odd_integer(y) else math.inf
        return math.nan  # a negative base to a non-integer power


def _odd_integer(y: float) -> bool:
    return y.is_integer() and abs(y) < 2.0**53 and int(y) % 2 == 1


_MATH_FUNCTIONS: dict[str, Callable[..., float]] = {
    "abs": _unary_math(abs),
    "floor": _unary_math(_floor),
    "ceil": _unary_math(_ceil),
    "round": _unary_math(_round),
    "trunc": _unary_math(_trunc),
    "sign": _unary_math(_sign),
    "sqrt": _unary_math(_sqrt),
    "min": _math_min,
    "max": _math_max,
    "pow": lambda x=UNDEF, y=UNDEF, *_: js_pow(x, y),
    "exp": _unary_math(fdlibm.exp),
}
_MATH_CONSTANTS = {
    "PI": math.pi,
    "E": math.e,
    "LN2": 0.6931471805599453,
    "LN10": 2.302585092994046,
    "LOG2E": 1.4426950408889634,
    "LOG10E": 0.4342944819032518,
    "SQRT2": 1.4142135623730951,
    "SQRT1_2": 0.7071067811865476,
}
_LIBM = frozenset(
    {
        "expm1", "log", "log1p", "log2", "log10", "sin", "cos", "tan", "asin", "acos",
        "atan", "atan2", "sinh", "cosh", "tanh", "asinh", "acosh", "atanh", "cbrt", "hypot",
    }
)  # fmt: skip


class _Budget(Exception):
    """The call's step budget is spent."""


def _over_budget() -> None:
    raise _Budget


def _undeclared(*_: Any) -> Any:
    """A global read that V8 would throw for, or a global written (V8 refuses or ignores it)."""
    raise Decline


RUNTIME: dict[str, object] = {
    "UNDEF": UNDEF,
    "JSArray": JSArray,
    "JSObject": JSObject,
    "JSParams": JSParams,
    "_N": to_number,
    "_S": to_string,
    "_T": truthy,
    "_add": add,
    "_lt": lt,
    "_gt": gt,
    "_le": le,
    "_ge": ge,
    "_seq": strict_equal,
    "_leq": loose_equal,
    "_typeof": typeof,
    "_mod": remainder,
    "_get": get,
    "_put": put,
    "_in": contains,
    "_has_own": has_own,
    "_keys": object_keys,
    "_method": method,
    "_pget": params_get,
    "_READ_AS_IS": _READ_AS_IS,
    "_READ_OR_UNDEFINED": _READ_OR_UNDEFINED,
    "_pow": js_pow,
    "_String": js_string,
    "_isNaN": js_is_nan,
    "_isFinite": js_is_finite,
    "_over": _over_budget,
    "_undeclared": _undeclared,
    "_INF": math.inf,
    "_NAN": math.nan,
    **{f"_M_{name}": function for name, function in _MATH_FUNCTIONS.items()},
}


# --- Reading the source ------------------------------------------------------------------------

_TOKEN = re.compile(
    r"""
    (?P<comment>//[^\n\r\u2028\u2029]*|/\*(?:[^*]|\*(?!/))*\*/)
    |(?P<space>[ \t\n\r\v\f\u00a0\ufeff\u2028\u2029]+)
    |(?P<number>0[xX][0-9a-fA-F]+|(?:(?:0|[1-9][0-9]*)(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][+-]?[0-9]+)?)
    |(?P<name>[A-Za-z_$][A-Za-z0-9_$]*)
    |(?P<string>"(?:[^"\\\n\r]|\\(?:\r\n|[^\r]|\r))*"|'(?:[^'\\\n\r]|\\(?:\r\n|[^\r]|\r))*')
    |(?P<punctuator>===|!==|\*\*=|\.\.\.|>>>=?|<<=|>>=|=>|==|!=|<=|>=|&&|\|\||\?\?=?|\?\.|\+\+|--
      |\+=|-=|\*=|/=|%=|&=|\|=|\^=|\*\*|<<|>>|&&=|\|\|=|[{}()\[\];,<>+\-*/%&|^!~?:=.])
    """,
    re.VERBOSE,
)
_BREAKS = re.compile(r"[\n\r\u2028\u2029]")
_ESCAPES = {"n": "\n", "t": "\t", "r": "\r", "b": "\b", "f": "\f", "v": "\v", "0": "\0"}
_KEYWORDS = frozenset(
    {
        "break", "case", "catch", "class", "const", "continue", "debugger", "default",
        "delete", "do", "else", "export", "extends", "false", "finally", "for", "function",
        "if", "import", "in", "instanceof", "new", "null", "return", "super", "switch", "this",
        "throw", "true", "try", "typeof", "var", "void", "while", "with", "yield", "let",
        "static", "enum", "await", "implements", "package", "protected", "interface",
        "private", "public", "arguments", "eval", "async", "of",
    }
)  # fmt: skip


@dataclass(frozen=True)
class _Token:
    kind: str
    text: str
    line: int
    after_break: bool
    value: object = None


def _string_value(text: str, line: int) -> str:
    body = text[1:-1]
    out: list[str] = []
    i = 0
    while i < len(body):
        char = body[i]
        if char != "\\":
            if ord(char) > 0xFFFF:
                raise Refusal("a character outside the Basic Multilingual Plane", line)
            out.append(char)
            i += 1
            continue
        nxt = body[i + 1]
        i += 2
        if nxt in _ESCAPES and not (nxt == "0" and i < len(body) and body[i].isdigit()):
            out.append(_ESCAPES[nxt])
        elif nxt == "x" and re.fullmatch(r"[0-9a-fA-F]{2}", body[i : i + 2]):
            out.append(chr(int(body[i : i + 2], 16)))
            i += 2
        elif nxt == "u" and re.fullmatch(r"[0-9a-fA-F]{4}", body[i : i + 4]):
            out.append(chr(int(body[i : i + 4], 16)))
            i += 4
        elif nxt in "\r\n\u2028\u2029":
            if nxt == "\r" and body[i : i + 1] == "\n":
                i += 1
        elif nxt.isdigit() or nxt in "xu":
            raise Refusal("an octal or malformed escape in a string", line)
        else:
            if ord(nxt) > 0xFFFF:
                raise Refusal("a character outside the Basic Multilingual Plane", line)
            out.append(nxt)
    return "".join(out)


def _tokens(source: str) -> list[_Token]:
    tokens: list[_Token] = []
    position, line, after_break = 0, 1, False
    while position < len(source):
        match = _TOKEN.match(source, position)
        if match is None:
            raise Refusal(f"the character {source[position]!r}", line)
        text = match.group()
        kind = match.lastgroup or ""
        start_line = line
        breaks = len(_BREAKS.findall(text.replace("\r\n", "\n")))
        line += breaks
        position = match.end()
        if kind in ("comment", "space"):
            after_break = after_break or breaks > 0
            continue
        value: object = None
        if kind == "number":
            if position < len(source) and (source[position].isalnum() or source[position] in "_$"):
                raise Refusal(f"the number {text + source[position]!r}", start_line)
            value = float(int(text, 16)) if text[:2] in ("0x", "0X") else float(text)
            if text.startswith("0") and len(text) > 1 and text[1].isdigit():
                raise Refusal("a legacy octal number", start_line)
        elif kind == "string":
            value = _string_value(text, start_line)
            kind = "str"
        elif kind == "punctuator" and text == "/" and _regex_may_start(tokens):
            raise Refusal("a regular expression", start_line)
        tokens.append(_Token(kind, text, start_line, after_break, value))
        after_break = False
    tokens.append(_Token("end", "", line, after_break))
    return tokens


def _regex_may_start(tokens: list[_Token]) -> bool:
    if not tokens:
        return True
    last = tokens[-1]
    if last.kind in ("number", "str"):
        return False
    if last.kind == "name":
        return last.text in _KEYWORDS and last.text not in ("this", "true", "false", "null")
    return last.text not in (")", "]", "}")


# AST: tuples (kind, ...), each expression's and statement's last element its line.


class _Parser:
    def __init__(self, tokens: list[_Token]) -> None:
        self.tokens = tokens
        self.at = 0
        self.depth = 0

    def peek(self, ahead: int = 0) -> _Token:
        return self.tokens[min(self.at + ahead, len(self.tokens) - 1)]

    def is_(self, text: str) -> bool:
        token = self.tokens[self.at]
        return token.text == text and token.kind in ("punctuator", "name")

    def take(self, text: str | None = None, kind: str | None = None) -> _Token:
        token = self.tokens[self.at]
        if (text is not None and (token.text != text or token.kind in ("str", "end"))) or (
            kind is not None and token.kind != kind
        ):
            shown = token.text or "the end"
            raise Refusal(f"expected {text or kind}, found {shown!r}", token.line)
        self.at += 1
        return token

    def eat(self, text: str) -> bool:
        if self.is_(text):
            self.at += 1
            return True
        return False

    def semicolon(self) -> None:
        if self.eat(";"):
            return
        token = self.peek()
        if token.text == "}" or token.kind == "end" or token.after_break:
            return
        raise Refusal(f"expected ';', found {token.text!r}", token.line)

    def identifier(self) -> str:
        token = self.take(kind="name")
        if token.text in _KEYWORDS:
            raise Refusal(f"{token.text!r} is not covered here", token.line)
        return token.text

    def nest(self) -> None:
        self.depth += 1
        if self.depth > _MAX_DEPTH:
            raise Refusal("nested too deep", self.peek().line)

    # statements

    def program(self) -> list[tuple]:
        body = []
        while self.peek().kind != "end":
            body.append(self.statement(top=True))
        return body

    def block(self) -> list[tuple]:
        self.take("{")
        body = []
        while not self.is_("}"):
            if self.peek().kind == "end":
                raise Refusal("an unclosed block", self.peek().line)
            body.append(self.statement(top=False))
        self.take("}")
        return body

    def function_body(self) -> list[tuple]:
        self.take("{")
        body = []
        while not self.is_("}"):
            if self.peek().kind == "end":
                raise Refusal("an unclosed function", self.peek().line)
            body.append(self.statement(top=True))
        self.take("}")
        return body

    def statement(self, top: bool) -> tuple:
        self.nest()
        try:
            return self._statement(top)
        finally:
            self.depth -= 1

    def _statement(self, top: bool) -> tuple:
        token = self.peek()
        line = token.line
        if token.kind == "punctuator":
            if token.text == "{":
                return ("block", self.block(), line)
            if token.text == ";":
                self.at += 1
                return ("empty", line)
        if token.kind == "name":
            word = token.text
            if word == "function":
                if not top:
                    raise Refusal("a function declared inside a block", line)
                self.at += 1
                if self.is_("*"):
                    raise Refusal("a generator", line)
                name = self.identifier()
                params, body = self.function_rest()
                return ("funcdecl", name, params, body, line)
            if word in ("var", "const") or (
                word == "let"
                and self.peek(1).kind == "name"
                and self.peek(1).text not in ("in", "instanceof")
            ):
                declaration = self.declaration()
                self.semicolon()
                return declaration
            if word == "if":
                self.at += 1
                self.take("(")
                test = self.expression()
                self.take(")")
                then = self.statement(top=False)
                other = self.statement(top=False) if self.eat("else") else None
                return ("if", test, then, other, line)
            if word == "while":
                self.at += 1
                self.take("(")
                test = self.expression()
                self.take(")")
                return ("while", test, self.statement(top=False), line)
            if word == "do":
                self.at += 1
                loop_body = self.statement(top=False)
                self.take("while")
                self.take("(")
                test = self.expression()
                self.take(")")
                self.eat(";")
                return ("dowhile", loop_body, test, line)
            if word == "for":
                return self.for_statement()
            if word == "return":
                self.at += 1
                value = None
                if not (
                    self.is_(";")
                    or self.is_("}")
                    or self.peek().kind == "end"
                    or self.peek().after_break
                ):
                    value = self.expression()
                self.semicolon()
                return ("return", value, line)
            if word == "throw":
                self.at += 1
                if self.peek().after_break:
                    raise Refusal("a line break after throw", line)
                self.expression()  # never evaluated: V8 throws it
                self.semicolon()
                return ("throw", line)
            if word in ("break", "continue"):
                self.at += 1
                if (
                    self.peek().kind == "name"
                    and not self.peek().after_break
                    and self.peek().text not in _KEYWORDS
                ):
                    raise Refusal(f"a labelled {word}", line)
                self.semicolon()
                return (word, line)
            if word in _KEYWORDS and word not in (
                "typeof",
                "true",
                "false",
                "null",
                "function",
                "this",
            ):
                raise Refusal(f"{word!r} is not covered here", line)
            if self.peek(1).text == ":" and self.peek(1).kind == "punctuator":
                raise Refusal("a label", line)
        expression = self.expression()
        self.semicolon()
        return ("expr", expression, line)

    def declaration(self) -> tuple:
        token = self.take(kind="name")
        kind, line = token.text, token.line
        items = []
        while True:
            name = self.identifier()
            value = None
            if self.eat("="):
                value = self.assignment()
            elif kind == "const":
                raise Refusal("a const without a value", line)
            items.append((name, value))
            if not self.eat(","):
                break
        return ("var", kind, items, line)

    def for_statement(self) -> tuple:
        line = self.take("for").line
        self.take("(")
        init: tuple | None = None
        if self.is_(";"):
            pass
        elif self.peek().text in ("var", "let", "const") and self.peek().kind == "name":
            init = self.declaration()
            if init[1] != "var":
                raise Refusal(f"a for loop's {init[1]} (one binding per iteration)", line)
        else:
            init = ("expr", self.expression(), line)
        if self.is_("in") or self.is_("of"):
            raise Refusal("for-in and for-of", line)
        self.take(";")
        test = None if self.is_(";") else self.expression()
        self.take(";")
        update = None if self.is_(")") else self.expression()
        self.take(")")
        return ("for", init, test, update, self.statement(top=False), line)

    def function_rest(self) -> tuple[list[str], list[tuple]]:
        self.take("(")
        params: list[str] = []
        while not self.is_(")"):
            if self.is_("..."):
                raise Refusal("a rest parameter", self.peek().line)
            params.append(self.identifier())
            if self.is_("="):
                raise Refusal("a default parameter", self.peek().line)
            if not self.eat(","):
                break
        self.take(")")
        if len(set(params)) != len(params):
            raise Refusal("a parameter named twice", self.peek().line)
        return params, self.function_body()

    # expressions (JavaScript's precedence)

    def expression(self) -> tuple:
        node = self.assignment()
        if self.is_(","):
            raise Refusal("the comma operator", self.peek().line)
        return node

    def assignment(self) -> tuple:
        self.nest()
        try:
            line = self.peek().line
            if self.peek().kind == "name" and self.peek(1).text == "=>":
                raise Refusal("an arrow function", line)
            if self.is_("(") and self._arrow_ahead():
                raise Refusal("an arrow function", line)
            target = self.conditional()
            token = self.peek()
            if token.kind == "punctuator" and token.text in ("=", "+=", "-=", "*=", "/=", "%="):
                if target[0] not in ("id", "member"):
                    raise Refusal("an assignment to something that is not a name or member", line)
                self.at += 1
                value = self.assignment()
                return ("assign", token.text, target, value, line)
            if (
                token.kind == "punctuator"
                and token.text.endswith("=")
                and token.text not in ("==", "===", "!=", "!==", "<=", ">=")
            ):
                raise Refusal(f"the operator {token.text}", line)
            return target
        finally:
            self.depth -= 1

    def _arrow_ahead(self) -> bool:
        depth = 0
        for ahead in range(len(self.tokens) - self.at):
            token = self.peek(ahead)
            if token.kind == "end":
                return False
            if token.text == "(" and token.kind == "punctuator":
                depth += 1
            elif token.text == ")" and token.kind == "punctuator":
                depth -= 1
                if depth == 0:
                    return self.peek(ahead + 1).text == "=>"
        return False

    def conditional(self) -> tuple:
        line = self.peek().line
        test = self.binary(0)
        if self.eat("?"):
            then = self.assignment()
            self.take(":")
            other = self.assignment()
            return ("cond", test, then, other, line)
        return test

    _LEVELS: ClassVar[list[tuple[str, ...]]] = [
        ("??",),
        ("||",),
        ("&&",),
        ("|",),
        ("^",),
        ("&",),
        ("==", "!=", "===", "!=="),
        ("<", ">", "<=", ">=", "in", "instanceof"),
        ("<<", ">>", ">>>"),
        ("+", "-"),
        ("*", "/", "%"),
    ]

    def binary(self, level: int) -> tuple:
        if level == len(self._LEVELS):
            return self.exponent()
        line = self.peek().line
        node = self.binary(level + 1)
        operators = self._LEVELS[level]
        while True:
            token = self.peek()
            if token.kind not in ("punctuator", "name") or token.text not in operators:
                return node
            if token.kind == "name" and token.text not in ("in", "instanceof"):
                return node
            operator = token.text
            if operator in ("|", "^", "&", "<<", ">>", ">>>", "instanceof"):
                raise Refusal(f"the operator {operator}", token.line)
            self.at += 1
            right = self.binary(level + 1)
            kind = "logical" if operator in ("&&", "||", "??") else "binary"
            node = (kind, operator, node, right, line)

    def exponent(self) -> tuple:
        line = self.peek().line
        base = self.unary()
        if self.is_("**"):
            if base[0] == "unary":
                raise Refusal("a unary operator before **", line)
            self.at += 1
            return ("binary", "**", base, self.exponent(), line)
        return base

    def unary(self) -> tuple:
        self.nest()
        try:
            token = self.peek()
            line = token.line
            if token.kind == "punctuator" and token.text in ("-", "+", "!"):
                self.at += 1
                return ("unary", token.text, self.unary(), line)
            if token.kind == "punctuator" and token.text in ("++", "--"):
                self.at += 1
                target = self.unary()
                if target[0] not in ("id", "member"):
                    raise Refusal(f"{token.text} of something that is not a name or member", line)
                return ("update", token.text, True, target, line)
            if token.kind == "name" and token.text == "typeof":
                self.at += 1
                return ("typeof", self.unary(), line)
            if token.kind == "name" and token.text in ("delete", "void", "await"):
                raise Refusal(f"the operator {token.text}", line)
            if token.kind == "punctuator" and token.text == "~":
                raise Refusal("the operator ~", line)
            node = self.postfix()
            after = self.peek()
            if after.kind == "punctuator" and after.text in ("++", "--") and not after.after_break:
                if node[0] not in ("id", "member"):
                    raise Refusal(f"{after.text} of something that is not a name or member", line)
                self.at += 1
                return ("update", after.text, False, node, line)
            return node
        finally:
            self.depth -= 1

    def postfix(self) -> tuple:
        node = self.primary()
        while True:
            token = self.peek()
            line = token.line
            if token.kind != "punctuator":
                return node
            if token.text == ".":
                self.at += 1
                name = self.take(kind="name").text
                node = ("member", node, ("str", name, line), line)
            elif token.text == "[":
                self.at += 1
                key = self.expression()
                self.take("]")
                node = ("member", node, key, line)
            elif token.text == "(":
                self.at += 1
                args = []
                while not self.is_(")"):
                    if self.is_("..."):
                        raise Refusal("a spread argument", line)
                    args.append(self.assignment())
                    if not self.eat(","):
                        break
                self.take(")")
                node = ("call", node, args, line)
            elif token.text == "?.":
                raise Refusal("optional chaining", line)
            else:
                return node

    def primary(self) -> tuple:
        token = self.peek()
        line = token.line
        if token.kind == "number":
            self.at += 1
            return ("num", token.value, line)
        if token.kind == "str":
            self.at += 1
            return ("str", token.value, line)
        if token.kind == "punctuator":
            if token.text == "(":
                self.at += 1
                node = self.expression()
                self.take(")")
                return node
            if token.text == "[":
                self.at += 1
                items = []
                while not self.is_("]"):
                    if self.is_(",") or self.is_("..."):
                        raise Refusal("an array hole or spread", line)
                    items.append(self.assignment())
                    if not self.eat(","):
                        break
                self.take("]")
                return ("array", items, line)
            if token.text == "{":
                self.at += 1
                entries = []
                while not self.is_("}"):
                    key_token = self.peek()
                    if key_token.kind == "name":
                        key = key_token.text
                    elif key_token.kind == "str":
                        key = str(key_token.value)
                    elif key_token.kind == "number":
                        key = number_to_string(float(key_token.value))  # type: ignore[arg-type]
                    else:
                        raise Refusal("a computed, spread or odd property key", key_token.line)
                    self.at += 1
                    if key == "__proto__" or not self.is_(":"):
                        raise Refusal("a shorthand, method or __proto__ property", key_token.line)
                    self.take(":")
                    entries.append((key, self.assignment()))
                    if not self.eat(","):
                        break
                self.take("}")
                return ("object", entries, line)
        if token.kind == "name":
            word = token.text
            if word in ("true", "false"):
                self.at += 1
                return ("bool", word == "true", line)
            if word == "null":
                self.at += 1
                return ("null", line)
            if word == "function":
                self.at += 1
                if self.is_("*"):
                    raise Refusal("a generator", line)
                name = None if self.is_("(") else self.identifier()
                params, body = self.function_rest()
                return ("func", name, params, body, line)
            if word == "new":
                self.at += 1
                callee = ("id", self.identifier(), line)
                args = []
                if self.eat("("):
                    while not self.is_(")"):
                        args.append(self.assignment())
                        if not self.eat(","):
                            break
                    self.take(")")
                return ("new", callee, args, line)
            if word in _KEYWORDS:
                raise Refusal(f"{word!r} is not covered here", line)
            self.at += 1
            return ("id", word, line)
        raise Refusal(f"{token.text or 'the end'!r} is not covered here", line)


# --- Writing Python ----------------------------------------------------------------------------

_JS_BUILTINS = JS_GLOBAL_NAMES
_BUILTIN_VALUES = {"undefined": "UNDEF", "NaN": "_NAN", "Infinity": "_INF"}
_BUILTIN_FUNCTIONS = {"String": "_String", "isNaN": "_isNaN", "isFinite": "_isFinite"}


class _Function:
    """A JavaScript function being written: its scopes and the Python it becomes."""

    def __init__(self, parent: _Function | None, in_loop: bool = False) -> None:
        self.parent = parent
        self.blocks: list[dict[str, str]] = [{}]
        self.nonlocals: set[str] = set()
        self.temps = 0
        self.loops = 0
        self.continue_update: tuple | None = None  # a for loop's update, run before continue
        self.return_kinds: list[str] = []
        self.declared: set[str] = set()  # Python names this function binds
        self.body: int | None = None  # id() of its body (None: the top level)

    def lookup(self, name: str) -> tuple[str, _Function] | None:
        function: _Function | None = self
        while function is not None:
            for block in reversed(function.blocks):
                if name in block:
                    return block[name], function
            function = function.parent
        return None


def _var_names(body: list[tuple]) -> list[str]:
    """The names `var` declares anywhere in a function body (not in nested functions)."""
    names: list[str] = []

    def visit(statement: tuple | None) -> None:
        if statement is None:
            return
        kind = statement[0]
        if kind == "var" and statement[1] == "var":
            names.extend(name for name, _ in statement[2])
        elif kind == "block":
            for inner in statement[1]:
                visit(inner)
        elif kind == "if":
            visit(statement[2])
            visit(statement[3])
        elif kind in ("while",):
            visit(statement[2])
        elif kind == "dowhile":
            visit(statement[1])
        elif kind == "for":
            visit(statement[1])
            visit(statement[4])

    for statement in body:
        visit(statement)
    return names


def _assigned_names(node: Any, out: set[str]) -> None:
    """Every identifier an assignment or update anywhere in `node` targets."""
    if isinstance(node, tuple) and node:
        if node[0] in ("assign", "update"):
            target = node[2] if node[0] == "assign" else node[3]
            if target[0] == "id":
                out.add(target[1])
        for item in node:
            _assigned_names(item, out)
    elif isinstance(node, list):
        for item in node:
            _assigned_names(item, out)


class _Writer:
    pending: list[str]
    current_indent: int

    def __init__(
        self,
        global_names: frozenset[str],
        numeric: frozenset[str] = frozenset(),
        returns_number: frozenset[int] = frozenset(),
    ) -> None:
        self.global_names = global_names
        # attributes whose value is a number (globals and hw members of kind "num")
        self.numeric = numeric
        # the bodies of the functions an earlier pass proved always return a number
        self.returns_number = returns_number
        self.proven: set[int] = set()
        self.declarations: dict[str, int] = {}  # a declared function's Python name: its body
        # what `_lightened` reads: each declaration's parameter count, each call of a declared
        # function by name (the caller's body, the callee, the argument count), each function
        # written (its body: its Python name), and the bodies without a step budget
        self.arity: dict[str, int] = {}
        self.named_calls: list[tuple[int | None, str, int]] = []
        self.defs: dict[int, tuple[str, list[tuple]]] = {}
        self.leaves: set[int] = set()
        self.lines: list[str] = []
        self.counter = 0
        self.hw_members: dict[str, str] = {}
        self.globals_used: dict[str, str] = {}

    def fresh(self, name: str) -> str:
        self.counter += 1
        return f"v{self.counter}_{name.replace('$', '_S')}"

    def emit(self, indent: int, text: str) -> None:
        self.lines.append("    " * indent + text)

    # declarations

    def declare_body(
        self, function: _Function, body: list[tuple], params: list[str], indent: int
    ) -> None:
        scope = function.blocks[0]
        for name in _var_names(body):
            if name not in scope:
                scope[name] = self.fresh(name)
                function.declared.add(scope[name])
                if name not in params:
                    self.emit(indent, f"{scope[name]} = UNDEF")
        self.declare_block(function, body)
        self.functions_first(function, body, indent)

    def declare_block(self, function: _Function, body: list[tuple]) -> None:
        block = function.blocks[-1]
        for statement in body:
            if statement[0] == "var" and statement[1] != "var":
                for name, _ in statement[2]:
                    if name in block:
                        raise Refusal(f"{name!r} declared twice", statement[3])
                    block[name] = self.fresh(name)
                    function.declared.add(block[name])
            elif statement[0] == "funcdecl":
                name = statement[1]
                if name in block and block[name] not in function.declared:
                    raise Refusal(f"{name!r} declared twice", statement[4])
                if name not in block:
                    block[name] = self.fresh(name)
                    function.declared.add(block[name])

    def functions_first(self, function: _Function, body: list[tuple], indent: int) -> None:
        """Function declarations are hoisted: written before the body's statements."""
        for statement in body:
            if statement[0] == "funcdecl":
                self.arity[function.blocks[-1][statement[1]]] = len(statement[2])
        for statement in body:
            if statement[0] == "funcdecl":
                python_name = function.blocks[-1][statement[1]]
                self.declarations[python_name] = id(statement[3])
                self.function(function, python_name, statement[2], statement[3], indent)

    def function(
        self, parent: _Function, python_name: str, params: list[str], body: list[tuple], indent: int
    ) -> None:
        if parent.loops:
            raise Refusal("a function made inside a loop")
        inner = _Function(parent)
        inner.body = id(body)
        self.defs[id(body)] = (python_name, body)
        names = []
        for param in params:
            python = self.fresh(param)
            inner.blocks[0][param] = python
            inner.declared.add(python)
            names.append(f"{python}=UNDEF")
        names.append("*_rest")
        self.emit(indent, f"def {python_name}({', '.join(names)}):")
        header = len(self.lines)
        if _is_leaf(body):
            self.leaves.add(id(body))
        else:  # a leaf (no loop, no call of a function) ends by itself
            self.emit(indent + 1, "B[0] -= 1")
            self.emit(indent + 1, "if B[0] < 0: _over()")
        self.declare_body(inner, body, params, indent + 1)
        for statement in body:
            self.statement(inner, statement, indent + 1)
        if body and body[-1][0] == "return" and body[-1][1] is not None:
            if all(kind == "num" for kind in inner.return_kinds):
                self.proven.add(id(body))
        else:
            self.emit(indent + 1, "return UNDEF")
        declarations = []
        if inner.nonlocals:
            declarations.append("nonlocal " + ", ".join(sorted(inner.nonlocals)))
        for offset, text in enumerate(declarations):
            self.lines.insert(header + offset, "    " * (indent + 1) + text)

    # statements

    def statements(self, function: _Function, body: list[tuple], indent: int) -> None:
        function.blocks.append({})
        self.declare_block(function, body)
        if function.loops:
            # a let or const is a new binding each time round a loop: unbound until its
            # declaration runs again (JavaScript's temporal dead zone: a read declines)
            for statement in body:
                if statement[0] == "var" and statement[1] != "var":
                    for name, _ in statement[2]:
                        python = function.blocks[-1][name]
                        self.emit(indent, "try:")
                        self.emit(indent + 1, f"del {python}")
                        self.emit(indent, "except NameError:")
                        self.emit(indent + 1, "pass")
        self.functions_first(function, body, indent)
        start = len(self.lines)
        for statement in body:
            self.statement(function, statement, indent)
        if len(self.lines) == start:
            self.emit(indent, "pass")
        function.blocks.pop()

    def statement(self, function: _Function, statement: tuple, indent: int) -> None:
        kind = statement[0]
        if kind in ("funcdecl", "empty"):
            return
        if kind == "block":
            self.statements(function, statement[1], indent)
        elif kind == "var":
            for name, value in statement[2]:
                found = function.lookup(name)
                assert found is not None
                python = found[0]
                if value is None:
                    if statement[1] != "var":
                        self.emit(indent, f"{python} = UNDEF")
                    continue
                code, _ = self.expression(function, value)
                self.emit(indent, f"{python} = {code}")
        elif kind == "expr":
            self.expression_statement(function, statement[1], indent)
        elif kind == "if":
            self.emit(indent, f"if {self.condition(function, statement[1])}:")
            self.branch(function, statement[2], indent + 1)
            if statement[3] is not None:
                self.emit(indent, "else:")
                self.branch(function, statement[3], indent + 1)
        elif kind == "return":
            code, kind = (
                ("UNDEF", "any")
                if statement[1] is None
                else self.expression(function, statement[1])
            )
            function.return_kinds.append(kind)
            self.emit(indent, f"return {code}")
        elif kind == "throw":
            self.emit(indent, "raise _Decline")
        elif kind in ("break", "continue"):
            if not function.loops:
                raise Refusal(f"{kind} outside a loop", statement[1])
            if kind == "continue" and function.continue_update:
                self.expression_statement(function, function.continue_update, indent)
            self.emit(indent, kind)
        elif kind == "while":
            function.loops += 1
            saved, function.continue_update = function.continue_update, None
            self.emit(indent, "while True:")
            self.emit(indent + 1, "B[0] -= 1")
            self.emit(indent + 1, "if B[0] < 0: _over()")
            self.emit(indent + 1, f"if not {self.condition(function, statement[1])}: break")
            self.branch(function, statement[2], indent + 1)
            function.continue_update = saved
            function.loops -= 1
        elif kind == "dowhile":
            function.loops += 1
            saved, function.continue_update = function.continue_update, None
            flag = self.temp(function)
            self.emit(indent, f"{flag} = True")
            self.emit(indent, "while True:")
            self.emit(indent + 1, "B[0] -= 1")
            self.emit(indent + 1, "if B[0] < 0: _over()")
            self.emit(
                indent + 1, f"if not {flag} and not {self.condition(function, statement[2])}: break"
            )
            self.emit(indent + 1, f"{flag} = False")
            if _has_continue(statement[1]):
                raise Refusal("continue in a do-while loop", statement[3])
            self.branch(function, statement[1], indent + 1)
            function.continue_update = saved
            function.loops -= 1
        elif kind == "for":
            _, init, test, update, body, _line = statement
            if init is not None:
                self.statement(function, init, indent)
            function.loops += 1
            saved, function.continue_update = function.continue_update, update
            self.emit(indent, "while True:")
            self.emit(indent + 1, "B[0] -= 1")
            self.emit(indent + 1, "if B[0] < 0: _over()")
            if test is not None:
                self.emit(indent + 1, f"if not {self.condition(function, test)}: break")
            self.branch(function, body, indent + 1)
            if update is not None:
                self.expression_statement(function, update, indent + 1)
            function.continue_update = saved
            function.loops -= 1
        else:  # pragma: no cover - the parser makes no other
            raise Refusal(f"the statement {kind}")

    def branch(self, function: _Function, statement: tuple, indent: int) -> None:
        if statement[0] == "var" and statement[1] != "var":
            raise Refusal(f"a {statement[1]} as the whole body of a branch or loop", statement[3])
        if statement[0] == "block":
            self.statements(function, statement[1], indent)
            return
        start = len(self.lines)
        self.statement(function, statement, indent)
        if len(self.lines) == start:
            self.emit(indent, "pass")

    def expression_statement(self, function: _Function, node: tuple, indent: int) -> None:
        if node[0] == "assign" and node[2][0] == "id":
            python = self.target(function, node[2])
            code = self.assigned_value(function, node)
            self.emit(indent, f"{python} = {code}" if python else f"_undeclared({code})")
            return
        if node[0] == "update" and node[3][0] == "id":
            python = self.target(function, node[3])
            if python is None:
                self.emit(indent, "_undeclared()")
                return
            sign = "+" if node[1] == "++" else "-"
            self.emit(indent, f"{python} = _N({python}) {sign} 1.0")
            return
        code, _ = self.expression(function, node)
        self.emit(indent, code)

    def temp(self, function: _Function) -> str:
        self.counter += 1
        name = f"t{self.counter}"
        function.declared.add(name)
        return name

    def target(self, function: _Function, node: tuple) -> str | None:
        found = function.lookup(node[1])
        if found is None:
            # a global: V8 refuses a new one (the state guard) or ignores a write to a frozen
            # one; either way V8 says what happens
            return None
        python, owner = found
        if owner is not function:
            function.nonlocals.add(python)
        return python

    def assigned_value(self, function: _Function, node: tuple) -> str:
        operator, target, value = node[1], node[2], node[3]
        code, kind = self.expression(function, value)
        if operator == "=":
            return code
        current, current_kind = self.expression(function, target)
        return self.arithmetic(operator[:-1], (current, current_kind), (code, kind))[0]

    # expressions: (Python code, kind), kind "num", "str", "bool" or "any"

    def condition(self, function: _Function, node: tuple) -> str:
        code, kind = self.expression(function, node)
        return _truth_code(code, kind)

    def arithmetic(
        self, operator: str, left: tuple[str, str], right: tuple[str, str]
    ) -> tuple[str, str]:
        (a, ka), (b, kb) = left, right
        if operator == "+":
            if ka == "num" and kb == "num":
                return f"({a} + {b})", "num"
            kind = "str" if "str" in (ka, kb) else "any"
            return f"_add({a}, {b})", kind
        x = a if ka == "num" else _number_code(a)
        y = b if kb == "num" else _number_code(b)
        if operator == "%":
            return f"_mod({x}, {y})", "num"
        if operator == "**":
            return f"_pow({x}, {y})", "num"
        return f"({x} {operator} {y})", "num"

    def expression(self, function: _Function, node: tuple) -> tuple[str, str]:
        kind = node[0]
        if kind == "num":
            value = node[1]
            return (repr(value) if math.isfinite(value) else "_INF"), "num"
        if kind == "str":
            return repr(node[1]), "str"
        if kind == "bool":
            return repr(node[1]), "bool"
        if kind == "null":
            return "None", "any"
        if kind == "id":
            return self.identifier(function, node)
        if kind == "member":
            return self.member(function, node)
        if kind == "call":
            return self.call(function, node)
        if kind == "array":
            items = ", ".join(self.expression(function, item)[0] for item in node[1])
            return f"JSArray([{items}])", "any"
        if kind == "object":
            entries = ", ".join(
                f"({key!r}, {self.expression(function, value)[0]})" for key, value in node[1]
            )
            return f"JSObject([{entries}])", "any"
        if kind == "func":
            return self.function_expression(function, node), "any"
        if kind == "unary":
            code, inner = self.expression(function, node[2])
            if node[1] == "!":
                return f"(not {_truth_code(code, inner)})", "bool"
            number = code if inner == "num" else _number_code(code)
            return (f"(-{number})" if node[1] == "-" else number), "num"
        if kind == "typeof":
            inner = node[1]
            if (
                inner[0] == "id"
                and function.lookup(inner[1]) is None
                and not self.known_global(inner[1])
            ):
                return "'undefined'", "str"
            return f"_typeof({self.expression(function, inner)[0]})", "str"
        if kind == "binary":
            return self.binary(function, node)
        if kind == "logical":
            left, kl = self.expression(function, node[2])
            right, kr = self.expression(function, node[3])
            both_bool = kl == "bool" and kr == "bool"
            if node[1] == "&&":
                if kl == "bool":
                    return f"({left} and {right})", "bool" if both_bool else "any"
                t = self.temp(function)
                return f"({right} if _T({t} := {left}) else {t})", "any"
            if node[1] == "||":
                if kl == "bool":
                    return f"({left} or {right})", "bool" if both_bool else "any"
                t = self.temp(function)
                return f"({t} if _T({t} := {left}) else {right})", "any"
            t = self.temp(function)
            return f"({right} if ({t} := {left}) is None or {t} is UNDEF else {t})", "any"
        if kind == "cond":
            test = self.condition(function, node[1])
            then, kt = self.expression(function, node[2])
            other, ko = self.expression(function, node[3])
            return f"({then} if {test} else {other})", kt if kt == ko else "any"
        if kind == "assign":
            return self.assignment(function, node)
        if kind == "update":
            return self.update(function, node)
        raise Refusal(f"the expression {kind}", node[-1])

    def known_global(self, name: str) -> bool:
        return (
            name in self.global_names
            or name in ("hw", "Math")
            or name in _BUILTIN_VALUES
            or name in _BUILTIN_FUNCTIONS
        )

    def identifier(self, function: _Function, node: tuple) -> tuple[str, str]:
        name = node[1]
        found = function.lookup(name)
        if found is not None:
            return found[0], "any"
        if name in _BUILTIN_VALUES:
            return _BUILTIN_VALUES[name], ("num" if name != "undefined" else "any")
        if name == "hw":
            return "HW", "any"
        if name in self.global_names:
            python = self.globals_used.setdefault(name, f"g_{len(self.globals_used)}")
            return python, "num" if name in self.numeric else "any"
        if name in _BUILTIN_FUNCTIONS:
            return _BUILTIN_FUNCTIONS[name], "any"
        if name in _JS_BUILTINS or name.startswith("__"):
            raise Refusal(f"the global {name!r}", node[2])
        # no such global with these attributes: V8 throws its ReferenceError
        return "_undeclared()", "any"

    def member(self, function: _Function, node: tuple) -> tuple[str, str]:
        owner, key = node[1], node[2]
        if owner[0] == "id" and function.lookup(owner[1]) is None:
            if owner[1] == "Math":
                if key[0] == "str" and key[1] in _MATH_CONSTANTS:
                    return repr(_MATH_CONSTANTS[key[1]]), "num"
                raise Refusal(f"Math[{key[1]!r}] as a value", node[3])
            if owner[1] == "hw" and key[0] == "str":
                python = self.hw_members.setdefault(key[1], f"h_{len(self.hw_members)}")
                return python, "num" if key[1] in self.numeric else "any"
        obj, _ = self.expression(function, owner)
        key_code, _ = self.expression(function, key)
        if key[0] == "str" and key[1] not in _PARAMS_OWN_NAMES and _PYTHON_NAME.fullmatch(obj):
            # `params.t`: read straight from the params object's dict where `get` answers the
            # dict's value itself: an own property holding a float, string, boolean or null
            # (JSParams.read) or a name it lacks that Object.prototype lacks too (undefined);
            # anything else (an int, an array or object, a name Object.prototype has, another
            # object) through _get
            t = self.temp(function)
            kinds = "_READ_AS_IS" if key[1] in _OBJECT_PROTO else "_READ_OR_UNDEFINED"
            inline = (
                f"({t} if type({obj}) is JSParams and "
                f"type({t} := dict.get({obj}, {key_code}, UNDEF)) in {kinds} "
                f"else _get({obj}, {key_code}))"
            )
            return inline, "any"
        return f"_get({obj}, {key_code})", "any"

    def call(self, function: _Function, node: tuple) -> tuple[str, str]:
        callee, args = node[1], node[2]
        codes = [self.expression(function, arg)[0] for arg in args]
        if self.has_own_property(function, callee):
            return f"_has_own({', '.join(codes)})", "bool"
        if (
            callee[0] == "member"
            and callee[1][0] == "id"
            and callee[1][1] == "Object"
            and callee[2][0] == "str"
            and callee[2][1] == "keys"
            and function.lookup("Object") is None
        ):
            return f"_keys({', '.join(codes)})", "any"
        if callee[0] == "member" and callee[2][0] == "str":
            owner, name = callee[1], callee[2][1]
            if owner[0] == "id" and owner[1] == "Math" and function.lookup("Math") is None:
                if name in _LIBM:
                    raise Refusal(
                        f"Math.{name}: V8 computes it with its own fdlibm port, which may differ "
                        "from Python's libm in the last bit",
                        node[3],
                    )
                if name not in _MATH_FUNCTIONS:
                    raise Refusal(f"Math.{name}", node[3])
                return f"_M_{name}({', '.join(codes)})", "num"
            if name not in (
                "get",
                "has",
                "push",
                "indexOf",
                "includes",
                "join",
                "filter",
                "forEach",
                "map",
                "toFixed",
                "trim",
                "toLowerCase",
            ):
                raise Refusal(f"the method {name}()", node[3])
            obj, _ = self.expression(function, owner)
            if name == "get" and len(codes) <= 2:
                key = args[0] if args else None
                if (
                    key is not None
                    and key[0] == "str"
                    and key[1] != "__proto__"
                    and _PYTHON_NAME.fullmatch(obj)
                    and (len(args) < 2 or _pure(args[1], codes[1]))
                ):
                    # read straight from the params object's dict where `get` answers the
                    # dict's value itself (JSParams.read): an own property holding a float,
                    # string, boolean or null (a JSON value: never undefined, and the model
                    # cannot write params), or the fallback of a name it lacks, undefined
                    # without one; anything else (an int, an array or object, a fallback of
                    # another kind, another object) through _pget. The fallback appears
                    # twice: it must be a literal or a name, whose second evaluation does
                    # nothing.
                    fallback = codes[1] if len(codes) > 1 else "UNDEF"
                    t = self.temp(function)
                    inline = (
                        f"({t} if type({obj}) is JSParams and "
                        f"type({t} := dict.get({obj}, {codes[0]}, {fallback})) "
                        "in _READ_OR_UNDEFINED "
                        f"else _pget({obj}, {codes[0]}, {fallback}))"
                    )
                    return inline, "any"
                return f"_pget({obj}{''.join(', ' + code for code in codes)})", "any"
            kind = (
                "bool"
                if name in ("has", "includes")
                else ("str" if name in ("join", "toFixed", "trim", "toLowerCase") else "any")
            )
            return f"_method({obj}, {name!r}{''.join(', ' + code for code in codes)})", kind
        if callee[0] == "member":
            raise Refusal("a computed method call", node[3])
        code, _ = self.expression(function, callee)
        if callee[0] == "id" and code in self.arity:
            self.named_calls.append((function.body, code, len(codes)))
        if code in ("_isNaN", "_isFinite"):
            return f"{code}({', '.join(codes) or 'UNDEF'})", "bool"
        if code == "_String":
            return (f"_String({codes[0]})" if codes else "''"), "str"
        body = self.declarations.get(code)
        kind = "num" if body is not None and body in self.returns_number else "any"
        return f"{code}({', '.join(codes)})", kind

    def has_own_property(self, function: _Function, callee: tuple) -> bool:
        """Whether `callee` is `Object.prototype.hasOwnProperty.call` with `Object` the
        global one (not a local; an attribute never shadows a builtin global, as `Math`)."""
        chain = []
        node = callee
        while node[0] == "member" and node[2][0] == "str":
            chain.append(node[2][1])
            node = node[1]
        return (
            chain == ["call", "hasOwnProperty", "prototype"]
            and node[0] == "id"
            and node[1] == "Object"
            and function.lookup("Object") is None
        )

    def function_expression(self, function: _Function, node: tuple) -> str:
        _, name, params, body, line = node
        python = self.fresh(name or "function")
        if name is not None:
            raise Refusal("a named function expression", line)
        # written before the statement that holds it: its def comes first
        statement_lines = self.lines
        self.lines = []
        indent = self.current_indent
        self.function(function, python, params, body, indent)
        hoisted = self.lines
        self.lines = statement_lines
        self.pending.extend(hoisted)
        function.declared.add(python)
        return python

    def binary(self, function: _Function, node: tuple) -> tuple[str, str]:
        operator, left_node, right_node = node[1], node[2], node[3]
        left, kl = self.expression(function, left_node)
        right, kr = self.expression(function, right_node)
        if operator in ("+", "-", "*", "/", "%", "**"):
            return self.arithmetic(operator, (left, kl), (right, kr))
        if operator in ("<", ">", "<=", ">="):
            if kl == "num" and kr == "num":
                return f"({left} {operator} {right})", "bool"
            helper = {"<": "_lt", ">": "_gt", "<=": "_le", ">=": "_ge"}[operator]
            checks = [
                f"type({code}) is float"
                for code, kind in ((left, kl), (right, kr))
                if kind != "num" and _PYTHON_NAME.fullmatch(code)
            ]
            simple = all(
                kind == "num" or _PYTHON_NAME.fullmatch(code)
                for code, kind in ((left, kl), (right, kr))
            )
            if simple and checks:  # no call where both already hold numbers
                test = " and ".join(checks)
                return (
                    f"({left} {operator} {right} if {test} else {helper}({left}, {right}))",
                    "bool",
                )
            return f"{helper}({left}, {right})", "bool"
        if operator in ("===", "!=="):
            negate = operator == "!=="
            if (kl == "num" and kr == "num") or kl == "str" or kr == "str":
                return f"({left} {'!=' if negate else '=='} {right})", "bool"
            if right_node[0] == "null" or left_node[0] == "null":
                other = left if right_node[0] == "null" else right
                return f"({other} is {'not ' if negate else ''}None)", "bool"
            if right == "UNDEF" or left == "UNDEF":
                other = left if right == "UNDEF" else right
                return f"({other} is {'not ' if negate else ''}UNDEF)", "bool"
            if (kl == "num" or kr == "num") and _pure(left_node, left) and _pure(right_node, right):
                # a number is strictly equal to a float only (strict_equal without a call)
                other = left if kr == "num" else right
                if negate:
                    return f"(type({other}) is not float or {left} != {right})", "bool"
                return f"(type({other}) is float and {left} == {right})", "bool"
            code = f"_seq({left}, {right})"
            return (f"(not {code})" if negate else code), "bool"
        if operator in ("==", "!="):
            negate = operator == "!="
            if kl == "num" and kr == "num":
                return f"({left} {'!=' if negate else '=='} {right})", "bool"
            code = f"_leq({left}, {right})"
            return (f"(not {code})" if negate else code), "bool"
        if operator == "in":
            return f"_in({left}, {right})", "bool"
        raise Refusal(f"the operator {operator}", node[4])

    def assignment(self, function: _Function, node: tuple) -> tuple[str, str]:
        target = node[2]
        if target[0] == "id":
            python = self.target(function, target)
            code = self.assigned_value(function, node)
            return (f"({python} := {code})" if python else f"_undeclared({code})"), "any"
        obj, _ = self.expression(function, target[1])
        key, _ = self.expression(function, target[2])
        if node[1] == "=":
            value, _ = self.expression(function, node[3])
            return f"_put({obj}, {key}, {value})", "any"
        if node[1] in ("+=", "-=", "*=", "/=", "%=", "**="):
            # JavaScript's order: the object, the key, the member's value, then the right side
            o, k = self.temp(function), self.temp(function)
            right = self.expression(function, node[3])
            code, _ = self.arithmetic(node[1][:-1], (f"_get({o}, {k})", "any"), right)
            return f"_put(({o} := {obj}), ({k} := {key}), {code})", "any"
        raise Refusal("a compound assignment to a member", node[4])

    def update(self, function: _Function, node: tuple) -> tuple[str, str]:
        operator, prefix, target = node[1], node[2], node[3]
        if target[0] != "id":
            raise Refusal(f"{operator} of a member", node[4])
        python = self.target(function, target)
        if python is None:
            return "_undeclared()", "num"
        sign = "+" if operator == "++" else "-"
        if prefix:
            return f"({python} := _N({python}) {sign} 1.0)", "num"
        t = self.temp(function)
        return f"(({t} := _N({python})), ({python} := {t} {sign} 1.0))[0]", "num"


_PYTHON_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def _truth_code(code: str, kind: str) -> str:
    """ToBoolean of `code` of `kind`: inline for a name holding a string or a number (truthy
    without a call), truthy's for anything else."""
    if kind == "bool":
        return code
    if _PYTHON_NAME.fullmatch(code) and code not in ("UNDEF", "None", "True", "False"):
        return (
            f"({code} != '' if type({code}) is str else "
            f"{code} == {code} and {code} != 0.0 if type({code}) is float else _T({code}))"
        )
    return f"_T({code})"


def _pure(node: tuple, code: str) -> bool:
    """Whether evaluating `code` (of `node`) again changes nothing and gives the same value:
    a literal or a name."""
    return node[0] in ("num", "str", "bool", "null") or _PYTHON_NAME.fullmatch(code) is not None


def _number_code(code: str) -> str:
    """ToNumber of `code`: inline for a name (no call where it already holds a number)."""
    if _PYTHON_NAME.fullmatch(code) and code not in ("UNDEF", "None", "True", "False"):
        return f"({code} if type({code}) is float else _N({code}))"
    return f"_N({code})"


def _is_leaf(body: list[tuple]) -> bool:
    """Whether a function body has no loop and calls nothing but Math and the builtin methods
    (so it cannot run on without bound: no step budget to count)."""
    leaf = True

    def visit(node: object) -> None:
        nonlocal leaf
        if not leaf:
            return
        if isinstance(node, tuple) and node:
            kind = node[0]
            if kind in ("for", "while", "dowhile"):
                leaf = False
                return
            if kind == "call":
                callee = node[1]
                builtin = (
                    callee[0] == "member"
                    and callee[2][0] == "str"
                    and (
                        (callee[1][0] == "id" and callee[1][1] == "Math")
                        or callee[2][1]
                        in ("get", "has", "push", "indexOf", "includes", "join", "toFixed", "trim")
                    )
                )
                if not builtin and not (callee[0] == "id" and callee[1] in _BUILTIN_FUNCTIONS):
                    leaf = False
                    return
            if kind == "funcdecl" or kind == "func":
                leaf = False  # its own calls are counted where they are made
                return
            for item in node:
                visit(item)
        elif isinstance(node, list):
            for item in node:
                visit(item)

    visit(body)
    return leaf


def _named_call_count(body: list[tuple]) -> int | None:
    """The calls by name (not of a builtin) in a function body that is a leaf but for them;
    None where it has a loop, a nested function or a call of anything else (a method)."""
    count = 0

    def visit(node: object) -> bool:
        nonlocal count
        if isinstance(node, tuple) and node:
            kind = node[0]
            if kind in ("for", "while", "dowhile", "funcdecl", "func"):
                return False
            if kind == "call" and node[1][0] == "id" and node[1][1] not in _BUILTIN_FUNCTIONS:
                count += 1
                return all(visit(item) for item in node[2])
            if kind == "call" and not _is_leaf([("expr", node)]):
                return False
            return all(visit(item) for item in node)
        if isinstance(node, list):
            return all(visit(item) for item in node)
        return True

    return count if visit(body) else None


# A function that calls leaves by name (and nothing else that may run on) ends by itself after
# at most this many of them: no step budget to count.
_LEAF_CALLS_WITHOUT_BUDGET = 8
_BUDGET_LINES = ("B[0] -= 1", "if B[0] < 0: _over()")
_DEF = re.compile(r"(?P<indent> *)def (?P<name>v\d+_\w+)\(")
_DECLARED_NAME = re.compile(r"\bv\d+_\w+")


def _lightened(writer: _Writer) -> tuple[list[str], set[str]]:
    """Return the written lines (all but the exports) with two costs of a call taken off where
    the source shows they do nothing, and the functions without `*_rest`: `*_rest` goes from a
    declared function that the source only ever calls by name with no more arguments than its
    parameters (never a value, never assigned: its name occurs nowhere else; its export
    takes any arguments: `_export`), and the step budget from a function whose only calls (by name) are of such
    functions that are leaves, at most _LEAF_CALLS_WITHOUT_BUDGET of them."""
    lines = writer.lines
    uses: dict[str, int] = {}
    for name in _DECLARED_NAME.findall("\n".join(lines)):
        uses[name] = uses.get(name, 0) + 1
    direct: dict[str, int] = {}
    for _, callee, count in writer.named_calls:
        if count <= writer.arity[callee]:
            direct[callee] = direct.get(callee, 0) + 1
    # (a function the source never calls keeps `*_rest`: its export, called from outside,
    # is the function itself rather than a lambda around it)
    only_called = {name for name, calls in direct.items() if calls and uses.get(name) == 1 + calls}
    unbudgeted: set[str] = set()
    for body_id, (name, body) in writer.defs.items():
        if body_id in writer.leaves:
            continue
        callees = [callee for caller, callee, _ in writer.named_calls if caller == body_id]
        if (
            0 < len(callees) <= _LEAF_CALLS_WITHOUT_BUDGET
            and _named_call_count(body) == len(callees)
            and all(
                callee in only_called and writer.declarations[callee] in writer.leaves
                for callee in callees
            )
        ):
            unbudgeted.add(name)
    out: list[str] = []
    index = 0
    while index < len(lines):
        line = lines[index]
        index += 1
        match = _DEF.match(line)
        if match is None:
            out.append(line)
            continue
        name, inner = match["name"], match["indent"] + "    "
        if name in only_called:
            line = line.replace("(*_rest):", "():").replace(", *_rest):", "):")
        out.append(line)
        if name in unbudgeted:
            while lines[index].startswith(inner + "nonlocal "):
                out.append(lines[index])
                index += 1
            if tuple(lines[index : index + 2]) == tuple(inner + text for text in _BUDGET_LINES):
                index += 2
    return out, only_called


def _export(python: str, only_called: set[str], arity: dict[str, int]) -> str:
    """The exported function of a declaration written as `python`: a caller outside (the
    twin's call of it by name) may pass any arguments, which one without `*_rest` takes
    through a lambda that passes its parameters' worth."""
    if python not in only_called:
        return python
    return f"(lambda *a: {python}(*a[:{arity[python]}]))"


def _assigns_function(node: Any) -> bool:
    if isinstance(node, tuple) and node:
        if node[0] == "assign" and node[3][0] == "func":
            return True
        return any(_assigns_function(item) for item in node)
    if isinstance(node, list):
        return any(_assigns_function(item) for item in node)
    return False


def _has_continue(statement: tuple) -> bool:
    found = False

    def visit(node: Any) -> None:
        nonlocal found
        if isinstance(node, tuple) and node:
            if node[0] == "continue":
                found = True
            if node[0] in ("func", "funcdecl", "for", "while", "dowhile"):
                return
            for item in node:
                visit(item)
        elif isinstance(node, list):
            for item in node:
                visit(item)

    visit(statement)
    return found


class _StatementWriter(_Writer):
    """Function expressions are written as defs just before the statement using them: each
    statement is written to a buffer, and what it hoisted goes first."""

    def __init__(
        self,
        global_names: frozenset[str],
        numeric: frozenset[str] = frozenset(),
        returns_number: frozenset[int] = frozenset(),
    ) -> None:
        super().__init__(global_names, numeric, returns_number)
        self.pending: list[str] = []
        self.current_indent = 0

    def statement(self, function: _Function, statement: tuple, indent: int) -> None:
        outer_pending, outer_indent = self.pending, self.current_indent
        self.pending, self.current_indent = [], indent
        saved = self.lines
        self.lines = []
        super().statement(function, statement, indent)
        written = self.lines
        self.lines = saved
        self.lines.extend(self.pending)
        self.lines.extend(written)
        self.pending, self.current_indent = outer_pending, outer_indent

    def condition(self, function: _Function, node: tuple) -> str:
        return super().condition(function, node)


# --- The compiled model ------------------------------------------------------------------------


@dataclass(frozen=True)
class CompiledModel:
    """A source compiled for one set of attribute global names."""

    python: str  # the generated Python (for reading and the tests)
    factory: Callable[..., tuple[dict[str, Any], list[int]]]
    defines: frozenset[str]
    once: bool  # whether the top level may run once per binding (nothing a call changes)
    hw_members: tuple[tuple[str, str], ...]
    globals_used: tuple[tuple[str, str], ...]

    def bind(self, attributes: Mapping[str, object]) -> CompiledTwin:
        return CompiledTwin(self, attributes)


@functools.lru_cache(maxsize=256)
def _parsed(source: str) -> list[tuple]:
    if len(source) > _MAX_SOURCE_CHARS:
        raise Refusal("the source is too long to compile")
    return _Parser(_tokens(source)).program()


@functools.lru_cache(maxsize=256)
def _compiled(
    source: str, global_names: frozenset[str], numeric: frozenset[str]
) -> CompiledModel | Refusal:
    try:
        return _compile(source, global_names, numeric)
    except Refusal as refusal:
        return refusal
    except RecursionError:
        return Refusal("nested too deep")


def clear_compiled_models() -> None:
    """Empty the caches of parsed and compiled sources (a warm-up's, simulator.runner)."""
    _parsed.cache_clear()
    _compiled.cache_clear()


def referenced_names(source: str) -> frozenset[str]:
    """Every identifier the source reads (the attribute globals it might be given)."""
    try:
        tokens = _tokens(source)
    except Refusal:
        return frozenset()
    return frozenset(
        token.text for token in tokens if token.kind == "name" and token.text not in _KEYWORDS
    )


def compile_model(
    source: str,
    global_names: frozenset[str] | set[str] | list[str] = frozenset(),
    numeric: frozenset[str] | set[str] = frozenset(),
) -> CompiledModel | Refusal:
    """Return `source` compiled, with `global_names` the attribute globals V8 would define
    (`shallow._global_names`), or the Refusal saying what it does not cover. `numeric`: the
    attributes whose values are numbers (the model is then bound only to such attributes:
    `numeric_attributes`)."""
    return _compiled(source, frozenset(global_names), frozenset(numeric))


def numeric_attributes(attributes: Mapping[str, object]) -> frozenset[str]:
    """The keys of the attributes whose values are numbers (ints and floats, not booleans)."""
    return frozenset(key for key, value in attributes.items() if type(value) in (int, float))


_EXPORT_EXCLUDED = frozenset({"hw"})


def _compile(source: str, global_names: frozenset[str], numeric: frozenset[str]) -> CompiledModel:
    body = _parsed(source)
    for statement in body:
        # V8 exports a top-level name whose value is a function at the end of the factory;
        # here only function declarations are exported, so any other way is left to V8
        if statement[0] == "var" and any(
            value is not None and value[0] == "func" for _, value in statement[2]
        ):
            raise Refusal("a function held in a top-level variable", statement[3])
    if _assigns_function(body):
        raise Refusal("a function assigned to a variable")
    # Which functions always return a number is learnt pass by pass (a caller may come
    # before its callee); each pass only uses what an earlier one proved, so it stays sound.
    proven: frozenset[int] = frozenset()
    for _ in range(4):
        writer = _StatementWriter(global_names, numeric, proven)
        top = _Function(None)
        writer.emit(1, "B = [0]")
        writer.declare_body(top, body, [], 1)
        for statement in body:
            writer.statement(top, statement, 1)
        if frozenset(writer.proven) == proven:
            break
        proven = frozenset(writer.proven)
    exported = sorted(
        name
        for name, python in top.blocks[0].items()
        if any(s[0] == "funcdecl" and s[1] == name for s in body)
        and name not in JS_GLOBAL_NAMES
        and not name.startswith("__parasim")
        and name != "__proto__"
    )
    if not exported:
        raise Refusal("the source declares no function")
    writer.lines, only_called = _lightened(writer)
    exports = ", ".join(
        f"{name!r}: {_export(top.blocks[0][name], only_called, writer.arity)}" for name in exported
    )
    writer.emit(1, f"return {{{exports}}}, B")
    prologue = [
        f"    {python} = HW.get({key!r}, UNDEF)" for key, python in writer.hw_members.items()
    ]
    prologue += [f"    {python} = G[{key!r}]" for key, python in writer.globals_used.items()]
    lines = ["def factory(HW, G):", *prologue, *writer.lines]
    python = "\n".join(lines) + "\n"
    namespace: dict[str, Any] = dict(RUNTIME)
    namespace["_Decline"] = Decline
    try:
        code = compile(python, "<parasim-compiled-model>", "exec")
    except (SyntaxError, RecursionError, MemoryError, ValueError) as error:
        raise Refusal(f"the generated Python does not compile ({error})") from None
    exec(code, namespace)
    assigned: set[str] = set()
    _assigned_names(body, assigned)
    once = all(
        statement[0] in ("funcdecl", "empty")
        or (
            statement[0] == "var"
            and all(
                value is None or value[0] in ("num", "str", "bool", "null")
                for _, value in statement[2]
            )
            and not any(name in assigned for name, _ in statement[2])
        )
        for statement in body
    )
    return CompiledModel(
        python=python,
        factory=namespace["factory"],
        defines=frozenset(exported),
        once=once,
        hw_members=tuple(writer.hw_members.items()),
        globals_used=tuple(writer.globals_used.items()),
    )


class CompiledTwin(JsTwin):
    """A compiled model bound to a hardware record's attributes (a `JsTwin`)."""

    shipped: ClassVar[str] = "a compiled model (simulator.models.js_compiler)"
    defines: frozenset[str]  # type: ignore[misc]  # per model, not per class

    def __init__(self, model: CompiledModel, attributes: Mapping[str, object]) -> None:
        super().__init__(attributes)
        if "__proto__" in attributes:
            raise Decline  # V8's attributes object takes it for its prototype
        self.model = model
        self.defines = model.defines
        hw = JSNullObject({key: js_value(value, True) for key, value in attributes.items()}, True)
        self._hw = hw
        self._globals = {name: hw[name] for name, _ in model.globals_used}
        self._bound = model.factory(hw, self._globals) if model.once else None
        self.declines = 0

    def _run(self, function: str, args: tuple[object, ...], params: Mapping[str, object]) -> Any:
        bound = self._bound
        try:
            exports, budget = (
                bound if bound is not None else self.model.factory(self._hw, self._globals)
            )
            fn = exports[function]
            budget[0] = STEP_BUDGET
            if not args:
                return fn(call_params(params))
            return fn(*[js_value(arg) for arg in args], call_params(params))
        except Decline:
            self.declines += 1
            raise
        except Exception:
            self.declines += 1
            raise Decline from None

    def call(self, function: str, args: tuple[object, ...], params: Mapping[str, object]) -> float:
        # `_run` written out: this is every uncached call's path
        bound = self._bound
        try:
            exports, budget = (
                bound if bound is not None else self.model.factory(self._hw, self._globals)
            )
            fn = exports[function]
            budget[0] = STEP_BUDGET
            if type(params) is dict and "__proto__" not in params:
                plain = _PLAIN_TYPES
                for key, value in params.items():
                    if type(key) is not str or type(value) not in plain:
                        values = call_params(params)
                        break
                else:
                    values = JSParams(params)
            else:
                values = call_params(params)
            value = fn(*[js_value(arg) for arg in args], values) if args else fn(values)
        except Decline:
            self.declines += 1
            raise
        except Exception:
            self.declines += 1
            raise Decline from None
        if type(value) is float:
            return value
        self.declines += 1
        raise Decline  # V8 reports what it is

    def missed_caller(
        self,
        function: str,
        memo: dict[object, float],
        keep: int,
        refresh: int,
        declined: Callable[[object, Mapping[str, object]], float],
    ) -> Callable[..., float] | None:
        """Return `(key, params, plain_params=False) -> seconds`, a memo miss of
        `function(params)` (`plain_params`: the caller found params a dict of str names, none
        "__proto__", and plain values, the test this function makes otherwise): its value when
        it is a model's time (a finite double >= 0: simulator.errors.model_seconds's rule,
        the one check of the value), kept in `memo` under `key` while the memo holds fewer
        than `keep` values; once it is full, every `refresh` misses not kept empty it to be
        refilled. Anything else is `declined(key, params)`'s (V8's answer and error). None
        when the top level runs per call (not `once`) or the source does not define
        `function`.

        The twin's `call`, `model_seconds` and the memo's keeping written out in one frame:
        the hot path's miss (shallow.ShallowFunctions.computation_missed) is this function,
        called for every distinct input."""
        bound = self._bound
        if bound is None:
            return None
        exports, budget = bound
        fn = exports.get(function)
        if fn is None:
            return None
        largest = sys.float_info.max
        unkept = 0  # misses not kept since the memo was last full

        def missed(key: object, params: Mapping[str, object], plain_params: bool = False) -> float:
            nonlocal unkept
            try:
                # plain_params: the caller found params a dict of plain values, no __proto__
                values = JSParams(params) if plain_params else call_params(params)
                budget[0] = STEP_BUDGET
                value = fn(values)
            except Exception:  # Decline, an ArithmeticError, the budget: V8 answers
                self.declines += 1
                return declined(key, params)
            # NaN fails both comparisons; a float outside is V8's to report (its error)
            if type(value) is float and 0.0 <= value <= largest:
                if len(memo) < keep:
                    memo[key] = value
                else:
                    unkept += 1
                    if unkept >= refresh:
                        unkept = 0
                        memo.clear()
                return value
            if type(value) is not float:
                self.declines += 1  # V8 reports what it is
            return declined(key, params)

        return missed

    def answer_caller(
        self,
        function: str,
        general: Callable[[tuple[object, ...], Mapping[str, object]], float],
    ) -> Callable[[tuple[object, ...], Mapping[str, object]], float] | None:
        """Return `(args, params) -> seconds`, `function(*args, params)` for a caller that
        keeps its own memo of the values (a node's transfer times): the compiled model's value
        when it is a model's time (simulator.errors.model_seconds's rule, as in
        `missed_caller`), anything else `general(args, params)`'s, which asks again the way
        every call did before (the twin, its declines counted there, then V8). None when the
        top level runs per call (not `once`) or the source does not define `function`.

        The twin's `call` and the check of its value written out in one frame: a p2pTime
        evaluated for every distinct message size comes here."""
        bound = self._bound
        if bound is None:
            return None
        exports, budget = bound
        fn = exports.get(function)
        if fn is None:
            return None
        largest = sys.float_info.max
        plain = _PLAIN_TYPES

        def answer(args: tuple[Any, ...], params: Mapping[str, object]) -> float:
            try:
                # call_params written out for a dict of plain values (a transfer's params)
                if type(params) is dict and "__proto__" not in params:
                    for key, item in params.items():
                        if type(key) is not str or type(item) not in plain:
                            values = call_params(params)
                            break
                    else:
                        values = JSParams(params)
                else:
                    values = call_params(params)
                budget[0] = STEP_BUDGET
                if len(args) == 1:  # p2pTime's size: no list of arguments to build
                    (arg,) = args
                    kind = type(arg)
                    value = fn(
                        arg if kind is float else float(arg) if kind is int else js_value(arg),
                        values,
                    )
                else:
                    arguments = []  # a loop: a comprehension would be a call of its own
                    for arg in args:
                        kind = type(arg)
                        arguments.append(
                            arg if kind is float else float(arg) if kind is int else js_value(arg)
                        )
                    value = fn(*arguments, values)
            except Exception:  # Decline, an ArithmeticError, the budget: the general path's
                return general(args, params)
            # NaN fails both comparisons; anything else is the general path's to tell
            if type(value) is float and 0.0 <= value <= largest:
                return value
            return general(args, params)

        return answer

    def detail(self, function: str, params: Mapping[str, object]) -> dict[str, object]:
        value = self._run(function, (), params)
        if type(value) is not JSObject or len(value) > 16:
            raise Decline
        flat: dict[str, object] = {}
        for key, item in value.items():
            if _index(key) is not None:
                raise Decline  # JavaScript orders integer keys first
            kind = type(item)
            if kind is float:
                if not math.isfinite(item):
                    raise Decline
                flat[key] = json_number(item)
            elif kind is bool or (kind is str and item.isascii() and len(item) <= 60):
                flat[key] = item
            else:
                raise Decline
        return flat
