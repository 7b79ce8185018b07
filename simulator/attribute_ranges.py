"""The ranges of the hardware attributes the built-in models count with or divide by.

A computational model reads a hardware record's attributes as numbers (simulator.shallow):
`SMs = -13` or `bandwidth = 0` would give a negative or infinite time far from where it was
typed. hwdb refuses such values when a record is saved (hwdb.services.components); the rule
lives here, beside the models that read the keys (docs/models.md; the JavaScript models'
"Attributes:" headers in simulator/models/js), readable without loading them. A key means
the same on every hardware type; keys no built-in model reads take any finite number.
Counts of units (INTEGRAL: SMs, cores, warp size, ...) are whole numbers as well.
"""

from __future__ import annotations

__all__ = ["INTEGRAL", "NON_NEGATIVE", "POSITIVE", "RANGE_MESSAGES", "range_error"]

# Counts, sizes, clocks, bandwidths and rates the models divide by or count with.
POSITIVE = frozenset(
    (
        # GPU: Volkov (4.1-4.5), throughput terms, occupancy calculator, current GPUs
        "SMs",
        "SMS",
        "SMCoreClock",
        "CUDACores",
        "schedulers",
        "warpSize",
        "memoryClock",
        "busWidth",
        "dataRate",
        "GMEMThroughput",
        "FP64Units",
        "SFUs",
        "LDSTUnits",
        "computeCapability",
        "maxWarpsPerSM",
        "maxBlocksPerSM",
        "maxThreadsPerBlock",
        "registersPerSM",
        "registersPerBlock",
        "maxRegistersPerThread",
        "memoryEfficiency",
        "L2Bandwidth",
        "L2TileBandwidth",
        "tensorEfficiency",
        "clockWakeTimeConstant",
        "issueRate",
        "kernelExecutionLambda",
        "memorySize",
        # current GPUs' tensor-core rates and INT32 lanes (gpu_current.py, C.6)
        "tensorFLOPsPerCycleFP16",
        "tensorFLOPsPerCycleTF32",
        "tensorFLOPsPerCycleFP8",
        "tensorFLOPsPerCycleFP4",
        "tensorFLOPsPerCycleFP64",
        "tensorOpsPerCycleINT8",
        "INTUnits",
        "sharedMemBandwidth",
        # current GPUs' atomics (gpu_current.py, C.8)
        "L2AtomicThroughput",
        "atomicSameAddressRate",
        # CPU
        "cores",
        "coreClock",
        "flopsPerCycle",
        "memoryBandwidth",
        # links (eq 4.6) and memory
        "bandwidth",
        "lambdaHTD",
        "lambdaDth",
        "pageableBandwidthHTD",
        "pageableBandwidthDth",
        "writeBandwidth",
        "linkBandwidth",
        "peakBandwidth",
        "clock",
        "size",
        "ways",
        "lineSize",
        "channels",
        "mshrs",
        "slices",
        "headerBytes",
        # reliability: 1 / mtbf
        "mtbf",
        # cost (simulator.cost): a purchase is written off over the lifetime, in years
        "lifetime",
    )
)

# Latencies, start-up times, powers and rates where 0 is meaningful (nothing, or free).
NON_NEGATIVE = frozenset(
    (
        "latency",
        "startupHTD",
        "startupDth",
        "pageableStartupHTD",
        "pageableStartupDth",
        "kernelLaunchOverhead",
        "clockWakePenalty",
        "latencyCycles",
        "hopLatencyCycles",
        "L1HitLatency",
        "L2HitLatency",
        "globalLoadLatency",
        "dependentIssueLatency",
        "barrierLatency",
        "L2Cache",
        "sharedMemPerSM",
        "maxSharedMemPerBlock",
        "powerIdle",
        "powerConsumptionLoad",
        "powerOff",
        "powerActiveIdle",
        "powerLoadedCompute",
        "powerLoadedMemory",
        "failuresPerSecond",
        # cost (simulator.cost): prices, where 0 is free
        "purchasePrice",
        "hourlyRental",
        "powerPrice",
    )
)

# Counts of units, threads, registers, ways or bits: a model counting 13.5 SMs computes a
# machine that cannot exist. (Sizes and clocks are left out: they are written in units such
# as GB or GHz where fractions are real.)
INTEGRAL = frozenset(
    (
        "SMs",
        "SMS",
        "CUDACores",
        "schedulers",
        "warpSize",
        "busWidth",
        "FP64Units",
        "SFUs",
        "LDSTUnits",
        "maxWarpsPerSM",
        "maxBlocksPerSM",
        "maxThreadsPerBlock",
        "registersPerSM",
        "registersPerBlock",
        "maxRegistersPerThread",
        "cores",
        "ways",
        "lineSize",
        "channels",
        "mshrs",
        "slices",
        "headerBytes",
    )
)

RANGE_MESSAGES = {
    "integral": "{key} is a count: a whole number (got {value:g}).",
    "positive": "{key} must be greater than 0 (got {value:g}).",
    "non_negative": "{key} must be 0 or more (got {value:g}).",
}


def range_error(key: str, value: float) -> str | None:
    """Return the message for an attribute value out of its key's range (or a fraction of a
    count), None when fine."""
    if key in POSITIVE and not value > 0:
        return RANGE_MESSAGES["positive"].format(key=key, value=value)
    if key in NON_NEGATIVE and not value >= 0:
        return RANGE_MESSAGES["non_negative"].format(key=key, value=value)
    if key in INTEGRAL and not float(value).is_integer():
        return RANGE_MESSAGES["integral"].format(key=key, value=value)
    return None
