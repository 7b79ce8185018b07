"""Application models as generator functions, for stackless processes.

A simulated process on a greenlet keeps a saved C stack and a 16 KiB frame-stack chunk while
it waits (the memory of a million of them: bench/RESULTS.md, the table of
bench_stackless.py). A generator keeps only its frame. `process_function` compiles an
application model into a generator function whose `sim.<call>(...)` expressions are `(yield sim.<call>(...))`: the engine's
`StacklessProcess` resumes it, and a call that must wait returns `WAIT`, which the process
yields (simulator/engine.py). A function of the model that waits (it makes such a call, or
calls one that does, by name) becomes a generator too, and each call to it
`(yield from f(...))`.

The model's own top level becomes the function's body. A name it binds that nothing else can
see (no function, class, lambda or comprehension of the model names it, and it does not
shadow a builtin) is the function's local, and so is a per-process name the run passes in
(`sim`, `rank`, a launch variable...: the function's parameters), so the top level's loops
run on fast locals; every other name it binds is declared `global`, so the process's globals
are read and written exactly as the module did. Reading a local before it is bound raises
the NameError the module would have (`module_error`). Only a
model that can keep its meaning this way is compiled: `sim` used only as `sim.<call>(...)` or
`sim.random`; no waiting call inside a class, lambda, comprehension or a function nested in
another (a call there could not yield); a waiting function defined once, not decorated, not a
generator itself, and only ever called by name; no `global` statement at its top level; no
memory call (those wait on greenlets in
the memory hierarchy's Python, which a stackless process would borrow one per call for).
Anything else runs on greenlets as before.

The restricted compiler (simulator.sandbox.restricted) compiles the function like any model:
the same guards, the same refusals.
"""

from __future__ import annotations

import ast
import builtins
import dis
import functools
import re
import symtable
import types
from collections.abc import Iterator

from RestrictedPython import compile_restricted_exec

from simulator.sandbox.restricted import _ApplicationTransformer, bindings, bound_names

SIM = "sim"
PROCESS_FUNCTION = "parasim_process"  # no leading "_": the restricted compiler checks it too
WAITLESS_CALLS = frozenset({"now", "p2pCommunicationSend"})
"""`sim` calls that never wait: left as they are."""
FAST_CALLS = frozenset(
    {"computation", "p2pCommunicationReceive", "broadcast", "scatter", "gather", "barrier"}
)
"""`sim` calls a stackless process makes without a greenlet (a computation without memory
work, receives, collectives); a model that makes others (memory calls) runs on greenlets,
where they cost less than on a borrowed one."""

_NESTED_SCOPES = (
    ast.FunctionDef,
    ast.AsyncFunctionDef,
    ast.Lambda,
    ast.ClassDef,
    ast.ListComp,
    ast.SetComp,
    ast.DictComp,
    ast.GeneratorExp,
)


class _ProcessFunctionTransformer(_ApplicationTransformer):
    """The application models' policy for the process function, whose parameters the run
    binds (to the process's `sim`, rank, launch variables), not the model: `sim` stays
    trusted when the model's own code (the function's body) never binds it."""

    def bound_by_model(self, node: ast.Module) -> set[str]:
        function = node.body[0]
        if not isinstance(function, ast.FunctionDef):  # cannot happen: _process_function's
            return bound_names(node)
        return bound_names(ast.Module(body=function.body, type_ignores=[]))

    def visit_Module(self, node: ast.Module) -> ast.AST | None:
        visited = super().visit_Module(node)
        if isinstance(visited, ast.Module) and isinstance(visited.body[0], ast.FunctionDef):
            _guards_as_parameters(visited.body[0])
        return visited


