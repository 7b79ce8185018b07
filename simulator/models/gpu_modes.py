"""The "petri" and "waves" kernel modes of a GPU node: 004's SM net and 003's block waves.

A GPU node whose `kernelMode` is "petri" or "waves" answers `sim.computation(params)` with
one of these instead of its model's closed formula; every other function (p2pTime, power,
failureRate) still comes from the node's own model. Both read the launch as the Volkov model
does (000 Listing 5): blockSize, gridSize or N, occupancy (warps per SM) or
registersPerThread (+ sharedMemPerBlock, through the occupancy calculator). As in the
detailed mode, the resident blocks per SM are floor(occupancy / warps per block), and

    waves = ceil(blocks / (SMs x resident blocks per SM))                 (003 eq. 4)
    T_k   = waves x T_wave                                                (003 eq. 4)

so both modes rise in 003 Fig. 2's staircase, one step per SMs x resident blocks. They
differ in T_wave, the time of one full wave:

* "petri" (`PetriKernelFunctions`): the SM net of 004 section 4 (`petri.simulate_sm`) run
  with the warps one SM holds in a wave (the resident blocks' warps; fewer when the grid
  does not fill one wave), each warp executing the same instruction counts;
  T_wave = steps x cyclesPerStep / SM clock. 004 says steps "correspond to the GPU
  execution time" and leaves the coefficient open (section 6): here a step is one SM
  clock cycle (SMCoreClock, MHz, as the Volkov model reads it) times `cyclesPerStep`.
  kernelExecutionLambda is not applied: it calibrates (4.1), `cyclesPerStep` calibrates
  the net. Parameters, besides the launch:

      arithmeticInstructions, sharedInstructions, globalInstructions
                      instructions per warp (the initial marking of p5, p7, p9); when none
                      is given they come from the Volkov parameters: arithmetic =
                      CUDACoreInstructions + FP64Instructions + SFUInstructions, shared =
                      sharedMemoryInstructions (rounded to whole instructions), global =
                      ceil(GMEMBytesTransferred / 128): one access per 128-byte
                      transaction (000 section 4.2), so strided re-issues count as accesses
      globalLatency   l1 in steps; else the hardware attribute globalLatency; else 20 (004)
      sharedLatency   l2 in steps; else the hardware attribute sharedLatency; else 2 (004)
      petriSeed       seed of the net's random permutations (default 0): a run's own seed
                      does not reach a computational model, so a kernel is reproducible
      petriRuns       runs averaged, seeds petriSeed, petriSeed + 1, ... (default 1; 004
                      averages 10, as `petri.mean_sm_steps`)
      cyclesPerStep   SM cycles per step (default 1)

  The warp schedulers (tokens of p0) are the hardware's `schedulers`.

* "waves" (`WaveKernelFunctions`): T_wave is the node's own computationTime evaluated for
  exactly one wave: the same parameters with gridSize = SMs x resident blocks (N dropped)
  and, when the parameters give occupancy, occupancy = resident blocks x warps per block,
  the whole blocks that actually reside. A node whose model defines no computationTime (or
  that has no model) uses the Volkov formula (`volkov.computation_time`) on its attributes.
  Where the grid is a whole number of waves and the occupancy a whole number of blocks the
  result equals the model's own time for (4.1)-type models, which are linear in the grid; a
  partial last wave costs a full one.

Runs are memoized per distinct parameters (the Petri net is seeded, so both are
deterministic). Bad input raises ModelEvaluationError naming the parameter.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from simulator.models import blocks, volkov
from simulator.models.kernel_mode import KernelModeFunctions, ModeEstimate
from simulator.models.petri import (
    DEFAULT_GLOBAL_LATENCY,
    DEFAULT_SHARED_LATENCY,
    InstructionCounts,
    simulate_sm,
)

if TYPE_CHECKING:
    pass

MHZ = 1e6
GLOBAL_TRANSACTION_BYTES = 128  # a warp's coalesced access of 4-byte elements (000, 4.2)
MAX_PETRI_INSTRUCTIONS = 1_000_000  # per kernel: warps x instructions per warp x runs
MAX_PETRI_RUNS = 100
MAX_LATENCY = 100_000
MAX_SCHEDULERS = 64
MAX_SEED = 2**31 - 1

MODE_ERRORS: dict[str, str] = {
    "number": "{name} must be a finite number, got {value!r}",
    "positive": "{name} must be a positive number, got {value!r}",
    "non_negative": "{name} must be a non-negative number, got {value!r}",
    "required": "parameter {name!r} is required by the {mode}",
    "grid": "give gridSize or N (the number of elements, one thread each)",
    "whole": "{name} must be a whole number from {low} to {high}, got {value!r}",
    "attribute": "hardware attribute {name!r} is required by the {mode}",
    "attributes": "hardware attributes {names} are required by the {mode}",
    "bad_attribute": "hardware attribute {name!r} must be a whole number from {low} to {high}, "
    "got {value!r}",
    "one_block": (
        "occupancy ({occupancy:g} warps/SM) is less than one block ({warps} warps): the {mode} "
        "places whole blocks"
    ),
    "no_counts": (
        "give the instructions per warp (arithmeticInstructions, sharedInstructions, "
        "globalInstructions) or the Volkov parameters CUDACoreInstructions and "
        "GMEMBytesTransferred"
    ),
    "no_instructions": (
        "a warp needs at least one instruction; arithmeticInstructions, sharedInstructions "
        "and globalInstructions are all 0"
    ),
    "too_large": (
        f"the Petri-net mode simulates at most {MAX_PETRI_INSTRUCTIONS} instructions per "
        "kernel, got {warps} warps x {per_warp} instructions x {runs} runs = {total}"
    ),
    "bad_time": "the node model's computationTime returned {value!r}, not a time in seconds",
}


# -- reading parameters and attributes ------------------------------------------------------


def _number(params: Mapping[str, object], name: str, default: float | None, mode: str) -> float:
    value = params.get(name, default)
    if value is None:
        raise ValueError(MODE_ERRORS["required"].format(name=name, mode=mode))
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        raise ValueError(MODE_ERRORS["number"].format(name=name, value=value))
    return float(value)


def _positive(params: Mapping[str, object], name: str, default: float | None, mode: str) -> float:
    value = _number(params, name, default, mode)
    if value <= 0:
        raise ValueError(MODE_ERRORS["positive"].format(name=name, value=params.get(name)))
    return value


def _whole(params: Mapping[str, object], name: str, default: int, low: int, high: int) -> int:
    value = params.get(name, default)
    whole = (
        not isinstance(value, bool)
        and isinstance(value, int | float)
        and math.isfinite(value)
        and value == int(value)
        and low <= value <= high
    )
    if not whole:
        raise ValueError(MODE_ERRORS["whole"].format(name=name, low=low, high=high, value=value))
    return int(value)  # type: ignore[call-overload]


def _attribute(attributes: Mapping[str, float], *names: str, mode: str) -> float:
    for name in names:
        if name in attributes:
            return float(attributes[name])
    raise ValueError(MODE_ERRORS["attribute"].format(name=names[0], mode=mode))


def _latency(
    params: Mapping[str, object], attributes: Mapping[str, float], name: str, default: int
) -> int:
    """Return a latency in steps: the parameter, else the hardware attribute, else 004's."""
    if params.get(name) is not None:
        return _whole(params, name, default, 1, MAX_LATENCY)
    value = attributes.get(name)
    if value is None:
        return default
    if value != int(value) or not 1 <= value <= MAX_LATENCY:
        raise ValueError(
            MODE_ERRORS["bad_attribute"].format(name=name, low=1, high=MAX_LATENCY, value=value)
        )
    return int(value)


