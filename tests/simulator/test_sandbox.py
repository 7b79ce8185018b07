"""Tests of the application-model sandbox: restricted code and the limited child process.

Each hostile model must end with a clear error while the caller (this test process) lives
on; the `entry_*` functions below stand in for the runner inside the child to exercise
limits that restricted code cannot reach (fork, raw output, huge results).
"""

from __future__ import annotations

import copy
import json
import math
import os
import pickle
import resource
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path
from types import CodeType
from typing import Any

import pytest

from simulator.engine import ARENA_REGION_BYTES, STACKLESS_CORE, speedups
from simulator.errors import (
    MESSAGE_LIMIT_CHARS,
    LaunchError,
    SandboxLimitError,
    SimulationError,
    UserCodeError,
)
from simulator.runner import address_space_reserved
from simulator.sandbox import (
    Limits,
    child_entry,
    compile_user_code,
    execute_user_code,
    printed_output,
    restricted,
    run_sandboxed,
    user_globals,
)
from simulator.sandbox.child import SINGLE_THREADED
from simulator.sandbox.preparation import (
    PROCESS_RESERVED_BYTES,
    V8_CODE_RANGE_BYTES,
    V8_CONTEXT_BYTES,
)
from simulator.sandbox.restricted import PRINT_LIMIT_CHARS, compile_errors
from simulator.sandbox.wire import (
    RESULT_PIECE_ITEMS,
    decode_message,
    encode_message,
    result_message_pieces,
)
from tests.simulator.fresh_python import run_code

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "examples" / "merpsys_gtx970"
THIS = "tests.simulator.test_sandbox"
USER_CODE = "simulator.sandbox.restricted:execute_user_code"
SMALL = Limits(
    wall_s=10,
    cpu_s=2,
    data_bytes=512 * 1024**2,
    fsize_bytes=1024**2,
    nproc=32,
    output_bytes=64 * 1024,
    result_bytes=1024**2,
)
IS_ROOT = os.geteuid() == 0


# --------------------------------------------------------------------------------------
# Entries run inside the child instead of the runner


@child_entry
def entry_identity(**_: object) -> dict[str, Any]:
    return {
        "uid": os.getuid(),
        "gid": os.getgid(),
        "groups": os.getgroups(),
        "environment": dict(os.environ),
        "cwd": os.getcwd(),
        "cpu": resource.getrlimit(resource.RLIMIT_CPU),
        "data": resource.getrlimit(resource.RLIMIT_DATA),
        "fsize": resource.getrlimit(resource.RLIMIT_FSIZE),
        "core": resource.getrlimit(resource.RLIMIT_CORE),
        "nproc": resource.getrlimit(resource.RLIMIT_NPROC),
        "can_read_root_home": os.access("/root", os.R_OK),
        "cpus": sorted(os.sched_getaffinity(0)),
    }


@child_entry
def entry_fork_bomb(**_: object) -> dict[str, Any]:
    forks = 0
    try:
        while forks < 10_000:
            if os.fork() == 0:
                time.sleep(60)
                os._exit(0)
            forks += 1
    except OSError as error:
        return {"forks": forks, "error": error.strerror, "uid": os.getuid()}
    return {"forks": forks, "error": None, "uid": os.getuid()}


@child_entry
def entry_flood_stdout(**_: object) -> dict[str, Any]:
    chunk = "x" * 1024 * 1024
    for _ in range(4096):  # 4 GB unless stopped
        sys.stdout.write(chunk)
    return {"status": "flooded"}


@child_entry
def entry_huge_result(**_: object) -> dict[str, Any]:
    return {"status": "ok", "data": "x" * (8 * 1024**2)}


@child_entry
def entry_sleep(**_: object) -> dict[str, Any]:
    time.sleep(60)
    return {"status": "slept"}


@child_entry
def entry_big_file(**_: object) -> dict[str, Any]:
    with open("big.bin", "wb") as handle:
        for _ in range(8):
            handle.write(b"\0" * 1024**2)
    return {"status": "written"}


@child_entry
def entry_progress(*, progress: Any, **_: object) -> dict[str, Any]:
    for fraction in (0.25, 0.5, 1.0):
        progress(fraction)
        time.sleep(0.12)
    return {"status": "ok"}


@child_entry
def entry_large_result(**_: object) -> dict[str, Any]:
    # about 24 MB of JSON: hundreds of pipe chunks before the message's newline
    rows = [
        {"process": f"P[{i}]", "start_s": i * 0.5, "end_s": i * 0.5 + 0.25} for i in range(400_000)
    ]
    return {"status": "finished", "timeline": rows}


@child_entry
def entry_launch_error(**_: object) -> dict[str, Any]:
    raise LaunchError("labels.GPU", "asks for 3 processes, capacity 1")


@child_entry
def entry_segfault(**_: object) -> dict[str, Any]:
    os.kill(os.getpid(), signal.SIGSEGV)
    return {}


@child_entry
def entry_javascript(**_: object) -> dict[str, Any]:
    from simulator.shallow import ShallowFunctions

    functions = ShallowFunctions(
        model_key="gpu",
        source="function computationTime(params) { return params.n / SMs; }",
        attributes={"SMs": 13},
        twin=False,  # in V8, not answered in Python (simulator.models.js_compiler)
    )
    return {"time": functions.call("computationTime", params={"n": 26})}