def _guards_as_parameters(function: ast.FunctionDef) -> None:
    """Make the guards that the restricted compiler put in `function` (`_mul_`,
    `_getiter_`...: names no model can write, since the compiler refuses every name that
    starts with "_") its keyword-only parameters, which the run binds to the same objects
    as its builtins (`guard_parameters`). A global read in a process's function misses
    CPython's cache whenever the process before it had other globals (every process has
    its own), so a guard read per loop turn costs a dictionary search; a parameter is a
    fast local. Added after the restricted compiler checked the function's parameters:
    they are its own names, not the model's."""
    names = sorted(
        {
            node.id
            for node in ast.walk(function)
            if isinstance(node, ast.Name)
            and isinstance(node.ctx, ast.Load)
            and _is_guard_name(node.id)
        }
    )
    function.args.kwonlyargs.extend(
        ast.copy_location(ast.arg(arg=name), function) for name in names
    )
    function.args.kw_defaults.extend(None for _ in names)


def _is_guard_name(name: str) -> bool:
    """Whether `name` is one of the restricted compiler's guards (`_<word>_`)."""
    return len(name) > 2 and name.startswith("_") and name.endswith("_") and "__" not in name


class _Refused(Exception):
    """The model cannot run stackless (the reason, for tests and debugging)."""


def _is_sim_call(node: ast.AST) -> bool:
    """Whether `node` is `sim.<call>(...)` of a call that may wait."""
    return (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and isinstance(node.func.value, ast.Name)
        and node.func.value.id == SIM
        and node.func.attr not in WAITLESS_CALLS
    )


def _own_nodes(scope: ast.AST) -> Iterator[ast.AST]:
    """Yield the nodes of `scope`'s own code: not those of the functions, classes, lambdas
    and comprehensions in it (their heads, decorators and defaults included)."""
    for child in ast.iter_child_nodes(scope):
        yield child
        if not isinstance(child, _NESTED_SCOPES):
            yield from _own_nodes(child)


def _waiting_functions(tree: ast.Module) -> frozenset[str]:
    """Return the names of the model's top-level functions that wait: they make a `sim`
    call that may wait, or call (by name) one that does. Such a function becomes a generator
    and each call to it `(yield from f(...))`; refused (_Refused) when that would change
    meaning: the name bound more than once or used other than as `f(...)`, a decorated,
    async or generator function."""
    defined: dict[str, ast.FunctionDef] = {}
    for node in _own_nodes(tree):
        if isinstance(node, ast.FunctionDef):
            defined.setdefault(node.name, node)
    waits = {name for name, node in defined.items() if any(map(_is_sim_call, _own_nodes(node)))}
    while True:
        more = {
            name
            for name, node in defined.items()
            if name not in waits
            and any(
                isinstance(call, ast.Call)
                and isinstance(call.func, ast.Name)
                and call.func.id in waits
                for call in _own_nodes(node)
            )
        }
        if not more:
            break
        waits |= more
    for name in waits:
        function = defined[name]
        if function.decorator_list:
            raise _Refused(f"line {function.lineno}: {name} waits and is decorated")
        if any(isinstance(node, ast.Yield | ast.YieldFrom) for node in _own_nodes(function)):
            raise _Refused(f"line {function.lineno}: {name} waits and is a generator")
        if sum(bound == name for bound in bindings(tree)) != 1:
            raise _Refused(f"line {function.lineno}: {name} waits and is bound again")
    return frozenset(waits)


