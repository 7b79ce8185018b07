"""The import structure of the project, read from its source with `ast`.

The rules: the module-level imports of every module of the repository (the packages, the
tests, the benchmarks, the examples, the root's scripts) form no circle (issues 15 and 39);
the analyzer's modules form none even counting the imports made for the type checker; `hwdb`
imports nothing from `webapp` (an app does not depend on the project) and `restapi`, the REST
convention both apps share, imports neither; no function of the packages imports anything
except the documented lazy imports below. Imports under `if TYPE_CHECKING:` are for the type
checker only and do not count otherwise; a package's `__init__` counts like any module, so a
re-export that closes a circle is found too.
"""

from __future__ import annotations

import ast
import functools
import subprocess
from collections.abc import Container, Iterable, Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = ("simulator", "hwdb", "webapp", "validation", "restapi")
SKIPPED_DIRS = {"migrations", "__pycache__"}
# Directories that hold no module of the project's (a checkout's environments and outputs).
NOT_THE_PROJECT = {".venv", "node_modules", "build", ".git", "__pycache__", "data"}

# Imports a function may make, by the module imported (a prefix: "numpy" covers numpy.linalg).
LAZY_IMPORTS = {
    "numpy": "NumPy is heavy and optional: only some models and calibration need it.",
    "py_mini_racer": "loads V8; only the sandbox child that runs JavaScript needs it.",
    "ctypes": "mini-racer's value handles (simulator.shallow), with py_mini_racer itself.",
    "simulator.evaluate": "imports py_mini_racer (V8); web processes only start its child.",
    "simulator.calibrate": "imports NumPy; a web process needs it only to calibrate.",
    "simulator.trace_model": "imports NumPy (through the kernel models); a web process needs "
    "it only to import a trace.",
    "simulator.models.gpu_current": "imports NumPy (through volkov): loaded by the runs and "
    "the model tables that use the current-GPU model.",
    "simulator.models.gpu_detailed": "imports NumPy (through volkov): only detailed kernel runs.",
    "simulator.models.gpu_modes": "imports NumPy (through volkov): only kernel-mode runs.",
    "optuna": "loads NumPy and SQLAlchemy (over a second): only a study's advance, its "
    "progress and `python -m simulator study` need it (simulator.study).",
    "simulator.workloads.serving": "imports NumPy (through the kernel models): only the "
    "sandbox child that serves a request stream needs it (simulator.workloads.serving_sandbox).",
    "sqlalchemy": "Optuna's, for a study's storage (webapp.studio.study_storage) alone.",
    "simulator.memsys": "the memory hierarchy and its cache simulator: only runs with memory "
    "nodes load it (the sandbox child preloads it for them before its limits are set).",
}

