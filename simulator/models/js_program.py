"""A model's computationTime as a straight-line program of doubles: a memo miss without Python.

`program_of(source, attributes, global_names)` reads a model whose `computationTime(params)`
is float arithmetic on its parameters and the hardware's numeric attributes, and returns a
`Program`: a few instructions on a stack of doubles that `evaluate` runs on a call's params
(the C core runs the same instructions: `_speedups.evaluate_program`, chosen by
simulator.hotpath, whose Python reference is `evaluate_python` here). It returns None for any
other model, which keeps the compiled Python (simulator.models.js_compiler) and V8.

The subset: top-level function declarations only; in a function, `var`/`let`/`const` with a
value, `if`/`else`, `return`, `throw` (the call declines: V8 throws it), blocks; numbers,
`Infinity`, `NaN`; `+ - * / %`, unary `- + !`, `< > <= >= == != === !==`, `&&`/`||` of
comparisons, the ternary; `params.get(name)`, `params.get(name, constant)`, `params.name`,
`params[name]` (a string literal); the numeric attribute globals and `hw.name`, and
`hw.name === undefined` (or `!==`, `==`, `!=`), which the record decides (the dead branch is
not compiled); helper functions called by name with as many arguments as they have
parameters (inlined); `Math.abs floor ceil round trunc sign sqrt min max`, the Math
constants, and `Math.pow` of constants (computed once, as the compiled model computes it). A name is read only where it is bound on every path to the read, every name
is declared once, nothing is assigned after its declaration, and every path returns a number:
so a program has no loop and no state, and runs in a time its length bounds.

Why its values are V8's: the values are IEEE-754 doubles, and `+ - * /`, `sqrt` and C's `fmod`
(JavaScript's `%`) are correctly rounded or exact in C, Python and V8 alike; the Math
functions follow simulator.models.js_compiler's transcriptions of ECMAScript (the -0 and NaN
cases), themselves property-tested against V8. A division by zero and `%` outside fmod's
domain decline as the compiled model does (Python raises there): a program answers only
calls the compiled model answers too, with its value. A parameter is read as the compiled
model reads it (a float, or an int as the double nearest it); anything else, a missing parameter without
a fallback, a "__proto__" parameter, or a value that is not a model's time (a finite double
>= 0: simulator.errors.model_seconds's rule) makes `evaluate` return None, and the caller
takes today's path (the memo, the compiled model, V8 and V8's error). `tests/simulator/
models/test_js_program.py` compares programs with V8 and the C core with this reference.
"""

from __future__ import annotations

import math
import re
import struct
import sys
from collections.abc import Mapping
from typing import Any, NamedTuple

from simulator import hotpath
from simulator.models.js_compiler import (
    _MATH_CONSTANTS,
    JS_GLOBAL_NAMES,
    Refusal,
    _math_max,
    _math_min,
    _parsed,
    _round,
    _sign,
    js_pow,
)

__all__ = ["OPS", "Program", "evaluate", "evaluate_python", "program_of"]

# The instructions: an opcode and one argument each (two uint16 in `Program.code`). The C core
# (simulator/_speedups_program.c) numbers them the same: tests/simulator/models/
# test_js_program.py checks the two tables agree.
OPS = {
    "CONST": 0,  # push constants[arg]
    "PARAM": 1,  # push params[names[arg]] (a number), else decline
    "PARAM_OR": 2,  # push params[names[arg]] (a number), or the constant pushed before
    "LOAD": 3,  # push slot arg
    "STORE": 4,  # pop into slot arg
    "ADD": 5,
    "SUB": 6,
    "MUL": 7,
    "DIV": 8,
    "MOD": 9,
    "NEG": 10,
    "LT": 11,  # comparisons push 1.0 or 0.0
    "GT": 12,
    "LE": 13,
    "GE": 14,
    "EQ": 15,
    "NE": 16,
    "NOT": 17,  # of a comparison's 1.0 / 0.0
    "TRUTHY": 18,  # a number's truthiness: 1.0 or 0.0
    "JUMP_IF_FALSE": 19,  # pop; when 0.0, go to instruction arg
    "JUMP": 20,  # go to instruction arg (always forward)
    "MIN": 21,  # Math.min of the top arg values
    "MAX": 22,
    "ABS": 23,
    "FLOOR": 24,
    "CEIL": 25,
    "ROUND": 26,
    "TRUNC": 27,
    "SIGN": 28,
    "SQRT": 29,
    "RETURN": 30,  # pop: the value
    "DECLINE": 31,  # a `throw`: the call is left to the usual path (V8 throws it)
}
_OP_NAMES = {code: name for name, code in OPS.items()}

