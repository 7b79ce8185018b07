"""Build the C extensions in place through setuptools: `python -m simulator.build_speedups
[--force] [--require]`, or `python setup.py build_ext --inplace` (the same declarations).

Three extensions, each with a pure-Python path that gives the same results:
`simulator/_speedups.c`, the engine's scheduling core (`simulator.engine`),
`simulator/_cachesim.c`, the cache simulator's core (`simulator.models.cache`), and
`simulator/_v8results.c`, V8's results handed back without Python (`simulator.shallow`). The
first two are split by concern into parts (`_speedups_*.c`, `_cachesim_*.c`, with a header
each) that the module's file includes in order: one translation unit, so that the compiler
inlines across the parts as it did across the one file. They are
declared here once (`EXTENSIONS`, as setuptools Extensions: `Extension.module`) and read by
the project's packaging (`setup.py`, with `[build-system]` in pyproject.toml), which computes
greenlet's include directory.

`./studio setup` runs this after installing the dependencies. The extensions are optional:
when one cannot be built (no C compiler, no Python headers) its pure-Python core runs instead,
slower but with the same results, and this command says why and exits 0 unless `--require`
is given (CI passes it through PARASIM_REQUIRE_SPEEDUPS=1, so CI always tests the C cores).
"""

from __future__ import annotations

import argparse
import contextlib
import io
import os
import shlex
import shutil
import sys
import sysconfig
import tempfile
from dataclasses import dataclass
from pathlib import Path

import greenlet
from setuptools import Distribution
from setuptools import Extension as SetuptoolsExtension
from setuptools.command.build_ext import build_ext

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
# -ffp-contract=off: no fused multiply-add, so that a C core's floats are its Python
# reference's bits (a fused a * b + c rounds once, Python rounds twice)
COMPILE_ARGS = ("-O2", "-Wall", "-Werror=implicit-function-declaration", "-ffp-contract=off")


@dataclass(frozen=True)
class Extension:
    """One optional C extension of `simulator/`: its module name and who falls back without it."""

    name: str
    label: str  # how main() names it
    fallback: str  # what runs instead when it cannot be built
    needs_greenlet: bool
    parts: tuple[str, ...] = ()  # the files its source includes, in simulator/

    @property
    def source(self) -> Path:
        """Return the path of its C source, the one file compiled."""
        return HERE / f"{self.name}.c"

    @property
    def depends(self) -> tuple[Path, ...]:
        """Return the paths of the files its source includes (a change to one rebuilds it)."""
        return tuple(HERE / part for part in self.parts)

    def module(self, *, optional: bool = True) -> SetuptoolsExtension:
        """Return its setuptools declaration (sources relative to the project root, as
        setuptools wants them); `optional`: a failed build is a warning, not an error."""
        includes = [str(Path(greenlet.__file__).parent)] if self.needs_greenlet else []
        return SetuptoolsExtension(
            f"simulator.{self.name}",
            sources=[str(self.source.relative_to(ROOT))],
            depends=[str(part.relative_to(ROOT)) for part in self.depends],
            include_dirs=includes,
            extra_compile_args=list(COMPILE_ARGS),
            optional=optional,
        )


SPEEDUPS = Extension(
    "_speedups",
    "simulator speedups",
    "the engine will use its pure-Python core",
    True,
    parts=(
        "_speedups.h",
        *(
            f"_speedups_{part}.c"
            for part in (
                "memory",
                "loop",
                "usage",
                "sim",
                "kernel",
                "stackless",
                "transfer",
                "messages",
                "guard",
                "program",
                "flows",
                "flows_uniform",
                "power",
                "kernel_rows",
                "spawn",
            )
        ),
    ),
)
CACHESIM = Extension(
    "_cachesim",
    "simulator cache core",
    "the cache simulator will use its pure-Python core",
    False,
    parts=(
        "_cachesim.h",
        "_cachesim_common.c",
        "_cachesim_tree.c",
        "_cachesim_tree_type.c",
        "_cachesim_chain.c",
    ),
)
V8RESULTS = Extension(
    "_v8results",
    "simulator V8 hand-back",
    "JavaScript models' results will come back through mini-racer's Python callback",
    False,
)
EXTENSIONS = (SPEEDUPS, CACHESIM, V8RESULTS)
SOURCE = SPEEDUPS.source


