"""Numbers live in bench/, reasons in code: no comment or docstring in `simulator/`, `hwdb/`
or `webapp/` quotes a timing figure (milliseconds, microseconds, a decimal number of seconds,
a speed-up such as "3x" or "ten times faster"), except beside a reference to a table in
bench/RESULTS.md. A figure goes stale with the next change; the reason for the code does not.

The test reads Python comments and docstrings (the tokenizer's COMMENT tokens and the
strings that stand as statements) and C comments."""

from __future__ import annotations

import io
import re
import tokenize
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("simulator", "hwdb", "webapp")
REWORKED_ELSEWHERE: set[str] = set()
NUMBER = r"(?<![\w.])\d[\d.,]*(?:\s*(?:-|->|to)\s*\d[\d.,]*)?"
TIMING = re.compile(
    rf"{NUMBER}\s*(?:ms|us|µs|ns|milliseconds?|microseconds?)\b"
    rf"|(?<![\w.])\d+\.\d+\s*(?:s|seconds?)\b"
    rf"|(?!0x){NUMBER}\s?x\b(?!\s*\d)"  # not a hex literal
    r"|\b(?:\d+|two|three|four|five|ten|a hundred) times (?:faster|slower|as (?:fast|long))",
    re.IGNORECASE,
)
TABLE_REFERENCE = "bench/RESULTS.md"


def python_comments(text: str) -> Iterator[tuple[int, str]]:
    """Yield (line, text) of each comment line and docstring line of Python source `text`."""
    previous: tokenize.TokenInfo | None = None
    statement_start = {tokenize.INDENT, tokenize.DEDENT, tokenize.NEWLINE, tokenize.NL}
    for token in tokenize.generate_tokens(io.StringIO(text).readline):
        if token.type == tokenize.COMMENT:
            yield token.start[0], token.string
        elif token.type == tokenize.STRING and (
            previous is None or previous.type in statement_start
        ):
            for offset, line in enumerate(token.string.splitlines()):
                yield token.start[0] + offset, line
        if token.type not in (tokenize.NL, tokenize.COMMENT):
            previous = token


def c_comments(text: str) -> Iterator[tuple[int, str]]:
    """Yield (line, text) of each line of the C comments in `text`."""
    for match in re.finditer(r"/\*.*?\*/|//[^\n]*", text, re.DOTALL):
        first = text.count("\n", 0, match.start()) + 1
        for offset, line in enumerate(match.group().splitlines()):
            yield first + offset, line


def timing_figures(path: Path) -> list[str]:
    text = path.read_text(encoding="utf-8")
    lines = python_comments(text) if path.suffix == ".py" else c_comments(text)
    return [
        f"{path.relative_to(ROOT)}:{number}: {line.strip()}"
        for number, line in lines
        if TIMING.search(line) and TABLE_REFERENCE not in line
    ]


def test_the_scan_finds_a_figure_in_a_comment_and_in_a_docstring() -> None:
    source = 'def f():\n    """Faster: 12 ms instead of 30."""\n    x = 1  # 3.5x SimPy\n'
    assert [line for _, line in python_comments(source) if TIMING.search(line)] == [
        '"""Faster: 12 ms instead of 30."""',
        "# 3.5x SimPy",
    ]
    assert list(c_comments("int a; /* about 45-90 us */\n")) == [(1, "/* about 45-90 us */")]
    for reason in ("# kept in C: it runs once per event", "# a 0x100 branch", "# timeout: 300 s"):
        assert not TIMING.search(reason), reason


def test_no_comment_quotes_a_timing_figure() -> None:
    found = [
        figure
        for package in PACKAGES
        for path in sorted((ROOT / package).rglob("*"))
        if path.suffix in {".py", ".c", ".h"}
        and "migrations" not in path.parts
        and str(path.relative_to(ROOT)) not in REWORKED_ELSEWHERE
        for figure in timing_figures(path)
    ]
    assert found == []