# Imports a given file may make in a function, by (file, module imported).
LAZY_IMPORTS_IN = {
    ("webapp/interactive.py", "webapp.studio.tasks"): "the task module imports this one (its "
    "task runs the entry); only an eager job, in tests, calls the task in this process.",
    ("webapp/interactive.py", "webapp.celery"): "the services that import this module load "
    "while Django sets up its apps; the Celery app is needed only when a job is sent.",
    ("webapp/interactive.py", "celery.app.backends"): "as above: only a request waiting for "
    "an interactive job's answer needs the result backend.",
    ("webapp/gunicorn.conf.py", "django.urls"): "gunicorn reads its configuration before "
    "Django is set up; post_worker_init runs after.",
    ("webapp/gunicorn.conf.py", "webapp.celery"): "as above: the Celery app needs settings.",
    ("simulator/cli/common.py", "simulator.runner"): "only `--no-sandbox` runs a simulation in "
    "the CLI's own process; a sandboxed run's parent loads neither runner nor engine.",
    ("simulator/sandbox/wire.py", "orjson"): "loads dataclasses, uuid and enum (about 12 ms): "
    "the command line's parent decodes a large result with it, encodes with it, and no more.",
    ("simulator/sandbox/launch.py", "json"): "`python -m simulator run` imports the launcher "
    "before it starts its child; the payload is sent after the child is started.",
    ("simulator/sandbox/launch.py", "subprocess"): "a command line handed a started child by "
    "its pool never starts one itself, so it never loads subprocess (about 8 ms).",
    ("simulator/sandbox/launch.py", "tempfile"): "as above: only a child started here needs "
    "a fresh working directory (tempfile loads random and hashlib).",
    ("simulator/sandbox/launch.py", "shutil"): "as above: only the process that made a "
    "child's working directory removes it.",
    ("simulator/sandbox/pool.py", "subprocess"): "only the command line that starts the "
    "pool's daemon, and the daemon, start processes; a command line handed a child does not.",
    ("simulator/sandbox/pool.py", "shutil"): "the daemon's alone, to remove an ended "
    "child's working directory.",
    ("simulator/sandbox/pool.py", "socket"): "imports enum and selectors (about 8 ms): a "
    "served command line talks through `_socket`; the daemon and a command line taking a "
    "child load it.",
    ("simulator/sandbox/pool.py", "selectors"): "the daemon's alone (its event loop).",
    ("simulator/sandbox/pool.py", "select"): "the daemon's copy that waits for a command "
    "line waits with it.",
    ("simulator/sandbox/pool.py", "signal"): "the daemon's alone (imports enum).",
    ("simulator/sandbox/pool.py", "time"): "the daemon's alone (its idle clock).",
    ("simulator/sandbox/pool.py", "gc"): "the daemon's alone (freezes what its copies share).",
    ("simulator/sandbox/pool.py", "threading"): "the daemon imports it for its copies, each "
    "of which watches its command line's connection on a thread.",
    ("simulator/sandbox/pool.py", "orjson"): "the daemon imports it for its copies, which read "
    "a result of 64 KiB or more with it for the summary a run prints (its import is 10 ms).",
    ("simulator/sandbox/pool.py", "simulator.engine"): "the daemon's alone: it installs the "
    "allocator hook for its copies, which read results (greenlet and the C core, about 9 ms).",
    ("simulator/sandbox/pool.py", "simulator.cli"): "the daemon serves command lines with it; "
    "a command line served by the daemon never loads it.",
    ("simulator/sandbox/pool.py", "traceback"): "a copy serving a command line reports an "
    "uncaught error with it, as Python would.",
    ("simulator/sandbox/pool.py", "simulator.sandbox.zygote"): "the daemon's alone: it "
    "imports subprocess, socket and tempfile.",
    ("simulator/sandbox/launch.py", "simulator.sandbox.zygote"): "only a process that keeps "
    "a spare child (a queue worker, a sweep) makes a zygote; a command line never does.",
    ("simulator/sandbox/launch.py", "signal"): "imports enum: only a process that kills a "
    "child it started needs it, and a served command line starts none.",
    ("simulator/cli/common.py", "simulator.snapshot"): "a single run leaves the snapshot's "
    "check to its child (the same SnapshotError); only a sweep checks it in the parent.",
    ("simulator/sandbox/restricted.py", "simulator.hotpath"): "the attribute guard's C copy "
    "is the engine's C core: a run's builtins need it, a web process checking a model "
    "(compile_errors) does not load the engine.",
    ("simulator/sandbox/child.py", "simulator.shallow"): "a pooled child whose entry may use "
    "V8 makes the run's first isolate while it waits; the sandbox's own modules stay free of "
    "the models' code otherwise.",
}


# Files whose functions import a module named at run time (importlib.import_module), each
# with what it imports and why; such imports are invisible to the checks above, so they are
# kept to these.
DYNAMIC_IMPORTS_IN = {
    "simulator/__init__.py": "the public API's names, on first use (PEP 562): importing one "
    "module of the package must not load the rest.",
    "simulator/sandbox/__init__.py": "the package's names on first use, as above.",
    "simulator/sandbox/entries.py": "the module of a child entry named by its address (which "
    "registers it).",
    "simulator/sandbox/child.py": "the entry's module and the modules it says it needs, "
    "before the child sets its limits.",
    "simulator/cli/__init__.py": "only the subcommand asked for (`run` loads no NumPy).",
    "simulator/sandbox/restricted.py": "a module on the user code's import allow-list "
    "(ALLOWED_MODULES), when the model imports it, behind a read-only proxy.",
}


@functools.cache
def parsed(path: Path) -> ast.Module:
    """Return the syntax tree of the file at `path`, parsed once for all the checks (they
    read it and never change it)."""
    return ast.parse(path.read_text(), str(path))


@functools.cache
def walked(path: Path) -> tuple[ast.AST, ...]:
    """Return every node of the file at `path` (`ast.walk` of its tree), listed once."""
    return tuple(ast.walk(parsed(path)))