def run_user_code(source: str, limits: Limits = SMALL, **variables: object) -> dict[str, Any]:
    payload = {"app_source": source, "variables": variables}
    return run_sandboxed(payload, limits=limits, _entry=USER_CODE)


def run_entry(name: str, limits: Limits = SMALL, **kwargs: Any) -> dict[str, Any]:
    return run_sandboxed({}, limits=limits, _entry=f"{THIS}:{name}", **kwargs)


def assert_caller_lives_on() -> None:
    assert run_user_code("answer = 6 * 7")["globals"]["answer"] == 42


# --------------------------------------------------------------------------------------
# Restricted compilation and globals (in process)


def names_used(code: CodeType) -> set[str]:
    """Return the global and attribute names `code` and the functions it defines use."""
    names = set(code.co_names)
    for constant in code.co_consts:
        if isinstance(constant, CodeType):
            names |= names_used(constant)
    return names


def execute(source: str, **variables: object) -> dict[str, Any]:
    return execute_user_code(source, variables=variables)


def test_it_runs_an_ordinary_model_with_allowed_imports_classes_and_containers() -> None:
    source = """\
import math
from statistics import mean
from functools import reduce
import itertools


class Block:
    def __init__(self, size):
        self.size = size


block = Block(4)
block.size = block.size * 2
sizes = {}
sizes["block"] = block.size
total = reduce(lambda a, b: a + b, [1, 2, 3]) + mean([1, 3]) + math.sqrt(16)
pairs = len(list(itertools.combinations(range(4), 2)))
count = 0
for a, b in [(1, 2), (3, 4)]:
    count += a * b
"""
    result = execute(source, n=3)

    assert result["globals"] == {"n": 3, "total": 12.0, "pairs": 6, "count": 14, "a": 3, "b": 4}


@pytest.mark.parametrize(
    ("source", "line", "detail"),
    [
        (
            "x = 1\nimport os\n",
            2,
            "import of 'os' is not allowed (allowed: functools, itertools, math, statistics)",
        ),
        (
            "from subprocess import run",
            1,
            "import of 'subprocess' is not allowed (allowed: "
            "functools, itertools, math, statistics)",
        ),
        (
            "import os.path",
            1,
            "import of 'os.path' is not allowed (allowed: functools, itertools, math, statistics)",
        ),
        (
            "from functools import update_wrapper",
            1,
            "cannot import name 'update_wrapper' from 'functools'",
        ),
        ("open('/etc/passwd')", 1, "NameError: name 'open' is not defined"),
        ("compile('1', 'f', 'exec')", 1, "NameError: name 'compile' is not defined"),
        ("type(1)", 1, "NameError: name 'type' is not defined"),
        ("globals()", 1, "NameError: name 'globals' is not defined"),
        (
            "def f():\n    pass\n\ng = getattr(f, '__globals__')",
            4,
            'AttributeError: "__globals__" is an invalid attribute name because it starts with "_"',
        ),
        (
            "text = '{0.__class__}'.format(1)",
            1,
            "AttributeError: the format() methods of str are not allowed in application models",
        ),
        (
            "text = '{x.__class__}'.format_map({'x': 1})",
            1,
            "AttributeError: the format() methods of str are not allowed in application models",
        ),
        (
            "f = getattr(str, 'format')",
            1,
            "AttributeError: the format() methods of str are not allowed in application models",
        ),
        (
            "g = (i for i in [1])\nframe = getattr(g, 'gi_frame')",
            2,
            'AttributeError: "gi_frame" is a restricted name, forbidden in application models',
        ),
        (
            "import math\nmath.pi = 3",
            2,
            "TypeError: cannot modify attributes or items of a module object",
        ),
        (
            "setattr(len, 'x', 1)",
            1,
            "TypeError: cannot modify attributes or items of a builtin_function_or_method object",
        ),
        ("raise SystemExit(3)", 1, "SystemExit: 3"),
        ("a = 1\nb = 2\nc = 0\nd = a + b\ne = d / c\n", 5, "ZeroDivisionError: division by zero"),
        (
            "def f(n):\n    return f(n + 1)\n\nf(0)",
            2,
            "RecursionError: maximum recursion depth exceeded",
        ),
    ],
)
def test_it_reports_forbidden_operations_and_runtime_errors_at_the_users_line(
    source: str, line: int, detail: str
) -> None:
    with pytest.raises(UserCodeError) as caught:
        execute(source)

    assert caught.value.line == line
    assert caught.value.detail == detail
    assert str(caught.value) == f"application model, line {line}: {detail}"


