"""The project's packaging of the simulator's optional C extensions (pyproject.toml names
setuptools as the build backend): `python setup.py build_ext --inplace` builds them beside
their sources. Declared in simulator.build_speedups, where greenlet's include directory is
computed; optional (a failed build is a warning, the pure-Python cores run) unless
PARASIM_REQUIRE_SPEEDUPS=1, as CI sets."""

from __future__ import annotations

import sys
from pathlib import Path

from setuptools import setup

# A PEP 517 build (pip wheel ., python -m build) runs this file without the project on the
# path; simulator.build_speedups, which declares the extensions, sits beside it.
sys.path.insert(0, str(Path(__file__).resolve().parent))

from simulator.build_speedups import EXTENSIONS, AtomicBuildExt, required

setup(
    ext_modules=[extension.module(optional=not required()) for extension in EXTENSIONS],
    cmdclass={"build_ext": AtomicBuildExt},
)