MAX_INSTRUCTIONS = 2048  # a longer model keeps the compiled Python
MAX_STACK = 32  # the C core's stack of doubles
MAX_SLOTS = 64  # its local variables
MAX_INLINE_DEPTH = 16

_MATH_UNARY = {
    "abs": "ABS",
    "floor": "FLOOR",
    "ceil": "CEIL",
    "round": "ROUND",
    "trunc": "TRUNC",
    "sign": "SIGN",
    "sqrt": "SQRT",
}
_COMPARISONS = {
    "<": "LT",
    ">": "GT",
    "<=": "LE",
    ">=": "GE",
    "==": "EQ",
    "===": "EQ",
    "!=": "NE",
    "!==": "NE",
}
_ARITHMETIC = {"+": "ADD", "-": "SUB", "*": "MUL", "/": "DIV", "%": "MOD"}
# what `params.NAME` cannot read as a parameter: the params object's own methods and
# Object.prototype's properties (js_compiler.get declines them)
_NOT_PARAMETERS = frozenset(
    {
        "get",
        "has",
        "__proto__",
        "constructor",
        "hasOwnProperty",
        "isPrototypeOf",
        "propertyIsEnumerable",
        "toLocaleString",
        "toString",
        "valueOf",
        "__defineGetter__",
        "__defineSetter__",
        "__lookupGetter__",
        "__lookupSetter__",
    }
)
# a parameter read by name: an identifier, which no key of another type becomes in the JSON V8
# reads (an int's digits, a float's, true, false, null, NaN, Infinity)
_PARAMETER_NAME = re.compile(r"[A-Za-z_$][A-Za-z0-9_$]*")
_NUM, _BOOL = "number", "boolean"


class Program(NamedTuple):
    """A compiled computationTime: `code` (opcode and argument pairs, uint16, native order),
    `constants` (floats), `names` (the parameters read), `slots` (local variables)."""

    code: bytes
    constants: tuple[float, ...]
    names: tuple[str, ...]
    slots: int


class _Scope:
    """One function's names as one inlined copy of it sees them: slot by name, and which are
    bound (assigned on every path so far)."""

    def __init__(self, declared: frozenset[str], slots: dict[str, int], params_name: str | None):
        self.declared = declared
        self.slots = slots
        self.bound: set[str] = set(slots)
        self.params_name = params_name

    def branch(self) -> _Scope:
        copy = _Scope(self.declared, dict(self.slots), self.params_name)
        copy.bound = set(self.bound)
        return copy


