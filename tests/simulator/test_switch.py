"""The one switch between the C cores and their Python references (simulator.hotpath): it
alone reads PARASIM_PURE_PYTHON and imports the C modules, and every core follows it."""

from __future__ import annotations

import ast
import json
import os
import subprocess
import sys
import types
from pathlib import Path
from typing import Any

import pytest

from simulator import hotpath

ROOT = Path(__file__).resolve().parents[2]
C_MODULES = {"_speedups", "_cachesim", "_v8results"}
# the switch's names for the C modules in use (simulator.hotpath `speedups`, ...)
C_MODULE_NAMES = C_MODULES | {"speedups", "cachesim", "v8results"}

# Where each core's class (or function, or module) comes from, in a fresh interpreter.
CHOICES = {
    "engine core": "engine.Engine.__mro__[2].__module__",
    "mailbox core": "engine.Mailbox.__mro__[1].__module__",
    "FIFO core": "engine.Resource.__mro__[1].__module__",
    "stackless core": "engine.StacklessProcess.__mro__[1].__module__",
    "sim core": "api._SimCore.__module__",
    "message filter": "api._message_filter.__module__",
    "usage": "results.Usage.__module__",
    "attribute guard": "getattr(restricted._attribute_guard(), '__module__', None)",
    "multiply guard": "getattr(restricted._multiply_guard(), '__module__', None)",
    "cache chain": "cache.CacheHierarchy.__mro__[2].__module__",
    "cache tree": "getattr(coherence.tree_core, '__module__', None)",
    "V8 hand-back": "getattr(shallow._v8results, '__name__', None)",
}
PROBE = (
    "import json\n"
    "from simulator import api, engine, results, shallow\n"
    "from simulator.models import cache, coherence\n"
    "from simulator.sandbox import restricted\n"
    "print(json.dumps({"
    + ", ".join(f"{name!r}: {expression}" for name, expression in CHOICES.items())
    + "}))"
)


def _choices(pure_python: bool) -> dict[str, str | None]:
    env = {key: value for key, value in os.environ.items() if key != "PARASIM_PURE_PYTHON"}
    if pure_python:
        env["PARASIM_PURE_PYTHON"] = "1"
    done = subprocess.run(
        [sys.executable, "-c", PROBE], cwd=ROOT, env=env, capture_output=True, text=True
    )
    assert done.returncode == 0, done.stderr
    chosen: dict[str, str | None] = json.loads(done.stdout)
    return chosen


def test_pure_python_runs_every_python_reference() -> None:
    chosen = _choices(pure_python=True)
    assert not any(module and module.startswith("simulator._") for module in chosen.values())


def test_the_built_c_modules_serve_every_core_together() -> None:
    if hotpath.speedups is None or hotpath.cachesim is None or hotpath.v8results is None:
        if os.environ.get("PARASIM_REQUIRE_SPEEDUPS") == "1":
            pytest.fail("the C cores are required (PARASIM_REQUIRE_SPEEDUPS=1) but not built")
        pytest.skip("a C core is not built, or PARASIM_PURE_PYTHON is set")
    chosen = _choices(pure_python=False)
    wrong = {
        name: module
        for name, module in chosen.items()
        if module not in {"simulator._speedups", "simulator._cachesim", "simulator._v8results"}
    }
    assert wrong == {}


def _names_c_module(node: ast.expr) -> str | None:
    """Return the C module `node` names (`speedups`, `hotpath.speedups`, `_cachesim`), if any."""
    if isinstance(node, ast.Name) and node.id in C_MODULE_NAMES:
        return node.id
    if isinstance(node, ast.Attribute) and node.attr in C_MODULE_NAMES:
        return node.attr
    return None


def _c_type_tested(node: ast.Call) -> str | None:
    """Return "isinstance <module>" when `node` tests an object against a C module's class
    (`isinstance(engine, speedups.Core)`): a choice between C and Python made outside the
    switch (`hotpath.core_of` makes it)."""
    if not (isinstance(node.func, ast.Name) and node.func.id in {"isinstance", "issubclass"}):
        return None
    if len(node.args) != 2:
        return None
    classes = node.args[1]
    candidates = classes.elts if isinstance(classes, ast.Tuple) else [classes]
    for candidate in candidates:
        if isinstance(candidate, ast.Attribute):
            module = _names_c_module(candidate.value)
            if module is not None:
                return f"{node.func.id} {module}"
    return None


def _code_mentions(tree: ast.AST) -> set[str]:
    """Return the C modules a module imports, whether its code (not its docstrings) names
    PARASIM_PURE_PYTHON, and the C modules whose classes it tests objects against."""
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and (tested := _c_type_tested(node)) is not None:
            found.add(tested)
        if isinstance(node, ast.ImportFrom) and node.module == "simulator":
            found |= {alias.name for alias in node.names} & C_MODULES
        elif isinstance(node, ast.ImportFrom | ast.Import):
            names = (
                [node.module]
                if isinstance(node, ast.ImportFrom)
                else [alias.name for alias in node.names]
            )
            found |= {name.rpartition(".")[2] for name in names if name} & C_MODULES
        elif isinstance(node, ast.Call | ast.Subscript):
            for child in ast.iter_child_nodes(node):
                if not (isinstance(child, ast.Constant) and isinstance(child.value, str)):
                    continue
                if child.value == "PARASIM_PURE_PYTHON":
                    found.add("PARASIM_PURE_PYTHON")
                elif child.value.rpartition(".")[2] in C_MODULES:
                    found.add(child.value.rpartition(".")[2])
    return found


