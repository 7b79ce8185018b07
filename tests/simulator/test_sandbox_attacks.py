"""A corpus of runaway and hostile application models, each run in the sandboxed child.

Every attack must end within a few seconds with the exact error class and a message that
says what happened and what the user can do, and the caller must live on. Attacks already
in tests/simulator/test_sandbox.py stay there (docs/sandbox.md, "Application models:
containment", lists both): hostile imports and attributes, the CPU-time limit, memory
bombs ("x" * 10**10, a growing list), flooding output, huge results, big files, fork bombs
and a crashing child.
"""

from __future__ import annotations

import os
import resource
import signal
import sys
import time
from typing import Any

import pytest

from simulator.errors import (
    SandboxCrashError,
    SandboxLimitError,
    UserCodeError,
    error_from_dict,
)
from simulator.sandbox import MAX_INT_BITS, Limits, child_entry, crash_line, run_sandboxed

THIS = "tests.simulator.test_sandbox_attacks"
USER_CODE = "simulator.sandbox.restricted:execute_user_code"
LIMITS = Limits(wall_s=20, cpu_s=10, data_bytes=1024**3)
# Prompt: well before the 20 s wall limit. Building 4 million nested iterators takes most of
# the 10 s of CPU on an idle core, and a CI machine shares its two cores between two workers.
FEW_SECONDS = 15.0

STACK_EXHAUSTED = "RecursionError: the interpreter's C stack was exhausted"
BIG_INT = f"the integer result would exceed {MAX_INT_BITS:,} bits"


def run_user_code(source: str, limits: Limits = LIMITS) -> dict[str, Any]:
    return run_sandboxed({"app_source": source}, limits=limits, _entry=USER_CODE)


def run_entry(name: str, limits: Limits = LIMITS) -> dict[str, Any]:
    return run_sandboxed({}, limits=limits, _entry=f"{THIS}:{name}")


def nested(kind: str, depth: int, use: str) -> str:
    """Return a model that nests `kind` ("(t,)", "[t]", "{1: t}") `depth` deep, then `use`s it."""
    return f"t = ()\nfor _ in range({depth}):\n    t = {kind}\nu = {use}\n"


# --------------------------------------------------------------------------------------
# Nesting and recursion: a RecursionError at the user's line, never a bare signal


@pytest.mark.parametrize(
    ("source", "line", "detail"),
    [
        # CPython checks the recursion depth on these paths: a Python RecursionError.
        (nested("[t]", 10**6, "repr(t)"), 4, "RecursionError: maximum recursion depth exceeded"),
        (nested("[t]", 10**6, "str(t)"), 4, "RecursionError: maximum recursion depth exceeded"),
        (nested("{1: t}", 10**6, "str(t)"), 4, "RecursionError: maximum recursion depth"),
        (nested("[t]", 10**6, "t == [t]"), 4, "RecursionError: maximum recursion depth exceeded"),
        (nested("(t,)", 10**6, "t < (t,)"), 4, "RecursionError: maximum recursion depth exceeded"),
        (nested("(t,)", 10**6, "isinstance(1, t)"), 4, "RecursionError: maximum recursion depth"),
        ("def f(n):\n    return f(n + 1)\n\nf(0)\n", 2, "RecursionError: maximum recursion"),
        # Recursion through C calls: each level costs C stack, bounded by the limit.
        (
            "def f(k):\n    return sorted([k], key=lambda x: f(x))\n\nf(0)\n",
            2,
            "RecursionError: maximum recursion depth exceeded",
        ),
        (
            "def f(k):\n    return list(map(f, [k + 1]))\n\nf(0)\n",
            2,
            "RecursionError: maximum recursion depth exceeded",
        ),
        # CPython 3.11 does not check these paths: the C stack overflows (SIGSEGV) and the
        # child's faulthandler dump names the line.
        (nested("(t,)", 4 * 10**6, "hash(t)"), 4, STACK_EXHAUSTED),
        (nested("(t,)", 4 * 10**6, "{t}"), 4, STACK_EXHAUSTED),
        (nested("(t,)", 4 * 10**6, "{t: 1}"), 4, STACK_EXHAUSTED),
        ("t = iter([1])\nfor _ in range(4 * 10**6):\n    t = map(abs, t)\nu = next(t)\n", 4, ""),
        (
            "import itertools\nt = iter([1])\nfor _ in range(4 * 10**6):\n"
            "    t = itertools.chain(t)\nu = next(t)\n",
            5,
            "",
        ),
    ],
)
def test_deep_nesting_and_recursion_end_in_a_recursion_error_at_the_users_line(
    source: str, line: int, detail: str
) -> None:
    started = time.monotonic()
    with pytest.raises(UserCodeError) as caught:
        run_user_code(source)

    assert time.monotonic() - started < FEW_SECONDS
    assert caught.value.line == line
    assert caught.value.detail.startswith(detail or STACK_EXHAUSTED)
    if caught.value.detail.startswith(STACK_EXHAUSTED):
        assert caught.value.detail.endswith("flatten it")


