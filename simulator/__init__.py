"""ParaSim Studio's simulator: a discrete-event engine for MERPSYS-style application models.

Plain Python, no Django. The web side hands it a self-contained system snapshot; the CLI
(`python -m simulator`) runs the same code.
"""

from __future__ import annotations

from simulator.errors import SimulationError

__version__ = "0.1.0"
ENGINE_VERSION = __version__

__all__ = ["ENGINE_VERSION", "SimulationError", "__version__"]