class _YieldingSimCalls(ast.NodeTransformer):
    """Turn `sim.<call>(...)` into `(yield sim.<call>(...))` at the top level and in the
    model's waiting functions (`_waiting_functions`), and a call `f(...)` of such a function
    into `(yield from f(...))`; refuse (raise _Refused) what would change meaning."""

    def __init__(self, calls: frozenset[str] | None, waiting: frozenset[str]) -> None:
        self.calls = calls
        self.waiting = waiting
        self.nested = 0  # scopes around the node that cannot yield
        self.function = 0  # waiting functions around it (they can)
        self.yields = 0

    def _scope(self, node: ast.AST) -> ast.AST:
        self.nested += 1
        self.generic_visit(node)
        self.nested -= 1
        return node

    visit_AsyncFunctionDef = visit_Lambda = visit_ClassDef = _scope
    visit_ListComp = visit_SetComp = visit_DictComp = visit_GeneratorExp = _scope

    def visit_FunctionDef(self, node: ast.FunctionDef) -> ast.AST:
        if self.nested or self.function or node.name not in self.waiting:
            return self._scope(node)
        # a waiting function of the top level: its head cannot yield, its body does
        self.nested += 1
        node.args = self.visit(node.args)
        if node.returns is not None:
            node.returns = self.visit(node.returns)
        self.nested -= 1
        self.function += 1
        node.body = [self.visit(statement) for statement in node.body]
        self.function -= 1
        return node

    def visit_Global(self, node: ast.Global) -> ast.AST:
        if not self.nested and not self.function:  # the top level's own names go here
            raise _Refused(f"line {node.lineno}: a global statement")
        return node

    def _in_a_function_only(self, node: ast.AST) -> ast.AST:
        """A `return`, `yield` or `await` the model wrote: the process function would take
        one at the top level, which Python refuses there (compile_user_code says so)."""
        if not self.nested and not self.function:
            raise _Refused(f"line {getattr(node, 'lineno', '?')}: outside a function")
        return self.generic_visit(node)

    visit_Return = visit_Yield = visit_YieldFrom = visit_Await = _in_a_function_only

    visit_Nonlocal = visit_Global  # type: ignore[assignment]

    def visit_Call(self, node: ast.Call) -> ast.AST:
        func = node.func
        if isinstance(func, ast.Name) and func.id in self.waiting:
            node.args = [self.visit(arg) for arg in node.args]
            node.keywords = [self.visit(keyword) for keyword in node.keywords]
            if self.nested:
                raise _Refused(f"line {node.lineno}: {func.id}, which waits, in a nested scope")
            self.yields += 1
            return ast.copy_location(ast.YieldFrom(value=node), node)
        if not (
            isinstance(func, ast.Attribute)
            and isinstance(func.value, ast.Name)
            and func.value.id == SIM
        ):
            return self.generic_visit(node)
        node.args = [self.visit(arg) for arg in node.args]
        node.keywords = [self.visit(keyword) for keyword in node.keywords]
        if func.attr in WAITLESS_CALLS:
            return node
        if self.nested:
            raise _Refused(f"line {node.lineno}: sim.{func.attr} inside a nested scope")
        if self.calls is not None and func.attr not in self.calls:
            raise _Refused(f"line {node.lineno}: sim.{func.attr} waits on a greenlet")
        if self.calls is not None and func.attr == "computation" and _with_memory(node):
            raise _Refused(f"line {node.lineno}: sim.computation with memory waits on a greenlet")
        self.yields += 1
        return ast.copy_location(ast.Yield(value=node), node)

    def visit_Attribute(self, node: ast.Attribute) -> ast.AST:
        if (
            isinstance(node.value, ast.Name)
            and node.value.id == SIM
            and node.attr == "random"
            and isinstance(node.ctx, ast.Load)
        ):
            return node
        return self.generic_visit(node)

    def visit_Name(self, node: ast.Name) -> ast.AST:
        if node.id == SIM:
            raise _Refused(f"line {node.lineno}: `sim` used other than as sim.<call>(...)")
        if node.id in self.waiting:
            raise _Refused(f"line {node.lineno}: {node.id}, which waits, used other than called")
        return node


def _with_memory(call: ast.Call) -> bool:
    """Whether a `sim.computation(...)` call may give `memory` (its fourth argument)."""
    return (
        len(call.args) > 3
        or any(isinstance(arg, ast.Starred) for arg in call.args)
        or any(keyword.arg in (None, "memory") for keyword in call.keywords)
    )