class _Compiler:
    def __init__(
        self,
        functions: dict[str, tuple],
        attributes: Mapping[str, object],
        global_names: frozenset[str],
    ) -> None:
        self.functions = functions
        self.attributes = attributes
        self.global_names = global_names
        self.code: list[list[int]] = []
        self.constants: list[float] = []
        self.constant_index: dict[bytes, int] = {}
        self.names: list[str] = []
        self.slots = 0
        self.depth = 0
        self.inlining: list[str] = []

    # -- emitting --------------------------------------------------------------------------
    def emit(self, op: str, arg: int = 0, effect: int = 0) -> int:
        if len(self.code) >= MAX_INSTRUCTIONS:
            raise Refusal("too long for a program")
        self.code.append([OPS[op], arg])
        self.depth += effect
        if self.depth > MAX_STACK:
            raise Refusal("too deep for a program")
        return len(self.code) - 1

    def patch(self, at: int) -> None:
        self.code[at][1] = len(self.code)

    def constant(self, value: float) -> None:
        key = struct.pack("<d", value)  # -0.0 and 0.0 apart, one NaN
        if key not in self.constant_index:
            self.constant_index[key] = len(self.constants)
            self.constants.append(value)
        self.emit("CONST", self.constant_index[key], 1)

    def slot(self) -> int:
        if self.slots >= MAX_SLOTS:
            raise Refusal("too many variables for a program")
        self.slots += 1
        return self.slots - 1

    def name(self, text: str) -> int:
        if not _PARAMETER_NAME.fullmatch(text) or text in _NOT_PARAMETERS:
            raise Refusal(f"the parameter name {text!r}")
        if text not in self.names:
            # interned, as the application's literal keys are: a lookup finds the key by identity
            self.names.append(sys.intern(text))
        return self.names.index(text)

    # -- functions and statements ------------------------------------------------------------
    def function(self, name: str, args_slots: list[int], ret: list[int] | None) -> str:
        """Emit function `name`'s body with its parameters in `args_slots` (the top call: its
        params object, `args_slots` empty); return the type it returns. `ret`: the jumps to
        patch to the end of an inlined call, or None: the program's RETURN."""
        _, _, params, body, _ = self.functions[name]
        declared = frozenset(params) | _declared_names(body)
        if len(declared) != len(params) + _declaration_count(body) or len(set(params)) != len(
            params
        ):
            raise Refusal("a name declared twice")
        if declared & set(self.functions):
            raise Refusal("a variable named like a function")
        if ret is None:
            scope = _Scope(declared, {}, params[0])
        else:
            scope = _Scope(declared, dict(zip(params, args_slots, strict=True)), None)
        types: set[str] = set()
        self.statements(list(body), scope, ret, types)
        if len(types) != 1:
            raise Refusal("returns values of more than one type")
        return types.pop()

    def statements(
        self, body: list[tuple], scope: _Scope, ret: list[int] | None, types: set[str]
    ) -> None:
        """Emit `body`, every path of which must return."""
        for at, statement in enumerate(body):
            kind = statement[0]
            if kind == "empty":
                continue
            if kind == "var":
                for name, value in statement[2]:
                    if value is None:
                        continue  # declared, not bound: reading it is refused
                    self.expect(self.expression(value, scope), _NUM)
                    scope.slots[name] = slot = self.slot()
                    scope.bound.add(name)
                    self.emit("STORE", slot, -1)
                continue
            if kind == "return":
                if statement[1] is None:
                    raise Refusal("a return without a value")
                types.add(self.expression(statement[1], scope))
                if ret is None:
                    self.expect(types, {_NUM})
                    self.emit("RETURN", 0, -1)
                else:
                    ret.append(self.emit("JUMP"))
                    self.depth -= 1  # the value stays for the code after the call
                return
            if kind == "block":
                inner = statement[1]
                lexical = {
                    name for s in inner if s[0] == "var" and s[1] != "var" for name, _ in s[2]
                }
                rest = body[at + 1 :]
                if lexical and any(name in _read_names(rest) for name in lexical):
                    raise Refusal("a block's let or const read after the block")
                self.statements(list(inner) + rest, scope, ret, types)
                return
            if kind == "throw":
                self.emit("DECLINE")
                return
            if kind == "if":
                _, test, then, other, _ = statement
                rest = body[at + 1 :]
                known = self.known_condition(test, scope)
                if known is not None:  # a test of the hardware record: one branch is dead
                    taken = then if known else other
                    taken_body = [] if taken is None else [taken]
                    if taken is None or not _returns(taken):
                        taken_body += rest
                    self.statements(taken_body, scope, ret, types)
                    return
                self.condition(test, scope)
                skip = self.emit("JUMP_IF_FALSE", 0, -1)
                depth = self.depth
                then_body = [then] if _returns(then) else [then, *rest]
                self.statements(then_body, scope.branch(), ret, types)
                self.patch(skip)
                self.depth = depth
                else_body = ([other] if other is not None else []) + (
                    [] if other is not None and _returns(other) else rest
                )
                self.statements(else_body, scope.branch(), ret, types)
                return
            raise Refusal(f"a {kind} statement")
        raise Refusal("a path that returns no value")

    # -- expressions -------------------------------------------------------------------------
    @staticmethod
    def expect(kind: object, wanted: object) -> None:
        if kind != wanted:
            raise Refusal("a value of another type")

    def condition(self, node: tuple, scope: _Scope) -> None:
        """Emit a test: a comparison's 1.0 / 0.0, or a number's truthiness."""
        if self.expression(node, scope) == _NUM:
            self.emit("TRUTHY")

    def expression(self, node: tuple, scope: _Scope) -> str:
        kind = node[0]
        if kind == "num":
            self.constant(float(node[1]))
            return _NUM
        if kind == "id":
            return self.identifier(node[1], scope)
        if kind == "binary":
            _, operator, left, right, _ = node
            if operator in _ARITHMETIC:
                self.expect(self.expression(left, scope), _NUM)
                self.expect(self.expression(right, scope), _NUM)
                self.emit(_ARITHMETIC[operator], 0, -1)
                return _NUM
            if operator in _COMPARISONS:
                known = self.known_condition(node, scope)
                if known is not None:
                    self.constant(1.0 if known else 0.0)
                    return _BOOL
                self.expect(self.expression(left, scope), _NUM)
                self.expect(self.expression(right, scope), _NUM)
                self.emit(_COMPARISONS[operator], 0, -1)
                return _BOOL
            raise Refusal(f"the operator {operator}")
        if kind == "logical":
            _, operator, left, right, _ = node
            if operator not in ("&&", "||"):
                raise Refusal(f"the operator {operator}")
            # a && b: a ? b : false; a || b: a ? true : b (booleans only)
            self.expect(self.expression(left, scope), _BOOL)
            skip = self.emit("JUMP_IF_FALSE", 0, -1)
            if operator == "&&":
                self.expect(self.expression(right, scope), _BOOL)
            else:
                self.constant(1.0)
            done = self.emit("JUMP")
            self.depth -= 1
            self.patch(skip)
            if operator == "&&":
                self.constant(0.0)
            else:
                self.expect(self.expression(right, scope), _BOOL)
            self.patch(done)
            return _BOOL
        if kind == "unary":
            _, operator, operand, _ = node
            if operator == "!":
                if self.expression(operand, scope) == _NUM:
                    self.emit("TRUTHY")
                self.emit("NOT")
                return _BOOL
            if operator in ("-", "+"):
                self.expect(self.expression(operand, scope), _NUM)
                if operator == "-":
                    self.emit("NEG")
                return _NUM
            raise Refusal(f"the operator {operator}")
        if kind == "cond":
            _, test, then, other, _ = node
            known = self.known_condition(test, scope)
            if known is not None:
                return self.expression(then if known else other, scope)
            self.condition(test, scope)
            skip = self.emit("JUMP_IF_FALSE", 0, -1)
            first = self.expression(then, scope)
            done = self.emit("JUMP")
            self.depth -= 1
            self.patch(skip)
            self.expect(self.expression(other, scope), first)
            self.patch(done)
            return first
        if kind == "member":
            return self.member(node, scope)
        if kind == "call":
            return self.call(node, scope)
        raise Refusal(f"a {kind} expression")

    def identifier(self, name: str, scope: _Scope) -> str:
        if name in scope.declared:
            if name == scope.params_name:
                raise Refusal("params read other than by a name")
            if name not in scope.bound:
                raise Refusal(f"{name} read where it may be unset")
            self.emit("LOAD", scope.slots[name], 1)
            return _NUM
        if name in ("Infinity", "NaN"):
            self.constant(math.inf if name == "Infinity" else math.nan)
            return _NUM
        self.constant(self.attribute(name, name in self.global_names))
        return _NUM

    def attribute(self, name: str, is_global: bool) -> float:
        """The value of a numeric attribute (its double, as the compiled model reads it)."""
        value = self.attributes.get(name)
        if not is_global or type(value) not in (int, float):
            raise Refusal(f"{name} is no numeric attribute")
        try:
            return float(value)  # type: ignore[arg-type]
        except OverflowError:
            raise Refusal(f"{name} is beyond the doubles") from None

    def member(self, node: tuple, scope: _Scope) -> str:
        _, obj, key, _ = node
        if key[0] != "str":
            raise Refusal("a computed member")
        if obj[0] == "id" and obj[1] == "Math" and "Math" not in scope.declared:
            if key[1] not in _MATH_CONSTANTS:
                raise Refusal(f"Math.{key[1]}")
            self.constant(_MATH_CONSTANTS[key[1]])
            return _NUM
        if obj[0] == "id" and obj[1] == scope.params_name:
            self.emit("PARAM", self.name(key[1]), 1)
            return _NUM
        if obj[0] == "id" and obj[1] == "hw" and not self.local_or_attribute("hw", scope):
            self.constant(self.attribute(key[1], True))
            return _NUM
        raise Refusal("a member of another object")

    def local_or_attribute(self, name: str, scope: _Scope) -> bool:
        return name in scope.declared or name in self.attributes or name in self.functions

    def call(self, node: tuple, scope: _Scope) -> str:
        _, callee, args, _ = node
        if callee[0] == "member" and callee[2][0] == "str":
            obj, method = callee[1], callee[2][1]
            if obj[0] == "id" and obj[1] == scope.params_name and method == "get":
                return self.params_get(args, scope)
            if obj[0] == "id" and obj[1] == "Math" and "Math" not in scope.declared:
                return self.math(method, args, scope)
            raise Refusal("a method call")
        if callee[0] != "id" or callee[1] not in self.functions or callee[1] in scope.declared:
            raise Refusal("a call of something other than a helper function")
        name = callee[1]
        if name in self.inlining or len(self.inlining) >= MAX_INLINE_DEPTH:
            raise Refusal("a recursive call")
        params = self.functions[name][2]
        if len(args) != len(params):
            raise Refusal("a call with fewer or more arguments than parameters")
        slots = []
        for arg in args:
            self.expect(self.expression(arg, scope), _NUM)
            slots.append(self.slot())
        for slot in reversed(slots):
            self.emit("STORE", slot, -1)
        self.inlining.append(name)
        ret: list[int] = []
        depth = self.depth
        kind = self.function(name, slots, ret)
        self.inlining.pop()
        for at in ret:
            self.patch(at)
        self.depth = depth + 1
        return kind

    def known_number(self, node: tuple, scope: _Scope) -> float | None:
        """The value of a constant: a number, its negation, a Math constant, a numeric
        attribute (a global or `hw.name`), `Math.pow` of constants; else None."""
        kind = node[0]
        if kind == "num":
            return float(node[1])
        if kind == "unary" and node[1] == "-":
            value = self.known_number(node[2], scope)
            return None if value is None else -value
        if kind == "id" and node[1] not in scope.declared:
            attribute = self.attributes.get(node[1])
            if node[1] in self.global_names and type(attribute) in (int, float):
                return self.attribute(node[1], True)
            return None
        if kind == "member" and node[1][0] == "id" and node[2][0] == "str":
            name, key = node[1][1], node[2][1]
            if name == "Math" and "Math" not in scope.declared:
                return _MATH_CONSTANTS.get(key)
            numeric = type(self.attributes.get(key)) in (int, float)
            if name == "hw" and numeric and not self.local_or_attribute("hw", scope):
                return self.attribute(key, True)
            return None
        if kind == "call" and node[1][0] == "member" and len(node[2]) == 2:
            obj, key = node[1][1], node[1][2]
            if obj[0] == "id" and obj[1] == "Math" and key == ("str", "pow", key[-1]):
                base = self.known_number(node[2][0], scope)
                exponent = self.known_number(node[2][1], scope)
                if base is not None and exponent is not None and "Math" not in scope.declared:
                    return js_pow(base, exponent)
        return None

    def known_condition(self, node: tuple, scope: _Scope) -> bool | None:
        """The value of a test the hardware record decides: `hw.name === undefined` (and
        `!==`, `==`, `!=`, either side), its negation; else None."""
        if node[0] == "unary" and node[1] == "!":
            inner = self.known_condition(node[2], scope)
            return None if inner is None else not inner
        if node[0] != "binary" or node[1] not in ("===", "!==", "==", "!="):
            return None
        _, operator, left, right, _ = node
        if left[0] == "id" and left[1] == "undefined":
            left, right = right, left
        if right[0] != "id" or right[1] != "undefined" or "undefined" in scope.declared:
            return None
        if left[0] != "member" or left[1][0] != "id" or left[1][1] != "hw" or left[2][0] != "str":
            return None
        if self.local_or_attribute("hw", scope):
            return None
        key = left[2][1]
        if key not in self.attributes:
            absent = True
        elif type(self.attributes[key]) in (int, float):
            absent = False
        else:
            return None  # null is == undefined; other values are left to the compiled model
        return absent if operator in ("===", "==") else not absent

    def params_get(self, args: list[tuple], scope: _Scope) -> str:
        if not args or args[0][0] != "str":
            raise Refusal("params.get of other than a name")
        if len(args) == 1:
            self.emit("PARAM", self.name(args[0][1]), 1)
        elif len(args) == 2 and (fallback := self.known_number(args[1], scope)) is not None:
            self.constant(fallback)
            self.emit("PARAM_OR", self.name(args[0][1]))
        else:
            raise Refusal("params.get with a fallback other than a constant")
        return _NUM

    def math(self, method: str, args: list[tuple], scope: _Scope) -> str:
        if method in _MATH_UNARY:
            if not args:
                raise Refusal(f"Math.{method}()")
            self.expect(self.expression(args[0], scope), _NUM)
            if len(args) > 1:
                raise Refusal(f"Math.{method} with more than one argument")
            self.emit(_MATH_UNARY[method])
            return _NUM
        if method == "pow" and len(args) == 2:
            base, exponent = self.known_number(args[0], scope), self.known_number(args[1], scope)
            if base is None or exponent is None:
                raise Refusal("Math.pow of other than constants")
            self.constant(js_pow(base, exponent))  # the compiled model's (V8's) pow, once
            return _NUM
        if method in ("min", "max") and 1 <= len(args) <= MAX_STACK:
            for arg in args:
                self.expect(self.expression(arg, scope), _NUM)
            self.emit(method.upper(), len(args), 1 - len(args))
            return _NUM
        raise Refusal(f"Math.{method}")


