"""`python -m simulator analyze`: a CUDA kernel's instruction counts and the attributes of
its computational model, by the analyzer (simulator.analyzer.cli; it loads NumPy)."""

from __future__ import annotations

from simulator.analyzer.cli import register

__all__ = ["register"]