@functools.lru_cache(maxsize=16)  # the sandbox child asks before its run, the run again
def process_function(
    source: str,
    filename: str,
    *,
    calls: frozenset[str] | None = FAST_CALLS,
    arguments: frozenset[str] = frozenset(),
    shared: frozenset[str] = frozenset(),
) -> types.CodeType | None:
    """Return the code of the generator function that runs application model `source` as a
    stackless process, or None when the model must run on a greenlet: it waits in a call
    outside `calls` (None: any call, for tests), or its meaning would change (see the
    module's docstring), or it makes no call that waits. Errors are `compile_user_code`'s to
    report: a model it refuses gives None.

    `arguments` are the per-process names the run can pass as arguments (the others stay
    in the process's globals); `shared`, the names of the run's builtins (a model that binds
    one keeps it global). Call the function with the process's globals
    (types.FunctionType), the values of its parameters (`parameters`), in order, and its
    guards by name (`guard_parameters`).
    """
    try:
        return _process_function(source, filename, calls, arguments, shared)
    except (_Refused, SyntaxError, TypeError, ValueError):
        return None


def parameters(code: types.CodeType) -> tuple[str, ...]:
    """Return the names `process_function`'s function takes as arguments, in order."""
    return code.co_varnames[: code.co_argcount]


def guard_parameters(code: types.CodeType) -> tuple[str, ...]:
    """Return the guards `process_function`'s function takes as keyword arguments: pass
    each the run's builtin of that name (simulator.sandbox.restricted's guard)."""
    return code.co_varnames[code.co_argcount : code.co_argcount + code.co_kwonlyargcount]


def referenced_names(code: types.CodeType) -> frozenset[str]:
    """Return every name `code` or a function, class or comprehension in it could read or
    bind: a process's global that is not among them is never looked at (restricted code has
    no `globals()`, `vars()` or `eval`), so the run need not make it."""
    names = {*code.co_names, *code.co_varnames, *code.co_cellvars, *code.co_freevars}
    for constant in code.co_consts:
        if isinstance(constant, types.CodeType):
            names |= referenced_names(constant)
    return frozenset(names)


# What can write a process's globals: binding or deleting a global (a top-level name that a
# function, class or comprehension of the model names, or one a `global` statement declares),
# a class body's or an import's bindings (counted too, not to reason about where they go), and
# printing (the print collector keeps its buffer in the printing code's globals:
# simulator.sandbox.restricted `_print_collector`).
_GLOBAL_WRITES = frozenset(
    dis.opmap[name]
    for name in (
        "STORE_GLOBAL",
        "DELETE_GLOBAL",
        "STORE_NAME",
        "DELETE_NAME",
        "IMPORT_NAME",
        "IMPORT_STAR",
    )
)
_PRINT_NAMES = frozenset({"_print_", "_print"})


def changes_globals(code: types.CodeType) -> bool:
    """Return whether `process_function`'s function `code` may change the globals it runs
    with: False only when neither it nor a function, class, lambda or comprehension in it
    binds, deletes or imports a name other than a local, or prints. Conservative: anything
    else counts as a change. Restricted code reaches no globals otherwise (no `globals()`,
    `vars()`, `__globals__` or frame attributes), so a function that changes none can share
    one globals table, with the same names, between a run's processes: no process can see,
    through it, anything another did."""
    if _PRINT_NAMES & {*code.co_names, *code.co_varnames}:
        return True
    # an instruction's opcode is the first of its two bytes (an argument's byte, or a cache
    # entry's, never stands where an opcode does)
    if not _GLOBAL_WRITES.isdisjoint(code.co_code[::2]):
        return True
    return any(
        changes_globals(constant)
        for constant in code.co_consts
        if isinstance(constant, types.CodeType)
    )


def refusal(source: str, filename: str, *, calls: frozenset[str] | None = FAST_CALLS) -> str:
    """Return why `source` cannot run stackless ("" when it can)."""
    try:
        _process_function(source, filename, calls, frozenset(), frozenset())
    except (_Refused, SyntaxError, TypeError, ValueError) as error:
        return str(error)
    return ""


