"""Energy models: component power states (MERPSYS, SimGrid) and block rounds of CUDA kernels (003).

`power_state_energy` integrates a linear power-state model over a run (docs/models.md 4a). The
block-round model of Boughzala et al. (003, section IV-C; docs/models.md 4b) predicts a kernel's
time and energy from its number of blocks NB:

    T(NB) = a * NB + b                                                            (1)
    E(NB) = E_b * NB + P_s * T(NB)                                                (3)
    T(NB) = T_r * ceil(NB / nbSMs),  T_r = a * nbSMs                              (4, 5)
    E(NB) = E_r * ceil(NB / nbSMs),  E_r = E_b * nbSMs + P_s * T_r                (6, 7)

003 takes nbSMs blocks per round; here a round holds every block resident at once,
SMs x active blocks per SM from the occupancy calculator (the K20Xm runs 28 blocks of 1024
threads per round, two per SM). With one resident block per SM this is 003's model exactly.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from simulator.models.occupancy import occupancy

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

    FloatArray = npt.NDArray[np.float64]
    Numeric = float | FloatArray
    ArrayLike = float | int | npt.ArrayLike

# NumPy is imported where the block-round model needs it: a simulation run uses only the
# scalar power-state functions, and a sandboxed run should not pay for importing NumPy.

ENERGY_ERRORS: dict[str, str] = {
    "negative_time": "times must be non-negative",
    "negative_power": "power values must be non-negative",
    "load_exceeds_run": "the integral of load cannot exceed the run's duration",
    "blocks": "the number of blocks must be a positive integer",
    "concurrent_blocks": "the blocks resident at once must be a positive integer",
    "state": "state must be 'idle' or 'active', got {state!r}",
    "load": "load must be between 0 and 1",
}


def power_state_energy(*, idle_w: float, active_w: float, total_s: float, loaded_s: float) -> float:
    """Return the energy in joules of a component over a run of `total_s` seconds.

    The component draws `idle_w` for the whole run plus `active_w - idle_w` times the integral
    of its load (a fraction in [0, 1]) over time, `loaded_s` (SimGrid's linear power states:
    idle at 0 % load, `active_w` at 100 %).
    """
    (energy,) = power_state_energies(
        idle_w=idle_w, active_w=active_w, total_s=total_s, loaded_s=(loaded_s,)
    )
    return energy


def power_state_energies(
    *, idle_w: float, active_w: float, total_s: float, loaded_s: Sequence[float]
) -> list[float]:
    """Return `power_state_energy` of each of the instances of one component, whose loads'
    integrals are `loaded_s` (a run's result: one row per instance)."""
    if total_s < 0 or any(loaded < 0 for loaded in loaded_s):
        raise ValueError(ENERGY_ERRORS["negative_time"])
    if idle_w < 0 or active_w < 0:
        raise ValueError(ENERGY_ERRORS["negative_power"])
    ceiling = total_s * (1 + 1e-9) + 1e-15
    if any(loaded > ceiling for loaded in loaded_s):
        raise ValueError(ENERGY_ERRORS["load_exceeds_run"])
    idle_j, excess_w = idle_w * total_s, active_w - idle_w
    return [idle_j + excess_w * loaded for loaded in loaded_s]


def kernel_energy(
    *, blocks: ArrayLike, time_s: ArrayLike, block_energy_j: float, active_idle_w: float
) -> Numeric:
    """Return a kernel's energy in joules on a current GPU (issue 11):

        E_k = E_b * NB + P_active_idle * T_k                                              (E.1)

    dynamic energy per block times blocks, plus the static power at the active clock
    (`powerActiveIdle`: a CUDA context alive, no kernel running) for the kernel's time T_k from
    `gpu_current`, whose waves and tail wave give partial rounds their real length. Unlike
    003's round model, a round of one block is not charged a whole round of dynamic energy:
    on the H100 one block per SM (132 of 264 slots) costs 0.021 J, not the 0.038 J of a round.
    """
    import numpy as np

    nb = np.asarray(blocks, dtype=np.float64)
    t = np.asarray(time_s, dtype=np.float64)
    if np.any(nb < 0):
        raise ValueError(ENERGY_ERRORS["blocks"])
    if np.any(t < 0):
        raise ValueError(ENERGY_ERRORS["negative_time"])
    if block_energy_j < 0 or active_idle_w < 0:
        raise ValueError(ENERGY_ERRORS["negative_power"])
    value = block_energy_j * nb + active_idle_w * t
    return float(value) if np.ndim(value) == 0 else value


def power_for_state(attributes: Mapping[str, float], state: str, load: float = 1.0) -> float:
    """Return the watts drawn in state "idle" (powerIdle) or "active" (linear in load up to
    powerConsumptionLoad), as the built-in `power.js` does."""
    idle = float(attributes["powerIdle"])
    if state == "idle":
        return idle
    if state != "active":
        raise ValueError(ENERGY_ERRORS["state"].format(state=state))
    if not 0 <= load <= 1:
        raise ValueError(ENERGY_ERRORS["load"])
    return idle + (float(attributes["powerConsumptionLoad"]) - idle) * load


def resident_blocks(
    *,
    sms: int,
    compute_capability: str | float,
    block_size: int,
    registers_per_thread: int,
    shared_mem_per_block: int = 0,
) -> int:
    """Return the blocks a GPU runs at once: SMs x active blocks per SM (occupancy calculator)."""
    per_sm = occupancy(
        compute_capability=compute_capability,
        block_size=block_size,
        registers_per_thread=registers_per_thread,
        shared_mem_per_block=shared_mem_per_block,
    ).active_blocks_per_sm
    return sms * per_sm


def rounds(blocks: ArrayLike, concurrent_blocks: int) -> Numeric:
    """Return ceil(NB / concurrent_blocks): the rounds (waves) needed for NB blocks."""
    import numpy as np

    if concurrent_blocks < 1:
        raise ValueError(ENERGY_ERRORS["concurrent_blocks"])
    nb = np.asarray(blocks, dtype=np.float64)
    if np.any(nb < 1):
        raise ValueError(ENERGY_ERRORS["blocks"])
    value = np.ceil(nb / concurrent_blocks)
    return float(value) if np.ndim(value) == 0 else value


@dataclass(frozen=True)
class BlockRoundModel:
    """003's kernel model: slope a [s/block], intercept b [s], E_b [J/block], P_s [W]."""

    slope_s: float
    block_energy_j: float
    static_power_w: float
    concurrent_blocks: int
    intercept_s: float = 0.0

    @property
    def round_time_s(self) -> float:
        """Return T_r (5) = a x blocks per round."""
        return self.slope_s * self.concurrent_blocks

    @property
    def round_energy_j(self) -> float:
        """Return E_r (7) = E_b x blocks per round + P_s x T_r."""
        return (
            self.block_energy_j * self.concurrent_blocks + self.static_power_w * self.round_time_s
        )

    @property
    def round_power_w(self) -> float:
        """Return P_r = E_r / T_r, the average power of a full round (SimGrid's loaded state)."""
        return self.round_energy_j / self.round_time_s

    def linear_time(self, blocks: ArrayLike) -> Numeric:
        """Return T(NB) = a NB + b (1)."""
        import numpy as np

        value = self.slope_s * np.asarray(blocks, dtype=np.float64) + self.intercept_s
        return float(value) if np.ndim(value) == 0 else value

    def linear_energy(self, blocks: ArrayLike) -> Numeric:
        """Return E(NB) = E_b NB + P_s T(NB) (3)."""
        import numpy as np

        nb = np.asarray(blocks, dtype=np.float64)
        value = self.block_energy_j * nb + self.static_power_w * np.asarray(self.linear_time(nb))
        return float(value) if np.ndim(value) == 0 else value

    def time(self, blocks: ArrayLike) -> Numeric:
        """Return T(NB) = T_r ceil(NB / blocks per round) (4)."""
        return self.round_time_s * rounds(blocks, self.concurrent_blocks)

    def energy(self, blocks: ArrayLike) -> Numeric:
        """Return E(NB) = E_r ceil(NB / blocks per round) (6)."""
        return self.round_energy_j * rounds(blocks, self.concurrent_blocks)


# --- Accountings (issue 45) --------------------------------------------------------------
#
# One run's energy is counted one way for all its components (`WHOLE_RUN`); the papers'
# figures are kept under their own names and are never added to or compared with it.

# The record's E_b [J per block] (E.1, 003's eq. 3), which calibration writes (simulator.calibrate)
BLOCK_ENERGY_ATTRIBUTE = "blockEnergy"

WHOLE_RUN = "whole_run"
KERNEL_LOAD_000 = "kernel_load_000"
BLOCK_ROUND_003 = "block_round_003"

ACCOUNTINGS: dict[str, str] = {
    WHOLE_RUN: (
        "every component over the whole run by its power states: its base power (a GPU that "
        "runs processes: active idle, a CUDA context alive; any other component: idle) for the "
        "run's time, plus (load - base) x its load's integral, or for a GPU whose record gives "
        "the energy per block, E.1's energy per block x blocks of each kernel"
    ),
    KERNEL_LOAD_000: (
        "seed 000 (MERPSYS): load power x the time the component was loaded, nothing while "
        "idle (the GTX 970's 168 W x the kernel's time)"
    ),
    BLOCK_ROUND_003: (
        "seed 003 (Boughzala et al.): E_r x rounds of each kernel, E_r = E_b x blocks per round "
        "+ P_s x T_r (BlockRoundModel), the kernel alone"
    ),
}

# Measured idle and load (TDP) power of the GPU records whose idle power is measured: 003's
# two GPUs (003 section IV-B, Table I) and this project's kit (validation/data, `powerIdle`
# and `powerActiveIdle` of the H100 and H200 records). A record without an idle power gets
# the mean ratio of these (fitted, so labelled estimated wherever it is used).
MEASURED_GPU_IDLE: tuple[tuple[str, float, float], ...] = (
    ("Tesla M2075", 29.4, 225.0),
    ("Tesla K20Xm", 19.18, 235.0),
    ("H100 SXM5 80GB", 70.7, 700.0),
    ("H200 SXM 141GB", 79.54, 700.0),
)
MEASURED_GPU_ACTIVE_IDLE: tuple[tuple[str, float, float], ...] = (
    ("H100 SXM5 80GB", 119.6, 70.7),
    ("H200 SXM 141GB", 123.5, 79.54),
)
# Idle package power of one Xeon Platinum 8380 socket (about 25 W of its 270 W TDP), measured
# by Hardwareluxx (https://hardwareluxx.de/index.php/artikel/hardware/prozessoren/56010-zwei-intel-xeon-platinum-8380-gegen-die-vorgaenger-im-test.html?start=10).
MEASURED_CPU_IDLE: tuple[tuple[str, float, float], ...] = (
    ("Intel Xeon Platinum 8380", 25.0, 270.0),
)


def _mean_ratio(rows: Sequence[tuple[str, float, float]]) -> float:
    return sum(value / reference for _, value, reference in rows) / len(rows)


GPU_IDLE_FRACTION = round(_mean_ratio(MEASURED_GPU_IDLE), 4)
GPU_ACTIVE_IDLE_RATIO = round(_mean_ratio(MEASURED_GPU_ACTIVE_IDLE), 4)
CPU_IDLE_FRACTION = round(_mean_ratio(MEASURED_CPU_IDLE), 4)

ESTIMATION_RULES: dict[str, str] = {
    "gpu_idle": (
        f"estimated: powerIdle = {GPU_IDLE_FRACTION} x powerConsumptionLoad, the mean "
        "idle/TDP ratio of the GPUs with measured idle power (M2075 and K20Xm from 003, H100 "
        "and H200 from the validation kit)"
    ),
    "gpu_active_idle": (
        f"estimated: powerActiveIdle = {GPU_ACTIVE_IDLE_RATIO} x powerIdle, the mean "
        "active-idle/idle ratio measured by the validation kit on the H100 and H200"
    ),
    "cpu_idle": (
        f"estimated: powerIdle = {CPU_IDLE_FRACTION} x powerConsumptionLoad (TDP), the idle "
        "package power of a Xeon Platinum 8380 measured by Hardwareluxx over its TDP"
    ),
    "load_is_idle": "estimated: no load power in the record, the idle power counted under load",
    "none": "estimated: no power attribute in the record, 0 W counted",
}


@dataclass(frozen=True)
class PowerStates:
    """A component's power states for the whole-run accounting, with what was estimated.

    `base_w` is what it draws through the run when not loaded (`base_state`: "active idle"
    for a GPU that runs processes, else "idle"); `load_w` at full load; `off_w` where the
    record defines an off state (listed, never charged: no run switches a component off);
    `block_energy_j` E.1's energy per block where the record gives it. `estimated` pairs
    each estimated state with the rule used (ESTIMATION_RULES); `source` says whether the
    record's attributes or the node's model's `power` function gave the states."""

    idle_w: float
    base_w: float
    base_state: str
    load_w: float
    active_idle_w: float | None = None
    off_w: float | None = None
    block_energy_j: float | None = None
    estimated: tuple[tuple[str, str], ...] = ()
    source: str = "record"  # or "model": the node's model's `power` function gave them


def power_states(
    attributes: Mapping[str, object], component_type: str, *, runs_processes: bool
) -> PowerStates:
    """Return the power states of a component from its record's attributes, estimating the
    missing ones by ESTIMATION_RULES (the result names each estimated state and its rule)."""

    def number(key: str) -> float | None:
        value = attributes.get(key)
        if isinstance(value, bool) or not isinstance(value, int | float):
            return None
        return float(value)

    estimated: list[tuple[str, str]] = []
    idle, load = number("powerIdle"), number("powerConsumptionLoad")
    is_gpu, is_cpu = component_type == "GPU", component_type == "CPU"
    if idle is None and load is not None and (is_gpu or is_cpu):
        rule = "gpu_idle" if is_gpu else "cpu_idle"
        idle = (GPU_IDLE_FRACTION if is_gpu else CPU_IDLE_FRACTION) * load
        estimated.append(("powerIdle", ESTIMATION_RULES[rule]))
    if idle is None and load is None:
        estimated.append(("powerIdle", ESTIMATION_RULES["none"]))
        estimated.append(("powerConsumptionLoad", ESTIMATION_RULES["none"]))
        idle = load = 0.0
    elif idle is None:
        estimated.append(("powerIdle", ESTIMATION_RULES["none"]))
        idle = 0.0
    elif load is None:
        estimated.append(("powerConsumptionLoad", ESTIMATION_RULES["load_is_idle"]))
        load = idle
    assert load is not None
    active_idle = number("powerActiveIdle")
    if is_gpu and active_idle is None and idle > 0:
        active_idle = min(GPU_ACTIVE_IDLE_RATIO * idle, max(load, idle))
        estimated.append(("powerActiveIdle", ESTIMATION_RULES["gpu_active_idle"]))
    use_active = is_gpu and runs_processes and active_idle is not None
    block_energy = number(BLOCK_ENERGY_ATTRIBUTE)
    return PowerStates(
        idle_w=idle,
        base_w=active_idle if use_active and active_idle is not None else idle,
        base_state="active idle" if use_active else "idle",
        load_w=load,
        active_idle_w=active_idle,
        off_w=number("powerOff"),
        block_energy_j=block_energy if block_energy is not None and block_energy >= 0 else None,
        estimated=tuple(estimated),
    )


def kernel_load_energy(*, load_w: float, loaded_s: float) -> float:
    """Return seed 000's figure: load power x the time loaded, nothing while idle."""
    return kernel_load_energies(load_w=load_w, loaded_s=(loaded_s,))[0]


def kernel_load_energies(*, load_w: float, loaded_s: Sequence[float]) -> list[float]:
    """Return `kernel_load_energy` of each of the instances of one component, whose loads'
    integrals are `loaded_s` (a run's result: one row per instance, one call per component)."""
    if loaded_s and load_w < 0:  # no instance, no figure to refuse
        raise ValueError(ENERGY_ERRORS["negative_power"])
    if any(loaded < 0 for loaded in loaded_s):
        raise ValueError(ENERGY_ERRORS["negative_time"])
    return [load_w * loaded for loaded in loaded_s]


def whole_run_e1_energy(
    *, active_idle_w: float, total_s: float, block_energy_j: float, blocks: float
) -> float:
    """Return a GPU's whole-run energy with E.1 for its kernels: active-idle power over the
    run (which covers E.1's P_active_idle x T_k of every kernel) plus E_b x all blocks."""
    if total_s < 0:
        raise ValueError(ENERGY_ERRORS["negative_time"])
    if blocks < 0:
        raise ValueError(ENERGY_ERRORS["blocks"])
    if active_idle_w < 0 or block_energy_j < 0:
        raise ValueError(ENERGY_ERRORS["negative_power"])
    # E.1 in scalars (`kernel_energy` takes arrays and loads NumPy, which a run does not)
    return block_energy_j * blocks + active_idle_w * total_s