@pytest.mark.parametrize(
    ("source", "line", "detail"),
    [
        ("x = 1\ny = (\n", 2, "SyntaxError: '(' was never closed"),
        (
            "__import__('os')",
            1,
            '"__import__" is an invalid variable name because it starts with "_"',
        ),
        (
            "x = ().__class__.__bases__[0].__subclasses__()",
            1,
            '"__subclasses__" is an invalid attribute name because it starts with "_".',
        ),
        ("eval('1 + 1')", 1, "Eval calls are not allowed."),
        ("x = 1\nexec('import os')", 2, "Exec calls are not allowed."),
        (
            "x = f'{len.__self__}'",
            1,
            '"__self__" is an invalid attribute name because it starts with "_".',
        ),
        (
            "g = (i for i in [1])\nf = g.gi_frame.f_back",
            2,
            '"f_back" is a restricted name, that is forbidden to access in RestrictedPython.',
        ),
        ("from math import *", 1, '"*" imports are not allowed.'),
        ("x = 1\0\n", None, "SyntaxError: source code string cannot contain null bytes"),
    ],
)
def test_it_rejects_syntax_errors_and_restricted_constructs_when_compiling(
    source: str, line: int, detail: str
) -> None:
    with pytest.raises(UserCodeError) as caught:
        compile_user_code(source, "<app>")

    assert (caught.value.line, caught.value.detail) == (line, detail)


def test_every_restricted_construct_of_a_source_is_reported_at_once() -> None:
    errors = compile_errors("_a = 1\nb = 2\nc = _a\nd = b.__class__\n")
    assert [error.line for error in errors] == [1, 3, 4]
    assert '"_a"' in errors[0].detail
    assert compile_errors("n = 1\nif n\n    n = 2\n_x = 1\n")[0].line == 2  # syntax: alone
    assert compile_errors("n = 1\n") == []


class TrustedCounter:
    """A class of the simulator's own that opts in to writes from user code."""

    _guarded_writes = True

    def __init__(self) -> None:
        self.value = 0


def test_it_lets_the_model_write_to_objects_of_classes_that_opt_in() -> None:
    counter = TrustedCounter()

    execute("counter.value = 5", counter=counter)

    assert counter.value == 5


def test_imported_modules_cannot_be_changed_for_later_runs() -> None:
    with pytest.raises(UserCodeError):
        execute("import math\nsetattr(math, 'sqrt', abs)")

    assert execute("import math\nroot = math.sqrt(16)")["globals"]["root"] == 4.0


def test_it_keeps_only_a_bounded_prefix_of_printed_output() -> None:
    table = user_globals({})
    code = compile_user_code("for i in range(2000):\n    print('x' * 1000)\n")

    exec(code, table)

    output = printed_output(table)
    assert output.startswith("x" * 1000 + "\n")
    assert output.endswith(f"[... {2000 * 1001 - PRINT_LIMIT_CHARS} characters dropped]")


def test_it_shortens_a_huge_exception_message() -> None:
    with pytest.raises(UserCodeError) as caught:
        execute("raise ValueError('x' * 10**6)")

    detail = caught.value.detail
    assert len(detail) <= MESSAGE_LIMIT_CHARS
    assert detail.startswith("ValueError: xxx")
    assert detail.endswith("more characters]")


@pytest.mark.parametrize(
    ("source", "guarded"),
    [
        ("sim.computation({})", False),
        ("t = sim.now()\nsim.barrier()", False),
        ("sim = other\nsim.computation({})", True),
        ("def f(sim):\n    return sim.now()\n", True),
        ("def f():\n    global sim\n    sim = 1\nsim.now()", True),
        ("[sim for sim in x]\nsim.now()", True),
        ("import sim\nsim.now()", True),
        ("sim.random.random()", True),  # `.random` of sim.random is an ordinary object's
        ("other.computation({})", True),
    ],
)
def test_only_the_runners_own_sim_skips_the_attribute_guard(source: str, guarded: bool) -> None:
    code = compile_user_code(source, trusted_sim=True)

    assert ("_getattr_" in names_used(code)) is guarded
    assert "_getattr_" in names_used(compile_user_code(source))  # without the runner's sim


@pytest.mark.parametrize(
    ("source", "guarded"),
    [
        ("y = x * 2", False),
        ("y = 0.001 * (x + 1)", False),
        ("y = -3 * x", False),
        ("y = x * z", True),
        ("y = x * 2**70", True),  # not a constant: a power, itself guarded
        ("y = x * 123456789012345678901234567890", True),  # over 64 bits
        ("y = x * True", True),
    ],
)
def test_products_with_a_small_numeric_constant_skip_the_integer_guard(
    source: str, guarded: bool
) -> None:
    assert ("_mul_" in names_used(compile_user_code(source))) is guarded


def test_a_rebound_sim_is_guarded_like_any_object() -> None:
    with pytest.raises(UserCodeError) as caught:
        execute("sim = 'x {0.__class__}'\ny = sim.format(1)")

    assert caught.value.line == 2


def test_it_refuses_extra_globals_that_would_shadow_the_guards() -> None:
    with pytest.raises(ValueError, match="reserved"):
        user_globals({"_getattr_": getattr})


# --------------------------------------------------------------------------------------
# The child process


def test_it_returns_the_result_of_restricted_code_run_in_the_child() -> None:
    result = run_user_code("x = n * 2\nprint('done')", n=21)

    assert result == {"status": "ok", "printed": "done\n", "globals": {"n": 21, "x": 42}}


