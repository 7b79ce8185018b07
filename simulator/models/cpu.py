"""CPU compute time from peak floating-point throughput (the built-in `cpu.js` model).

T = flops / (threads x clock x flops per cycle x efficiency),  threads <= cores
"""

from __future__ import annotations

from collections.abc import Mapping

MHZ = 1e6

CPU_ERRORS: dict[str, str] = {
    "non_positive": "threads and efficiency must be positive",
}


def computation_time(attributes: Mapping[str, float], params: Mapping[str, float]) -> float:
    """Return the seconds to execute params["flops"] on a CPU with `cores`, `coreClock` [MHz]
    and `flopsPerCycle` (per core), using params "threads" (default all cores) and
    "efficiency" (fraction of peak, default 1)."""
    cores = float(attributes["cores"])
    threads = min(float(params.get("threads", cores)), cores)
    efficiency = float(params.get("efficiency", 1.0))
    if not (threads > 0 and efficiency > 0):
        raise ValueError(CPU_ERRORS["non_positive"])
    peak = threads * (float(attributes["coreClock"]) * MHZ) * float(attributes["flopsPerCycle"])
    return float(params["flops"]) / (peak * efficiency)
