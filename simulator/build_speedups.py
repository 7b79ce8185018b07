"""Build the C extensions in place: `python -m simulator.build_speedups [--force]`.

Two extensions, each with a pure-Python reference that gives the same results:
`simulator/_speedups.c`, the engine's scheduling core (`simulator.engine`), and
`simulator/_cachesim.c`, the cache simulator's core (`simulator.models.cache`).

`./studio setup` runs this after installing the dependencies. The extensions are optional:
when one cannot be built (no C compiler, no Python headers) its pure-Python core runs instead,
slower but with the same results, and this command says why and exits 0 unless `--require`
is given (CI passes it, so CI always tests the C cores).
"""

from __future__ import annotations

import argparse
import os
import shlex
import subprocess
import sys
import sysconfig
from dataclasses import dataclass
from pathlib import Path

import greenlet

HERE = Path(__file__).resolve().parent


@dataclass(frozen=True)
class Extension:
    """One optional C extension of `simulator/`: its module name and who falls back without it."""

    name: str
    label: str  # how main() names it
    fallback: str  # what runs instead when it cannot be built
    needs_greenlet: bool

    @property
    def source(self) -> Path:
        """Return the path of its C source."""
        return HERE / f"{self.name}.c"


SPEEDUPS = Extension(
    "_speedups", "simulator speedups", "the engine will use its pure-Python core", True
)
CACHESIM = Extension(
    "_cachesim",
    "simulator cache core",
    "the cache simulator will use its pure-Python core",
    False,
)
EXTENSIONS = (SPEEDUPS, CACHESIM)
SOURCE = SPEEDUPS.source


def target(extension: Extension = SPEEDUPS) -> Path:
    """Return the path of the built extension for this interpreter."""
    return HERE / f"{extension.name}{sysconfig.get_config_var('EXT_SUFFIX')}"


def command(output: Path, extension: Extension = SPEEDUPS) -> list[str]:
    """Return the compiler command line that builds `output`."""
    compiler = shlex.split(os.environ.get("CC") or sysconfig.get_config_var("CC") or "cc")
    includes = [sysconfig.get_paths()["include"]]
    if extension.needs_greenlet:
        includes.append(str(Path(greenlet.__file__).parent))
    return [
        *compiler,
        "-O2",
        "-shared",
        "-fPIC",
        "-Wall",
        "-Werror=implicit-function-declaration",
        *(f"-I{path}" for path in includes),
        str(extension.source),
        "-o",
        str(output),
    ]


def up_to_date(output: Path, extension: Extension = SPEEDUPS) -> bool:
    """Return whether `output` exists and is newer than its source and this script."""
    if not output.exists():
        return False
    built = output.stat().st_mtime
    return built >= extension.source.stat().st_mtime and built >= Path(__file__).stat().st_mtime


def build(force: bool = False, extension: Extension = SPEEDUPS) -> tuple[bool, str]:
    """Build the extension unless it is up to date; return (usable, what happened)."""
    output = target(extension)
    if not force and up_to_date(output, extension):
        return True, f"{output.name} is up to date"
    partial = output.with_suffix(output.suffix + ".tmp")
    cmd = command(partial, extension)
    try:
        done = subprocess.run(cmd, capture_output=True, text=True, check=False)
    except OSError as error:
        return False, f"cannot run the C compiler ({cmd[0]}): {error}"
    if done.returncode != 0:
        partial.unlink(missing_ok=True)
        return False, f"the C compiler failed:\n{shlex.join(cmd)}\n{done.stderr.strip()}"
    partial.replace(output)  # atomic: a running worker never loads a half-written file
    return True, f"built {output.relative_to(HERE.parent)}"


def main(argv: list[str] | None = None) -> int:
    """Build every extension; report what happened."""
    parser = argparse.ArgumentParser(prog="python -m simulator.build_speedups")
    parser.add_argument("--force", action="store_true", help="rebuild even if up to date")
    parser.add_argument(
        "--require", action="store_true", help="exit non-zero when an extension cannot be built"
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
    return 1 if failed and args.require else 0


if __name__ == "__main__":
    raise SystemExit(main())
