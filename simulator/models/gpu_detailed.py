"""The detailed kernel mode of a GPU node: a computation's parameters to a block-level run.

A GPU node whose `kernelMode` is "detailed" answers `sim.computation(params)` with the
block-level simulation of `kernel_sim` instead of the closed formula (4.1). It reads the
same parameters as the built-in Volkov model (000 Listing 5; `volkov.computation_estimate`):
CUDACoreInstructions, issuedInstructions, GMEMBytesTransferred, latencyBound, gridSize or N,
blockSize, occupancy or registersPerThread (+ sharedMemPerBlock), kernelExecutionLambda and
the optional FP64 / SFU / shared-memory counts. The warp's busiest resource and its
dependent latency come from (4.4) and Lat_bound, so both modes share one set of inputs;
the detailed mode adds:

    segmentsPerWarp     segments a warp's work is cut into (default 16; more segments
                        interleave warps more finely and cost proportionally more time)
    blockWork           per-block work multipliers, cycled over the grid (imbalance)
    blockWorkSpread     s in [0, 1): block work 1 + s * u, u uniform in [-1, 1) ...
    blockWorkSeed       ... drawn from this seed (default 0), so a run is reproducible
    blockLaunchCycles   cycles from a slot freeing to the new block's warps arriving

The resident blocks per SM are floor(occupancy / warps per block): the detailed mode places
whole blocks, so an occupancy that is not a multiple of a block's warps is rounded down and
the result says so (`residentWarps`). lambda_k divides the simulated time as it divides (4.1).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from simulator.models import volkov
from simulator.models.kernel_mode import KernelModeFunctions
from simulator.models.kernel_sim import (
    DEFAULT_SEGMENTS,
    MAX_BLOCK_WORK,
    MAX_SEGMENTS,
    DetailedKernel,
    DetailedRun,
    available_cores,
    simulate_kernel,
    spread_work,
)

if TYPE_CHECKING:
    from simulator.platform import ModelFunctions

MODEL_NAME = "detailed kernel mode"

DETAILED_ERRORS: dict[str, str] = {
    "one_block": (
        "occupancy ({occupancy:g} warps/SM) is less than one block ({warps} warps): the "
        "detailed mode places whole blocks"
    ),
    "segments": f"segmentsPerWarp must be a whole number from 1 to {MAX_SEGMENTS}, got {{value!r}}",
    "block_work": (
        f"blockWork must be a list of at most {MAX_BLOCK_WORK} positive numbers, got {{value!r}}"
    ),
    "number": "{name} must be a finite number, got {value!r}",
    "launch": "blockLaunchCycles must be a non-negative number of cycles, got {value!r}",
}


@dataclass(frozen=True)
class DetailedEstimate:
    """A detailed kernel run beside the analytic estimate of the same launch."""

    kernel: DetailedKernel
    run: DetailedRun
    analytic: volkov.KernelEstimate
    sm_clock_hz: float
    lambda_k: float

    @property
    def time_s(self) -> float:
        """Return the kernel time: simulated cycles / (SM clock x lambda_k)."""
        return self.run.cycles / (self.sm_clock_hz * self.lambda_k)

    def detail(self) -> dict[str, Any]:
        """Return what the run page and the result JSON show for the kernel."""
        busy = self.run.busy_fractions
        ends = [sm.end_cycles for sm in self.run.sms]
        mean_end = sum(ends) / len(ends) if ends else 0.0
        return {
            "mode": "detailed",
            "bound": self.analytic.bound,
            "occupancy": self.kernel.resident_blocks * self.kernel.warps_per_block,
            "residentBlocks": self.kernel.resident_blocks,
            "blocksPerWave": self.kernel.blocks_per_wave,
            "waves": self.kernel.waves,
            "tailBlocks": self.kernel.blocks % self.kernel.blocks_per_wave,
            "analyticTime": self.analytic.time_s,
            "kernelCycles": self.run.cycles,
            "smBusyMin": min(busy, default=0.0),
            "smBusyMean": sum(busy) / len(busy) if busy else 0.0,
            "smBusyMax": max(busy, default=0.0),
            "smImbalance": (max(ends) / mean_end) if mean_end > 0 else 1.0,
            "smBusy": [round(value, 6) for value in busy],
            "smBlocks": [sm.blocks for sm in self.run.sms],
            "rounds": self.run.rounds,
            "workers": self.run.workers,
        }


def _number(params: Mapping[str, object], name: str, default: float) -> float:
    value = params.get(name, default)
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        raise ValueError(DETAILED_ERRORS["number"].format(name=name, value=value))
    return float(value)


def _block_work(params: Mapping[str, object], blocks: int) -> tuple[float, ...]:
    raw = params.get("blockWork")
    if raw is not None:
        if not isinstance(raw, list | tuple) or not raw or len(raw) > MAX_BLOCK_WORK:
            raise ValueError(DETAILED_ERRORS["block_work"].format(value=_short(raw)))
        values = []
        for item in raw:
            if isinstance(item, bool) or not isinstance(item, int | float):
                raise ValueError(DETAILED_ERRORS["block_work"].format(value=_short(raw)))
            if not math.isfinite(item) or item <= 0:
                raise ValueError(DETAILED_ERRORS["block_work"].format(value=_short(raw)))
            values.append(float(item))
        return tuple(values)
    spread = _number(params, "blockWorkSpread", 0.0)
    if spread == 0.0:
        return ()
    seed = int(_number(params, "blockWorkSeed", 0.0))
    return spread_work(min(blocks, MAX_BLOCK_WORK), spread, seed)


def _launch_cycles(params: Mapping[str, object]) -> float:
    value = _number(params, "blockLaunchCycles", 0.0)
    if value < 0:
        raise ValueError(DETAILED_ERRORS["launch"].format(value=value))
    return value


def _short(value: object) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def detailed_kernel(
    attributes: Mapping[str, float | str], params: Mapping[str, object]
) -> tuple[DetailedKernel, volkov.KernelEstimate, volkov.GpuHardware]:
    """Return the launch as the detailed mode simulates it, the analytic estimate, the GPU."""
    analytic = volkov.computation_estimate(attributes, params)  # type: ignore[arg-type]
    hardware = volkov.GpuHardware.from_attributes(attributes)
    profile = volkov.profile_from_params(params, model=MODEL_NAME)
    service = max(cycles for _, cycles in volkov.throughput_terms(hardware, profile))
    block_size = int(_number(params, "blockSize", 0.0))
    warps_per_block = -(-block_size // hardware.warp_size)
    resident = int(analytic.occupancy // warps_per_block)
    if resident < 1:
        raise ValueError(
            DETAILED_ERRORS["one_block"].format(occupancy=analytic.occupancy, warps=warps_per_block)
        )
    segments = params.get("segmentsPerWarp", DEFAULT_SEGMENTS)
    if (
        isinstance(segments, bool)
        or not isinstance(segments, int | float)
        or segments != int(segments)
        or not 1 <= segments <= MAX_SEGMENTS
    ):
        raise ValueError(DETAILED_ERRORS["segments"].format(value=segments))
    kernel = DetailedKernel(
        sms=hardware.sms,
        resident_blocks=resident,
        warps_per_block=warps_per_block,
        blocks=analytic.grid_size,
        service_cycles=service,
        latency_cycles=profile.latency_bound,
        segments=int(segments),
        block_launch_cycles=_launch_cycles(params),
        block_work=_block_work(params, analytic.grid_size),
    )
    return kernel, analytic, hardware


def detailed_estimate(
    attributes: Mapping[str, float | str],
    params: Mapping[str, object],
    *,
    workers: int = 1,
    record_placements: bool = False,
) -> DetailedEstimate:
    """Return the block-level simulation of the launch `params` on the GPU `attributes`."""
    kernel, analytic, hardware = detailed_kernel(attributes, params)
    run = simulate_kernel(kernel, workers=workers, record_placements=record_placements)
    return DetailedEstimate(
        kernel=kernel,
        run=run,
        analytic=analytic,
        sm_clock_hz=hardware.sm_clock_hz,
        lambda_k=_number(params, "kernelExecutionLambda", 1.0),
    )


class DetailedKernelFunctions(KernelModeFunctions):
    """The detailed mode: `computationTime` and `computationDetail` from the block-level
    simulation, over `workers` processes (at most the cores the run may use)."""

    MODEL_NAME = MODEL_NAME

    def __init__(
        self,
        attributes: Mapping[str, float],
        inner: ModelFunctions | None,
        *,
        workers: int = 1,
    ) -> None:
        super().__init__(attributes, inner)
        self.workers = max(1, min(workers, available_cores()))

    def _estimate(self, params: Mapping[str, object]) -> DetailedEstimate:
        return detailed_estimate(self.attributes, params, workers=self.workers)
