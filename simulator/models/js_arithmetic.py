"""A user's arithmetic JavaScript model answered in Python: uncached calls without V8.

The shipped models have hand-written twins (`js_twins.JS_TWINS`, by the digest of their
source). A model a user writes is another source, and each of its uncached calls costs 100-300
us in V8 (the hand-over to V8's thread, a new script compiled, the model's factory run
afresh). Many such models are one arithmetic expression a function:

    function computationTime(params) { return params.t; }
    function p2pTime(size, params) { return latency + size / bandwidth; }

`arithmetic_model(source)` reads a source made of nothing but such functions, each
`function NAME(P1, P2, ...) { return EXPRESSION; }`, where an expression holds decimal
numbers, a parameter (`size`), a member of the params object or of `hw` (`params.t`,
`hw.cores`), an attribute global (`latency`), unary `-` and `+`, `+ - * / %` and parentheses.
Anything else (another statement, a call, a comparison, a string, a regular expression,
a character outside ASCII, a `return` followed by a line break, which returns undefined) gives
None, and the model runs in V8 as before. `ArithmeticTwin` is such a model bound to one
hardware record's attributes: a `JsTwin`, used as the shipped twins are.

Why its value is V8's: JavaScript's numbers are IEEE-754 doubles, and `+ - * /` on doubles
round as Python's floats do; `%` is C's `fmod` (the dividend's sign), which `math.fmod`
computes exactly; a decimal literal is read correctly rounded by both; a number the model
reads (a parameter, an attribute) is read as V8 reads it from the JSON it is handed
(`js_twins.js_params`, `js_number`). The twin declines (V8 answers, with its errors and their
messages) whatever JavaScript would coerce or throw for: a missing, null, boolean, string or
object value, a division or remainder by zero (Python raises where JavaScript gives an
infinity or NaN), an identifier that names a builtin, another function or nothing.
`tests/simulator/models/test_js_arithmetic.py` compares it with V8 for exact equality
(hypothesis: random expressions and inputs).
"""

from __future__ import annotations

import functools
import math
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import ClassVar

from simulator.js_names import JS_RESERVED
from simulator.models.js_twins import Decline, JsTwin, js_number, js_params

__all__ = ["JS_GLOBAL_NAMES", "ArithmeticModel", "ArithmeticTwin", "arithmetic_model"]

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

# The tokens: a comment, white space, a decimal number, an identifier, a punctuator. A
# character none of them takes (a string's quote, `=`, `<`, `?`, non-ASCII...) ends the
# reading: the model runs in V8.
_TOKEN = re.compile(
    r"""
    (?P<comment>//[^\n\r]*|/\*(?:[^*]|\*(?!/))*\*/)
    |(?P<space>[ \t\n\r]+)
    |(?P<number>(?:0|[1-9][0-9]*)(?:\.[0-9]*)?(?:[eE][+-]?[0-9]+)?|\.[0-9]+(?:[eE][+-]?[0-9]+)?)
    |(?P<name>[A-Za-z_$][A-Za-z0-9_$]*)
    |(?P<punctuator>[(){},;.+\-*/%])
    """,
    re.VERBOSE,
)
_LINE_BREAK = re.compile(r"[\n\r]")
# JavaScript's reserved words (JS_RESERVED without the runtime's names, which a parameter
# may take), with `arguments` and `eval`, which no expression here reads.
_RESERVED_WORDS = JS_RESERVED - {"undefined", "NaN", "Infinity", "hw", "params", "globalThis"}
_MAX_SOURCE_CHARS = 20_000  # a longer model is no one-line arithmetic: V8 reads it
_MAX_DEPTH = 60  # nested parentheses and unary signs; deeper runs in V8
# The deepest expression answered in Python: each level is a call when it is computed (a chain
# of `a + b + ...` as much as nesting), and the sandbox child's recursion limit is 1,000.
_MAX_TREE_DEPTH = 200


class _NotArithmetic(Exception):
    """The source is not one `arithmetic_model` reads."""


@dataclass(frozen=True)
class _Token:
    kind: str  # "number", "name", "punctuator" or "end"
    text: str
    after_break: bool  # a line break (or a comment holding one) came before it


def _tokens(source: str) -> list[_Token]:
    tokens: list[_Token] = []
    position, after_break = 0, False
    while position < len(source):
        match = _TOKEN.match(source, position)
        if match is None:
            raise _NotArithmetic(f"character {source[position]!r}")
        position = match.end()
        kind = match.lastgroup
        text = match.group()
        if kind in ("comment", "space"):
            after_break = after_break or _LINE_BREAK.search(text) is not None
            continue
        if kind == "punctuator" and text in "+-" and source.startswith(text, position):
            raise _NotArithmetic("increment or decrement")  # "a--b" is no "a - -b"
        if kind == "number" and position < len(source):
            following = source[position]
            # "3in", "1.e", "1_000", "0.5.1": JavaScript refuses or reads them otherwise
            if following.isalnum() or following in "_$.":
                raise _NotArithmetic(f"number {text!r} followed by {following!r}")
        assert kind is not None
        tokens.append(_Token(kind, text, after_break))
        after_break = False
    tokens.append(_Token("end", "", after_break))
    return tokens