@pytest.mark.parametrize(
    ("source", "detail"),
    [
        (
            "import os",
            "import of 'os' is not allowed (allowed: functools, itertools, math, statistics)",
        ),
        ("open('/etc/passwd').read()", "NameError: name 'open' is not defined"),
        (
            "().__class__.__bases__[0].__subclasses__()",
            '"__subclasses__" is an invalid attribute name because it starts with "_".',
        ),
    ],
)
def test_it_reports_hostile_code_from_the_child_and_the_caller_lives_on(
    source: str, detail: str
) -> None:
    with pytest.raises(UserCodeError) as caught:
        run_user_code(source)

    assert caught.value.detail == detail
    assert caught.value.line == 1
    assert_caller_lives_on()


def test_it_stops_an_infinite_loop_at_the_cpu_limit() -> None:
    started = time.monotonic()
    with pytest.raises(SandboxLimitError) as caught:
        run_user_code("x = 0\nwhile True: x = x + 1\n", Limits(wall_s=10, cpu_s=1))

    assert caught.value.limit == "cpu"
    # The child's stack dump at SIGXCPU names the line the loop was on (one line: the dump
    # may catch a loop's test or its body).
    assert (
        str(caught.value)
        == "the run exceeded the CPU-time limit of 1 s (application model, line 2)"
    )
    assert time.monotonic() - started < SMALL.wall_s
    assert_caller_lives_on()


def test_it_stops_a_run_at_the_wall_clock_limit() -> None:
    with pytest.raises(SandboxLimitError) as caught:
        run_entry("entry_sleep", Limits(wall_s=1, cpu_s=2))

    assert caught.value.limit == "wall"
    assert str(caught.value) == "the run exceeded the wall-clock limit of 1 s"
    assert_caller_lives_on()


@pytest.mark.parametrize(
    ("source", "line"),
    [
        ("x = 'x' * 10**10", 1),
        ("hoard = []\nwhile True:\n    hoard.append('x' * 10**6)\n", 3),
    ],
)
def test_it_stops_a_memory_bomb_at_the_data_limit(source: str, line: int) -> None:
    with pytest.raises(SandboxLimitError) as caught:
        run_user_code(source, Limits(wall_s=10, cpu_s=5, data_bytes=256 * 1024**2))

    assert caught.value.limit == "memory"
    assert str(caught.value) == f"the run ran out of memory (application model, line {line})"
    assert_caller_lives_on()


def test_it_drops_gigabytes_of_printed_output_of_the_model() -> None:
    source = "chunk = 'x' * 10**4\nfor i in range(2 * 10**5):\n    print(chunk)\n"  # 2 GB

    result = run_user_code(source, Limits(wall_s=20, cpu_s=10))

    assert len(result["printed"]) < PRINT_LIMIT_CHARS + 100
    assert result["printed"].endswith("characters dropped]")


def test_it_stops_a_child_that_floods_its_stdout() -> None:
    with pytest.raises(SandboxLimitError) as caught:
        run_entry("entry_flood_stdout")

    assert caught.value.limit == "output"
    assert str(caught.value) == "the run wrote more than 65.536 KB to stdout/stderr"
    assert_caller_lives_on()


def test_it_refuses_a_result_over_the_size_cap() -> None:
    with pytest.raises(SandboxLimitError) as caught:
        run_entry("entry_huge_result")

    assert caught.value.limit == "result"
    assert str(caught.value) == "the result exceeds the size limit of 1.04858 MB"
    assert_caller_lives_on()


def test_it_reassembles_a_result_of_many_chunks_whole() -> None:
    limits = SMALL.replace(cpu_s=30, wall_s=60, result_bytes=64 * 1024**2, data_bytes=2 * 1024**3)

    result = run_entry("entry_large_result", limits=limits)

    rows = result["timeline"]
    assert len(rows) == 400_000
    assert rows[0] == {"process": "P[0]", "start_s": 0.0, "end_s": 0.25}
    assert rows[-1] == {"process": "P[399999]", "start_s": 199999.5, "end_s": 199999.75}


def test_it_stops_a_file_over_the_size_limit() -> None:
    with pytest.raises(SandboxLimitError) as caught:
        run_entry("entry_big_file")

    assert caught.value.limit == "file size"
    assert str(caught.value) == "the run exceeded the file-size limit"


def test_it_runs_the_child_with_an_empty_environment_limits_and_a_fresh_directory() -> None:
    identity = run_entry("entry_identity")

    # Only the numerical libraries' thread counts (and LC_CTYPE, set by locale coercion).
    assert set(identity["environment"]) <= {"LC_CTYPE", *SINGLE_THREADED}
    assert Path(identity["cwd"]).name.startswith("parasim-run-")
    assert not Path(identity["cwd"]).exists()  # removed afterwards
    assert identity["cpu"] == [2, 3]
    assert identity["data"] == [SMALL.data_bytes] * 2
    assert identity["fsize"] == [SMALL.fsize_bytes] * 2
    assert identity["core"] == [0, 0]
    assert len(identity["cpus"]) == 1  # the run and V8 share one CPU (keep_on_one_cpu)