def _declaration_count(body: list[tuple]) -> int:
    count = 0
    for statement in _walk_statements(body):
        if statement[0] == "var":
            count += len(statement[2])
    return count


def _declared_names(body: list[tuple]) -> frozenset[str]:
    return frozenset(
        name
        for statement in _walk_statements(body)
        if statement[0] == "var"
        for name, _ in statement[2]
    )


def _walk_statements(body: list[tuple]) -> list[tuple]:
    out: list[tuple] = []
    for statement in body:
        if statement is None:
            continue
        out.append(statement)
        if statement[0] == "block":
            out.extend(_walk_statements(statement[1]))
        elif statement[0] == "if":
            out.extend(_walk_statements([statement[2], statement[3]]))
    return out


def _read_names(body: list[tuple]) -> set[str]:
    names: set[str] = set()

    def visit(node: Any) -> None:
        if isinstance(node, tuple):
            if len(node) >= 2 and node[0] == "id" and isinstance(node[1], str):
                names.add(node[1])
            for item in node:
                visit(item)
        elif isinstance(node, list):
            for item in node:
                visit(item)

    visit(body)
    return names


def _returns(statement: tuple | None) -> bool:
    """Whether every path through `statement` ends in a return."""
    if statement is None:
        return False
    kind = statement[0]
    if kind in ("return", "throw"):
        return True
    if kind == "block":
        return any(_returns(s) for s in statement[1])
    if kind == "if":
        return _returns(statement[2]) and _returns(statement[3])
    return False