@pytest.fixture(scope="module", autouse=True)
def _parsed_once() -> Iterator[None]:
    """Keep this file's checks on one test process (tests/conftest.py groups a file with a
    module fixture), so that each file of the repository is parsed and walked once; the
    trees are let go after the last check."""
    yield
    walked.cache_clear()
    parsed.cache_clear()


def source_files() -> Iterator[Path]:
    """Yield every Python file of the packages, migrations left out."""
    for package in PACKAGES:
        for path in sorted((ROOT / package).rglob("*.py")):
            if not SKIPPED_DIRS & set(path.relative_to(ROOT).parts):
                yield path


def module_name(path: Path) -> str:
    """Return the dotted module name of a file ("hwdb.services" for its `__init__.py`)."""
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def is_type_checking(test: ast.expr) -> bool:
    """Return True for `if TYPE_CHECKING:` and `if typing.TYPE_CHECKING:`."""
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def imported_modules(
    node: ast.Import | ast.ImportFrom, module: str, is_package: bool, known: Container[str] = ()
) -> list[str]:
    """Return the modules an import statement loads. `from package import name` loads
    `package.name` when that is a module in `known`, and `package` (its `__init__`, which
    may re-export `name`) otherwise; like `import package.name`, the parent packages a
    module sits in are not counted (Python has them loaded, or loading, already)."""
    if isinstance(node, ast.Import):
        return [alias.name for alias in node.names]
    base = node.module or ""
    if node.level:
        anchor = module.split(".")
        anchor = anchor if is_package else anchor[:-1]
        anchor = anchor[: len(anchor) - (node.level - 1)]
        base = ".".join([*anchor, base] if base else anchor)
    names = [f"{base}.{alias.name}" for alias in node.names]
    return [name if name in known else base for name in names]


def module_level_imports(tree: ast.Module) -> Iterator[ast.Import | ast.ImportFrom]:
    """Yield the imports run when the module is imported: not in functions, not in
    `if TYPE_CHECKING:` blocks (class bodies, `try` and other `if`s do run)."""
    pending: list[ast.stmt] = list(tree.body)
    while pending:
        node = pending.pop(0)
        if isinstance(node, ast.Import | ast.ImportFrom):
            yield node
        elif isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda):
            continue
        elif isinstance(node, ast.If) and is_type_checking(node.test):
            pending.extend(node.orelse)
        else:
            pending.extend(
                child for child in ast.iter_child_nodes(node) if isinstance(child, ast.stmt)
            )


def tree_files() -> list[Path]:
    """Return every Python file of the repository: git's tracked files, or, outside a git
    checkout, every file outside the environments and build outputs."""
    listed = subprocess.run(
        ["git", "ls-files", "-z", "--", "*.py"], cwd=ROOT, capture_output=True, check=False
    )
    if listed.returncode == 0 and listed.stdout:
        names = [name for name in listed.stdout.decode().split("\0") if name]
        return sorted(ROOT / name for name in names if (ROOT / name).is_file())
    return sorted(
        path
        for path in ROOT.rglob("*.py")
        if not NOT_THE_PROJECT & set(path.relative_to(ROOT).parts)
    )


def import_graph(
    files: Iterable[Path] | None = None, *, type_checking: bool = False
) -> dict[str, set[str]]:
    """Return, per module of `files` (default: the packages), the modules among them it
    imports at load time; with `type_checking`, those imported for the type checker too.

    A script's absolute import of a module beside it (`bench/bench_rest.py`'s
    `from results_block import ...`, as Python runs a script with its directory first on the
    path) names that module."""
    paths = list(source_files() if files is None else files)
    trees = {module_name(path): (path, parsed(path)) for path in paths}
    graph: dict[str, set[str]] = {}
    for module, (path, tree) in trees.items():
        is_package = path.name == "__init__.py"
        directory = ".".join(module.split(".")[: None if is_package else -1])
        nodes: list[ast.Import | ast.ImportFrom] = list(module_level_imports(tree))
        if type_checking:
            nodes += type_checking_imports(tree)
        edges: set[str] = set()
        for node in nodes:
            for name in imported_modules(node, module, is_package, trees):
                beside = f"{directory}.{name}" if directory else name
                if name in trees:
                    edges.add(name)
                elif not getattr(node, "level", 0) and beside in trees:
                    edges.add(beside)
        edges.discard(module)
        graph[module] = edges
    return graph