def test_no_module_but_the_switch_reads_the_variable_or_imports_a_c_module() -> None:
    offenders = {}
    for path in sorted((ROOT / "simulator").rglob("*.py")):
        relative = str(path.relative_to(ROOT))
        if relative in {"simulator/hotpath.py", "simulator/build_speedups.py"}:
            continue
        mentions = _code_mentions(ast.parse(path.read_text(), filename=relative))
        if mentions:
            offenders[relative] = sorted(mentions)
    assert offenders == {}


def test_the_scan_finds_a_module_that_decides_on_its_own() -> None:
    """The scan above is not vacuous: the decisions this switch replaced are found."""
    decides = (
        "import os\n"
        "try:\n    from simulator import _cachesim\nexcept ImportError:\n    _cachesim = None\n"
        "if os.environ.get('PARASIM_PURE_PYTHON'):\n    _cachesim = None\n"
    )
    assert _code_mentions(ast.parse(decides)) == {"_cachesim", "PARASIM_PURE_PYTHON"}
    assert _code_mentions(ast.parse("importlib.import_module('simulator._speedups')")) == {
        "_speedups"
    }
    picks_by_type = (
        "if speedups is not None and isinstance(engine, speedups.Core):\n"
        "    transfer = speedups.Transfer\n"
        "ok = isinstance(engine, (Engine, hotpath.speedups.Core))\n"
    )
    assert _code_mentions(ast.parse(picks_by_type)) == {"isinstance speedups"}
    assert _code_mentions(ast.parse("isinstance(engine, engine_module.Engine)")) == set()


def test_choose_gives_the_c_name_only_where_its_module_is_in_use() -> None:
    class Reference:
        pass

    built = types.ModuleType("simulator._fake")
    built.Thing = object  # type: ignore[attr-defined]
    assert hotpath.choose_in(None, Reference, "Thing") is Reference
    assert hotpath.choose_in(built, Reference, "Thing") is object
    assert hotpath.choose_in(built, Reference, "Thing.__init__") is object.__init__
    assert hotpath.choose_in(None, Reference, "Thing.__init__") is Reference
    if hotpath.speedups is None:
        assert hotpath.choose(Reference, "Core") is Reference
    else:
        assert hotpath.choose(Reference, "Core") is hotpath.speedups.Core


def test_core_of_names_the_c_module_only_for_an_engine_on_the_c_core() -> None:
    """`platform` picks its transfer by the engine it is given, through the switch: a
    `PythonEngine` (the reference, which the differential tests run beside the C core) gets
    the Python transfer even where the C core is built."""
    from simulator.engine import Engine, PythonEngine
    from simulator.platform import _Transfer

    assert hotpath.core_of(PythonEngine()) is None
    assert hotpath.choose_in(hotpath.core_of(PythonEngine()), _Transfer, "Transfer") is _Transfer
    assert hotpath.core_of(object()) is None
    built: Any = hotpath.speedups
    if built is None:
        assert hotpath.core_of(Engine()) is None
    else:
        transfer = built.Transfer
        assert hotpath.core_of(Engine()) is built
        assert hotpath.choose_in(hotpath.core_of(Engine()), _Transfer, "Transfer") is transfer


def _methods_declared_for_type_checking(tree: ast.Module, classes: set[str]) -> list[str]:
    """Return "Class.method" for each method that `classes` declare under TYPE_CHECKING only."""
    found = []
    for node in tree.body:
        if not (isinstance(node, ast.ClassDef) and node.name in classes):
            continue
        for statement in node.body:
            if not (
                isinstance(statement, ast.If)
                and isinstance(statement.test, ast.Name)
                and statement.test.id == "TYPE_CHECKING"
            ):
                continue
            found += [
                f"{node.name}.{child.name}"
                for child in statement.body
                if isinstance(child, ast.FunctionDef)
            ]
    return found


def test_the_sim_family_reads_top_to_bottom() -> None:
    """Neither core of `sim` declares a method for a subclass to supply: what both cores call
    back (`_SimCalls`) is defined before them, and StacklessSim takes the C core's calls
    through the switch (no `speedups is not None` of its own)."""
    from simulator import api

    source = (ROOT / "simulator" / "api.py").read_text()
    tree = ast.parse(source)
    assert _methods_declared_for_type_checking(tree, {"_SimCalls", "_PythonSimCore", "Sim"}) == []
    assert _methods_declared_for_type_checking(
        ast.parse("class _PythonSimCore:\n    if TYPE_CHECKING:\n        def _target(self): ...\n"),
        {"_PythonSimCore"},
    ) == ["_PythonSimCore._target"]
    for name, reference in {
        "p2pCommunicationReceive": api.StacklessSim._receive_fallback,
        "broadcast": api.Sim.broadcast,
        "scatter": api.Sim.scatter,
        "gather": api.Sim.gather,
    }.items():
        stackless_name = "receive" if name == "p2pCommunicationReceive" else name
        expected = hotpath.choose(reference, f"SimCore._stackless_{stackless_name}")
        assert getattr(api.StacklessSim, name) is expected
