"""Python twins of the shipped JavaScript computational models: uncached calls without V8.

An uncached call of a JavaScript model is dear in V8 (mini-racer hands every evaluation to
V8's own thread). A twin is the same model written in Python operation for
operation: the same IEEE-754 double operations in the same order, `Math.ceil`, `Math.min` and
`Number.prototype.toFixed` with JavaScript's results (signed zeros, NaN), numbers read as the
JavaScript reads them from the JSON it is handed. So it returns the very float V8 returns, in
a fraction of V8's time; `tests/simulator/models/test_js_twins.py` checks that with hypothesis,
comparing each twin with V8 for exact equality.

`shallow.ShallowFunctions` uses a twin only for a source that is byte for byte a shipped one:
`JS_TWINS` below maps the sha256 of each shipped source to its twin. The digests are written
out, not computed from the files, so editing a shipped source (or the data generated into it)
retires its twin until the twin is brought in line and the digest renewed (the tests name the
stale digest); a user's edit of one character is another source and runs in V8.

A twin answers the plain case and declines (`Decline`) the rest, which V8 then evaluates, so
the errors and their messages stay V8's: a parameter or attribute that is missing, null, a
string or a boolean (JavaScript would coerce it or throw), an integer beyond the doubles, a
division by zero (Python raises where JavaScript gives an infinity), a result the JavaScript
would throw for, and any arguments that are not plain JSON. An integer is read as the double
nearest to it, as both CPython's `float(int)` and V8's reading of the JSON's digits round. A
twin has no loops over anything but its parameters, so V8's time and memory limits have
nothing to bound there.

Not twinned, and why: "GPU kernel (current architectures)" calls `Math.exp` (the clock-wake
term) and `Math.pow` with a fractional exponent (the smooth minimum). V8 computes them with its
own fdlibm port (or the platform's `pow`, by a V8 flag): its `Math.exp` differs from CPython's
`math.exp` in the last bit for about 10 % of arguments in [-20, 0], and its `Math.pow` for about
0.3 % of a sample of bases in [1, 2] and exponents in [-4, 64] (none of 20,000 bases sampled
with the fitted exponent 2.45, which proves nothing). So no Python twin can promise V8's float, and the model
stays in V8. "Occupancy calculator" defines no well-known function.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from dataclasses import dataclass
from decimal import ROUND_HALF_UP, Decimal
from operator import itemgetter
from typing import ClassVar

__all__ = ["JS_TWINS", "Decline", "JsTwin", "js_number", "js_params"]

# Up to it every integer is a double; above, JSON.stringify writes an integral double's
# shortest digits padded with zeros.
_EXACT_INTEGER = 2**53
_PLAIN = frozenset({float, int, str, bool, type(None)})
_NUMBERS = frozenset({float, int})
_STRING = frozenset({str})


class Decline(Exception):
    """The twin does not answer this call: V8 evaluates it (and reports any error)."""


# --- JavaScript's semantics for what the twins read and compute ------------------------------


def js_params(params: Mapping[str, object]) -> Mapping[str, object]:
    """Return `params` as the JavaScript reads them: the JSON it is handed, parsed back.

    Plain dicts of numbers, strings, booleans, None and lists of those are already that (a
    tuple reads as the list it becomes); anything else goes through JSON, and arguments JSON
    refuses are declined (V8's path reports them).
    """
    values = params if isinstance(params, dict) else dict(params)
    if _PLAIN.issuperset(map(type, values.values())) and _STRING.issuperset(map(type, values)):
        return values
    for key, value in values.items():
        plain = type(value) in _PLAIN or (
            isinstance(value, list | tuple) and _PLAIN.issuperset(map(type, value))
        )
        if type(key) is not str or not plain:
            try:
                parsed: dict[str, object] = json.loads(json.dumps(values))
            except (TypeError, ValueError, RecursionError):
                raise Decline from None
            return parsed
    return values


def js_number(value: object) -> float:
    """Return the double JavaScript reads for `value`; decline anything but a number (an int
    beyond the doubles raises OverflowError, an ArithmeticError: V8 answers too)."""
    kind = type(value)
    if kind is float:
        return value  # type: ignore[return-value]
    if kind is int:
        return float(value)  # type: ignore[arg-type]
    raise Decline


def _numbers(values: tuple[object, ...]) -> tuple[float, ...]:
    """Return `_number` of each of `values` (one check for all: the hot path)."""
    if not _NUMBERS.issuperset(map(type, values)):
        raise Decline
    return tuple(map(float, values))  # type: ignore[arg-type]


def _number_or_none(value: object) -> float | None:
    """Return `js_number(value)`, or None where using it must decline."""
    try:
        return js_number(value)
    except (Decline, ArithmeticError):
        return None


def _use(value: float | None) -> float:
    """Return a bound attribute's number; decline where the JavaScript would throw or coerce."""
    if value is None:
        raise Decline
    return value


def _required(values: Mapping[str, object], name: str) -> float:
    """Return the number of parameter `name`; decline when it is missing, null or not a number
    (`volkovParam(params, name)` throws, `params.get(name)` gives NaN)."""
    return js_number(values.get(name))


def _attribute(
    attributes: Mapping[str, object], name: str, fallback: float | None = None
) -> float | None:
    """Return `volkovAttribute(name, fallback)`: the attribute, `fallback` when it is absent or
    null (None: the JavaScript throws), None when it is not a number."""
    value = attributes.get(name)
    if value is None:
        return fallback
    return _number_or_none(value)


def _present(attributes: Mapping[str, object], name: str) -> float | None:
    """Return `hw[name]` for arithmetic: None when it is absent (NaN follows), null or not a
    number."""
    return _number_or_none(attributes.get(name))


def _ceil(x: float) -> float:
    """Return `Math.ceil(x)`: a double, -0 for -1 < x <= -0, NaN and infinities unchanged."""
    if not math.isfinite(x):
        return x
    result = float(math.ceil(x))
    return result if result else math.copysign(0.0, x)


def _floor(x: float) -> float:
    """Return `Math.floor(x)`: a double, -0 for -0, NaN and infinities unchanged."""
    if not math.isfinite(x):
        return x
    result = float(math.floor(x))
    return result if result else math.copysign(0.0, x)


def _round_up(value: float, unit: float) -> float:
    """Return occupancy.js's `roundUp(value, unit)`."""
    return _ceil(value / unit) * unit


def _min(a: float, b: float) -> float:
    """Return `Math.min(a, b)`: NaN if either is, -0 below +0."""
    if a < b:
        return a
    if b < a:
        return b
    if a != a or b != b:
        return math.nan
    return a if math.copysign(1.0, a) < 0 else b


def _max(a: float, b: float) -> float:
    """Return `Math.max(a, b)`: NaN if either is, +0 above -0."""
    if a > b:
        return a
    if b > a:
        return b
    if a != a or b != b:
        return math.nan
    return a if math.copysign(1.0, a) > 0 else b


def _to_fixed_1(x: float) -> str:
    """Return `x.toFixed(1)`: the exact binary value rounded half away from zero (ECMAScript
    picks the larger n of a tie, on the magnitude), "-" only below zero."""
    if x != x:
        return "NaN"
    if not -1e21 < x < 1e21:
        raise Decline  # JavaScript writes String(x) there
    text = str(Decimal(abs(x)).quantize(Decimal("0.1"), rounding=ROUND_HALF_UP))
    return "-" + text if x < 0 else text


def _json_number(x: float) -> int | float:
    """Return the number `json.loads(JSON.stringify(x))` gives: an int for an integral double
    below 1e21 (JavaScript writes its shortest digits padded with zeros, no point: the int of
    Python's shortest repr), else the float."""
    if x.is_integer() and -1e21 < x < 1e21:
        return int(x) if -_EXACT_INTEGER <= x <= _EXACT_INTEGER else int(Decimal(repr(x)))
    return x


def _truthy_direction(value: object) -> bool:
    """Return `!!value` for a direction parameter (a string or absent); decline other kinds."""
    if value is None:
        return False
    if type(value) is str:
        return value != ""
    raise Decline


# --- The twins ---------------------------------------------------------------------------


class JsTwin:
    """A shipped JavaScript model in Python, bound to one hardware record's attributes.

    `shipped` says where the source is: "builtin:<name>" for a model of
    `simulator.models.builtin_models()`, else the path of an example's file from the
    repository root. `defines` names every function the source defines (what V8's `has`
    answers true for); `call` and `detail` answer the functions the twin covers and decline
    the others.
    """

    shipped: ClassVar[str]
    defines: ClassVar[frozenset[str]]

    def __init__(self, attributes: Mapping[str, object]) -> None:
        self.attributes = attributes

    def call(self, function: str, args: tuple[object, ...], params: Mapping[str, object]) -> float:
        """Return `function(*args, params)` as the JavaScript computes it; raise Decline (or an
        ArithmeticError: a division by zero) where V8 must answer."""
        raise Decline

    def detail(self, function: str, params: Mapping[str, object]) -> dict[str, object]:
        """Return `function(params)`'s object as `ShallowFunctions.call_detail` gives it (after
        the JSON hand-over); raise Decline where V8 must answer."""
        raise Decline


class MerpsysGpuTwin(JsTwin):
    """MERPSYS Listing 4, Volkov's kernel time with attributes as globals (eqs 4.1-4.5)."""

    shipped = "examples/merpsys_gtx970/gpu_model.js"
    defines = frozenset(
        {"getWarpsLaunched", "getThroughputBound", "getGMEMThroughput", "computationTime"}
    )

    def __init__(self, attributes: Mapping[str, object]) -> None:
        super().__init__(attributes)
        # Globals: a missing one is a ReferenceError.
        self.warp_size = _present(attributes, "warpSize")
        self.cuda_cores = _present(attributes, "CUDACores")
        self.schedulers = _present(attributes, "schedulers")
        self.sms = _present(attributes, "SMs")
        self.sm_clock = _present(attributes, "SMCoreClock")
        # `SMCoreClock * Math.pow(10, 6)`: V8's Math.pow(10, 6) is exactly 1e6 (tested).
        self.sm_hz = None if self.sm_clock is None else self.sm_clock * 1e6
        self.gmem_per_sm = self._gmem_throughput(attributes)
        # the globals every call reads, or None where one is not a number (each call declines)
        used = (
            self.warp_size,
            self.cuda_cores,
            self.schedulers,
            self.gmem_per_sm,
            self.sms,
            self.sm_hz,
        )
        self._globals: tuple[float, float, float, float, float, float] | None = (
            None if None in used else used  # type: ignore[assignment]
        )

    def _gmem_throughput(self, attributes: Mapping[str, object]) -> float | None:
        """Return `getGMEMThroughput()` (4.5), which reads attributes only."""
        if "GMEMThroughput" in attributes:
            return _present(attributes, "GMEMThroughput")
        memory_clock = _present(attributes, "memoryClock")
        bus_width = _present(attributes, "busWidth")
        data_rate = _present(attributes, "dataRate")
        if None in (memory_clock, bus_width, data_rate, self.sms, self.sm_clock):
            return None
        assert memory_clock is not None and bus_width is not None and data_rate is not None
        try:
            return (
                memory_clock * (bus_width / 8) * data_rate / (_use(self.sms) * _use(self.sm_clock))
            )
        except ZeroDivisionError:
            return None

    _kernel = itemgetter(
        "gridSize",
        "blockSize",
        "CUDACoreInstructions",
        "issuedInstructions",
        "GMEMBytesTransferred",
        "occupancy",
        "latencyBound",
        "kernelExecutionLambda",
    )

    def call(self, function: str, args: tuple[object, ...], params: Mapping[str, object]) -> float:
        if function != "computationTime" or args:
            raise Decline
        values = params if isinstance(params, dict) else dict(params)
        try:
            kernel = self._kernel(values)
        except KeyError:  # params.get() gives undefined: the result is NaN
            raise Decline from None
        if len(values) != len(kernel):  # more parameters: decline what JSON refuses
            js_params(values)
        grid, block, cuda_instructions, issued, gmem_bytes, occupancy, latency, lambda_k = _numbers(
            kernel
        )
        if self._globals is None:
            raise Decline
        warp_size, cuda_cores, schedulers, gmem_per_sm, sms, sm_hz = self._globals
        warps_launched = grid * _ceil(block / warp_size)  # W_L (4.2)
        throughput_bound = 1 / _max(  # Th_bound (4.4)
            _max(warp_size * cuda_instructions / cuda_cores, issued / schedulers),
            gmem_bytes / gmem_per_sm,
        )
        warp_throughput = _min(occupancy / latency, throughput_bound)  # W_Th (4.3)
        cycles = warps_launched / (warp_throughput * sms * lambda_k)
        return cycles / sm_hz  # T_k (4.1)


class MerpsysPcieTwin(JsTwin):
    """MERPSYS eq. 4.6 with attributes as globals; a 0-byte message without direction is free."""

    shipped = "examples/merpsys_gtx970/pcie_model.js"
    defines = frozenset({"p2pTime"})

    def __init__(self, attributes: Mapping[str, object]) -> None:
        super().__init__(attributes)
        bandwidth = _present(attributes, "bandwidth")
        # per direction (startup, bandwidth * lambda): the product is the same double at every
        # call; None where an attribute is not a number (the JavaScript coerces or throws)
        self.links: dict[str, tuple[float, float] | None] = {}
        for direction, suffix in (("HostToDevice", "HTD"), ("DeviceToHost", "Dth")):
            startup = _present(attributes, "startup" + suffix)
            lambda_c = _present(attributes, "lambda" + suffix)
            self.links[direction] = (
                None
                if startup is None or bandwidth is None or lambda_c is None
                else (startup, bandwidth * lambda_c)
            )

    def call(self, function: str, args: tuple[object, ...], params: Mapping[str, object]) -> float:
        if function != "p2pTime" or len(args) != 1:
            raise Decline
        size = js_number(args[0])
        direction = js_params(params).get("direction")
        if size == 0 and not _truthy_direction(direction):
            return 0.0
        link = self.links.get(direction) if type(direction) is str else None
        if link is None:
            raise Decline  # the JavaScript throws (or an attribute is not a number)
        startup, rate = link
        return startup + size / rate


# pcie_link.js LINK_ATTRIBUTES
PCIE_LINK_ATTRIBUTES = ("bandwidth", "startupHTD", "lambdaHTD", "startupDth", "lambdaDth")


@dataclass(frozen=True)
class _Staging:
    """A direction's pageable staging pair (pcie_link.js `pageableStaging`)."""

    startup: float | None
    bandwidth: float | None


class PcieLinkTwin(JsTwin):
    """The built-in "PCIe link": eq 4.6 per direction, pageable copies at min(link, staging)."""

    shipped = "builtin:PCIe link"
    defines = frozenset(
        {"linkAttribute", "pcieLink", "pageableStaging", "directionTime", "p2pTime"}
    )

    def __init__(self, attributes: Mapping[str, object]) -> None:
        super().__init__(attributes)
        # p2pTime reads the whole link first (pcieLink): a missing attribute or a half pair
        # throws for every call, with the message V8 gives.
        self.refused = any(name not in attributes for name in PCIE_LINK_ATTRIBUTES)
        self.links: dict[str, tuple[float | None, float | None, _Staging | None]] = {}
        bandwidth = _present(attributes, "bandwidth")
        for direction, suffix in (("HostToDevice", "HTD"), ("DeviceToHost", "Dth")):
            lambda_c = _present(attributes, "lambda" + suffix)
            rate = None if bandwidth is None or lambda_c is None else bandwidth * lambda_c
            self.links[direction] = (
                _present(attributes, "startup" + suffix),
                rate,
                self._staging(attributes, suffix),
            )

    def _staging(self, attributes: Mapping[str, object], suffix: str) -> _Staging | None:
        startup, bandwidth = "pageableStartup" + suffix, "pageableBandwidth" + suffix
        if startup not in attributes and bandwidth not in attributes:
            return None
        if startup not in attributes or bandwidth not in attributes:
            self.refused = True
            return None
        return _Staging(_present(attributes, startup), _present(attributes, bandwidth))

    def call(self, function: str, args: tuple[object, ...], params: Mapping[str, object]) -> float:
        if function != "p2pTime" or len(args) != 1 or self.refused:
            raise Decline
        values = js_params(params)
        host_memory = values.get("hostMemory", "pageable")
        if host_memory != "pageable" and host_memory != "pinned":
            raise Decline
        size = js_number(args[0])
        direction = values.get("direction")
        if direction is None:
            if size == 0:
                return 0.0
            raise Decline
        link = self.links.get(direction) if type(direction) is str else None
        if link is None:
            raise Decline
        startup, rate, staging = link
        # directionTime (4.6) or (4.6p)
        if host_memory == "pinned" or staging is None:
            return _use(startup) + size / _use(rate)
        return _use(staging.startup) + size / _min(_use(rate), _use(staging.bandwidth))


class LatencyBandwidthLinkTwin(JsTwin):
    """The built-in "Latency-bandwidth link": latency + size / bandwidth."""

    shipped = "builtin:Latency-bandwidth link"
    defines = frozenset({"p2pTime"})

    def __init__(self, attributes: Mapping[str, object]) -> None:
        super().__init__(attributes)
        self.latency = _present(attributes, "latency")
        self.bandwidth = _present(attributes, "bandwidth")

    def call(self, function: str, args: tuple[object, ...], params: Mapping[str, object]) -> float:
        if function != "p2pTime" or len(args) != 1:
            raise Decline
        js_params(params)  # only to decline what JSON refuses
        return _use(self.latency) + js_number(args[0]) / _use(self.bandwidth)


class CpuTwin(JsTwin):
    """The built-in "CPU": flops / (threads x clock x flops per cycle x efficiency)."""

    shipped = "builtin:CPU"
    defines = frozenset({"computationTime"})

    def __init__(self, attributes: Mapping[str, object]) -> None:
        super().__init__(attributes)
        self.cores = _present(attributes, "cores")
        self.core_clock = _present(attributes, "coreClock")
        self.flops_per_cycle = _present(attributes, "flopsPerCycle")

    def call(self, function: str, args: tuple[object, ...], params: Mapping[str, object]) -> float:
        if function != "computationTime" or args:
            raise Decline
        values = js_params(params)
        cores = _use(self.cores)
        threads = _min(js_number(values.get("threads", cores)), cores)
        efficiency = js_number(values.get("efficiency", 1.0))
        if not (threads > 0) or not (efficiency > 0):
            raise Decline
        # left to right, as the JavaScript multiplies
        return _required(values, "flops") / (
            threads * _use(self.core_clock) * 1e6 * _use(self.flops_per_cycle) * efficiency
        )


class PowerStatesTwin(JsTwin):
    """The built-in "Power states": idle, or linear between idle and loaded by params.load."""

    shipped = "builtin:Power states"
    defines = frozenset({"power"})

    def __init__(self, attributes: Mapping[str, object]) -> None:
        super().__init__(attributes)
        self.idle = _present(attributes, "powerIdle")
        self.loaded = _present(attributes, "powerConsumptionLoad")

    def call(self, function: str, args: tuple[object, ...], params: Mapping[str, object]) -> float:
        if function != "power" or len(args) != 1 or type(args[0]) is not str:
            raise Decline
        values = js_params(params)
        if args[0] == "idle":
            return _use(self.idle)
        if args[0] != "active":
            raise Decline
        load = js_number(values.get("load", 1.0))
        if not (load >= 0 and load <= 1):
            raise Decline
        idle = _use(self.idle)
        return idle + (_use(self.loaded) - idle) * load


class ReliabilityTwin(JsTwin):
    """The built-in "Reliability": failuresPerSecond, else 1 / mtbf, else 0."""

    shipped = "builtin:Reliability"
    defines = frozenset({"failureRate"})

    def call(self, function: str, args: tuple[object, ...], params: Mapping[str, object]) -> float:
        if function != "failureRate" or args:
            raise Decline
        js_params(params)
        if "failuresPerSecond" in self.attributes:
            return _use(_present(self.attributes, "failuresPerSecond"))
        if "mtbf" in self.attributes:
            mtbf = _use(_present(self.attributes, "mtbf"))
            if not (mtbf > 0):
                raise Decline
            return 1 / mtbf
        return 0.0


@dataclass(frozen=True)
class _OccupancyRules:
    """occupancy.js's `occupancyForLaunch` with the hardware's attributes read: what does not
    depend on the launch. None where an attribute makes every launch throw or coerce."""

    warp_size: float
    max_warps: float
    registers_per_sm: float
    shared_per_sm: float
    reserved: float
    max_threads_per_block: float
    registers_per_block: float
    max_registers: float
    max_shared_per_block: float
    register_unit: float
    partitions: float
    shared_unit: float
    max_blocks: float | None  # read after the launch's checks

    @classmethod
    def bind(cls, attributes: Mapping[str, object]) -> _OccupancyRules | None:
        cc = _attribute(attributes, "computeCapability")
        warp_size = _attribute(attributes, "warpSize", 32.0)
        max_warps = _attribute(attributes, "maxWarpsPerSM")
        registers_per_sm = _attribute(attributes, "registersPerSM")
        shared_per_sm = _attribute(attributes, "sharedMemPerSM")
        if None in (cc, warp_size, max_warps, registers_per_sm, shared_per_sm):
            return None
        assert cc is not None and registers_per_sm is not None and shared_per_sm is not None
        try:
            cc_text = _to_fixed_1(cc)
        except Decline:
            return None
        embedded = cc_text in ("2.0", "3.2", "5.3", "6.2")
        reserved = 1024.0 if cc >= 8 else 0.0
        default_shared = (
            48 * 1024.0 if cc < 7 else (shared_per_sm - reserved if cc >= 8 else shared_per_sm)
        )
        max_threads = _attribute(attributes, "maxThreadsPerBlock", 1024.0)
        registers_per_block = _attribute(
            attributes,
            "registersPerBlock",
            32768.0 if embedded else _min(registers_per_sm, 65536.0),
        )
        max_registers = _attribute(attributes, "maxRegistersPerThread", 63.0 if cc < 3.2 else 255.0)
        max_shared = _attribute(attributes, "maxSharedMemPerBlock", default_shared)
        if None in (max_threads, registers_per_block, max_registers, max_shared):
            return None
        assert warp_size is not None and max_warps is not None and max_threads is not None
        assert registers_per_block is not None and max_registers is not None
        assert max_shared is not None
        return cls(
            warp_size=warp_size,
            max_warps=max_warps,
            registers_per_sm=registers_per_sm,
            shared_per_sm=shared_per_sm,
            reserved=reserved,
            max_threads_per_block=max_threads,
            registers_per_block=registers_per_block,
            max_registers=max_registers,
            max_shared_per_block=max_shared,
            register_unit=64.0 if cc < 3 else 256.0,
            partitions=2.0 if (cc < 3 or cc_text == "6.0") else 4.0,
            shared_unit=128.0 if (cc < 3 or cc >= 8) else 256.0,
            max_blocks=_attribute(attributes, "maxBlocksPerSM"),
        )

    def active_warps(self, block_size: float, registers: float, shared_value: object) -> float:
        """Return `activeWarpsPerSM(blockSize, registersPerThread, sharedMemPerBlock)`."""
        if shared_value is None:  # `sharedMemPerBlock || 0`
            shared = 0.0
        else:
            shared = js_number(shared_value)
            if shared != shared or shared == 0:
                shared = 0.0
        if not (block_size >= 1 and block_size <= self.max_threads_per_block):
            raise Decline
        if not (registers >= 0 and registers <= self.max_registers):
            raise Decline
        if not (shared >= 0 and shared <= self.max_shared_per_block):
            raise Decline
        warps_per_block = _ceil(block_size / self.warp_size)
        # the first smallest limit, as the JavaScript's strict `<` picks it
        best = _floor(self.max_warps / warps_per_block)
        limit = _use(self.max_blocks)
        if limit < best:
            best = limit
        if registers > 0:
            registers_per_warp = _round_up(registers * self.warp_size, self.register_unit)
            if (
                registers_per_warp * _round_up(warps_per_block, self.partitions)
                > self.registers_per_block
            ):
                raise Decline
            per_partition = _floor(
                _floor(self.registers_per_sm / self.partitions) / registers_per_warp
            )
            limit = _floor(per_partition * self.partitions / warps_per_block)
            if limit < best:
                best = limit
        shared_allocated = shared + self.reserved
        if shared_allocated > 0:
            limit = _floor(self.shared_per_sm / _round_up(shared_allocated, self.shared_unit))
            if limit < best:
                best = limit
        return best * warps_per_block


# (name, instructions parameter, units attribute) of throughput_terms.js's optional terms
_UNIT_TERMS = (
    ("fp64", "FP64Instructions", "FP64Units"),
    ("sfu", "SFUInstructions", "SFUs"),
    ("shared_memory", "sharedMemoryInstructions", "LDSTUnits"),
)


class VolkovGpuTwin(JsTwin):
    """The built-in "Volkov GPU" (occupancy.js, throughput_terms.js, volkov_gpu.js)."""

    shipped = "builtin:Volkov GPU"
    defines = frozenset(
        {
            "occupancyAttribute",
            "roundUp",
            "occupancyForLaunch",
            "activeWarpsPerSM",
            "throughputTerms",
            "busiestTerm",
            "volkovAttribute",
            "volkovRequireAttributes",
            "volkovParam",
            "warpsLaunched",
            "gmemBandwidthPerSM",
            "throughputBusiest",
            "throughputBound",
            "volkovLaunch",
            "computationTime",
            "computationDetail",
        }
    )

    def __init__(self, attributes: Mapping[str, object]) -> None:
        super().__init__(attributes)
        self.warp_size = _attribute(attributes, "warpSize", 32.0)
        # `hw.SMs !== undefined ? hw.SMs : volkovAttribute('SMS')`
        self.sms = (
            _present(attributes, "SMs") if "SMs" in attributes else _attribute(attributes, "SMS")
        )
        sm_clock = _attribute(attributes, "SMCoreClock")
        self.sm_hz = None if sm_clock is None else sm_clock * 1e6
        self.cuda_cores = _attribute(attributes, "CUDACores")
        self.schedulers = _attribute(attributes, "schedulers")
        self.gmem_per_sm = self._gmem_bandwidth_per_sm(attributes)
        # (term, instructions parameter, whether the units attribute exists, its number)
        self.unit_terms = tuple(
            (name, instructions, units in attributes, _present(attributes, units))
            for name, instructions, units in _UNIT_TERMS
        )
        self.occupancy = _OccupancyRules.bind(attributes)

    def _gmem_bandwidth_per_sm(self, attributes: Mapping[str, object]) -> float | None:
        """Return `gmemBandwidthPerSM()` (4.5), bytes per SM per cycle."""
        if "GMEMThroughput" in attributes:
            return _present(attributes, "GMEMThroughput")
        memory_clock = _attribute(attributes, "memoryClock")
        bus_width = _attribute(attributes, "busWidth")
        data_rate = _attribute(attributes, "dataRate")
        if None in (self.sms, memory_clock, bus_width, data_rate, self.sm_hz):
            return None
        assert memory_clock is not None and bus_width is not None and data_rate is not None
        per_second = memory_clock * 1e6 * (bus_width / 8) * data_rate
        try:
            return per_second / (_use(self.sms) * _use(self.sm_hz))
        except ZeroDivisionError:
            return None

    def _launch(self, values: Mapping[str, object]) -> tuple[float, float, float, float, float]:
        """Return `volkovLaunch(params)`: warp size, block size, grid size, occupancy, lambda_k."""
        warp_size = _use(self.warp_size)
        block_size = _required(values, "blockSize")
        grid = values.get("gridSize")
        grid_size = _ceil(_required(values, "N") / block_size) if grid is None else js_number(grid)
        occupancy_value = values.get("occupancy")
        if occupancy_value is None:
            rules = self.occupancy
            if rules is None:
                raise Decline
            occupancy = rules.active_warps(
                block_size,
                _required(values, "registersPerThread"),
                values.get("sharedMemPerBlock", 0.0),
            )
        else:
            occupancy = js_number(occupancy_value)
        lambda_k = js_number(values.get("kernelExecutionLambda", 1.0))
        if not (block_size > 0) or not (occupancy > 0) or not (lambda_k > 0):
            raise Decline
        return warp_size, block_size, grid_size, occupancy, lambda_k

    def _busiest(self, values: Mapping[str, object], warp_size: float) -> tuple[str, float]:
        """Return `busiestTerm(throughputTerms(...))`: the busiest resource (the first of
        equals) and Th_bound (4.4) in warps per cycle."""
        bandwidth = _use(self.gmem_per_sm)
        name = "cuda_cores"
        busiest = warp_size * _required(values, "CUDACoreInstructions") / _use(self.cuda_cores)
        cycles = _required(values, "issuedInstructions") / _use(self.schedulers)
        if cycles > busiest:
            name, busiest = "schedulers", cycles
        cycles = _required(values, "GMEMBytesTransferred") / bandwidth
        if cycles > busiest:
            name, busiest = "global_memory", cycles
        for term, instructions, present, units in self.unit_terms:
            count = values.get(instructions, 0.0)
            if not present:
                if count is not None and js_number(count) > 0:
                    raise Decline  # the JavaScript throws: the hardware lacks the units
                continue
            cycles = warp_size * js_number(count) / _use(units)
            if cycles > busiest:
                name, busiest = term, cycles
        extra = values.get("extraCyclesPerWarp", ())
        if type(extra) not in (list, tuple):
            raise Decline
        for item in extra:  # type: ignore[attr-defined]
            cycles = js_number(item)
            if cycles > busiest:
                name, busiest = "extra", cycles
        return name, (1 / busiest if busiest > 0 else math.inf)

    def call(self, function: str, args: tuple[object, ...], params: Mapping[str, object]) -> float:
        if function != "computationTime" or args:
            raise Decline
        values = js_params(params)
        warp_size, block_size, grid_size, occupancy, lambda_k = self._launch(values)
        sms = _use(self.sms)
        latency_limited = occupancy / _required(values, "latencyBound")
        warp_throughput = _min(latency_limited, self._busiest(values, warp_size)[1])  # (4.3)
        warps_launched = grid_size * _ceil(block_size / warp_size)  # (4.2)
        return warps_launched / (warp_throughput * sms * _use(self.sm_hz) * lambda_k)  # (4.1)

    def detail(self, function: str, params: Mapping[str, object]) -> dict[str, object]:
        if function != "computationDetail":
            raise Decline
        values = js_params(params)
        warp_size, _, _, occupancy, _ = self._launch(values)
        name, bound = self._busiest(values, warp_size)
        latency_limited = occupancy / _required(values, "latencyBound")
        if not math.isfinite(occupancy):
            raise Decline  # the JavaScript's detail refuses a non-finite number
        return {
            "bound": "latency" if latency_limited < bound else name,
            "occupancy": _json_number(occupancy),
        }


# sha256 of each shipped source -> its twin. Kept here, beside the twins, and written out so
# that a changed source (or changed data generated into it) retires its twin; the tests check
# every digest against the shipped source and name the one that went stale.
JS_TWINS: dict[str, type[JsTwin]] = {
    "7967f8d7e322418920afb830d8d70a7e5e93403329501c0a4394baa1f18aa9fc": MerpsysGpuTwin,
    "003dd3ff161d156c24fa3c2e016a32cd9f5bdccb92fd647001bddc5aa782cf5f": MerpsysPcieTwin,
    "40ac93cf0a9ce19d983f8955b5a16eea13747037bc2a0cca957fa8cc5ea00480": VolkovGpuTwin,
    "af18e6d8324cc19dccd43d1dbab5e453b22e70efb6d270fac58a077073acf641": PcieLinkTwin,
    "daff63644e7fc8c361e2a9ac6f0579c227b9c0f0f6e545b1e36f625aa524146f": LatencyBandwidthLinkTwin,
    "70c57ed9655e780fb7acf7e4153b92b8682c30e689a9b4bbaeb569e7172d2503": CpuTwin,
    "e5ae7da559bca9c631b4924f5190207cdacbedd5f2d8cfdec05af52350a2217d": PowerStatesTwin,
    "0260699e5924e798b3d437339794edeab176885008964c0412e3be1e367892d1": ReliabilityTwin,
}