@child_entry
def entry_stack(**_: object) -> dict[str, Any]:
    return {
        "recursion_limit": sys.getrecursionlimit(),
        "stack": resource.getrlimit(resource.RLIMIT_STACK)[0],
    }


def test_the_child_gets_a_stack_large_enough_for_its_recursion_limit() -> None:
    hard = resource.getrlimit(resource.RLIMIT_STACK)[1]
    expected = 64 * 1024**2 if hard == resource.RLIM_INFINITY else min(64 * 1024**2, hard)

    limits = run_entry("entry_stack")

    assert limits["stack"] >= expected
    assert limits["recursion_limit"] == min(1000, limits["stack"] // (8 * 1024))


# --------------------------------------------------------------------------------------
# Huge integers: refused before they are computed


@pytest.mark.parametrize(
    ("source", "line", "operator"),
    [
        ("x = 1\ny = 10 ** 10 ** 9\n", 2, "**"),
        ("y = 2 ** (2 ** 40)\n", 1, "**"),
        ("y = pow(7, 10**8)\n", 1, "pow()"),
        ("y = 1 << 2**40\n", 1, "<<"),
        ("y = 3\ny **= 10**9\n", 2, "**="),
        ("y = 1\ny <<= 10**9\n", 2, "<<="),
        ("y = 3\nwhile True:\n    y = y * y\n", 3, "*"),
        ("y = 3\nwhile True:\n    y *= y\n", 3, "*="),
    ],
)
def test_huge_integer_results_are_refused_at_the_users_line(
    source: str, line: int, operator: str
) -> None:
    started = time.monotonic()
    with pytest.raises(UserCodeError) as caught:
        run_user_code(source)

    assert time.monotonic() - started < FEW_SECONDS
    assert caught.value.line == line
    assert caught.value.detail.startswith(f"{operator}: {BIG_INT}")
    assert caught.value.detail.endswith("use floats for such magnitudes")


def test_ordinary_integer_and_sequence_arithmetic_is_unchanged() -> None:
    source = (
        "a = 2 ** 100 % 1000\nb = 3 * 4\nc = 1 << 10\nd = pow(2, 10**9, 7)\n"
        "e = len([0] * 3)\nf = 'ab' * 2\ng = 2.0 ** 0.5\nh = 2 ** -1\nk = 5\nk **= 2\n"
        "m = [1]\nm *= 2\nn = len(m)\np = (-1) ** (10**12)\n"
    )

    assert run_user_code(source)["globals"] == {
        "a": 2**100 % 1000,
        "b": 12,
        "c": 1024,
        "d": pow(2, 10**9, 7),
        "e": 3,
        "f": "abab",
        "g": 2.0**0.5,
        "h": 0.5,
        "k": 25,
        "n": 2,
        "p": 1,
    }


def test_a_huge_list_repetition_ends_at_the_memory_limit() -> None:
    started = time.monotonic()
    with pytest.raises(SandboxLimitError) as caught:
        run_user_code("x = 1\ny = [0] * 10**12\n")

    assert time.monotonic() - started < FEW_SECONDS
    assert caught.value.limit == "memory"
    assert str(caught.value) == "the run ran out of memory (application model, line 2)"


# --------------------------------------------------------------------------------------
# Time limits name the line the model was on


def test_an_endless_loop_ends_at_the_wall_clock_limit_naming_the_line() -> None:
    started = time.monotonic()
    with pytest.raises(SandboxLimitError) as caught:
        # 3 s: the child's start-up (imports, V8) must be over before the loop is reached,
        # also on a loaded machine, or there is no line of the model to name
        run_user_code("x = 0\nwhile True: x = x + 1\n", Limits(wall_s=3, cpu_s=30))

    assert time.monotonic() - started < FEW_SECONDS
    assert caught.value.limit == "wall"
    assert str(caught.value) == (
        "the run exceeded the wall-clock limit of 3 s (application model, line 2)"
    )


def test_a_long_computation_in_c_ends_at_the_cpu_limit_naming_the_line() -> None:
    # Under the integer limit but slow: sorting a huge range, the time spent inside C.
    source = "x = 1\ny = sorted(range(10**9), key=lambda v: -v)\n"
    started = time.monotonic()
    with pytest.raises(SandboxLimitError) as caught:
        run_user_code(source, Limits(wall_s=20, cpu_s=1, data_bytes=1024**3))

    assert time.monotonic() - started < FEW_SECONDS
    assert caught.value.limit in {"cpu", "memory"}
    assert "(application model, line 2)" in str(caught.value)


# --------------------------------------------------------------------------------------
# Escapes: processes, signals, files


@pytest.mark.parametrize(
    ("source", "detail"),
    [
        ("import multiprocessing", "import of 'multiprocessing' is not allowed"),
        ("import ctypes", "import of 'ctypes' is not allowed"),
        ("import signal", "import of 'signal' is not allowed"),
        ("from pathlib import Path", "import of 'pathlib' is not allowed"),
        ("import io", "import of 'io' is not allowed"),
        ("f = open('/proc/self/environ')", "NameError: name 'open' is not defined"),
        ("f = open('/proc/1/maps')", "NameError: name 'open' is not defined"),
        ("f = exec('1')", "Exec calls are not allowed."),
        ("f = eval('1')", "Eval calls are not allowed."),
        ("b = getattr(len, '__self__')", 'AttributeError: "__self__" is an invalid attribute'),
    ],
)
def test_processes_signals_and_files_are_out_of_reach(source: str, detail: str) -> None:
    with pytest.raises(UserCodeError) as caught:
        run_user_code(source)

    assert caught.value.detail.startswith(detail)
    assert caught.value.line == 1


def test_builtins_cannot_be_reached_by_name() -> None:
    with pytest.raises(UserCodeError) as caught:
        run_user_code("m = __import__('os')")

    assert caught.value.detail.startswith('"__import__" is an invalid variable name')


# --------------------------------------------------------------------------------------
# Every other end of the child: a clear error, the signal named


@child_entry
def entry_abort(**_: object) -> dict[str, Any]:
    os.abort()


@child_entry
def entry_killed(**_: object) -> dict[str, Any]:
    os.kill(os.getpid(), signal.SIGKILL)
    return {}


@child_entry
def entry_exit_silently(**_: object) -> dict[str, Any]:
    os._exit(0)


@child_entry
def entry_die_while_sending(**_: object) -> dict[str, Any]:
    result_fd = int(sys.argv[3])  # python -c BOOTSTRAP ROOT ENTRY RESULT_FD ...
    os.write(result_fd, b'{"result": {"status": "o')
    os.kill(os.getpid(), signal.SIGTERM)
    return {}


@child_entry
def entry_segfault(**_: object) -> dict[str, Any]:
    os.kill(os.getpid(), signal.SIGSEGV)
    return {}


def test_a_crash_of_the_simulator_names_the_signal_and_hides_its_stack() -> None:
    with pytest.raises(SandboxCrashError) as caught:
        run_entry("entry_segfault")

    assert caught.value.signal == "SIGSEGV"
    assert str(caught.value) == (
        "the simulation process ended without a result (killed by SIGSEGV): the application "
        "model exhausted the interpreter's C stack, e.g. with a deeply nested data structure "
        "(a tuple in a tuple in a tuple...); flatten it"
    )


def test_an_abort_is_reported_with_what_to_do() -> None:
    with pytest.raises(SandboxCrashError) as caught:
        run_entry("entry_abort")

    assert caught.value.signal == "SIGABRT"
    assert str(caught.value).startswith(
        "the simulation process ended without a result (killed by SIGABRT): the interpreter "
        "or a library it uses aborted"
    )


def test_a_sigkill_below_the_cpu_limit_is_reported_as_memory() -> None:
    with pytest.raises(SandboxLimitError) as caught:
        run_entry("entry_killed")

    assert caught.value.limit == "memory"
    assert str(caught.value).startswith(
        "the run was killed by SIGKILL, most likely by the system's out-of-memory killer"
    )


def test_an_exit_without_a_result_is_a_crash_with_its_status() -> None:
    with pytest.raises(SandboxCrashError) as caught:
        run_entry("entry_exit_silently")

    assert caught.value.signal is None
    assert caught.value.exit_status == 0
    assert str(caught.value) == (
        "the simulation process ended without a result (exit status 0): the simulator failed "
        "before it could report; please report it with the model"
    )


def test_a_truncated_result_is_reported_as_such() -> None:
    with pytest.raises(SandboxCrashError) as caught:
        run_entry("entry_die_while_sending")

    assert caught.value.signal == "SIGTERM"
    assert str(caught.value).startswith(
        "the simulation process ended without a result "
        "(killed by SIGTERM after an incomplete result (24 bytes)): the simulator crashed"
    )


def test_a_crash_error_survives_its_json_round_trip() -> None:
    error = SandboxCrashError("it crashed", signal="SIGABRT")

    copy = error_from_dict(error.to_dict())

    assert isinstance(copy, SandboxCrashError)
    assert (copy.message, copy.signal, copy.exit_status) == ("it crashed", "SIGABRT", None)
    assert copy.to_dict() == {
        "kind": "crash",
        "message": "it crashed",
        "signal": "SIGABRT",
        "exit_status": None,
    }


def test_the_users_line_is_read_from_the_innermost_frame_of_the_last_dump() -> None:
    stderr = (
        "a warning\n"
        "Fatal Python error: Segmentation fault\n\n"
        "Stack (most recent call first):\n"
        '  File "/srv/simulator/api.py", line 9 in call\n'
        '  File "<application model>", line 7 in f\n'
        '  File "<application model>", line 2 in <module>\n'
        "\nExtension modules: greenlet._greenlet (total: 1)\n"
    )

    assert crash_line(stderr) == (7, "a warning\n")
    assert crash_line("no dump\n") == (None, "no dump\n")


# --------------------------------------------------------------------------------------
# JavaScript models keep no state between calls (issue 38, item 17): each attack is called
# three times in a child, with different params so that the memo does not answer


@child_entry
def entry_js_calls(*, source: str, **_: object) -> dict[str, Any]:
    from simulator.errors import ModelEvaluationError
    from simulator.shallow import ShallowFunctions

    functions = ShallowFunctions(model_key="m", source=source, attributes={}, twin=False)
    answers: list[object] = []
    for run in (1, 2, 3):
        started = time.monotonic()
        try:
            answers.append(functions.call("computationTime", params={"run": run}))
        except ModelEvaluationError as error:
            answers.append(error.detail)
        answers.append(time.monotonic() - started)
    return {"answers": answers[0::2], "seconds": answers[1::2]}


def js_calls(source: str) -> dict[str, Any]:
    return run_sandboxed({"source": source}, limits=LIMITS, _entry=f"{THIS}:entry_js_calls")


JS_STATE_ATTACKS = {
    # the factory the source is the body of, and its prototype object
    "arguments-callee-prototype": (
        "var p = arguments.callee.prototype;\n"
        "try { p.n = (p.n || 0) + 1; } catch (e) {}\n"
        "function computationTime(params) { return p.n || 0; }"
    ),
    # the prototype every params object shares
    "params-prototype": (
        "function computationTime(params) {\n"
        "  var p = Object.getPrototypeOf(params);\n"
        "  try { p.n = (p.n || 0) + 1; } catch (e) {}\n"
        "  return p.n || 0;\n}"
    ),
    "params-prototype-get": (
        "function computationTime(params) {\n"
        "  var value = params.get('run');\n"
        "  try { Object.getPrototypeOf(params).get = function () { return 99; }; } catch (e) {}\n"
        "  return value;\n}"
    ),
}


@pytest.mark.parametrize("name", JS_STATE_ATTACKS)
def test_a_javascript_model_cannot_keep_state_in_what_the_prelude_hands_it(name: str) -> None:
    answers = js_calls(JS_STATE_ATTACKS[name])["answers"]

    # the writes have no effect: the counters stay 0, params.get reads each call's own run
    assert answers == ([1.0, 2.0, 3.0] if name == "params-prototype-get" else [0.0, 0.0, 0.0])


def test_a_global_defined_on_the_global_objects_prototype_is_refused() -> None:
    source = (
        "function computationTime(params) {\n"
        "  var before = typeof counter === 'undefined' ? 0 : counter;\n"
        "  Reflect.defineProperty(Object.getPrototypeOf(globalThis), 'counter',\n"
        "                         {value: before + 1, configurable: true});\n"
        "  return before;\n}"
    )

    refused = (
        "tried to keep state between calls (it defined global 'counter'); a model must be a "
        "pure function of its parameters"
    )

    assert js_calls(source)["answers"] == [refused] * 3


def test_a_promise_job_that_never_ends_is_a_time_out_of_the_call_that_queued_it() -> None:
    # V8 runs a call's promise jobs after the call has answered; before, this call answered
    # 1 and the job ran in the next call's time.
    source = (
        "function computationTime(params) {\n"
        "  if (params.run === 1) (async () => { for (;;) await null; })();\n"
        "  return params.run;\n}"
    )

    result = js_calls(source)

    assert result["answers"] == ["evaluation exceeded the time limit of 1 s", 2.0, 3.0]


# --------------------------------------------------------------------------------------
# A JavaScript builtin that loops in C++ ignores V8's order to stop (issue 38, item 21)


@child_entry
def entry_js_call(*, source: str, **_: object) -> dict[str, Any]:
    from simulator.errors import ModelEvaluationError
    from simulator.shallow import ShallowFunctions

    functions = ShallowFunctions(model_key="m", source=source, attributes={}, twin=False)
    try:
        return {"answer": functions.call("computationTime", params={})}
    except ModelEvaluationError as error:
        return {"answer": error.detail}


@pytest.mark.parametrize(
    "statement",
    ["new Array(1e9).fill(1.5)", "Array.from({length: 1e9})", "new Array(1e9).copyWithin(0, 1)"],
)
def test_a_builtin_that_ignores_the_time_limit_ends_the_call_promptly(statement: str) -> None:
    # Before, V8's thread went on filling until the process's memory limit (or ran for
    # minutes), and the caller waited for it.
    # The heap is watched between waits; a builtin that grows its backing store by doubling
    # can, on a loaded machine, pass the process's own data limit before the next look: that
    # limit then ends the run instead, as promptly.
    source = f"function computationTime(params) {{ {statement}; return 1; }}"
    started = time.monotonic()

    try:
        result = run_sandboxed({"source": source}, limits=LIMITS, _entry=f"{THIS}:entry_js_call")
    except SandboxLimitError as error:
        assert error.limit == "memory", error
    else:
        assert result["answer"] in (
            "evaluation exceeded the time limit of 1 s",
            "evaluation exceeded the memory limit of 128 MiB",
        )
    assert time.monotonic() - started < FEW_SECONDS


@child_entry
def entry_js_heap(*, statement: str, **_: object) -> dict[str, Any]:
    from simulator.errors import ModelEvaluationError
    from simulator.shallow import ShallowFunctions

    source = f"function computationTime(params) {{ {statement}; return 1; }}"
    functions = ShallowFunctions(
        model_key="m",
        source=source,
        attributes={},
        twin=False,
        timeout_s=30.0,
        memory_limit_bytes=32 * 1024**2,  # reached sooner than the default's 128 MiB
    )
    started = time.monotonic()
    try:
        answer: object = functions.call("computationTime", params={})
    except ModelEvaluationError as error:
        answer = error.detail
    return {"answer": answer, "seconds": time.monotonic() - started}


def test_the_heap_limit_stops_a_builtin_that_ignores_it_before_the_time_limit() -> None:
    result = run_sandboxed(
        {"statement": "new Array(1e9).fill(1.5)"},
        limits=Limits(wall_s=60, cpu_s=60, data_bytes=1024**3),
        _entry=f"{THIS}:entry_js_heap",
    )

    assert result["answer"] == "evaluation exceeded the memory limit of 32 MiB"
    assert result["seconds"] < 25  # the time limit is 30 s


# --------------------------------------------------------------------------------------
# Determinism: an object's address is not a model's to read (issue 38, item 20)

ID_REFUSED = (
    "id() is not available in application models: an object's address differs from run to "
    "run, and so would the results; compare objects with 'is', or number them yourself"
)


def test_id_is_refused_naming_the_users_line() -> None:
    with pytest.raises(UserCodeError) as caught:
        run_user_code("x = []\nk = id(x)\n")

    assert caught.value.line == 2
    assert caught.value.detail == ID_REFUSED


def test_a_model_that_reads_addresses_gives_the_same_result_twice() -> None:
    # Before, `order` followed the addresses of the lists, which differ from run to run.
    source = (
        "items = [[n] for n in range(50)]\n"
        "try:\n"
        "    order = [item[0] for item in sorted(items, key=id)]\n"
        "except Exception as error:\n"
        "    order = str(error)\n"
    )

    first, second = run_user_code(source), run_user_code(source)

    assert first["globals"] == second["globals"] == {"order": f"application model, {ID_REFUSED}"}


# --------------------------------------------------------------------------------------
# No network, and a user of its own (issue 38, item 22). Python models cannot import
# `socket` and JavaScript has no network API: these entries stand for code that escaped.


@child_entry
def entry_connect(*, port: int, **_: object) -> dict[str, Any]:
    import socket

    answers: dict[str, Any] = {"uid": os.getuid()}
    for family, host in ((socket.AF_INET, "127.0.0.1"), (socket.AF_INET6, "::1")):
        try:
            with socket.socket(family, socket.SOCK_STREAM) as connection:
                connection.settimeout(2)
                connection.connect((host, port))
            answers[family.name] = "connected"
        except OSError as error:
            answers[family.name] = type(error).__name__
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM):
        answers["AF_UNIX"] = "made"
    return answers


