"""bench/RESULTS.md keeps the latest recorded run of each benchmark, each naming its date,
commit and machine; the history is git's."""

from __future__ import annotations

import importlib.util
import re
import subprocess
from pathlib import Path
from types import ModuleType

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "bench" / "RESULTS.md"
RUN_LINE = re.compile(
    r"^Run of \d{4}-\d\d-\d\d( \d\d:\d\d(-\d\d:\d\d)? UTC)? at commit `[0-9a-f]{7,}`"
)
BLOCK = re.compile(r"<!-- (.+?): begin -->\n(.*?)\n<!-- \1: end -->", re.DOTALL)


def results_block() -> ModuleType:
    spec = importlib.util.spec_from_file_location(
        "results_block", ROOT / "bench" / "results_block.py"
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_results_stay_short() -> None:
    assert len(RESULTS.read_text(encoding="utf-8").splitlines()) < 400


def test_each_recorded_block_names_its_date_commit_and_machine_once() -> None:
    text = RESULTS.read_text(encoding="utf-8")
    blocks = BLOCK.findall(text)
    assert len(blocks) >= 7
    names = [name for name, _ in blocks]
    assert len(names) == len(set(names)), "one block per benchmark (and part)"
    for name, body in blocks:
        lines = body.splitlines()
        assert RUN_LINE.match(lines[0]), (name, lines[0])
        assert any(line.startswith("- machine: ") for line in lines), name
    hand_written = [line for line in text.splitlines() if line.startswith("Run of ")]
    assert all(RUN_LINE.match(line) for line in hand_written), hand_written


def test_a_new_block_names_the_commit_it_was_taken_at() -> None:
    head = subprocess.run(
        ["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True, text=True
    ).stdout.strip()
    line = results_block().run_line("bench_engine.py", ["--quick"], "best of 3")
    assert RUN_LINE.match(line), line
    assert f"at commit `{head}`" in line
    assert line.endswith("`.venv/bin/python bench/bench_engine.py --quick` (best of 3)")
