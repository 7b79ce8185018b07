"""The project stands alone: every document its text cites is in the repository."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
# What a user reads and what the code's comments cite.
CITING = ["README.md", "docs", "examples", "simulator", "hwdb", "webapp", "validation", "bench"]
SUFFIXES = {".md", ".py", ".c", ".h", ".js", ".json", ".txt", ".sh", ".html"}
DOC_PATH = re.compile(r"(?<![\w/.])((?:docs|bench|examples|validation)/[\w./-]+\.md)\b")


def cited_texts() -> list[tuple[Path, str]]:
    files: list[Path] = []
    for name in CITING:
        path = ROOT / name
        candidates = [path] if path.is_file() else path.rglob("*")
        files += [f for f in candidates if f.is_file() and f.suffix in SUFFIXES]
    return [(f, f.read_text(encoding="utf-8", errors="replace")) for f in files]


def test_nothing_points_outside_the_repository() -> None:
    outside = [
        f"{path.relative_to(ROOT)}:{number}"
        for path, text in cited_texts()
        for number, line in enumerate(text.splitlines(), 1)
        if "../shared" in line
    ]
    assert outside == []


def test_every_cited_document_exists() -> None:
    missing = sorted(
        {
            f"{path.relative_to(ROOT)} cites {cited}"
            for path, text in cited_texts()
            for cited in DOC_PATH.findall(text)
            if not (ROOT / cited).is_file()
        }
    )
    assert missing == []