def program_of(
    source: str,
    attributes: Mapping[str, object],
    global_names: frozenset[str] | set[str],
    function: str = hotpath.COMPUTATION_TIME,
) -> Program | None:
    """Return `function(params)` of `source` as a Program, with `attributes` the hardware's
    and `global_names` the attribute globals V8 defines (as simulator.shallow gives the
    compiler), or None when the model is not in this module's subset."""
    try:
        return _program(source, attributes, frozenset(global_names), function)
    except (Refusal, RecursionError):
        return None


def _program(
    source: str, attributes: Mapping[str, object], global_names: frozenset[str], function: str
) -> Program:
    body = _parsed(source)
    functions: dict[str, tuple] = {}
    for statement in body:
        if statement[0] == "empty":
            continue
        if statement[0] != "funcdecl":
            raise Refusal("a top level with other than function declarations")
        name = statement[1]
        if name in functions or name in JS_GLOBAL_NAMES or name.startswith("__parasim"):
            raise Refusal("a function declared twice or named like a builtin")
        functions[name] = statement
    if function not in functions or len(functions[function][2]) != 1:
        raise Refusal(f"no {function}(params)")
    if "hw" in functions or any(name in attributes for name in functions):
        raise Refusal("a function named like an attribute")
    compiler = _Compiler(functions, attributes, global_names)
    compiler.function(function, [], None)
    instructions, slots = _optimized(compiler.code, compiler.slots)
    code = b"".join(struct.pack("=HH", op, arg) for op, arg in instructions)
    return Program(code, tuple(compiler.constants), tuple(compiler.names), slots)