# An expression, read: ("number", value) | ("name", identifier) | ("member", object, key)
# | ("negate", operand) | ("plus", operand) | (operator, left, right), operator one of + - * / %
_Node = tuple


@dataclass(frozen=True)
class _Function:
    name: str
    parameters: tuple[str, ...]
    body: _Node


class _Reader:
    """A recursive-descent reader of the accepted subset (JavaScript's precedence: unary
    signs over `* / %` over `+ -`, each left-associative)."""

    def __init__(self, tokens: list[_Token]) -> None:
        self.tokens = tokens
        self.at = 0

    def peek(self) -> _Token:
        return self.tokens[self.at]

    def take(self, text: str | None = None, kind: str | None = None) -> _Token:
        token = self.tokens[self.at]
        if (text is not None and token.text != text) or (kind is not None and token.kind != kind):
            raise _NotArithmetic(f"expected {text or kind}, found {token.text!r}")
        self.at += 1
        return token

    def identifier(self) -> str:
        name = self.take(kind="name").text
        if name in _RESERVED_WORDS:
            raise _NotArithmetic(f"reserved word {name!r}")
        return name

    def program(self) -> list[_Function]:
        functions: list[_Function] = []
        while self.peek().kind != "end":
            if self.peek().text == ";":
                self.at += 1
                continue
            functions.append(self.function())
        return functions

    def function(self) -> _Function:
        self.take("function")
        name = self.identifier()
        self.take("(")
        parameters: list[str] = []
        if self.peek().text != ")":
            parameters.append(self.identifier())
            while self.peek().text == ",":
                self.at += 1
                parameters.append(self.identifier())  # a trailing comma is refused here
        self.take(")")
        self.take("{")
        self.take("return")
        if self.peek().after_break:  # `return` then a line break returns undefined
            raise _NotArithmetic("a line break after return")
        body = self.expression(0)
        if self.peek().text == ";":
            self.at += 1
        self.take("}")
        if len(set(parameters)) != len(parameters):
            raise _NotArithmetic("a parameter named twice")
        return _Function(name, tuple(parameters), body)

    def expression(self, depth: int) -> _Node:
        node = self.term(depth)
        while self.peek().text in ("+", "-") and self.peek().kind == "punctuator":
            operator = self.take().text
            node = (operator, node, self.term(depth))
        return node

    def term(self, depth: int) -> _Node:
        node = self.unary(depth)
        while self.peek().text in ("*", "/", "%") and self.peek().kind == "punctuator":
            operator = self.take().text
            node = (operator, node, self.unary(depth))
        return node

    def unary(self, depth: int) -> _Node:
        if depth > _MAX_DEPTH:
            raise _NotArithmetic("nested too deep")
        token = self.peek()
        if token.kind == "punctuator" and token.text in ("-", "+"):
            self.at += 1
            operand = self.unary(depth + 1)
            return ("negate" if token.text == "-" else "plus", operand)
        return self.primary(depth)

    def primary(self, depth: int) -> _Node:
        token = self.peek()
        if token.kind == "number":
            self.at += 1
            return ("number", float(token.text))
        if token.text == "(":
            self.at += 1
            node = self.expression(depth + 1)
            self.take(")")
            return node
        name = self.identifier()
        if self.peek().text == ".":
            self.at += 1
            return ("member", name, self.take(kind="name").text)
        return ("name", name)


@dataclass(frozen=True)
class ArithmeticModel:
    """A source `arithmetic_model` read: its functions by name."""

    functions: Mapping[str, _Function]

    @property
    def defines(self) -> frozenset[str]:
        return frozenset(self.functions)


@functools.lru_cache(maxsize=64)
def arithmetic_model(source: str) -> ArithmeticModel | None:
    """Return the functions of `source` when it is made of arithmetic functions only (the
    module's docstring), else None (V8 evaluates the model)."""
    if len(source) > _MAX_SOURCE_CHARS:
        return None
    try:
        functions = _Reader(_tokens(source)).program()
    except (_NotArithmetic, ValueError, RecursionError):
        return None
    names = [function.name for function in functions]
    if any(_tree_depth(function.body) > _MAX_TREE_DEPTH for function in functions):
        return None
    if not functions or len(set(names)) != len(names):
        return None  # a later declaration would replace an earlier one
    for name in names:
        # the prelude never takes a builtin's name (or hw) for a model's function
        if name in JS_GLOBAL_NAMES or name.startswith("__"):
            return None
    return ArithmeticModel({function.name: function for function in functions})


