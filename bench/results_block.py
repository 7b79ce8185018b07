"""The recorded blocks of bench/RESULTS.md: what a benchmark's `--write-results` writes.

A block sits between two markers naming the script (and a part, e.g. "tree" or "2 cores"):
`<!-- bench_engine.py --write-results: begin -->` ... `<!-- ... : end -->`. Writing replaces
the block whole and leaves the prose around it; a block not yet in the file is appended.
"""

from __future__ import annotations

import datetime
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path

RESULTS_FILE = Path(__file__).resolve().parent / "RESULTS.md"


def run_line(
    script: str, argv: Sequence[str] | None, how: str = "", python: str = ".venv/bin/python"
) -> str:
    """Return a block's first line: when the run was taken, its command, and how (`how`,
    e.g. "best of 5"); `argv` None means this process's arguments."""
    stamp = datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%d %H:%M UTC")
    arguments = list(sys.argv[1:] if argv is None else argv)
    command = " ".join([python, f"bench/{script}", *arguments])
    return f"Run of {stamp} at {commit()}: `{command}`" + (f" ({how})" if how else "")


def commit() -> str:
    """Return the checkout's commit as the block names it: `abc1234`, "with uncommitted
    changes" when the work tree differs from it, or "an unknown commit" outside git."""
    root = Path(__file__).resolve().parent.parent

    def git(*arguments: str) -> str:
        done = subprocess.run(["git", *arguments], cwd=root, capture_output=True, text=True)
        return done.stdout.strip() if done.returncode == 0 else ""

    head = git("rev-parse", "--short", "HEAD")
    if not head:
        return "an unknown commit"
    changed = git("status", "--porcelain", "--untracked-files=no")
    return f"commit `{head}`" + (" with uncommitted changes" if changed else "")


def markers(script: str, part: str | None = None) -> tuple[str, str]:
    """Return the (begin, end) markers of `script`'s block (of `part`, when it has several)."""
    name = f"{script} --write-results" + (f" ({part})" if part else "")
    return f"<!-- {name}: begin -->", f"<!-- {name}: end -->"


def write_block(block: list[str], script: str, part: str | None = None) -> Path:
    """Put `block` between `script`'s markers in RESULTS.md; return the file's path."""
    begin, end = markers(script, part)
    text = RESULTS_FILE.read_text(encoding="utf-8") if RESULTS_FILE.exists() else ""
    section = "\n".join([begin, *block, end])
    if begin in text and end in text:
        head, rest = text.split(begin, 1)
        tail = rest.split(end, 1)[1]
        text = head + section + tail
    else:
        text = text + ("\n" if text else "") + section + "\n"
    RESULTS_FILE.write_text(text, encoding="utf-8")
    return RESULTS_FILE
