"""Building the C cores (engine, cache simulator): the commands, and what happens without a
working compiler."""

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


def test_the_cache_core_compiles_its_own_source_against_python_headers_only() -> None:
    cmd = build_speedups.command(Path("/tmp/out.so"), build_speedups.CACHESIM)
    assert str(build_speedups.CACHESIM.source) in cmd
    assert str(build_speedups.SOURCE) not in cmd
    assert f"-I{Path(greenlet.__file__).parent}" not in cmd
    assert build_speedups.target(build_speedups.CACHESIM).name.startswith("_cachesim.")
    assert build_speedups.EXTENSIONS == (build_speedups.SPEEDUPS, build_speedups.CACHESIM)


def test_a_failing_compiler_is_reported_and_leaves_the_built_module_alone(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    targets = [build_speedups.target(extension) for extension in build_speedups.EXTENSIONS]
    before = [target.stat().st_mtime if target.exists() else None for target in targets]
    monkeypatch.setenv("CC", "false")
    for extension in build_speedups.EXTENSIONS:
        usable, message = build_speedups.build(force=True, extension=extension)
        assert not usable
        assert message.startswith("the C compiler failed:")
    assert not any(target.with_suffix(target.suffix + ".tmp").exists() for target in targets)
    assert [target.stat().st_mtime if target.exists() else None for target in targets] == before

    assert build_speedups.main(["--force"]) == 0  # optional: the pure-Python cores run
    err = capsys.readouterr().err
    assert "simulator speedups: not built, the engine will use its pure-Python core" in err
    assert (
        "simulator cache core: not built, the cache simulator will use its pure-Python core" in err
    )
    assert build_speedups.main(["--force", "--require"]) == 1


def test_a_missing_compiler_is_reported(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CC", "/nonexistent/cc")
    usable, message = build_speedups.build(force=True)
    assert not usable
    assert message.startswith("cannot run the C compiler (/nonexistent/cc)")
