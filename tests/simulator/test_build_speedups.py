"""Building the C cores (engine, cache simulator) through setuptools: their declarations,
and what happens without a working compiler."""

from __future__ import annotations

import ast
import os
from pathlib import Path

import greenlet
import pytest

from simulator import build_speedups

ROOT = Path(__file__).resolve().parents[2]


def test_the_engine_core_compiles_its_source_against_python_and_greenlet_headers() -> None:
    module = build_speedups.SPEEDUPS.module()
    assert module.name == "simulator._speedups"
    assert [str(ROOT / source) for source in module.sources] == [str(build_speedups.SOURCE)]
    assert str(Path(greenlet.__file__).parent) in module.include_dirs
    assert "-Werror=implicit-function-declaration" in module.extra_compile_args
    assert module.optional and not build_speedups.SPEEDUPS.module(optional=False).optional


def test_the_cache_core_compiles_its_own_source_against_python_headers_only() -> None:
    module = build_speedups.CACHESIM.module()
    assert [str(ROOT / source) for source in module.sources] == [
        str(build_speedups.CACHESIM.source)
    ]
    assert str(build_speedups.SOURCE) not in module.sources
    assert str(Path(greenlet.__file__).parent) not in module.include_dirs
    assert build_speedups.target(build_speedups.CACHESIM).name.startswith("_cachesim.")


def test_the_v8_hand_back_compiles_its_own_source_against_python_headers_only() -> None:
    module = build_speedups.V8RESULTS.module()
    assert [str(ROOT / source) for source in module.sources] == [
        str(build_speedups.V8RESULTS.source)
    ]
    assert str(Path(greenlet.__file__).parent) not in module.include_dirs
    assert build_speedups.target(build_speedups.V8RESULTS).name.startswith("_v8results.")


def test_every_extension_is_declared_once() -> None:
    assert build_speedups.EXTENSIONS == (
        build_speedups.SPEEDUPS,
        build_speedups.CACHESIM,
        build_speedups.V8RESULTS,
    )


@pytest.mark.parametrize("extension", [build_speedups.SPEEDUPS, build_speedups.CACHESIM])
def test_a_split_core_includes_each_declared_part_once_and_no_file_is_over_1200_lines(
    extension: build_speedups.Extension,
) -> None:
    source = extension.source.read_text()
    on_disk = sorted(path.name for path in extension.source.parent.glob(f"{extension.name}_*.c"))
    assert sorted(part for part in extension.parts if part.endswith(".c")) == on_disk
    for part in extension.depends:
        assert source.count(f'#include "{part.name}"') == 1, part.name
        assert extension.module().depends.count(str(part.relative_to(ROOT))) == 1
    for path in (extension.source, *extension.depends):
        assert len(path.read_text().splitlines()) <= 1200, path.name


@pytest.mark.parametrize(
    "part", [*build_speedups.SPEEDUPS.depends, *build_speedups.CACHESIM.depends], ids=str
)
def test_each_part_names_its_python_reference_and_a_differential_test_that_exists(
    part: Path,
) -> None:
    if part.suffix == ".h":
        return
    head = part.read_text().split("*/", 1)[0]
    assert "Python reference: " in head
    tests = head.split("Differential test: ", 1)[1]
    named = [word.strip(".,()") for word in tests.split() if word.startswith("tests/")]
    assert named
    assert all((ROOT / name).is_file() for name in named), named


def test_a_part_changed_after_the_build_makes_the_module_out_of_date(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(build_speedups, "HERE", tmp_path)
    extension = build_speedups.Extension("_core", "core", "Python", False, parts=("_core_a.c",))
    built = tmp_path / "_core.so"
    script = Path(build_speedups.__file__).stat().st_mtime
    for path in (extension.source, *extension.depends, built):
        path.write_text("")
        os.utime(path, (script + 10, script + 10))
    assert build_speedups.up_to_date(built, extension)
    os.utime(extension.depends[0], (script + 20, script + 20))
    assert not build_speedups.up_to_date(built, extension)


def test_the_packaging_declares_the_same_extensions_and_setuptools_builds_them() -> None:
    pyproject = (ROOT / "pyproject.toml").read_text()
    assert 'build-backend = "setuptools.build_meta"' in pyproject
    setup = ast.unparse(ast.parse((ROOT / "setup.py").read_text()))
    assert "extension.module(optional=not required()) for extension in EXTENSIONS" in setup


def test_a_failing_compiler_is_reported_and_leaves_the_built_module_alone(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    targets = [build_speedups.target(extension) for extension in build_speedups.EXTENSIONS]
    before = [target.stat().st_mtime if target.exists() else None for target in targets]
    monkeypatch.setenv("CC", "false")
    monkeypatch.delenv("PARASIM_REQUIRE_SPEEDUPS", raising=False)
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
    monkeypatch.setenv("PARASIM_REQUIRE_SPEEDUPS", "1")
    assert build_speedups.main(["--force"]) == 1  # what CI sets


def test_a_missing_compiler_is_reported(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CC", "/nonexistent/cc")
    usable, message = build_speedups.build(force=True)
    assert not usable
    assert message.startswith("cannot run the C compiler (/nonexistent/cc)")