# -- the launch: blocks, residency, waves ---------------------------------------------------


@dataclass(frozen=True)
class WaveLaunch:
    """A kernel launch as blocks over SMs: how many reside at once and how many waves."""

    sms: int
    blocks: int
    block_size: int
    warps_per_block: int
    occupancy: float  # warps per SM, as the parameters give it or the calculator computes
    resident_blocks: int  # floor(occupancy / warps per block)
    occupancy_given: bool

    @property
    def blocks_per_wave(self) -> int:
        """Return SMs x resident blocks per SM: one step of the staircase."""
        return self.sms * self.resident_blocks

    @property
    def waves(self) -> int:
        """Return ceil(blocks / blocks per wave) (`blocks.waves`)."""
        return int(blocks.waves(self.blocks, sms=self.sms, blocks_per_sm=self.resident_blocks))

    @property
    def tail_blocks(self) -> int:
        """Return the blocks of a partial last wave (0 when the last wave is full)."""
        return self.blocks % self.blocks_per_wave

    @property
    def resident_warps(self) -> int:
        """Return the warps of the resident blocks of one SM (whole blocks only)."""
        return self.resident_blocks * self.warps_per_block


def wave_launch(
    attributes: Mapping[str, float], params: Mapping[str, object], *, mode: str
) -> WaveLaunch:
    """Return the launch of `params` on the GPU `attributes`; ValueError naming what is bad."""
    sms = int(_attribute(attributes, "SMs", "SMS", mode=mode))
    warp_size = int(attributes.get("warpSize", volkov.WARP_SIZE))
    if sms < 1 or warp_size < 1:
        raise ValueError(MODE_ERRORS["attribute"].format(name="SMs", mode=mode))
    block_size = int(_positive(params, "blockSize", None, mode))
    if params.get("gridSize") is not None:
        grid = int(_positive(params, "gridSize", None, mode))
    elif params.get("N") is not None:
        grid = math.ceil(int(_positive(params, "N", None, mode)) / block_size)
    else:
        raise ValueError(MODE_ERRORS["grid"])
    warps_per_block = -(-block_size // warp_size)
    occupancy_given = params.get("occupancy") is not None
    if occupancy_given:
        occupancy = _positive(params, "occupancy", None, mode)
    else:
        registers = params.get("registersPerThread")
        occupancy = volkov.resident_warps(
            volkov.GpuHardware.from_attributes(attributes),
            block_size=block_size,
            registers_per_thread=None
            if registers is None
            else int(_number(params, "registersPerThread", None, mode)),
            shared_mem_per_block=int(_number(params, "sharedMemPerBlock", 0.0, mode)),
        )
    resident = int(occupancy // warps_per_block)
    if resident < 1:
        raise ValueError(
            MODE_ERRORS["one_block"].format(occupancy=occupancy, warps=warps_per_block, mode=mode)
        )
    return WaveLaunch(
        sms=sms,
        blocks=grid,
        block_size=block_size,
        warps_per_block=warps_per_block,
        occupancy=occupancy,
        resident_blocks=resident,
        occupancy_given=occupancy_given,
    )


# -- the Petri-net mode (004) ---------------------------------------------------------------

PETRI_MODEL_NAME = "Petri-net kernel mode"
WAVES_MODEL_NAME = "block-wave kernel mode"
_COUNT_NAMES = ("arithmeticInstructions", "sharedInstructions", "globalInstructions")


def warp_instructions(params: Mapping[str, object]) -> tuple[InstructionCounts, str]:
    """Return one warp's instruction counts and where they came from ("params" or "volkov")."""
    if any(params.get(name) is not None for name in _COUNT_NAMES):
        counts = [_whole(params, name, 0, 0, MAX_PETRI_INSTRUCTIONS) for name in _COUNT_NAMES]
        source = "params"
    elif params.get("CUDACoreInstructions") is None or params.get("GMEMBytesTransferred") is None:
        raise ValueError(MODE_ERRORS["no_counts"])
    else:

        def count(name: str) -> float:
            value = _number(params, name, 0.0, PETRI_MODEL_NAME)
            if value < 0:
                raise ValueError(MODE_ERRORS["non_negative"].format(name=name, value=value))
            return value

        arithmetic = sum(
            count(name) for name in ("CUDACoreInstructions", "FP64Instructions", "SFUInstructions")
        )
        counts = [
            round(arithmetic),
            round(count("sharedMemoryInstructions")),
            math.ceil(count("GMEMBytesTransferred") / GLOBAL_TRANSACTION_BYTES),
        ]
        source = "volkov"
    if sum(counts) == 0:
        raise ValueError(MODE_ERRORS["no_instructions"])
    return InstructionCounts(counts[0], counts[1], counts[2]), source


@dataclass(frozen=True)
class PetriKernel:
    """The kernel as the Petri-net mode runs it: one SM's warps in a wave, and the waves."""

    launch: WaveLaunch
    warp: InstructionCounts
    instruction_source: str
    warps: int  # warps on the busiest SM in a wave
    schedulers: int
    global_latency: int
    shared_latency: int
    seed: int
    runs: int
    sm_clock_hz: float
    cycles_per_step: float


def petri_kernel(attributes: Mapping[str, float], params: Mapping[str, object]) -> PetriKernel:
    """Return the Petri-net mode's kernel for `params` on `attributes`; ValueError if bad."""
    mode = PETRI_MODEL_NAME
    # Name every attribute the mode reads that is missing at once, not the first alone.
    missing = [
        names[0]
        for names in (("SMs", "SMS"), ("schedulers",), ("SMCoreClock",))
        if not any(name in attributes for name in names)
    ]
    if len(missing) > 1:
        names = ", ".join(repr(name) for name in missing)
        raise ValueError(MODE_ERRORS["attributes"].format(names=names, mode=mode))
    launch = wave_launch(attributes, params, mode=mode)
    warp, source = warp_instructions(params)
    # A grid smaller than one wave leaves each SM fewer blocks than it could hold.
    blocks_on_sm = min(launch.resident_blocks, -(-launch.blocks // launch.sms))
    warps = blocks_on_sm * launch.warps_per_block
    runs = _whole(params, "petriRuns", 1, 1, MAX_PETRI_RUNS)
    total = warps * warp.total * runs
    if total > MAX_PETRI_INSTRUCTIONS:
        raise ValueError(
            MODE_ERRORS["too_large"].format(
                warps=warps, per_warp=warp.total, runs=runs, total=total
            )
        )
    schedulers = _attribute(attributes, "schedulers", mode=mode)
    if schedulers != int(schedulers) or not 1 <= schedulers <= MAX_SCHEDULERS:
        raise ValueError(
            MODE_ERRORS["bad_attribute"].format(
                name="schedulers", low=1, high=MAX_SCHEDULERS, value=schedulers
            )
        )
    clock_mhz = _attribute(attributes, "SMCoreClock", mode=mode)
    if clock_mhz <= 0:
        raise ValueError(MODE_ERRORS["attribute"].format(name="SMCoreClock", mode=mode))
    return PetriKernel(
        launch=launch,
        warp=warp,
        instruction_source=source,
        warps=warps,
        schedulers=int(schedulers),
        global_latency=_latency(params, attributes, "globalLatency", DEFAULT_GLOBAL_LATENCY),
        shared_latency=_latency(params, attributes, "sharedLatency", DEFAULT_SHARED_LATENCY),
        seed=_whole(params, "petriSeed", 0, 0, MAX_SEED),
        runs=runs,
        sm_clock_hz=clock_mhz * MHZ,
        cycles_per_step=_positive(params, "cyclesPerStep", 1.0, mode),
    )


@dataclass(frozen=True)
class PetriEstimate:
    """The SM net's steps for one wave (mean over the runs) and the kernel time they give."""

    kernel: PetriKernel
    steps: float
    idle_steps: float

    @property
    def wave_time_s(self) -> float:
        """Return one wave's time: steps x cyclesPerStep / SM clock."""
        return self.steps * self.kernel.cycles_per_step / self.kernel.sm_clock_hz

    @property
    def time_s(self) -> float:
        """Return waves x the wave's time (`blocks.stepwise_runtime`)."""
        launch = self.kernel.launch
        return float(
            blocks.stepwise_runtime(
                launch.blocks,
                wave_time_s=self.wave_time_s,
                sms=launch.sms,
                blocks_per_sm=launch.resident_blocks,
            )
        )

    def detail(self) -> dict[str, Any]:
        """Return what the run page and the result JSON show for the kernel."""
        kernel, launch = self.kernel, self.kernel.launch
        return {
            "mode": "petri",
            "steps": self.steps,
            "idleSteps": self.idle_steps,
            "idleFraction": self.idle_steps / self.steps if self.steps else 0.0,
            "warpsPerSM": kernel.warps,
            "occupancy": launch.resident_warps,
            "residentBlocks": launch.resident_blocks,
            "blocksPerWave": launch.blocks_per_wave,
            "waves": launch.waves,
            "tailBlocks": launch.tail_blocks,
            "waveTime": self.wave_time_s,
            "arithmeticInstructions": kernel.warp.arithmetic,
            "sharedInstructions": kernel.warp.shared,
            "globalInstructions": kernel.warp.global_,
            "instructionSource": kernel.instruction_source,
            "schedulers": kernel.schedulers,
            "globalLatency": kernel.global_latency,
            "sharedLatency": kernel.shared_latency,
            "smClockMHz": kernel.sm_clock_hz / MHZ,
            "cyclesPerStep": kernel.cycles_per_step,
            "petriSeed": kernel.seed,
            "petriRuns": kernel.runs,
        }


def petri_estimate(attributes: Mapping[str, float], params: Mapping[str, object]) -> PetriEstimate:
    """Return the Petri-net mode's run of the launch `params` on the GPU `attributes`."""
    kernel = petri_kernel(attributes, params)
    warps = [kernel.warp] * kernel.warps
    steps = idle = 0
    for offset in range(kernel.runs):  # the seeds of `petri.mean_sm_steps`
        run = simulate_sm(
            warps,
            schedulers=kernel.schedulers,
            global_latency=kernel.global_latency,
            shared_latency=kernel.shared_latency,
            seed=kernel.seed + offset,
        )
        steps += run.steps
        idle += run.idle_steps
    return PetriEstimate(kernel=kernel, steps=steps / kernel.runs, idle_steps=idle / kernel.runs)


# -- the block-wave mode (003) --------------------------------------------------------------


@dataclass(frozen=True)
class WaveEstimate:
    """The kernel as whole waves of one wave's time, beside the model's time for the grid."""

    launch: WaveLaunch
    wave_time_s: float
    analytic_time_s: float
    wave_model: str  # "node model" or "Volkov formula"
    model_detail: Mapping[str, object]  # the node model's computationDetail for one wave

    @property
    def time_s(self) -> float:
        """Return waves x the wave's time (`blocks.stepwise_runtime`)."""
        return float(
            blocks.stepwise_runtime(
                self.launch.blocks,
                wave_time_s=self.wave_time_s,
                sms=self.launch.sms,
                blocks_per_sm=self.launch.resident_blocks,
            )
        )

    def detail(self) -> dict[str, Any]:
        """Return what the run page and the result JSON show for the kernel."""
        launch = self.launch
        detail: dict[str, Any] = {}
        if "bound" in self.model_detail:  # what bounds the wave, by the node's model
            detail["bound"] = self.model_detail["bound"]
        detail.update(
            mode="waves",
            occupancy=launch.resident_warps,
            residentBlocks=launch.resident_blocks,
            blocksPerWave=launch.blocks_per_wave,
            waves=launch.waves,
            tailBlocks=launch.tail_blocks,
            waveTime=self.wave_time_s,
            analyticTime=self.analytic_time_s,
            waveModel=self.wave_model,
        )
        return detail


def wave_params(launch: WaveLaunch, params: Mapping[str, object]) -> dict[str, object]:
    """Return `params` for exactly one full wave: gridSize = blocks per wave, N dropped, and
    the occupancy of the whole blocks that reside when the parameters give one."""
    one_wave = {key: value for key, value in params.items() if key != "N"}
    one_wave["gridSize"] = launch.blocks_per_wave
    if launch.occupancy_given:
        one_wave["occupancy"] = launch.resident_warps
    return one_wave


# -- the node's functions in these modes ----------------------------------------------------


class PetriKernelFunctions(KernelModeFunctions):
    """The "petri" mode: one wave is 004's SM net run for one SM's warps."""

    MODEL_NAME = PETRI_MODEL_NAME

    def _estimate(self, params: Mapping[str, object]) -> ModeEstimate:
        return petri_estimate(self.attributes, params)


class WaveKernelFunctions(KernelModeFunctions):
    """The "waves" mode: one wave is the node model's time for one wave's blocks."""

    MODEL_NAME = WAVES_MODEL_NAME

    def _estimate(self, params: Mapping[str, object]) -> ModeEstimate:
        launch = wave_launch(self.attributes, params, mode=self.MODEL_NAME)
        one_wave = wave_params(launch, params)
        inner = self.inner
        if inner is not None and inner.has("computationTime"):
            # The node model's own ModelEvaluationError (naming its function) passes through.
            wave_time = inner.call("computationTime", params=one_wave)
            analytic = inner.call("computationTime", params=params)
            detail = (
                inner.call_detail("computationDetail", params=one_wave)
                if inner.has("computationDetail")
                else {}
            )
            source = "node model"
        else:
            wave_time = volkov.computation_time(self.attributes, one_wave)
            analytic = volkov.computation_time(self.attributes, params)
            detail = {"bound": volkov.computation_estimate(self.attributes, one_wave).bound}
            source = "Volkov formula"
        for value in (wave_time, analytic):
            if not isinstance(value, int | float) or not math.isfinite(value) or value < 0:
                raise ValueError(MODE_ERRORS["bad_time"].format(value=value))
        return WaveEstimate(
            launch=launch,
            wave_time_s=float(wave_time),
            analytic_time_s=float(analytic),
            wave_model=source,
            model_detail=detail,
        )


KERNEL_MODE_FUNCTIONS: dict[str, type[KernelModeFunctions]] = {
    "petri": PetriKernelFunctions,
    "waves": WaveKernelFunctions,
}