# --- Fewer instructions on a run's path, every value the same ----------------------------------
# What inlining leaves: a helper's arguments stored in slots of their own (a constant or another
# variable copied), the ternary's and the call's jumps to a jump or to the RETURN. A program has
# no loop (jumps go forward) and its slots are written once each, so a slot that copies a
# constant or a slot written before it can be read from its source instead; a jump to a jump
# goes to where that one goes; a jump to RETURN or DECLINE is that instruction.

_JUMPS = (OPS["JUMP"], OPS["JUMP_IF_FALSE"])
_SIMPLE_PUSH = (OPS["CONST"], OPS["LOAD"])
_PUSHES = (OPS["CONST"], OPS["LOAD"], OPS["PARAM"])  # each one value more, nothing taken


def _stored_on_every_path(code: list[list[int]]) -> list[frozenset[int] | None]:
    """The slots stored on every path to each instruction (None: no path reaches it)."""
    before: list[frozenset[int] | None] = [None] * (len(code) + 1)
    before[0] = frozenset()
    for at, (op, arg) in enumerate(code):
        here = before[at]
        if here is None:
            continue
        after = here | {arg} if op == OPS["STORE"] else here
        targets = []
        if op in _JUMPS:
            targets.append(arg)
        if op not in (OPS["JUMP"], OPS["RETURN"], OPS["DECLINE"]):
            targets.append(at + 1)
        for target in targets:
            known = before[target]
            before[target] = after if known is None else known & after
    return before[: len(code)]