def type_checking_imports(tree: ast.Module) -> list[ast.Import | ast.ImportFrom]:
    """Return the imports under `if TYPE_CHECKING:` blocks of `tree`."""
    return [
        node
        for block in ast.walk(tree)
        if isinstance(block, ast.If) and is_type_checking(block.test)
        for statement in block.body
        for node in ast.walk(statement)
        if isinstance(node, ast.Import | ast.ImportFrom)
    ]


def every_import(path: Path) -> Iterator[tuple[int, str]]:
    """Yield (line, module) for every import of the file at `path`: at load time, in a
    function or for the type checker alike."""
    module = module_name(path)
    is_package = path.name == "__init__.py"
    for node in walked(path):
        if isinstance(node, ast.Import | ast.ImportFrom):
            for name in imported_modules(node, module, is_package):
                yield node.lineno, name


def find_cycle(graph: dict[str, set[str]]) -> list[str] | None:
    """Return one import circle as [a, b, ..., a], or None when the graph has none."""
    state: dict[str, int] = {}  # 1: on the current path, 2: done
    path: list[str] = []

    def visit(module: str) -> list[str] | None:
        state[module] = 1
        path.append(module)
        for target in sorted(graph.get(module, ())):
            if state.get(target) == 1:
                return [*path[path.index(target) :], target]
            if target not in state and (found := visit(target)):
                return found
        path.pop()
        state[module] = 2
        return None

    for module in sorted(graph):
        if module not in state and (found := visit(module)):
            return found
    return None


def function_local_imports() -> Iterator[tuple[str, int, str]]:
    """Yield (file, line, module) for every import inside a function of the packages."""
    for path in source_files():
        module = module_name(path)
        is_package = path.name == "__init__.py"
        seen: set[int] = set()
        for function in walked(path):
            if not isinstance(function, ast.FunctionDef | ast.AsyncFunctionDef):
                continue
            for node in ast.walk(function):
                if isinstance(node, ast.Import | ast.ImportFrom) and id(node) not in seen:
                    seen.add(id(node))
                    name = imported_modules(node, module, is_package)[0]
                    yield str(path.relative_to(ROOT)), node.lineno, name


def is_allowed(file: str, module: str) -> bool:
    """Return True for a documented lazy import."""
    lazy = any(module == name or module.startswith(f"{name}.") for name in LAZY_IMPORTS)
    return lazy or (file, module) in LAZY_IMPORTS_IN


# --- the checks ---------------------------------------------------------------------------


def test_the_packages_import_each_other_without_a_circle() -> None:
    cycle = find_cycle(import_graph())
    assert cycle is None, "import circle: " + " -> ".join(cycle or [])


def test_no_module_of_the_repository_takes_part_in_an_import_circle() -> None:
    """Every tracked Python file: the packages, tests, benchmarks, examples, root scripts."""
    files = tree_files()
    assert {ROOT / "manage.py", ROOT / "tests" / "test_import_graph.py"} <= set(files)
    cycle = find_cycle(import_graph(files))
    assert cycle is None, "import circle: " + " -> ".join(cycle or [])


def test_the_analyzers_modules_form_no_circle_even_for_the_type_checker() -> None:
    """The execution graph's drawing (svg.py) takes the graph and the instructions, not the
    analysis (analysis.py) that calls it: before, it imported `KernelAnalysis` for its type."""
    analyzer = sorted((ROOT / "simulator" / "analyzer").rglob("*.py"))
    cycle = find_cycle(import_graph(analyzer, type_checking=True))
    assert cycle is None, "import circle: " + " -> ".join(cycle or [])


def imports_of(package: str, forbidden: tuple[str, ...]) -> list[str]:
    """Return `file:line imports module` for each import of `package`'s files that names a
    module of one of the `forbidden` packages."""
    return [
        f"{path.relative_to(ROOT)}:{line} imports {name}"
        for path in sorted((ROOT / package).rglob("*.py"))
        if not SKIPPED_DIRS & set(path.relative_to(ROOT).parts)
        for line, name in every_import(path)
        if name.split(".")[0] in forbidden
    ]


def test_hwdb_imports_nothing_from_the_project() -> None:
    """An app does not depend on the project that assembles it: the REST convention both
    use is `restapi`, below them."""
    assert imports_of("hwdb", ("webapp",)) == []


