"""Where a served `python -m simulator run` spends its time: timestamps in each process.

A diagnostic, not a benchmark of record (bench_userpath.py measures the user's path). It
copies the checkout's files (and its built C extensions) to a scratch directory, inserts at
each anchor of the served path (ANCHORS: the command line's `__main__` and its client of the pool, the
pool's copy of itself, `cli/run.py`, the sandbox child) a line that appends the time and the
process id to a log, runs the copy's command line `--runs` times on a bench_userpath.py
compute scenario, and prints each interval between consecutive marks (the first from the
command's start, the last to its exit): median and minimum. `--gap` pauses between runs (a
user typing; without it the runs come back to back, as a shell loop); `--fine` adds marks
inside the child's preparation for its run and inside the run's own set-up (the snapshot,
the model's compile, the nodes, the processes, the engine's run). An anchor the code no longer has stops it with
its name: ANCHORS follow the code.

    .venv/bin/python bench/served_timeline.py --processes 100 --runs 30 [--gap 0.3] [--fine]
"""

from __future__ import annotations

import argparse
import contextlib
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "bench")]

import bench_userpath  # noqa: E402

# (file, anchor text, mark, whether the mark goes after the anchor's line rather than before)
ANCHORS = [
    ("simulator/__main__.py", "from __future__ import annotations", "main-start", True),
    ("simulator/__main__.py", "    _status = served_run(sys.argv[1:])", "pool-imported", False),
    (
        "simulator/sandbox/served.py",
        "        connection.sendall(body)\n        connection.settimeout(None)",
        "client-sent",
        True,
    ),
    ("simulator/sandbox/served.py", "    if reply == DECLINED:", "client-reply", False),
    (
        "simulator/sandbox/pool.py",
        "        os.chdir(cwd)\n    except (OSError, ValueError, IndexError):",
        "copy-took",
        False,
    ),
    (
        "simulator/sandbox/pool.py",
        "        status = main(argv, child=child or _take_child(path, entry))",
        "copy-cli",
        False,
    ),
    (
        "simulator/cli/run.py",
        "        result = run_once(payload, bar, no_sandbox=args.no_sandbox, child=child)",
        "payload-built",
        False,
    ),
    (
        "simulator/cli/run.py",
        "        result = run_once(payload, bar, no_sandbox=args.no_sandbox, child=child)",
        "result-in",
        True,
    ),
    ("simulator/cli/run.py", '    if args.json != "-":\n        data = result', "written", False),
    (
        "simulator/sandbox/child.py",
        "        keep_on_one_cpu()\n        with open(payload_path",
        "child-order",
        False,
    ),
    (
        "simulator/sandbox/child.py",
        "        result = entry.function(**payload, progress=channel.progress)",
        "child-run-start",
        False,
    ),
    (
        "simulator/sandbox/child.py",
        "        channel.send_result(result)",
        "child-run-end",
        False,
    ),
    (
        "simulator/sandbox/child.py",
        "        status = EXIT_OK\n    except BaseException as error:",
        "child-sent",
        False,
    ),
]
FINE_ANCHORS = [
    ("simulator/sandbox/child.py", "        os.unlink(payload_path)", "c-payload-read", True),
    (
        "simulator/sandbox/child.py",
        "        _set_limits(limits, processes=is_root)",
        "c-limits",
        True,
    ),
    ("simulator/sandbox/child.py", "        _load_v8(entry, payload)", "c-v8", True),
    ("simulator/sandbox/child.py", "        _die_with_parent(parent)", "c-privileges", False),
    ("simulator/runner.py", "    slots = place_processes(system, labels)", "r-snapshot", False),
    ("simulator/runner.py", "    code = (\n        compile_user_code(", "r-compiled", False),
    ("simulator/runner.py", "    memory = None\n    if _has_memory_nodes(", "r-nodes", False),
    ("simulator/runner.py", "    total = len(states)", "r-processes", False),
    ("simulator/runner.py", "    overall = engine.now", "r-engine-run", False),
]
# One statement, no import at the top of the file: the mark of the process's time and id.
MARK = (
    "__import__('os').write(__import__('os').open({log!r}, 0o2101), ('%d %d {mark}\\n' % "
    "(__import__('time').time_ns(), __import__('os').getpid())).encode())"
)