def _tree_depth(root: _Node) -> int:
    """Return the depth of an expression read by `_Reader` (without recursing: a long chain
    of operators is as deep as it is long)."""
    deepest, pending = 0, [(root, 1)]
    while pending:
        node, depth = pending.pop()
        deepest = max(deepest, depth)
        if node[0] in ("negate", "plus"):
            pending.append((node[1], depth + 1))
        elif node[0] in ("+", "-", "*", "/", "%"):
            pending += [(node[1], depth + 1), (node[2], depth + 1)]
    return deepest


class ArithmeticTwin(JsTwin):
    """An `ArithmeticModel` bound to a hardware record's attributes: `call` computes each
    function's expression as V8 would, or declines (the module's docstring)."""

    shipped: ClassVar[str] = "a user's model (simulator.models.js_arithmetic)"
    defines: frozenset[str]  # type: ignore[misc]  # per model, not per class

    def __init__(
        self, model: ArithmeticModel, attributes: Mapping[str, object], global_names: list[str]
    ) -> None:
        super().__init__(attributes)
        self.defines = model.defines
        # the attribute globals __parasim_bind defines: not a builtin's name
        globals_ = {name for name in global_names if name not in JS_GLOBAL_NAMES}
        self._compiled = {
            name: _compiled(function, attributes, globals_)
            for name, function in model.functions.items()
        }

    def call(self, function: str, args: tuple[object, ...], params: Mapping[str, object]) -> float:
        compiled = self._compiled.get(function)
        if compiled is None:
            raise Decline  # not defined: V8 says so
        return compiled(args, params)


_Evaluate = Callable[[tuple[object, ...], Mapping[str, object]], float]


def _compiled(
    function: _Function, attributes: Mapping[str, object], globals_: set[str]
) -> _Evaluate:
    """Return `function` as a Python function of (args, params) giving V8's value."""
    parameters = function.parameters

    def compiled_node(node: _Node) -> _Evaluate:
        kind = node[0]
        if kind == "number":
            value = node[1]
            return lambda args, params: value
        if kind == "name":
            name = node[1]
            if name in parameters:
                index = parameters.index(name)

                def argument(args: tuple[object, ...], params: Mapping[str, object]) -> float:
                    # the params object (index == len(args)) or undefined: not a number
                    if index >= len(args):
                        raise Decline
                    return js_number(args[index])

                return argument
            if name in globals_ and name in attributes:
                value = attributes[name]
                return lambda args, params: js_number(value)
            return _declined  # a builtin, hw itself, another function, or not defined
        if kind == "member":
            owner, key = node[1], node[2]
            if key.startswith("__"):
                return _declined
            if owner in parameters:
                index = parameters.index(owner)

                def member(args: tuple[object, ...], values: Mapping[str, object]) -> float:
                    if index != len(args) or key in ("get", "has"):
                        raise Decline  # a number's or undefined's member, or params' methods
                    if key not in values:
                        raise Decline  # undefined, or Object.prototype's
                    return js_number(values[key])

                return member
            if owner == "hw":
                if key not in attributes:
                    return _declined
                value = attributes[key]
                return lambda args, params: js_number(value)
            return _declined
        operand = compiled_node(node[1])
        if kind == "negate":
            return lambda args, params: -operand(args, params)
        if kind == "plus":
            return operand
        right = compiled_node(node[2])
        left = operand
        if kind == "+":
            return lambda args, params: left(args, params) + right(args, params)
        if kind == "-":
            return lambda args, params: left(args, params) - right(args, params)
        if kind == "*":
            return lambda args, params: left(args, params) * right(args, params)
        if kind == "/":
            return lambda args, params: left(args, params) / right(args, params)
        assert kind == "%"
        return lambda args, params: _remainder(left(args, params), right(args, params))

    evaluate = compiled_node(function.body)

    def call(args: tuple[object, ...], params: Mapping[str, object]) -> float:
        values = js_params(params)  # the params object's values, as V8 reads them
        try:
            return evaluate(args, values)
        except (ArithmeticError, ValueError):  # a division by zero, math.fmod's domain
            raise Decline from None

    return call


def _declined(args: tuple[object, ...], params: Mapping[str, object]) -> float:
    raise Decline


def _remainder(dividend: float, divisor: float) -> float:
    """JavaScript's `%` of two doubles: C's fmod, exact (ValueError for a zero divisor or an
    infinite dividend, where JavaScript gives NaN: declined)."""
    return math.fmod(dividend, divisor)