def required() -> bool:
    """Return whether a failed build is an error (PARASIM_REQUIRE_SPEEDUPS=1: CI)."""
    return os.environ.get("PARASIM_REQUIRE_SPEEDUPS") == "1"


def target(extension: Extension = SPEEDUPS) -> Path:
    """Return the path of the built extension for this interpreter."""
    return HERE / f"{extension.name}{sysconfig.get_config_var('EXT_SUFFIX')}"


def compiler() -> list[str]:
    """Return the C compiler command setuptools will run ($CC, else Python's own)."""
    return shlex.split(os.environ.get("CC") or sysconfig.get_config_var("CC") or "cc")


def up_to_date(output: Path, extension: Extension = SPEEDUPS) -> bool:
    """Return whether `output` exists and is newer than its source, the files it includes and
    this script."""
    if not output.exists():
        return False
    built = output.stat().st_mtime
    inputs = (extension.source, *extension.depends, Path(__file__))
    return all(built >= path.stat().st_mtime for path in inputs)


class AtomicBuildExt(build_ext):
    """setuptools' build_ext, whose in-place copy replaces the built module atomically: a
    running worker never loads a half-written file."""

    def copy_file(
        self, infile: str, outfile: str, *args: object, **kwargs: object
    ) -> tuple[str, bool]:
        partial = f"{outfile}.tmp"
        shutil.copyfile(infile, partial)
        os.replace(partial, outfile)
        return outfile, True


def build(force: bool = False, extension: Extension = SPEEDUPS) -> tuple[bool, str]:
    """Build the extension in place through setuptools unless it is up to date; return
    (usable, what happened)."""
    output = target(extension)
    if not force and up_to_date(output, extension):
        return True, f"{output.name} is up to date"
    cc = compiler()
    if shutil.which(cc[0]) is None:
        return False, f"cannot run the C compiler ({cc[0]}): not found"
    distribution = Distribution(
        {"name": "parasim-studio", "ext_modules": [extension.module(optional=False)]}
    )
    distribution.cmdclass["build_ext"] = AtomicBuildExt
    command = distribution.get_command_obj("build_ext")
    command.inplace = True
    command.force = True
    log = io.StringIO()
    cwd = os.getcwd()
    with tempfile.TemporaryDirectory(prefix="parasim-build-") as scratch:
        command.build_temp = scratch
        try:
            os.chdir(ROOT)  # setuptools reads sources relative to the project root
            with contextlib.redirect_stdout(log), contextlib.redirect_stderr(log):
                distribution.run_command("build_ext")
        except (Exception, SystemExit) as error:  # setuptools' CompileError, LinkError...
            Path(f"{output}.tmp").unlink(missing_ok=True)
            details = "\n".join(filter(None, (log.getvalue().strip(), str(error))))
            return False, f"the C compiler failed:\n{details}"
        finally:
            os.chdir(cwd)
    return True, f"built {output.relative_to(ROOT)}"


def main(argv: list[str] | None = None) -> int:
    """Build every extension; report what happened."""
    parser = argparse.ArgumentParser(prog="python -m simulator.build_speedups")
    parser.add_argument("--force", action="store_true", help="rebuild even if up to date")
    parser.add_argument(
        "--require",
        action="store_true",
        help="exit non-zero when an extension cannot be built (PARASIM_REQUIRE_SPEEDUPS=1 too)",
    )
    args = parser.parse_args(argv)
    failed = False
    for extension in EXTENSIONS:
        usable, message = build(force=args.force, extension=extension)
        if usable:
            print(f"{extension.label}: {message}")
            continue
        failed = True
        print(f"{extension.label}: not built, {extension.fallback}: {message}", file=sys.stderr)
    return 1 if failed and (args.require or required()) else 0


if __name__ == "__main__":
    raise SystemExit(main())