def copy_checkout(destination: Path) -> None:
    """Copy the checkout's tracked and untracked, not ignored files under `simulator/` and
    its built extensions to `destination`."""
    listed = subprocess.run(
        ["git", "ls-files", "-co", "--exclude-standard", "simulator"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
    ).stdout.split()
    for name in listed + [path.name for path in (ROOT / "simulator").glob("_*.so")]:
        source = ROOT / name if "/" in name else ROOT / "simulator" / name
        target = destination / source.relative_to(ROOT)
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(source, target)


def insert_marks(root: Path, anchors: list[tuple[str, str, str, bool]], log: str) -> None:
    """Insert a mark at each anchor of the copy at `root` (KeyError: an anchor is gone)."""
    for file, anchor, mark, after in anchors:
        path = root / file
        text = path.read_text()
        if anchor not in text:
            raise KeyError(f"{file}: the anchor of mark {mark!r} is gone: {anchor!r}")
        at = text.index(anchor)
        line_start = text.rfind("\n", 0, at) + 1
        indent = text[line_start : len(text) - len(text[line_start:].lstrip(" "))]
        statement = indent + MARK.format(log=log, mark=mark) + "\n"
        where = text.index("\n", at + len(anchor) - 1) + 1 if after else line_start
        path.write_text(text[:where] + statement + text[where:])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--processes", type=int, default=100, help="compute scenario size")
    parser.add_argument("--runs", type=int, default=30)
    parser.add_argument("--gap", type=float, default=0.0, help="seconds between runs")
    parser.add_argument("--fine", action="store_true", help="marks inside the child's set-up")
    args = parser.parse_args()

    scratch = Path(tempfile.mkdtemp(prefix="parasim-timeline-"))
    log = os.path.join(tempfile.gettempdir(), f"parasim-timeline-{os.getpid()}.log")
    try:
        copy_checkout(scratch)
        insert_marks(scratch, ANCHORS + (FINE_ANCHORS if args.fine else []), log)
        environment = dict(os.environ)
        environment.pop("PYTHONDONTWRITEBYTECODE", None)
        subprocess.run(
            [sys.executable, "-m", "compileall", "-q", "simulator"],
            cwd=scratch,
            env=environment,
            check=True,
            stdout=subprocess.DEVNULL,
        )
        inputs = bench_userpath.compute_case(args.processes, 20, 0).parasim
        files = bench_userpath.write_inputs(scratch, inputs)
        command = bench_userpath.cli_argv(files, inputs, sandbox=True)
        # the copy's daemon goes soon after the last run
        environment = {**os.environ, "PARASIM_POOL_IDLE_S": "5"}
        Path(log).touch()
        os.chmod(log, 0o666)  # the child writes its marks after dropping privileges
        for _ in range(3):  # the daemon, its zygote and a waiting child started
            subprocess.run(command, cwd=scratch, env=environment, stdout=subprocess.DEVNULL)
        intervals: dict[str, list[float]] = defaultdict(list)
        for _ in range(args.runs):
            time.sleep(args.gap)
            os.truncate(log, 0)
            started = time.time_ns()
            subprocess.run(
                command, cwd=scratch, env=environment, stdout=subprocess.DEVNULL, check=True
            )
            ended = time.time_ns()
            marks = sorted(
                (int(stamp), mark)
                for stamp, _, mark in (line.split() for line in Path(log).read_text().splitlines())
            )
            order = [mark for _, mark in marks] + ["exit", "TOTAL"]
            previous = started
            for stamp, mark in marks:
                intervals[mark].append((stamp - previous) / 1e6)
                previous = stamp
            intervals["exit"].append((ended - previous) / 1e6)
            intervals["TOTAL"].append((ended - started) / 1e6)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
        with contextlib.suppress(FileNotFoundError):
            os.unlink(log)
    print(
        f"served compute {args.processes:,} x 20, {args.runs} runs"
        + (f", {args.gap} s apart" if args.gap else ", back to back")
        + ": ms since the previous mark"
    )
    for mark in order:  # as the last run's marks came
        values = intervals[mark]
        print(f"  {mark:18s} median {statistics.median(values):7.2f}  min {min(values):7.2f}")


if __name__ == "__main__":
    main()