_UNBOUND_LOCAL = re.compile(r"local variable '(\w+)'")


def module_error(error: BaseException) -> BaseException:
    """Return what the model's module would have raised for `error`: reading a name of its
    top level before binding it raises UnboundLocalError in the process function (a local
    there), NameError in the module."""
    if not isinstance(error, UnboundLocalError):
        return error
    tb = error.__traceback__
    while tb is not None and tb.tb_next is not None:
        tb = tb.tb_next
    match = _UNBOUND_LOCAL.search(str(error))
    if tb is None or tb.tb_frame.f_code.co_name != PROCESS_FUNCTION or match is None:
        return error  # raised in a function of the model: as it would be on a greenlet
    return NameError(f"name {match.group(1)!r} is not defined").with_traceback(error.__traceback__)


class _NestedNames(ast.NodeVisitor):
    """Collect every name a function, class, lambda or comprehension of the model names
    (read, bound or declared global there): such a name stays in the process's globals."""

    def __init__(self) -> None:
        self.names: set[str] = set()
        self.nested = 0

    def _scope(self, node: ast.AST) -> None:
        self.nested += 1
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            self.names.add(node.name)
        self.generic_visit(node)
        self.nested -= 1

    visit_FunctionDef = visit_AsyncFunctionDef = visit_Lambda = visit_ClassDef = _scope
    visit_ListComp = visit_SetComp = visit_DictComp = visit_GeneratorExp = _scope

    def visit_Name(self, node: ast.Name) -> None:
        if self.nested:
            self.names.add(node.id)

    def visit_Global(self, node: ast.Global | ast.Nonlocal) -> None:
        if self.nested:
            self.names.update(node.names)

    visit_Nonlocal = visit_Global

    def visit_arg(self, node: ast.arg) -> None:
        if self.nested:
            self.names.add(node.arg)


def _process_function(
    source: str,
    filename: str,
    calls: frozenset[str] | None,
    arguments: frozenset[str],
    shared: frozenset[str],
) -> types.CodeType:
    tree = ast.parse(source, filename)
    nested = _NestedNames()
    nested.visit(tree)
    transformer = _YieldingSimCalls(calls, _waiting_functions(tree))
    body = [transformer.visit(statement) for statement in tree.body]
    if not transformer.yields:
        raise _Refused("no sim call waits")
    top = symtable.symtable(source, filename, "exec")
    bound = {
        symbol.get_name()
        for symbol in top.get_symbols()
        if symbol.is_assigned() or symbol.is_imported()
    }
    kept_global = nested.names | shared | set(dir(builtins))
    # the names the run passes in that the top level mentions: one it never mentions is
    # not made for the process at all (`referenced_names`)
    mentioned = {symbol.get_name() for symbol in top.get_symbols()}
    params = sorted((arguments & mentioned) - kept_global)
    global_names = sorted(name for name in bound if name in kept_global)
    declarations: list[ast.stmt] = [ast.Global(names=global_names)] if global_names else []
    function = ast.FunctionDef(
        name=PROCESS_FUNCTION,
        args=ast.arguments(
            posonlyargs=[],
            args=[ast.arg(arg=name) for name in params],
            vararg=None,
            kwonlyargs=[],
            kw_defaults=[],
            kwarg=None,
            defaults=[],
        ),
        body=declarations + body,
        decorator_list=[],
        returns=None,
        type_comment=None,
    )
    ast.copy_location(function, tree.body[0])
    module = ast.Module(body=[function], type_ignores=[])
    ast.fix_missing_locations(module)
    result = compile_restricted_exec(module, filename=filename, policy=_ProcessFunctionTransformer)
    if result.errors or result.code is None:
        raise _Refused("; ".join(result.errors) or "cannot compile")
    for constant in result.code.co_consts:
        if isinstance(constant, types.CodeType) and constant.co_name == PROCESS_FUNCTION:
            return constant
    raise _Refused("no process function in the compiled code")  # cannot happen
