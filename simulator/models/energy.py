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