def test_the_rest_convention_imports_neither_app() -> None:
    assert imports_of("restapi", ("hwdb", "webapp")) == []


def test_functions_import_only_the_documented_lazy_modules() -> None:
    found = [
        f"{file}:{line} imports {module}"
        for file, line, module in function_local_imports()
        if not is_allowed(file, module)
    ]
    assert not found, "function-local imports (see LAZY_IMPORTS):\n" + "\n".join(found)


def test_the_sandbox_child_imports_neither_its_launcher_nor_its_zygote() -> None:
    """The names the three share live below them (the child's options in
    simulator.sandbox.served, the zygote's reply in simulator.sandbox.wire): before, child -> launch -> (lazily) zygote -> child was a circle
    held together by those three constants (issue 39)."""
    graph = import_graph()

    assert (
        not {"simulator.sandbox.launch", "simulator.sandbox.zygote"}
        & graph["simulator.sandbox.child"]
    )
    assert "simulator.sandbox.child" not in graph["simulator.sandbox.zygote"]


# --- the checker itself -------------------------------------------------------------------


def test_a_type_checking_import_counts_only_when_asked_for() -> None:
    tree = ast.parse("from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    import a.b\n")
    assert [imported_modules(n, "x", False)[0] for n in type_checking_imports(tree)] == ["a.b"]
    assert list(module_level_imports(tree)) != type_checking_imports(tree)


def test_the_cycle_finder_names_a_circle_and_accepts_a_tree() -> None:
    assert find_cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == ["a", "b", "c", "a"]
    assert find_cycle({"a": {"b", "c"}, "b": {"c"}, "c": set()}) is None


def test_type_checking_and_function_imports_are_not_load_time_imports() -> None:
    tree = ast.parse(
        "from typing import TYPE_CHECKING\n"
        "import hwdb.models\n"
        "if TYPE_CHECKING:\n    import webapp.studio.models\n"
        "try:\n    import simulator.engine\nexcept ImportError:\n    pass\n"
        "def f():\n    import validation.profile\n"
    )
    names = [imported_modules(node, "x", False)[0] for node in module_level_imports(tree)]
    assert names == ["typing", "hwdb.models", "simulator.engine"]


def test_a_relative_import_resolves_against_its_package() -> None:
    (node,) = ast.parse("from .common import MESSAGES").body
    assert isinstance(node, ast.ImportFrom)
    assert imported_modules(node, "webapp.studio.services.launch", False)[0] == (
        "webapp.studio.services.common"
    )
    assert imported_modules(node, "webapp.studio.services", True)[0] == (
        "webapp.studio.services.common"
    )


def test_every_import_of_the_project_names_a_module_that_exists() -> None:
    """An import of a moved or misspelled project module fails here, in every file of the
    packages, the tests and the benchmarks (mypy does not look: it ignores missing imports),
    even inside a function that no other test runs."""
    known = {module_name(path) for path in source_files()}
    known |= {f"simulator.{path.stem}" for path in (ROOT / "simulator").glob("_*.c")}
    files = [
        *source_files(),
        *sorted((ROOT / "tests").rglob("*.py")),
        *(ROOT / "bench").glob("*.py"),
    ]
    missing = []
    for path in files:
        for node in walked(path):
            if isinstance(node, ast.ImportFrom) and not node.level and node.module:
                modules = [node.module]
            elif isinstance(node, ast.Import):
                modules = [alias.name for alias in node.names]
            else:
                continue
            for module in modules:
                if module.split(".")[0] in PACKAGES and module not in known:
                    missing.append(f"{path.relative_to(ROOT)}:{node.lineno} imports {module}")
    assert not missing, "imports of project modules that do not exist:\n" + "\n".join(missing)


def test_modules_named_at_run_time_are_imported_only_where_documented() -> None:
    found = []
    for path in source_files():
        file = str(path.relative_to(ROOT))
        for node in walked(path):
            dynamic = (
                isinstance(node, ast.Call)
                and isinstance(node.func, ast.Attribute)
                and node.func.attr == "import_module"
            ) or (isinstance(node, ast.Name) and node.id == "__import__")
            if dynamic and file not in DYNAMIC_IMPORTS_IN:
                found.append(f"{file}:{node.lineno}")
    assert not found, "imports of modules named at run time (see DYNAMIC_IMPORTS_IN):\n" + (
        "\n".join(found)
    )