def test_the_child_cannot_open_a_network_connection() -> None:
    import socket

    with socket.create_server(("127.0.0.1", 0)) as server:
        port = server.getsockname()[1]
        with socket.create_connection(("127.0.0.1", port), timeout=2):
            pass  # the test process can: the listener is there

        answers = run_sandboxed({"port": port}, limits=LIMITS, _entry=f"{THIS}:entry_connect")

    assert answers["AF_INET"] == "PermissionError"
    assert answers["AF_INET6"] == "PermissionError"
    assert answers["AF_UNIX"] == "made"  # the sandbox's own pipes and sockets are Unix ones


@pytest.mark.skipif(os.geteuid() != 0, reason="a user of its own needs root or CAP_SETUID")
def test_the_child_runs_as_a_user_of_its_own() -> None:
    answers = run_sandboxed({"port": 9}, limits=LIMITS, _entry=f"{THIS}:entry_connect")

    assert answers["uid"] not in (0, os.getuid())


@child_entry
def entry_connect_from_v8(**_: object) -> dict[str, Any]:
    import socket

    from simulator.shallow import ShallowFunctions

    # a V8 isolate's threads exist before the filter: they are filtered too (TSYNC)
    ShallowFunctions(
        model_key="m",
        source="function computationTime(p) { return 1; }",
        attributes={},
        twin=False,
    ).call("computationTime", params={})
    try:
        socket.socket(socket.AF_INET, socket.SOCK_STREAM).close()
    except PermissionError:
        return {"socket": "refused"}
    return {"socket": "made"}


def test_the_filter_holds_in_a_child_whose_v8_threads_exist() -> None:
    assert run_sandboxed({}, limits=LIMITS, _entry=f"{THIS}:entry_connect_from_v8") == {
        "socket": "refused"
    }
