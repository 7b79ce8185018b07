"""Build `simulator/_speedups.c` in place: `python -m simulator.build_speedups [--force]`.

`./studio setup` runs this after installing the dependencies. The extension is optional: when
it cannot be built (no C compiler, no Python headers) the engine runs on its pure-Python core,
slower but with the same results, and this command says why and exits 0 unless `--require`
is given (CI passes it, so CI always tests the C core).
"""

from __future__ import annotations

import argparse
import os
import shlex
import subprocess
import sys
import sysconfig
from pathlib import Path

import greenlet

HERE = Path(__file__).resolve().parent
SOURCE = HERE / "_speedups.c"


def target() -> Path:
    """Return the path of the built extension for this interpreter."""
    return HERE / f"_speedups{sysconfig.get_config_var('EXT_SUFFIX')}"


def command(output: Path) -> list[str]:
    """Return the compiler command line that builds `output`."""
    compiler = shlex.split(os.environ.get("CC") or sysconfig.get_config_var("CC") or "cc")
    includes = [sysconfig.get_paths()["include"], str(Path(greenlet.__file__).parent)]
    return [
        *compiler,
        "-O2",
        "-shared",
        "-fPIC",
        "-Wall",
        "-Werror=implicit-function-declaration",
        *(f"-I{path}" for path in includes),
        str(SOURCE),
        "-o",
        str(output),
    ]


def up_to_date(output: Path) -> bool:
    """Return whether `output` exists and is newer than its source and this script."""
    if not output.exists():
        return False
    built = output.stat().st_mtime
    return built >= SOURCE.stat().st_mtime and built >= Path(__file__).stat().st_mtime


def build(force: bool = False) -> tuple[bool, str]:
    """Build the extension unless it is up to date; return (usable, what happened)."""
    output = target()
    if not force and up_to_date(output):
        return True, f"{output.name} is up to date"
    partial = output.with_suffix(output.suffix + ".tmp")
    cmd = command(partial)
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
    """Build the extension; report what happened."""
    parser = argparse.ArgumentParser(prog="python -m simulator.build_speedups")
    parser.add_argument("--force", action="store_true", help="rebuild even if up to date")
    parser.add_argument(
        "--require", action="store_true", help="exit non-zero when the extension cannot be built"
    )
    args = parser.parse_args(argv)
    usable, message = build(force=args.force)
    if usable:
        print(f"simulator speedups: {message}")
        return 0
    print(
        f"simulator speedups: not built, the engine will use its pure-Python core: {message}",
        file=sys.stderr,
    )
    return 1 if args.require else 0


if __name__ == "__main__":
    raise SystemExit(main())
