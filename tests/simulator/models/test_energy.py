"""Energy: power states and 003's block-round kernel model (docs/models.md 4)."""

from __future__ import annotations

import numpy as np
import pytest

from simulator.models.energy import (
    CPU_IDLE_FRACTION,
    ENERGY_ERRORS,
    ESTIMATION_RULES,
    GPU_ACTIVE_IDLE_RATIO,
    GPU_IDLE_FRACTION,
    BlockRoundModel,
    kernel_energy,
    kernel_load_energies,
    kernel_load_energy,
    power_for_state,
    power_state_energies,
    power_state_energy,
    power_states,
    resident_blocks,
    rounds,
    whole_run_e1_energy,
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


def test_the_estimation_ratios_are_the_means_of_the_measured_records() -> None:
    # idle/TDP: M2075 29.4/225, K20Xm 19.18/235 (003), H100 70.7/700, H200 79.54/700 (kit)
    assert round((29.4 / 225 + 19.18 / 235 + 70.7 / 700 + 79.54 / 700) / 4, 4) == GPU_IDLE_FRACTION
    # active idle / idle: H100 119.6/70.7, H200 123.5/79.54 (kit)
    assert round((119.6 / 70.7 + 123.5 / 79.54) / 2, 4) == GPU_ACTIVE_IDLE_RATIO
    assert round(25.0 / 270.0, 4) == CPU_IDLE_FRACTION


def test_a_gpu_that_runs_processes_idles_at_its_active_idle_power() -> None:
    h100 = {"powerIdle": 70.7, "powerActiveIdle": 119.6, "powerConsumptionLoad": 700.0}
    used = power_states(h100, "GPU", runs_processes=True)
    assert (used.base_state, used.base_w, used.load_w, used.estimated) == (
        "active idle",
        119.6,
        700.0,
        (),
    )
    unused = power_states(h100, "GPU", runs_processes=False)
    assert (unused.base_state, unused.base_w) == ("idle", 70.7)


def test_missing_states_are_estimated_and_named_with_their_rule() -> None:
    b200 = power_states({"powerConsumptionLoad": 1000.0}, "GPU", runs_processes=True)
    assert b200.idle_w == pytest.approx(GPU_IDLE_FRACTION * 1000)
    assert b200.base_w == pytest.approx(GPU_ACTIVE_IDLE_RATIO * GPU_IDLE_FRACTION * 1000)
    assert [a for a, _ in b200.estimated] == ["powerIdle", "powerActiveIdle"]
    assert all(rule.startswith("estimated:") for _, rule in b200.estimated)
    cpu = power_states({"powerConsumptionLoad": 270.0}, "CPU", runs_processes=True)
    assert (cpu.base_state, cpu.base_w) == ("idle", pytest.approx(25.0, rel=1e-3))
    bare = power_states({}, "NETWORK", runs_processes=False)
    assert (bare.base_w, bare.load_w) == (0.0, 0.0)
    assert bare.estimated == (
        ("powerIdle", ESTIMATION_RULES["none"]),
        ("powerConsumptionLoad", ESTIMATION_RULES["none"]),
    )
    m2075 = power_states(
        {"powerIdle": 29.4, "powerConsumptionLoad": 225, "powerOff": 10}, "GPU", runs_processes=True
    )
    assert m2075.off_w == 10.0


def test_000s_figure_is_load_power_x_loaded_time_only() -> None:
    # 000 (GTX 970, 168 W): the kernel of 0.7596 ms, nothing while idle
    assert kernel_load_energy(load_w=168.0, loaded_s=0.7596e-3) == pytest.approx(0.1276128)
    with pytest.raises(ValueError, match=ENERGY_ERRORS["negative_time"]):
        kernel_load_energy(load_w=168.0, loaded_s=-1.0)


def test_000s_figures_of_a_components_instances_are_each_instances_figure() -> None:
    # one call per component (the result's rows): the same figure, instance by instance
    loads = [0.7596e-3, 0.0, 3.1, 1e-9]
    assert kernel_load_energies(load_w=168.0, loaded_s=loads) == [
        kernel_load_energy(load_w=168.0, loaded_s=loaded) for loaded in loads
    ]
    assert kernel_load_energies(load_w=-1.0, loaded_s=[]) == []  # no instance, nothing refused
    with pytest.raises(ValueError, match=ENERGY_ERRORS["negative_power"]):
        kernel_load_energies(load_w=-1.0, loaded_s=[1.0])
    with pytest.raises(ValueError, match=ENERGY_ERRORS["negative_time"]):
        kernel_load_energies(load_w=168.0, loaded_s=[1.0, -1.0])


def test_whole_run_e1_is_e1_with_the_run_as_its_time() -> None:
    # E.1 over a kernel of T_k plus active idle over the rest of the run is E.1 over the run
    e_b, blocks, active_idle, run_s, kernel_s = 2.5e-6, 39063, 119.6, 0.0113, 5.1e-5
    by_parts = kernel_energy(
        blocks=blocks, time_s=kernel_s, block_energy_j=e_b, active_idle_w=active_idle
    ) + active_idle * (run_s - kernel_s)
    assert whole_run_e1_energy(
        active_idle_w=active_idle, total_s=run_s, block_energy_j=e_b, blocks=blocks
    ) == pytest.approx(by_parts)