def test_the_operator_can_let_the_child_use_every_cpu(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PARASIM_KEEP_ON_ONE_CPU", "0")
    identity = run_entry("entry_identity")
    assert identity["cpus"] == sorted(os.sched_getaffinity(0))


def test_string_hashes_in_the_child_are_the_same_on_every_run() -> None:
    # Randomised str hashes would make `for name in {"a", "b"}` visit names in a different
    # order from run to run, and so change the simulated result of identical runs.
    names = "{'alpha', 'beta', 'gamma', 'delta'}"
    source = f"h = hash('parasim')\norder = ','.join({names})"
    expected = subprocess.run(
        [sys.executable, "-c", f"print(hash('parasim')); print(','.join({names}))"],
        env={"PYTHONHASHSEED": "0"},
        capture_output=True,
        text=True,
        check=True,
    ).stdout.split()

    runs = [run_user_code(source)["globals"] for _ in range(2)]

    assert [[str(run["h"]), run["order"]] for run in runs] == [expected, expected]


@pytest.mark.skipif(not IS_ROOT, reason="privileges are dropped only when started as root")
def test_it_drops_root_privileges_to_a_user_of_its_own() -> None:
    identity = run_entry("entry_identity")

    assert identity["uid"] != 0 and identity["gid"] != 0
    assert identity["groups"] == []
    assert identity["nproc"] == [SMALL.nproc] * 2
    assert not identity["can_read_root_home"]


@pytest.mark.skipif(not IS_ROOT, reason="RLIMIT_NPROC does not bind root; applied as root only")
def test_it_stops_a_fork_bomb_at_the_process_limit_and_kills_what_it_forked() -> None:
    outcome = run_entry("entry_fork_bomb")

    assert outcome["error"] == "Resource temporarily unavailable"
    assert outcome["forks"] < SMALL.nproc
    deadline = time.monotonic() + 5
    while _live_processes_of(outcome["uid"]) and time.monotonic() < deadline:
        time.sleep(0.05)  # SIGKILLed processes take a moment to go
    assert _live_processes_of(outcome["uid"]) == []


def _live_processes_of(uid: int) -> list[str]:
    """Return the ids of the processes running as `uid` that are not zombies."""
    found = []
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            status = Path(f"/proc/{pid}/status").read_text()
        except OSError:
            continue
        fields = dict(line.split(":", 1) for line in status.splitlines() if ":" in line)
        if int(fields["Uid"].split()[0]) == uid and not fields["State"].strip().startswith("Z"):
            found.append(pid)
    return found


@pytest.mark.skipif(not IS_ROOT, reason="waits for the child's privilege drop as a signal")
def test_the_child_dies_with_a_killed_parent() -> None:
    script = (
        "from simulator.sandbox import Limits, run_sandboxed\n"
        f"run_sandboxed({{}}, limits=Limits(wall_s=60), _entry='{THIS}:entry_sleep')\n"
    )
    parent = subprocess.Popen([sys.executable, "-c", script], cwd=ROOT)
    workdir = None
    try:
        child = _wait_for(lambda: _unprivileged_child_of(parent.pid))
        workdir = os.readlink(f"/proc/{child}/cwd")  # the killed parent cannot remove it
        time.sleep(0.3)  # the death signal is requested right after the privilege drop
    finally:
        parent.kill()
        parent.wait()

    try:
        assert _wait_for(lambda: not _is_alive(child))
    finally:
        if workdir and Path(workdir).name.startswith("parasim-run-"):
            shutil.rmtree(workdir, ignore_errors=True)


def _wait_for(condition: Any, timeout_s: float = 10.0) -> Any:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        value = condition()
        if value:
            return value
        time.sleep(0.05)
    raise AssertionError("timed out")


def _status_fields(pid: int | str) -> dict[str, str]:
    try:
        status = Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return {}
    return {
        key: value.strip()
        for key, value in (line.split(":", 1) for line in status.splitlines() if ":" in line)
    }


def _unprivileged_child_of(parent: int) -> int | None:
    for pid in filter(str.isdigit, os.listdir("/proc")):
        fields = _status_fields(pid)
        if fields.get("PPid") == str(parent) and fields.get("Uid", "0").split()[0] != "0":
            return int(pid)
    return None


def _is_alive(pid: int) -> bool:
    state = _status_fields(pid).get("State", "Z")
    return not state.startswith("Z")


def test_it_forwards_progress_from_the_child() -> None:
    seen: list[float] = []

    assert run_entry("entry_progress", progress=seen.append) == {"status": "ok"}
    assert seen == [0.25, 0.5, 1.0]


def test_it_re_raises_the_runners_errors_with_their_fields() -> None:
    with pytest.raises(LaunchError) as caught:
        run_entry("entry_launch_error")

    assert caught.value.field == "labels.GPU"
    assert str(caught.value) == "labels.GPU: asks for 3 processes, capacity 1"


def test_it_reports_a_crashed_child() -> None:
    with pytest.raises(SimulationError) as caught:
        run_entry("entry_segfault")

    assert str(caught.value).startswith(
        "the simulation process ended without a result (killed by SIGSEGV)"
    )
    assert_caller_lives_on()


def test_it_refuses_a_payload_that_is_not_json() -> None:
    with pytest.raises(SimulationError, match="not JSON-serialisable"):
        run_sandboxed({"app_source": object()})


def test_it_evaluates_javascript_models_inside_the_limited_child() -> None:
    # V8 needs a data limit above about 512 MB to start (the default is 2 GB).
    limits = Limits(wall_s=10, cpu_s=5, data_bytes=1024**3)

    assert run_entry("entry_javascript", limits) == {"time": 2.0}


def test_it_runs_the_merpsys_example_through_the_runner_in_the_child() -> None:
    payload = {
        "snapshot": json.loads((EXAMPLE / "snapshot.json").read_text()),
        "app_source": (EXAMPLE / "app.py").read_text(),
        "labels": {"CPU": 1, "GPU": 1},
        "variables": {"N": 10**7, "blockSz": 256, "computeIntensity": 1, "occupancy": 64},
    }
    seen: list[tuple[float, float | None]] = []

    def progress(fraction: float, simulated_s: float | None = None) -> None:
        seen.append((fraction, simulated_s))

    result = run_sandboxed(payload, limits=Limits(wall_s=60, cpu_s=30), progress=progress)

    assert result["status"] == "finished"
    assert result["overall_time_s"] > 0
    # the simulated time reached comes with the progress, across the result pipe
    assert seen[-1] == (1.0, result["overall_time_s"])


def test_it_reports_a_runtime_error_in_the_model_through_the_runner_at_its_line() -> None:
    payload = {
        "snapshot": json.loads((EXAMPLE / "snapshot.json").read_text()),
        "app_source": "x = 1\ny = 2\nz = 0\nw = x + y\nv = w / z\n",
        "labels": {"CPU": 1, "GPU": 1},
        "variables": {},
    }

    with pytest.raises(UserCodeError) as caught:
        run_sandboxed(payload, limits=Limits(wall_s=60, cpu_s=30))

    assert caught.value.line == 5
    assert caught.value.detail == "ZeroDivisionError: division by zero"


# --------------------------------------------------------------------------------------
# The data limit counts memory used, not address space reserved


def test_the_reservation_of_a_run_is_v8s_and_its_processes() -> None:
    snapshot = json.loads((EXAMPLE / "snapshot.json").read_text())
    pairs = {(n["model"], n["hardware"]) for n in snapshot["nodes"] if n.get("model")}

    reserved = address_space_reserved({"snapshot": snapshot, "labels": {"CPU": 3, "GPU": 5}})

    assert reserved == (
        V8_CODE_RANGE_BYTES
        + V8_CONTEXT_BYTES * len(pairs)
        + 8 * PROCESS_RESERVED_BYTES
        + ARENA_REGION_BYTES
    )
    assert (
        address_space_reserved({"labels": {"CPU": 2}})
        == 2 * PROCESS_RESERVED_BYTES + ARENA_REGION_BYTES
    )
    greenlets = "compute = lambda: sim.computation({'t': 1})\ncompute()\n"
    assert (
        address_space_reserved({"labels": {"CPU": 2}, "app_source": greenlets})
        == 2 * PROCESS_RESERVED_BYTES + ARENA_REGION_BYTES
    )


@pytest.mark.skipif(not STACKLESS_CORE, reason="stackless processes need the C core")
def test_stackless_processes_reserve_nothing_beyond_what_they_use() -> None:
    payload = {"labels": {"CPU": 2}, "app_source": "sim.computation({'t': 1})\n"}
    assert address_space_reserved(payload) == ARENA_REGION_BYTES  # the hook's, not theirs


PARAMS_T = "function computationTime(params) { return params.t; }"


def many_processes(processes: int, app_source: str, model: str = PARAMS_T) -> dict[str, Any]:
    """Return the payload of a run of `processes` processes on one host running `app_source`
    (its model's computationTime is params.t: compiled to Python, js_compiler)."""
    snapshot = {
        "name": "many processes",
        "hardware": {"cpu": {"type": "CPU", "name": "CPU", "attributes": {}}},
        "models": {
            "m": {
                "language": "javascript",
                "source": model,
            }
        },
        "nodes": [
            {"id": "n", "hardware": "cpu", "model": "m", "count": 1, "labels": {"P": processes}}
        ],
        "edges": [],
    }
    return {
        "snapshot": snapshot,
        "app_source": app_source,
        "labels": {"P": processes},
        "variables": {},
        "timeline_limit": 0,
    }


def test_many_processes_run_within_a_data_limit_below_what_they_reserve() -> None:
    processes = 20_000
    # a call in a lambda keeps the processes on greenlets, each with its chunk
    payload = many_processes(
        processes, "compute = lambda t: sim.computation({'t': t})\ncompute(0.5)\ncompute(0.25)\n"
    )
    limit = 400 * 1024**2  # below V8's code range and 20,000 frame-stack chunks, reserved
    assert address_space_reserved(payload) > limit

    result = run_sandboxed(payload, limits=Limits(wall_s=120, cpu_s=60, data_bytes=limit))

    assert result["status"] == "finished"
    assert result["stats"]["processes"] == processes
    assert result["overall_time_s"] == 0.75


# --------------------------------------------------------------------------------------
# The result pipe's messages


@pytest.mark.parametrize(
    "message",
    [
        {"result": {"status": "finished", "overall_time_s": 0.1, "timeline": [{"a": -0.0}]}},
        {"progress": 0.25},
        {"result": {"big": 2**70, "small": 1e-320, "text": "é\u2028"}},  # 2**70: via json
        {"result": {1: "a key that is not a string"}},  # via json, which makes it "1"
        # long enough for the parent to decode it with orjson (simulator.sandbox.wire)
        {"result": {"timeline": [{"t": i / 7, "who": f"P[{i}]", "x": -0.0} for i in range(4000)]}},
    ],
)
def test_a_message_reads_back_as_json_writes_it(message: dict[str, Any]) -> None:
    line = encode_message(message)

    assert line.endswith(b"\n") and b"\n" not in line[:-1]
    assert decode_message(line) == json.loads(json.dumps(message))


@pytest.mark.parametrize(
    "result",
    [
        {},
        {"empty": [], "status": "finished"},
        {"timeline": [{"t": i / 7, "who": f"P[{i}]"} for i in range(RESULT_PIECE_ITEMS)]},
        {"timeline": [i / 7 for i in range(RESULT_PIECE_ITEMS + 1)], "after": [[]] * 5},
        {"a": [-0.0] * (2 * RESULT_PIECE_ITEMS + 3), "b": [1e-05] * (RESULT_PIECE_ITEMS + 1)},
    ],
)
def test_a_result_in_pieces_is_the_bytes_of_the_whole_message(result: dict[str, Any]) -> None:
    assert b"".join(result_message_pieces(result)) == encode_message({"result": result})


def test_a_result_piece_that_orjson_refuses_goes_through_json_alone() -> None:
    result = {"rows": [0.1] * (RESULT_PIECE_ITEMS + 1), "big": 2**70, "nan": float("nan")}

    line = b"".join(result_message_pieces(result))

    assert line.endswith(b"}\n") and b"\n" not in line[:-1]
    assert b"[0.1,0.1" in line  # orjson's part, unchanged
    assert decode_message(line)["result"] == {**result, "nan": None}  # orjson writes NaN as null


@pytest.mark.parametrize("padding", [0, 100_000])
def test_a_message_json_wrote_with_nan_still_reads(padding: int) -> None:
    line = (json.dumps({"result": {"x": float("nan"), "pad": "p" * padding}}) + "\n").encode()

    assert math.isnan(decode_message(line)["result"]["x"])


def test_limits_are_values_replaced_by_name_and_never_changed_in_place() -> None:
    limits = Limits(wall_s=5, cpu_s=10)
    assert limits.replace(cpu_s=20) == Limits(wall_s=5, cpu_s=20) != limits
    assert limits.as_dict()["data_bytes"] == Limits().data_bytes == 2 * 1024**3
    assert list(limits.as_dict()) == [
        "wall_s",
        "cpu_s",
        "data_bytes",
        "fsize_bytes",
        "nproc",
        "output_bytes",
        "result_bytes",
    ]
    with pytest.raises(AttributeError):
        limits.cpu_s = 1  # type: ignore[misc]
    with pytest.raises(AttributeError):
        del limits.cpu_s
    assert limits.cpu_s == 10
    assert repr(limits).startswith("Limits(wall_s=5, cpu_s=10, data_bytes=")
    assert hash(limits) == hash(Limits(wall_s=5, cpu_s=10))
    assert pickle.loads(pickle.dumps(limits)) == copy.deepcopy(limits) == limits
    with pytest.raises(TypeError):
        Limits(5)  # type: ignore[misc]


def test_processes_that_outgrow_the_data_limit_are_reported_as_out_of_memory() -> None:
    """However deep in the run memory runs out (a stackless process's frame, the engine's
    queue, the result), the child lets the run go and says so: not a crash without a word."""
    # a model V8 evaluates (an arrow function is outside the compiled subset), so that V8's reservation, added to the limit, is V8's: a run whose
    # models are answered in Python never loads V8 and has that room too
    in_v8 = "function computationTime(params) { const t = () => params.t; return t(); }"
    app = "sim.computation({'t': 0.5})\nsim.computation({'t': 0.25})\n"
    # enough processes that the limit is met with room to spare (200,000 fitted once a
    # process's result row shared its name with its state)
    payload = many_processes(300_000, app, in_v8)
    limits = Limits(wall_s=120, cpu_s=60, data_bytes=300 * 1024**2)
    for _ in range(3):  # where the limit is met varies from run to run
        with pytest.raises(SandboxLimitError) as caught:
            run_sandboxed(payload, limits=limits)
        assert caught.value.limit == "memory"
        assert str(caught.value).startswith("the run ran out of memory")
    assert_caller_lives_on()


def test_the_report_reserve_holds_the_data_limit_without_touching_its_pages() -> None:
    code = (
        "import resource\n"
        "from simulator.sandbox import child\n"
        "limit = 400 * 1024**2\n"
        "resource.setrlimit(resource.RLIMIT_DATA, (limit, limit))\n"
        "def pages(field):\n"
        "    return int(open('/proc/self/statm').read().split()[field]) * resource.getpagesize()\n"
        "spare, rss = limit - pages(5), pages(1)\n"
        "child._hold_reserve()\n"
        "touched = pages(1) - rss\n"
        "try:\n"
        "    bytearray(spare - child.REPORT_RESERVE_BYTES // 2)\n"
        "    print('not held')\n"
        "except MemoryError:\n"
        "    child._reserve.clear()\n"
        "    bytearray(spare - child.REPORT_RESERVE_BYTES // 2)\n"
        "    print('held', touched < 1024**2)\n"
    )
    done = run_code(code)
    assert done.stdout.strip() == "held True", done.stderr


class _Shouty(str):
    """A str subclass: its format methods are refused as str's are."""


def _a_frame() -> object:
    return sys._getframe()


def _outcome(guard: Any, *args: object, **kwargs: object) -> tuple[str, object]:
    try:
        return "value", guard(*args, **kwargs)
    except Exception as error:  # the kind and message of a refusal are what is compared
        return type(error).__name__, str(error)


GUARD_CALLS: list[tuple[object, ...]] = [
    ("text", "upper"),
    ("text", "format"),
    ("text", "format_map"),
    (_Shouty("x"), "format"),
    (_Shouty, "format"),
    (str, "format_map"),
    ({"a": 1}, "format"),  # not a str: no such attribute, as Python says
    ({"a": 1}, "get"),
    ({"a": 1}, "missing"),
    ({"a": 1}, "missing", 7),
    ({"a": 1}, "_private"),
    ({"a": 1}, "__class__"),
    ({"a": 1}, "_private", 7),
    ((lambda: 0), "func_globals"),
    ((lambda: 0), "gi_frame"),
    (_a_frame(), "f_back"),
    (_a_frame(), "clear"),
    (_a_frame.__code__, "co_name"),
    ({"a": 1}, ""),
    ({"a": 1}, 3),
    ({"a": 1},),
    ({"a": 1}, "get", 1, 2),
]


@pytest.mark.skipif(speedups is None, reason="the C core is not built")
@pytest.mark.parametrize(
    "call", GUARD_CALLS, ids=lambda call: f"{type(call[0]).__name__}.{call[1:]}"
)
def test_the_c_attribute_guard_answers_and_refuses_as_the_python_guard(
    call: tuple[object, ...],
) -> None:
    python_guard = restricted.guarded_getattr
    c_guard = restricted._attribute_guard()
    assert c_guard is speedups.guarded_getattr
    expected = _outcome(python_guard, *call)
    got = _outcome(c_guard, *call)
    if expected[0] == "value" and callable(expected[1]):  # a bound method: made anew each read
        assert got[0] == "value" and got[1] == expected[1]
    else:
        assert got == expected


class _Int(int):
    """An int whose methods the C guard must not skip (the Python guard asks it)."""

    def bit_length(self) -> int:
        return restricted.MAX_INT_BITS


_HALF = 1 << (restricted.MAX_INT_BITS // 2 - 1)  # MAX_INT_BITS // 2 bits
MUL_CALLS: list[tuple[object, ...]] = [
    (3, 4),
    (-3, 4),
    (0, _HALF * _HALF),
    (_HALF, _HALF),  # exactly MAX_INT_BITS bits: allowed
    (_HALF, 2 * _HALF),  # one more: refused
    (-(2 * _HALF), _HALF),
    (2.5, 4),
    (4, 2.5),
    (2.5, 1e308),
    (float("nan"), 3),
    (2.5, _HALF * _HALF * 4),  # a float and a huge int: OverflowError, as Python says
    (True, 5),
    (True, _HALF * _HALF * 2),
    (_Int(3), 4),
    (3, _Int(4)),
    ("ab", 3),
    (3, "ab"),
    ([1], 2),
    ((1, 2), 0),
    (None, 2),
    (2,),
    (2, 3, 4),
]


@pytest.mark.skipif(speedups is None, reason="the C core is not built")
@pytest.mark.parametrize(
    "call", MUL_CALLS, ids=lambda call: "x".join(type(a).__name__ for a in call)
)
def test_the_c_multiply_guard_answers_and_refuses_as_the_python_guard(
    call: tuple[object, ...],
) -> None:
    c_guard = restricted._multiply_guard()
    assert c_guard is speedups.guarded_mul
    expected = _outcome(restricted.guarded_mul, *call)
    got = _outcome(c_guard, *call)
    if expected[0] == "value" and type(expected[1]) is float and expected[1] != expected[1]:
        assert got[0] == "value" and got[1] != got[1]  # NaN
    else:
        assert got == expected
        assert type(got[1]) is type(expected[1])


@pytest.mark.skipif(speedups is None, reason="the C core is not built")
def test_the_c_attribute_guard_takes_the_default_by_keyword_as_the_python_guard() -> None:
    c_guard = restricted._attribute_guard()
    assert c_guard({"a": 1}, "missing", default=5) == 5
    with pytest.raises(AttributeError, match='starts with "_"'):
        c_guard({"a": 1}, "_x", default=5)