def _without(code: list[list[int]], removed: set[int]) -> list[list[int]]:
    """`code` less the instructions at `removed`, a jump to one of them going to the next kept."""
    new_index = []
    kept = 0
    for at in range(len(code) + 1):
        new_index.append(kept)
        if at < len(code) and at not in removed:
            kept += 1
    return [
        [op, new_index[arg] if op in _JUMPS else arg]
        for at, (op, arg) in enumerate(code)
        if at not in removed
    ]


def _forward_slots(code: list[list[int]]) -> list[list[int]]:
    """A slot stored once from a constant or an earlier-stored slot, read where that store
    reaches every read: the reads take the source, the push and the store go."""
    stores = [at for at, (op, _) in enumerate(code) if op == OPS["STORE"]]
    store_of: dict[int, int] = {}
    for at in stores:
        slot = code[at][1]
        store_of[slot] = -1 if slot in store_of else at  # -1: stored more than once
    targets = {arg for op, arg in code if op in _JUMPS}
    stored = _stored_on_every_path(code)
    source: dict[int, tuple[int, int]] = {}
    removed: set[int] = set()
    for at in stores:
        slot = code[at][1]
        if store_of[slot] != at:
            continue
        # the push whose value this store pops: the run of stores ending here pairs with the
        # instructions before the run, innermost first
        first = at
        while first > 0 and code[first - 1][0] == OPS["STORE"]:
            first -= 1
        push = first - 1 - (at - first)
        if (
            push < 0
            or code[push][0] not in _SIMPLE_PUSH
            or any(code[position][0] not in _PUSHES for position in range(push, first))
            or any(position in targets for position in range(push + 1, at + 1))
        ):
            continue
        op, arg = code[push]
        if op == OPS["LOAD"]:
            op, arg = source.get(arg, (op, arg))
            if op == OPS["LOAD"] and not 0 <= store_of.get(arg, -1) < push:
                continue  # a slot stored after the push, or more than once, may differ later
        reads = [stored[r] for r, (o, a) in enumerate(code) if o == OPS["LOAD"] and a == slot]
        if any(known is not None and slot not in known for known in reads):
            continue  # a read on a path without the store: it reads 0.0
        source[slot] = (op, arg)
        removed.update((push, at))
    if not removed:
        return code
    forwarded = [
        list(source.get(arg, (op, arg))) if op == OPS["LOAD"] else [op, arg] for op, arg in code
    ]
    return _without(forwarded, removed)


def _threaded(code: list[list[int]]) -> list[list[int]]:
    """Jumps to a jump taken to its end; a JUMP to RETURN or DECLINE is that instruction; a
    JUMP to the next instruction and what no path reaches go."""
    code = [list(instruction) for instruction in code]
    for instruction in code:
        if instruction[0] in _JUMPS:
            target = instruction[1]
            while target < len(code) and code[target][0] == OPS["JUMP"]:
                target = code[target][1]
            instruction[1] = target
            if (
                instruction[0] == OPS["JUMP"]
                and target < len(code)
                and code[target][0] in (OPS["RETURN"], OPS["DECLINE"])
            ):
                instruction[:] = [code[target][0], 0]
    stored = _stored_on_every_path(code)
    removed = {at for at in range(len(code)) if stored[at] is None}
    removed |= {
        at
        for at, (op, arg) in enumerate(code)
        if op == OPS["JUMP"] and at not in removed and arg == at + 1
    }
    return _without(code, removed) if removed else code


def _optimized(code: list[list[int]], slots: int) -> tuple[list[list[int]], int]:
    """`code` with fewer instructions on its paths (above), its slots numbered again from 0;
    and how many it uses."""
    code = _threaded(_forward_slots(code))
    numbers: dict[int, int] = {}
    for op, arg in code:
        if op in (OPS["LOAD"], OPS["STORE"]) and arg not in numbers:
            numbers[arg] = len(numbers)
    code = [
        [op, numbers[arg]] if op in (OPS["LOAD"], OPS["STORE"]) else [op, arg] for op, arg in code
    ]
    return code, len(numbers)


# --- The Python reference of `_speedups.evaluate_program` -------------------------------------

