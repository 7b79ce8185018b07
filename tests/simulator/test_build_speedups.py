"""Building the engine's C core: the command, and what happens without a working compiler."""

from __future__ import annotations

from pathlib import Path

import greenlet
import pytest

from simulator import build_speedups


def test_the_command_compiles_the_source_against_python_and_greenlet_headers() -> None:
    cmd = build_speedups.command(Path("/tmp/out.so"))
    assert str(build_speedups.SOURCE) in cmd
    assert f"-I{Path(greenlet.__file__).parent}" in cmd
    assert cmd[-2:] == ["-o", "/tmp/out.so"]


def test_a_failing_compiler_is_reported_and_leaves_the_built_module_alone(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    target = build_speedups.target()
    before = target.stat().st_mtime if target.exists() else None
    monkeypatch.setenv("CC", "false")
    usable, message = build_speedups.build(force=True)
    assert not usable
    assert message.startswith("the C compiler failed:")
    assert not target.with_suffix(target.suffix + ".tmp").exists()
    assert (target.stat().st_mtime if target.exists() else None) == before

    assert build_speedups.main(["--force"]) == 0  # optional: the pure-Python core runs
    assert "pure-Python core" in capsys.readouterr().err
    assert build_speedups.main(["--force", "--require"]) == 1


def test_a_missing_compiler_is_reported(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CC", "/nonexistent/cc")
    usable, message = build_speedups.build(force=True)
    assert not usable
    assert message.startswith("cannot run the C compiler (/nonexistent/cc)")
