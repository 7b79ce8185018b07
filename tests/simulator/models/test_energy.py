"""Energy: power states and 003's block-round kernel model (docs/models.md 4)."""

from __future__ import annotations

import numpy as np
import pytest

from simulator.models.energy import (
    ENERGY_ERRORS,
    BlockRoundModel,
    power_for_state,
    power_state_energies,
    power_state_energy,
    resident_blocks,
    rounds,
)

M2075_SMS = 14
K20XM_SMS = 14
M2075_IDLE_W = 29.4
M2075_ROUND_W = 153.65


def test_power_state_energy_is_idle_over_the_run_plus_the_loaded_excess():
    # GTX 970 record: 168 W loaded; busy 2 s of a 10 s run at 20 W idle.
    assert power_state_energy(idle_w=20, active_w=168, total_s=10, loaded_s=2) == pytest.approx(
        20 * 10 + 148 * 2
    )
    assert power_state_energy(idle_w=20, active_w=168, total_s=10, loaded_s=0) == 200


def test_power_state_energy_rejects_more_load_than_the_run():
    with pytest.raises(ValueError, match=ENERGY_ERRORS["load_exceeds_run"]):
        power_state_energy(idle_w=1, active_w=2, total_s=1, loaded_s=2)


def test_power_for_state_is_linear_in_load():
    attributes = {"powerIdle": 29.4, "powerConsumptionLoad": 153.65}
    assert power_for_state(attributes, "idle") == 29.4
    assert power_for_state(attributes, "active") == 153.65
    assert power_for_state(attributes, "active", 0.5) == pytest.approx((29.4 + 153.65) / 2)
    with pytest.raises(ValueError, match="state must be"):
        power_for_state(attributes, "off")


def test_the_k20xm_runs_28_blocks_of_1024_threads_per_round_and_the_m2075_14():
    assert (
        resident_blocks(
            sms=K20XM_SMS, compute_capability="3.5", block_size=1024, registers_per_thread=16
        )
        == 28
    )
    assert (
        resident_blocks(
            sms=M2075_SMS, compute_capability="2.0", block_size=1024, registers_per_thread=16
        )
        == 14
    )


def test_rounds_step_every_28_blocks_on_the_k20xm():
    nb = np.arange(1, 86)
    steps = np.flatnonzero(np.diff(rounds(nb, 28))) + 2  # NB where the round count rises
    assert steps.tolist() == [29, 57, 85]


def test_the_block_round_model_reproduces_the_m2075_reference_round_power():
    # Fig. 3: P_s = 29.4 W idle, P_r = 153.65 W for a round of 14 blocks. With T_r = 14 a,
    # E_r = P_r T_r requires E_b = (P_r - P_s) a.
    slope = 2e-3
    model = BlockRoundModel(
        slope_s=slope,
        block_energy_j=(M2075_ROUND_W - M2075_IDLE_W) * slope,
        static_power_w=M2075_IDLE_W,
        concurrent_blocks=M2075_SMS,
    )
    assert model.round_time_s == pytest.approx(14 * slope)
    assert model.round_power_w == pytest.approx(153.65)
    assert model.time(14) == model.time(1)
    assert model.time(15) == pytest.approx(2 * model.round_time_s)
    assert model.energy(15) == pytest.approx(2 * model.round_energy_j)


def test_the_round_model_equals_the_linear_model_at_full_rounds():
    model = BlockRoundModel(
        slope_s=1e-3, block_energy_j=0.2, static_power_w=19.18, concurrent_blocks=28
    )
    for nb in (28, 56, 280):
        assert model.time(nb) == pytest.approx(model.linear_time(nb))
        assert model.energy(nb) == pytest.approx(model.linear_energy(nb))


def test_round_energy_follows_equation_7():
    model = BlockRoundModel(
        slope_s=1e-3, block_energy_j=0.5, static_power_w=20.0, concurrent_blocks=10
    )
    assert model.round_energy_j == pytest.approx(0.5 * 10 + 20.0 * 1e-2)


def test_rounds_reject_empty_kernels():
    with pytest.raises(ValueError, match=ENERGY_ERRORS["blocks"]):
        rounds(0, 14)


def test_the_energies_of_a_components_instances_are_each_ones_energy():
    loads = [0.0, 1.5, 2.0, 10.0 * (1 + 1e-10)]
    energies = power_state_energies(idle_w=20, active_w=168, total_s=10, loaded_s=loads)
    assert energies == [
        power_state_energy(idle_w=20, active_w=168, total_s=10, loaded_s=load) for load in loads
    ]
    # the checks in power_state_energy's order: a negative load before a negative power
    with pytest.raises(ValueError) as one:
        power_state_energy(idle_w=-1, active_w=2, total_s=1, loaded_s=-1.0)
    with pytest.raises(ValueError) as each:
        power_state_energies(idle_w=-1, active_w=2, total_s=1, loaded_s=[0.5, -1.0])
    assert str(each.value) == str(one.value)
    with pytest.raises(ValueError):
        power_state_energies(idle_w=1, active_w=2, total_s=1, loaded_s=[0.5, 2.0])