_LARGEST = 1.7976931348623157e308
# the parameters a program reads params with: as the compiled model reads them without a
# conversion (js_compiler's plain parameters); any other makes it decline
_PLAIN = frozenset({float, int, str, bool, type(None)})


class _Declined(Exception):
    """What the compiled model leaves to V8 (a division by zero, `%` outside fmod's domain)."""


def _divide(x: float, y: float) -> float:
    if y == 0.0:
        raise _Declined
    return x / y


def _fmod(x: float, y: float) -> float:
    if y == 0.0 or math.isinf(x):
        raise _Declined
    return math.fmod(x, y)


def _whole(function: Any, x: float) -> float:
    if not math.isfinite(x):
        return x
    result = float(function(x))
    return result if result else math.copysign(0.0, x)


def _parameter(params: Mapping[str, object], name: str) -> float | None:
    value = params.get(name)
    if type(value) is float:
        return value
    if type(value) is int:
        try:
            return float(value)
        except OverflowError:
            return None
    return None


def evaluate_python(program: Program, params: Mapping[str, object]) -> float | None:
    """Return `program`'s value for `params` (a dict of a call's parameters) when it is a
    model's time (a finite double >= 0), else None: the caller's usual path answers."""
    for key, item in params.items():
        if type(key) is not str or key == "__proto__" or type(item) not in _PLAIN:
            return None
    code, constants, names, _ = program
    words = struct.unpack(f"={len(code) // 2}H", code)
    stack: list[float] = []
    slots: dict[int, float] = {}
    at = 0
    while True:
        op, arg = words[2 * at], words[2 * at + 1]
        at += 1
        name = _OP_NAMES[op]
        if name == "CONST":
            stack.append(constants[arg])
        elif name == "PARAM":
            if names[arg] not in params:
                return None
            value = _parameter(params, names[arg])
            if value is None:
                return None
            stack.append(value)
        elif name == "PARAM_OR":
            if names[arg] in params:
                value = _parameter(params, names[arg])
                if value is None:
                    return None
                stack[-1] = value
        elif name == "LOAD":
            stack.append(slots[arg])
        elif name == "STORE":
            slots[arg] = stack.pop()
        elif name in ("ADD", "SUB", "MUL", "DIV", "MOD") or name in _COMPARISON_OPS:
            y = stack.pop()
            x = stack.pop()
            try:
                stack.append(_BINARY[name](x, y))
            except _Declined:
                return None
        elif name == "NEG":
            stack[-1] = -stack[-1]
        elif name == "NOT":
            stack[-1] = 0.0 if stack[-1] else 1.0
        elif name == "TRUTHY":
            x = stack[-1]
            stack[-1] = 1.0 if x == x and x != 0.0 else 0.0
        elif name == "JUMP_IF_FALSE":
            if not stack.pop():
                at = arg
        elif name == "JUMP":
            at = arg
        elif name in ("MIN", "MAX"):
            values = stack[len(stack) - arg :]
            del stack[len(stack) - arg :]
            stack.append((_math_min if name == "MIN" else _math_max)(*values))
        elif name == "DECLINE":
            return None
        elif name == "RETURN":
            value = stack.pop()
            return value if 0.0 <= value <= _LARGEST else None
        else:
            stack[-1] = _UNARY[name](stack[-1])


_BINARY: dict[str, Any] = {
    "ADD": lambda x, y: x + y,
    "SUB": lambda x, y: x - y,
    "MUL": lambda x, y: x * y,
    "DIV": _divide,
    "MOD": _fmod,
    "LT": lambda x, y: float(x < y),
    "GT": lambda x, y: float(x > y),
    "LE": lambda x, y: float(x <= y),
    "GE": lambda x, y: float(x >= y),
    "EQ": lambda x, y: float(x == y),
    "NE": lambda x, y: float(x != y),
}
_COMPARISON_OPS = frozenset({"LT", "GT", "LE", "GE", "EQ", "NE"})
_UNARY: dict[str, Any] = {
    "ABS": abs,
    "FLOOR": lambda x: _whole(math.floor, x),
    "CEIL": lambda x: _whole(math.ceil, x),
    "TRUNC": lambda x: _whole(math.trunc, x),
    "ROUND": _round,
    "SIGN": _sign,
    "SQRT": lambda x: math.nan if x != x or x < 0 else math.sqrt(x),
}

evaluate = hotpath.choose(evaluate_python, "evaluate_program")
"""`evaluate_python`, or the C core's copy of it where the core is in use."""
